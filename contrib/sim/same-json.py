#!/usr/bin/env python3
"""same-json.py A B: exit 0 when two agora-sim JSON outputs are the same
but for the times that vary from run to run (wall_s, cpu_s), else 1.
Used by same-decisions.sh and speed-compare.sh."""
import json
import sys


def strip(d):
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if k not in ("wall_s", "cpu_s")}
    if isinstance(d, list):
        return [strip(x) for x in d]
    return d


a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
