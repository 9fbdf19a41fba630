#!/usr/bin/env bash
# Every GPU check of the project in one run (issue 16), for a machine with one NVIDIA GPU, CMake, a C++20
# compiler and PyTorch 2.x with CUDA (nothing is downloaded). From the repository root:
#   tools/gpu_check_all.sh                    # on the GPU machine: results in $OUT and bench/results/*_h200.json
#   tools/gpu_check_all.sh --stand-in         # here, without a GPU: the same script against the stand-in
#                                             # libcuda (src/mr/fake_libcuda.c); PyTorch sections are skipped
# Sections (each under its own time limit, caught one by one; a failed section never stops the others):
#   build    the CLI, the guard library, the torch plug-in and the stand-in driver (Release, no tests)
#   plan     the zoo at 3 batch sizes x sgd/adam: max_memory_allocated/reserved and NVML per process
#            against `oomguard plan --target cuda` -> plan_accuracy_h200.json
#   dp       the central GPU's extra memory under nn.DataParallel, as far as one GPU shows it -> dp_h200.json
#   guard    tools/gpu_guard_check.sh (virtual-memory probe, expandable vs regions, release, pinned pool)
#            -> mr_gpu_check_h200.json
#   plugin   a training loop under CUDAPluggableAllocator: its speed against PyTorch's native allocator on
#            the same loop (a ratio); the cap and the report are in the guard section -> plugin_h200.json
#   doctor   `devices` against `nvidia-smi -q -x` (UUID, PCI bus id, memory, driver version) and
#            tools/gpu_doctor_check.sh (CUDA_VISIBLE_DEVICES forms, doctor, watch) -> doctor_h200.json
#   explain  this PyTorch's real OOM messages (native, cudaMallocAsync, pinned) and what explain makes of
#            them -> explain_h200.json (+ explain_h200_messages.jsonl for the corpus)
# A summary of every section (status, seconds, reason) goes to $OUT/gpu_check_all.json and is printed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
STANDIN=0
[ "${1:-}" = "--stand-in" ] && STANDIN=1
if [ $# -gt 0 ] && [ "$STANDIN" = 0 ]; then
  echo "usage: tools/gpu_check_all.sh [--stand-in]" >&2
  exit 2
fi
OUT=${OUT:-$ROOT/gpu_check_out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
PY=${PYTHON:-python3}
SUFFIX=h200
[ "$STANDIN" = 1 ] && SUFFIX=standin
START=$(date +%s)
SECTIONS="$OUT/sections.jsonl"
: >"$SECTIONS"
log() { echo "gpu_check_all [$(( $(date +%s) - START ))s]: $*" >&2; }

# section NAME LIMIT_S FUNCTION: runs FUNCTION under a time limit in a subshell, records how it went.
section() {
  local name=$1 limit=$2 fn=$3 t0 rc status
  t0=$(date +%s)
  log "section $name (limit ${limit}s)"
  ( "$fn" ) >"$OUT/$name.log" 2>&1 &
  local pid=$!
  ( sleep "$limit" && kill -TERM -- "-$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null ) &
  local guard=$!
  wait "$pid"; rc=$?
  kill -- "-$guard" 2>/dev/null; wait "$guard" 2>/dev/null
  case $rc in
    0) status=ok ;;
    77) status=skipped ;;
    143) status=timeout ;;
    *) status=failed ;;
  esac
  local reason
  reason=$(tail -n 3 "$OUT/$name.log" | tr '\n\t"\\' '    ' | cut -c1-300)
  printf '{"section":"%s","status":"%s","exit":%d,"seconds":%d,"last_lines":"%s"}\n' \
    "$name" "$status" "$rc" "$(( $(date +%s) - t0 ))" "$reason" >>"$SECTIONS"
  log "section $name: $status"
}
set -m  # each section in its own process group, so a time limit stops all of it

