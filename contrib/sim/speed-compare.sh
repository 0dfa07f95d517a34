#!/bin/sh
# speed-compare.sh - two agora-sim builds' speed side by side, with ratios:
# the decision passes of `bench` (least of REPEAT passes each, wall and
# thread CPU ms; the contended snapshot unless BENCH_ARGS says otherwise)
# and, when ROBUSTNESS is set, one `robustness` run each (wall time, the
# runs' CPU time and the wall time they would take on 2 idle cores).
# The builds run one after the other, OLD first, so both see about the
# same load on a shared host; the load average is printed before each.
# A benchmark, not a test: nothing here is asserted.  Both builds need
# `bench --repeat` and robustness' CPU line (this script's commit on).
#
#   contrib/sim/speed-compare.sh OLD_SIM NEW_SIM [WORK_DIR]
#
# Environment: REPEAT (default 5), BENCH_ARGS (default --contended),
# ROBUSTNESS ("TRACE CLUSTER", e.g. "../shared/traces/x.csv 64x8"; empty:
# no robustness run), ROB_ARGS (default --app burst:1h --threads 2).
set -eu
[ $# -ge 2 ] || {
	echo "usage: $0 OLD_SIM NEW_SIM [WORK_DIR]" >&2
	exit 2
}
REPEAT=${REPEAT:-5}
BENCH_ARGS=${BENCH_ARGS:---contended}
ROB_ARGS=${ROB_ARGS:---app burst:1h --threads 2}
W=${3:-$(mktemp -d)}
mkdir -p "$W"
load() { cut -d' ' -f1-3 /proc/loadavg; }
for side in old new; do
	if [ $side = old ]; then sim=$1; else sim=$2; fi
	echo "$side bench: load average $(load)"
	# shellcheck disable=SC2086 # BENCH_ARGS is a list of options
	"$sim" bench $BENCH_ARGS --repeat "$REPEAT" >"$W/bench-$side.txt"
done
echo
echo "bench $BENCH_ARGS, least of $REPEAT passes (ms); ratio = old / new"
awk '
	FNR == 1 { f++ }
	/snapshot:/ { snap = $0 }
	$2 ~ /^[0-9.]+$/ && $3 ~ /^[0-9.]+$/ && NF == 8 {
		k = snap "|" $1
		if (f == 1) { ow[k] = $2; oc[k] = $3; order[++n] = k }
		else { nw[k] = $2; nc[k] = $3 }
	}
	END {
		printf "%-12s %10s %10s %7s %10s %10s %7s\n", "policy",
		       "old_wall", "new_wall", "ratio", "old_cpu", "new_cpu",
		       "ratio"
		for (i = 1; i <= n; i++) {
			k = order[i]
			split(k, p, "|")
			if (p[1] != last) { print p[1]; last = p[1] }
			printf "%-12s %10.2f %10.2f %7.2f %10.2f %10.2f %7.2f\n",
			       p[2], ow[k], nw[k], (nw[k] > 0 ? ow[k] / nw[k] : 0),
			       oc[k], nc[k], (nc[k] > 0 ? oc[k] / nc[k] : 0)
		}
	}' "$W/bench-old.txt" "$W/bench-new.txt"
[ -n "${ROBUSTNESS:-}" ] || exit 0
# shellcheck disable=SC2086 # ROBUSTNESS is "TRACE CLUSTER"
set -- "$1" "$2" $ROBUSTNESS
for side in old new; do
	if [ $side = old ]; then sim=$1; else sim=$2; fi
	echo "$side robustness: load average $(load)"
	# shellcheck disable=SC2086 # ROB_ARGS is a list of options
	"$sim" robustness --trace "$3" --cluster "$4" $ROB_ARGS \
		--json "$W/rob-$side.json" >"$W/rob-$side.txt"
	echo "  load average after: $(load)"
done
echo
echo "robustness $3 $4 (s); ratio = old / new"
awk '
	FNR == 1 { f++ }
	/^wall time/ { wall[f] = $3; runs[f] = $5 }
	/^CPU time/ { cpu[f] = $3 + 0; idle[f] = $(NF - 1) + 0; cores = $6 }
	END {
		printf "%-28s %10s %10s %7s\n", "", "old", "new", "ratio"
		printf "%-28s %10.1f %10.1f %7.2f\n", "wall", wall[1], wall[2],
		       wall[1] / wall[2]
		printf "%-28s %10.1f %10.1f %7.2f\n", "CPU of the runs", cpu[1],
		       cpu[2], cpu[1] / cpu[2]
		printf "%-28s %10.1f %10.1f %7.2f\n",
		       "wall on " cores " idle cores", idle[1], idle[2],
		       idle[1] / idle[2]
	}' "$W/rob-old.txt" "$W/rob-new.txt"
if python3 "$(dirname "$0")/same-json.py" "$W/rob-old.json" "$W/rob-new.json"; then
	echo "robustness JSON: identical but wall_s and cpu_s"
else
	echo "robustness JSON: DIFFERENT"
fi
