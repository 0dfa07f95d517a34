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
"$SIM" bench --nodes 50 --jobs 500 >"$TMP/bench" 2>&1 &&
	grep -q '^srtf ' "$TMP/bench" && ok "bench" || ko "bench"
echo "1..$n"
exit $fail
