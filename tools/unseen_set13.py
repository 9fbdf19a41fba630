"""The thirteenth held-out set of real architectures (tools/unseen_models.py --set unseen13).

Fixed on 2026-12-07, after set 12 had been planned (blind bench/results/unseen12_blind_20261207.json) and the frame
locals risk (a7d7d08), before any of these was exported for a row, measured or planned (each model was only built,
stepped once in torch and exported to a throwaway buffer at opset 14 to check that it exports). Architectures and
idioms that the zoo, sets 1-12 and the random nets lack (Conformer, a weight-normed TCN, N-BEATS, gMLP, an attention
U-Net, capsules, Perceiver, Swin, MoCo, SimCLR, CenterNet's focal loss and index_add message passing are already in
sets 2-12, so they are not repeated): SimSiam (symmetric negative cosine against stop-gradient targets, a predictor
MLP), Barlow Twins (a cross-correlation matrix of batch-normalised embeddings, on- and off-diagonal terms by an
identity buffer), GraphSAGE over a sampled two-hop neighbourhood (fan-outs 10 x 5 by index_select into a node
feature buffer, mean aggregators, concat self + neighbours, L2 normalise), a VAE-GAN (reparameterised conv VAE, one
discriminator on real and reconstructed images, a feature-matching term and the KL in the logits), manifold mixup
(input mixup by flip over the batch and hidden mixup by torch.roll over the batch with fixed lambdas), a PSPNet
pyramid pooling module (AdaptiveAvgPool2d at 1, 2, 4, 8, bilinear upsampling, concat), Conv-TasNet (a strided Conv1d
encoder, global layer norm by hand, dilated depthwise separable blocks with PReLU, skip sums, sigmoid masks over two
sources, a ConvTranspose1d decoder), ESRGAN residual-in-residual dense blocks (dense concat of 4 convs, residual
scaling 0.2, nearest upsampling), SwAV (normalised prototypes, Sinkhorn-Knopp iterations on detached scores, swapped
prediction), knowledge distillation (a detached teacher CNN beside a student, the temperature-scaled KL in the
logits; the teacher's parameters get no gradient), a Gram-matrix style loss (bmm of features at three depths against
fixed Gram buffers), a mixture-of-softmaxes LSTM language model (4 softmaxes over the vocabulary mixed by a prior,
log of the sum) and explicit sparse top-k attention (the k-th largest score by topk as a threshold, masked_fill -inf).

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731
TWO = lambda px: [["input", [3, px, px], "float32", 0], ["input2", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "simsiam_stopgrad", "builder": "simsiam_stopgrad", "args": {},
     "inputs": TWO(32), "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "SimSiam: one CNN encoder over two views, a 3-layer BatchNorm projector, a bottleneck "
                    "predictor MLP, symmetric negative cosine of predictions against .detach()'d projections added "
                    "to a linear head over the first view"},
    {"name": "barlow_twins", "builder": "barlow_twins", "args": {},
     "inputs": TWO(32), "classes": 10, "rows": [[16, "adam"], [64, "sgd"]],
     "description": "Barlow Twins: one CNN encoder over two views, projector to 128, BatchNorm1d(affine=False) "
                    "of each, the 128 x 128 cross-correlation z1^T z2 / B, (1 - diag)^2 and 5e-3 x off-diagonal^2 "
                    "by an identity buffer, the scalar added to a linear head"},
    {"name": "graphsage_sampled", "builder": "graphsage_sampled", "args": {},
     "inputs": [["node", [1], "int64", 2000], ["hop1", [10], "int64", 2000], ["hop2", [50], "int64", 2000]],
     "classes": 7, "rows": [[64, "adam"], [256, "sgd"]],
     "description": "GraphSAGE minibatch: node features from a 2000 x 64 buffer by index_select for targets, 10 "
                    "sampled neighbours and 5 of theirs each, two mean-aggregator layers (concat self + mean of "
                    "neighbours, Linear, ReLU, F.normalize), Linear head"},
    {"name": "vae_gan", "builder": "vae_gan", "args": {},
     "inputs": IMG(32), "classes": 5, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "VAE-GAN: conv encoder to mu / logvar (64), randn_like reparameterisation, ConvTranspose2d "
                    "decoder with tanh, one discriminator over the real and the reconstructed image, feature "
                    "matching on its last conv features, the KL, both added to its class logits on the real image"},
    {"name": "manifold_mixup", "builder": "manifold_mixup", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[16, "sgd"], [64, "adam"]],
     "description": "Mixup in forward: input mixup with x.flip(0) (lambda 0.7), a residual CNN whose features "
                    "after stage 2 are mixed with torch.roll(h, 1, 0) (lambda 0.6), logits mixed likewise"},
    {"name": "pspnet_ppm", "builder": "pspnet_ppm", "args": {},
     "inputs": IMG(64), "classes": 6, "label_shape": [64, 64], "rows": [[4, "adam"], [16, "sgd"]],
     "description": "PSPNet: dilated conv trunk to stride 4 (16 x 16 x 96), pyramid pooling (AdaptiveAvgPool2d "
                    "1, 2, 4, 8, 1x1 conv + BN + ReLU, bilinear upsampling with align_corners), concat, 3x3 conv, "
                    "classifier, bilinear x4 to 64 x 64"},
    {"name": "conv_tasnet", "builder": "conv_tasnet", "args": {},
     "inputs": [["input", [1, 4000], "float32", 0]], "classes": 2, "label_shape": [4000],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Conv-TasNet: Conv1d(1, 64, 16, stride 8) encoder, global layer norm by hand (mean / var over "
                    "C and T), 2 x 4 dilated blocks (1x1, PReLU, gLN, depthwise k3 dilation 2^i, PReLU, gLN, "
                    "residual and skip 1x1), sigmoid masks for 2 sources, ConvTranspose1d decoder per source"},
    {"name": "esrgan_rrdb", "builder": "esrgan_rrdb", "args": {},
     "inputs": IMG(24), "classes": 3, "label_shape": [48, 48], "rows": [[4, "adam"], [16, "sgd"]],
     "description": "ESRGAN: 2 residual-in-residual dense blocks of 3 dense blocks (4 convs, growth 16, "
                    "LeakyReLU, concat of all earlier maps, x + 0.2 * out), trunk conv, nearest x2 upsampling, "
                    "per-pixel classes"},
    {"name": "swav_sinkhorn", "builder": "swav_sinkhorn", "args": {},
     "inputs": TWO(32), "classes": 10, "rows": [[16, "adam"], [64, "sgd"]],
     "description": "SwAV: one CNN encoder over two views, projection to 64, F.normalize, 32 prototypes "
                    "(weights normalised in forward), Sinkhorn-Knopp codes from detached scores (exp / 0.05, 3 "
                    "iterations of row and column normalisation), swapped prediction cross-entropy with "
                    "log_softmax(scores / 0.1), added to a linear head"},
    {"name": "distill_kl", "builder": "distill_kl", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Knowledge distillation: a wider teacher CNN (output .detach()'d, so its parameters get no "
                    "gradient) and a small student on the same input, T^2 KL(softmax(t / 4) || softmax(s / 4)) "
                    "per sample by log_softmax, added to the student's logits"},
    {"name": "gram_style", "builder": "gram_style", "args": {},
     "inputs": IMG(64), "classes": 4, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Style loss: a VGG-like conv net, Gram matrices by bmm(f, f^T) / (C H W) at three depths, "
                    "squared distances to fixed Gram buffers, a content term against a detached pooled copy, "
                    "added to a pooled class head"},
    {"name": "mos_lstm_lm", "builder": "mos_lstm_lm", "args": {},
     "inputs": [["input_ids", [32], "int64", 2000]], "classes": 2000, "label_shape": [32],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Mixture of softmaxes LM: Embedding 128, 1-layer LSTM 128, a prior softmax over 4 "
                    "components, 4 tanh latent contexts, 4 softmaxes over the 2000-word vocabulary (one shared "
                    "decoder), weighted sum, log, permuted to [B, V, T]"},
    {"name": "topk_sparse_attention", "builder": "topk_sparse_attention", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 4, "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "Explicit sparse transformer: per query the 8th largest score (topk values, last) as a "
                    "threshold, scores below it masked_fill'd with -inf before softmax, 2 layers x 128, 4 heads, "
                    "learned positions, mean-pooled"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    def conv_bn(ci, co, s=1):
        return nn.Sequential(nn.Conv2d(ci, co, 3, s, 1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True))

    def encoder(c=64):  # 32x32 -> [B, 2c]
        return nn.Sequential(conv_bn(3, c // 2), conv_bn(c // 2, c, 2), conv_bn(c, c), conv_bn(c, 2 * c, 2),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten())

    if kind == "simsiam_stopgrad":
        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.enc = encoder()
                self.proj = nn.Sequential(nn.Linear(128, d, bias=False), nn.BatchNorm1d(d), nn.ReLU(inplace=True),
                                          nn.Linear(d, d, bias=False), nn.BatchNorm1d(d), nn.ReLU(inplace=True),
                                          nn.Linear(d, d, bias=False), nn.BatchNorm1d(d, affine=False))
                self.pred = nn.Sequential(nn.Linear(d, 32, bias=False), nn.BatchNorm1d(32), nn.ReLU(inplace=True),
                                          nn.Linear(32, d))
                self.fc = nn.Linear(128, classes)

            def forward(self, x1, x2):
                f1, f2 = self.enc(x1), self.enc(x2)
                z1, z2 = self.proj(f1), self.proj(f2)
                p1, p2 = self.pred(z1), self.pred(z2)
                loss = -(F.cosine_similarity(p1, z2.detach(), dim=1) + F.cosine_similarity(p2, z1.detach(), dim=1)) / 2
                return self.fc(f1) + loss.unsqueeze(1)
        return Net()

    if kind == "barlow_twins":
        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.enc = encoder()
                self.proj = nn.Sequential(nn.Linear(128, 256, bias=False), nn.BatchNorm1d(256), nn.ReLU(inplace=True),
                                          nn.Linear(256, d, bias=False))
                self.bn = nn.BatchNorm1d(d, affine=False)
                self.register_buffer("eye", torch.eye(d), persistent=False)
                self.fc = nn.Linear(128, classes)

            def forward(self, x1, x2):
                f1 = self.enc(x1)
                z1, z2 = self.bn(self.proj(f1)), self.bn(self.proj(self.enc(x2)))
                c = z1.t() @ z2 / z1.shape[0]
                on = ((c - 1) * self.eye).pow(2).sum()
                off = (c * (1 - self.eye)).pow(2).sum()
                return self.fc(f1) + (on + 5e-3 * off) * 0.01
        return Net()

    if kind == "graphsage_sampled":
        class Sage(nn.Module):
            def __init__(self, ci, co):
                super().__init__()
                self.lin = nn.Linear(2 * ci, co)

            def forward(self, h_self, h_neigh):  # [..., ci], [..., k, ci]
                return F.normalize(F.relu(self.lin(torch.cat([h_self, h_neigh.mean(dim=-2)], dim=-1))), dim=-1)

        class Net(nn.Module):
            def __init__(self, n=2000, f=64, d=128):
                super().__init__()
                g = torch.Generator().manual_seed(13)
                self.register_buffer("feat", torch.randn(n, f, generator=g), persistent=False)
                self.l1 = Sage(f, d)
                self.l2 = Sage(d, d)
                self.fc = nn.Linear(d, classes)

            def forward(self, node, hop1, hop2):
                b = node.shape[0]
                x0 = self.feat.index_select(0, node.reshape(-1)).view(b, -1)             # [B, f]
                x1 = self.feat.index_select(0, hop1.reshape(-1)).view(b, 10, -1)         # [B, 10, f]
                x2 = self.feat.index_select(0, hop2.reshape(-1)).view(b, 10, 5, -1)      # [B, 10, 5, f]
                h0 = self.l1(x0, x1)
                h1 = self.l1(x1, x2)
                return self.fc(self.l2(h0, h1))
        return Net()

    if kind == "vae_gan":
        class Net(nn.Module):
            def __init__(self, z=64):
                super().__init__()
                self.enc = nn.Sequential(nn.Conv2d(3, 32, 4, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
                                         nn.Conv2d(32, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                                         nn.Conv2d(64, 128, 4, 2, 1), nn.BatchNorm2d(128), nn.ReLU(), nn.Flatten())
                self.mu = nn.Linear(128 * 16, z)
                self.logvar = nn.Linear(128 * 16, z)
                self.dec_in = nn.Linear(z, 128 * 16)
                self.dec = nn.Sequential(nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                                         nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
                                         nn.ConvTranspose2d(32, 3, 4, 2, 1), nn.Tanh())
                self.disc = nn.Sequential(nn.Conv2d(3, 32, 4, 2, 1), nn.LeakyReLU(0.2),
                                          nn.Conv2d(32, 64, 4, 2, 1), nn.LeakyReLU(0.2),
                                          nn.Conv2d(64, 128, 4, 2, 1), nn.LeakyReLU(0.2))
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                h = self.enc(x)
                mu, logvar = self.mu(h), self.logvar(h)
                z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
                rec = self.dec(self.dec_in(z).view(-1, 128, 4, 4))
                fr, ff = self.disc(x), self.disc(rec)
                fm = (fr - ff).pow(2).mean(dim=(1, 2, 3))
                kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=1)
                return self.fc(fr.mean(dim=(2, 3))) + (fm + 0.01 * kl).unsqueeze(1)
        return Net()

    if kind == "manifold_mixup":
        class Res(nn.Module):
            def __init__(self, ci, co, s):
                super().__init__()
                self.a = conv_bn(ci, co, s)
                self.b = nn.Sequential(nn.Conv2d(co, co, 3, 1, 1, bias=False), nn.BatchNorm2d(co))
                self.sc = nn.Sequential(nn.Conv2d(ci, co, 1, s, bias=False), nn.BatchNorm2d(co)) \
                    if (ci != co or s != 1) else nn.Identity()

            def forward(self, x):
                return F.relu(self.b(self.a(x)) + self.sc(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = conv_bn(3, 32)
                self.s1 = Res(32, 32, 1)
                self.s2 = Res(32, 64, 2)
                self.s3 = Res(64, 128, 2)
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                x = 0.7 * x + 0.3 * x.flip(0)
                h = self.s2(self.s1(self.stem(x)))
                h = 0.6 * h + 0.4 * torch.roll(h, 1, 0)
                out = self.fc(self.s3(h).mean(dim=(2, 3)))
                return 0.6 * out + 0.4 * torch.roll(out, 1, 0)
        return Net()

    if kind == "pspnet_ppm":
        class Net(nn.Module):
            def __init__(self, c=96, bins=(1, 2, 4, 8)):
                super().__init__()
                self.trunk = nn.Sequential(conv_bn(3, 32, 2), conv_bn(32, 64, 2),
                                           nn.Conv2d(64, c, 3, 1, 2, dilation=2, bias=False), nn.BatchNorm2d(c),
                                           nn.ReLU(inplace=True))
                self.stages = nn.ModuleList([nn.Sequential(nn.AdaptiveAvgPool2d(b), nn.Conv2d(c, c // 4, 1, bias=False),
                                                           nn.BatchNorm2d(c // 4), nn.ReLU(inplace=True))
                                             for b in bins])
                self.bottleneck = conv_bn(2 * c, 64)
                self.cls = nn.Conv2d(64, classes, 1)

            def forward(self, x):
                f = self.trunk(x)
                h, w = f.shape[2], f.shape[3]
                pyr = [f] + [F.interpolate(s(f), size=(h, w), mode="bilinear", align_corners=True) for s in self.stages]
                out = self.cls(self.bottleneck(torch.cat(pyr, dim=1)))
                return F.interpolate(out, scale_factor=4.0, mode="bilinear", align_corners=False)
        return Net()

    if kind == "conv_tasnet":
        class GLN(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.g = nn.Parameter(torch.ones(1, c, 1))
                self.b = nn.Parameter(torch.zeros(1, c, 1))

            def forward(self, x):
                m = x.mean(dim=(1, 2), keepdim=True)
                v = ((x - m) ** 2).mean(dim=(1, 2), keepdim=True)
                return self.g * (x - m) / torch.sqrt(v + 1e-8) + self.b

        class Block(nn.Module):
            def __init__(self, b, h, dil):
                super().__init__()
                self.inp = nn.Conv1d(b, h, 1)
                self.p1, self.n1 = nn.PReLU(), GLN(h)
                self.dw = nn.Conv1d(h, h, 3, padding=dil, dilation=dil, groups=h)
                self.p2, self.n2 = nn.PReLU(), GLN(h)
                self.res = nn.Conv1d(h, b, 1)
                self.skip = nn.Conv1d(h, b, 1)

            def forward(self, x):
                y = self.n2(self.p2(self.dw(self.n1(self.p1(self.inp(x))))))
                return x + self.res(y), self.skip(y)

        class Net(nn.Module):
            def __init__(self, n=64, b=32, h=64, srcs=2):
                super().__init__()
                self.enc = nn.Conv1d(1, n, 16, stride=8, bias=False)
                self.norm = GLN(n)
                self.bott = nn.Conv1d(n, b, 1)
                self.blocks = nn.ModuleList([Block(b, h, 2 ** i) for _ in range(2) for i in range(4)])
                self.prelu = nn.PReLU()
                self.mask = nn.Conv1d(b, srcs * n, 1)
                self.dec = nn.ConvTranspose1d(n, 1, 16, stride=8, bias=False)
                self.srcs, self.n = srcs, n

            def forward(self, x):
                w = F.relu(self.enc(x))                                                 # [B, n, T]
                y = self.bott(self.norm(w))
                skips = 0
                for blk in self.blocks:
                    y, s = blk(y)
                    skips = skips + s
                m = torch.sigmoid(self.mask(self.prelu(skips)))
                bsz, t = w.shape[0], w.shape[2]
                masked = w.unsqueeze(1) * m.view(bsz, self.srcs, self.n, t)
                out = self.dec(masked.reshape(bsz * self.srcs, self.n, t))             # [B * srcs, 1, L]
                return out.view(bsz, self.srcs, -1)
        return Net()

    if kind == "esrgan_rrdb":
        class Dense(nn.Module):
            def __init__(self, c=32, g=16):
                super().__init__()
                self.convs = nn.ModuleList([nn.Conv2d(c + i * g, g, 3, 1, 1) for i in range(4)])
                self.last = nn.Conv2d(c + 4 * g, c, 3, 1, 1)

            def forward(self, x):
                feats = [x]
                for conv in self.convs:
                    feats.append(F.leaky_relu(conv(torch.cat(feats, 1)), 0.2))
                return x + 0.2 * self.last(torch.cat(feats, 1))

        class RRDB(nn.Module):
            def __init__(self, c=32):
                super().__init__()
                self.d = nn.Sequential(Dense(c), Dense(c), Dense(c))

            def forward(self, x):
                return x + 0.2 * self.d(x)

        class Net(nn.Module):
            def __init__(self, c=32):
                super().__init__()
                self.first = nn.Conv2d(3, c, 3, 1, 1)
                self.body = nn.Sequential(RRDB(c), RRDB(c))
                self.trunk = nn.Conv2d(c, c, 3, 1, 1)
                self.up = nn.Conv2d(c, c, 3, 1, 1)
                self.hr = nn.Conv2d(c, c, 3, 1, 1)
                self.last = nn.Conv2d(c, classes, 3, 1, 1)

            def forward(self, x):
                fea = self.first(x)
                fea = fea + self.trunk(self.body(fea))
                fea = F.leaky_relu(self.up(F.interpolate(fea, scale_factor=2.0, mode="nearest")), 0.2)
                return self.last(F.leaky_relu(self.hr(fea), 0.2))
        return Net()

    if kind == "swav_sinkhorn":
        class Net(nn.Module):
            def __init__(self, d=64, k=32):
                super().__init__()
                self.enc = encoder()
                self.proj = nn.Sequential(nn.Linear(128, 256), nn.BatchNorm1d(256), nn.ReLU(inplace=True),
                                          nn.Linear(256, d))
                self.protos = nn.Parameter(torch.randn(k, d))
                self.fc = nn.Linear(128, classes)

            @staticmethod
            def sinkhorn(s):  # [B, K] detached scores
                q = torch.exp(s / 0.05).t()                                                # [K, B]
                q = q / q.sum()
                k, b = q.shape[0], q.shape[1]
                for _ in range(3):
                    q = q / q.sum(dim=1, keepdim=True) / k
                    q = q / q.sum(dim=0, keepdim=True) / b
                return (q * b).t()

            def forward(self, x1, x2):
                f1 = self.enc(x1)
                z1 = F.normalize(self.proj(f1), dim=1)
                z2 = F.normalize(self.proj(self.enc(x2)), dim=1)
                c = F.normalize(self.protos, dim=1)
                s1, s2 = z1 @ c.t(), z2 @ c.t()
                q1, q2 = self.sinkhorn(s1.detach()), self.sinkhorn(s2.detach())
                loss = -((q1 * F.log_softmax(s2 / 0.1, dim=1)).sum(dim=1)
                         + (q2 * F.log_softmax(s1 / 0.1, dim=1)).sum(dim=1)) / 2
                return self.fc(f1) + 0.1 * loss.unsqueeze(1)
        return Net()

    if kind == "distill_kl":
        def cnn(c):
            return nn.Sequential(conv_bn(3, c), conv_bn(c, c), nn.MaxPool2d(2), conv_bn(c, 2 * c), conv_bn(2 * c, 2 * c),
                                 nn.MaxPool2d(2), conv_bn(2 * c, 4 * c), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                 nn.Linear(4 * c, classes))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.teacher = cnn(48)
                self.student = cnn(16)

            def forward(self, x):
                t = self.teacher(x).detach()
                s = self.student(x)
                tt = 4.0
                pt = F.softmax(t / tt, dim=1)
                kl = (pt * (F.log_softmax(t / tt, dim=1) - F.log_softmax(s / tt, dim=1))).sum(dim=1) * tt * tt
                return s + kl.unsqueeze(1)
        return Net()

    if kind == "gram_style":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.b1 = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1), nn.ReLU(), nn.Conv2d(32, 32, 3, 1, 1), nn.ReLU())
                self.b2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(),
                                        nn.Conv2d(64, 64, 3, 1, 1), nn.ReLU())
                self.b3 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(64, 128, 3, 1, 1), nn.ReLU(),
                                        nn.Conv2d(128, 128, 3, 1, 1), nn.ReLU())
                g = torch.Generator().manual_seed(13)
                for i, c in enumerate((32, 64, 128)):
                    a = torch.rand(c, c, generator=g) * 0.01
                    self.register_buffer("style%d" % i, a @ a.t(), persistent=False)
                self.fc = nn.Linear(128, classes)

            @staticmethod
            def gram(f):
                b, c, h, w = f.shape
                f = f.reshape(b, c, h * w)
                return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)

            def forward(self, x):
                f1 = self.b1(x)
                f2 = self.b2(f1)
                f3 = self.b3(f2)
                style = sum((self.gram(f) - s).pow(2).sum(dim=(1, 2))
                            for f, s in zip((f1, f2, f3), (self.style0, self.style1, self.style2)))
                content = (f3 - F.avg_pool2d(f3, 3, 1, 1).detach()).pow(2).mean(dim=(1, 2, 3))
                return self.fc(f3.mean(dim=(2, 3))) + (style + content).unsqueeze(1)
        return Net()

    if kind == "mos_lstm_lm":
        class Net(nn.Module):
            def __init__(self, vocab=2000, d=128, k=4):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                self.lstm = nn.LSTM(d, d, batch_first=True)
                self.prior = nn.Linear(d, k, bias=False)
                self.latent = nn.Linear(d, k * d)
                self.dec = nn.Linear(d, vocab)
                self.k, self.d = k, d

            def forward(self, ids):
                h, _ = self.lstm(self.emb(ids))                                            # [B, T, d]
                b, t = h.shape[0], h.shape[1]
                pi = F.softmax(self.prior(h), dim=-1)                                       # [B, T, k]
                lat = torch.tanh(self.latent(h)).view(b, t, self.k, self.d)
                prob = F.softmax(self.dec(lat), dim=-1)                                     # [B, T, k, V]
                mix = (prob * pi.unsqueeze(-1)).sum(dim=2)                                  # [B, T, V]
                return torch.log(mix + 1e-8).permute(0, 2, 1)
        return Net()

    if kind == "topk_sparse_attention":
        class SparseAttn(nn.Module):
            def __init__(self, d, heads, topk=8):
                super().__init__()
                self.heads, self.topk = heads, topk
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
                s = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
                kth = s.topk(self.topk, dim=-1)[0][..., -1:]
                s = s.masked_fill(s < kth, float("-inf"))
                out = (s.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
                return self.o(out)

        class Block(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.n1, self.attn = nn.LayerNorm(d), SparseAttn(d, heads)
                self.n2 = nn.LayerNorm(d)
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x):
                x = x + self.attn(self.n1(x))
                return x + self.mlp(self.n2(x))

        class Net(nn.Module):
            def __init__(self, vocab=2000, d=128, t=64):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                self.pos = nn.Parameter(torch.zeros(1, t, d))
                self.blocks = nn.Sequential(Block(d, 4), Block(d, 4))
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                x = self.emb(ids) + self.pos[:, :ids.shape[1]]
                return self.fc(self.norm(self.blocks(x)).mean(dim=1))
        return Net()

    raise ValueError("unknown builder " + kind)
