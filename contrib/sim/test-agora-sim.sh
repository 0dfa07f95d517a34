#!/bin/sh
# End-to-end checks of the agora-sim program (run by make check): the
# stable compare CLI and its JSON keys, determinism, bad files rejected with
# FILE:LINE, and the PNG charts when gnuplot is installed.
set -u
SIM=${SIM:-./agora-sim}
SRC=${srcdir:-.}
TMP=$(mktemp -d) || exit 99
trap 'rm -rf "$TMP"' EXIT
fail=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
ko() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }

cat > "$TMP/five.csv" <<'CSV'
id,submit,duration,gpus,time_limit,tenant
1,0,200,4,200,a
2,0,100,4,100,b
3,10,100,8,100,a
4,20,50,4,50,b
5,60,30,2,30,c
CSV

if "$SIM" compare --trace "$TMP/five.csv" --cluster 2x4 --restart 0 \
	--policies fifo,backfill,las,srtf --params las:thresholds=200 \
	--baseline fifo --json "$TMP/a.json" --jobs-csv "$TMP/jobs" \
	--seed 3 >"$TMP/out" 2>"$TMP/err"; then
	ok "compare runs"
else
	ko "compare runs: $(cat "$TMP/err")"
fi
for k in mean_jct_s p50_jct_s p99_jct_s mean_queue_s p99_queue_s makespan_s \
	utilization util_net gpu_hours_lost killed_at_limit max_rho_app \
	jain_rho_app max_rho_stretch mean_rho_stretch jain_rho_stretch \
	preemptions fragmentation jobs mean_locality_level \
	mean_locality_level_multi wall_s app_rho tenant_rho_stretch; do
	grep -q "\"$k\"" "$TMP/a.json" || missing="${missing:-} $k"
done
[ -z "${missing:-}" ] && ok "JSON keys" || ko "JSON lacks${missing:-}"
grep -q '^ratios against fifo' "$TMP/out" && ok "ratio table" || ko "ratio table"
# backfill starts J4 at 100 (hand computed, doc/sim.md)
grep -q '^4,b,20,50,4,50,100,150,' "$TMP/jobs-backfill.csv" &&
	ok "per-job CSV" || ko "per-job CSV"
"$SIM" compare --trace "$TMP/five.csv" --cluster 2x4 --restart 0 \
	--policies fifo,backfill,las,srtf --params las:thresholds=200 \
	--baseline fifo --json "$TMP/b.json" --seed 3 >/dev/null 2>&1
if [ "$(grep -v -e wall_s -e cpu_s "$TMP/a.json")" = "$(grep -v -e wall_s -e cpu_s "$TMP/b.json")" ]; then
	ok "deterministic"
else
	ko "deterministic"
fi

# bad inputs: exit 2 and FILE:LINE: FIELD
printf 'submit,duration,gpus\n0,10,1\n5,abc,1\n' > "$TMP/bad.csv"
"$SIM" run --trace "$TMP/bad.csv" --cluster 2x4 --policy fifo \
	>/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q "bad.csv:3: duration:" "$TMP/err"; } &&
	ok "bad trace named by file:line" || ko "bad trace (rc $rc: $(cat "$TMP/err"))"
printf 'nodetype a gpus=8\nnodes b count=2\n' > "$TMP/bad.cluster"
"$SIM" run --trace "$TMP/five.csv" --cluster "$TMP/bad.cluster" \
	--policy fifo >/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q "bad.cluster:2: b: unknown node type" "$TMP/err"; } &&
	ok "bad cluster named by file:line" || ko "bad cluster (rc $rc)"
"$SIM" run --trace "$TMP/five.csv" --cluster "$SRC/clusters/dgx-2island.cluster" \
	--policy backfill >/dev/null 2>"$TMP/err" &&
	ok "cluster file example" || ko "cluster file example: $(cat "$TMP/err")"
"$SIM" compare --trace "$TMP/five.csv" --cluster 2x4 --policies fifo,nope \
	--baseline fifo --json "$TMP/c.json" >/dev/null 2>&1
[ $? = 2 ] && ok "unknown policy is a usage error" || ko "unknown policy"

if command -v gnuplot >/dev/null 2>&1; then
	if "$SIM" compare --trace "$TMP/five.csv" --cluster 2x4 \
		--policies fifo,backfill --baseline fifo --json "$TMP/d.json" \
		--plot "$TMP/plots" >/dev/null 2>"$TMP/err" &&
		[ -s "$TMP/plots/jct_cdf.png" ] &&
		[ -s "$TMP/plots/utilization.png" ] &&
		[ -s "$TMP/plots/rho_tenant.png" ]; then
		ok "PNG charts"
	else
		ko "PNG charts: $(cat "$TMP/err")"
	fi
else
	n=$((n + 1)); echo "ok $n - PNG charts # SKIP gnuplot not installed"
fi
# score: the per-job CSV of a simulation, re-summarised, gives the
# simulation's own numbers (same sim_summarize); an unfinished row counts
"$SIM" score --jobs "$TMP/jobs-backfill.csv" --cluster 2x4 --label bf \
	--json "$TMP/s.json" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc = 0 ] && python3 - "$TMP/a.json" "$TMP/s.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["backfill"]
s = json.load(open(sys.argv[2]))["bf"]
keys = ("jobs", "mean_jct_s", "p50_jct_s", "p99_jct_s", "mean_queue_s",
        "p99_queue_s", "makespan_s", "utilization_makespan",
        "max_rho_stretch", "mean_rho_stretch", "jain_rho_stretch",
        "max_rho_app", "jain_rho_app")
bad = [k for k in keys if abs(a[k] - s[k]) > 1e-9 * max(1, abs(a[k]))]
sys.exit(1 if bad or s["unfinished"] != 0 or
         s["tenant_rho_stretch"] != a["tenant_rho_stretch"] or
         s["app_rho"] != a["app_rho"] else 0)
