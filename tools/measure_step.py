#!/usr/bin/python3
"""Measures one steady-state PyTorch CPU training step: the planner's ground truth.

For a model of tools/models.py, a batch size and an optimizer:
  build the module (seeded), the optimizer, the input batch and the labels;
  warm-up step (creates optimizer state; records what autograd saves for backward);
  measured step: zero_grad(set_to_none=True) -> forward -> cross_entropy -> backward -> step,
with live bytes counted by the LD_PRELOAD tracker tools/alloc_tracker.c (requested sizes of
posix_memalign/aligned_alloc/memalign minus free). Writes
bench/reference/cpu/<model>__b<batch>__<optimizer>.json.

    /usr/bin/python3 tools/measure_step.py MODEL [MODEL...] [--batches 1,2,4]
        [--optimizers sgd,momentum,adam] [--out bench/reference/cpu] [--tracker LIB]
    /usr/bin/python3 tools/measure_step.py --all          # every model at its validation batches
    /usr/bin/python3 tools/measure_step.py --check-tracker  # tracker exactness inside torch

If the tracker is not preloaded yet, the script builds it (cc) when needed and re-executes
itself with LD_PRELOAD. All byte figures are integers; live/peak figures are relative to the live
bytes before the model was built plus the non-tensor allocations the warm-up step left behind
(oneDNN JIT kernels and primitive cache, reported as nontensor_live_bytes), so they hold
parameters, buffers, optimizer state, inputs, labels, activations and every temporary of the
step, and nothing else of the Python process.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import gc
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

OPTIMIZERS = ("sgd", "momentum", "adam", "adamw", "rmsprop", "adagrad")


# ---------------------------------------------------------------------------------------------
# The tracker.


def find_or_build_tracker(explicit: str | None) -> str:
    """Returns the path of liboomguard_alloc_tracker.so: --tracker, $OOMGUARD_ALLOC_TRACKER,
    a CMake build directory, or a fresh `cc -shared -fPIC -O2` build in build-reference/."""
    candidates = [explicit, os.environ.get("OOMGUARD_ALLOC_TRACKER")]
    for build in ("build", "build-reference"):
        candidates.append(os.path.join(ROOT, build, "tests", "liboomguard_alloc_tracker.so"))
    for c in candidates:
        if c and os.path.exists(c):
            return os.path.abspath(c)
    if explicit:
        raise SystemExit("measure_step: tracker library %s does not exist" % explicit)
    out_dir = os.path.join(ROOT, "build-reference", "tools")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "liboomguard_alloc_tracker.so")
    src = os.path.join(HERE, "alloc_tracker.c")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        subprocess.check_call([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2", "-o", out,
                               src, "-ldl", "-lpthread"])
    return out


class Tracker:
    def __init__(self):
        lib = ctypes.CDLL(None)
        try:
            lib.tracker_active
        except AttributeError:
            raise RuntimeError("alloc_tracker is not preloaded (LD_PRELOAD)") from None
        for name in ("tracker_live", "tracker_peak", "tracker_live_count", "tracker_total_allocs"):
            getattr(lib, name).restype = ctypes.c_uint64
        lib.tracker_trace_start.argtypes = [ctypes.c_char_p]
        lib.tracker_trace_stop.restype = ctypes.c_int64
        self.lib = lib

    def live(self) -> int:
        return int(self.lib.tracker_live())

    def peak(self) -> int:
        return int(self.lib.tracker_peak())

    def reset_peak(self) -> None:
        self.lib.tracker_reset_peak()

    def trace_start(self, path: str) -> None:
        if self.lib.tracker_trace_start(path.encode()) != 0:
            raise RuntimeError("cannot start tracing to %s" % path)

    def trace_stop(self) -> int:
        return int(self.lib.tracker_trace_stop())


def tracker_is_preloaded() -> bool:
    try:
        ctypes.CDLL(None).tracker_active
        return True
    except AttributeError:
        return False


def reexec_with_tracker(tracker_arg: str | None) -> None:
    """Replaces this process with itself under LD_PRELOAD=<tracker> unless already tracked."""
    if tracker_is_preloaded():
        return
    if os.environ.get("OOMGUARD_TRACKER_REEXEC"):
        raise SystemExit("measure_step: LD_PRELOAD of the tracker did not take effect")
    lib = find_or_build_tracker(tracker_arg)
    env = dict(os.environ)
    env["LD_PRELOAD"] = lib + ((" " + env["LD_PRELOAD"]) if env.get("LD_PRELOAD") else "")
    env["OOMGUARD_TRACKER_REEXEC"] = "1"
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


# ---------------------------------------------------------------------------------------------
# Environment description.


def machine() -> dict:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"uname": " ".join(platform.uname()), "nproc": os.cpu_count(), "cpu": cpu}


def now_utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------
# Measurement.


def storage_key(t):
    """(data_ptr, nbytes) of the storage behind t, or None for tensors without one."""
    try:
        s = t.storage()
        return s.data_ptr(), s.nbytes()
    except Exception:  # mkldnn/opaque tensors, undefined tensors
        return None


def tensors_bytes(tensors) -> int:
    seen = {}
    for t in tensors:
        k = storage_key(t)
        if k and k[0] not in seen:
            seen[k[0]] = k[1]
    return sum(seen.values())


def make_optimizer(name: str, params):
    import torch
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3)
    if name == "momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=1e-4)
    if name == "adagrad":
        return torch.optim.Adagrad(params, lr=1e-4)
    raise ValueError("unknown optimizer %s" % name)


def optimizer_impl(opt) -> str:
    d = opt.defaults
    if d.get("fused"):
        return "fused"
    if d.get("foreach"):
        return "foreach"
    return "loop"


def measure(spec, batch: int, optimizer: str, tracker: Tracker, trace_path: str | None = None):
    """Runs warm-up + measured step; returns the reference record (dict)."""
    import torch
    import torch.nn.functional as F

    gc.collect()
    process_live = tracker.live()  # everything of the process that is not ours

    model = spec.build()
    params = list(model.parameters())
    buffers = list(model.buffers())
    opt = make_optimizer(optimizer, params)
    inputs = spec.example_inputs(batch)
    labels = spec.example_labels(batch)
    param_keys = {storage_key(p)[0] for p in params} | {storage_key(b)[0] for b in buffers}
    input_keys = {storage_key(t)[0] for t in inputs + [labels]}

    # Warm-up step, recording the storages autograd saves for backward.
    saved = {}       # data_ptr -> nbytes, activations only
    saved_inputs = {}  # the input batch / labels when autograd keeps them
    saved_count = [0]

    def pack(t):
        saved_count[0] += 1
        k = storage_key(t)
        if k is not None and k[0] not in param_keys:
            (saved_inputs if k[0] in input_keys else saved)[k[0]] = k[1]
        return t

    def unpack(t):
        return t

    opt.zero_grad(set_to_none=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = model(*inputs)
        loss = F.cross_entropy(out, labels)
    logits_bytes = out.numel() * out.element_size()
    loss.backward()
    opt.step()
    del out, loss
    gc.collect()

    # The measured steady-state step. Byte figures are relative to `offset`: the process's
    # live bytes before the model was built plus what the warm-up left behind that is not a
    # tensor of ours (oneDNN's JIT kernels and primitive cache: posix_memalign'ed, persistent).
    parameter_bytes = tensors_bytes(params)
    buffer_bytes = tensors_bytes(buffers)
    input_bytes = tensors_bytes(inputs)
    label_bytes = tensors_bytes([labels])
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    gc.collect()
    state_tensors = [v for st in opt.state.values() for v in st.values() if torch.is_tensor(v)]
    optimizer_state_bytes = tensors_bytes(state_tensors)
    explained = parameter_bytes + buffer_bytes + optimizer_state_bytes + input_bytes + label_bytes
    nontensor = tracker.live() - process_live - explained
    offset = process_live + nontensor
    baseline = tracker.live() - offset
    if trace_path:
        tracker.trace_start(trace_path)
    tracker.reset_peak()
    out = model(*inputs)
    loss = F.cross_entropy(out, labels)
    forward_peak = tracker.peak() - offset
    after_forward = tracker.live() - offset
    tracker.reset_peak()
    loss.backward()
    backward_peak = tracker.peak() - offset
    after_backward = tracker.live() - offset
    tracker.reset_peak()
    opt.step()  # logits and loss stay referenced, as in the usual training loop
    optimizer_peak = tracker.peak() - offset
    after_step = tracker.live() - offset
    trace_events = tracker.trace_stop() if trace_path else None
    seconds = time.perf_counter() - t0

    grads = [p.grad for p in params if p.grad is not None]
    state_by_key = {}
    for st in opt.state.values():
        for key, v in st.items():
            if torch.is_tensor(v):
                state_by_key[key] = state_by_key.get(key, 0) + v.numel() * v.element_size()
    phase_peaks = {"forward": forward_peak, "backward": backward_peak, "optimizer": optimizer_peak}
    peak_phase = max(phase_peaks, key=lambda k: phase_peaks[k])
    record = {
        "model": spec.name,
        "onnx": "data/zoo/%s.onnx" % spec.name,
        "batch": batch,
        "optimizer": optimizer,
        "optimizer_impl": optimizer_impl(opt),
        "loss": "cross_entropy",
        "input_shapes": {i.name: [batch] + list(i.shape) for i in spec.inputs},
        "input_dtypes": {i.name: str(i.dtype).replace("torch.", "") for i in spec.inputs},
        "label_shape": [batch] + list(spec.label_shape),
        "parameter_count": sum(p.numel() for p in params),
        "parameter_tensors": len(params),
        "parameter_bytes": parameter_bytes,
        "buffer_bytes": buffer_bytes,
        "gradient_bytes": tensors_bytes(grads),
        "optimizer_state_bytes": optimizer_state_bytes,
        "optimizer_state_bytes_by_key": state_by_key,
        "input_bytes": input_bytes,
        "label_bytes": label_bytes,
        "logits_bytes": logits_bytes,
        "saved_tensor_bytes": sum(saved.values()),
        "saved_input_bytes": sum(saved_inputs.values()),
        "saved_tensor_count": saved_count[0],
        "peak_live_bytes": max(phase_peaks.values()),
        "peak_phase": peak_phase,
        "baseline_live_bytes": baseline,
        "nontensor_live_bytes": nontensor,
        "phase_peaks": phase_peaks,
        "phase_end_live": {"forward": after_forward, "backward": after_backward,
                           "optimizer": after_step},
        "step_seconds": round(seconds, 3),
        "settings": {"num_threads": torch.get_num_threads(),
                     "mkldnn_enabled": bool(torch.backends.mkldnn.enabled),
                     "blas": os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3"),
                     "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
                     "grad_mode": "train", "zero_grad": "set_to_none"},
        "torch_version": torch.__version__,
        "command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
        "date": now_utc(),
        "machine": machine(),
    }
    if trace_events is not None:
        record["trace_events"] = trace_events
    del out, loss, grads, state_tensors, opt, model, params, buffers, inputs, labels
    gc.collect()
    record["leftover_bytes_after_cleanup"] = tracker.live() - offset
    return record


# ---------------------------------------------------------------------------------------------
# The tracker exactness check (a ctest).


def check_tracker(tracker: Tracker) -> int:
    """Tensors of known sizes must change live bytes by exactly their size; views nothing."""
    import torch
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append("%s: %d bytes, expected %d" % (what, got, want))

    gc.collect()
    base = tracker.live()
    a = torch.empty(1000, dtype=torch.float32)
    expect("float32[1000]", tracker.live() - base, 4000)
    b = torch.zeros(7, 3, dtype=torch.float64)
    expect("+ float64[7,3]", tracker.live() - base, 4000 + 168)
    v = a.view(10, 100)[2:5]
    expect("+ a view", tracker.live() - base, 4168)
    tracker.reset_peak()
    c = torch.ones(1 << 20, dtype=torch.int64)  # 8 MiB
    del c
    expect("peak after 8 MiB temporary", tracker.peak() - base, 4168 + (8 << 20))
    expect("live after freeing it", tracker.live() - base, 4168)
    d = a * 2  # an op's output: one new float32[1000]
    expect("+ a*2", tracker.live() - base, 8168)
    del a, v, b, d
    gc.collect()
    expect("everything freed", tracker.live() - base, 0)
    # A tiny autograd step: y = (x @ w).sum(); grad of w is a new [64, 32] float32.
    x = torch.randn(16, 64)
    w = torch.randn(64, 32, requires_grad=True)
    gc.collect()
    base = tracker.live()
    (x @ w).sum().backward()
    gc.collect()
    expect("w.grad after backward", tracker.live() - base, 64 * 32 * 4)
    if failures:
        for f in failures:
            print("measure_step --check-tracker: " + f, file=sys.stderr)
        return 1
    print("tracker counts torch tensors exactly (%d checks)" % 9)
    return 0


# ---------------------------------------------------------------------------------------------


def parse_list(text: str, cast=str):
    return [cast(x) for x in text.split(",") if x]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--all", action="store_true", help="every model of tools/models.py")
    parser.add_argument("--batches", help="comma-separated (default: the model's validation batches)")
    parser.add_argument("--optimizers", default="sgd,momentum,adam")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "reference", "cpu"))
    parser.add_argument("--tracker", help="path of liboomguard_alloc_tracker.so")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    parser.add_argument("--check-tracker", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()

    sys.path.insert(0, HERE)
    import models  # noqa: E402 (after argument errors, which need no torch)

    names = list(models.SPECS) if args.all else args.models
    if not args.check_tracker and not names:
        parser.error("name at least one model, or --all, or --check-tracker")
    bad = [n for n in names if n not in models.SPECS]
    if bad:
        print("measure_step: unknown model %s (known: %s)" % (", ".join(bad),
              ", ".join(models.SPECS)), file=sys.stderr)
        return 2
    optimizers = parse_list(args.optimizers)
    bad = [o for o in optimizers if o not in OPTIMIZERS]
    if bad:
        print("measure_step: unknown optimizer %s (known: %s)" % (", ".join(bad),
              ", ".join(OPTIMIZERS)), file=sys.stderr)
        return 2
    try:
        batches = parse_list(args.batches, int) if args.batches else None
    except ValueError:
        print("measure_step: --batches takes comma-separated integers, got %r" % args.batches,
              file=sys.stderr)
        return 2
    if batches is not None and (not batches or min(batches) <= 0):
        print("measure_step: batch sizes must be positive", file=sys.stderr)
        return 2

    # One BLAS thread too (torch.set_num_threads does not reach a generic BLAS); read at load.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
    reexec_with_tracker(args.tracker)
    import torch
    torch.set_num_threads(args.threads)
    tracker = Tracker()
    if args.check_tracker:
        return check_tracker(tracker)

    os.makedirs(args.out, exist_ok=True)
    for name in names:
        spec = models.SPECS[name]
        for batch in batches or spec.validation_batches:
            for optimizer in optimizers:
                rec = measure(spec, batch, optimizer, tracker)
                path = os.path.join(args.out, "%s__b%d__%s.json" % (name, batch, optimizer))
                with open(path, "w") as f:
                    json.dump(rec, f, indent=1)
                    f.write("\n")
                if not args.quiet:
                    print("%-20s b=%-4d %-9s peak %12d (%s)  saved %12d  params %11d  %6.1fs"
                          % (name, batch, optimizer, rec["peak_live_bytes"], rec["peak_phase"],
                             rec["saved_tensor_bytes"], rec["parameter_bytes"],
                             rec["step_seconds"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
