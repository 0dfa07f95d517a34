#!/bin/bash
# tests/integration/run.sh - end-to-end tests of Agora on a local federation.
#
# Starts contrib/harness/agora-dc once (2 clusters x 8 nodes x 8 fake GPUs,
# base port 27000, its own work dir), runs the tests below with plain Slurm
# commands, prints TAP ("ok N - name (1.2 s)" / "not ok N - ..."), then a
# final "N passed, M failed" line, and stops the harness.  Exit status is
# non-zero if any test failed.
#
# Must run as root (the harness starts daemons).  Environment:
#   AGORA_IT_WORKDIR      work dir            [/tmp/agora-it]
#   AGORA_IT_BASE_PORT    harness base port   [27000]
#   AGORA_IT_HARNESS_ARGS extra harness options, e.g.
#                         "--no-plugin-dir --sched sched/backfill"
#   AGORA_IT_KEEP=1       leave the harness running afterwards (debugging)
#   AGORA_IT_ONLY=REGEX   run only the tests whose name matches
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
# AGORA_DC_SLURM=24.11: that release's Slurm commands, like the daemons
# shellcheck source=tests/integration/slurm_path.sh
. "$here/slurm_path.sh"
W=${AGORA_IT_WORKDIR:-/tmp/agora-it${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_IT_BASE_PORT:-$((27000 + ${AGORA_TEST_PORT_SHIFT:-0}))}
read -r -a HARGS <<<"${AGORA_IT_HARNESS_ARGS:-}"
# With Agora's plugins built, switch all of Agora on (as an admin would:
# contrib/harness/agora-all.conf) unless the caller chose its own options.
if [ -z "${AGORA_IT_HARNESS_ARGS:-}" ] &&
	[ -f "${AGORA_PLUGIN_DIR:-$repo/_build/stage/plugins}/site_factor_agora.so" ]; then
	HARGS=(--plugin-dir "${AGORA_PLUGIN_DIR:-$repo/_build/stage/plugins}"
		--conf-extra "$repo/contrib/harness/agora-all.conf")
fi
ONLY=${AGORA_IT_ONLY:-}

n_run=0
n_pass=0
n_fail=0
DIAG_FILE=""

now_ms() { date +%s%3N; }
secs() { # START_MS -> "1.2"
	local d=$(($(now_ms) - $1))
	printf '%d.%d' $((d / 1000)) $((d % 1000 / 100))
}
# note MSG: diagnostic shown (as TAP comments) if the test fails; a file, so
# that notes from command substitutions (subshells) are kept too
note() { printf '%s\n' "$*" >>"$DIAG_FILE"; }
fail() {
	note "$*"
	return 1
}

harness() { "$HARNESS" --workdir "$W" "$@"; }
conf() { echo "$W/c$1/etc/slurm.conf"; }
# on N CMD...: a Slurm client command with cluster cN's configuration
on() {
	local c=$1
	shift
	SLURM_CONF=$(conf "$c") "$@"
}

# run_test NAME FUNCTION [ARGS...]
run_test() {
	local name=$1 t0 rc
	shift
	if [ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]]; then
		return 0
	fi
	n_run=$((n_run + 1))
	: >"$DIAG_FILE"
	t0=$(now_ms)
	"$@"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		n_pass=$((n_pass + 1))
		echo "ok $n_run - $name ($(secs "$t0") s)"
	elif [ "$rc" -eq 77 ]; then
		n_pass=$((n_pass + 1))
		echo "ok $n_run - $name # SKIP $(head -1 "$DIAG_FILE")"
		return 0
	else
		n_fail=$((n_fail + 1))
		echo "not ok $n_run - $name ($(secs "$t0") s)"
	fi
	[ "$rc" -eq 0 ] || sed 's/^/#   /' "$DIAG_FILE"
}

