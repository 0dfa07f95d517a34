"""What bench-dispatch.sh reads back: the submits and agorad's pins.

Shared by its report (submit->pinned) and its arrival poll (submit->at
winner, submit->started), so that both parse the same lines the same way.
"""

import re

PIN = re.compile(r"JobId=(\d+) \(origin (\S+)\) pinned to (\S+) at (\d+)\.(\d{3})")


def submits(path):
    """{job id: submit ms} from the submitters' "jobid ms" lines."""
    with open(path) as f:
        return {l.split()[0]: int(l.split()[1]) for l in f if l.strip()}


def pins(path, sub):
    """{job id: (origin, winner, pin ms)} for the submitted jobs, from
    agorad's log (its own timestamps; the last pin of a job wins)."""
    out = {}
    with open(path) as f:
        for l in f:
            m = PIN.search(l)
            if m and m.group(1) in sub:
                out[m.group(1)] = (m.group(2), m.group(3),
                                   int(m.group(4)) * 1000 + int(m.group(5)))
    return out


def rank(n, p):
    """The index of quantile p in a sorted list of n values (nearest rank)."""
    return min(n - 1, int(round(p * (n - 1))))
