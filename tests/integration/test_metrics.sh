#!/bin/bash
# tests/integration/test_metrics.sh - agoractl --json and Prometheus metrics
# on a real federation (contrib/harness/agora-dc: 2 clusters x 2 nodes x 8
# fake GPUs, Agora's plugins, agorad with MetricsPort).  Checks, each able
# to fail:
#   - every agoractl command with --json prints one JSON document
#     (python3 -m json.tool parses it) with squeue --json's meta block
#     (meta.plugin.type agoractl/<command>, meta.Slurm.release, the
#     command line), errors and warnings arrays, and the command's data;
#     a failing command still prints one, its error in "errors"
#   - one value of the JSON matches the text: c1's GPUs (agoractl fed) and
#     an account's credit (agoractl credits)
#   - agoractl metrics --out FILE: mode 0644, valid for promtool check
#     metrics, with the per-account gauges and agorad's counters
#   - a real Prometheus (Debian's prometheus) scrapes agorad's /metrics;
#     its HTTP API's value of agora_fed_cluster_gpus{cluster="c1",
#     state="total"} equals agoractl fed --json's c1 GPUs
#   - agora_account_running_gpus shows acct_b's running 3-GPU job on the
#     cluster it runs on (and agora_running_jobs_read 1); with FedAuction=no
#     (agorad reloads agora.conf on SIGHUP) only c1's own jobs
#   - /metrics on bad input: a wrong path (404), a POST (405), garbage
#     (400), an oversized request (431), a client that sends nothing; agorad
#     answers the next scrape
# Prints TAP and a final "N passed, M failed" line.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARNESS=$repo/contrib/harness/agora-dc
W=${AGORA_METRICS_WORKDIR:-/tmp/agora-dc-metrics${AGORA_TEST_TAG:-}}
BASE_PORT=${AGORA_METRICS_BASE_PORT:-$((27500 + ${AGORA_TEST_PORT_SHIFT:-0}))}
PLUGIN_DIR=${AGORA_PLUGIN_DIR:-$repo/_build/stage/plugins}
BUILD=$(dirname "$(dirname "$PLUGIN_DIR")")
AGORACTL=${AGORACTL:-$BUILD/contrib/agoractl/agoractl}
AGORAD_BIN=${AGORAD_BIN:-$BUILD/contrib/agorad/agorad}
MPORT=$((BASE_PORT + 900))
PPORT=$((BASE_PORT + 901))

# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