PY
then
	ok "score reproduces the simulation's summary"
else
	ko "score reproduces the simulation's summary (rc $rc: $(cat "$TMP/err"))"
fi
{ head -1 "$TMP/jobs-backfill.csv"; echo "9,c,5,10,1,60,-1,-1,-1,-1,-1,0,nan,0,-1,0,0"; } >"$TMP/unf.csv"
"$SIM" score --jobs "$TMP/unf.csv" --cluster 2x4 --json "$TMP/u.json" >/dev/null 2>&1 &&
	grep -q '"unfinished":1' "$TMP/u.json" && grep -q '"jobs":0' "$TMP/u.json" &&
	ok "score counts an unfinished job apart" || ko "score unfinished: $(cat "$TMP/u.json" 2>/dev/null | head -3)"
printf 'id,submit,finish,gpus\n1,0,x,1\n' >"$TMP/badjobs.csv"
"$SIM" score --jobs "$TMP/badjobs.csv" --cluster 2x4 >/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q "badjobs.csv:1: header: column [a-z_]* is required" "$TMP/err"; } &&
	ok "score: bad per-job CSV named by file:line" || ko "score bad CSV (rc $rc: $(cat "$TMP/err"))"
# slice: compressed generic CSV, the f-model limits, gangs in whole nodes
printf 'id,submit,duration,gpus,tenant\n7,100,400,1,a\n8,140,10,12,b\n9,160,3000,16,a\n' >"$TMP/sl.csv"
"$SIM" slice --trace "$TMP/sl.csv" --start 8 --jobs 2 --speedup 10 --min-duration 2 \
	>"$TMP/slice.out" 2>"$TMP/err"
if [ "$(cut -d, -f1-7 "$TMP/slice.out")" = "$(printf 'id,submit,duration,gpus,nodes,gpus_per_node,tenant\n8,0,2,16,2,8,b\n9,2,300,16,2,8,a')" ] &&
	awk -F, 'NR > 1 && ($8 % 60 || $8 < $3 || $8 > 2 * $3 + 60) {exit 1}' "$TMP/slice.out" &&
	"$SIM" run --trace "$TMP/slice.out" --cluster 4x8 --policy fifo >/dev/null 2>&1; then
	ok "slice compresses, rounds gangs to whole nodes, and agora-sim reads it back"
else
	ko "slice: $(cat "$TMP/slice.out" "$TMP/err")"
fi
printf 'submit,duration,gpus\n0,10,1\n5,abc,1\n' >"$TMP/bad2.csv"
"$SIM" slice --trace "$TMP/bad2.csv" --jobs 2 --speedup 2 >/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q "bad2.csv:3: duration:" "$TMP/err"; } &&
	ok "slice: bad trace row named by file:line" || ko "slice bad row (rc $rc)"
"$SIM" bench --nodes 50 --jobs 500 --repeat 2 >"$TMP/bench" 2>&1 &&
	grep -q '^srtf ' "$TMP/bench" && grep -q 'least of 2' "$TMP/bench" &&
	grep -q '^policy  *pass_ms  *cpu_ms ' "$TMP/bench" && ok "bench" || ko "bench"
grep -q '^agora+600s ' "$TMP/bench" && grep -q '^agora-order ' "$TMP/bench" &&
	ok "bench times agora and agora-order" || ko "bench lacks agora rows"
# the contended snapshot: full cluster, every las start preempts
sed -n '/^contended snapshot: 50 nodes x 8 GPUs (0 free)/,$p' "$TMP/bench" |
	awk '$1 == "las" && $4 > 0 && $5 > 0 { f = 1 } END { exit !f }' &&
	ok "bench contended snapshot preempts" || ko "bench contended: $(cat "$TMP/bench")"
# gang-heavy.py: same GPU-hours and rows, more gangs, deterministic
if command -v python3 >/dev/null 2>&1; then
	{
		echo "timestamp,duration,num_gpus,gpu_time,cluster"
		i=0
		while [ $i -lt 200 ]; do
			echo "2017-10-02 00:00:0$((i % 10)),$((3200 + i)),1,$((3200 + i)),t$((i % 3))"
			i=$((i + 1))
		done
	} >"$TMP/ph.csv"
	python3 "$SRC/gang-heavy.py" --fraction 0.5 --seed 3 "$TMP/ph.csv" \
		>"$TMP/g1.csv" 2>/dev/null &&
	python3 "$SRC/gang-heavy.py" --fraction 0.5 --seed 3 "$TMP/ph.csv" \
		>"$TMP/g2.csv" 2>/dev/null &&
	cmp -s "$TMP/g1.csv" "$TMP/g2.csv" &&
	python3 - "$TMP/ph.csv" "$TMP/g1.csv" <<'PY' && ok "gang-heavy.py" || ko "gang-heavy.py"
import csv, sys
a = list(csv.DictReader(open(sys.argv[1])))
b = list(csv.DictReader(open(sys.argv[2])))
gh = lambda rows: sum(float(r["duration"]) * int(r["num_gpus"]) for r in rows)
assert len(a) == len(b)
assert abs(gh(a) - gh(b)) <= 0.01 * gh(a)
assert sum(int(r["num_gpus"]) >= 8 for r in b) > 50
assert all(r["timestamp"] == s["timestamp"] and r["cluster"] == s["cluster"]
           for r, s in zip(a, b))
PY
	"$SIM" run --trace "$TMP/g1.csv" --cluster 4x8 --policy agora \
		>/dev/null 2>&1 && ok "gang-heavy trace replays" ||
		ko "gang-heavy trace replays"
else
	n=$((n + 1)); echo "ok $n - gang-heavy.py # SKIP no python3"
	n=$((n + 1)); echo "ok $n - gang-heavy replay # SKIP no python3"
