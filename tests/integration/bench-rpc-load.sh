#!/bin/bash
# bench-rpc-load.sh - slurmctld's RPC load from agorad at N queued jobs
# (issue 19 item 8): sdiag's RPCs per minute by message type and the time
# slurmctld spent in them (sdiag's total_time: the handler's time, lock
# waits and lock holding included; Slurm 22.05's sdiag has no per-lock
# figure), on c1 of a 2-cluster agora-dc federation, in three windows of
# the same harness with the same queue:
#   none    agorad stopped
#   before  agorad built from AGORA_RPCLOAD_BASE_REF (default main), or
#           AGORAD_BEFORE_BIN
#   after   agorad of this tree (AGORAD_BIN or _build)
# The queue: N jobs submitted with sbatch --hold by S parallel submitters
# (held jobs are never held for the auction and never start, so the job
# table keeps N records through the three windows; an array would be one
# record).  Not a test: it prints the three side by side.  Needs root.
# AGORA_RPCLOAD_LOAN=1 (issue 19, the loan loop's share): loaning is
# configured too (infer = c1n[1-2], train = c1n[3-4], demand 0 from a
# file: agorad lends and renews every LoanInterval), and a fourth window
# runs this tree's agorad with Loaning=no, so that "after" minus
# "after, no loans" is the loan loop's load.
#
# Env: AGORA_RPCLOAD_BASE_PORT [22000], AGORA_RPCLOAD_WORKDIR
# [/tmp/agora-dc-rpcload], AGORA_RPCLOAD_JOBS [20000],
# AGORA_RPCLOAD_SUBMITTERS [8], AGORA_RPCLOAD_WINDOW_S [60],
# AGORA_RPCLOAD_BASE_REF [main], AGORAD_BEFORE_BIN, AGORAD_BIN,
# AGORA_PLUGIN_DIR, AGORA_BUILD, AGORA_RPCLOAD_LOAN [0].
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${AGORA_BUILD:-$repo/_build}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
PLUGINS=${AGORA_PLUGIN_DIR:-$BUILD/stage/plugins}
W=${AGORA_RPCLOAD_WORKDIR:-/tmp/agora-dc-rpcload}
BASE_PORT=${AGORA_RPCLOAD_BASE_PORT:-22000}
N_JOBS=${AGORA_RPCLOAD_JOBS:-20000}
SUBMITTERS=${AGORA_RPCLOAD_SUBMITTERS:-8}
WINDOW=${AGORA_RPCLOAD_WINDOW_S:-60}
BASE_REF=${AGORA_RPCLOAD_BASE_REF:-main}
BEFORE_BIN=${AGORAD_BEFORE_BIN:-}
LOAN=${AGORA_RPCLOAD_LOAN:-0}
DC="$repo/contrib/harness/agora-dc --workdir $W"

