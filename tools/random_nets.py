#!/usr/bin/python3
"""Differential test of `oomguard plan --target cpu` on random but realistic networks.

A seed fixes one network (tools/random_nets.py describe SEED prints it): a stem for one input
kind (2-D image, 1-D signal, 3-D volume, a token sequence, a float sequence), a random stack of
blocks (convolutions of every shape incl. depthwise and transposed, every kind of norm, in-place
and out-of-place activations, pooling, upsampling, residual and concat branches, squeeze-excite,
dropout, LSTM/GRU, self-attention, embeddings, a tied LM head) and a classifier head. Each row:

  1. a fresh process (forked from a worker that imported torch once) builds the net, measures one real PyTorch 1.13 CPU
     training step with tools/measure_step.py's measure() under the LD_PRELOAD tracker, then
     exports it with torch.onnx.export in TRAINING mode (do_constant_folding=False, dynamic batch);
  2. this process runs `oomguard plan NET.onnx --target cpu --batch B --optimizer O --json` and
     compares peak_allocated_bytes with peak_live_bytes and bytes.activations_saved with
     saved_tensor_bytes.

Seeds are split once, before any result was looked at:
  TUNING   0 ..  99999   may be looked at and tuned on;
  REPORT   100000 ..     held out: only ever reported, never used to change the planner.
After the first report (seeds 100000-100299, planner at cca0dba) those seeds were used to find a gap
(the shape pass did not know LSTM), so from then on 100000-199999 count as development seeds and the
held-out report uses seeds from 200000 (docs/validation.md tells which figure came from which range).

    /usr/bin/python3 tools/random_nets.py run --oomguard build/oomguard --seeds 100000-100299 \
        --out bench/results/random_nets_report.json
    /usr/bin/python3 tools/random_nets.py run --oomguard build/oomguard --seeds 0-99 --out /tmp/t.json
    /usr/bin/python3 tools/random_nets.py check --oomguard build/oomguard   # the ctest sample
    /usr/bin/python3 tools/random_nets.py describe 17

`--kinds classic,modern2d,window,tagger` (default classic: this file's generator, every seed's network
unchanged) adds the modern kinds of tools/random_nets_modern.py (ConvNeXt-style, Swin-style, sequence
taggers); a seed is measured once per kind, records of a modern kind are KIND_SEED.json in --keep.
`describe SEED --kind K`; `describe --verify tests/data/plan/random_nets_describe.json` checks that no
generator changed a seed's network (ctest random_nets_describe_stable).

`run` and `check` exit 1 when a target is missed (check: the ctest's looser gate, see
CHECK_TARGETS) and 2 on bad usage. Networks that torch.onnx.export cannot export are counted and
reported as export failures, not silently dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import random_nets_modern as modern  # noqa: E402 (the modern kinds; no torch at import)

# `--kinds`: the generator of this file (`classic`, the default) and the modern ones.
KINDS = ("classic",) + modern.KINDS

TUNING_SEEDS = range(0, 100000)
REPORT_SEEDS_START = 100000

# The targets of the brief (models not tuned on).
TARGETS = {"peak_median": 0.01, "peak_p90": 0.03, "peak_max": 0.05, "activations_median": 0.01}
# The ctest: a fixed sample from the tuning range; fails when the planner regresses past these.
CHECK_SEEDS = list(range(0, 24))
CHECK_TARGETS = {"peak_median": 0.01, "peak_p90": 0.05, "peak_max": 0.15, "activations_median": 0.01}

OPTIMIZERS = ("sgd", "momentum", "adam")


# ---------------------------------------------------------------------------------------------
# The network description: plain data drawn from random.Random(seed), no torch needed.


def _act(r: random.Random) -> dict:
    kind = r.choice(["relu", "relu", "relu_inplace", "leaky_inplace", "leaky", "relu6", "gelu",
                     "silu", "hardswish", "hardsigmoid", "sigmoid", "tanh", "elu", "prelu", "mish"])
    return {"op": "act", "kind": kind}


def _norm(r: random.Random, dims: int, channels: int) -> dict:
    kinds = ["batch", "batch", "group", "instance", "none"]
    kind = r.choice(kinds)
    groups = r.choice([g for g in (1, 2, 4, 8) if channels % g == 0])
    return {"op": "norm", "kind": kind, "groups": groups, "affine": r.random() < 0.7}


def describe(seed: int) -> dict:
    """The network for `seed` as a JSON-able dict (kind, input, blocks, head, batch, optimizer)."""
    r = random.Random(seed)
    kind = r.choice(["image2d", "image2d", "signal1d", "volume3d", "tokens", "sequence"])
    net = {"seed": seed, "kind": kind, "blocks": [], "opset": r.choice([13, 14, 14, 17]),
           "optimizer": r.choice(OPTIMIZERS), "batch": r.choice([2, 3, 4, 6, 8])}
    blocks = net["blocks"]
    if kind in ("image2d", "signal1d", "volume3d"):
        dims = {"image2d": 2, "signal1d": 1, "volume3d": 3}[kind]
        size = {1: r.choice([256, 512, 1024, 2048]), 2: r.choice([24, 32, 48, 64]), 3: r.choice([8, 12, 16])}[dims]
        cin = r.choice([1, 3, 4])
        net["input"] = {"channels": cin, "size": size, "dims": dims}
        c = r.choice([8, 12, 16, 24])
        blocks.append({"op": "conv", "cin": cin, "cout": c, "k": r.choice([3, 5, 7]) if dims < 3 else 3,
                       "stride": r.choice([1, 2]), "groups": 1, "bias": r.random() < 0.5})
        spatial = size // blocks[-1]["stride"]
        for _ in range(r.randint(2, 7)):
            choice = r.choice(["convblock", "convblock", "residual", "concat", "pool", "se", "act",
                               "norm", "dropout", "depthwise", "up", "transposed"])
            if choice == "convblock":
                cout = r.choice([c, c, 2 * c]) if c <= 32 else c
                k = r.choice([1, 3, 3, 5]) if dims < 3 else r.choice([1, 3])
                stride = 2 if spatial >= 8 and r.random() < 0.25 else 1
                blocks.append({"op": "conv", "cin": c, "cout": cout, "k": k, "stride": stride,
                               "groups": 1, "bias": r.random() < 0.3})
                blocks.append(_norm(r, dims, cout))
                blocks.append(_act(r))
                c, spatial = cout, (spatial + stride - 1) // stride
            elif choice == "depthwise":
                k = r.choice([3, 5, 7]) if dims < 3 else 3
                blocks.append({"op": "conv", "cin": c, "cout": c, "k": k, "stride": 1, "groups": c,
                               "bias": False})
                blocks.append(_norm(r, dims, c))
                blocks.append(_act(r))
            elif choice in ("residual", "concat"):
                inner = [{"op": "conv", "cin": c, "cout": c if choice == "residual" else r.choice([4, 8]),
                          "k": 3 if dims < 3 or r.random() < 0.5 else 1, "stride": 1, "groups": 1,
                          "bias": r.random() < 0.3}]
                inner.append(_norm(r, dims, inner[0]["cout"]))
                inner.append(_act(r))
                if r.random() < 0.5:
                    inner.append({"op": "conv", "cin": inner[0]["cout"], "cout": inner[0]["cout"], "k": 1,
                                  "stride": 1, "groups": 1, "bias": True})
                blocks.append({"op": choice, "inner": inner, "post_act": _act(r) if r.random() < 0.5 else None})
                if choice == "concat":
                    c += inner[0]["cout"]
            elif choice == "pool" and spatial >= 4:
                blocks.append({"op": "pool", "kind": r.choice(["max", "avg"]), "k": 2})
                spatial //= 2
            elif choice == "se":
                blocks.append({"op": "se", "channels": c, "hidden": max(2, c // 4)})
            elif choice == "act":
                blocks.append(_act(r))
            elif choice == "norm":
                blocks.append(_norm(r, dims, c))
            elif choice == "dropout":
                blocks.append({"op": "dropout", "p": r.choice([0.1, 0.5])})
            elif choice == "up" and spatial <= size:
                mode = r.choice(["nearest", "linear"])
                blocks.append({"op": "upsample", "mode": mode})
                spatial *= 2
            elif choice == "transposed" and spatial <= size:
                cout = r.choice([c, max(4, c // 2)])
                blocks.append({"op": "convT", "cin": c, "cout": cout})
                blocks.append(_act(r))
                c, spatial = cout, spatial * 2
        net["head"] = {"op": "pool_linear", "channels": c, "classes": r.choice([5, 10, 37]),
                       "hidden": r.choice([0, 0, 32])}
    else:
        seq = r.choice([16, 32, 64])
        d = r.choice([32, 48, 64])
        if kind == "tokens":
            vocab = r.choice([50, 200, 1000])
            net["input"] = {"seq": seq, "vocab": vocab}
            blocks.append({"op": "embedding", "vocab": vocab, "d": d})
            if r.random() < 0.5:
                blocks.append({"op": "posemb", "seq": seq, "d": d})
        else:
            fin = r.choice([4, 8, 13])
            net["input"] = {"seq": seq, "features": fin}
            blocks.append({"op": "linear", "fin": fin, "fout": d, "bias": True})
        for _ in range(r.randint(1, 5)):
            choice = r.choice(["lstm", "gru", "attention", "ffn", "layernorm", "conv1d", "act", "dropout"])
            if choice in ("lstm", "gru"):
                bidir = r.random() < 0.4
                hidden = r.choice([8, 16, 32])
                layers = r.choice([1, 1, 2])
                blocks.append({"op": choice, "d": d, "hidden": hidden, "layers": layers, "bidir": bidir})
                d = hidden * (2 if bidir else 1)
            elif choice == "attention":
                heads = r.choice([h for h in (1, 2, 4) if d % h == 0])
                blocks.append({"op": "attention", "d": d, "heads": heads, "dropout": r.choice([0.0, 0.1]),
                               "norm_first": r.random() < 0.5})
            elif choice == "ffn":
                blocks.append({"op": "ffn", "d": d, "hidden": r.choice([2, 4]) * d, "act": _act(r)})
            elif choice == "layernorm":
                blocks.append({"op": "layernorm", "d": d})
            elif choice == "conv1d":
                blocks.append({"op": "seqconv", "d": d, "k": r.choice([3, 5])})
            elif choice == "act":
                blocks.append(_act(r))
            else:
                blocks.append({"op": "dropout", "p": r.choice([0.1, 0.5])})
        tied = kind == "tokens" and r.random() < 0.3
        net["head"] = {"op": "tied_head" if tied else "seq_linear", "d": d,
                       "classes": net["input"].get("vocab", 0) if tied else r.choice([5, 10, 37]),
                       "reduce": r.choice(["mean", "first", "last"])}
    _no_inplace_after_act(net["blocks"])
    return net


def describe_kind(kind: str, seed: int) -> dict:
    """The network for (kind, seed); `classic` is describe(seed), byte for byte."""
    return describe(seed) if kind == "classic" else modern.describe(kind, seed)


def generator_of(net: dict) -> str:
    return net["kind"] if net["kind"] in modern.KINDS else "classic"


def record_name(kind: str, seed: int) -> str:
    """The file stem of a measured record: SEED for classic nets (as before), KIND_SEED otherwise."""
    return "%d" % seed if kind == "classic" else "%s_%d" % (kind, seed)


def describe_digests(kinds: list, seeds: list) -> dict:
    """{kind: {seed: sha256 of the canonical JSON of (net, families)}}: the stability fingerprint."""
    import hashlib
    out = {}
    for kind in kinds:
        out[kind] = {}
        for seed in seeds:
            net = describe_kind(kind, seed)
            text = json.dumps({"net": net, "families": families(net)}, sort_keys=True)
            out[kind][str(seed)] = hashlib.sha256(text.encode()).hexdigest()
    return out


def _no_inplace_after_act(blocks: list) -> None:
    """An in-place activation right after another activation would overwrite a tensor autograd
    keeps (torch refuses to run backward); a real network would not do it, so make it out-of-place.
    Applied after drawing, so the random stream, and every other network, stays the same."""
    prev = None
    for b in blocks:
        if b["op"] == "act" and b["kind"].endswith("_inplace") and prev is not None and prev["op"] == "act":
            b["kind"] = b["kind"][:-len("_inplace")]
        if b["op"] in ("residual", "concat"):
            _no_inplace_after_act(b["inner"])
        prev = b


def families(net: dict) -> list:
    """The op families a network contains (for the per-family error table)."""
    if net["kind"] in modern.KINDS:
        return modern.families(net)
    out = set()

    def walk(blocks, dims):
        for b in blocks:
            op = b["op"]
            if op == "act":
                out.add("act:" + b["kind"])
            elif op == "norm":
                if b["kind"] != "none":
                    out.add("norm:" + b["kind"])
            elif op == "conv":
                if b["groups"] > 1:
                    out.add("conv%dd:depthwise" % dims)
                else:
                    out.add("conv%dd" % dims)
            elif op in ("residual", "concat"):
                out.add(op)
                walk(b["inner"], dims)
                if b.get("post_act"):
                    walk([b["post_act"]], dims)
            elif op == "ffn":
                out.add("ffn")
                walk([b["act"]], dims)
            elif op == "pool":
                out.add("pool:" + b["kind"])
            else:
                out.add(op)

    walk(net["blocks"], net.get("input", {}).get("dims", 1))
    out.add("kind:" + net["kind"])
    out.add(net["head"]["op"])
    return sorted(out)


# ---------------------------------------------------------------------------------------------
# Building the torch module (only in the `one` subprocess).


def build_module(net: dict):
    if net["kind"] in modern.KINDS:
        return modern.build_module(net)
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Act(nn.Module):
        def __init__(self, kind, channels=None):
            super().__init__()
            self.kind = kind
            table = {"relu": lambda: nn.ReLU(), "relu_inplace": lambda: nn.ReLU(inplace=True),
                     "leaky": lambda: nn.LeakyReLU(0.1), "leaky_inplace": lambda: nn.LeakyReLU(0.1, inplace=True),
                     "relu6": lambda: nn.ReLU6(), "gelu": lambda: nn.GELU(), "silu": lambda: nn.SiLU(),
                     "hardswish": lambda: nn.Hardswish(), "hardsigmoid": lambda: nn.Hardsigmoid(),
                     "sigmoid": lambda: nn.Sigmoid(), "tanh": lambda: nn.Tanh(), "elu": lambda: nn.ELU(),
                     "prelu": lambda: nn.PReLU(), "mish": lambda: nn.Mish()}
            self.f = table[kind]()

        def forward(self, x):
            return self.f(x)

    def conv_cls(dims, transposed=False):
        if transposed:
            return {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d, 3: nn.ConvTranspose3d}[dims]
        return {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[dims]

    def norm(b, dims, c):
        if b["kind"] == "batch":
            return {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}[dims](c)
        if b["kind"] == "group":
            return nn.GroupNorm(b["groups"], c, affine=b["affine"])
        if b["kind"] == "instance":
            return {1: nn.InstanceNorm1d, 2: nn.InstanceNorm2d, 3: nn.InstanceNorm3d}[dims](c, affine=b["affine"])
        return nn.Identity()

    class SE(nn.Module):
        def __init__(self, c, h):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(c, h), nn.Linear(h, c)

        def forward(self, x):
            s = x.mean(dim=tuple(range(2, x.dim())))
            s = torch.sigmoid(self.fc2(F.relu(self.fc1(s))))
            return x * s.view(s.shape + (1,) * (x.dim() - 2))

    class Branch(nn.Module):
        def __init__(self, kind, inner, post):
            super().__init__()
            self.kind, self.inner, self.post = kind, inner, post

        def forward(self, x):
            y = self.inner(x)
            y = x + y if self.kind == "residual" else torch.cat([x, y], dim=1)
            return self.post(y) if self.post is not None else y

    class Recurrent(nn.Module):
        def __init__(self, b):
            super().__init__()
            cls = nn.LSTM if b["op"] == "lstm" else nn.GRU
            self.rnn = cls(b["d"], b["hidden"], num_layers=b["layers"], bidirectional=b["bidir"],
                           batch_first=True)

        def forward(self, x):
            return self.rnn(x)[0]

    class Attention(nn.Module):
        def __init__(self, b):
            super().__init__()
            self.norm = nn.LayerNorm(b["d"])
            self.attn = nn.MultiheadAttention(b["d"], b["heads"], dropout=b["dropout"], batch_first=True)
            self.norm_first = b["norm_first"]

        def forward(self, x):
            if self.norm_first:
                h = self.norm(x)
                return x + self.attn(h, h, h, need_weights=False)[0]
            return self.norm(x + self.attn(x, x, x, need_weights=False)[0])

    class Ffn(nn.Module):
        def __init__(self, b):
            super().__init__()
            self.fc1, self.act, self.fc2 = nn.Linear(b["d"], b["hidden"]), Act(b["act"]["kind"]), \
                nn.Linear(b["hidden"], b["d"])

        def forward(self, x):
            return x + self.fc2(self.act(self.fc1(x)))

    class SeqConv(nn.Module):
        def __init__(self, b):
            super().__init__()
            self.conv = nn.Conv1d(b["d"], b["d"], b["k"], padding=b["k"] // 2)

        def forward(self, x):
            return self.conv(x.transpose(1, 2)).transpose(1, 2)

    class PosEmb(nn.Module):
        def __init__(self, b):
            super().__init__()
            self.pos = nn.Parameter(torch.zeros(1, b["seq"], b["d"]))

        def forward(self, x):
            return x + self.pos

    def layers(blocks, dims, c):
        mods = []
        for b in blocks:
            op = b["op"]
            if op == "conv":
                mods.append(conv_cls(dims)(b["cin"], b["cout"], b["k"], stride=b["stride"], padding=b["k"] // 2,
                                           groups=b["groups"], bias=b["bias"]))
                c = b["cout"]
            elif op == "convT":
                mods.append(conv_cls(dims, True)(b["cin"], b["cout"], 2, stride=2))
                c = b["cout"]
            elif op == "norm":
                mods.append(norm(b, dims, c))
            elif op == "act":
                mods.append(Act(b["kind"]))
            elif op == "pool":
                cls = {("max", 1): nn.MaxPool1d, ("max", 2): nn.MaxPool2d, ("max", 3): nn.MaxPool3d,
                       ("avg", 1): nn.AvgPool1d, ("avg", 2): nn.AvgPool2d, ("avg", 3): nn.AvgPool3d}
                mods.append(cls[(b["kind"], dims)](b["k"]))
            elif op == "se":
                mods.append(SE(b["channels"], b["hidden"]))
            elif op == "dropout":
                mods.append(nn.Dropout(b["p"]))
            elif op == "upsample":
                mode = {1: "linear", 2: "bilinear", 3: "trilinear"}[dims] if b["mode"] == "linear" else "nearest"
                mods.append(nn.Upsample(scale_factor=2, mode=mode,
                                        align_corners=False if mode != "nearest" else None))
            elif op in ("residual", "concat"):
                inner, _ = layers(b["inner"], dims, c)
                post = Act(b["post_act"]["kind"]) if b.get("post_act") else None
                mods.append(Branch(op, inner, post))
                if op == "concat":
                    c += b["inner"][0]["cout"]
            elif op == "embedding":
                mods.append(nn.Embedding(b["vocab"], b["d"]))
            elif op == "posemb":
                mods.append(PosEmb(b))
            elif op == "linear":
                mods.append(nn.Linear(b["fin"], b["fout"], bias=b["bias"]))
            elif op in ("lstm", "gru"):
                mods.append(Recurrent(b))
            elif op == "attention":
                mods.append(Attention(b))
            elif op == "ffn":
                mods.append(Ffn(b))
            elif op == "layernorm":
                mods.append(nn.LayerNorm(b["d"]))
            elif op == "seqconv":
                mods.append(SeqConv(b))
            else:
                raise ValueError("unknown block %s" % op)
        return nn.Sequential(*mods), c

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            dims = net.get("input", {}).get("dims", 1)
            self.body, _ = layers(net["blocks"], dims, 0)
            h = net["head"]
            self.head_kind = h["op"]
            if h["op"] == "pool_linear":
                if h["hidden"]:
                    self.fc = nn.Sequential(nn.Linear(h["channels"], h["hidden"]), nn.ReLU(inplace=True),
                                            nn.Linear(h["hidden"], h["classes"]))
                else:
                    self.fc = nn.Linear(h["channels"], h["classes"])
            elif h["op"] == "seq_linear":
                self.fc = nn.Linear(h["d"], h["classes"])
            else:  # tied: the embedding's weight is the output projection
                emb = self.body[0]
                self.proj = nn.Linear(h["d"], emb.embedding_dim)
                self.fc = nn.Linear(emb.embedding_dim, emb.num_embeddings, bias=False)
                self.fc.weight = emb.weight
            self.reduce = h.get("reduce", "mean")

        def forward(self, x):
            y = self.body(x)
            if self.head_kind == "pool_linear":
                y = torch.flatten(y.mean(dim=tuple(range(2, y.dim()))), 1) if y.dim() > 2 else y
                return self.fc(y)
            if self.reduce == "mean":
                y = y.mean(dim=1)
            elif self.reduce == "first":
                y = y[:, 0]
            else:
                y = y[:, -1]
            if self.head_kind == "tied_head":
                y = self.proj(y)
            return self.fc(y)

    return Net()


def make_spec(net: dict):
    """A tools/models.py ModelSpec for the network (so measure_step.measure() runs it)."""
    import torch
    import models
    inp = net["input"]
    label_shape = ()
    if net["kind"] in modern.KINDS:
        inputs, label_shape = modern.input_specs(net)
    elif net["kind"] == "tokens":
        inputs = (models.InputSpec("input", (inp["seq"],), torch.int64, high=inp["vocab"]),)
    elif net["kind"] == "sequence":
        inputs = (models.InputSpec("input", (inp["seq"], inp["features"]), torch.float32),)
    else:
        inputs = (models.InputSpec("input", (inp["channels"],) + (inp["size"],) * inp["dims"], torch.float32),)
    name = record_name(generator_of(net), net["seed"])
    return models.ModelSpec("random_" + name, "random net " + name,
                            lambda: build_module(net), inputs, net["head"]["classes"], label_shape=label_shape,
                            in_zoo=False, validation_batches=(net["batch"],))


def export_onnx(net: dict, spec, onnx_path: str) -> None:
    """Exports the net (make_spec(net)) to onnx_path in TRAINING mode with a dynamic batch; torch is imported."""
    import torch
    model = spec.build()
    inputs = spec.example_inputs(net["batch"])
    names = [i.name for i in spec.inputs]
    axes = {n: {0: "batch"} for n in names + ["logits"]}
    torch.onnx.export(model, tuple(inputs), onnx_path, opset_version=net["opset"],
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=names, output_names=["logits"], dynamic_axes=axes)


def measure_one(seed: int, out_dir: str, kind: str = "classic") -> None:
    """Measures the step, exports the ONNX; writes NAME.json (and NAME.onnx), NAME = record_name().
    torch is imported."""
    import measure_step
    net = describe_kind(kind, seed)
    spec = make_spec(net)
    record = {"seed": seed, "net": net, "families": families(net)}
    try:
        ref = measure_step.measure(spec, net["batch"], net["optimizer"], measure_step.Tracker())
    except Exception as e:  # noqa: BLE001 (a net torch cannot train is reported, not fatal)
        record["error"] = "measure: %s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:200])
        ref = None
    onnx_path = os.path.join(out_dir, record_name(kind, seed) + ".onnx")
    if ref is not None:
        record["reference"] = ref
        try:
            export_onnx(net, spec, onnx_path)
            record["onnx"] = onnx_path
        except Exception as e:  # noqa: BLE001
            record["error"] = "export: %s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:200])
    with open(os.path.join(out_dir, record_name(kind, seed) + ".json"), "w") as f:
        json.dump(record, f)


def worker(seeds: list, out_dir: str, tracker: str | None, kind: str = "classic") -> int:
    """Imports torch once under the tracker, then measures each seed in a forked child: every row
    starts from the same clean process (no allocation, oneDNN kernel or optimizer of an earlier
    row is alive), without paying torch's start-up per row."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.path.insert(0, HERE)
    import measure_step
    measure_step.reexec_with_tracker(tracker)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    import torch.onnx  # noqa: F401 (imported before forking)
    import models  # noqa: F401
    torch.set_num_threads(1)
    for seed in seeds:
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                measure_one(seed, out_dir, kind)
            except BaseException as e:  # noqa: BLE001
                print("seed %d: %s" % (seed, e), file=sys.stderr)
                code = 1
            sys.stderr.flush()
            os._exit(code)
        os.waitpid(pid, 0)
    return 0


