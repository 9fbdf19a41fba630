#!/usr/bin/env bash
# The feed benchmark (issues 5 and 13). Each configuration runs in its own
# process so its peak RSS (VmHWM) is its own; all run in one go on one machine,
# so compare the ratios within one result file.
#   1 decode-only  files pre-read into memory, decoded with all cores: the bare decode ceiling
#   2 ceiling   read + decode every file with all cores, no pipeline (oomguard_feed_bench --mode ceiling)
#   3 preload   decode everything into memory, then iterate     (--mode preload)
#   4 per-step  read + decode each batch when the step asks      (--mode per-step)
#   5 feed      oomguard feed --budget 256MiB
# 1, 5 and 2 run interleaved REPEAT times (default 5); the checks are medians of per-round ratios.
# Then: feed and preload at 1000 / 10000 (preload: 5100) images for RSS growth,
# and per-step vs feed with a simulated step (--step-ms ~ one batch's decode time).
#
#   tools/bench_feed.sh                  writes bench/results/feed.json
#   OOMGUARD_PHOTOS=/tmp/x tools/bench_feed.sh   (data folder; made if missing)
#   BUILD=build-feed tools/bench_feed.sh         (reuse a build folder)
#   REPEAT=3 tools/bench_feed.sh                 (rounds of the interleaved comparison)
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
REPEAT=${REPEAT:-5}
# Runs one command and appends a row: name, command, its JSON with cpu_seconds (user + system of
# the process and the threads and children it waited for, from wait4) and the 1-minute load
# average when it started. A benchmark's own cpu_seconds (the timed part only) is kept.
run() {  # name, command...
  local name=$1; shift
  echo "== $name: $*" >&2
  python3 - "$name" "$WORK/results.tsv" "$@" <<'PY'
import json, os, subprocess, sys
name, tsv, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
load = os.getloadavg()[0]
p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
out = p.stdout.read()
_, status, ru = os.wait4(p.pid, 0)
if status != 0:
    sys.exit("bench_feed: %s failed" % " ".join(cmd))
r = json.loads(out)
r.setdefault("cpu_seconds", ru.ru_utime + ru.ru_stime)
r["load_1min_at_start"] = load
with open(tsv, "a") as f:
    f.write("%s\t%s\t%s\n" % (name, " ".join(cmd), json.dumps(r)))
PY
}
: >"$WORK/results.tsv"
L=$WORK/list_5100.txt
# The comparison that matters, interleaved (A B A B ...) on a shared machine so that load
# changes hit both sides alike: feed against the bare decode ceiling (files pre-read, same
# threads) and against read + decode with no pipeline. Ratios are taken per round, then the median.
THREADS=$(nproc)
for r in $(seq "$REPEAT"); do
  run "decode_only#$r" "$BENCH" --mode decode-only "$L" --threads "$THREADS"
  run "feed#$r"        "$FEED" feed "$L" --budget 256MiB --batch 32 --workers "$THREADS" --json
  run "ceiling#$r"     "$BENCH" --mode ceiling "$L" --threads "$THREADS"
done
run preload       "$BENCH" --mode preload "$L"
run per_step      "$BENCH" --mode per-step "$L" --batch 32
run feed_1000     "$FEED" feed "$WORK/list_1000.txt" --budget 256MiB --batch 32 --json
run feed_10000    "$FEED" feed "$WORK/list_10000.txt" --budget 256MiB --batch 32 --json
run preload_1000  "$BENCH" --mode preload "$WORK/list_1000.txt"
# A simulated training step as long as decoding one batch takes on all cores.
STEP=$(python3 -c "
import json, statistics
rows=[l.split('\t') for l in open('$WORK/results.tsv')]
ips=statistics.median(json.loads(r[2])['images_per_second'] for r in rows if r[0].startswith('ceiling#'))
print(round(32/ips*1000))")
run per_step_step "$BENCH" --mode per-step "$L" --batch 32 --step-ms "$STEP"
run feed_step     "$FEED" feed "$L" --budget 256MiB --batch 32 --step-ms "$STEP" --json

python3 - "$WORK/results.tsv" "$OUT" "$STEP" "$REPEAT" <<'PY'
import json, platform, statistics, sys, datetime, os
tsv, out, step, repeat = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
runs = {}
for line in open(tsv):
    name, cmd, js = line.rstrip('\n').split('\t')
    r = json.loads(js)
    runs[name] = {"command": cmd, "images": r["images"], "seconds": r["seconds"],
                  "images_per_second": r["images_per_second"], "cpu_seconds": r["cpu_seconds"],
                  "cpu_ms_per_image": 1000 * r["cpu_seconds"] / max(r["images"], 1),
                  "peak_rss_bytes": r["peak_rss_bytes"], "idle_rss_bytes": r["idle_rss_bytes"],
                  "load_1min_at_start": r["load_1min_at_start"]}
    if "peak_budget_bytes" in r:
        runs[name]["peak_budget_bytes"] = r["peak_budget_bytes"]
        runs[name]["budget_bytes"] = r["budget_bytes"]
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
MiB = 1 << 20
rounds = range(1, repeat + 1)
def ratios(a, b, key):  # per round: a's figure over b's
    return [runs["%s#%d" % (a, i)][key] / runs["%s#%d" % (b, i)][key] for i in rounds]
def med(xs):
    return round(statistics.median(xs), 3)
vs_decode = ratios("feed", "decode_only", "images_per_second")
vs_ceiling = ratios("feed", "ceiling", "images_per_second")
# CPU per image: decode_only's over feed's (1.0: feed spends no CPU beyond decoding), far less
# sensitive to the machine's load than images/s.
cpu_vs_decode = [1 / x for x in ratios("feed", "decode_only", "cpu_ms_per_image")]
f = runs["feed#1"]
over_idle = max(runs["feed#%d" % i]["peak_rss_bytes"] - runs["feed#%d" % i]["idle_rss_bytes"] for i in rounds)
loads = [r["load_1min_at_start"] for r in runs.values()]
result = {
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "machine": {"uname": " ".join(platform.uname()), "nproc": os.cpu_count(), "cpu": cpu,
                "load_1min_min_median_max": [min(loads), statistics.median(loads), max(loads)],
                "loadavg_at_end": open('/proc/loadavg').read().split()[:3]},
    "command": "tools/bench_feed.sh" + (" (REPEAT=%d)" % repeat),
    "data": "oomguard_make_photos --count 10000 --seed 1 (640x480, quality 90); lists of the first 1000/5100/10000",
    "method": "decode_only, feed and ceiling interleaved for %d rounds; ratios per round, median reported" % repeat,
    "step_ms": step,
    "runs": runs,
    "checks": {
        "feed_vs_decode_only_median": med(vs_decode),
        "feed_vs_decode_only_per_round": [round(x, 3) for x in vs_decode],
        "feed_vs_decode_only_target": 0.9,
        "feed_vs_decode_only_cpu_per_image_median": med(cpu_vs_decode),
        "feed_vs_ceiling_median": med(vs_ceiling),
        "feed_vs_ceiling_per_round": [round(x, 3) for x in vs_ceiling],
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
