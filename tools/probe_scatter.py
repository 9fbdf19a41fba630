#!/usr/bin/python3
"""Development probe (not held out): writes into part of a tensor (slice assignment, index_put_), which torch.onnx
exports as ScatterND, each idiom alone.

    /usr/bin/python3 tools/probe_scatter.py [--oomguard build/oomguard] [--other START_BUILD]
                                            [--cases a,b] [--work DIR] [--out FILE] [--store]

Each case is a small torch.nn net written with its own sizes (never a set's model), exported in training mode
(tools/export_zoo.py, opset 14); each row's real PyTorch 1.13 CPU step is measured in a fresh process under the
LD_PRELOAD tracker (tools/measure_step.py), then planned with `oomguard plan --target cpu` (and with --other, a
second build beside it). In torch these are copy_ / index_put_ into one storage (CopySlices, IndexPutBackward0):
autograd keeps no float tensor of them. ONNX writes a new tensor per write, with an int64 index grid built by
Range / Expand / Concat beside it. Cases:

- correlation_volume: a [B, 2C, D, H, W] volume filled by slice assignments of two feature maps at D shifts (a
  stereo cost volume), read by a Conv3d.
- steps_into_buffer: a GRU cell unrolled over T steps, each step's state written into out[:, t] of a preallocated
  buffer, the buffer read by a head.
- update_in_place: y = x.clone(); y[:, :k] = tanh(y[:, :k]) * g - an activation that requires grad written in place.
- rows_by_index: z = zeros; z[arange(B)[:, None], idx] = mlp(h[...]) with top-k indices (index_put_ with tensors).

--store copies each case's ONNX to tests/data/plan/scatter_<case>.onnx and its measured rows to
tests/data/plan/scatter_probes.json (planner_test.cc plans them).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe_datadep  # noqa: E402 (probe_main)

# name: (inputs [(name, per-sample shape, dtype, high)], classes, batches, optimizer)
CASES = {
    "correlation_volume": ([("input", (3, 24, 24), "float32", 0)], 6, (2, 8), "sgd"),
    "steps_into_buffer": ([("input", (12, 32), "float32", 0)], 6, (4, 16), "adam"),
    "update_in_place": ([("input", (48, 64), "float32", 0)], 6, (4, 16), "sgd"),
    "rows_by_index": ([("input", (40, 48), "float32", 0)], 6, (4, 16), "sgd"),
}


def build(name: str, classes: int):
    import torch
    from torch import nn

    class CorrelationVolume(nn.Module):
        def __init__(self, c=12, shifts=6):
            super().__init__()
            self.shifts = shifts
            self.feat = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1))
            self.agg = nn.Conv3d(2 * c, 8, 3, padding=1)
            self.head = nn.Linear(8, classes)

        def forward(self, x):
            f = self.feat(x)
            g = self.feat(x.flip(-1))
            b, c, h, w = f.shape
            vol = f.new_zeros(b, 2 * c, self.shifts, h, w)
            for i in range(self.shifts):
                if i > 0:
                    vol[:, :c, i, :, i:] = f[:, :, :, i:]
                    vol[:, c:, i, :, i:] = g[:, :, :, :-i]
                else:
                    vol[:, :c, i] = f
                    vol[:, c:, i] = g
            return self.head(torch.relu(self.agg(vol)).mean((2, 3, 4)))

    class StepsIntoBuffer(nn.Module):
        def __init__(self, d=32, hid=64):
            super().__init__()
            self.cell = nn.GRUCell(d, hid)
            self.head = nn.Linear(hid, classes)

        def forward(self, x):
            b, t, _ = x.shape
            h = x.new_zeros(b, self.cell.hidden_size)
            out = x.new_zeros(b, t, self.cell.hidden_size)
            for s in range(t):
                h = self.cell(x[:, s], h)
                out[:, s] = h
            return self.head(torch.tanh(out).mean(1))

    class UpdateInPlace(nn.Module):
        def __init__(self, d=64, k=24):
            super().__init__()
            self.k = k
            self.inp = nn.Linear(d, 2 * d)
            self.gate = nn.Linear(d, k)
            self.head = nn.Linear(2 * d, classes)

        def forward(self, x):
            y = self.inp(x).clone()
            y[:, :, :self.k] = torch.tanh(y[:, :, :self.k]) * torch.sigmoid(self.gate(x))
            return self.head(torch.relu(y).mean(1))

    class RowsByIndex(nn.Module):
        def __init__(self, d=48, k=10):
            super().__init__()
            self.k = k
            self.score = nn.Linear(d, 1)
            self.mlp = nn.Sequential(nn.Linear(d, 128), nn.GELU(), nn.Linear(128, d))
            self.head = nn.Linear(d, classes)

        def forward(self, x):
            b = x.shape[0]
            idx = self.score(x)[..., 0].topk(self.k, dim=1).indices              # [B, k]
            rows = torch.arange(b)[:, None]
            z = torch.zeros_like(x)
            z[rows, idx] = self.mlp(x[rows, idx])
            return self.head((x + z).mean(1))

    return {"correlation_volume": CorrelationVolume, "steps_into_buffer": StepsIntoBuffer,
            "update_in_place": UpdateInPlace, "rows_by_index": RowsByIndex}[name]()


if __name__ == "__main__":
    sys.exit(probe_datadep.probe_main(__doc__, __file__, CASES, build, "slice-assignment probe", "scatter"))