torch_cuda() { "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; }
publish() {  # publish FILE NAME: the result under bench/results (GPU runs only; stand-in results stay in $OUT)
  if [ "$STANDIN" = 0 ] && [ -s "$1" ]; then cp "$1" "$ROOT/bench/results/$2"; fi
}

do_build() {
  # An existing build folder is used as it is configured (make test runs this script over build/).
  { [ -f "$BUILD/CMakeCache.txt" ] || cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DOOMGUARD_BUILD_TESTS=OFF; } &&
    cmake --build "$BUILD" -j"$(nproc)" --target oomguard oomguard_mr oomguard_torch oomguard_fake_libcuda
}

do_plan() {
  torch_cuda || { echo "no PyTorch with CUDA for $PY"; exit 77; }
  local rows="$OUT/plan_measured.jsonl"
  : >"$rows"
  for m in resnet18 resnet50 vgg16 mobilenet_v2 densenet121 efficientnet_b0 vit_b_16 bert_base; do
    # batches large enough that activations dominate on a big card, three per model
    local b
    case $m in vgg16|vit_b_16|bert_base|resnet50|densenet121) b=8,32,64 ;; *) b=16,64,128 ;; esac
    timeout 60 "$PY" tools/gpu_measure.py plan "$m" "$b" sgd,adam >>"$rows" || echo "plan $m failed"
  done
  "$PY" - "$rows" "$BUILD/oomguard" "$OUT/plan_accuracy_$SUFFIX.json" <<'PYEOF'
import json, subprocess, sys, statistics, datetime, platform, os
rows_path, cli, out = sys.argv[1:4]
rows = [json.loads(l) for l in open(rows_path) if l.strip()]
result = []
for r in rows:
    p = subprocess.run([cli, "plan", r["model"], "--batch", str(r["batch"]), "--optimizer", r["optimizer"],
                        "--target", "cuda", "--gpu", "h200", "--json"], capture_output=True, text=True)
    try:
        plan = json.loads(p.stdout)
    except Exception:
        result.append({**r, "error": p.stderr.strip()[:300]}); continue
    def err(pred, meas):
        return None if not meas else 100.0 * (pred - meas) / meas
    result.append({**r, "plan_peak_allocated": plan.get("peak_allocated_bytes"),
                   "plan_peak_reserved": plan.get("peak_reserved_bytes"),
                   "allocated_error_pct": err(plan.get("peak_allocated_bytes", 0), r["max_memory_allocated"]),
                   "reserved_error_pct": err(plan.get("peak_reserved_bytes", 0), r["max_memory_reserved"])})
def summary(key):
    v = sorted(abs(x[key]) for x in result if x.get(key) is not None)
    if not v: return None
    return {"n": len(v), "median_abs_pct": statistics.median(v), "max_abs_pct": v[-1],
            "p90_abs_pct": v[min(len(v) - 1, int(0.9 * len(v)))]}
doc = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
       "machine": {"uname": " ".join(platform.uname()), "nproc": os.cpu_count(),
                   "load": os.getloadavg()},
       "command": "tools/gpu_check_all.sh (section plan)", "goal": "median <= 3 %",
       "allocated": summary("allocated_error_pct"), "reserved": summary("reserved_error_pct"), "rows": result}
json.dump(doc, open(out, "w"), indent=1)
print(json.dumps({"allocated": doc["allocated"], "reserved": doc["reserved"]}))
PYEOF
  publish "$OUT/plan_accuracy_$SUFFIX.json" "plan_accuracy_$SUFFIX.json"
}

do_dp() {
  torch_cuda || { echo "no PyTorch with CUDA for $PY"; exit 77; }
  timeout 120 "$PY" tools/gpu_measure.py dp resnet50 64 >"$OUT/dp_measured.json" || exit 1
  "$PY" - "$OUT/dp_measured.json" "$BUILD/oomguard" "$OUT/dp_$SUFFIX.json" <<'PYEOF'
import json, subprocess, sys, datetime
m = json.load(open(sys.argv[1]))
p = subprocess.run([sys.argv[2], "split", "resnet50", "--global-batch", str(2 * m["batch"]), "--gpus", "2",
                    "--gpu", "h200", "--strategy", "dp", "--target", "cuda", "--json"], capture_output=True, text=True)
try:
    split = json.loads(p.stdout)
except Exception:
    split = {"error": p.stderr.strip()[:300]}
doc = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
       "command": "tools/gpu_check_all.sh (section dp)", "measured": m, "predicted_split_2_gpus": split,
       "one_gpu_cannot_show": "with one device nn.DataParallel calls the module directly: no replicas, no "
       "scatter of inputs, no gather of outputs on the central GPU and no reduction of replica gradients; "
       "the central GPU's extra memory for K >= 2 GPUs stays a model until a multi-GPU machine measures it"}