die() { echo "bench-rpc-load: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (agora-dc)"
[ -x "$AGORAD_BIN" ] || die "$AGORAD_BIN: build agorad first"
t=$(mktemp -d /tmp/agora-rpcload.XXXXXX)
trap '$DC stop >/dev/null 2>&1; rm -rf "$t"' EXIT

# the 'before' agorad: built from BASE_REF (common/ and contrib/agorad only)
if [ -z "$BEFORE_BIN" ]; then
	echo "# building agorad of $BASE_REF" >&2
	mkdir -p "$t/base"
	git -C "$repo" archive "$BASE_REF" | tar -x -C "$t/base" || die "git archive $BASE_REF"
	(cd "$t/base" && autoreconf -fi >/dev/null 2>&1 && mkdir -p _b && cd _b &&
		../configure >/dev/null 2>&1 && make -j2 -C common >/dev/null 2>&1 &&
		make -j2 -C contrib/agorad >/dev/null 2>&1) || die "cannot build agorad of $BASE_REF"
	BEFORE_BIN=$t/base/_b/contrib/agorad/agorad
fi
[ -x "$BEFORE_BIN" ] || die "$BEFORE_BIN is not an executable"

cat >"$t/extra.conf" <<EOT
PriorityType=priority/multifactor
PrioritySiteFactorPlugin=site_factor/agora
PriorityCalcPeriod=1
SlurmctldPlugstack=slurmctld/agora
MaxJobCount=$((N_JOBS * 2 + 1000))
EOT
cat >"$t/agora.conf" <<EOT
FedAuction=yes
FedAuctionInterval=2
FedAuctionTimeout=30
EOT
# ---- loaning configured (AGORA_RPCLOAD_LOAN=1, issue 19's loan loop) ----
if [ "$LOAN" = 1 ]; then
	cat >>"$t/extra.conf" <<EOT
PartitionName=infer Nodes=c@C@n[1-2] MaxTime=INFINITE State=UP
PartitionName=train Nodes=c@C@n[3-4] MaxTime=INFINITE State=UP
EOT
	echo 0 >"$t/demand"
	chmod 0644 "$t/demand"
	cat >>"$t/agora.conf" <<EOT
Loaning=yes
LoanInferencePartitions=infer
LoanTrainPartitions=train
LoanDemandSource=file:$t/demand
EOT
fi
# ---- end of the loaning part ----
mkdir -p "$t/bin"
cp "$AGORAD_BIN" "$t/bin/agorad"
$DC --base-port "$BASE_PORT" --clusters 2 --nodes 4 --plugin-dir "$PLUGINS" \
	--conf-extra "$t/extra.conf" --agora-conf "$t/agora.conf" --agorad \
	--agorad-bin "$t/bin/agorad" --fresh start >"$t/start.log" 2>&1 ||
	{ tail "$t/start.log"; die "agora-dc start failed"; }
$DC stop-agorad >/dev/null 2>&1
export SLURM_CONF=$W/c1/etc/slurm.conf

# the queue: N held jobs from S submitters at once
t0=$(date +%s)
seq 1 "$N_JOBS" | xargs -P "$SUBMITTERS" -n 250 sh -c '
	for i in "$@"; do sbatch --hold -M c1 -J q --wrap true >/dev/null 2>&1 ||
		sbatch --hold -M c1 -J q --wrap true >/dev/null 2>&1 || echo fail; done' sh \
	>"$t/submit.out"
queued=$(squeue --local -h -t PD -o %i 2>/dev/null | grep -c .)
echo "# queue: $queued of $N_JOBS jobs pending (held) on c1, submitted in $(($(date +%s) - t0)) s by $SUBMITTERS parallel sbatch loops; $(grep -c fail "$t/submit.out") failed twice" >&2
[ "$queued" -ge $((N_JOBS * 95 / 100)) ] || die "only $queued jobs queued"

# sdiag's RPC table: TYPE COUNT TOTAL_US per line
rpc_table() {
	awk '/statistics by message type/ {on = 1; next}
	     /statistics by user/ {on = 0}
	     on && /count:/ {
		type = $1; c = 0; tt = 0
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^count:/) c = substr($i, 7)
			if ($i ~ /^total_time:/) tt = substr($i, 12)
		}
		print type, c, tt
	     }'
}
window() { # NAME: reset, wait WINDOW s, read sdiag
	sdiag -r >/dev/null || die "sdiag -r failed"
	sleep "$WINDOW"
	sdiag >"$t/$1.sdiag" || die "sdiag failed"
	rpc_table <"$t/$1.sdiag" >"$t/$1.rpc"
	awk '/^Server thread count|^Agent queue size|^Jobs pending/' "$t/$1.sdiag" | sed "s/^/# $1: /" >&2
}
echo "# window 1/3: agorad stopped (${WINDOW}s)" >&2
sleep 5
window none
versions="before after"
[ "$LOAN" = 1 ] && versions="before after noloan"
for v in $versions; do
	if [ $v = before ]; then cp "$BEFORE_BIN" "$t/bin/agorad"; else cp "$AGORAD_BIN" "$t/bin/agorad"; fi
	# the loan loop's share: the same agorad with Loaning=no
	if [ $v = noloan ]; then
		for c in "$W"/c*/etc/agora.conf; do
			sed -i 's/^Loaning=yes/Loaning=no/' "$c"
		done
	fi
	$DC start-agorad >/dev/null 2>&1 || die "start-agorad ($v) failed"
	sleep 6 # agorad's first rounds (the full reads) before the window
	echo "# window: agorad $v (${WINDOW}s)" >&2
	window $v
	$DC stop-agorad >/dev/null 2>&1
	sleep 3
done

# side by side: RPCs per minute and ms of slurmctld time per minute
files=("$t/none.rpc" "$t/before.rpc" "$t/after.rpc")
heads="no agorad|agorad before|agorad after"
if [ "$LOAN" = 1 ]; then
	files+=("$t/noloan.rpc")
	heads="no agorad|before, loans|after, loans|after, no loans"
fi
awk -v win="$WINDOW" -v heads="$heads" '
	FNR == 1 {f++}
	{ key = $1; seen[key] = 1; c[f, key] = $2; tt[f, key] = $3; C[f] += $2; T[f] += $3 }
	END {
		nh = split(heads, h, "|")
		printf "%-34s", "RPCs/min (ms/min in slurmctld)"
		for (g = 1; g <= nh; g++) printf " %27s", h[g]
		printf "\n"
		n = 0
		for (k in seen) keys[++n] = k
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (keys[j] < keys[i]) {x = keys[i]; keys[i] = keys[j]; keys[j] = x}
		for (i = 1; i <= n; i++) {
			k = keys[i]
			printf "%-34s", k
			for (g = 1; g <= nh; g++)
				printf " %14.1f (%9.1f)", c[g, k] * 60 / win, tt[g, k] * 60 / win / 1000
			printf "\n"
		}
		printf "%-34s", "ALL"
		for (g = 1; g <= nh; g++) printf " %14.1f (%9.1f)", C[g] * 60 / win, T[g] * 60 / win / 1000
		printf "\n"
	}' "${files[@]}"
echo "# $queued held jobs on c1 (2 clusters x 4 nodes x 8 GPUs), windows of $WINDOW s; sdiag of c1${LOAN:+; AGORA_RPCLOAD_LOAN=$LOAN}"
