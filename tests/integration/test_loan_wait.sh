#!/bin/bash
# tests/integration/test_loan_wait.sh - a reclaim waits for its victim's
# checkpoint while the inference partition has a home node to spare, and
# goes at once when it has none (doc/loaning.md "Waiting for a checkpoint";
# agora.conf LoanCheckpointWait).  Real slurmctld/slurmd and agorad.
#
# One cluster of 5 nodes x 8 fake GPUs: "infer" = c1n[1-3], "train" =
# c1n[4-5]; Loaning=yes, LoanInterval=1, LoanHeadroomNodes=2,
# LoanCheckpointInterval=20, LoanCheckpointWait=14, LoanRestartOverhead=0,
# LoanLendHold=0, the demand from a file.  Demand 0 wants 2 nodes home, so
# c1n3 is lent, and a borrower A (8 GPUs, --requeue) runs on it.  Checks,
# each able to fail:
#   - demand 0.5, raised 8 s into A's checkpoint interval: 3 nodes wanted
#     home, 2 are, and 2 serve ceil(0.5) + 1: agorad says the reclaim waits
#     for a checkpoint, and agoractl loans shows the wait, A is requeued
#     at least 8 s after the rise, and the reclaim's logged cost is under
#     the 8 GPU x 8 s A had at the rise
#   - A runs on c1n3 again (demand 0); demand 1.5, raised 8 s into its
#     interval: no node to spare (2 home < ceil(1.5) + 1), no wait: A is
#     requeued within a few rounds, at about its cost at the rise
#   - agorad restarted with LoanHeadroomNodes=1, LoanReclaimAhead=120 s,
#     LoanReclaimAheadSigma=0, LoanLendHold=60: demand 0.1 lends c1n3 to A;
#     a ramp to 0.98 from 8 s into A's interval, which 2 home nodes serve:
#     agorad reclaims c1n3 "ahead of a rising demand", requeuing A right
#     after its checkpoint (cost under the 8 GPU x 8 s it had when the
#     ramp began), and does not lend it again, not even while A, which
#     ignores TERM, still runs there until KillWait ends
# Prints TAP, measurements as "#" lines, and "N passed, M failed".  ~140 s.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
BUILD=${AGORA_BUILD:-$repo/_build}
W=${AGORA_WAIT_WORKDIR:-/tmp/agora-wait-test${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_WAIT_BASE_PORT:-$((30500 + ${AGORA_TEST_PORT_SHIFT:-0}))}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$BUILD/stage/plugins}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
AGORACTL=${AGORACTL:-$BUILD/contrib/agoractl/agoractl}
CKPT=20 # LoanCheckpointInterval
AT=8    # the demand rises this far into A's checkpoint interval

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"
t_start=$(date +%s)

skip_unless_built "loan checkpoint-wait tests" "$AGORAD_BIN" "$AGORACTL"

IN=${W}.in
rm -rf "$IN"
mkdir -p "$IN"
chmod 0777 "$IN"
DEMAND=$IN/demand
cat >"$IN/agora.conf" <<CONF
SchedulerInterval=1
Loaning=yes
LoanInferencePartitions=infer
LoanTrainPartitions=train
LoanHeadroomNodes=2
LoanInterval=1
LoanLendHold=0
LoanLeaseTimeout=0
LoanElasticGrow=no
LoanCheckpointInterval=$CKPT
LoanCheckpointWait=14
LoanRestartOverhead=0
ReclaimDeadline=60
ReclaimGrace=0
LoanDemandSource=file:$DEMAND
CONF
cat >"$IN/extra.conf" <<CONF
PartitionName=infer Nodes=c1n[1-3] MaxTime=INFINITE State=UP
PartitionName=train Nodes=c1n[4-5] MaxTime=INFINITE State=UP
CONF
echo 0 >"$DEMAND"
# a borrower that takes its time to stop: Slurm's TERM is ignored, so it
# leaves a reclaimed node only at KillWait's KILL (a returning node for a
# round or more)
printf '#!/bin/bash\ntrap "" TERM\nwhile :; do sleep 1; done\n' >"$IN/job.sh"

harness_start "harness starts 3 inference + 2 training nodes with agorad" \
	--fresh --clusters 1 --nodes 5 --gpus 8 --base-port "$BASE_PORT" \
	--plugin-dir "$PLUGIN_DIR" --agora-conf "$IN/agora.conf" \
	--conf-extra "$IN/extra.conf" --agorad --agorad-bin "$AGORAD_BIN" \
	--accounts acct_a --cred-expire 10

