"""The sixteenth held-out set of real architectures (tools/unseen_models.py --set unseen16).

Fixed on 2026-12-07, while set 15 was being measured in another worktree (tools/unseen_set15.py), before any of
these was exported for a row, measured or planned (each model was only built, stepped once in torch and exported to
a throwaway directory at opset 14 to check that it exports). Architectures and idioms that the zoo, sets 2-15 and
the random nets lack (SimCLR, SimSiam, Barlow Twins, GraphSAGE, ArcFace, SpecAugment, FT-Transformer, RK4 neural
ODEs, PixelShuffle, manifold mixup, ALiBi, the Set Transformer, Gumbel VQ with one codebook, SwAV's Sinkhorn on
detached scores, knowledge distillation, linear attention with elu + 1, PoolFormer, FocalNet and the others named
in the earlier sets' docstrings are not repeated; F.grid_sample needs opset 16, so offset sampling is left out): a
BEiT-style ViT whose relative position bias table is gathered by a fixed index buffer (cls rows and columns at
the table's last three entries), a U-Net whose Dice + BCE segmentation loss against a mask input enters the
logits, an RNN-T joint network (encoder [B, T, 1, H] + predictor [B, 1, U + 1, H] broadcast, tanh, vocabulary
projection over the lattice), a wav2vec 2.0 pretraining head (strided Conv1d feature encoder, time masking by a
fixed mask buffer and a learned mask embedding, a Gumbel product quantizer of 2 groups x 32 codes with hard
straight-through, a transformer context network, the contrastive logits against 10 negatives gathered by a fixed
index buffer, the codebook diversity term), a modern Hopfield network (a Hopfield layer over the sequence updated 3
times with one beta, then HopfieldPooling by 4 learned state patterns), CutMix inside forward (a box mask from
torch.rand coordinates compared with arange buffers, the batch permuted by argsort of torch.rand), a SiamRPN++
depthwise cross-correlation of per-sample templates written as a sum of shifted slices times template values, a
Performer (FAVOR+ positive orthogonal random features, exp with the query's row max and the key's global max),
Nystromformer (segment-mean landmarks, three softmax kernels, the iterative Moore-Penrose pseudo-inverse of 6
Newton steps, a depthwise conv residual on the values), a QRNN (causal width-2 convolution gates and fo-pooling
unrolled over time), a Relation Network (all object pairs by expand + cat with a question vector, g-MLP summed over
pairs), attention-based multiple-instance learning (bags of 16 instance images folded into the batch, gated
tanh * sigmoid attention, softmax over instances), SuperGlue matching (keypoint encoder, self and cross attention
message passing, a dustbin score by cat, 10 log-domain Sinkhorn iterations with gradients), Linformer (keys and
values projected along the sequence by a Linear over length), R-Drop (the batch duplicated by cat through a
dropout transformer, the symmetric KL of the two passes in the logits), a domain-adversarial net (DANN) with the
gradient reversal written by .detach() (x * -l + (x * (1 + l)).detach()) and a domain BCE term, and Coordinate
Attention (pools along H and along W, a shared 1x1 conv over their concatenation, split, two sigmoid gates) in
MobileNetV2 inverted residuals.

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "beit_relpos", "builder": "beit_relpos", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "BEiT-style ViT: 4x4 patches (64 tokens + cls) x 128, 4 layers x 4 heads, a per-layer "
                    "relative position bias table [(2 * 8 - 1)^2 + 3, heads] gathered by a fixed [65, 65] "
                    "index buffer, pre-norm, layer scale, cls head"},
    {"name": "unet_dice_bce", "builder": "unet_dice_bce", "args": {},
     "inputs": [["input", [3, 64, 64], "float32", 0], ["mask", [1, 64, 64], "float32", 0]], "classes": 2,
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "3-level U-Net (conv BN ReLU x 2, max pool, ConvTranspose2d up, concat skips), a 1-channel "
                    "mask logit; BCE with logits (softplus form) + soft Dice against sigmoid(mask) per sample "
                    "added to a pooled 2-class head"},
    {"name": "rnnt_joint", "builder": "rnnt_joint", "args": {},
     "inputs": [["feats", [40, 80], "float32", 0], ["labels", [12], "int64", 64]], "classes": 65,
     "label_shape": [40, 13], "rows": [[4, "adam"], [16, "sgd"]],
     "description": "RNN-T: LSTM encoder 128 over 40 frames of 80 mels, a blank-prepended Embedding + LSTM "
                    "predictor over 12 labels, joint tanh(enc [B, T, 1, 256] + pred [B, 1, 13, 256]) -> "
                    "vocabulary 65 over the T x (U + 1) lattice"},
    {"name": "wav2vec2_quantizer", "builder": "wav2vec2_quantizer", "args": {},
     "inputs": [["wave", [1, 4000], "float32", 0]], "classes": 11, "label_shape": [99],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "wav2vec 2.0 pretraining: strided Conv1d encoder (GELU, GroupNorm) to 99 frames x 128, "
                    "a fixed time-mask buffer with a learned mask embedding, 2 transformer layers, Gumbel "
                    "product quantizer (2 groups x 32 codes, tau 2, hard straight-through), cosine logits / 0.1 "
                    "of the context against its quantized target and 10 gathered negatives, diversity term"},
    {"name": "hopfield_pooling", "builder": "hopfield_pooling", "args": {},
     "inputs": [["seq", [32, 64], "float32", 0]], "classes": 8, "rows": [[16, "adam"], [64, "sgd"]],
     "description": "Modern Hopfield: Linear 64 -> 128, a Hopfield layer over the 32 tokens (state patterns "
                    "updated 3 times by softmax(beta xi K^T) K, then the values), residual + LayerNorm, "
                    "HopfieldPooling with 4 learned state patterns (2 updates), head over their concat"},
    {"name": "cutmix_forward", "builder": "cutmix_forward", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "adam"], [32, "momentum"]],
     "description": "CutMix in forward: lambda and the box centre from torch.rand, a [B, 1, 32, 32] box mask "
                    "by comparisons with arange buffers, the batch permuted by argsort(torch.rand(B)) and "
                    "index_select, mixed, then a 3-stage residual CNN"},
    {"name": "siamrpn_dwxcorr", "builder": "siamrpn_dwxcorr", "args": {},
     "inputs": [["template", [3, 31, 31], "float32", 0], ["search", [3, 63, 63], "float32", 0]],
     "classes": 2, "label_shape": [9, 9], "rows": [[8, "adam"], [32, "sgd"]],
     "description": "SiamRPN++-style tracker: one AlexNet-like trunk (4 convs, BN, ReLU) on both inputs, "
                    "adjust convs, depthwise cross-correlation of the 4 x 4 template over the 12 x 12 search "
                    "map as 16 shifted slices times template values, conv head to 2 x 9 x 9"},
    {"name": "performer_favor", "builder": "performer_favor", "args": {},
     "inputs": [["input_ids", [128], "int64", 4000]], "classes": 4, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Performer: Embedding 128 + learned positions, 3 layers x 4 heads of FAVOR+ attention "
                    "(64 orthogonal random features in a buffer, exp(wx - |x|^2 / 2 - max) with the query's "
                    "row max and the key's global max), k^T v first, normaliser, GELU FFN, mean pooled"},
    {"name": "nystromformer", "builder": "nystromformer", "args": {},
     "inputs": [["input_ids", [128], "int64", 4000]], "classes": 4, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Nystromformer: 2 layers x 4 heads, 16 landmarks by segment means, softmax kernels Q Kl^T, "
                    "Ql Kl^T and Ql K^T, the pseudo-inverse by 6 Newton-Schulz iterations from a global-max "
                    "initialisation, a depthwise Conv2d (33 x 1) residual on V, mean pooled"},
    {"name": "qrnn_fopool", "builder": "qrnn_fopool", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 2000, "label_shape": [64],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "QRNN language model: Embedding 128, 2 QRNN layers of 128 (a causal width-2 Conv1d to "
                    "Z, F, O gates; fo-pooling c = f c + (1 - f) z, h = o c unrolled over 64 steps), vocabulary "
                    "2000 per token"},
    {"name": "relation_network", "builder": "relation_network", "args": {},
     "inputs": [["input", [3, 64, 64], "float32", 0], ["question", [11], "float32", 0]], "classes": 10,
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Relation Network (Sort-of-CLEVR): 3 strided convs and one more to 8 x 8 objects x 24 + 2 coordinates, "
                    "all 64 x 64 pairs by expand + cat with the question, g-MLP 4 x 256 summed over pairs, "
                    "f-MLP with dropout"},
    {"name": "mil_gated_attention", "builder": "mil_gated_attention", "args": {},
     "inputs": [["bag", [16, 1, 28, 28], "float32", 0]], "classes": 2, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Attention MIL (Ilse et al.): a bag of 16 instances folded into the batch, LeNet feature "
                    "extractor (conv 20, conv 50, Linear 500), gated attention w^T (tanh(V h) * sigmoid(U h)) "
                    "softmaxed over instances, weighted sum, classifier"},
    {"name": "superglue_sinkhorn", "builder": "superglue_sinkhorn", "args": {},
     "inputs": [["kpts0", [64, 2], "float32", 0], ["desc0", [64, 64], "float32", 0],
                ["kpts1", [64, 2], "float32", 0], ["desc1", [64, 64], "float32", 0]],
     "classes": 65, "label_shape": [64], "rows": [[4, "adam"], [16, "sgd"]],
     "description": "SuperGlue: keypoint MLP encoder added to descriptors, 4 alternating self / cross "
                    "attention message-passing layers (4 heads, cat + MLP), scores / sqrt(d), a learned dustbin "
                    "by cat, 10 log-domain Sinkhorn iterations (logsumexp) with gradients; image 0's rows"},
    {"name": "linformer", "builder": "linformer", "args": {},
     "inputs": [["input_ids", [256], "int64", 4000]], "classes": 4, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Linformer: Embedding 128 + positions, 3 layers x 4 heads, keys and values projected "
                    "from 256 to 32 along the sequence by a shared Linear over the transposed length, post-norm, "
                    "ReLU FFN, mean pooled"},
    {"name": "rdrop_kl", "builder": "rdrop_kl", "args": {},
     "inputs": [["input_ids", [64], "int64", 3000]], "classes": 6, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "R-Drop: the batch duplicated by cat through a 2-layer nn.TransformerEncoder (dropout 0.1) "
                    "classifier, the symmetric KL of the two passes' log_softmax added to their mean logits"},
    {"name": "dann_grl", "builder": "dann_grl", "args": {},
     "inputs": [["input", [3, 32, 32], "float32", 0], ["domain", [1], "float32", 0]], "classes": 10,
     "rows": [[8, "adam"], [32, "momentum"]],
     "description": "DANN: CNN features, a label head and a domain MLP behind gradient reversal written as "
                    "f * -1 + (f * 2).detach(), the domain BCE with logits (softplus form) against "
                    "(domain > 0) added to the class logits"},
    {"name": "coord_attention", "builder": "coord_attention", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "MobileNetV2 inverted residuals (expand 4, ReLU6, depthwise) with Coordinate Attention: "
                    "mean over W and over H, cat along H, 1x1 conv + BN + Hardswish, split, two 1x1 convs "
                    "and sigmoid gates multiplied into x"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    def conv_bn(ci, co, k=3, s=1, p=1):
        return nn.Sequential(nn.Conv2d(ci, co, k, s, p, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True))

    def bce_logits(x, t):  # binary cross-entropy with logits, the softplus form
        return F.softplus(x) - x * t

    class TextNet(nn.Module):
        """Embedding + learned positions, the given attention modules with FFNs (pre- or post-norm), mean pooled."""
        def __init__(self, attns, d=128, n=128, act=nn.GELU, post=False):
            super().__init__()
            self.emb, self.pos = nn.Embedding(4000, d), nn.Parameter(torch.zeros(1, n, d))
            self.attn = nn.ModuleList(attns)
            self.ffn = nn.ModuleList([nn.Sequential(nn.Linear(d, 4 * d), act(), nn.Linear(4 * d, d))
                                      for _ in attns])
            self.n1 = nn.ModuleList([nn.LayerNorm(d) for _ in attns])
            self.n2 = nn.ModuleList([nn.LayerNorm(d) for _ in attns])
            self.head = nn.Linear(d, classes)
            self.post = post

        def forward(self, input_ids):
            x = self.emb(input_ids) + self.pos
            for a, f, n1, n2 in zip(self.attn, self.ffn, self.n1, self.n2):
                if self.post:
                    x = n1(x + a(x))
                    x = n2(x + f(x))
                else:
                    x = x + a(n1(x))
                    x = x + f(n2(x))
            return self.head(x.mean(1))

    if kind == "beit_relpos":
        class Block(nn.Module):
            def __init__(self, d, h, side):
                super().__init__()
                self.h = h
                self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                nd = (2 * side - 1) ** 2 + 3
                self.table = nn.Parameter(torch.zeros(nd, h).normal_(0, 0.02))
                ys, xs = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
                coords = torch.stack([ys.flatten(), xs.flatten()])                   # [2, n]
                rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (side - 1)
                n = side * side
                idx = torch.zeros(n + 1, n + 1, dtype=torch.long)
                idx[1:, 1:] = rel[..., 0] * (2 * side - 1) + rel[..., 1]
                idx[0, 0:] = nd - 3
                idx[0:, 0] = nd - 2
                idx[0, 0] = nd - 1
                self.register_buffer("index", idx)
                self.g1 = nn.Parameter(torch.full((d,), 0.1))
                self.g2 = nn.Parameter(torch.full((d,), 0.1))

            def forward(self, x):
                b, n, d = x.shape
                q, k, v = self.qkv(self.n1(x)).view(b, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
                a = q @ k.transpose(-1, -2) / math.sqrt(d // self.h)
                bias = self.table[self.index.view(-1)].view(n, n, self.h).permute(2, 0, 1)
                a = (a + bias.unsqueeze(0)).softmax(-1)
                y = (a @ v).transpose(1, 2).reshape(b, n, d)
                x = x + self.g1 * self.proj(y)
                return x + self.g2 * self.mlp(self.n2(x))

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.patch = nn.Conv2d(3, d, 4, 4)
                self.cls = nn.Parameter(torch.zeros(1, 1, d))
                self.blocks = nn.Sequential(*[Block(d, 4, 8) for _ in range(4)])
                self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

            def forward(self, x):
                t = self.patch(x).flatten(2).transpose(1, 2)
                t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], 1)
                return self.head(self.norm(self.blocks(t)[:, 0]))
        return Net()

    if kind == "unet_dice_bce":
        def double(ci, co):
            return nn.Sequential(conv_bn(ci, co), conv_bn(co, co))

        class Net(nn.Module):
            def __init__(self, w=16):
                super().__init__()
                self.d1, self.d2, self.d3 = double(3, w), double(w, 2 * w), double(2 * w, 4 * w)
                self.mid = double(4 * w, 8 * w)
                self.u3, self.c3 = nn.ConvTranspose2d(8 * w, 4 * w, 2, 2), double(8 * w, 4 * w)
                self.u2, self.c2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, 2), double(4 * w, 2 * w)
                self.u1, self.c1 = nn.ConvTranspose2d(2 * w, w, 2, 2), double(2 * w, w)
                self.seg = nn.Conv2d(w, 1, 1)
                self.cls = nn.Linear(8 * w, classes)

            def forward(self, x, mask):
                s1 = self.d1(x)
                s2 = self.d2(F.max_pool2d(s1, 2))
                s3 = self.d3(F.max_pool2d(s2, 2))
                m = self.mid(F.max_pool2d(s3, 2))
                y = self.c3(torch.cat([self.u3(m), s3], 1))
                y = self.c2(torch.cat([self.u2(y), s2], 1))
                y = self.c1(torch.cat([self.u1(y), s1], 1))
                logit = self.seg(y)
                t = torch.sigmoid(mask)
                bce = bce_logits(logit, t).mean(dim=(1, 2, 3))
                p = torch.sigmoid(logit)
                inter = (p * t).sum(dim=(1, 2, 3))
                dice = 1 - (2 * inter + 1) / (p.sum(dim=(1, 2, 3)) + t.sum(dim=(1, 2, 3)) + 1)
                return self.cls(m.mean(dim=(2, 3))) + (bce + dice).unsqueeze(1)
        return Net()

    if kind == "rnnt_joint":
        class Net(nn.Module):
            def __init__(self, h=128, j=256):
                super().__init__()
                self.inp = nn.Linear(80, h)
                self.enc = nn.LSTM(h, h, batch_first=True)
                self.emb = nn.Embedding(classes, h)
                self.pred = nn.LSTM(h, h, batch_first=True)
                self.je, self.jp = nn.Linear(h, j), nn.Linear(h, j)
                self.out = nn.Linear(j, classes)

            def forward(self, feats, labels):
                e, _ = self.enc(self.inp(feats))                                     # [B, T, h]
                y = torch.cat([torch.zeros_like(labels[:, :1]), labels + 1], 1)      # blank = 0 first
                p, _ = self.pred(self.emb(y))                                       # [B, U + 1, h]
                z = torch.tanh(self.je(e).unsqueeze(2) + self.jp(p).unsqueeze(1))   # [B, T, U + 1, j]
                return self.out(z).permute(0, 3, 1, 2)                               # [B, V, T, U + 1]
        return Net()

    if kind == "wav2vec2_quantizer":
        class Net(nn.Module):
            def __init__(self, d=128, groups=2, codes=32, negatives=10, frames=99):
                super().__init__()
                self.fe = nn.Sequential(nn.Conv1d(1, 64, 10, 5, bias=False), nn.GroupNorm(64, 64), nn.GELU(),
                                        nn.Conv1d(64, 64, 3, 2, bias=False), nn.GELU(),
                                        nn.Conv1d(64, 64, 3, 2, bias=False), nn.GELU(),
                                        nn.Conv1d(64, d, 2, 2, bias=False), nn.GELU())
                self.ln = nn.LayerNorm(d)
                self.mask_emb = nn.Parameter(torch.rand(d))
                g = torch.Generator().manual_seed(16)
                m = torch.zeros(frames)
                for s in torch.randint(0, frames - 10, (6,), generator=g).tolist():
                    m[s:s + 10] = 1.0
                self.register_buffer("time_mask", m.view(1, frames, 1))
                self.register_buffer("neg_idx", torch.randint(0, frames, (frames, negatives), generator=g))
                layer = nn.TransformerEncoderLayer(d, 4, 256, dropout=0.1, batch_first=True, activation="gelu")
                self.ctx = nn.TransformerEncoder(layer, 2)
                self.q_logits = nn.Linear(d, groups * codes)
                self.codevectors = nn.Parameter(torch.randn(groups * codes, d // groups) * 0.1)
                self.project_q, self.final = nn.Linear(d, d), nn.Linear(d, d)
                self.g, self.v, self.k = groups, codes, negatives

            def forward(self, wave):
                f = self.ln(self.fe(wave).transpose(1, 2))                           # [B, T, d]
                b, t, d = f.shape
                x = f * (1 - self.time_mask) + self.mask_emb * self.time_mask
                c = self.final(self.ctx(x))
                lg = self.q_logits(f).view(b, t, self.g, self.v)
                u = torch.rand_like(lg)
                soft = ((lg - torch.log(-torch.log(u + 1e-9) + 1e-9)) / 2.0).softmax(-1)
                hard = (soft == soft.max(-1, keepdim=True)[0]).float()
                y = hard - soft.detach() + soft
                q = (y.unsqueeze(-1) * self.codevectors.view(1, 1, self.g, self.v, d // self.g)).sum(-2)
                q = self.project_q(q.reshape(b, t, d))
                neg = q[:, self.neg_idx.view(-1)].view(b, t, self.k, d)
                targets = torch.cat([q.unsqueeze(2), neg], 2)                        # [B, T, 1 + K, d]
                logits = F.cosine_similarity(c.unsqueeze(2), targets, dim=-1) / 0.1
                probs = lg.softmax(-1).mean(dim=(0, 1))                              # [G, V]
                perplexity = torch.exp(-(probs * torch.log(probs + 1e-7)).sum(-1)).sum()
                diversity = (self.g * self.v - perplexity) / (self.g * self.v)
                return logits.permute(0, 2, 1) + 0.1 * diversity
        return Net()

    if kind == "hopfield_pooling":
        class Hopfield(nn.Module):
            def __init__(self, d, steps, beta):
                super().__init__()
                self.wq, self.wk, self.wv = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
                self.steps, self.beta = steps, beta

            def forward(self, state, stored):
                k = self.wk(stored)
                xi = self.wq(state)
                for _ in range(self.steps):
                    xi = torch.softmax(self.beta * xi @ k.transpose(1, 2), -1) @ k
                a = torch.softmax(self.beta * xi @ k.transpose(1, 2), -1)
                return a @ self.wv(stored)

        class Net(nn.Module):
            def __init__(self, d=128, queries=4):
                super().__init__()
                self.inp = nn.Linear(64, d)
                self.layer = Hopfield(d, 3, 1.0 / math.sqrt(d))
                self.norm = nn.LayerNorm(d)
                self.pool = Hopfield(d, 2, 1.0 / math.sqrt(d))
                self.q = nn.Parameter(torch.randn(1, queries, d) * 0.1)
                self.head = nn.Linear(queries * d, classes)

            def forward(self, seq):
                x = self.inp(seq)
                x = self.norm(x + self.layer(x, x))
                p = self.pool(self.q.expand(x.shape[0], -1, -1), x)
                return self.head(p.flatten(1))
        return Net()

    if kind == "cutmix_forward":
        class Res(nn.Module):
            def __init__(self, ci, co, s):
                super().__init__()
                self.a = conv_bn(ci, co, s=s)
                self.b = nn.Sequential(nn.Conv2d(co, co, 3, 1, 1, bias=False), nn.BatchNorm2d(co))
                self.skip = nn.Sequential(nn.Conv2d(ci, co, 1, s, bias=False), nn.BatchNorm2d(co))

            def forward(self, x):
                return F.relu(self.b(self.a(x)) + self.skip(x))

        class Net(nn.Module):
            def __init__(self, px=32):
                super().__init__()
                self.register_buffer("ys", torch.arange(px).float().view(1, 1, px, 1))
                self.register_buffer("xs", torch.arange(px).float().view(1, 1, 1, px))
                self.px = px
                self.body = nn.Sequential(conv_bn(3, 32), Res(32, 32, 1), Res(32, 64, 2), Res(64, 128, 2))
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                b = x.shape[0]
                r = torch.rand(b, 3, device=x.device)
                lam = r[:, 0].view(-1, 1, 1, 1)
                half = self.px * torch.sqrt(1 - lam) / 2
                cy, cx = (r[:, 1] * self.px).view(-1, 1, 1, 1), (r[:, 2] * self.px).view(-1, 1, 1, 1)
                box = ((self.ys >= cy - half) & (self.ys < cy + half)
                       & (self.xs >= cx - half) & (self.xs < cx + half)).float()   # [B, 1, px, px]
                perm = torch.argsort(torch.rand(b, device=x.device))
                x = x * (1 - box) + x.index_select(0, perm) * box
                return self.fc(self.body(x).mean(dim=(2, 3)))
        return Net()

    if kind == "siamrpn_dwxcorr":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.trunk = nn.Sequential(conv_bn(3, 32, 3, 2, 0), conv_bn(32, 64, 3, 1, 0),
                                           conv_bn(64, 96, 3, 2, 0), conv_bn(96, 128, 3, 1, 0))
                self.adj_z, self.adj_x = conv_bn(128, 128, 1, 1, 0), conv_bn(128, 128, 1, 1, 0)
                self.head = nn.Sequential(conv_bn(128, 128, 1, 1, 0), nn.Conv2d(128, classes, 1))

            def forward(self, template, search):
                z = self.adj_z(self.trunk(template))                                 # [B, C, 4, 4]
                x = self.adj_x(self.trunk(search))                                   # [B, C, 12, 12]
                out = None
                for u in range(4):
                    for v in range(4):
                        term = x[:, :, u:u + 9, v:v + 9] * z[:, :, u:u + 1, v:v + 1]
                        out = term if out is None else out + term
                return self.head(out)
        return Net()

    if kind == "performer_favor":
        class Favor(nn.Module):
            def __init__(self, d, h, m=64):
                super().__init__()
                self.h, self.dh, self.m = h, d // h, m
                self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
                g = torch.Generator().manual_seed(7)
                blocks = [torch.linalg.qr(torch.randn(self.dh, self.dh, generator=g))[0].t()
                          for _ in range(m // self.dh)]
                w = torch.cat(blocks, 0) * torch.randn(m, self.dh, generator=g).norm(dim=1, keepdim=True)
                self.register_buffer("omega", w.t().contiguous())                    # [dh, m]

            def features(self, x, is_query):
                x = x * self.dh ** -0.25
                wx = x @ self.omega
                sq = (x ** 2).sum(-1, keepdim=True) / 2
                if is_query:
                    mx = wx.amax(-1, keepdim=True)
                else:
                    mx = wx.amax(dim=(-1, -2), keepdim=True)
                return (torch.exp(wx - sq - mx.detach()) + 1e-4) / math.sqrt(self.m)

            def forward(self, x):
                b, n, d = x.shape
                q, k, v = self.qkv(x).view(b, n, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
                qp, kp = self.features(q, True), self.features(k, False)
                kv = kp.transpose(-1, -2) @ v                                        # [B, h, m, dh]
                norm = qp @ kp.sum(2, keepdim=True).transpose(-1, -2)               # [B, h, n, 1]
                y = (qp @ kv) / norm
                return self.proj(y.transpose(1, 2).reshape(b, n, d))

        return TextNet([Favor(128, 4) for _ in range(3)])

    if kind == "nystromformer":
        class Nys(nn.Module):
            def __init__(self, d, h, landmarks=16, iters=6):
                super().__init__()
                self.h, self.dh, self.l, self.iters = h, d // h, landmarks, iters
                self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
                self.conv = nn.Conv2d(h, h, (33, 1), padding=(16, 0), groups=h, bias=False)

            def pinv(self, k):
                i = torch.eye(k.shape[-1], device=k.device)
                z = k.transpose(-1, -2) / (k.abs().sum(-2).max() * k.abs().sum(-1).max())
                for _ in range(self.iters):
                    kz = k @ z
                    z = 0.25 * z @ (13 * i - kz @ (15 * i - kz @ (7 * i - kz)))
                return z

            def forward(self, x):
                b, n, d = x.shape
                q, k, v = self.qkv(x).view(b, n, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
                q = q / math.sqrt(math.sqrt(self.dh))
                k = k / math.sqrt(math.sqrt(self.dh))
                ql = q.reshape(b, self.h, self.l, n // self.l, self.dh).mean(-2)
                kl = k.reshape(b, self.h, self.l, n // self.l, self.dh).mean(-2)
                k1 = (q @ kl.transpose(-1, -2)).softmax(-1)
                k2 = (ql @ kl.transpose(-1, -2)).softmax(-1)
                k3 = (ql @ k.transpose(-1, -2)).softmax(-1)
                y = (k1 @ self.pinv(k2)) @ (k3 @ v) + self.conv(v)
                return self.proj(y.transpose(1, 2).reshape(b, n, d))

        return TextNet([Nys(128, 4) for _ in range(2)])

    if kind == "qrnn_fopool":
        class QRNN(nn.Module):
            def __init__(self, ci, h):
                super().__init__()
                self.conv = nn.Conv1d(ci, 3 * h, 2)
                self.h = h

            def forward(self, x):                                                    # [B, C, T]
                g = self.conv(F.pad(x, (1, 0)))
                z, f, o = torch.tanh(g[:, :self.h]), torch.sigmoid(g[:, self.h:2 * self.h]), \
                    torch.sigmoid(g[:, 2 * self.h:])
                c = torch.zeros_like(z[:, :, 0])
                hs = []
                for t in range(x.shape[2]):
                    c = f[:, :, t] * c + (1 - f[:, :, t]) * z[:, :, t]
                    hs.append(o[:, :, t] * c)
                return torch.stack(hs, 2)

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.emb = nn.Embedding(classes, d)
                self.l1, self.l2 = QRNN(d, d), QRNN(d, d)
                self.drop = nn.Dropout(0.2)
                self.out = nn.Conv1d(d, classes, 1)

            def forward(self, input_ids):
                x = self.emb(input_ids).transpose(1, 2)
                x = self.drop(self.l2(self.drop(self.l1(x))))
                return self.out(x)                                                   # [B, V, T]
        return Net()

    if kind == "relation_network":
        class Net(nn.Module):
            def __init__(self, c=24, g=256, side=8):
                super().__init__()
                self.cnn = nn.Sequential(conv_bn(3, c, 3, 2, 1), conv_bn(c, c, 3, 2, 1), conv_bn(c, c, 3, 2, 1),
                                         conv_bn(c, c, 3, 1, 1))
                ys, xs = torch.meshgrid(torch.linspace(-1, 1, side), torch.linspace(-1, 1, side), indexing="ij")
                self.register_buffer("coords", torch.stack([ys, xs]).view(1, 2, side * side).transpose(1, 2))
                self.g = nn.Sequential(nn.Linear(2 * (c + 2) + 11, g), nn.ReLU(), nn.Linear(g, g), nn.ReLU(),
                                       nn.Linear(g, g), nn.ReLU(), nn.Linear(g, g), nn.ReLU())
                self.f = nn.Sequential(nn.Linear(g, g), nn.ReLU(), nn.Linear(g, g), nn.Dropout(0.5), nn.ReLU(),
                                       nn.Linear(g, classes))

            def forward(self, x, question):
                o = self.cnn(x).flatten(2).transpose(1, 2)                           # [B, 64, c]
                b, n, _ = o.shape
                o = torch.cat([o, self.coords.expand(b, -1, -1)], 2)
                oi = o.unsqueeze(2).expand(-1, -1, n, -1)
                oj = o.unsqueeze(1).expand(-1, n, -1, -1)
                q = question.view(b, 1, 1, -1).expand(-1, n, n, -1)
                pairs = torch.cat([oi, oj, q], 3)                                    # [B, n, n, 2(c+2)+11]
                return self.f(self.g(pairs).sum(dim=(1, 2)))
        return Net()

    if kind == "mil_gated_attention":
        class Net(nn.Module):
            def __init__(self, m=500, a=128):
                super().__init__()
                self.feat = nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2),
                                          nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2))
                self.fc = nn.Sequential(nn.Linear(50 * 4 * 4, m), nn.ReLU())
                self.v, self.u, self.w = nn.Linear(m, a), nn.Linear(m, a), nn.Linear(a, 1)
                self.cls = nn.Linear(m, classes)

            def forward(self, bag):
                b, k = bag.shape[0], bag.shape[1]
                h = self.fc(self.feat(bag.reshape(-1, 1, 28, 28)).flatten(1)).view(b, k, -1)
                att = self.w(torch.tanh(self.v(h)) * torch.sigmoid(self.u(h))).squeeze(-1).softmax(-1)
                return self.cls((att.unsqueeze(-1) * h).sum(1))
        return Net()

    if kind == "superglue_sinkhorn":
        class Attn(nn.Module):
            def __init__(self, d, h):
                super().__init__()
                self.h = h
                self.q, self.k, self.v, self.merge = (nn.Linear(d, d) for _ in range(4))
                self.mlp = nn.Sequential(nn.Linear(2 * d, 2 * d), nn.LayerNorm(2 * d), nn.ReLU(),
                                         nn.Linear(2 * d, d))

            def forward(self, x, src):
                b, n, d = x.shape
                m = src.shape[1]
                q = self.q(x).view(b, n, self.h, -1).transpose(1, 2)
                k = self.k(src).view(b, m, self.h, -1).transpose(1, 2)
                v = self.v(src).view(b, m, self.h, -1).transpose(1, 2)
                a = (q @ k.transpose(-1, -2) / math.sqrt(d // self.h)).softmax(-1)
                msg = self.merge((a @ v).transpose(1, 2).reshape(b, n, d))
                return x + self.mlp(torch.cat([x, msg], -1))

        class Net(nn.Module):
            def __init__(self, d=64, layers=4, iters=10):
                super().__init__()
                self.kenc = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 64), nn.ReLU(),
                                          nn.Linear(64, d))
                self.layers = nn.ModuleList([Attn(d, 4) for _ in range(layers)])
                self.final = nn.Linear(d, d)
                self.bin = nn.Parameter(torch.tensor(1.0))
                self.iters, self.d = iters, d

            def forward(self, kpts0, desc0, kpts1, desc1):
                x0, x1 = desc0 + self.kenc(kpts0), desc1 + self.kenc(kpts1)
                for i, layer in enumerate(self.layers):
                    if i % 2 == 0:
                        x0, x1 = layer(x0, x0), layer(x1, x1)
                    else:
                        x0, x1 = layer(x0, x1), layer(x1, x0)
                s = self.final(x0) @ self.final(x1).transpose(1, 2) / math.sqrt(self.d)  # [B, m, n]
                b, m, n = s.shape
                col = self.bin.expand(b, m, 1)
                row = self.bin.expand(b, 1, n + 1)
                z = torch.cat([torch.cat([s, col], 2), row], 1)                     # [B, m + 1, n + 1]
                norm = -math.log(m + n)
                log_mu = torch.cat([torch.full((m,), norm), torch.tensor([math.log(n) + norm])])
                log_nu = torch.cat([torch.full((n,), norm), torch.tensor([math.log(m) + norm])])
                u = torch.zeros_like(z[:, :, 0])
                v = torch.zeros_like(z[:, 0, :])
                for _ in range(self.iters):
                    u = log_mu - torch.logsumexp(z + v.unsqueeze(1), dim=2)
                    v = log_nu - torch.logsumexp(z + u.unsqueeze(2), dim=1)
                p = z + u.unsqueeze(2) + v.unsqueeze(1) - norm
                return p[:, :m, :].transpose(1, 2)                                   # [B, n + 1, m]
        return Net()

    if kind == "linformer":
        class Lin(nn.Module):
            def __init__(self, d, h, n, k, proj):
                super().__init__()
                self.h = h
                self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
                self.proj = proj                                                     # shared Linear(n, k)

            def forward(self, x):
                b, n, d = x.shape
                q, k, v = self.qkv(x).chunk(3, -1)
                k = self.proj(k.transpose(1, 2)).transpose(1, 2)                     # [B, k, d]
                v = self.proj(v.transpose(1, 2)).transpose(1, 2)
                q = q.view(b, n, self.h, -1).transpose(1, 2)
                k = k.reshape(b, -1, self.h, d // self.h).transpose(1, 2)
                v = v.reshape(b, -1, self.h, d // self.h).transpose(1, 2)
                a = (q @ k.transpose(-1, -2) / math.sqrt(d // self.h)).softmax(-1)
                return self.out((a @ v).transpose(1, 2).reshape(b, n, d))

        shared = nn.Linear(256, 32, bias=False)
        return TextNet([Lin(128, 4, 256, 32, shared) for _ in range(3)], n=256, act=nn.ReLU, post=True)

    if kind == "rdrop_kl":
        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.emb = nn.Embedding(3000, d)
                layer = nn.TransformerEncoderLayer(d, 4, 256, dropout=0.1, batch_first=True)
                self.enc = nn.TransformerEncoder(layer, 2)
                self.drop = nn.Dropout(0.1)
                self.head = nn.Linear(d, classes)

            def forward(self, input_ids):
                b = input_ids.shape[0]
                x = self.emb(torch.cat([input_ids, input_ids], 0))
                logits = self.head(self.drop(self.enc(x).mean(1)))
                l1, l2 = logits[:b], logits[b:]
                p1, p2 = l1.log_softmax(-1), l2.log_softmax(-1)
                kl = (p1.exp() * (p1 - p2)).sum(-1) + (p2.exp() * (p2 - p1)).sum(-1)
                return (l1 + l2) / 2 + 0.5 * kl.unsqueeze(1)
        return Net()

    if kind == "dann_grl":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.feat = nn.Sequential(conv_bn(3, 32), nn.MaxPool2d(2), conv_bn(32, 64), nn.MaxPool2d(2),
                                          conv_bn(64, 128), nn.AdaptiveAvgPool2d(1), nn.Flatten())
                self.label = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, classes))
                self.domain = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 1))

            def forward(self, x, domain):
                f = self.feat(x)
                r = f * -1.0 + (f * 2.0).detach()                                    # gradient reversal
                d = self.domain(r)
                dl = bce_logits(d, (domain > 0).float())
                return self.label(f) + dl
        return Net()

    if kind == "coord_attention":
        class CoordAtt(nn.Module):
            def __init__(self, c, r=8):
                super().__init__()
                m = max(8, c // r)
                self.conv = nn.Sequential(nn.Conv2d(c, m, 1, bias=False), nn.BatchNorm2d(m), nn.Hardswish())
                self.ch, self.cw = nn.Conv2d(m, c, 1), nn.Conv2d(m, c, 1)

            def forward(self, x):
                h, w = x.shape[2], x.shape[3]
                xh = x.mean(3, keepdim=True)                                         # [B, C, H, 1]
                xw = x.mean(2, keepdim=True).permute(0, 1, 3, 2)                     # [B, C, W, 1]
                y = self.conv(torch.cat([xh, xw], 2))
                yh, yw = torch.split(y, [h, w], 2)
                return x * torch.sigmoid(self.ch(yh)) * torch.sigmoid(self.cw(yw.permute(0, 1, 3, 2)))

        class IR(nn.Module):
            def __init__(self, ci, co, s):
                super().__init__()
                m = ci * 4
                self.body = nn.Sequential(nn.Conv2d(ci, m, 1, bias=False), nn.BatchNorm2d(m), nn.ReLU6(inplace=True),
                                          nn.Conv2d(m, m, 3, s, 1, groups=m, bias=False), nn.BatchNorm2d(m),
                                          nn.ReLU6(inplace=True), CoordAtt(m),
                                          nn.Conv2d(m, co, 1, bias=False), nn.BatchNorm2d(co))
                self.res = s == 1 and ci == co

            def forward(self, x):
                y = self.body(x)
                return x + y if self.res else y

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = conv_bn(3, 16, 3, 2, 1)
                self.blocks = nn.Sequential(IR(16, 24, 2), IR(24, 24, 1), IR(24, 32, 2), IR(32, 32, 1),
                                            IR(32, 64, 2), IR(64, 64, 1))
                self.head = nn.Linear(64, classes)

            def forward(self, x):
                return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))
        return Net()

    raise ValueError("unknown builder " + kind)
