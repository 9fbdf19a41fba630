#!/usr/bin/python3
"""PyTorch CUDA measurements for tools/gpu_check_all.sh (one GPU, PyTorch 2.x with CUDA).

    gpu_measure.py plan MODEL BATCHES OPTIMIZERS   # steady-state step of a zoo model, one JSON row a line
    gpu_measure.py dp MODEL BATCH                  # the same step plain and under nn.DataParallel
    gpu_measure.py oom native|async|pinned         # this PyTorch's real out-of-memory message, as JSON
    gpu_measure.py speed pytorch|oomguard [LIB]    # a training loop's time per step (allocator comparison)

Each mode prints JSON on stdout; every row carries the torch version and the GPU name. A row is
measured after one warm-up step (optimizer state exists), with the allocator's peak counters reset,
so it describes the steady-state step that `oomguard plan --target cuda` predicts.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from measure_step import make_optimizer  # noqa: E402 (the optimizers the CPU reference uses)


def nvml_process_bytes():
    """This process's GPU memory as NVML reports it (via nvidia-smi), or None."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True,
                             timeout=20).stdout
    except Exception:
        return None
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0] == str(os.getpid()) and parts[1].isdigit():
            return int(parts[1]) * 2**20
    return None


def header():
    import torch
    return {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
            "cuda": torch.version.cuda}


def train_step(model, opt, inputs, labels):
    import torch.nn.functional as F
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(*inputs), labels)
    loss.backward()
    opt.step()
    return loss


def steady_step_peaks(model, opt, inputs, labels):
    """One warm-up step (optimizer state, cuBLAS/cuDNN handles), then the allocator's peaks over the next."""
    import torch
    train_step(model, opt, inputs, labels)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    train_step(model, opt, inputs, labels)
    torch.cuda.synchronize()
    return {"max_memory_allocated": torch.cuda.max_memory_allocated(),
            "max_memory_reserved": torch.cuda.max_memory_reserved()}


def measure_plan(name, batches, optimizers):
    import torch
    from models import SPECS
    spec = SPECS[name]
    for opt_name in optimizers:
        for batch in batches:
            torch.cuda.empty_cache()
            torch.manual_seed(0)
            model = spec.build().cuda().train()
            opt = make_optimizer(opt_name, model.parameters())
            inputs = [t.cuda() for t in spec.example_inputs(batch)]
            labels = spec.example_labels(batch).cuda()
            base_allocated = torch.cuda.memory_allocated()
            row = {"model": name, "batch": batch, "optimizer": opt_name,
                   **steady_step_peaks(model, opt, inputs, labels),
                   "allocated_before_model": base_allocated,
                   "nvml_process_bytes": nvml_process_bytes()}
            row.update(header())
            print(json.dumps(row), flush=True)
            del model, opt, inputs, labels


def measure_dp(name, batch):
    import torch
    import torch.nn as nn
    from models import SPECS
    spec = SPECS[name]
    rows = {}
    for mode in ("plain", "dataparallel"):
        torch.cuda.empty_cache()
        torch.manual_seed(0)
        model = spec.build().cuda().train()
        if mode == "dataparallel":
            model = nn.DataParallel(model, device_ids=list(range(torch.cuda.device_count())))
        opt = make_optimizer("sgd", model.parameters())
        inputs = [t.cuda() for t in spec.example_inputs(batch)]
        labels = spec.example_labels(batch).cuda()
        rows[mode] = steady_step_peaks(model, opt, inputs, labels)
        del model, opt, inputs, labels
    out = {"model": name, "batch": batch, "gpus": torch.cuda.device_count(), **rows,
           "central_extra_bytes": rows["dataparallel"]["max_memory_allocated"]
           - rows["plain"]["max_memory_allocated"]}
    out.update(header())
    print(json.dumps(out))


def capture_oom(kind):
    import torch
    record = {"kind": kind, "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")}
    record.update(header())
    keep = []
    try:
        if kind == "pinned":
            keep.append(torch.empty(1 << 44, dtype=torch.uint8, pin_memory=True))  # 16 TiB of pinned host
        else:
            # Hold most of the card first, so the message carries real numbers, then ask for more.
            free, total = torch.cuda.mem_get_info()
            keep.append(torch.empty(int(free * 0.8), dtype=torch.uint8, device="cuda"))
            keep.append(torch.empty(int(total * 0.5), dtype=torch.uint8, device="cuda"))
        record["raised"] = None
    except Exception as e:  # noqa: BLE001 — the message is what we want
        record["raised"] = type(e).__module__ + "." + type(e).__name__
        record["message"] = str(e)
    print(json.dumps(record))


def measure_speed(which, lib=None):
    import torch
    import torch.nn as nn
    if which == "oomguard":
        alloc = torch.cuda.memory.CUDAPluggableAllocator(lib, "oomguard_malloc", "oomguard_free")
        torch.cuda.memory.change_current_allocator(alloc)
    torch.manual_seed(0)
    layers = []
    for _ in range(8):  # many small and mid-sized tensors per step: the allocator's hot path
        layers += [nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU()]
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(64, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 64, 64, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    for _ in range(5):
        train_step(model, opt, [x], y)
    torch.cuda.synchronize()
    steps = 50
    t0 = time.perf_counter()
    for _ in range(steps):
        train_step(model, opt, [x], y)
    torch.cuda.synchronize()
    out = {"allocator": which, "seconds_per_step": (time.perf_counter() - t0) / steps, "steps": steps}
    out.update(header())
    print(json.dumps(out))


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    mode = sys.argv[1]
    if mode == "plan":
        measure_plan(sys.argv[2], [int(b) for b in sys.argv[3].split(",")], sys.argv[4].split(","))
    elif mode == "dp":
        measure_dp(sys.argv[2], int(sys.argv[3]))
    elif mode == "oom":
        capture_oom(sys.argv[2])
    elif mode == "speed":
        measure_speed(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        print("gpu_measure.py: unknown mode " + mode, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
