#!/usr/bin/python3
"""Measures the scratch one layer allocates in a PyTorch CPU training step, at several batch sizes.

For each layer (a line of the form `KIND key=value ...`, see LAYERS below) and each batch size:
warm-up forward + backward (oneDNN builds and caches its primitives there), then a measured
forward and a measured backward under the LD_PRELOAD tracker tools/alloc_tracker.c:
  forward scratch  = peak during forward  - live bytes after forward;
  backward scratch = peak during backward - live before backward - the gradients it returns.
A fit over the batch sizes splits each into a per-sample part and a fixed part (least squares);
that split is what the planner's rules in src/plan/saved_tensor_rules.cc model. For LSTM/GRU the
backward figure is negative: their backward frees each step's states as it unwinds, so its peak is
at its start (see tools/random_nets.py-style whole-step runs for those).

    /usr/bin/python3 tools/probe_scratch.py "conv1d cin=16 cout=16 k=3 L=512" --batches 1,2,4,8
    /usr/bin/python3 tools/probe_scratch.py --file layers.txt --json out.json

Kinds: conv1d/conv2d/conv3d (cin cout k stride groups S (spatial size) rg (input needs a gradient)),
convT1d/convT2d/convT3d (same, kernel 2 stride 2 by default), lstm/gru (d hidden T layers bidir
batch_first). One intra-op thread, as tools/measure_step.py measures.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure_step  # noqa: E402


KINDS = ("conv1d", "conv2d", "conv3d", "convT1d", "convT2d", "convT3d", "lstm", "gru")


def parse(line: str) -> dict:
    parts = line.split()
    if not parts or parts[0] not in KINDS:
        raise ValueError("unknown layer %r (kinds: %s)" % (line, ", ".join(KINDS)))
    spec = {"kind": parts[0]}
    for p in parts[1:]:
        k, sep, v = p.partition("=")
        if not sep:
            raise ValueError("expected key=value, got %r" % p)
        spec[k] = int(v)
    return spec


def build(spec: dict, batch: int):
    import torch
    import torch.nn as nn
    kind = spec["kind"]
    torch.manual_seed(0)
    if kind.startswith("conv"):
        dims = int(kind[-2])
        transposed = kind.startswith("convT")
        cin, cout = spec.get("cin", 16), spec.get("cout", 16)
        k = spec.get("k", 2 if transposed else 3)
        stride = spec.get("stride", 2 if transposed else 1)
        groups = spec.get("groups", 1)
        size = spec.get("S", 32)
        cls = {(1, False): nn.Conv1d, (2, False): nn.Conv2d, (3, False): nn.Conv3d,
               (1, True): nn.ConvTranspose1d, (2, True): nn.ConvTranspose2d, (3, True): nn.ConvTranspose3d}
        kw = {} if transposed else {"padding": k // 2}
        mod = cls[(dims, transposed)](cin, cout, k, stride=stride, groups=groups, bias=bool(spec.get("bias", 0)),
                                      **kw)
        x = torch.randn([batch, cin] + [size] * dims)
        return mod, x, bool(spec.get("rg", 1))
    if kind in ("lstm", "gru"):
        d, h, t = spec.get("d", 32), spec.get("hidden", 32), spec.get("T", 32)
        cls = nn.LSTM if kind == "lstm" else nn.GRU
        bf = bool(spec.get("batch_first", 1))
        mod = cls(d, h, num_layers=spec.get("layers", 1), bidirectional=bool(spec.get("bidir", 0)),
                  batch_first=bf)

        class First(nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                return self.m(x)[0]
        x = torch.randn([batch, t, d] if bf else [t, batch, d])
        return First(mod), x, bool(spec.get("rg", 1))
    raise ValueError("unknown layer kind %s" % kind)


def nbytes(t) -> int:
    return t.numel() * t.element_size() if t is not None else 0


def measure(spec: dict, batch: int, tracker) -> dict:
    import torch
    mod, x, rg = build(spec, batch)
    x.requires_grad_(rg)
    for _ in range(2):  # warm-up: primitives, kernels
        y = mod(x)
        y.backward(torch.ones_like(y))
        mod.zero_grad(set_to_none=True)
        x.grad = None
        del y
        gc.collect()
    base = tracker.live()
    tracker.reset_peak()
    y = mod(x)
    after = tracker.live()
    fwd = tracker.peak() - after
    kept = after - base - nbytes(y)  # what autograd keeps beyond the output
    g = torch.ones_like(y)
    live0 = tracker.live()
    tracker.reset_peak()
    y.backward(g)
    grads = nbytes(x.grad) + sum(nbytes(p.grad) for p in mod.parameters())
    bwd = tracker.peak() - live0 - grads
    del y, g
    return {"batch": batch, "forward": fwd, "backward": bwd, "kept": kept, "input": nbytes(x)}


def fit(rows: list, key: str) -> dict:
    n = len(rows)
    xs = [r["batch"] for r in rows]
    ys = [r[key] for r in rows]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((a - mx) ** 2 for a in xs)
    slope = sum((a - mx) * (b - my) for a, b in zip(xs, ys)) / sxx if sxx else 0.0
    return {"per_sample": round(slope), "fixed": round(my - slope * mx)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("layers", nargs="*")
    ap.add_argument("--file")
    ap.add_argument("--batches", default="2,4,8")
    ap.add_argument("--json")
    ap.add_argument("--tracker")
    args = ap.parse_args()
    lines = list(args.layers)
    if args.file:
        with open(args.file) as f:
            lines += [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    if not lines:
        print("probe_scratch: no layers", file=sys.stderr)
        return 2
    try:
        batches = [int(b) for b in args.batches.split(",")]
        specs = [parse(ln) for ln in lines]
    except ValueError as e:
        print("probe_scratch: %s" % e, file=sys.stderr)
        return 2
    measure_step.reexec_with_tracker(args.tracker)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    tracker = measure_step.Tracker()
    out = []
    for line, spec in zip(lines, specs):
        rows = [measure(spec, b, tracker) for b in batches]
        res = {"layer": line, "rows": rows, "forward": fit(rows, "forward"), "backward": fit(rows, "backward"),
               "kept": fit(rows, "kept")}
        out.append(res)
        print("%-44s fwd %8d/sample %+8d | bwd %8d/sample %+8d | input %d/sample | bwd by batch %s" % (
            line, res["forward"]["per_sample"], res["forward"]["fixed"], res["backward"]["per_sample"],
            res["backward"]["fixed"], rows[0]["input"] // rows[0]["batch"], [r["backward"] for r in rows]),
            flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch_version": torch.__version__, "date": measure_step.now_utc(), "probes": out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
