#!/bin/sh
# same-decisions.sh - does a change of the policy code keep its decisions?
# Runs two agora-sim binaries (before, after) on the first JOBS jobs of
# every Philly window in TRACES, at two small cluster sizes, --ckpt 1800,
# uniform:1:2 limits, apps = bursts of 1 h, for agora (its default solver
# and the greedy one: solver=2), tiresias and las, and compares the
# compare JSON (all but wall_s and cpu_s) and every per-job CSV (starts, ends,
# preemptions) of the two.  Exit 0 when all are identical, 1 otherwise
# (the differing files are named).  A check for a speed-up, not a test:
# its runs take 10-30 s on the shared 2-core host.
#
#   contrib/sim/same-decisions.sh BEFORE_SIM AFTER_SIM [WORK_DIR]
#
# Environment: TRACES (folder of philly_pollux_jobs_*_2wk.csv, default
# ../shared/traces beside the repository, else /work/shared/traces), JOBS
# (default 2000), CLUSTERS (default "8x8 16x8"), POLICIES and PARAMS
# (the --policies list, its first entry the baseline, and the --params
# argument; default the agora, greedy agora, tiresias and las above; e.g.
# POLICIES=backfill,backfill-fs,agora-order PARAMS= for Slurm's plan).
set -eu
[ $# -ge 2 ] || {
	echo "usage: $0 BEFORE_SIM AFTER_SIM [WORK_DIR]" >&2
	exit 2
}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${TRACES:-}" ]; then
	TRACES=$SRC/../shared/traces
	[ -d "$TRACES" ] || TRACES=/work/shared/traces
fi
JOBS=${JOBS:-2000}
CLUSTERS=${CLUSTERS:-8x8 16x8}
POLICIES=${POLICIES:-agora,agora-g=agora,tiresias,las}
PARAMS=${PARAMS-agora-g:solver=2}
W=${3:-$(mktemp -d)}
mkdir -p "$W"
bad=0
for t in "$TRACES"/philly_pollux_jobs_*_2wk.csv; do
	w=$(basename "$t" .csv)
	"$1" slice --trace "$t" --jobs "$JOBS" --speedup 1 >"$W/$w.csv"
	for c in $CLUSTERS; do
		for side in before after; do
			if [ $side = before ]; then sim=$1; else sim=$2; fi
			"$sim" compare --trace "$W/$w.csv" --cluster "$c" \
				--ckpt 1800 --limits uniform:1:2 --app burst:1h \
				--policies "$POLICIES" \
				${PARAMS:+--params "$PARAMS"} \
				--baseline "${POLICIES%%,*}" \
				--json "$W/$side-$w-$c.json" \
				--jobs-csv "$W/$side-$w-$c" >/dev/null
		done
		for f in "$W/before-$w-$c"-*.csv; do
			if ! cmp -s "$f" "$W/after-${f#"$W/before-"}"; then
				echo "DIFFERENT: $f" >&2
				bad=1
			fi
		done
		if ! python3 "$SRC/contrib/sim/same-json.py" "$W/before-$w-$c.json" "$W/after-$w-$c.json"; then
			echo "DIFFERENT: $W/before-$w-$c.json" >&2
			bad=1
		fi
		echo "$w $c: $([ $bad = 0 ] && echo same || echo 'DIFFERENT so far')"
	done
done
exit $bad
