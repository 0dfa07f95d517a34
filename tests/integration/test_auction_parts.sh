#!/bin/bash
# tests/integration/test_auction_parts.sh - the auction and its boost stay
# inside AuctionPartitions (issue 19): a job has one site factor for all
# the partitions it was submitted to, so a job that may also run in a
# partition the auction does not manage must never win (its boost would
# put it first there too).  One cluster of 2 nodes x 8 fake GPUs with all
# of Agora, partition "batch" auction-managed, "cpu" (the same nodes) not.
# Both nodes busy; then an 8-GPU job for "batch" and one for "batch,cpu"
# wait.  Checks, each able to fail:
#   - the "batch" job is in the auction: its SystemComment is Agora's note
#   - so are jobs that ask GPUs per job: -N 2 --gpus=3 (no even split) and
#     --gpus=16 (more than a node has); none is left out by the auction
#   - the "batch,cpu" job is not: no Agora note, and sprio SITE below the
#     award boost
# On Slurm 24.11 also (24.05+ enforces a QOS's MaxTRESRunMinsPerUser; 22.05
# stores it and never checks it): with every GPU free, a job of a QOS with
# MaxTRESRunMinsPerUser=gres/gpu=480 asking 8 GPUs x 120 min stays pending
# with Slurm's reason and without the award boost, while one of 8 GPUs x 10
# min in that QOS runs: the per-user cap, which Agora has no counterpart
# of, holds with all of Agora loaded (doc/design.md "Slurm releases").
# About 40 s.  Needs root.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
W=${AGORA_AUCTION_PARTS_WORKDIR:-/tmp/agora-auction-parts-test${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_AUCTION_PARTS_BASE_PORT:-$((26500 + ${AGORA_TEST_PORT_SHIFT:-0}))}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$repo/_build/stage/plugins}

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

if [ ! -f "$PLUGIN_DIR/site_factor_agora.so" ]; then
	echo "ok 1 - auction partitions # SKIP plugins not built in $PLUGIN_DIR"
	echo "1 passed, 0 failed"
	exit 0
fi
IN=${W}.in
mkdir -p "$IN"
cat >"$IN/agora.conf" <<'EOT'
SchedulerInterval=1
AuctionPartitions=batch
LeaseTime=300
EOT
{
	cat "$repo/contrib/harness/agora-all.conf"
	printf 'PriorityWeightAge=0\nPriorityWeightFairshare=0\n'
	printf 'PartitionName=cpu Nodes=ALL Default=NO MaxTime=INFINITE State=UP\n'
} >"$IN/extra.conf"
trap '"$HARNESS" --workdir "$W" stop >/dev/null 2>&1' EXIT
if ! "$HARNESS" --workdir "$W" --fresh --clusters 1 --nodes 2 --gpus 8 \
	--base-port "$BASE_PORT" --plugin-dir "$PLUGIN_DIR" \
	--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" \
	--enforce associations,limits,qos start >"$IN/harness.out" 2>&1; then
	notok "harness starts one cluster with two partitions"
	tail -20 "$IN/harness.out" | diag
	tap_counts
	exit 1
fi
export SLURM_CONF=$W/c1/etc/slurm.conf
sub() { sbatch --parsable -A acct_a --gres=gpu:8 -N1 -t 10 -o /dev/null "$@" --wrap 'sleep 300' | cut -d';' -f1; }
sc() { scontrol show job "$1" 2>/dev/null | sed -n 's/^ *SystemComment=//p'; }
sub -p batch >/dev/null
sub -p batch >/dev/null
running2() { [ "$(squeue -h -t R | wc -l)" -eq 2 ]; }
wait_for 30 running2 || notok "two 8-GPU jobs run ($(squeue -h))"
a=$(sub -p batch)
b=$(sub -p batch,cpu)
noted() { [[ $(sc "$a") == "Agora: "* ]]; }
wait_for 20 noted
if [[ $(sc "$a") == "Agora: "* ]]; then
	ok "batch job $a is in the auction: $(sc "$a")"
else
	notok "batch job $a has no Agora note: '$(sc "$a")'"
