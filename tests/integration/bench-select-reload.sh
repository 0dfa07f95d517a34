#!/bin/bash
# tests/integration/bench-select-reload.sh - how often the select/cons_tres
# wrapper re-reads agora.conf and the TopologyModel while slurmctld handles
# node and partition updates (which run under slurmctld's write locks).
#
# Starts a one-cluster agora-dc harness (4 nodes x 8 GPUs, Placement=agora,
# a 1-type model), then counts the wrapper's "Placement=... TopologyModel="
# load lines in slurmctld.log for each phase:
#   100 x scontrol update nodename=... comment=...
#   100 x scontrol update partitionname=batch MaxTime=...
#    20 x scontrol setdebugflags +/-Gang
#     2 x scontrol reconfigure with agora.conf and the model unchanged
#     1 x scontrol reconfigure after agora.conf changed
# and the wall time of each phase (for information, nothing is asserted on
# time).  Exit status 0; the numbers are printed.  Run as root after make.
#   AGORA_BENCH_BUILD      build dir [<repo>/_build]
#   AGORA_BENCH_WORKDIR    harness work dir [/tmp/agora-bench-reload]
#   AGORA_BENCH_BASE_PORT  harness base port [35000]
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${AGORA_BENCH_BUILD:-$repo/_build}
W=${AGORA_BENCH_WORKDIR:-/tmp/agora-bench-reload}
IN=$W.in
BASE_PORT=${AGORA_BENCH_BASE_PORT:-35000}
HARNESS=$repo/contrib/harness/agora-dc
TOPO=$BUILD/contrib/topo/agora-topo
PLUGDIR=$BUILD/stage/plugins

harness() { "$HARNESS" --workdir "$W" "$@"; }
trap '[ -f "$W/harness.env" ] && harness stop >/dev/null 2>&1' EXIT
export SLURM_CONF=$W/c1/etc/slurm.conf
LOG=$W/log/c1/slurmctld.log
now_ms() { date +%s%3N; }
loads() { grep -c 'Placement=[a-z]* TopologyModel=' "$LOG" || true; }

[ "$(id -u)" = 0 ] || { echo "must run as root" >&2; exit 1; }
rm -rf "$IN"
mkdir -p "$IN"
"$TOPO" model -i "$repo/tests/fixtures/topo/2s-8gpu-2nvlink.xml" \
	--name nvl2 --nodes 'c1n[1-4]' -o "$IN/model.json" || exit 1
"$TOPO" gres -m "$IN/model.json" --type-name nvl2 --file-prefix @FAKEGPU@ \
	>"$IN/gres.conf" || exit 1
printf 'TopologyModel=%s\nPlacement=agora\n' "$IN/model.json" >"$IN/agora.conf"
harness --clusters 1 --nodes 4 --gpus 8 --cpus 40 --base-port "$BASE_PORT" \
	--plugin-dir "$PLUGDIR" --sched sched/backfill \
	--gres-conf "$IN/gres.conf" --agora-conf "$IN/agora.conf" \
	--fresh start >"$IN/harness-start.log" 2>&1 || {
	tail -20 "$IN/harness-start.log" >&2
	exit 1
}

phase() { # NAME CMD...: run CMD, print loads and time
	local name=$1 b t0 a
	shift
	b=$(loads)
	t0=$(now_ms)
	"$@"
	sleep 1
	a=$(loads)
	printf '%-44s reloads %4d   %6d ms\n' "$name" $((a - b)) $(($(now_ms) - t0))
}
node_updates() {
	local i
	for ((i = 1; i <= 100; i++)); do
		scontrol update nodename="c1n$((i % 4 + 1))" comment="x$i" || return 1
	done
}
part_updates() {
	local i
	for ((i = 1; i <= 100; i++)); do
		scontrol update partitionname=batch MaxTime=$((1000 + i)) || return 1
	done
}
debugflags() {
	local i
	for ((i = 1; i <= 10; i++)); do
		scontrol setdebugflags +Gang && scontrol setdebugflags -Gang || return 1
	done
}
reconf_same() {
	scontrol reconfigure && sleep 2 && scontrol reconfigure && sleep 2
}
reconf_changed() {
	echo '# changed' >>"$W/c1/etc/agora.conf"
	scontrol reconfigure && sleep 2
}

echo "wrapper: $PLUGDIR/select_cons_tres.so; loads at start-up: $(loads)"
phase "100 x scontrol update nodename comment" node_updates
phase "100 x scontrol update partitionname MaxTime" part_updates
phase "20 x scontrol setdebugflags" debugflags
phase "2 x scontrol reconfigure, files unchanged" reconf_same
phase "1 x scontrol reconfigure, agora.conf changed" reconf_changed
echo "total loads: $(loads)"
exit 0
