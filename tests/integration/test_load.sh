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
	# shellcheck disable=SC2086
	"$repo/tests/load/"$t --plugin-dir "$PLUGIN_DIR" 2>&1 | tee -a "$log"
	if [ "${PIPESTATUS[0]}" != 0 ]; then
		rc=1
		grep -q '^not ok' "$log" ||
			echo "not ok - tests/load/$t exited with an error" | tee -a "$log"
	fi
done
echo "$(grep -c '^ok' "$log") passed, $(grep -c '^not ok' "$log") failed"
exit $rc
