#!/bin/sh
# End-to-end check of the agora-topo CLI on the fixtures (make check).
set -u
top=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fx=$top/tests/fixtures/topo
tool=./agora-topo
tmp=${TMPDIR:-/tmp}/agora-topo-test.$$
mkdir -p "$tmp" || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok - $1"; }
ko() { echo "not ok - $1"; fail=1; }

$tool model -i "$fx/2s-8gpu-nvswitch.xml" --name dgx --nodes 'd[1-4]' \
	-o "$tmp/dgx.json" && ok "model from XML" || ko "model from XML"
$tool model -i "$fx/2s-8gpu-pcie.xml" --name pcie --nodes 'p[1-2]' \
	-o "$tmp/pcie.json" && ok "model from XML (pcie)" || ko "model (pcie)"
# --nodes that the model's own loader would refuse, or that would be cut
# short, is refused here, naming the option
if $tool model -i "$fx/2s-8gpu-pcie.xml" --name bad --nodes 'p[1-' \
	-o "$tmp/bad.json" 2>"$tmp/err"; then
	ko "--nodes 'p[1-' refused"
else
	grep -q "nodes: 'p\[1-': bad hostlist" "$tmp/err" && [ ! -e "$tmp/bad.json" ] &&
		ok "--nodes 'p[1-' refused: $(cat "$tmp/err")" || ko "--nodes 'p[1-': $(cat "$tmp/err")"
fi
long=$(i=0; while [ $i -lt 200 ]; do printf 'node%d,' $i; i=$((i + 1)); done)
if $tool model -i "$fx/2s-8gpu-pcie.xml" --name long --nodes "${long%,}" \
	-o "$tmp/long.json" 2>"$tmp/err"; then
	ko "--nodes of $(printf %s "${long%,}" | wc -c) characters refused"
else
	grep -q "characters, at most 1023" "$tmp/err" &&
		ok "--nodes of $(printf %s "${long%,}" | wc -c) characters refused" || ko "long --nodes: $(cat "$tmp/err")"
fi
$tool merge "$tmp/dgx.json" "$tmp/pcie.json" -o "$tmp/all.json" \
	&& ok "merge" || ko "merge"
$tool gres -m "$tmp/all.json" --type-name dgx --file-prefix /tmp/fake/nv \
	> "$tmp/gres.conf" && ok "gres from model" || ko "gres from model"
grep -q '^NodeName=d\[1-4\] Name=gpu File=/tmp/fake/nv7 Cores=32-63 Links=16,16,16,16,16,16,16,-1$' \
	"$tmp/gres.conf" && ok "gres line" || ko "gres line"
$tool gres -m "$tmp/all.json" --type-name pcie >> "$tmp/gres.conf"
$tool check -m "$tmp/all.json" -g "$tmp/gres.conf" >/dev/null \
	&& ok "check agrees" || ko "check agrees"
grep -v 'nvidia7 ' "$tmp/gres.conf" > "$tmp/gres-7.conf"
if $tool check -m "$tmp/all.json" -g "$tmp/gres-7.conf" 2> "$tmp/err"; then
	ko "check mismatch fails"
else
	grep -q "gres-7.conf: NodeName p1: 7 GPUs, but .*all.json: node_types\[1\] 'pcie' has 8" \
		"$tmp/err" && ok "check mismatch names both files" \
		|| { ko "check mismatch message"; cat "$tmp/err"; }
fi
echo '<topology version="2.0"><object' > "$tmp/bad.xml"
if $tool show -i "$tmp/bad.xml" 2> "$tmp/err"; then
	ko "bad XML fails"
else
	grep -q "bad.xml: not a valid hwloc XML" "$tmp/err" \
		&& ok "bad XML names the file" || ko "bad XML message"
fi
echo '{"format":"agora-topo-model","version":1,"node_types":[{"name":"x","gpus":"2"}]}' > "$tmp/bad.json"
if $tool show -m "$tmp/bad.json" 2> "$tmp/err"; then
	ko "bad model fails"
else
	grep -q "bad.json: node_types\[0\].gpus: not an integer" "$tmp/err" \
		&& ok "bad model names file:field" || ko "bad model message"
fi
$tool topology --nodes 'c1n[1-32]' --nodes-per-leaf 16 > "$tmp/topo.conf"
grep -q '^SwitchName=leaf2 Nodes=c1n\[17-32\]$' "$tmp/topo.conf" \
	&& grep -q '^SwitchName=spine Switches=leaf\[1-2\]$' "$tmp/topo.conf" \
	&& ok "topology.conf" || ko "topology.conf"
$tool show -i "$fx/2s-8gpu-2nvlink.xml" --islands 0-1,2-3,4-7 | \
	grep -q '^  GPU0   X     NV    SOCK  SOCK  NODE' && ok "islands override" \
	|| ko "islands override"

# Real machines (hwloc 2.9.0's test topologies, tests/fixtures/topo/hwloc):
# GPUs in PCI bus order with their socket's cores and tiered Links.
real=$fx/hwloc
gres_of() { $tool gres -i "$real/$1" --nodes r1 | grep -v '^#'; }
gres_of power8gpudistances.xml > "$tmp/p8.conf" &&
	[ "$(wc -l < "$tmp/p8.conf")" = 4 ] &&
	grep -qx 'NodeName=r1 Name=gpu File=/dev/nvidia1 Cores=0-3 Links=16,-1,2,2' "$tmp/p8.conf" &&
	grep -qx 'NodeName=r1 Name=gpu File=/dev/nvidia2 Cores=4-7 Links=2,2,-1,16' "$tmp/p8.conf" &&
	ok "real POWER8: 4 GPUs, NVLink pairs, socket cores" || ko "real POWER8 gres"
gres_of 24em64t-2n6c2t-pci.xml > "$tmp/m4.conf" &&
	[ "$(wc -l < "$tmp/m4.conf")" = 3 ] &&
	grep -qx 'NodeName=r1 Name=gpu File=/dev/nvidia0 Cores=0-5 Links=-1,2,2' "$tmp/m4.conf" &&
	grep -qx 'NodeName=r1 Name=gpu File=/dev/nvidia2 Cores=6-11 Links=2,4,-1' "$tmp/m4.conf" &&
	ok "real mirage004: 3 GPUs, ATI VGA skipped" || ko "real mirage004 gres"
$tool show -i "$real/24em64t-2n6c2t-pci.xml" > "$tmp/m4.show" &&
	grep -q '^  GPU1 .*pci 0000:11:00.0 socket 1 numa 1' "$tmp/m4.show" &&
	ok "real mirage004: GPUs in PCI bus order" || ko "real mirage004 bus order"
gres_of 32em64t-2n8c2t-pci-normalio.xml > "$tmp/conan.conf" &&
	[ "$(wc -l < "$tmp/conan.conf")" = 4 ] &&
	grep -qx 'NodeName=r1 Name=gpu File=/dev/nvidia3 Cores=8-15 Links=2,4,8,-1' "$tmp/conan.conf" &&
	ok "real conan: 4 GPUs (3 NVIDIA + OpenCL AMD), same-switch tier" || ko "real conan gres"
$tool model -i "$real/power8gpudistances.xml" --name p8 --nodes 'r[1-2]' \
	-o "$tmp/p8.json" && $tool gres -m "$tmp/p8.json" > "$tmp/p8m.conf" &&
	$tool check -m "$tmp/p8.json" -g "$tmp/p8m.conf" > /dev/null &&
	ok "real POWER8: model, gres and check agree" || ko "real POWER8 model/check"
exit $fail
