#!/bin/sh
# End-to-end checks of agora-sim federation (run by make check, TAP): the
# JSON has the five dispatchers and their keys, a two-job case computed by
# hand, the Philly scenario starts imbalanced (worst demand/supply >= 2.5)
# and replica placement lowers it, results are deterministic, the queue term
# of the score moves a job off its data by hand, --limits makes agora
# plan on time limits (by hand), and a bad --federation spec, dispatcher
# or regime is refused naming the field.
set -u
SIM=${SIM:-./agora-sim}
SRC=${srcdir:-.}
PHILLY=$SRC/../traces/philly_pollux_jobs_2017-10-02_2wk.csv
TMP=$(mktemp -d) || exit 99
trap 'rm -rf "$TMP"' EXIT
fail=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
ko() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# the hand cases' federation: a:1x8 and b:1x8, one dataset per tenant
# (1 GB, on a: 100 s from b); fed2 NAME TRACE JSON ARGS...
fed2() {
	f2name=$1 f2trace=$2 f2json=$3
	shift 3
	"$SIM" federation --trace "$f2trace" --federation a:1x8,b:1x8 \
		--datasets-per-tenant 1 --data-size 1e9:1e9 --link 1e7 \
		--json "$f2json" "$@" >/dev/null 2>"$TMP/err" ||
		ko "federation $f2name: $(cat "$TMP/err")"
}

# Two 8-GPU jobs, one dataset on cluster a (1 GB at 1e7 B/s: 100 s away).
# j1 runs on a over [0, 50).  j2 (submit 10): first-start takes b, where
# it starts at once but transfers for 100 s first: ends 210, JCT 200;
# agora waits 40 s for a (cost 40 < 100): [50, 150), JCT 140.
cat > "$TMP/two.csv" <<'CSV'
id,submit,duration,gpus,tenant
1,0,50,8,a
2,10,100,8,a
CSV
if "$SIM" federation --trace "$TMP/two.csv" --federation a:1x8,b:1x8 \
	--datasets-per-tenant 1 --data-size 1e9:1e9 --link 1e7 \
	--json "$TMP/two.json" >"$TMP/out" 2>"$TMP/err"; then
	ok "federation runs"
else
	ko "federation runs: $(cat "$TMP/err")"
fi
python3 - "$TMP/two.json" <<'PY' && ok "JSON: five dispatchers with their keys" || ko "JSON keys"
import json, sys
r = json.load(open(sys.argv[1]))
names = ["first-start", "random", "least-loaded", "agora", "agora+data"]
keys = ["mean_jct_s", "mean_queue_s", "worst_demand_supply",
        "gpu_hours_moved", "worst_demand_supply_initial"]
assert "worst_demand_supply_initial" in r, r.keys()
for d in names:
    assert d in r, d
    for k in keys:
        assert isinstance(r[d].get(k), (int, float)), (d, k)
PY
python3 - "$TMP/two.json" <<'PY' && ok "two jobs: JCT, queue and moved GPU-hours as computed by hand" || ko "two jobs by hand"
import json, sys
r = json.load(open(sys.argv[1]))
near = lambda a, b: abs(a - b) < 1e-6
f, a = r["first-start"], r["agora"]
assert near(f["mean_jct_s"], 125) and near(f["mean_queue_s"], 0), f
assert near(f["gpu_hours_moved"], 8 * 100 / 3600), f
assert near(a["mean_jct_s"], 95) and near(a["mean_queue_s"], 20), a
assert near(a["gpu_hours_moved"], 0), a
PY

# bad input: exit 2, the option and the field named
bad() { # $1 what, $2 expected message, rest: arguments
	what=$1 msg=$2
	shift 2
	"$SIM" federation --trace "$TMP/two.csv" --json "$TMP/bad.json" "$@" \
		>/dev/null 2>"$TMP/err"
	rc=$?
	if [ $rc = 2 ] && grep -q -- "$msg" "$TMP/err"; then
		ok "$what"
	else
		ko "$what (rc $rc: $(cat "$TMP/err"))"
	fi
}
bad "bad spec: NODES field named" "--federation: entry 2 'b:1y8': NODES" \
	--federation a:1x8,b:1y8
bad "bad spec: GPUS missing" "--federation: entry 1 'a:2x': GPUS" \
	--federation a:2x
