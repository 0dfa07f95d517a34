#!/bin/bash
# tests/load/faults.sh - faults during a busy auction: one agora-dc cluster of
# 8 nodes x 8 GPUs with Agora (the plugins of --plugin-dir,
# contrib/harness/agora-all.conf, agora.conf AuctionPartitions=batch), a few
# hundred Philly-mix jobs (1-32 GPUs, 10% afterok) running and queued in the
# auction partition, and then:
#   - TRIALS times: submit 3 more jobs, wait a random 1.0-8.9 s, kill -9
#     slurmctld, restart it with agora-dc restart-ctld, wait until it answers
#   - once: restart slurmdbd (SIGTERM, then agora-dc start, which starts only
#     what is missing)
#   - drain one node and set another DOWN, both holding running jobs (and so
#     leases); both are resumed after the last trial
# Checks (TAP), each able to fail:
#   - jobs lost 0: every job id sbatch returned ends COMPLETED in sacct
#   - jobs left held with no reason 0: after the last trial, no pending job
#     has priority 0 or a held reason (nobody here holds jobs)
#   - ledger entries lost 0: every account with usage in
#     StateSaveLocation/agora_credit.json before the faults still has an
#     entry after them
#
#   faults.sh [--trials N] [--short] [--jobs N] [--seed K] [--plugin-dir DIR]
#             [--workdir DIR] [--base-port P] [--timeout S] [--keep] [--stock]
#
# --stock runs the same faults on stock Slurm (no Agora plugin loaded), to
# tell Slurm's own behaviour from Agora's; the ledger check is then skipped.
set -uo pipefail

TRIALS=20
JOBS=600
MAX_SLEEP=40
TLIMIT=2
SEED=2
TIMEOUT=900
W=/tmp/agora-dc-load-faults${AGORA_TEST_TAG:-}
BASE_PORT=$((29000 + ${AGORA_TEST_PORT_SHIFT:-0}))
PLUGIN_DIR=""
STOCK_CLUSTERS=""
while [ $# -gt 0 ]; do
	case $1 in
	--trials) TRIALS=${2:?}; shift ;;
	--short) TRIALS=3; JOBS=60; MAX_SLEEP=20; TLIMIT=1; TIMEOUT=240 ;;
	--jobs) JOBS=${2:?}; shift ;;
	--seed) SEED=${2:?}; shift ;;
	--plugin-dir) PLUGIN_DIR=${2:?}; shift ;;
	--workdir) W=${2:?}; shift ;;
	--base-port) BASE_PORT=${2:?}; shift ;;
	--timeout) TIMEOUT=${2:?}; shift ;;
	--keep) export AGORA_LOAD_KEEP=1 ;;
	--stock) STOCK_CLUSTERS=1 ;;
	-h | --help) sed -n '2,26p' "$0"; exit 0 ;;
	*) echo "faults.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
# shellcheck source=tests/load/lib.sh
. "$(dirname "$(readlink -f "$0")")/lib.sh"
PLUGIN_DIR=${PLUGIN_DIR:-${AGORA_PLUGIN_DIR:-$repo/_build/stage/plugins}}
[[ $TRIALS =~ ^[0-9]+$ ]] && [ "$TRIALS" -ge 1 ] || die "--trials must be a number >= 1"
[[ $JOBS =~ ^[0-9]+$ ]] && [ "$JOBS" -ge 1 ] || die "--jobs must be a number >= 1"
CLUSTERS=1
IN=$W.in
OUT=$IN/faults
rm -rf "$OUT"
mkdir -p "$OUT"
RANDOM=$SEED
C=$W/c1
LEDGER=$C/state/agora_credit.json
export SLURM_CONF=$C/etc/slurm.conf

n=0
failn=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); failn=$((failn + 1)); echo "not ok $n - $*"; }
diag() { sed 's/^/#   /' | head -20; }

trap 'load_stop' EXIT
t0=$(date +%s)
load_start
"$repo/tests/load/mkjobs.py" "$TRACE" "$((JOBS + 3 * TRIALS))" "$SEED" "$MAX_SLEEP" 10 >"$OUT/jobs.tsv" ||
	die "mkjobs.py failed"
