#!/bin/sh
# Times `oomguard plan`, `plan --html`, `fit` and `split --maximize` on a 100 000-node chain
# (25 000 x MatMul 64x64 -> Add bias -> Relu -> residual Add; weights external, never read) and
# writes wall seconds, user CPU seconds and peak RSS per command as JSON.
#   tools/bench_chain100k.sh build/oomguard bench/results/chain100k_cli.json
set -eu
exe=${1:-build/oomguard}
out=${2:-bench/results/chain100k_cli.json}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 - "$dir/chain.onnx" <<'PY'
import sys
from onnx import TensorProto, helper
def ext(name, dims):
    t = TensorProto(); t.name = name; t.data_type = TensorProto.FLOAT; t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add(); e.key = "location"; e.value = "missing.bin"
    return t
nodes, inits, x = [], [], "input"
for b in range(25000):
    inits += [ext(f"w{b}", [64, 64]), ext(f"b{b}", [64])]
    nodes += [helper.make_node("MatMul", [x, f"w{b}"], [f"m{b}"], name=f"mm{b}"),
              helper.make_node("Add", [f"m{b}", f"b{b}"], [f"a{b}"], name=f"add{b}"),
              helper.make_node("Relu", [f"a{b}"], [f"r{b}"], name=f"relu{b}"),
              helper.make_node("Add", [f"r{b}", x], [f"s{b}"], name=f"res{b}")]
    x = f"s{b}"
g = helper.make_graph(nodes, "chain100k", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 64])],
                      [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits)
open(sys.argv[1], "wb").write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString())
PY
run() {  # name, command...
  name=$1; shift
  /usr/bin/time -f "%e %U %M" -o "$dir/$name.time" "$@" >/dev/null 2>&1 || true
  set -- $(cat "$dir/$name.time")
  printf '    "%s": {"wall_s": %s, "user_s": %s, "max_rss_kb": %s},\n' "$name" "$1" "$2" "$3" >>"$dir/rows"
}
run plan "$exe" plan "$dir/chain.onnx" --batch 64
run plan_html "$exe" plan "$dir/chain.onnx" --batch 64 --html "$dir/chain.html"
run fit "$exe" fit "$dir/chain.onnx" --memory 16GiB
run split_maximize "$exe" split "$dir/chain.onnx" --maximize --gpus 2 --memory 16GiB
{
  printf '{\n  "date": "%s",\n  "machine": "%s, %s CPUs, %s",\n  "load_avg": "%s",\n' "$(date -u +%FT%TZ)" \
    "$(uname -srm)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '  "command": "tools/bench_chain100k.sh %s %s",\n  "commands": {\n' "$exe" "$out"
  sed '$ s/,$//' "$dir/rows"
  printf '  }\n}\n'
} >"$out"
cat "$out"
