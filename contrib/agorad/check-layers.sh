#!/bin/sh
# check-layers.sh [DIR] - agorad's files import each other in layers, never
# in a circle (issue 19, "Structure"): for every function a file of DIR
# defines (at column 0, not static), each other file that calls it depends
# on it; tsort(1) then fails on a loop.  Prints the dependencies and
# "PASS" or the loop and "FAIL".
dir=${1:-$(dirname "$0")}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
cd "$dir" || exit 2
for f in *.c; do
	# "type name(" at column 0, not static, not a prototype
	grep -E '^[a-z_][a-z_0-9 *]*[ *]([a-z_][a-z_0-9]*)\(' "$f" |
		grep -vE '^static |;[[:space:]]*$' |
		sed -E 's/^[a-z_][a-z_0-9 *]*[ *]([a-z_][a-z_0-9]*)\(.*/\1/' |
		sort -u | while read -r fn; do
		echo "$fn ${f%.c}"
	done
done >"$tmp/defs"
while read -r fn owner; do
	for u in *.c; do
		[ "${u%.c}" = "$owner" ] && continue
		grep -qE "(^|[^a-z_0-9])$fn\(" "$u" && echo "${u%.c} $owner"
	done
done <"$tmp/defs" | sort -u >"$tmp/edges"
sed 's/^/  /; s/ \([^ ]*\)$/ -> \1/' "$tmp/edges"
if tsort "$tmp/edges" >/dev/null 2>"$tmp/err"; then
	echo "PASS: agorad's files import each other without a loop"
else
	cat "$tmp/err" >&2
	echo "FAIL: agorad's files import each other in a loop" >&2
	exit 1
fi
