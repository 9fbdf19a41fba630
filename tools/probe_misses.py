#!/usr/bin/python3
"""Development probe (not held out): the idioms behind the remaining misses of unseen sets 3-17, each alone.

    /usr/bin/python3 tools/probe_misses.py [--oomguard build/oomguard] [--other /tmp/mi/oomguard_main]
                                           [--cases a,b] [--work DIR] [--out FILE]
    /usr/bin/python3 tools/probe_misses.py --list

Each case is a small torch.nn net around one idiom, written with its own sizes (never a set's model): exported in
training mode (tools/export_zoo.py, opset 14), each row's real PyTorch 1.13 CPU step measured in a fresh process
under the LD_PRELOAD tracker (tools/measure_step.py), then planned with `oomguard plan --target cpu` (and with
--other, a second build beside it). Cases:

- chunk_unused / split_unused / chunk_unused_slices: chunk() or split() whose pieces are not all used. 1.13's
  split_backward fills zeros for each piece without a gradient, then cats all pieces into the input's gradient.
- chunk_all_used: the same with every piece used (the control: no zeros; its forward peak is the pieces a
  function's names hold until it returns, the locals risk).
- shifted_slices: overlapping windows of one tensor (y[:, u:u + n] for each shift u), as a correlation by
  shifted slices is written: plain slicing, each SliceBackward0 an input-sized gradient, not a split's join.
- key_read_by_steps / key_read_by_steps_one_view: one key read by the matmuls of three update steps (a Hopfield
  layer), k.transpose(1, 2) written in each step or once: the same export (torch.onnx merges the views), 17-18 %
  apart in real steps (the risk view_may_be_several).
- loop_gates: a loop in forward (a hand-unrolled ConvLSTM): each iteration's names (i, f, o, g, views of the
  gate convolution's output) still hold the previous iteration's values while the next convolution runs.

Round 3 (sets 3-17):
- max_with_indices: values, indices = s.max(dim), both read (ReduceMax beside an ArgMax): max(dim) keeps only the
  indices, not amax's input and output.
- max_indices_no_grad / topk_threshold / token_merge: recorded ops whose outputs reach the loss by no differentiable
  path (values only argsorted, a top-k threshold only compared, ToMe's matching): their graph, and what it saved, dies
  with their outputs in forward. token_merge also reads x[:, ::2] and x[:, 1::2].
- alternate_halves: x[..., ::2] beside x[..., 1::2], plain slicing (each SliceBackward0 its own gradient), no chunk.
- rel_pos_scores: q [N, h, T, d] @ a relative table's keys [1, h, d, R] (DeBERTa): matmul copies the head view.
- shifted_log_softmax: log_softmax of logits[:, :-1] (an LM loss's shift; set 18's DPO reference): softmax and
  log_softmax copy a non-contiguous input contiguous first, an input-sized forward temporary.

Round 4 (sets 3-18):
- rope_cached / rope_unnamed: rotary attention whose cos / sin tables are registered buffers, multiplied with q and k,
  named as Hugging Face names them (cos_cached, sin_cached) or with names no table knows (table_a, table_b).
- fourier_features: fixed Gaussian Fourier features, x @ B with B a registered buffer (a MatMul, as a weight's).
- groupnorm_input: a GroupNorm straight over the input, whose output needs a gradient only through its affine
  weight (read through Unsqueezes that torch.onnx writes after the InstanceNormalization).
- fusion_upsample: residual conv units, a bilinear x2 upsample and a 1x1 conv, twice (a dense-prediction decoder's
  fusion stages): what convolution backward holds at full resolution.
Rows carry each phase's measured peak (measured_phase_peaks).

--store copies each case's ONNX to tests/data/plan/misses_<case>.onnx and its measured rows to
tests/data/plan/misses_probes.json (planner_test.cc plans them).
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import probe_families  # noqa: E402 (write_rows)

# name: (inputs [(name, per-sample shape, dtype, high)], classes, batches, optimizer)
CASES = {
    "chunk_unused": ([("input", (64, 96), "float32", 0)], 8, (4, 16), "sgd"),
    "chunk_all_used": ([("input", (64, 96), "float32", 0)], 8, (4, 16), "sgd"),
    "split_unused": ([("input", (64, 96), "float32", 0)], 8, (4, 16), "sgd"),
    "chunk_unused_slices": ([("input", (64, 96), "float32", 0)], 8, (4, 16), "sgd"),
    "loop_gates": ([("input", (5, 4, 20, 20), "float32", 0)], 6, (2, 8), "sgd"),
    "shifted_slices": ([("input", (40, 24), "float32", 0)], 5, (4, 16), "sgd"),
    "key_read_by_steps": ([("input", (24, 48), "float32", 0)], 5, (8, 32), "sgd"),
    "key_read_by_steps_one_view": ([("input", (24, 48), "float32", 0)], 5, (8, 32), "sgd"),
    # round 3 (sets 3-17)
    "max_with_indices": ([("input", (40, 36), "float32", 0)], 5, (4, 16), "sgd"),
    "max_indices_no_grad": ([("input", (40, 36), "float32", 0)], 5, (4, 16), "sgd"),
    "rel_pos_scores": ([("input", (40, 64), "float32", 0)], 5, (4, 16), "sgd"),
    # after round 3 (set 18's DPO reference)
    "shifted_log_softmax": ([("input", (48, 32), "float32", 0)], 5, (4, 16), "sgd"),
    "topk_threshold": ([("input", (40, 64), "float32", 0)], 5, (4, 16), "sgd"),
    "token_merge": ([("input", (48, 40), "float32", 0)], 5, (4, 16), "sgd"),
    "alternate_halves": ([("input", (48, 40), "float32", 0)], 5, (4, 16), "sgd"),
    # round 4 (sets 3-18): registered tables multiplied with activations; a GroupNorm over the input
    "rope_cached": ([("input", (64, 48), "float32", 0)], 5, (4, 16), "sgd"),
    "rope_unnamed": ([("input", (64, 48), "float32", 0)], 5, (4, 16), "sgd"),
    "fourier_features": ([("input", (128, 8), "float32", 0)], 5, (4, 16), "sgd"),
    "groupnorm_input": ([("input", (32, 24, 24), "float32", 0)], 5, (4, 16), "sgd"),
    "fusion_upsample": ([("input", (8, 16, 16), "float32", 0)], 5, (4, 16), "sgd"),
}


def build(name: str, classes: int):
    import math
    import torch
    import torch.nn.functional as F
    from torch import nn

    if name in ("chunk_unused", "chunk_all_used"):
        class ChunkGates(nn.Module):
            def __init__(self, d=96, hid=128):
                super().__init__()
                self.proj = nn.Linear(d, 4 * hid)
                self.head = nn.Linear(hid, classes)

            def forward(self, x):
                return self.head(gates(self.proj(x)).mean(dim=1))

        def gates(z):  # the pieces are a function's locals: let go when it returns, as the planner has it
            a, b, c, e = z.chunk(4, dim=-1)
            if name == "chunk_unused":   # two of four pieces read: c and e get no gradient
                return torch.sigmoid(a) * torch.tanh(b)
            return torch.sigmoid(a) * torch.tanh(b) + torch.sigmoid(c) * torch.tanh(e)
        return ChunkGates()
    if name == "split_unused":
        class SplitHead(nn.Module):
            def __init__(self, d=96, hid=128):
                super().__init__()
                self.proj = nn.Linear(d, 3 * hid)
                self.head = nn.Linear(hid, classes)

            def forward(self, x):
                return self.head(torch.relu(first(self.proj(x), self.head.in_features)).mean(dim=1))

        def first(z, n):
            keep, _drop = z.split([n, 2 * n], dim=-1)
            return keep
        return SplitHead()
    if name == "chunk_unused_slices":
        class ChunkSlices(nn.Module):  # chunk over a dim whose size the export computes (Slice per piece)
            def __init__(self, d=96, hid=128):
                super().__init__()
                self.proj = nn.Linear(d, 4 * hid)
                self.head = nn.Linear(hid, classes)

            def forward(self, x):
                return self.head(gate(self.proj(x).transpose(1, 2)).mean(dim=2))   # [B, 4 hid, L]

        def gate(z):
            a, b, c, e = z.chunk(4, dim=1)
            return torch.sigmoid(a) * b
        return ChunkSlices()
    if name == "loop_gates":
        class LoopGates(nn.Module):  # a hand-unrolled convolutional LSTM over 5 frames
            def __init__(self, cin=4, hid=16):
                super().__init__()
                self.hid = hid
                self.gates = nn.Conv2d(cin + hid, 4 * hid, 3, padding=1)
                self.head = nn.Linear(hid, classes)

            def forward(self, x):
                b, t, _, hh, ww = x.shape
                h = x.new_zeros(b, self.hid, hh, ww)
                c = x.new_zeros(b, self.hid, hh, ww)
                for step in range(t):
                    i, f, o, g = self.gates(torch.cat([x[:, step], h], dim=1)).chunk(4, dim=1)
                    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                    h = torch.sigmoid(o) * torch.tanh(c)
                return self.head(h.mean(dim=(2, 3)))
        return LoopGates()
    if name == "shifted_slices":
        class ShiftedSlices(nn.Module):  # a 1-D correlation written as shifted windows of one tensor
            def __init__(self, d=24, hid=96, shifts=6):
                super().__init__()
                self.shifts = shifts
                self.proj = nn.Linear(d, hid)
                self.taps = nn.Parameter(torch.randn(shifts, hid) * 0.1)
                self.head = nn.Linear(hid, classes)

            def forward(self, x):
                y = self.proj(x)                                            # [B, 40, hid]
                n = y.shape[1] - self.shifts + 1
                out = sum(y[:, u:u + n] * self.taps[u] for u in range(self.shifts))
                return self.head(torch.tanh(out).mean(dim=1))
        return ShiftedSlices()
    if name in ("key_read_by_steps", "key_read_by_steps_one_view"):
        class KeyReadBySteps(nn.Module):  # one key tensor read by the matmuls of several update steps
            def __init__(self, d=48, hid=96, queries=3, steps=3):
                super().__init__()
                self.steps = steps
                self.k = nn.Linear(d, hid)
                self.q = nn.Parameter(torch.randn(1, queries, hid) * 0.1)
                self.head = nn.Linear(queries * hid, classes)

            def forward(self, x):
                k = self.k(x)                                                # [B, 24, hid]
                xi = self.q.expand(x.shape[0], -1, -1)
                if name == "key_read_by_steps_one_view":  # one transpose, read by every step: the same export
                    kt = k.transpose(1, 2)
                    for _ in range(self.steps):
                        xi = torch.softmax(xi @ kt, -1) @ k
                    return self.head(xi.flatten(1))
                for _ in range(self.steps):   # a transpose per step, merged into one by torch.onnx
                    xi = torch.softmax(xi @ k.transpose(1, 2), -1) @ k
                return self.head(xi.flatten(1))
        return KeyReadBySteps()
    if name in ("max_with_indices", "max_indices_no_grad"):
        class MaxWithIndices(nn.Module):  # values, indices = s.max(dim): both outputs read (ReduceMax + ArgMax)
            def __init__(self, d=36, hid=80):
                super().__init__()
                self.a, self.b = nn.Linear(d, hid), nn.Linear(d, hid)
                self.head = nn.Linear(hid, classes)

            def forward(self, x):
                a, b = self.a(x), self.b(x)                                  # [B, 40, hid]
                s = torch.tanh(a) @ b.transpose(1, 2)                        # [B, 40, 40]
                best, idx = s.max(dim=-1)                                    # [B, 40] each
                picked = b.gather(1, idx.unsqueeze(-1).expand(-1, -1, b.shape[-1]))
                if name == "max_with_indices":   # the values carry a gradient
                    return self.head((picked * best.unsqueeze(-1)).mean(dim=1))
                order = best.argsort(dim=-1).unsqueeze(-1)                  # the values only sort (ToMe)
                return self.head(picked.gather(1, order.expand(-1, -1, b.shape[-1])).mean(dim=1))
        return MaxWithIndices()
    if name == "shifted_log_softmax":
        class ShiftedLogSoftmax(nn.Module):  # an LM loss's shifted logits: log_softmax of logits[:, :-1]
            def __init__(self, d=32, vocab=1000):
                super().__init__()
                self.proj = nn.Linear(d, vocab)
                self.head = nn.Linear(vocab, classes)

            def forward(self, x):
                lp = torch.log_softmax(self.proj(x)[:, :-1], -1)   # a non-contiguous slice
                return self.head(lp.mean(dim=1))
        return ShiftedLogSoftmax()
    if name == "rel_pos_scores":
        class RelPosScores(nn.Module):  # content-to-position scores against a shared relative table, gathered
            def __init__(self, d=64, heads=4, rel=24, t=40):
                super().__init__()
                self.h = heads
                self.norm = nn.LayerNorm(d)
                self.qkv = nn.Linear(d, 3 * d)
                self.rel = nn.Parameter(torch.randn(rel, d) * 0.1)
                self.pos = nn.Linear(d, d, bias=False)
                self.o = nn.Linear(d, d)
                r = torch.arange(t).unsqueeze(1) - torch.arange(t).unsqueeze(0)
                self.register_buffer("idx", torch.clamp(r + rel // 2, 0, rel - 1), persistent=False)

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2)
                           for z in self.qkv(self.norm(x)).chunk(3, -1))
                pk = self.pos(self.rel).view(1, -1, self.h, d // self.h).transpose(1, 2)     # [1, h, R, dh]
                c2p = torch.gather(q @ pk.transpose(-1, -2), -1, self.idx.expand(b, self.h, t, t))
                w = (q @ k.transpose(-1, -2) + c2p).softmax(-1)
                return x + self.o((w @ v).transpose(1, 2).reshape(b, t, d))

        class Net(nn.Module):  # three blocks: the saved tensors, not one frame's names, make the peak
            def __init__(self, d=64):
                super().__init__()
                self.blocks = nn.Sequential(*[RelPosScores() for _ in range(3)])
                self.head = nn.Linear(d, classes)

            def forward(self, x):
                return self.head(self.blocks(x).mean(dim=1))
        return Net()
    if name == "topk_threshold":
        class TopkThreshold(nn.Module):  # scores below the k-th largest masked out (explicit sparse attention)
            def __init__(self, d=64, heads=4, top=6):
                super().__init__()
                self.h, self.top = heads, top
                self.norm = nn.LayerNorm(d)
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(self.norm(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
                s = q @ k.transpose(-1, -2)
                kth = s.topk(self.top, dim=-1)[0][..., -1:]     # compared only: its graph dies with kth
                s = s.masked_fill(s < kth, float("-inf"))
                return x + self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d))

        class Net(nn.Module):  # three blocks: the saved tensors, not one frame's names, make the peak
            def __init__(self, d=64):
                super().__init__()
                self.blocks = nn.Sequential(*[TopkThreshold() for _ in range(6)])
                self.head = nn.Linear(d, classes)

            def forward(self, x):
                return self.head(self.blocks(x).mean(dim=1))
        return Net()
    if name == "token_merge":
        class TokenMerge(nn.Module):  # bipartite soft matching of alternate tokens, merged by scatter_add
            def __init__(self, d=40, hid=72, r=6):
                super().__init__()
                self.r = r
                self.proj = nn.Linear(d, hid)
                self.mix = nn.Linear(hid, hid)
                self.head = nn.Linear(hid, classes)

            def merge(self, x):
                a, b = x[:, ::2], x[:, 1::2]
                s = F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).transpose(-1, -2)
                best, idx = s.max(dim=-1)
                order = best.argsort(dim=-1, descending=True).unsqueeze(-1)
                keep, move = order[:, self.r:], order[:, :self.r]
                to = idx.unsqueeze(-1).gather(1, move)
                d = x.shape[-1]
                kept = a.gather(1, keep.expand(-1, -1, d))
                merged = b.scatter_add(1, to.expand(-1, -1, d), a.gather(1, move.expand(-1, -1, d)))
                count = torch.ones_like(b[..., :1]).scatter_add(1, to, torch.ones_like(move, dtype=x.dtype))
                return torch.cat([kept, merged / count], dim=1)

            def forward(self, x):
                x = self.merge(torch.relu(self.proj(x)))
                x = self.merge(torch.relu(self.mix(x)))
                return self.head(x.mean(dim=1))
        return TokenMerge()
    if name == "alternate_halves":
        class AlternateHalves(nn.Module):  # even and odd features mixed (a butterfly over x[..., ::2], x[..., 1::2])
            def __init__(self, d=40, hid=256):
                super().__init__()
                self.proj = nn.Linear(d, hid)
                self.out = nn.Linear(hid, 16)
                self.head = nn.Linear(16, classes)

            def forward(self, x):
                y = self.proj(x)                                                  # [B, 48, hid]
                even, odd = y[..., ::2], y[..., 1::2]
                r = torch.cat([even - odd, even + odd], dim=-1)
                return self.head(torch.relu(self.out(r)).mean(dim=1))
        return AlternateHalves()
    if name in ("rope_cached", "rope_unnamed"):
        class RopeAttention(nn.Module):  # rotary attention whose cos / sin tables are registered buffers
            def __init__(self, d=48, dh=16, heads=4, layers=2, seq=64):
                super().__init__()
                self.h, self.dh = heads, dh
                self.inp = nn.Linear(d, heads * dh)
                self.qkv = nn.ModuleList(nn.Linear(heads * dh, 3 * heads * dh) for _ in range(layers))
                self.out = nn.ModuleList(nn.Linear(heads * dh, heads * dh) for _ in range(layers))
                self.head = nn.Linear(heads * dh, classes)
                inv = 1.0 / (10000 ** (torch.arange(0, dh, 2, dtype=torch.float32) / dh))
                f = torch.outer(torch.arange(seq, dtype=torch.float32), inv)
                f = torch.cat([f, f], -1)                                            # [seq, dh]
                # Hugging Face's names, or names no table of the planner knows
                cos_name, sin_name = ("cos_cached", "sin_cached") if name == "rope_cached" else ("table_a", "table_b")
                self.names = (cos_name, sin_name)
                self.register_buffer(cos_name, f.cos())
                self.register_buffer(sin_name, f.sin())

            def rotate(self, x):
                cos, sin = getattr(self, self.names[0]), getattr(self, self.names[1])
                x1, x2 = x.chunk(2, -1)
                return x * cos + torch.cat([-x2, x1], -1) * sin

            def forward(self, x):
                b, t, _ = x.shape
                x = self.inp(x)
                for qkv, out in zip(self.qkv, self.out):
                    q, k, v = qkv(x).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
                    q, k = self.rotate(q), self.rotate(k)
                    a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dh), -1) @ v
                    x = x + out(a.transpose(1, 2).reshape(b, t, -1))
                return self.head(x.mean(dim=1))
        return RopeAttention()
    if name == "fourier_features":
        class FourierFeatures(nn.Module):  # fixed Gaussian Fourier features of coordinates: x @ B, a buffer
            def __init__(self, d=8, m=128, hid=128):
                super().__init__()
                self.register_buffer("B", torch.randn(d, m) * 3.0)
                self.mlp = nn.Sequential(nn.Linear(2 * m, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU())
                self.head = nn.Linear(hid, classes)

            def forward(self, x):
                z = 2 * math.pi * x @ self.B
                return self.head(self.mlp(torch.cat([z.sin(), z.cos()], -1)).mean(dim=1))
        return FourierFeatures()
    if name == "groupnorm_input":
        class GroupNormInput(nn.Module):  # a GroupNorm straight over the network's input, then convolutions
            def __init__(self, c=32):
                super().__init__()
                self.body = nn.Sequential(nn.GroupNorm(8, c), nn.SiLU(), nn.Conv2d(c, 48, 3, padding=1),
                                          nn.GroupNorm(8, 48), nn.SiLU(), nn.Conv2d(48, 48, 3, padding=1))
                self.head = nn.Linear(48, classes)

            def forward(self, x):
                return self.head(self.body(x).mean(dim=(2, 3)))
        return GroupNormInput()
    if name == "fusion_upsample":
        class FusionUpsample(nn.Module):  # residual conv units, a bilinear x2 upsample and a 1x1 conv, twice
            def __init__(self, cin=8, c=48):
                super().__init__()
                self.inp = nn.Conv2d(cin, c, 3, padding=1)
                self.units = nn.ModuleList(nn.ModuleList([nn.Conv2d(c, c, 3, padding=1), nn.Conv2d(c, c, 3, padding=1),
                                                          nn.Conv2d(c, c, 1)]) for _ in range(2))
                # a dense head straight on the last 1x1 conv's output, down to one channel
                self.out = nn.Sequential(nn.Conv2d(c, c // 2, 3, padding=1), nn.Conv2d(c // 2, 16, 3, padding=1),
                                         nn.ReLU(), nn.Conv2d(16, 1, 1), nn.ReLU())
                self.head = nn.Linear(1, classes)

            def forward(self, x):
                x = self.inp(x)
                for c1, c2, proj in self.units:
                    x = x + c2(F.relu(c1(F.relu(x))))
                    x = proj(F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=True))
                return self.head(self.out(x).mean(dim=(2, 3)))
        return FusionUpsample()
    raise ValueError(name)


def case_spec(cases: dict, build_case, label: str, name: str):
    """Case `name` of `cases` (name: (inputs, classes, batches, optimizer)) as a ModelSpec to export and measure."""
    import torch
    import models
    inputs, classes, batches, _ = cases[name]
    return models.ModelSpec(name, label + " " + name, lambda: build_case(name, classes),
                            tuple(models.InputSpec(n, s, getattr(torch, d), high=h) for n, s, d, h in inputs),
                            classes, in_zoo=False, validation_batches=(batches[0],))


def measure_child(make_spec, batch: int, optimizer: str, keys, seed=None) -> int:
    """A probe tool's --child: one real step under the LD_PRELOAD tracker (this process re-executed with it,
    one thread), the measurement's `keys` printed as one JSON line."""
    sys.path.insert(0, HERE)
    import measure_step
    measure_step.reexec_with_tracker(None)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    torch.set_num_threads(1)
    if seed is not None:
        torch.manual_seed(seed)
    rec = measure_step.measure(make_spec(), batch, optimizer, measure_step.Tracker())
    print(json.dumps({k: rec[k] for k in keys}))
    return 0


