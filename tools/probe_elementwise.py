#!/usr/bin/python3
"""Measures the backward scratch of PyTorch's elementwise ops and writes it as the planner's data.

An elementwise op's backward is a formula of ATen's derivatives.yaml evaluated in one C++ expression,
and its temporaries live until the expression ends: `pow_backward` computes grad * (e * x.pow(e - 1)),
two input-sized temporaries beside its result; `reciprocal` -grad * (y * y); the divisor's gradient of
a / b, -grad * ((a / b) / b). A planner that counts only the gradients misses them at a backward peak.
For each form below (as torch.onnx.export writes it: the ONNX op, and which inputs need a gradient)
this tool runs forward and backward on [N, F] float tensors under the LD_PRELOAD tracker
(tools/alloc_tracker.c, one intra-op thread) at several N:

    backward scratch = peak during backward - live before backward - the gradients it returns

and fits scratch = k * (output bytes) + fixed over N. `k`, rounded to a quarter, is the planner's data
(data/elementwise_scratch.json, embedded; src/plan/saved_tensor_rules.cc applies it to a one-node op
that matches `op` and `grad_inputs`).

    /usr/bin/python3 tools/probe_elementwise.py                 # print the measurements
    /usr/bin/python3 tools/probe_elementwise.py --write data/elementwise_scratch.json
    /usr/bin/python3 tools/probe_elementwise.py --check data/elementwise_scratch.json   # exit 1 on drift
    /usr/bin/python3 tools/probe_elementwise.py --nets tests/data/plan    # the planner test's nets

--nets measures whole training steps of four small nets whose backward peaks in such a formula
(conv -> y / (y*y + 1), pow(y*y + 1, 0.75), 1 / (y*y + 1), nn.LocalResponseNorm; SGD, batch 4, each in
a fresh process as tools/measure_step.py measures) and writes elementwise_nets.json beside their
weightless training-mode ONNX files (oomguard.export), for Planner.ElementwiseBackwardScratchMatchesTorch.

Exit status: 0 done, 1 --check found a different table, 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure_step  # noqa: E402 (the tracker)

# (name, ONNX op, which inputs need a gradient, the torch call on leaves a [, b]). Inputs are positive
# (|x| + 0.5) so that fractional powers, square roots and logarithms are defined.
FORMS = [
    ("pow_scalar_2", "Pow", [0], lambda a: a.pow(2)),
    ("pow_scalar_0.75", "Pow", [0], lambda a: a.pow(0.75)),
    ("pow_scalar_3", "Pow", [0], lambda a: a.pow(3)),
    ("pow_tensor", "Pow", [0, 1], lambda a, b: torch.pow(a, b)),
    ("reciprocal", "Reciprocal", [0], lambda a: torch.reciprocal(a)),
    ("div_both", "Div", [0, 1], lambda a, b: a / b),
    ("div_divisor", "Div", [1], lambda a, b: a / b),
    ("div_dividend", "Div", [0], lambda a, b: a / b),
    ("mul_both", "Mul", [0, 1], lambda a, b: a * b),
    ("sub_both", "Sub", [0, 1], lambda a, b: a - b),
    ("sqrt", "Sqrt", [0], lambda a: a.sqrt()),
    ("exp", "Exp", [0], lambda a: a.exp()),
    ("log", "Log", [0], lambda a: a.log()),
    ("abs", "Abs", [0], lambda a: a.abs()),
    ("neg", "Neg", [0], lambda a: -a),
    ("sin", "Sin", [0], lambda a: a.sin()),
    ("cos", "Cos", [0], lambda a: a.cos()),
    ("tanh", "Tanh", [0], lambda a: a.tanh()),
    ("sigmoid", "Sigmoid", [0], lambda a: a.sigmoid()),
    ("erf", "Erf", [0], lambda a: torch.erf(a)),
    ("max_both", "Max", [0, 1], lambda a, b: torch.maximum(a, b)),
    ("min_both", "Min", [0, 1], lambda a, b: torch.minimum(a, b)),
    # cumsum's backward is a reversed cumulative sum of the gradient (unseen set 11's minGRU, found on the
    # probe_families case cumsum_gates): its temporaries beside the returned gradient
    ("cumsum", "CumSum", [0], lambda a: a.cumsum(1)),
]

# Broadcast forms: one input [N, 1] against an [N, F] one (a per-channel scale, a per-row statistic).
# Autograd computes a broadcast input's gradient at the output's size and then sums it down to the
# input's, so that full-size gradient becomes scratch where it would have been the returned gradient
# (x * gamma: +1 output size; a + b: the incoming gradient is summed directly, +0). The planner takes
# these rows for an op whose inputs needing a gradient and whose smaller inputs match.
# name, op, grad inputs, broadcast inputs, call.
BROADCAST_FORMS = [
    ("mul_both_b1", "Mul", [0, 1], [1], lambda a, b: a * b),
    ("mul_both_b0", "Mul", [0, 1], [0], lambda a, b: a * b),
    ("mul_second_b1", "Mul", [1], [1], lambda a, b: a * b),
    ("mul_first_b1", "Mul", [0], [1], lambda a, b: a * b),
    ("div_both_b1", "Div", [0, 1], [1], lambda a, b: a / b),
    ("div_divisor_b1", "Div", [1], [1], lambda a, b: a / b),
    ("div_dividend_b1", "Div", [0], [1], lambda a, b: a / b),
    ("add_both_b1", "Add", [0, 1], [1], lambda a, b: a + b),
    ("sub_both_b1", "Sub", [0, 1], [1], lambda a, b: a - b),
    ("sub_second_b1", "Sub", [1], [1], lambda a, b: a - b),
    ("sub_both_b0", "Sub", [0, 1], [0], lambda a, b: a - b),
    ("max_both_b1", "Max", [0, 1], [1], lambda a, b: torch.maximum(a, b)),
    ("min_both_b1", "Min", [0, 1], [1], lambda a, b: torch.minimum(a, b)),
]
FEATURES = 4096
BATCHES = (8, 16, 32)


# Reductions (and pooling the planner takes as one op): their backward builds input-sized temporaries beside
# the gradient (amax compares the input
# with the broadcast result into a bool mask, which the scaling promotes to float; logsumexp exps the
# input again), so their scratch is a multiple of the input's bytes plus one of the output's. Each is
# measured on [N, C, H, W] tensors reduced over different dims and fitted as both.
# name, op, call.
REDUCTION_FORMS = [
    ("amax_dim", "ReduceMax", lambda a: a.amax(dim=1, keepdim=True)),
    ("amin_dim", "ReduceMin", lambda a: a.amin(dim=1, keepdim=True)),
    ("prod_dim", "ReduceProd", lambda a: a.prod(dim=1, keepdim=True)),
    # the same over an input holding zeros: prod_backward then runs prod_safe_zeros_backward (exclusive
    # cumprods both ways); the planner uses this row where the input comes from a relu or a clamp at 0
    ("prod_dim_zeros", "ReduceProd:zeros", lambda a: a.prod(dim=1, keepdim=True)),
    ("logsumexp_dim", "ReduceLogSumExp", lambda a: a.logsumexp(dim=1, keepdim=True)),
    ("norm_dim", "ReduceL2", lambda a: a.norm(dim=1, keepdim=True)),
    ("mean_dim", "ReduceMean", lambda a: a.mean(dim=1, keepdim=True)),
    ("sum_dim", "ReduceSum", lambda a: a.sum(dim=1, keepdim=True)),
    # nn.LPPool2d: pow -> avg_pool2d -> sign * relu(abs) -> pow(1 / p), which the planner takes as one op (the
    # operator table's row lp_pool2d, hence that name as the op); its backward holds pow(x, 2)'s two
    # input-sized temporaries
    ("lp_pool2d", "lp_pool2d", lambda a: torch.nn.functional.lp_pool2d(a, 2, 4)),
]
REDUCTION_SHAPES = ((8, 48, 20, 20), (16, 48, 20, 20), (8, 12, 40, 40), (4, 96, 10, 10))


ZERO_INPUT_FORMS = {"prod_dim_zeros"}  # measured on an input with some elements exactly 0


def measure_reduction(call, shape, tracker, zeros=False) -> tuple:
    """(input bytes, output bytes, backward scratch) of one reduction on a tensor of `shape`."""
    x = torch.randn(*shape).abs() + 0.5
    if zeros:
        x.view(-1)[::7] = 0.0
    x = x.requires_grad_(True)
    out = call(x)
    grad_out = torch.randn_like(out)
    for _ in range(2):
        x.grad = None
        out = call(x)
        out.backward(grad_out)
    x.grad = None
    out = call(x)
    before = tracker.live()
    tracker.reset_peak()
    out.backward(grad_out)
    returned = x.grad.numel() * x.grad.element_size()
    return x.numel() * 4, out.numel() * 4, tracker.peak() - before - returned


def fit2(rows):
    """Least squares scratch = a * input_bytes + b * output_bytes over (input, output, scratch) rows."""
    sxx = sum(i * i for i, o, y in rows)
    sxy = sum(i * o for i, o, y in rows)
    syy = sum(o * o for i, o, y in rows)
    sxz = sum(i * y for i, o, y in rows)
    syz = sum(o * y for i, o, y in rows)
    det = sxx * syy - sxy * sxy
    if det == 0:
        return 0.0, 0.0
    return (sxz * syy - syz * sxy) / det, (syz * sxx - sxz * sxy) / det


def measure(form, n: int, tracker, broadcast=()) -> int:
    """Backward scratch in bytes of one form at batch n (the inputs in `broadcast` are [n, 1])."""
    name, _, grads, call = form
    arity = call.__code__.co_argcount
    leaves = []
    for i in range(arity):
        t = (torch.randn(n, 1 if i in broadcast else FEATURES).abs() + 0.5)
        leaves.append(t.requires_grad_(i in grads))
    out = call(*leaves)
    grad_out = torch.randn_like(out)
    for _ in range(2):  # warm-up: allocator and kernels settle
        for t in leaves:
            t.grad = None
        out = call(*leaves)
        out.backward(grad_out)
    for t in leaves:
        t.grad = None
    out = call(*leaves)
    before = tracker.live()
    tracker.reset_peak()
    out.backward(grad_out)
    peak = tracker.peak()
    returned = sum(t.grad.numel() * t.grad.element_size() for t in leaves if t.grad is not None)
    return peak - before - returned


def fit(xs, ys):
    """Least squares y = k * x + c."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return k, my - k * mx


