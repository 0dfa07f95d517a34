#!/bin/bash
# tests/integration/valgrind-select.sh - Agora's select/cons_tres wrapper
# inside a real slurmctld running under valgrind memcheck.
#
# Starts a one-cluster agora-dc harness (4 fake nodes x 8 GPUs, 2 x 20
# cores; Agora's wrapper with Placement=agora, a 1-type TopologyModel from
# the 2s-8gpu-2nvlink fixture, topology/tree with 2 leaves,
# DebugFlags=SelectType) with slurmctld started as
#   valgrind --leak-check=full --track-origins=yes --error-exitcode=99
#            --keep-debuginfo=yes ...
# (AGORA_DC_CTLD_PREFIX; --keep-debuginfo because Slurm dlclose()s its
# plugins at exit and the wrapper dlclose()s stock cons_tres: without it
# their frames in leak stacks are "???" and cannot be attributed), runs a GPU workload through it (three dozen
# sbatch jobs of 1-16 GPUs, a 2-node job, --gpus-per-task, a cancel, a
# requeue, a partition update, a reconfigure with a changed agora.conf),
# stops slurmctld with SIGTERM (so valgrind reports leaks), then parses the
# valgrind log:
#   FAIL (exit 1) if any error or "definitely lost" leak has a frame in
#   Agora's code (the wrapper .so, or a source file of common/ or
#   plugins/); Slurm's and libc's own errors are listed but not counted.
# Exit 0 = no error in Agora's frames.  2 = the harness or workload failed.
#
# Run time on the 2-vCPU VM: about 95 s (slurmctld up under valgrind in
# 10 s, workload 79 s, SIGTERM to exit with the leak check 4 s; measured
# twice).  Not part of make check or CI by default (it needs root, the
# harness and valgrind); it fits in CI's time if wanted.  Run as root:
#   AGORA_VG_BUILD=_build-select tests/integration/valgrind-select.sh
# Environment:
#   AGORA_VG_BUILD      build dir with stage/plugins and contrib/topo
#                       [<repo>/_build]
#   AGORA_VG_WORKDIR    harness work dir [/tmp/agora-vg-select]; inputs in
#                       WORKDIR.in, valgrind logs and the report in WORKDIR.vg
#   AGORA_VG_BASE_PORT  harness base port [35000]
#   AGORA_VG_JOBS       sbatch jobs of 1-16 GPUs [36]
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${AGORA_VG_BUILD:-$repo/_build}
case $BUILD in /*) ;; *) BUILD=$repo/$BUILD ;; esac
W=${AGORA_VG_WORKDIR:-/tmp/agora-vg-select}
IN=$W.in
VG=$W.vg
BASE_PORT=${AGORA_VG_BASE_PORT:-35000}
N_JOBS=${AGORA_VG_JOBS:-36}
HARNESS=$repo/contrib/harness/agora-dc
TOPO=$BUILD/contrib/topo/agora-topo
PLUGDIR=$BUILD/stage/plugins
SUPP=$here/valgrind-select.supp

harness() { "$HARNESS" --workdir "$W" "$@"; }
trap '[ -f "$W/harness.env" ] && harness stop >/dev/null 2>&1' EXIT
export SLURM_CONF=$W/c1/etc/slurm.conf
now() { date +%s; }
say() { echo "valgrind-select: $*"; }
die() {
	say "error: $*" >&2
	exit 2
}

[ "$(id -u)" = 0 ] || die "must run as root"
command -v valgrind >/dev/null || die "valgrind is not installed (contrib/bin/agora-deps)"
[ -x "$TOPO" ] && [ -f "$PLUGDIR/select_cons_tres.so" ] ||
	die "build first: $TOPO and $PLUGDIR/select_cons_tres.so"
T0=$(now)

# ---- inputs -------------------------------------------------------------
rm -rf "$IN" "$VG"
mkdir -p "$IN" "$VG"
"$TOPO" model -i "$repo/tests/fixtures/topo/2s-8gpu-2nvlink.xml" \
	--name nvl2 --nodes 'c1n[1-4]' -o "$IN/model.json" >/dev/null || die "agora-topo model"
"$TOPO" gres -m "$IN/model.json" --type-name nvl2 --file-prefix @FAKEGPU@ \
	>"$IN/gres.conf" || die "agora-topo gres"
"$TOPO" topology --nodes 'c1n[1-4]' --nodes-per-leaf 2 -o "$IN/topology.conf" ||
	die "agora-topo topology"
printf 'TopologyModel=%s\nPlacement=agora\n' "$IN/model.json" >"$IN/agora.conf"
# Slow RPCs under valgrind: give clients time.
printf 'DebugFlags=SelectType\nMessageTimeout=60\n' >"$IN/extra.conf"

# ---- start --------------------------------------------------------------
[ -f "$W/harness.env" ] && harness stop >/dev/null 2>&1
export AGORA_DC_CTLD_PREFIX="valgrind --tool=memcheck --leak-check=full --track-origins=yes --error-exitcode=99 --keep-debuginfo=yes --num-callers=40 --child-silent-after-fork=yes --suppressions=$SUPP --log-file=$VG/slurmctld.%p.vg"
say "starting the harness; slurmctld under valgrind (logs in $VG)"
harness --clusters 1 --nodes 4 --gpus 8 --cpus 40 --base-port "$BASE_PORT" \
	--plugin-dir "$PLUGDIR" --sched sched/backfill --timeout 600 \
	--gres-conf "$IN/gres.conf" --topology-conf "$IN/topology.conf" \
	--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" \
	--fresh start >"$IN/harness-start.log" 2>&1 || {
	tail -20 "$IN/harness-start.log" >&2
	die "harness start failed (see $IN/harness-start.log)"
}
unset AGORA_DC_CTLD_PREFIX
CTLD_PID=$(cat "$W/run/c1-slurmctld.pid")
grep -q valgrind "/proc/$CTLD_PID/cmdline" 2>/dev/null || grep -qa memcheck "/proc/$CTLD_PID/cmdline" ||
	die "slurmctld (pid $CTLD_PID) is not running under valgrind"
T_UP=$(now)
say "slurmctld up under valgrind (pid $CTLD_PID) after $((T_UP - T0)) s"
scontrol setdebug verbose >/dev/null 2>&1 || true

# ---- workload -----------------------------------------------------------
submit() { sbatch --parsable -o /dev/null "$@" 2>>"$IN/sbatch.err" | cut -d';' -f1; }
ids=()
gpus=(1 2 4 8 1 2 16 3 1 2 4 8)
for ((i = 0; i < N_JOBS; i++)); do
	g=${gpus[i % ${#gpus[@]}]}
	t=$((2 + i % 4))
	if [ "$g" -gt 8 ]; then
		id=$(submit -J "vg$i" --gpus="$g" --time=5 --wrap "sleep $t")
	else
		id=$(submit -J "vg$i" --gres=gpu:"$g" --time=5 --wrap "sleep $t")
	fi
	[ -n "$id" ] && ids+=("$id")
done
multi=$(submit -J vg-multi -N2 --gres=gpu:8 --time=5 --wrap 'sleep 3')
pertask=$(submit -J vg-pertask -n2 --gpus-per-task=2 --time=5 --wrap 'sleep 3')
cancel=$(submit -J vg-cancel --gres=gpu:2 --time=5 --wrap 'sleep 300')
requeue=$(submit -J vg-requeue --gres=gpu:1 --requeue --time=5 --wrap 'sleep 20')
say "submitted $((${#ids[@]} + 4)) jobs (multi $multi, per-task $pertask, cancel $cancel, requeue $requeue)"
[ "${#ids[@]}" -ge $((N_JOBS / 2)) ] || die "most sbatch calls failed: $(tail -3 "$IN/sbatch.err")"

wait_state() { # JOBID STATE TIMEOUT
	local d=$(($(now) + $3))
	while [ "$(now)" -lt "$d" ]; do
		[ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = "$2" ] && return 0
		sleep 1
	done
	return 1
}
wait_state "$cancel" RUNNING 300 && scancel "$cancel" && say "cancelled $cancel"
wait_state "$requeue" RUNNING 300 && scontrol requeue "$requeue" && say "requeued $requeue"
scontrol update partitionname=batch MaxTime=100 >/dev/null 2>&1
scontrol update partitionname=batch MaxTime=INFINITE >/dev/null 2>&1
echo '# changed' >>"$W/c1/etc/agora.conf"
scontrol reconfigure >/dev/null 2>&1 && say "reconfigured with a changed agora.conf"
scontrol setdebug verbose >/dev/null 2>&1 || true

deadline=$(($(now) + 600))
while [ -n "$(squeue -h -o %i 2>/dev/null)" ] && [ "$(now)" -lt "$deadline" ]; do
	sleep 3
done
left=$(squeue -h -o %i 2>/dev/null | wc -l)
ran=$(grep -c 'sched: Allocate JobId=\|backfill: Started JobId=\|sched/backfill: _start_job: Started JobId=' "$W/log/c1/slurmctld.log" || true)
done_n=$(grep -c '_job_complete: JobId=[0-9]* done' "$W/log/c1/slurmctld.log" || true)
placed=$(grep -c 'agora placement [0-9]' "$W/log/c1/slurmctld.log" || true)
T_WORK=$(now)
say "workload done in $((T_WORK - T_UP)) s: $ran starts, $done_n completions, $placed agora placement decisions, $left jobs left"
[ "$left" -gt 0 ] && scancel -u root 2>/dev/null

# ---- stop slurmctld with SIGTERM, wait for valgrind's leak report ---------
kill -TERM "$CTLD_PID"
d=$(($(now) + 600))
while kill -0 "$CTLD_PID" 2>/dev/null && [ "$(now)" -lt "$d" ]; do sleep 1; done
kill -0 "$CTLD_PID" 2>/dev/null && die "slurmctld (pid $CTLD_PID) did not exit within 600 s of SIGTERM"
T_STOP=$(now)
say "slurmctld exited $((T_STOP - T_WORK)) s after SIGTERM"
harness stop >/dev/null 2>&1

# ---- the report ---------------------------------------------------------
LOGF=$VG/slurmctld.$CTLD_PID.vg
[ -s "$LOGF" ] || die "no valgrind log $LOGF"
grep -q 'ERROR SUMMARY' "$LOGF" || die "$LOGF has no ERROR SUMMARY: valgrind did not finish"
python3 - "$LOGF" "$VG/report.txt" <<'EOF'
import re, sys
log, out = sys.argv[1], sys.argv[2]
# Agora's code: the wrapper .so (staged as select_cons_tres.so in our
# plugin dir, soname agora_select_cons_tres.so) and our source files.
ours_obj = re.compile(r'(stage/plugins/select_cons_tres\.so|agora_select_cons_tres\.so|/agora/select_cons_tres\.so)')
ours_src = re.compile(r'\((agora_[a-z_]+|pol_[a-z_]+|topo_[a-z_]+|sim_[a-z_]+|trace_[a-z_]+)\.[ch]:\d+\)')
kinds = re.compile(r'^(Invalid (read|write|free)|Mismatched free|Conditional jump|Use of uninitialised|Syscall param|Source and destination overlap|Argument .* of function|.* are definitely lost|.* are possibly lost|.* are indirectly lost|.* are still reachable)')
blocks, cur = [], None
pre = re.compile(r'^==\d+== ?(.*)$')
for line in open(log, errors='replace'):
    m = pre.match(line.rstrip('\n'))
    if not m:
        continue
    text = m.group(1)
    if not text.strip():
        if cur: blocks.append(cur); cur = None
        continue
    if cur is None:
        if kinds.match(text):
            cur = [text]
        continue
    cur.append(text)
if cur: blocks.append(cur)
def counted(b):
    h = b[0]
    return not ('still reachable' in h or 'indirectly lost' in h or 'possibly lost' in h)
ours, theirs = [], []
for b in blocks:
    if not counted(b):
        continue
    (ours if any(ours_obj.search(l) or ours_src.search(l) for l in b) else theirs).append(b)
summ = [l for l in open(log, errors='replace') if 'ERROR SUMMARY' in l or 'definitely lost:' in l or 'possibly lost:' in l]
with open(out, 'w') as f:
    f.write('valgrind log: %s\n' % log)
    for l in summ: f.write(l)
    f.write('errors/definite leaks with a frame in Agora code: %d\n' % len(ours))
    f.write('errors/definite leaks in Slurm/libc only (not counted): %d\n' % len(theirs))
    for title, lst in (('AGORA', ours), ('SLURM/LIBC (not counted)', theirs)):
        for b in lst:
            f.write('\n--- %s ---\n' % title)
            f.write('\n'.join(b[:25]) + '\n')
print(open(out).read().split('\n--- ')[0].rstrip())
sys.exit(1 if ours else 0)
EOF
rc=$?
say "report: $VG/report.txt; total run time $(($(now) - T0)) s (start $((T_UP - T0)) s, workload $((T_WORK - T_UP)) s, stop $((T_STOP - T_WORK)) s)"
[ "$rc" -eq 0 ] && say "PASS: no valgrind error or definite leak in Agora's frames" ||
	say "FAIL: valgrind errors or definite leaks in Agora's frames (see the report)"
exit "$rc"
