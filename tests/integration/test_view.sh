#!/bin/bash
# tests/integration/test_view.sh - slurmctld/agora and agoractl: PrivateData,
# parse-only-on-change, sanitised names, bad view files, on a real cluster.
#
# One cluster of 2 nodes x 8 fake GPUs (contrib/harness/agora-dc) with
# SlurmctldPlugstack=slurmctld/agora, PrivateData=accounts,jobs,usage and
# SlurmctldDebug=debug (the plugin logs "parse N of M calls").  When the
# plugin dir holds Agora's scheduling pass (sched_agora.so, or
# site_factor_agora.so under priority/multifactor), it runs with the
# partition "batch" auction-managed and writes agora_view.json itself;
# otherwise the test writes one with the same keys.  A non-root user (agoraview, created
# with useradd if missing) is added to acct_b.  Checks, each able to fail:
#   - PrivateData=accounts,jobs,usage: agoraview sees neither acct_a's
#     credit row nor root's job id, in scontrol show config or agoractl
#     credits|leases|show, and gets the notices; root's agoractl (on the
#     controller) shows both accounts and both job ids
#   - after PrivateData is removed (scontrol reconfigure) agoraview sees all
#   - 40 x scontrol show config on an unchanged file: exactly 1 parse
#   - a hostile view (newlines, '=', '[', escape sequences, NUL, a 5000-byte
#     name, a job id as a string) adds no line or key to scontrol show
#     config or agoractl, and nothing raw reaches the output
#   - missing, non-JSON and non-object view files: one View= line naming
#     the file and the error; slurmctld stays up
# Prints TAP and a final "N passed, M failed" line.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
W=${AGORA_VIEW_WORKDIR:-/tmp/agora-dc-view${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_VIEW_BASE_PORT:-$((22500 + ${AGORA_TEST_PORT_SHIFT:-0}))}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$repo/_build/stage/plugins}
AGORACTL=${AGORACTL:-$(dirname "$PLUGIN_DIR")/../contrib/agoractl/agoractl}
TUSER=${AGORA_VIEW_USER:-agoraview}

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

finish() {
	if [ "${AGORA_IT_KEEP:-0}" != 1 ]; then
		"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
	fi
	tap_counts
	exit $?
}

# The pairs' host (agora_view_pairs.h): slurmctld/agora on 22.05; 23.02
# removed SlurmctldPlugstack, so on 24.11 the select/cons_tres wrapper
# carries them in the select section.
REL=${AGORA_DC_SLURM:-22.05}
HOST_SO=slurmctld_agora.so HOST_TYPE=slurmctld/agora SECTION_LINES=13
# (24.11: no header line, scontrol prints the title before the first pair)
[ "$REL" = 22.05 ] || HOST_SO=select_cons_tres.so HOST_TYPE=select/cons_tres SECTION_LINES=12
if [ ! -f "$PLUGIN_DIR/$HOST_SO" ] || [ ! -x "$AGORACTL" ]; then
	echo "ok 1 - view tests # SKIP $HOST_SO or agoractl not built ($PLUGIN_DIR, $AGORACTL)"
	echo "1 passed, 0 failed"
	exit 0
fi
AGORACTL=$(readlink -f "$AGORACTL")

IN=${W}.in
mkdir -p "$IN"
chmod 755 "$IN"
cat >"$IN/agora.conf" <<'EOF2'
SchedulerInterval=2
AuctionPartitions=batch
LeaseTime=600
GraceTime=10
EOF2
cat >"$IN/extra.conf" <<'EOF2'
SlurmctldPlugstack=slurmctld/agora
PrivateData=accounts,jobs,usage
SlurmctldDebug=debug
EOF2
# Agora's pass writes the view: sched/agora (when built), or the pass in
# site_factor/agora under priority/multifactor
SCHED=sched/backfill
WRITER=""
[ -f "$PLUGIN_DIR/sched_agora.so" ] && SCHED=sched/agora WRITER=sched/agora
if [ -f "$PLUGIN_DIR/site_factor_agora.so" ]; then
	printf '%s\n' PriorityType=priority/multifactor \
		PrioritySiteFactorPlugin=site_factor/agora >>"$IN/extra.conf"
	[ -n "$WRITER" ] || WRITER=site_factor/agora
fi

id "$TUSER" >/dev/null 2>&1 || useradd -M -s /bin/bash "$TUSER" ||
	{ notok "create user $TUSER"; finish; }