# ---------------------------------------------------------------------------------------------
# Comparing with the planner.


def plan(oomguard: str, onnx_path: str, batch: int, optimizer: str, extra: list = ()) -> dict:
    cmd = [oomguard, "plan", onnx_path, "--target", "cpu", "--batch", str(batch), "--optimizer", optimizer,
           "--loss", "cross_entropy", "--json"] + list(extra)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    if p.returncode not in (0, 1):
        lines = p.stderr.strip().splitlines()
        return {"error": "exit %d: %s" % (p.returncode, lines[-1] if lines else "")}
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        return {"error": "not JSON (%s)" % e}


def rel(pred, meas):
    if pred is None or not meas:
        return None
    return (pred - meas) / meas


def inplace_hint(record: dict) -> list:
    """--inplace for the net: the exported nodes of its inplace=True modules, found from the net's
    description (the module is built again, not run) and the ONNX file's node names, the way
    oomguard.export() writes them into the metadata (python/oomguard/inplace.py)."""
    import onnx
    import export_hints  # the package's pure-Python files alone: its built extension is not needed
    inplace = export_hints.package_module("inplace")
    model = build_module(record["net"])
    graph = onnx.load(record["onnx"], load_external_data=False).graph
    names = inplace.inplace_node_names(model, [n.name for n in graph.node if n.op_type != "Constant"])
    return ["--inplace", ",".join(names) if names else "none"]


