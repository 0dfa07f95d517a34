#!/bin/sh
# agoractl on bad input (make check; no Slurm daemon needed): agorad's
# state and loan files of the wrong shape, bad job ids and bad option
# values.  Each must give one clear error naming the file and the field
# (or the argument), a non-zero exit, and no crash; a good file prints.
set -u
tool=${AGORACTL:-./agoractl}
tmp=${TMPDIR:-/tmp}/agoractl-input-test.$$
mkdir -p "$tmp" || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
ko() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }

# expect RC PATTERN -- ARGS...: agoractl exits RC (>= 1) with PATTERN in
# its error output and is not killed by a signal
expect() {
	want_rc=$1 pat=$2
	shift 3
	"$tool" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = "$want_rc" ] && grep -q -- "$pat" "$tmp/err"; then
		ok "agoractl $*: $(head -1 "$tmp/err")"
	else
		ko "agoractl $*: rc $rc (want $want_rc), stderr '$(cat "$tmp/err")', want '$pat'"
	fi
}

# shows PATTERN WHAT -- ARGS...: agoractl exits 0 with PATTERN in its
# output
shows() {
	pat=$1 what=$2
	shift 3
	if "$tool" "$@" >"$tmp/out" 2>"$tmp/err" && grep -q -- "$pat" "$tmp/out"; then
		ok "agoractl $1: $what"
	else
		ko "agoractl $* ($what): $(cat "$tmp/out" "$tmp/err")"
	fi
}

# ---- agoractl loans: agorad's loan state (X.json -> X.loans.json)
loans() { printf '%s\n' "$1" >"$tmp/a.loans.json"; }
loans '{"nodes": null}'
expect 1 "a.loans.json: not agorad's loan state: nodes: not an array" -- loans --state "$tmp/a.json"
loans '{"reclaims": {}}'
expect 1 "reclaims: not an array" -- loans --state "$tmp/a.json"
loans '{"grows": {"history": "x"}}'
expect 1 "grows.history: not an array" -- loans --state "$tmp/a.json"
loans '{"nodes": [{"name": "n1", "jobs": 5}]}'
expect 1 "nodes\[0\].jobs: not an array" -- loans --state "$tmp/a.json"
loans '{"nodes": [{"name": "n1", "jobs": [1, "x"]}]}'
expect 1 "nodes\[0\].jobs\[1\]: not a job id" -- loans --state "$tmp/a.json"
loans '{"nodes": []} trailing'
expect 1 "a.loans.json:1: not JSON: data after the value" -- loans --state "$tmp/a.json"
loans '{"time": 1, "nodes": [{"name": null, "state": "lent", "jobs": [7, 8]}]}'
shows 'lent .* 7 8$' "a good file (a null name) prints its borrowers" -- loans --state "$tmp/a.json"

# ---- agoractl fed: agorad's round state
state() { printf '%s\n' "$1" >"$tmp/s.json"; }
state '{"clusters": [{"name": null}]}'
expect 1 "s.json: clusters\[0\].name: missing" -- fed --state "$tmp/s.json"
state '{"clusters": [{"name": "c1", "gpus_total": -2147483648, "gpus_free": 1}]}'
expect 1 "clusters\[0\].gpus_total: -2147483648 not in" -- fed --state "$tmp/s.json"
state '{"clusters": [{"name": "c1", "gpus_total": "8"}]}'
expect 1 "clusters\[0\].gpus_total: not an integer" -- fed --state "$tmp/s.json"
state '{"time": 1e17, "clusters": []}'
expect 1 "s.json: time: not a time" -- fed --state "$tmp/s.json"
state "{\"clusters\": [$(i=0; while [ $i -lt 65 ]; do printf '%s{"name": "c%d"}' "$([ $i = 0 ] || echo ,)" $i; i=$((i + 1)); done)]}"
expect 1 "clusters: 65, agoractl shows at most 64" -- fed --state "$tmp/s.json"
state '{"time": 5, "clusters": [{"name": "c1", "up": true, "gpus_total": 16, "gpus_free": 3, "gpus_pending": 4}]}'
shows '^c1 .* 3 .* 16 .* 4 .* 1.06$' "a good file prints its cluster" -- fed --state "$tmp/s.json"

# ---- arguments
for id in 4294967297 -1 0 12x ' 5'; do
	expect 2 "explain: '$id' is not a job id" -- explain "$id"
done
expect 2 "max-moves: 'abc' is not an integer" -- place --max-moves abc
expect 2 "max-moves: '5x' is not an integer" -- place --max-moves 5x
echo "1..$n"
exit $fail