def table(tracker, only=None) -> dict:
    rows = []
    for form in FORMS:
        name, op, grads, _ = form
        if only and name not in only:
            continue
        out_bytes = [n * FEATURES * 4 for n in BATCHES]
        scratch = [measure(form, n, tracker) for n in BATCHES]
        k, fixed = fit(out_bytes, scratch)
        rows.append({"name": name, "op": op, "grad_inputs": grads,
                     "scratch_outputs": max(0.0, round(k * 4) / 4),
                     "measured": {"output_bytes": out_bytes, "scratch_bytes": scratch,
                                  "fit_k": round(k, 4), "fit_fixed": int(fixed)}})
    for name, op, grads, broadcast, call in BROADCAST_FORMS:
        if only and name not in only:
            continue
        out_bytes = [n * FEATURES * 4 for n in BATCHES]
        scratch = [measure((name, op, grads, call), n, tracker, broadcast) for n in BATCHES]
        k, fixed = fit(out_bytes, scratch)
        rows.append({"name": name, "op": op, "grad_inputs": grads, "broadcast_inputs": broadcast,
                     "scratch_outputs": max(0.0, round(k * 4) / 4),
                     "measured": {"output_bytes": out_bytes, "scratch_bytes": scratch,
                                  "fit_k": round(k, 4), "fit_fixed": int(fixed)}})
    for name, op, call in REDUCTION_FORMS:
        if only and name not in only:
            continue
        measured = [measure_reduction(call, shape, tracker, name in ZERO_INPUT_FORMS) for shape in REDUCTION_SHAPES]
        a, b = fit2(measured)
        rows.append({"name": name, "op": op, "grad_inputs": [0],
                     # (the output's multiple may be negative: lp_pool2d's 2 x input - 4 x output)
                     "scratch_inputs": max(0.0, round(a * 4) / 4), "scratch_outputs": round(b * 4) / 4,
                     "measured": {"shapes": [list(sh) for sh in REDUCTION_SHAPES],
                                  "input_bytes": [m[0] for m in measured], "output_bytes": [m[1] for m in measured],
                                  "scratch_bytes": [m[2] for m in measured],
                                  "fit_input_k": round(a, 4), "fit_output_k": round(b, 4)}})
    return {"header": {"what": "backward scratch of elementwise ops and reductions, in output sizes (reductions: "
                               "plus input sizes) (tools/probe_elementwise.py)",
                       "torch": torch.__version__, "features": FEATURES, "batches": list(BATCHES),
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "machine": "%s %s, %d CPUs" % (platform.system(), platform.release(), os.cpu_count() or 0),
                       "command": "/usr/bin/python3 tools/probe_elementwise.py --write data/elementwise_scratch.json"},
            "rows": rows}


