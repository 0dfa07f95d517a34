#!/bin/bash
# test_fed.sh - agorad's cross-cluster auction on a 3-cluster agora-dc
# federation (2 x 8 nodes + 1 x 4 nodes, 8 GPUs each), end to end:
#   1. data: a job naming a dataset held only on c2 goes to c2, and so
#      does a job of an account whose default dataset it is
#   1b. GPU locality: c1's nodes are PCIe-only in TopologyModel, so a
#      whole-node job goes to c2 (NVLink) although ties go to c1
#   1c. hardware: a job that prefers (--prefer) a feature whose free
#      nodes only c3 has goes to c3
#   1d. failover of a pin: a job pinned to c2 (its data is there) whose
#      nodes are drained before it starts is auctioned again after
#      FedPinStartTimeout and starts on c1 or c3
#   2. free GPUs: jobs beyond c1's free GPUs go to c2/c3
#   3. the decision (winner, bids) shows in scontrol show job on every
#      cluster (SystemComment on the origin, AdminComment forwarded); on
#      the winner the SystemComment also carries its own auction's note
#   2b. true free GPUs: c2 at 48/64 GPUs busy, a burst of four 8-GPU jobs
#      sends at most 2 to c2 (agoractl fed shows 16 free); will-run
#      answers that cannot be true ("+503316420 s" for jobs without
#      --time behind one that waits for its begin time) give way to
#      agorad's estimate, and the bid says so
#   2c. the will-run sees the whole request: an --exclusive job does not
#      go to a cluster with free GPUs but no whole free node; that
#      cluster's bid shows the queue term of the job queued there
#   2d. refuse rather than truncate: a job whose working directory does
#      not fit agorad's copy is refused (agorad.json and agoractl explain
#      name work_dir; agorad logs it at info once), never
#      pinned, and runs after the fail-open releases it
#   4. SIGTERM and SIGKILL of agorad's whole process group mid-round, 10
#      trials: no job lost, none started on two clusters (a pinned one
#      only at its winner), none left held, each pinned (a half-done pin
#      finished by the next agorad) or released by the fail-open; a pin whose release slurmctld refuses is
#      released by the fail-open
#   5. c3's slurmctld stopped: jobs go elsewhere; after its restart no job
#      runs twice
#   6. fail open: agorad stopped, holds (also an old agorad's pin whose
#      release never landed) are released after FedAuctionTimeout, new
#      jobs are not held, and a user's "scontrol hold" of a held job is
#      kept; a hold by a user who may not make it (refused by Slurm)
#      leaves the job Agora's; a decision's job that has run and was
#      requeue-held by an admin stays held
#   7. one credit per team under PrivateData=accounts,jobs,usage,users
#      (agorad reads each cluster's view file, and its log says so)
# and measures the dispatch rate (jobs/s) and the median submit->pinned
# time; then
#   9. a burst of 120 one-GPU jobs, cancelled at its origin only once 40
#      are pinned to c2/c3: every copy still on its way (22.05: one a
#      second) is gone once it arrives (agorad cancels the copies of jobs
#      their origin shows cancelled)
# Needs root and a build with agorad (AGORAD_BIN or _build).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${AGORA_BUILD:-$repo/_build}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
W=${AGORA_FED_WORKDIR:-/tmp/agora-dc-fedtest${AGORA_TEST_TAG:-}}
PORT=${AGORA_FED_PORT:-$((20000 + ${AGORA_TEST_PORT_SHIFT:-0}))}
DC="$repo/contrib/harness/agora-dc --workdir $W"
fails=0
# shellcheck source=tests/integration/lib.sh
. "$repo/tests/integration/lib.sh"
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ms() { date +%s%3N; }
on() { local c=$1; shift; SLURM_CONF=$W/c$c/etc/slurm.conf "$@"; }

t=$(mktemp -d)
trap '$DC stop >/dev/null 2>&1; rm -rf "$t"' EXIT
cat >"$t/extra.conf" <<EOT
PriorityType=priority/multifactor
PrioritySiteFactorPlugin=site_factor/agora
PriorityCalcPeriod=1
SlurmctldPlugstack=slurmctld/agora
# every flag that hides slurmctld/agora's per-app rows: agorad must still
# get each cluster's usage (the view file; section 7 checks the credit)
PrivateData=accounts,jobs,usage,users
EOT
cat >"$t/catalog.json" <<EOT
{"sites": [{"name": "c1", "link_bytes_per_s": 1e8},
           {"name": "c2", "link_bytes_per_s": 1e8},
           {"name": "c3", "link_bytes_per_s": 1e8}],
 "datasets": [{"name": "imagenet", "bytes": 1e12, "where": ["c2"]}],
 "accounts": [{"name": "acct_b", "dataset": "imagenet"}]}
EOT
# c1's nodes: 8 GPUs on PCIe switches, no NVLink (the fuzz corpus's pcie
# type); c2 and c3 are not in the model (uniform: one NVLink island)
sed 's/"nodes": ""/"nodes": "c1n[1-8]"/' "$repo/tests/fuzz/corpus/topo_model/pcie.json" >"$t/model.json"
grep -q 'c1n\[1-8\]' "$t/model.json" || { echo "cannot write the topology model" >&2; exit 1; }
cat >"$t/agora.conf" <<EOT
SchedulerInterval=1
FedAuction=yes
FedAuctionInterval=1
FedAuctionTimeout=15
# the failover of a pin is on only in 1d (SIGHUP): elsewhere a queue of
# jobs that did not start 10 s after their planned start would move
FedPinStartTimeout=0
FedCatalog=$t/catalog.json
# the within-cluster auction too: a federated job shows both decisions
AuctionPartitions=batch
TopologyModel=$t/model.json
# a small quota, so that a minute of 64 GPUs shows in the credit term
DefaultQuota=2
EOT
$DC --base-port "$PORT" --clusters 3 --nodes 8,8,4 --plugin-dir "$BUILD/stage/plugins" \
	--conf-extra "$t/extra.conf" --agora-conf "$t/agora.conf" --agorad \
	--agorad-bin "$AGORAD_BIN" --accounts acct_a,acct_b,acct_c --fresh start >"$t/start.log" 2>&1 ||
	{ tail "$t/start.log"; exit 1; }
export SLURM_CONF=$W/c1/etc/slurm.conf
cd "$t" || exit 1

# shellcheck source=tests/integration/fed_helpers.sh
. "$repo/tests/integration/fed_helpers.sh"

