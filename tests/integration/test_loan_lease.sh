#!/bin/bash
# tests/integration/test_loan_lease.sh - loans are bounded inside slurmctld:
# agorad stopped for good (kill -9) with nodes lent, slurmctld's
# site_factor/agora returns them once their heartbeat is older than
# LoanLeaseTimeout, requeueing the borrowers; agorad with a bad agora.conf
# stays up in return-only mode; agorad's SIGTERM takes its loans out of the
# training partitions; two agorads cannot share a pid file
# (doc/loaning.md "Fail-safety").  Real slurmctld/slurmd and agorad.
#
# One cluster of 5 nodes x 8 fake GPUs: "infer" = c1n[1-3], "train" =
# c1n[3-5] (c1n3 in both by slurm.conf: not a loan, left alone);
# Loaning=yes, LoanInterval=1, LoanLeaseTimeout=6, the demand from a file
# (0: both inference-only nodes lent).  Checks, each able to fail:
#   - the loan mark is versioned and readable (no epoch seconds)
#   - a second agorad on the same pid file refuses to start
#   - agorad kill -9 with a 4-node borrower running on both loaned nodes:
#     within LoanLeaseTimeout (+ a pass) both nodes are out of "train",
#     the borrower is requeued (not lost: pending, Restarts=1), the marks
#     say "returned"; an inference job then runs on both nodes
#   - agorad started with a bad agora.conf stays up (return-only mode),
#     and leaves it on SIGHUP once the file is good again
#   - SIGTERM: agorad takes its loans out of "train" before it exits, and
#     leaves c1n3 (in both partitions by slurm.conf) where it is
# Prints TAP, measurements as "#" lines, and "N passed, M failed".  ~30 s.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
BUILD=${AGORA_BUILD:-$repo/_build}
W=${AGORA_LEASE_WORKDIR:-/tmp/agora-lease-test${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_LEASE_BASE_PORT:-$((29500 + ${AGORA_TEST_PORT_SHIFT:-0}))}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$BUILD/stage/plugins}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
LEASE=6

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"
t_start=$(date +%s)

skip_unless_built "loan lease tests" "$AGORAD_BIN" "$PLUGIN_DIR/site_factor_agora.so"

IN=${W}.in
rm -rf "$IN"
mkdir -p "$IN"
DEMAND=$IN/demand
cat >"$IN/agora.conf" <<EOF
SchedulerInterval=1
Loaning=yes
LoanInferencePartitions=infer
LoanTrainPartitions=train
LoanHeadroomNodes=0
LoanInterval=1
LoanLeaseTimeout=$LEASE
LoanElasticGrow=no
LoanDemandSource=file:$DEMAND
EOF
# the lease is enforced by site_factor/agora's thread
cat >"$IN/extra.conf" <<EOF
PriorityType=priority/multifactor
PrioritySiteFactorPlugin=site_factor/agora
PartitionName=infer Nodes=c1n[1-3] MaxTime=INFINITE State=UP
PartitionName=train Nodes=c1n[3-5] MaxTime=INFINITE State=UP
EOF
echo 0 >"$DEMAND"

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
if ! "$HARNESS" --workdir "$W" --fresh --clusters 1 --nodes 5 --gpus 8 \
	--base-port "$BASE_PORT" --plugin-dir "$PLUGIN_DIR" \
	--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" \
	--agorad --agorad-bin "$AGORAD_BIN" --accounts acct_a \
	--cred-expire 10 start >"$IN/harness.out" 2>&1; then
	notok "harness starts 3 inference + 3 training nodes (1 shared) with agorad"
	tail -30 "$IN/harness.out" | diag
	finish
fi
ok "harness starts 3 inference + 3 training nodes (1 shared) with agorad ($(($(date +%s) - t_start)) s)"

export SLURM_CONF=$W/c1/etc/slurm.conf
ALOG=$W/log/agorad.log
CONF=$W/c1/etc/agora.conf
lent() { scontrol show hostnames "$(sinfo -h -p train -o %N | head -1)" | grep -cE '^c1n[12]$'; }
lent_is() { [ "$(lent)" = "$1" ]; }
comment() { scontrol show node "$1" | sed -n 's/^ *Comment=//p'; }
agorad_pid() { cat "$W/run/agorad.pid" 2>/dev/null; }

# ---- 1. the mark -------------------------------------------------------------
wait_for 20 lent_is 2
c=$(comment c1n1)
if [[ $c =~ ^Agora\ loan\ v1:\ lent\ since\ 20[0-9-]+T[0-9:]+Z,\ heartbeat\ 20[0-9-]+T[0-9:]+Z$ ]]; then
	ok "both inference nodes lent; the mark is versioned and readable: '$c'"
