#!/bin/bash
# tests/integration/test_elastic.sh - an elastic training job grows onto
# idle training nodes (loaned inference nodes included) by a requeue at the
# new size, then shrinks when inference takes its nodes back, and completes
# (doc/loaning.md "Elastic jobs").  Real slurmctld/slurmd and agorad.
#
# One cluster of 16 nodes x 8 fake GPUs (contrib/harness/agora-dc):
# "infer" = c1n[1-8], "train" = c1n[9-16]; agorad with Loaning=yes, the
# demand from a file, LoanGrowMinGain=10 and a linear scaling curve so that
# a job that has run 40 s is worth growing.  Checks, each able to fail:
#   - the elastic job (sbatch -N 2-16 --comment=elastic) starts on the 2
#     training nodes left free by six rigid jobs
#   - the queue first: while a training job waits for nodes, the elastic job
#     is not grown although 13 nodes are idle (6 training + 7 lent)
#   - once nothing waits, agorad grows it: one requeue (Restarts=1), and it
#     runs again on 15 nodes (all it may have), loaned nodes among them; the
#     job's own output shows both sizes; agoractl loans lists the grow, also
#     after agorad is killed -9 while the grown job pends and started again
#     with its state files wiped (the next agorad follows it from the job's
#     AdminComment mark)
#   - inference wants 4 nodes back: the grown job shrinks off them
#     (NodeList=) without a second requeue, and the nodes are home within
#     ReclaimDeadline
#   - requeued after that, the job is back to its submitted range 2-16
#   - the job completes (sacct COMPLETED); no job lost
# Prints TAP, measurements as "#" lines, and "N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
BUILD=${AGORA_BUILD:-$repo/_build}
W=${AGORA_ELASTIC_WORKDIR:-/tmp/agora-elastic-test${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_ELASTIC_BASE_PORT:-$((22000 + ${AGORA_TEST_PORT_SHIFT:-0}))}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$BUILD/stage/plugins}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
AGORACTL=${AGORACTL:-$BUILD/contrib/agoractl/agoractl}
DEADLINE=15
INFER=8

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"
t_start=$(date +%s)

skip_unless_built "elastic tests" "$AGORAD_BIN" "$AGORACTL" "$PLUGIN_DIR/job_submit_agora.so"

IN=${W}.in
rm -rf "$IN"
mkdir -p "$IN"
DEMAND=$IN/demand
cat >"$IN/agora.conf" <<EOF
Loaning=yes
LoanInferencePartitions=infer
LoanTrainPartitions=train
LoanHeadroomNodes=1
LoanInterval=1
ReclaimDeadline=$DEADLINE
LoanCheckpointInterval=10
LoanRestartOverhead=5
LoanGrowMinGain=10
LoanScalingSerial=0
LoanDemandSource=file:$DEMAND
EOF
cat >"$IN/extra.conf" <<EOF
PartitionName=infer Nodes=c1n[1-$INFER] MaxTime=INFINITE State=UP
PartitionName=train Nodes=c1n[$((INFER + 1))-16] MaxTime=INFINITE State=UP
EOF
echo 8 >"$DEMAND"

cleanup() {
	[ "${AGORA_IT_KEEP:-0}" = 1 ] || "$HARNESS" --workdir "$W" stop >/dev/null 2>&1
}
finish() {
	cleanup
	echo "# runtime $(($(date +%s) - t_start)) s"
	tap_counts
	exit $?
}
"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
trap cleanup EXIT
if ! "$HARNESS" --workdir "$W" --fresh --clusters 1 --nodes 16 --gpus 8 \
	--base-port "$BASE_PORT" --plugin-dir "$PLUGIN_DIR" \
	--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" \
	--agorad --agorad-bin "$AGORAD_BIN" --accounts acct_a \
	--cred-expire 10 start >"$IN/harness.out" 2>&1; then
	notok "harness starts 8 inference + 8 training nodes with agorad"
	tail -30 "$IN/harness.out" | diag
	finish
