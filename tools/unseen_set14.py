"""The fourteenth held-out set of real architectures (tools/unseen_models.py --set unseen14).

Fixed on 2026-12-07, after set 13 had been planned (blind bench/results/unseen13_blind_20261207.json) and pooled
(56f910a), before any of these was exported for a row, measured or planned (each model was only built, stepped once
in torch and exported to a throwaway buffer at opset 14 to check that it exports). Architectures and idioms that the
zoo, sets 1-13 and the random nets lack (Mamba, RetNet, linear attention, Hyena, DETR, PointNet with T-Nets, NeRF,
a diffusion U-Net, WaveNet, gMLP / ResMLP / ConvMixer, Transformer-XL positions, index_add message passing, VQ-VAE,
capsules, DenseNet, LayerScale / stochastic depth and RealNVP are already in the zoo or sets 2-13, so they are not
repeated): PointNet++ set abstraction (farthest point sampling unrolled with argmax and a running minimum, k nearest
by topk with the ball-query radius fallback to the first neighbour, grouping by gather, a shared 1x1 Conv2d MLP,
max over neighbours), GATv2 with edge features by index ops (index_select of source and target nodes, a per-edge
softmax by exp over a detached global max and index_add denominators, index_add aggregation), MLP-Mixer (token
mixing by transpose + Linear), selective-kernel split attention (SKNet: two dilations fused by a softmax over
branches), an EfficientDet BiFPN (fast normalised fusion of ReLU'd weights, depthwise separable convs, nearest up
and max-pool down), a BiLSTM-CRF whose negative log-likelihood (the forward algorithm unrolled with logsumexp, the
gold path by gathers of the transition matrix) enters the logits, a pointer-generator decoder (the copy distribution
scatter_add'ed into the vocabulary, mixed by p_gen), SchNet continuous-filter convolutions (pairwise distances,
Gaussian radial basis, cosine cutoff, shifted softplus, a [B, N, N, F] filter product summed over neighbours), a
prototypical network (episodes of 5-way 5-shot support images through one encoder, class means, negative squared
distances), a Neural Turing Machine memory unrolled over time (content addressing by cosine and a sharpened
softmax, erase and add writes to a [B, 32, 20] memory), octave convolutions (high and low frequency maps, avg pool
and nearest upsampling between them), an anti-aliased CNN (BlurPool: max pool stride 1, reflect pad, a fixed
binomial depthwise filter of stride 2) and a Neural Process (context pairs encoded and averaged, a latent path
sampled by randn_like, targets decoded with the KL in the logits).

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "pointnet2_sa", "builder": "pointnet2_sa", "args": {},
     "inputs": [["points", [512, 3], "float32", 0]], "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "PointNet++ SSG: two set abstraction levels (FPS of 64 then 16 centroids unrolled with argmax, "
                    "16 / 8 nearest by topk with the radius fallback to the first neighbour, gather grouping, "
                    "relative coordinates, shared Conv2d 1x1 + BN + ReLU MLPs, max over neighbours), a global "
                    "level, Linear head"},
    {"name": "gatv2_edges", "builder": "gatv2_edges", "args": {},
     "inputs": [["nodes", [64, 16], "float32", 0], ["edges", [320, 8], "float32", 0]], "classes": 6,
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "GATv2 with edge features: a fixed edge-index buffer (256 random edges + 64 self loops), "
                    "index_select of source / target projections plus projected edge features, leaky ReLU, "
                    "per-head attention vector, per-edge softmax (exp over a detached global max, index_add "
                    "denominators), index_add aggregation, 2 layers x 4 heads, ELU, mean over nodes"},
    {"name": "mlp_mixer", "builder": "mlp_mixer", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[16, "adamw"], [64, "sgd"]],
     "description": "MLP-Mixer: 4x4 patches by a strided conv (64 tokens x 128), 4 mixer layers (LayerNorm, token "
                    "MLP 64 -> 64 on the transposed tokens, LayerNorm, channel MLP 128 -> 256 -> 128, GELU), "
                    "mean-pooled"},
    {"name": "sknet_split", "builder": "sknet_split", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "adam"], [32, "momentum"]],
     "description": "Selective kernel net: SK units of a 3x3 and a dilated 3x3 branch (BN, ReLU), their sum "
                    "pooled, a bottleneck FC, per-branch attention softmaxed over the 2 branches, weighted sum; "
                    "stem, SK(32), strided conv, 2 x SK(64), pooled head"},
    {"name": "bifpn_fusion", "builder": "bifpn_fusion", "args": {},
     "inputs": IMG(128), "classes": 8, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "EfficientDet BiFPN: a strided conv trunk to P3-P5 (16, 8, 4 px), 1x1 laterals to 64, 2 BiFPN "
                    "layers (top-down and bottom-up, fast normalised fusion relu(w) / (sum + 1e-4), nearest x2 "
                    "up, max-pool down, depthwise separable conv + BN + SiLU), per-level pooled class heads "
                    "summed"},
    {"name": "bilstm_crf", "builder": "bilstm_crf", "args": {},
     "inputs": [["input_ids", [40], "int64", 3000], ["tags", [40], "int64", 9]], "classes": 9,
     "label_shape": [40], "rows": [[4, "adam"], [16, "sgd"]],
     "description": "BiLSTM-CRF tagger: Embedding 64, 1-layer BiLSTM 2 x 64, emissions over 9 tags; the CRF "
                    "negative log-likelihood of the given tags (forward algorithm over 40 steps unrolled with "
                    "logsumexp, gold path by gathers of emissions and transitions) added to the emissions"},
    {"name": "pointer_generator", "builder": "pointer_generator", "args": {},
     "inputs": [["src_ids", [40], "int64", 2000], ["tgt_ids", [20], "int64", 2000]], "classes": 2000,
     "label_shape": [20], "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Pointer-generator: BiLSTM encoder 2 x 64, GRU decoder 128 (teacher forcing), dot attention, "
                    "vocabulary softmax over 2000 from [dec, ctx], p_gen = sigmoid(Linear), the copy distribution "
                    "(1 - p_gen) * attention scatter_add'ed into the vocabulary at the source ids, log of the mix"},
    {"name": "schnet_cfconv", "builder": "schnet_cfconv", "args": {},
     "inputs": [["atoms", [24], "int64", 10], ["pos", [24, 3], "float32", 0]], "classes": 4,
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "SchNet: atom Embedding 64, pairwise distances, 50 Gaussian radial basis functions, cosine "
                    "cutoff 5, 3 interactions (filter network 50 -> 64 -> 64 with shifted softplus, the neighbour "
                    "features times the [B, 24, 24, 64] filter summed over neighbours, atom-wise dense layers, "
                    "residual), atom-wise head summed over atoms"},
    {"name": "protonet_episodes", "builder": "protonet_episodes", "args": {},
     "inputs": [["support", [25, 1, 28, 28], "float32", 0], ["query", [1, 28, 28], "float32", 0]], "classes": 5,
     "rows": [[2, "adam"], [8, "sgd"]],
     "description": "Prototypical network: per episode 5-way 5-shot support images and one query through one "
                    "Conv4 encoder (conv 64, BN, ReLU, max pool, x 4), class prototypes by mean, logits = "
                    "negative squared distances of the query to the prototypes"},
    {"name": "ntm_memory", "builder": "ntm_memory", "args": {},
     "inputs": [["seq", [12, 8], "float32", 0]], "classes": 8, "label_shape": [12],
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Neural Turing Machine: LSTMCell controller 100 over 12 steps of [x, read], a [B, 32, 20] "
                    "memory from a learned initial state, one head: key, softplus strength, content addressing "
                    "by cosine and softmax, read, erase (sigmoid) and add (tanh) writes; per-step outputs"},
    {"name": "octave_conv", "builder": "octave_conv", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Octave convolutions (alpha 0.5): high 32 x 32 and low 16 x 16 maps, each layer conv_hh + "
                    "nearest-up(conv_lh) and conv_ll + conv_hl(avg pool), BN + ReLU per frequency, 4 layers at "
                    "two widths with a max pool between, high and low merged before a pooled head"},
    {"name": "blurpool_cnn", "builder": "blurpool_cnn", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[4, "adam"], [16, "momentum"]],
     "description": "Anti-aliased CNN: MaxBlurPool (max pool 2 stride 1, reflect pad, fixed binomial 3x3 "
                    "depthwise filter of stride 2 by F.conv2d with groups = C) and ConvBlurPool (conv stride 1, "
                    "ReLU, blur stride 2) in place of strided ops, 4 stages, pooled head"},
    {"name": "neural_process", "builder": "neural_process", "args": {},
     "inputs": [["context", [20, 3], "float32", 0], ["target_x", [30, 2], "float32", 0]], "classes": 3,
     "label_shape": [30], "rows": [[16, "adam"], [64, "sgd"]],
     "description": "Neural Process: deterministic and latent encoders (3-layer MLPs 128 over the 20 context "
                    "pairs, mean over the context), z = mu + sigma * randn_like, decoder MLP over [target x, r, z] "
                    "for 30 targets, the KL to a standard normal added to the per-target class logits"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    def conv_bn(ci, co, s=1, d=1):
        return nn.Sequential(nn.Conv2d(ci, co, 3, s, d, dilation=d, bias=False), nn.BatchNorm2d(co),
                             nn.ReLU(inplace=True))

    if kind == "pointnet2_sa":
        def gather_points(pts, idx):  # pts [B, N, C], idx [B, M] or [B, M, K] -> [B, M(, K), C]
            b, c = pts.shape[0], pts.shape[2]
            flat = idx.reshape(b, -1)
            out = pts.gather(1, flat.unsqueeze(-1).expand(-1, -1, c))
            return out.view(list(idx.shape) + [c])

        def fps(xyz, m):  # xyz [B, N, 3] -> [B, m] indices, the first point first
            dist = (xyz[:, :, 0] * 0.0) + 1e10
            far = (xyz[:, 0, 0] * 0.0).long()
            chosen = []
            for _ in range(m):
                chosen.append(far)
                c = xyz.gather(1, far.view(-1, 1, 1).expand(-1, 1, 3))
                d = ((xyz - c) ** 2).sum(-1)
                dist = torch.minimum(dist, d)
                far = dist.argmax(-1)
            return torch.stack(chosen, 1)

        class SA(nn.Module):
            def __init__(self, m, k, r, ci, widths):
                super().__init__()
                self.m, self.k, self.r2 = m, k, r * r
                layers, c = [], ci + 3
                for w in widths:
                    layers += [nn.Conv2d(c, w, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True)]
                    c = w
                self.mlp = nn.Sequential(*layers)

            def forward(self, xyz, feat):  # [B, N, 3], [B, N, C] or None
                with torch.no_grad():
                    idx_c = fps(xyz, self.m)
                new_xyz = gather_points(xyz, idx_c)                                        # [B, m, 3]
                d = ((new_xyz.unsqueeze(2) - xyz.unsqueeze(1)) ** 2).sum(-1)                # [B, m, N]
                dk, idx = d.topk(self.k, dim=-1, largest=False)
                idx = torch.where(dk > self.r2, idx[:, :, :1].expand(-1, -1, self.k), idx)
                g_xyz = gather_points(xyz, idx) - new_xyz.unsqueeze(2)                      # [B, m, k, 3]
                g = g_xyz if feat is None else torch.cat([g_xyz, gather_points(feat, idx)], -1)
                h = self.mlp(g.permute(0, 3, 1, 2))                                         # [B, C, m, k]
                return new_xyz, h.max(dim=-1)[0].transpose(1, 2)                            # [B, m, C]

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.sa1 = SA(64, 16, 0.6, 0, (32, 32, 64))
                self.sa2 = SA(16, 8, 1.2, 64, (64, 64, 128))
                self.glob = nn.Sequential(nn.Conv1d(128 + 3, 256, 1, bias=False), nn.BatchNorm1d(256),
                                          nn.ReLU(inplace=True))
                self.fc = nn.Sequential(nn.Linear(256, 128), nn.ReLU(inplace=True), nn.Dropout(0.4),
                                        nn.Linear(128, classes))

            def forward(self, pts):
                xyz1, f1 = self.sa1(pts, None)
                xyz2, f2 = self.sa2(xyz1, f1)
                g = self.glob(torch.cat([xyz2, f2], -1).transpose(1, 2))
                return self.fc(g.max(dim=-1)[0])
        return Net()

    if kind == "gatv2_edges":
        g = torch.Generator().manual_seed(14)
        n_nodes, n_rand = 64, 256
        src = torch.cat([torch.randint(0, n_nodes, (n_rand,), generator=g), torch.arange(n_nodes)])
        dst = torch.cat([torch.randint(0, n_nodes, (n_rand,), generator=g), torch.arange(n_nodes)])

        class GATv2(nn.Module):
            def __init__(self, ci, co, ce, heads=4):
                super().__init__()
                self.h, self.co = heads, co
                self.wl = nn.Linear(ci, heads * co)
                self.wr = nn.Linear(ci, heads * co)
                self.we = nn.Linear(ce, heads * co, bias=False)
                self.att = nn.Parameter(torch.randn(heads, co) * 0.1)
                self.bias = nn.Parameter(torch.zeros(heads * co))

            def forward(self, x, e, src, dst):
                b, n = x.shape[0], x.shape[1]
                ne = e.shape[1]
                xl = self.wl(x).view(b, n, self.h, self.co)
                xr = self.wr(x).view(b, n, self.h, self.co)
                xj = xl.index_select(1, src)
                m = xj + xr.index_select(1, dst) + self.we(e).view(b, ne, self.h, self.co)
                logit = (F.leaky_relu(m, 0.2) * self.att).sum(-1)                           # [B, E, H]
                a = (logit - logit.detach().amax(dim=1, keepdim=True)).exp()
                den = x.new_zeros((b, n, self.h)).index_add(1, dst, a)
                alpha = a / (den.index_select(1, dst) + 1e-16)
                out = x.new_zeros((b, n, self.h, self.co)).index_add(1, dst, xj * alpha.unsqueeze(-1))
                return out.reshape(b, n, self.h * self.co) + self.bias

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("src", src, persistent=False)
                self.register_buffer("dst", dst, persistent=False)
                self.l1 = GATv2(16, 32, 8)
                self.l2 = GATv2(128, 32, 8)
                self.fc = nn.Linear(128, classes)

            def forward(self, nodes, edges):
                h = F.elu(self.l1(nodes, edges, self.src, self.dst))
                h = F.elu(self.l2(h, edges, self.src, self.dst))
                return self.fc(h.mean(dim=1))
        return Net()

    if kind == "mlp_mixer":
        class Mixer(nn.Module):
            def __init__(self, t, d, dt, dc):
                super().__init__()
                self.n1 = nn.LayerNorm(d)
                self.tok = nn.Sequential(nn.Linear(t, dt), nn.GELU(), nn.Linear(dt, t))
                self.n2 = nn.LayerNorm(d)
                self.ch = nn.Sequential(nn.Linear(d, dc), nn.GELU(), nn.Linear(dc, d))

            def forward(self, x):  # [B, T, D]
                x = x + self.tok(self.n1(x).transpose(1, 2)).transpose(1, 2)
                return x + self.ch(self.n2(x))

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.patch = nn.Conv2d(3, d, 4, 4)
                self.layers = nn.Sequential(*[Mixer(64, d, 64, 256) for _ in range(4)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                x = self.patch(x).flatten(2).transpose(1, 2)
                return self.fc(self.norm(self.layers(x)).mean(dim=1))
        return Net()

    if kind == "sknet_split":
        class SK(nn.Module):
            def __init__(self, c, r=4):
                super().__init__()
                self.b1 = conv_bn(c, c)
                self.b2 = conv_bn(c, c, d=2)
                self.fc = nn.Sequential(nn.Linear(c, c // r, bias=False), nn.BatchNorm1d(c // r), nn.ReLU(inplace=True))
                self.att = nn.Linear(c // r, 2 * c)
                self.c = c

            def forward(self, x):
                u1, u2 = self.b1(x), self.b2(x)
                s = (u1 + u2).mean(dim=(2, 3))
                a = self.att(self.fc(s)).view(-1, 2, self.c).softmax(dim=1)
                return u1 * a[:, 0, :, None, None] + u2 * a[:, 1, :, None, None]

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = conv_bn(3, 32)
                self.body = nn.Sequential(SK(32), conv_bn(32, 64, 2), SK(64), SK(64))
                self.fc = nn.Linear(64, classes)

            def forward(self, x):
                return self.fc(self.body(self.stem(x)).mean(dim=(2, 3)))
        return Net()

    if kind == "bifpn_fusion":
        class SepConv(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.dw = nn.Conv2d(c, c, 3, 1, 1, groups=c, bias=False)
                self.pw = nn.Conv2d(c, c, 1, bias=False)
                self.bn = nn.BatchNorm2d(c)

            def forward(self, x):
                return F.silu(self.bn(self.pw(self.dw(x))))

        class Fuse(nn.Module):
            def __init__(self, n, c):
                super().__init__()
                self.w = nn.Parameter(torch.ones(n))
                self.conv = SepConv(c)

            def forward(self, *xs):
                w = F.relu(self.w)
                w = w / (w.sum() + 1e-4)
                return self.conv(sum(w[i] * x for i, x in enumerate(xs)))

        class BiFPN(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.td4, self.td3 = Fuse(2, c), Fuse(2, c)
                self.bu4, self.bu5 = Fuse(3, c), Fuse(2, c)

            def forward(self, p3, p4, p5):
                up = lambda t: F.interpolate(t, scale_factor=2.0, mode="nearest")  # noqa: E731
                t4 = self.td4(p4, up(p5))
                o3 = self.td3(p3, up(t4))
                o4 = self.bu4(p4, t4, F.max_pool2d(o3, 3, 2, 1))
                o5 = self.bu5(p5, F.max_pool2d(o4, 3, 2, 1))
                return o3, o4, o5

        class Net(nn.Module):
            def __init__(self, c=64):
                super().__init__()
                self.s1 = nn.Sequential(conv_bn(3, 16, 2), conv_bn(16, 24, 2), conv_bn(24, 40, 2))   # 16 px
                self.s2 = conv_bn(40, 80, 2)                                                       # 8 px
                self.s3 = conv_bn(80, 160, 2)                                                      # 4 px
                self.lat = nn.ModuleList([nn.Conv2d(ci, c, 1) for ci in (40, 80, 160)])
                self.fpn = nn.ModuleList([BiFPN(c), BiFPN(c)])
                self.heads = nn.ModuleList([nn.Conv2d(c, classes, 3, 1, 1) for _ in range(3)])

            def forward(self, x):
                c3 = self.s1(x)
                c4 = self.s2(c3)
                c5 = self.s3(c4)
                ps = [lat(t) for lat, t in zip(self.lat, (c3, c4, c5))]
                for layer in self.fpn:
                    ps = layer(*ps)
                return sum(h(p).mean(dim=(2, 3)) for h, p in zip(self.heads, ps))
        return Net()

    if kind == "bilstm_crf":
        class Net(nn.Module):
            def __init__(self, vocab=3000, d=64, k=9):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                self.lstm = nn.LSTM(d, d, batch_first=True, bidirectional=True)
                self.out = nn.Linear(2 * d, k)
                self.trans = nn.Parameter(torch.randn(k, k) * 0.1)
                self.start = nn.Parameter(torch.zeros(k))
                self.end = nn.Parameter(torch.zeros(k))
                self.k = k

            def forward(self, ids, tags):
                h, _ = self.lstm(self.emb(ids))
                em = self.out(h)                                                            # [B, T, K]
                t = em.shape[1]
                alpha = self.start + em[:, 0]
                for i in range(1, t):
                    alpha = torch.logsumexp(alpha.unsqueeze(2) + self.trans + em[:, i].unsqueeze(1), dim=1)
                log_z = torch.logsumexp(alpha + self.end, dim=1)
                gold = em.gather(2, tags.unsqueeze(2)).squeeze(2).sum(1)
                gold = gold + self.trans[tags[:, :-1], tags[:, 1:]].sum(1)
                gold = gold + self.start[tags[:, 0]] + self.end[tags[:, -1]]
                nll = log_z - gold
                return em.permute(0, 2, 1) + 0.01 * nll.view(-1, 1, 1)
        return Net()

    if kind == "pointer_generator":
        class Net(nn.Module):
            def __init__(self, vocab=2000, d=64, h=128):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                self.enc = nn.LSTM(d, h // 2, batch_first=True, bidirectional=True)
                self.dec = nn.GRU(d, h, batch_first=True)
                self.vocab_out = nn.Sequential(nn.Linear(2 * h, h), nn.Linear(h, vocab))
                self.gen = nn.Linear(2 * h + d, 1)
                self.vocab = vocab

            def forward(self, src, tgt):
                enc, _ = self.enc(self.emb(src))                                            # [B, S, h]
                e_t = self.emb(tgt)
                dec, _ = self.dec(e_t)                                                      # [B, T, h]
                attn = (dec @ enc.transpose(1, 2)).softmax(dim=-1)                         # [B, T, S]
                ctx = attn @ enc
                feat = torch.cat([dec, ctx], -1)
                p_vocab = self.vocab_out(feat).softmax(dim=-1)                             # [B, T, V]
                p_gen = torch.sigmoid(self.gen(torch.cat([feat, e_t], -1)))                # [B, T, 1]
                t = tgt.shape[1]
                idx = src.unsqueeze(1).expand(-1, t, -1)
                final = (p_gen * p_vocab).scatter_add(2, idx, (1 - p_gen) * attn)
                return torch.log(final + 1e-10).permute(0, 2, 1)
        return Net()

    if kind == "schnet_cfconv":
        def ssp(x):
            return F.softplus(x) - math.log(2.0)

        class Interaction(nn.Module):
            def __init__(self, f=64, g=50):
                super().__init__()
                self.f1, self.f2 = nn.Linear(g, f), nn.Linear(f, f)
                self.in2f = nn.Linear(f, f, bias=False)
                self.o1, self.o2 = nn.Linear(f, f), nn.Linear(f, f)

            def forward(self, h, rbf, cut):
                w = self.f2(ssp(self.f1(rbf))) * cut.unsqueeze(-1)                          # [B, N, N, F]
                xj = self.in2f(h).unsqueeze(1)                                              # [B, 1, N, F]
                v = (w * xj).sum(2)
                return h + self.o2(ssp(self.o1(v)))

        class Net(nn.Module):
            def __init__(self, f=64, g=50, rc=5.0):
                super().__init__()
                self.emb = nn.Embedding(10, f)
                self.register_buffer("mu", torch.linspace(0, rc, g), persistent=False)
                self.gamma, self.rc = 10.0, rc
                self.inter = nn.ModuleList([Interaction(f, g) for _ in range(3)])
                self.head = nn.Sequential(nn.Linear(f, f // 2), nn.Softplus(), nn.Linear(f // 2, classes))

            def forward(self, atoms, pos):
                diff = pos.unsqueeze(2) - pos.unsqueeze(1)
                d = torch.sqrt((diff ** 2).sum(-1) + 1e-9)                                   # [B, N, N]
                rbf = torch.exp(-self.gamma * (d.unsqueeze(-1) - self.mu) ** 2)
                cut = 0.5 * (torch.cos(d * math.pi / self.rc) + 1.0) * (d < self.rc).float()
                h = self.emb(atoms)
                for layer in self.inter:
                    h = layer(h, rbf, cut)
                return self.head(h).sum(1)
        return Net()

    if kind == "protonet_episodes":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                blocks, c = [], 1
                for _ in range(4):
                    blocks += [nn.Conv2d(c, 64, 3, 1, 1), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(2)]
                    c = 64
                self.enc = nn.Sequential(*blocks, nn.Flatten())

            def forward(self, support, query):
                b = support.shape[0]
                s = self.enc(support.reshape(-1, 1, 28, 28)).view(b, classes, -1, 64)     # [B, way, shot, 64]
                protos = s.mean(dim=2)
                q = self.enc(query)                                                        # [B, 64]
                return -((q.unsqueeze(1) - protos) ** 2).sum(-1)
        return Net()

    if kind == "ntm_memory":
        class Net(nn.Module):
            def __init__(self, xin=8, ctrl=100, m=32, w=20):
                super().__init__()
                self.cell = nn.LSTMCell(xin + w, ctrl)
                self.mem0 = nn.Parameter(torch.randn(m, w) * 0.1)
                self.read0 = nn.Parameter(torch.zeros(w))
                self.head = nn.Linear(ctrl, 3 * w + 1)
                self.out = nn.Linear(ctrl + w, classes)
                self.w, self.ctrl = w, ctrl

            def forward(self, seq):
                b, t = seq.shape[0], seq.shape[1]
                mem = self.mem0.unsqueeze(0).expand(b, -1, -1)
                r = self.read0.unsqueeze(0).expand(b, -1)
                h = seq.new_zeros((b, self.ctrl))
                c = seq.new_zeros((b, self.ctrl))
                outs = []
                for i in range(t):
                    h, c = self.cell(torch.cat([seq[:, i], r], -1), (h, c))
                    p = self.head(h)
                    key, erase, add = p[:, :self.w], torch.sigmoid(p[:, self.w:2 * self.w]), torch.tanh(p[:, 2 * self.w:3 * self.w])
                    beta = F.softplus(p[:, 3 * self.w:])
                    sim = F.cosine_similarity(mem, key.unsqueeze(1), dim=-1)                  # [B, M]
                    wt = (beta * sim).softmax(dim=-1).unsqueeze(-1)                           # [B, M, 1]
                    r = (wt * mem).sum(1)
                    mem = mem * (1 - wt * erase.unsqueeze(1)) + wt * add.unsqueeze(1)
                    outs.append(self.out(torch.cat([h, r], -1)))
                return torch.stack(outs, 2)                                                  # [B, classes, T]
        return Net()

    if kind == "octave_conv":
        class Oct(nn.Module):
            def __init__(self, ci, co, first=False, last=False):
                super().__init__()
                hi_i, lo_i = (ci, 0) if first else (ci // 2, ci // 2)
                hi_o, lo_o = (co, 0) if last else (co // 2, co // 2)
                self.first, self.last = first, last
                self.hh = nn.Conv2d(hi_i, hi_o, 3, 1, 1, bias=False)
                self.hl = nn.Conv2d(hi_i, lo_o, 3, 1, 1, bias=False) if lo_o else None
                self.lh = nn.Conv2d(lo_i, hi_o, 3, 1, 1, bias=False) if lo_i else None
                self.ll = nn.Conv2d(lo_i, lo_o, 3, 1, 1, bias=False) if (lo_i and lo_o) else None
                self.bh = nn.BatchNorm2d(hi_o)
                self.bl = nn.BatchNorm2d(lo_o) if lo_o else None

            def forward(self, xh, xl):
                yh = self.hh(xh)
                if self.lh is not None:
                    yh = yh + F.interpolate(self.lh(xl), scale_factor=2.0, mode="nearest")
                yh = F.relu(self.bh(yh))
                if self.bl is None:
                    return yh, None
                yl = self.hl(F.avg_pool2d(xh, 2))
                if self.ll is not None:
                    yl = yl + self.ll(xl)
                return yh, F.relu(self.bl(yl))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = conv_bn(3, 32)
                self.o1 = Oct(32, 32, first=True)
                self.o2 = Oct(32, 32)
                self.o3 = Oct(32, 64)
                self.o4 = Oct(64, 64, last=True)
                self.fc = nn.Linear(64, classes)

            def forward(self, x):
                h, l = self.o1(self.stem(x), None)
                h, l = self.o2(h, l)
                h, l = self.o3(F.max_pool2d(h, 2), F.max_pool2d(l, 2))
                h, _ = self.o4(h, l)
                return self.fc(h.mean(dim=(2, 3)))
        return Net()

    if kind == "blurpool_cnn":
        class Blur(nn.Module):
            def __init__(self, c):
                super().__init__()
                a = torch.tensor([1.0, 2.0, 1.0])
                k = (a[:, None] * a[None, :]) / 16.0
                self.register_buffer("k", k.expand(c, 1, 3, 3).contiguous(), persistent=False)
                self.c = c

            def forward(self, x):
                return F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), self.k, stride=2, groups=self.c)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                layers, c = [], 3
                for i, co in enumerate((32, 64, 96, 128)):
                    layers += [nn.Conv2d(c, co, 3, 1, 1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True)]
                    if i == 0:
                        layers += [nn.MaxPool2d(2, 1), Blur(co)]                      # MaxBlurPool
                    else:
                        layers += [Blur(co)]                                          # ConvBlurPool
                    c = co
                self.body = nn.Sequential(*layers)
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                return self.fc(self.body(x).mean(dim=(2, 3)))
        return Net()

    if kind == "neural_process":
        def mlp(ci, co, h=128):
            return nn.Sequential(nn.Linear(ci, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, co))

        class Net(nn.Module):
            def __init__(self, d=128, z=64):
                super().__init__()
                self.det = mlp(3, d)
                self.lat = mlp(3, 2 * z)
                self.dec = mlp(2 + d + z, classes)
                self.z = z

            def forward(self, context, target_x):
                r = self.det(context).mean(dim=1)                                        # [B, d]
                s = self.lat(context).mean(dim=1)
                mu, sigma = s[:, :self.z], 0.1 + 0.9 * torch.sigmoid(s[:, self.z:])
                z = mu + sigma * torch.randn_like(sigma)
                t = target_x.shape[1]
                rep = torch.cat([r, z], -1).unsqueeze(1).expand(-1, t, -1)
                logits = self.dec(torch.cat([target_x, rep], -1))                        # [B, T, classes]
                kl = (-torch.log(sigma) + 0.5 * (sigma ** 2 + mu ** 2) - 0.5).sum(-1)
                return logits.permute(0, 2, 1) + 0.01 * kl.view(-1, 1, 1)
        return Net()

    raise ValueError("unknown builder " + kind)
