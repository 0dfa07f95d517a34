#!/bin/bash
# tests/load/burst.sh - a burst of jobs from the Philly slice on a 2 x 8 x 8
# agora-dc federation: cluster c1 runs Agora (the plugins of --plugin-dir,
# contrib/harness/agora-all.conf, agora.conf AuctionPartitions=batch), c2 runs
# stock Slurm (sched/backfill, no Agora plugin) in the same run.  Each cluster
# gets the same N/2 jobs (pinned with sbatch -M), submitted back to back.
#
#   burst.sh [--jobs N] [--short] [--max-sleep S] [--dep-percent P] [--seed K]
#            [--plugin-dir DIR] [--workdir DIR] [--base-port P] [--timeout S]
#            [--keep]
#
# Checks (TAP), each able to fail: every job is submitted; every job ends
# COMPLETED in sacct (none lost, none failed); every dependent job started at
# or after its parent's end.  Reports sdiag main/backfill cycle times per
# cluster, Agora's pass times and actions applied/dropped (from c1's
# slurmctld.log at debug level).  Exit 1 when a check fails.
set -uo pipefail

JOBS=10000
MAX_SLEEP=10
DEP_PCT=10
SEED=1
TIMEOUT=""
W=/tmp/agora-dc-load${AGORA_TEST_TAG:-}
BASE_PORT=$((23500 + ${AGORA_TEST_PORT_SHIFT:-0}))
CLUSTERS=2
PLUGIN_DIR=""
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) JOBS=${2:?}; shift ;;
	--short) JOBS=300; MAX_SLEEP=5 ;;
	--max-sleep) MAX_SLEEP=${2:?}; shift ;;
	--dep-percent) DEP_PCT=${2:?}; shift ;;
	--seed) SEED=${2:?}; shift ;;
	--plugin-dir) PLUGIN_DIR=${2:?}; shift ;;
	--workdir) W=${2:?}; shift ;;
	--base-port) BASE_PORT=${2:?}; shift ;;
	--timeout) TIMEOUT=${2:?}; shift ;;
	--keep) export AGORA_LOAD_KEEP=1 ;;
	-h | --help) sed -n '2,17p' "$0"; exit 0 ;;
	*) echo "burst.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
# shellcheck source=tests/load/lib.sh
. "$(dirname "$(readlink -f "$0")")/lib.sh"
PLUGIN_DIR=${PLUGIN_DIR:-${AGORA_PLUGIN_DIR:-$repo/_build/stage/plugins}}
[[ $JOBS =~ ^[0-9]+$ ]] && [ "$JOBS" -ge 2 ] || die "--jobs must be a number >= 2"
[[ $MAX_SLEEP =~ ^[0-9]+$ ]] && [ "$MAX_SLEEP" -ge 1 ] || die "--max-sleep must be >= 1"
PER=$((JOBS / CLUSTERS))
# generous: the GPU-seconds of one cluster's share on 64 GPUs, four times over
TIMEOUT=${TIMEOUT:-$((300 + PER * MAX_SLEEP / 8))}
IN=$W.in
STOCK_CLUSTERS=2
OUT=$IN/burst
rm -rf "$OUT"
mkdir -p "$OUT"

trap 'load_stop' EXIT
t0=$(date +%s)
"$repo/tests/load/mkjobs.py" "$TRACE" "$PER" "$SEED" "$MAX_SLEEP" "$DEP_PCT" >"$OUT/jobs.tsv" ||
	die "mkjobs.py failed"
load_start
t_up=$(date +%s)

# sdiag counters from zero; where c1's log stands before the burst
for ((c = 1; c <= CLUSTERS; c++)); do on "$c" sdiag -r >/dev/null || die "sdiag -r on c$c failed"; done
log_from=$(($(wc -l <"$W/log/c1/slurmctld.log") + 1))