fi
ok "harness starts 8 inference + 8 training nodes with agorad ($(($(date +%s) - t_start)) s)"

export SLURM_CONF=$W/c1/etc/slurm.conf
export AGORAD_STATE=$W/agorad.json
ALOG=$W/log/agorad.log

running() { [ "$(squeue -h -j "$1" -t R -o %i 2>/dev/null)" = "$1" ]; }
n_running() { [ "$(squeue -h -p train -t R | wc -l)" -ge "$1" ]; }
lent() { # inference nodes in the training partition
	scontrol show hostnames "$(sinfo -h -p train -o %N | head -1)" |
		grep -cE "^c1n[1-$INFER]$"
}
lent_is() { [ "$(lent)" = "$1" ]; }

# ---- 1. the elastic job starts small ------------------------------------------
rigid=()
for i in 1 2 3 4 5 6; do
	rigid+=("$(sbatch --parsable -p train -A acct_a -N1 --gres=gpu:8 --requeue \
		-t 5 -o /dev/null --wrap 'sleep 45')")
done
wait_for 20 n_running 6
# agorad learns the node range while the job pends (held for a round); the
# job's script stands for a training run that resumes from its checkpoint:
# 150 s of work, 30 s left after its grow's restart (the shrink and the
# requeue of 4b come in that run), 15 s after the requeue of 4b
ej=$(sbatch --parsable -H -p train -A acct_a -N 2-16 --gres=gpu:8 --requeue \
	--comment=elastic -t 10 --open-mode=append -o "$IN/elastic.out" \
	--wrap 'echo "start $SLURM_JOB_NUM_NODES nodes restart ${SLURM_RESTART_COUNT:-0} $(date +%s)"
		case ${SLURM_RESTART_COUNT:-0} in 0) sleep 150 ;; 1) sleep 30 ;; *) sleep 15 ;; esac
		echo "done $SLURM_JOB_NUM_NODES"')
# agorad learns the job's 2-16 node range only while it pends: wait for
# its loan state to record it (a fixed wait missed it under load)
range_seen() { grep -q "\"elastic\":\[[^]]*{\"job\":$ej,\"min_nodes\":2,\"max_nodes\":16}" "$W/agorad.loans.json" 2>/dev/null; }
wait_for 30 range_seen || echo "# agorad did not record job $ej's range 2-16 within 30 s"
scontrol release "$ej"
wait_for 20 running "$ej"
nn0=$(squeue -h -j "$ej" -o %D)
if [ "$nn0" = 2 ]; then
	ok "elastic job $ej (-N 2-16) starts on the 2 free training nodes"
else
	notok "elastic job $ej: '$nn0' nodes, $(squeue -h -j "$ej" -o '%T %r')"
fi

# ---- 2. the queue first -----------------------------------------------------------
# a job of 14 nodes waits; when the rigid jobs end and 7 nodes are lent,
# 13 nodes are idle: not enough for it, and the elastic job must not grow.
# It is larger than "train" without loans (8 nodes): Slurm 24.11 refuses
# such a job at submission whatever EnforcePartLimits says (select_nodes
# finds it never runnable on the partition's present nodes), 22.05 queues
# it; queued, both keep it pending (PartitionNodeLimit, then Resources).
# So it is submitted held and released at once, as doc/loaning.md tells
# users ("Jobs larger than the training partition").
big=$(sbatch --parsable -H -p train -A acct_a -N 14 --gres=gpu:8 -t 5 -o /dev/null --wrap 'sleep 1')
scontrol release "$big"
for j in "${rigid[@]}"; do
	wait_for 60 bash -c "! squeue -h -j $j -t R,CG | grep -q ."