fi
# information regimes, checkpoints, kill at the limit, apps, robustness
"$SIM" run --trace "$TMP/five.csv" --cluster 2x4 --policy fifo \
	--limits bogus >/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q "limits: 'bogus': unknown regime" "$TMP/err"; } &&
	ok "bad --limits names the option and the value" || ko "bad --limits (rc $rc: $(cat "$TMP/err"))"
"$SIM" run --trace "$TMP/five.csv" --cluster 2x4 --policy fifo \
	--limits uniform:2:1 >/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q "uniform:2:1': needs 1 <= A <= B" "$TMP/err"; } &&
	ok "bad --limits range" || ko "bad --limits range (rc $rc: $(cat "$TMP/err"))"
"$SIM" run --trace "$TMP/five.csv" --cluster 2x4 --policy fifo --ckpt 7x \
	>/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q -- "--ckpt: '7x'" "$TMP/err"; } &&
	ok "bad --ckpt" || ko "bad --ckpt (rc $rc: $(cat "$TMP/err"))"
"$SIM" run --trace "$TMP/five.csv" --cluster 2x4 --policy backfill \
	--limits constant:1w --jobs-csv "$TMP/cw" --json "$TMP/cw.json" \
	>/dev/null 2>"$TMP/err" &&
	awk -F, 'NR > 1 && $6 != 604800 {exit 1}' "$TMP/cw-backfill.csv" &&
	grep -q '"limits":"constant:604800"' "$TMP/cw.json" &&
	ok "--limits constant:1w" || ko "--limits constant:1w: $(cat "$TMP/err")"
"$SIM" run --trace "$TMP/five.csv" --cluster 2x4 --policy fifo \
	--limits trace --json "$TMP/tr.json" >/dev/null 2>&1 &&
	grep -q '"limits":"trace"' "$TMP/tr.json" && ok "--limits trace" ||
	ko "--limits trace"
"$SIM" run --trace "$TMP/sl.csv" --cluster 4x8 --policy fifo --limits trace \
	>/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 1 ] && grep -q "limits trace: job 7 has no time_limit" "$TMP/err"; } &&
	ok "--limits trace without limits in the trace" || ko "--limits trace missing (rc $rc: $(cat "$TMP/err"))"
# J1 asks for 100 s but runs 300 s; J2 waits behind it on the one GPU
printf 'id,submit,duration,gpus,time_limit,tenant\n1,0,300,1,100,a\n2,0,50,1,60,b\n' >"$TMP/kill.csv"
"$SIM" run --trace "$TMP/kill.csv" --cluster 1x1 --policy fifo \
	--json "$TMP/k1.json" --jobs-csv "$TMP/k1" >/dev/null 2>&1 &&
	python3 - "$TMP/k1.json" <<'PY' && grep -q '^1,a,0,300,1,100,0,-1,' "$TMP/k1-fifo.csv" &&
import json, sys
r = json.load(open(sys.argv[1]))["fifo"]
assert r["killed_at_limit"] == 1 and r["failed"] == 1 and r["jobs"] == 1, r
assert abs(r["gpu_hours_lost"] - 100 / 3600) < 1e-9, r
PY
	ok "kill at the limit: failed by default" || ko "kill at the limit (fail)"
"$SIM" run --trace "$TMP/kill.csv" --cluster 1x1 --policy fifo \
	--limit-kill resubmit --json "$TMP/k2.json" --jobs-csv "$TMP/k2" >/dev/null 2>&1 &&
	python3 - "$TMP/k2.json" <<'PY' &&
import json, sys
r = json.load(open(sys.argv[1]))["fifo"]
# killed at 100, 200 and 400 (300 s + 120 s restart > 400), done at 800
assert r["killed_at_limit"] == 3 and r["failed"] == 0 and r["jobs"] == 2, r
PY
	grep -q '^1,a,0,300,1,800,0,1170,' "$TMP/k2-fifo.csv" &&
	ok "kill at the limit: resubmitted with twice the limit" || ko "kill at the limit (resubmit): $(cat "$TMP/k2-fifo.csv")"
# LAS preempts: no checkpoint loses more than checkpoints; --restart is
# the old model, announced as deprecated
for c in 0 20 continuous; do
	"$SIM" run --trace "$TMP/five.csv" --cluster 2x4 --policy las \
		--params las:thresholds=200 --ckpt $c --restart-overhead 10 \
		--limit-kill none \
		--json "$TMP/ck$c.json" >/dev/null 2>&1 || ko "--ckpt $c"
done
python3 - "$TMP/ck0.json" "$TMP/ck20.json" "$TMP/ckcontinuous.json" <<'PY' &&
import json, sys
a, b, c = (json.load(open(f))["las"] for f in sys.argv[1:])
assert a["preemptions"] > 0 and a["ckpt_s"] == 0 and b["ckpt_s"] == 20, a
assert a["gpu_hours_lost"] > b["gpu_hours_lost"] >= c["gpu_hours_lost"] > 0, (a, b, c)
assert c["util_net"] <= c["utilization"]
PY
	ok "--ckpt: the less often, the more GPU-hours lost" || ko "--ckpt losses"
"$SIM" run --trace "$TMP/five.csv" --cluster 2x4 --policy las --restart 60 \
	--json "$TMP/rs.json" >/dev/null 2>"$TMP/err" &&
	grep -q -- "--restart is deprecated: it means --ckpt continuous --restart-overhead 60" "$TMP/err" &&
	grep -q '"ckpt_s":-1' "$TMP/rs.json" && grep -q '"restart_overhead_s":60' "$TMP/rs.json" &&
	ok "--restart maps onto the checkpoint model" || ko "--restart: $(cat "$TMP/err")"
# apps by job-name prefix
printf 'id,submit,duration,gpus,tenant,name\n1,0,100,4,a,lr-sweep-1\n2,0,100,4,a,lr-sweep-2\n3,0,100,4,b,bert_7\n4,10,100,4,a,other\n' >"$TMP/named.csv"
"$SIM" run --trace "$TMP/named.csv" --cluster 2x4 --policy fifo --app sweep \
	--json "$TMP/sw.json" >/dev/null 2>&1 &&
	python3 - "$TMP/sw.json" <<'PY' && ok "--app sweep groups by name prefix" || ko "--app sweep"