: >"$OUT/submitted.tsv"
: >"$OUT/not_submitted.tsv"
declare -a ids
next=0
# submit_next K: the next K jobs of the list (a dependent job names its
# parent's id); an sbatch that fails while slurmctld is down is retried
submit_next() {
	local k=$1 idx gpus sl acct parent dep jid try
	while [ "$k" -gt 0 ] && IFS=$'\t' read -r idx gpus sl acct parent < <(sed -n "$((next + 1))p" "$OUT/jobs.tsv"); do
		next=$((next + 1))
		k=$((k - 1))
		dep=()
		[ "$parent" -ge 0 ] && [ -n "${ids[$parent]:-}" ] && dep=(--dependency="afterok:${ids[$parent]}")
		for try in 1 2 3; do
			if jid=$(sbatch --parsable -p batch -A "$acct" --gpus="$gpus" -t "$TLIMIT" -J "f$idx" \
				-o /dev/null -e /dev/null "${dep[@]}" --wrap "sleep $sl" 2>>"$OUT/sbatch.err"); then
				ids[$idx]=${jid%%;*}
				printf '%s\t%s\t%s\n' "$idx" "${ids[$idx]}" "$(date +%s.%N)" >>"$OUT/submitted.tsv"
				break
			fi
			sleep 2
		done
		[ -n "${ids[$idx]:-}" ] || echo "$idx" >>"$OUT/not_submitted.tsv"
	done
}
say "submitting $JOBS jobs"
submit_next "$JOBS"
say "$(wc -l <"$OUT/submitted.tsv") submitted; waiting for the ledger to record usage"

# the ledger before the faults: wait until it names accounts with usage
ledger_accounts() { # FILE -> account names with usage > 0, sorted
	python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(0)
for a in d.get("accounts", []):
    if a.get("raw", 0) > 0:
        print(a["name"])
PY
}
ledger_names() { # FILE -> every account name in it
	python3 -c 'import json,sys
try: d = json.load(open(sys.argv[1]))
except (OSError, ValueError): sys.exit(0)
print("\n".join(a["name"] for a in d.get("accounts", [])))' "$1"
}
# (stock Slurm has no ledger: give its jobs the same few seconds to start)
for _ in $(seq 60); do
	[ -n "$STOCK_CLUSTERS" ] && [ "$(squeue -h -t R | wc -l)" -gt 0 ] && sleep 5 && break
	[ -n "$(ledger_accounts "$LEDGER" 2>/dev/null)" ] && break
	sleep 1
done
cp "$LEDGER" "$OUT/ledger.before.json" 2>/dev/null || echo '{}' >"$OUT/ledger.before.json"
ledger_accounts "$OUT/ledger.before.json" | sort -u >"$OUT/ledger.before.names"
say "ledger before the faults: $(wc -l <"$OUT/ledger.before.names") accounts with usage; $(squeue -h -t R | wc -l) jobs running, $(squeue -h -t PD | wc -l) pending"

