#!/bin/bash
# tests/integration/test_fed_topo.sh - agorad's federation bids see each
# cluster's leaves: topology/tree's leaf switches and, on Slurm 24.11,
# topology/block's base blocks (23.11's native block placement): a
# multi-node plan across two leaves bids locality 5, one under a single
# leaf 4, and the auction prefers the single leaf (doc/federation.md,
# doc/design.md "Slurm releases").
#
# Two clusters of 4 nodes x 8 fake GPUs (contrib/harness/agora-dc), once
# per topology plugin, c1 with two leaves (c1n[1-2], c1n[3-4]), c2 with one
# (c2n[1-4]):
#   tree   leaf switches.  One 8-GPU job on c1n1 and one on c1n3 leave c1
#          one free node per leaf; a 2-node gang job (-N2 --gres=gpu:8):
#          c1 can only plan it across its leaves, c2 under one.
#   block  (24.11 only: 22.05 has no topology/block) base blocks.  Block
#          never splits a job that fits a base block (a 2-node job on c1
#          as above waits for a free block instead), so the gang is of 3
#          nodes on idle clusters: across c1's two blocks of 2, inside
#          c2's block of 4, both starting at once.
# Checks per plugin, each able to fail:
#   - the harness runs that TopologyPlugin
#   - c1 bids locality 5 and c2 locality 4 (agoractl explain)
#   - c2 wins, although ties go to the origin c1: without the leaves both
#     would bid 4 and c1 would win
#   - the job runs on c2
# Prints TAP and "N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
BUILD=${AGORA_BUILD:-$repo/_build}
W=${AGORA_FEDTOPO_WORKDIR:-/tmp/agora-fedtopo-test${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_FEDTOPO_BASE_PORT:-$((28000 + ${AGORA_TEST_PORT_SHIFT:-0}))}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$BUILD/stage/plugins}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
AGORACTL=${AGORACTL:-$BUILD/contrib/agoractl/agoractl}

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

skip_unless_built "federation topology tests" "$AGORAD_BIN" "$AGORACTL" "$PLUGIN_DIR/site_factor_agora.so"

IN=${W}.in
rm -rf "$IN"
mkdir -p "$IN"
cat >"$IN/tree.conf" <<EOF
SwitchName=l1 Nodes=c1n[1-2]
SwitchName=l2 Nodes=c1n[3-4]
SwitchName=l3 Nodes=c2n[1-4]
SwitchName=top Switches=l[1-3]
EOF
# agora-dc sets topology/block for BlockName= lines (and gives each
# cluster its own blocks: block refuses a node it does not know)
cat >"$IN/block.conf" <<EOF
BlockName=b1 Nodes=c1n[1-2]
BlockName=b2 Nodes=c1n[3-4]
BlockName=b3 Nodes=c2n[1-4]
EOF
cat >"$IN/agora.conf" <<EOF
SchedulerInterval=1
FedAuction=yes
FedAuctionInterval=1
FedAuctionTimeout=15
EOF
cat >"$IN/extra.conf" <<EOF
PriorityType=priority/multifactor
PrioritySiteFactorPlugin=site_factor/agora
PriorityCalcPeriod=1
SlurmctldPlugstack=slurmctld/agora
EOF

stop_harness() { [ "${AGORA_IT_KEEP:-0}" = 1 ] || "$HARNESS" --workdir "$W" stop >/dev/null 2>&1; }
"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
trap stop_harness EXIT
export SLURM_CONF=$W/c1/etc/slurm.conf

# topo_case KIND GANG BUSY...: two clusters with topology/KIND (tree or
# block) and agorad, an 8-GPU job on each BUSY node of c1, then a GANG-node
# job of 8 GPUs per node; the checks; the harness stopped
topo_case() {
	local kind=$1 gang=$2 plugin=topology/$1 node d j b1 b2 nodes ex=$IN/explain.$1
	shift 2
	if ! "$HARNESS" --workdir "$W" --fresh --clusters 2 --nodes 4,4 --gpus 8 \
		--base-port "$BASE_PORT" --plugin-dir "$PLUGIN_DIR" \
		--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" \
		--topology-conf "$IN/$kind.conf" --agorad --agorad-bin "$AGORAD_BIN" \
		--accounts acct_a start >"$IN/harness.$kind.out" 2>&1; then
		notok "$plugin: harness starts two clusters with it and agorad"
		tail -30 "$IN/harness.$kind.out" | diag
		stop_harness
		return
	fi
	if grep -qx "TopologyPlugin=$plugin" "$W/c1/etc/slurm.conf"; then
		ok "$plugin: harness starts two clusters with it and agorad"
	else
		notok "$plugin: the harness runs '$(grep '^TopologyPlugin=' "$W/c1/etc/slurm.conf")'"
	fi

	for node in "$@"; do
		sbatch --parsable -M c1 -A acct_a -N1 -w "$node" --gres=gpu:8 -t 10 \
			-o /dev/null --wrap 'sleep 300' >/dev/null
	done
	d=$(($(date +%s) + 20))
	until [ "$(squeue -M c1 -h -t R | wc -l)" -ge $# ] || [ "$(date +%s)" -ge $d ]; do sleep 0.5; done
	j=$(sbatch --parsable -A acct_a -N"$gang" --gres=gpu:8 -t 10 -o /dev/null --wrap 'sleep 30')
	j=${j%%;*}
	d=$(($(date +%s) + 30))
	until "$AGORACTL" explain "$j" 2>/dev/null | grep -q "won by" || [ "$(date +%s)" -ge $d ]; do sleep 0.5; done
	"$AGORACTL" explain "$j" >"$ex" 2>&1
	b1=$(grep -E '^ +c1 ' "$ex" | grep -o 'locality [0-9.]*')
	b2=$(grep -E '^ +c2 ' "$ex" | grep -o 'locality [0-9.]*')
	if [ "$b1" = "locality 5.0" ] && [ "$b2" = "locality 4.0" ]; then
		ok "$plugin: bids see the leaves: c1 plans across its two ($b1), c2 under one ($b2)"
	else
		notok "$plugin: bids: c1 '$b1', c2 '$b2'"
		diag <"$ex"
	fi
	if grep -q "won by c2" "$ex"; then
		ok "$plugin: the single leaf wins: $(grep -o 'won by c2[^)]*)' "$ex")"
	else
		notok "$plugin: the auction: $(grep -o 'won by [^)]*)' "$ex")"
	fi
	d=$(($(date +%s) + 30))
	until squeue -M c2 -h -j "$j" -t R 2>/dev/null | grep -q . || [ "$(date +%s)" -ge $d ]; do sleep 0.5; done
	nodes=$(squeue -M c2 -h -j "$j" -o %N 2>/dev/null | tail -1)
	if [[ "$nodes" == c2n* ]]; then
		ok "$plugin: job $j runs on c2 ($nodes)"
	else
		notok "$plugin: job $j: '$nodes' ($(squeue --federation -h -j "$j" -o '%T %N' 2>&1 | head -2 | paste -sd' '))"
	fi
	stop_harness
}

topo_case tree 2 c1n1 c1n3
if [ "${AGORA_DC_SLURM:-22.05}" = 22.05 ]; then
	echo "# topology/block: not in Slurm 22.05 (23.11 and later); its case runs on 24.11"
else
	topo_case block 3
fi
tap_counts
exit $?
