#!/bin/bash
# tests/integration/test_shared_gres.sh - whole-GPU jobs never get a GPU
# that a gres/shard or gres/mps job holds, with Agora's select wrapper
# (Placement=agora) re-choosing GPU indices.
#
# One cluster c1 of 1 fake node x 8 GPUs x 40 cores, type nvl2
# (tests/fixtures/topo/2s-8gpu-2nvlink.xml: NVLink islands 0-3 and 4-7),
# run twice: with --shared-gres shard:16, then with --shared-gres mps:800
# (2 shards / 100 MPS shares per GPU), Placement=agora.  Each run:
#   1. a shard/MPS job on the empty node: it takes GPU 0 (stock's choice;
#      the wrapper leaves shard/MPS jobs alone);
#   2. a 3-GPU job: stock cons_tres puts its core on socket 1, where 4
#      GPUs are free (it filters GPU 0 out through alt_gres_ns), and gives
#      it GPUs 4-6;
#   3. a 2-GPU job: GPUs 1-2 (socket 0);
#   4. a 2-GPU job on 21 cores (both sockets): stock takes one GPU per
#      socket, 3 and 7, straddling the islands.  Were the shard/MPS job
#      ignored, Agora would see GPUs 0 and 3 as a free NVLink pair and
#      rewrite the choice to them: the defect this test catches.  Honouring
#      it, 3 and 7 are the only free GPUs and the choice stays.
# The test fails if a whole-GPU job's GPUs meet the shard/MPS job's.
#
# Prints TAP, then "N passed, M failed"; exit status non-zero if a check
# failed.  Must run as root.  About 60 s (two harness starts).  Environment:
#   AGORA_SHARED_BUILD      build dir with stage/plugins and contrib/topo
#                           [<repo>/_build]
#   AGORA_SHARED_WORKDIR    harness work dir [/tmp/agora-shared-test]
#   AGORA_SHARED_BASE_PORT  harness base port [21500]
#   AGORA_SHARED_KINDS      shared GRES to test ["shard mps"]
#   AGORA_SHARED_KEEP=1     leave the last harness running afterwards
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"
BUILD=${AGORA_SHARED_BUILD:-$repo/_build}
W=${AGORA_SHARED_WORKDIR:-/tmp/agora-shared-test${AGORA_TEST_TAG:-}}
IN=$W.in
BASE_PORT=${AGORA_SHARED_BASE_PORT:-$((21500 + ${AGORA_TEST_PORT_SHIFT:-0}))}
KINDS=${AGORA_SHARED_KINDS:-shard mps}
KEEP=${AGORA_SHARED_KEEP:-0}
HARNESS=$repo/contrib/harness/agora-dc
TOPO=$BUILD/contrib/topo/agora-topo
PLUGDIR=$BUILD/stage/plugins
MODEL=$IN/agora-topo.json
export SLURM_CONF=$W/c1/etc/slurm.conf
CTLD_LOG=$W/log/c1/slurmctld.log

harness() { "$HARNESS" --workdir "$W" "$@"; }
trap '[ -f "$W/harness.env" ] && [ "$KEEP" != 1 ] && harness stop >/dev/null 2>&1' EXIT

gen_inputs() {
	rm -rf "$IN"
	mkdir -p "$IN"
	"$TOPO" model -i "$repo/tests/fixtures/topo/2s-8gpu-2nvlink.xml" \
		--name nvl2 --nodes 'c1n1' -o "$IN/nvl2.raw.json" || return 1
	# the harness gives the node 2 x 20 cores; the fixture has 2 x 16
	python3 - "$IN/nvl2.raw.json" "$MODEL" <<'EOF' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
for t in d['node_types']:
    t['cores'] = 40
    t['cpus'] = 40
    for g in t['gpu']:
        g['cores'] = '0-19' if g['socket'] == 0 else '20-39'
json.dump(d, open(sys.argv[2], 'w'), indent=1)
EOF
	"$TOPO" gres -m "$MODEL" --type-name nvl2 --file-prefix @FAKEGPU@ \
		>"$IN/gres.conf" || return 1
	cat >"$IN/agora.conf" <<EOF
# agora.conf of test_shared_gres.sh
SchedulerInterval=1
TopologyModel=$MODEL
Placement=agora
EOF
	echo "DebugFlags=SelectType" >"$IN/extra.conf"
}