# classify lost|held FILE: each lost (or held) job, "window" when it was
# submitted, started or ended after slurmctld last wrote its job state
# before a kill -9, else LOST (HELD).  A kill -9 takes back what slurmctld
# did since its last save: stock Slurm's window, reported, not counted as a
# failure.  The save comes at most 5 s (SAVE_MAX_WAIT in
# src/slurmctld/state_save.c) after an event that asks for one (an RPC, a
# start by the main scheduler), but sched/backfill's starts ask for none: a
# job it started is saved only with the next event that does, or by the
# 300 s PERIODIC_CHECKPOINT (both 22.05 and 24.11; seen on 24.11: three
# backfill starts 10 s before a kill, recovered pending, started again,
# "launch failed requeued held").  So the window of a kill is from the
# job_state file's mtime just before it (less 1 s for a save in progress),
# or the 6 s before it, whichever is longer.
classify() {
	python3 - "$1" "$OUT" "$W/log/c1/slurmctld.log" "$2" <<'PY'
import glob, os, re, sys
from datetime import datetime
mode, out, log, data = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
# kills.txt: "kill time [job_state mtime just before]" per kill
kills = []
for x in open(out + "/kills.txt"):
    f = x.split()
    if f:
        k = float(f[0])
        saved = float(f[1]) if len(f) > 1 and float(f[1]) > 0 else k
        kills.append((k, min(k - 6.0, saved - 1.0), saved))
kills.sort()
sub = [l.rstrip("\n").split("\t") for l in open(out + "/submitted.tsv") if l.strip()]
events = {}  # job id -> times of start and end lines in slurmctld.log
pat = re.compile(r"\[([0-9T:.-]+)\] (?:_job_complete: JobId=([0-9]+) done|"
                 r"sched: Allocate JobId=([0-9]+)|.*_start_job: Started JobId=([0-9]+))")
for l in open(log, errors="replace"):
    m = pat.match(l)
    if m:
        t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f").timestamp()
        kind = "ended" if m.group(2) else "started"
        jid = m.group(2) or m.group(3) or m.group(4)
        events.setdefault(jid, []).append((kind, t))
# jobs whose slurmstepd could not start on their node (slurmd: "Launching
# batch job J", then "_forkexec_slurmstepd: ... failed", e.g. EAGAIN on a
# loaded host): slurmd asks slurmctld to requeue them held ("launch failed
# requeued held"), stock Slurm with or without Agora
stepd_fail = set()
for f in glob.glob(os.path.join(os.path.dirname(log), "slurmd.*.log")):
    last, gap = None, 0
    for l in open(f, errors="replace"):
        m = re.search(r"Launching batch job ([0-9]+) ", l)
        if m:
            last, gap = m.group(1), 0
        elif last and "_forkexec_slurmstepd" in l and "fail" in l:
            stepd_fail.add(last)
            last = None
        elif last:
            gap += 1
            if gap > 3:
                last = None
def launch(jid):
    return jid in stepd_fail
def why(jid, t_sub):
    w = []
    for kind, t in [("submitted", t_sub)] + events.get(jid, []):
        ks = [(k - t, k - saved) for k, lo, saved in kills if lo <= t < k]
        if ks:
            before, since = min(ks)
            w.append("%s %.1f s before a kill -9 (job state last saved %.1f s"
                     " before it)" % (kind, before, since))
    return w
t_of = {jid: float(t) for idx, jid, t in sub}
# afterok parents (jobs.tsv: index, gpus, sleep, account, parent index)
parent_idx = {}
for l in open(out + "/jobs.tsv"):
    f = l.split("\t")
    if len(f) >= 5 and int(f[4]) >= 0:
        parent_idx[f[0]] = f[4].strip()
id_of = {idx: jid for idx, jid, t in sub}
if mode == "lost":
    done = set()
    for l in open(data):
        f = l.rstrip("\n").split("|")
        if len(f) >= 3 and f[2].startswith("COMPLETED"):
            done.add((f[0], f[1]))
    cls = {}
    for idx, jid, t in sub:  # in submission order: parents first
        if (jid, "f" + idx) in done:
            continue
        w = why(jid, float(t))
        p = parent_idx.get(idx)
        if not w and p in cls and cls[p] in ("window", "launch"):
            w = ["its afterok parent %s was lost in the window" % id_of.get(p)]
        if not w and launch(jid):
            cls[idx] = "launch"
            w = ["slurmstepd could not start on its node: Slurm requeued it held"]
        else:
            cls[idx] = "window" if w else "LOST"
        print("%s %s f%s" % (cls[idx], jid, idx) + (": " + "; ".join(w) if w else ""))
else:  # held: lines "id|priority|reason"
    for l in open(data):
        jid = l.split("|")[0]
        w = why(jid, t_of.get(jid, 0.0))
        c = "window" if w else "HELD"
        if not w and launch(jid) and "launch failed" in l:
            c, w = "launch", ["slurmstepd could not start on its node"]
        print("%s %s" % (c, l.strip()) + (": " + "; ".join(w) if w else ""))
PY
}

