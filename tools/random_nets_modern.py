"""The modern kinds of tools/random_nets.py: ConvNeXt-style, Swin-style and sequence-tagger networks.

tools/random_nets.py's own generator (kind `classic`) draws stems and blocks from the classic
families; these three kinds draw whole architectures that the planner was not tuned on:

  modern2d  ConvNeXt-style: patchify stem (+ LayerNorm over channels), stages of blocks — depthwise
            7x7 conv, LayerNorm over channels (permute to channels-last + nn.LayerNorm, or a
            channels-first LayerNorm written with mean/var), a 4x MLP (Linear, or 1x1 convs), GELU,
            layer-scale gamma, residual — and downsampling layers (LayerNorm + 2x2 stride-2 conv);
  window    Swin-style: patch-embedding conv, LayerNorm, window partition by view/permute/reshape,
            optional cyclic shift (torch.roll) with its attention mask (a buffer, or built in
            forward as torchvision does), window attention with a learned relative-position bias
            table gathered by index, MLP, residual; patch merging by strided slicing + cat + Linear;
  tagger    sequence taggers: nn.Embedding (+ an optional CNN char encoder), a 1-2 layer nn.LSTM or
            nn.GRU (bidirectional or not, batch_first or not, dropout between layers), a per-token
            Linear and a cross-entropy over every token (logits [B, tags, T], labels [B, T]).

A net is plain data drawn from random.Random("KIND:SEED") (no torch needed to describe it), so a
seed of one kind never shares a random stream with another kind or with the classic generator.
"""

from __future__ import annotations

import random

KINDS = ("modern2d", "window", "tagger")
OPTIMIZERS = ("sgd", "momentum", "adam")


def _common(r: random.Random, seed: int, kind: str) -> dict:
    return {"seed": seed, "kind": kind, "opset": r.choice([13, 14, 14, 17]), "optimizer": r.choice(OPTIMIZERS)}


def _describe_modern2d(r: random.Random, net: dict) -> None:
    net["batch"] = r.choice([2, 3, 4, 6, 8])
    size = r.choice([32, 48, 64])
    patch = r.choice([2, 4])
    net["input"] = {"channels": 3, "size": size, "dims": 2}
    grid = size // patch
    c = r.choice([16, 24, 32, 48])
    net["stem"] = {"patch": patch, "c": c, "norm": r.choice(["permute", "manual"])}
    ln = r.choice(["permute", "permute", "manual"])
    net["block"] = {"k": 7, "ln": ln, "mlp": "linear" if ln == "permute" else r.choice(["linear", "conv"]),
                    "expansion": 4, "layer_scale": r.random() < 0.8}
    stages = []
    for i in range(r.randint(1, 3)):
        if i > 0:
            if grid < 4:
                break
            grid //= 2
            stages.append({"op": "down", "cin": c, "cout": 2 * c, "norm": r.choice(["permute", "manual"])})
            c *= 2
        stages.append({"op": "stage", "c": c, "depth": r.randint(1, 3), "grid": grid})
    net["stages"] = stages
    net["head"] = {"op": "pool_ln_linear", "channels": c, "classes": r.choice([5, 10, 37])}