# ---- job helpers ------------------------------------------------------------
# submit N SBATCH_ARGS...: sbatch -M cN, prints the job id
submit() {
	local c=$1 out
	shift
	out=$(on 1 sbatch --parsable -M "c$c" "$@" 2>&1) || {
		note "sbatch -M c$c $* failed: $out"
		return 1
	}
	echo "${out%%;*}"
}

# job_field N JOBID FIELD: a Key=Value field of 'scontrol show job'
job_field() {
	on 1 scontrol -M "c$1" show job -o "$2" 2>/dev/null |
		tr ' ' '\n' | sed -n "s/^$3=//p" | head -1
}

# wait_running N JOBID [TIMEOUT]
wait_running() {
	local c=$1 id=$2 t=${3:-30} deadline st
	deadline=$(($(now_ms) + t * 1000))
	while :; do
		st=$(job_field "$c" "$id" JobState)
		[ "$st" = RUNNING ] && return 0
		case $st in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY)
			fail "job $id on c$c is $st before we saw it RUNNING"
			return 1 ;;
		esac
		if [ "$(now_ms)" -ge "$deadline" ]; then
			fail "job $id on c$c not RUNNING after ${t}s (state ${st:-unknown}, reason $(job_field "$c" "$id" Reason))"
			return 1
		fi
		sleep 0.2
	done
}

# sacct_state CLUSTERS JOBID: "STATE|EXITCODE|CLUSTER|ALLOCTRES" lines
sacct_state() {
	on 1 sacct -M "$1" -X -n -P -j "$2" -o State,ExitCode,Cluster,AllocTRES 2>/dev/null
}

# wait_completed CLUSTERS JOBID [TIMEOUT]: accounting says COMPLETED 0:0
wait_completed() {
	local cl=$1 id=$2 t=${3:-60} deadline out
	deadline=$(($(now_ms) + t * 1000))
	while :; do
		out=$(sacct_state "$cl" "$id")
		if grep -q '^COMPLETED|0:0|' <<<"$out"; then
			return 0
		fi
		if grep -qE '^(FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE)' <<<"$out"; then
			fail "job $id did not complete: $(tr '\n' ';' <<<"$out")"
			return 1
		fi
		if [ "$(now_ms)" -ge "$deadline" ]; then
			fail "job $id not COMPLETED after ${t}s; sacct: $(tr '\n' ';' <<<"$out")"
			return 1
		fi
		sleep 0.3
	done
}

# gres_idx N JOBID: the "GRES=gpu...(IDX:...)" items of 'scontrol show job -d'
gres_idx() {
	on 1 scontrol -M "c$1" show job -d "$2" 2>/dev/null |
		grep -o 'Nodes=[^ ]* .*GRES=[^ ]*' | sed 's/ CPU_IDs.*GRES=/ GRES=/'
}

# ---- tests ------------------------------------------------------------------
t_harness_start() {
	local out
	harness stop >/dev/null 2>&1
	if ! out=$(harness --fresh --base-port "$BASE_PORT" "${HARGS[@]}" start 2>&1); then
		note "$out"
		return 1
	fi
	note "$out"
	grep -E 'synced|forcing|idle and federated' <<<"$out" | sed 's/^/# /'
	local c n
	for c in 1 2; do
		n=$(on "$c" sinfo --local -h -N -t idle -o %N | wc -l)
		[ "$n" -eq 8 ] || fail "c$c has $n idle nodes, want 8" || return 1
	done
	out=$(on 1 scontrol show federation)
	grep -q 'Sibling: *c2:.*Synced:Yes' <<<"$out" ||
		fail "federation not synced: $out" || return 1
	mkdir -p "$W/jobs"
}

