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
    /usr/bin/python3 tools/probe_scratch.py --grid3d 1:60 --json grid.json     # a random 3-D grid
    /usr/bin/python3 tools/probe_scratch.py --fit grid.json --table data/conv_scratch.json
    /usr/bin/python3 tools/probe_scratch.py --table data/conv_scratch.json \
        --fit bench/results/conv_scratch_probes.json:gemm3d_grid,gemm3d_pack_sweep,gemm3d_pack_depth_sweep
    /usr/bin/python3 tools/probe_scratch.py --check data/conv_scratch.json \
        bench/results/conv_scratch_probes.json:gemm3d_heldout_final    # the held-out figure

3-D convolutions with 4-15 input channels (one group, a kernel wider than 1) take oneDNN's gemm
implementation for the weight gradient (DNNL_VERBOSE: x64:gemm:jit backward_weights), whose
scratchpad does not grow with the batch: an im2col buffer of one depth slice (in_channels x kernel
x out_h x out_w) plus copies of the weights, and, from 16 output channels on, the sgemm packing
buffer, whose size follows the sgemm blocking of the CPU's ISA. --fit derives these numbers from
the probes of layers without an input gradient (only that phase runs) and writes them as data for
the planner (data/conv_scratch.json, embedded in the build).

Kinds: conv1d/conv2d/conv3d (cin cout k stride groups d (dilation) S (spatial size) rg (input needs a
gradient) bias cat (the output goes into torch.cat along channels, so its gradient is a strided view)),
convT1d/convT2d/convT3d (same, kernel 2 stride 2 by default), lstm/gru (d hidden T layers bidir
batch_first). One intra-op thread, as tools/measure_step.py measures.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
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
        dilation = spec.get("d", 1)
        kw = {"dilation": dilation} if transposed else {"padding": dilation * (k // 2), "dilation": dilation}
        mod = cls[(dims, transposed)](cin, cout, k, stride=stride, groups=groups, bias=bool(spec.get("bias", 0)),
                                      **kw)
        x = torch.randn([batch, cin] + [size] * dims)
        if spec.get("cat", 0):
            class Cat(nn.Module):  # the output feeds torch.cat along channels: a strided gradient
                def __init__(self, m):
                    super().__init__()
                    self.m = m

                def forward(self, x):
                    y = self.m(x)
                    return torch.cat([y.detach(), y], 1)
            mod = Cat(mod)
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


def grid3d(seed: int, count: int) -> list:
    """Random 3-D convolution layers (input channels 2-15, the range oneDNN's gemm path covers)."""
    import random
    r = random.Random(seed)
    out = []
    while len(out) < count:
        ic, oc = r.randint(2, 15), r.choice([4, 6, 8, 12, 16, 20, 24, 32, 40])
        k, stride, size = r.choice([1, 3, 3, 5]), r.choice([1, 1, 2]), r.choice([4, 6, 8, 10, 12, 16])
        rg, bias = r.choice([0, 1, 1]), r.choice([0, 1])
        if k <= size:
            out.append("conv3d cin=%d cout=%d k=%d stride=%d S=%d rg=%d bias=%d" % (ic, oc, k, stride, size, rg, bias))
    return out


PACK_ROUND = 48        # rows per sgemm panel (AVX-512 f32 sgemm micro-kernel: 48 x 8)
PACK_COL_ROUND = 8     # columns per panel
PACK_MIN_DEPTH = 128   # the packed depth is at least this (measured: the same size for depths 9-128)
PACK_MAX_DEPTH = 384   # deeper is split in equal blocks (measured: 256 in one block, 400 in two)
# Which per-group channel counts oneDNN 2.6.3's direct (jit) f32 kernels take for a grouped, not
# depthwise convolution in PyTorch 1.13's plain layout; a group they refuse runs x64:gemm:jit. Read
# from oneDNN's source, not fitted (written into the table as it is): forward and input gradient,
# jit_avx512_common_conv_fwd_kernel / _bwd_data_kernel_f32::init_conf take in and out channels per
# group divisible by 16, else (ok_to_try_lower_zmm, ngroups > 1: no channel padding) by 8, then 4;
# the weight gradient has no lower zmm (jit_avx512_common_conv_bwd_weights_kernel_f32: 16), then
# jit_avx2_conv_bwd_weights_kernel_f32 wants 8. AVX-512's blocks: machine-dependent.
GROUPED_DIRECT_KERNELS = {
    "data_channel_blocks": [16, 8, 4],
    "weight_gradient_channel_blocks": [16, 8],
    # gemm forward of a 1-D/2-D layer unfolds a block of output positions sized to the per-core L2
    # oneDNN reads (gemm_convolution_utils init_conf, one thread): dev seed 74's 376448-byte
    # columns (2 channels x 49 x 960 positions) are the third blocking it tries for 512 KiB.
    "gemm_forward_l2_bytes": 524288,
    "checked": "DNNL_VERBOSE on tools/probe_conv_fuzz.py dev seeds 70, 74, 79, 89, 96, 99, 114, 147, 154 "
               "(x64:gemm:jit in all three directions), 150 (forward jit:avx512_core 4-blocked, backward gemm)",
}

# Which kernel runs a dense 1-D/2-D input gradient (src/plan/conv_scratch_table.cc DirectInputGradientKernel,
# written from oneDNN 2.6.3's init_conf; conv fuzz round 5): the L1 size its width blocking reads, and other
# CPUs' (tools/probe_conv_kernels.py checks the model against DNNL_VERBOSE on dev seeds).
DIRECT_INPUT_GRADIENT = {
    "l1_bytes": 32768,
    "other_l1_bytes": [49152],
    "what": "the per-core L1 data cache oneDNN 2.6.3's jit_avx512_common_conv_bwd_data_kernel_f32::init_conf sizes its width blocking (ur_w) by: platform::get_per_core_cache_size(1), which guesses 32 KiB where xbyak reads no cache hierarchy (xbyak_util.h setCacheHierarchy returns early on non-Intel CPUs; this machine is an AMD EPYC with AVX-512); other_l1_bytes: the per-core L1 data cache other AVX-512 CPUs report to oneDNN (Intel Ice Lake and Sapphire Rapids: 48 KiB), where the plan lists the input gradient's gemm columns and sgemm buffer as machine-dependent bytes if the choice would differ",
    "checked": "tools/probe_conv_kernels.py --seeds 0:440 (DNNL_VERBOSE, dev seeds only): the model of both direct kernels' refusals names the backward_data implementation of all 223 dense and grouped, non-depthwise, non-1x1 layers (x64:gemm:jit 81, jit:avx2 6, jit:avx512_core 136)",
}


def gemm3d_dims(spec: dict) -> tuple:
    """(rows, cols, depth) of the weight gradient's gemm for one depth slice of a conv3d probe line."""
    k, stride, size = spec.get("k", 3), spec.get("stride", 1), spec.get("S", 32)
    out = (size + 2 * (k // 2) - k) // stride + 1
    return spec.get("cin", 16) * k ** 3, spec.get("cout", 16), out * out


def pack_panels(rows: int, cols: int, depth: int, fixed: int = 0) -> int:
    blocks = -(-depth // PACK_MAX_DEPTH)
    block = max(PACK_MIN_DEPTH, -(-depth // blocks))
    return 4 * block * (-(-rows // PACK_ROUND) * PACK_ROUND + -(-cols // PACK_COL_ROUND) * PACK_COL_ROUND) + fixed


def gemm3d_leading(spec: dict) -> int:
    """The output gradient's leading dimension in that gemm: every output position of a sample."""
    k, stride, size = spec.get("k", 3), spec.get("stride", 1), spec.get("S", 32)
    out = (size + 2 * (k // 2) - k) // stride + 1
    return out ** 3


def sgemm_skips_packing(m: int, n: int, k: int, leading: int) -> bool:
    """oneDNN's choice (AVX-512, one thread: gemm_driver's nocopy_checker_avx512) to run
    sgemm("T", "N", m, n, k) with lda = k, ldb = leading, ldc = m without packing; the planner's
    SgemmSkipsPacking (src/plan/conv_scratch_table.h)."""
    if m == 0 or n == 0:
        return False
    lda_bad, ldb_bad, ldc_bad = k % 256 == 0, leading % 256 == 0, m % 256 == 0
    if m > 100 and ((m < 1200 and n < 200 and k < 1200) or (lda_bad and ldb_bad)):
        return False
    if 1.0 / m + 1.0 / n >= 0.00196:
        return True
    if (lda_bad or ldb_bad or ldc_bad) and m >= 32 and n >= 16:
        return False
    if m <= 378 and n <= 378 and k >= 378:
        return False
    if m >= 378 and k >= 378:
        return False
    return m <= 28 or n <= 28 or k <= 1


def pack_bytes(rule: dict, rows: int, cols: int, depth: int, leading: int) -> int:
    """The packing buffer data/conv_scratch.json gives (the planner's PackBytes)."""
    if sgemm_skips_packing(rows, cols, depth, leading):
        return rule["pack_beyond_bytes"]
    blocks = -(-depth // rule["pack_max_depth"])
    block = max(rule["pack_min_depth"], -(-depth // blocks))
    return (4 * block * (-(-rows // rule["pack_row_round"]) * rule["pack_row_round"] +
                         -(-cols // rule["pack_col_round"]) * rule["pack_col_round"]) + rule["pack_fixed_bytes"])


def gemm3d_terms(spec: dict, element_bytes: int = 4) -> tuple:
    """(im2col bytes of one depth slice, weight bytes) of a conv3d probe line; None off the gemm path."""
    ic, oc, k = spec.get("cin", 16), spec.get("cout", 16), spec.get("k", 3)
    stride, size, groups = spec.get("stride", 1), spec.get("S", 32), spec.get("groups", 1)
    if spec["kind"] != "conv3d" or groups != 1 or not 4 <= ic <= 15 or k == 1:
        return None
    out = (size + 2 * (k // 2) - k) // stride + 1
    return element_bytes * ic * k ** 3 * out * out, element_bytes * oc * ic * k ** 3


def load_probes(path: str) -> list:
    """Probes of a --json file, or of named sets of bench/results/conv_scratch_probes.json:
    FILE:SET[,SET...]."""
    file, sep, names = path.partition(":")
    with open(file) as f:
        data = json.load(f)
    if not sep:
        return data["probes"]
    return [p for name in names.split(",") for p in data["sets"][name]["probes"]]


def fit_table(probe_files: list) -> dict:
    """The gemm weight-gradient rule from probes: least squares over layers without an input
    gradient and fewer than 16 output channels (scratch = a*im2col + b*weights + c), then the
    sgemm packing buffer as the residual of the wider layers (median; the range is reported)."""
    rows, wide = [], []
    for path in probe_files:
        for p in load_probes(path):
            spec = parse(p["layer"])
            terms = gemm3d_terms(spec)
            if terms is None or spec.get("rg", 1):
                continue
            scratch = max(r["backward"] for r in p["rows"])
            (wide if spec.get("cout", 16) >= 16 else rows).append((terms, scratch, p["layer"]))
    if len(rows) < 3:
        raise ValueError("need at least 3 narrow gemm probes without an input gradient, have %d" % len(rows))
    # Normal equations for [col, weights, 1].
    xs = [(t[0], t[1], 1.0) for t, _, _ in rows]
    ys = [y for _, y, _ in rows]
    a = [[sum(x[i] * x[j] for x in xs) for j in range(3)] for i in range(3)]
    b = [sum(x[i] * y for x, y in zip(xs, ys)) for i in range(3)]
    for i in range(3):  # Gauss-Jordan
        piv = a[i][i]
        for j in range(3):
            a[i][j] /= piv
        b[i] /= piv
        for r in range(3):
            if r != i:
                f = a[r][i]
                a[r] = [v - f * w for v, w in zip(a[r], a[i])]
                b[r] -= f * b[i]
    col_copies, weight_copies = round(b[0]), round(b[1])
    fixed = round(statistics.median(y - col_copies * x[0] - weight_copies * x[1] for x, y in zip(xs, ys)))
    worst = max(abs(y - (col_copies * x[0] + weight_copies * x[1] + fixed)) / y for x, y in zip(xs, ys))
    # The sgemm packing buffer (16+ output channels). The weight gradient of one depth slice is a
    # gemm of rows = in_channels x kernel volume, cols = out_channels, depth = out_h x out_w; AVX-512
    # sgemm packs both operands for one depth block: 4 x block x (rows rounded up to PACK_ROUND +
    # cols rounded up to PACK_COL_ROUND), the block being the depth, at least PACK_MIN_DEPTH, a
    # depth above PACK_MAX_DEPTH split in equal blocks. Where sgemm does not pack (sgemm_skips_packing,
    # oneDNN's own choice) it takes one constant size. pack_max_shallow_rows records the most rows
    # seen packed at a shallow depth (an observation; the choice is sgemm_skips_packing's).
    packs = []
    for t, y, layer in wide:
        spec = parse(layer)
        packs.append((gemm3d_dims(spec), y - (col_copies * t[0] + weight_copies * t[1] + fixed), gemm3d_leading(spec)))
    panels = [(dims, v - pack_panels(*dims)) for dims, v, _ in packs]
    # The constant path: far below what the panels need.
    on_panels = [(d, r) for d, r in panels if r > -pack_panels(*d) // 2]
    beyond = [(d, v) for (d, v, _), (_, r) in zip(packs, panels) if r <= -pack_panels(*d) // 2]
    pack_fixed = round(statistics.median(r for _, r in on_panels)) if on_panels else 0
    shallow_rows = [d[0] for d, _ in on_panels if d[2] <= PACK_MIN_DEPTH]
    max_rows = max(shallow_rows, default=0)
    beyond_bytes = round(statistics.median(v for _, v in beyond)) if beyond else 0
    rule = {"pack_row_round": PACK_ROUND, "pack_col_round": PACK_COL_ROUND, "pack_min_depth": PACK_MIN_DEPTH,
            "pack_max_depth": PACK_MAX_DEPTH, "pack_fixed_bytes": pack_fixed, "pack_max_shallow_rows": max_rows,
            "pack_beyond_bytes": beyond_bytes}
    spread = max((abs(pack_bytes(rule, *d, lead) - v) for d, v, lead in packs), default=0)
    return {"col_copies": col_copies, "weight_copies": weight_copies, "fixed_bytes": fixed,
            "narrow_layers": len(rows), "narrow_worst_rel_error": round(worst, 4),
            "pack_min_out_channels": 16, **rule,
            "pack_beyond_rows_seen_from": min((d[0] for d, _ in beyond), default=0),
            "pack_worst_abs_error": round(spread), "wide_layers": len(packs)}


def table_scratch(rule: dict, spec: dict):
    """The gemm weight-gradient scratch data/conv_scratch.json gives for a probe line (None: not on that path)."""
    terms = gemm3d_terms(spec)
    if terms is None:
        return None
    total = rule["col_copies"] * terms[0] + rule["weight_copies"] * terms[1] + rule["fixed_bytes"]
    if spec.get("cout", 16) >= rule["pack_min_out_channels"]:
        total += pack_bytes(rule, *gemm3d_dims(spec), gemm3d_leading(spec))
    return total


def input_gradient_phase(spec: dict, batch: int, element_bytes: int = 4) -> int:
    """The planner's input-gradient phase of a 3-D convolution on the gemm path (the rule in
    src/plan/saved_tensor_rules.cc ConvScratch, restated to check it against probes): output
    gradient and input gradient blocked by 16 and the weights' block padding, minus the plain
    input gradient, or the
    blocked input gradient alone (without the fixed part) when larger; strided 1x1x1 keeps the blocked input gradient (and
    from 9 input channels the blocked output gradient)."""
    ic, oc, k = spec.get("cin", 16), spec.get("cout", 16), spec.get("k", 3)
    stride, size = spec.get("stride", 1), spec.get("S", 32)
    out = (size + 2 * (k // 2) - k) // stride + 1
    b16 = lambda c: -(-c // 16) * 16  # noqa: E731
    x = element_bytes * batch * ic * size ** 3
    xp, yp = element_bytes * batch * b16(ic) * size ** 3, element_bytes * batch * b16(oc) * out ** 3
    w_padding = element_bytes * (b16(oc) * b16(ic) - oc * ic) * k ** 3
    return xp + (yp if ic > 8 else 0) + 7 * 1024 if k == 1 else max(yp + xp + w_padding - x + 7 * 1024, xp)


def check_table(table_path: str, probe_files: list) -> dict:
    """Relative error of the table's gemm scratch against probes of layers without an input
    gradient (where the weight gradient is the whole backward), per layer and summarized; and of
    the larger of the two phases for layers with an input gradient, per batch."""
    with open(table_path) as f:
        rule = json.load(f)["gemm_weight_gradient_3d"]
    out, with_grad = [], []
    for path in probe_files:
        for p in load_probes(path):
            spec = parse(p["layer"])
            want = table_scratch(rule, spec)
            if spec["kind"] != "conv3d" or spec.get("groups", 1) != 1 or not 4 <= spec.get("cin", 16) <= 15:
                continue
            if not spec.get("rg", 1):
                if want is None:
                    continue
                got = max(r["backward"] for r in p["rows"])
                out.append({"layer": p["layer"], "measured": got, "table": want, "rel_error": (want - got) / got})
                continue
            if spec.get("k", 3) == 1 and spec.get("stride", 1) == 1:
                continue  # slow_conv3d, not oneDNN
            for r in p["rows"]:
                pred = max(want or 0, input_gradient_phase(spec, r["batch"]))
                with_grad.append({"layer": p["layer"], "batch": r["batch"], "measured": r["backward"], "table": pred,
                                  "rel_error": (pred - r["backward"]) / r["backward"]})

    def summary(rows):
        errs = sorted(abs(r["rel_error"]) for r in rows)
        s = {"count": len(rows)}
        if errs:
            s.update({"median": round(errs[len(errs) // 2], 4), "p90": round(errs[int(0.9 * (len(errs) - 1))], 4),
                      "max": round(errs[-1], 4)})
        return s
    return {"summary": {"no_input_gradient": summary(out), "with_input_gradient": summary(with_grad)},
            "rows": out + with_grad}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("layers", nargs="*")
    ap.add_argument("--file")
    ap.add_argument("--batches", default="2,4,8")
    ap.add_argument("--json")
    ap.add_argument("--tracker")
    ap.add_argument("--grid3d", help="SEED:COUNT random 3-D layers (see grid3d) added to the layers")
    ap.add_argument("--fit", nargs="+", help="probe JSON files: derive the gemm rule instead of measuring")
    ap.add_argument("--table", help="with --fit: write the rule as the planner's data file")
    ap.add_argument("--verify", help="with --fit: exit 1 unless the rule equals this committed data file")
    ap.add_argument("--check", nargs="+", metavar=("TABLE", "PROBES"),
                    help="the table's error on probe files (layers not used by --fit)")
    args = ap.parse_args()
    if args.check:
        try:
            res = check_table(args.check[0], args.check[1:])
        except (OSError, ValueError, KeyError) as e:
            print("probe_scratch: %s" % e, file=sys.stderr)
            return 2
        for r in res["rows"]:
            print("%-56s %4s measured %9d rule %9d %+7.2f%%" % (r["layer"], "b=%d" % r["batch"] if "batch" in r else "",
                                                               r["measured"], r["table"], 100 * r["rel_error"]))
        print(json.dumps(res["summary"]))
        if args.json:
            import measure_step as ms
            with open(args.json, "w") as f:
                json.dump({"what": "data/conv_scratch.json and the 3-D input-gradient rule vs single-layer probes",
                           "command": "tools/probe_scratch.py --check " + " ".join(args.check),
                           "date": ms.now_utc(), "machine": ms.machine(), "load_average": list(os.getloadavg()),
                           **res}, f, indent=1)
        return 0
    if args.fit:
        try:
            rule = fit_table(args.fit)
        except (OSError, ValueError, KeyError) as e:
            print("probe_scratch: %s" % e, file=sys.stderr)
            return 2
        table = {"header": {"what": "oneDNN scratch of CPU convolutions that the planner cannot derive from "
                                    "shapes alone; generated by tools/probe_scratch.py --fit",
                            "torch_version": "1.13", "onednn": "2.6.3", "threads": 1,
                            "isa": "avx512_core (AVX-512 with DL Boost and bf16)",
                            "machine_dependent": ["pack_row_round", "pack_col_round", "pack_min_depth", "pack_max_depth",
                                                  "pack_fixed_bytes", "pack_max_shallow_rows", "pack_beyond_bytes",
                                                  "grouped_direct_kernels", "direct_input_gradient"],
                            "command": "tools/probe_scratch.py --fit " + " ".join(args.fit)},
                 "gemm_weight_gradient_3d": dict(rule, min_in_channels=4, max_in_channels=15),
                 "grouped_direct_kernels": GROUPED_DIRECT_KERNELS, "direct_input_gradient": DIRECT_INPUT_GRADIENT}
        if args.verify:
            try:
                with open(args.verify) as f:
                    committed = json.load(f)
            except (OSError, ValueError) as e:
                print("probe_scratch: %s" % e, file=sys.stderr)
                return 2
            if committed != table:
                diff = sorted(k for k in set(committed.get("gemm_weight_gradient_3d", {})) | set(table["gemm_weight_gradient_3d"])
                              if committed.get("gemm_weight_gradient_3d", {}).get(k) != table["gemm_weight_gradient_3d"].get(k))
                print("probe_scratch: %s differs from the rule the probes give (%s); regenerate it with --table"
                      % (args.verify, ", ".join(diff) or "header"), file=sys.stderr)
                return 1
            print("probe_scratch: %s matches the probes" % args.verify)
            return 0
        print(json.dumps(table, indent=1))
        if args.table:
            with open(args.table, "w") as f:
                json.dump(table, f, indent=1)
                f.write("\n")
        return 0
    lines = list(args.layers)
    if args.file:
        with open(args.file) as f:
            lines += [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    if args.grid3d:
        try:
            seed, count = (int(v) for v in args.grid3d.split(":"))
        except ValueError:
            print("probe_scratch: --grid3d takes SEED:COUNT", file=sys.stderr)
            return 2
        lines += grid3d(seed, count)
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