def _describe_window(r: random.Random, net: dict) -> None:
    net["batch"] = r.choice([2, 3, 4, 6, 8])
    w = r.choice([4, 4, 7])
    nst = r.randint(1, 3)
    m = r.choice([1, 2])
    grid = w * m * 2 ** (nst - 1)
    if grid > 32:
        grid //= m
    patch = r.choice([2, 4])
    if grid * patch > 112:
        patch = 2
    net["input"] = {"channels": 3, "size": grid * patch, "dims": 2}
    c = r.choice([16, 24, 32])
    head_dim = r.choice([8, 16])
    net["embed"] = {"patch": patch, "c": c, "norm": r.random() < 0.8}
    net["attn"] = {"window": w, "shift": r.random() < 0.7, "mask": r.choice(["buffer", "forward"]),
                   "qkv": r.choice(["index", "unbind"]), "attn_drop": r.choice([0.0, 0.0, 0.1]),
                   "drop": r.choice([0.0, 0.0, 0.1]), "mlp_ratio": r.choice([4, 4, 2])}
    stages = []
    for i in range(nst):
        if i > 0:
            stages.append({"op": "merge", "cin": c, "cout": 2 * c, "grid": grid})
            grid //= 2
            c *= 2
        stages.append({"op": "stage", "c": c, "depth": r.choice([1, 2, 2]), "heads": max(1, c // head_dim),
                       "grid": grid})
    net["stages"] = stages
    net["head"] = {"op": "ln_pool_linear", "channels": c, "classes": r.choice([5, 10, 37])}


def _describe_tagger(r: random.Random, net: dict) -> None:
    net["batch"] = r.choice([2, 4, 8, 16])
    seq = r.choice([16, 24, 32, 48, 64])
    net["input"] = {"seq": seq, "vocab": r.choice([100, 500, 2000])}
    net["emb"] = {"d": r.choice([16, 32, 64]), "dropout": r.choice([0.0, 0.0, 0.2, 0.5])}
    if r.random() < 0.35:
        net["input"]["chars"] = {"len": r.choice([6, 8, 12]), "vocab": r.choice([30, 60])}
        net["char_cnn"] = {"emb": r.choice([8, 16]), "filters": r.choice([16, 32]), "k": 3}
    else:
        net["char_cnn"] = None
    layers = r.choice([1, 1, 2])
    net["rnn"] = {"cell": r.choice(["lstm", "gru"]), "layers": layers, "bidir": r.random() < 0.6,
                  "batch_first": r.random() < 0.5, "hidden": r.choice([16, 32, 64]),
                  "dropout": r.choice([0.0, 0.1, 0.3]) if layers == 2 else 0.0}
    # Dropout between layers inside nn.LSTM/nn.GRU (torch 1.13 cannot export it in training mode:
    # counted as an export failure) or between two stacked one-layer modules with nn.Dropout.
    net["rnn"]["dropout_in"] = r.choice(["module", "stacked"]) if net["rnn"]["dropout"] else "module"
    net["head"] = {"op": "token_linear", "classes": r.choice([5, 9, 17])}


def describe(kind: str, seed: int) -> dict:
    r = random.Random("%s:%d" % (kind, seed))
    net = _common(r, seed, kind)
    {"modern2d": _describe_modern2d, "window": _describe_window, "tagger": _describe_tagger}[kind](r, net)
    return net


def families(net: dict) -> list:
    """The op families a network contains (for the per-family error table)."""
    kind = net["kind"]
    out = {"kind:" + kind, "opset:%d" % net["opset"]}
    if kind == "modern2d":
        b = net["block"]
        out |= {"ln:" + b["ln"], "mlp:" + b["mlp"], "stem_ln:" + net["stem"]["norm"]}
        if b["layer_scale"]:
            out.add("layer_scale")
        for s in net["stages"]:
            if s["op"] == "down":
                out.add("down_ln:" + s["norm"])
    elif kind == "window":
        a = net["attn"]
        shifted = a["shift"] and any(s["op"] == "stage" and s["depth"] > 1 and s["grid"] > a["window"]
                                     for s in net["stages"])
        if shifted:
            out |= {"roll", "mask:" + a["mask"]}
        out.add("qkv:" + a["qkv"])
        if a["attn_drop"] or a["drop"]:
            out.add("dropout")
        if any(s["op"] == "merge" for s in net["stages"]):
            out.add("patch_merging")
        out.add("window:%d" % a["window"])
    else:
        rn = net["rnn"]
        out.add("rnn:" + rn["cell"])
        out.add("layers:%d" % rn["layers"])
        if rn["bidir"]:
            out.add("bidir")
        out.add("batch_first" if rn["batch_first"] else "seq_first")
        if rn["dropout"]:
            out.add("rnn_dropout:" + rn["dropout_in"])
        if net["emb"]["dropout"]:
            out.add("emb_dropout")
        if net["char_cnn"]:
            out.add("char_cnn")
    return sorted(out)


def input_specs(net: dict):
    """(InputSpec tuple, label_shape) for tools/models.py."""
    import torch
    import models
    inp = net["input"]
    if net["kind"] == "tagger":
        specs = [models.InputSpec("input", (inp["seq"],), torch.int64, high=inp["vocab"])]
        if inp.get("chars"):
            specs.append(models.InputSpec("chars", (inp["seq"], inp["chars"]["len"]), torch.int64,
                                          high=inp["chars"]["vocab"]))
        return tuple(specs), (inp["seq"],)
    return (models.InputSpec("input", (inp["channels"], inp["size"], inp["size"]), torch.float32),), ()


# ---------------------------------------------------------------------------------------------
# Building the torch module (only in the measuring subprocess).


def build_module(net: dict):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class ChannelsFirstLayerNorm(nn.Module):
        """LayerNorm over dim 1 of [B, C, H, W]: either written with mean/var (ConvNeXt's
        channels_first LayerNorm) or by permuting to channels-last around nn.LayerNorm."""

        def __init__(self, c, how):
            super().__init__()
            self.how = how
            if how == "manual":
                self.weight = nn.Parameter(torch.ones(c))
                self.bias = nn.Parameter(torch.zeros(c))
            else:
                self.ln = nn.LayerNorm(c, eps=1e-6)

        def forward(self, x):
            if self.how == "manual":
                u = x.mean(1, keepdim=True)
                s = (x - u).pow(2).mean(1, keepdim=True)
                x = (x - u) / torch.sqrt(s + 1e-6)
                return self.weight[:, None, None] * x + self.bias[:, None, None]
            return self.ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    class ConvNeXtBlock(nn.Module):
        def __init__(self, c, b):
            super().__init__()
            self.b = b
            hidden = b["expansion"] * c
            self.dwconv = nn.Conv2d(c, c, b["k"], padding=b["k"] // 2, groups=c)
            if b["ln"] == "permute":
                self.norm = nn.LayerNorm(c, eps=1e-6)
            else:
                self.norm = ChannelsFirstLayerNorm(c, "manual")
            if b["mlp"] == "linear":
                self.pw1, self.pw2 = nn.Linear(c, hidden), nn.Linear(hidden, c)
            else:
                self.pw1, self.pw2 = nn.Conv2d(c, hidden, 1), nn.Conv2d(hidden, c, 1)
            self.act = nn.GELU()
            self.gamma = nn.Parameter(1e-6 * torch.ones(c)) if b["layer_scale"] else None

        def forward(self, x):
            shortcut = x
            x = self.dwconv(x)
            if self.b["ln"] == "permute":
                x = self.norm(x.permute(0, 2, 3, 1))  # [B, H, W, C]
                channels_last = True
            else:
                x = self.norm(x)
                channels_last = False
                if self.b["mlp"] == "linear":
                    x = x.permute(0, 2, 3, 1)
                    channels_last = True
            x = self.pw2(self.act(self.pw1(x)))
            if self.gamma is not None:
                x = self.gamma * x if channels_last else self.gamma[:, None, None] * x
            if channels_last:
                x = x.permute(0, 3, 1, 2)
            return shortcut + x

    class ConvNeXt(nn.Module):
        def __init__(self):
            super().__init__()
            st = net["stem"]
            self.stem = nn.Sequential(nn.Conv2d(3, st["c"], st["patch"], stride=st["patch"]),
                                      ChannelsFirstLayerNorm(st["c"], st["norm"]))
            mods = []
            for s in net["stages"]:
                if s["op"] == "down":
                    mods.append(nn.Sequential(ChannelsFirstLayerNorm(s["cin"], s["norm"]),
                                              nn.Conv2d(s["cin"], s["cout"], 2, stride=2)))
                else:
                    mods.extend(ConvNeXtBlock(s["c"], net["block"]) for _ in range(s["depth"]))
            self.body = nn.Sequential(*mods)
            h = net["head"]
            self.norm = nn.LayerNorm(h["channels"], eps=1e-6)
            self.fc = nn.Linear(h["channels"], h["classes"])

        def forward(self, x):
            x = self.body(self.stem(x))
            return self.fc(self.norm(x.mean([-2, -1])))

    def relative_position_index(w):
        coords = torch.stack(torch.meshgrid(torch.arange(w), torch.arange(w), indexing="ij"))
        flat = torch.flatten(coords, 1)
        rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += w - 1
        rel[:, :, 1] += w - 1
        rel[:, :, 0] *= 2 * w - 1
        return rel.sum(-1).flatten()

    def shift_mask(h, w_, win, shift, device=None):
        """Swin's attention mask of a shifted window layer: [nW, N, N] with 0 / -100."""
        img = torch.zeros((h, w_), device=device)
        cnt = 0
        for hs in ((0, -win), (-win, -shift), (-shift, None)):
            for ws in ((0, -win), (-win, -shift), (-shift, None)):
                img[hs[0]:hs[1], ws[0]:ws[1]] = cnt
                cnt += 1
        m = img.view(h // win, win, w_ // win, win).permute(0, 2, 1, 3).reshape(-1, win * win)
        m = m.unsqueeze(1) - m.unsqueeze(2)
        return m.masked_fill(m != 0, float(-100.0)).masked_fill(m == 0, float(0.0))

    class WindowAttention(nn.Module):
        def __init__(self, c, heads, a):
            super().__init__()
            self.win, self.heads, self.a = a["window"], heads, a
            self.scale = (c // heads) ** -0.5
            self.qkv = nn.Linear(c, 3 * c)
            self.proj = nn.Linear(c, c)
            self.attn_drop = nn.Dropout(a["attn_drop"])
            self.proj_drop = nn.Dropout(a["drop"])
            self.table = nn.Parameter(0.02 * torch.randn((2 * self.win - 1) ** 2, heads))
            self.register_buffer("index", relative_position_index(self.win), persistent=False)

        def forward(self, x, mask):
            bw, n, c = x.shape
            qkv = self.qkv(x).reshape(bw, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
            if self.a["qkv"] == "index":
                q, k, v = qkv[0], qkv[1], qkv[2]
            else:
                q, k, v = qkv.unbind(0)
            q = q * self.scale
            attn = q @ k.transpose(-2, -1)
            bias = self.table[self.index].view(n, n, -1).permute(2, 0, 1).contiguous()
            attn = attn + bias.unsqueeze(0)
            if mask is not None:
                nw = mask.shape[0]
                attn = attn.view(bw // nw, nw, self.heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
                attn = attn.view(-1, self.heads, n, n)
            attn = self.attn_drop(attn.softmax(dim=-1))
            x = (attn @ v).transpose(1, 2).reshape(bw, n, c)
            return self.proj_drop(self.proj(x))

    class SwinBlock(nn.Module):
        def __init__(self, c, heads, grid, shift):
            super().__init__()
            a = net["attn"]
            self.grid, self.win, self.shift, self.mask_how = grid, min(a["window"], grid), shift, a["mask"]
            self.norm1, self.norm2 = nn.LayerNorm(c), nn.LayerNorm(c)
            self.attn = WindowAttention(c, heads, dict(a, window=self.win))
            hidden = a["mlp_ratio"] * c
            self.mlp = nn.Sequential(nn.Linear(c, hidden), nn.GELU(), nn.Dropout(a["drop"]),
                                     nn.Linear(hidden, c), nn.Dropout(a["drop"]))
            if shift and self.mask_how == "buffer":
                self.register_buffer("mask", shift_mask(grid, grid, self.win, shift), persistent=False)
            else:
                self.mask = None

        def forward(self, x):
            b, l, c = x.shape
            g, w = self.grid, self.win
            shortcut = x
            x = self.norm1(x).view(b, g, g, c)
            mask = self.mask
            if self.shift:
                x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
                if mask is None:
                    mask = shift_mask(g, g, w, self.shift, device=x.device)
            x = x.view(b, g // w, w, g // w, w, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, c)
            x = self.attn(x, mask)
            x = x.view(b, g // w, g // w, w, w, c).permute(0, 1, 3, 2, 4, 5).reshape(b, g, g, c)
            if self.shift:
                x = torch.roll(x, shifts=(self.shift, self.shift), dims=(1, 2))
            x = shortcut + x.reshape(b, l, c)
            return x + self.mlp(self.norm2(x))

    class PatchMerging(nn.Module):
        def __init__(self, cin, cout, grid):
            super().__init__()
            self.grid = grid
            self.norm = nn.LayerNorm(4 * cin)
            self.reduction = nn.Linear(4 * cin, cout, bias=False)

        def forward(self, x):
            b, _, c = x.shape
            x = x.view(b, self.grid, self.grid, c)
            x0, x1 = x[:, 0::2, 0::2, :], x[:, 1::2, 0::2, :]
            x2, x3 = x[:, 0::2, 1::2, :], x[:, 1::2, 1::2, :]
            x = torch.cat([x0, x1, x2, x3], -1).view(b, -1, 4 * c)
            return self.reduction(self.norm(x))

    class Swin(nn.Module):
        def __init__(self):
            super().__init__()
            e = net["embed"]
            self.embed = nn.Conv2d(3, e["c"], e["patch"], stride=e["patch"])
            self.embed_norm = nn.LayerNorm(e["c"]) if e["norm"] else nn.Identity()
            mods = []
            a = net["attn"]
            for s in net["stages"]:
                if s["op"] == "merge":
                    mods.append(PatchMerging(s["cin"], s["cout"], s["grid"]))
                    continue
                win = min(a["window"], s["grid"])
                for i in range(s["depth"]):
                    shift = win // 2 if (a["shift"] and i % 2 == 1 and s["grid"] > a["window"]) else 0
                    mods.append(SwinBlock(s["c"], s["heads"], s["grid"], shift))
            self.body = nn.Sequential(*mods)
            h = net["head"]
            self.norm = nn.LayerNorm(h["channels"])
            self.fc = nn.Linear(h["channels"], h["classes"])

        def forward(self, x):
            x = self.embed_norm(self.embed(x).flatten(2).transpose(1, 2))
            x = self.norm(self.body(x))
            return self.fc(x.mean(1))

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            inp, e, cc, rn = net["input"], net["emb"], net["char_cnn"], net["rnn"]
            self.emb = nn.Embedding(inp["vocab"], e["d"])
            self.emb_drop = nn.Dropout(e["dropout"])
            d = e["d"]
            if cc:
                self.char_emb = nn.Embedding(inp["chars"]["vocab"], cc["emb"])
                self.char_conv = nn.Conv1d(cc["emb"], cc["filters"], cc["k"], padding=cc["k"] // 2)
                d += cc["filters"]
            cls = nn.LSTM if rn["cell"] == "lstm" else nn.GRU
            self.batch_first = rn["batch_first"]
            out = rn["hidden"] * (2 if rn["bidir"] else 1)
            if rn["dropout_in"] == "stacked":
                self.rnn = nn.ModuleList([cls(d, rn["hidden"], bidirectional=rn["bidir"], batch_first=self.batch_first),
                                          cls(out, rn["hidden"], bidirectional=rn["bidir"],
                                              batch_first=self.batch_first)])
                self.between = nn.Dropout(rn["dropout"])
            else:
                self.rnn = nn.ModuleList([cls(d, rn["hidden"], num_layers=rn["layers"], bidirectional=rn["bidir"],
                                              batch_first=self.batch_first, dropout=rn["dropout"])])
            self.fc = nn.Linear(out, net["head"]["classes"])

        def forward(self, words, chars=None):
            x = self.emb(words)  # [B, T, D]
            if chars is not None:
                b, t, n = chars.shape
                ce = self.char_emb(chars.view(b * t, n)).transpose(1, 2)  # [B*T, E, N]
                ce = torch.max(F.relu(self.char_conv(ce)), dim=2).values
                x = torch.cat([x, ce.view(b, t, -1)], dim=2)
            x = self.emb_drop(x)
            if not self.batch_first:
                x = x.transpose(0, 1)
            for i, rnn in enumerate(self.rnn):
                x = rnn(self.between(x) if i else x)[0]
            y = x if self.batch_first else x.transpose(0, 1)
            return self.fc(y).transpose(1, 2)  # [B, tags, T]: cross-entropy over every token

    return {"modern2d": ConvNeXt, "window": Swin, "tagger": Tagger}[net["kind"]]()
