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
# Each run is made with each submitter, side by side, the ratios printed:
#   sbatch    S loops of `sbatch -A acct_a --gres=gpu:1 -t 2 --wrap ...`
#             (a process per job)
#   lib       agora-bench-submit (contrib/harness): S processes calling
#             libslurm's slurm_submit_batch_job with the job description
#             sbatch builds for those options, as fast as they can
#   paced     the same at RATE jobs/s over all of them (the goal's
#             arrival rate rather than a burst; not run by default)
# Submit time: the submitter's clock just before its submit (an upper
# bound on the latency: sbatch's own time counts); pinned time: agorad's
# own timestamp of the pin's last step ("pinned to C at S.ms" in its log).
# At winner: a pin ends at the origin; the job's copy reaches a remote
# winner through Slurm's federation agent.  A job pinned to its origin is
# there at its pin; for the others, from the last pin on, both clusters'
# queues are polled every second (up to AGORA_DISPATCH_ARRIVE_WAIT s) until
# every job has a live copy (not REVOKED) at the cluster it was pinned to
# (the first poll that sees it: a bound up to a second or two late):
# submit->at-winner p50/p99/max per winner, jobs not there in time counted
# (printed, not asserted; on 22.05 a remote winner takes about one job a
# second: doc/evaluation.md, "Pinned is not arrived").
# Asserted (exit 1 otherwise), so that both submitters' jobs are treated
# alike: every job is held at its origin by job_submit/agora (slurmctld's
# "Submitted held federated JobId=..." for each; in the capacity run,
# Priority=0 and the "fed hold v1: waiting" mark on each while agorad is
# paused) and pinned by agorad.  The numbers are printed, not asserted.
# The load average is printed before and after each run (a shared host).
# Needs root.
#
# Env: AGORA_DISPATCH_BASE_PORT [23000], AGORA_DISPATCH_WORKDIR
# [/tmp/agora-dc-dispatch], AGORA_DISPATCH_JOBS [1000],
# AGORA_DISPATCH_SUBMITTERS [8], AGORA_DISPATCH_WITH ["sbatch lib"]: the
# submitters, AGORA_DISPATCH_RUNS ["burst capacity"],
# AGORA_DISPATCH_RATE [150]: the paced submitter's jobs/s,
# AGORA_DISPATCH_ARRIVE_WAIT [180]: the longest wait for copies to reach
# their winners (0: not measured),
# AGORA_DISPATCH_AGORA_CONF [unset]: lines added to agora.conf,
# AGORA_DISPATCH_SCHED [unset]: a SchedulerParameters line for both
# clusters instead of the harness's (e.g. a sched_min_interval),
# AGORAD_BIN (its file must be named agorad), AGORA_SUBMIT_BIN,
# AGORA_PLUGIN_DIR, AGORA_BUILD.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
# AGORA_DC_SLURM=24.11: that release's sbatch, squeue and sdiag, as the
# harness' daemons
. "$repo/tests/integration/slurm_path.sh"
BUILD=${AGORA_BUILD:-$repo/_build}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
PLUGINS=${AGORA_PLUGIN_DIR:-$BUILD/stage/plugins}
W=${AGORA_DISPATCH_WORKDIR:-/tmp/agora-dc-dispatch}
BASE_PORT=${AGORA_DISPATCH_BASE_PORT:-23000}
N_JOBS=${AGORA_DISPATCH_JOBS:-1000}
SUBMITTERS=${AGORA_DISPATCH_SUBMITTERS:-8}
WITH=${AGORA_DISPATCH_WITH:-sbatch lib}
RUNS=${AGORA_DISPATCH_RUNS:-burst capacity}
RATE=${AGORA_DISPATCH_RATE:-150}
ARRIVE_WAIT=${AGORA_DISPATCH_ARRIVE_WAIT:-180}
SUBMIT_BIN=${AGORA_SUBMIT_BIN:-$BUILD/contrib/harness/agora-bench-submit}
DC="$repo/contrib/harness/agora-dc --workdir $W"

die() { echo "bench-dispatch: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (agora-dc)"
[ -x "$AGORAD_BIN" ] || die "$AGORAD_BIN: build agorad first"
case " $WITH " in *" lib "* | *" paced "*)
	[ -x "$SUBMIT_BIN" ] || die "$SUBMIT_BIN: build it first (make, with Slurm)" ;;
esac
t=$(mktemp -d /tmp/agora-dispatch.XXXXXX)
trap 'rm -rf "$t"' EXIT