else
	notok "lent $(lent); c1n1 Comment '$c'"
fi

# ---- 2. one agorad per pid file ----------------------------------------------
if ! timeout 10 "$AGORAD_BIN" -f "$CONF" -P "$W/run/agorad-self.pid" >"$IN/second.out" 2>&1 &&
	grep -q "agorad already runs" "$IN/second.out" && kill -0 "$(agorad_pid)" 2>/dev/null; then
	ok "a second agorad on the same pid file refuses: $(grep -o "agorad already runs.*" "$IN/second.out" | head -1)"
else
	notok "a second agorad on the same pid file"
	diag <"$IN/second.out"
fi

# ---- 3. agorad gone for good, nodes lent (a borrower on all 5 nodes) ---------------------------------------
b=$(sbatch --parsable -p train -A acct_a -N5 --gres=gpu:8 --requeue -t 10 \
	-o /dev/null --wrap 'sleep 300')
wait_for 20 bash -c "[ \"\$(squeue -h -j $b -t R -o %i)\" = $b ]"
kill -9 "$(agorad_pid)"
t0=$(date +%s)
home() {
	lent_is 0 && [ "$(squeue -h -j "$b" -o %T)" = PENDING ] &&
		[[ $(comment c1n1) == "Agora loan v1: returned "* ]]
}
if wait_for $((LEASE + 10)) home; then
	s=$(($(date +%s) - t0))
	rs=$(scontrol show job "$b" | grep -o 'Restarts=[0-9]*')
	ok "agorad kill -9: both nodes home in $s s (LoanLeaseTimeout=$LEASE s), borrower $b requeued ($rs, pending): 0 lost"
	echo "# c1n1: $(comment c1n1)"
else
	notok "agorad kill -9: lent $(lent), borrower $(squeue -h -j "$b" -o '%T %r'), c1n1 '$(comment c1n1)'"
	grep "loan lease" "$W/log/c1/slurmctld.log" 2>/dev/null | tail -3 | diag
fi
# the requeued borrower pends (5 nodes, 3 left in "train"): the inference
# nodes are free for inference
i=$(sbatch --parsable -p infer -A acct_a -N2 --gres=gpu:8 --exclusive -t 2 -o /dev/null --wrap 'sleep 1')
if wait_for 20 bash -c "sacct -n -X -P -j $i -o State | grep -q COMPLETED"; then
	ok "inference runs on both returned nodes (job $i) while the borrower pends"
else
	notok "inference job $i: $(squeue -h -j "$i" -o '%T %r')"
fi
scancel "$b"

# ---- 4. a bad agora.conf: return-only mode, not a crash loop ---------------------
cp "$CONF" "$IN/good.conf"
echo "LoanHeadroomNodes=lots" >>"$CONF"
"$HARNESS" --workdir "$W" start-agorad >/dev/null 2>&1
wait_for 10 grep -q "is invalid: return-only mode" "$ALOG"
# Restart=on-failure would restart an agorad that exits: it must not
sleep 2
if kill -0 "$(agorad_pid)" 2>/dev/null && grep -q "is invalid: return-only mode" "$ALOG" && lent_is 0; then
	ok "agorad with a bad agora.conf stays up in return-only mode, lends nothing"
else
	notok "agorad with a bad agora.conf: pid '$(agorad_pid)', lent $(lent)"
	tail -3 "$ALOG" | diag
fi
cp "$IN/good.conf" "$CONF"
kill -HUP "$(agorad_pid)"
if wait_for 20 lent_is 2 && grep -q "valid again: return-only mode ends" "$ALOG"; then
	ok "SIGHUP with agora.conf fixed: return-only mode ends, both nodes lent again"
else
	notok "after the fix: lent $(lent)"
	tail -3 "$ALOG" | diag
fi

# ---- 5. SIGTERM returns the loans -------------------------------------------------
p=$(agorad_pid)
kill -TERM "$p"
wait_for 20 bash -c "! kill -0 $p 2>/dev/null"
shared() { scontrol show hostnames "$(sinfo -h -p train -o %N | head -1)" | grep -cx c1n3; }
if lent_is 0 && [ "$(shared)" = 1 ] && [ -z "$(comment c1n3 | grep -v '(null)')" ] &&
	grep -q "stopping: 2 lent node(s) out of the training partitions" "$ALOG"; then
	ok "SIGTERM: agorad took both loans out of the training partition before it exited; c1n3 (in both partitions by slurm.conf) stays, unmarked"
else
	notok "SIGTERM: lent $(lent), c1n3 in train $(shared), Comment '$(comment c1n3)' after agorad exited"
	tail -3 "$ALOG" | diag
fi
finish