bad "bad spec: no NAME" "--federation: entry 1 '4x8': NAME" --federation 4x8
bad "bad spec: NAME twice" "entry 2 'a:1x8': NAME: given twice" \
	--federation a:1x8,a:1x8
bad "unknown dispatcher named" "--dispatchers: unknown dispatcher 'nope'" \
	--federation a:1x8 --dispatchers agora,nope
bad "bad --data-size field named" "--data-size: '5:1': MAX" \
	--federation a:1x8 --data-size 5:1

if [ -r "$PHILLY" ]; then
	"$SIM" federation --trace "$PHILLY" \
		--federation c1:40x8,c2:24x8,c3:16x8 --json "$TMP/p.json" \
		>"$TMP/out" 2>"$TMP/err" || ko "Philly run: $(cat "$TMP/err")"
	python3 - "$TMP/p.json" <<'PY' && ok "Philly: starts at worst demand/supply >= 2.5" || ko "Philly initial"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["worst_demand_supply_initial"] >= 2.5, r["worst_demand_supply_initial"]
PY
	python3 - "$TMP/p.json" <<'PY' && ok "Philly: agora+data's worst demand/supply is below agora's" || ko "Philly placement"
import json, sys
r = json.load(open(sys.argv[1]))
a, d = r["agora"], r["agora+data"]
assert d["worst_demand_supply"] < a["worst_demand_supply"], (a, d)
assert d["replica_copies"] > 0 and a["replica_copies"] == 0, (a, d)
PY
	"$SIM" federation --trace "$PHILLY" \
		--federation c1:40x8,c2:24x8,c3:16x8 --json "$TMP/q.json" \
		>/dev/null 2>&1
	if [ "$(grep -v -e wall_s -e cpu_s "$TMP/p.json")" = "$(grep -v -e wall_s -e cpu_s "$TMP/q.json")" ]; then
		ok "Philly: deterministic"
	else
		ko "Philly: deterministic"
	fi
else
	skip "Philly checks" "no $PHILLY"
fi

if command -v gnuplot >/dev/null 2>&1; then
	"$SIM" federation --trace "$TMP/two.csv" --federation a:1x8,b:1x8 \
		--json "$TMP/two.json" --plot "$TMP/plot" >/dev/null 2>"$TMP/err" &&
		[ -s "$TMP/plot/fed_demand_agora-data.png" ] &&
		[ -s "$TMP/plot/fed_jct_cdf.png" ] &&
		ok "demand/supply and JCT PNGs" || ko "PNGs: $(cat "$TMP/err")"
else
	skip "demand/supply and JCT PNGs" "gnuplot not installed"
fi
# issue 18: where the data starts is named in the JSON; every dispatcher
# has hours_within_5pct (and the share within 5% or unsaturated) and the
# hourly optimum, which no dispatcher beats
if [ -r "$PHILLY" ]; then
	for pl in home random skewed; do
		"$SIM" federation --trace "$PHILLY" --window 7:1 \
			--federation c1:16x8,c2:8x8,c3:6x8 --data-placement $pl \
			--json "$TMP/pl-$pl.json" >/dev/null 2>"$TMP/err" ||
			ko "federation --data-placement $pl: $(cat "$TMP/err")"
	done
	python3 - "$TMP/pl-home.json" "$TMP/pl-random.json" "$TMP/pl-skewed.json" <<'PY' &&
import json, sys
rs = [json.load(open(p)) for p in sys.argv[1:]]
assert [r["data_placement"] for r in rs] == ["home", "random", "skewed"]
assert rs[0]["scenario"]["home_from_week_before"] is True
for r in rs:
    for d in ("first-start", "least-loaded", "agora", "agora+data"):
        x = r[d]
        assert 0 <= x["hours_within_5pct"] <= 1, (d, x["hours_within_5pct"])
        # within 5% or with no cluster over its supply: never fewer hours
        u = x["hours_within_5pct_or_unsaturated"]
        assert x["hours_within_5pct"] <= u <= 1, (d, u)
        assert x["optimum_worst_demand_supply"] <= x["worst_assigned_supply"] + 1e-9