fed_up() { [ "$(AGORAD_STATE=$W/agorad.json "$BUILD/contrib/agoractl/agoractl" fed 2>/dev/null | grep -cE '^c[123] +yes')" = 3 ]; }
wait_for 60 fed_up || echo "# agoractl fed: not every cluster up after 60 s (agorad's first round: its heartbeats)"

# 1. data locality: c1 is empty, but the data is on c2
j=$(sub --comment dataset=imagenet)
wait_pinned "$j"
[ "$(winner "$j")" = c2 ] && pass "dataset on c2: job $j pinned to c2" ||
	fail "dataset on c2: job $j pinned to '$(winner "$j")' ($(admin "$j"))"
# the account's default dataset (catalog "accounts"): no comment needed
b=$(sub -A acct_b)
wait_pinned "$b"
[ "$(winner "$b")" = c2 ] && admin "$b" | grep -q 'c2: start +[0-9]*s, data local' &&
	pass "acct_b's default dataset on c2: job $b pinned to c2, data local" ||
	fail "acct_b's default dataset: job $b on '$(winner "$b")' ($(admin "$b"))"

# 1b. locality: without data every cluster is free; c1 (PCIe-only nodes,
# level 3 for 8 GPUs) loses to the NVLink nodes of c2/c3 (level 0), though
# ties go to c1
k=$(sub)
wait_pinned "$k"
wk=$(winner "$k")
[ -n "$wk" ] && [ "$wk" != c1 ] && admin "$k" | grep -q 'c1: start +[0-9]*s, no data, 0 preempted, locality 3.0' &&
	admin "$k" | grep -q "won by $wk .*: $wk: start +[0-9]*s, no data, 0 preempted, locality 0.0" &&
	pass "locality: job $k on $wk (level 0); c1's PCIe-only nodes bid level 3" ||
	fail "locality: job $k on '$wk' ($(admin "$k"))"

# 1c. hardware: the job prefers a100 (--prefer, a soft feature).  c3's
# nodes have it; on c1 only c1n8 has it, and c1n8 is busy, so c1 plans the
# job on other nodes (a mismatch) or later.  c2 defines no a100 at all, so
# Slurm refuses the request there (not eligible).
on 3 scontrol update NodeName='c3n[1-4]' AvailableFeatures=a100 ActiveFeatures=a100
on 1 scontrol update NodeName=c1n8 AvailableFeatures=a100 ActiveFeatures=a100
on 1 sbatch -M c1 -A acct_a -w c1n8 --gres=gpu:8 -t 10 --wrap 'sleep 300' >/dev/null
c1n8_seen() { [ -n "$(on 1 squeue --local -h -w c1n8 -t R 2>/dev/null)" ] && AGORAD_STATE=$W/agorad.json "$BUILD/contrib/agoractl/agoractl" fed 2>/dev/null | awk '$1 == "c1" && $2 == "yes" && $3 <= 56 {f = 1} END {exit !f}'; }
wait_for 30 c1n8_seen || echo "# c1n8's job not seen running by agorad within 30 s"
h=$(sub --prefer=a100)
wait_pinned "$h"
c1bid=$(admin "$h" | grep -o 'c1 [-0-9]* s (c1: [^)]*)')
if [ "$(winner "$h")" = c3 ] && admin "$h" | grep -q 'c2 refused' &&
	grep -Eq 'hardware mismatch|start \+[1-9]' <<<"$c1bid"; then
	pass "hardware: job $h preferring a100 on c3; c1 bid: $c1bid"
else
	fail "hardware: job $h on '$(winner "$h")' ($(admin "$h"))"
fi

# 3. the decision on every cluster
sleep 3
for c in 1 2 3; do
	if on $c scontrol show job "$j" | grep -q 'SystemComment=Agora: fed auction: won by c2'; then
		pass "c$c: scontrol show job $j shows the auction's decision (SystemComment)"
	else
		fail "c$c: scontrol show job $j does not show the decision"
	fi
done
# on the winner c2's own auction decides on the job too (won GPUs, or a
# lease once it runs): its SystemComment carries both decisions
# (federation first, then the auction's note)
sc2=$(on 2 scontrol show job "$j" | sed -n 's/^ *SystemComment=//p')
if [[ $sc2 == "Agora: fed auction: won by c2"*" || Agora: "@(won GPUs|lease of 8 GPUs until)* ]] && [ ${#sc2} -le 1024 ]; then
	pass "c2: job $j shows the federation's and c2's auction decisions (${#sc2} bytes): ...${sc2: -60}"
else
	fail "c2: job $j SystemComment lacks one of the two decisions: '$sc2'"
fi
# agoractl explain / fed / datasets
AGORACTL=$BUILD/contrib/agoractl/agoractl
"$AGORACTL" explain "$j" >"$t/explain" 2>&1
grep -q 'won by c2' "$t/explain" && grep -q 'bids:' "$t/explain" &&
	pass "agoractl explain $j: winner and bids" || fail "agoractl explain $j: $(head -3 "$t/explain")"
AGORAD_STATE=$W/agorad.json "$AGORACTL" fed >"$t/fed" 2>&1
[ "$(grep -cE '^c[123] +yes' "$t/fed")" -eq 3 ] && pass "agoractl fed: 3 clusters up" ||
	fail "agoractl fed: $(cat "$t/fed")"
"$AGORACTL" datasets >"$t/ds" 2>&1
grep -qE '^imagenet +1000.0 +c2$' "$t/ds" && pass "agoractl datasets: imagenet on c2" ||
	fail "agoractl datasets: $(cat "$t/ds")"
# the slow path: imagenet's demand is all on c2; a replica elsewhere
# lowers the worst demand/supply (printed, not applied)
AGORAD_STATE=$W/agorad.json "$AGORACTL" place >"$t/place" 2>&1
grep -q '^# worst demand/supply' "$t/place" && grep -q 'rsync -a c2:datasets/imagenet/' "$t/place" &&
	pass "agoractl place: replica moves printed" || fail "agoractl place: $(cat "$t/place")"
cat "$t/explain" "$t/fed" "$t/place"
cancel_all

# 1d. failover of a pin: the job's data is on c2, so c2 wins it; it may
# start only in 5 s (--begin), and c2's nodes are drained after the pin.
# After its planned start + FedPinStartTimeout (10 s) it is auctioned again
# without c2 and runs on c1 or c3.  Before the failover it waited on c2
# for ever.
sed -i 's/^FedPinStartTimeout=0$/FedPinStartTimeout=10/' "$W/c1/etc/agora.conf"
kill -HUP "$(cat "$W/run/agorad.pid")"
sleep 1
f=$(sub --comment dataset=imagenet --begin=now+5)
wait_pinned "$f"
wf=$(winner "$f")
on 2 scontrol update NodeName='c2n[1-8]' State=DRAIN Reason=test_fed_failover
running_elsewhere() {
	local c
	for c in 1 3; do
		on $c squeue --local -h -j "$f" -t R -o %i 2>/dev/null | grep -q . && return 0
	done
	return 1
}
if [ "$wf" = c2 ] && wait_for 40 running_elsewhere; then
	pass "pin failover: job $f pinned to c2, c2 drained: re-auctioned, running on $(winner "$f")"
else
	fail "pin failover: job $f pinned to '$wf', not running on c1/c3 after c2 was drained ($(admin "$f" | cut -c1-120))"
fi
on 2 scontrol update NodeName='c2n[1-8]' State=RESUME
sed -i 's/^FedPinStartTimeout=10$/FedPinStartTimeout=0/' "$W/c1/etc/agora.conf"
kill -HUP "$(cat "$W/run/agorad.pid")"
cancel_all
# the next check bids on every cluster's free GPUs: wait until agorad has
# seen c2 resumed and every GPU free (on 24.11 CI once auctioned the 16
# jobs while agorad's last round still saw c2 drained: c1 10, c2 0, c3 6)
all_free_seen() {
	AGORAD_STATE=$W/agorad.json "$AGORACTL" fed >"$t/fed0" 2>&1 &&
		grep -Eq '^c1 +yes +64 +64 ' "$t/fed0" && grep -Eq '^c2 +yes +64 +64 ' "$t/fed0" &&
		grep -Eq '^c3 +yes +32 +32 ' "$t/fed0"
}
wait_for 30 all_free_seen || echo "# agorad did not see every GPU free within 30 s: $(grep -E '^c[123] ' "$t/fed0" | tr '\n' ';')"

# 2. free GPUs: 16 jobs of 8 GPUs; c1 has 8 nodes
ids=()
t0=$(ms)
for i in $(seq 16); do ids+=("$(sub)"); done
wait_pinned "${ids[@]}"
n1=0 n2=0 n3=0
for j in "${ids[@]}"; do
	case $(winner "$j") in c1) n1=$((n1 + 1)) ;; c2) n2=$((n2 + 1)) ;; c3) n3=$((n3 + 1)) ;; esac
