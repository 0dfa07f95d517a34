#!/bin/bash
# tests/integration/test_placement.sh - Agora GPU placement in the
# select/cons_tres wrapper, end to end on contrib/harness/agora-dc.
#
# One cluster c1 of 8 fake nodes x 8 GPUs x 40 cores (2 sockets x 20):
#   c1n[1-4]  type nvl2: tests/fixtures/topo/2s-8gpu-2nvlink.xml, NVLink
#             islands 0-3 (socket 0) and 4-7 (socket 1)
#   c1n[5-8]  type pcie: tests/fixtures/topo/2s-8gpu-pcie.xml, no NVLink,
#             PCIe switches {0,1} {2,3} | {4,5} {6,7}, sockets 0-3 | 4-7
#             (its local cores remapped to the harness's 2 x 20 cores)
# topology.conf: leaf1 = c1n[1-4], leaf2 = c1n[5-8].  The model, gres.conf
# (Cores=, tiered Links=, File= on fake /dev/null devices) and
# topology.conf all come from agora-topo.
#
# Prints TAP ("ok N - name" / "not ok N - name"), then the stock-vs-agora
# numbers of the replayed slice; exit status non-zero if a test failed.
# Must run as root.  Environment:
#   AGORA_PLACE_BUILD      build dir with stage/plugins and contrib/topo
#                          [<repo>/_build, as contrib/bin/agora-test builds]
#   AGORA_PLACE_WORKDIR    harness work dir [/tmp/agora-place-test]
#   AGORA_PLACE_BASE_PORT  harness base port [21000]
#   AGORA_PLACE_SLICE      jobs in the replayed slice [60]
#   AGORA_PLACE_KEEP=1     leave the harness running afterwards
#   AGORA_PLACE_MODE=stock run the scenario tests with Placement=stock and
#                          skip the slice (shows what stock cons_tres does:
#                          the scenario tests are expected to fail)
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
# AGORA_DC_SLURM=24.11: that release's commands first in PATH (lib.sh)
# shellcheck source=lib.sh
. "$here/lib.sh"
# the build to test: AGORA_PLACE_BUILD, else the one agora-test uses
BUILD=${AGORA_PLACE_BUILD:-$repo/_build}
W=${AGORA_PLACE_WORKDIR:-/tmp/agora-place-test${AGORA_TEST_TAG:-}}
IN=$W.in # generated inputs (the harness wants its work dir to itself)
BASE_PORT=${AGORA_PLACE_BASE_PORT:-$((21000 + ${AGORA_TEST_PORT_SHIFT:-0}))}
SLICE_N=${AGORA_PLACE_SLICE:-60}
MODE=${AGORA_PLACE_MODE:-agora}
KEEP=${AGORA_PLACE_KEEP:-0}
HARNESS=$repo/contrib/harness/agora-dc
TOPO=$BUILD/contrib/topo/agora-topo
PLUGDIR=$BUILD/stage/plugins
METRICS=$here/placement_metrics.py
MODEL=$IN/agora-topo.json

n_run=0
n_fail=0
DIAG=$(mktemp)
# stop the harness whatever happens (unless asked to keep it)
trap 'rm -f "$DIAG"; [ -f "$W/harness.env" ] && [ "$KEEP" != 1 ] && harness stop >/dev/null 2>&1' EXIT

note() { printf '%s\n' "$*" >>"$DIAG"; }
fail() {
	note "$*"
	return 1
}
tap() { # NAME FUNCTION...
	local name=$1 rc
	shift
	n_run=$((n_run + 1))
	: >"$DIAG"
	"$@"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "ok $n_run - $name"
	else
		n_fail=$((n_fail + 1))
		echo "not ok $n_run - $name"
	fi
	sed 's/^/#   /' "$DIAG"
	return 0
}

harness() { "$HARNESS" --workdir "$W" "$@"; }
export SLURM_CONF=$W/c1/etc/slurm.conf
CTLD_LOG=$W/log/c1/slurmctld.log
# Where the wrapper reads agora.conf again at "scontrol reconfigure": 22.05
# in select_p_reconfigure() ("reconfigure: Placement=..."); 24.11's
# reconfigure restarts slurmctld, whose init() reads it ("init: ...").
REL=${AGORA_DC_SLURM:-22.05}
if [ "$REL" = 22.05 ]; then LOADED=reconfigure; else LOADED=init; fi