json.dump(doc, open(sys.argv[3], "w"), indent=1)
print(json.dumps({"central_extra_bytes_one_gpu": m["central_extra_bytes"]}))
PYEOF
  publish "$OUT/dp_$SUFFIX.json" "dp_$SUFFIX.json"
}

do_guard() {
  OUT="$OUT/guard" BUILD="$BUILD" PYTHON="$PY" PUBLISH=$((1 - STANDIN)) tools/gpu_guard_check.sh
  local rc=$?
  publish "$OUT/guard/mr_gpu_check.json" "mr_gpu_check_$SUFFIX.json"
  [ -s "$OUT/guard/driver.json" ] && [ -s "$OUT/guard/mr_gpu_check.json" ] || { echo "no guard results"; return 1; }
  return $rc
}

do_plugin() {
  torch_cuda || { echo "no PyTorch with CUDA for $PY"; exit 77; }
  local lib="$BUILD/liboomguard_torch.so"
  timeout 120 "$PY" tools/gpu_measure.py speed pytorch >"$OUT/speed_pytorch.json" || exit 1
  OOMGUARD_ALLOC_CONF=growth=expandable timeout 120 "$PY" tools/gpu_measure.py speed oomguard "$lib" \
    >"$OUT/speed_oomguard.json" || exit 1
  "$PY" - "$OUT" "$OUT/plugin_$SUFFIX.json" <<'PYEOF'
import json, sys, datetime
out = sys.argv[1]
pt = json.load(open(out + "/speed_pytorch.json")); og = json.load(open(out + "/speed_oomguard.json"))
doc = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
       "command": "tools/gpu_check_all.sh (section plugin)", "pytorch": pt, "oomguard": og,
       "oomguard_over_pytorch_time_per_step": og["seconds_per_step"] / pt["seconds_per_step"]}
json.dump(doc, open(sys.argv[2], "w"), indent=1)
print(json.dumps({"ratio": doc["oomguard_over_pytorch_time_per_step"]}))
PYEOF
  publish "$OUT/plugin_$SUFFIX.json" "plugin_$SUFFIX.json"
}

do_doctor() {
  "$BUILD/oomguard" devices --json >"$OUT/devices.json" 2>"$OUT/devices.err"
  echo "devices exit $?"
  nvidia-smi -q -x >"$OUT/nvidia_smi.xml" 2>/dev/null || echo "<nvidia_smi_log/>" >"$OUT/nvidia_smi.xml"
  "$PY" - "$OUT" "$OUT/doctor_$SUFFIX.json" <<'PYEOF'
import json, sys, datetime
import xml.etree.ElementTree as ET
out = sys.argv[1]
dev = json.load(open(out + "/devices.json"))
root = ET.parse(out + "/nvidia_smi.xml").getroot()
def norm(b):
    d, rest = b.lower().split(":", 1)
    return f"{int(d, 16):04x}:{rest}"
checks = []
drv = root.findtext("driver_version")
if drv:
    ours = (dev.get("driver") or {}).get("version")
    checks.append({"check": "driver version", "nvidia_smi": drv, "oomguard": ours, "ok": ours == drv})
for i, g in enumerate(root.findall("gpu")):
    uuid, bus = g.findtext("uuid"), g.get("id")
    total = g.findtext("fb_memory_usage/total")  # "143771 MiB"
    mine = [d for d in dev.get("devices", []) if d.get("uuid") == uuid]
    d = mine[0] if mine else {}
    total_mib = float(total.split()[0]) if total else None
    checks.append({"check": f"gpu {i}", "uuid": uuid, "found": bool(mine),
                   "pci_ok": bool(mine) and norm(d.get("pci_bus_id", "0:0")) == norm(bus),
                   "total_ok": bool(mine) and total_mib is not None and abs(d["total_bytes"] / 2**20 - total_mib) <= 1,
                   "mig_mode": g.findtext("mig_mode/current_mig")})
    checks[-1]["ok"] = checks[-1]["found"] and checks[-1]["pci_ok"] and checks[-1]["total_ok"]
doc = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
       "command": "tools/gpu_check_all.sh (section doctor)", "checks": checks, "devices": dev,
       "all_ok": all(c["ok"] for c in checks) if checks else None}
