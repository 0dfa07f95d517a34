#!/bin/bash
# tests/integration/test_loan_signal.sh - a reclaim's requeue sends the
# victim's own --signal first and waits its grace; a job at its requeue
# limit is never requeued again (doc/loaning.md "Requeues: the job's
# signal, a grace, a limit").  Real slurmctld/slurmd and agorad.
#
# One cluster of 4 nodes x 8 fake GPUs: "infer" = c1n[1-2], "train" =
# c1n[3-4]; Loaning=yes, LoanInterval=1, ReclaimGrace=4, ReclaimDeadline=30,
# MaxRequeuesPerJob=1, the demand from a file (0: both inference nodes
# lent).  Two borrowers, one per lent node:
#   A  #SBATCH --signal=B:USR1@30 (its batch script traps USR1 and TERM and
#      writes when each came), Restarts=0;
#   B  no --signal, requeued once by the test first (Restarts=1: at its
#      limit).
# The demand rises to 2.  Checks, each able to fail:
#   - A gets USR1 while it runs, then (TERM of Slurm's requeue) is requeued
#     (Restarts=1): USR1 came first, and agorad says it waited the grace
#   - B is not requeued: still RUNNING on c1n2, Restarts=1, no signal;
#     agorad says it is at its requeue limit, and its reclaim lists c1n2
#     as a candidate it cannot take (no-requeue)
# Prints TAP, measurements as "#" lines, and "N passed, M failed".  ~40 s.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
BUILD=${AGORA_BUILD:-$repo/_build}
W=${AGORA_SIGNAL_WORKDIR:-/tmp/agora-signal-test${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_SIGNAL_BASE_PORT:-$((28500 + ${AGORA_TEST_PORT_SHIFT:-0}))}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$BUILD/stage/plugins}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
GRACE=4

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"
t_start=$(date +%s)

skip_unless_built "loan signal tests" "$AGORAD_BIN"

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
LoanHeadroomNodes=0
LoanInterval=1
LoanLeaseTimeout=0
LoanElasticGrow=no
ReclaimDeadline=30
ReclaimGrace=$GRACE
MaxRequeuesPerJob=1
LoanDemandSource=file:$DEMAND
CONF
cat >"$IN/extra.conf" <<CONF
PartitionName=infer Nodes=c1n[1-2] MaxTime=INFINITE State=UP
PartitionName=train Nodes=c1n[3-4] MaxTime=INFINITE State=UP
CONF
echo 0 >"$DEMAND"
# a borrower: writes when it starts, and when USR1 and TERM come
cat >"$IN/job.sh" <<'JOB'
#!/bin/bash
#SBATCH --signal=B:USR1@30
f=$AGORA_SIG_OUT
echo "start $(date +%s) ${SLURM_RESTART_COUNT:-0}" >>"$f"
trap 'echo "usr1 $(date +%s) ${SLURM_RESTART_COUNT:-0}" >>"$f"' USR1
trap 'echo "term $(date +%s) ${SLURM_RESTART_COUNT:-0}" >>"$f"; exit 0' TERM
while :; do
	sleep 1 &
	wait $!
done
JOB
# B: the same script without --signal
grep -v -- '--signal' "$IN/job.sh" >"$IN/job-nosig.sh"

harness_start "harness starts 2 inference + 2 training nodes with agorad" \
	--fresh --clusters 1 --nodes 4 --gpus 8 --base-port "$BASE_PORT" \
	--plugin-dir "$PLUGIN_DIR" --agora-conf "$IN/agora.conf" \
	--conf-extra "$IN/extra.conf" --agorad --agorad-bin "$AGORAD_BIN" \
	--accounts acct_a --cred-expire 10

