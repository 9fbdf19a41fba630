#!/usr/bin/env bash
# The guard part on a real GPU, in one go (a future session with a GPU runs this):
#   1. builds oomguard_mr and liboomguard_torch.so (Release, no tests);
#   2. tools/gpu_guard_check.cc over the real driver: arena to the cap + OOM report, growth,
#      release, pinned pool (cap, fallback, back-off);
#   3. a short PyTorch CUDA training loop with PyTorch's allocator, then through
#      liboomguard_torch.so (expandable growth, regions, and a cap too small: the OOM report);
# and writes $OUT/mr_gpu_check.json (and a copy in bench/results/ when the tree is writable).
# Usage: OUT=/tmp/out tools/gpu_guard_check.sh      (needs libcuda.so.1, one GPU; PyTorch with CUDA optional)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu_guard_out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu-guard}
PY=${PYTHON:-python3}
log() { echo "gpu_guard_check: $*" >&2; }

log "build"
{ [ -f "$BUILD/CMakeCache.txt" ] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DOOMGUARD_BUILD_TESTS=OFF; } \
  >"$OUT/cmake.log" 2>&1 &&
  cmake --build "$BUILD" -j"$(nproc)" --target oomguard_mr oomguard_torch >>"$OUT/cmake.log" 2>&1 ||
  { log "build failed, see $OUT/cmake.log"; exit 2; }
g++ -std=c++20 -O2 -Iinclude -Isrc tools/gpu_guard_check.cc "$BUILD/src/mr/liboomguard_mr.a" \
  "$BUILD/src/core/liboomguard_core.a" -ldl -lpthread -o "$BUILD/gpu_guard_check" 2>>"$OUT/cmake.log" ||
  { log "cannot compile tools/gpu_guard_check.cc, see $OUT/cmake.log"; exit 2; }
case $BUILD in /*) LIB=$BUILD/liboomguard_torch.so ;; *) LIB=$PWD/$BUILD/liboomguard_torch.so ;; esac

log "driver checks"
timeout 300 "$BUILD/gpu_guard_check" >"$OUT/driver.json" 2>"$OUT/driver.err" || log "driver checks failed: $(cat "$OUT/driver.err")"

run_py() {  # name, env, args...
  local name=$1 env=$2; shift 2
  log "pytorch: $name"
  env $env timeout 300 "$PY" tools/gpu_guard_check.py "$@" >"$OUT/$name.json" 2>"$OUT/$name.err" ||
    { log "$name failed (see $OUT/$name.err)"; echo null >"$OUT/$name.json"; }
}
if "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  run_py torch_pytorch "OOMGUARD_UNUSED=1" pytorch
  run_py torch_oomguard "OOMGUARD_ALLOC_CONF=growth=expandable,fraction=0.9" oomguard "$LIB"
  run_py torch_oomguard_regions "OOMGUARD_ALLOC_CONF=growth=regions,fraction=0.9" oomguard "$LIB"
  rm -f "$OUT/oom_report.json"
  run_py torch_oom "OOMGUARD_ALLOC_CONF=limit=256MiB,report=$OUT/oom_report.json" oom "$LIB" "$OUT/oom_report.json"
else
  log "no PyTorch with CUDA: skipping the training loop"
  for n in torch_pytorch torch_oomguard torch_oomguard_regions torch_oom; do echo null >"$OUT/$n.json"; done
fi

"$PY" - "$OUT" <<'PYEOF'
import json, os, platform, subprocess, sys, datetime
out = sys.argv[1]
def load(name):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            return json.load(f)
    except Exception as e:
        return {"error": str(e)}
cpu = ""
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip(); break
try:
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
except OSError:  # no nvidia-smi: the stand-in driver
    gpu = "no nvidia-smi"
pt, og, ogr = load("torch_pytorch"), load("torch_oomguard"), load("torch_oomguard_regions")
def over_pytorch(x):
    if isinstance(pt, dict) and isinstance(x, dict) and pt.get("peak_reserved_bytes") and x.get("peak_reserved_bytes"):
        return x["peak_reserved_bytes"] / pt["peak_reserved_bytes"]
    return None
ratio, ratio_regions = over_pytorch(og), over_pytorch(ogr)
result = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
          "machine": {"uname": " ".join(platform.uname()), "nproc": os.cpu_count(), "cpu": cpu, "gpu": gpu},
          "command": "tools/gpu_guard_check.sh",
          "driver": load("driver"), "torch_pytorch_allocator": pt, "torch_oomguard": og,
          "torch_oomguard_regions": ogr,
          "oomguard_over_pytorch_peak_reserved": ratio,
          "oomguard_regions_over_pytorch_peak_reserved": ratio_regions, "torch_oom": load("torch_oom")}
with open(os.path.join(out, "mr_gpu_check.json"), "w") as f:
    json.dump(result, f, indent=2)
print(json.dumps({"oomguard_over_pytorch_peak_reserved": ratio, "regions": ratio_regions}))
PYEOF
# PUBLISH=0 (the stand-in run of tools/gpu_check_all.sh) keeps bench/results as it is.
if [ "${PUBLISH:-1}" = 1 ]; then cp "$OUT/mr_gpu_check.json" bench/results/mr_gpu_check.json 2>/dev/null || true; fi
log "done: $OUT/mr_gpu_check.json"
