#!/usr/bin/env bash
# Prepared check of `oomguard devices`, `doctor` and `watch` on a real GPU
# machine (issue 7). Not run on GPU-less machines. From the repository root:
#   OUT=/path/to/out tools/gpu_doctor_check.sh        (default OUT: bench/results/gpu_doctor_<date>)
# It builds oomguard, compares `devices` with nvidia-smi, checks the CUDA
# ordinal mapping under CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER variants
# against what libcuda itself enumerates, runs `doctor`, and runs `watch` on a
# PyTorch script that leaks GPU memory step by step. Everything goes to $OUT;
# $OUT/summary.txt has one PASS/FAIL line per check. Takes about 2-4 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/gpu_doctor_$(date -u +%Y%m%d)}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

# 1. Build (the CLI only; no test dependencies needed).
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DOOMGUARD_BUILD_TESTS=OFF >"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" --target oomguard >>"$OUT/build.log" 2>&1 ||
  { note "FAIL build (see build.log)"; exit 1; }
B=build-gpu/oomguard

# 2. The machine.
{ date -u; uname -a; nproc; grep -m1 'model name' /proc/cpuinfo; nvidia-smi; } >"$OUT/machine.txt" 2>&1

# 3. devices vs nvidia-smi.
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name,memory.total,memory.used --format=csv,noheader,nounits \
  >"$OUT/nvidia_smi.csv" 2>&1
nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits >"$OUT/nvidia_smi_apps.csv" 2>&1
"$B" devices --json >"$OUT/devices.json" 2>"$OUT/devices.err"; echo "$?" >"$OUT/devices.rc"
"$B" devices >"$OUT/devices.txt" 2>&1
"$PY" - "$OUT" <<'PYEOF' | tee -a "$SUMMARY"
import json, sys
out = sys.argv[1]
dev = json.load(open(f"{out}/devices.json"))
ok = dev["driver"] is not None
rows = [l.split(", ") for l in open(f"{out}/nvidia_smi.csv").read().strip().splitlines()]
def norm(b):
    d, rest = b.lower().split(":", 1)
    return f"{int(d, 16):04x}:{rest}"
for idx, uuid, bus, name, total_mib, used_mib in rows:
    d = [x for x in dev["devices"] if x["nvml_index"] == int(idx)]
    if not d:
        ok = False; print(f"FAIL devices: nvidia-smi GPU {idx} missing"); continue
    d = d[0]
    checks = {"uuid": d["uuid"] == uuid, "pci": norm(d["pci_bus_id"]) == norm(bus), "name": d["name"] == name,
              "total": abs(d["total_bytes"] / 2**20 - float(total_mib)) <= 1}
    ok &= all(checks.values())
    print(("PASS" if all(checks.values()) else "FAIL") + f" devices GPU {idx}: {checks}")
print(("PASS" if ok else "FAIL") + " devices vs nvidia-smi")
PYEOF

# 4. The CUDA ordinal mapping under CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER,
#    against libcuda's own enumeration in a fresh process with the same env.
cat >"$OUT/cuda_enum.py" <<'PYEOF'
import ctypes, json
cu = ctypes.CDLL("libcuda.so.1")
r = cu.cuInit(0)
n = ctypes.c_int(0)
if r == 0: cu.cuDeviceGetCount(ctypes.byref(n))
bus = []
for i in range(n.value):
    d = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(d), i)
    b = ctypes.create_string_buffer(64); cu.cuDeviceGetPCIBusId(b, 64, d); bus.append(b.value.decode())
print(json.dumps({"cuInit": r, "bus_ids": bus}))
PYEOF
FIRST_UUID=$(cut -d, -f2 "$OUT/nvidia_smi.csv" | head -1 | tr -d ' ')
LAST_UUID=$(cut -d, -f2 "$OUT/nvidia_smi.csv" | tail -1 | tr -d ' ')
: >"$OUT/mapping.jsonl"
for order in FASTEST_FIRST PCI_BUS_ID; do
  for cvd in "<unset>" "" "-1" "0" "1,0" "0,bogus,1" "${LAST_UUID:0:12}" "${LAST_UUID},${FIRST_UUID}" "7"; do
    if [ "$cvd" = "<unset>" ]; then envs=(env -u CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER=$order);
    else envs=(env CUDA_VISIBLE_DEVICES="$cvd" CUDA_DEVICE_ORDER=$order); fi
    truth=$("${envs[@]}" "$PY" "$OUT/cuda_enum.py" 2>&1)
    ours=$("${envs[@]}" "$B" devices --json 2>&1)
    "$PY" - "$order" "$cvd" "$truth" "$ours" <<'PYEOF' | tee -a "$SUMMARY"
