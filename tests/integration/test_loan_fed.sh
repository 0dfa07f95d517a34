#!/bin/bash
# tests/integration/test_loan_fed.sh - loaning does not wait on the
# federation (issue 19 medium 9): agorad runs FedAuction=yes and
# Loaning=yes on c1 of a 2-cluster federation; c2's slurmctld is paused
# (SIGSTOP, as a hung or unreachable controller: connections are accepted,
# nothing answers), so a federation round that asks c2 waits for
# MessageTimeout (30 s here) or its child limit (30 s + 5 s grace).  Inference demand then rises on c1 and
# the lent nodes must be home within ReclaimDeadline.  Before the loan
# round had its own process it ran only between federation rounds, and
# the reclaim waited for the stalled round.  Checks, each able to fail:
#   - both inference nodes of c1 lent (demand 0)
#   - c2 paused, demand 2: both nodes out of "train" within ReclaimDeadline
#     (agorad's own "reclaim ... done in N s" line says the same)
#   - agorad's federation round is still waiting on c2 then (the check
#     above proves something only if it is)
#   - once the round gives up on c2 (its child limit) and skips it, the
#     rounds without it go on: at least 5 in 15 s, none 5 s apart (before,
#     the metrics' federation-wide job list held the loop for
#     MessageTimeout)
# Then c2 is resumed (SIGCONT).  Prints TAP and "N passed, M failed".
# ~80 s.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
BUILD=${AGORA_BUILD:-$repo/_build}
W=${AGORA_LOANFED_WORKDIR:-/tmp/agora-loanfed-test${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_LOANFED_BASE_PORT:-$((25500 + ${AGORA_TEST_PORT_SHIFT:-0}))}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$BUILD/stage/plugins}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
DEADLINE=15

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"
t_start=$(date +%s)

skip_unless_built "loaning beside a stalled federation" "$AGORAD_BIN" "$PLUGIN_DIR/site_factor_agora.so"

IN=${W}.in
rm -rf "$IN"
mkdir -p "$IN"
DEMAND=$IN/demand
cat >"$IN/agora.conf" <<EOT
SchedulerInterval=1
FedAuction=yes
FedAuctionInterval=1
FedAuctionTimeout=60
Loaning=yes
LoanInferencePartitions=infer
LoanTrainPartitions=train
LoanHeadroomNodes=0
LoanInterval=1
ReclaimDeadline=$DEADLINE
LoanElasticGrow=no
LoanDemandSource=file:$DEMAND
EOT
# @C@: each cluster's own nodes (agorad lends on c1 only)
cat >"$IN/extra.conf" <<EOT
PriorityType=priority/multifactor
PrioritySiteFactorPlugin=site_factor/agora
PriorityCalcPeriod=1
SlurmctldPlugstack=slurmctld/agora
# a paused slurmctld answers nothing: each request waits MessageTimeout
# (30 s here, as the child limit; 10 s by default)
MessageTimeout=30
PartitionName=infer Nodes=c@C@n[1-2] MaxTime=INFINITE State=UP
PartitionName=train Nodes=c@C@n[3-4] MaxTime=INFINITE State=UP
EOT
echo 0 >"$DEMAND"