done
[ $n1 -le 8 ] && [ $((n1 + n2 + n3)) -eq 16 ] && [ $((n2 + n3)) -ge 8 ] &&
	pass "free GPUs: c1 $n1, c2 $n2, c3 $n3 of 16 jobs" ||
	fail "free GPUs: c1 $n1, c2 $n2, c3 $n3 of 16 jobs"
cancel_all

# 2b. c2 at 48 of 64 GPUs: 6 jobs without --time, and one that waits for
# its begin time (Slurm's will-run then answers "+16 years" for 8 GPUs)
for i in $(seq 6); do on 2 sbatch -M c2 -A acct_a -N1 --gres=gpu:8 --wrap 'sleep 600' >/dev/null; done
on 2 sbatch -M c2 -A acct_a -N1 --gres=gpu:8 --begin=now+3600 --wrap true >/dev/null
busy_c2() { [ "$(on 2 squeue --local -h -t R -o %i | wc -l)" -eq 6 ]; }
wait_for 20 busy_c2
# agorad's view after a round that saw the jobs start (a wait, not a fixed
# sleep: under load a round can take longer than 2 s)
fed2_seen() {
	AGORAD_STATE=$W/agorad.json "$AGORACTL" fed >"$t/fed2" 2>&1 &&
		grep -Eq '^c2 +yes +16 +64' "$t/fed2"
}
wait_for 20 fed2_seen && pass "agoractl fed: c2 16 of 64 GPUs free" ||
	fail "agoractl fed with c2 at 48/64: $(grep '^c2' "$t/fed2")"
ids=()
# The burst is auctioned in one round (agorad paused while it is
# submitted; its last heartbeat keeps the holds on): what is checked is
# one round's bids on true free GPUs.  Across rounds a job pinned to c2
# whose copy has not reached c2 yet is not in c2's queue, so a burst split
# over two rounds can still give c2 a third job (CI saw 3 of 4): a known
# gap (doc/design.md, agorad's free GPUs).
kill -STOP -- "-$(cat "$W/run/agorad.pid")"
for i in 1 2 3 4; do ids+=("$(sub)"); done
nt=$(sbatch --parsable -A acct_a -N1 --gres=gpu:8 --wrap 'sleep 120' | cut -d';' -f1) # no --time
kill -CONT -- "-$(cat "$W/run/agorad.pid")"
wait_pinned "${ids[@]}" "$nt"
n2=0
for j in "${ids[@]}"; do [ "$(winner "$j")" = c2 ] && n2=$((n2 + 1)); done
[ $n2 -le 2 ] && pass "c2 at 48/64: $n2 of a burst of four 8-GPU jobs to c2" ||
	fail "c2 at 48/64: $n2 of 4 burst jobs to c2 (16 GPUs free)"
# no bid at Slurm's +16 years: within a week (the horizon), plus what a
# deep queue's bid adds to it, its copy's transit and the round's own
# queue (seconds here; CI saw c3 at +604804 s), and c2's answer replaced
# by the estimate
far=$(admin "$nt" | grep -oE 'start \+[0-9]+s' | sed 's/[^0-9]//g' | awk '$1 > 604800 + 3600' | head -1)
if [ -z "$far" ] && [ -n "$(winner "$nt")" ] &&
	admin "$nt" | grep -q "c2: start +[0-9]*s, .*start: agorad's estimate (will-run said +[0-9]*s)"; then
	pass "job $nt without --time: every bid starts within a week (and a deep queue's transit); c2's will-run replaced by agorad's estimate"
else
	fail "job $nt without --time: $(admin "$nt")"
fi
"$AGORACTL" explain "${ids[0]}" >"$t/explain2" 2>&1
grep -q 'start: will-run\|start: agorad' "$t/explain2" && pass "agoractl explain: each bid says its start's source" ||
	fail "agoractl explain: $(cat "$t/explain2")"
cancel_all