# the skewed start is the most imbalanced of the three
ini = [r["worst_demand_supply_initial"] for r in rs]
assert ini[2] > ini[0] and ini[2] > ini[1], ini
PY
		ok "federation: --data-placement home|random|skewed, hours_within_5pct" ||
		ko "federation --data-placement"
	"$SIM" federation --trace "$TMP/two.csv" --federation a:1x8,b:1x8 \
		--data-placement far --json "$TMP/x.json" >/dev/null 2>"$TMP/err"
	rc=$?
	{ [ $rc = 2 ] && grep -q -- "--data-placement: 'far'" "$TMP/err"; } &&
		ok "federation: bad --data-placement named" ||
		ko "federation --data-placement far (rc $rc: $(cat "$TMP/err"))"
else
	skip "federation --data-placement" "no $PHILLY"
fi
# The queue term (pol_fed_queue_s), by hand: a:1x8 and b:1x8, the data on
# a, 100 s from b.  j1 (8 GPUs) runs on a over [0, 50); j2 (4 GPUs, 500 s,
# round 2) waits 48 s for a (48 < 100 of transfer to b): [50, 550), queued
# on a.  j3 (4 GPUs, 500 s, round 4) could start on a at 50 too (46 s of
# wait) but would add 1 queued job / 8 GPUs x 4 GPUs x 500 s = 250 s to
# a's queue: cost 296 against b's 100 of transfer, so it goes to b:
# [4, 604), JCT 600 (546 on a with --queue-weight 0, gpu_hours_moved 0).
cat > "$TMP/three.csv" <<'CSV'
id,submit,duration,gpus,tenant
1,0,50,8,a
2,2,500,4,a
3,4,500,4,a
CSV
for wq in 0 1; do
	fed2 "--queue-weight $wq" "$TMP/three.csv" "$TMP/q$wq.json" \
		--dispatchers agora --queue-weight $wq
done
python3 - "$TMP/q0.json" "$TMP/q1.json" <<'PY' && ok "queue term: a job leaves its data for a shorter queue, by hand" || ko "queue term by hand"
import json, sys
r0, r1 = (json.load(open(p)) for p in sys.argv[1:])
near = lambda a, b: abs(a - b) < 1e-6
assert r0["scenario"]["queue_weight"] == 0 and r1["scenario"]["queue_weight"] == 1
a0, a1 = r0["agora"], r1["agora"]
assert near(a0["mean_jct_s"], (50 + 548 + 546) / 3), a0
assert near(a0["gpu_hours_moved"], 0), a0
assert near(a1["mean_jct_s"], (50 + 548 + 600) / 3), a1
assert near(a1["gpu_hours_moved"], 4 * 500 / 3600), a1
assert near(a1["mean_transfer_s"], 100 / 3), a1
PY
bad "bad --queue-weight named" "--queue-weight: '-1': expected a number 0-1000" \
	--federation a:1x8,b:1x8 --queue-weight -1
# --limits: what agora's plans know, by hand on the two-job case.  Exact:
# j2 waits 40 s for a (above: mean JCT 95).  uniform:1:1: j1 asks for
# its 50 s rounded up to a minute, so will-run on a says 50 s of wait,
# under the 100 s of transfer to b: a, where the cluster starts it when
# j1 really ends (50): 95 again.  uniform:2:2 (120 s: a wait of 110 s)
# and constant:10m: b, as first-start (mean 125).  first-start runs on
# the run times.
for lim in exact uniform:1:1 uniform:2:2 constant:10m; do
	fed2 "--limits $lim" "$TMP/two.csv" "$TMP/lim-$lim.json" --limits $lim
done
python3 - "$TMP/lim-exact.json" "$TMP/lim-uniform:1:1.json" "$TMP/lim-uniform:2:2.json" "$TMP/lim-constant:10m.json" <<'PY' && ok "--limits: agora plans on the limits, by hand" || ko "--limits by hand"
import json, sys
rs = [json.load(open(p)) for p in sys.argv[1:]]
near = lambda a, b: abs(a - b) < 1e-6
assert [r["limits"] for r in rs] == ["exact", "uniform:1:1", "uniform:2:2", "constant:600"], [r["limits"] for r in rs]
assert [r["agora"]["mean_jct_s"] for r in rs] == [95, 95, 125, 125], [r["agora"]["mean_jct_s"] for r in rs]
for r in rs:
    assert near(r["first-start"]["mean_jct_s"], 125), r["first-start"]
