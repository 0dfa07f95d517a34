#!/usr/bin/env python3
"""windows-table.py - the three-window table of doc/evaluation.md from the
JSON files contrib/sim/eval-windows.sh writes (one per cell and policy).

  contrib/sim/windows-table.py OUT_DIR [--labels agora,agora-x] [--summary]

Per cell (window, cluster, limit regime) and agora label: mean JCT, p99
JCT and util_net against backfill-fs, mean JCT against the best
non-clairvoyant baseline (tiresias, las), the share of the backfill-fs ->
srtf gap closed (heavy cells), the app-rho metrics against the best of
backfill-fs/tiresias/las (max_rho_app_10gpuh and p99_rho_app when the
simulator reports them, else max_rho_app), GPU-hours lost per preemption,
preemptions per job, and every goal of issue 17 met (y) or missed (n).
A bounds-KEY.json file beside the runs (agora-sim bounds) adds the bound on
mean JCT and the share of the backfill-fs -> bound gap closed.
--summary: one line per label (goals met, geometric-mean ratios), for
choosing defaults on all cells at once.
Environment: HEAVY, space-separated WINDOW:SIZE cells scored as heavy
besides the three windows' own (e.g. "2017-10-09:68x8 2017-10-02:60x8" for
a window the defaults were not chosen on, or a cluster smaller than the
heavy one).
"""
import glob
import json
import math
import os
import sys

HEAVY = {("2017-10-02", "64x8"), ("2017-10-16", "86x8"), ("2017-11-20", "38x8")}
HEAVY |= {tuple(x.split(":", 1)) for x in os.environ.get("HEAVY", "").split() if ":" in x}


def load(d):
    runs = {}
    for f in glob.glob(os.path.join(d, "*.json")):
        base = os.path.basename(f)
        if base.startswith("bounds-"):
            continue
        try:
            j = json.load(open(f))
        except (OSError, ValueError):
            continue
        for label, v in j.items():
            if not isinstance(v, dict):
                continue
            key = base[: -len("-" + label + ".json")]
            if not base.endswith("-" + label + ".json"):
                continue
            runs[(key, label)] = v
    return runs


def g(r, k):
    if r is None or "failed_run" in r:
        return None
    v = r.get(k)
    return v if isinstance(v, (int, float)) and not math.isnan(v) else None


def rho_keys(r):
    if r and "max_rho_app_10gpuh" in r:
        return "max_rho_app_10gpuh", "p99_rho_app"
    return "max_rho_app", None


def cell_of(key):
    """2017-10-02-64x8-uniform_1_2 -> window, cluster, regime"""
    c, reg = key[11:].split("-", 1)
    return key[:10], c, reg


def fmt(x, p=2):
    return "-" if x is None else ("%.*f" % (p, x))