# ---- inputs -----------------------------------------------------------------
gen_inputs() {
	rm -rf "$IN"
	mkdir -p "$IN"
	"$TOPO" model -i "$repo/tests/fixtures/topo/2s-8gpu-2nvlink.xml" \
		--name nvl2 --nodes 'c1n[1-4]' -o "$IN/nvl2.json" || return 1
	"$TOPO" model -i "$repo/tests/fixtures/topo/2s-8gpu-pcie.xml" \
		--name pcie --nodes 'c1n[5-8]' -o "$IN/pcie.raw.json" || return 1
	# The harness gives every node 2 x 20 cores; the pcie fixture has
	# 2 x 16.  Remap its local cores per socket (the model is synthetic).
	python3 - "$IN/pcie.raw.json" "$IN/pcie.json" <<'EOF' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
for t in d['node_types']:
    t['cores'] = 40
    t['cpus'] = 40
    for g in t['gpu']:
        g['cores'] = '0-19' if g['socket'] == 0 else '20-39'
json.dump(d, open(sys.argv[2], 'w'), indent=1)
EOF
	"$TOPO" merge "$IN/nvl2.json" "$IN/pcie.json" -o "$MODEL" || return 1
	{
		"$TOPO" gres -m "$MODEL" --type-name nvl2 --file-prefix @FAKEGPU@ &&
			"$TOPO" gres -m "$MODEL" --type-name pcie --file-prefix @FAKEGPU@
	} >"$IN/gres.conf" || return 1
	"$TOPO" check -m "$MODEL" -g "$IN/gres.conf" || return 1
	"$TOPO" topology --nodes 'c1n[1-8]' --nodes-per-leaf 4 \
		-o "$IN/topology.conf" || return 1
	cat >"$IN/agora.conf" <<EOF
# agora.conf of test_placement.sh
SchedulerInterval=1
TopologyModel=$MODEL
Placement=agora
EOF
	cat >"$IN/extra.conf" <<'EOF'
DebugFlags=SelectType
EOF
}

# ---- helpers ----------------------------------------------------------------
now_ms() { date +%s%3N; }

submit() { # SBATCH_ARGS... -> job id
	local out
	out=$(sbatch --parsable -o /dev/null "$@" 2>&1) || {
		note "sbatch $* failed: $out"
		return 1
	}
	echo "${out%%;*}"
}

wait_running() { # JOBID [TIMEOUT]
	local id=$1 t=${2:-30} deadline st
	deadline=$(($(now_ms) + t * 1000))
	while :; do
		st=$(squeue -h -j "$id" -o %T 2>/dev/null)
		[ "$st" = RUNNING ] && return 0
		if [ "$(now_ms)" -ge "$deadline" ]; then
			fail "job $id not RUNNING after ${t}s (state ${st:-gone}, reason $(squeue -h -j "$id" -o %r 2>/dev/null))"
			return 1
		fi
		sleep 0.2
	done
}

# alloc JOBID -> "NODE:IDX" per node, e.g. "c1n1:0-1"
alloc() {
	scontrol -d show job "$1" 2>/dev/null |
		sed -n 's/.* Nodes=\([^ ]*\) CPU_IDs=.* GRES=gpu[^(]*(IDX:\([0-9,-]*\)).*/\1:\2/p'
}

# within IDX SET1 SET2...: every GPU of IDX lies inside one of the sets
within() {
	local idx=$1 s
	shift
	for s in "$@"; do
		python3 -c "
import sys
def r(s):
    o = set()
    for p in s.split(','):
        a, _, b = p.partition('-')
        o.update(range(int(a), int(b or a) + 1))
    return o
sys.exit(0 if r('$idx') <= r('$s') else 1)" && return 0
	done
	return 1
}

cancel_all() {
	scancel -u root 2>/dev/null
	local deadline=$(($(now_ms) + 30000))
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
		[ "$(now_ms)" -ge "$deadline" ] && break
		sleep 0.3
	done
	# node GRES state is freed asynchronously after completion
	sleep 1
}

