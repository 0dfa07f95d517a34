#!/bin/bash
# tests/integration/test_replay.sh - contrib/replay/agora-replay end to end on
# a real local Slurm cluster (CI-sized, < 2 min).
#
# One cluster of 4 nodes x 8 fake GPUs (contrib/harness/agora-dc, stock
# sched/backfill, base port 25000, work dir /tmp/agora-replay-test).  20 jobs
# of the Philly trace from row 1171 (1-, 2-, 4- and 8-GPU jobs and one
# 32-GPU gang of three tenants), compressed 5000x (durations >= 2 s) are
# submitted with plain sbatch.  Checks, each able to fail:
#   - agora-replay exits 0 (every job ended COMPLETED)
#   - sacct says COMPLETED for every submitted job
#   - the per-job CSV has one row per job, in agora-sim's --jobs-csv format
#   - agora-sim score accepts it and reports jobs == 20, unfinished == 0
#   - every job ran under the account vc_<tenant of its trace row>
#   - a bad trace row is reported as FILE:LINE before anything is submitted
# Prints TAP and a final "N passed, M failed" line.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
REPLAY=$repo/contrib/replay/agora-replay
W=${AGORA_REPLAY_WORKDIR:-/tmp/agora-replay-test${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_REPLAY_BASE_PORT:-$((25000 + ${AGORA_TEST_PORT_SHIFT:-0}))}
TRACE=$repo/contrib/traces/philly_pollux_jobs_2017-10-02_2wk.csv
JOBS=20

SIM=${AGORA_SIM:-}
if [ -z "$SIM" ]; then
	for c in "${AGORA_BUILD_DIR:-$repo/_build}/contrib/sim/agora-sim" "$repo"/_build*/contrib/sim/agora-sim; do
		[ -x "$c" ] && "$c" slice --help >/dev/null 2>&1 && { SIM=$c; break; }
	done
fi

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"
finish() {
	if [ "${AGORA_IT_KEEP:-0}" != 1 ]; then
		"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
	fi
	tap_counts
	exit $?
}

if [ -z "$SIM" ]; then
	echo "ok 1 - replay tests # SKIP agora-sim (with slice/score) not built"
	echo "1 passed, 0 failed"
	exit 0
fi

# bad input first: no cluster needed
IN=${W}.in
mkdir -p "$IN"
printf 'submit,duration,gpus\n0,10,1\n5,abc,1\n' >"$IN/bad.csv"
"$REPLAY" --trace "$IN/bad.csv" --jobs 2 --speedup 2 --sim "$SIM" --workdir "$W" \
	--out "$IN/bad" >"$IN/bad.out" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q "bad.csv:3: duration:" "$IN/bad.out"; then
	ok "a bad trace row is reported as FILE:LINE (exit 2)"
else
	notok "a bad trace row is reported as FILE:LINE (rc $rc)"
	diag <"$IN/bad.out"
fi

# the accounts named explicitly: the trace has CRLF line ends, and
# agora-dc's default list (cut -f5 of the trace) would carry the '\r'
ACCTS=acct_a,acct_b$(tail -n +2 "$TRACE" | cut -d, -f5 | tr -d '\r' | sort -u | sed 's/^/,vc_/' | tr -d '\n')
# At speedup 5000 a job's limit is its compressed duration x U(1, 2)
# rounded up to a minute: a 32-s job gets 60 s.  On a loaded 2-core CI
# host slurmd once took 31 s from slurmctld's start of a node's first job
# to its launch (its first prolog), and the job timed out after 28 s of
# its 32 (CI, 2026-12-04).  A minute of OverTimeLimit, Slurm's own grace
# for a job past its limit, keeps a launch delay from reading as a lost
# job; the replay's schedule still uses the limits as drawn.
printf 'OverTimeLimit=1\n' >"$IN/extra.conf"
"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
t_start=$(date +%s)
if ! "$HARNESS" --workdir "$W" --fresh --clusters 1 --nodes 4 --gpus 8 \
	--base-port "$BASE_PORT" --no-plugin-dir --sched sched/backfill \
	--conf-extra "$IN/extra.conf" \
	--accounts "$ACCTS" start >"$IN/harness.out" 2>&1; then
	notok "harness starts 1 cluster x 4 nodes x 8 GPUs (stock sched/backfill)"
	tail -30 "$IN/harness.out" | diag
	finish
fi
ok "harness starts 1 cluster x 4 nodes x 8 GPUs, stock sched/backfill ($(($(date +%s) - t_start)) s)"
export SLURM_CONF=$W/c1/etc/slurm.conf
OUT=$W/replay-smoke

t_start=$(date +%s)
"$REPLAY" --trace "$TRACE" --start 1171 --jobs "$JOBS" --speedup 5000 \
	--min-duration 2 --workdir "$W" --sim "$SIM" --label smoke --out "$OUT" \
	--timeout 90 >"$IN/replay.out" 2>&1
rc=$?
if [ "$rc" = 0 ]; then
	ok "agora-replay of $JOBS Philly jobs exits 0 ($(($(date +%s) - t_start)) s)"
else
	notok "agora-replay of $JOBS Philly jobs exits 0 (rc $rc)"
	tail -30 "$IN/replay.out" | diag
fi

ids=$(cut -f2 "$OUT/submitted.tsv" 2>/dev/null | paste -sd,)
nsub=$(grep -c . "$OUT/submitted.tsv" 2>/dev/null || echo 0)
states=$(sacct -X -n -P -j "${ids:-0}" -o JobID,State 2>/dev/null | sort -u)
ncomp=$(grep -c '|COMPLETED$' <<<"$states" || true)
if [ "$nsub" = "$JOBS" ] && [ "$ncomp" = "$JOBS" ]; then
	ok "sacct: all $JOBS submitted jobs COMPLETED"
else
	notok "sacct: all $JOBS submitted jobs COMPLETED ($nsub submitted, $ncomp completed)"
	grep -v '|COMPLETED$' <<<"$states" | head -10 | diag
fi

CSV=$OUT/jobs-smoke.csv
hdr=$(head -1 "$CSV" 2>/dev/null)
rows=$(($(wc -l <"$CSV" 2>/dev/null || echo 1) - 1))
uniq_ids=$(tail -n +2 "$CSV" 2>/dev/null | cut -d, -f1 | sort -u | wc -l)
if [ "$hdr" = "id,tenant,submit,duration,gpus,time_limit,first_start,finish,jct,queue,first_wait,run_s,rho,preemptions,level" ] &&
	[ "$rows" = "$JOBS" ] && [ "$uniq_ids" = "$JOBS" ] &&
	! tail -n +2 "$CSV" | cut -d, -f8 | grep -qx -- -1; then
	ok "per-job CSV: agora-sim's header, one finished row per job ($rows)"
else
	notok "per-job CSV: agora-sim's header, one finished row per job (rows $rows, ids $uniq_ids)"
	head -5 "$CSV" 2>/dev/null | diag
fi

"$SIM" score --jobs "$CSV" --cluster 4x8 --label smoke --json "$IN/score.json" >"$IN/score.out" 2>&1
rc=$?
read -r sj su < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["smoke"]; print(d["jobs"], d["unfinished"])' "$IN/score.json" 2>/dev/null)
if [ "$rc" = 0 ] && [ "${sj:-}" = "$JOBS" ] && [ "${su:-}" = 0 ]; then
	ok "agora-sim score accepts the CSV: jobs == $JOBS, unfinished == 0"
else
	notok "agora-sim score accepts the CSV (rc $rc, jobs ${sj:-?}, unfinished ${su:-?})"
	diag <"$IN/score.out"
fi

# tenants -> accounts: the account of every job is vc_<tenant of its row>
bad=0
while IFS=$'\t' read -r id jid tenant _; do
	a=$(sacct -X -n -P -j "$jid" -o Account,JobName 2>/dev/null | tail -1)
	[ "$a" = "vc_$tenant|r$id" ] || { bad=$((bad + 1)); echo "row $id job $jid: '$a', want vc_$tenant|r$id"; }
done <"$OUT/submitted.tsv" >"$IN/acct.out"
ntenants=$(cut -f3 "$OUT/submitted.tsv" | sort -u | wc -l)
if [ "$bad" = 0 ] && [ "$nsub" -gt 0 ]; then
	ok "every job ran under account vc_<its trace tenant> ($ntenants tenants) named r<row>"
else
	notok "every job ran under account vc_<its trace tenant> ($bad wrong)"
	head -5 "$IN/acct.out" | diag
fi
finish
