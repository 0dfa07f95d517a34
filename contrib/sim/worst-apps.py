#!/usr/bin/env python3
"""worst-apps.py - the apps behind a run's app-rho metrics, with their jobs.

  contrib/sim/worst-apps.py RUN.json JOBS.csv [--label L] [--top N] [--gap S]

RUN.json is `agora-sim compare --json` (the label L, default the first),
JOBS.csv its `--jobs-csv` file for that label.  The run must have used
`--app burst:S` (S = --gap, default 3600): the apps are rebuilt from the
CSV as the core's builder makes them (a tenant's jobs whose submissions
follow each other within S, named TENANT#FIRST_JOB_ID) and matched with
the JSON's app_rho.  Prints the N worst apps (default 10) and the rank
that sets p99_rho_app (nearest rank over the apps), each app with its
GPU-hours and its first 8 jobs: GPUs, duration, limit, first wait, JCT
("failed": killed at its limit), preemptions and the job's stretch.  Used for doc/evaluation.md ("Three
windows": why p99_rho_app reaches 90-118 under constant:1w).
"""
import csv
import json
import math
import sys
from collections import defaultdict


def main(argv):
    args = [a for a in argv[1:]]
    opts = {"--label": None, "--top": "10", "--gap": "3600"}
    pos = []
    while args:
        a = args.pop(0)
        if a in opts and args:
            opts[a] = args.pop(0)
        elif a.startswith("-"):
            sys.exit(__doc__)
        else:
            pos.append(a)
    if len(pos) != 2:
        sys.exit(__doc__)
    with open(pos[0]) as f:
        runs = json.load(f)
    label = opts["--label"] or next(iter(runs))
    run = runs[label]
    top, gap = int(opts["--top"]), int(opts["--gap"])
    with open(pos[1]) as f:
        jobs = list(csv.DictReader(f))
    by_tenant = defaultdict(list)
    for j in jobs:
        by_tenant[j["tenant"]].append(j)
    apps = {}
    for tenant, js in by_tenant.items():
        js.sort(key=lambda j: (int(j["submit"]), int(j["id"])))
        name, last = None, None
        for j in js:
            s = int(j["submit"])
            if name is None or s - last > gap:
                name = "%s#%s" % (tenant, j["id"])
                apps[name] = []
            apps[name].append(j)
            last = s
    rho = sorted(((r, a) for a, r in run["app_rho"].items() if r is not None),
                 reverse=True)
    rank = len(rho) - int(math.ceil(0.99 * len(rho)))  # 0-based from the top
    print("%s: %d apps, p99_rho_app %.1f (the %d. worst), "
          "max_rho_app_10gpuh %.1f" % (label, len(rho), run["p99_rho_app"],
                                       rank + 1, run["max_rho_app_10gpuh"]))
    for i, (r, a) in enumerate(rho[:max(top, rank + 1)]):
        js = apps.get(a, [])
        gpuh = sum(int(j["gpus"]) * int(j["duration"]) for j in js) / 3600
        print("%s%-16s rho %8.1f  %3d jobs  %7.1f GPU-h" %
              ("p99 " if i == rank else "    ", a, r, len(js), gpuh))
        for j in js[:8]:
            failed = int(j["finish"]) < 0
            print("        job %6s %3s GPUs %8s s limit %7s s wait %7.2f h "
                  "%s preempt %s stretch %s" %
                  (j["id"], j["gpus"], j["duration"], j["time_limit"],
                   int(j["first_wait"]) / 3600,
                   "failed     " if failed else
                   "jct %7.2f h" % (int(j["jct"]) / 3600),
                   j["preemptions"], "-" if failed else j["rho"]))
        if len(js) > 8:
            print("        ... %d more" % (len(js) - 8))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