# scontrol reconfigure resets the log level to slurm.conf's; log_flag()
# lines (DebugFlags=SelectType) need verbose
# (24.11: and waits for the restarted slurmctld to answer)
reconf() {
	local before
	before=$(grep -c "Agora wrapper loaded, forwarding" "$CTLD_LOG")
	scontrol reconfigure >/dev/null 2>&1 || return 1
	if [ "$LOADED" = init ]; then
		wait_for 60 eval '[ "$(grep -c "Agora wrapper loaded, forwarding" "$CTLD_LOG")" -gt "$before" ] &&
			scontrol ping 2>/dev/null | grep -q UP' ||
			fail "slurmctld did not come back after scontrol reconfigure" || return 1
	fi
	scontrol setdebug verbose >/dev/null 2>&1
	return 0
}

set_placement() { # agora|stock
	local before deadline=$(($(now_ms) + 20000))
	before=$(grep -c "$LOADED: Placement=$1 " "$CTLD_LOG")
	sed -i "s/^Placement=.*/Placement=$1/" "$W/c1/etc/agora.conf"
	reconf || return 1
	until [ "$(grep -c "$LOADED: Placement=$1 " "$CTLD_LOG")" -gt "$before" ]; do
		[ "$(now_ms)" -ge "$deadline" ] && {
			fail "slurmctld did not log Placement=$1 after reconfigure"
			return 1
		}
		sleep 0.2
	done
}

# ---- tests ------------------------------------------------------------------
t_loaded() {
	grep -q "Agora wrapper loaded, forwarding to stock" "$CTLD_LOG" ||
		fail "no 'Agora wrapper loaded' line in $CTLD_LOG" || return 1
	grep -q "Agora node-choice hook installed" "$CTLD_LOG" ||
		fail "no 'hook installed' line" || return 1
	grep -q "init: Placement=agora TopologyModel=$MODEL (2 node types)" "$CTLD_LOG" ||
		fail "no 'init: Placement=agora TopologyModel=... (2 node types)' line"
}

# A bad agora.conf, then a bad TopologyModel: each is one error() and the
# previous configuration stays (no reconfigure line, slurmctld alive).
# On 24.11 the reconfigure is a restart: the process keeping it is new, so
# "previous" is its default, stock placement (the error says which).
t_bad_conf_kept() {
	local f=$W/c1/etc/agora.conf good before
	good=$(cat "$f")
	for bad in "Placement=best" "TopologyModel=$IN/missing.json"; do
		before=$(grep -c "keeping the previous placement configuration" "$CTLD_LOG")
		printf '%s\n' "$good" | grep -v "^${bad%%=*}=" >"$f"
		echo "$bad" >>"$f"
		reconf
		sleep 2
		[ "$(grep -c "keeping the previous placement configuration" "$CTLD_LOG")" -gt "$before" ] ||
			fail "no 'keeping the previous placement configuration' error for $bad" || break
		note "$bad: $(grep "keeping the previous placement" "$CTLD_LOG" | tail -1 | sed 's/^[^]]*] //')"
	done
	printf '%s\n' "$good" >"$f"
	set_placement agora || return 1
	scontrol ping | grep -q UP || fail "slurmctld is not UP"
}

# select_p_reconfigure() also runs for partition updates and
# setdebugflags, under slurmctld's write locks: agora.conf and the model
# are re-read only when one of them changed.
t_reload_only_on_change() {
	local before after i deadline pat='(reconfigure|init): Placement='
	before=$(grep -cE "$pat" "$CTLD_LOG")
	for i in 1 2 3 4 5; do
		scontrol update partitionname=batch MaxTime=$((100 + i)) ||
			fail "scontrol update partitionname failed" || return 1
	done
	scontrol update partitionname=batch MaxTime=INFINITE
	scontrol setdebugflags +Gang >/dev/null && scontrol setdebugflags -Gang >/dev/null
	if [ "$LOADED" = reconfigure ]; then
		reconf || fail "scontrol reconfigure failed" || return 1
		sleep 1
		note "6 partition updates, 2 setdebugflags, 1 reconfigure, files unchanged: $(($(grep -cE "$pat" "$CTLD_LOG") - before)) loads"
	else
		sleep 1
		note "6 partition updates, 2 setdebugflags, files unchanged: $(($(grep -cE "$pat" "$CTLD_LOG") - before)) loads (Slurm $REL: scontrol reconfigure restarts slurmctld, which always reads agora.conf: not part of this check)"
	fi
	after=$(grep -cE "$pat" "$CTLD_LOG")
	[ "$after" -eq "$before" ] ||
		fail "agora.conf re-read $((after - before)) times with unchanged files" || return 1
	after=$(grep -c "$LOADED: Placement=" "$CTLD_LOG")
	touch "$MODEL"
	reconf || return 1
	deadline=$(($(now_ms) + 20000))
	until [ "$(grep -c "$LOADED: Placement=" "$CTLD_LOG")" -gt "$after" ]; do
		[ "$(now_ms)" -lt "$deadline" ] ||
			fail "model touched, but not re-read at scontrol reconfigure" || return 1
		sleep 0.2
	done
	note "model touched: re-read at reconfigure"
}

