#!/bin/sh
# Times `oomguard plan`, `plan --html`, `fit` (cuda and cpu) and `split --maximize` on a 100 000-node
# chain (25 000 x MatMul 64x64 -> Add bias -> Relu -> residual Add; weights external, never read) and
# writes wall seconds, user CPU seconds and peak RSS per command as JSON, with each command's ratio to
# one `plan` of the same binary. With a baseline binary (main, built in the same run), it times that
# too, the two interleaved command by command so that both see the same load.
#   tools/bench_chain100k.sh build/oomguard bench/results/chain100k_cli.json [BASELINE_EXE [TIMEOUT_S]]
set -eu
exe=${1:-build/oomguard}
out=${2:-bench/results/chain100k_cli.json}
base=${3:-}
limit=${4:-900}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 "$(dirname "$0")/make_chain.py" "$dir/chain.onnx" 25000
# Runs one command under a time limit; leaves "wall user rss rc" in $dir/<tag>.<name>.time.
run() {  # tag, name, exe, args...
  tag=$1 name=$2; shift 2
  /usr/bin/time -f "%e %U %M %x" -o "$dir/$tag.$name.time" timeout "$limit" "$@" >/dev/null 2>&1 || true
  tail -n 1 "$dir/$tag.$name.time" >"$dir/$tag.$name.t"
}
names="plan plan_html fit fit_cpu split_maximize"
for tag in new base; do
  [ "$tag" = base ] && [ -z "$base" ] && continue
  : >"$dir/$tag.rows"
done
for name in $names; do
  for tag in new base; do
    if [ "$tag" = new ]; then e=$exe; else [ -n "$base" ] || continue; e=$base; fi
    case $name in
      plan) run "$tag" "$name" "$e" plan "$dir/chain.onnx" --batch 64 ;;
      plan_html) run "$tag" "$name" "$e" plan "$dir/chain.onnx" --batch 64 --html "$dir/chain.html" ;;
      fit) run "$tag" "$name" "$e" fit "$dir/chain.onnx" --memory 16GiB ;;
      fit_cpu) run "$tag" "$name" "$e" fit "$dir/chain.onnx" --memory 16GiB --target cpu ;;
      split_maximize) run "$tag" "$name" "$e" split "$dir/chain.onnx" --maximize --gpus 2 --memory 16GiB ;;
    esac
  done
done
rows() {  # tag
  tag=$1
  set -- $(cat "$dir/$tag.plan.t")
  plan_user=$2
  first=1
  for name in $names; do
    set -- $(cat "$dir/$tag.$name.t")
    [ $first = 1 ] || printf ',\n'
    first=0
    if [ "$4" = 124 ]; then
      printf '      "%s": {"wall_s": null, "timed_out_after_s": %s, "max_rss_kb": %s}' "$name" "$limit" "$3"
    else
      printf '      "%s": {"wall_s": %s, "user_s": %s, "max_rss_kb": %s, "exit": %s, "user_ratio_to_plan": %s}' \
        "$name" "$1" "$2" "$3" "$4" "$(awk -v a="$2" -v b="$plan_user" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
    fi
  done
  printf '\n'
}
{
  printf '{\n  "date": "%s",\n  "machine": "%s, %s CPUs, %s",\n  "load_avg_after": "%s",\n' "$(date -u +%FT%TZ)" \
    "$(uname -srm)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '  "command": "tools/bench_chain100k.sh %s %s %s %s",\n' "$exe" "$out" "$base" "$limit"
  printf '  "model": "25 000 x (MatMul 64x64 -> Add -> Relu -> residual Add) = 100 000 nodes, weights external",\n'
  printf '  "note": "user_ratio_to_plan: user CPU seconds over one plan of the same binary (user time is less disturbed by other load than wall time)",\n'
  printf '  "commands": {\n    "this": {\n'
  rows new
  if [ -n "$base" ]; then
    printf '    },\n    "baseline": {\n'
    rows base
  fi
  printf '    }\n  }\n}\n'
} >"$out"
cat "$out"