# 2c. the will-run sees the whole request: --exclusive with 4 GPUs while
# every c2 node runs a 4-GPU job (32 GPUs free, no whole node); c2 cannot
# start it before those end, c3 (idle) can.  Without --exclusive in the
# will-run, c2 bid "now" and won the tie.
for i in $(seq 8); do on 2 sbatch -M c2 -A acct_a -N1 -w "c2n$i" --gres=gpu:4 -t 10 --wrap 'sleep 600' >/dev/null; done
busy8_c2() { [ "$(on 2 squeue --local -h -t R -o %i | wc -l)" -eq 8 ]; }
wait_for 20 busy8_c2
# and one 8-GPU job queued behind them (Resources): c2's bid carries the
# queue term (1 job / 64 GPUs x 4 GPUs x 0.693 x 600 s = 26 s)
on 2 sbatch -M c2 -A acct_a -N1 --gres=gpu:8 -t 10 --wrap 'sleep 600' >/dev/null
sleep 2
x=$(sub --exclusive --gres=gpu:4)
wait_pinned "$x"
wx=$(winner "$x")
[ -n "$wx" ] && [ "$wx" != c2 ] && pass "--exclusive: job $x on $wx, not on c2 (no whole node free)" ||
	fail "--exclusive: job $x on '$wx' ($(admin "$x" | cut -c1-300))"
"$AGORACTL" explain "$x" >"$t/explain3" 2>&1
grep -Eq 'c2: start \+[0-9]+s[^;]*queue 0\.[0-9]+/GPU \+[0-9]+s' "$t/explain3" &&
	pass "agoractl explain $x: c2's bid shows its queue term ($(grep -oE 'queue 0\.[0-9]+/GPU \+[0-9]+s' "$t/explain3" | head -1))" ||
	fail "agoractl explain $x: no queue term in c2's bid: $(cat "$t/explain3")"
cancel_all

# 2d. refuse rather than truncate (issue 19 medium 7): a job whose working
# directory (1,100 bytes) is longer than agorad's copy of it (1,024) gets
# no will-run on a cut request, so no cluster wins it: agorad's round says
# which field (agorad.json's decision), the job stays held, unpinned, and
# the fail-open releases it after FedAuctionTimeout; then it runs.
long=$t
while [ ${#long} -lt 1100 ]; do long=$long/$(head -c 200 /dev/zero | tr '\0' d); done
mkdir -p "$long"
y=$(sub --chdir="$long")
decision_of() { # JOBID: its decision in agorad's last round, "" if none
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(next((j["decision"] or "" for j in d["jobs"] if j["job_id"] == int(sys.argv[2])), ""))' \
		"$W/agorad.json" "$1" 2>/dev/null
}
refused_y() { decision_of "$y" | grep -q 'work_dir too long to copy into a will-run request'; }
running_y() {
	local c
	for c in 1 2 3; do on $c squeue --local -h -j "$y" -t R -o %i 2>/dev/null | grep -q . && return 0; done
	return 1
}
if wait_for 15 refused_y; then
	held "$y" && [ -z "$(winner "$y")" ] &&
		pass "over-long request: job $y refused, held, not pinned ($(decision_of "$y" | cut -c1-120))" ||
		fail "over-long request: job $y refused but not held or pinned ($(admin "$y" | cut -c1-120))"
	# agoractl explain shows the refusal with the field named (the job
	# itself carries only its hold mark), and agorad logged it at info
	# once, not every round
	AGORAD_STATE=$W/agorad.json "$AGORACTL" explain "$y" >"$t/explain4" 2>&1
	grep -q 'held for the auction' "$t/explain4" &&
		grep -q 'work_dir too long to copy into a will-run request' "$t/explain4" &&
		pass "agoractl explain $y: the refusal, field named ($(grep -o 'work_dir too long[^(]*' "$t/explain4" | head -1))" ||
		fail "agoractl explain $y: no refusal shown: $(cat "$t/explain4")"
	nlog=$(grep -c "JobId=$y (origin [^)]*): work_dir too long to copy into a will-run request (refused" "$W/log/agorad.log")
	[ "$nlog" = 1 ] &&
		pass "agorad logged job $y's refusal once at info ($nlog line)" ||
		fail "agorad logged job $y's refusal $nlog times (want 1): $(grep "JobId=$y " "$W/log/agorad.log" | head -3)"
	wait_for 40 not_held "$y" && wait_for 30 running_y &&
		pass "over-long request: job $y released by the fail-open and running" ||
		fail "over-long request: job $y not released or not running ($(admin "$y" | cut -c1-120))"
else
	fail "over-long request: no refusal for job $y in agorad.json (winner '$(winner "$y")', decision '$(decision_of "$y" | cut -c1-200)')"
fi
cancel_all

# 4. SIGTERM / SIGKILL of agorad's whole process group (as systemd stops
# the unit: every process of it) mid-round, 10 trials, then restarted.
# AGORAD_TEST_PIN_DELAY_MS spaces a pin's two updates 300 ms apart, and
# agorad creates AGORAD_TEST_PIN_MARK after a pin's first update: each
# kill waits (up to 20 s: a restarted agorad's first round takes seconds
# on a loaded host) for that file, so that the kills land between a pin's
# two updates, not at random.  (Polling slurmctld for the first update
# instead missed the 300 ms window in every trial of a loaded CI run.)
$DC stop-agorad >/dev/null
export AGORAD_TEST_PIN_DELAY_MS=300 AGORAD_TEST_PIN_MARK=$t/mid-pin
$DC start-agorad >/dev/null
sleep 2
all=()
inside=0
for trial in $(seq 10); do
	rm -f "$AGORAD_TEST_PIN_MARK"
	new=()
	for i in 1 2 3 4; do new+=("$(sub)"); done
	all+=("${new[@]}")
	d=$(($(ms) + 20000))
	until [ -e "$AGORAD_TEST_PIN_MARK" ] || [ "$(ms)" -gt $d ]; do sleep 0.02; done
	[ -e "$AGORAD_TEST_PIN_MARK" ] && inside=$((inside + 1))
	sig=KILL
	[ $((trial % 2)) = 0 ] && sig=TERM
	kill -s $sig -- "-$(cat "$W/run/agorad.pid")" 2>/dev/null
	[ $sig = TERM ] && wait_for 15 bash -c "! kill -0 $(cat "$W/run/agorad.pid") 2>/dev/null"
	$DC start-agorad >/dev/null
done
echo "MEASURE: $inside of 10 kills sent inside a pin (after its first update)"
unset AGORAD_TEST_PIN_DELAY_MS AGORAD_TEST_PIN_MARK
# The 40 jobs are read from one snapshot of every cluster's queue and of
# c1's job records (snap_jobs), not with five Slurm queries a job (200
# queries a round took up to 45 s on a loaded 2-core host): the same
# copies, holds and decisions.
snap_jobs() {
	local c
	for c in 1 2 3; do on $c squeue --local -h -t all -o '%i %T' >"$t/snap.c$c" 2>/dev/null; done
	on 1 scontrol -a -o show job >"$t/snap.show" 2>/dev/null
}
snap_copies() { # JOBID: as copies, from the snapshot
	local c n=0
	for c in 1 2 3; do
		awk -v j="$1" '$1 == j && $2 != "REVOKED" { f = 1 } END { exit !f }' "$t/snap.c$c" && n=$((n + 1))
	done
	echo $n
}
snap_held() { grep -Eq "^JobId=$1 .* Priority=0 .*JobState=(PENDING|REVOKED) " "$t/snap.show"; }
snap_won() { grep -q "^JobId=$1 .* AdminComment=Agora: fed auction: won by" "$t/snap.show"; }
# released by the fail-open (FedAuctionTimeout): stock federation from then
# on, a sibling copy pending on every cluster until one starts it
snap_failopen() { grep -q "^JobId=$1 .* AdminComment=Agora: fed hold released: " "$t/snap.show"; }
snap_winner() { sed -n "s/^JobId=$1 .* AdminComment=Agora: fed auction: won by \([^ ]*\) .*/\1/p" "$t/snap.show"; }
snap_state() { # JOBID CLUSTER: its copy's state there, "-" for none
	awk -v j="$1" '$1 == j { s = $2 } END { print (s == "" ? "-" : s) }' "$t/snap.c$2"
}
# started on two clusters: a copy past PENDING, not REVOKED, on two
snap_started2() {
	local c n=0
	for c in 1 2 3; do
		case $(snap_state "$1" $c) in -|PENDING|REVOKED) ;; *) n=$((n + 1)) ;; esac
	done
	[ $n -gt 1 ]
}
# pinned, with a live copy outside its winner (a fail-opened job's pending
# siblings are stock federation; a re-pin's old copy is revoked through
# the federation agent, a second or so later on 22.05)
snap_outside() {
	local c s w
	w=$(snap_winner "$1")
	[ -n "$w" ] || return 1
	for c in 1 2 3; do
		s=$(snap_state "$1" $c)
		[ "c$c" != "$w" ] && [ "$s" != - ] && [ "$s" != REVOKED ] && return 0
	done
	return 1
}
# The last restarted agorad may still be pinning the trials' backlog (each
# pin 300 ms here): what must not happen is a job held for good, so wait
# (up to 60 s, far below anything "forever") for the holds to end.
t0=$(ms)
while :; do
	pend=0
	snap_jobs
	for j in "${all[@]}"; do snap_held "$j" && pend=$((pend + 1)); done
	[ $pend -gt 0 ] && [ $(($(ms) - t0)) -lt 60000 ] || break
	sleep 1