# fill NODE GPUS...: pinned jobs (--nodelist: the node-choice hook skips
# them), one after the other, each RUNNING before the next
fill() {
	local n=$1 g id
	shift
	for g in "$@"; do
		id=$(submit -w "$n" --gres=gpu:"$g" -J fill --time=5 --wrap 'sleep 300') || return 1
		wait_running "$id" || return 1
		note "filler $id: $(alloc "$id")"
	done
}

# The fillers are placed with Placement=stock in both modes, so that the
# probes see the same state; then the probes run with MODE.
#
# NVLink nodes: c1n1 gets two 3-GPU jobs (stock: GPUs 0-2 and 4-6, one free
# GPU left in each island), c1n2 one 4-GPU job (island 0-3), c1n3-4 and
# the PCIe nodes are full.  Two 2-GPU jobs must each land inside one
# island: stock cons_tres takes the lowest-index node with room, c1n1, and
# straddles its islands (3 and 7); agora takes island 4-7 of c1n2.
t_pairs_in_island() {
	local n id a rc=0 i
	set_placement stock || return 1
	fill c1n1 3 3 || return 1
	fill c1n2 4 || return 1
	for n in 3 4 5 6 7 8; do
		fill "c1n$n" 8 >/dev/null || return 1
	done
	set_placement "$MODE" || return 1
	for i in 1 2; do
		id=$(submit --gres=gpu:2 -J pair --time=5 --wrap 'sleep 300') || return 1
		wait_running "$id" || return 1
		a=$(alloc "$id")
		note "2-GPU job $id: $a"
		case $a in
		c1n[1-4]:*) within "${a#*:}" 0-3 4-7 || { note "  straddles NVLink islands"; rc=1; } ;;
		*) note "  not on an NVLink node"; rc=1 ;;
		esac
	done
	cancel_all
	return $rc
}

# PCIe nodes: c1n5 gets two 2-GPU jobs (stock: 0-1 and 4-5, two free GPUs
# on each socket), c1n6 one 4-GPU job (socket 0), every other node is full.
# A 4-GPU job must not straddle sockets while socket 1 of c1n6 is whole.
t_quad_one_socket() {
	local n id a
	set_placement stock || return 1
	for n in 1 2 3 4 7 8; do
		fill "c1n$n" 8 >/dev/null || return 1
	done
	fill c1n5 2 2 || return 1
	fill c1n6 4 || return 1
	set_placement "$MODE" || return 1
	id=$(submit --gres=gpu:4 -J quad --time=5 --wrap 'sleep 300') || return 1
	wait_running "$id" || return 1
	a=$(alloc "$id")
	note "4-GPU job $id: $a"
	cancel_all
	case $a in
	c1n[5-8]:*) ;;
	*) fail "the 4-GPU job is not on a PCIe node" || return 1 ;;
	esac
	within "${a#*:}" 0-3 4-7 || fail "the 4-GPU job straddles sockets"
}

# 1-GPU jobs on c1n1 (leaf1) and c1n5, c1n6 (leaf2): leaf1 has 3 whole free
# nodes, leaf2 2.  A 2x8 job and then a --gpus=16 job must each take two
# whole nodes under one leaf.
t_sixteen_one_leaf() {
	local n id a nodes rc=0 spec
	set_placement stock || return 1
	for n in 1 5 6; do
		fill "c1n$n" 1 || return 1
	done
	set_placement "$MODE" || return 1
	for spec in "-N2 --gres=gpu:8" "--gpus=16"; do
		# shellcheck disable=SC2086
		id=$(submit $spec -J big --time=5 --wrap 'sleep 300') || return 1
		wait_running "$id" || return 1
		a=$(alloc "$id" | tr '\n' ' ')
		nodes=$(squeue -h -j "$id" -o %N)
		note "16-GPU job ($spec) $id: $nodes $a"
		case $nodes in
		c1n\[2-3\] | c1n\[2,4\] | c1n\[3-4\] | c1n\[7-8\]) ;;
		*) note "  not two whole free nodes under one leaf"; rc=1 ;;
		esac
		for x in $a; do
			[ "${x#*:}" = 0-7 ] || { note "  $x is not a whole node"; rc=1; }
		done
	done
	cancel_all
	return $rc
}

