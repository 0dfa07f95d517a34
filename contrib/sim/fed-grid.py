#!/usr/bin/env python3
"""The federation grid of doc/evaluation.md: every window x week x data
placement x limit regime x seed, one `agora-sim federation` run each, and
per cell agora+data's worst seed against the better of first-start and
least-loaded ("never worse", issue 18), the geometric mean of that ratio
over the seeds with a 95% interval, and agora+data's mean JCT against
first-start (">= 1.3x" where the starting worst demand/supply is >= 1.5).

usage: fed-grid.py AGORA_SIM OUTDIR [--traces DIR] [--seeds 1-5]
                   [--weeks 0:7,7:7] [--limits exact,uniform:1:2,...]
                   [--placements home,random,skewed]
                   [--windows 2017-10-02,...] [--noise] [-- EXTRA ARGS]

--noise adds the scenario's own noise floor: each seed runs a second time
with the link 4% slower (--link 1.2e9 instead of 1.25e9), and the columns
"noise" give, for least-loaded and for agora+data, the worst seed's ratio
of the two runs of the same dispatcher (max over seeds of max(a/b, b/a)).
Runs are cached in OUTDIR (one JSON each); EXTRA ARGS go to every run.
The table goes to stdout, with a last line counting the cells whose worst
seed is above 1.03x and those whose geometric mean is.
"""
import json
import math
import os
import subprocess
import sys

WINDOWS = [("2017-10-02", "c1:40x8,c2:24x8,c3:16x8"),
           ("2017-10-16", "c1:40x8,c2:24x8,c3:16x8"),
           ("2017-11-20", "c1:16x8,c2:8x8,c3:6x8")]
DISP = "first-start,least-loaded,agora+data"
# two-sided 95% Student t quantiles by degrees of freedom (1..30)
T95 = [12.71, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
       2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
       2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
       2.048, 2.045, 2.042]


def seeds_of(s):
    a, _, b = s.partition("-")
    return list(range(int(a), int(b or a) + 1))


def run(sim, f, trace, week, fed, pl, lim, s, extra):
    if not os.path.exists(f):
        cmd = [sim, "federation", "--trace", trace, "--window", week,
               "--federation", fed, "--data-placement", pl, "--seed",
               str(s), "--dispatchers", DISP, "--json", f + ".tmp"] + extra
        if lim != "exact":
            cmd += ["--limits", lim]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode:
            sys.exit("fed-grid.py: %s failed:\n%s" % (" ".join(cmd),
                                                      r.stderr))
        os.rename(f + ".tmp", f)
    with open(f) as fh:
        return json.load(fh)


def gmean_ci(xs):
    """geometric mean of xs and its 95% interval (t on the logs)"""
    ls = [math.log(x) for x in xs]
    n = len(ls)
    m = sum(ls) / n
    if n < 2:
        return math.exp(m), math.exp(m), math.exp(m)
    sd = math.sqrt(sum((v - m) ** 2 for v in ls) / (n - 1))
    h = T95[min(n - 2, len(T95) - 1)] * sd / math.sqrt(n)
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def jct(d, k):
    return d[k]["mean_jct_s"] / 3600


def main(argv):
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    if len(argv) < 2:
        sys.exit(__doc__)
    sim, out = argv[0], argv[1]
    opts = {"--traces": "../shared/traces", "--seeds": "1-5",
            "--weeks": "0:7,7:7",
            "--limits": "exact,uniform:1:2,lognormal:1.5,constant:1w",
            "--placements": "home,random,skewed",
            "--windows": ",".join(w for w, _ in WINDOWS)}
    noise = False
    rest = argv[2:]
    while rest:
        if rest[0] == "--noise":
            noise, rest = True, rest[1:]
            continue
        if rest[0] not in opts or len(rest) < 2:
            sys.exit("fed-grid.py: unknown or incomplete option %s" %
                     rest[0])
        opts[rest[0]] = rest[1]
        rest = rest[2:]
    os.makedirs(out, exist_ok=True)
    over = over_g = 0
    print("| window | week | placement | limits | init d/s | first-start "
          "| least-loaded | agora+data | worst seed / better "
          "| geomean / better (95%) | mean / fs |" +
          (" noise: least-loaded | noise: agora+data |" if noise else ""))
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|" +
          ("---:|---:|" if noise else ""))
    for win, fed in WINDOWS:
        if win not in opts["--windows"].split(","):
            continue
        trace = os.path.join(opts["--traces"],
                             "philly_pollux_jobs_%s_2wk.csv" % win)
        for week in opts["--weeks"].split(","):
            for pl in opts["--placements"].split(","):
                for lim in opts["--limits"].split(","):
                    rows, alt = [], []
                    for s in seeds_of(opts["--seeds"]):
                        base = os.path.join(out, "%s-%s-%s-%s-%d" % (
                            win, week.replace(":", "_"), pl,
                            lim.replace(":", "_"), s))
                        rows.append(run(sim, base + ".json", trace, week,
                                        fed, pl, lim, s, extra))
                        if noise:
                            alt.append(run(sim, base + "-link1.2e9.json",
                                           trace, week, fed, pl, lim, s,
                                           extra + ["--link", "1.2e9"]))
                    fs = [jct(r, "first-start") for r in rows]
                    ll = [jct(r, "least-loaded") for r in rows]
                    ad = [jct(r, "agora+data") for r in rows]
                    ratios = [a / min(f_, l_)
                              for a, f_, l_ in zip(ad, fs, ll)]
                    worst = max(ratios)
                    g, lo, hi = gmean_ci(ratios)
                    n = len(rows)
                    init = sum(r["worst_demand_supply_initial"]
                               for r in rows) / n
                    mfs, mll, mad = sum(fs) / n, sum(ll) / n, sum(ad) / n
                    mark = "**" if worst > 1.03 else ""
                    gmark = "**" if g > 1.03 else ""
                    over += worst > 1.03
                    over_g += g > 1.03
                    line = ("| %s | %s | %s | %s | %.2f | %.2f | %.2f "
                            "| %.2f | %s%.3fx%s | %s%.3fx%s (%.3f-%.3f) "
                            "| %.2fx |" % (
                                win, week, pl, lim, init, mfs, mll, mad,
                                mark, worst, mark, gmark, g, gmark, lo, hi,
                                mfs / mad))
                    if noise:
                        for k in ("least-loaded", "agora+data"):
                            w = max(max(jct(a, k) / jct(b, k),
                                        jct(b, k) / jct(a, k))
                                    for a, b in zip(rows, alt))
                            line += " %.3fx |" % w
                    print(line)
    print("cells with a worst seed above 1.03x: %d; with a geometric mean "
          "above 1.03x: %d" % (over, over_g))


if __name__ == "__main__":
    main(sys.argv[1:])