json.dump(doc, open(sys.argv[2], "w"), indent=1)
print(json.dumps({"all_ok": doc["all_ok"], "checks": len(checks)}))
PYEOF
  if command -v nvidia-smi >/dev/null && [ "$STANDIN" = 0 ]; then
    OUT="$OUT/doctor" PYTHON="$PY" tools/gpu_doctor_check.sh  # builds build-gpu/oomguard (a no-op after the build section)
  else
    echo "no nvidia-smi: gpu_doctor_check.sh skipped"
  fi
  publish "$OUT/doctor_$SUFFIX.json" "doctor_$SUFFIX.json"
}

do_explain() {
  torch_cuda || { echo "no PyTorch with CUDA for $PY"; exit 77; }
  local msgs="$OUT/explain_${SUFFIX}_messages.jsonl"
  : >"$msgs"
  timeout 60 "$PY" tools/gpu_measure.py oom native >>"$msgs"
  PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync timeout 60 "$PY" tools/gpu_measure.py oom async >>"$msgs"
  timeout 60 "$PY" tools/gpu_measure.py oom pinned >>"$msgs"
  "$PY" - "$msgs" "$BUILD/oomguard" "$OUT/explain_$SUFFIX.json" <<'PYEOF'
import json, subprocess, sys, datetime
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
want = {"native": ("gpu_device_oom", "gpu"), "async": ("gpu_device_oom", "gpu"), "pinned": ("host_pinned_oom", "host")}
rows = []
for m in msgs:
    text = m.get("message") or ""
    p = subprocess.run([sys.argv[2], "explain", "-", "--json"], input=text, capture_output=True, text=True)
    try:
        f = json.loads(p.stdout).get("findings", [])
    except Exception:
        f = []
    top = f[0] if f else {}
    cause, domain = want[m["kind"]]
    rows.append({**m, "expected_cause": cause, "expected_domain": domain, "top_cause": top.get("cause"),
                 "top_domain": top.get("domain"), "ok": top.get("cause") == cause and top.get("domain") == domain})
doc = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
       "command": "tools/gpu_check_all.sh (section explain)", "rows": rows}
json.dump(doc, open(sys.argv[3], "w"), indent=1)
print(json.dumps({"ok": sum(r["ok"] for r in rows), "of": len(rows)}))
PYEOF
  publish "$OUT/explain_$SUFFIX.json" "explain_$SUFFIX.json"
  publish "$msgs" "explain_${SUFFIX}_messages.jsonl"
}

section build 300 do_build
if [ ! -x "$BUILD/oomguard" ]; then
  log "the build failed: see $OUT/build.log"
  exit 1
fi
if [ "$STANDIN" = 1 ]; then
  # The stand-in driver answers as libcuda.so.1 for everything started from here on.
  mkdir -p "$BUILD/standin"
  ln -sf "$(find "$BUILD" -name 'libfakecuda.so' | head -1)" "$BUILD/standin/libcuda.so.1"
  export LD_LIBRARY_PATH="$BUILD/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
section plan 150 do_plan
section dp 60 do_dp
section guard 150 do_guard
section plugin 60 do_plugin
section doctor 90 do_doctor
section explain 60 do_explain

"$PY" - "$SECTIONS" "$OUT/gpu_check_all.json" "$STANDIN" "$START" <<'PYEOF'
import json, sys, datetime, platform, os, subprocess, time
sections = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip() if not int(sys.argv[3]) else "stand-in libcuda"
doc = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
       "machine": {"uname": " ".join(platform.uname()), "nproc": os.cpu_count(), "gpu": gpu,
                   "load": os.getloadavg()},
       "command": "tools/gpu_check_all.sh" + (" --stand-in" if int(sys.argv[3]) else ""),
       "seconds": int(time.time()) - int(sys.argv[4]), "sections": sections}
json.dump(doc, open(sys.argv[2], "w"), indent=1)
for s in sections:
    print(f"{s['section']:8s} {s['status']:8s} {s['seconds']:4d}s  {s['last_lines'][:110]}")
PYEOF
publish "$OUT/gpu_check_all.json" "gpu_check_all_$SUFFIX.json"
failed=$(grep -c '"status":"\(failed\|timeout\)"' "$SECTIONS")
log "done in $(( $(date +%s) - START ))s, $failed section(s) failed or timed out; summary: $OUT/gpu_check_all.json"
[ "$failed" = 0 ]