# Slurm 23.02+: a reservation holding GPUs of c1n1.  c1n1 busy on 0-3
# and 4-5 when the reservation takes two GPUs (6-7, the free ones; and two
# cores: a reservation without cores may not share a busy node); then
# 0-3 are freed.  A 2-GPU job outside the reservation gets 0-1 from stock;
# Hook 3 used to move it onto 6-7, the reserved GPUs, which fill island
# 4-7.  Now a node on which a reservation holds GPUs keeps stock's
# indices: the job must not be on 6-7, and no rewrite is logged for it.
t_resv_gpus_kept() {
	local big id a out before
	set_placement stock || return 1
	big=$(submit -w c1n1 --gres=gpu:4 -J fill --time=5 --wrap 'sleep 300') || return 1
	wait_running "$big" || return 1
	fill c1n1 2 || return 1
	out=$(scontrol create reservation ReservationName=agora_gpus Nodes=c1n1 \
		StartTime=now Duration=30 Users=root TRES=cpu=2,gres/gpu=2 2>&1) ||
		fail "scontrol create reservation: $out" || return 1
	note "reservation: $(scontrol show reservation agora_gpus | tr -s ' \n' ' ')"
	scancel "$big"
	sleep 2
	set_placement "$MODE" || return 1
	before=$(grep -c "agora GPU indices on c1n1" "$CTLD_LOG")
	id=$(submit -w c1n1 --gres=gpu:2 -J outside --time=5 --wrap 'sleep 300') || return 1
	wait_running "$id" || return 1
	a=$(alloc "$id")
	note "2-GPU job $id outside the reservation: $a"
	scontrol delete reservation=agora_gpus
	cancel_all
	case $a in
	c1n1:*) ;;
	*) fail "the job is not on c1n1: $a" || return 1 ;;
	esac
	within "${a#*:}" 0-5 || fail "the job got reserved GPUs: $a" || return 1
	[ "$(grep -c "agora GPU indices on c1n1" "$CTLD_LOG")" = "$before" ] ||
		fail "Hook 3 rewrote GPU indices on c1n1, where a reservation holds GPUs"
}

# The replayed slice: SLICE_N jobs of 1/2/4/8 GPUs (40/30/20/10 %), 3-14 s,
# fixed seed; all submitted at once (FIFO + backfill), polled every 0.5 s.
slice_jobs() {
	python3 - "$SLICE_N" <<'EOF'
import random, sys
r = random.Random(20261129)
for i in range(int(sys.argv[1])):
    g = r.choices([1, 2, 4, 8], weights=[40, 30, 20, 10])[0]
    print(i, g, r.randint(3, 14))
EOF
}

run_slice() { # MODE -> metrics line on stdout
	local mode=$1 poll=$IN/poll-$1.log pid i g d deadline
	set_placement "$mode" >&2 || return 1
	: >"$poll"
	(
		while :; do
			echo "@ $(date +%s.%N)"
			scontrol -d -o show job 2>/dev/null
			sleep 0.5
		done
	) >>"$poll" &
	pid=$!
	while read -r i g d; do
		submit --gres=gpu:"$g" -J "slice-$mode-$i" --time=2 \
			--wrap "sleep $d" >/dev/null || break
	done < <(slice_jobs)
	deadline=$(($(now_ms) + 600000))
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
		[ "$(now_ms)" -ge "$deadline" ] && break
		sleep 1
	done
	sleep 1
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	python3 "$METRICS" "$MODEL" "$poll" "slice-$mode-" "$IN/topology.conf"
}

val() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }

