#!/bin/bash
# tests/deb/test-deb.sh - the Debian packages, as an admin gets them.
#
# Builds slurm-agora-plugins and agora-tools with dpkg-buildpackage from a
# copy of the source tree under /tmp (dpkg-buildpackage writes ../*.deb:
# nothing is left in the source tree), runs lintian, installs both packages
# with apt-get, starts a one-cluster agora-dc (the packaged command) with
# the packaged plugins and all of Agora switched on, runs one GPU job, and
# purges the packages again.  TAP output ("ok N - ..." / "not ok N - ..."),
# then "N passed, M failed"; exit status non-zero if a test failed.
#
# With AGORA_DEB_RELEASE=24.11 it builds the 24.11 plugins package instead
# (debian/rules: AGORA_SLURM_RELEASE=24.11, profile pkg.agora.plugins-only),
# checks that it depends on Slurm 24.11.5 and that apt refuses it on this
# machine's 22.05 slurmctld, unpacks it (Debian 12 has no 24.11 slurmctld
# package to install it beside) and runs one GPU job with its plugins on
# 24.11 daemons of the repository's agora-dc.
#
# Must run as root (installs packages, starts daemons).  Installs what it
# needs first: contrib/bin/agora-deps --deb.  Environment:
#   AGORA_DEB_RELEASE    Slurm release        [$AGORA_DC_SLURM, else 22.05]
#   AGORA_DEB_WORKDIR    harness work dir     [/tmp/agora-dc-deb]
#   AGORA_DEB_BUILD_DIR  build dir (emptied)  [/tmp/agora-deb-build]
#   AGORA_DEB_BASE_PORT  harness base port    [41000]
#   AGORA_DEB_KEEP=1     keep the build dir and the installed packages
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
W=${AGORA_DEB_WORKDIR:-/tmp/agora-dc-deb${AGORA_TEST_TAG:-}}
# a fixed path, like W: the compiler flags name it (dpkg-buildflags'
# -ffile-prefix-map), so that ccache (agora-test) hits across runs
BUILD_DIR=${AGORA_DEB_BUILD_DIR:-/tmp/agora-deb-build${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_DEB_BASE_PORT:-$((23000 + ${AGORA_TEST_PORT_SHIFT:-0}))}
KEEP=${AGORA_DEB_KEEP:-0}
REL=${AGORA_DEB_RELEASE:-${AGORA_DC_SLURM:-22.05}}
PLUGDIR=/usr/lib/x86_64-linux-gnu/agora
PKGS=(agora-tools slurm-agora-plugins)
# the plugins of every release; on 22.05 also the select wrapper and
# slurmctld/agora (plugins/common/agora_compat.h says which a release has)
PLUGINS=(site_factor_agora.so preempt_agora.so job_submit_agora.so)
[ "$REL" = 22.05 ] && PLUGINS+=(slurmctld_agora.so select_cons_tres.so)
# Another release installs nothing (it unpacks): it must leave alone what
# a 22.05 run beside it installs, so it has no package to purge.
[ "$REL" = 22.05 ] || PKGS=()
UNPACKED=""

n_run=0
n_pass=0
n_fail=0
DIAG_FILE=$(mktemp)
BUILD_ROOT=""
HARNESS_UP=0

now_ms() { date +%s%3N; }
secs() { # START_MS -> "1.2"
	local d=$(($(now_ms) - $1))
	printf '%d.%d' $((d / 1000)) $((d % 1000 / 100))
}
note() { printf '%s\n' "$*" >>"$DIAG_FILE"; }
fail() {
	note "$*"
	return 1
}
# t NAME FUNC: run one test, print its TAP line (and its notes on failure)
t() {
	local name=$1 t0
	shift
	n_run=$((n_run + 1))
	: >"$DIAG_FILE"
	t0=$(now_ms)
	if "$@"; then
		n_pass=$((n_pass + 1))
		echo "ok $n_run - $name ($(secs "$t0") s)"
	else
		n_fail=$((n_fail + 1))
		echo "not ok $n_run - $name ($(secs "$t0") s)"
		sed 's/^/# /' "$DIAG_FILE"
	fi
}

installed() { # PKG: dpkg knows it in any state but purged
	local st
	st=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st##* }" != not-installed ]
}
# dpkg has no lock timeout: retry while another apt/dpkg holds the lock
dpkg_purge() {
	local i out
	for i in $(seq 1 60); do
		out=$(dpkg --purge "$@" 2>&1) && return 0
		grep -q 'lock' <<<"$out" || { note "dpkg --purge $*: $out"; return 1; }
		sleep 2
	done
	note "dpkg --purge $*: $out"
	return 1
}
harness() {
	if [ "$REL" = 22.05 ]; then
		/usr/bin/agora-dc --workdir "$W" "$@"
	else
		AGORA_DC_SLURM=$REL "$repo/contrib/harness/agora-dc" --workdir "$W" "$@"
	fi
}

cleanup() {
	if [ "$HARNESS_UP" = 1 ]; then
		harness stop >/dev/null 2>&1
	fi
	if [ "$KEEP" != 1 ]; then
		for p in "${PKGS[@]}"; do
			installed "$p" && dpkg_purge "$p" >/dev/null 2>&1
		done
		[ -n "$BUILD_ROOT" ] && rm -rf "$BUILD_ROOT"
	else
		echo "# kept: build dir $BUILD_ROOT, packages installed"
	fi
	rm -f "$DIAG_FILE"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	echo "test-deb.sh: run as root (installs packages, starts daemons)" >&2
	exit 2
fi

# ---- tests ------------------------------------------------------------------
t_deps() {
	local out
	out=$("$repo/contrib/bin/agora-deps" --deb 2>&1) || fail "agora-deps --deb: $out" || return 1
	out=$("$repo/contrib/slurm-src/agora-slurm-src" --release "$REL" 2>&1) ||
		fail "agora-slurm-src --release $REL: $out" || return 1
	if [ "$REL" != 22.05 ]; then
		# that release's client commands (22.05's cannot talk to it)
		local p=${out##*SLURM_PREFIX=}
		p=${p%%[[:space:]]*}
		[ -x "$p/bin/sbatch" ] || fail "no $REL prefix in: $out" || return 1
		export PATH="$p/bin:$p/sbin:$PATH"
	fi
	# leftovers of an interrupted run: start from no package installed
	for p in "${PKGS[@]}"; do
		if installed "$p"; then
			dpkg_purge "$p" || return 1
		fi
	done
}

VERSION=""
t_build() {
	local src f
	VERSION=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version) ||
		fail "cannot read debian/changelog" || return 1
	rm -rf "$BUILD_DIR" && mkdir -p "$BUILD_DIR" || fail "cannot create $BUILD_DIR" || return 1
	BUILD_ROOT=$BUILD_DIR
	src=$BUILD_ROOT/agora-$VERSION
	mkdir -p "$src"
	# the working tree as git sees it (tracked and new files, not ignored
	# ones: no build directory, no generated configure); outside git (an
	# unpacked tarball) all of it but build directories
	if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
			tar --null -T - -cf -) | tar -C "$src" -xf -
	else
		tar -C "$repo" --exclude='./_build*' --exclude=./autom4te.cache -cf - . |
			tar -C "$src" -xf -
	fi || fail "cannot copy the source tree to $src" || return 1
	if [ "$REL" = 22.05 ]; then
		(cd "$src" && dpkg-buildpackage -us -uc -b) >"$BUILD_ROOT/build.log" 2>&1
	else
		(cd "$src" && AGORA_SLURM_RELEASE=$REL dpkg-buildpackage -us -uc -b \
			--build-profiles=pkg.agora.plugins-only) >"$BUILD_ROOT/build.log" 2>&1
	fi ||
		fail "dpkg-buildpackage failed: $(grep -iE 'error|fail' "$BUILD_ROOT/build.log" | tail -8 | tr '\n' ';')" || return 1
	note "build log: $BUILD_ROOT/build.log"
	[ -f "$(deb slurm-agora-plugins)" ] || fail "no $(deb slurm-agora-plugins)" || return 1
	if [ "$REL" = 22.05 ]; then
		[ -f "$(deb agora-tools)" ] || fail "no $(deb agora-tools)" || return 1
	fi
	if [ "$REL" != 22.05 ]; then
		# the plugins-only profile: no tools package
		[ ! -e "$BUILD_ROOT/agora-tools_${VERSION}_amd64.deb" ] ||
			fail "agora-tools was built for $REL" || return 1
	fi
	# nothing written into the source tree or beside it
	for f in "$repo"/../agora_"$VERSION"_* "$repo"/../slurm-agora-plugins_* \
		"$repo"/../agora-tools_* "$repo"/debian/.debhelper "$repo"/debian/tmp \
		"$repo"/debian/files "$repo"/debian/debhelper-build-stamp \
		"$repo"/debian/slurm-agora-plugins "$repo"/debian/agora-tools \
		"$repo"/debian/*.substvars "$repo"/debian/*.debhelper.log; do
		[ ! -e "$f" ] || fail "build product in the source tree: $f" || return 1
	done
}

t_lintian() {
	local out rc
	out=$(lintian --fail-on error,warning "$BUILD_ROOT/agora_${VERSION}_amd64.changes" 2>&1)
	rc=$?
	# lintian says so when run as root; that is not a finding
	out=$(grep -v 'running with root privileges' <<<"$out")
	[ -z "$out" ] && [ "$rc" = 0 ] || fail "lintian (rc $rc): $out"
}

# The packages of another release than 22.05 are versioned VERSION+slurmX.Y.Z.
deb() {
	local v=$VERSION
	[ "$REL" = 22.05 ] || v=$VERSION+slurm$(tree_version)
	echo "$BUILD_ROOT/${1}_${v}_amd64.deb"
}
tree_version() { # the upstream version of REL's cached tree, e.g. 24.11.5
	local o
	o=$("$repo/contrib/slurm-src/agora-slurm-src" -q --release "$REL" 2>/dev/null | tail -1)
	o=${o#*SLURM_BUILD=}
	o=${o%% *}
	sed -n 's/^#define SLURM_VERSION_STRING "\(.*\)"/\1/p' "$o/config.h"
}
t_plugins_pkg() {
	local files dep want
	files=$(dpkg-deb -c "$(deb slurm-agora-plugins)" | awk '{print $6}')
	for f in "${PLUGINS[@]}"; do
		grep -qx "\\.$PLUGDIR/$f" <<<"$files" || fail "no $PLUGDIR/$f in slurm-agora-plugins" || return 1
	done
	for f in examples/agora.conf examples/slurm.conf.agora; do
		grep -qx "\\./usr/share/doc/slurm-agora-plugins/$f" <<<"$files" ||
			fail "no /usr/share/doc/slurm-agora-plugins/$f" || return 1
	done
	grep -qx '\./usr/share/man/man5/agora\.conf\.5\.gz' <<<"$files" || fail "no agora.conf.5" || return 1
	grep -q '\.la$' <<<"$files" && fail "libtool archives packaged" && return 1
	dep=$(dpkg-deb -f "$(deb slurm-agora-plugins)" Depends)
	if [ "$REL" = 22.05 ]; then
		want=$(dpkg-query -W -f='${Version}' slurmctld)
		grep -qF "slurmctld (= $want)" <<<"$dep" ||
			fail "Depends '$dep' lacks slurmctld (= $want)" || return 1
	else
		want=$(tree_version)
		[ -n "$want" ] || fail "no version for the $REL tree" || return 1
		grep -qF "slurmctld (>= $want~)" <<<"$dep" && grep -qF "slurmctld (<< ${want%.*}.$((${want##*.} + 1))~)" <<<"$dep" ||
			fail "Depends '$dep' does not pin slurmctld to $want" || return 1
	fi
	# read it whole first: "| grep -q" under pipefail fails at random
	# (grep exits at the match, tar gets SIGPIPE)
	local ex
	ex=$(dpkg-deb --fsys-tarfile "$(deb slurm-agora-plugins)" |
		tar -xOf - ./usr/share/doc/slurm-agora-plugins/examples/slurm.conf.agora) ||
		fail "cannot read the example slurm.conf.agora" || return 1
	grep -q "^PluginDir=$PLUGDIR:" <<<"$ex" || fail "example slurm.conf.agora does not list $PLUGDIR first"
}

t_tools_pkg() {
	local files
	files=$(dpkg-deb -c "$(deb agora-tools)" | awk '{print $6}')
	for c in agora-sim agora-topo agoractl agora-dc; do
		grep -qx "\\./usr/bin/$c" <<<"$files" || fail "no /usr/bin/$c in agora-tools" || return 1
		grep -qx "\\./usr/share/man/man1/$c\\.1\\.gz" <<<"$files" || fail "no $c.1 in agora-tools" || return 1
	done
}

t_install() {
	local out
	out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		-o DPkg::Lock::Timeout=120 "$(deb slurm-agora-plugins)" "$(deb agora-tools)" 2>&1) ||
		fail "apt-get install: $(tail -5 <<<"$out")" || return 1
	for p in "${PKGS[@]}"; do
		[ "$(dpkg-query -W -f='${Status} ${Version}' "$p")" = "install ok installed $VERSION" ] ||
			fail "$p is not installed at $VERSION" || return 1
	done
	[ -f "$PLUGDIR/site_factor_agora.so" ] || fail "no $PLUGDIR/site_factor_agora.so after install"
}

# Another release: apt must refuse the package on this machine's 22.05
# slurmctld (it would not load there), and its plugins run unpacked.
t_refused() {
	local out
	if out=$(apt-get install --simulate -q -o Debug::NoLocking=1 --no-install-recommends "$(deb slurm-agora-plugins)" 2>&1); then
		fail "apt-get would install the $REL package beside slurmctld $(dpkg-query -W -f='${Version}' slurmctld): $(tail -3 <<<"$out")"
		return 1
	fi
	grep -q 'slurmctld' <<<"$out" || fail "apt's refusal does not name slurmctld: $(tail -5 <<<"$out")"
}
t_unpack() {
	UNPACKED=$BUILD_ROOT/root
	dpkg-deb -x "$(deb slurm-agora-plugins)" "$UNPACKED" || fail "dpkg-deb -x failed" || return 1
	[ -f "$UNPACKED$PLUGDIR/site_factor_agora.so" ] || fail "no site_factor_agora.so unpacked"
}

t_versions() {
	local c out
	for c in agora-sim agora-topo agoractl agora-dc; do
		out=$("/usr/bin/$c" --version 2>&1) || fail "$c --version failed: $out" || return 1
		grep -q "^$c $VERSION\\b" <<<"$out" || fail "$c --version: '$out', expected '$c $VERSION'" || return 1
		out=$("/usr/bin/$c" --help 2>&1) || fail "$c --help failed: $out" || return 1
		grep -qi 'usage' <<<"$out" || fail "$c --help prints no usage" || return 1
	done
}

t_manpages() {
	local p out
	for p in agora-sim agora-topo agoractl agora-dc agora.conf; do
		out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 "$p" 2>&1 >/dev/null) ||
			fail "man $p failed: $out" || return 1
		[ -z "$out" ] || fail "man $p: warnings: $out" || return 1
		man -w "$p" | grep -q '^/usr/share/man/' || fail "man $p is not the installed page" || return 1
	done
}

t_harness() {
	local out
	[ -d "$W/run" ] && harness stop >/dev/null 2>&1
	HARNESS_UP=1
	out=$(harness --base-port "$BASE_PORT" --clusters 1 --nodes 2 --gpus 4 \
		--plugin-dir "$UNPACKED$PLUGDIR" --conf-extra "$repo/contrib/harness/agora-all.conf" \
		--fresh start 2>&1) || fail "agora-dc start: $(tail -8 <<<"$out")"
}

JOB=""
t_gpu_job() {
	local conf=$W/c1/etc/slurm.conf st="" i
	JOB=$(SLURM_CONF=$conf sbatch --parsable -A acct_a --gres=gpu:2 -t 2 \
		-o /dev/null --wrap 'sleep 1' 2>&1) ||
		fail "sbatch: $JOB" || return 1
	JOB=${JOB%%;*}
	for i in $(seq 1 120); do
		st=$(SLURM_CONF=$conf sacct -X -n -P -j "$JOB" -o State,ExitCode,AllocTRES 2>/dev/null | head -1)
		case $st in
		COMPLETED\|0:0\|*) break ;;
		FAILED* | CANCELLED* | TIMEOUT* | NODE_FAIL* | OUT_OF_MEMORY*) break ;;
		esac
		sleep 0.5
	done
	note "sacct: $st"
	grep -q '^COMPLETED|0:0|' <<<"$st" || fail "job $JOB did not complete" || return 1
	grep -q 'gres/gpu=2' <<<"$st" || fail "job $JOB had no 2 GPUs allocated"
}

t_ctld_log() {
	local log=$W/log/c1/slurmctld.log
	[ -f "$log" ] || fail "no $log" || return 1
	grep -q 'site_factor/agora' "$log" || fail "$log does not name site_factor/agora" || return 1
	[ "$REL" = 22.05 ] || [ -f "$UNPACKED$PLUGDIR/select_cons_tres.so" ] || return 0
	grep -q "select/cons_tres.*Agora wrapper loaded" "$log" ||
		fail "$log does not name Agora's select wrapper: $(grep -m3 'select/cons_tres' "$log")" || return 1
	grep -q "PluginDir *= *$UNPACKED$PLUGDIR:" <(SLURM_CONF=$W/c1/etc/slurm.conf scontrol show config) ||
		fail "PluginDir does not start with $UNPACKED$PLUGDIR"
}

t_stop() {
	local out
	out=$(harness stop 2>&1) || fail "agora-dc stop: $out" || return 1
	HARNESS_UP=0
}

t_purge() {
	local p left
	dpkg_purge "${PKGS[@]}" || return 1
	for p in "${PKGS[@]}"; do
		! installed "$p" ||
			fail "$p still known to dpkg: $(dpkg-query -W -f='${Status}' "$p")" || return 1
	done
	if [ -d "$PLUGDIR" ]; then
		left=$(find "$PLUGDIR" -mindepth 1 | head -5)
		fail "$PLUGDIR left after purge${left:+: $left}" || return 1
	fi
	for c in agora-sim agora-topo agoractl agora-dc; do
		[ ! -e "/usr/bin/$c" ] || fail "/usr/bin/$c left after purge" || return 1
	done
}

t0_all=$(now_ms)
t "agora-deps --deb and the Slurm source tree" t_deps
t "dpkg-buildpackage -us -uc -b from a copy under /tmp" t_build
if [ "$REL" != 22.05 ] && [ -n "$VERSION" ] && [ -f "$(deb slurm-agora-plugins)" ]; then
	t "lintian: no error, no warning" t_lintian
	t "slurm-agora-plugins for $REL: plugins, examples, agora.conf(5), Slurm $REL dependency" t_plugins_pkg
	t "apt-get refuses the $REL package on this machine's slurmctld" t_refused
	t "dpkg-deb -x of the $REL package" t_unpack
	if [ -n "$UNPACKED" ]; then
		t "agora-dc --slurm $REL starts with the packaged plugins" t_harness
		if [ "$HARNESS_UP" = 1 ] && harness status >/dev/null 2>&1; then
			t "GPU job COMPLETED" t_gpu_job
			t "slurmctld.log names site_factor/agora" t_ctld_log
		fi
		t "agora-dc stop" t_stop
	fi
elif [ -n "$VERSION" ] && [ -f "$(deb agora-tools)" ]; then
	t "lintian: no error, no warning" t_lintian
	t "slurm-agora-plugins: plugins, examples, agora.conf(5), exact slurmctld dependency" t_plugins_pkg
	t "agora-tools: four commands and their man pages" t_tools_pkg
	t "apt-get install of both packages" t_install
	if installed slurm-agora-plugins && installed agora-tools; then
		t "--version and --help of every command" t_versions
		t "man pages render without warnings" t_manpages
		t "agora-dc (packaged) starts with the packaged plugins" t_harness
		if [ "$HARNESS_UP" = 1 ] && harness status >/dev/null 2>&1; then
			t "GPU job COMPLETED" t_gpu_job
			t "slurmctld.log names site_factor/agora and the select wrapper" t_ctld_log
		fi
		t "agora-dc stop" t_stop
		[ "$KEEP" = 1 ] || t "dpkg --purge leaves nothing in $PLUGDIR" t_purge
	fi
fi
echo "# total $(secs "$t0_all") s"
echo "$n_pass passed, $n_fail failed"
[ "$n_fail" = 0 ]