done
echo "MEASURE: after the kill trials the last hold ended after $((($(ms) - t0) / 1000)) s ($pend still held)"
# Then wait for every job to have a live copy.  A release submits the
# job's copy to its winner through Slurm's federation agent, which on 22.05
# delivers about one a second to each sibling (doc/federation.md, Faults).
# Until that copy lands, the job is on no cluster (its origin's record is
# REVOKED): in transit, not lost.  So this wait comes after the holds have
# ended: waiting for copies first counted 8 jobs that the last agorad
# released afterwards as lost, in one CI run.
# A pinned job whose winner did not start it in time is re-pinned, and
# its old copy is revoked the same way: wait for those too.  The checks
# below read this loop's last snapshot.
t0=$(ms)
while :; do
	missing=0 outside=0
	snap_jobs
	for j in "${all[@]}"; do
		[ "$(snap_copies "$j")" -gt 0 ] || missing=$((missing + 1))
		snap_outside "$j" && outside=$((outside + 1))
	done
	[ $((missing + outside)) -gt 0 ] && [ $(($(ms) - t0)) -lt 240000 ] || break
	sleep 2
done
echo "MEASURE: after the kill trials every job had a live copy after $((($(ms) - t0) / 1000)) s ($missing missing, $outside pinned with a copy outside its winner)"
# Each job must end pinned by an agorad (a restarted one finishing a half-
# done pin included) or released by the fail-open: the trials last about as
# long as FedAuctionTimeout (15 s here), so on a loaded host the oldest of
# the backlog may reach it first (8 of 40 in one CI run), which is the
# fail-open doing its job, not a defect.
lost=0 double=0 stuck=0 half=0 opened=0 odd=()
for j in "${all[@]}"; do
	n=$(snap_copies "$j") b=0
	[ "$n" -eq 0 ] && lost=$((lost + 1)) b=1
	{ snap_started2 "$j" || snap_outside "$j"; } && double=$((double + 1)) b=1
	snap_held "$j" && stuck=$((stuck + 1)) b=1
	if snap_failopen "$j"; then
		opened=$((opened + 1))
	elif ! snap_won "$j"; then
		half=$((half + 1)) b=1
	fi
	[ $b = 1 ] && odd+=("$j")
done
echo "MEASURE: after the kill trials $((${#all[@]} - opened)) jobs pinned by an agorad, $opened released by the fail-open"
for j in "${odd[@]:0:5}"; do
	echo "# job $j: c1 $(snap_state "$j" 1), c2 $(snap_state "$j" 2), c3 $(snap_state "$j" 3); $(grep "^JobId=$j " "$t/snap.show" | grep -o 'AdminComment=.*' | cut -c1-100)"
done
[ $lost -eq 0 ] && [ $double -eq 0 ] && [ $stuck -eq 0 ] && [ $half -eq 0 ] &&
	pass "SIGTERM/SIGKILL x10: ${#all[@]} jobs, 0 lost, 0 on two clusters, 0 held, 0 without a decision" ||
	fail "SIGTERM/SIGKILL x10: ${#all[@]} jobs, $lost lost, $double on two clusters, $stuck held, $half without a decision (neither pinned nor failed open)"
nf=$(grep -c 'pinned to .* before;' "$W/log/agorad.log")
[ "$nf" -gt 0 ] && pass "SIGTERM/SIGKILL x10: $inside kills inside a pin left $nf pins half done, which the restarted agorad finished" ||
	fail "SIGTERM/SIGKILL x10: $inside kills sent inside a pin, but no half-done pin finished by a restarted agorad (the check above proves little)"
