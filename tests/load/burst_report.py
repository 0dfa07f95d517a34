#!/usr/bin/env python3
"""Checks and summary of one tests/load/burst.sh run.

Usage: burst_report.py OUTDIR CLUSTERS "key=value ..."

Reads OUTDIR/{submitted.tsv,not_submitted.tsv,sacct.txt,sdiag.c*.txt,
agora.log}; prints TAP lines for the checks (all jobs submitted, none lost,
none failed, dependencies respected) and a summary table; exits 1 when a
check fails.
"""
import os
import re
import statistics
import sys
from datetime import datetime


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def ts(s):
    try:
        return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timestamp()
    except ValueError:
        return None


def sdiag(path):
    """Main and backfill cycle stats (microseconds) and job counters."""
    out = {}
    sect = "top"
    if not os.path.exists(path):
        return out
    for line in open(path):
        if line.startswith("Main schedule statistics"):
            sect = "main"
        elif line.startswith("Backfilling stats"):
            sect = "bf"
        elif not line.startswith("\t") and line.strip() and sect != "top":
            sect = "other"
        m = re.match(r"\s*([A-Za-z ()]+?):\s+([0-9]+)\s*$", line)
        if m and sect in ("top", "main", "bf"):
            out.setdefault(sect + ":" + m.group(1).strip(), int(m.group(2)))
    return out


def agora_passes(path):
    """Agora's per-pass debug lines ("<plugin>/agora: pass N: ...").

    Tolerant of added, removed or reordered fields: each number is looked
    up by its label.  Two formats are known: sched/agora's "N actions (M
    applied)" with a separate "dropping N actions" line, and
    site_factor/agora's "N actions, W won, P priorities changed, D dropped".
    """
    res = {"passes": 0, "snapshot": [], "decide": [], "apply": [],
           "read_wait": [], "write_wait": [],
           "actions": 0, "won": 0, "applied": 0, "dropped": 0}
    if not os.path.exists(path):
        return res
    for line in open(path):
        if re.search(r"agora: pass [0-9]+", line):
            res["passes"] += 1
            for k in ("snapshot", "decide", "apply"):
                m = re.search(k + r"[ =:]+([0-9]+) ?us", line)
                if m:
                    res[k].append(int(m.group(1)))
            # since the lock's wait is logged apart: "(read lock wait N us)"
            for k in ("read", "write"):
                m = re.search(k + r" lock wait ([0-9]+) ?us", line)
                if m:
                    res[k + "_wait"].append(int(m.group(1)))
            for k, pat in (("actions", r"([0-9]+) actions?\b"),
                           ("won", r"([0-9]+) won\b"),
                           ("applied", r"\(([0-9]+) applied|([0-9]+) priorit(?:y|ies) changed"),
                           ("dropped", r"([0-9]+) dropped")):
                m = re.search(pat, line)
                if m:
                    res[k] += int(next(g for g in m.groups() if g is not None))
        m = re.search(r"dropping ([0-9]+) actions", line)
        if m:
            res["dropped"] += int(m.group(1))
    return res


def ms(v):
    return f"{v / 1000:.1f}"


def stat_cells(xs):
    if not xs:
        return "n/a", "n/a"
    return ms(statistics.mean(xs)), ms(max(xs))