NETS = ("div", "pow", "reciprocal", "lrn")
NET_BATCH = 4


def build_net(kind: str):
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 32, 3, padding=1)
            self.lrn = nn.LocalResponseNorm(5)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(32 * 24 * 24, 10)

        def forward(self, x):
            y = self.conv(x)
            if kind == "div":
                z = y / (y * y + 1)
            elif kind == "pow":
                z = torch.pow(y * y + 1, 0.75)
            elif kind == "reciprocal":
                z = 1.0 / (y * y + 1)
            else:
                z = self.lrn(y)
            return self.fc(self.pool(z).flatten(1))

    torch.manual_seed(0)
    return Net()


def net_spec(kind: str):
    import models
    return models.ModelSpec("elementwise_" + kind, "elementwise scratch probe " + kind, lambda: build_net(kind),
                            (models.InputSpec("input", (3, 48, 48), torch.float32),), 10, in_zoo=False,
                            validation_batches=(NET_BATCH,))


def net_child(kind: str, out_dir: str) -> int:
    """Measures one net's step in this (fresh, tracked) process and exports its ONNX; prints the JSON."""
    import warnings
    warnings.filterwarnings("ignore")
    spec = net_spec(kind)
    rec = measure_step.measure(spec, NET_BATCH, "sgd", measure_step.Tracker())
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "build", "python"))
    from oomguard._export import export_onnx, strip_weights
    graph = strip_weights(export_onnx(spec.build(), spec.example_inputs(NET_BATCH)[0]))
    with open(os.path.join(out_dir, "elementwise_%s.onnx" % kind), "wb") as f:
        f.write(graph)
    print(json.dumps({"peak_live_bytes": rec["peak_live_bytes"], "peak_phase": rec["peak_phase"]}))
    return 0