done
echo 0 >"$DEMAND"
wait_for 15 lent_is 7
sleep 5
bigst=$(squeue -h -j "$big" -o '%T %r')
if ! grep -q "grow: job $ej" "$ALOG" && [ "$(lent)" = 7 ] && [ "${bigst%% *}" = PENDING ] &&
	[ "$(squeue -h -j "$ej" -o %D)" = 2 ]; then
	ok "queue first: no grow while job $big waits ($bigst), 7 nodes lent, 13 idle"
else
	notok "queue first: lent $(lent), big '$bigst', elastic $(squeue -h -j "$ej" -o %D) nodes"
	grep "grow:" "$ALOG" | tail -3 | diag
fi

# ---- 3. the grow ------------------------------------------------------------------------
t0=$(date +%s%3N)
scancel "$big"
wait_for 20 grep -q "grow: job $ej 2 -> " "$ALOG"
# agorad killed -9 while the grown job pends, and started again with its
# state directory wiped (the worst a restart can do to it): the next
# agorad follows the grow from the job's own mark (AdminComment), reports
# the restart, and its history has the grow again
following() { grep -q "\"following\":\[{\"job\":$ej," "$W/agorad.loans.json" 2>/dev/null; }
wait_for 10 following
kill -9 "$(cat "$W/run/agorad.pid" 2>/dev/null)" 2>/dev/null
sleep 0.5
rm -f "$W"/agorad.json* "$W"/agorad.loans.json*
mark=$(scontrol show job "$ej" | sed -n 's/^ *AdminComment=//p')
"$HARNESS" --workdir "$W" start-agorad >/dev/null 2>&1
wait_for 40 running "$ej"
wait_for 10 grep -q "grow: job $ej runs again" "$ALOG"
t1=$(date +%s%3N)
nn1=$(squeue -h -j "$ej" -t R -o %D)
rs=$(scontrol show job "$ej" | grep -o 'Restarts=[0-9]*')
nodes=$(squeue -h -j "$ej" -o %N)
onloan=$(scontrol show hostnames "$nodes" | grep -cE "^c1n[1-$INFER]$")
gline=$(grep -m1 "grow: job $ej 2 -> " "$ALOG" | sed 's/^\[[^]]*\] //')
if [[ $mark == "Agora elastic v1: range 2-16; grow 2->15 at "* ]]; then
	ok "the grow is on the job: AdminComment '$mark'"
else
	notok "the grow is on the job: AdminComment '$mark'"
fi
if [ "$nn1" = 15 ] && [ "$rs" = Restarts=1 ] && [ "$onloan" -ge 1 ]; then
	ok "grown by requeue: 2 -> 15 nodes ($onloan on loan), $rs, running again $(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.1f", (a - b) / 1000 }') s after the queue emptied"
else
	notok "grow: nodes '$nn1', $rs, on loan $onloan"
	grep -E "grow|job $ej" "$ALOG" | tail -5 | diag
fi
echo "# $gline"
if grep -q "^start 2 nodes restart 0" "$IN/elastic.out" &&
	grep -q "^start 15 nodes restart 1" "$IN/elastic.out"; then
	ok "the job saw both sizes: $(grep -c '^start' "$IN/elastic.out") starts (2 nodes, then 15 after its requeue)"
else
	notok "the job's own output"
	diag <"$IN/elastic.out"
fi
"$AGORACTL" loans >"$IN/loans.out" 2>&1
if grep -A3 "elastic grows" "$IN/loans.out" | grep -qE "^[^ ]+ +$ej +2 +15 +15 "; then
	ok "agoractl loans lists the grow (job $ej, 2 -> 15, restarted on 15, as followed by the agorad started after a kill -9 with its state wiped)"
else
	notok "agoractl loans lists the grow"
	diag <"$IN/loans.out"
fi

