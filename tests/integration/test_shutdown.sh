#!/bin/bash
# tests/integration/test_shutdown.sh - slurmctld's exit with Agora loaded:
# a late priority_g_set() must not run unmapped code.
#
# Slurm 22.05 and 24.11 unload the priority plugin (priority_g_fini(), and
# with it site_factor/agora) before fed_mgr_fini() stops the federation's
# job update thread; a sibling's job update handled in between calls
# set_job_prio() -> priority_g_set() through pointers into the unloaded
# objects (a slurmctld core from the dispatch bench: doc/design.md,
# "Shutdown").  That thread's timing cannot be arranged from outside, so
# this test makes the same call itself, with gdb, at the same point:
#   - one cluster of 1 node x 8 fake GPUs (contrib/harness/agora-dc) with
#     agora-all.conf (priority/multifactor + site_factor/agora), a held job;
#   - gdb attaches to slurmctld and keeps the address of
#     priority/multifactor's priority_p_set (what priority_g_set() calls);
#   - scontrol shutdown; at shutdown_state_save(), which slurmctld calls
#     after priority_g_fini() in both releases, gdb calls that address for
#     the held job, as the fed thread would.
# Checks, each able to fail: the call returns a priority (without
# site_factor/agora keeping both objects mapped at exit, it segfaults in
# unmapped memory, which gdb reports as a signal in the called function);
# slurmctld then exits with status 0 (gdb stays attached to the end).
# Needs gdb (agora-deps installs it).  Base port 31700, work dir
# /tmp/agora-dc-shutdown; AGORA_SHUTDOWN_WORKDIR, AGORA_SHUTDOWN_BASE_PORT.
# Prints TAP and a final "N passed, M failed" line.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
W=${AGORA_SHUTDOWN_WORKDIR:-/tmp/agora-dc-shutdown${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_SHUTDOWN_BASE_PORT:-$((31700 + ${AGORA_TEST_PORT_SHIFT:-0}))}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$repo/_build/stage/plugins}

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

if [ ! -f "$PLUGIN_DIR/site_factor_agora.so" ]; then
	echo "ok 1 - shutdown # SKIP plugins not built in $PLUGIN_DIR"
	echo "1 passed, 0 failed"
	exit 0
fi
if [ "$(uname -m)" != x86_64 ]; then
	echo "ok 1 - shutdown # SKIP the calls are made by hand for x86-64 only"
	echo "1 passed, 0 failed"
	exit 0
fi
if ! command -v gdb >/dev/null; then
	notok "gdb is installed (contrib/bin/agora-deps installs it)"
	tap_counts
	exit 1
fi
IN=${W}.in
rm -rf "$IN"
mkdir -p "$IN"
printf 'SchedulerInterval=1\nAuctionPartitions=batch\n' >"$IN/agora.conf"
cp "$repo/contrib/harness/agora-all.conf" "$IN/extra.conf"
trap '"$HARNESS" --workdir "$W" stop >/dev/null 2>&1' EXIT
if ! "$HARNESS" --workdir "$W" --fresh --clusters 1 --nodes 1 --gpus 8 \
	--base-port "$BASE_PORT" --plugin-dir "$PLUGIN_DIR" \
	--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" \
	start >"$IN/harness.out" 2>&1; then
	notok "harness starts one cluster"
	tail -20 "$IN/harness.out" | diag
	tap_counts
	exit 1