ctld_pid() { cat "$W/run/c1-slurmctld.pid" 2>/dev/null; }
# a node that runs a job now, other than $1
busy_node() {
	scontrol show hostnames "$(squeue -h -t R -o '%N' | paste -sd,)" 2>/dev/null |
		grep -vx "${1:-none}" | shuf -n1 --random-source=<(yes "$SEED")
}
ev_drain=$(((TRIALS + 2) / 4)); [ "$ev_drain" -ge 1 ] || ev_drain=1
ev_dbd=$(((TRIALS + 1) / 2))
ev_down=$(((3 * TRIALS + 2) / 4))
drained="" downed=""
restart_ms=()
restart_fail=0
for ((i = 1; i <= TRIALS; i++)); do
	submit_next 3
	sleep $((1 + RANDOM % 8)).$((RANDOM % 10))
	# slurmctld's accounting records wait in its DBD agent queue (memory
	# only: a kill -9 loses them, Slurm saves the queue at a clean
	# shutdown) until slurmdbd takes them; after the slurmdbd restart the
	# agent retries its connection only every 10 s, and a kill then lost
	# the records of jobs that ran and completed (sacct never had them;
	# seen on 24.11).  That is Slurm's accounting window, not the state
	# save's: the kill waits for an empty queue (30 s at most)
	for _ in $(seq 60); do
		[ "$(sdiag 2>/dev/null | sed -n 's/^DBD Agent queue size: *//p')" = 0 ] && break
		sleep 0.5
	done
	pid=$(ctld_pid)
	running=$(squeue -h -t R 2>/dev/null | wc -l)
	if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmctld ]; then
		saved=$(stat -c %.9Y "$W/c1/state/job_state" 2>/dev/null || echo 0)
		kill -9 "$pid"
		echo "$(date +%s.%N) $saved" >>"$OUT/kills.txt"
	else
		notok "trial $i: slurmctld is not running before the kill"
		continue
	fi
	ts=$(date +%s%N)
	if "$HARNESS" --workdir "$W" restart-ctld 1 >"$OUT/restart.$i.out" 2>&1; then
		restart_ms+=($((($(date +%s%N) - ts) / 1000000)))
		say "trial $i: kill -9 with $running jobs running; back in ${restart_ms[-1]} ms"
	else
		restart_fail=$((restart_fail + 1))
		notok "trial $i: slurmctld restarts after kill -9"
		tail -5 "$OUT/restart.$i.out" | diag
		break
	fi
	if [ "$i" = "$ev_drain" ]; then
		drained=$(busy_node)
		if [ -n "$drained" ]; then
			scontrol update nodename="$drained" state=drain reason="load test: drain" &&
				say "drained $drained (jobs: $(squeue -h -t R -w "$drained" -o %i | tr '\n' ' '))"
		fi
	fi
	if [ "$i" = "$ev_dbd" ]; then
		dpid=$(cat "$W/run/slurmdbd.pid" 2>/dev/null)
		if [ -n "$dpid" ] && [ "$(cat "/proc/$dpid/comm" 2>/dev/null)" = slurmdbd ]; then
			kill -TERM "$dpid"
			while kill -0 "$dpid" 2>/dev/null; do sleep 0.2; done
			# agora-dc start rewrites slurm.conf: a stock run rewrites it back
			if "$HARNESS" "${HARNESS_ARGS[@]}" start >"$OUT/restart-dbd.out" 2>&1 &&
				{ [ -z "$STOCK_CLUSTERS" ] || load_stock_conf 1; }; then
				say "slurmdbd restarted (pid $(cat "$W/run/slurmdbd.pid"))"
			else
				notok "slurmdbd restarts"
				tail -5 "$OUT/restart-dbd.out" | diag
			fi
		fi
	fi
	if [ "$i" = "$ev_down" ]; then
		downed=$(busy_node "$drained")
		if [ -n "$downed" ]; then
			echo "$downed: $(squeue -h -t R -w "$downed" -o %i | tr '\n' ' ')" >"$OUT/downed.jobs"
			scontrol update nodename="$downed" state=down reason="load test: down" &&
				say "set $downed DOWN (jobs: $(cut -d: -f2 "$OUT/downed.jobs"))"
		fi
	fi
