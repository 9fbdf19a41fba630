#!/usr/bin/python3
"""PyTorch half of the guard GPU check (run by tools/gpu_guard_check.sh).

    gpu_guard_check.py pytorch               # the loop with PyTorch's caching allocator
    gpu_guard_check.py oomguard LIB          # the same loop through liboomguard_torch.so
    gpu_guard_check.py oom LIB REPORT.json   # a cap too small for the loop: the OOM report

Each mode prints one JSON object on stdout. The allocator must be switched before
the first CUDA allocation, so each mode runs in its own process.
"""
import ctypes
import json
import os
import sys


def loop(steps=5):
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    try:
        import torchvision
        model = torchvision.models.resnet18(num_classes=10)
        name = "resnet18"
    except Exception:  # torchvision missing: a small convnet
        model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1),
                              nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
        name = "convnet"
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 224, 224, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    loss = None
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    return name, float(loss)


def oomguard_stats(lib):
    so = ctypes.CDLL(lib)  # the same handle torch opened: the same allocator
    so.oomguard_stats_json.restype = ctypes.c_size_t
    so.oomguard_stats_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    n = so.oomguard_stats_json(None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    so.oomguard_stats_json(buf, n + 1)
    return json.loads(buf.value.decode())


def use_oomguard(lib):
    import torch
    alloc = torch.cuda.memory.CUDAPluggableAllocator(lib, "oomguard_malloc", "oomguard_free")
    torch.cuda.memory.change_current_allocator(alloc)


def main():
    mode = sys.argv[1]
    if mode == "pytorch":
        import torch
        model, loss = loop()
        print(json.dumps({"allocator": "pytorch", "model": model, "loss": loss, "torch": torch.__version__,
                          "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
                          "peak_allocated_bytes": torch.cuda.max_memory_allocated()}))
    elif mode == "oomguard":
        lib = sys.argv[2]
        use_oomguard(lib)
        model, loss = loop()
        stats = oomguard_stats(lib)
        dev = stats["devices"][0] if stats["devices"] else {}
        print(json.dumps({"allocator": "oomguard", "model": model, "loss": loss,
                          "conf": os.environ.get("OOMGUARD_ALLOC_CONF", ""),
                          "peak_reserved_bytes": dev.get("peak_reserved_bytes"),
                          "peak_allocated_bytes": dev.get("peak_allocated_bytes"), "stats": stats}))
    elif mode == "oom":
        lib, report = sys.argv[2], sys.argv[3]
        use_oomguard(lib)
        result = {"allocator": "oomguard", "conf": os.environ.get("OOMGUARD_ALLOC_CONF", "")}
        try:
            loop()
            result["raised"] = None
        except Exception as e:  # what PyTorch makes of a null allocation
            result["raised"] = type(e).__name__
            result["message"] = str(e)[:2000]
        result["report_file_written"] = os.path.exists(report)
        if os.path.exists(report):
            with open(report) as f:
                result["report"] = json.load(f)
        result["stats"] = oomguard_stats(lib)
        print(json.dumps(result))
    else:
        print("gpu_guard_check.py: unknown mode %s" % mode, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