import json, sys
r = json.load(open(sys.argv[1]))["fifo"]
assert sorted(r["app_rho"]) == ["a/lr-sweep", "a/other", "b/bert"], r["app_rho"]
assert r["apps"] == "sweep"
PY
"$SIM" robustness --trace "$TMP/five.csv" --cluster 2x4 \
	--policies fifo,backfill,las,agora --regimes uniform:1:2,constant:1w \
	--ckpts continuous,1800,0 --threads 2 --json "$TMP/rob.json" \
	>"$TMP/rob.txt" 2>"$TMP/err" &&
	python3 - "$TMP/rob.json" <<'PY' && grep -q '^goals:' "$TMP/rob.txt" &&
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r) == 2 * 3 * 4, len(r)
k = {(e["regime"], e["ckpt"], e["label"]) for e in r}
assert len(k) == 24 and ("constant:1w", "none", "agora") in k, k
assert all("max_rho_app" in e and "util_net" in e and "gpu_hours_lost" in e for e in r)
PY
	ok "robustness: one JSON entry per (regime, ckpt, policy)" || ko "robustness: $(cat "$TMP/err")"
"$SIM" robustness --trace "$TMP/five.csv" --cluster 2x4 --policies fifo \
	--regimes uniform:1:2 --ckpts 1800 --threads 1 --json "$TMP/rob1.json" >/dev/null 2>&1 &&
	python3 - "$TMP/rob.json" "$TMP/rob1.json" <<'PY' && ok "robustness: results do not depend on --threads" || ko "robustness threads"
import json, sys
a = [e for e in json.load(open(sys.argv[1])) if e["label"] == "fifo" and e["regime"] == "uniform:1:2" and e["ckpt"] == "every 1800s"]
b = json.load(open(sys.argv[2]))
strip = lambda e: {k: v for k, v in e.items() if k not in ("wall_s", "cpu_s")}
assert len(a) == 1 and strip(a[0]) == strip(b[0]), (a, b)
PY
# the copy across checkpoint costs: 300 jobs of up to 64 GPUs on 40x8 (3
# leaves: gangs across leaves run at a fractional rate, so a work update
# split at a checkpoint rounds otherwise than one that is not).  The
# blind policies' runs under 1800 are copied from continuous's, and equal
# those that --ckpts 1800 alone runs for real.
python3 - "$TMP/gangs.csv" <<'PY'
import random, sys
r = random.Random(17)
t = 0
with open(sys.argv[1], "w") as f:
    f.write("id,submit,duration,gpus,tenant\n")
    for i in range(300):
        t += r.randint(0, 120)
        f.write("%d,%d,%d,%d,t%d\n" % (i + 1, t, int(r.lognormvariate(8, 1.0)) + 30,
                                       r.choice([1, 2, 4, 8, 16, 32, 48, 64]), r.randint(0, 5)))
PY
"$SIM" robustness --trace "$TMP/gangs.csv" --cluster 40x8 --policies backfill-fs,fifo \
	--regimes uniform:1:2 --ckpts continuous,1800 --threads 2 --json "$TMP/robc.json" \
	>"$TMP/robc.txt" 2>"$TMP/err" &&
	grep -q '^2 runs not repeated' "$TMP/robc.txt" &&
	"$SIM" robustness --trace "$TMP/gangs.csv" --cluster 40x8 --policies backfill-fs,fifo \
		--regimes uniform:1:2 --ckpts 1800 --threads 2 --json "$TMP/robr.json" \
		>"$TMP/robr.txt" 2>>"$TMP/err" &&
	! grep -q 'not repeated' "$TMP/robr.txt" &&
	python3 - "$TMP/robc.json" "$TMP/robr.json" <<'PY' &&
import json, sys
a = [e for e in json.load(open(sys.argv[1])) if e["ckpt"] == "every 1800s"]
b = json.load(open(sys.argv[2]))
strip = lambda e: {k: v for k, v in e.items() if k not in ("wall_s", "cpu_s")}
assert len(a) == len(b) == 2 and [strip(e) for e in a] == [strip(e) for e in b], (a, b)
PY
	ok "robustness: runs copied across checkpoint costs equal the runs themselves" ||
	ko "robustness copy: $(cat "$TMP/robc.txt" "$TMP/err" | tail -5)"
"$SIM" robustness --trace "$TMP/five.csv" --cluster 2x4 --regimes nope \
	>/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q "regimes: --limits: 'nope': unknown regime" "$TMP/err"; } &&
	ok "robustness: bad regime" || ko "robustness bad regime (rc $rc: $(cat "$TMP/err"))"
if command -v gnuplot >/dev/null 2>&1; then
	"$SIM" robustness --trace "$TMP/five.csv" --cluster 2x4 \
		--policies fifo,las --regimes uniform:1:2,partmax --ckpts 1800 \
		--plot "$TMP/rplot" >/dev/null 2>"$TMP/err" &&
		[ -s "$TMP/rplot/robustness.png" ] &&
		ok "robustness heat map PNG" || ko "robustness PNG: $(cat "$TMP/err")"
else
	n=$((n + 1)); echo "ok $n - robustness PNG # SKIP gnuplot not installed"
fi
# --window: day 0 keeps the five jobs, day 1 has none (exit 2)
"$SIM" run --trace "$TMP/five.csv" --cluster 2x4 --policy fifo --window 0:1 \
	--json "$TMP/w.json" >/dev/null 2>"$TMP/err" &&
	grep -q -- "--window 0:1: 5 of 5 jobs" "$TMP/err" &&
	ok "--window keeps the jobs of its days" || ko "--window 0:1: $(cat "$TMP/err")"