done
[ "$restart_fail" = 0 ] && ok "slurmctld came back after each of $TRIALS kill -9 (restart ms: ${restart_ms[*]})"
[ -n "$drained" ] && ok "drained $drained while it ran jobs" || notok "found a busy node to drain"
[ -n "$downed" ] && ok "set $downed DOWN while it ran jobs" || notok "found a busy node to set DOWN"

# held with no reason: a few seconds after the last restart
sleep 5
squeue -h -t PD -o '%i|%Q|%r' >"$OUT/pending.after"
awk -F'|' '$2 == 0 || $3 ~ /[Hh]eld/ || $3 == ""' "$OUT/pending.after" >"$OUT/held.after"
# a job slurmctld started in the seconds before a kill -9, and started again
# after the restart, fails its second launch and is requeued held (stock
# Slurm); those are reported as the save window, like lost jobs below
touch "$OUT/kills.txt"
held=$(classify held "$OUT/held.after")
nheld=$(grep -c '^HELD' <<<"$held")
nheldwin=$(grep -c '^window' <<<"$held")
nheldl=$(grep -c '^launch' <<<"$held")
if [ "$nheld" = 0 ]; then
	ok "no pending job is held without a reason after the faults ($(wc -l <"$OUT/pending.after") pending, $nheldwin held in the save window, $nheldl by Slurm after a slurmstepd that could not start)"
else
	notok "no pending job is held without a reason after the faults"
	grep '^HELD' <<<"$held" | diag
fi
grep -E '^(window|launch)' <<<"$held" | sed 's/^/# /'
for j in $(grep '^window' <<<"$held" | awk '{print $2}' | cut -d'|' -f1); do
	scontrol release "$j" # so the job can still complete: counted once, above
done
for nd in $drained $downed; do
	# ReturnToService=2 may have brought the DOWN node back already
	scontrol show node "$nd" | grep -qE 'State=[A-Z+]*(DRAIN|DOWN)' &&
		scontrol update nodename="$nd" state=resume
done

# A job started before a kill -9 and started again after it makes slurmd
# refuse the second launch, and Slurm drains the node ("Duplicate jobid");
# an admin would resume it, so does the test (counted in the summary).
dupdrain=$(sinfo -h -R -o '%E|%N' | awk -F'|' '$1 == "Duplicate jobid" {print $2}' | paste -sd,)
ndupdrain=0
if [ -n "$dupdrain" ]; then
	ndupdrain=$(scontrol show hostnames "$dupdrain" | wc -l)
	say "resuming $ndupdrain nodes Slurm drained for a duplicate job id: $dupdrain"
	scontrol update nodename="$dupdrain" state=resume
fi

# every job to its end; stop early when nothing runs and every pending job
# waits for a dependency that can no longer be met (its parent was lost)
deadline=$(($(date +%s) + TIMEOUT))
stuck=0
while [ "$(squeue -h | wc -l)" -gt 0 ] && [ "$(date +%s)" -lt "$deadline" ]; do
	if [ "$(squeue -h -t R,CG | wc -l)" = 0 ] &&
		[ -z "$(squeue -h -t PD -o '%r' | grep -vx 'Dependency\|DependencyNeverSatisfied')" ]; then
		stuck=$((stuck + 1))
		[ "$stuck" -ge 6 ] && { say "only jobs with unmet dependencies are left"; break; }
	else
		stuck=0
	fi
	sleep 5
done
squeue -h -o '%i|%T|%Q|%r' >"$OUT/left.after"
[ -s "$OUT/left.after" ] && say "left in the queue: $(wc -l <"$OUT/left.after") jobs (see $OUT/left.after)"