def row_for(record: dict, oomguard: str, hinted: bool = False) -> dict:
    row = {"seed": record["seed"], "kind": record["net"]["kind"], "batch": record["net"]["batch"],
           "optimizer": record["net"]["optimizer"], "opset": record["net"]["opset"],
           "families": record["families"]}
    if record.get("error"):
        row["error"] = record["error"]
        return row
    ref = record["reference"]
    p = plan(oomguard, record["onnx"], row["batch"], row["optimizer"])
    row["measured"] = {"peak": ref["peak_live_bytes"], "activations": ref["saved_tensor_bytes"],
                       "peak_phase": ref["peak_phase"], "nontensor": ref["nontensor_live_bytes"]}
    if p.get("error"):
        row["error"] = "plan: " + p["error"]
        return row
    row["predicted"] = {"peak": p["peak_allocated_bytes"], "activations": p["bytes"]["activations_saved"],
                        "peak_phase": p.get("peak_phase")}
    row["warnings"] = p.get("warnings", [])
    row["rel_error"] = {"peak": rel(p["peak_allocated_bytes"], ref["peak_live_bytes"]),
                        "activations": rel(p["bytes"]["activations_saved"], ref["saved_tensor_bytes"])}
    if "peak_allocated_range_bytes" in p:
        lo, hi = p["peak_allocated_range_bytes"]["low"], p["peak_allocated_range_bytes"]["high"]
        row["predicted"]["peak_range"] = [lo, hi]
        row["unsure"] = p["inplace"]["unsure"]
        # The measured peak within the range, or how far outside it (relative to the measurement).
        m = ref["peak_live_bytes"]
        row["rel_error"]["peak_range"] = 0.0 if lo <= m <= hi else rel(lo if m < lo else hi, m)
    if hinted:
        h = plan(oomguard, record["onnx"], row["batch"], row["optimizer"], inplace_hint(record))
        if h.get("error"):
            row["error"] = "plan (hinted): " + h["error"]
            return row
        row["hint"] = h["inplace"]["nodes"]
        row["predicted"]["peak_hinted"] = h["peak_allocated_bytes"]
        row["predicted"]["activations_hinted"] = h["bytes"]["activations_saved"]
        row["rel_error"]["peak_hinted"] = rel(h["peak_allocated_bytes"], ref["peak_live_bytes"])
        row["rel_error"]["activations_hinted"] = rel(h["bytes"]["activations_saved"], ref["saved_tensor_bytes"])
    return row