t_slice_better() {
	local s a
	cancel_all
	s=$(run_slice stock) || return 1
	a=$(run_slice agora) || return 1
	note "stock: $s"
	note "agora: $a"
	echo "# slice stock: $s"
	echo "# slice agora: $a"
	[ "$(val jobs "$s")" = "$SLICE_N" ] && [ "$(val jobs "$a")" = "$SLICE_N" ] ||
		fail "not every slice job was seen running" || return 1
	# locality: the jobs placed above the best level their GPU count has
	# on their node (straddle) decide.  The mean level also depends on
	# which node type each job found free (a 4-GPU job is level 0 on an
	# NVLink node, 2 on a PCIe node), which the timing of one run moves:
	# over ten CI runs agora's straddles were 0-2 against stock's 5-15,
	# but once stock drew mean 1.138 (5 straddles) and agora 1.172 (0).
	# So the mean may be at most 10% above stock's, not "lower".
	[ "$(val straddle "$a")" -lt "$(val straddle "$s")" ] ||
		fail "agora has no fewer jobs above their best level than stock" || return 1
	python3 -c "import sys; sys.exit(0 if $(val mean_level "$a") <= 1.10 * $(val mean_level "$s") else 1)" ||
		fail "agora's mean locality level is more than 10% above stock's" || return 1
	# fragmentation is a time average over one timing-dependent run: on
	# 22.05 stock's first-fit already packs about as well (agora/stock
	# 0.86-1.02 over four CI runs, 0.53-0.67 on 24.11), so the check is
	# "no worse than stock by more than 15%", not "lower" (doc/select.md)
	note "fragmentation agora/stock: $(python3 -c "print('%.2f' % ($(val frag "$a") / max($(val frag "$s"), 1e-9)))")"
	python3 -c "import sys; sys.exit(0 if $(val frag "$a") <= 1.15 * $(val frag "$s") else 1)" ||
		fail "agora's fragmentation is more than 15% above stock's"
}

t_decisions_logged() {
	local l
	l=$(grep -m1 "agora placement 1x2: score=" "$CTLD_LOG") ||
		fail "no DebugFlags=SelectType decision line with a score" ||
		return 1
	note "e.g. ${l#*] }"
	note "decisions: $(grep -c 'agora placement .*: score=' "$CTLD_LOG"), skipped: $(grep -c 'agora placement skipped' "$CTLD_LOG"), GPU-index rewrites: $(grep -c 'agora GPU indices on' "$CTLD_LOG"), fallbacks to stock: $(grep -c 'retrying on all candidates' "$CTLD_LOG")"
	l=$(grep -m1 "agora GPU indices on" "$CTLD_LOG") && note "e.g. ${l#*] }"
	return 0
}

# ---- main -------------------------------------------------------------------
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP must run as root"; exit 0; }
[ -x "$TOPO" ] && [ -f "$PLUGDIR/select_cons_tres.so" ] || {
	echo "Bail out! build first: $TOPO and $PLUGDIR/select_cons_tres.so"
	exit 1
}
gen_inputs || { echo "Bail out! cannot generate the inputs in $IN"; exit 1; }
if [ -f "$W/harness.env" ]; then
	harness stop >/dev/null 2>&1
fi
if ! harness --clusters 1 --nodes 8 --gpus 8 --cpus 40 \
	--base-port "$BASE_PORT" --plugin-dir "$PLUGDIR" --sched sched/backfill \
	--gres-conf "$IN/gres.conf" --topology-conf "$IN/topology.conf" \
	--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" \
	--fresh start >"$IN/harness-start.log" 2>&1; then
	echo "Bail out! harness start failed (see $IN/harness-start.log)"
	tail -20 "$IN/harness-start.log" | sed 's/^/# /'
	harness stop >/dev/null 2>&1
	exit 1
fi

# log_flag() lines are printed at verbose
scontrol setdebug verbose >/dev/null 2>&1 || true

tap "wrapper loaded with Placement=agora and the 2-type model" t_loaded
tap "bad agora.conf or model: error, previous placement kept" t_bad_conf_kept
tap "agora.conf and model re-read only when changed" t_reload_only_on_change
tap "2-GPU jobs land inside one NVLink island" t_pairs_in_island
tap "4-GPU job takes a whole free socket, no straddle" t_quad_one_socket
tap "16-GPU jobs (2x8, --gpus=16) take 2 whole nodes under one leaf" t_sixteen_one_leaf
if [ "$REL" != 22.05 ]; then
	tap "a node on which a reservation holds GPUs keeps stock's GPU indices" t_resv_gpus_kept
fi
if [ "$MODE" != stock ]; then
	tap "replayed slice: agora beats stock on locality, fragmentation no worse" t_slice_better
	tap "DebugFlags=SelectType logs decisions with score and nodes" t_decisions_logged
fi

echo "1..$n_run"
if [ "$KEEP" != 1 ]; then
	harness stop >/dev/null 2>&1
fi
echo "# $((n_run - n_fail)) passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
