#!/usr/bin/env python3
"""Markdown tables of agora-sim loaning runs, one per window and size, over seeds.

usage: loan-table.py DIR [NEW [LABEL]]  (each holds loan-WINDOW-TRAIN-SEED.json)
NEW: runs of least-cost alone (none and slurm-order are the same runs in DIR):
its least-cost replaces DIR's, which is kept as the row OLD_LABEL; with LABEL,
DIR's least-cost stays and NEW's is added below it as the row LABEL."""
import glob, json, os, re, sys

def fmt_r(xs, nd=2):
    if not xs:
        return "-"
    return "%.*f [%.*f-%.*f]" % (nd, sum(xs) / len(xs), nd, min(xs), nd, max(xs))

OLD_LABEL = "least-cost, 240-s per-job wait"

def load(d):
    runs = {}
    for f in sorted(glob.glob(os.path.join(d, "loan-*.json"))):
        m = re.match(r"loan-(\d{4}-\d\d-\d\d)-(\d+)-(\d+)\.json", os.path.basename(f))
        if not m:
            continue
        runs.setdefault((m.group(1), int(m.group(2))), {})[int(m.group(3))] = json.load(open(f))
    return runs

def main(d, new=None, label=None):
    runs = load(d)
    if new:
        nr = load(new)
        for key, seeds in list(runs.items()):
            for s, r in list(seeds.items()):
                if key not in nr or s not in nr[key]:
                    del seeds[s]
                    continue
                lc = nr[key][s]["least-cost"]
                for k, kn in (("queue_vs_none", "mean_queue_s"), ("jct_vs_none", "mean_jct_s")):
                    lc[k] = r["none"][kn] / lc[kn] if lc[kn] > 0 else 0
                if label:
                    r[label] = lc
                    continue
                old = r.pop("least-cost")
                r[OLD_LABEL] = old
                r["least-cost"] = lc
            if not seeds:
                del runs[key]
    for (w, t), seeds in sorted(runs.items()):
        ss = sorted(seeds)
        first = seeds[ss[0]]
        vs = [k for k in first if isinstance(first[k], dict)]
        inf = first[vs[0]]["infer_nodes"]
        print("**%s %d+%d nodes (%s), seeds %s, mean [min-max]**\n" %
              (w, t, inf, first.get("train_scheduler", "?"), ",".join(map(str, ss))))
        print("| variant | queue h | JCT h | queue vs none | JCT vs none | harvest (bound) | "
              "preemptions | fewest bound | /bound | GPU-h lost | lost / slurm-order | "
              "ckpt waits | requeues max / p99 | SLO misses | unmet node-h |")
        print("|" + "---|" * 15)
        for v in vs:
            rs = [seeds[s][v] for s in ss]
            n = len(rs)
            mean = lambda k: sum(r[k] for r in rs) / n
            bnd = [r["preemptions"] / r["fewest_victims_preemptions"]
                   for r in rs if r["fewest_victims_preemptions"]]
            lr = [seeds[s][v]["gpu_hours_lost"] / seeds[s]["slurm-order"]["gpu_hours_lost"]
                  for s in ss if "slurm-order" in seeds[s] and seeds[s]["slurm-order"]["gpu_hours_lost"] > 0]
            print("| %s | %.2f | %.2f | %s | %s | %.3f (%.3f) | %.0f | %.0f | %s | %.0f | %s | %.0f | %d / %d | %d | %.3f |" % (
                v, mean("mean_queue_s") / 3600, mean("mean_jct_s") / 3600,
                fmt_r([r["queue_vs_none"] for r in rs]), fmt_r([r["jct_vs_none"] for r in rs]),
                mean("harvest"), mean("harvest_bound"), mean("preemptions"),
                mean("fewest_victims_preemptions"), fmt_r(bnd), mean("gpu_hours_lost"),
                fmt_r(lr) if v != "none" else "-", mean("ckpt_waits"),
                max(r["requeues_max"] for r in rs), max(r["requeues_p99"] for r in rs),
                sum(r["slo_misses"] for r in rs), mean("unmet_node_h")))
        print()

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None,
         sys.argv[3] if len(sys.argv) > 3 else None)