def spec(name: str):
    return case_spec(CASES, build, "miss probe", name)


def child(name: str, batch: int) -> int:
    return measure_child(lambda: spec(name), batch, CASES[name][3],
                         ("peak_live_bytes", "peak_phase", "saved_tensor_bytes", "phase_peaks"))


def plan(oomguard: str, path: str, batch: int, optimizer: str) -> dict:
    return json.loads(subprocess.run(
        [oomguard, "plan", path, "--target", "cpu", "--batch", str(batch), "--optimizer", optimizer,
         "--loss", "cross_entropy", "--json"], capture_output=True, text=True, check=True).stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    parser.add_argument("--other", help="a second oomguard build planned beside it (main's)")
    parser.add_argument("--cases", help="comma-separated (default: all)")
    parser.add_argument("--work", default="/tmp/oomguard_misses", help="where the exported .onnx files go")
    parser.add_argument("--out", help="write the rows as JSON here")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--store", action="store_true", help="keep the cases' ONNX and measurements in tests/data/plan")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], int(args.child[1]))
    if args.list:
        for name, (inputs, classes, batches, opt) in CASES.items():
            print("%-20s inputs %s classes %d batches %s %s" % (name, inputs, classes, batches, opt))
        return 0
    names = args.cases.split(",") if args.cases else list(CASES)
    bad = [n for n in names if n not in CASES]
    if bad:
        print("probe_misses: unknown case %s (--list)" % ", ".join(bad), file=sys.stderr)
        return 2
    sys.path.insert(0, HERE)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    import export_zoo
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for name in names:
        export_zoo.export_one(spec(name), args.work, 14, require_inferred_output=False)
        onnx_path = os.path.join(args.work, name + ".onnx")
        for batch in CASES[name][2]:
            out = subprocess.run([sys.executable, __file__, "--child", name, str(batch)], capture_output=True,
                                 text=True, check=True).stdout.strip().splitlines()[-1]
            rec = json.loads(out)
            p = plan(args.oomguard, onnx_path, batch, CASES[name][3])
            row = {"model": name, "batch": batch, "optimizer": CASES[name][3], "measured_peak": rec["peak_live_bytes"],
                   "measured_phase": rec["peak_phase"], "measured_saved": rec["saved_tensor_bytes"],
                   "measured_phase_peaks": rec["phase_peaks"],
                   "planned_peak": p["peak_allocated_bytes"], "planned_phase": p.get("peak_phase"),
                   "planned_saved": p["bytes"]["activations_saved"], "risks": p.get("risks", [])}
            row["peak_error_pct"] = round(100.0 * (row["planned_peak"] - row["measured_peak"]) / row["measured_peak"], 3)
            line = "%-20s b=%-3d peak %10d plan %10d (%+.2f%%) [%s/%s]  saved %10d plan %10d (%+d)" % (
                name, batch, row["measured_peak"], row["planned_peak"], row["peak_error_pct"], row["measured_phase"],
                row["planned_phase"], row["measured_saved"], row["planned_saved"],
                row["planned_saved"] - row["measured_saved"])
            line += "  backward %10d" % rec["phase_peaks"]["backward"]
            if args.other:
                other = plan(args.other, onnx_path, batch, CASES[name][3])["peak_allocated_bytes"]
                row["other_peak"] = other
                row["other_error_pct"] = round(100.0 * (other - row["measured_peak"]) / row["measured_peak"], 3)
                line += "  other %10d (%+.2f%%)" % (other, row["other_error_pct"])
            rows.append(row)
            print(line, flush=True)
    if args.store:
        import shutil
        data = os.path.join(ROOT, "tests", "data", "plan")
        path = os.path.join(data, "misses_probes.json")
        stored = {"torch_version": torch.__version__, "command": "/usr/bin/python3 tools/probe_misses.py --store",
                  "cases": {}}
        if os.path.exists(path):
            with open(path) as f:
                stored = json.load(f)
        for name in names:
            shutil.copyfile(os.path.join(args.work, name + ".onnx"), os.path.join(data, "misses_%s.onnx" % name))
            stored["cases"][name] = {"onnx": "misses_%s.onnx" % name, "optimizer": CASES[name][3], "rows": [
                {k: r[k] for k in ("batch", "measured_peak", "measured_phase", "measured_saved", "measured_phase_peaks")}
                for r in rows if r["model"] == name]}
        with open(path, "w") as f:
            json.dump(stored, f, indent=1, sort_keys=True)
            f.write("\n")
    if args.out:
        probe_families.write_rows(args.out, "tools/probe_misses.py", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