PY
bad "bad --limits named" "--limits: 'soon': unknown regime" \
	--federation a:1x8,b:1x8 --limits soon
# --hold: the queue term's hold from the history or from the limit, by
# hand.  a:1x8 and b:1x8, the data on a, 100 s from b; rounds of 1 s;
# uniform:1:1 (each limit its run time rounded up to a minute).  j0 (4
# GPUs, 2 s) runs on a [0, 2); j1 (8 GPUs) on a [2, 52); j2 (4 GPUs, 500
# s) queued on a from 52.  j3 (4 GPUs, 500 s, round 5): will-run on the
# limits starts it on a at 62 (j1's 60 s limit), 57 s of wait, and a has
# one job queued.  --hold limit: 1/8 x 4 x 0.693 x 540 = 187 s more, 244
# against b's 100 of transfer: b, [5, 605), JCT 600.  --hold history: j0
# (same tenant and GPUs, ended at 2) ran 2 s: 1 s more, 58: a, where it
# starts at 52 beside j2, JCT 547.
cat > "$TMP/hold.csv" <<'CSV'
id,submit,duration,gpus,tenant
0,0,2,4,a
1,1,50,8,a
2,3,500,4,a
3,5,500,4,a
CSV
for h in limit history; do
	fed2 "--hold $h" "$TMP/hold.csv" "$TMP/hold-$h.json" \
		--dispatchers agora --round 1 --limits uniform:1:1 --hold $h
done
python3 - "$TMP/hold-limit.json" "$TMP/hold-history.json" <<'PY' && ok "--hold: the queue term's hold from the history, by hand" || ko "--hold by hand"
import json, sys
rl, rh = (json.load(open(p)) for p in sys.argv[1:])
near = lambda a, b: abs(a - b) < 1e-6
assert rl["hold"] == "limit" and rh["hold"] == "history", (rl["hold"], rh["hold"])
assert near(rl["agora"]["mean_jct_s"], (2 + 51 + 549 + 600) / 4), rl["agora"]
assert near(rh["agora"]["mean_jct_s"], (2 + 51 + 549 + 547) / 4), rh["agora"]
PY
bad "bad --hold named" "--hold: 'guess': expected history or limit" \
	--federation a:1x8,b:1x8 --hold guess
# --limits: will-run plans on the running jobs only, and agorad's bid puts
# the jobs queued there first (pol_fed_start_choose), by hand.  a:1x8 and
# b:1x8, the data on a, 100 s from b; rounds of 1 s; uniform:1:1.  j0 (8
# GPUs, 60 s) on a [0, 60); j1 (8 GPUs, 600 s) waits 59 s on a (b: 100 s
# of transfer), [60, 660); j2 (8 GPUs, 300 s) to b, which is free:
# [2, 402) with its transfer.  j3 (1 GPU, 60 s) at 3: will-run on a says
# 60 (j0's limit), ahead of j1, which the queue term weighs at only
# 1/8 x 1 x 0.693 x 60 = 5 s; the estimate with j1 first says 660 (j0's
# end, then j1's 8 x 600 GPU-s over 8 GPUs).  b: 402, no queue, + 100 s
# of transfer: b, [402, 562), JCT 559, as with exact run times; taking
# will-run's 60 it went to a behind j1, [660, 720), JCT 717.
printf '%s\n' id,submit,duration,gpus,tenant 0,0,60,8,a 1,1,600,8,a \
	2,2,300,8,a 3,3,60,1,a >"$TMP/ahead.csv"
for lim in exact uniform:1:1; do
	fed2 "ahead --limits $lim" "$TMP/ahead.csv" "$TMP/ahead-$lim.json" \
		--dispatchers agora --round 1 --limits $lim
done
python3 - "$TMP/ahead-exact.json" "$TMP/ahead-uniform:1:1.json" <<'PY' && ok "--limits: the bid puts the queued jobs before will-run's start, by hand" || ko "--limits queue ahead by hand"
import json, sys
re_, rl = (json.load(open(p)) for p in sys.argv[1:])
near = lambda a, b: abs(a - b) < 1e-6
for r in (re_, rl):
    assert near(r["agora"]["mean_jct_s"], (60 + 659 + 400 + 559) / 4), r["agora"]
PY
echo "1..$n"
exit $fail
