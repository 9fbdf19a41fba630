#!/usr/bin/env bash
# The feed benchmark (issue 5's acceptance). Each configuration runs in its own
# process so its peak RSS (VmHWM) is its own; all run in one go on one machine,
# so compare the ratios within one result file.
#   1 ceiling   decode every file with all cores, no pipeline   (oomguard_feed_bench --mode ceiling)
#   2 preload   decode everything into memory, then iterate     (--mode preload)
#   3 per-step  read + decode each batch when the step asks      (--mode per-step)
#   4 feed      oomguard feed --budget 256MiB
# Then: feed and preload at 1000 / 10000 (preload: 5100) images for RSS growth,
# and per-step vs feed with a simulated step (--step-ms ~ one batch's decode time).
#
#   tools/bench_feed.sh                  writes bench/results/feed.json
#   OOMGUARD_PHOTOS=/tmp/x tools/bench_feed.sh   (data folder; made if missing)
#   BUILD=build-feed tools/bench_feed.sh         (reuse a build folder)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build-feed-bench}
DATA=${OOMGUARD_PHOTOS:-/tmp/oomguard_photos}
OUT=${OUT:-bench/results/feed.json}
WORK=$(mktemp -d /tmp/oomguard_bench_feed_XXXXXX)
trap 'rm -rf "$WORK"' EXIT

if [ -f "$B/CMakeCache.txt" ]; then  # an existing build folder: keep its settings, add the benchmarks
  cmake -S . -B "$B" -DOOMGUARD_BUILD_BENCH=ON >/dev/null
else
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DOOMGUARD_BUILD_BENCH=ON -DOOMGUARD_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$B" -j"$(nproc)" --target oomguard oomguard_feed_bench oomguard_make_photos >/dev/null

if [ "$(find "$DATA" -name '*.jpg' 2>/dev/null | wc -l)" -lt 10000 ]; then
  echo "making 10000 photos in $DATA" >&2
  "$B/oomguard_make_photos" --out "$DATA" --count 10000 --seed 1 >/dev/null
fi
find "$DATA" -name '*.jpg' | sort | head -10000 >"$WORK/all.txt"
for n in 1000 5100 10000; do head -n "$n" "$WORK/all.txt" >"$WORK/list_$n.txt"; done
cat $(cat "$WORK/all.txt") >/dev/null  # warm the page cache: measure decoding, not the disk

BENCH="$B/oomguard_feed_bench"
FEED="$B/oomguard"
run() {  # name, command...
  local name=$1; shift
  echo "== $name: $*" >&2
  local json
  json=$("$@" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))')
  printf '%s\t%s\t%s\n' "$name" "$*" "$json" >>"$WORK/results.tsv"
}
: >"$WORK/results.tsv"
L=$WORK/list_5100.txt
run ceiling       "$BENCH" --mode ceiling "$L"
run preload       "$BENCH" --mode preload "$L"
run per_step      "$BENCH" --mode per-step "$L" --batch 32
run feed          "$FEED" feed "$L" --budget 256MiB --batch 32 --json
run ceiling_again "$BENCH" --mode ceiling "$L"
run feed_1000     "$FEED" feed "$WORK/list_1000.txt" --budget 256MiB --batch 32 --json
run feed_10000    "$FEED" feed "$WORK/list_10000.txt" --budget 256MiB --batch 32 --json
run preload_1000  "$BENCH" --mode preload "$WORK/list_1000.txt"
# A simulated training step as long as decoding one batch takes on all cores.
STEP=$(python3 -c "
import json,sys
rows=[l.split('\t') for l in open('$WORK/results.tsv')]
ips=[json.loads(r[2])['images_per_second'] for r in rows if r[0]=='ceiling'][0]
print(round(32/ips*1000))")
run per_step_step "$BENCH" --mode per-step "$L" --batch 32 --step-ms "$STEP"
run feed_step     "$FEED" feed "$L" --budget 256MiB --batch 32 --step-ms "$STEP" --json

python3 - "$WORK/results.tsv" "$OUT" "$STEP" <<'PY'
import json, platform, subprocess, sys, datetime, os
tsv, out, step = sys.argv[1], sys.argv[2], float(sys.argv[3])
runs = {}
for line in open(tsv):
    name, cmd, js = line.rstrip('\n').split('\t')
    r = json.loads(js)
    runs[name] = {"command": cmd, "images": r["images"], "seconds": r["seconds"],
                  "images_per_second": r["images_per_second"], "peak_rss_bytes": r["peak_rss_bytes"],
                  "idle_rss_bytes": r["idle_rss_bytes"]}
    if "peak_budget_bytes" in r:
        runs[name]["peak_budget_bytes"] = r["peak_budget_bytes"]
        runs[name]["budget_bytes"] = r["budget_bytes"]
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
MiB = 1 << 20
f, c = runs["feed"], runs["ceiling"]
ceiling_best = max(c["images_per_second"], runs["ceiling_again"]["images_per_second"])
over_idle = f["peak_rss_bytes"] - f["idle_rss_bytes"]
result = {
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "machine": {"uname": " ".join(platform.uname()), "nproc": os.cpu_count(), "cpu": cpu,
                "loadavg_at_end": open('/proc/loadavg').read().split()[:3]},
    "command": "tools/bench_feed.sh",
    "data": "oomguard_make_photos --count 10000 --seed 1 (640x480, quality 90); lists of the first 1000/5100/10000",
    "step_ms": step,
    "runs": runs,
    "checks": {
        "feed_vs_ceiling": round(f["images_per_second"] / ceiling_best, 3),
        "feed_vs_ceiling_target": 0.9,
        "feed_rss_over_idle_bytes": over_idle,
        "feed_rss_over_idle_limit_bytes": f["budget_bytes"] + 32 * MiB,
        "feed_peak_rss_1000_vs_10000": [runs["feed_1000"]["peak_rss_bytes"], runs["feed_10000"]["peak_rss_bytes"]],
        "preload_peak_rss_1000_vs_5100": [runs["preload_1000"]["peak_rss_bytes"], runs["preload"]["peak_rss_bytes"]],
        "with_step_feed_vs_per_step": round(runs["feed_step"]["images_per_second"] /
                                            runs["per_step_step"]["images_per_second"], 3),
        "with_step_feed_vs_step_bound": round(runs["feed_step"]["images_per_second"] / (32 / (step / 1000)), 3),
    },
}
json.dump(result, open(out, "w"), indent=2)
open(out, "a").write("\n")
print(json.dumps(result["checks"], indent=2))
PY