$DC stop-agorad >/dev/null
$DC start-agorad >/dev/null
cancel_all

# 4b. a pin whose release slurmctld refuses (agorad's fault injection):
# the job keeps Agora's hold mark, and the fail-open releases it
$DC stop-agorad >/dev/null
AGORAD_TEST_REFUSE_RELEASE=1 $DC start-agorad >/dev/null
sleep 2
r=$(sub)
pinned_held() { held "$r" && admin "$r" | grep -q '^Agora: fed hold v1: pinned to'; }
if wait_for 30 pinned_held; then
	wait_for 30 not_held "$r" &&
		pass "release refused: job $r pinned, still held, then released by the fail-open ($(admin "$r" | cut -c1-50))" ||
		fail "release refused: job $r still held after FedAuctionTimeout"
else
	fail "release refused: job $r not held with the pinned mark ($(admin "$r" | cut -c1-80))"
fi
$DC stop-agorad >/dev/null
$DC start-agorad >/dev/null
cancel_all

# 5. c3's slurmctld down
kill -TERM "$(cat "$W/run/c3-slurmctld.pid")"
sleep 3
ids=()
for i in $(seq 6); do ids+=("$(sub)"); done
wait_pinned "${ids[@]}"
bad=0
for j in "${ids[@]}"; do case $(winner "$j") in c1 | c2) ;; *) bad=$((bad + 1)) ;; esac; done
[ $bad -eq 0 ] && pass "c3 down: 6 jobs pinned to c1/c2" || fail "c3 down: $bad jobs not pinned to c1/c2"
$DC restart-ctld 3 >/dev/null 2>&1
sleep 5
double=0 lost=0
for j in "${ids[@]}"; do
	n=$(copies "$j")
	[ "$n" -gt 1 ] && double=$((double + 1))
	[ "$n" -eq 0 ] && lost=$((lost + 1))
done
[ $double -eq 0 ] && [ $lost -eq 0 ] && pass "c3 back: no job duplicated or lost" ||
	fail "c3 back: $double duplicated, $lost lost"
cancel_all

# 6. fail open: agorad stopped.  Submitted within FedAuctionTimeout of
# agorad's last request, the jobs are held; j must be released, u (held
# by its owner with scontrol hold) must stay held, and o (pinned by an old
# agorad that died before the release: the decision, priority 0) must be
# released too
sleep 2
$DC stop-agorad >/dev/null
j=$(sub)
u=$(sub)
o=$(sub)
x=$(sub)
if held "$j" && held "$u" && held "$o" && held "$x"; then
	scontrol hold "$u"
	# a hold by a user who may not update the job: Slurm refuses it (on
	# 22.05 only after job_submit's job_modify), and the job stays
	# Agora's, released by the fail-open like j
	xout=$(runuser -u nobody -- env SLURM_CONF="$W/c1/etc/slurm.conf" scontrol hold "$x" 2>&1)
	scontrol update job="$o" Clusters=c2 AdminComment="Agora: fed auction: won by c2 (an old agorad's pin)"
	wait_for 25 not_held "$j" && wait_for 5 not_held "$o" &&
		pass "fail open: jobs $j and $o (old agorad's lost release) released after FedAuctionTimeout ($(admin "$j" | cut -c1-60))" ||
		fail "fail open: job $j or $o still held after FedAuctionTimeout"
	held "$u" && admin "$u" | grep -q '^Agora: fed hold v1: held by its owner' &&
		pass "scontrol hold of held job $u kept by the fail-open" ||
		fail "scontrol hold of job $u undone ($(admin "$u" | cut -c1-60))"
	if grep -qiE 'invalid user|denied' <<<"$xout" && wait_for 5 not_held "$x"; then
		pass "a refused hold by another user ($(tr '\n' ' ' <<<"$xout" | cut -c1-50)) left job $x Agora's: released by the fail-open"
	else
		fail "job $x after a refused hold by nobody ('$xout'): $(admin "$x" | cut -c1-60), held $(held "$x" && echo yes || echo no)"
	fi
else
	fail "fail open: jobs $j $u $o were not held for the auction ($(admin "$j" | cut -c1-60))"
fi
sleep 16
k=$(sub)
sleep 1
held "$k" && fail "agorad down: new job $k held" || pass "agorad down: new job $k not held"
# a job with an auction's decision that has run and was held again by an
# admin (scontrol requeuehold; a launch failure or the requeue limit hold
# the same way): the hold is not a release that never landed, and the
# fail-open keeps it past FedAuctionTimeout
rq=$(on 1 sbatch --parsable -M c1 -N1 --gres=gpu:1 -t 5 -o /dev/null --wrap 'sleep 300' | cut -d';' -f1)
rq_running() { on 1 scontrol -o show job "$rq" 2>/dev/null | grep -q ' JobState=RUNNING '; }
if wait_for 20 rq_running; then
	on 1 scontrol update job="$rq" AdminComment="Agora: fed auction: won by c1"
	on 1 scontrol requeuehold "$rq"
	sleep 20
	held "$rq" && admin "$rq" | grep -q '^Agora: fed auction: won by c1' &&
		pass "requeuehold of job $rq (a decision, run once) kept by the fail-open for 20 s" ||
		fail "requeuehold of job $rq undone: held $(held "$rq" && echo yes || echo no), $(admin "$rq" | cut -c1-60)"
else
	fail "job $rq (sbatch -M c1) did not start within 20 s"
fi
on 1 scancel "$rq"

# 7. one credit per team: acct_c burns GPUs on c1 only; on c2 its pending
# jobs then rank below acct_b's (sprio SITE) within a minute or so
$DC start-agorad >/dev/null
sleep 3
held "$u" && pass "agorad back: job $u keeps its owner's hold" || fail "agorad released job $u, held by its owner"
scancel "$u"
for i in $(seq 8); do
	sbatch -M c1 -A acct_c -N1 --gres=gpu:8 -t 5 --wrap 'sleep 100' >/dev/null
