#!/bin/bash
# tests/integration/test_load.sh - the short load and fault tests for CI:
# tests/load/burst.sh --short (300 jobs on Agora and stock Slurm side by side:
# none lost, none failed, afterok order kept) and tests/load/faults.sh --short
# (3 kill -9 of slurmctld, a slurmdbd restart, a drained and a DOWN node
# during a busy auction: no job lost, none held without a reason, no ledger
# entry lost).  The full runs and their options: tests/load/README.md.
# Prints TAP (each script's own lines) and a final "N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$repo/_build/stage/plugins}
# AGORA_LOAD_WORKDIR / AGORA_LOAD_BASE_PORT: work dir prefix and base port
# (burst.sh gets them, faults.sh WORKDIR-faults and BASE_PORT+500); unset,
# each script's own defaults
LOAD_W=${AGORA_LOAD_WORKDIR:-}
LOAD_PORT=${AGORA_LOAD_BASE_PORT:-}

if [ ! -f "$PLUGIN_DIR/site_factor_agora.so" ]; then
	echo "ok 1 - load and fault tests # SKIP plugins not built in $PLUGIN_DIR"
	echo "1 passed, 0 failed"
	exit 0
fi

rc=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "burst.sh --short" "faults.sh --short"; do
	echo "# tests/load/$t"
	extra=()
	case $t in
	burst*) [ -n "$LOAD_W" ] && extra+=(--workdir "$LOAD_W")
		[ -n "$LOAD_PORT" ] && extra+=(--base-port "$LOAD_PORT") ;;
	*) [ -n "$LOAD_W" ] && extra+=(--workdir "$LOAD_W-faults")
		[ -n "$LOAD_PORT" ] && extra+=(--base-port "$((LOAD_PORT + 500))") ;;
	esac
	# shellcheck disable=SC2086
	"$repo/tests/load/"$t --plugin-dir "$PLUGIN_DIR" "${extra[@]}" 2>&1 | tee -a "$log"
	if [ "${PIPESTATUS[0]}" != 0 ]; then
		rc=1
		grep -q '^not ok' "$log" ||
			echo "not ok - tests/load/$t exited with an error" | tee -a "$log"
	fi
done
echo "$(grep -c '^ok' "$log") passed, $(grep -c '^not ok' "$log") failed"
exit $rc