"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
trap '[ "${AGORA_IT_KEEP:-0}" = 1 ] || "$HARNESS" --workdir "$W" stop >/dev/null 2>&1' EXIT
t_start=$(date +%s)
if ! "$HARNESS" --workdir "$W" --fresh --clusters 1 --nodes 2 --gpus 8 \
	--base-port "$BASE_PORT" --plugin-dir "$PLUGIN_DIR" --sched "$SCHED" \
	--agora-conf "$IN/agora.conf" --conf-extra "$IN/extra.conf" \
	start >"$IN/harness.out" 2>&1; then
	notok "harness starts one cluster with slurmctld/agora ($SCHED)"
	tail -30 "$IN/harness.out" | diag
	finish
fi
ok "harness starts one cluster with slurmctld/agora ($SCHED, $(($(date +%s) - t_start)) s)"

export SLURM_CONF=$W/c1/etc/slurm.conf
LOG=$W/log/c1/slurmctld.log
VIEW=$W/c1/state/agora_view.json
sacctmgr -i add user "$TUSER" account=acct_b cluster=c1 >/dev/null 2>&1
as_user() { runuser -u "$TUSER" -- env SLURM_CONF="$SLURM_CONF" "$@"; }
plugstack() { # the slurmctld/agora section of scontrol show config
	if [ "$REL" = 22.05 ]; then
		"$@" scontrol show config | sed -n '/^----- slurmctld\/agora -----$/,/^$/p'
	else # 24.11 prints the title with no line break after it
		"$@" scontrol show config |
			sed -n '/^Select Plugin Configuration/,/^$/{s/^Select Plugin Configuration//;p}'
	fi
}
wait_for() { # wait_for SECONDS CMD... : poll every second
	local t=$1 i
	shift
	for ((i = 0; i < t; i++)); do
		"$@" && return 0
		sleep 1
	done
	return 1
}

# write_view FILE: put FILE in place as the view (atomically, as Agora does)
write_view() {
	cp "$1" "$VIEW.test" && mv -f "$VIEW.test" "$VIEW"
}

# 1. jobs of both accounts with leases
JA=$(sbatch --parsable -A acct_a -p batch -N1 --gres=gpu:8 -t 10 -o /dev/null \
	--wrap 'sleep 600' | cut -d';' -f1)
JB=$(as_user sbatch --parsable -A acct_b -p batch -N1 --gres=gpu:8 -t 10 \
	--chdir=/tmp -o /dev/null --wrap 'sleep 600' | cut -d';' -f1)
if [ -z "$JA" ] || [ -z "$JB" ]; then
	notok "submit one job as root (acct_a) and one as $TUSER (acct_b)"
	finish
fi
view_has_leases() {
	grep -q "\"job\":$JA" "$VIEW" 2>/dev/null &&
		grep -q "\"job\":$JB" "$VIEW" 2>/dev/null &&
		grep -q '"acct_a"' "$VIEW" && grep -q '"acct_b"' "$VIEW"
}
write_base() {
	local now
	now=$(date +%s)
	cat >"$IN/base.json" <<EOF2
{"time":$now,"cluster":"c1","pass":1,"apps":[{"name":"acct_a","quota":10,"usage":1.5,"credit":8.5,"rho":1.2},{"name":"acct_b","quota":10,"usage":0,"credit":10}],"leases":[{"job":$JA,"gpus":8,"end":$((now + 600)),"state":"active"},{"job":$JB,"gpus":8,"end":$((now + 600)),"state":"active"}]}
EOF2
	write_view "$IN/base.json"
}
if [ -n "$WRITER" ]; then
	if wait_for 40 view_has_leases; then
		ok "$WRITER writes a view with both accounts and both leases"
	else
		notok "$WRITER writes a view with both accounts and both leases"
		diag <"$VIEW"
		write_base # the checks below still run, on a hand-made view
	fi
else
	write_base
	check "hand-made view with both accounts and both leases" view_has_leases
fi

# 2. PrivateData=accounts,jobs,usage
no_secrets() { # no_secrets FILE: neither account rows nor job ids
	! grep -q "acct_a\|acct_b\|$JA\|$JB\|Credit\[" "$1"
}
plugstack as_user >"$IN/user.scontrol"
check "PrivateData: $TUSER's scontrol show config has no account row or job id" \
	no_secrets "$IN/user.scontrol"
check "PrivateData: scontrol show config says what is hidden and why" \
	grep -q "^Credit *= hidden: PrivateData=accounts,jobs,usage" "$IN/user.scontrol"
check "PrivateData: leases are numbered, Leases = 2, LeaseJobs notice" \
	bash -c "grep -q '^Lease\[#2\] *= gpus=8' '$IN/user.scontrol' &&
		grep -q '^Leases *= 2$' '$IN/user.scontrol' &&
		grep -q '^LeaseJobs *= hidden: PrivateData=jobs' '$IN/user.scontrol'"
