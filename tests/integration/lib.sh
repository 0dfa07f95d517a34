# shellcheck shell=bash
# tests/integration/lib.sh - sourced by the integration scripts: TAP output
# (ok, notok, check, diag) with its counts, and wait_for.  A script prints
# its checks with ok/notok, then tap_counts ("N passed, M failed", which
# agora-test counts) and exits non-zero if anything failed.

n=0
pass=0
failn=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); failn=$((failn + 1)); echo "not ok $n - $*"; }
check() { # check NAME CMD...: ok if CMD succeeds
	local name=$1
	shift
	if "$@"; then ok "$name"; else notok "$name"; fi
}
diag() { sed 's/^/#   /'; }
tap_ok() { [ "$failn" = 0 ]; }
# the closing line agora-test counts; its status: 0 if nothing failed
tap_counts() {
	echo "$pass passed, $failn failed"
	tap_ok
}
# skip_unless_built SUITE FILE...: a suite that needs these built files
# (agorad, agoractl, a plugin) prints its one SKIP line and exits 0 when
# one of them is missing (a build without Slurm or without the tools)
skip_unless_built() {
	local suite=$1 f
	shift
	for f in "$@"; do
		[ -e "$f" ] && continue
		echo "ok 1 - $suite # SKIP ${f##*/} not built ($f)"
		echo "1 passed, 0 failed"
		exit 0
	done
}

# wait_for LIMIT_S CMD...: until CMD succeeds (every 0.5 s); 1 if it has
# not by LIMIT_S seconds from now
wait_for() {
	local d=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge $d ] && return 1
		sleep 0.5
	done
}

# One agora-dc instance per script (HARNESS, W, IN, t_start set by it):
# harness_start NAME ARGS... stops what ran at W, starts agora-dc with
# --workdir W ARGS... start (output in IN/harness.out), prints ok/notok
# NAME and, if it failed, finishes; it_cleanup stops it (AGORA_IT_KEEP=1
# leaves it running) and runs at EXIT; it_finish prints the runtime and
# the counts and exits with tap_counts' status.
# shellcheck disable=SC2154 # HARNESS, W, IN, t_start: the script's
it_cleanup() {
	[ "${AGORA_IT_KEEP:-0}" = 1 ] || "$HARNESS" --workdir "$W" stop >/dev/null 2>&1
}
# shellcheck disable=SC2154
it_finish() {
	it_cleanup
	echo "# runtime $(($(date +%s) - t_start)) s"
	tap_counts
	exit $?
}
harness_start() {
	local name=$1
	shift
	"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
	trap it_cleanup EXIT
	if ! "$HARNESS" --workdir "$W" "$@" start >"$IN/harness.out" 2>&1; then
		notok "$name"
		tail -30 "$IN/harness.out" | diag
		it_finish
	fi
	ok "$name ($(($(date +%s) - t_start)) s)"
}

# AGORA_DC_SLURM=24.11: the tests' own Slurm commands are that release's
# shellcheck source=tests/integration/slurm_path.sh
. "$(dirname "${BASH_SOURCE[0]}")/slurm_path.sh"