cat >"$t/extra.conf" <<EOT
PriorityType=priority/multifactor
PrioritySiteFactorPlugin=site_factor/agora
PriorityCalcPeriod=1
SlurmctldPlugstack=slurmctld/agora
MaxJobCount=50000
EOT
[ -n "${AGORA_DISPATCH_SCHED:-}" ] && echo "SchedulerParameters=$AGORA_DISPATCH_SCHED" >>"$t/extra.conf"
cat >"$t/agora.conf" <<EOT
SchedulerInterval=1
FedAuction=yes
FedAuctionInterval=1
FedAuctionTimeout=300
EOT
# AGORA_DISPATCH_AGORA_CONF: more agora.conf lines (e.g. FedSurveyMaxAge=0)
[ -n "${AGORA_DISPATCH_AGORA_CONF:-}" ] && printf '%s\n' "$AGORA_DISPATCH_AGORA_CONF" >>"$t/agora.conf"
$DC --base-port "$BASE_PORT" --clusters 2 --nodes 8 --plugin-dir "$PLUGINS" \
	--conf-extra "$t/extra.conf" --agora-conf "$t/agora.conf" --agorad \
	--agorad-bin "$AGORAD_BIN" --fresh start >"$t/start.log" 2>&1 ||
	{
		tail "$t/start.log"
		# a half-started harness is this run's to stop; another run's
		# daemons are not
		grep -q 'has running daemons' "$t/start.log" || $DC stop >/dev/null 2>&1
		die "agora-dc start failed"
	}
# the daemons are this run's from here on: stop them at exit (not before,
# or a run refused because another one is running would stop that one's)
trap 'kill -CONT "$(cat "$W/run/agorad.pid" 2>/dev/null)" 2>/dev/null; $DC stop >/dev/null 2>&1; rm -rf "$t"' EXIT
export SLURM_CONF=$W/c1/etc/slurm.conf
ms() { date +%s%3N; }
# agorad's heartbeat (its first will-run) must have reached c1
sleep 4