export SLURM_CONF=$W/c1/etc/slurm.conf
export AGORAD_STATE=$W/agorad.json
ALOG=$W/log/agorad.log
lent3() { scontrol show hostnames "$(sinfo -h -p train -o %N | head -1)" | grep -qx c1n3; }
restarts() { scontrol show job "$1" | grep -o 'Restarts=[0-9]*' | cut -d= -f2; }
state() { squeue -h -j "$1" -o %T; }
running_with() { [ "$(state "$1")" = RUNNING ] && [ "$(restarts "$1")" = "$2" ]; }
requeued() { [ "$(restarts "$1")" = "$2" ] && [ "$(state "$1")" != RUNNING ]; }
# sleep until the job has run AT s into its checkpoint interval
align() {
	local st now
	st=$(date -d "$(squeue -h -j "$1" -o %S)" +%s) || return 1
	now=$(date +%s)
	sleep $(((((AT - (now - st)) % CKPT) + CKPT) % CKPT))
}
# the cost of the first reclaim logged after line $1 of the agorad log
reclaim_cost() {
	tail -n +"$1" "$ALOG" | grep -m1 'loan: reclaim 1 node(s): c1n3; victims' |
		sed -n 's/.*; cost \([0-9.]*\) GPU-h.*/\1/p'
}

if ! wait_for 20 lent3; then
	notok "c1n3 lent at demand 0 (train: $(sinfo -h -p train -o %N))"
	it_finish
fi
a=$(sbatch --parsable -p train -w c1n3 -A acct_a --gres=gpu:8 --requeue \
	-t 10 -o /dev/null "$IN/job.sh")
if wait_for 20 running_with "$a" 0; then
	ok "borrower $a runs on the lent c1n3"
else
	notok "borrower $a: $(state "$a")"
	it_finish
fi

# rise DEMAND RESTARTS LIMIT: at AT s into A's interval, the demand file
# says DEMAND; 0 once A is requeued (RESTARTS) within LIMIT s, with dt (s
# since the rise), cost (the reclaim's logged GPU-h) and l0 (the agorad log
# line where the rise began) set; else notok
rise() {
	align "$a"
	l0=$(($(wc -l <"$ALOG") + 1))
	echo "$1" >"$DEMAND"
	local t
	t=$(date +%s)
	sleep 3 # what agoractl shows in the wait
	"$AGORACTL" loans >"$IN/loans-$1.out" 2>&1
	if ! wait_for "$3" requeued "$a" "$2"; then
		notok "borrower $a not requeued at demand $1: $(state "$a") Restarts=$(restarts "$a")"
		loan_log
		return 1
	fi
	dt=$(($(date +%s) - t))
	cost=$(reclaim_cost "$l0")
	echo "# demand $1 at ${AT} s into A's interval: requeued ${dt} s later, cost ${cost:-?} GPU-h (at the rise: $(awk -v a=$AT 'BEGIN{printf "%.3f", 8*a/3600}'))"
}
loan_log() { tail -n +"$l0" "$ALOG" | grep 'loan:' | head -8 | diag; }
waited() { tail -n +"$l0" "$ALOG" | grep -q 'loan: reclaim of 1 node(s) waits [0-9]* s for a checkpoint'; }

# ---- a node to spare: the reclaim waits for A's checkpoint ---------------------
if rise 0.5 1 $((CKPT + 20)); then
	shown=$(grep -m1 '^# a reclaim of 1 node(s) waits for a checkpoint since' "$IN/loans-0.5.out")
	if waited && [ "$dt" -ge $((CKPT - AT - 4)) ] && [ -n "$cost" ] &&
		awk -v c="$cost" -v a=$AT 'BEGIN{exit !(c < 8*a/3600)}' &&
		[ -n "$shown" ]; then
		ok "with a home node to spare the reclaim waits for A's checkpoint: requeued $dt s after the rise, cost $cost GPU-h; agoractl loans: $shown"
	else
		notok "the reclaim did not wait for the checkpoint (requeued $dt s after the rise, cost '${cost}', agoractl loans: '${shown}')"
		loan_log
		diag <"$IN/loans-0.5.out"
	fi
fi

# ---- no node to spare: at once ----------------------------------------------------
echo 0 >"$DEMAND"
if ! wait_for 40 running_with "$a" 1; then
	notok "borrower $a back on c1n3 at demand 0: $(state "$a") Restarts=$(restarts "$a")"
	it_finish