# accounting lags slurmctld: wait until sacct has every job COMPLETED, or,
# when some cannot (lost in the save window: most runs lose a few), until
# nothing more is on its way: slurmctld's DBD agent queue is empty and two
# sacct dumps 2 s apart are the same (else every such run waited out all
# 30 rounds, a minute)
want=$(wc -l <"$OUT/submitted.tsv")
prev=""
for _ in $(seq 30); do
	sacct -a -X -n -P -S "$(date -d "@$((t0 - 60))" +%Y-%m-%dT%H:%M:%S)" \
		-o JobIDRaw,JobName,State,Start,End >"$OUT/sacct.txt" 2>/dev/null
	[ "$(grep -c '|COMPLETED|' "$OUT/sacct.txt")" -ge "$want" ] && break
	cur=$(cat "$OUT/sacct.txt")
	[ -n "$prev" ] && [ "$cur" = "$prev" ] &&
		[ "$(sdiag 2>/dev/null | sed -n 's/^DBD Agent queue size: *//p')" = 0 ] && break
	prev=$cur
	sleep 2
done
# A job is lost when no sacct record has its id, its name and COMPLETED (a
# restarted slurmctld can hand out a lost job's id again); classify tells
# the save window from a real loss.
classify lost "$OUT/sacct.txt" >"$OUT/lost.txt"
nlost=$(grep -c '^LOST' "$OUT/lost.txt")
nwin=$(grep -c '^window' "$OUT/lost.txt")
nlaunch=$(grep -c '^launch' "$OUT/lost.txt")
if [ "$nlost" = 0 ]; then
	ok "jobs lost 0: $((want - nwin - nlaunch)) of $want submitted jobs COMPLETED, $nwin lost in slurmctld's state-save window (after its last job-state save before a kill -9), $nlaunch held by Slurm after a slurmstepd that could not start on the host"
else
	notok "jobs lost 0: $nlost of $want submitted jobs did not complete (outside the state-save window)"
	grep '^LOST' "$OUT/lost.txt" | diag
fi
grep -E '^(window|launch)' "$OUT/lost.txt" | sed 's/^/# /'
nns=$(grep -c . "$OUT/not_submitted.tsv")
[ "$nns" = 0 ] && ok "every sbatch got a job id" || notok "$nns jobs could not be submitted"

# the ledger after: every account with usage before still has an entry
sleep 1
cp "$LEDGER" "$OUT/ledger.after.json" 2>/dev/null || echo '{}' >"$OUT/ledger.after.json"
ledger_names "$OUT/ledger.after.json" | sort -u >"$OUT/ledger.after.names"
gone=$(comm -23 "$OUT/ledger.before.names" "$OUT/ledger.after.names")
nbefore=$(grep -c . "$OUT/ledger.before.names")
if [ -n "$STOCK_CLUSTERS" ]; then
	ok "ledger check # SKIP stock Slurm keeps no Agora ledger"
elif [ "$nbefore" -gt 0 ] && [ -z "$gone" ]; then
	ok "ledger entries lost 0: all $nbefore accounts with usage before the faults are in $LEDGER after"
else
	notok "ledger entries lost 0 ($nbefore accounts with usage before; gone: $(echo $gone))"
fi
requeued=$(grep -c 'Requeuing JobId' "$W/log/c1/slurmctld.log" || true)

# summary
mean_ms=$(printf '%s\n' "${restart_ms[@]}" | awk '{s += $1; if ($1 > m) m = $1} END {if (NR) printf "%d|%d", s / NR, m; else print "n/a|n/a"}')
echo
echo "# faults: $([ -n "$STOCK_CLUSTERS" ] && echo "stock Slurm" || echo "Agora") trials=$TRIALS jobs=$want seed=$SEED total_s=$(($(date +%s) - t0))"
echo "# | kill -9 trials | ctld restart mean ms | max ms | slurmdbd restarts | drained | down | jobs submitted | jobs lost | lost in the save window | held without reason | held in the save window | nodes drained "Duplicate jobid" | ledger accounts before | ledger entries lost | requeues |"
echo "# |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
echo "# | ${#restart_ms[@]} | ${mean_ms%|*} | ${mean_ms#*|} | 1 | ${drained:-none} | ${downed:-none} | $want | $nlost | $nwin | $nheld | $nheldwin | $ndupdrain | $nbefore | $(grep -c . <<<"$gone") | $requeued |"
echo
echo "$((n - failn)) passed, $failn failed"
[ "$failn" = 0 ]