fi
# GPUs per job (--gpus=N): in the auction as a job of any split.  As a
# gang of -N nodes with N / nodes GPUs each, "-N 2 --gpus=3" was left out
# by the auction's check (total GPUs is not nodes x GPUs per node) and
# could never win; --gpus=16 (more than a node has) is in it too
g=$(sbatch --parsable -A acct_a -p batch -N 2 --gpus=3 -t 10 -o /dev/null --wrap 'sleep 300' | cut -d';' -f1)
g16=$(sbatch --parsable -A acct_a -p batch --gpus=16 -t 10 -o /dev/null --wrap 'sleep 300' | cut -d';' -f1)
both_noted() { [[ $(sc "$g") == "Agora: "* ]] && [[ $(sc "$g16") == "Agora: "* ]]; }
wait_for 20 both_noted
left=$(grep -hE "left out of the auction \(first: JobId=($g|$g16):" "$W"/log/c1/slurmctld.log 2>/dev/null | tail -1)
if [[ $(sc "$g") == "Agora: "* ]] && [[ $(sc "$g16") == "Agora: "* ]] && [ -z "$left" ]; then
	ok "GPUs per job: -N 2 --gpus=3 ($g) and --gpus=16 ($g16) are in the auction: $(sc "$g")"
else
	notok "GPUs per job: '$(sc "$g")' '$(sc "$g16")', ${left:-not left out}"
fi
sleep 3 # three more passes
site=$(sprio -h -j "$b" -o '%S' 2>/dev/null | tr -d ' ' | head -1)
if [[ $(sc "$b") != "Agora: "* ]] && [ -n "$site" ] && [ "${site%.*}" -lt 1000000000 ]; then
	ok "batch,cpu job $b stays out of the auction (no Agora note, SITE $site below the boost)"
else
	notok "batch,cpu job $b entered the auction: '$(sc "$b")', SITE '$site'"
fi

if [ "${AGORA_DC_SLURM:-22.05}" != 22.05 ]; then
	scancel -u root
	idle2() { [ -z "$(squeue -h)" ] && [ -z "$(sinfo -h -N -o %t | grep -vx idle)" ]; }
	wait_for 60 idle2 || notok "the cluster is idle after scancel ($(squeue -h | paste -sd' '))"
	sacctmgr -i add qos gpucap MaxTRESRunMinsPerUser=gres/gpu=480 >/dev/null
	sacctmgr -i modify user root where account=acct_a set qos+=gpucap >/dev/null
	# slurmdbd pushes the association to slurmctld: retry until taken
	cap_sub() { c=$(sub -p batch --qos=gpucap -t 120 2>/dev/null) && [ -n "$c" ]; }
	c=""
	wait_for 20 cap_sub
	capped() { [[ $(squeue -h -j "$c" -o %r 2>/dev/null) == *RunMins* ]]; }
	wait_for 20 capped
	sleep 3 # three more passes with 16 GPUs free
	site=$(sprio -h -j "$c" -o '%S' 2>/dev/null | tr -d ' ' | head -1)
	st=$(squeue -h -j "$c" -o '%T %r' 2>/dev/null)
	if [[ $st == "PENDING "*RunMins* ]] && [ -n "$site" ] && [ "${site%.*}" -lt 1000000000 ]; then
		ok "QOS MaxTRESRunMinsPerUser=gres/gpu=480: job $c (8 GPUs x 120 min) pends with 16 GPUs free ($st), SITE $site below the boost"
	else
		notok "QOS MaxTRESRunMinsPerUser: job '$c' is '$st', SITE '$site'"
	fi
	# (not "d": wait_for keeps its deadline in a local d)
	in_cap=$(sub -p batch --qos=gpucap -t 10)
	started() { [ "$(squeue -h -j "$in_cap" -o %T 2>/dev/null)" = RUNNING ]; }
	if wait_for 20 started; then
		ok "job $in_cap of the same QOS within the cap (8 GPUs x 10 min) runs, job $c still pends ($(squeue -h -j "$c" -o %T))"
	else
		notok "job $in_cap within the cap: '$(squeue -h -j "$in_cap" -o '%T %r')'"
	fi
fi
tap_counts