# ---- 4. the shrink on reclaim ---------------------------------------------------------
sleep 2
echo 4 >"$DEMAND"
t0=$(date +%s)
home_ok() { # 5 inference nodes out of the training partition, no training job on them
	local tn jn h=0 i
	tn=$(scontrol show hostnames "$(sinfo -h -p train -o %N | head -1)")
	jn=$(squeue -h -p train -t R,CG -o %N | while read -r l; do
		[ -n "$l" ] && scontrol show hostnames "$l"; done)
	for ((i = 1; i <= INFER; i++)); do
		grep -qx "c1n$i" <<<"$tn" || grep -qx "c1n$i" <<<"$jn" || h=$((h + 1))
	done
	[ "$h" -ge 5 ]
}
if wait_for "$DEADLINE" home_ok; then
	s=$(($(date +%s) - t0))
	nn2=$(squeue -h -j "$ej" -t R -o %D)
	rs=$(scontrol show job "$ej" | grep -o 'Restarts=[0-9]*')
	if [ "$rs" = Restarts=1 ] && [ -n "$nn2" ] && [ "$nn2" -lt 15 ] && grep -q "job $ej shrunk to" "$ALOG"; then
		ok "reclaim shrinks the grown job 15 -> $nn2 nodes, not requeued again ($rs); 5 nodes home in <= $s s"
	else
		notok "reclaim: nodes '$nn2', $rs"
		grep -E "loan: (reclaim|job $ej)" "$ALOG" | tail -3 | diag
	fi
else
	notok "reclaim: inference nodes not home within ${DEADLINE} s (lent $(lent))"
	grep -E "loan:" "$ALOG" | tail -5 | diag
fi

# ---- 4b. requeued again: back to its submitted range ----------------------------------
# the job pends again after its grow (an admin's or a node failure's
# requeue): at its grown count (15) it could never start again, 11 nodes
# being left in "train"; the agorad that never saw the grow's start (its
# state wiped) puts back the range it was submitted with from the job's
# mark, and Slurm restarts it on that range
scontrol requeue "$ej"
wait_for 60 running "$ej"
nn3=$(squeue -h -j "$ej" -t R -o %D)
if [ -n "$nn3" ] && [ "$nn3" -lt 15 ] && grep -q "grow: job $ej pends again after its grow; back to its range 2-16" "$ALOG"; then
	ok "requeued after its grow: job $ej back to its submitted range 2-16 by its mark alone, runs again on $nn3 node(s)"
else
	notok "requeued after its grow: job $ej '$(squeue -h -j "$ej" -o '%T %D %r')', mark '$(scontrol show job "$ej" | sed -n 's/^ *AdminComment=//p')'"
	grep "grow: job $ej" "$ALOG" | tail -3 | diag
fi

# ---- 5. it completes ------------------------------------------------------------------
wait_for 90 bash -c "! squeue -h -j $ej | grep -q ."
# a shrink closes the job's accounting record as RESIZING and opens a new
# one: the last record is the job's end.  slurmctld sends the end to
# slurmdbd after the job leaves squeue (its agent queue, seconds under
# CI's load): wait until the last record is no longer running
last_state() { sacct -n -X -P -j "$ej" -o State | tail -1; }
ended() { case $(last_state) in RUNNING | PENDING | REQUEUED | RESIZING | '') return 1 ;; esac; }
wait_for 30 ended
recs=$(sacct -n -X -P -j "$ej" -o State | paste -sd, -)
st=$(last_state)
if [ "$st" = COMPLETED ] && grep -q "^done" "$IN/elastic.out"; then
	ok "the elastic job completed after a grow and a shrink (sacct records: $recs)"
else
	notok "the elastic job ended '$st'"
	diag <"$IN/elastic.out"
fi
lost=0
for j in "${rigid[@]}"; do
	[ "$(sacct -n -X -P -j "$j" -o State | head -1)" = COMPLETED ] || lost=$((lost + 1))
done
if [ "$lost" = 0 ]; then
	ok "no job lost: the 6 rigid jobs completed"
else
	notok "$lost rigid job(s) did not complete"
fi
finish