C2_PID=
cleanup() {
	[ -n "$C2_PID" ] && kill -CONT "$C2_PID" 2>/dev/null
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
if ! "$HARNESS" --workdir "$W" --fresh --clusters 2 --nodes 4,4 --gpus 8 \
	--base-port "$BASE_PORT" --plugin-dir "$PLUGIN_DIR" \
	--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" \
	--agorad --agorad-bin "$AGORAD_BIN" --accounts acct_a \
	start >"$IN/harness.out" 2>&1; then
	notok "harness starts 2 clusters x 4 nodes with agorad (FedAuction, Loaning on c1)"
	tail -30 "$IN/harness.out" | diag
	finish
fi
ok "harness starts 2 clusters x 4 nodes with agorad (FedAuction, Loaning on c1) ($(($(date +%s) - t_start)) s)"

export SLURM_CONF=$W/c1/etc/slurm.conf
ALOG=$W/log/agorad.log
lent() { scontrol show hostnames "$(sinfo --local -h -p train -o %N | head -1)" | grep -cE '^c1n[12]$'; }
lent_is() { [ "$(lent)" = "$1" ]; }

# ---- 1. both inference nodes lent ---------------------------------------------
if wait_for 20 lent_is 2; then
	ok "both inference nodes of c1 lent"
else
	notok "lent $(lent) of 2"
	tail -5 "$ALOG" | diag
	finish
fi

# ---- 2. c2 paused, then a reclaim is due ---------------------------------------
C2_PID=$(cat "$W/run/c2-slurmctld.pid")
kill -STOP "$C2_PID"
# a federation round that asks c2 now waits for its child limit
sleep 3
echo 2 >"$DEMAND"
t0=$(date +%s)
if wait_for $((DEADLINE + 10)) lent_is 0; then
	s=$(($(date +%s) - t0))
	wait_for 5 grep -q 'loan: reclaim of .* done in' "$ALOG"
	done_line=$(grep -o 'loan: reclaim of .* done in [0-9]* s (ReclaimDeadline [0-9]* s)' "$ALOG" | tail -1)
	if [ "$s" -le "$DEADLINE" ]; then
		ok "c2's slurmctld paused: both nodes home in $s s (ReclaimDeadline=$DEADLINE s); agorad: $done_line"
	else
		notok "c2's slurmctld paused: nodes home after $s s, past ReclaimDeadline=$DEADLINE s"
	fi
else
	notok "c2's slurmctld paused: still lent $(lent) after $((DEADLINE + 10)) s"
	tail -5 "$ALOG" | diag
fi
# (sinfo --local: a federated sinfo waits on c2 too)
# the round that asked c2 after the pause has not ended yet (30 s
# from the pause), else the check above proves little
if ! grep -Eq 'c2: (no answer within|cannot reach slurmctld)' "$ALOG"; then
	ok "the federation round was still waiting on c2 during the reclaim"
else
	notok "the federation round gave up on c2 before the reclaim ended: the check proves little"
fi

# ---- 3. a hung sibling holds no turn of agorad's loop ---------------------------
# The round that asked c2 gives up on it (its survey timed out); c2 is
# then skipped for 30 s (pol_fed_backoff, "c2: skipped for") and the rounds
# without it go on every FedAuctionInterval (1 s), each ending with a
# write of agorad.json.  Before, the metrics read the whole federation's
# job list after a turn (at most every 15 s), which libslurm asks of every
# sibling and waits for: right after the give-up such a read held the loop
# for MessageTimeout (30 s here), and no round ran.
if wait_for 60 grep -Eq 'c2: skipped for [0-9]+ s' "$ALOG"; then
	: >"$IN/writes"
	m0=$(date -r "$W/agorad.json" +%s.%N 2>/dev/null || echo 0)
	w0=$(date +%s.%N)
	while [ "$(awk -v a="$w0" -v b="$(date +%s.%N)" 'BEGIN { print (b - a < 15) }')" = 1 ]; do
		m=$(date -r "$W/agorad.json" +%s.%N 2>/dev/null || echo 0)
		[ "$m" != "$m0" ] && echo "$m" >>"$IN/writes" && m0=$m
		sleep 0.1
	done
	read -r n_w gap < <(awk -v a="$w0" -v e="$(date +%s.%N)" '
		{ if ($1 - a > g) g = $1 - a; a = $1; n++ }
		END { if (e - a > g) g = e - a; printf "%d %.1f\n", n, g }' "$IN/writes")
	if [ "$n_w" -ge 5 ] && awk -v g="$gap" 'BEGIN { exit !(g <= 5) }'; then
		ok "c2 hung and skipped: $n_w rounds in the 15 s after agorad gave up on it, at most $gap s apart"
	else
		notok "c2 hung and skipped: $n_w rounds in the 15 s after agorad gave up on it, up to $gap s apart (want >= 5, <= 5 s)"
		tail -n 8 "$ALOG" | diag
	fi
else
	notok "agorad never gave up on the paused c2 within 60 s"
	tail -n 8 "$ALOG" | diag
fi
kill -CONT "$C2_PID"
C2_PID=
finish