loadavg() { echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) ($1)" >&2; }
submit() { # WITH OUT: N_JOBS jobs from SUBMITTERS at once, "jobid ms" lines
	local per=$(((N_JOBS + SUBMITTERS - 1) / SUBMITTERS)) s
	rm -f "$2".*
	if [ "$1" = lib ] || [ "$1" = paced ]; then
		local pace=()
		[ "$1" = paced ] && pace=(-r "$RATE")
		"$SUBMIT_BIN" -n "$N_JOBS" -p "$SUBMITTERS" -o "$2" -A acct_a \
			-g gpu:1 -t 2 -s 20 "${pace[@]}" ||
			echo "# $1: some jobs not submitted" >&2
	else
		for s in $(seq "$SUBMITTERS"); do
			(for _ in $(seq "$per"); do
				t0=$(ms)
				j=$(sbatch --parsable -A acct_a --gres=gpu:1 -t 2 -o /dev/null --wrap 'sleep 20' 2>/dev/null | cut -d';' -f1)
				[ -n "$j" ] && echo "$j $t0"
			done >"$2.$s") &
		done
		wait
	fi
	cat "$2".* | head -n "$N_JOBS" >"$2"
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
fail=0
check() { # NAME OK_COUNT WANT WHAT
	if [ "$2" -eq "$3" ]; then
		echo "# ok: $1: $2/$3 $4"
	else
		echo "# FAIL: $1: $2/$3 $4"
		fail=1
	fi
}
# HELD SUBMITS CTLD_FROM: the jobs slurmctld (c1) logged as submitted held
held_count() {
	tail -n +"$2" "$W/log/c1/slurmctld.log" |
		sed -n 's/.*Submitted held federated JobId=\([0-9]*\) .*/\1/p' |
		sort -u | join - <(cut -d' ' -f1 "$1" | sort -u) | wc -l
}
# WAITING SUBMITS: the jobs pending at c1 with priority 0 and the waiting mark
waiting_count() {
	scontrol --local -o show job 2>/dev/null |
		grep ' Priority=0 .*AdminComment=Agora: fed hold v1: waiting' |
		sed -n 's/^JobId=\([0-9]*\) .*/\1/p' | sort -u |
		join - <(cut -d' ' -f1 "$1" | sort -u) | wc -l
}
report() { # NAME SUBMITS LOG: one line of numbers, and NAME.num for ratios
	python3 - "$repo/tests/integration" "$@" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import dispatch_stats as ds
name, subs, log = sys.argv[2:5]
sub = ds.submits(subs)
pin = {j: p[2] for j, p in ds.pins(log, sub).items()}
lat = sorted(pin[j] - sub[j] for j in pin)
if not lat:
    print("%-16s no job pinned (of %d submitted)" % (name, len(sub)))
    sys.exit(0)
def q(p):
    return lat[ds.rank(len(lat), p)] / 1000
sspan = (max(sub.values()) - min(sub.values())) / 1000
span = (max(pin.values()) - min(sub.values())) / 1000
pspan = (max(pin.values()) - min(pin.values())) / 1000
v = (len(pin) / span, len(pin) / max(pspan, 0.001), q(0.5), q(0.99), lat[-1] / 1000,
     len(sub) / max(sspan, 0.001))
print("%-16s %4d/%4d pinned  %6.1f jobs/s (first submit to last pin %.1f s)  %6.1f pins/s (first to last pin %.1f s)  submit->pinned p50 %.2f s p99 %.2f s max %.2f s  (submitted at %.1f jobs/s)"
      % (name, len(pin), len(sub), v[0], span, v[1], pspan, v[2], v[3], v[4], v[5]))
open(subs + ".num", "w").write(" ".join("%.4f" % x for x in v) + "\n")
PY
}
# NAME SUBMITS LOG: poll both clusters' queues until every pinned job has
# started at its winner (or ARRIVE_WAIT s): when its copy was first seen
# there (a job won by its origin: at its pin) and when it was first seen
# running; one line of numbers each, with the fluid bound on the last
# start beside them (the jobs' GPU-seconds over the GPUs of both clusters)
arrive() {
	python3 - "$repo/tests/integration" "$@" "$ARRIVE_WAIT" "$W/c1/etc/slurm.conf" "$W/c2/etc/slurm.conf" <<'PY'
import os, re, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
import dispatch_stats as ds
name, subs, log, wait = sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
confs = {"c1": sys.argv[6], "c2": sys.argv[7]}
sub = ds.submits(subs)
won, at, run = {}, {}, {}
for j, (origin, winner, ms) in ds.pins(log, sub).items():
    won[j] = winner
    if winner == origin:  # its origin: there at the pin
        at[j] = ms
gpus = 0
for conf in confs.values():  # the harness's nodes: Gres=gpu:N each
    for l in open(conf):
        m = re.match(r"NodeName=(\S+).*Gres=gpu:(?:\w+:)?(\d+)", l)
        if m:
            r = re.match(r".*\[(\d+)-(\d+)\]", m.group(1))
            gpus += int(m.group(2)) * (int(r.group(2)) - int(r.group(1)) + 1 if r else 1)
end = time.time() + wait
started = ("RUNNING", "COMPLETING", "COMPLETED")
while True:
    now = int(time.time() * 1000)
    for c, conf in confs.items():
        out = subprocess.run(["squeue", "--local", "-h", "-t", "all", "-o", "%i %T"],
                             env=dict(os.environ, SLURM_CONF=conf),
                             capture_output=True, text=True).stdout
        for l in out.splitlines():
            f = l.split()
            if len(f) >= 2 and won.get(f[0]) == c and f[1] != "REVOKED":
                at.setdefault(f[0], now)
                if f[1] in started:
                    run.setdefault(f[0], now)
    if len(run) == len(won) or time.time() >= end:
        break
    time.sleep(1)
def q(lat, n, p):
    k = ds.rank(n, p)
    return "%.1f s" % (lat[k] / 1000) if k < len(lat) else "> %.0f s" % wait
def line(what, seen):
    parts = []
    for c in sorted(set(won.values())):
        js = [j for j in won if won[j] == c]
        lat = sorted(seen[j] - sub[j] for j in js if j in seen)
        parts.append("%s %d/%d p50 %s p99 %s max %s" % (c, len(lat), len(js), q(lat, len(js), 0.5),
                     q(lat, len(js), 0.99), q(lat, len(js), 1.0)))
    lat = sorted(seen[j] - sub[j] for j in seen)
    return ("%-16s %s: %d/%d within %.0f s  submit->%s p50 %s p99 %s max %s  (%s)"
            % (name, what, len(lat), len(won), wait, what, q(lat, len(won), 0.5),
               q(lat, len(won), 0.99), q(lat, len(won), 1.0), "; ".join(parts)))
print(line("at winner", at))
bound = ""
if gpus and sub:
    # every job 1 GPU for 20 s (both submitters' jobs): the last job
    # cannot start before the ones ahead of it ran, spread over every
    # GPU of both clusters (and not before its submit)
    job_s, span = 20.0, (max(sub.values()) - min(sub.values())) / 1000
    bound = "  (fluid bound on the last start: %.0f s after the first submit)" % max(
        span, (len(won) - gpus) * job_s / gpus if len(won) > gpus else 0.0)
print(line("started", run) + bound)
PY
}
rounds() { # LOG: agorad's rounds that had held jobs (the steps' times)
	grep -h "round [0-9]*:" "$1" | grep -v ": 0 held" | head -"${2:-5}" | sed 's/^/#   /'
}
# RUN: c1's slurmctld RPCs since the run began (sdiag -r at its start):
# count and slurmctld's time (its RPC handling, locks included) of the
# submits, the job updates (agorad's pins) and the job table reads
ctld_rpcs() {
	sdiag 2>/dev/null | awk -v run="$1" '
		/REQUEST_(SUBMIT_BATCH_JOB|UPDATE_JOB|JOB_INFO) / {
			n = $1; sub(/^REQUEST_/, "", n)
			for (i = 2; i <= NF; i++) {
				if ($i ~ /^count:/) { c = substr($i, 7) }
				if ($i ~ /^total_time:/) { t = substr($i, 12) }
			}
			s = s sprintf("  %s %d (%.2f s, %.2f ms each)", n, c, t / 1e6, c ? t / c / 1e3 : 0)
		}
		END { print "# c1 slurmctld RPCs in " run ":" s }'
}
on2() { SLURM_CONF=$W/c2/etc/slurm.conf "$@"; }
clear_jobs() {
	scancel -u root >/dev/null 2>&1
	on2 scancel -u root >/dev/null 2>&1
	sleep 5
}
apid=$(cat "$W/run/agorad.pid")

run() { # RUN WITH
	local name="$1-$2" from cfrom
	from=$(($(wc -l <"$W/log/agorad.log") + 1))
	cfrom=$(($(wc -l <"$W/log/c1/slurmctld.log") + 1))
	loadavg "before $name"
	sdiag -r >/dev/null 2>&1
	[ "$1" = capacity ] && { kill -STOP "$apid" || die "cannot pause agorad"; }
	t1=$(ms)
	submit "$2" "$t/$name"
	echo "# $name: $(wc -l <"$t/$name") jobs submitted by $SUBMITTERS $2 submitters in $((($(ms) - t1) / 1000)) s$([ "$1" = capacity ] && echo " while agorad was paused")" >&2
	if [ "$1" = capacity ]; then
		check "$name" "$(waiting_count "$t/$name")" "$(wc -l <"$t/$name")" \
			"jobs pending at the origin with Priority=0 and the 'fed hold v1: waiting' mark"
		kill -CONT "$apid"
	fi
	wait_pins "$t/$name" "$from"
	# agorad's lines of this run, read once: the pins are all there now
	tail -n +"$from" "$W/log/agorad.log" >"$t/$name.log"
	local arr=
	if [ "$ARRIVE_WAIT" -gt 0 ]; then
		arrive "$name" "$t/$name" "$t/$name.log" >"$t/$name.at" &
		arr=$!
	fi
	loadavg "after $name"
	ctld_rpcs "$name"
	check "$name" "$(held_count "$t/$name" "$cfrom")" "$(wc -l <"$t/$name")" \
		"jobs submitted held at the origin (slurmctld: 'Submitted held federated')"
	check "$name" "$(grep -c ' pinned to .* at ' "$t/$name.log")" "$(wc -l <"$t/$name")" \
		"jobs pinned by agorad"
	report "$name" "$t/$name" "$t/$name.log" | tee -a "$t/summary"
	rounds "$t/$name.log" 3
	[ -n "$arr" ] && wait "$arr" && tee -a "$t/summary" <"$t/$name.at"
	clear_jobs
}

for r in $RUNS; do
	for s in $WITH; do
		run "$r" "$s"
	done
done

echo "# summary ($N_JOBS jobs, $SUBMITTERS submitters, $(nproc) CPUs)"
cat "$t/summary"
set -- $WITH
if [ $# -ge 2 ]; then
	for r in $RUNS; do
		[ -s "$t/$r-$1.num" ] && [ -s "$t/$r-$2.num" ] || continue
		python3 - "$r" "$1" "$2" "$t/$r-$1.num" "$t/$r-$2.num" <<'PY'
import sys
r, a, b, fa, fb = sys.argv[1:6]
va = [float(x) for x in open(fa).read().split()]
vb = [float(x) for x in open(fb).read().split()]
names = ["jobs/s", "pins/s", "p50", "p99", "max", "submit rate"]
print("# %s, %s / %s: " % (r, b, a) + "  ".join(
    "%s %.2fx" % (n, y / x if x else float("nan")) for n, x, y in zip(names, va, vb)))
PY
	done
fi
exit "$fail"