def main():
    outdir, clusters, params = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    sub = read_tsv(os.path.join(outdir, "submitted.tsv"))
    notsub = read_tsv(os.path.join(outdir, "not_submitted.tsv"))
    acct = {}
    for line in open(os.path.join(outdir, "sacct.txt")):
        f = line.rstrip("\n").split("|")
        if len(f) < 8:
            continue
        c, jid, name, state, start, end = f[0], f[1], f[2], f[3], f[4], f[5]
        acct[(c, jid)] = (state.split()[0], ts(start), ts(end), name)

    n = 0
    fails = 0

    def check(ok, what, detail=""):
        nonlocal n, fails
        n += 1
        if not ok:
            fails += 1
        print(("ok" if ok else "not ok") + f" {n} - {what}")
        for d in detail.splitlines()[:15] if not ok else []:
            print("#   " + d)

    per = {}
    for c in range(1, clusters + 1):
        cn = f"c{c}"
        mine = [s for s in sub if s[0] == cn]
        lost = [s[2] for s in mine if (cn, s[2]) not in acct]
        states = {}
        for s in mine:
            st = acct.get((cn, s[2]), ("LOST",))[0]
            states[st] = states.get(st, 0) + 1
        bad = [f"{s[2]} {acct[(cn, s[2])][0]}" for s in mine
               if (cn, s[2]) in acct and acct[(cn, s[2])][0] != "COMPLETED"]
        deps = viol = 0
        vdetail = []
        for s in mine:
            if not s[6]:
                continue
            deps += 1
            ch, pa = acct.get((cn, s[2])), acct.get((cn, s[6]))
            if not ch or not pa or ch[1] is None or pa[2] is None or ch[1] < pa[2]:
                viol += 1
                vdetail.append(f"job {s[2]} start {ch[1] if ch else '?'} < parent {s[6]} end {pa[2] if pa else '?'}")
        waits = [acct[(cn, s[2])][1] for s in mine if (cn, s[2]) in acct and acct[(cn, s[2])][1]]
        ends = [acct[(cn, s[2])][2] for s in mine if (cn, s[2]) in acct and acct[(cn, s[2])][2]]
        per[cn] = dict(sub=len(mine), notsub=sum(1 for x in notsub if x[0] == cn),
                       completed=states.get("COMPLETED", 0), lost=len(lost),
                       failed=len(bad), deps=deps, viol=viol,
                       makespan=(max(ends) - min(waits)) if ends and waits else None,
                       sd=sdiag(os.path.join(outdir, f"sdiag.{cn}.txt")))
        check(per[cn]["notsub"] == 0, f"{cn}: every job was submitted ({len(mine)})",
              open(os.path.join(outdir, f"sbatch.{cn}.err")).read()
              if os.path.exists(os.path.join(outdir, f"sbatch.{cn}.err")) else "")
        check(not lost, f"{cn}: no job lost: all {len(mine)} in sacct",
              "missing: " + " ".join(lost[:50]))
        check(not bad, f"{cn}: every job COMPLETED ({states})", "\n".join(bad))
        check(viol == 0, f"{cn}: all {deps} dependent jobs started at or after their parent's end",
              "\n".join(vdetail))

    ag = agora_passes(os.path.join(outdir, "agora.log"))
    print()
    print(f"# burst: {params}")
    print("#")
    print("# | cluster | scheduler | submitted | COMPLETED | lost | not COMPLETED | afterok jobs | order violations | makespan s | jobs started (sdiag) | backfilled | main cycles | main mean ms | main max ms | bf cycles | bf mean ms | bf max ms |")
    print("# |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for cn, p in per.items():
        sd = p["sd"]
        sched = "Agora" if cn == "c1" else "stock"
        print(f"# | {cn} | {sched} | {p['sub']} | {p['completed']} | {p['lost']} | {p['failed']} | {p['deps']} | {p['viol']} | "
              f"{p['makespan'] if p['makespan'] is not None else 'n/a':.0f} | {sd.get('top:Jobs started', 'n/a')} | "
              f"{sd.get('bf:Total backfilled jobs (since last stats cycle start)', 'n/a')} | "
              f"{sd.get('main:Total cycles', 'n/a')} | {ms(sd['main:Mean cycle']) if 'main:Mean cycle' in sd else 'n/a'} | "
              f"{ms(sd['main:Max cycle']) if 'main:Max cycle' in sd else 'n/a'} | "
              f"{sd.get('bf:Total cycles', 'n/a')} | {ms(sd['bf:Mean cycle']) if 'bf:Mean cycle' in sd else 'n/a'} | "
              f"{ms(sd['bf:Max cycle']) if 'bf:Max cycle' in sd else 'n/a'} |")
    print("#")
    print("# | Agora (c1) | passes | snapshot (read lock held) mean/max ms | read lock wait mean/max ms | "
          "decide mean/max ms | apply (write lock held) mean/max ms | write lock wait mean/max ms | "
          "actions decided | won | applied | dropped |")
    print("# |---|---|---|---|---|---|---|---|---|---|---|")
    s, d, a = stat_cells(ag["snapshot"]), stat_cells(ag["decide"]), stat_cells(ag["apply"])
    rw, ww = stat_cells(ag["read_wait"]), stat_cells(ag["write_wait"])
    print(f"# | pass | {ag['passes']} | {s[0]} / {s[1]} | {rw[0]} / {rw[1]} | {d[0]} / {d[1]} | "
          f"{a[0]} / {a[1]} | {ww[0]} / {ww[1]} | "
          f"{ag['actions']} | {ag['won']} | {ag['applied']} | {ag['dropped']} |")
    print()
    print(f"{n - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