"$SIM" run --trace "$TMP/five.csv" --cluster 2x4 --policy fifo --window 1:1 \
	>/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q -- "--window: no job in the window" "$TMP/err"; } &&
	ok "--window without jobs" || ko "--window 1:1 (rc $rc: $(cat "$TMP/err"))"
# the strategic tenant: tenant a states half of its (constant 1-week)
# limits; its app rho must not improve by more than 5% (exit 0), and the
# check can fail: with bids on the time limit (est=limit) the lie pays
# and strategic --check exits 3
python3 - "$TMP/strat.csv" <<'PY'
import random, sys
r = random.Random(7)
with open(sys.argv[1], "w") as f:
    f.write("id,submit,duration,gpus,tenant\n")
    t = 0
    for i in range(1, 301):
        t += int(r.expovariate(1 / 60.0))
        d = max(30, int(r.lognormvariate(6.5, 1.2)))
        f.write("%d,%d,%d,%d,%s\n" % (i, t, d, r.choice([1, 1, 2, 4, 8]), "abc"[i % 3]))
PY
"$SIM" strategic --trace "$TMP/strat.csv" --cluster 4x8 --tenants a \
	--limits constant:1w --limit-scale 0.5 --check --json "$TMP/st.json" \
	>"$TMP/st.txt" 2>"$TMP/err" &&
	python3 - "$TMP/st.json" <<'PY' && ok "strategic: a tenant halving its limits gains at most 5%" || ko "strategic: $(cat "$TMP/st.txt" "$TMP/err")"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r) == 1 and r[0]["tenant"] == "a" and r[0]["lie"] == "x0.5", r
assert r[0]["change_pct"] >= -5 and not r[0]["pays"], r
PY
"$SIM" strategic --trace "$TMP/strat.csv" --cluster 4x8 --tenants a \
	--limits constant:1w --limit-scale 0.5 --check --params est=limit \
	>"$TMP/st2.txt" 2>"$TMP/err"
rc=$?
{ [ $rc = 3 ] && grep -q ' PAYS$' "$TMP/st2.txt"; } &&
	ok "strategic: the check fails when bids trust the limit" ||
	ko "strategic est=limit (rc $rc): $(cat "$TMP/st2.txt" "$TMP/err")"
# loaning: grows are valued by the attained estimate unless the oracle
# is asked for, and the oracle changes the elastic variant's outcome on
# the Philly week 2 (only the elastic variant grows, so least-cost stays)
PHILLY=$SRC/../traces/philly_pollux_jobs_2017-10-02_2wk.csv
for e in default oracle; do
	arg=
	[ $e = oracle ] && arg="--grow-estimate oracle"
	# shellcheck disable=SC2086
	"$SIM" loaning --train-scheduler fifo-hold --trace "$PHILLY" --from-day 7 --days 7 \
		--variants least-cost,least-cost+elastic $arg \
		--json "$TMP/loan-$e.json" >/dev/null 2>"$TMP/err" ||
		ko "loaning ($e): $(cat "$TMP/err")"
done
python3 - "$TMP/loan-default.json" "$TMP/loan-oracle.json" <<'PY' &&
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
for v in ("least-cost", "least-cost+elastic"):
    assert a[v]["grow_estimate"] == "attained", a[v]["grow_estimate"]
    assert b[v]["grow_estimate"] == "oracle", b[v]["grow_estimate"]
for k in ("mean_queue_s", "mean_jct_s", "util_train", "util_total",
          "preemptions", "gpu_hours_lost", "slo_misses", "reclaim_shrinks",
          "util_train_pool", "drain_ahead_s"):
    assert k in a["least-cost"], k
e, o = a["least-cost+elastic"], b["least-cost+elastic"]
assert e["grows"] > 0 and o["grows"] > 0, (e["grows"], o["grows"])
assert (e["grows"], e["mean_jct_s"]) != (o["grows"], o["mean_jct_s"]), e
lc = lambda r: {k: v for k, v in r["least-cost"].items() if k != "grow_estimate"}
assert lc(a) == lc(b), "the estimate changed a variant that never grows"
PY
	ok "loaning: attained estimate by default, the oracle changes the grows" ||
	ko "loaning: attained vs oracle"
"$SIM" loaning --train-scheduler fifo-hold --trace "$PHILLY" --grow-estimate median --json "$TMP/x.json" \
	>/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q -- "--grow-estimate: 'median'" "$TMP/err"; } &&
	ok "loaning: bad --grow-estimate named" ||
	ko "loaning --grow-estimate median (rc $rc: $(cat "$TMP/err"))"
# the time limit caps the attained estimate: a 40-min elastic job that has
# run 30 min is expected to run 30 more and grows onto a free node, unless
# its 45-min limit leaves it 15 min (under --min-grow 30m)
printf 'id,submit,duration,gpus,time_limit,tenant\n1,0,2400,8,2700,a\n2,10800,60,1,60,a\n' \
	>"$TMP/lim.csv"
cut -d, -f1-4,6 "$TMP/lim.csv" >"$TMP/nolim.csv"
for f in lim nolim; do
	"$SIM" loaning --train-scheduler fifo-hold --trace "$TMP/$f.csv" --train-nodes 4 --infer-nodes 0 \
		--elastic-frac 1 --variants least-cost+elastic \
		--json "$TMP/loan-$f.json" >/dev/null 2>"$TMP/err" ||
		ko "loaning $f.csv: $(cat "$TMP/err")"
done
python3 - "$TMP/loan-lim.json" "$TMP/loan-nolim.json" <<'PY' &&
import json, sys
lim = json.load(open(sys.argv[1]))["least-cost+elastic"]
nolim = json.load(open(sys.argv[2]))["least-cost+elastic"]
assert nolim["grows"] == 1 and lim["grows"] == 0, (nolim["grows"], lim["grows"])
assert nolim["mean_jct_s"] < lim["mean_jct_s"]
PY
	ok "loaning: the time limit caps the attained estimate" ||
	ko "loaning: time limit cap"