fi
export SLURM_CONF=$W/c1/etc/slurm.conf
LOGF=$W/log/c1/slurmctld.log
job=$(sbatch --parsable --hold -A acct_a --gres=gpu:1 -t 10 -o /dev/null --wrap 'sleep 1' | cut -d';' -f1)
pid=$(cat "$W/run/c1-slurmctld.pid" 2>/dev/null)
if [ -z "$job" ] || [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
	notok "a held job ('$job') and slurmctld's pid ('$pid')"
	tap_counts
	exit 1
fi
# The calls are made by hand, not with gdb's "call": on a host whose CPUs
# have AMX (Sapphire Rapids, CI's machine since 7 December) Debian 12's
# gdb 13.1 cannot restore the extended state after an inferior call
# ("Couldn't write extended state status: Bad address").  By hand
# (agora_call FUNCTION ARG1 ARG2), gdb writes only general registers and
# memory: a return address on a fresh 16-byte aligned stack below the red
# zone (the breakpoint's own address, so the return stops there again),
# the arguments, and the function as the pc.  The caller-saved registers are restored after the two calls;
# no vector register is live at that point (shutdown_state_save takes no
# argument).  x86-64 only.
cat >"$IN/gdb.cmd" <<EOT
set pagination off
set confirm off
handle all nostop noprint pass
handle SIGSEGV stop print nopass
set \$pps = (void *) &priority_p_set
set \$fjr = (void *) &find_job_record
printf "AGORA-PPS %p\n", \$pps
break shutdown_state_save
printf "AGORA-ATTACHED\n"
continue
printf "AGORA-AT-BREAK\n"
set \$o_rip = (unsigned long) \$rip
set \$o_rsp = (unsigned long) \$rsp
set \$o_rax = \$rax
set \$o_rcx = \$rcx
set \$o_rdx = \$rdx
set \$o_rsi = \$rsi
set \$o_rdi = \$rdi
set \$o_r8 = \$r8
set \$o_r9 = \$r9
set \$o_r10 = \$r10
set \$o_r11 = \$r11
set \$nsp = ((\$o_rsp - 1024) & ~15) - 8
define agora_call
set *(unsigned long *) \$nsp = \$o_rip
set \$rdi = \$arg1
set \$rsi = \$arg2
set \$rsp = \$nsp
set \$rip = \$arg0
continue
end
agora_call \$fjr $job 0
printf "AGORA-FOUND %p\n", (void *) \$rax
set \$jp = \$rax
agora_call \$pps 0 \$jp
print (unsigned int) \$rax
printf "AGORA-CALLED\n"
set \$rsp = \$o_rsp
set \$rip = \$o_rip
set \$rax = \$o_rax
set \$rcx = \$o_rcx
set \$rdx = \$o_rdx
set \$rsi = \$o_rsi
set \$rdi = \$o_rdi
set \$r8 = \$o_r8
set \$r9 = \$o_r9
set \$r10 = \$o_r10
set \$r11 = \$o_r11
delete
continue
printf "AGORA-END\n"
EOT
gdb -nx -batch -p "$pid" -x "$IN/gdb.cmd" >"$IN/gdb.out" 2>&1 &
gpid=$!
attached() { grep -q AGORA-ATTACHED "$IN/gdb.out"; }
if ! wait_for 60 attached; then
	notok "gdb attaches to slurmctld $pid"
	diag <"$IN/gdb.out"
	kill "$gpid" 2>/dev/null
	tap_counts
	exit 1
fi
scontrol shutdown >/dev/null 2>&1 || kill -TERM "$pid"
gone() { ! kill -0 "$gpid" 2>/dev/null; }
wait_for 120 gone || kill -9 "$gpid" 2>/dev/null
wait "$gpid" 2>/dev/null
res=$(sed -n 's/^\$1 = //p' "$IN/gdb.out")
if grep -q AGORA-AT-BREAK "$IN/gdb.out" && grep -q AGORA-CALLED "$IN/gdb.out" &&
	[[ $res =~ ^[0-9]+$ ]] && ! grep -q "received signal SIGSEGV" "$IN/gdb.out"; then
	ok "after priority_g_fini(), priority_p_set for job $job returns priority $res (both objects still mapped)"
else
	notok "a call of priority_p_set after priority_g_fini(): gdb says"
	grep -v '^\[\|^warning\|^$' "$IN/gdb.out" | tail -20 | diag
fi
if grep -q "exited normally" "$IN/gdb.out"; then
	ok "slurmctld then exits with status 0"
else
	notok "slurmctld $pid exits with status 0 after the call: gdb says"
	grep -v '^\[\|^warning\|^$' "$IN/gdb.out" | tail -8 | diag
	tail -5 "$LOGF" | diag
fi
tap_counts
