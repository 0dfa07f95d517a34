#!/bin/bash
# tests/integration/test_fed_topo.sh - agorad's federation bids see each
# cluster's switch tree (topology/tree, slurm_load_topo): a multi-node plan
# across two leaf switches bids locality 5, one under a single leaf 4, and
# the auction prefers the single leaf (doc/federation.md).
#
# Two clusters of 4 nodes x 8 fake GPUs (contrib/harness/agora-dc) sharing
# one topology.conf: c1 has two leaf switches (c1n[1-2], c1n[3-4]), c2 one
# (c2n[1-4]).  One 8-GPU job on c1n1 and one on c1n3 leave c1 one free node
# per leaf.  A 2-node gang job (-N2 --gres=gpu:8): c1 can only plan it
# across its leaves, c2 under one.  Checks, each able to fail:
#   - c1 bids locality 5 and c2 locality 4 (agoractl explain)
#   - c2 wins, although ties go to the origin c1: without the tree both
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
cat >"$IN/topology.conf" <<EOF
SwitchName=l1 Nodes=c1n[1-2]
SwitchName=l2 Nodes=c1n[3-4]
SwitchName=l3 Nodes=c2n[1-4]
SwitchName=top Switches=l[1-3]
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

finish() {
	[ "${AGORA_IT_KEEP:-0}" = 1 ] || "$HARNESS" --workdir "$W" stop >/dev/null 2>&1
	tap_counts
	exit $?
}
"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
trap '[ "${AGORA_IT_KEEP:-0}" = 1 ] || "$HARNESS" --workdir "$W" stop >/dev/null 2>&1' EXIT
if ! "$HARNESS" --workdir "$W" --fresh --clusters 2 --nodes 4,4 --gpus 8 \
	--base-port "$BASE_PORT" --plugin-dir "$PLUGIN_DIR" \
	--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" \
	--topology-conf "$IN/topology.conf" --agorad --agorad-bin "$AGORAD_BIN" \
	--accounts acct_a start >"$IN/harness.out" 2>&1; then
	notok "harness starts two clusters with a switch tree and agorad"
	tail -30 "$IN/harness.out" | diag
	finish
fi
ok "harness starts two clusters with a switch tree and agorad"
export SLURM_CONF=$W/c1/etc/slurm.conf

for node in c1n1 c1n3; do
	sbatch --parsable -M c1 -A acct_a -N1 -w "$node" --gres=gpu:8 -t 10 \
		-o /dev/null --wrap 'sleep 300' >/dev/null
done
d=$(($(date +%s) + 20))
until [ "$(squeue -M c1 -h -t R | wc -l)" -ge 2 ] || [ "$(date +%s)" -ge $d ]; do sleep 0.5; done
j=$(sbatch --parsable -A acct_a -N2 --gres=gpu:8 -t 10 -o /dev/null --wrap 'sleep 30')
j=${j%%;*}
d=$(($(date +%s) + 30))
until "$AGORACTL" explain "$j" 2>/dev/null | grep -q "won by" || [ "$(date +%s)" -ge $d ]; do sleep 0.5; done
"$AGORACTL" explain "$j" >"$IN/explain" 2>&1
b1=$(grep -E '^ +c1 ' "$IN/explain" | grep -o 'locality [0-9.]*')
b2=$(grep -E '^ +c2 ' "$IN/explain" | grep -o 'locality [0-9.]*')
if [ "$b1" = "locality 5.0" ] && [ "$b2" = "locality 4.0" ]; then
	ok "bids see the switch tree: c1 plans across its leaves ($b1), c2 under one ($b2)"
else
	notok "bids: c1 '$b1', c2 '$b2'"
	diag <"$IN/explain"
fi
if grep -q "won by c2" "$IN/explain"; then
	ok "the single leaf wins: $(grep -o 'won by c2[^)]*)' "$IN/explain")"
else
	notok "the auction: $(grep -o 'won by [^)]*)' "$IN/explain")"
fi
d=$(($(date +%s) + 30))
until squeue -M c2 -h -j "$j" -t R 2>/dev/null | grep -q . || [ "$(date +%s)" -ge $d ]; do sleep 0.5; done
nodes=$(squeue -M c2 -h -j "$j" -o %N 2>/dev/null | tail -1)
if [[ "$nodes" == c2n* ]]; then
	ok "job $j runs on c2 ($nodes)"
else
	notok "job $j: '$nodes' ($(squeue --federation -h -j "$j" -o '%T %N' 2>&1 | head -2 | paste -sd' '))"
fi
finish
