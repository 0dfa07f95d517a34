#!/bin/bash
# tests/integration/test_release.sh - a plugin built for one Slurm release
# is refused by the slurmctld of another, with Slurm's own version check
# (plugin.c: "Incompatible Slurm plugin PATH version (X.Y.Z)"), and the
# plugins of a release load into that release's slurmctld.
#
# Needs both builds (contrib/bin/agora-test makes them): _build (22.05,
# Debian's slurmctld) and _build-24.11 (the 24.11 prefix of
# contrib/slurm-src/agora-slurm-src --release 24.11).  Three short
# single-node harness starts (contrib/harness/agora-dc, all of Agora:
# contrib/harness/agora-all.conf):
#   1. Slurm 24.11 with the 22.05 plugins: slurmctld refuses to start and
#      its log names preempt_agora.so as version 22.05.x
#   2. Slurm 22.05 with the 24.11 plugins: the same, version 24.11.x
#   3. Slurm 24.11 with the 24.11 plugins: slurmctld is UP with
#      site_factor/agora and preempt/agora loaded, and a GPU job completes
# Environment: AGORA_RELEASE_WORKDIR [/tmp/agora-release-test],
# AGORA_RELEASE_BASE_PORT [24600] (takes base+1 .. base+101).
# Prints TAP and a final "N passed, M failed" line.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
W=${AGORA_RELEASE_WORKDIR:-/tmp/agora-release-test${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_RELEASE_BASE_PORT:-$((24600 + ${AGORA_TEST_PORT_SHIFT:-0}))}
B22=${AGORA_BUILD:-$repo/_build}
B24=${AGORA_BUILD_2411:-$repo/_build-24.11}

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

P24=$("$repo/contrib/slurm-src/agora-slurm-src" -q --release 24.11 2>/dev/null | tail -1)
P24=${P24##*SLURM_PREFIX=}
if [ ! -f "$B22/stage/plugins/preempt_agora.so" ] ||
	[ ! -f "$B24/stage/plugins/preempt_agora.so" ] || [ ! -x "$P24/sbin/slurmctld" ]; then
	echo "ok 1 - release tests # SKIP need both builds ($B22, $B24) and the 24.11 prefix"
	echo "1 passed, 0 failed"
	exit 0
fi

stop() { "$HARNESS" --workdir "$W.$1" stop >/dev/null 2>&1 || true; }
stop_all() { local r; for r in a b c; do stop "$r"; done; }
trap stop_all EXIT

# start TAG RELEASE PLUGINDIR: a one-node cluster; its output in $W.TAG.out
start() {
	stop "$1"
	rm -rf "$W.$1"
	"$HARNESS" --workdir "$W.$1" --base-port "$BASE_PORT" --slurm "$2" \
		--clusters 1 --nodes 1 --plugin-dir "$3" \
		--conf-extra "$repo/contrib/harness/agora-all.conf" start >"$W.$1.out" 2>&1
}

# refused TAG PLUGIN VERSION_PREFIX: slurmctld named the plugin as foreign
refused() {
	grep -q "Incompatible Slurm plugin $3/$1 version ($4" "$W.$2/log/c1/slurmctld.log" 2>/dev/null
}

# 1. 24.11 daemons, 22.05 plugins
if start a 24.11 "$B22/stage/plugins"; then
	notok "Slurm 24.11 refuses the 22.05 plugins (slurmctld started)"
else
	check "Slurm 24.11 refuses the 22.05 plugins: start fails" \
		grep -q 'slurmctld exited during start-up\|did not start' "$W.a.out"
	check "Slurm 24.11's log: preempt_agora.so is an incompatible 22.05 plugin" \
		refused preempt_agora.so a "$B22/stage/plugins" 22.05.
fi
grep -h 'Incompatible' "$W.a/log/c1/slurmctld.log" 2>/dev/null | head -3 | diag
stop a

# 2. 22.05 daemons, 24.11 plugins
if start b 22.05 "$B24/stage/plugins"; then
	notok "Slurm 22.05 refuses the 24.11 plugins (slurmctld started)"
else
	check "Slurm 22.05 refuses the 24.11 plugins: start fails" \
		grep -q 'slurmctld exited during start-up\|did not start' "$W.b.out"
	check "Slurm 22.05's log: preempt_agora.so is an incompatible 24.11 plugin" \
		refused preempt_agora.so b "$B24/stage/plugins" 24.11.
fi
grep -h 'Incompatible' "$W.b/log/c1/slurmctld.log" 2>/dev/null | head -3 | diag
stop b

# 3. 24.11 daemons, 24.11 plugins
if start c 24.11 "$B24/stage/plugins"; then
	ok "Slurm 24.11 starts with the 24.11 plugins"
	log=$W.c/log/c1/slurmctld.log
	check "site_factor/agora loaded into Slurm 24.11" grep -q 'site_factor/agora: loaded' "$log"
	conf=$W.c/c1/etc/slurm.conf
	check "preempt/agora is Slurm 24.11's PreemptType" \
		sh -c "SLURM_CONF=$conf $P24/bin/scontrol show config | grep -q 'PreemptType *= preempt/agora'"
	jid=$(SLURM_CONF=$conf "$P24/bin/sbatch" --parsable -N1 --gres=gpu:2 -A acct_a \
		-o /dev/null --wrap true 2>/dev/null)
	done_ok() {
		SLURM_CONF=$conf "$P24/bin/scontrol" show job "$jid" 2>/dev/null |
			grep -q 'JobState=COMPLETED'
	}
	if [ -n "$jid" ] && wait_for 60 done_ok; then
		ok "a GPU job completes on Slurm 24.11 with Agora loaded"
	else
		notok "a GPU job completes on Slurm 24.11 with Agora loaded (job ${jid:-not submitted})"
		SLURM_CONF=$conf "$P24/bin/scontrol" show job "$jid" 2>&1 | diag
	fi
else
	notok "Slurm 24.11 starts with the 24.11 plugins"
	tail -5 "$W.c.out" | diag
fi
stop c

tap_counts