done
# on c2: one node busy (acct_a), then one whole-cluster job each of acct_c
# and acct_b, which wait for resources (sprio lists them)
on 2 sbatch -M c2 -A acct_a -N1 --gres=gpu:8 -t 10 --wrap 'sleep 300' >/dev/null
sleep 2
jc=$(on 2 sbatch --parsable -M c2 -A acct_c -N8 --gres=gpu:8 -t 10 --wrap true | cut -d';' -f1)
jb=$(on 2 sbatch --parsable -M c2 -A acct_b -N8 --gres=gpu:8 -t 10 --wrap true | cut -d';' -f1)
site() { on 2 sprio -h -j "$1" -o '%S' 2>/dev/null | tr -d ' ' | head -1; }
t0=$(ms)
while :; do
	sc=$(site "$jc") sb=$(site "$jb")
	if [ -n "$sc" ] && [ -n "$sb" ] && [ "${sc%.*}" -lt "${sb%.*}" ]; then break; fi
	[ $(($(ms) - t0)) -lt 150000 ] || break
	sleep 5
done
if [ -n "$sc" ] && [ -n "$sb" ] && [ "${sc%.*}" -lt "${sb%.*}" ]; then
	pass "one credit: on c2 acct_c (used c1) SITE $sc < acct_b SITE $sb after $((($(ms) - t0) / 1000)) s"
else
	fail "one credit: on c2 acct_c SITE '$sc', acct_b SITE '$sb' after $((($(ms) - t0) / 1000)) s"
fi
# under PrivateData agorad reads the usage from each view file, and says
# so (each cluster's last word on it; before a cluster's first pass there
# is no view file yet)
nview=0
for c in 1 2 3; do
	l=$(grep "c$c: usage per app" "$W/log/agorad.log" | tail -1)
	if [[ $l == *"from "*"/agora_view.json"* ]]; then
		nview=$((nview + 1))
	else
		fail "PrivateData: c$c's usage per app not from its view file: '$l'"
	fi
done
[ $nview -eq 3 ] && pass "PrivateData: agorad reads every cluster's usage from its view file"

# 8. measurement (after the checks, so that its burst of sibling copies
# does not delay them; 9 cancels it): 100 jobs submitted back to back
ids=()
: >"$t/submits"
for i in $(seq 100); do
	j=$(sub -t 1)
	ids+=("$j")
	echo "$j $(ms)" >>"$t/submits"