PROM_PID=""
finish() {
	[ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null
	if [ "${AGORA_IT_KEEP:-0}" != 1 ]; then
		"$HARNESS" --workdir "$W" stop >/dev/null 2>&1
	fi
	tap_counts
	exit $?
}

if [ ! -f "$PLUGIN_DIR/site_factor_agora.so" ] || [ ! -x "$AGORACTL" ] || [ ! -x "$AGORAD_BIN" ]; then
	echo "ok 1 - metrics tests # SKIP plugins, agoractl or agorad not built ($PLUGIN_DIR)"
	echo "1 passed, 0 failed"
	exit 0
fi
AGORACTL=$(readlink -f "$AGORACTL")
IN=$W.in
rm -rf "$IN"
mkdir -p "$IN"
cat >"$IN/extra.conf" <<EOT
PriorityType=priority/multifactor
PrioritySiteFactorPlugin=site_factor/agora
PriorityCalcPeriod=1
SlurmctldPlugstack=slurmctld/agora
EOT
cat >"$IN/catalog.json" <<EOT
{"sites": [{"name": "c1", "link_bytes_per_s": 1e8},
           {"name": "c2", "link_bytes_per_s": 1e8}],
 "datasets": [{"name": "corpus", "bytes": 1e12, "where": ["c2"]}],
 "accounts": [{"name": "acct_b", "dataset": "corpus"}]}
EOT
cat >"$IN/agora.conf" <<EOT
SchedulerInterval=1
AuctionPartitions=batch
DefaultQuota=5
FedAuction=yes
FedAuctionInterval=1
FedAuctionTimeout=15
FedCatalog=$IN/catalog.json
MetricsPort=$MPORT
EOT
trap finish EXIT
"$HARNESS" --workdir "$W" --base-port "$BASE_PORT" --clusters 2 --nodes 2 \
	--plugin-dir "$PLUGIN_DIR" --conf-extra "$IN/extra.conf" --agora-conf "$IN/agora.conf" \
	--agorad --agorad-bin "$AGORAD_BIN" --accounts acct_a,acct_b --fresh start >"$IN/start.log" 2>&1 || {
	notok "harness start"
	tail -20 "$IN/start.log" | diag
	exit 1
}
export SLURM_CONF=$W/c1/etc/slurm.conf AGORAD_STATE=$W/agorad.json
# Prometheus starts now (a few seconds), scrapes agorad every second
if command -v prometheus >/dev/null; then
	cat >"$IN/prom.yml" <<EOT
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: agorad
    static_configs: [{targets: ["127.0.0.1:$MPORT"]}]
EOT
	prometheus --config.file="$IN/prom.yml" --storage.tsdb.path="$IN/tsdb" \
		--web.listen-address="127.0.0.1:$PPORT" >"$IN/prometheus.log" 2>&1 &
	PROM_PID=$!
fi
ctl() { "$AGORACTL" "$@"; }

j=$(sbatch --parsable -A acct_a -N1 --gres=gpu:2 -t 5 -o "$IN/slurm-%j.out" --wrap 'sleep 60' | cut -d';' -f1)
# acct_b's 3 GPUs for agora_account_running_gpus (its data is on c2)
jb=$(sbatch --parsable -A acct_b -N1 --gres=gpu:3 -t 5 -o /dev/null --wrap 'sleep 300' | cut -d';' -f1)
wait_for 20 sh -c "'$AGORACTL' credits | grep -q acct_a" || true
wait_for 20 test -s "$W/agorad.prom" || true

# ---- --json on every command ------------------------------------------------
# json_run NAME DATAKEY EXPECT_RC -- ARGS...: the document to a file; one
# python3 afterwards checks them all (json.load, as python3 -m json.tool)
jn=0
: >"$IN/json.list"
json_run() {
	local name=$1 key=$2 want=$3 rc
	shift 4
	jn=$((jn + 1))
	ctl "$@" --json >"$IN/json.$jn" 2>"$IN/json.$jn.err"
	rc=$?
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$IN/json.$jn" "$name" "$1" "$key" "$want" "$rc" >>"$IN/json.list"
}
json_run credits accounts 0 -- credits
json_run leases leases 0 -- leases
json_run show pairs 0 -- show
json_run fed clusters 0 -- fed
json_run explain job 0 -- explain "$j"
json_run datasets datasets 0 -- datasets
json_run place moves 0 -- place
json_run loans - 1 -- loans
json_run loan-curve curve 0 -- loan-curve --step 3600
json_run "estimates seed" seed 0 -- estimates seed --days 1 --out "$IN/seed"
json_run metrics metrics 0 -- metrics --out "$IN/agora.prom"
json_run "unknown command" - 2 -- nosuch
while IFS= read -r line; do
	case $line in
	OK*) ok "${line#OK }" ;;
	*) notok "${line#NOTOK }" ;;
	esac
done < <(python3 - "$IN/json.list" <<'PY'
import json, sys
for row in open(sys.argv[1]):
    f, name, cmd, key, want, rc = row.rstrip("\n").split("\t")
    try:
        if rc != want:
            raise AssertionError("exit %s, expected %s" % (rc, want))
        d = json.load(open(f))  # what python3 -m json.tool parses
        m = d["meta"]
        assert m["plugin"]["type"] == "agoractl/" + cmd, m["plugin"]
        assert m["Slurm"]["release"].count(".") == 2, m["Slurm"]
        assert isinstance(m["Slurm"]["version"]["major"], int)
        assert m["agora"]["version"]
        assert "--json" in m["command"]
        assert isinstance(d["errors"], list) and isinstance(d["warnings"], list)
        assert (len(d["errors"]) > 0) == (want != "0"), d["errors"]
        assert key == "-" or key in d, sorted(d)
        print("OK agoractl %s --json: meta, errors, warnings, %s" % (name, key))
    except Exception as e:
        print("NOTOK agoractl %s --json: %r" % (name, e))
PY
)