# draining the nodes yesterday's demand takes back within 2 h leaves fewer
# busy nodes to reclaim: fewer preemptions in week 2
"$SIM" loaning --train-scheduler fifo-hold --trace "$PHILLY" --from-day 7 --days 7 --variants slurm-order \
	--drain-ahead 2h --json "$TMP/loan-drain.json" >/dev/null 2>"$TMP/err" &&
	"$SIM" loaning --train-scheduler fifo-hold --trace "$PHILLY" --from-day 7 --days 7 \
		--variants slurm-order --json "$TMP/loan-nodrain.json" \
		>/dev/null 2>>"$TMP/err" &&
	python3 - "$TMP/loan-drain.json" "$TMP/loan-nodrain.json" <<'PY' &&
import json, sys
d = json.load(open(sys.argv[1]))["slurm-order"]
n = json.load(open(sys.argv[2]))["slurm-order"]
assert d["drain_ahead_s"] == 7200 and n["drain_ahead_s"] == 0
assert d["preemptions"] < n["preemptions"], (d["preemptions"], n["preemptions"])
assert d["slo_misses"] <= n["slo_misses"]
PY
	ok "loaning: --drain-ahead cuts preemptions" ||
	ko "loaning --drain-ahead: $(cat "$TMP/err")"
"$SIM" loaning --train-scheduler fifo-hold --trace "$PHILLY" --from-day 7 --days 7 \
	--variants slurm-order,least-cost+elastic --borrow-elastic-only \
	--json "$TMP/loan-eonly.json" >/dev/null 2>"$TMP/err" &&
	python3 - "$TMP/loan-eonly.json" "$TMP/loan-drain.json" "$TMP/loan-nodrain.json" <<'PY' &&
import json, sys
e = json.load(open(sys.argv[1]))
n = json.load(open(sys.argv[3]))["slurm-order"]
# no elastic job in slurm-order: nothing borrows, nothing is preempted
assert e["slurm-order"]["borrow_elastic_only"] is True
assert e["slurm-order"]["preemptions"] == 0 and e["slurm-order"]["mean_loaned_nodes"] > 0
# elastic jobs alone borrow: far fewer preemptions, a longer queue
le = e["least-cost+elastic"]
assert le["preemptions"] < n["preemptions"] / 2, (le["preemptions"], n["preemptions"])
assert le["mean_queue_s"] > n["mean_queue_s"], (le["mean_queue_s"], n["mean_queue_s"])
assert le["slo_misses"] == 0
PY
	ok "loaning: --borrow-elastic-only trades queueing for preemptions" ||
	ko "loaning --borrow-elastic-only: $(cat "$TMP/err")"
# loaning on the scheduler an admin runs: backfill-fs by default, agora and
# the old fifo-hold by name; the JSON keys of issue 18 on a 1,200-job slice
# (agora on 300 jobs and half the pools: its leases thrash here, slow)
head -n 1201 "$PHILLY" >"$TMP/slice.csv"
head -n 301 "$PHILLY" >"$TMP/slice300.csv"
for sch in default agora fifo-hold; do
	arg='' tr=slice pools="--train-nodes 8 --infer-nodes 16"
	[ $sch = default ] || arg="--train-scheduler $sch"
	[ $sch = agora ] && tr=slice300 pools="--train-nodes 4 --infer-nodes 8"
	# shellcheck disable=SC2086
	"$SIM" loaning --trace "$TMP/$tr.csv" $pools \
		--headroom 1 --variants none,slurm-order,least-cost $arg \
		--json "$TMP/ls-$sch.json" >/dev/null 2>"$TMP/err" ||
		ko "loaning --train-scheduler $sch: $(cat "$TMP/err")"
done
python3 - "$TMP/ls-default.json" "$TMP/ls-agora.json" "$TMP/ls-fifo-hold.json" <<'PY' &&
import json, sys
d, a, f = (json.load(open(p)) for p in sys.argv[1:])
assert (d["train_scheduler"], a["train_scheduler"], f["train_scheduler"]) == \
    ("backfill-fs", "agora", "fifo-hold")
for r in (d, a, f):
    for v in ("none", "slurm-order", "least-cost"):
        x = r[v]
        for k in ("harvest", "gpu_hours_lost", "fewest_victims_preemptions",
                  "requeues_max", "requeues_p99", "queue_vs_none",
                  "jct_vs_none", "slo_misses", "preemptions",
                  "mean_queue_s", "mean_jct_s"):
            assert k in x, (v, k)
        assert 0 <= x["harvest"] <= 1 + 1e-9, x["harvest"]
        assert x["requeues_p99"] <= x["requeues_max"]
    assert r["none"]["harvest"] == 0 and r["none"]["preemptions"] == 0
    for v in ("slurm-order", "least-cost"):
        assert r[v]["harvest"] > 0, (v, r[v]["harvest"])
        # the bound is the fewest victims per reclaim: nothing beats it
        assert r[v]["preemptions"] >= r[v]["fewest_victims_preemptions"]
        assert r[v]["queue_vs_none"] > 1, (v, r[v]["queue_vs_none"])
    # least-cost takes the fewest victims per reclaim (fewest_first):
    # within 5% of the per-event bound (the repeat rule never adds one)
    lc = r["least-cost"]
    assert lc["least_cost_fewest_first"] is True
    assert lc["preemptions"] <= 1.05 * lc["fewest_victims_preemptions"] + 1, \
        (lc["preemptions"], lc["fewest_victims_preemptions"])
# the schedulers differ: backfill-fs is not the old FIFO
assert d["none"]["mean_queue_s"] != f["none"]["mean_queue_s"]
PY
	ok "loaning: backfill-fs, agora and fifo-hold schedulers, issue-18 keys" ||
	ko "loaning --train-scheduler"