# submit CLUSTER: the job list in order; a dependent job names its parent's id
submit() {
	local c=$1 idx gpus sl acct parent pj jid
	local -a ids dep
	while IFS=$'\t' read -r idx gpus sl acct parent; do
		dep=()
		pj=""
		if [ "$parent" -ge 0 ] && [ -n "${ids[$parent]:-}" ]; then
			pj=${ids[$parent]}
			dep=(--dependency="afterok:$pj")
		fi
		if jid=$(SLURM_CONF=$(conf_of "$c") sbatch --parsable -M "c$c" -p batch \
			-A "$acct" --gpus="$gpus" -t 2 -J "b$idx" -o /dev/null -e /dev/null \
			"${dep[@]}" --wrap "sleep $sl" 2>>"$OUT/sbatch.c$c.err"); then
			ids[$idx]=${jid%%;*}
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "c$c" "$idx" "${ids[$idx]}" "$gpus" \
				"$sl" "$acct" "$pj" >>"$OUT/submitted.tsv"
		else
			printf 'c%s\t%s\n' "$c" "$idx" >>"$OUT/not_submitted.tsv"
		fi
	done <"$OUT/jobs.tsv"
}
: >"$OUT/submitted.tsv"
: >"$OUT/not_submitted.tsv"
say "submitting $PER jobs to each of c1 (Agora) and c2 (stock), $(awk '$5 >= 0' "$OUT/jobs.tsv" | wc -l) with afterok"
ts=$(date +%s)
pids=()
for ((c = 1; c <= CLUSTERS; c++)); do
	submit "$c" &
	pids+=($!)
done
wait "${pids[@]}"
t_sub=$(date +%s)
say "submitted $(wc -l <"$OUT/submitted.tsv") jobs in $((t_sub - ts)) s"

# wait until no job is left in any queue
queued() { on 1 squeue --federation -h -o %i 2>/dev/null | wc -l; }
deadline=$((t_sub + TIMEOUT))
last=-1
while :; do
	q=$(queued)
	[ "$q" = 0 ] && break
	if [ "$(date +%s)" -ge "$deadline" ]; then
		say "timeout: $q jobs still queued after $TIMEOUT s"
		break
	fi
	if [ $(($(date +%s) % 30)) -lt 5 ] && [ "$q" != "$last" ]; then
		say "$q jobs queued"
		last=$q
	fi
	sleep 5
done
t_done=$(date +%s)
say "queues drained $((t_done - t_sub)) s after the last submission"

# sdiag now, before the accounting wait adds idle cycles
for ((c = 1; c <= CLUSTERS; c++)); do on "$c" sdiag >"$OUT/sdiag.c$c.txt" 2>&1; done
sed -n "${log_from},\$p" "$W/log/c1/slurmctld.log" | grep -E '[a-z_]+/agora: ' >"$OUT/agora.log" || true
for ((c = 1; c <= CLUSTERS; c++)); do
	grep -cE 'error|fatal' "$W/log/c$c/slurmctld.log" >"$OUT/errors.c$c.count" || true
done

# accounting lags slurmctld: wait until sacct has every job in a final state
sacct_dump() {
	for ((c = 1; c <= CLUSTERS; c++)); do
		on "$c" sacct -M "c$c" -a -X -n -P -S "$(date -d "@$((ts - 60))" +%Y-%m-%dT%H:%M:%S)" \
			-o JobIDRaw,JobName,State,Start,End,Account,ExitCode 2>/dev/null |
			sed "s/^/c$c|/"
	done >"$OUT/sacct.txt"
}
want=$(wc -l <"$OUT/submitted.tsv")
for _ in $(seq 30); do
	sacct_dump
	final=$(awk -F'|' '$4 !~ /PENDING|RUNNING|REQUEUED|SUSPENDED/' "$OUT/sacct.txt" | wc -l)
	[ "$final" -ge "$want" ] && break
	sleep 2
done
t_end=$(date +%s)

python3 "$repo/tests/load/burst_report.py" "$OUT" "$CLUSTERS" \
	"jobs=$JOBS per_cluster=$PER max_sleep=$MAX_SLEEP seed=$SEED submit_s=$((t_sub - ts)) drain_s=$((t_done - t_sub)) harness_s=$((t_up - t0)) total_s=$((t_end - t0))"
rc=$?
exit $rc