# ---- one value: JSON = text -------------------------------------------------
gj=$(ctl fed --json | python3 -c 'import json,sys; print([c["gpus"] for c in json.load(sys.stdin)["clusters"] if c["name"] == "c1"][0])')
gt=$(ctl fed | awk '$1 == "c1" {print $4}')
[ -n "$gj" ] && [ "$gj" = "$gt" ] && ok "fed: c1's GPUs $gj in --json and text" ||
	notok "fed: c1's GPUs '$gj' (json) vs '$gt' (text)"
cj=$(ctl credits --json | python3 -c 'import json,sys; print("%.2f" % [a["credit_gpu_hours"] for a in json.load(sys.stdin)["accounts"] if a["account"] == "acct_a"][0])' 2>/dev/null)
ct=$(ctl credits | awk '$1 == "acct_a" {print $2}')
[ -n "$cj" ] && [ "$cj" = "$ct" ] && ok "credits: acct_a's credit $cj in --json and text" ||
	notok "credits: acct_a's credit '$cj' (json) vs '$ct' (text)"

scancel "$j" 2>/dev/null # gone before the harness stops

# ---- agoractl metrics --out -------------------------------------------------
P=$IN/agora.prom
if [ "$(stat -c %a "$P" 2>/dev/null)" = 644 ] && grep -q '^agora_account_credit_gpu_seconds{account="acct_a"} ' "$P" &&
	grep -q '^agora_fed_rounds_total [1-9]' "$P"; then
	ok "agoractl metrics --out: 0644, per-account credit and agorad's rounds"
else
	notok "agoractl metrics --out: mode $(stat -c %a "$P" 2>/dev/null)"
	head -30 "$P" 2>&1 | diag
fi
if command -v promtool >/dev/null; then
	promtool check metrics <"$P" >"$IN/promtool" 2>&1 && ok "promtool check metrics: $P is valid" ||
		{ notok "promtool check metrics"; diag <"$IN/promtool"; }
fi

# ---- Prometheus scrapes agorad ------------------------------------------------
http() { # http REQUEST_BYTES -> the status line ("" if none)
	python3 - "$MPORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
data = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
except socket.timeout:
    pass
print(data.split(b"\r\n", 1)[0].decode("latin-1", "replace"))
PY
}
st=$(http 'GET /metrics HTTP/1.0\r\n\r\n')
[ "$st" = "HTTP/1.0 200 OK" ] && ok "agorad /metrics: $st" || notok "agorad /metrics: '$st'"
scrape_metrics() {
	python3 -c '
import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())
' "$MPORT"
}
scrape_metrics >"$IN/served.prom" 2>&1
if grep -q '^agora_account_credit_gpu_seconds{account="acct_a"} ' "$IN/served.prom" &&
	grep -q '^agora_reclaim_latency_seconds_count ' "$IN/served.prom" &&
	{ ! command -v promtool >/dev/null || promtool check metrics <"$IN/served.prom" >"$IN/promtool2" 2>&1; }; then
	ok "agorad /metrics: per-account gauges (slurmctld's view) and agorad's counters, valid for promtool"
else
	notok "agorad /metrics content"
	cat "$IN/promtool2" 2>/dev/null | diag
fi
# agora_account_running_gpus: acct_b's running job, on the cluster it runs
# on, from the rounds' surveys (agorad reads no federation-wide job list)
runs_on() {
	local c
	for c in c1 c2; do
		[ -n "$(squeue -M "$c" -h -j "$jb" -t R -o %i 2>/dev/null | grep -x "$jb")" ] && echo "$c"
	done
}
b_gpus() {
	scrape_metrics >"$IN/served2.prom" 2>&1
	rc=$(runs_on)
	[ -n "$rc" ] && grep -qx "agora_account_running_gpus{account=\"acct_b\",cluster=\"$rc\"} 3" "$IN/served2.prom" &&
		grep -qx 'agora_running_jobs_read 1' "$IN/served2.prom"
}
if wait_for 30 b_gpus; then
	ok "agora_account_running_gpus: acct_b's 3 GPUs on $rc, where job $jb runs"
