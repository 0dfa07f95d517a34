#!/bin/sh
# check-unit.sh [UNIT [COPY]] - agorad's systemd unit keeps its hardening
# and its state directory (issue 19: "systemd hardening", High 4 "keep state
# under StateDirectory="): every directive below is in UNIT as written here,
# agorad's state file (-s) lies in the StateDirectory and its pid file (-P)
# in the RuntimeDirectory, and COPY (Debian's copy of the unit), if given and
# present, is the same file.  If systemd-analyze is installed, UNIT must also
# pass `systemd-analyze verify` without a word (it warns of a misspelt value
# but still exits 0) and stay at an offline exposure of 4.0 or less
# (`systemd-analyze security`; 3.2 today).  Prints "PASS" or each fault and
# "FAIL" (exit 1).
unit=${1:-$(dirname "$0")/agorad.service}
copy=${2:-}
[ -r "$unit" ] || {
	echo "FAIL: $unit: not readable" >&2
	exit 1
}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
bad=0
fault() {
	echo "check-unit: $unit: $*" >&2
	bad=1
}

# the directives as agorad.service has them, one "Key=value" a line
for want in \
	User=slurm Group=slurm \
	RuntimeDirectory=agorad StateDirectory=agorad StateDirectoryMode=0700 \
	NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
	PrivateTmp=yes PrivateDevices=yes ProtectKernelTunables=yes \
	ProtectKernelModules=yes ProtectKernelLogs=yes \
	ProtectControlGroups=yes ProtectClock=yes ProtectHostname=yes \
	RestrictSUIDSGID=yes RestrictRealtime=yes RestrictNamespaces=yes \
	LockPersonality=yes MemoryDenyWriteExecute=yes \
	'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK' \
	SystemCallArchitectures=native CapabilityBoundingSet= UMask=0077 \
	ReadWritePaths=/var/log/slurm; do
	grep -qxF "$want" "$unit" || fault "no line '$want'"
done
# one value each: a later line would override the hardening
for key in NoNewPrivileges ProtectSystem StateDirectory RuntimeDirectory \
	CapabilityBoundingSet ReadWritePaths User; do
	n=$(grep -c "^$key=" "$unit")
	[ "$n" -le 1 ] || fault "$key= set $n times"
done
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
case " $exec_start " in
*" -s /var/lib/agorad/"*) ;;
*) fault "ExecStart's state file (-s) is not under /var/lib/agorad" ;;
esac
case " $exec_start " in
*" -P /run/agorad/"*) ;;
*) fault "ExecStart's pid file (-P) is not under /run/agorad" ;;
esac
if [ -n "$copy" ] && [ -e "$copy" ] && ! cmp -s "$unit" "$copy"; then
	fault "differs from $copy"
fi

if command -v systemd-analyze >/dev/null 2>&1; then
	# verify wants ExecStart's program to exist: the same unit, /bin/true
	# in agorad's place
	sed 's#^ExecStart=[^ ]*#ExecStart=/bin/true#' "$unit" >"$tmp/agorad.service"
	if ! systemd-analyze verify --man=no "$tmp/agorad.service" \
		>"$tmp/verify" 2>&1 || [ -s "$tmp/verify" ]; then
		fault "systemd-analyze verify: $(cat "$tmp/verify")"
	fi
	if ! systemd-analyze security --offline=yes --threshold=40 \
		"$tmp/agorad.service" >"$tmp/security" 2>&1; then
		fault "systemd-analyze security: $(tail -1 "$tmp/security")"
	fi
else
	echo "check-unit: no systemd-analyze: directives checked, not verified"
fi
if [ "$bad" = 0 ]; then
	echo "PASS: $unit keeps its hardening and its state directory"
else
	echo "FAIL: $unit" >&2
	exit 1
fi