def stats(values: list) -> dict:
    v = sorted(abs(x) for x in values if x is not None)
    if not v:
        return {"n": 0}
    p90 = v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
    return {"n": len(v), "median": statistics.median(v), "p90": p90, "max": v[-1]}


def summarize(rows: list, targets: dict) -> dict:
    ok = [r for r in rows if r.get("rel_error")]
    s = {"rows": len(rows), "compared": len(ok),
         "export_failures": sum(1 for r in rows if str(r.get("error", "")).startswith("export")),
         "measure_failures": sum(1 for r in rows if str(r.get("error", "")).startswith("measure")),
         "plan_failures": sum(1 for r in rows if str(r.get("error", "")).startswith("plan")),
         "peak": stats([r["rel_error"]["peak"] for r in ok]),
         "activations": stats([r["rel_error"]["activations"] for r in ok])}
    fam = {}
    for r in ok:
        for f in r["families"]:
            fam.setdefault(f, []).append(r)
    s["by_family"] = {f: {"nets": len(rs), "peak": stats([r["rel_error"]["peak"] for r in rs]),
                          "activations": stats([r["rel_error"]["activations"] for r in rs])}
                      for f, rs in sorted(fam.items())}
    if any("peak_hinted" in r["rel_error"] for r in ok):  # run --inplace-hint
        s["peak_hinted"] = stats([r["rel_error"].get("peak_hinted") for r in ok])
        s["activations_hinted"] = stats([r["rel_error"].get("activations_hinted") for r in ok])
        for f, rs in fam.items():
            s["by_family"][f]["peak_hinted"] = stats([r["rel_error"].get("peak_hinted") for r in rs])
    if any("peak_range" in r["rel_error"] for r in ok):
        s["unsure_nets"] = sum(1 for r in ok if r.get("unsure"))
        s["peak_within_range"] = sum(1 for r in ok if r["rel_error"].get("peak_range") == 0.0)
        s["peak_range_miss"] = stats([r["rel_error"].get("peak_range") for r in ok])
    pk, ac = s["peak"], s["activations"]
    s["targets"] = targets
    s["pass"] = bool(pk["n"] and s["plan_failures"] == 0 and pk["median"] <= targets["peak_median"]
                     and pk["p90"] <= targets["peak_p90"] and pk["max"] <= targets["peak_max"]
                     and ac["median"] <= targets["activations_median"])
    return s