def nets_main(out_dir: str, tracker) -> int:
    import subprocess
    result = {"what": "whole SGD steps of small nets whose backward peaks in an elementwise derivative formula",
              "command": "/usr/bin/python3 tools/probe_elementwise.py --nets " + os.path.relpath(out_dir),
              "torch": None, "batch": NET_BATCH, "optimizer": "sgd", "nets": {}}
    for kind in NETS:
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--net-child", kind, out_dir] +
                               (["--tracker", tracker] if tracker else []), capture_output=True, text=True)
        if child.returncode != 0:
            print("probe_elementwise: %s failed: %s" % (kind, child.stderr.strip()[-400:]), file=sys.stderr)
            return 1
        result["nets"][kind] = json.loads(child.stdout.strip().splitlines()[-1])
        result["nets"][kind]["onnx"] = "elementwise_%s.onnx" % kind
        print(kind, result["nets"][kind])
    import importlib.metadata
    try:
        result["torch"] = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        result["torch"] = "unknown"
    with open(os.path.join(out_dir, "elementwise_nets.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nets", help="measure the test nets into this folder")
    ap.add_argument("--net-child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--write", help="write the table here")
    ap.add_argument("--check", help="exit 1 unless the measured multiples equal this committed table's")
    ap.add_argument("--only", help="comma-separated form names: measure these alone; with --write, replace or add "
                                   "their rows in that (existing) table and keep the others as they are")
    ap.add_argument("--tracker")
    args = ap.parse_args()
    if args.check and not os.path.isfile(args.check):
        print("probe_elementwise: no such file: %s" % args.check, file=sys.stderr)
        return 2
    if args.nets:
        if not os.path.isdir(args.nets):
            print("probe_elementwise: no such folder: %s" % args.nets, file=sys.stderr)
            return 2
        return nets_main(args.nets, args.tracker)
    measure_step.reexec_with_tracker(args.tracker)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    global torch
    import torch
    torch.set_num_threads(1)
    if args.net_child:
        return net_child(*args.net_child)
    only = set(args.only.split(",")) if args.only else None
    t = table(measure_step.Tracker(), only)
    for r in t["rows"]:
        if "scratch_inputs" in r:
            print("%-16s %-15s scratch %5.2f x input + %5.2f x output  (fit %.3f, %.3f; bytes %s)" % (
                r["name"], r["op"], r["scratch_inputs"], r["scratch_outputs"], r["measured"]["fit_input_k"],
                r["measured"]["fit_output_k"], r["measured"]["scratch_bytes"]))
            continue
        print("%-16s %-10s grads %-6s bcast %-4s scratch %5.2f x output  (fit k %.3f, fixed %d; bytes %s)" % (
            r["name"], r["op"], r["grad_inputs"], r.get("broadcast_inputs", []), r["scratch_outputs"], r["measured"]["fit_k"],
            r["measured"]["fit_fixed"], r["measured"]["scratch_bytes"]))
    if args.write and only and os.path.isfile(args.write):
        with open(args.write) as f:
            old = json.load(f)
        new = {r["name"]: r for r in t["rows"]}
        rows = [new.pop(r["name"], r) for r in old["rows"]]
        old["rows"] = rows + list(new.values())
        old["header"].setdefault("added", []).append({"rows": sorted(only), "date": t["header"]["date"],
                                                       "command": "/usr/bin/python3 tools/probe_elementwise.py --only %s "
                                                                  "--write data/elementwise_scratch.json" % args.only})
        t = old
    if args.write:
        with open(args.write, "w") as f:
            json.dump(t, f, indent=1)
            f.write("\n")
    if args.check:
        with open(args.check) as f:
            committed = json.load(f)
        def key(r):
            return (r["name"], r["op"], tuple(r["grad_inputs"]), tuple(r.get("broadcast_inputs", ())),
                    r["scratch_outputs"], r.get("scratch_inputs", 0.0))
        want = {key(r) for r in committed["rows"]}
        got = {key(r) for r in t["rows"]}
        if want != got:
            print("probe_elementwise: the committed table differs from torch %s: %s" % (
                torch.__version__, sorted(want ^ got)), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