done
t1=$(ms)
wait_pinned "${ids[@]}"
grep -h 'pinned to' "$W/log/agorad.log" | sed -n 's/^\[\([^]]*\)\] JobId=\([0-9]*\) .*/\2 \1/p' >"$t/pins"
python3 - "$t/submits" "$t/pins" <<'PY'
import sys, datetime, statistics
sub = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[1])}
pin = {}
for l in open(sys.argv[2]):
    j, ts = l.split()
    pin[j] = int(datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%f").timestamp() * 1000)
lat = [pin[j] - sub[j] for j in sub if j in pin]
if lat:
    span = (max(pin[j] for j in sub if j in pin) - min(sub.values())) / 1000
    print("MEASURE: %d of %d jobs pinned; dispatch %.1f jobs/s (first submit to last pin %.1f s); submit->pinned median %.2f s, max %.2f s"
          % (len(lat), len(sub), len(lat) / span, span, statistics.median(lat) / 1000, max(lat) / 1000))
else:
    print("MEASURE: no job pinned")
PY

# 8b. a sibling late to answer (FedSurveyMaxAge, pol_fed_survey_late): c3 full (seen by
# agorad), then 100 one-GPU jobs, more than c1's 64 GPUs: some 36 are pinned to c2; while
# their copies are on their way (22.05 hands them over one a second), c2's slurmctld is
# stopped (SIGSTOP) for 10 s.  The round after does not wait for c2: its last answer
# stands in ("c2: still reading"; FedSurveyMaxAge 30 s here, not 5: a loaded host's rounds
# are slow) and the round ends while c2 is stopped (agorad.json: at every round's end);
# the next round takes the survey still in progress once c2 goes on (no "no answer"),
# and no job is pinned twice or copied to two clusters.  On 24.11 the copies arrive with
# the pins: the rounds wait for c2 (a MEASURE).
cancel_all # section 8's burst
printf 'FedSurveyMaxAge=30\n' >>"$W/c1/etc/agora.conf" && kill -HUP "$(cat "$W/run/agorad.pid")"
for i in 1 2 3 4; do on 3 sbatch -M c3 -A acct_a -N1 -w "c3n$i" --gres=gpu:8 -t 10 --wrap 'sleep 600' >/dev/null; done
c3_full() { [ "$(on 3 squeue --local -h -t R | wc -l)" -ge 4 ] && AGORAD_STATE=$W/agorad.json "$BUILD/contrib/agoractl/agoractl" fed 2>/dev/null | grep -qE '^c3 +yes +0 '; }
wait_for 30 c3_full || echo "# section 8b: c3's 4 jobs not seen running by agorad within 30 s"
burst1 100
c2_pinned() {
	local j n=0
	for j in "${ids[@]}"; do [ "$(winner "$j")" = c2 ] && n=$((n + 1)); done
	echo "$n" >"$t/c2n"
	[ "$n" -ge 10 ]
}
wait_for 30 c2_pinned || echo "# section 8b: only $(cat "$t/c2n") of 100 pinned to c2 within 30 s"
# stop c2 right after a round ended (agorad.json written) whose c2 answer
# was read afresh ("c2: N GPUs of pins on their way", not "still
# reading"): not in the middle of a round, whose will-run or heartbeat
# to c2 would wait, and not after a late answer, whose next round waits
# for c2 by design (22.05 only: on 24.11 no pin stays on its way)
from=$(($(wc -l <"$W/log/agorad.log") + 1))
m0=$(date -r "$W/agorad.json" +%s.%N 2>/dev/null || echo 0)
d=$(date +%s)
[ "${AGORA_DC_SLURM:-22.05}" = 22.05 ] && d=$((d + 20))
while [ "$(date +%s)" -lt $d ]; do
	m=$(date -r "$W/agorad.json" +%s.%N 2>/dev/null || echo 0)
	if [ "$m" != "$m0" ]; then
		m0=$m
		tail -n +"$from" "$W/log/agorad.log" | grep -E 'c2: (still reading|[0-9]+ GPUs of pins on their way)' |
			tail -n 1 | grep -q 'on their way' && break
	fi
	sleep 0.02
done
from=$(($(wc -l <"$W/log/agorad.log") + 1))
c2pid=$(cat "$W/run/c2-slurmctld.pid")
kill -STOP "$c2pid"
sleep 10
tail -n +"$from" "$W/log/agorad.log" >"$t/late.log"
state_at=$(date -r "$W/agorad.json" +%s.%N 2>/dev/null || echo 0)
kill -CONT "$c2pid"
late_n=$(grep -c 'c2: still reading' "$t/late.log")
# the first late round's time, and whether a round ended after it
late_at=$(sed -n 's/^\[\([^]]*\)\] c2: still reading.*/\1/p' "$t/late.log" | head -1)
if [ -n "$late_at" ]; then
	late_at=$(date -d "${late_at/T/ }" +%s.%N 2>/dev/null || echo 0)
else
	late_at=0
fi
rounds_late=$(awk -v s="$state_at" -v l="$late_at" 'BEGIN { print (l > 0 && s > l) ? 1 : 0 }')
wait_pinned "${ids[@]}"
sleep 3
unpinned=0
for j in "${ids[@]}"; do [ -n "$(winner "$j")" ] || unpinned=$((unpinned + 1)); done
printf '%s\n' "${ids[@]}" >"$t/ids8b"
# this section's jobs pinned more than once; running on more than one
# cluster (a pending origin record beside its sibling copy is normal)
twice=$(grep -h 'pinned to' "$W/log/agorad.log" | sed -n 's/^\[[^]]*\] JobId=\([0-9]*\) .*/\1/p' | grep -xFf "$t/ids8b" | sort | uniq -d | wc -l)
doubled=$(for c in 1 2 3; do on $c squeue --local -h -t R -o %i 2>/dev/null; done | grep -xFf "$t/ids8b" | sort | uniq -d | wc -l)
no_answer=$(tail -n +"$from" "$W/log/agorad.log" | grep -c 'c2: no answer within')
echo "MEASURE: c2 stopped 10 s with $(cat "$t/c2n") jobs pinned to it: $late_n rounds stood on its last answer; a round ended after the first of them while it was stopped: $([ "$rounds_late" = 1 ] && echo yes || echo no)"
if [ "${AGORA_DC_SLURM:-22.05}" = 22.05 ]; then
	[ "$late_n" -ge 1 ] && [ "$rounds_late" -ge 1 ] &&
		pass "c2 stopped with pins on their way: a round went on on its last answer and ended while c2 was stopped" ||
		fail "c2 stopped with pins on their way: no round went on without it ($late_n 'still reading', a round's end after it: $rounds_late)"
fi
[ "$unpinned" -eq 0 ] && [ "$twice" -eq 0 ] && [ "$doubled" -eq 0 ] && [ "$no_answer" -eq 0 ] &&
	pass "c2 stopped 10 s: every job pinned once, none running on two clusters, c2's survey taken when it went on" ||
	fail "c2 stopped 10 s: $unpinned not pinned, $twice pinned twice, $doubled running on two clusters, $no_answer 'no answer' for c2"
sed -i '/^FedSurveyMaxAge=30$/d' "$W/c1/etc/agora.conf" && kill -HUP "$(cat "$W/run/agorad.pid")"

# 9. a cancel at the origin right after the pins (last: it waits for the
# copies still on their way).  A burst of 120 one-GPU jobs, more than c1's
# 64 GPUs, so that some 50 are pinned to c2 and c3; once 40 are, the user
# cancels every job at the origin only, as scancel does.  On 22.05 the
# copies arrive one a second, after the cancel, and start; the cancels the
# origin forwards queue behind them (on the harness 49 of 130 such copies
# were running a minute after the cancel, the last ended after about
# two).  agorad cancels a live copy of a job that its origin shows
# cancelled (pol_fed_orphans) in the round after it arrives: no copy that
# started after the cancel may run 20 s.  On 24.11 the copies arrive with
# the pins and none starts after the cancel.
cancel_all # section 8b's burst
burst1 120
remote_pinned() {
	local j n=0
	for j in "${ids[@]}"; do
		case $(winner "$j") in c2 | c3) n=$((n + 1)) ;; esac
	done
	echo "$n" >"$t/remote"
	[ "$n" -ge 40 ]
}
wait_for 30 remote_pinned || echo "# section 9: only $(cat "$t/remote") of 120 pinned to c2/c3 within 30 s"
t_cancel_s=$(date +%s)
on 1 scancel -u root 2>/dev/null
gone=no max_age=0 late=0
for _ in $(seq 150); do
	now=$(date +%s)
	for c in 2 3; do
		while read -r id st; do
			s=$(date -d "$st" +%s 2>/dev/null) || continue
			[ "$s" -ge "$t_cancel_s" ] || continue
			# a copy that started after the cancel; an orphan if
			# its origin shows it cancelled (REVOKED: the origin
			# had granted its start before the cancel, and the
			# forwarded cancel ends it)
			if ! grep -qx "$id" "$t/late" 2>/dev/null; then
				echo "$id" >>"$t/late"
				late=$((late + 1))
				on 1 scontrol --local show job "$id" 2>/dev/null | grep -q 'JobState=CANCELLED' &&
					echo "$id" >>"$t/orphans"
			fi
			grep -qx "$id" "$t/orphans" 2>/dev/null || continue
			[ $((now - s)) -gt $max_age ] && max_age=$((now - s))
		done < <(on $c squeue --local -h -t R -o '%i %S' 2>/dev/null)
	done
	no_jobs && no_jobs_settled && { gone=yes; break; }
	sleep 1
done
reaped=$(grep -c 'a copy of a job cancelled at its origin (it arrived after the cancel): cancelled here' "$W/log/agorad.log")
orphans=$(wc -l <"$t/orphans" 2>/dev/null || echo 0)
echo "MEASURE: cancel at the origin: every copy gone after $(($(date +%s) - t_cancel_s)) s; $late copies started after the cancel, $orphans of them with the origin showing the job cancelled, the longest of those ran ${max_age} s; agorad cancelled $reaped on arrival"
[ $gone = yes ] && [ $max_age -le 20 ] &&
	pass "cancel at the origin after $(cat "$t/remote") remote pins: no copy left, no copy of a cancelled job ran over 20 s (longest ${max_age} s; $reaped cancelled by agorad)" ||
	fail "cancel at the origin after $(cat "$t/remote") remote pins: gone=$gone, a copy of a job cancelled at its origin ran ${max_age} s ($orphans such copies; left: $(left_jobs))"
# (no cancel_all here: nothing is checked after this, and the EXIT trap's
# agora-dc stop ends every job with its daemons)

echo "test_fed: $fails failure(s)"
[ $fails -eq 0 ]
