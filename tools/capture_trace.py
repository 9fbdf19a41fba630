#!/usr/bin/python3
"""Records the allocation sequence of real PyTorch CPU training steps for allocator benchmarks.

    /usr/bin/python3 tools/capture_trace.py [resnet50 bert_base ...] [--batch N] [--steps 2]
        [--optimizer adam] [--out bench/traces] [--tracker LIB]

For each model: build it (tools/models.py), one warm-up step, then trace --steps training steps
(zero_grad(set_to_none) -> forward -> cross_entropy -> backward -> optimizer.step()) with the
LD_PRELOAD tracker's trace mode, and write bench/traces/<model>.trace.gz. Format (text, gzip):

    # oomguard-alloc-trace v1
    # model resnet50 batch 8 optimizer adam steps 2 torch 1.13.0a0
    # date ... / machine ... / command ...
    # live-at-start N              the N blocks alive before the first step (parameters,
    a <id> <size> <alignment>        optimizer state, gradients of the warm-up, inputs ...) come
                                     first; alignment 0 = the block came from realloc
    # step 1
    # phase forward
    a <id> <size> <alignment>      allocation; ids are renumbered 1, 2, 3 ... in first-seen order
    f <id>                         free of that allocation
    # phase backward / # phase optimizer / # step 2 ...
    # end live=<bytes> peak=<bytes> events=<n>

Sizes are the bytes PyTorch requested (not rounded). Blocks still alive at the end (parameters,
state) have no 'f' line. Replaying in order reproduces the live-byte curve of the steps exactly.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import measure_step  # noqa: E402

DEFAULT_BATCH = {"resnet50": 8, "bert_base": 4, "vit_b_16": 4}


def capture(spec, batch: int, optimizer: str, steps: int, tracker, raw_path: str) -> dict:
    import torch
    import torch.nn.functional as F

    model = spec.build()
    opt = measure_step.make_optimizer(optimizer, list(model.parameters()))
    inputs = spec.example_inputs(batch)
    labels = spec.example_labels(batch)

    def step(mark):
        opt.zero_grad(set_to_none=True)
        mark("phase forward")
        out = model(*inputs)
        loss = F.cross_entropy(out, labels)
        mark("phase backward")
        loss.backward()
        mark("phase optimizer")
        opt.step()
        del out, loss

    step(lambda _: None)  # warm-up: optimizer state, oneDNN kernels
    gc.collect()
    tracker.reset_peak()
    base = tracker.live()
    lib = tracker.lib
    lib.tracker_trace_start_with_live.argtypes = [measure_step.ctypes.c_char_p]
    lib.tracker_trace_mark.argtypes = [measure_step.ctypes.c_char_p]
    if lib.tracker_trace_start_with_live(raw_path.encode()) != 0:
        raise RuntimeError("cannot trace to %s" % raw_path)
    lib.tracker_trace_mark(b"live-at-start")
    for i in range(steps):
        lib.tracker_trace_mark(("step %d" % (i + 1)).encode())
        step(lambda m: lib.tracker_trace_mark(m.encode()))
        gc.collect()
    events = tracker.trace_stop()
    return {"events": events, "live_start": base, "live_end": tracker.live(),
            "peak": tracker.peak()}


def rewrite(raw_path: str, out_path: str, header: list) -> dict:
    """Renumbers ids from 1, puts the live-at-start blocks (sorted by id) first, gzips."""
    with open(raw_path) as f:
        lines = f.read().splitlines()
    mark = lines.index("# live-at-start")
    live = sorted((l.split() for l in lines[:mark]), key=lambda t: int(t[1]))
    body = lines[mark + 1:]
    ids = {}
    out = list(header) + ["# live-at-start %d" % len(live)]
    live_bytes = 0
    for t in live:
        ids[t[1]] = len(ids) + 1
        out.append("a %d %s %s" % (ids[t[1]], t[2], t[3]))
        live_bytes += int(t[2])
    sizes = {ids[t[1]]: int(t[2]) for t in live}  # live blocks by new id
    cur = peak = live_bytes
    allocs = frees = 0
    for line in body:
        t = line.split()
        if t[0] == "a":
            new = ids[t[1]] = len(ids) + 1
            out.append("a %d %s %s" % (new, t[2], t[3]))
            sizes[new] = int(t[2])
            cur += int(t[2])
            peak = max(peak, cur)
            allocs += 1
        elif t[0] == "f":
            new = ids.get(t[1])
            if new is None or new not in sizes:
                raise RuntimeError("trace frees unknown or already freed id %s" % t[1])
            out.append("f %d" % new)
            cur -= sizes.pop(new)
            frees += 1
        else:
            out.append(line)
    out.append("# end live=%d peak=%d allocs=%d frees=%d" % (cur, peak, allocs, frees))
    with gzip.open(out_path, "wt", compresslevel=9) as f:
        f.write("\n".join(out) + "\n")
    return {"live_start": live_bytes, "live_end": cur, "peak": peak, "allocs": allocs,
            "frees": frees}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=["resnet50", "bert_base"])
    parser.add_argument("--batch", type=int, help="default: resnet50 8, bert_base 4, vit_b_16 4")
    parser.add_argument("--optimizer", default="adam", choices=measure_step.OPTIMIZERS)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "traces"))
    parser.add_argument("--tracker")
    args = parser.parse_args()
    import models
    bad = [m for m in args.models if m not in models.SPECS]
    if bad:
        print("capture_trace: unknown model %s" % ", ".join(bad), file=sys.stderr)
        return 2
    if args.steps <= 0 or (args.batch is not None and args.batch <= 0):
        print("capture_trace: --steps and --batch must be positive", file=sys.stderr)
        return 2
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    measure_step.reexec_with_tracker(args.tracker)
    import torch
    torch.set_num_threads(1)
    tracker = measure_step.Tracker()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models:
        spec = models.SPECS[name]
        batch = args.batch or DEFAULT_BATCH.get(name, 4)
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "raw.trace")
            info = capture(spec, batch, args.optimizer, args.steps, tracker, raw)
            m = measure_step.machine()
            header = [
                "# oomguard-alloc-trace v1",
                "# model %s batch %d optimizer %s steps %d torch %s threads 1" % (
                    name, batch, args.optimizer, args.steps, torch.__version__),
                "# date %s" % measure_step.now_utc(),
                "# machine %s; nproc %s; cpu %s" % (m["uname"], m["nproc"], m["cpu"]),
                "# command %s" % " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
            ]
            out = os.path.join(args.out, "%s.trace.gz" % name)
            stats = rewrite(raw, out, header)
        print("%-12s batch %d: %d allocs, %d frees, peak %d bytes (start %d) -> %s (%d bytes)" % (
            name, batch, stats["allocs"], stats["frees"], stats["peak"], stats["live_start"],
            os.path.relpath(out, ROOT), os.path.getsize(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
