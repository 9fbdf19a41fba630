"""The seventh held-out set of real architectures (tools/unseen_models.py --set unseen7).

Fixed on 2026-12-07, after set 6 had been planned once (blind, inside the targets), before any of these was
exported, measured or planned. Riskier idioms on purpose: graph message passing with index_add / scatter_add and
gather, einsum-heavy attention, torch.where with float masks, top-k routing with gather, cumsum positions,
repeat_interleave, in-place residual additions (x += y, which ONNX records as out of place), a masked-fill
language model with a learned absolute position table sliced to length, an MLP with ReLU(inplace=True), a
depthwise-separable Conv1d TCN with dilation, 3-D U-Net with trilinear upsampling, a slot-attention style
iterative module, a point-cloud edge-conv with top-k neighbours, a Gumbel-softmax VQ-style bottleneck, and a
FNet-style mixer with torch.fft (which torch 1.13 may refuse to export; kept with its reason if so).

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

MODELS = [
    {"name": "gnn_index_add", "builder": "gnn_index_add", "args": {},
     "inputs": [["x", [64, 16], "float32", 0], ["edges", [2, 256], "int64", 64]], "classes": 5,
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Message passing on 64-node graphs with 256 edges per sample: gather source features, a "
                    "Linear message, index_add into destinations (batch offsets), GRU-style update, 3 rounds"},
    {"name": "einsum_attention", "builder": "einsum_attention", "args": {},
     "inputs": [["input", [48, 64], "float32", 0]], "classes": 6, "rows": [[4, "adam"], [16, "momentum"]],
     "description": "Attention written with einsum ('bqhd,bkhd->bhqk', 'bhqk,bkhd->bqhd'), torch.where on a "
                    "float band mask, 3 layers x 64, 4 heads, 48 tokens"},
    {"name": "topk_router", "builder": "topk_router", "args": {},
     "inputs": [["input", [32, 48], "float32", 0]], "classes": 4, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Mixture of 4 experts with top-1 routing: topk over gate logits, gather of the chosen "
                    "expert's output from a stacked [B, T, E, d] tensor, straight-through gate weight"},
    {"name": "cumsum_positions", "builder": "cumsum_positions", "args": {},
     "inputs": [["input_ids", [40], "int64", 1000]], "classes": 3, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Token classifier whose positions come from cumsum over a non-pad mask (RoBERTa style), "
                    "Embedding lookups, 2 encoder layers x 64"},
    {"name": "repeat_interleave_up", "builder": "repeat_interleave_up", "args": {},
     "inputs": [["input", [32, 50], "float32", 0]], "classes": 10, "label_shape": [200],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "1-D upsampler: Conv1d features repeated 4x along time with repeat_interleave, then Conv1d "
                    "decoder, per-step classes over 200 steps"},
    {"name": "inplace_residual", "builder": "inplace_residual", "args": {},
     "inputs": [["input", [3, 48, 48], "float32", 0]], "classes": 10, "rows": [[4, "sgd"], [8, "adam"]],
     "description": "ResNet-like blocks written with out += identity and nn.ReLU(inplace=True) (ONNX records "
                    "neither as in place), 48x48"},
    {"name": "gpt_learned_pos", "builder": "gpt_learned_pos", "args": {},
     "inputs": [["input_ids", [48], "int64", 2000]], "classes": 2000, "label_shape": [48],
     "rows": [[4, "adamw"], [8, "sgd"]],
     "description": "Decoder LM with a learned 128-row position table sliced to the length, masked_fill causal "
                    "attention written by hand, GELU MLP, 3 layers x 96"},
    {"name": "relu_inplace_mlp", "builder": "relu_inplace_mlp", "args": {},
     "inputs": [["input", [512], "float32", 0]], "classes": 10, "rows": [[64, "adam"], [256, "sgd"]],
     "description": "MLP 512 -> 1024 -> 1024 -> 256 with nn.ReLU(inplace=True) and Dropout"},
    {"name": "dilated_tcn_sep", "builder": "dilated_tcn_sep", "args": {},
     "inputs": [["input", [24, 400], "float32", 0]], "classes": 6, "rows": [[4, "adam"], [16, "momentum"]],
     "description": "TCN of depthwise-separable dilated Conv1d (dilations 1-16, causal left padding), PReLU, "
                    "residuals, 24 channels x 400 steps"},
    {"name": "unet3d_lite", "builder": "unet3d_lite", "args": {},
     "inputs": [["input", [1, 16, 32, 32], "float32", 0]], "classes": 3, "label_shape": [16, 32, 32],
     "rows": [[1, "adam"], [2, "sgd"]],
     "description": "3-D U-Net, 2 levels: Conv3d/BatchNorm3d/ReLU, MaxPool3d, trilinear upsampling, skip "
                    "concatenation, 16x32x32 volumes"},
    {"name": "slot_attention", "builder": "slot_attention", "args": {},
     "inputs": [["input", [64, 32], "float32", 0]], "classes": 5, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Slot attention: 4 slots, 3 iterations of softmax over slots, weighted mean, GRUCell "
                    "update and MLP, 64 input tokens"},
    {"name": "edgeconv_knn", "builder": "edgeconv_knn", "args": {},
     "inputs": [["input", [3, 256], "float32", 0]], "classes": 10, "rows": [[4, "adam"], [8, "sgd"]],
     "description": "DGCNN edge convolution: pairwise distances, top-k 8 neighbours, gather of neighbour "
                    "features, [x_j - x_i, x_i] through a 1x1 Conv2d, max over neighbours, 2 layers"},
    {"name": "gumbel_vq", "builder": "gumbel_vq", "args": {},
     "inputs": [["input", [1, 32, 32], "float32", 0]], "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Conv encoder, Gumbel-softmax over 64 codes (noise from -log(-log(u))), codebook matmul, "
                    "conv classifier on the quantised map"},
    {"name": "fnet_fft", "builder": "fnet_fft", "args": {},
     "inputs": [["input", [32, 64], "float32", 0]], "classes": 4, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "FNet-style mixer: torch.fft.fft2 real part as token mixing, LayerNorm, MLP, 2 layers"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    if kind == "gnn_index_add":
        class Net(nn.Module):
            def __init__(self, fin=16, d=64, rounds=3):
                super().__init__()
                self.rounds = rounds
                self.inp = nn.Linear(fin, d)
                self.msg = nn.Linear(d, d)
                self.upd = nn.GRUCell(d, d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x, edges):
                b, n, _ = x.shape
                h = self.inp(x).reshape(b * n, -1)
                offset = (torch.arange(b, device=x.device) * n).view(b, 1, 1)
                e = (edges + offset).permute(1, 0, 2).reshape(2, -1)  # [2, B*E]
                src, dst = e[0], e[1]
                for _ in range(self.rounds):
                    m = self.msg(h.index_select(0, src))
                    agg = torch.zeros_like(h).index_add(0, dst, m)
                    h = self.upd(agg, h)
                return self.fc(h.view(b, n, -1).mean(dim=1))
        return Net()

    if kind == "einsum_attention":
        class Layer(nn.Module):
            def __init__(self, d=64, heads=4):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                self.norm = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
                t = 48
                idx = torch.arange(t)
                band = ((idx[None, :] - idx[:, None]).abs() <= 8).float()
                self.register_buffer("band", band, persistent=False)

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(self.norm(x)).view(b, t, 3, self.heads, -1).unbind(dim=2)
                s = torch.einsum("bqhd,bkhd->bhqk", q, k) / (d // self.heads) ** 0.5
                s = torch.where(self.band > 0, s, torch.full_like(s, -1e4))
                y = torch.einsum("bhqk,bkhd->bqhd", s.softmax(-1), v).reshape(b, t, d)
                x = x + self.o(y)
                return x + self.ff(x)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.Sequential(*[Layer() for _ in range(3)])
                self.fc = nn.Linear(64, classes)

            def forward(self, x):
                return self.fc(self.layers(x).mean(dim=1))
        return Net()

    if kind == "topk_router":
        class Net(nn.Module):
            def __init__(self, d=48, experts=4):
                super().__init__()
                self.gate = nn.Linear(d, experts)
                self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
                                              for _ in range(experts)])
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                logits = self.gate(x)
                val, idx = logits.softmax(-1).topk(1, dim=-1)  # [B, T, 1]
                outs = torch.stack([e(x) for e in self.experts], dim=2)  # [B, T, E, d]
                chosen = outs.gather(2, idx.unsqueeze(-1).expand(-1, -1, -1, outs.shape[-1])).squeeze(2)
                return self.fc((x + val * chosen).mean(dim=1))
        return Net()

    if kind == "cumsum_positions":
        class Net(nn.Module):
            def __init__(self, d=64):
                super().__init__()
                self.emb = nn.Embedding(1000, d, padding_idx=0)
                self.pos = nn.Embedding(64, d)
                layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.1, batch_first=True)
                self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                mask = (ids != 0).long()
                positions = torch.cumsum(mask, dim=1) * mask
                x = self.emb(ids) + self.pos(positions)
                return self.fc(self.encoder(x).mean(dim=1))
        return Net()

    if kind == "repeat_interleave_up":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Sequential(nn.Conv1d(32, 64, 3, padding=1), nn.ReLU())
                self.dec = nn.Sequential(nn.Conv1d(64, 64, 5, padding=2), nn.ReLU(), nn.Conv1d(64, classes, 1))

            def forward(self, x):
                return self.dec(self.enc(x).repeat_interleave(4, dim=2))
        return Net()

    if kind == "inplace_residual":
        class Block(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
                self.b1 = nn.BatchNorm2d(cout)
                self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
                self.b2 = nn.BatchNorm2d(cout)
                self.relu = nn.ReLU(inplace=True)
                self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                             if stride != 1 or cin != cout else None)

            def forward(self, x):
                identity = x if self.down is None else self.down(x)
                out = self.relu(self.b1(self.c1(x)))
                out = self.b2(self.c2(out))
                out += identity
                return self.relu(out)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32),
                                          nn.ReLU(inplace=True))
                self.blocks = nn.Sequential(Block(32, 32, 1), Block(32, 64, 2), Block(64, 64, 1), Block(64, 128, 2))
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                return self.fc(self.blocks(self.stem(x)).mean(dim=(2, 3)))
        return Net()

    if kind == "gpt_learned_pos":
        class Block(nn.Module):
            def __init__(self, d=96, heads=4):
                super().__init__()
                self.heads = heads
                self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.qkv = nn.Linear(d, 3 * d)
                self.proj = nn.Linear(d, d)
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
                q = q.view(b, t, self.heads, -1).transpose(1, 2)
                k = k.view(b, t, self.heads, -1).transpose(1, 2)
                v = v.view(b, t, self.heads, -1).transpose(1, 2)
                att = (q @ k.transpose(-2, -1)) * (1.0 / (d // self.heads) ** 0.5)
                mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
                att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
                y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
                x = x + self.proj(y)
                return x + self.mlp(self.ln2(x))

        class Net(nn.Module):
            def __init__(self, d=96):
                super().__init__()
                self.tok = nn.Embedding(2000, d)
                self.pos = nn.Parameter(torch.randn(128, d) * 0.02)
                self.blocks = nn.Sequential(*[Block(d) for _ in range(3)])
                self.ln = nn.LayerNorm(d)
                self.head = nn.Linear(d, classes, bias=False)

            def forward(self, ids):
                x = self.tok(ids) + self.pos[: ids.shape[1]]
                return self.head(self.ln(self.blocks(x))).transpose(1, 2)
        return Net()

    if kind == "relu_inplace_mlp":
        return nn.Sequential(nn.Linear(512, 1024), nn.ReLU(inplace=True), nn.Dropout(0.2), nn.Linear(1024, 1024),
                             nn.ReLU(inplace=True), nn.Dropout(0.2), nn.Linear(1024, 256), nn.ReLU(inplace=True),
                             nn.Linear(256, classes))

    if kind == "dilated_tcn_sep":
        class Block(nn.Module):
            def __init__(self, c, dilation):
                super().__init__()
                self.pad = 2 * dilation
                self.dw = nn.Conv1d(c, c, 3, dilation=dilation, groups=c)
                self.pw = nn.Conv1d(c, c, 1)
                self.act = nn.PReLU(c)

            def forward(self, x):
                return x + self.act(self.pw(self.dw(F.pad(x, (self.pad, 0)))))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Conv1d(24, 64, 1)
                self.blocks = nn.Sequential(*[Block(64, 2 ** i) for i in range(5)])
                self.fc = nn.Linear(64, classes)

            def forward(self, x):
                return self.fc(self.blocks(self.inp(x)).mean(dim=2))
        return Net()

    if kind == "unet3d_lite":
        def double(cin, cout):
            return nn.Sequential(nn.Conv3d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU(),
                                 nn.Conv3d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU())

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.d1, self.d2 = double(1, 8), double(8, 16)
                self.u1 = double(16 + 8, 8)
                self.out = nn.Conv3d(8, classes, 1)

            def forward(self, x):
                s1 = self.d1(x)
                b = self.d2(F.max_pool3d(s1, 2))
                up = F.interpolate(b, scale_factor=2, mode="trilinear", align_corners=False)
                return self.out(self.u1(torch.cat([up, s1], dim=1)))
        return Net()

    if kind == "slot_attention":
        class Net(nn.Module):
            def __init__(self, fin=32, d=64, slots=4, iters=3):
                super().__init__()
                self.iters, self.d = iters, d
                self.slots = nn.Parameter(torch.randn(1, slots, d) * 0.1)
                self.inp = nn.Linear(fin, d)
                self.k, self.v, self.q = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
                self.norm_in, self.norm_s = nn.LayerNorm(d), nn.LayerNorm(d)
                self.gru = nn.GRUCell(d, d)
                self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                b = x.shape[0]
                x = self.norm_in(self.inp(x))
                k, v = self.k(x), self.v(x)
                s = self.slots.expand(b, -1, -1)
                for _ in range(self.iters):
                    q = self.q(self.norm_s(s))
                    att = torch.softmax(torch.einsum("bnd,bsd->bns", k, q) / self.d ** 0.5, dim=-1) + 1e-8
                    att = att / att.sum(dim=1, keepdim=True)
                    upd = torch.einsum("bns,bnd->bsd", att, v)
                    s = self.gru(upd.reshape(-1, self.d), s.reshape(-1, self.d)).view(b, -1, self.d)
                    s = s + self.mlp(s)
                return self.fc(s.mean(dim=1))
        return Net()

    if kind == "edgeconv_knn":
        def edge_features(x, k):
            # x [B, C, N]: the k nearest neighbours of each point, [x_j - x_i, x_i] -> [B, 2C, N, k]
            inner = -2 * torch.matmul(x.transpose(2, 1), x)
            xx = (x * x).sum(dim=1, keepdim=True)
            dist = -xx - inner - xx.transpose(2, 1)
            idx = dist.topk(k=k, dim=-1)[1]  # [B, N, k]
            b, c, n = x.shape
            base = (torch.arange(b, device=x.device) * n).view(-1, 1, 1)
            flat = (idx + base).view(-1)
            pts = x.transpose(2, 1).reshape(b * n, c)
            nb = pts[flat].view(b, n, k, c)
            center = x.transpose(2, 1).unsqueeze(2).expand(-1, -1, k, -1)
            return torch.cat([nb - center, center], dim=3).permute(0, 3, 1, 2)

        class Net(nn.Module):
            def __init__(self, k=8):
                super().__init__()
                self.k = k
                self.c1 = nn.Sequential(nn.Conv2d(6, 64, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2))
                self.c2 = nn.Sequential(nn.Conv2d(128, 64, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2))
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                x1 = self.c1(edge_features(x, self.k)).amax(dim=-1)
                x2 = self.c2(edge_features(x1, self.k)).amax(dim=-1)
                return self.fc(torch.cat([x1, x2], dim=1).amax(dim=-1))
        return Net()

    if kind == "gumbel_vq":
        class Net(nn.Module):
            def __init__(self, codes=64, d=32):
                super().__init__()
                self.enc = nn.Sequential(nn.Conv2d(1, 32, 4, 2, 1), nn.ReLU(), nn.Conv2d(32, codes, 4, 2, 1))
                self.codebook = nn.Parameter(torch.randn(codes, d) * 0.1)
                self.cls = nn.Sequential(nn.Conv2d(d, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                         nn.Flatten(), nn.Linear(64, classes))

            def forward(self, x):
                logits = self.enc(x)  # [B, codes, 8, 8]
                u = torch.rand_like(logits).clamp(1e-6, 1 - 1e-6)
                y = torch.softmax((logits - torch.log(-torch.log(u))) / 0.5, dim=1)
                z = torch.einsum("bchw,cd->bdhw", y, self.codebook)
                return self.cls(z)
        return Net()

    if kind == "fnet_fft":
        class Layer(nn.Module):
            def __init__(self, d=64):
                super().__init__()
                self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

            def forward(self, x):
                x = self.n1(x + torch.fft.fft2(x).real)
                return self.n2(x + self.ff(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.Sequential(Layer(), Layer())
                self.fc = nn.Linear(64, classes)

            def forward(self, x):
                return self.fc(self.layers(x).mean(dim=1))
        return Net()
    raise ValueError("unknown builder %s" % kind)
