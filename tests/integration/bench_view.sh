#!/bin/bash
# tests/integration/bench_view.sh - what the parse cache of slurmctld/agora
# saves: "scontrol show config" against a large view file (APPS apps,
# LEASES leases), N calls on an unchanged file vs N calls with the file
# touched before each (every call parses).  Prints ms per call, the ratio,
# and the plugin's own parse counter.  No pass/fail: a benchmark.
# One cluster on its own harness (work dir/port as test_view.sh).
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
W=${AGORA_VIEW_WORKDIR:-/tmp/agora-dc-view}
BASE_PORT=${AGORA_VIEW_BASE_PORT:-37000}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$repo/_build/stage/plugins}
N=${N:-50}
APPS=${APPS:-5000}
LEASES=${LEASES:-1000}

IN=${W}.bench
mkdir -p "$IN"
printf '%s\n' SlurmctldPlugstack=slurmctld/agora SlurmctldDebug=debug >"$IN/extra.conf"
"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
trap '"$HARNESS" --workdir "$W" stop >/dev/null 2>&1' EXIT
"$HARNESS" --workdir "$W" --fresh --clusters 1 --nodes 2 --base-port "$BASE_PORT" \
	--plugin-dir "$PLUGIN_DIR" --sched sched/backfill \
	--conf-extra "$IN/extra.conf" start >"$IN/harness.out" 2>&1 ||
	{ tail "$IN/harness.out"; exit 1; }
export SLURM_CONF=$W/c1/etc/slurm.conf
VIEW=$W/c1/state/agora_view.json
python3 - "$APPS" "$LEASES" >"$VIEW.tmp" <<'PY'
import json, sys
a, l = int(sys.argv[1]), int(sys.argv[2])
print(json.dumps({"time": 1700000000, "apps": [
    {"name": "app_%05d" % i, "quota": 100, "usage": i / 7, "credit": 100 - i / 7, "rho": 1 + i / a}
    for i in range(a)], "leases": [
    {"job": 1000 + i, "gpus": 8, "end": 1700000600, "state": "active"} for i in range(l)]}))
PY
mv -f "$VIEW.tmp" "$VIEW"
echo "view: $(stat -c %s "$VIEW") bytes, $APPS apps, $LEASES leases; $N calls each"
parses() {
	grep -o 'parse [0-9]* of [0-9]* calls' "$W/log/c1/slurmctld.log" | tail -1
}
run() { # run touch|keep -> seconds for N calls
	local s e
	scontrol show config >/dev/null
	s=$(date +%s.%N)
	for ((i = 0; i < N; i++)); do
		[ "$1" = touch ] && touch "$VIEW"
		scontrol show config >/dev/null
	done
	e=$(date +%s.%N)
	echo "$e - $s" | bc -l
}
t_keep=$(run keep)
echo "unchanged file: $(echo "$t_keep * 1000 / $N" | bc -l | xargs printf %.1f) ms/call; plugin: $(parses)"
t_touch=$(run touch)
echo "touched each call: $(echo "$t_touch * 1000 / $N" | bc -l | xargs printf %.1f) ms/call; plugin: $(parses)"
echo "ratio re-parse/cached: $(echo "$t_touch / $t_keep" | bc -l | xargs printf %.2f)"
