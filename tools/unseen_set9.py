"""The ninth held-out set of real architectures (tools/unseen_models.py --set unseen9).

Fixed on 2026-12-07, after set 8's rules (4d1f687, 2a79ea6) and the wide-kernel conv work (26e6ac6), before any of
these was exported, measured or planned. Architectures and idioms the zoo, sets 1-8 and the random nets lack:
ALBERT-style cross-layer weight sharing with a factorized embedding, a hand-written HF GPT-2 block (transformers'
Conv1D as torch.addmm, a causal torch.where mask, tied input / output embeddings), LoRA adapters beside the
attention projections, an early-exit CNN whose three heads are averaged, SimCLR-style two views through one encoder
with an InfoNCE logits matrix written by hand, a triplet network (three inputs, one encoder), nn.MultiheadAttention
with a key_padding_mask, an anchor-based detection head over a two-level FPN, a log-mel front end written as a fixed
DFT convolution and a mel matrix (buffers), a temporal shift module (TSM) video net, a Deep & Cross recommender
(categorical embeddings + dense features, cross layers), torchvision ResNet-18 with FrozenBatchNorm2d (the
detection backbones' frozen statistics and affine), a Set Transformer (ISAB inducing points, PMA pooling), an RK4
neural-ODE step (one MLP applied four times a step) and a hypernetwork that generates per-sample weights for a bmm.

Frozen parameters (requires_grad=False) are left out: tools/measure_step.py hands every parameter to the optimizer
(a user's usual `optim.Adam(model.parameters())`, which skips a parameter without a gradient), but the shape-only
ONNX file cannot say which initializers are frozen and oomguard plan has no flag for it, so the planner would plan
gradients and optimizer state a user's step never builds. LoRA is therefore trained with its base weights trainable,
and the "partially frozen backbone" idiom is FrozenBatchNorm2d (buffers, not parameters), which the file expresses.

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "albert_shared", "builder": "albert_shared", "args": {},
     "inputs": [["input_ids", [64], "int64", 4000]], "classes": 5, "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "ALBERT-style encoder: factorized embedding (4000 -> 64 -> 128), ONE post-norm transformer "
                    "layer (hand-written attention, GELU) applied 4 times, first-token classifier"},
    {"name": "hf_gpt2_conv1d", "builder": "hf_gpt2_conv1d", "args": {},
     "inputs": [["input_ids", [48], "int64", 2000]], "classes": 2000, "label_shape": [48],
     "rows": [[4, "adam"], [8, "momentum"]],
     "description": "Hand-written HF GPT-2: transformers' Conv1D (torch.addmm over a [in, out] weight) for c_attn / "
                    "c_proj / c_fc, causal mask by torch.where(bias, w, -1e4), gelu_new (tanh), tied input / output "
                    "embeddings (logits = h @ wte.weight.T), 3 layers x 96"},
    {"name": "lora_encoder", "builder": "lora_encoder", "args": {},
     "inputs": [["input", [32, 64], "float32", 0]], "classes": 6, "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "Encoder whose q / v projections are LoRA Linears (base + dropout(x) @ A^T @ B^T x alpha / r, "
                    "r = 8; base weights trainable, see the module note), 2 layers x 64, mean-pooled"},
    {"name": "early_exit_cnn", "builder": "early_exit_cnn", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "adam"], [32, "momentum"]],
     "description": "CNN with three exits (pool + Linear after each stage), the exits' logits averaged with "
                    "softmax(learned) weights, 32x32"},
    {"name": "simclr_infonce", "builder": "simclr_infonce", "args": {},
     "inputs": IMG(32), "classes": 4, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "SimCLR-style: two views (flip + noise) of the batch through ONE CNN encoder and "
                    "projection head, F.normalize, logits = z1 @ z2^T / 0.1 ([B, B], targets < 4)"},
    {"name": "triplet_embed", "builder": "triplet_embed", "args": {},
     "inputs": [["anchor", [3, 32, 32], "float32", 0], ["positive", [3, 32, 32], "float32", 0],
                ["negative", [3, 32, 32], "float32", 0]], "classes": 2, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Triplet network: three inputs through one CNN embedding, logits = -[||a - p||, ||a - n||] "
                    "(torch.norm of the differences)"},
    {"name": "mha_key_padding", "builder": "mha_key_padding", "args": {},
     "inputs": [["input_ids", [40], "int64", 3000]], "classes": 3, "rows": [[8, "momentum"], [32, "adam"]],
     "description": "Text classifier: Embedding, nn.MultiheadAttention(batch_first) x 2 with key_padding_mask = "
                    "ids < 100, LayerNorm + ReLU MLP, masked mean pooling"},
    {"name": "anchor_det_head", "builder": "anchor_det_head", "args": {},
     "inputs": IMG(64), "classes": 4, "label_shape": [240], "rows": [[2, "adam"], [8, "sgd"]],
     "description": "RetinaNet-like head: small backbone, two-level FPN (1x1 laterals, nearest top-down), shared "
                    "3-conv cls and box subnets over both levels, 3 anchors, outputs flattened and concatenated "
                    "([B, classes, 240]); the box term enters the logits"},
    {"name": "logmel_cnn", "builder": "logmel_cnn", "args": {},
     "inputs": [["input", [1, 8000], "float32", 0]], "classes": 12, "rows": [[4, "sgd"], [16, "adam"]],
     "description": "Log-mel front end written by hand: fixed DFT filters (a buffer) by F.conv1d (n_fft 256, hop "
                    "128), power re^2 + im^2, a mel matrix (buffer) matmul, log(clamp), then a 2-D CNN"},
    {"name": "tsm_video", "builder": "tsm_video", "args": {},
     "inputs": [["input", [8, 3, 32, 32], "float32", 0]], "classes": 10, "rows": [[2, "adam"], [4, "momentum"]],
     "description": "Temporal shift module: frames folded into the batch, 1/8 of the channels shifted one frame "
                    "back and 1/8 forward (slices + zero cat) before each residual 2-D block, 8 frames of 32x32"},
    {"name": "deep_cross", "builder": "deep_cross", "args": {},
     "inputs": [["cat_ids", [8], "int64", 1000], ["dense", [13], "float32", 0]], "classes": 2,
     "rows": [[64, "adam"], [256, "adagrad"]],
     "description": "Deep & Cross network: 8 categorical fields (one table, offsets) x 16 + 13 dense, 3 cross "
                    "layers x0 * (xl . w) + b + xl beside a deep MLP, concatenated"},
    {"name": "frozen_bn_resnet18", "builder": "frozen_bn_resnet18", "args": {},
     "inputs": IMG(64), "classes": 20, "rows": [[4, "sgd"], [8, "adam"]],
     "description": "torchvision ResNet-18 with torchvision.ops.misc.FrozenBatchNorm2d (frozen statistics and "
                    "affine as buffers, as detection backbones), 64x64"},
    {"name": "set_transformer", "builder": "set_transformer", "args": {},
     "inputs": [["input", [64, 3], "float32", 0]], "classes": 8, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Set Transformer: two ISAB blocks (16 learned inducing points, nn.MultiheadAttention "
                    "batch_first), PMA pooling by a learned seed query, point sets of 64 x 3"},
    {"name": "rk4_ode_mlp", "builder": "rk4_ode_mlp", "args": {},
     "inputs": [["input", [32], "float32", 0]], "classes": 5, "rows": [[32, "adam"], [128, "rmsprop"]],
     "description": "Neural ODE by hand: one tanh MLP f(h) (64 -> 128 -> 64) integrated by RK4, 3 steps "
                    "(f applied 12 times, weights shared)"},
    {"name": "hypernet_bmm", "builder": "hypernet_bmm", "args": {},
     "inputs": [["input", [48], "float32", 0], ["context", [16], "float32", 0]], "classes": 10,
     "rows": [[16, "adam"], [64, "sgd"]],
     "description": "Hypernetwork: an MLP of a context input generates a per-sample 32x48 weight and bias, applied "
                    "to the input by torch.bmm, then a ReLU MLP classifier"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    def attention(q, k, v, heads, bias=None):
        b, t, d = q.shape
        s = k.shape[1]
        q = q.view(b, t, heads, d // heads).transpose(1, 2)
        k = k.view(b, s, heads, d // heads).transpose(1, 2)
        v = v.view(b, s, heads, d // heads).transpose(1, 2)
        w = q @ k.transpose(-2, -1) / math.sqrt(d // heads)
        if bias is not None:
            w = w + bias
        return (w.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, d)

    if kind == "albert_shared":
        class Layer(nn.Module):
            def __init__(self, d=128, heads=4):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                self.n1 = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                self.n2 = nn.LayerNorm(d)

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                x = self.n1(x + self.o(attention(q, k, v, self.heads)))
                return self.n2(x + self.ff(x))

        class Net(nn.Module):
            def __init__(self, e=64, d=128, t=64):
                super().__init__()
                self.tok = nn.Embedding(4000, e)
                self.pos = nn.Embedding(t, e)
                self.proj = nn.Linear(e, d)
                self.layer = Layer(d)
                self.fc = nn.Linear(d, classes)
                self.register_buffer("ids", torch.arange(t), persistent=False)

            def forward(self, ids):
                x = self.proj(self.tok(ids) + self.pos(self.ids))
                for _ in range(4):
                    x = self.layer(x)
                return self.fc(torch.tanh(x[:, 0]))
        return Net()

    if kind == "hf_gpt2_conv1d":
        class Conv1D(nn.Module):  # transformers.pytorch_utils.Conv1D
            def __init__(self, nf, nx):
                super().__init__()
                self.nf = nf
                self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
                self.bias = nn.Parameter(torch.zeros(nf))

            def forward(self, x):
                size_out = x.size()[:-1] + (self.nf,)
                x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
                return x.view(size_out)

        def gelu_new(x):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

        class Block(nn.Module):
            def __init__(self, d, heads, t):
                super().__init__()
                self.heads = heads
                self.ln_1 = nn.LayerNorm(d)
                self.c_attn = Conv1D(3 * d, d)
                self.c_proj = Conv1D(d, d)
                self.ln_2 = nn.LayerNorm(d)
                self.c_fc = Conv1D(4 * d, d)
                self.mlp_proj = Conv1D(d, 4 * d)
                self.drop = nn.Dropout(0.1)
                self.register_buffer("bias", torch.tril(torch.ones(t, t, dtype=torch.bool)).view(1, 1, t, t),
                                     persistent=False)

            def forward(self, x):
                b, t, d = x.shape
                h = self.heads
                q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
                q = q.view(b, t, h, d // h).permute(0, 2, 1, 3)
                k = k.view(b, t, h, d // h).permute(0, 2, 1, 3)
                v = v.view(b, t, h, d // h).permute(0, 2, 1, 3)
                w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // h)
                w = torch.where(self.bias[:, :, :t, :t], w, torch.tensor(-1e4, dtype=w.dtype))
                w = self.drop(nn.functional.softmax(w, dim=-1))
                a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous().view(b, t, d)
                x = x + self.drop(self.c_proj(a))
                return x + self.drop(self.mlp_proj(gelu_new(self.c_fc(self.ln_2(x)))))

        class Net(nn.Module):
            def __init__(self, d=96, t=48):
                super().__init__()
                self.wte = nn.Embedding(classes, d)
                self.wpe = nn.Embedding(t, d)
                self.blocks = nn.Sequential(*[Block(d, 4, t) for _ in range(3)])
                self.ln_f = nn.LayerNorm(d)
                self.register_buffer("pos", torch.arange(t), persistent=False)

            def forward(self, ids):
                h = self.ln_f(self.blocks(self.wte(ids) + self.wpe(self.pos)))
                return (h @ self.wte.weight.t()).transpose(1, 2)
        return Net()

    if kind == "lora_encoder":
        class LoRALinear(nn.Module):
            def __init__(self, cin, cout, r=8, alpha=16):
                super().__init__()
                self.base = nn.Linear(cin, cout)
                self.lora_A = nn.Parameter(torch.randn(r, cin) * 0.01)
                self.lora_B = nn.Parameter(torch.zeros(cout, r))
                self.drop = nn.Dropout(0.05)
                self.scaling = alpha / r

            def forward(self, x):
                return self.base(x) + (self.drop(x) @ self.lora_A.t() @ self.lora_B.t()) * self.scaling

        class Layer(nn.Module):
            def __init__(self, d=64, heads=4):
                super().__init__()
                self.heads = heads
                self.q = LoRALinear(d, d)
                self.k = nn.Linear(d, d)
                self.v = LoRALinear(d, d)
                self.o = nn.Linear(d, d)
                self.n1 = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
                self.n2 = nn.LayerNorm(d)

            def forward(self, x):
                h = self.n1(x)
                x = x + self.o(attention(self.q(h), self.k(h), self.v(h), self.heads))
                return x + self.ff(self.n2(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.Sequential(Layer(), Layer())
                self.fc = nn.Linear(64, classes)

            def forward(self, x):
                return self.fc(self.layers(x).mean(dim=1))
        return Net()

    if kind == "early_exit_cnn":
        def stage(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                                 nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                                 nn.MaxPool2d(2))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stages = nn.ModuleList([stage(3, 32), stage(32, 64), stage(64, 128)])
                self.exits = nn.ModuleList([nn.Linear(c, classes) for c in (32, 64, 128)])
                self.mix = nn.Parameter(torch.zeros(3))

            def forward(self, x):
                outs = []
                for s, e in zip(self.stages, self.exits):
                    x = s(x)
                    outs.append(e(x.mean(dim=(2, 3))))
                w = self.mix.softmax(dim=0)
                return outs[0] * w[0] + outs[1] * w[1] + outs[2] * w[2]
        return Net()

    if kind == "simclr_infonce":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Sequential(
                    nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(32, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(64, 128, 3, 1, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten())
                self.proj = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 64))

            def forward(self, x):
                v1 = x
                v2 = torch.flip(x, dims=[3]) + 0.1 * torch.randn_like(x)
                z1 = F.normalize(self.proj(self.enc(v1)), dim=1)
                z2 = F.normalize(self.proj(self.enc(v2)), dim=1)
                return z1 @ z2.t() / 0.1
        return Net()

    if kind == "triplet_embed":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Sequential(
                    nn.Conv2d(3, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(64, 64, 3, 1, 1), nn.ReLU(), nn.Flatten(), nn.Linear(64 * 8 * 8, 128))

            def forward(self, a, p, n):
                ea, ep, en = self.enc(a), self.enc(p), self.enc(n)
                return -torch.stack([torch.norm(ea - ep, dim=1), torch.norm(ea - en, dim=1)], dim=1)
        return Net()

    if kind == "mha_key_padding":
        class Layer(nn.Module):
            def __init__(self, d=96, heads=4):
                super().__init__()
                self.attn = nn.MultiheadAttention(d, heads, dropout=0.1, batch_first=True)
                self.n1 = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
                self.n2 = nn.LayerNorm(d)

            def forward(self, x, pad):
                x = self.n1(x + self.attn(x, x, x, key_padding_mask=pad, need_weights=False)[0])
                return self.n2(x + self.ff(x))

        class Net(nn.Module):
            def __init__(self, d=96):
                super().__init__()
                self.emb = nn.Embedding(3000, d)
                self.layers = nn.ModuleList([Layer(d), Layer(d)])
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                pad = ids < 100
                x = self.emb(ids)
                for layer in self.layers:
                    x = layer(x, pad)
                keep = (~pad).float().unsqueeze(-1)
                return self.fc((x * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0))
        return Net()

    if kind == "anchor_det_head":
        def cbr(cin, cout, stride=1):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

        class Net(nn.Module):
            def __init__(self, f=64, anchors=3):
                super().__init__()
                self.anchors = anchors
                self.c1 = nn.Sequential(cbr(3, 32, 2), cbr(32, 48, 2), cbr(48, 64, 2))   # /8: 8x8
                self.c2 = nn.Sequential(cbr(64, 96, 2), cbr(96, 96))                    # /16: 4x4
                self.lat1 = nn.Conv2d(64, f, 1)
                self.lat2 = nn.Conv2d(96, f, 1)
                self.cls_tower = nn.Sequential(nn.Conv2d(f, f, 3, 1, 1), nn.ReLU(), nn.Conv2d(f, f, 3, 1, 1),
                                               nn.ReLU(), nn.Conv2d(f, anchors * classes, 3, 1, 1))
                self.box_tower = nn.Sequential(nn.Conv2d(f, f, 3, 1, 1), nn.ReLU(), nn.Conv2d(f, f, 3, 1, 1),
                                               nn.ReLU(), nn.Conv2d(f, anchors * 4, 3, 1, 1))
                self.box_w = nn.Parameter(torch.full((1, classes, 1), 1e-2))

            def forward(self, x):
                c1 = self.c1(x)
                c2 = self.c2(c1)
                p2 = self.lat2(c2)
                p1 = self.lat1(c1) + F.interpolate(p2, scale_factor=2.0, mode="nearest")
                cls, box = [], []
                for p in (p1, p2):
                    b = p.shape[0]
                    cls.append(self.cls_tower(p).view(b, self.anchors, classes, -1).permute(0, 2, 1, 3)
                               .reshape(b, classes, -1))
                    box.append(self.box_tower(p).view(b, self.anchors, 4, -1).permute(0, 2, 1, 3).reshape(b, 4, -1))
                cls = torch.cat(cls, dim=2)                         # [B, classes, 3 x (64 + 16)]
                box = torch.cat(box, dim=2)
                box_term = box.abs().mean(dim=1, keepdim=True)      # [B, 1, N]
                return cls - box_term * self.box_w
        return Net()

    if kind == "logmel_cnn":
        class Net(nn.Module):
            def __init__(self, n_fft=256, hop=128, mels=40):
                super().__init__()
                self.hop = hop
                bins = n_fft // 2 + 1
                n = torch.arange(n_fft).float()
                k = torch.arange(bins).float().unsqueeze(1)
                win = torch.hann_window(n_fft)
                real = torch.cos(2 * math.pi * k * n / n_fft) * win
                imag = -torch.sin(2 * math.pi * k * n / n_fft) * win
                self.register_buffer("dft", torch.cat([real, imag], 0).unsqueeze(1), persistent=False)
                fb = torch.rand(mels, bins)
                self.register_buffer("mel", fb / fb.sum(dim=1, keepdim=True), persistent=False)
                self.bins = bins
                self.cnn = nn.Sequential(
                    nn.Conv2d(1, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(32, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(64, 96, 3, 1, 1, bias=False), nn.BatchNorm2d(96), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(96, classes))

            def forward(self, x):
                spec = F.conv1d(x, self.dft, stride=self.hop)            # [B, 2 * bins, T]
                re, im = spec[:, :self.bins], spec[:, self.bins:]
                power = re * re + im * im
                mel = torch.matmul(self.mel, power)                      # [B, mels, T]
                return self.cnn(torch.log(mel.clamp(min=1e-6)).unsqueeze(1))
        return Net()

    if kind == "tsm_video":
        def shift(x, t):
            bt, c, h, w = x.shape
            x = x.view(bt // t, t, c, h, w)
            f = c // 8
            z = torch.zeros_like(x[:, :1, :f])
            back = torch.cat([x[:, 1:, :f], z], dim=1)
            fwd = torch.cat([z, x[:, :-1, f:2 * f]], dim=1)
            return torch.cat([back, fwd, x[:, :, 2 * f:]], dim=2).view(bt, c, h, w)

        class Block(nn.Module):
            def __init__(self, c, t):
                super().__init__()
                self.t = t
                self.c1 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
                self.b1 = nn.BatchNorm2d(c)
                self.c2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
                self.b2 = nn.BatchNorm2d(c)

            def forward(self, x):
                y = F.relu(self.b1(self.c1(shift(x, self.t))))
                return F.relu(x + self.b2(self.c2(y)))

        class Net(nn.Module):
            def __init__(self, t=8):
                super().__init__()
                self.t = t
                self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
                self.b1 = Block(32, t)
                self.down = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
                self.b2 = Block(64, t)
                self.fc = nn.Linear(64, classes)

            def forward(self, x):
                b, t, c, h, w = x.shape
                y = self.b2(self.down(self.b1(self.stem(x.reshape(b * t, c, h, w)))))
                return self.fc(y.mean(dim=(2, 3)).view(b, t, -1).mean(dim=1))
        return Net()

    if kind == "deep_cross":
        class Net(nn.Module):
            def __init__(self, fields=8, vocab=1000, e=16, dense=13, layers=3):
                super().__init__()
                self.emb = nn.Embedding(fields * vocab, e)
                self.register_buffer("offsets", torch.arange(fields) * vocab, persistent=False)
                d = fields * e + dense
                self.cross_w = nn.ParameterList([nn.Parameter(torch.randn(d, 1) * 0.01) for _ in range(layers)])
                self.cross_b = nn.ParameterList([nn.Parameter(torch.zeros(d)) for _ in range(layers)])
                self.deep = nn.Sequential(nn.Linear(d, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU())
                self.fc = nn.Linear(d + 128, classes)

            def forward(self, ids, dense):
                x0 = torch.cat([self.emb(ids + self.offsets).flatten(1), dense], dim=1)
                xl = x0
                for w, b in zip(self.cross_w, self.cross_b):
                    xl = x0 * (xl @ w) + b + xl
                return self.fc(torch.cat([xl, self.deep(x0)], dim=1))
        return Net()

    if kind == "frozen_bn_resnet18":
        import torchvision
        from torchvision.ops.misc import FrozenBatchNorm2d
        return torchvision.models.resnet18(weights=None, num_classes=classes, norm_layer=FrozenBatchNorm2d)

    if kind == "set_transformer":
        class MAB(nn.Module):
            def __init__(self, d, heads=4):
                super().__init__()
                self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
                self.n1 = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
                self.n2 = nn.LayerNorm(d)

            def forward(self, q, kv):
                h = self.n1(q + self.attn(q, kv, kv, need_weights=False)[0])
                return self.n2(h + self.ff(h))

        class ISAB(nn.Module):
            def __init__(self, d, m=16):
                super().__init__()
                self.ind = nn.Parameter(torch.randn(1, m, d) * 0.1)
                self.mab1 = MAB(d)
                self.mab2 = MAB(d)

            def forward(self, x):
                h = self.mab1(self.ind.expand(x.shape[0], -1, -1), x)
                return self.mab2(x, h)

        class Net(nn.Module):
            def __init__(self, d=64):
                super().__init__()
                self.inp = nn.Linear(3, d)
                self.isab = nn.Sequential(ISAB(d), ISAB(d))
                self.seed = nn.Parameter(torch.randn(1, 1, d) * 0.1)
                self.pma = MAB(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                h = self.isab(self.inp(x))
                return self.fc(self.pma(self.seed.expand(x.shape[0], -1, -1), h).squeeze(1))
        return Net()

    if kind == "rk4_ode_mlp":
        class Net(nn.Module):
            def __init__(self, din=32, d=64, h=128, steps=3):
                super().__init__()
                self.steps = steps
                self.inp = nn.Linear(din, d)
                self.f = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, d))
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                y = torch.tanh(self.inp(x))
                dt = 1.0 / self.steps
                for _ in range(self.steps):
                    k1 = self.f(y)
                    k2 = self.f(y + 0.5 * dt * k1)
                    k3 = self.f(y + 0.5 * dt * k2)
                    k4 = self.f(y + dt * k3)
                    y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
                return self.fc(y)
        return Net()

    if kind == "hypernet_bmm":
        class Net(nn.Module):
            def __init__(self, din=48, dout=32, ctx=16, h=128):
                super().__init__()
                self.din, self.dout = din, dout
                self.hyper = nn.Sequential(nn.Linear(ctx, h), nn.ReLU(), nn.Linear(h, dout * din + dout))
                self.head = nn.Sequential(nn.Linear(dout, 64), nn.ReLU(), nn.Linear(64, classes))

            def forward(self, x, c):
                p = self.hyper(c)
                w = p[:, :self.dout * self.din].view(-1, self.dout, self.din)
                b = p[:, self.dout * self.din:]
                y = torch.bmm(w, x.unsqueeze(2)).squeeze(2) + b
                return self.head(F.relu(y))
        return Net()

    raise ValueError("unknown builder " + kind)