for c in credits leases show; do
	as_user "$AGORACTL" "$c" >"$IN/user.$c" 2>&1
	check "PrivateData: $TUSER's agoractl $c shows no account row or job id" \
		no_secrets "$IN/user.$c"
done
check "PrivateData: $TUSER's agoractl credits prints the notice" \
	grep -q "^# per-account rows hidden: PrivateData=" "$IN/user.credits"
"$AGORACTL" credits >"$IN/root.credits" 2>&1
"$AGORACTL" leases >"$IN/root.leases" 2>&1
check "PrivateData: root's agoractl credits (on the controller) lists acct_a and acct_b" \
	bash -c "grep -q '^acct_a ' '$IN/root.credits' && grep -q '^acct_b ' '$IN/root.credits' &&
		grep -q '^# full view read from $VIEW' '$IN/root.credits'"
check "PrivateData: root's agoractl leases shows both job ids" \
	bash -c "grep -q '^$JA ' '$IN/root.leases' && grep -q '^$JB ' '$IN/root.leases'"
if ! tap_ok; then
	for f in user.scontrol user.credits root.credits root.leases; do
		echo "$f:" | diag
		diag <"$IN/$f"
	done
fi

# 3. without PrivateData everything is visible to everyone
sed -i '/^PrivateData=/d' "$SLURM_CONF"
scontrol reconfigure
no_private() { scontrol show config | grep -q '^PrivateData *= none'; }
wait_for 20 no_private
plugstack as_user >"$IN/user2.scontrol"
as_user "$AGORACTL" credits >"$IN/user2.credits" 2>&1
as_user "$AGORACTL" leases >"$IN/user2.leases" 2>&1
check "no PrivateData: $TUSER's scontrol show config has both accounts and job ids" \
	bash -c "grep -q '^Credit\[acct_a\] *= credit=' '$IN/user2.scontrol' &&
		grep -q '^Lease\[$JA\] *= gpus=8' '$IN/user2.scontrol' &&
		! grep -q 'hidden' '$IN/user2.scontrol'"
check "no PrivateData: $TUSER's agoractl credits and leases show everything" \
	bash -c "grep -q '^acct_a ' '$IN/user2.credits' && grep -q '^acct_b ' '$IN/user2.credits' &&
		grep -q '^$JA ' '$IN/user2.leases' && grep -q '^$JB ' '$IN/user2.leases'"
scancel "$JA" "$JB"
gone() { [ -z "$(squeue -h -t R,PD,CG -j "$JA,$JB" 2>/dev/null)" ]; }
wait_for 30 gone

# Hand-made views below race with sched/agora's own writes (every 30 s
# without running jobs): each check runs on our file and is repeated if
# the inode changed under it.  own_view FILE FN: write FILE, run FN, retry.
own_view() {
	local try ino rc
	for try in 1 2 3; do
		write_view "$1"
		ino=$(stat -c %i "$VIEW")
		"$2"
		rc=$?
		[ "$(stat -c %i "$VIEW" 2>/dev/null)" = "$ino" ] && return $rc
		echo "# view rewritten during the check, again ($try)"
	done
	return 1
}

# 4. parse only when the file changed
parses() { # the last "parse N of M calls" of the plugin: "N M"
	grep "$HOST_TYPE: .*(parse [0-9]* of [0-9]* calls)" "$LOG" |
		tail -1 | sed 's/.*(parse \([0-9]*\) of \([0-9]*\) calls).*/\1 \2/'
}
LOOPS=40
cat >"$IN/cache.json" <<EOF2
{"time":$(date +%s),"apps":[{"name":"acct_a","quota":1,"usage":0,"credit":1}],"leases":[]}
EOF2
loop_cache() {
	local p0 c0 p1 c1
	scontrol show config >/dev/null # parses the new file
	read -r p0 c0 <<<"$(parses)"
	for ((i = 0; i < LOOPS; i++)); do
		scontrol show config >/dev/null
	done
	touch "$VIEW" # changed: the next call parses and logs the totals
	scontrol show config >/dev/null
	read -r p1 c1 <<<"$(parses)"
	echo "# $((c1 - c0)) calls, $((p1 - p0)) parses (the last after touch)"
	[ "$((c1 - c0))" = $((LOOPS + 1)) ] && [ "$((p1 - p0))" = 1 ]
}
check "$LOOPS x scontrol show config on an unchanged view: no parse; touch: one" \
	own_view "$IN/cache.json" loop_cache