def parse_seeds(text: str) -> list:
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def measure_seeds(seeds: list, tracker: str | None, jobs: int, work: str, quiet: bool,
                  kinds: tuple = ("classic",)) -> list:
    records = []
    for kind in kinds:
        todo = [s for s in seeds if not os.path.exists(os.path.join(work, record_name(kind, s) + ".json"))]
        chunks = [todo[i::jobs] for i in range(jobs)]
        procs = []
        for chunk in chunks:
            if not chunk:
                continue
            cmd = [sys.executable, os.path.abspath(__file__), "worker", "--dir", work, "--kind", kind] + \
                [str(s) for s in chunk]
            if tracker:
                cmd += ["--tracker", tracker]
            procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                          stderr=None if not quiet else subprocess.DEVNULL))
        for p in procs:
            p.wait()
        for s in seeds:
            path = os.path.join(work, record_name(kind, s) + ".json")
            if os.path.exists(path):
                with open(path) as f:
                    records.append(json.load(f))
            else:
                net = describe_kind(kind, s)
                records.append({"seed": s, "net": net, "families": families(net),
                                "error": "measure: the measuring process died (see stderr)"})
    return records


def print_summary(s: dict) -> None:
    def f(st):
        if not st.get("n"):
            return "n/a"
        return "median %5.2f%%  p90 %6.2f%%  max %6.2f%%" % (100 * st["median"], 100 * st["p90"], 100 * st["max"])
    print("nets %d, compared %d (export failures %d, measure failures %d, plan failures %d)" % (
        s["rows"], s["compared"], s["export_failures"], s["measure_failures"], s["plan_failures"]))
    print("peak         %s" % f(s["peak"]))
    print("activations  %s" % f(s["activations"]))
    if "peak_hinted" in s:
        print("peak hinted  %s   (--inplace from the net's description)" % f(s["peak_hinted"]))
        print("saved hinted %s" % f(s["activations_hinted"]))
    if "peak_within_range" in s:
        print("measured peak within the plan's in-place range: %d of %d (%d unsure); outside by %s" % (
            s["peak_within_range"], s["compared"], s["unsure_nets"], f(s["peak_range_miss"])))
    for fam, st in s["by_family"].items():
        hinted = ("  | hinted %s" % f(st["peak_hinted"])) if "peak_hinted" in st else ""
        print("  %-22s %4d nets  peak %s  | saved %s%s" % (fam, st["nets"], f(st["peak"]), f(st["activations"]),
                                                            hinted))
    print("verdict: %s" % ("PASS" if s["pass"] else "FAIL"))


