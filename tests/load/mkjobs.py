#!/usr/bin/env python3
"""Draw a burst of jobs from the Philly slice for tests/load/burst.sh.

Usage: mkjobs.py TRACE N SEED MAX_SLEEP DEP_PERCENT > jobs.tsv

Output, one job a line: index, GPUs, sleep seconds, account, parent index
(-1: none).  Rows are drawn at random (seeded): 90% from the whole trace
(96% of its jobs use 1 GPU), 10% from its multi-GPU rows (2-32 GPUs), so
that even a short burst has gangs.  Durations are mapped onto 1..MAX_SLEEP
seconds on a log scale (the trace spans 1 s .. 26 days).  The account is
the row's tenant (vc_<tenant>, as agora-dc creates them), except every
10th job acct_a and every 10th (offset 5) acct_b.  DEP_PERCENT of the jobs
(never among the first 20) depend (afterok) on one of the 20 jobs submitted
just before them, so the parent is usually still pending or running.
"""
import csv
import math
import random
import sys


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    trace, n, seed, max_sleep, dep_pct = (sys.argv[1], int(sys.argv[2]),
                                          int(sys.argv[3]), int(sys.argv[4]),
                                          float(sys.argv[5]))
    rows = []
    with open(trace, newline="") as f:
        for lineno, r in enumerate(csv.DictReader(f), start=2):
            try:
                rows.append((float(r["duration"]), int(r["num_gpus"]),
                             r["cluster"].strip()))
            except (KeyError, ValueError) as e:
                sys.exit(f"{trace}:{lineno}: bad row ({e})")
    multi = [r for r in rows if r[1] > 1]
    lo = math.log(max(1.0, min(r[0] for r in rows)))
    hi = math.log(max(r[0] for r in rows))
    rng = random.Random(seed)
    for i in range(n):
        dur, gpus, tenant = rng.choice(multi if rng.random() < 0.10 else rows)
        sl = 1 + round((max_sleep - 1) * (math.log(max(dur, 1.0)) - lo) / (hi - lo))
        acct = "vc_" + tenant
        if i % 10 == 0:
            acct = "acct_a"
        elif i % 10 == 5:
            acct = "acct_b"
        parent = -1
        if i >= 20 and rng.random() * 100 < dep_pct:
            parent = i - rng.randint(1, 20)
        print(f"{i}\t{gpus}\t{sl}\t{acct}\t{parent}")


if __name__ == "__main__":
    main()
