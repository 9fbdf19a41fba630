"""The sixth held-out set of real architectures (tools/unseen_models.py --set unseen6).

Fixed on 2026-12-07, after set 5's rules (97374e6, 2b7556d), before any of these was exported, measured or
planned. Architectures a user writes or copies that the zoo and sets 1-5 lack: a YOLO-style CSP trunk with SPPF, an
HRNet-style two-branch fusion, Res2Net's hierarchical splits, RepVGG's training-time branches, GhostNet modules,
TabNet-style attentive masks with GLU blocks, a wav2vec-style feature encoder with a weight-normed grouped positional
convolution, an FT-Transformer feature tokenizer, a UNet++-style nested decoder, a highway MLP, ConvMixer, a
squeeze-excite Conv1d audio net, LeNet-5 with tanh and average pooling, and a VGG-style head of large dropout
Linears.

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "yolo_csp_sppf", "builder": "yolo_csp_sppf", "args": {},
     "inputs": IMG(64), "classes": 8, "label_shape": [8, 8], "rows": [[2, "adam"], [8, "sgd"]],
     "description": "YOLOv5-style trunk: Conv/BN/SiLU, C3 blocks (split into two 1x1 paths, bottlenecks, concat), "
                    "SPPF (three chained 5x5 max pools, concat), per-cell classes at 8x8 from 64x64"},
    {"name": "hrnet_lite", "builder": "hrnet_lite", "args": {},
     "inputs": IMG(64), "classes": 5, "label_shape": [16, 16], "rows": [[2, "adam"], [4, "momentum"]],
     "description": "HRNet-style: a high- and a low-resolution branch of basic blocks, fused both ways (strided "
                    "conv down, 1x1 conv + nearest upsample up, sums), per-pixel classes at 16x16"},
    {"name": "res2net_lite", "builder": "res2net_lite", "args": {},
     "inputs": IMG(64), "classes": 30, "rows": [[2, "sgd"], [8, "adam"]],
     "description": "Res2Net bottlenecks: 1x1 conv, 4-way channel split, hierarchical 3x3 convs each adding the "
                    "previous split's output, concat, 1x1 conv, residual; 3 stages"},
    {"name": "repvgg_train", "builder": "repvgg_train", "args": {},
     "inputs": IMG(64), "classes": 20, "rows": [[4, "momentum"], [8, "adam"]],
     "description": "RepVGG in its training form: each block sums a 3x3 conv+BN, a 1x1 conv+BN and an identity "
                    "BN, then ReLU; 4 stages, 64x64"},
    {"name": "ghostnet_lite", "builder": "ghostnet_lite", "args": {},
     "inputs": IMG(64), "classes": 40, "rows": [[4, "adam"], [8, "sgd"]],
     "description": "Ghost bottlenecks: a primary 1x1 conv and a cheap depthwise 3x3 on its output, concatenated "
                    "and sliced to the output channels, stride-2 depthwise between, SE on some blocks"},
    {"name": "tabnet_lite", "builder": "tabnet_lite", "args": {},
     "inputs": [["input", [64], "float32", 0]], "classes": 4, "rows": [[64, "adam"], [256, "sgd"]],
     "description": "TabNet-style: 3 decision steps, each with an attentive transformer (Linear, BatchNorm1d, "
                    "prior-scaled softmax mask), a feature transformer of F.glu blocks with sqrt(0.5) residuals"},
    {"name": "wav2vec_feat", "builder": "wav2vec_feat", "args": {},
     "inputs": [["input", [1, 8000], "float32", 0]], "classes": 12, "rows": [[2, "adam"], [4, "sgd"]],
     "description": "wav2vec 2.0-style: Conv1d feature encoder (k10 s5, then k3 s2 x4, GroupNorm on the first, "
                    "GELU), projection, a weight-normed grouped positional Conv1d (k=32, 8 groups), 2 encoder layers"},
    {"name": "ft_transformer", "builder": "ft_transformer", "args": {},
     "inputs": [["input", [24], "float32", 0]], "classes": 3, "rows": [[32, "adamw"], [128, "sgd"]],
     "description": "FT-Transformer: a numerical feature tokenizer (x[:, :, None] * W + b, per-feature "
                    "weights), a CLS token concatenated, 3 pre-norm encoder layers x 64, 24 features"},
    {"name": "unetpp_lite", "builder": "unetpp_lite", "args": {},
     "inputs": [["input", [1, 48, 48], "float32", 0]], "classes": 2, "label_shape": [48, 48],
     "rows": [[2, "adam"], [4, "sgd"]],
     "description": "UNet++-style nested decoder over 3 levels: every node concatenates all earlier nodes of its "
                    "level with the upsampled node below, 48x48 grey"},
    {"name": "highway_mlp", "builder": "highway_mlp", "args": {},
     "inputs": [["input", [300], "float32", 0]], "classes": 10, "rows": [[32, "adam"], [128, "momentum"]],
     "description": "Highway network: 6 layers of y = H(x) * T(x) + x * (1 - T(x)) with sigmoid gates, 300 wide"},
    {"name": "convmixer", "builder": "convmixer", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[2, "adam"], [8, "sgd"]],
     "description": "ConvMixer-128/6: patch embedding (k4 s4), then depthwise 9x9 + GELU + BN with a residual and "
                    "pointwise 1x1 + GELU + BN, 64x64"},
    {"name": "se_conv1d_audio", "builder": "se_conv1d_audio", "args": {},
     "inputs": [["input", [40, 300], "float32", 0]], "classes": 35, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Keyword spotter: Conv1d/BN/ReLU blocks with squeeze-excitation over time (mean, two Linears, "
                    "sigmoid, x * s[:, :, None]), 40 MFCCs x 300 frames"},
    {"name": "lenet5_tanh", "builder": "lenet5_tanh", "args": {},
     "inputs": [["input", [1, 32, 32], "float32", 0]], "classes": 10, "rows": [[64, "sgd"], [256, "adam"]],
     "description": "LeNet-5: 5x5 convs with tanh and 2x2 average pooling, 120-84-10 tanh classifier"},
    {"name": "vgg_head_dropout", "builder": "vgg_head_dropout", "args": {},
     "inputs": IMG(32), "classes": 100, "rows": [[4, "momentum"], [16, "adam"]],
     "description": "Small VGG trunk (conv/ReLU, max pool) with a classifier of 2 Linear(2048) + ReLU + Dropout(0.5)"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    def cbr(cin, cout, stride=1, k=3, groups=1, act=None):
        return nn.Sequential(nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=False),
                             nn.BatchNorm2d(cout), act if act is not None else nn.ReLU())

    if kind == "yolo_csp_sppf":
        def cbs(cin, cout, k=1, s=1):
            return cbr(cin, cout, s, k, act=nn.SiLU())

        class Bottleneck(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.a, self.b = cbs(c, c, 1), cbs(c, c, 3)

            def forward(self, x):
                return x + self.b(self.a(x))

        class C3(nn.Module):
            def __init__(self, cin, cout, n=1):
                super().__init__()
                h = cout // 2
                self.cv1, self.cv2, self.cv3 = cbs(cin, h), cbs(cin, h), cbs(2 * h, cout)
                self.m = nn.Sequential(*[Bottleneck(h) for _ in range(n)])

            def forward(self, x):
                return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], dim=1))

        class Sppf(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.cv1, self.cv2 = cbs(c, c // 2), cbs(c // 2 * 4, c)
                self.pool = nn.MaxPool2d(5, 1, 2)

            def forward(self, x):
                x = self.cv1(x)
                y1 = self.pool(x)
                y2 = self.pool(y1)
                return self.cv2(torch.cat([x, y1, y2, self.pool(y2)], dim=1))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(cbs(3, 16, 3, 2), cbs(16, 32, 3, 2), C3(32, 32, 1), cbs(32, 64, 3, 2),
                                          C3(64, 64, 2), Sppf(64))
                self.head = nn.Conv2d(64, classes, 1)

            def forward(self, x):
                return self.head(self.body(x))
        return Net()

    if kind == "hrnet_lite":
        class Basic(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.a = cbr(c, c)
                self.b = nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))

            def forward(self, x):
                return F.relu(x + self.b(self.a(x)))

        class Net(nn.Module):
            def __init__(self, c1=32, c2=64):
                super().__init__()
                self.stem = nn.Sequential(cbr(3, c1, 2), cbr(c1, c1, 2))  # 16x16
                self.to_low = cbr(c1, c2, 2)  # 8x8
                self.high = nn.Sequential(Basic(c1), Basic(c1))
                self.low = nn.Sequential(Basic(c2), Basic(c2))
                self.down = nn.Sequential(nn.Conv2d(c1, c2, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(c2))
                self.up = nn.Sequential(nn.Conv2d(c2, c1, 1, bias=False), nn.BatchNorm2d(c1))
                self.head = nn.Conv2d(c1 + c2, classes, 1)

            def forward(self, x):
                h = self.stem(x)
                l = self.to_low(h)
                h, l = self.high(h), self.low(l)
                h2 = F.relu(h + F.interpolate(self.up(l), scale_factor=2, mode="nearest"))
                l2 = F.relu(l + self.down(h))
                return self.head(torch.cat([h2, F.interpolate(l2, scale_factor=2, mode="nearest")], dim=1))
        return Net()

    if kind == "res2net_lite":
        class Block(nn.Module):
            def __init__(self, cin, width, cout, stride, scale=4):
                super().__init__()
                self.scale = scale
                self.conv1 = cbr(cin, width * scale, k=1)
                self.convs = nn.ModuleList([cbr(width, width, stride) for _ in range(scale - 1)])
                self.pool = nn.AvgPool2d(3, stride, 1) if stride > 1 else nn.Identity()
                self.conv3 = nn.Sequential(nn.Conv2d(width * scale, cout, 1, bias=False), nn.BatchNorm2d(cout))
                self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
                             if stride != 1 or cin != cout else nn.Identity())
                self.stride = stride

            def forward(self, x):
                parts = torch.chunk(self.conv1(x), self.scale, dim=1)
                outs, prev = [], None
                for i, conv in enumerate(self.convs):
                    sp = parts[i] if (prev is None or self.stride > 1) else parts[i] + prev
                    prev = conv(sp)
                    outs.append(prev)
                outs.append(self.pool(parts[-1]))
                return F.relu(self.conv3(torch.cat(outs, dim=1)) + self.down(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = cbr(3, 32, 2)
                self.blocks = nn.Sequential(Block(32, 16, 64, 1), Block(64, 16, 64, 1), Block(64, 32, 128, 2),
                                            Block(128, 32, 128, 1), Block(128, 48, 256, 2))
                self.fc = nn.Linear(256, classes)

            def forward(self, x):
                return self.fc(self.blocks(self.stem(x)).mean(dim=(2, 3)))
        return Net()

    if kind == "repvgg_train":
        class Block(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.dense = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout))
                self.one = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False), nn.BatchNorm2d(cout))
                self.identity = nn.BatchNorm2d(cin) if cin == cout and stride == 1 else None

            def forward(self, x):
                y = self.dense(x) + self.one(x)
                if self.identity is not None:
                    y = y + self.identity(x)
                return F.relu(y)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                cfg = [(3, 32, 2), (32, 48, 2), (48, 48, 1), (48, 96, 2), (96, 96, 1), (96, 96, 1), (96, 192, 2)]
                self.body = nn.Sequential(*[Block(a, b, s) for a, b, s in cfg])
                self.fc = nn.Linear(192, classes)

            def forward(self, x):
                return self.fc(self.body(x).mean(dim=(2, 3)))
        return Net()

    if kind == "ghostnet_lite":
        class Ghost(nn.Module):
            def __init__(self, cin, cout, relu=True):
                super().__init__()
                self.cout = cout
                init = math.ceil(cout / 2)
                act = nn.ReLU() if relu else nn.Identity()
                self.primary = nn.Sequential(nn.Conv2d(cin, init, 1, bias=False), nn.BatchNorm2d(init), act)
                self.cheap = nn.Sequential(nn.Conv2d(init, init, 3, padding=1, groups=init, bias=False),
                                           nn.BatchNorm2d(init), act)

            def forward(self, x):
                y = self.primary(x)
                return torch.cat([y, self.cheap(y)], dim=1)[:, :self.cout]

        class Bottleneck(nn.Module):
            def __init__(self, cin, mid, cout, stride, se):
                super().__init__()
                self.g1 = Ghost(cin, mid)
                self.dw = (nn.Sequential(nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid))
                           if stride > 1 else nn.Identity())
                self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(mid, mid // 4, 1), nn.ReLU(),
                                        nn.Conv2d(mid // 4, mid, 1), nn.Hardsigmoid()) if se else None
                self.g2 = Ghost(mid, cout, relu=False)
                self.short = (nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False),
                                            nn.BatchNorm2d(cin), nn.Conv2d(cin, cout, 1, bias=False),
                                            nn.BatchNorm2d(cout)) if stride > 1 or cin != cout else nn.Identity())

            def forward(self, x):
                y = self.dw(self.g1(x))
                if self.se is not None:
                    y = y * self.se(y)
                return self.g2(y) + self.short(x)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = cbr(3, 16, 2)
                self.blocks = nn.Sequential(Bottleneck(16, 16, 16, 1, False), Bottleneck(16, 48, 24, 2, False),
                                            Bottleneck(24, 72, 24, 1, False), Bottleneck(24, 72, 40, 2, True),
                                            Bottleneck(40, 120, 40, 1, True), Bottleneck(40, 240, 80, 2, False))
                self.fc = nn.Linear(80, classes)

            def forward(self, x):
                return self.fc(self.blocks(self.stem(x)).mean(dim=(2, 3)))
        return Net()

    if kind == "tabnet_lite":
        class Glu(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.fc = nn.Linear(cin, 2 * cout, bias=False)
                self.bn = nn.BatchNorm1d(2 * cout)

            def forward(self, x):
                return F.glu(self.bn(self.fc(x)), dim=-1)

        class Net(nn.Module):
            def __init__(self, feats=64, d=32, steps=3, gamma=1.3):
                super().__init__()
                self.steps, self.gamma, self.d = steps, gamma, d
                self.bn = nn.BatchNorm1d(feats)
                self.shared = Glu(feats, 2 * d)
                self.step_glu = nn.ModuleList([Glu(2 * d, 2 * d) for _ in range(steps + 1)])
                self.att = nn.ModuleList([nn.Sequential(nn.Linear(d, feats, bias=False), nn.BatchNorm1d(feats))
                                          for _ in range(steps)])
                self.fc = nn.Linear(d, classes)

            def transform(self, x, i):
                h = self.shared(x)
                return (h + self.step_glu[i](h)) * math.sqrt(0.5)

            def forward(self, x):
                x = self.bn(x)
                prior = torch.ones_like(x)
                a = self.transform(x, 0)[:, self.d:]
                out = 0
                for s in range(self.steps):
                    mask = torch.softmax(self.att[s](a) * prior, dim=-1)
                    prior = prior * (self.gamma - mask)
                    h = self.transform(x * mask, s + 1)
                    out = out + F.relu(h[:, :self.d])
                    a = h[:, self.d:]
                return self.fc(out)
        return Net()

    if kind == "wav2vec_feat":
        from torch.nn.utils import weight_norm

        class Net(nn.Module):
            def __init__(self, c=64, d=96):
                super().__init__()
                layers = [nn.Conv1d(1, c, 10, 5, bias=False), nn.GroupNorm(c, c), nn.GELU()]
                for _ in range(4):
                    layers += [nn.Conv1d(c, c, 3, 2, bias=False), nn.GELU()]
                self.features = nn.Sequential(*layers)
                self.norm = nn.LayerNorm(c)
                self.proj = nn.Linear(c, d)
                self.pos = weight_norm(nn.Conv1d(d, d, 32, padding=16, groups=8), dim=2)
                layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.1, activation="gelu", batch_first=True)
                self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.fc = nn.Linear(d, classes)

            def forward(self, wav):
                f = self.features(wav).transpose(1, 2)  # [B, T, C]
                x = self.proj(self.norm(f))
                p = F.gelu(self.pos(x.transpose(1, 2))[:, :, :-1]).transpose(1, 2)
                return self.fc(self.encoder(x + p).mean(dim=1))
        return Net()

    if kind == "ft_transformer":
        class Net(nn.Module):
            def __init__(self, feats=24, d=64):
                super().__init__()
                self.w = nn.Parameter(torch.randn(feats, d) * 0.1)
                self.b = nn.Parameter(torch.zeros(feats, d))
                self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.1)
                layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.1, batch_first=True, norm_first=True)
                self.encoder = nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                tokens = x[:, :, None] * self.w + self.b
                tokens = torch.cat([self.cls.expand(x.shape[0], -1, -1), tokens], dim=1)
                return self.fc(self.norm(self.encoder(tokens)[:, 0]))
        return Net()

    if kind == "unetpp_lite":
        def double(cin, cout):
            return nn.Sequential(cbr(cin, cout), cbr(cout, cout))

        class Net(nn.Module):
            def __init__(self, f=(16, 32, 64)):
                super().__init__()
                self.x00, self.x10, self.x20 = double(1, f[0]), double(f[0], f[1]), double(f[1], f[2])
                self.x01 = double(f[0] + f[1], f[0])
                self.x11 = double(f[1] + f[2], f[1])
                self.x02 = double(2 * f[0] + f[1], f[0])
                self.out = nn.Conv2d(f[0], classes, 1)

            def forward(self, x):
                up = lambda t: F.interpolate(t, scale_factor=2, mode="nearest")  # noqa: E731
                x00 = self.x00(x)
                x10 = self.x10(F.max_pool2d(x00, 2))
                x20 = self.x20(F.max_pool2d(x10, 2))
                x01 = self.x01(torch.cat([x00, up(x10)], dim=1))
                x11 = self.x11(torch.cat([x10, up(x20)], dim=1))
                x02 = self.x02(torch.cat([x00, x01, up(x11)], dim=1))
                return self.out(x02)
        return Net()

    if kind == "highway_mlp":
        class Highway(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.h = nn.Linear(d, d)
                self.t = nn.Linear(d, d)

            def forward(self, x):
                t = torch.sigmoid(self.t(x))
                return F.relu(self.h(x)) * t + x * (1 - t)

        return nn.Sequential(*[Highway(300) for _ in range(6)], nn.Linear(300, classes))

    if kind == "convmixer":
        class Residual(nn.Module):
            def __init__(self, fn):
                super().__init__()
                self.fn = fn

            def forward(self, x):
                return self.fn(x) + x

        d = 128
        return nn.Sequential(
            nn.Conv2d(3, d, 4, stride=4), nn.GELU(), nn.BatchNorm2d(d),
            *[nn.Sequential(Residual(nn.Sequential(nn.Conv2d(d, d, 9, groups=d, padding=4), nn.GELU(),
                                                   nn.BatchNorm2d(d))),
                            nn.Conv2d(d, d, 1), nn.GELU(), nn.BatchNorm2d(d)) for _ in range(6)],
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(d, classes))

    if kind == "se_conv1d_audio":
        class Block(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.conv = nn.Sequential(nn.Conv1d(cin, cout, 5, padding=2, bias=False), nn.BatchNorm1d(cout),
                                          nn.ReLU())
                self.fc1, self.fc2 = nn.Linear(cout, cout // 8), nn.Linear(cout // 8, cout)

            def forward(self, x):
                y = self.conv(x)
                s = torch.sigmoid(self.fc2(F.relu(self.fc1(y.mean(dim=2)))))
                return y * s[:, :, None]

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.Sequential(Block(40, 64), nn.MaxPool1d(2), Block(64, 96), nn.MaxPool1d(2),
                                            Block(96, 128))
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                return self.fc(self.blocks(x).mean(dim=2))
        return Net()

    if kind == "lenet5_tanh":
        return nn.Sequential(nn.Conv2d(1, 6, 5), nn.Tanh(), nn.AvgPool2d(2), nn.Conv2d(6, 16, 5), nn.Tanh(),
                             nn.AvgPool2d(2), nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.Tanh(), nn.Linear(120, 84),
                             nn.Tanh(), nn.Linear(84, classes))

    if kind == "vgg_head_dropout":
        layers, cin = [], 3
        for cout in (32, 64, 128):
            layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU(),
                       nn.MaxPool2d(2)]
            cin = cout
        return nn.Sequential(*layers, nn.Flatten(), nn.Linear(128 * 4 * 4, 2048), nn.ReLU(), nn.Dropout(0.5),
                             nn.Linear(2048, 2048), nn.ReLU(), nn.Dropout(0.5), nn.Linear(2048, classes))
    raise ValueError("unknown builder %s" % kind)