"$SIM" loaning --trace "$TMP/slice.csv" --train-scheduler fifo \
	--json "$TMP/x.json" >/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q -- "--train-scheduler: 'fifo'" "$TMP/err"; } &&
	ok "loaning: bad --train-scheduler named" ||
	ko "loaning --train-scheduler fifo (rc $rc: $(cat "$TMP/err"))"
# reclaim ahead of a rising demand (doc/loaning.md "Reclaiming ahead"): off by
# default; on, least-cost reclaims ahead (counted), the JSON names the
# horizon and the margin, and no SLO is missed; a bad margin is named
"$SIM" loaning --trace "$TMP/slice.csv" --train-nodes 8 --infer-nodes 16 \
	--headroom 1 --variants slurm-order,least-cost --reclaim-ahead 15m \
	--reclaim-ahead-z 1.5 --json "$TMP/ra.json" >/dev/null 2>"$TMP/err" &&
	python3 - "$TMP/ls-default.json" "$TMP/ra.json" <<'PY' &&
import json, sys
d, a = (json.load(open(p)) for p in sys.argv[1:])
lc, so = a["least-cost"], a["slurm-order"]
assert d["least-cost"]["reclaim_ahead_s"] == 0
assert d["least-cost"]["ahead_reclaims"] == 0
assert lc["reclaim_ahead_s"] == 900 and lc["reclaim_ahead_z"] == 1.5
assert lc["ahead_reclaims"] > 0, lc["ahead_reclaims"]
# slurm-order never reclaims ahead: the option is least-cost's
assert so["ahead_reclaims"] == 0
assert lc["slo_misses"] == 0
PY
	ok "loaning: --reclaim-ahead reclaims ahead, least-cost only, keys named" ||
	ko "loaning --reclaim-ahead: $(cat "$TMP/err")"
"$SIM" loaning --trace "$TMP/slice.csv" --reclaim-ahead-z -1 \
	--json "$TMP/x.json" >/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc = 2 ] && grep -q -- "--reclaim-ahead-z: bad value '-1'" "$TMP/err"; } &&
	ok "loaning: bad --reclaim-ahead-z named" ||
	ko "loaning --reclaim-ahead-z -1 (rc $rc: $(cat "$TMP/err"))"
# the livelock guard (doc/sim.md "Livelock"): two 8-GPU gangs under the
# reference tiresias (promote 0.5, re-demotion at once, no budget) preempt
# each other every 450 s, before any checkpoint: the run fails, named;
# robustness reports the cell; the default tiresias finishes
printf 'id,submit,duration,gpus,tenant\n1,0,14400,8,a\n2,0,14400,8,b\n' \
	> "$TMP/pair.csv"
"$SIM" run --trace "$TMP/pair.csv" --cluster 1x8 --policy tiresias \
	--params tiresias:promote=0.5,hold=0,budget=0 --livelock 2d \
	>/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc != 0 ] && grep -q "livelock: policy tiresias: no job completed for 2.0 days" "$TMP/err"; } &&
	ok "livelock guard fails the run" || ko "livelock guard (rc $rc: $(cat "$TMP/err"))"
"$SIM" run --trace "$TMP/pair.csv" --cluster 1x8 --policy tiresias \
	--params tiresias:promote=0.5 --livelock 2d >/dev/null 2>"$TMP/err" &&
	ok "tiresias with hold and budget finishes the pair" ||
	ko "tiresias hold+budget: $(cat "$TMP/err")"
"$SIM" robustness --trace "$TMP/pair.csv" --cluster 1x8 \
	--policies old=tiresias,tiresias --params old:promote=0.5,hold=0,budget=0 \
	--params tiresias:promote=0.5 --regimes uniform:1:2 --ckpts 1800 \
	--livelock 2d --json "$TMP/rob.json" >"$TMP/out" 2>"$TMP/err" &&
	grep -q '^uniform:1:2 .* old  *livelock$' "$TMP/out" &&
	python3 - "$TMP/rob.json" <<'PY' &&
import json, sys
r = {x["label"]: x for x in json.load(open(sys.argv[1]))}
assert r["old"]["livelock"] is True and "livelock" in r["old"]["error"]
assert r["tiresias"]["livelock"] is False and r["tiresias"]["jobs"] == 2
PY
	ok "robustness reports a livelocked cell" ||
	ko "robustness livelock: $(cat "$TMP/out" "$TMP/err")"
# bounds: the subcommand, and compare --bounds with the gap to backfill-fs
"$SIM" bounds --trace "$TMP/five.csv" --cluster 2x4 --json "$TMP/bounds.json" \
	>"$TMP/out" 2>"$TMP/err" && grep -q '^  mean JCT >= ' "$TMP/out" &&
	python3 - "$TMP/bounds.json" <<'PY' &&
import json, sys
b = json.load(open(sys.argv[1]))
assert b["jobs"] == 5 and b["max_rho_app_lb"] > 0 and b["mean_jct_lb_s"] > 0
PY
	ok "bounds subcommand" || ko "bounds: $(cat "$TMP/out" "$TMP/err")"
"$SIM" compare --trace "$TMP/five.csv" --cluster 2x4 --app burst:30 --limit-kill none \
	--policies backfill-fs,srtf --baseline srtf --bounds \
	--json "$TMP/cb.json" >"$TMP/out" 2>"$TMP/err" &&
	grep -q '^gap closed = (backfill-fs - policy)' "$TMP/out" &&
	python3 - "$TMP/cb.json" <<'PY' &&
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("srtf", "backfill-fs"):
    x = r[k]
    assert x["bounds"]["mean_jct_lb_s"] <= x["mean_jct_s"] + 1e-9
    assert x["bounds"]["max_rho_app_lb"] <= x["max_rho_app"] + 1e-9
    assert x["app_definition"]["def"] == "burst" and x["app_definition"]["gap_s"] == 30
    for key in ("p99_rho_app", "max_rho_app_10gpuh", "max_rho_tenant", "gap_closed_jct"):
        assert key in x, key
