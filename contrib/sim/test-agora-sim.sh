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
	utilization max_rho mean_rho jain_rho preemptions fragmentation jobs \
	mean_locality_level mean_locality_level_multi wall_s; do
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
if [ "$(grep -v wall_s "$TMP/a.json")" = "$(grep -v wall_s "$TMP/b.json")" ]; then
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
        "p99_queue_s", "makespan_s", "utilization_makespan", "max_rho",
        "mean_rho", "jain_rho")
bad = [k for k in keys if abs(a[k] - s[k]) > 1e-9 * max(1, abs(a[k]))]
sys.exit(1 if bad or s["unfinished"] != 0 or s["tenant_rho"] != a["tenant_rho"] else 0)
PY
then
	ok "score reproduces the simulation's summary"
else
	ko "score reproduces the simulation's summary (rc $rc: $(cat "$TMP/err"))"
fi
{ head -1 "$TMP/jobs-backfill.csv"; echo "9,c,5,10,1,60,-1,-1,-1,-1,-1,0,nan,0,-1"; } >"$TMP/unf.csv"
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
"$SIM" bench --nodes 50 --jobs 500 >"$TMP/bench" 2>&1 &&
	grep -q '^srtf ' "$TMP/bench" && ok "bench" || ko "bench"
grep -q '^agora+600s ' "$TMP/bench" && grep -q '^agora-order ' "$TMP/bench" &&
	ok "bench times agora and agora-order" || ko "bench lacks agora rows"
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
echo "1..$n"
exit $fail