def load_average() -> list:
    try:
        return [float(x) for x in open("/proc/loadavg").read().split()[:3]]
    except OSError:
        return []


def describe_command(args) -> int:
    if args.write or args.verify:
        if args.write:
            digests = describe_digests(list(KINDS), parse_seeds(args.digest_seeds))
            with open(args.write, "w") as f:
                json.dump({"what": "sha256 of each net's canonical description (tools/random_nets.py describe "
                           "--verify checks it): the generators may not change a seed's network",
                           "seeds": args.digest_seeds, "digests": digests}, f, indent=1, sort_keys=True)
                f.write("\n")
            return 0
        with open(args.verify) as f:
            stored = json.load(f)["digests"]
        changed = []
        for kind, by_seed in stored.items():
            if kind not in KINDS:
                changed.append("%s: unknown kind" % kind)
                continue
            now = describe_digests([kind], [int(s) for s in by_seed])[kind]
            changed += ["%s seed %s" % (kind, s) for s, d in by_seed.items() if now[s] != d]
        missing = [k for k in KINDS if k not in stored]
        for line in changed + ["%s: no stored digests" % k for k in missing]:
            print("random_nets describe: changed: %s" % line, file=sys.stderr)
        if not changed and not missing:
            print("random_nets describe: %d nets unchanged" % sum(len(v) for v in stored.values()))
        return 1 if changed or missing else 0
    if args.seed is None:
        print("random_nets: describe needs SEED (or --verify/--write)", file=sys.stderr)
        return 2
    net = describe_kind(args.kind, args.seed)
    print(json.dumps({"net": net, "families": families(net)}, indent=1))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p1 = sub.add_parser("worker")
    p1.add_argument("seeds", type=int, nargs="+")
    p1.add_argument("--dir", required=True)
    p1.add_argument("--tracker")
    p1.add_argument("--kind", choices=KINDS, default="classic")
    pd = sub.add_parser("describe")
    pd.add_argument("seed", type=int, nargs="?")
    pd.add_argument("--kind", choices=KINDS, default="classic")
    pd.add_argument("--verify", metavar="JSON",
                    help="check that every (kind, seed) digest in JSON (written by --write) is unchanged; "
                    "exit 1 naming each that changed")
    pd.add_argument("--write", metavar="JSON", help="write the digests of --digest-seeds for every kind")
    pd.add_argument("--digest-seeds", default="0-30,100000-100004",
                    help="the seeds --write fingerprints (default 0-30,100000-100004)")
    for name in ("run", "check"):
        p = sub.add_parser(name)
        p.add_argument("--oomguard", required=True)
        p.add_argument("--tracker")
        p.add_argument("--jobs", type=int, default=1)
        p.add_argument("--out")
        p.add_argument("--quiet", action="store_true")
        if name == "run":
            p.add_argument("--kinds", default="classic",
                           help="comma-separated generators: %s (default classic: the generator before the "
                           "modern kinds, every seed unchanged); each seed is measured once per kind" %
                           ", ".join(KINDS))
            p.add_argument("--seeds", required=True, help="e.g. 0-99 or 100000-100299")
            p.add_argument("--keep", help="keep the measured records and ONNX files in this folder; "
                           "seeds already measured there are not measured again")
            p.add_argument("--inplace-hint", action="store_true",
                           help="also plan each net with --inplace naming its inplace=True activations (from the "
                           "net's description) and report that figure beside the plain export's")
    args = parser.parse_args()

    if args.cmd == "describe":
        return describe_command(args)
    if args.cmd == "worker":
        return worker(args.seeds, args.dir, args.tracker, args.kind)

    if not (os.path.isfile(args.oomguard) and os.access(args.oomguard, os.X_OK)):
        print("random_nets: %s is not an executable" % args.oomguard, file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("random_nets: --jobs must be positive", file=sys.stderr)
        return 2
    kinds = ("classic",)
    if args.cmd == "run":
        try:
            seeds = parse_seeds(args.seeds)
        except ValueError:
            print("random_nets: --seeds takes ranges like 0-99,120", file=sys.stderr)
            return 2
        kinds = tuple(k for k in args.kinds.split(",") if k)
        if not kinds or any(k not in KINDS for k in kinds):
            print("random_nets: --kinds takes a comma-separated list of %s" % ", ".join(KINDS), file=sys.stderr)
            return 2
        targets = TARGETS
    else:
        seeds = CHECK_SEEDS
        targets = CHECK_TARGETS
    if not seeds:
        print("random_nets: no seeds", file=sys.stderr)
        return 2
    rng = "report" if min(seeds) >= REPORT_SEEDS_START else ("tuning" if max(seeds) < REPORT_SEEDS_START else "mixed")
    load_before = load_average()
    t0 = time.time()
    keep = getattr(args, "keep", None)
    if keep:
        os.makedirs(keep, exist_ok=True)
        records = measure_seeds(seeds, args.tracker, args.jobs, keep, args.quiet, kinds)
        rows = [row_for(r, args.oomguard, getattr(args, "inplace_hint", False)) for r in records]
    else:
        with tempfile.TemporaryDirectory(prefix="oomguard_random_nets_") as work:
            records = measure_seeds(seeds, args.tracker, args.jobs, work, args.quiet, kinds)
            rows = [row_for(r, args.oomguard, getattr(args, "inplace_hint", False)) for r in records]
    s = summarize(rows, targets)
    print_summary(s)
    if args.out:
        sys.path.insert(0, HERE)
        import measure_step
        torch_version = next((r["reference"]["torch_version"] for r in records if r.get("reference")), None)
        result = {"what": "oomguard plan --target cpu vs real PyTorch CPU steps of random networks",
                  "seed_range": rng, "seeds": [min(seeds), max(seeds), len(seeds)], "kinds": list(kinds),
                  "command": " ".join(["tools/random_nets.py"] + sys.argv[1:]),
                  "date": measure_step.now_utc(), "machine": measure_step.machine(),
                  "load_average_before": load_before, "load_average_after": load_average(),
                  "wall_seconds": round(time.time() - t0, 1), "torch_version": torch_version,
                  "summary": s, "rows": rows}
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return 0 if s["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