fi
if rise 1.5 2 20; then
	# before A's checkpoint (the cost says so too: after it, it would be
	# about 0); a loaded host may take a few rounds
	if ! waited && [ "$dt" -lt $((CKPT - AT)) ] && [ -n "$cost" ] &&
		awk -v c="$cost" -v a=$AT 'BEGIN{exit !(c >= 8*(a-1)/3600)}'; then
		ok "with no node to spare the reclaim goes at once: requeued $dt s after the rise, cost $cost GPU-h"
	else
		notok "the reclaim without a node to spare (requeued $dt s after the rise, cost '${cost}')"
		loan_log
	fi
fi

# ---- a rising demand: reclaimed ahead, at the borrower's checkpoint -------------
# agorad again (a fresh demand history) with LoanHeadroomNodes=1 and
# LoanReclaimAhead=120 s: demand 0.1 lends c1n3 (2 home wanted), A runs
# there; the demand ramps by 0.08 a second to 0.98 and stays: 2 home nodes
# serve it all along, so the only reason to take c1n3 back is the trend
"$HARNESS" --workdir "$W" stop-agorad >/dev/null 2>&1
RCONF=$W/c1/etc/agora.conf # the copy agorad reads
sed -i 's/^LoanHeadroomNodes=.*/LoanHeadroomNodes=1/; s/^LoanLendHold=.*/LoanLendHold=60/' "$RCONF"
printf 'LoanReclaimAhead=120\nLoanReclaimAheadSigma=0\n' >>"$RCONF"
echo 0.1 >"$DEMAND"
l0=$(($(wc -l <"$ALOG") + 1))
if ! "$HARNESS" --workdir "$W" start-agorad >"$IN/agorad2.out" 2>&1 ||
	! wait_for 40 running_with "$a" 2; then
	notok "agorad with LoanReclaimAhead: borrower $a on c1n3 ($(state "$a") Restarts=$(restarts "$a"))"
	diag <"$IN/agorad2.out"
	it_finish
fi
align "$a"
t_rise=$(date +%s)
for k in 1 2 3 4 5 6 7 8 9 10 11; do
	awk -v k=$k 'BEGIN{printf "%.2f\n", 0.1 + 0.08 * k}' >"$DEMAND.tmp"
	mv "$DEMAND.tmp" "$DEMAND"
	sleep 1
	"$AGORACTL" loans >>"$IN/loans-ramp.out" 2>&1
done
if wait_for $((CKPT + 10)) requeued "$a" 3; then
	dt=$(($(date +%s) - t_rise))
	line=$(tail -n +"$l0" "$ALOG" | grep -m1 'loan: reclaim 1 node(s) ahead of a rising demand: c1n3; victims')
	cost=$(sed -n 's/.*; cost \([0-9.]*\) GPU-h.*/\1/p' <<<"$line")
	rises=$(tail -n +"$l0" "$ALOG" | grep -m1 'loan: the demand rises' | sed 's/^\[[^]]*\] //')
	echo "# ramp from 0.1 at ${AT} s into A's interval: requeued ${dt} s later, cost ${cost:-?} GPU-h; ${rises:-no wait logged}"
	sleep 3
	shown=$(grep -c '^# demand projected [0-9.]* nodes LoanReclaimAhead from now' "$IN/loans-ramp.out")
	# lent again after the reclaim ahead (agorad's first round may lend
	# c1n3 again legitimately: phase 2 left it returning)
	relent=$(tail -n +"$l0" "$ALOG" | sed -n '/reclaim 1 node(s) ahead of a rising demand/,$p' | grep -c 'loan: c1n3 lent again')
	if [ -n "$cost" ] && awk -v c="$cost" -v a=$AT 'BEGIN{exit !(c < 8*a/3600)}' &&
		! lent3 && [ "$relent" = 0 ] && [ "$shown" -gt 0 ]; then
		ok "a rising demand that 2 home nodes still serve: c1n3 reclaimed ahead, its borrower requeued at its checkpoint (cost $cost GPU-h, ${dt} s after the ramp began), and not lent again"
	else
		notok "reclaim ahead of the ramp (requeued ${dt} s after it began, cost '${cost}', c1n3 lent: $(lent3 && echo yes || echo no), lent again while its borrower left: $relent, agoractl loans showed the projection $shown times)"
		loan_log
	fi
else
	notok "borrower $a not reclaimed ahead of the ramp: $(state "$a") Restarts=$(restarts "$a")"
	loan_log
fi
scancel "$a"
it_finish
