#!/usr/bin/python3
"""Which pieces of one projection PyTorch 1.13 lays out as views of its storage, and whether the planner agrees.

    /usr/bin/python3 tools/view_layouts.py --oomguard build/oomguard [--work DIR]

Each case takes qkv = nn.Linear(32, 96)(x) of x [2, 16, 32], keeps it (qkv * a scalar parameter, whose Mul keeps
qkv for backward) and cuts a piece out of it the way attention code does (chunk / split / select / unbind / permute /
view / transpose / reshape / flatten), then either
  * multiplies the piece by another scalar parameter (that Mul keeps the piece: in torch the piece's storage is qkv's
    or not, x.storage().data_ptr(); the plan lays the piece out as a view where that Mul keeps no bytes beyond qkv's,
    counted once, by the first Mul), or
  * ("linear:" cases) feeds it to nn.Linear(32, 5) (MmBackward0._saved_self is qkv's storage where matmul folded the
    piece to 2-D without a copy; the plan's MatMul keeps no bytes of its own there, a folded copy otherwise).
Prints one line per case and the count of disagreements. Measures nothing but storages; CPU, a few seconds.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import warnings

B, N, H, D = 2, 16, 4, 8
C = H * D

PIECES = {
    "reshape_permute_index": lambda t: t.reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4)[1],
    "reshape_permute_unbind": lambda t: t.reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4).unbind(0)[2],
    "chunk_view_transpose": lambda t: t.chunk(3, -1)[1].view(B, N, H, D).transpose(1, 2),
    "split_reshape_transpose": lambda t: t.split(C, -1)[2].reshape(B, N, H, D).transpose(1, 2),
    "chunk_reshape_fold_rows": lambda t: t.chunk(3, -1)[0].reshape(B * N, C),
    "chunk_reshape_fold_cols": lambda t: t.chunk(3, -1)[0].reshape(B, N * C),
    "chunk_view_transpose_fold_heads": lambda t: t.chunk(3, -1)[1].view(B, N, H, D).transpose(1, 2).reshape(B * H, N, D),
    "reshape_permute_index_fold": lambda t: t.reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4)[0].reshape(B * H, N, D),
    "reshape_select_mid": lambda t: t.reshape(B, N, 3, C)[:, :, 1],
    "reshape_select_mid_fold_cols": lambda t: t.reshape(B, N, 3, C)[:, :, 1].reshape(B, N * C),
    "reshape_select_mid_fold_rows": lambda t: t.reshape(B, N, 3, C)[:, :, 1].reshape(B * N, C),
    "permute_reshape": lambda t: t.permute(0, 2, 1).reshape(B, -1),
    "transpose_reshape_heads": lambda t: t.reshape(B, N, 3 * H, D).transpose(1, 2).reshape(B, 3 * H, N * D),
    "chunk_unsqueeze_squeeze": lambda t: t.chunk(3, -1)[2].unsqueeze(1).squeeze(1),
    "chunk_view_flatten_heads": lambda t: t.chunk(3, -1)[2].view(B, N, H, D).flatten(2),
    "narrow_rows_reshape": lambda t: t[:, 2:10].reshape(B, 8 * 3 * C),
    "chunk_dim1_reshape": lambda t: t.chunk(2, 1)[1].reshape(B, N // 2, 3, C),
    "chunk_view_then_fold_cols": lambda t: t.chunk(3, -1)[0].view(B, N, H, D).reshape(B, N * C),
    "chunk_view_then_fold_rows": lambda t: t.chunk(3, -1)[0].view(B, N, H, D).reshape(B * N, C),
    "chunk_flatten": lambda t: t.chunk(3, -1)[0].flatten(1),
    "chunk_view_transpose_twice_fold_rows":
        lambda t: t.chunk(3, -1)[0].view(B, N, H, D).transpose(1, 2).transpose(1, 2).reshape(B * N, C),
    "chunk_view_permute_select_fold": lambda t: t.chunk(3, -1)[0].view(B, N, H, D).permute(0, 2, 1, 3)[:, 0].reshape(B, N * D),
    "permute_select_fold_rows": lambda t: t.reshape(B, N, 3, H, D).permute(2, 0, 1, 3, 4)[1].reshape(B * N, C),
    "select_unsqueeze_fold": lambda t: t.reshape(B, N, 3, C)[:, :, 1].unsqueeze(1).reshape(B, N * C),
}
LINEAR = {
    "chunk_view_flatten": lambda t: t.chunk(3, -1)[0].view(B, N, H, D).flatten(2),
    "view_select": lambda t: t.reshape(B, N, 3, C)[:, :, 1],
    "chunk_dim1_view_select": lambda t: t.chunk(2, 1)[1].reshape(B, N // 2, 3, C)[:, :, 0],
    "chunk_last": lambda t: t.chunk(3, -1)[2],
    "permute_select_view": lambda t: t.reshape(B, N, 3, H, D).permute(2, 0, 1, 3, 4)[1].reshape(B, N, C),
}


def module(piece, linear: bool):
    import torch
    import torch.nn as nn

    class Case(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(C, 3 * C)
            self.keep = nn.Parameter(torch.ones(()))
            self.scale = nn.Parameter(torch.ones(()))
            self.fc = nn.Linear(C, 5)

        def forward(self, x):
            qkv = self.qkv(x)
            kept = (qkv * self.keep).mean()
            y = self.fc(piece(qkv)) if linear else piece(qkv) * self.scale
            return y.mean() + kept
    return Case()


def torch_view(m, piece, linear: bool) -> bool:
    import torch
    x = torch.randn(B, N, C)
    qkv = m.qkv(x)
    if not linear:
        return piece(qkv).storage().data_ptr() == qkv.storage().data_ptr()
    fn = m.fc(piece(qkv)).grad_fn
    while fn is not None and type(fn).__name__ not in ("MmBackward0", "AddmmBackward0"):
        fn = fn.next_functions[0][0]
    saved = fn._saved_self if hasattr(fn, "_saved_self") else fn._saved_mat1
    return saved.storage().data_ptr() == qkv.storage().data_ptr()


def plan_view(exe: str, path: str, linear: bool) -> bool:
    out = subprocess.run([exe, "plan", path, "--target", "cpu", "--batch", str(B), "--optimizer", "sgd", "--loss", "none",
                          "--json"], capture_output=True, text=True, check=True).stdout
    layers = json.loads(out)["layers"]
    if linear:
        layer = [l for l in layers if l["name"].startswith("/fc/") and l["op_type"] == "MatMul"][0]
    else:
        layer = [l for l in layers if l["op_type"] == "Mul" and l["output_bytes"] >= B * N * 4][1]
    return layer["saved_bytes"] == 0  # qkv's storage, counted by the first Mul


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oomguard", required=True)
    ap.add_argument("--work")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import torch
    torch.manual_seed(0)
    work = args.work or tempfile.mkdtemp(prefix="view_layouts_")
    bad = 0
    cases = [(n, p, False) for n, p in PIECES.items()] + [("linear:" + n, p, True) for n, p in LINEAR.items()]
    for name, piece, linear in cases:
        m = module(piece, linear)
        f = io.BytesIO()
        torch.onnx.export(m, (torch.randn(B, N, C),), f, opset_version=14, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=["input"])
        path = os.path.join(work, name.replace(":", "_") + ".onnx")
        with open(path, "wb") as fh:
            fh.write(f.getvalue())
        t, p = torch_view(m, piece, linear), plan_view(args.oomguard, path, linear)
        bad += t != p
        print("%-42s torch %-4s plan %-4s%s" % (name, "view" if t else "copy", "view" if p else "copy",
                                               "" if t == p else "  DIFFERENT"))
    print("%d cases, %d different" % (len(cases), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