def main():
    d = sys.argv[1]
    labels = None
    summary = "--summary" in sys.argv
    if "--labels" in sys.argv:
        labels = sys.argv[sys.argv.index("--labels") + 1].split(",")
    runs = load(d)
    keys = sorted({k for k, _ in runs})
    all_labels = sorted({l for _, l in runs})
    if labels is None:
        labels = [l for l in all_labels if l.startswith("agora")]
    base_nc = ("tiresias", "las")
    tot = {l: {"met": 0, "goals": 0, "lr": [], "miss": []} for l in labels}
    rows = []
    for key in keys:
        w, c, reg = cell_of(key)
        heavy = (w, c) in HEAVY
        bf = runs.get((key, "backfill-fs"))
        sr = runs.get((key, "srtf"))
        nc = [runs.get((key, b)) for b in base_nc]
        nc_means = [g(r, "mean_jct_s") for r in nc if g(r, "mean_jct_s")]
        best_nc = min(nc_means) if nc_means else None
        bounds = None
        bf_path = os.path.join(d, "bounds-%s.json" % key)
        if os.path.exists(bf_path):
            try:
                bounds = json.load(open(bf_path))
            except ValueError:
                bounds = None
        for l in labels:
            a = runs.get((key, l))
            if a is None:
                continue
            row = {"cell": "%s %s %s %s" % (w, c, "heavy" if heavy else "moderate", reg), "label": l}
            goals = []
            if "failed_run" in a:
                row["note"] = "run failed/timeout (%s)" % a["failed_run"]
                goals.append(("nolivelock", False))
            am, ap, au = g(a, "mean_jct_s"), g(a, "p99_jct_s"), g(a, "util_net")
            bm, bp, bu = g(bf, "mean_jct_s"), g(bf, "p99_jct_s"), g(bf, "util_net")
            row["mean_h"] = am / 3600 if am else None
            row["bf_h"] = bm / 3600 if bm else None
            row["srtf_h"] = g(sr, "mean_jct_s") / 3600 if g(sr, "mean_jct_s") else None
            row["nc_h"] = best_nc / 3600 if best_nc else None
            if am and bm:
                row["mean/bf"] = am / bm
                row["p99/bf"] = ap / bp if ap and bp else None
                row["unet-bf"] = au - bu if au is not None and bu is not None else None
                goals.append(("mean<=1.03bf", am <= 1.03 * bm))
                goals.append(("p99<=1.03bf", ap is not None and bp is not None and ap <= 1.03 * bp))
                goals.append(("unet>=0.97bf", au is not None and bu is not None and au >= 0.97 * bu))
                tot[l]["lr"].append(math.log(am / bm))
            if am and best_nc:
                row["mean/nc"] = am / best_nc
                goals.append(("mean<=1.10nc", am <= 1.10 * best_nc))
            sm = g(sr, "mean_jct_s")
            if am and bm and sm is not None and bm > sm:
                row["gap_srtf"] = (bm - am) / (bm - sm)
                if heavy:
                    goals.append(("gap>=0.5", row["gap_srtf"] >= 0.5))
            if bounds and am and bm:
                lb = bounds.get("mean_jct_lb_s")
                if lb and bm > lb:
                    row["gap_bound"] = (bm - am) / (bm - lb)
                    row["bound_h"] = lb / 3600
            if bounds and bounds.get("max_rho_app_lb"):
                row["rho_lb"] = bounds["max_rho_app_lb"]
            kmax, kp99 = rho_keys(a)
            bests = [g(r, kmax) for r in [bf] + nc if g(r, kmax)]
            ar = g(a, kmax)
            if ar and bests:
                row["rho_best/agora"] = min(bests) / ar
                if heavy:
                    goals.append(("rho 2.25x", min(bests) / ar >= 2.25))
            if kp99:
                bp99 = [g(r, kp99) for r in [bf] + nc if g(r, kp99)]
                a99 = g(a, kp99)
                if a99 and bp99:
                    row["p99rho_best/agora"] = min(bp99) / a99
                    if heavy:
                        goals.append(("p99rho 1.5x", min(bp99) / a99 >= 1.5))
            row["GPUh/preempt"] = g(a, "gpu_hours_lost_per_preemption")
            row["preempt/job"] = g(a, "preemptions_per_job")
            row["goals"] = goals
            tot[l]["met"] += sum(1 for _, ok in goals if ok)
            tot[l]["goals"] += len(goals)
            tot[l]["miss"] += ["%s:%s" % (row["cell"], n) for n, ok in goals if not ok]
            rows.append(row)
    if summary:
        for l in labels:
            t = tot[l]
            gm = math.exp(sum(t["lr"]) / len(t["lr"])) if t["lr"] else float("nan")
            print("%-24s goals met %3d/%3d  geomean mean/bf %.3f" % (l, t["met"], t["goals"], gm))
        return
    cols = ["mean_h", "bf_h", "nc_h", "srtf_h", "mean/bf", "p99/bf", "unet-bf", "mean/nc", "gap_srtf", "gap_bound", "bound_h", "rho_lb",
            "rho_best/agora", "p99rho_best/agora", "GPUh/preempt", "preempt/job"]
    if "--short" in sys.argv:
        cols = ["mean_h", "bf_h", "nc_h", "srtf_h", "bound_h", "mean/bf",
                "p99/bf", "unet-bf", "mean/nc", "gap_srtf", "gap_bound",
                "rho_best/agora", "p99rho_best/agora", "rho_lb",
                "GPUh/preempt", "preempt/job"]
    print("| cell | policy | " + " | ".join(cols) + " | goals missed |")
    print("|" + "---|" * (len(cols) + 3))
    for r in rows:
        miss = [n for n, ok in r["goals"] if not ok]
        print("| %s | %s | %s | %s |" % (r["cell"], r["label"],
              " | ".join(fmt(r.get(k), 3) for k in cols),
              (", ".join(miss) if miss else "all met") + (" " + r["note"] if "note" in r else "")))


if __name__ == "__main__":
    main()