import json, sys
order, cvd, truth, ours = sys.argv[1:5]
def norm(b):
    d, rest = b.lower().split(":", 1)
    return f"{int(d, 16):04x}:{rest}"
try:
    t = json.loads(truth); o = json.loads(ours)
except Exception as e:
    print(f"FAIL mapping order={order} CVD={cvd!r}: {e}: {truth[:200]} {ours[:200]}"); sys.exit()
want = [norm(b) for b in t["bus_ids"]]
got = [None] * len(want)
extra = []
for d in o["devices"]:
    k = d["cuda_ordinal"]
    if k is None: continue
    if k < len(got): got[k] = norm(d["pci_bus_id"])
    else: extra.append(k)
ok = got == want and not extra
print(("PASS" if ok else "FAIL") + f" mapping order={order} CVD={cvd!r}: cuda={want} oomguard={got} warnings={o['warnings']}")
PYEOF
    echo "{\"order\": \"$order\", \"cvd\": \"$cvd\", \"truth\": $truth, \"oomguard\": $(echo "$ours" | tr -d '\n')}" \
      >>"$OUT/mapping.jsonl" 2>/dev/null
  done
done

# 5. doctor.
"$B" doctor >"$OUT/doctor.txt" 2>&1; echo "$?" >"$OUT/doctor.rc"
"$B" doctor --json >"$OUT/doctor.json" 2>"$OUT/doctor.err"
note "INFO doctor exit $(cat "$OUT/doctor.rc"): $(grep -E '^(fail|warn)' "$OUT/doctor.txt" | cut -c1-100 | tr '\n' ';')"

# 6. watch on a PyTorch script that leaks 64 MiB of GPU memory every 100 ms
#    (640 MiB/s), under --gpu-limit 4GiB --stop-before-oom. It must stop it
#    before 4 GiB, report the rate within 20%, and the script must see SIGINT
#    (it prints "checkpoint" from its KeyboardInterrupt handler).
cat >"$OUT/leak_gpu.py" <<'PYEOF'
import sys, time, torch
keep = []
t0 = time.time()
try:
    step = 0
    while True:
        while len(keep) < int((time.time() - t0) * 10) + 1:
            keep.append(torch.empty(64 << 20, dtype=torch.uint8, device="cuda").fill_(1))
        torch.cuda.synchronize()
        step += 1
        print(f"step {step} reserved {torch.cuda.memory_reserved()}", flush=True)
        time.sleep(0.02)
except KeyboardInterrupt:
    print(f"checkpoint at step {step}, reserved {torch.cuda.memory_reserved()}", flush=True)
    sys.exit(0)
PYEOF
if "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  "$B" watch --interval 0.2 --gpu-limit 4GiB --stop-before-oom --json --csv "$OUT/watch_gpu.csv" \
    --plot "$OUT/watch_gpu.svg" -- "$PY" "$OUT/leak_gpu.py" >"$OUT/watch_gpu.json" 2>"$OUT/watch_gpu.stderr"
  echo "$?" >"$OUT/watch_gpu.rc"
  "$PY" - "$OUT" <<'PYEOF' | tee -a "$SUMMARY"
import json, sys
out = sys.argv[1]
j = json.load(open(f"{out}/watch_gpu.json"))
rate = j["gpu_growth_bytes_per_second"] / 2**20
ok = j["stopped"] and j["peak_gpu_bytes"] < 4 * 2**30 and abs(rate - 640) <= 128
ck = "checkpoint" in open(f"{out}/watch_gpu.stderr").read()
print(("PASS" if ok else "FAIL") + f" watch GPU leak: stopped={j['stopped']} peak_gpu={j['peak_gpu_bytes']} rate={rate:.0f} MiB/s (want 640±128) verdict={j['verdict']}")
print(("PASS" if ck else "FAIL") + " watch GPU leak: the script got SIGINT and checkpointed")
PYEOF
else
  note "SKIP watch GPU leak: no PyTorch with CUDA for $PY (set PYTHON=...)"
fi
note "done: $OUT"