t_start_idempotent() {
	local before after out
	before=$(cat "$W"/run/*.pid | sort | paste -sd' ')
	out=$(harness --base-port "$BASE_PORT" "${HARGS[@]}" start 2>&1) ||
		fail "second start failed: $out" || return 1
	note "$out"
	after=$(cat "$W"/run/*.pid | sort | paste -sd' ')
	[ "$before" = "$after" ] || fail "second start changed daemons: $before -> $after" || return 1
	grep -q 'already running' <<<"$out" || fail "second start did not report running daemons" || return 1
}

t_port_refused() {
	local other out rc=0
	other=$(mktemp -d)
	out=$("$HARNESS" --workdir "$other" --base-port "$BASE_PORT" "${HARGS[@]}" start 2>&1) || rc=$?
	note "$out"
	# nothing may have been started for the refused instance
	local started
	started=$(cat "$other"/run/*.pid 2>/dev/null)
	rm -rf "$other"
	[ "$rc" -ne 0 ] || fail "a second instance on the same ports started" || return 1
	[ -z "$started" ] || fail "the refused instance started pids $started" || return 1
	grep -q "port $((BASE_PORT + 1)) (for MariaDB) is already in use.*mariadbd" <<<"$out" ||
		fail "the refusal does not name port $((BASE_PORT + 1)) and mariadbd" || return 1
}

# GPU job of one shape on both clusters:
# t_gpu_job LABEL GPUS_PER_NODE NODES EXPECTED_IDX SBATCH_ARGS...
t_gpu_job() {
	local label=$1 g=$2 nn=$3 want=$4 c id ids=() out lines
	shift 4
	for c in 1 2; do
		id=$(submit "$c" -J "it-$label" -o "$W/jobs/$label-c$c.out" "$@" \
			--wrap "srun -l bash -c 'echo node=\$SLURMD_NODENAME cvd=\$CUDA_VISIBLE_DEVICES'; sleep 2") ||
			return 1
		ids[c]=$id
	done
	for c in 1 2; do
		wait_running "$c" "${ids[c]}" || return 1
		out=$(gres_idx "$c" "${ids[c]}")
		note "c$c job ${ids[c]}: $(tr '\n' ';' <<<"$out")"
		# 'scontrol show job -d' groups nodes with the same allocation
		# (Nodes=c1n[1-2] ... GRES=gpu:8(IDX:0-7)): count the nodes.
		lines=$(grep "GRES=gpu[^ ]*:$g(IDX:$want)\$" <<<"$out" |
			sed -n 's/^Nodes=\([^ ]*\) .*/\1/p' | paste -sd, -)
		lines=$(on 1 scontrol show hostnames "$lines" 2>/dev/null | wc -l)
		[ "$lines" -eq "$nn" ] ||
			fail "c$c: want $nn node(s) with gpu:$g(IDX:$want) in scontrol show job -d" ||
			return 1
	done
	for c in 1 2; do
		wait_completed "c$c" "${ids[c]}" || return 1
		out=$(sacct_state "c$c" "${ids[c]}")
		grep -q "|c$c|.*gres/gpu=$((g * nn))" <<<"$out" ||
			fail "c$c: sacct does not show gres/gpu=$((g * nn)) on c$c: $out" || return 1
		# every task saw exactly G devices
		out=$(cat "$W/jobs/$label-c$c.out" 2>/dev/null)
		lines=$(grep -cE "cvd=$(seq -s, 0 $((g - 1)))\$" <<<"$out")
		[ "$lines" -eq "$nn" ] ||
			fail "c$c: want $nn task(s) with CUDA_VISIBLE_DEVICES=0..$((g - 1)); output: $out" ||
			return 1
	done
}

t_federated_job() {
	local id out where
	id=$(on 1 sbatch --parsable --gres=gpu:1 -J it-fed -o "$W/jobs/fed.out" --wrap 'sleep 6' 2>&1) ||
		fail "sbatch (federated) failed: $id" || return 1
	id=${id%%;*}
	note "job $id"
	# visible in the federation-wide view (origin record) ...
	out=$(on 1 squeue --federation -h -j "$id" -O JobID,State,Cluster 2>&1)
	note "squeue --federation: $out"
	grep -q "^$id " <<<"$out" || fail "job $id not in squeue --federation" || return 1
	# ... and its running copy with --sibling
	local deadline=$(($(now_ms) + 30000))
	while :; do
		out=$(on 1 squeue --federation --sibling -h -j "$id" -O JobID,State,Cluster 2>&1)
		where=$(awk '$2 == "RUNNING" {print $3}' <<<"$out" | head -1)
		[ -n "$where" ] && break
		[ "$(now_ms)" -lt "$deadline" ] ||
			fail "no RUNNING sibling of $id: $out" || return 1
		sleep 0.3
	done
	note "running on $where"
	out=$(on 1 scontrol show job "$id")
	grep -q 'FedOrigin=c1 ' <<<"$out" && grep -q 'FedViableSiblings=c1,c2' <<<"$out" ||
		fail "not a federated job: $(grep -o 'Fed[A-Za-z]*=[^ ]*' <<<"$out" | tr '\n' ' ')" ||
		return 1
	# the winner's record only: the sibling that lost the race shows
	# CANCELLED (revoked) on the other cluster, and can before the
	# winner's record has left PENDING in accounting (CI saw
	# "PENDING|0:0|c1|;CANCELLED|0:0|c2|" with the job running on c1)
	wait_completed "$where" "$id" || return 1
	sacct_state c1,c2 "$id" | grep -q "^COMPLETED|0:0|$where|" ||
		fail "sacct does not show the job COMPLETED on $where" || return 1
	echo "# federated job $id ran on $where"
}

t_ctld_restart() {
	local id out go=$W/jobs/restart.go
	# the job runs until told to end (a fixed sleep could end during a
	# slow restart, and the check below would see it COMPLETING)
	rm -f "$go"
	id=$(submit 1 --gres=gpu:2 -J it-restart -o "$W/jobs/restart.out" \
		--wrap "until [ -e '$go' ]; do sleep 0.5; done") || return 1
	wait_running 1 "$id" || return 1
	out=$(harness restart-ctld 1 2>&1) || fail "restart-ctld failed: $out" || return 1
	note "$out"
	[ "$(job_field 1 "$id" JobState)" = RUNNING ] ||
		fail "job $id is $(job_field 1 "$id" JobState) after the slurmctld restart" || return 1
	touch "$go"
	wait_completed c1 "$id" 40
}

# scontrol show config prints PrioritySiteFactorPlugin as (null) in 22.05.8
# even when it is loaded: read slurm.conf and the log instead
uses_agora() {
	grep -qx 'PrioritySiteFactorPlugin=site_factor/agora' "$(conf 1)" &&
		grep -q 'site_factor/agora: loaded' "$W/log/c1/slurmctld.log"
}
plugin_dir() { sed -n "s/^PLUGIN_DIR='\(.*\)'$/\1/p" "$W/harness.env"; }

t_bad_agora_conf() {
	local log=$W/log/c1/slurmctld.log live=$W/c1/etc/agora.conf off out id
	if ! [ -f "$(plugin_dir)/site_factor_agora.so" ]; then
		note "no site_factor_agora.so in the plugin dir"
		return 77
	fi
	uses_agora ||
		fail "site_factor_agora.so is in $(plugin_dir) but PrioritySiteFactorPlugin is not site_factor/agora" || return 1
	cp "$live" "$W/agora.conf.good"
	off=$(stat -c %s "$log")
	printf 'BogusKey=1\n' >"$live"
	on 1 scontrol reconfigure || fail "scontrol reconfigure failed" || return 1
	local deadline=$(($(now_ms) + 15000))
	until tail -c +"$((off + 1))" "$log" | grep -q 'agora.conf:1: BogusKey: unknown key'; do
		if [ "$(now_ms)" -ge "$deadline" ]; then
			note "new slurmctld.log lines: $(tail -c +"$((off + 1))" "$log" | grep -i agora | tail -5)"
			fail "no 'agora.conf:1: BogusKey: unknown key' in $log"
			cp "$W/agora.conf.good" "$live"
			return 1
		fi
		sleep 0.3
	done
	note "log: $(tail -c +"$((off + 1))" "$log" | grep 'BogusKey' | head -2)"
	out=$(on 1 scontrol ping 2>&1)
	[[ $out == *"is UP"* ]] || fail "slurmctld not UP after the bad config: $out" || return 1
	id=$(submit 1 --gres=gpu:1 -J it-afterbad -o /dev/null --wrap 'sleep 1') || return 1
	wait_completed c1 "$id" 30 || return 1
	cp "$W/agora.conf.good" "$live"
	on 1 scontrol reconfigure || fail "reconfigure with the good agora.conf failed" || return 1
}

t_select_wrapper() {
	local log=$W/log/c1/slurmctld.log out
	if ! [ -f "$(plugin_dir)/select_cons_tres.so" ]; then
		note "no select_cons_tres.so (Agora's wrapper) in the plugin dir"
		return 77
	fi
	out=$(grep 'select/cons_tres' "$log" | grep -i agora | head -3)
	[ -n "$out" ] || fail "slurmctld.log has no line naming select/cons_tres and agora" || return 1
	note "log: $out"
}

t_clients_work() {
	local out
	out=$(on 1 sinfo 2>&1) || fail "sinfo failed: $out" || return 1
	grep -q 'c2n' <<<"$out" || fail "sinfo (fed_display) does not list c2 nodes: $out" || return 1
	out=$(on 2 squeue --federation 2>&1) || fail "squeue failed: $out" || return 1
	# srun loads every select_*.so in PluginDir (doc/select.md section 2)
	# shellcheck disable=SC2016
	out=$(on 1 timeout 60 srun -N1 --gres=gpu:2 -t 1 bash -c 'echo cvd=$CUDA_VISIBLE_DEVICES' 2>"$W/jobs/srun.err") ||
		fail "srun on c1 failed: $out $(cat "$W/jobs/srun.err")" || return 1
	[ "$out" = "cvd=0,1" ] || fail "srun --gres=gpu:2 printed '$out', want cvd=0,1" || return 1
	out=$(on 2 timeout 60 srun -N2 --gres=gpu:8 -t 1 hostname 2>"$W/jobs/srun.err") ||
		fail "2-node srun on c2 failed: $out $(cat "$W/jobs/srun.err")" || return 1
	[ "$(wc -l <<<"$out")" -eq 2 ] || fail "2-node srun printed: $out" || return 1
}

t_own_munge() {
	local out
	# The system munged (if any) has another key: a daemon or client that
	# used it instead of the harness's socket would log decode failures.
	out=$(grep -rlE 'Munge decode failed|Invalid credential|Protocol authentication error' "$W/log" 2>/dev/null)
	[ -z "$out" ] || fail "munge errors in: $out" || return 1
	local sock=$W/munge/munge.socket f key
	for f in "$(conf 1):AuthInfo" "$(conf 1):AccountingStoragePass" \
		"$W/dbd/slurmdbd.conf:AuthInfo"; do
		key=${f##*:}
		f=${f%:*}
		out=$(grep "^$key=" "$f")
		note "$f: $out"
		[[ $out =~ (^|[=,])socket=$sock(,|$) ]] ||
			fail "$key in $f does not name socket=$sock" || return 1
	done
	local pid
	pid=$(cat "$W/run/munged.pid")
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = munged ] ||
		fail "the harness's munged (pid $pid) is not running" || return 1
}

t_harness_stop() {
	local out pids ports
	# the ports this harness's daemons listen on (the other release's
	# tests run at the same time, on ports that may lie near ours)
	pids=$(cat "$W"/run/*.pid 2>/dev/null | paste -sd'|')
	ports=$(ss -ltnpH 2>/dev/null | grep -E "pid=(${pids:-none})," |
		awk '{n = split($4, a, ":"); print a[n]}' | sort -u | paste -sd' ')
	[ -n "$ports" ] || fail "no listening port of this harness's daemons found before the stop" || return 1
	out=$(harness stop 2>&1) || fail "stop failed: $out" || return 1
	note "$out"
	echo "# $out"
	out=$(harness status 2>&1)
	[ $? -eq 3 ] || fail "status after stop: $out" || return 1
	local left
	left=$(ss -ltnH | awk -v ours=" $ports " '{n = split($4, a, ":"); if (index(ours, " " a[n] " ")) print $4}')
	[ -z "$left" ] || fail "ports still listening after stop: $left (ours: $ports)" || return 1
	note "ports freed: $ports"
}

# ---- main -------------------------------------------------------------------
[ "$(id -u)" = 0 ] || {
	echo "Bail out! run as root (the harness starts daemons)"
	exit 1
}
cleanup() {
	if [ "${AGORA_IT_KEEP:-0}" != 1 ] && [ -f "$W/run/c1-slurmctld.pid" ]; then
		harness stop >/dev/null 2>&1 || true
	fi
}
DIAG_FILE=$(mktemp)
trap 'cleanup; rm -f "$DIAG_FILE"' EXIT
T0=$(now_ms)
echo "# Agora integration tests: work dir $W, base port $BASE_PORT"

ONLY_SAVE=$ONLY
ONLY="" run_test "harness starts 2 clusters x 8 nodes idle and federation agorafed synced" t_harness_start
if [ "$n_fail" -gt 0 ]; then
	echo "Bail out! the harness did not start (logs in $W/log)"
	echo "1..$n_run"
	echo "$n_pass passed, $n_fail failed"
	exit 1
fi
ONLY=$ONLY_SAVE
echo "# $(on 1 scontrol show config | grep -E '^(SchedulerType|SelectType|PluginDir) ' | tr -s ' ' | tr '\n' ';')"

run_test "second start with the same parameters is a no-op (same PIDs)" \
	t_start_idempotent
run_test "start of another work dir on taken ports is refused, naming the port and its holder" \
	t_port_refused
run_test "1-GPU job (--gres=gpu:1) completes on c1 and c2, IDX:0" \
	t_gpu_job g1 1 1 0 --gres=gpu:1
run_test "4-GPU job (--gres=gpu:4) completes on c1 and c2, IDX:0-3" \
	t_gpu_job g4 4 1 0-3 --gres=gpu:4
run_test "8-GPU job (--gres=gpu:8) completes on c1 and c2, IDX:0-7" \
	t_gpu_job g8 8 1 0-7 --gres=gpu:8
run_test "2-node x 8-GPU job (-N2 --gpus-per-node=8) completes on c1 and c2, IDX:0-7 on each node" \
	t_gpu_job g2x8 8 2 0-7 -N 2 --gpus-per-node=8
run_test "federated job (no -M) in squeue --federation, running sibling in --sibling, completes" \
	t_federated_job
run_test "running job survives a slurmctld restart of c1 and completes" \
	t_ctld_restart
run_test "malformed agora.conf (BogusKey=1) logs agora.conf:1: BogusKey: unknown key, cluster keeps running" \
	t_bad_agora_conf
run_test "slurmctld log shows Agora's select/cons_tres wrapper loaded" \
	t_select_wrapper
run_test "sinfo, squeue --federation and srun (1 and 2 nodes) work" \
	t_clients_work
run_test "everything authenticated through the harness's own munged (no munge errors in any log)" \
	t_own_munge
if [ "${AGORA_IT_KEEP:-0}" != 1 ]; then
	run_test "harness stop stops every daemon and frees every port" t_harness_stop
fi

echo "1..$n_run"
echo "# total $(secs "$T0") s"
echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
