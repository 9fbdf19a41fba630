"""The fourth held-out set of real architectures (tools/unseen_models.py --set unseen4).

Fixed on 2026-12-07, after the third set (tools/unseen_set3.py) had been compared and its misses studied, so that
the rules written since have a set they were not written from. Nobody had planned any of these before the list
was committed. Idioms a user writes by hand that the zoo and sets 1-3 lack: an HF-style BERT with an additive
attention mask, T5-style blocks (RMSNorm by pow/mean, a learned relative-position bias), SE-ResNeXt and CBAM
attention (broadcast gating), FiLM conditioning, a PixelCNN masked convolution (weight * mask in forward), a
GRU decoder with Bahdanau attention unrolled in Python, capsule routing with squash, a NeRF MLP with sin/cos
positional encoding, an Attention U-Net, ECA channel attention, ResMLP's per-channel affine layers, CoordConv,
a global-context (GCNet) block and a non-local block.

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "hf_bert_mask", "builder": "hf_bert_mask", "args": {},
     "inputs": [["input_ids", [64], "int64", 6000], ["attention_mask", [64], "float32", 0]], "classes": 4,
     "rows": [[4, "adamw"], [8, "sgd"]],
     "description": "HF-style BERT encoder written by hand: separate q/k/v Linears, scores + (1 - mask) * -10000 "
                    "(mask > 0 from a float input), softmax, dropout, tanh-GELU, post-LN, 3 layers x 192, seq 64"},
    {"name": "t5_encoder", "builder": "t5_encoder", "args": {},
     "inputs": [["input_ids", [48], "int64", 5000]], "classes": 6, "rows": [[4, "adam"], [8, "momentum"]],
     "description": "T5-style encoder: RMSNorm via x.pow(2).mean(-1), no biases, a learned relative-position "
                    "bias (Embedding over bucketed offsets, shared by the layers), ReLU FFN, 3 layers x 128, seq 48"},
    {"name": "se_resnext_lite", "builder": "se_resnext_lite", "args": {},
     "inputs": IMG(64), "classes": 100, "rows": [[2, "momentum"], [4, "adam"]],
     "description": "SE-ResNeXt written by hand: grouped 3x3 bottlenecks (32 groups), squeeze-excitation "
                    "(mean over H, W, two 1x1 convs, sigmoid, x * s broadcast), 3 stages, 64x64 RGB"},
    {"name": "cbam_resnet", "builder": "cbam_resnet", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[2, "adam"], [8, "sgd"]],
     "description": "ResNet-style blocks with CBAM: channel attention from avg- and max-pooled MLP, spatial "
                    "attention from a 7x7 conv over [mean, max] over channels, both as broadcast sigmoid gates"},
    {"name": "film_cnn", "builder": "film_cnn", "args": {},
     "inputs": [["image", [3, 48, 48], "float32", 0], ["cond", [16], "float32", 0]], "classes": 5,
     "rows": [[4, "adam"], [16, "momentum"]],
     "description": "FiLM-conditioned CNN: a Linear maps a 16-d condition to per-channel gamma and beta, "
                    "x * gamma[:, :, None, None] + beta after each conv/BN, 4 blocks x 64, 48x48"},
    {"name": "pixelcnn_masked", "builder": "pixelcnn_masked", "args": {},
     "inputs": [["input", [1, 28, 28], "float32", 0]], "classes": 16, "label_shape": [28, 28],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "PixelCNN: masked 7x7 then 5 masked 3x3 convolutions (weight * mask buffer in forward), "
                    "residual ReLU blocks, 16-level per-pixel output, 28x28"},
    {"name": "gru_bahdanau", "builder": "gru_bahdanau", "args": {},
     "inputs": [["src_ids", [30], "int64", 3000]], "classes": 3000, "label_shape": [12],
     "rows": [[4, "adam"], [16, "momentum"]],
     "description": "GRU encoder (bidirectional) and a GRUCell decoder unrolled 12 steps in Python with "
                    "Bahdanau attention (tanh(W q + U k), v, softmax, bmm context, cat), vocab 3000"},
    {"name": "capsnet_lite", "builder": "capsnet_lite", "args": {},
     "inputs": [["input", [1, 28, 28], "float32", 0]], "classes": 10, "rows": [[4, "adam"], [8, "sgd"]],
     "description": "CapsNet-style: conv, primary capsules (conv reshaped to 8-d vectors, squash with norms), "
                    "3 routing iterations by agreement (softmax over classes, weighted sums, squash), "
                    "class logits from capsule lengths, 28x28"},
    {"name": "nerf_mlp", "builder": "nerf_mlp", "args": {},
     "inputs": [["input", [3], "float32", 0]], "classes": 16, "rows": [[256, "adam"], [1024, "sgd"]],
     "description": "NeRF-style MLP on points: positional encoding sin/cos of x * 2^k (10 octaves, constant "
                    "frequencies broadcast), 6 x Linear(192) + ReLU with the encoding concatenated again at layer 4"},
    {"name": "attention_unet", "builder": "attention_unet", "args": {},
     "inputs": [["input", [1, 64, 64], "float32", 0]], "classes": 3, "label_shape": [64, 64],
     "rows": [[2, "adam"], [4, "momentum"]],
     "description": "Attention U-Net: 3 levels, attention gates on the skips (1x1 convs of gate and skip, "
                    "ReLU, 1x1 conv, sigmoid, skip * alpha broadcast over channels), nearest upsampling, 64x64"},
    {"name": "eca_net", "builder": "eca_net", "args": {},
     "inputs": IMG(64), "classes": 50, "rows": [[2, "sgd"], [8, "adam"]],
     "description": "ECA attention in conv blocks: mean over H, W, a 3-wide Conv1d across channels (squeeze, "
                    "transpose), sigmoid, x * y broadcast; 4 stages of Conv/BN/ReLU, 64x64 RGB"},
    {"name": "resmlp", "builder": "resmlp", "args": {},
     "inputs": IMG(64), "classes": 100, "rows": [[4, "adam"], [8, "momentum"]],
     "description": "ResMLP: per-channel Affine (alpha * x + beta, no norm), token-mixing Linear over 64 patches "
                    "via transpose, channel MLP with GELU, LayerScale, 6 layers x 128, 8x8 patches"},
    {"name": "coordconv_net", "builder": "coordconv_net", "args": {},
     "inputs": IMG(48), "classes": 8, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "CoordConv: before each conv, two coordinate channels (linspace grids expanded over the "
                    "batch) concatenated to the input; 4 conv/BN/ReLU layers, 48x48"},
    {"name": "gcnet_block", "builder": "gcnet_block", "args": {},
     "inputs": IMG(64), "classes": 20, "rows": [[2, "adam"], [8, "sgd"]],
     "description": "ResNet stages with global-context blocks: a 1x1 conv to one map, softmax over H*W, matmul "
                    "with the flattened features, a bottleneck transform with LayerNorm, broadcast add, 64x64"},
    {"name": "nonlocal_net", "builder": "nonlocal_net", "args": {},
     "inputs": IMG(48), "classes": 10, "rows": [[2, "adam"], [4, "momentum"]],
     "description": "Conv stages with an embedded-Gaussian non-local block at 24x24: theta, phi, g 1x1 convs, "
                    "[B, HW, HW] affinity by bmm, softmax, bmm, 1x1 conv with BN, residual"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    def cbr(cin, cout, stride=1, k=3, groups=1):
        return nn.Sequential(nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU())

    if kind == "hf_bert_mask":
        class Layer(nn.Module):
            def __init__(self, d=192, heads=4):
                super().__init__()
                self.heads = heads
                self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
                self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
                self.drop = nn.Dropout(0.1)

            def forward(self, x, bias):
                b, t, d = x.shape
                split = lambda y: y.view(b, t, self.heads, -1).transpose(1, 2)  # noqa: E731
                q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
                scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + bias
                ctx = (self.drop(scores.softmax(-1)) @ v).transpose(1, 2).reshape(b, t, d)
                x = self.ln1(x + self.drop(self.o(ctx)))
                return self.ln2(x + self.drop(self.ff2(F.gelu(self.ff1(x), approximate="tanh"))))

        class Bert(nn.Module):
            def __init__(self, d=192):
                super().__init__()
                self.emb = nn.Embedding(6000, d)
                self.pos = nn.Parameter(torch.randn(64, d) * 0.02)
                self.ln = nn.LayerNorm(d)
                self.layers = nn.ModuleList([Layer(d) for _ in range(3)])
                self.fc = nn.Linear(d, classes)

            def forward(self, ids, mask):
                bias = (1.0 - (mask > 0).float())[:, None, None, :] * -10000.0
                x = self.ln(self.emb(ids) + self.pos)
                for layer in self.layers:
                    x = layer(x, bias)
                return self.fc(x[:, 0])
        return Bert()

    if kind == "t5_encoder":
        class RmsNorm(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(d))

            def forward(self, x):
                return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))

        class Layer(nn.Module):
            def __init__(self, d=128, heads=4):
                super().__init__()
                self.heads = heads
                self.n1, self.n2 = RmsNorm(d), RmsNorm(d)
                self.qkv = nn.Linear(d, 3 * d, bias=False)
                self.o = nn.Linear(d, d, bias=False)
                self.wi, self.wo = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)

            def forward(self, x, pos_bias):
                b, t, d = x.shape
                q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
                att = torch.softmax(q @ k.transpose(-1, -2) + pos_bias, dim=-1)
                x = x + self.o((att @ v).transpose(1, 2).reshape(b, t, d))
                return x + self.wo(F.relu(self.wi(self.n2(x))))

        class T5(nn.Module):
            def __init__(self, d=128, t=48, heads=4, buckets=16):
                super().__init__()
                self.emb = nn.Embedding(5000, d)
                self.rel = nn.Embedding(buckets, heads)
                pos = torch.arange(t)
                rel = (pos[None, :] - pos[:, None]).clamp(-buckets // 2, buckets // 2 - 1) + buckets // 2
                self.register_buffer("buckets", rel, persistent=False)
                self.layers = nn.ModuleList([Layer(d, heads) for _ in range(3)])
                self.norm = RmsNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                pos_bias = self.rel(self.buckets).permute(2, 0, 1).unsqueeze(0)  # [1, H, T, T]
                x = self.emb(ids)
                for layer in self.layers:
                    x = layer(x, pos_bias)
                return self.fc(self.norm(x).mean(dim=1))
        return T5()

    if kind == "se_resnext_lite":
        class Block(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                mid = cout // 2
                self.body = nn.Sequential(cbr(cin, mid, k=1), cbr(mid, mid, stride, groups=32),
                                          nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
                self.se1 = nn.Conv2d(cout, cout // 16, 1)
                self.se2 = nn.Conv2d(cout // 16, cout, 1)
                self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
                             if stride != 1 or cin != cout else nn.Identity())

            def forward(self, x):
                y = self.body(x)
                s = torch.sigmoid(self.se2(F.relu(self.se1(y.mean(dim=(2, 3), keepdim=True)))))
                return F.relu(y * s + self.down(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = cbr(3, 64, 2)
                self.stages = nn.Sequential(Block(64, 128, 1), Block(128, 128, 1), Block(128, 256, 2),
                                            Block(256, 256, 1), Block(256, 512, 2))
                self.fc = nn.Linear(512, classes)

            def forward(self, x):
                return self.fc(self.stages(self.stem(x)).mean(dim=(2, 3)))
        return Net()

    if kind == "cbam_resnet":
        class Cbam(nn.Module):
            def __init__(self, c, r=8):
                super().__init__()
                self.mlp = nn.Sequential(nn.Linear(c, c // r), nn.ReLU(), nn.Linear(c // r, c))
                self.spatial = nn.Conv2d(2, 1, 7, padding=3)

            def forward(self, x):
                ca = torch.sigmoid(self.mlp(x.mean(dim=(2, 3))) + self.mlp(x.amax(dim=(2, 3))))
                x = x * ca[:, :, None, None]
                sa = torch.sigmoid(self.spatial(torch.cat([x.mean(dim=1, keepdim=True),
                                                           x.amax(dim=1, keepdim=True)], dim=1)))
                return x * sa

        class Block(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.c1, self.c2 = cbr(cin, cout, stride), nn.Sequential(
                    nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout))
                self.cbam = Cbam(cout)
                self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
                             if stride != 1 or cin != cout else nn.Identity())

            def forward(self, x):
                return F.relu(self.cbam(self.c2(self.c1(x))) + self.down(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = cbr(3, 32)
                self.blocks = nn.Sequential(Block(32, 64, 2), Block(64, 64, 1), Block(64, 128, 2), Block(128, 128, 1))
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                return self.fc(self.blocks(self.stem(x)).mean(dim=(2, 3)))
        return Net()

    if kind == "film_cnn":
        class Net(nn.Module):
            def __init__(self, c=64, blocks=4):
                super().__init__()
                self.stem = cbr(3, c, 2)
                self.convs = nn.ModuleList([nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))
                                            for _ in range(blocks)])
                self.film = nn.Linear(16, 2 * c * blocks)
                self.fc = nn.Linear(c, classes)

            def forward(self, image, cond):
                params = self.film(cond).chunk(2 * len(self.convs), dim=1)
                x = self.stem(image)
                for i, conv in enumerate(self.convs):
                    gamma, beta = params[2 * i], params[2 * i + 1]
                    x = x + F.relu(conv(x) * gamma[:, :, None, None] + beta[:, :, None, None])
                return self.fc(x.mean(dim=(2, 3)))
        return Net()

    if kind == "pixelcnn_masked":
        class MaskedConv(nn.Conv2d):
            def __init__(self, cin, cout, k, first):
                super().__init__(cin, cout, k, padding=k // 2)
                mask = torch.ones(cout, cin, k, k)
                mask[:, :, k // 2, k // 2 + (0 if first else 1):] = 0
                mask[:, :, k // 2 + 1:] = 0
                self.register_buffer("mask", mask)

            def forward(self, x):
                return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)

        class Net(nn.Module):
            def __init__(self, c=64):
                super().__init__()
                self.first = MaskedConv(1, c, 7, True)
                self.layers = nn.ModuleList([MaskedConv(c, c, 3, False) for _ in range(5)])
                self.out = nn.Sequential(nn.ReLU(), nn.Conv2d(c, c, 1), nn.ReLU(), nn.Conv2d(c, classes, 1))

            def forward(self, x):
                x = self.first(x)
                for layer in self.layers:
                    x = x + layer(F.relu(x))
                return self.out(x)
        return Net()

    if kind == "gru_bahdanau":
        class Seq2Seq(nn.Module):
            def __init__(self, vocab=3000, d=96, hidden=128, steps=12):
                super().__init__()
                self.steps = steps
                self.emb = nn.Embedding(vocab, d)
                self.enc = nn.GRU(d, hidden, batch_first=True, bidirectional=True)
                self.w_q = nn.Linear(hidden, hidden, bias=False)
                self.w_k = nn.Linear(2 * hidden, hidden)
                self.v = nn.Linear(hidden, 1, bias=False)
                self.cell = nn.GRUCell(2 * hidden, hidden)
                self.init = nn.Linear(2 * hidden, hidden)
                self.out = nn.Linear(hidden + 2 * hidden, vocab)

            def forward(self, src):
                keys, _ = self.enc(self.emb(src))  # [B, S, 2H]
                proj_k = self.w_k(keys)
                h = torch.tanh(self.init(keys.mean(dim=1)))
                logits = []
                for _ in range(self.steps):
                    e = self.v(torch.tanh(self.w_q(h).unsqueeze(1) + proj_k)).squeeze(-1)  # [B, S]
                    a = torch.softmax(e, dim=1)
                    ctx = torch.bmm(a.unsqueeze(1), keys).squeeze(1)
                    h = self.cell(ctx, h)
                    logits.append(self.out(torch.cat([h, ctx], dim=1)))
                return torch.stack(logits, dim=2)  # [B, V, T]
        return Seq2Seq()

    if kind == "capsnet_lite":
        def squash(s, dim=-1):
            n2 = (s * s).sum(dim=dim, keepdim=True)
            return n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-8)

        class Caps(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(1, 128, 9)
                self.primary = nn.Conv2d(128, 16 * 8, 9, stride=2)  # 16 capsule maps of 8-d
                self.W = nn.Parameter(torch.randn(1, 16 * 6 * 6, classes, 12, 8) * 0.05)

            def forward(self, x):
                h = F.relu(self.conv(x))
                u = self.primary(h).view(x.shape[0], 16, 8, 6, 6).permute(0, 1, 3, 4, 2).reshape(x.shape[0], -1, 8)
                u = squash(u)
                u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)  # [B, 576, C, 12]
                b = torch.zeros(u_hat.shape[:3], device=x.device)
                for i in range(3):
                    c = torch.softmax(b, dim=2)
                    v = squash((c.unsqueeze(-1) * u_hat).sum(dim=1))  # [B, C, 12]
                    if i < 2:
                        b = b + (u_hat * v.unsqueeze(1)).sum(dim=-1)
                return torch.sqrt((v * v).sum(dim=-1) + 1e-8) * 10.0
        return Caps()

    if kind == "nerf_mlp":
        class Nerf(nn.Module):
            def __init__(self, octaves=10, width=192):
                super().__init__()
                self.register_buffer("freqs", (2.0 ** torch.arange(octaves)) * math.pi, persistent=False)
                enc = 3 + 3 * 2 * octaves
                self.first = nn.ModuleList([nn.Linear(enc, width)] + [nn.Linear(width, width) for _ in range(3)])
                self.second = nn.ModuleList([nn.Linear(width + enc, width)] + [nn.Linear(width, width) for _ in range(1)])
                self.out = nn.Linear(width, classes)

            def forward(self, x):
                xf = (x[:, :, None] * self.freqs).flatten(1)
                enc = torch.cat([x, torch.sin(xf), torch.cos(xf)], dim=1)
                h = enc
                for layer in self.first:
                    h = F.relu(layer(h))
                h = torch.cat([h, enc], dim=1)
                for layer in self.second:
                    h = F.relu(layer(h))
                return self.out(h)
        return Nerf()

    if kind == "attention_unet":
        def double(cin, cout):
            return nn.Sequential(cbr(cin, cout), cbr(cout, cout))

        class Gate(nn.Module):
            def __init__(self, cg, cs, mid):
                super().__init__()
                self.wg = nn.Conv2d(cg, mid, 1)
                self.ws = nn.Conv2d(cs, mid, 1)
                self.psi = nn.Conv2d(mid, 1, 1)

            def forward(self, g, s):
                alpha = torch.sigmoid(self.psi(F.relu(self.wg(g) + self.ws(s))))
                return s * alpha

        class Unet(nn.Module):
            def __init__(self):
                super().__init__()
                self.d1, self.d2, self.d3 = double(1, 16), double(16, 32), double(32, 64)
                self.g2, self.g1 = Gate(64, 32, 16), Gate(32, 16, 8)
                self.u2, self.u1 = double(64 + 32, 32), double(32 + 16, 16)
                self.out = nn.Conv2d(16, classes, 1)

            def forward(self, x):
                s1 = self.d1(x)
                s2 = self.d2(F.max_pool2d(s1, 2))
                b = self.d3(F.max_pool2d(s2, 2))
                up = F.interpolate(b, scale_factor=2, mode="nearest")
                y = self.u2(torch.cat([up, self.g2(up, s2)], dim=1))
                up = F.interpolate(y, scale_factor=2, mode="nearest")
                y = self.u1(torch.cat([up, self.g1(up, s1)], dim=1))
                return self.out(y)
        return Unet()

    if kind == "eca_net":
        class Eca(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(1, 1, 3, padding=1, bias=False)

            def forward(self, x):
                y = x.mean(dim=(2, 3), keepdim=True)  # [B, C, 1, 1]
                y = self.conv(y.squeeze(-1).transpose(-1, -2)).transpose(-1, -2).unsqueeze(-1)
                return x * torch.sigmoid(y)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                layers, cin = [], 3
                for cout in (32, 64, 128, 256):
                    layers += [cbr(cin, cout, 2), cbr(cout, cout), Eca()]
                    cin = cout
                self.body = nn.Sequential(*layers)
                self.fc = nn.Linear(cin, classes)

            def forward(self, x):
                return self.fc(self.body(x).mean(dim=(2, 3)))
        return Net()

    if kind == "resmlp":
        class Affine(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.alpha = nn.Parameter(torch.ones(d))
                self.beta = nn.Parameter(torch.zeros(d))

            def forward(self, x):
                return self.alpha * x + self.beta

        class Layer(nn.Module):
            def __init__(self, d, tokens):
                super().__init__()
                self.aff1, self.aff2 = Affine(d), Affine(d)
                self.token = nn.Linear(tokens, tokens)
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                self.ls1 = nn.Parameter(torch.full((d,), 0.1))
                self.ls2 = nn.Parameter(torch.full((d,), 0.1))

            def forward(self, x):
                x = x + self.ls1 * self.token(self.aff1(x).transpose(1, 2)).transpose(1, 2)
                return x + self.ls2 * self.mlp(self.aff2(x))

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.patch = nn.Conv2d(3, d, 8, stride=8)
                self.layers = nn.Sequential(*[Layer(d, 64) for _ in range(6)])
                self.aff = Affine(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                x = self.patch(x).flatten(2).transpose(1, 2)
                return self.fc(self.aff(self.layers(x)).mean(dim=1))
        return Net()

    if kind == "coordconv_net":
        class CoordConv(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.body = cbr(cin + 2, cout, stride)

            def forward(self, x):
                b, _, h, w = x.shape
                ys = torch.linspace(-1, 1, h, device=x.device).view(1, 1, h, 1).expand(b, 1, h, w)
                xs = torch.linspace(-1, 1, w, device=x.device).view(1, 1, 1, w).expand(b, 1, h, w)
                return self.body(torch.cat([x, ys, xs], dim=1))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.Sequential(CoordConv(3, 32, 1), CoordConv(32, 64, 2), CoordConv(64, 64, 1),
                                            CoordConv(64, 128, 2))
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                return self.fc(self.layers(x).mean(dim=(2, 3)))
        return Net()

    if kind == "gcnet_block":
        class Gc(nn.Module):
            def __init__(self, c, r=4):
                super().__init__()
                self.mask = nn.Conv2d(c, 1, 1)
                self.transform = nn.Sequential(nn.Conv2d(c, c // r, 1), nn.LayerNorm([c // r, 1, 1]), nn.ReLU(),
                                               nn.Conv2d(c // r, c, 1))

            def forward(self, x):
                b, c, h, w = x.shape
                attn = torch.softmax(self.mask(x).view(b, 1, h * w), dim=-1)  # [B, 1, HW]
                ctx = torch.matmul(x.view(b, c, h * w), attn.transpose(1, 2)).view(b, c, 1, 1)
                return x + self.transform(ctx)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                layers, cin = [cbr(3, 32)], 32
                for cout in (64, 128, 256):
                    layers += [cbr(cin, cout, 2), cbr(cout, cout), Gc(cout)]
                    cin = cout
                self.body = nn.Sequential(*layers)
                self.fc = nn.Linear(cin, classes)

            def forward(self, x):
                return self.fc(self.body(x).mean(dim=(2, 3)))
        return Net()

    if kind == "nonlocal_net":
        class NonLocal(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.theta, self.phi, self.g = (nn.Conv2d(c, c // 2, 1) for _ in range(3))
                self.out = nn.Sequential(nn.Conv2d(c // 2, c, 1), nn.BatchNorm2d(c))

            def forward(self, x):
                b, c, h, w = x.shape
                t = self.theta(x).flatten(2).transpose(1, 2)  # [B, HW, C/2]
                p = self.phi(x).flatten(2)                    # [B, C/2, HW]
                g = self.g(x).flatten(2).transpose(1, 2)
                f = torch.softmax(torch.bmm(t, p), dim=-1)    # [B, HW, HW]
                y = torch.bmm(f, g).transpose(1, 2).reshape(b, c // 2, h, w)
                return x + self.out(y)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(cbr(3, 32), cbr(32, 64, 2), cbr(64, 64), NonLocal(64), cbr(64, 128, 2),
                                          cbr(128, 128))
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                return self.fc(self.body(x).mean(dim=(2, 3)))
        return Net()
    raise ValueError("unknown builder %s" % kind)
