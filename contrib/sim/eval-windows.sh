#!/bin/sh
# eval-windows.sh - the three-window grid of doc/evaluation.md (issue 17):
# every Philly window in TRACES, each at a heavy (~1.0 offered load) and a
# moderate (~0.85) cluster size, under --ckpt 1800 and three limit
# regimes, for every policy of POLICIES and every agora variant of
# VARIANTS; one JSON per (cell, policy), resumable (a JSON that exists is
# not rerun), each run under a timeout (a livelocking policy is a cell
# that says "timeout", not a hung grid).  Then contrib/sim/windows-table.py
# prints the table and the goals.
#
#   contrib/sim/eval-windows.sh [BUILD_DIR [OUT_DIR]]
#
# Environment: TRACES (folder, default ../shared/traces beside the
# repository, else /work/shared/traces), APP (the app model: tenant, or
# burst:3600 once agora-sim has it; default tenant), POLICIES (default
# backfill-fs,tiresias,las,srtf,agora), VARIANTS (space-separated
# LABEL:PARAMS of extra agora runs, default none), REGIMES, CELLS
# ("window:heavy:moderate" ...), JOBS (runs at once, default 1), TMO
# (seconds per run, default 1200), SEED (agora-sim's --seed: the limits
# drawn, default 1).  Runs with nice.  Deterministic for a SEED apart from
# wall_s and cpu_s.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = --one ]; then
	B=$2
	O=$3
else
	B=${1:-$SRC/_build}
	O=${2:-eval-windows}
fi
SIM="$B/contrib/sim/agora-sim"
if [ -z "${TRACES:-}" ]; then
	TRACES=$SRC/../shared/traces
	[ -d "$TRACES" ] || TRACES=/work/shared/traces
fi
APP=${APP:-tenant}
POLICIES=${POLICIES:-backfill-fs,tiresias,las,srtf,agora}
VARIANTS=${VARIANTS:-}
REGIMES=${REGIMES:-uniform:1:2 lognormal:1.5 constant:1w}
# window, heavy and moderate size (traces/README.md: ~1.0 and ~0.85 load)
CELLS=${CELLS:-2017-10-02:64:75 2017-10-16:86:101 2017-11-20:38:45}
JOBS=${JOBS:-1}
TMO=${TMO:-1200}
SEED=${SEED:-1}
# one run: window cluster regime key label policy params
one() {
	j="$O/$4-$5.json"
	[ -s "$j" ] && return 0
	if [ "$7" = - ]; then par=""; else par="--params $5:$7"; fi
	start=$(date +%s)
	# shellcheck disable=SC2086
	if nice timeout "$TMO" "$SIM" compare \
		--trace "$TRACES/philly_pollux_jobs_$1_2wk.csv" --cluster "$2" \
		--ckpt 1800 --limits "$3" --app "$APP" --seed "$SEED" --no-check \
		--policies "$5=$6" $par --baseline "$5" --json "$j.tmp" \
		>"$O/$4-$5.txt" 2>"$O/$4-$5.err"; then
		mv "$j.tmp" "$j"
	else
		echo "{\"$5\": {\"failed_run\": \"exit $?\"}}" >"$j"
	fi
	echo "$4 $5 $(($(date +%s) - start)) s" >>"$O/times.txt"
}
if [ "${1:-}" = --one ]; then
	shift 3
	one "$@"
	exit 0
fi
mkdir -p "$O"
list="$O/runs.txt"
: >"$list"
for cell in $CELLS; do
	w=${cell%%:*}
	rest=${cell#*:}
	for n in ${rest%%:*} ${rest#*:}; do
		for r in $REGIMES; do
			k="$w-${n}x8-$(echo "$r" | tr ':' '_')"
			# the lower bounds of the cell (agora-sim bounds: they
			# do not depend on the limits)
			[ -s "$O/bounds-$k.json" ] ||
				"$SIM" bounds --trace "$TRACES/philly_pollux_jobs_${w}_2wk.csv" \
					--cluster "${n}x8" --app "$APP" \
					--json "$O/bounds-$k.json" >/dev/null 2>&1 ||
				rm -f "$O/bounds-$k.json"
			for p in $(echo "$POLICIES" | tr ',' ' '); do
				echo "$w ${n}x8 $r $k $p $p -" >>"$list"
			done
			for v in $VARIANTS; do
				echo "$w ${n}x8 $r $k ${v%%:*} agora ${v#*:}" >>"$list"
			done
		done
	done
done
if [ "$JOBS" -gt 1 ]; then
	export APP TMO TRACES SEED
	xargs -P "$JOBS" -L 1 "$0" --one "$B" "$O" <"$list"
else
	while read -r a b c d e f g; do
		one "$a" "$b" "$c" "$d" "$e" "$f" "$g"
	done <"$list"
fi
python3 "$SRC/contrib/sim/windows-table.py" "$O"
