#!/bin/sh
# eval-agora.sh - rerun every simulator number of doc/evaluation.md
# "Robustness", "Agora against the baselines" and "Placement".  The two
# older sections were measured with the model of their time: restarts redo
# 60 s and lose nothing, limits never kill (OLD below).
#
#   contrib/sim/eval-agora.sh [BUILD_DIR [OUT_DIR]]
#
# BUILD_DIR: a configured build (default _build-sim); OUT_DIR (default
# eval-out): the JSON and tables of each command.  Every command is printed
# before it runs.  Deterministic apart from wall_s and cpu_s (seed 1).
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$SRC/_build-sim}
O=${2:-eval-out}
SIM="$B/contrib/sim/agora-sim"
T=${T:-$SRC/contrib/traces/philly_pollux_jobs_2017-10-02_2wk.csv}
mkdir -p "$O"
G="$O/philly-gang-heavy.csv"
run() { echo "+ $*" >&2; "$@"; }
run python3 "$SRC/contrib/sim/gang-heavy.py" --fraction 0.15 --seed 1 "$T" >"$G"
OLD="--restart 60 --limit-kill none"
for c in 64x8 80x8; do
	run "$SIM" robustness --trace "$T" --cluster $c \
		--policies fifo,backfill,las,srtf,agora-order,agora \
		--json "$O/rob-$c.json" --plot "$O/plot-$c" >"$O/rob-$c.txt"
done
POL=fifo,backfill,las,srtf,agora-order,agora,agora-before=agora
PAR=agora-before:victims=0,drain=0
for tr in philly gang; do
	if [ $tr = philly ]; then TR=$T; else TR=$G; fi
	for c in 64x8 80x8; do
		for f in none pollux; do
			[ $tr = gang ] && [ $f = pollux ] && continue
			# shellcheck disable=SC2086
			run "$SIM" compare $OLD --trace "$TR" --cluster $c --filter $f \
				--policies $POL --params $PAR --baseline backfill \
				--json "$O/$tr-$c-$f.json" >"$O/$tr-$c-$f.txt"
		done
		for cl in $c "$SRC/contrib/sim/clusters/philly-$c-2island.cluster"; do
			case $cl in *2island*) k=$c-2island ;; *) k=$c ;; esac
			for pl in stock agora; do
				# shellcheck disable=SC2086
				run "$SIM" compare $OLD --trace "$TR" --cluster "$cl" \
					--placement $pl --policies backfill,agora \
					--baseline backfill \
					--json "$O/place-$tr-$k-$pl.json" \
					>"$O/place-$tr-$k-$pl.txt"
			done
		done
	done
done
run "$SIM" bench >"$O/bench.txt"
