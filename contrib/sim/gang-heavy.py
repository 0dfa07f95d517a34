#!/usr/bin/env python3
"""gang-heavy.py - a gang-heavy variant of a Philly (Pollux) trace CSV.

    gang-heavy.py [--fraction 0.15] [--seed 1] IN.csv > OUT.csv

Reads a trace with the header timestamp,duration,num_gpus,gpu_time,cluster
(doc/sim.md) and writes it back with a seeded random fraction of the jobs
rewritten to 8-, 16- or 32-GPU gangs (each size with probability 1/3),
keeping every job's GPU-hours: the new duration is
round(duration * old_gpus / new_gpus), at least 1 s, and gpu_time is
written as new duration x new GPUs.  A job drawn for a size no larger than
it already has is left alone.  Submit times, tenants and row order are kept,
so the offered load (GPU-hours) is unchanged up to rounding.

Deterministic: the draw uses random.Random(seed).random() only (the same
sequence on every Python 3), two draws per row, whether or not the row
changes.  Prints a summary line on stderr.
"""
import argparse
import csv
import random
import sys

HEADER = ["timestamp", "duration", "num_gpus", "gpu_time", "cluster"]
SIZES = (8, 16, 32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--fraction", type=float, default=0.15,
                    help="fraction of jobs drawn for a gang (default 0.15)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not 0 <= a.fraction <= 1:
        ap.error("--fraction must be in [0, 1]")
    rng = random.Random(a.seed)
    rows = changed = 0
    gh_in = gh_out = 0.0
    with open(a.trace, newline="") as f:
        rd = csv.reader(f)
        head = next(rd)
        if head != HEADER:
            sys.exit("%s:1: header must be %s" % (a.trace, ",".join(HEADER)))
        out = csv.writer(sys.stdout, lineterminator="\n")
        out.writerow(HEADER)
        for line, r in enumerate(rd, start=2):
            if not r or r[0].startswith("#"):
                continue
            try:
                dur = float(r[1])
                gpus = int(r[2])
            except (ValueError, IndexError):
                sys.exit("%s:%d: bad duration or num_gpus" % (a.trace, line))
            u, v = rng.random(), rng.random()
            rows += 1
            gh_in += dur * gpus / 3600
            g = SIZES[min(int(v * len(SIZES)), len(SIZES) - 1)]
            if u < a.fraction and g > gpus:
                dur = max(1, round(dur * gpus / g))
                gpus = g
                changed += 1
                r = [r[0], str(dur), str(gpus), str(dur * gpus), r[4]]
            gh_out += dur * gpus / 3600
            out.writerow(r)
    sys.stderr.write("gang-heavy: %d jobs, %d rewritten to 8/16/32-GPU gangs "
                     "(fraction %g, seed %d); GPU-hours %.1f -> %.1f\n"
                     % (rows, changed, a.fraction, a.seed, gh_in, gh_out))


if __name__ == "__main__":
    main()
