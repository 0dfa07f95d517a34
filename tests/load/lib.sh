# tests/load/lib.sh - shared by burst.sh and faults.sh: start an agora-dc
# federation with Agora on cluster c1 and, optionally, stock Slurm on c2.
#
# The caller sets W (work dir), BASE_PORT, PLUGIN_DIR, CLUSTERS and IN (a
# directory for generated inputs) before calling load_start.  Nothing here
# names a SchedulerType or PreemptType: agora-dc picks SchedulerType from
# the plugin dir, and contrib/harness/agora-all.conf holds the other
# slurm.conf lines that switch Agora on.
# shellcheck shell=bash

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
ALL_CONF=$repo/contrib/harness/agora-all.conf
TRACE=$repo/contrib/traces/philly_pollux_jobs_2017-10-02_2wk.csv
# AGORA_DC_SLURM=24.11: that release's sbatch, squeue, ... (agora-dc reads
# the same variable for its daemons)
# shellcheck source=tests/integration/slurm_path.sh
. "$repo/tests/integration/slurm_path.sh"

say() { echo "# $(date +%H:%M:%S) $*"; }
die() { echo "Bail out! $*"; exit 2; }

# The slurm.conf of cluster N
conf_of() { echo "$W/c$1/etc/slurm.conf"; }
on() { # on N CMD...: run a Slurm client against cluster N
	local c=$1
	shift
	SLURM_CONF=$(conf_of "$c") "$@"
}

# load_write_inputs: agora.conf (AuctionPartitions=batch) and the extra
# slurm.conf lines: agora-all.conf as the lead keeps it, plus debug logging
# so that Agora's per-pass lines reach slurmctld.log.
load_write_inputs() {
	mkdir -p "$IN"
	cat >"$IN/agora.conf" <<'CONF'
# Agora for the load and fault tests: the whole partition is auctioned
SchedulerInterval=${AGORA_LOAD_SCHED_INTERVAL}
AuctionPartitions=batch
LeaseTime=60
GraceTime=10
DefaultQuota=10
CreditHalfLife=24
CreditPeriod=24
CONF
	sed -i "s/\${AGORA_LOAD_SCHED_INTERVAL}/${AGORA_LOAD_SCHED_INTERVAL:-2}/" "$IN/agora.conf"
	{
		echo "# ---- contrib/harness/agora-all.conf"
		cat "$ALL_CONF"
		echo "# ---- the load tests"
		echo "SlurmctldDebug=debug"
		# a burst of thousands of jobs: room for them and their records
		echo "MaxJobCount=100000"
	} >"$IN/extra.conf"
}

# load_stock_conf N: rewrite cluster N's slurm.conf as stock Slurm (below)
# load_stock_cluster N: turn cluster N into stock Slurm (the baseline in the
# same run): PluginDir without Agora's directory, every line that names an
# Agora plugin dropped, SchedulerType sched/backfill; then restart its
# slurmctld.  Its slurmds keep their configuration (same plugin names and
# ids, so nothing they do differs).
load_stock_conf() {
	local c=$1 f
	f=$(conf_of "$c")
	cp "$f" "$f.agora"
	awk -v pd="$PLUGIN_DIR" '
		/^PluginDir=/ {
			n = split(substr($0, 11), d, ":"); out = ""
			for (i = 1; i <= n; i++)
				if (d[i] != pd && d[i] != "") out = out (out == "" ? "" : ":") d[i]
			print "PluginDir=" out; next
		}
		/^SchedulerType=/ { print "SchedulerType=sched/backfill"; next }
		/^[A-Za-z]+=.*\/agora([ ,:]|$)/ { print "# stock baseline: dropped " $0; next }
		{ print }' "$f.agora" >"$f.tmp"
	# without a preempt plugin, preemption's other settings are errors
	if ! grep -q '^PreemptType=' "$f.tmp"; then
		sed -i 's/^Preempt[A-Za-z]*=.*/# stock baseline: dropped &/' "$f.tmp"
	fi
	mv "$f.tmp" "$f"
}
load_stock_cluster() {
	local c=$1
	load_stock_conf "$c"
	"$HARNESS" --workdir "$W" restart-ctld "$c" >"$IN/restart-stock.out" 2>&1 ||
		{ tail -20 "$IN/restart-stock.out"; die "c$c: restart as stock Slurm failed"; }
}

# load_start: a fresh harness with Agora; the clusters in STOCK_CLUSTERS
# (e.g. "2") then run stock Slurm
load_start() {
	local c try
	[ -f "$PLUGIN_DIR/site_factor_agora.so" ] || die "no Agora plugins in $PLUGIN_DIR (build first)"
	load_write_inputs
	HARNESS_ARGS=(--workdir "$W" --clusters "$CLUSTERS" --nodes "${NODES:-8}"
		--gpus "${GPUS:-8}" --base-port "$BASE_PORT" --plugin-dir "$PLUGIN_DIR"
		--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" --cred-expire 10)
	# A second try: the harness's ports lie in Linux's ephemeral range, and a
	# client connection that happens to hold one makes a slurmd's bind fail.
	for try in 1 2; do
		"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
		"$HARNESS" "${HARNESS_ARGS[@]}" --fresh start >"$IN/harness.out" 2>&1 && break
		tail -30 "$IN/harness.out"
		[ "$try" = 1 ] || die "agora-dc start failed twice (see $IN/harness.out)"
		say "agora-dc start failed; trying once more"
		sleep 5
	done
	for c in ${STOCK_CLUSTERS:-}; do load_stock_cluster "$c"; done
	say "harness up: $(grep -m1 'SchedulerType=' "$IN/harness.out" | sed 's/^[^S]*//')"
}

load_stop() {
	[ "${AGORA_LOAD_KEEP:-0}" = 1 ] || "$HARNESS" --workdir "$W" stop >/dev/null 2>&1
}