# 5. hostile names
long=$(head -c 5000 /dev/zero | tr '\0' 'x')
cat >"$IN/hostile.json" <<EOF2
{"time":$(date +%s),"apps":[
 {"name":"evil\nCredit[root]=credit=1e9 quota=0 usage=0 GPU-h\nInjected","quota":1,"usage":0,"credit":1},
 {"name":"k=v [x] \\\\ ~","quota":1,"usage":0,"credit":2},
 {"name":"\u001b[2J\u001b]0;title\u0007\r\u007f\u00e9","quota":1,"usage":0,"credit":3},
 {"name":"nul\u0000byte","quota":1,"usage":0,"credit":4},
 {"name":"$long","quota":1,"usage":0,"credit":5},
 {"name":"ok_app","quota":1,"usage":0,"credit":6}],
 "leases":[{"job":"7\nLease[8]=gpus=99","gpus":1,"end":1},{"job":9,"gpus":2,"end":1,"state":"x\ny=z"},
 {"job":10,"gpus":8,"end":1,"state":"grace"}]}
EOF2
hostile() {
	local f=$IN/hostile.scontrol rc=0
	plugstack >"$f"
	"$AGORACTL" show >"$IN/hostile.show" 2>&1
	"$AGORACTL" credits >"$IN/hostile.credits" 2>&1
	"$AGORACTL" leases >"$IN/hostile.leases" 2>&1
	# header (22.05) + View, Apps, 6 Credit, Leases, 1 Lease, ViewSkipped + blank
	[ "$(wc -l <"$f")" = "$SECTION_LINES" ] || { echo "# $(wc -l <"$f") lines"; rc=1; }
	grep -q '^Credit\[root\]\|^Injected\|^Lease\[8\]\|^y=z' "$f" "$IN"/hostile.show && rc=1
	grep -q '^Credit\[evil\\x0aCredit\\x5broot\\x5d\\x3dcredit\\x3d1e9' "$f" || rc=1
	grep -q '^Credit\[nul\\x00byte\]' "$f" || rc=1
	grep -q '^Credit\[x\{55\}~[0-9a-f]\{8\}\] ' "$f" || rc=1
	grep -q '^ViewSkipped *= 2 malformed entries left out (first: leases\[0\]: job: ' "$f" || rc=1
	grep -q '^Lease\[10\] *= gpus=8 until=.* state=grace$' "$f" || rc=1
	# nothing raw: no control character, no byte >= 0x80, in any output
	LC_ALL=C grep -q '[[:cntrl:]]\|[^ -~]' <(cat "$f" "$IN"/hostile.show \
		"$IN"/hostile.credits "$IN"/hostile.leases | tr -d '\n') && rc=1
	# agoractl credits: header, view line, 6 rows; show: one line per pair
	[ "$(grep -vc '^#' "$IN/hostile.credits")" = 7 ] || rc=1
	[ "$(grep -vc '^#' "$IN/hostile.show")" = 11 ] || rc=1
	[ $rc = 0 ] || { diag <"$f"; diag <"$IN/hostile.credits"; }
	return $rc
}
check "hostile names add no line or key to scontrol show config or agoractl" \
	own_view "$IN/hostile.json" hostile

# 6. bad or missing view files
printf '{\n"apps": [\n,]}\n' >"$IN/bad.json"
echo '[1, 2]' >"$IN/array.json"
bad_json() {
	plugstack >"$IN/bad.scontrol"
	grep -q "^View *= unavailable: $VIEW:3: not JSON: " "$IN/bad.scontrol" &&
		[ "$(grep -c ' = ' "$IN/bad.scontrol")" = 1 ]
}
check "non-JSON view: one View line with file, line and error" \
	own_view "$IN/bad.json" bad_json
not_object() {
	plugstack >"$IN/array.scontrol"
	grep -q "^View *= unavailable: $VIEW: top level: not a JSON object$" "$IN/array.scontrol"
}
check "JSON array as view: one View line naming the file and the error" \
	own_view "$IN/array.json" not_object
missing() {
	rm -f "$VIEW"
	plugstack >"$IN/missing.scontrol"
	"$AGORACTL" show >"$IN/missing.show" 2>&1
	# a write by sched/agora in between brings the file back: try again
	[ -e "$VIEW" ] && return 2
	grep -q "^View *= unavailable: $VIEW: No such file or directory$" "$IN/missing.scontrol" &&
		grep -q "^View=unavailable: $VIEW: No such file or directory$" "$IN/missing.show"
}
rc=2
for _ in 1 2 3; do
	missing
	rc=$?
	[ $rc != 2 ] && break
done
check "missing view: one View line naming the file and strerror (scontrol, agoractl)" \
	[ $rc = 0 ]
check "slurmctld is still up" scontrol ping
finish
