"""The eighth held-out set of real architectures (tools/unseen_models.py --set unseen8).

Fixed on 2026-12-07, after set 7's rules (00fdf1f, decdd56, c79c7ea), before any of these was exported, measured or
planned. Architectures and idioms the zoo, sets 1-7 and the random nets lack: torchvision's S3D (separable 3-D
inception, its fixed 2x7x7 average pool made adaptive for small clips), a PatchGAN discriminator with InstanceNorm2d
(no affine) and LeakyReLU, an MLP VAE whose KL term is computed in forward and enters the logits, an ALiBi encoder
(head slopes x distance added to the scores), a feature pyramid with nearest top-down upsampling, a diffusion-style
U-Net with a sinusoidal timestep embedding of a second float input, a SIREN (sine activations) over coordinates, a
maxout CNN with LocalResponseNorm and ELU, a masked-mean text encoder with SELU / CELU / Softplus (Dropout: torch
1.13 cannot export AlphaDropout in training), a residual CNN with stochastic depth (drop_path by torch.rand in
training), LayerScale and ReZero, cross-attention with nn.MultiheadAttention(kdim, vdim) over a second input, a
pixel_unshuffle (space-to-depth) encoder with a nearest decoder, a multi-task net whose auxiliary losses are summed
inside forward, a ViT with learned row / column position tables and a cls token, and a gated convolutional LM
(causal F.pad, F.glu). F.mse_loss cannot be exported by torch 1.13 either: the multi-task net writes its squared
error by hand.

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "s3d_video", "builder": "s3d_video", "args": {},
     "inputs": [["input", [3, 8, 64, 64], "float32", 0]], "classes": 10, "rows": [[1, "adam"], [2, "sgd"]],
     "description": "torchvision S3D (separable 3-D inception blocks), its 2x7x7 average pool made adaptive, "
                    "8 frames of 64x64 RGB"},
    {"name": "patchgan_instnorm", "builder": "patchgan_instnorm", "args": {},
     "inputs": IMG(64), "classes": 2, "label_shape": [6, 6], "rows": [[2, "adam"], [8, "rmsprop"]],
     "description": "pix2pix PatchGAN discriminator: 4x4 convs stride 2, InstanceNorm2d (no affine), "
                    "LeakyReLU(0.2), per-patch logits 6x6 from 64x64"},
    {"name": "vae_kl_mlp", "builder": "vae_kl_mlp", "args": {},
     "inputs": [["input", [784], "float32", 0]], "classes": 10, "rows": [[32, "adam"], [128, "sgd"]],
     "description": "MLP VAE classifier: mu / logvar heads, z = mu + eps * exp(logvar / 2), KL term computed in "
                    "forward and subtracted from the logits with a learned per-class weight, decoder "
                    "reconstruction error added the same way"},
    {"name": "alibi_encoder", "builder": "alibi_encoder", "args": {},
     "inputs": [["input_ids", [64], "int64", 1000]], "classes": 1000, "label_shape": [64],
     "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "Pre-norm encoder with ALiBi: no position table, per-head slopes x -|i - j| added to the "
                    "scores, attention written by hand, 3 layers x 64, 4 heads, per-token logits"},
    {"name": "fpn_nearest", "builder": "fpn_nearest", "args": {},
     "inputs": IMG(64), "classes": 5, "label_shape": [16, 16], "rows": [[2, "adam"], [8, "momentum"]],
     "description": "ResNet-style backbone (3 stages) with a feature pyramid: 1x1 laterals, "
                    "F.interpolate(scale 2, nearest) top-down sums, 3x3 smoothing, heads summed at stride 4"},
    {"name": "diffusion_time_unet", "builder": "diffusion_time_unet", "args": {},
     "inputs": [["input", [3, 32, 32], "float32", 0], ["t", [1], "float32", 0]], "classes": 4,
     "label_shape": [32, 32], "rows": [[2, "adamw"], [8, "sgd"]],
     "description": "Diffusion-style U-Net: sinusoidal embedding of a float timestep input (sin / cos of "
                    "t x frequencies), SiLU MLP, per-block FiLM-like add, GroupNorm + SiLU resblocks, nearest "
                    "upsampling, 32x32"},
    {"name": "siren_coords", "builder": "siren_coords", "args": {},
     "inputs": [["input", [256, 2], "float32", 0]], "classes": 8, "label_shape": [256],
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "SIREN: sin(30 x Linear) layers 2 -> 128 x 4 over 256 coordinates per sample, per-point "
                    "classes (unsqueeze / squeeze around a Conv1d refiner)"},
    {"name": "maxout_lrn_cnn", "builder": "maxout_lrn_cnn", "args": {},
     "inputs": IMG(48), "classes": 10, "rows": [[4, "momentum"], [16, "adam"]],
     "description": "CNN with maxout units (conv to 2k channels, view and max over pairs), "
                    "LocalResponseNorm(5), ELU, max pooling, 48x48"},
    {"name": "masked_mean_text", "builder": "masked_mean_text", "args": {},
     "inputs": [["input_ids", [64], "int64", 3000]], "classes": 4, "rows": [[16, "adagrad"], [64, "adam"]],
     "description": "Text encoder: Embedding, Conv1d, SELU + Dropout, CELU, Softplus feed-forward, mean "
                    "over the non-pad tokens ((h x mask).sum / mask.sum.clamp)"},
    {"name": "droppath_layerscale", "builder": "droppath_layerscale", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "Residual CNN with stochastic depth in training (keep mask from torch.rand < p, divided by "
                    "p), LayerScale per-channel gains and a ReZero scalar, 6 blocks x 64 channels, 32x32"},
    {"name": "cross_attention_kv", "builder": "cross_attention_kv", "args": {},
     "inputs": [["input", [16, 64], "float32", 0], ["context", [48, 96], "float32", 0]], "classes": 6,
     "rows": [[4, "adam"], [16, "momentum"]],
     "description": "Queries attend to a second input with nn.MultiheadAttention(64, 4, kdim=96, vdim=96, "
                    "batch_first), then self-attention and a GELU MLP, 2 layers"},
    {"name": "pixel_unshuffle_seg", "builder": "pixel_unshuffle_seg", "args": {},
     "inputs": IMG(64), "classes": 3, "label_shape": [64, 64], "rows": [[2, "adam"], [8, "sgd"]],
     "description": "Space-to-depth encoder (F.pixel_unshuffle by 2 twice, convs), decoder of nearest "
                    "upsampling + conv with a skip, 64x64 segmentation"},
    {"name": "multitask_aux", "builder": "multitask_aux", "args": {},
     "inputs": [["input", [64], "float32", 0]], "classes": 7, "rows": [[64, "adam"], [256, "rmsprop"]],
     "description": "Multi-task tabular net: shared trunk, a reconstruction head (squared error by hand), an L1 sparsity "
                    "term and a sigmoid attribute head (BCE against thresholded inputs) whose losses are summed inside "
                    "forward and enter the class logits with a learned weight"},
    {"name": "vit_2d_pos", "builder": "vit_2d_pos", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "ViT with learned row and column position tables broadcast-added to 4x4 patch "
                    "embeddings, a cls token, nn.TransformerEncoderLayer (norm_first, GELU) x 3, 64 wide"},
    {"name": "gated_conv_lm", "builder": "gated_conv_lm", "args": {},
     "inputs": [["input_ids", [64], "int64", 1500]], "classes": 1500, "label_shape": [64],
     "rows": [[4, "adam"], [16, "momentum"]],
     "description": "Gated convolutional LM (Dauphin et al.): Embedding, causal F.pad + Conv1d k=4 to 2d "
                    "channels, F.glu, residuals, 4 layers x 128, per-token logits"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    if kind == "s3d_video":
        import torchvision
        net = torchvision.models.video.s3d(weights=None, num_classes=classes)
        net.avgpool = nn.AdaptiveAvgPool3d(1)
        return net

    if kind == "patchgan_instnorm":
        def blk(cin, cout, stride, norm=True):
            layers = [nn.Conv2d(cin, cout, 4, stride, 1)]
            if norm:
                layers.append(nn.InstanceNorm2d(cout))
            layers.append(nn.LeakyReLU(0.2))
            return layers
        return nn.Sequential(*blk(3, 32, 2, norm=False), *blk(32, 64, 2), *blk(64, 128, 2), *blk(128, 256, 1),
                             nn.Conv2d(256, classes, 4, 1, 1))

    if kind == "vae_kl_mlp":
        class Net(nn.Module):
            def __init__(self, d=784, h=400, z=32):
                super().__init__()
                self.enc = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
                self.mu = nn.Linear(h, z)
                self.logvar = nn.Linear(h, z)
                self.dec = nn.Sequential(nn.Linear(z, h), nn.ReLU(), nn.Linear(h, d))
                self.head = nn.Linear(z, classes)
                self.kl_w = nn.Parameter(torch.full((classes,), 1e-3))
                self.rec_w = nn.Parameter(torch.full((classes,), 1e-3))

            def forward(self, x):
                h = self.enc(x)
                mu, logvar = self.mu(h), self.logvar(h)
                z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
                kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1)
                rec = (torch.sigmoid(self.dec(z)) - torch.sigmoid(x)).pow(2).mean(dim=1)
                return self.head(z) - kl.unsqueeze(1) * self.kl_w - rec.unsqueeze(1) * self.rec_w
        return Net()

    if kind == "alibi_encoder":
        class Layer(nn.Module):
            def __init__(self, d, heads, t):
                super().__init__()
                self.heads = heads
                self.n1 = nn.LayerNorm(d)
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                self.n2 = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)])
                pos = torch.arange(t)
                dist = -(pos[None, :] - pos[:, None]).abs().float()
                self.register_buffer("bias", slopes.view(heads, 1, 1) * dist, persistent=False)

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
                s = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads) + self.bias
                y = (s.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
                x = x + self.o(y)
                return x + self.ff(self.n2(x))

        class Net(nn.Module):
            def __init__(self, d=64, t=64):
                super().__init__()
                self.emb = nn.Embedding(1000, d)
                self.layers = nn.Sequential(*[Layer(d, 4, t) for _ in range(3)])
                self.norm = nn.LayerNorm(d)
                self.out = nn.Linear(d, classes)

            def forward(self, ids):
                return self.out(self.norm(self.layers(self.emb(ids)))).transpose(1, 2)
        return Net()

    if kind == "fpn_nearest":
        class Block(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
                self.b1 = nn.BatchNorm2d(cout)
                self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
                self.b2 = nn.BatchNorm2d(cout)
                self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

            def forward(self, x):
                return F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))) + self.skip(x))

        class Net(nn.Module):
            def __init__(self, f=64):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
                self.s1 = Block(32, 48, 2)    # /4
                self.s2 = Block(48, 96, 2)    # /8
                self.s3 = Block(96, 160, 2)   # /16
                self.lat = nn.ModuleList([nn.Conv2d(c, f, 1) for c in (48, 96, 160)])
                self.smooth = nn.ModuleList([nn.Conv2d(f, f, 3, 1, 1) for _ in range(3)])
                self.head = nn.Conv2d(f, classes, 3, 1, 1)

            def forward(self, x):
                c1 = self.s1(self.stem(x))
                c2 = self.s2(c1)
                c3 = self.s3(c2)
                p3 = self.lat[2](c3)
                p2 = self.lat[1](c2) + F.interpolate(p3, scale_factor=2.0, mode="nearest")
                p1 = self.lat[0](c1) + F.interpolate(p2, scale_factor=2.0, mode="nearest")
                y = self.smooth[0](p1) + F.interpolate(self.smooth[1](p2), scale_factor=2.0, mode="nearest") \
                    + F.interpolate(self.smooth[2](p3), scale_factor=4.0, mode="nearest")
                return self.head(F.relu(y))
        return Net()

    if kind == "diffusion_time_unet":
        class Res(nn.Module):
            def __init__(self, cin, cout, temb):
                super().__init__()
                self.n1 = nn.GroupNorm(8, cin)
                self.c1 = nn.Conv2d(cin, cout, 3, 1, 1)
                self.t = nn.Linear(temb, cout)
                self.n2 = nn.GroupNorm(8, cout)
                self.c2 = nn.Conv2d(cout, cout, 3, 1, 1)
                self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

            def forward(self, x, e):
                h = self.c1(F.silu(self.n1(x)))
                h = h + self.t(e)[:, :, None, None]
                h = self.c2(F.silu(self.n2(h)))
                return h + self.skip(x)

        class Net(nn.Module):
            def __init__(self, w=32, temb=128):
                super().__init__()
                half = w // 2
                self.register_buffer("freqs", torch.exp(-math.log(10000.0) * torch.arange(half) / half),
                                     persistent=False)
                self.temb = nn.Sequential(nn.Linear(w, temb), nn.SiLU(), nn.Linear(temb, temb))
                self.inp = nn.Conv2d(3, w, 3, 1, 1)
                self.d1 = Res(w, w, temb)
                self.down = nn.Conv2d(w, 2 * w, 3, 2, 1)
                self.d2 = Res(2 * w, 2 * w, temb)
                self.mid = Res(2 * w, 2 * w, temb)
                self.u1 = Res(4 * w, w, temb)
                self.out = nn.Sequential(nn.GroupNorm(8, w), nn.SiLU(), nn.Conv2d(w, classes, 3, 1, 1))

            def forward(self, x, t):
                a = t * 1000.0 * self.freqs
                e = self.temb(torch.cat([torch.sin(a), torch.cos(a)], dim=1))
                h1 = self.d1(self.inp(x), e)
                h2 = self.mid(self.d2(self.down(h1), e), e)
                up = F.interpolate(h2, scale_factor=2.0, mode="nearest")
                return self.out(self.u1(torch.cat([up, torch.cat([h1, h1], dim=1)], dim=1), e))
        return Net()

    if kind == "siren_coords":
        class Sine(nn.Module):
            def __init__(self, cin, cout, w0):
                super().__init__()
                self.w0 = w0
                self.fc = nn.Linear(cin, cout)

            def forward(self, x):
                return torch.sin(self.w0 * self.fc(x))

        class Net(nn.Module):
            def __init__(self, h=128):
                super().__init__()
                self.body = nn.Sequential(Sine(2, h, 30.0), Sine(h, h, 1.0), Sine(h, h, 1.0), Sine(h, h, 1.0))
                self.refine = nn.Conv1d(h, h, 1)
                self.out = nn.Linear(h, classes)

            def forward(self, x):
                h = self.body(x)                                     # [B, N, h]
                r = self.refine(h.transpose(1, 2).unsqueeze(-1).squeeze(-1))
                h = h + torch.sin(r).transpose(1, 2)
                return self.out(h).unsqueeze(1).squeeze(1).transpose(1, 2)
        return Net()

    if kind == "maxout_lrn_cnn":
        class Maxout(nn.Module):
            def __init__(self, cin, cout, k=2):
                super().__init__()
                self.k = k
                self.conv = nn.Conv2d(cin, cout * k, 3, 1, 1)

            def forward(self, x):
                y = self.conv(x)
                b, c, h, w = y.shape
                return y.view(b, c // self.k, self.k, h, w).max(dim=2)[0]

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.f = nn.Sequential(Maxout(3, 32), nn.LocalResponseNorm(5), nn.MaxPool2d(2),
                                       Maxout(32, 64), nn.LocalResponseNorm(5), nn.MaxPool2d(2),
                                       nn.Conv2d(64, 96, 3, 1, 1), nn.ELU(), nn.MaxPool2d(2))
                self.fc = nn.Sequential(nn.Flatten(), nn.Linear(96 * 6 * 6, 256), nn.ELU(), nn.Linear(256, classes))

            def forward(self, x):
                return self.fc(self.f(x))
        return Net()

    if kind == "masked_mean_text":
        class Net(nn.Module):
            def __init__(self, vocab=3000, d=128):
                super().__init__()
                self.emb = nn.Embedding(vocab, d, padding_idx=0)
                self.conv = nn.Conv1d(d, d, 5, padding=2)
                self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.SELU(), nn.Dropout(0.1),
                                        nn.Linear(2 * d, d), nn.CELU(), nn.Linear(d, d), nn.Softplus())
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                mask = (ids > 50).float().unsqueeze(-1)
                h = self.emb(ids)
                h = h + self.conv(h.transpose(1, 2)).transpose(1, 2)
                h = self.ff(h)
                pooled = (h * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
                return self.fc(pooled)
        return Net()

    if kind == "droppath_layerscale":
        class Block(nn.Module):
            def __init__(self, c, keep):
                super().__init__()
                self.keep = keep
                self.c1 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
                self.b1 = nn.BatchNorm2d(c)
                self.c2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
                self.b2 = nn.BatchNorm2d(c)
                self.gamma = nn.Parameter(torch.full((1, c, 1, 1), 1e-2))
                self.alpha = nn.Parameter(torch.zeros(1))

            def forward(self, x):
                y = self.b2(self.c2(F.relu(self.b1(self.c1(x))))) * self.gamma * self.alpha
                if self.training:
                    mask = (torch.rand(x.shape[0], 1, 1, 1, device=x.device) < self.keep).to(x.dtype)
                    y = y * mask / self.keep
                return F.relu(x + y)

        class Net(nn.Module):
            def __init__(self, c=64, blocks=6):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
                self.blocks = nn.Sequential(*[Block(c, 1.0 - 0.1 * (i + 1) / blocks) for i in range(blocks)])
                self.fc = nn.Linear(c, classes)

            def forward(self, x):
                return self.fc(self.blocks(self.stem(x)).mean(dim=(2, 3)))
        return Net()

    if kind == "cross_attention_kv":
        class Layer(nn.Module):
            def __init__(self, d=64, dc=96, heads=4):
                super().__init__()
                self.n1 = nn.LayerNorm(d)
                self.cross = nn.MultiheadAttention(d, heads, kdim=dc, vdim=dc, batch_first=True)
                self.n2 = nn.LayerNorm(d)
                self.self_attn = nn.MultiheadAttention(d, heads, batch_first=True)
                self.n3 = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x, ctx):
                x = x + self.cross(self.n1(x), ctx, ctx, need_weights=False)[0]
                h = self.n2(x)
                x = x + self.self_attn(h, h, h, need_weights=False)[0]
                return x + self.ff(self.n3(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.ctx_norm = nn.LayerNorm(96)
                self.layers = nn.ModuleList([Layer() for _ in range(2)])
                self.fc = nn.Linear(64, classes)

            def forward(self, x, ctx):
                ctx = self.ctx_norm(ctx)
                for layer in self.layers:
                    x = layer(x, ctx)
                return self.fc(x.mean(dim=1))
        return Net()

    if kind == "pixel_unshuffle_seg":
        def cbr(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.e1 = cbr(12, 32)          # 32x32
                self.e2 = cbr(128, 96)         # 16x16
                self.d1 = cbr(96 + 32, 48)     # 32x32
                self.d0 = cbr(48 + 3, 24)      # 64x64
                self.out = nn.Conv2d(24, classes, 1)

            def forward(self, x):
                a = self.e1(F.pixel_unshuffle(x, 2))
                b = self.e2(F.pixel_unshuffle(a, 2))
                u = self.d1(torch.cat([F.interpolate(b, scale_factor=2.0, mode="nearest"), a], dim=1))
                u = self.d0(torch.cat([F.interpolate(u, scale_factor=2.0, mode="nearest"), x], dim=1))
                return self.out(u)
        return Net()

    if kind == "multitask_aux":
        class Net(nn.Module):
            def __init__(self, d=64, h=256):
                super().__init__()
                self.trunk = nn.Sequential(nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU(),
                                           nn.Linear(h, h), nn.BatchNorm1d(h), nn.ReLU())
                self.cls = nn.Linear(h, classes)
                self.recon = nn.Sequential(nn.Linear(h, h), nn.Tanh(), nn.Linear(h, d))
                self.attr = nn.Linear(h, d)
                self.w = nn.Parameter(torch.full((3, classes), 1e-2))

            def forward(self, x):
                h = self.trunk(x)
                rec = (self.recon(h) - x).pow(2).mean(dim=1)  # F.mse_loss: torch 1.13 cannot export it
                sparse = h.abs().mean(dim=1)
                attr = F.binary_cross_entropy_with_logits(self.attr(h), (x > 0).float(),
                                                          reduction="none").mean(dim=1)
                aux = torch.stack([rec, sparse, attr], dim=1)      # [B, 3]
                return self.cls(h) - aux @ self.w
        return Net()

    if kind == "vit_2d_pos":
        class Net(nn.Module):
            def __init__(self, d=64, p=4, px=32):
                super().__init__()
                g = px // p
                self.patch = nn.Conv2d(3, d, p, p)
                self.row = nn.Parameter(torch.randn(1, d, g, 1) * 0.02)
                self.col = nn.Parameter(torch.randn(1, d, 1, g) * 0.02)
                self.cls = nn.Parameter(torch.zeros(1, 1, d))
                self.enc = nn.TransformerEncoder(
                    nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.1, activation="gelu", batch_first=True,
                                               norm_first=True), 3)
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                e = self.patch(x) + self.row + self.col                # [B, d, g, g]
                tok = e.flatten(2).transpose(1, 2)
                tok = torch.cat([self.cls.expand(tok.shape[0], -1, -1), tok], dim=1)
                return self.fc(self.norm(self.enc(tok))[:, 0])
        return Net()

    if kind == "gated_conv_lm":
        class Layer(nn.Module):
            def __init__(self, d, k=4):
                super().__init__()
                self.k = k
                self.conv = nn.Conv1d(d, 2 * d, k)

            def forward(self, x):
                return x + F.glu(self.conv(F.pad(x, (self.k - 1, 0))), dim=1)

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.emb = nn.Embedding(classes, d)
                self.layers = nn.Sequential(*[Layer(d) for _ in range(4)])
                self.out = nn.Conv1d(d, classes, 1)

            def forward(self, ids):
                return self.out(self.layers(self.emb(ids).transpose(1, 2)))
        return Net()

    raise ValueError("unknown builder " + kind)
