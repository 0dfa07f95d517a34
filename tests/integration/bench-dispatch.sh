#!/bin/bash
# bench-dispatch.sh - federated dispatch through agorad (issue 18's harness
# goal: >= 100 jobs/s, p99 submit-to-pinned <= 3 s) on a 2-cluster
# agora-dc federation (8 nodes x 8 GPUs each).  Two runs of N jobs
# (1-GPU batch jobs, held at their origin by job_submit/agora):
#   burst     S submitters at once with agorad running: jobs/s = jobs
#             pinned / (first submit to last pin), and p50/p99/max of
#             submit-to-pinned per job
#   capacity  the same N submitted while agorad is paused (SIGSTOP; its
#             heartbeat keeps the holds on), then resumed: pins/s from
#             agorad's first to its last pin (what agorad can dispatch
#             when submission is not the limit)
# Submit time: the submitter's clock just before its sbatch (an upper
# bound on the latency: sbatch's own time counts); pinned time: agorad's
# own timestamp of the pin's last step ("pinned to C at S.ms" in its log).
# Not a test: it prints the numbers.  Needs root.
#
# Env: AGORA_DISPATCH_BASE_PORT [23000], AGORA_DISPATCH_WORKDIR
# [/tmp/agora-dc-dispatch], AGORA_DISPATCH_JOBS [1000],
# AGORA_DISPATCH_SUBMITTERS [8], AGORAD_BIN, AGORA_PLUGIN_DIR, AGORA_BUILD.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${AGORA_BUILD:-$repo/_build}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
PLUGINS=${AGORA_PLUGIN_DIR:-$BUILD/stage/plugins}
W=${AGORA_DISPATCH_WORKDIR:-/tmp/agora-dc-dispatch}
BASE_PORT=${AGORA_DISPATCH_BASE_PORT:-23000}
N_JOBS=${AGORA_DISPATCH_JOBS:-1000}
SUBMITTERS=${AGORA_DISPATCH_SUBMITTERS:-8}
DC="$repo/contrib/harness/agora-dc --workdir $W"

die() { echo "bench-dispatch: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (agora-dc)"
[ -x "$AGORAD_BIN" ] || die "$AGORAD_BIN: build agorad first"
t=$(mktemp -d /tmp/agora-dispatch.XXXXXX)
trap 'kill -CONT "$(cat "$W/run/agorad.pid" 2>/dev/null)" 2>/dev/null; $DC stop >/dev/null 2>&1; rm -rf "$t"' EXIT

cat >"$t/extra.conf" <<EOT
PriorityType=priority/multifactor
PrioritySiteFactorPlugin=site_factor/agora
PriorityCalcPeriod=1
SlurmctldPlugstack=slurmctld/agora
MaxJobCount=50000
EOT
cat >"$t/agora.conf" <<EOT
SchedulerInterval=1
FedAuction=yes
FedAuctionInterval=1
FedAuctionTimeout=300
EOT
$DC --base-port "$BASE_PORT" --clusters 2 --nodes 8 --plugin-dir "$PLUGINS" \
	--conf-extra "$t/extra.conf" --agora-conf "$t/agora.conf" --agorad \
	--agorad-bin "$AGORAD_BIN" --fresh start >"$t/start.log" 2>&1 ||
	{ tail "$t/start.log"; die "agora-dc start failed"; }
export SLURM_CONF=$W/c1/etc/slurm.conf
ms() { date +%s%3N; }
# agorad's heartbeat (its first will-run) must have reached c1
sleep 4

submit() { # OUT: N_JOBS jobs from SUBMITTERS loops, "jobid ms" lines
	local per=$(((N_JOBS + SUBMITTERS - 1) / SUBMITTERS)) s
	for s in $(seq "$SUBMITTERS"); do
		(for _ in $(seq "$per"); do
			t0=$(ms)
			j=$(sbatch --parsable -A acct_a --gres=gpu:1 -t 2 -o /dev/null --wrap 'sleep 20' 2>/dev/null | cut -d';' -f1)
			[ -n "$j" ] && echo "$j $t0"
		done >"$1.$s") &
	done
	wait
	cat "$1".* | head -n "$N_JOBS" >"$1"
}
wait_pins() { # SUBMITS FROM_LINE: until every job is pinned (or 300 s)
	local n want deadline=$(($(ms) + 300000))
	want=$(wc -l <"$1")
	while :; do
		n=$(tail -n +"$2" "$W/log/agorad.log" | grep -c ' pinned to .* at ')
		[ "$n" -ge "$want" ] && break
		[ "$(ms)" -lt "$deadline" ] || break
		sleep 1
	done
}
report() { # NAME SUBMITS LOG
	python3 - "$@" <<'PY'
import re, sys
name, subs, log = sys.argv[1:4]
sub = {l.split()[0]: int(l.split()[1]) for l in open(subs) if l.strip()}
pin = {}
for l in open(log):
    m = re.search(r"JobId=(\d+) \(origin \S+\) pinned to \S+ at (\d+)\.(\d{3})", l)
    if m and m.group(1) in sub:
        pin[m.group(1)] = int(m.group(2)) * 1000 + int(m.group(3))
lat = sorted(pin[j] - sub[j] for j in pin)
if not lat:
    print("%-9s no job pinned (of %d submitted)" % (name, len(sub)))
    sys.exit(0)
def q(p):
    return lat[min(len(lat) - 1, int(round(p * (len(lat) - 1))))] / 1000
span = (max(pin.values()) - min(sub.values())) / 1000
pspan = (max(pin.values()) - min(pin.values())) / 1000
print("%-9s %4d/%4d pinned  %6.1f jobs/s (first submit to last pin %.1f s)  %6.1f pins/s (first to last pin %.1f s)  submit->pinned p50 %.2f s p99 %.2f s max %.2f s"
      % (name, len(pin), len(sub), len(pin) / span, span, len(pin) / max(pspan, 0.001), pspan, q(0.5), q(0.99), lat[-1] / 1000))
PY
}

# burst: agorad running
t1=$(ms)
submit "$t/burst"
echo "# burst: $(wc -l <"$t/burst") jobs submitted by $SUBMITTERS submitters in $((($(ms) - t1) / 1000)) s ($((N_JOBS * 1000 / ($(ms) - t1 + 1))) jobs/s by sbatch)" >&2
wait_pins "$t/burst" 1
cp "$W/log/agorad.log" "$t/burst.log"
report burst "$t/burst" "$t/burst.log"
scancel -u root >/dev/null 2>&1
on2() { SLURM_CONF=$W/c2/etc/slurm.conf "$@"; }
on2 scancel -u root >/dev/null 2>&1
sleep 5

# capacity: agorad paused while the jobs arrive
from=$(($(wc -l <"$W/log/agorad.log") + 1))
apid=$(cat "$W/run/agorad.pid")
kill -STOP "$apid" || die "cannot pause agorad"
t1=$(ms)
submit "$t/cap"
echo "# capacity: $(wc -l <"$t/cap") jobs submitted in $((($(ms) - t1) / 1000)) s while agorad was paused" >&2
kill -CONT "$apid"
wait_pins "$t/cap" "$from"
tail -n +"$from" "$W/log/agorad.log" >"$t/cap.log"
report capacity "$t/cap" "$t/cap.log"
grep -h "round [0-9]*:" "$t/cap.log" | grep -v ": 0 held" | head -5 | sed 's/^/# /'