submit() { # SBATCH_ARGS... -> job id
	local out
	out=$(sbatch --parsable -o /dev/null "$@" 2>&1) || {
		echo "sbatch $* failed: $out" >&2
		return 1
	}
	echo "${out%%;*}"
}
running() { [ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = RUNNING ]; }
# idx JOBID NAME -> the GPU indices of GRES NAME the job holds, e.g. "0-2"
# (22.05: "shard:1(IDX:3)"; 24.11 lists shared GRES per GPU as used/avail,
# "shard:1(0/2,0/2,0/2,1/2,...)": the GPUs with some in use)
idx() {
	local d
	d=$(scontrol -d show job "$1" 2>/dev/null |
		sed -n "s/.* GRES=.*$2[^(]*(\([^)]*\)).*/\1/p" | head -1)
	case $d in
	IDX:*) echo "${d#IDX:}" ;;
	*/*) python3 -c "
import sys
print(','.join(str(i) for i, p in enumerate('$d'.split(',')) if int(p.split('/')[0]) > 0))" ;;
	esac
}
expand() { # "0-2,5" -> "0 1 2 5"
	python3 -c "
o = []
for p in '$1'.split(','):
    a, _, b = p.partition('-')
    o += range(int(a), int(b or a) + 1)
print(' '.join(map(str, o)))"
}
meets() { # IDX1 IDX2: true if they share a GPU
	local a b
	for a in $(expand "$1"); do
		for b in $(expand "$2"); do
			[ "$a" = "$b" ] && return 0
		done
	done
	return 1
}
run_kind() { # shard|mps
	local kind=$1 spec sh s o q g gc w
	case $kind in
	shard) spec=shard:16 sh=shard:1 ;;
	mps) spec=mps:800 sh=mps:50 ;;
	esac
	[ -f "$W/harness.env" ] && harness stop >/dev/null 2>&1
	if ! harness --clusters 1 --nodes 1 --gpus 8 --cpus 40 \
		--base-port "$BASE_PORT" --plugin-dir "$PLUGDIR" \
		--sched sched/backfill --gres-conf "$IN/gres.conf" \
		--shared-gres "$spec" --agora-conf "$IN/agora.conf" \
		--conf-extra "$IN/extra.conf" --fresh start >"$IN/harness-$kind.log" 2>&1; then
		notok "$kind: harness starts with --shared-gres $spec"
		tail -20 "$IN/harness-$kind.log" | diag
		return 1
	fi
	ok "$kind: harness starts with --shared-gres $spec"
	# log_flag() lines (the wrapper's GPU-index rewrites) need verbose
	scontrol setdebug verbose >/dev/null 2>&1
	grep -q "init: Placement=agora TopologyModel=$MODEL" "$CTLD_LOG" ||
		{ notok "$kind: wrapper loaded the model"; return 1; }

	s=$(submit --gres="$sh" -J "$kind" --time=5 --wrap 'sleep 300') &&
		wait_for 30 running "$s" || { notok "$kind: $sh job runs"; return 1; }
	o=$(idx "$s" "$kind")
	[ -n "$o" ] && ok "$kind: $sh job on GPU $o" ||
		{ notok "$kind: $sh job has no GPU index"; return 1; }
	for gc in 3:1 2:1 2:21; do
		g=${gc%:*}
		w=$(submit --gres=gpu:"$g" -c "${gc#*:}" -J "whole$g" --time=5 --wrap 'sleep 300') &&
			wait_for 30 running "$w" || { notok "$kind: $g-GPU job runs"; return 1; }
		q=$(idx "$w" gpu)
		if [ -n "$q" ] && ! meets "$q" "$o"; then
			ok "$kind: $g-GPU job $w gets GPUs $q, not the $kind job's GPU $o"
		else
			notok "$kind: $g-GPU job $w gets GPUs '$q', the $kind job holds GPU $o"
			grep "agora GPU indices on" "$CTLD_LOG" | tail -3 | sed 's/^[^]]*] //' | diag
		fi
	done
	grep -c "agora GPU indices on" "$CTLD_LOG" | sed 's/^/GPU-index rewrites by the wrapper: /' | diag
	scancel -u root 2>/dev/null
	harness stop >/dev/null 2>&1
}

[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP must run as root"; exit 0; }
[ -x "$TOPO" ] && [ -f "$PLUGDIR/select_cons_tres.so" ] || {
	echo "Bail out! build first: $TOPO and $PLUGDIR/select_cons_tres.so"
	exit 1
}
gen_inputs || { echo "Bail out! cannot generate the inputs in $IN"; exit 1; }
for k in $KINDS; do
	case $k in
	shard | mps) run_kind "$k" ;;
	*) echo "Bail out! AGORA_SHARED_KINDS: $k is not shard or mps"; exit 1 ;;
	esac
done
# shellcheck disable=SC2154 # n: counted by lib.sh
echo "1..$n"
tap_counts