else
	notok "agora_account_running_gpus: acct_b's job $jb runs on '${rc:-}'; served:"
	grep -E '^agora_(account_running_gpus|running_jobs_read)' "$IN/served2.prom" | diag
fi
if ! command -v prometheus >/dev/null; then
	notok "prometheus not installed (contrib/bin/agora-deps installs it)"
else
	q='agora_fed_cluster_gpus{cluster="c1",state="total"}'
	pv() {
		python3 - "$PPORT" "$q" <<'PY'
import json, sys, urllib.parse, urllib.request
u = "http://127.0.0.1:%s/api/v1/query?query=%s" % (sys.argv[1], urllib.parse.quote(sys.argv[2]))
try:
    r = json.load(urllib.request.urlopen(u, timeout=2))["data"]["result"]
    print(r[0]["value"][1] if r else "")
except Exception:
    print("")
PY
	}
	v=""
	d=$(($(date +%s) + 30))
	while [ -z "$v" ] && [ "$(date +%s)" -lt "$d" ]; do
		sleep 1
		v=$(pv)
	done
	[ -n "$v" ] && [ "$v" = "$gj" ] && ok "Prometheus scraped agorad: $q = $v = agoractl fed --json's c1 GPUs" ||
		{ notok "Prometheus: $q = '$v', agoractl fed --json: '$gj'"; tail -5 "$IN/prometheus.log" | diag; }
fi

# ---- bad input ------------------------------------------------------------------
[ "$(http 'GET /nothing HTTP/1.0\r\n\r\n')" = "HTTP/1.0 404 Not Found" ] && ok "/nothing: 404" || notok "/nothing: not 404"
[ "$(http 'POST /metrics HTTP/1.0\r\n\r\n')" = "HTTP/1.0 405 Method Not Allowed" ] && ok "POST: 405" || notok "POST: not 405"
[ "$(http '\x00\xff garbage\r\n\r\n')" = "HTTP/1.0 400 Bad Request" ] && ok "garbage: 400" || notok "garbage: not 400"
big=$(head -c 6000 /dev/zero | tr '\0' a)
[ "$(http "GET /metrics HTTP/1.0\\r\\nX: $big\\r\\n\\r\\n")" = "HTTP/1.0 431 Request Header Fields Too Large" ] &&
	ok "oversized request: 431" || notok "oversized request: not 431"
[ -z "$(http '')" ] && ok "a client that sends nothing gets no answer (closed after the timeout)" ||
	notok "empty request answered"
[ "$(http 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n')" = "HTTP/1.0 200 OK" ] && kill -0 "$(cat "$W/run/agorad.pid" 2>/dev/null || echo 0)" 2>/dev/null &&
	ok "agorad still serves /metrics after bad input" || notok "agorad after bad input"

# ---- FedAuction=no: agora_account_running_gpus of the local cluster -------------
# agorad reloads agora.conf on SIGHUP; without rounds the metrics read
# c1's own job list (never the federation's): rows for c1 only, acct_b's
# 3 GPUs there if job $jb runs on c1
sed -i 's/^FedAuction=yes$/FedAuction=no/' "$W/c1/etc/agora.conf"
kill -HUP "$(cat "$W/run/agorad.pid" 2>/dev/null || echo 0)" 2>/dev/null
local_rows() {
	scrape_metrics >"$IN/served3.prom" 2>&1
	rc=$(runs_on)
	grep -qx 'agora_running_jobs_read 1' "$IN/served3.prom" &&
		! grep -q '^agora_account_running_gpus{.*cluster="c2"' "$IN/served3.prom" &&
		if [ "$rc" = c1 ]; then
			grep -qx 'agora_account_running_gpus{account="acct_b",cluster="c1"} 3' "$IN/served3.prom"
		else
			! grep -q '^agora_account_running_gpus{account="acct_b"' "$IN/served3.prom"
		fi
}
if wait_for 20 local_rows; then
	ok "FedAuction=no: agora_account_running_gpus from c1's own job list (job $jb on ${rc:-none})"
else
	notok "FedAuction=no: agora_account_running_gpus not c1's own (job $jb on '${rc:-}'); served:"
	grep -E '^agora_(account_running_gpus|running_jobs_read)' "$IN/served3.prom" | diag
fi
scancel "$jb" 2>/dev/null