export SLURM_CONF=$W/c1/etc/slurm.conf
ALOG=$W/log/agorad.log
lent() { scontrol show hostnames "$(sinfo -h -p train -o %N | head -1)" | grep -cE '^c1n[12]$'; }
lent_is() { [ "$(lent)" = "$1" ]; }
restarts() { scontrol show job "$1" | grep -o 'Restarts=[0-9]*' | cut -d= -f2; }
state() { squeue -h -j "$1" -o %T; }
running_with() { [ "$(state "$1")" = RUNNING ] && [ "$(restarts "$1")" = "$2" ]; }

if ! wait_for 20 lent_is 2; then
	notok "both inference nodes lent (lent $(lent))"
	it_finish
fi
a=$(AGORA_SIG_OUT=$IN/a.out sbatch --parsable --export=ALL -p train -w c1n1 \
	-A acct_a --gres=gpu:8 --requeue -t 10 -o /dev/null "$IN/job.sh")
b=$(AGORA_SIG_OUT=$IN/b.out sbatch --parsable --export=ALL -p train -w c1n2 \
	-A acct_a --gres=gpu:8 --requeue -t 10 -o /dev/null "$IN/job-nosig.sh")
wait_for 20 running_with "$b" 0
# B at its limit: one requeue (Slurm's Restarts= counts it), running again
scontrol requeue "$b"
if wait_for 40 running_with "$b" 1 && running_with "$a" 0; then
	ok "borrowers run on the lent nodes: $a (--signal=B:USR1@30) on c1n1, $b (Restarts=1, MaxRequeuesPerJob=1) on c1n2"
else
	notok "borrowers: $a $(state "$a") Restarts=$(restarts "$a"); $b $(state "$b") Restarts=$(restarts "$b")"
	it_finish
fi

# ---- the reclaim ---------------------------------------------------------------
echo 2 >"$DEMAND"
requeued_a() { [ "$(restarts "$a")" = 1 ] && [ "$(state "$a")" != RUNNING ]; }
if wait_for 30 requeued_a; then
	# the TERM reaches the job after slurmctld counts the requeue
	# (slurmctld -> slurmd -> slurmstepd): its trap's line comes later
	wait_for 15 grep -q '^term [0-9]* 0$' "$IN/a.out"
	u=$(awk '$1 == "usr1" && $3 == 0 {print $2; exit}' "$IN/a.out")
	t=$(awk '$1 == "term" && $3 == 0 {print $2; exit}' "$IN/a.out")
	if [ -n "$u" ] && [ -n "$t" ] && [ "$u" -le "$t" ] &&
		grep -q "job $a sent its --signal B:USR1 for the reclaim of c1n1; requeued in $GRACE s" "$ALOG"; then
		ok "job $a got its USR1 while it ran, then was requeued (TERM $((t - u)) s later, grace $GRACE s; Restarts=1)"
	else
		notok "job $a requeued, but USR1 at '$u', TERM at '$t'"
		diag <"$IN/a.out"
		grep "job $a" "$ALOG" | tail -5 | diag
	fi
else
	notok "job $a not requeued: $(state "$a") Restarts=$(restarts "$a")"
	grep "job $a" "$ALOG" | tail -5 | diag
fi

said_b() { grep -q "job $b is at its requeue limit (Restarts=1, MaxRequeuesPerJob=1): no reclaim takes its nodes until it ends" "$ALOG"; }
# the reclaim is short of nodes: c1n2 stays a candidate it cannot take
untaken_b() { grep -q "candidates (GPU-h lost if cleared, \* taken):.* c1n2=no-requeue:" "$ALOG"; }
wait_for 10 untaken_b
if said_b && untaken_b && running_with "$b" 1 && ! grep -q usr1 "$IN/b.out" &&
	! grep -qE '^term [0-9]+ 1$' "$IN/b.out"; then
	ok "job $b at its requeue limit is not requeued again: RUNNING, Restarts=1, no signal; the reclaim leaves c1n2 (no-requeue)"
else
	notok "job $b: $(state "$b") Restarts=$(restarts "$b")"
	diag <"$IN/b.out"
	grep -E "job $b|candidates" "$ALOG" | tail -5 | diag
fi
scancel "$a" "$b"
it_finish