assert r["backfill-fs"]["gap_closed_jct"] in (0, None)
PY
	ok "compare --bounds, app metrics and definition in the JSON" ||
	ko "compare --bounds: $(cat "$TMP/out" "$TMP/err")"
# --app burst: agora schedules on the apps (credit per tenant), the
# baselines and --auction-apps account on tenants
"$SIM" compare --trace "$TMP/five.csv" --cluster 2x4 --app burst:30 --limit-kill none \
	--policies agora,acct=agora,tiresias --baseline agora \
	--json "$TMP/pa.json" >/dev/null 2>"$TMP/err" &&
	"$SIM" compare --trace "$TMP/five.csv" --cluster 2x4 --app burst:30 \
		--limit-kill none --auction-apps account --policies acct=agora \
		--baseline acct --json "$TMP/pa2.json" >/dev/null 2>>"$TMP/err" &&
	! "$SIM" compare --trace "$TMP/five.csv" --cluster 2x4 --auction-apps x \
		--policies agora --baseline agora --json "$TMP/pa3.json" \
		>/dev/null 2>>"$TMP/err" &&
	python3 - "$TMP/pa.json" "$TMP/pa2.json" <<'PY' &&
import json, sys
r = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2]))["acct"]
assert r["agora"]["policy_apps"] == "app", r["agora"]["policy_apps"]
assert r["tiresias"]["policy_apps"] == "tenant"
assert a["policy_apps"] == "tenant"
PY
	ok "--app burst: agora bids per app, --auction-apps account per tenant" ||
	ko "--auction-apps: $(cat "$TMP/err")"
# the guard on a short real slice: days 0-2 of the Philly window at 32x8
# livelock the reference tiresias (promote 0.5); hold and budget finish it
if [ -f "$PHILLY" ]; then
	"$SIM" run --trace "$PHILLY" --cluster 32x8 --window 0:2 --livelock 2d \
		--policy tiresias --params tiresias:promote=0.5,hold=0,budget=0 \
		>/dev/null 2>"$TMP/err"
	rc=$?
	{ [ $rc != 0 ] && grep -q "livelock: policy tiresias" "$TMP/err"; } &&
		ok "livelock guard on a Philly slice" ||
		ko "livelock guard on a Philly slice (rc $rc: $(cat "$TMP/err"))"
	"$SIM" run --trace "$PHILLY" --cluster 32x8 --window 0:2 --livelock 2d \
		--policy tiresias --params tiresias:promote=0.5 >/dev/null 2>"$TMP/err" &&
		ok "tiresias hold+budget finishes the Philly slice" ||
		ko "tiresias on the Philly slice: $(cat "$TMP/err")"
fi
# splice-window.py: a window cut from the named ones; a gap is an error
if command -v python3 >/dev/null 2>&1; then
	# two files of one week each, contiguous, named by what they cover
	cat > "$TMP/w_2017-10-02_1wk.csv" <<'CSV'
timestamp,duration,num_gpus,gpu_time,cluster
2017-10-02 00:00:01,60.0,1,60.0,a
2017-10-05 10:00:00,60.0,1,60.0,a
2017-10-08 23:59:59,70.0,2,140.0,b
2017-10-08 23:59:59,70.0,2,140.0,b
CSV
	cat > "$TMP/w_2017-10-09_1wk.csv" <<'CSV'
timestamp,duration,num_gpus,gpu_time,cluster
2017-10-09 00:00:00,80.0,1,80.0,a
2017-10-12 00:00:00,90.0,1,90.0,c
CSV
	if python3 "$SRC/splice-window.py" 2017-10-05 5 "$TMP/sp.csv" \
		"$TMP/w_2017-10-09_1wk.csv" "$TMP/w_2017-10-02_1wk.csv" \
		2>"$TMP/err"; then
		# [10-05, 10-10): the 10-05 job, both identical 10-08 rows
		# (two jobs, not one), the 10-09 job, in submit order
		printf '%s\n' "timestamp,duration,num_gpus,gpu_time,cluster" \
			"2017-10-05 10:00:00,60.0,1,60.0,a" \
			"2017-10-08 23:59:59,70.0,2,140.0,b" \
			"2017-10-08 23:59:59,70.0,2,140.0,b" \
			"2017-10-09 00:00:00,80.0,1,80.0,a" >"$TMP/sp.want"
		cmp -s "$TMP/sp.csv" "$TMP/sp.want" &&
			ok "splice-window: the jobs of the span, in order" ||
			ko "splice-window: $(cat "$TMP/sp.csv")"
	else
		ko "splice-window: $(cat "$TMP/err")"
	fi
	python3 "$SRC/splice-window.py" 2017-10-05 14 "$TMP/sp2.csv" \
		"$TMP/w_2017-10-02_1wk.csv" "$TMP/w_2017-10-09_1wk.csv" \
		2>"$TMP/err"
	rc=$?
	{ [ $rc = 2 ] && grep -q "no file holds 2017-10-16" "$TMP/err" &&
		[ ! -e "$TMP/sp2.csv" ]; } &&
		ok "splice-window: a span the files do not cover is named" ||
		ko "splice-window: uncovered span (rc $rc: $(cat "$TMP/err"))"
	printf 'timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-20 00:00:00,1.0,1,1.0,a\n' \
		>"$TMP/x_2017-10-02_1wk.csv"
	python3 "$SRC/splice-window.py" 2017-10-02 7 "$TMP/sp3.csv" \
		"$TMP/x_2017-10-02_1wk.csv" 2>"$TMP/err"
	rc=$?
	{ [ $rc = 2 ] && grep -q "x_2017-10-02_1wk.csv:2: timestamp" "$TMP/err"; } &&
		ok "splice-window: a row outside its file's span: FILE:LINE: FIELD" ||
		ko "splice-window: row outside (rc $rc: $(cat "$TMP/err"))"
fi
echo "1..$n"
exit $fail
