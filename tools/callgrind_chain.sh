#!/bin/sh
# Counts the instructions (valgrind --tool=callgrind: deterministic, unlike time on a shared machine; page
# faults and cache misses are not counted) of `fit --threads 1`, `split --maximize --threads 1` and `plan` on the chain of
# tools/make_chain.py, for a new binary and a baseline, and writes them with the ratios.
#   tools/callgrind_chain.sh NEW_EXE BASELINE_EXE OUT.txt [BLOCKS]   (default 2 500 blocks = 10 000 nodes)
set -eu
[ $# -ge 3 ] || { sed -n '2,6p' "$0"; exit 2; }
new=$1 base=$2 out=$3 blocks=${4:-2500}
for e in "$new" "$base"; do [ -x "$e" ] || { echo "callgrind_chain: not an executable: $e" >&2; exit 2; }; done
command -v valgrind >/dev/null || { echo "callgrind_chain: valgrind is not installed" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 "$(dirname "$0")/make_chain.py" "$dir/chain.onnx" "$blocks"
count() {  # exe, args...: the instructions callgrind collected
  e=$1; shift
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$e" "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : *//p'
}
fit="fit $dir/chain.onnx --memory 16GiB --json --threads 1"
split="split $dir/chain.onnx --maximize --gpus 2 --memory 16GiB --json --threads 1"
plan="plan $dir/chain.onnx --batch 64"
nf=$(count "$new" $fit) bf=$(count "$base" $fit) np=$(count "$new" $plan) bp=$(count "$base" $plan)
ns=$(count "$new" $split) bs=$(count "$base" $split)
{
  echo "date: $(date -u +%FT%TZ)"
  echo "machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (does not move instruction counts)"
  echo "command: tools/callgrind_chain.sh $new $base $out $blocks"
  echo "model: tools/make_chain.py, $blocks blocks = $((4 * blocks)) nodes"
  awk -v nf="$nf" -v bf="$bf" -v np="$np" -v bp="$bp" -v ns="$ns" -v bs="$bs" 'BEGIN {
    printf "fit --threads 1: baseline %.0f, new %.0f instructions (%+.1f %%)\n", bf, nf, 100 * (nf - bf) / bf
    printf "split --maximize --gpus 2 --threads 1: baseline %.0f, new %.0f instructions (%+.1f %%)\n", bs, ns, 100 * (ns - bs) / bs
    printf "plan:            baseline %.0f, new %.0f instructions (%+.1f %%)\n", bp, np, 100 * (np - bp) / bp
    printf "fit / plan:      baseline %.1fx, new %.1fx\n", bf / bp, nf / np
    printf "split / plan:    baseline %.1fx, new %.1fx\n", bs / bp, ns / np }'
} >"$out"
cat "$out"
