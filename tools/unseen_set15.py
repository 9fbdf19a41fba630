"""The fifteenth held-out set of real architectures (tools/unseen_models.py --set unseen15).

Fixed on 2026-12-07, after set 14 had been planned (blind bench/results/unseen14_blind_20261207.json) and pooled
(0e8428e), before any of these was exported for a row, measured or planned (each model was only built, stepped once
in torch and exported to a throwaway directory at opset 14 to check that it exports). Architectures and idioms of
2024-2026 training practice that the zoo, sets 1-14 and the random nets lack (LLaMA blocks, GQA, MAE masking,
ConvNeXt-V2 GRN, Perceiver, T5 buckets, CLIP, YOLO CSP/SPPF, top-k MoE routers, FiLM, weight norm, Conformer,
EfficientNet-V2, focal losses, LoRA, LayerScale, Mamba, RetNet, xLSTM-free linear attention, DiT, DETR and the
others named in tools/unseen_set14.py's docstring are in the zoo or sets 2-14, so they are not repeated): a ViT with
register tokens and patch dropout (keep 48 of 64 patches by argsort of torch.rand + gather), a PaLM / GPT-J parallel
block with QK-RMSNorm, a sliding-window causal mask built in forward and a tied output embedding, expert-choice MoE
(each expert takes its top-k tokens by topk over the sequence, gather, batched expert weights by matmul,
scatter_add back), a YOLOv8-style C2f net (chunk in two, bottlenecks appended, cat) with SPPF and a decoupled head
whose box branch goes through Distribution Focal Loss decoding (softmax over 16 bins and a fixed arange 1x1 conv),
DINO multi-crop self-distillation (2 global 48 px and 4 local 24 px crops through one student, an EMA teacher under
torch.no_grad on the global crops, a centre buffer updated in place, sharpened softmax cross-entropy over crop
pairs), an SN-GAN discriminator with spectral norm written by hand as BigGAN-PyTorch does (one power iteration under
no_grad in forward, the u buffer copied in place, W / sigma; torch.nn.utils.spectral_norm does not export), GRU-D
(missing values imputed by learned decays of the last observation and the mean, hidden decay, 48 GRUCell steps),
the xLSTM mLSTM in its parallel form (log-sigmoid forget gates by cumsum, a max-stabilised decay matrix, the
normaliser max(|C 1|, exp(-m)), a causal conv1d and SiLU gate), a top-k sparse autoencoder on activations (topk of
the encoder's pre-activations scattered into zeros, decoder with a pre-bias, reconstruction error in the logits),
Matryoshka representation heads (4 nested prefixes of one embedding, CE over the stacked heads), BatchEnsemble
(4 members by rank-1 fast weights on an input repeated 4 times), DoRA (frozen base weights, W0 + BA column-normed
and rescaled by a learned magnitude in forward), CaiT (talking-heads attention: Linear over heads before and after
the softmax, then class-attention layers where the class token alone queries), Reformer LSH attention (random
rotations drawn in forward, argmax buckets, argsort, gathered chunks attending to themselves and the previous
chunk, self masked, unsorted by the inverse permutation), CondConv (per-sample mixtures of 4 expert kernels, by
linearity as the routing-weighted sum of the experts' outputs: the batch-folded grouped conv does not export), a spiking CNN (leaky integrate-and-fire over 6
time steps with a straight-through sigmoid surrogate and soft reset) and Medusa heads (3 extra residual heads over
a small causal LM's last hidden state, logits of all 4 heads stacked).

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "vit_registers", "builder": "vit_registers", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[16, "adamw"], [64, "sgd"]],
     "description": "ViT with registers: 4x4 patches (64 x 128), learned positions, patch dropout keeping 48 of 64 "
                    "by argsort(torch.rand) + gather, a class token and 4 register tokens concatenated, 4 pre-norm "
                    "blocks (qkv Linear, 4 heads, softmax, GELU MLP 4x), the registers sliced off, class head"},
    {"name": "parallel_qknorm_lm", "builder": "parallel_qknorm_lm", "args": {},
     "inputs": [["input_ids", [64], "int64", 4000]], "classes": 4000, "label_shape": [64],
     "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "PaLM / GPT-J parallel blocks: x + attn(ln(x)) + mlp(ln(x)), per-head RMSNorm of q and k, a "
                    "sliding-window (16) causal mask built from arange in forward, 3 layers d 192 x 6 heads, "
                    "GELU MLP, output by the tied token embedding (F.linear), logits [B, 4000, 64]"},
    {"name": "expert_choice_moe", "builder": "expert_choice_moe", "args": {},
     "inputs": [["tokens", [32, 64], "float32", 0]], "classes": 10, "rows": [[16, "adam"], [64, "sgd"]],
     "description": "Expert-choice MoE: token projection to 128, 2 layers of LayerNorm + router softmax over 4 "
                    "experts, each expert's top-16 tokens by topk over the sequence, gather, expert FFNs as "
                    "batched matmuls with [E, d, h] weights, gate-scaled, scatter_add back, residual; mean pool"},
    {"name": "yolov8_dfl", "builder": "yolov8_dfl", "args": {},
     "inputs": IMG(64), "classes": 8, "label_shape": [84], "rows": [[4, "adam"], [16, "sgd"]],
     "description": "YOLOv8-style: Conv+BN+SiLU stem, C2f blocks (1x1, chunk(2), bottlenecks appended, cat, 1x1) "
                    "to P3-P5 (8, 4, 2 px), SPPF, a top-down neck (nearest up, cat, C2f), decoupled heads: box "
                    "4 x 16 bins decoded by DFL (softmax over bins, fixed arange 1x1 conv), class logits per "
                    "anchor (84) plus a small box term"},
    {"name": "dino_multicrop", "builder": "dino_multicrop", "args": {},
     "inputs": [["global_crops", [2, 3, 48, 48], "float32", 0], ["local_crops", [4, 3, 24, 24], "float32", 0]],
     "classes": 128, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "DINO multi-crop: a Conv/BN/ReLU student with a 3-layer projection head, l2-normalised, and a "
                    "weight-normalised prototype layer (128) over 2 global and 4 local crops; an EMA teacher "
                    "(frozen copy) under torch.no_grad on the global crops, centred by a buffer updated in place, "
                    "sharpened softmax; cross-entropy over crop pairs added to the first global crop's logits"},
    {"name": "sngan_spectral", "builder": "sngan_spectral", "args": {},
     "inputs": IMG(32), "classes": 2, "rows": [[16, "adam"], [64, "sgd"]],
     "description": "SN-GAN discriminator: spectral norm by hand (u buffer, one power iteration under no_grad, u copied "
                    "in place, W / sigma by F.conv2d / F.linear) on 7 convs (3x3 / 4x4 stride 2, 64-128-256) and "
                    "the Linear head, LeakyReLU 0.1, global sum pooling"},
    {"name": "gru_d", "builder": "gru_d", "args": {},
     "inputs": [["values", [48, 12], "float32", 0], ["observed", [48, 12], "float32", 0],
                ["deltas", [48, 12], "float32", 0]], "classes": 2, "rows": [[16, "adam"], [64, "sgd"]],
     "description": "GRU-D: mask = observed > 0, input decay exp(-relu(W delta)) between the last observation and "
                    "the empirical mean, hidden decay, GRUCell 64 over 48 steps of [x_hat, mask], the last "
                    "observation carried, Linear head on the final state"},
    {"name": "mlstm_parallel", "builder": "mlstm_parallel", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 5, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "xLSTM mLSTM blocks (parallel form): LayerNorm, up-projection x2, causal Conv1d(4) + SiLU on "
                    "the q/k branch, 4 heads, log-sigmoid forget gates cumsum'ed into a [T, T] decay with the "
                    "input gate, lower-triangular mask, max-stabilised exp, normaliser max(|C 1|, exp(-m)), "
                    "GroupNorm per head, SiLU output gate, down-projection; 2 blocks d 128, mean pooled"},
    {"name": "topk_sae", "builder": "topk_sae", "args": {},
     "inputs": [["acts", [512], "float32", 0]], "classes": 10, "rows": [[64, "adam"], [256, "adam"]],
     "description": "Top-k sparse autoencoder on 512-d activations: pre-bias subtracted, encoder to 4096, the top 32 "
                    "pre-activations by topk, ReLU, scattered into zeros, decoder to 512 plus the pre-bias; a "
                    "probe head on the reconstruction with the squared error added to its logits"},
    {"name": "matryoshka_heads", "builder": "matryoshka_heads", "args": {},
     "inputs": IMG(32), "classes": 20, "label_shape": [4], "rows": [[32, "adam"], [128, "sgd"]],
     "description": "Matryoshka representation learning: a Conv/BN/ReLU encoder to a 256-d embedding, Linear heads "
                    "on its prefixes 32, 64, 128, 256 (slices), logits stacked [B, 20, 4] so one CE covers all "
                    "4 nestings"},
    {"name": "batch_ensemble", "builder": "batch_ensemble", "args": {},
     "inputs": [["features", [64], "float32", 0]], "classes": 5, "rows": [[64, "adam"], [256, "sgd"]],
     "description": "BatchEnsemble MLP: the batch repeated for 4 members, each layer ((x * r_m) W) * s_m + b_m "
                    "with rank-1 fast weights expanded by repeat_interleave, 3 layers of 256 with ReLU and "
                    "dropout, member logits averaged"},
    {"name": "dora_linear", "builder": "dora_linear", "args": {},
     "inputs": [["tokens", [64, 96], "float32", 0]], "classes": 10, "rows": [[8, "adam"], [32, "adamw"]],
     "description": "DoRA adapters: frozen base weights (requires_grad False), W0 + (B A) * 2 per layer, its "
                    "column norms, the learned magnitude times the normalised weight by F.linear; 3 pre-norm "
                    "residual MLP blocks 256 -> 512 -> 256 with GELU over 64 tokens, mean pooled"},
    {"name": "cait_talking_heads", "builder": "cait_talking_heads", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[16, "adamw"], [64, "sgd"]],
     "description": "CaiT: 4x4 patches (64 x 128), 3 self-attention layers with talking heads (Linear over the "
                    "4 heads before and after the softmax) and LayerScale, then 2 class-attention layers (the "
                    "class token alone queries [cls, patches]), class head"},
    {"name": "lsh_attention", "builder": "lsh_attention", "args": {},
     "inputs": [["input_ids", [128], "int64", 1000]], "classes": 4, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Reformer LSH attention: shared QK, random rotations drawn per forward (randn), 8 buckets by "
                    "argmax of [xR, -xR], argsort of bucket * T + position, gathered into chunks of 16 that "
                    "attend to themselves and the previous chunk, self masked, unsorted by the inverse "
                    "permutation; 2 layers d 128 x 2 heads with a feed-forward, mean pooled"},
    {"name": "condconv_dynamic", "builder": "condconv_dynamic", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "CondConv: per-sample mixtures of 4 expert 3x3 kernels by sigmoid routing of the pooled input, "
                    "computed as one conv to 4 x C_out and the routing-weighted sum over experts; 4 CondConv + "
                    "BN + ReLU layers with 2 max pools, pooled head"},
    {"name": "snn_lif", "builder": "snn_lif", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Spiking CNN: the image fed at each of 6 steps, conv + BN into leaky integrate-and-fire "
                    "neurons (beta 0.9, threshold 1, spikes by a straight-through sigmoid surrogate, soft reset), "
                    "2 conv layers with avg pools, a LIF Linear layer, output membrane summed over steps"},
    {"name": "medusa_heads", "builder": "medusa_heads", "args": {},
     "inputs": [["input_ids", [32], "int64", 3000]], "classes": 3000, "label_shape": [32, 4],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Medusa: a 2-layer causal pre-norm LM (d 192, 4 heads), its LM head and 3 Medusa heads (x + "
                    "SiLU(Linear(x)), then Linear to the 3000 vocabulary) on the last hidden state, logits "
                    "stacked [B, 3000, 32, 4]"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    class Attn(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.h = heads
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)

        def forward(self, x):
            b, n, d = x.shape
            q, k, v = self.qkv(x).view(b, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
            a = (q @ k.transpose(-2, -1) / math.sqrt(d // self.h)).softmax(-1)
            return self.proj((a @ v).transpose(1, 2).reshape(b, n, d))

    class Block(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = Attn(d, heads)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.n1(x))
            return x + self.mlp(self.n2(x))

    def conv_bn(ci, co, k=3, s=1, act=None):
        return nn.Sequential(nn.Conv2d(ci, co, k, s, k // 2, bias=False), nn.BatchNorm2d(co),
                             act if act is not None else nn.ReLU(inplace=True))

    if kind == "vit_registers":
        class Net(nn.Module):
            def __init__(self, d=128, regs=4, keep=48):
                super().__init__()
                self.keep = keep
                self.patch = nn.Conv2d(3, d, 4, 4)
                self.pos = nn.Parameter(torch.randn(1, 64, d) * 0.02)
                self.cls = nn.Parameter(torch.zeros(1, 1, d))
                self.reg = nn.Parameter(torch.zeros(1, regs, d))
                self.blocks = nn.Sequential(*[Block(d, 4) for _ in range(4)])
                self.norm = nn.LayerNorm(d)
                self.head = nn.Linear(d, classes)
                self.regs = regs

            def forward(self, x):
                t = self.patch(x).flatten(2).transpose(1, 2) + self.pos                    # [B, 64, d]
                b, n, d = t.shape
                keep = torch.rand(b, n, device=x.device).argsort(1)[:, :self.keep]
                t = t.gather(1, keep.unsqueeze(-1).expand(-1, -1, d))
                t = torch.cat([self.cls.expand(b, -1, -1), self.reg.expand(b, -1, -1), t], 1)
                t = self.blocks(t)
                t = torch.cat([t[:, :1], t[:, 1 + self.regs:]], 1)                          # registers dropped
                return self.head(self.norm(t[:, 0]))
        return Net()

    if kind == "parallel_qknorm_lm":
        class RMSNorm(nn.Module):
            def __init__(self, d, eps=1e-6):
                super().__init__()
                self.w = nn.Parameter(torch.ones(d))
                self.eps = eps

            def forward(self, x):
                return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.w

        class Par(nn.Module):
            def __init__(self, d, heads, window):
                super().__init__()
                self.h, self.dh, self.window = heads, d // heads, window
                self.ln = nn.LayerNorm(d)
                self.qkv = nn.Linear(d, 3 * d, bias=False)
                self.qn, self.kn = RMSNorm(d // heads), RMSNorm(d // heads)
                self.o = nn.Linear(d, d, bias=False)
                self.up = nn.Linear(d, 4 * d)
                self.down = nn.Linear(4 * d, d)

            def forward(self, x):
                b, t, d = x.shape
                y = self.ln(x)
                q, k, v = self.qkv(y).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
                q, k = self.qn(q), self.kn(k)
                pos = torch.arange(t, device=x.device)
                rel = pos.view(-1, 1) - pos.view(1, -1)
                bad = (rel < 0) | (rel >= self.window)
                s = (q @ k.transpose(-2, -1)) / math.sqrt(self.dh)
                a = s.masked_fill(bad, float("-inf")).softmax(-1)
                att = self.o((a @ v).transpose(1, 2).reshape(b, t, d))
                return x + att + self.down(F.gelu(self.up(y)))

        class Net(nn.Module):
            def __init__(self, d=192):
                super().__init__()
                self.tok = nn.Embedding(4000, d)
                self.layers = nn.Sequential(*[Par(d, 6, 16) for _ in range(3)])
                self.norm = nn.LayerNorm(d)

            def forward(self, ids):
                h = self.norm(self.layers(self.tok(ids)))
                return F.linear(h, self.tok.weight).transpose(1, 2)                           # [B, V, T]
        return Net()

    if kind == "expert_choice_moe":
        class ECLayer(nn.Module):
            def __init__(self, d=128, h=256, experts=4, k=16):
                super().__init__()
                self.e, self.k = experts, k
                self.norm = nn.LayerNorm(d)
                self.router = nn.Linear(d, experts, bias=False)
                self.w1 = nn.Parameter(torch.randn(experts, d, h) / math.sqrt(d))
                self.w2 = nn.Parameter(torch.randn(experts, h, d) / math.sqrt(h))

            def forward(self, x):
                b, t, d = x.shape
                y = self.norm(x)
                probs = self.router(y).softmax(-1).transpose(1, 2)                         # [B, E, T]
                g, idx = probs.topk(self.k, dim=-1)                                          # [B, E, k]
                xin = y.unsqueeze(1).expand(-1, self.e, -1, -1).gather(
                    2, idx.unsqueeze(-1).expand(-1, -1, -1, d))                              # [B, E, k, d]
                hmid = F.gelu(xin @ self.w1)                                                 # [B, E, k, h]
                out = (hmid @ self.w2) * g.unsqueeze(-1)                                     # [B, E, k, d]
                comb = x.new_zeros((b, t, d)).scatter_add(
                    1, idx.reshape(b, -1, 1).expand(-1, -1, d), out.reshape(b, -1, d))
                return x + comb

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Linear(64, 128)
                self.layers = nn.Sequential(ECLayer(), ECLayer())
                self.head = nn.Linear(128, classes)

            def forward(self, tokens):
                return self.head(self.layers(self.inp(tokens)).mean(1))
        return Net()

    if kind == "yolov8_dfl":
        def cbs(ci, co, k=3, s=1):
            return conv_bn(ci, co, k, s, nn.SiLU(inplace=True))

        class Bottleneck(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.a, self.b = cbs(c, c), cbs(c, c)

            def forward(self, x):
                return x + self.b(self.a(x))

        class C2f(nn.Module):
            def __init__(self, ci, co, n=1):
                super().__init__()
                self.c = co // 2
                self.cv1 = cbs(ci, 2 * self.c, 1)
                self.m = nn.ModuleList(Bottleneck(self.c) for _ in range(n))
                self.cv2 = cbs((2 + n) * self.c, co, 1)

            def forward(self, x):
                y = list(self.cv1(x).chunk(2, 1))
                for m in self.m:
                    y.append(m(y[-1]))
                return self.cv2(torch.cat(y, 1))

        class SPPF(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.cv1 = cbs(c, c // 2, 1)
                self.cv2 = cbs(c * 2, c, 1)
                self.pool = nn.MaxPool2d(5, 1, 2)

            def forward(self, x):
                x = self.cv1(x)
                y1 = self.pool(x)
                y2 = self.pool(y1)
                return self.cv2(torch.cat([x, y1, y2, self.pool(y2)], 1))

        class Net(nn.Module):
            def __init__(self, bins=16):
                super().__init__()
                self.bins = bins
                self.stem = nn.Sequential(cbs(3, 16, 3, 2), cbs(16, 32, 3, 2), C2f(32, 32))       # 16 px
                self.s3 = nn.Sequential(cbs(32, 64, 3, 2), C2f(64, 64, 2))                         # 8 px
                self.s4 = nn.Sequential(cbs(64, 128, 3, 2), C2f(128, 128, 2))                      # 4 px
                self.s5 = nn.Sequential(cbs(128, 128, 3, 2), C2f(128, 128), SPPF(128))             # 2 px
                self.up = nn.Upsample(scale_factor=2, mode="nearest")
                self.n4 = C2f(256, 128)
                self.n3 = C2f(192, 64)
                self.box = nn.ModuleList(nn.Sequential(cbs(c, 64), cbs(64, 64), nn.Conv2d(64, 4 * bins, 1))
                                         for c in (64, 128, 128))
                self.cls = nn.ModuleList(nn.Sequential(cbs(c, 64), cbs(64, 64), nn.Conv2d(64, classes, 1))
                                         for c in (64, 128, 128))
                self.dfl = nn.Conv2d(bins, 1, 1, bias=False).requires_grad_(False)
                self.dfl.weight.data[:] = torch.arange(bins, dtype=torch.float).view(1, bins, 1, 1)

            def forward(self, x):
                p3 = self.s3(self.stem(x))
                p4 = self.s4(p3)
                p5 = self.s5(p4)
                n4 = self.n4(torch.cat([self.up(p5), p4], 1))
                n3 = self.n3(torch.cat([self.up(n4), p3], 1))
                cls, box = [], []
                for f, bh, ch in zip((n3, n4, p5), self.box, self.cls):
                    b = f.shape[0]
                    cls.append(ch(f).flatten(2))
                    box.append(bh(f).flatten(2))
                cls, box = torch.cat(cls, 2), torch.cat(box, 2)                              # [B, C, A], [B, 64, A]
                b, a = box.shape[0], box.shape[2]
                dist = self.dfl(box.view(b, 4, self.bins, a).transpose(2, 1).softmax(1)).view(b, 4, a)
                return cls + 0.01 * dist.sum(1, keepdim=True)
        return Net()

    if kind == "dino_multicrop":
        class Student(nn.Module):
            def __init__(self, out=classes):
                super().__init__()
                self.body = nn.Sequential(conv_bn(3, 32), nn.MaxPool2d(2), conv_bn(32, 64), nn.MaxPool2d(2),
                                          conv_bn(64, 128), nn.AdaptiveAvgPool2d(1), nn.Flatten())
                self.proj = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(),
                                          nn.Linear(256, 64))
                self.last = nn.utils.weight_norm(nn.Linear(64, out, bias=False))

            def forward(self, x):
                return self.last(F.normalize(self.proj(self.body(x)), dim=-1))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.student = Student()
                self.teacher = Student()
                self.teacher.load_state_dict(self.student.state_dict())
                self.teacher.requires_grad_(False)
                self.register_buffer("center", torch.zeros(1, classes))

            def forward(self, global_crops, local_crops):
                b = global_crops.shape[0]
                g = global_crops.flatten(0, 1)                                               # [2B, 3, 48, 48]
                s_g = self.student(g).view(b, 2, -1)
                s_l = self.student(local_crops.flatten(0, 1)).view(b, 4, -1)
                s = torch.cat([s_g, s_l], 1) / 0.1                                           # [B, 6, K]
                with torch.no_grad():
                    t = self.teacher(g).view(b, 2, -1)
                    t_p = ((t - self.center) / 0.04).softmax(-1)
                    self.center.mul_(0.9).add_(0.1 * t.mean(dim=(0, 1)).unsqueeze(0))
                logp = s.log_softmax(-1)
                loss = 0
                for i in range(2):
                    for j in range(6):
                        if i != j:
                            loss = loss - (t_p[:, i] * logp[:, j]).sum(-1)
                return s[:, 0] + 0.1 * loss.unsqueeze(-1) / 10
        return Net()

    if kind == "sngan_spectral":
        class SN(nn.Module):  # BigGAN-PyTorch's hand-written spectral norm: one power iteration per forward
            def __init__(self, layer):
                super().__init__()
                self.layer = layer
                w = layer.weight
                self.register_buffer("u", F.normalize(torch.randn(1, w.shape[0]), dim=1))

            def weight(self):
                w = self.layer.weight.view(self.layer.weight.shape[0], -1)
                with torch.no_grad():
                    v = F.normalize(self.u @ w, dim=1)
                    u = F.normalize(v @ w.t(), dim=1)
                    self.u.copy_(u)
                sigma = (u @ w @ v.t()).squeeze()
                return self.layer.weight / sigma

            def forward(self, x):
                if isinstance(self.layer, nn.Conv2d):
                    return F.conv2d(x, self.weight(), self.layer.bias, self.layer.stride, self.layer.padding)
                return F.linear(x, self.weight(), self.layer.bias)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                act = nn.LeakyReLU(0.1)
                chans = [(3, 64, 3, 1), (64, 64, 4, 2), (64, 128, 3, 1), (128, 128, 4, 2), (128, 256, 3, 1),
                         (256, 256, 4, 2), (256, 256, 3, 1)]
                layers = []
                for ci, co, k, s in chans:
                    layers += [SN(nn.Conv2d(ci, co, k, s, 1)), act]
                self.body = nn.Sequential(*layers)
                self.head = SN(nn.Linear(256, classes))

            def forward(self, x):
                return self.head(self.body(x).sum(dim=(2, 3)))
        return Net()

    if kind == "gru_d":
        class Net(nn.Module):
            def __init__(self, f=12, h=64):
                super().__init__()
                self.h = h
                self.gx = nn.Linear(f, f)
                self.gh = nn.Linear(f, h)
                self.cell = nn.GRUCell(2 * f, h)
                self.register_buffer("mean", torch.zeros(f))
                self.head = nn.Linear(h, classes)

            def forward(self, values, observed, deltas):
                b, t, f = values.shape
                mask = (observed > 0).float()
                delta = deltas.abs()
                hx = values.new_zeros((b, self.h))
                last = values.new_zeros((b, f)) + self.mean
                for i in range(t):
                    m, x, dl = mask[:, i], values[:, i], delta[:, i]
                    gx = torch.exp(-F.relu(self.gx(dl)))
                    gh = torch.exp(-F.relu(self.gh(dl)))
                    x_hat = m * x + (1 - m) * (gx * last + (1 - gx) * self.mean)
                    hx = self.cell(torch.cat([x_hat, m], -1), gh * hx)
                    last = m * x + (1 - m) * last
                return self.head(hx)
        return Net()

    if kind == "mlstm_parallel":
        class MLSTM(nn.Module):
            def __init__(self, d=128, heads=4):
                super().__init__()
                self.h, inner = heads, 2 * d
                self.dh = inner // heads
                self.norm = nn.LayerNorm(d)
                self.up = nn.Linear(d, 2 * inner)
                self.conv = nn.Conv1d(inner, inner, 4, padding=3, groups=inner)
                self.q, self.k, self.v = nn.Linear(inner, inner), nn.Linear(inner, inner), nn.Linear(inner, inner)
                self.ig, self.fg = nn.Linear(3 * inner, heads), nn.Linear(3 * inner, heads)
                self.gn = nn.GroupNorm(heads, inner)
                self.down = nn.Linear(inner, d)

            def forward(self, x):
                b, t, _ = x.shape
                xm, z = self.up(self.norm(x)).chunk(2, -1)
                xc = F.silu(self.conv(xm.transpose(1, 2))[:, :, :t].transpose(1, 2))
                q = self.q(xc).view(b, t, self.h, self.dh).transpose(1, 2)
                k = self.k(xc).view(b, t, self.h, self.dh).transpose(1, 2)
                v = self.v(xm).view(b, t, self.h, self.dh).transpose(1, 2)
                gin = torch.cat([q.transpose(1, 2).reshape(b, t, -1), k.transpose(1, 2).reshape(b, t, -1),
                                 v.transpose(1, 2).reshape(b, t, -1)], -1)
                i_pre = self.ig(gin).transpose(1, 2)                                          # [B, H, T]
                logf = F.logsigmoid(self.fg(gin).transpose(1, 2))
                cum = logf.cumsum(-1)
                logd = cum.unsqueeze(-1) - cum.unsqueeze(-2) + i_pre.unsqueeze(-2)           # [B, H, T, T]
                causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
                logd = logd.masked_fill(~causal, float("-inf"))
                m = logd.amax(-1, keepdim=True)
                c = (q @ k.transpose(-2, -1)) / math.sqrt(self.dh) * torch.exp(logd - m)
                n = torch.maximum(c.sum(-1, keepdim=True).abs(), torch.exp(-m))
                hcell = (c / (n + 1e-6)) @ v                                                 # [B, H, T, dh]
                hcell = self.gn(hcell.transpose(1, 2).reshape(b * t, -1, 1)).view(b, t, -1)
                return x + self.down(hcell * F.silu(z))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(2000, 128)
                self.blocks = nn.Sequential(MLSTM(), MLSTM())
                self.head = nn.Linear(128, classes)

            def forward(self, ids):
                return self.head(self.blocks(self.emb(ids)).mean(1))
        return Net()

    if kind == "topk_sae":
        class Net(nn.Module):
            def __init__(self, d=512, n=4096, k=32):
                super().__init__()
                self.k = k
                self.pre = nn.Parameter(torch.zeros(d))
                self.enc = nn.Linear(d, n)
                self.dec = nn.Linear(n, d, bias=False)
                self.probe = nn.Linear(d, classes)

            def forward(self, acts):
                pre = self.enc(acts - self.pre)
                val, idx = pre.topk(self.k, dim=-1)
                code = torch.zeros_like(pre).scatter(-1, idx, F.relu(val))
                rec = self.dec(code) + self.pre
                err = (rec - acts).pow(2).mean(-1, keepdim=True)
                return self.probe(rec) + err
        return Net()

    if kind == "matryoshka_heads":
        class Net(nn.Module):
            def __init__(self, dims=(32, 64, 128, 256)):
                super().__init__()
                self.dims = dims
                self.body = nn.Sequential(conv_bn(3, 32), nn.MaxPool2d(2), conv_bn(32, 64), nn.MaxPool2d(2),
                                          conv_bn(64, 128), nn.MaxPool2d(2), conv_bn(128, 256),
                                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 256))
                self.heads = nn.ModuleList(nn.Linear(m, classes) for m in dims)

            def forward(self, x):
                z = self.body(x)
                return torch.stack([h(z[:, :m]) for m, h in zip(self.dims, self.heads)], -1)
        return Net()

    if kind == "batch_ensemble":
        class BELinear(nn.Module):
            def __init__(self, ci, co, members=4):
                super().__init__()
                self.m = members
                self.lin = nn.Linear(ci, co, bias=False)
                self.r = nn.Parameter(1 + 0.1 * torch.randn(members, ci))
                self.s = nn.Parameter(1 + 0.1 * torch.randn(members, co))
                self.b = nn.Parameter(torch.zeros(members, co))

            def forward(self, x):  # x [M * B, ci], member-major
                n = x.shape[0] // self.m
                r = self.r.repeat_interleave(n, 0)
                s = self.s.repeat_interleave(n, 0)
                b = self.b.repeat_interleave(n, 0)
                return self.lin(x * r) * s + b

        class Net(nn.Module):
            def __init__(self, members=4):
                super().__init__()
                self.m = members
                self.l1, self.l2, self.l3 = BELinear(64, 256), BELinear(256, 256), BELinear(256, 256)
                self.out = BELinear(256, classes)
                self.drop = nn.Dropout(0.1)

            def forward(self, features):
                b = features.shape[0]
                x = features.repeat(self.m, 1)
                for layer in (self.l1, self.l2, self.l3):
                    x = self.drop(F.relu(layer(x)))
                return self.out(x).view(self.m, b, -1).mean(0)
        return Net()

    if kind == "dora_linear":
        class DoRA(nn.Module):
            def __init__(self, ci, co, rank=8):
                super().__init__()
                base = nn.Linear(ci, co)
                self.w0 = nn.Parameter(base.weight.detach().clone(), requires_grad=False)
                self.bias = nn.Parameter(base.bias.detach().clone(), requires_grad=False)
                self.a = nn.Parameter(torch.randn(rank, ci) / math.sqrt(ci))
                self.b = nn.Parameter(torch.zeros(co, rank))
                self.mag = nn.Parameter(self.w0.norm(dim=1, keepdim=True).detach().clone())

            def forward(self, x):
                w = self.w0 + (self.b @ self.a) * 2.0
                w = self.mag * (w / w.norm(dim=1, keepdim=True))
                return F.linear(x, w, self.bias)

        class MLPBlock(nn.Module):
            def __init__(self, d=256):
                super().__init__()
                self.norm = nn.LayerNorm(d)
                self.fc1, self.fc2 = DoRA(d, 2 * d), DoRA(2 * d, d)

            def forward(self, x):
                return x + self.fc2(F.gelu(self.fc1(self.norm(x))))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Linear(96, 256)
                self.blocks = nn.Sequential(MLPBlock(), MLPBlock(), MLPBlock())
                self.head = nn.Linear(256, classes)

            def forward(self, tokens):
                return self.head(self.blocks(self.inp(tokens)).mean(1))
        return Net()

    if kind == "cait_talking_heads":
        class TalkingAttn(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.h = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.pre = nn.Linear(heads, heads)
                self.post = nn.Linear(heads, heads)
                self.proj = nn.Linear(d, d)

            def forward(self, x):
                b, n, d = x.shape
                q, k, v = self.qkv(x).view(b, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
                s = q @ k.transpose(-2, -1) / math.sqrt(d // self.h)                         # [B, H, N, N]
                s = self.pre(s.permute(0, 2, 3, 1)).permute(0, 3, 1, 2).softmax(-1)
                s = self.post(s.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
                return self.proj((s @ v).transpose(1, 2).reshape(b, n, d))

        class ClassAttn(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.h = heads
                self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
                self.proj = nn.Linear(d, d)

            def forward(self, x):
                b, n, d = x.shape
                q = self.q(x[:, :1]).view(b, 1, self.h, -1).transpose(1, 2)
                k = self.k(x).view(b, n, self.h, -1).transpose(1, 2)
                v = self.v(x).view(b, n, self.h, -1).transpose(1, 2)
                a = (q @ k.transpose(-2, -1) / math.sqrt(d // self.h)).softmax(-1)
                return self.proj((a @ v).transpose(1, 2).reshape(b, 1, d))

        class LSBlock(nn.Module):
            def __init__(self, d, attn):
                super().__init__()
                self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.attn = attn
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                self.g1 = nn.Parameter(torch.full((d,), 1e-4))
                self.g2 = nn.Parameter(torch.full((d,), 1e-4))

        class SABlock(LSBlock):
            def forward(self, x):
                x = x + self.g1 * self.attn(self.n1(x))
                return x + self.g2 * self.mlp(self.n2(x))

        class CABlock(LSBlock):
            def forward(self, x, cls):
                u = torch.cat([cls, x], 1)
                cls = cls + self.g1 * self.attn(self.n1(u))
                return cls + self.g2 * self.mlp(self.n2(cls))

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.patch = nn.Conv2d(3, d, 4, 4)
                self.pos = nn.Parameter(torch.randn(1, 64, d) * 0.02)
                self.sa = nn.Sequential(*[SABlock(d, TalkingAttn(d, 4)) for _ in range(3)])
                self.ca = nn.ModuleList(CABlock(d, ClassAttn(d, 4)) for _ in range(2))
                self.cls = nn.Parameter(torch.zeros(1, 1, d))
                self.norm = nn.LayerNorm(d)
                self.head = nn.Linear(d, classes)

            def forward(self, x):
                t = self.sa(self.patch(x).flatten(2).transpose(1, 2) + self.pos)
                cls = self.cls.expand(t.shape[0], -1, -1)
                for blk in self.ca:
                    cls = blk(t, cls)
                return self.head(self.norm(cls[:, 0]))
        return Net()

    if kind == "lsh_attention":
        class LSH(nn.Module):
            def __init__(self, d=128, heads=2, buckets=8, chunk=16):
                super().__init__()
                self.h, self.dh, self.nb, self.c = heads, d // heads, buckets, chunk
                self.qk = nn.Linear(d, d, bias=False)
                self.v = nn.Linear(d, d, bias=False)
                self.o = nn.Linear(d, d)

            def forward(self, x):
                b, t, d = x.shape
                qk = self.qk(x).view(b, t, self.h, self.dh).transpose(1, 2)                  # [B, H, T, dh]
                v = self.v(x).view(b, t, self.h, self.dh).transpose(1, 2)
                rot = torch.randn(self.dh, self.nb // 2, device=x.device)
                r = qk.detach() @ rot
                bucket = torch.cat([r, -r], -1).argmax(-1)                                   # [B, H, T]
                pos = torch.arange(t, device=x.device)
                order = (bucket * t + pos).argsort(-1)
                undo = order.argsort(-1)
                sqk = qk.gather(2, order.unsqueeze(-1).expand(-1, -1, -1, self.dh))
                sv = v.gather(2, order.unsqueeze(-1).expand(-1, -1, -1, self.dh))
                spos = pos.expand(b, self.h, t).gather(2, order)
                n = t // self.c
                cq = sqk.view(b, self.h, n, self.c, self.dh)
                ck = F.normalize(cq, dim=-1)
                cv = sv.view(b, self.h, n, self.c, self.dh)
                cp = spos.view(b, self.h, n, self.c)
                kk = torch.cat([ck, ck.roll(1, 2)], 3)                                       # [B, H, n, 2c, dh]
                vv = torch.cat([cv, cv.roll(1, 2)], 3)
                kp = torch.cat([cp, cp.roll(1, 2)], 3)
                s = cq @ kk.transpose(-2, -1) / math.sqrt(self.dh)                          # [B, H, n, c, 2c]
                s = s.masked_fill(cp.unsqueeze(-1) == kp.unsqueeze(-2), -1e5)
                out = (s.softmax(-1) @ vv).view(b, self.h, t, self.dh)
                out = out.gather(2, undo.unsqueeze(-1).expand(-1, -1, -1, self.dh))
                return self.o(out.transpose(1, 2).reshape(b, t, d))

        class Layer(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.attn = LSH(d)
                self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x):
                x = x + self.attn(self.n1(x))
                return x + self.ff(self.n2(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(1000, 128)
                self.layers = nn.Sequential(Layer(), Layer())
                self.head = nn.Linear(128, classes)

            def forward(self, ids):
                return self.head(self.layers(self.emb(ids)).mean(1))
        return Net()

    if kind == "condconv_dynamic":
        class CondConv(nn.Module):  # per-sample mixture of 4 expert kernels, by linearity as a mix of outputs
            def __init__(self, ci, co, experts=4):
                super().__init__()
                self.e, self.co = experts, co
                self.route = nn.Linear(ci, experts)
                self.conv = nn.Conv2d(ci, experts * co, 3, 1, 1, bias=False)

            def forward(self, x):
                b, _, hh, ww = x.shape
                r = torch.sigmoid(self.route(x.mean(dim=(2, 3))))                            # [B, E]
                y = self.conv(x).view(b, self.e, self.co, hh, ww)
                return (y * r.view(b, self.e, 1, 1, 1)).sum(1)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                layers, ci = [], 3
                for i, co in enumerate((32, 64, 64, 128)):
                    layers += [CondConv(ci, co), nn.BatchNorm2d(co), nn.ReLU(inplace=True)]
                    if i in (0, 2):
                        layers.append(nn.MaxPool2d(2))
                    ci = co
                self.body = nn.Sequential(*layers)
                self.head = nn.Linear(128, classes)

            def forward(self, x):
                return self.head(self.body(x).mean(dim=(2, 3)))
        return Net()

    if kind == "snn_lif":
        def spike(v):
            sg = torch.sigmoid(4.0 * (v - 1.0))
            return sg + ((v > 1.0).float() - sg).detach()

        class Net(nn.Module):
            def __init__(self, steps=6, beta=0.9):
                super().__init__()
                self.steps, self.beta = steps, beta
                self.c1 = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32))
                self.c2 = nn.Sequential(nn.Conv2d(32, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64))
                self.fc = nn.Linear(64 * 8 * 8, 256)
                self.out = nn.Linear(256, classes)

            def forward(self, x):
                b = x.shape[0]
                i1 = self.c1(x)                                                             # static input: once
                v1 = torch.zeros_like(i1)
                v2 = x.new_zeros((b, 64, 16, 16))
                v3 = x.new_zeros((b, 256))
                acc = 0
                for _ in range(self.steps):
                    v1 = self.beta * v1 + i1
                    s1 = spike(v1)
                    v1 = v1 - s1
                    v2 = self.beta * v2 + self.c2(F.avg_pool2d(s1, 2))
                    s2 = spike(v2)
                    v2 = v2 - s2
                    v3 = self.beta * v3 + self.fc(F.avg_pool2d(s2, 2).flatten(1))
                    s3 = spike(v3)
                    v3 = v3 - s3
                    acc = acc + self.out(s3)
                return acc
        return Net()

    if kind == "medusa_heads":
        class CausalBlock(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.h = heads
                self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.qkv = nn.Linear(d, 3 * d)
                self.proj = nn.Linear(d, d)
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
                s = q @ k.transpose(-2, -1) / math.sqrt(d // self.h)
                mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), 1)
                a = s.masked_fill(mask, float("-inf")).softmax(-1)
                x = x + self.proj((a @ v).transpose(1, 2).reshape(b, t, d))
                return x + self.mlp(self.n2(x))

        class MedusaHead(nn.Module):
            def __init__(self, d, vocab):
                super().__init__()
                self.res = nn.Linear(d, d)
                self.out = nn.Linear(d, vocab, bias=False)

            def forward(self, h):
                return self.out(h + F.silu(self.res(h)))

        class Net(nn.Module):
            def __init__(self, d=192, vocab=3000):
                super().__init__()
                self.tok = nn.Embedding(vocab, d)
                self.pos = nn.Parameter(torch.zeros(1, 32, d))
                self.blocks = nn.Sequential(CausalBlock(d, 4), CausalBlock(d, 4))
                self.norm = nn.LayerNorm(d)
                self.lm = nn.Linear(d, vocab, bias=False)
                self.medusa = nn.ModuleList(MedusaHead(d, vocab) for _ in range(3))

            def forward(self, ids):
                h = self.norm(self.blocks(self.tok(ids) + self.pos))
                logits = [self.lm(h)] + [m(h) for m in self.medusa]                        # each [B, T, V]
                return torch.stack(logits, -1).permute(0, 2, 1, 3)                           # [B, V, T, 4]
        return Net()

    raise ValueError("unknown builder " + kind)
