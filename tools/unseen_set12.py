"""The twelfth held-out set of real architectures (tools/unseen_models.py --set unseen12).

Fixed on 2026-12-07, after set 11 had been planned (blind 0bb8329, after 3583743), before any of these was exported
for a row, measured or planned (each model was only built, stepped once in torch and exported to a throwaway buffer
at opset 14 to check that it exports). Of 16 candidates, an SN-GAN discriminator with nn.utils.spectral_norm did not
export (SymbolicValueError: the power iteration's _div_rounding_mode) and was dropped; torch 1.13 cannot export
Tensor.unfold once the batch is dynamic ("input size not accessible"), so Longformer's windows are written as stacked
shifted slices and PatchTST's patches are non-overlapping (a reshape, stride = patch length 16). 15 models, 30 rows.
Architectures and idioms of 2018-2026 that the zoo, sets 1-11 and the random nets lack (Conformer, a weight-normed
TCN, N-BEATS, a conv VAE, PixelShuffle, EfficientNetV2, index_add message passing, Deep & Cross and SimCLR are already
in sets 2-9, so they are not repeated): a CenterNet head whose penalty-reduced focal loss on a Gaussian heatmap buffer
enters the logits, a two-tower recommender with an in-batch softmax term (L2-normalised towers, u @ i^T, the
diagonal), an Informer encoder with circular-padded token convolutions and its distilling layers (Conv1d +
BatchNorm1d + ELU + MaxPool1d stride 2 between attention layers), ELECTRA (a small generator's MLM term, argmax
replacement at fixed masked positions, a discriminator sharing the token embedding), a MoCo-style contrastive head
(two views, stop-gradient keys, a normalised negative queue buffer), NODE oblivious decision trees with sparsemax
feature selection (sort, cumsum, support), Longformer sliding-window attention (pad + stacked shifted windows),
DeBERTa disentangled attention (content-to-position and position-to-content scores gathered by a relative index),
XCiT cross-covariance attention (F.normalize, channels x channels maps, a per-head temperature, a local patch
interaction of depthwise convs), a RealNVP / Glow-style flow (squeeze by view + permute, actnorm, 1x1 mixing,
affine coupling with tanh log-scales, the negative log-likelihood in the logits), PatchTST with RevIN
(detached instance statistics, channel independence by reshape, patches by reshape, BatchNorm1d in the encoder), ToMe token merging (alternate-token bipartite matching by cosine similarity, argsort, gather, scatter_add
merge with counts), a SpecAugment front end (frequency and time masks from torch.rand compared with arange buffers,
masked_fill) before a conv-subsampled transformer, a mixture-of-depths transformer (router top-k tokens, gather, a
block on the chosen tokens, scatter back weighted by the router) and a StyleGAN2 synthesis net with modulated
convolutions in the non-fused form (style-scaled input, conv, demodulation computed from weight and style), noise
injection by randn_like, a mapping MLP and a learned constant input.

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "centernet_focal", "builder": "centernet_focal", "args": {},
     "inputs": IMG(64), "classes": 5, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "CenterNet: conv trunk to stride 4 (16x16 x 64), heatmap (3x3 conv, ReLU, 1x1, sigmoid, clamp), "
                    "size and offset heads; penalty-reduced focal loss against a Gaussian heatmap buffer "
                    "((1 - p)^2 log p at peaks, (1 - y)^4 p^2 log(1 - p) elsewhere) and an L1 size term added to "
                    "the class logits of a pooled head"},
    {"name": "two_tower_inbatch", "builder": "two_tower_inbatch", "args": {},
     "inputs": [["user_ids", [12], "int64", 5000], ["item_ids", [4], "int64", 3000]], "classes": 8,
     "rows": [[32, "adam"], [128, "sgd"]],
     "description": "Two-tower retrieval: mean-pooled user history and item-feature embeddings, 2-layer MLP towers, "
                    "F.normalize, in-batch scores u @ i^T / learned temperature, logsumexp minus the diagonal "
                    "added to a category head over the user tower"},
    {"name": "informer_distil", "builder": "informer_distil", "args": {},
     "inputs": [["input", [96, 7], "float32", 0]], "classes": 3, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Informer encoder: circular-padded Conv1d token embedding plus a sine position buffer, 3 "
                    "attention layers (full attention, d = 64, 4 heads) with distilling layers between them "
                    "(Conv1d circular + BatchNorm1d + ELU + MaxPool1d(3, 2, 1): 96 -> 48 -> 24), LayerNorm, "
                    "mean-pooled"},
    {"name": "electra_gen_disc", "builder": "electra_gen_disc", "args": {},
     "inputs": [["input_ids", [48], "int64", 1000]], "classes": 2, "label_shape": [48],
     "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "ELECTRA: generator (1 layer x 64) MLM logits at every 6th position (mask buffer), its "
                    "cross-entropy by logsumexp - gather added to the output, argmax tokens (no gradient) replace "
                    "the masked ones, discriminator (2 layers x 128) sharing the token Embedding (projected), "
                    "replaced-token logits per position"},
    {"name": "moco_queue", "builder": "moco_queue", "args": {},
     "inputs": [["input", [3, 32, 32], "float32", 0], ["input2", [3, 32, 32], "float32", 0]], "classes": 65,
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "MoCo-style contrastive step: one CNN encoder + projection MLP over two views, normalised "
                    "queries, stop-gradient keys (.detach()), a normalised 128 x 64 negative queue buffer, "
                    "logits cat([q . k, q @ queue]) / 0.07"},
    {"name": "node_sparsemax", "builder": "node_sparsemax", "args": {},
     "inputs": [["input", [20], "float32", 0]], "classes": 3, "rows": [[64, "adam"], [256, "sgd"]],
     "description": "NODE: 2 dense layers of 32 oblivious trees of depth 4, sparsemax feature selection (sort "
                    "descending, cumsum, support from an arange buffer, threshold tau), thresholds and log "
                    "temperatures, sparsemoid choices, the 16-leaf response by products over a bin-code buffer, "
                    "leaf values einsum"},
    {"name": "longformer_window", "builder": "longformer_window", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 4, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Longformer-style sliding-window attention: keys and values padded by 4 each side and "
                    "windowed by torch.stack of 9 shifted slices, q @ window scores with an edge mask buffer, softmax "
                    "over 9, 2 layers x 128, 4 heads, learned positions, first-token pooling"},
    {"name": "deberta_disentangled", "builder": "deberta_disentangled", "args": {},
     "inputs": [["input_ids", [48], "int64", 2000]], "classes": 3, "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "DeBERTa disentangled attention: a shared relative-position Embedding (2k = 32 buckets), "
                    "content-to-position scores gathered by a clamped relative index buffer, position-to-content "
                    "by the transposed index, scaled by sqrt(3 d), 2 layers x 128, 4 heads, mean-pooled"},
    {"name": "xcit_xca", "builder": "xcit_xca", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "XCiT: 4x4 patch conv to 8x8 x 96, blocks of cross-covariance attention (q, k, v transposed "
                    "to [B, h, dh, N], F.normalize over tokens, dh x dh maps times a per-head temperature), a "
                    "local patch interaction (depthwise 3x3, GELU, BatchNorm, depthwise 3x3 on the token grid), "
                    "MLP, layer scale, 3 blocks"},
    {"name": "realnvp_coupling", "builder": "realnvp_coupling", "args": {},
     "inputs": IMG(16), "classes": 4, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Glow / RealNVP flow: squeeze by view + permute to 12 x 8 x 8, 4 steps of actnorm (learned "
                    "log-scale, bias), a 1x1 conv mixing, affine coupling (half the channels through conv-ReLU-"
                    "conv, tanh log-scale, x * exp(s) + t), the log-determinant summed, Gaussian NLL per sample "
                    "added to a pooled class head"},
    {"name": "patchtst_revin", "builder": "patchtst_revin", "args": {},
     "inputs": [["input", [96, 7], "float32", 0]], "classes": 7, "label_shape": [24],
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "PatchTST with RevIN: detached per-channel mean / std, affine, channel independence by "
                    "permute + reshape to [B * 7, 96], 6 patches of 16 by reshape, Linear to 64 + "
                    "position parameter, 2 encoder layers with BatchNorm1d (transposed), flatten head to 24 "
                    "steps, de-normalised; the 7 channels read as class logits per step"},
    {"name": "tome_merging", "builder": "tome_merging", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "ViT with ToMe token merging: 4x4 patches to 64 tokens x 96, after each of 4 blocks the "
                    "tokens split alternately (x[:, ::2], x[:, 1::2]), cosine similarity of F.normalize'd halves, "
                    "max + argsort picks 8 merges, gather, scatter_add into their matches with counts, "
                    "concatenated (64 -> 56 -> 48 -> 40 -> 32 tokens)"},
    {"name": "specaugment_speech", "builder": "specaugment_speech", "args": {},
     "inputs": [["input", [80, 100], "float32", 0]], "classes": 30, "label_shape": [25],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "SpecAugment in training: 2 frequency masks (width 12) and 2 time masks (width 15) whose "
                    "starts come from torch.rand, compared with arange buffers, masked_fill; conv subsampling "
                    "(2 x Conv2d 3x3 s2 + ReLU) to 25 frames, Linear, 2 pre-norm transformer layers x 128, "
                    "per-frame logits"},
    {"name": "mixture_of_depths", "builder": "mixture_of_depths", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 5, "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "Mixture-of-depths: each of 3 layers routes the top 32 of 64 tokens (router Linear, topk), "
                    "gathers them, runs attention + MLP on them alone, scatters x + sigmoid(router) * block "
                    "back (Tensor.scatter); d = 128, 4 heads, mean-pooled"},
    {"name": "stylegan2_modconv", "builder": "stylegan2_modconv", "args": {},
     "inputs": [["input", [64], "float32", 0]], "classes": 3, "label_shape": [32, 32],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "StyleGAN2 synthesis: 4-layer LeakyReLU mapping MLP, learned 4x4 constant expanded over the "
                    "batch, modulated 3x3 convs in the non-fused form (x * style, conv, * demod where demod = "
                    "rsqrt(sum (w s)^2)), noise by randn_like times a learned strength, bilinear 2x upsampling "
                    "to 32x32, modulated 1x1 toRGB skips, per-pixel classes"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    def heads_of(x, h):  # [B, T, D] -> [B, h, T, D / h]
        b, t, d = x.shape
        return x.view(b, t, h, d // h).transpose(1, 2)

    def merge(x):  # [B, h, T, dh] -> [B, T, h * dh]
        b, h, t, dh = x.shape
        return x.transpose(1, 2).reshape(b, t, h * dh)

    class Attention(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(d, 3 * d)
            self.o = nn.Linear(d, d)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = (heads_of(a, self.heads) for a in (q, k, v))
            w = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
            return self.o(merge(w.softmax(dim=-1) @ v))

    class Block(nn.Module):  # pre-norm transformer block
        def __init__(self, d, heads, attn=None):
            super().__init__()
            self.n1 = nn.LayerNorm(d)
            self.attn = attn if attn is not None else Attention(d, heads)
            self.n2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.n1(x))
            return x + self.mlp(self.n2(x))

    if kind == "centernet_focal":
        def conv_bn(ci, co, s):
            return nn.Sequential(nn.Conv2d(ci, co, 3, s, 1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True))

        class Net(nn.Module):
            def __init__(self, c=64, nh=4):
                super().__init__()
                self.trunk = nn.Sequential(conv_bn(3, 32, 2), conv_bn(32, 32, 1), conv_bn(32, c, 2), conv_bn(c, c, 1))
                self.heat = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.ReLU(inplace=True), nn.Conv2d(c, nh, 1))
                self.wh = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.ReLU(inplace=True), nn.Conv2d(c, 2, 1))
                self.off = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.ReLU(inplace=True), nn.Conv2d(c, 2, 1))
                nn.init.constant_(self.heat[-1].bias, -2.19)
                ys, xs = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
                target = torch.zeros(nh, 16, 16)
                for i, (cy, cx) in enumerate([(4, 4), (11, 5), (7, 12), (12, 12)]):
                    target[i] = torch.exp(-((ys - cy) ** 2 + (xs - cx) ** 2) / (2 * 1.5 ** 2))
                self.register_buffer("target", target, persistent=False)
                self.fc = nn.Linear(c, classes)

            def forward(self, x):
                f = self.trunk(x)
                p = torch.sigmoid(self.heat(f)).clamp(1e-4, 1 - 1e-4)
                y = self.target
                pos = y.eq(1).float()
                neg_w = torch.pow(1 - y, 4)
                loss = -(torch.log(p) * torch.pow(1 - p, 2) * pos
                         + torch.log(1 - p) * torch.pow(p, 2) * neg_w * (1 - pos)).sum(dim=(1, 2, 3)) / 4.0
                size = (self.wh(f).abs().mean(dim=(1, 2, 3)) + self.off(f).abs().mean(dim=(1, 2, 3))) * 0.1
                return self.fc(f.mean(dim=(2, 3))) + (loss + size).unsqueeze(1)
        return Net()

    if kind == "two_tower_inbatch":
        class Tower(nn.Module):
            def __init__(self, vocab, d=64, out=32):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                self.mlp = nn.Sequential(nn.Linear(d, 128), nn.ReLU(), nn.Linear(128, out))

            def forward(self, ids):
                return self.mlp(self.emb(ids).mean(dim=1))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.user = Tower(5000)
                self.item = Tower(3000)
                self.log_t = nn.Parameter(torch.tensor(math.log(1 / 0.05)))
                self.cat = nn.Linear(32, classes)

            def forward(self, user_ids, item_ids):
                hu = self.user(user_ids)
                u = F.normalize(hu, dim=-1)
                i = F.normalize(self.item(item_ids), dim=-1)
                scores = (u @ i.t()) * self.log_t.exp()                     # [B, B]
                inbatch = torch.logsumexp(scores, dim=1) - scores.diagonal()
                return self.cat(hu) + inbatch.unsqueeze(1)
        return Net()

    if kind == "informer_distil":
        class Distil(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.conv = nn.Conv1d(d, d, 3, padding=1, padding_mode="circular")
                self.bn = nn.BatchNorm1d(d)
                self.pool = nn.MaxPool1d(3, 2, 1)

            def forward(self, x):  # [B, T, d] -> [B, T / 2, d]
                return self.pool(F.elu(self.bn(self.conv(x.transpose(1, 2))))).transpose(1, 2)

        class Net(nn.Module):
            def __init__(self, cin=7, d=64, t=96):
                super().__init__()
                self.tok = nn.Conv1d(cin, d, 3, padding=1, padding_mode="circular", bias=False)
                pos = torch.arange(t).float().unsqueeze(1)
                div = torch.exp(torch.arange(0, d, 2).float() * (-math.log(10000.0) / d))
                pe = torch.zeros(t, d)
                pe[:, 0::2] = torch.sin(pos * div)
                pe[:, 1::2] = torch.cos(pos * div)
                self.register_buffer("pe", pe, persistent=False)
                self.drop = nn.Dropout(0.05)
                self.layers = nn.ModuleList([Block(d, 4) for _ in range(3)])
                self.distil = nn.ModuleList([Distil(d) for _ in range(2)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                x = self.drop(self.tok(x.transpose(1, 2)).transpose(1, 2) + self.pe)
                for i, layer in enumerate(self.layers):
                    x = layer(x)
                    if i < len(self.distil):
                        x = self.distil[i](x)
                return self.fc(self.norm(x).mean(dim=1))
        return Net()

    if kind == "electra_gen_disc":
        class Net(nn.Module):
            def __init__(self, vocab=1000, t=48, dg=64, dd=128):
                super().__init__()
                self.emb = nn.Embedding(vocab, dd)
                self.pos = nn.Parameter(torch.randn(t, dd) * 0.02)
                self.g_in = nn.Linear(dd, dg)
                self.gen = Block(dg, 2)
                self.g_head = nn.Linear(dg, vocab)
                self.disc = nn.Sequential(Block(dd, 4), Block(dd, 4))
                self.d_norm = nn.LayerNorm(dd)
                self.d_head = nn.Linear(dd, classes)
                mask = torch.zeros(t, dtype=torch.bool)
                mask[::6] = True
                self.register_buffer("mask", mask, persistent=False)
                self.mask_id = 3

            def forward(self, ids):
                masked = ids.masked_fill(self.mask, self.mask_id)
                g = self.gen(self.g_in(self.emb(masked) + self.pos))
                gl = self.g_head(g[:, self.mask])                                   # [B, 8, vocab]
                orig = ids[:, self.mask]
                mlm = (torch.logsumexp(gl, dim=-1) - gl.gather(-1, orig.unsqueeze(-1)).squeeze(-1)).mean(dim=1)
                sampled = gl.argmax(dim=-1)
                corrupt = ids.clone()
                corrupt[:, self.mask] = sampled
                h = self.disc(self.emb(corrupt) + self.pos)
                out = self.d_head(self.d_norm(h)).transpose(1, 2)                  # [B, 2, T]
                return out + mlm.view(-1, 1, 1)
        return Net()

    if kind == "moco_queue":
        class Net(nn.Module):
            def __init__(self, d=128, k=64):
                super().__init__()
                self.enc = nn.Sequential(
                    nn.Conv2d(3, 32, 3, 1, 1), nn.BatchNorm2d(32), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                    nn.Conv2d(32, 64, 3, 1, 1), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                    nn.Conv2d(64, 128, 3, 1, 1), nn.BatchNorm2d(128), nn.ReLU(inplace=True),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten())
                self.proj = nn.Sequential(nn.Linear(128, 256), nn.ReLU(inplace=True), nn.Linear(256, d))
                self.register_buffer("queue", F.normalize(torch.randn(d, k), dim=0))

            def forward(self, x1, x2):
                q = F.normalize(self.proj(self.enc(x1)), dim=1)
                k = F.normalize(self.proj(self.enc(x2)), dim=1).detach()
                l_pos = (q * k).sum(dim=1, keepdim=True)
                l_neg = q @ self.queue
                return torch.cat([l_pos, l_neg], dim=1) / 0.07
        return Net()

    if kind == "node_sparsemax":
        def sparsemax(z, dim=-1):
            zs, _ = torch.sort(z, dim=dim, descending=True)
            n = z.shape[dim]
            rng = torch.arange(1, n + 1, dtype=z.dtype)
            css = zs.cumsum(dim) - 1
            support = (rng * zs > css).to(z.dtype)
            k = support.sum(dim=dim, keepdim=True)
            tau = (css * support).sum(dim=dim, keepdim=True) / k
            return torch.clamp(z - tau, min=0)

        class ODST(nn.Module):
            def __init__(self, din, trees=32, depth=4, out=3):
                super().__init__()
                self.sel = nn.Parameter(torch.randn(trees, depth, din) * 0.5)
                self.thr = nn.Parameter(torch.randn(trees, depth) * 0.1)
                self.log_temp = nn.Parameter(torch.zeros(trees, depth))
                self.resp = nn.Parameter(torch.randn(trees, out, 2 ** depth) * 0.1)
                codes = torch.tensor([[(i >> j) & 1 for j in range(depth)] for i in range(2 ** depth)]).float()
                self.register_buffer("codes", codes.t().contiguous(), persistent=False)   # [depth, leaves]
                self.trees, self.out = trees, out

            def forward(self, x):  # [B, din] -> [B, trees * out]
                w = sparsemax(self.sel, dim=-1)                                       # [trees, depth, din]
                f = torch.einsum("bi,tdi->btd", x, w)
                t = (f - self.thr) * torch.exp(-self.log_temp)
                c = torch.clamp(0.5 * torch.stack([-t, t], dim=-1) + 0.5, 0, 1)      # [B, trees, depth, 2]
                left, right = c[..., 0].unsqueeze(-1), c[..., 1].unsqueeze(-1)       # [B, trees, depth, 1]
                pick = left * (1 - self.codes) + right * self.codes                   # [B, trees, depth, leaves]
                leaf = pick.prod(dim=2)                                               # [B, trees, leaves]
                return torch.einsum("btl,tol->bto", leaf, self.resp).flatten(1)

        class Net(nn.Module):
            def __init__(self, din=20):
                super().__init__()
                self.l1 = ODST(din)
                self.l2 = ODST(din + 96)
                self.bn = nn.BatchNorm1d(din)
                self.fc = nn.Linear(192, classes)

            def forward(self, x):
                x = self.bn(x)
                h1 = self.l1(x)
                h2 = self.l2(torch.cat([x, h1], dim=1))
                return self.fc(torch.cat([h1, h2], dim=1))
        return Net()

    if kind == "longformer_window":
        class WindowAttention(nn.Module):
            def __init__(self, d, heads, w=4, t=64):
                super().__init__()
                self.heads, self.w = heads, w
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                idx = torch.arange(t).unsqueeze(1) + torch.arange(-w, w + 1).unsqueeze(0)   # [T, W]
                edge = torch.zeros(t, 2 * w + 1)
                edge[(idx < 0) | (idx >= t)] = float("-inf")
                self.register_buffer("edge", edge.view(1, t, 1, 1, 2 * w + 1), persistent=False)

            def forward(self, x):
                b, t, d = x.shape
                h, dh = self.heads, d // self.heads
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                k, v = F.pad(k, (0, 0, self.w, self.w)), F.pad(v, (0, 0, self.w, self.w))
                k = torch.stack([k[:, i:i + t] for i in range(2 * self.w + 1)], dim=-1)  # [B, T, d, W]
                v = torch.stack([v[:, i:i + t] for i in range(2 * self.w + 1)], dim=-1)
                k = k.reshape(b, t, h, dh, 2 * self.w + 1)
                v = v.reshape(b, t, h, dh, 2 * self.w + 1)
                qh = q.reshape(b, t, h, 1, dh) / math.sqrt(dh)
                s = (qh @ k) + self.edge                                              # [B, T, h, 1, W]
                y = s.softmax(dim=-1) @ v.transpose(-1, -2)                          # [B, T, h, 1, dh]
                return self.o(y.reshape(b, t, d))

        class Net(nn.Module):
            def __init__(self, d=128, t=64):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.pos = nn.Parameter(torch.randn(t, d) * 0.02)
                self.blocks = nn.Sequential(*[Block(d, 4, WindowAttention(d, 4)) for _ in range(2)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                return self.fc(self.norm(self.blocks(self.emb(ids) + self.pos))[:, 0])
        return Net()

    if kind == "deberta_disentangled":
        class DisentangledAttention(nn.Module):
            def __init__(self, d, heads, rel, t=48, span=16):
                super().__init__()
                self.heads, self.rel = heads, rel
                self.qkv = nn.Linear(d, 3 * d)
                self.pos_k = nn.Linear(d, d, bias=False)
                self.pos_q = nn.Linear(d, d)
                self.o = nn.Linear(d, d)
                r = torch.arange(t).unsqueeze(1) - torch.arange(t).unsqueeze(0)           # i - j
                self.register_buffer("c2p", torch.clamp(r + span, 0, 2 * span - 1), persistent=False)
                self.register_buffer("p2c", torch.clamp(-r + span, 0, 2 * span - 1), persistent=False)

            def forward(self, x):
                b, t, d = x.shape
                h = self.heads
                q, k, v = (heads_of(a, h) for a in self.qkv(x).chunk(3, dim=-1))        # [B, h, T, dh]
                rel = self.rel.weight.unsqueeze(0)                                        # [1, 2k, d]
                pk = heads_of(self.pos_k(rel), h)                                         # [1, h, 2k, dh]
                pq = heads_of(self.pos_q(rel), h)
                scale = math.sqrt(3 * q.shape[-1])
                c2c = q @ k.transpose(-1, -2)
                c2p = torch.gather(q @ pk.transpose(-1, -2), -1, self.c2p.expand(b, h, t, t))
                p2c = torch.gather(k @ pq.transpose(-1, -2), -1, self.p2c.expand(b, h, t, t)).transpose(-1, -2)
                w = ((c2c + c2p + p2c) / scale).softmax(dim=-1)
                return self.o(merge(w @ v))

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.rel = nn.Embedding(32, d)
                self.norm0 = nn.LayerNorm(d)
                self.blocks = nn.Sequential(*[Block(d, 4, DisentangledAttention(d, 4, self.rel)) for _ in range(2)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                return self.fc(self.norm(self.blocks(self.norm0(self.emb(ids)))).mean(dim=1))
        return Net()

    if kind == "xcit_xca":
        class XCA(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.heads = heads
                self.temperature = nn.Parameter(torch.ones(heads, 1, 1))
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)

            def forward(self, x):
                b, n, d = x.shape
                qkv = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 4, 1)
                q, k, v = qkv[0], qkv[1], qkv[2]                                          # [B, h, dh, N]
                q = F.normalize(q, dim=-1)
                k = F.normalize(k, dim=-1)
                a = ((q @ k.transpose(-1, -2)) * self.temperature).softmax(dim=-1)        # [B, h, dh, dh]
                return self.o((a @ v).permute(0, 3, 1, 2).reshape(b, n, d))

        class LPI(nn.Module):
            def __init__(self, d, side):
                super().__init__()
                self.side = side
                self.c1 = nn.Conv2d(d, d, 3, 1, 1, groups=d)
                self.bn = nn.BatchNorm2d(d)
                self.c2 = nn.Conv2d(d, d, 3, 1, 1, groups=d)

            def forward(self, x):
                b, n, d = x.shape
                y = x.transpose(1, 2).reshape(b, d, self.side, self.side)
                y = self.c2(self.bn(F.gelu(self.c1(y))))
                return y.reshape(b, d, n).transpose(1, 2)

        class XCiTBlock(nn.Module):
            def __init__(self, d, heads, side):
                super().__init__()
                self.n1, self.attn = nn.LayerNorm(d), XCA(d, heads)
                self.n2, self.lpi = nn.LayerNorm(d), LPI(d, side)
                self.n3 = nn.LayerNorm(d)
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                self.g1, self.g2, self.g3 = (nn.Parameter(1e-1 * torch.ones(d)) for _ in range(3))

            def forward(self, x):
                x = x + self.g1 * self.attn(self.n1(x))
                x = x + self.g2 * self.lpi(self.n2(x))
                return x + self.g3 * self.mlp(self.n3(x))

        class Net(nn.Module):
            def __init__(self, d=96):
                super().__init__()
                self.patch = nn.Sequential(nn.Conv2d(3, d // 2, 3, 2, 1), nn.BatchNorm2d(d // 2), nn.GELU(),
                                           nn.Conv2d(d // 2, d, 3, 2, 1))
                self.pos = nn.Parameter(torch.randn(64, d) * 0.02)
                self.blocks = nn.Sequential(*[XCiTBlock(d, 4, 8) for _ in range(3)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                x = self.patch(x).flatten(2).transpose(1, 2) + self.pos
                return self.fc(self.norm(self.blocks(x)).mean(dim=1))
        return Net()

    if kind == "realnvp_coupling":
        class FlowStep(nn.Module):
            def __init__(self, c, hidden=64):
                super().__init__()
                self.an_logs = nn.Parameter(torch.zeros(1, c, 1, 1))
                self.an_bias = nn.Parameter(torch.zeros(1, c, 1, 1))
                self.mix = nn.Conv2d(c, c, 1, bias=False)
                self.nn = nn.Sequential(nn.Conv2d(c // 2, hidden, 3, 1, 1), nn.ReLU(inplace=True),
                                        nn.Conv2d(hidden, hidden, 1), nn.ReLU(inplace=True),
                                        nn.Conv2d(hidden, c, 3, 1, 1))

            def forward(self, x):
                x = (x + self.an_bias) * torch.exp(self.an_logs)
                x = self.mix(x)
                xa, xb = x.chunk(2, dim=1)
                s, t = self.nn(xa).chunk(2, dim=1)
                s = torch.tanh(s)
                yb = xb * torch.exp(s) + t
                logdet = s.sum(dim=(1, 2, 3)) + self.an_logs.sum() * x.shape[2] * x.shape[3]
                return torch.cat([xa, yb], dim=1), logdet

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.steps = nn.ModuleList([FlowStep(12) for _ in range(4)])
                self.fc = nn.Linear(12, classes)

            def forward(self, x):
                b, c, hh, ww = x.shape
                x = x.view(b, c, hh // 2, 2, ww // 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(b, 4 * c, hh // 2, ww // 2)
                total = x.new_zeros(b)
                for step in self.steps:
                    x, ld = step(x)
                    total = total + ld
                nll = (0.5 * x.pow(2).sum(dim=(1, 2, 3)) - total) / (c * hh * ww)
                return self.fc(x.mean(dim=(2, 3))) + nll.unsqueeze(1)
        return Net()

    if kind == "patchtst_revin":
        class BNBlock(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.attn = Attention(d, heads)
                self.bn1 = nn.BatchNorm1d(d)
                self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Dropout(0.1), nn.Linear(2 * d, d))
                self.bn2 = nn.BatchNorm1d(d)

            def forward(self, x):
                x = self.bn1((x + self.attn(x)).transpose(1, 2)).transpose(1, 2)
                return self.bn2((x + self.mlp(x)).transpose(1, 2)).transpose(1, 2)

        class Net(nn.Module):
            def __init__(self, ch=7, t=96, horizon=24, p=16, stride=16, d=64):
                super().__init__()
                self.p, self.stride, self.horizon = p, stride, horizon
                n = (t - p) // stride + 1
                self.aff_w = nn.Parameter(torch.ones(ch))
                self.aff_b = nn.Parameter(torch.zeros(ch))
                self.embed = nn.Linear(p, d)
                self.pos = nn.Parameter(torch.randn(n, d) * 0.02)
                self.layers = nn.Sequential(BNBlock(d, 4), BNBlock(d, 4))
                self.head = nn.Linear(n * d, horizon)

            def forward(self, x):                                                         # [B, T, C]
                b, t, c = x.shape
                mean = x.mean(dim=1, keepdim=True).detach()
                std = torch.sqrt(x.var(dim=1, keepdim=True, unbiased=False) + 1e-5).detach()
                x = (x - mean) / std * self.aff_w + self.aff_b
                z = x.permute(0, 2, 1).reshape(b * c, t)
                z = z.reshape(b * c, t // self.p, self.p)                                 # [B*C, N, P]
                z = self.layers(self.embed(z) + self.pos)
                y = self.head(z.flatten(1)).reshape(b, c, self.horizon).permute(0, 2, 1)  # [B, H, C]
                y = (y - self.aff_b) / (self.aff_w + 1e-10) * std + mean
                return y.transpose(1, 2)                                                  # [B, C, H]
        return Net()

    if kind == "tome_merging":
        def tome(x, r):
            a, b = x[:, ::2], x[:, 1::2]
            an, bn = F.normalize(a, dim=-1), F.normalize(b, dim=-1)
            scores = an @ bn.transpose(-1, -2)
            node_max, node_idx = scores.max(dim=-1)
            edge_idx = node_max.argsort(dim=-1, descending=True).unsqueeze(-1)
            unm_idx, src_idx = edge_idx[:, r:], edge_idx[:, :r]
            dst_idx = node_idx.unsqueeze(-1).gather(1, src_idx)
            d = x.shape[-1]
            unm = a.gather(1, unm_idx.expand(-1, -1, d))
            src = a.gather(1, src_idx.expand(-1, -1, d))
            merged = b.scatter_add(1, dst_idx.expand(-1, -1, d), src)
            count = torch.ones_like(b[..., :1]).scatter_add(1, dst_idx, torch.ones_like(src[..., :1]))
            return torch.cat([unm, merged / count], dim=1)

        class Net(nn.Module):
            def __init__(self, d=96, r=8):
                super().__init__()
                self.r = r
                self.patch = nn.Conv2d(3, d, 4, 4)
                self.pos = nn.Parameter(torch.randn(64, d) * 0.02)
                self.blocks = nn.ModuleList([Block(d, 4) for _ in range(4)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                x = self.patch(x).flatten(2).transpose(1, 2) + self.pos
                for blk in self.blocks:
                    x = tome(blk(x), self.r)
                return self.fc(self.norm(x).mean(dim=1))
        return Net()

    if kind == "specaugment_speech":
        class SpecAugment(nn.Module):
            def __init__(self, nf=80, nt=100, fw=12, tw=15, masks=2):
                super().__init__()
                self.fw, self.tw, self.masks = fw, tw, masks
                self.register_buffer("fr", torch.arange(nf).float().view(1, nf, 1), persistent=False)
                self.register_buffer("tr", torch.arange(nt).float().view(1, 1, nt), persistent=False)

            def forward(self, x):  # [B, F, T]
                if not self.training:
                    return x
                b, nf, nt = x.shape
                for _ in range(self.masks):
                    f0 = torch.floor(torch.rand(b, 1, 1) * (nf - self.fw))
                    x = x.masked_fill((self.fr >= f0) & (self.fr < f0 + self.fw), 0.0)
                    t0 = torch.floor(torch.rand(b, 1, 1) * (nt - self.tw))
                    x = x.masked_fill((self.tr >= t0) & (self.tr < t0 + self.tw), 0.0)
                return x

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.aug = SpecAugment()
                self.sub = nn.Sequential(nn.Conv2d(1, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, 32, 3, 2, 1), nn.ReLU())
                self.lin = nn.Linear(32 * 20, d)
                self.blocks = nn.Sequential(Block(d, 4), Block(d, 4))
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                x = self.sub(self.aug(x).unsqueeze(1))                      # [B, 32, 20, 25]
                b, c, f, t = x.shape
                x = self.lin(x.permute(0, 3, 1, 2).reshape(b, t, c * f))
                return self.fc(self.norm(self.blocks(x))).transpose(1, 2)
        return Net()

    if kind == "mixture_of_depths":
        class MoDLayer(nn.Module):
            def __init__(self, d, heads, capacity):
                super().__init__()
                self.capacity = capacity
                self.router = nn.Linear(d, 1)
                self.block = Block(d, heads)

            def forward(self, x):
                b, t, d = x.shape
                r = self.router(x).squeeze(-1)                                # [B, T]
                w, idx = torch.topk(r, self.capacity, dim=1)
                idx_e = idx.unsqueeze(-1).expand(-1, -1, d)
                sel = x.gather(1, idx_e)
                out = sel + torch.sigmoid(w).unsqueeze(-1) * (self.block(sel) - sel)
                return x.scatter(1, idx_e, out)

        class Net(nn.Module):
            def __init__(self, d=128, t=64):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.pos = nn.Parameter(torch.randn(t, d) * 0.02)
                self.layers = nn.Sequential(*[MoDLayer(d, 4, t // 2) for _ in range(3)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                return self.fc(self.norm(self.layers(self.emb(ids) + self.pos)).mean(dim=1))
        return Net()

    if kind == "stylegan2_modconv":
        class ModConv(nn.Module):
            def __init__(self, ci, co, k, wdim, demod=True):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(co, ci, k, k))
                self.affine = nn.Linear(wdim, ci)
                nn.init.constant_(self.affine.bias, 1.0)
                self.scale = 1 / math.sqrt(ci * k * k)
                self.pad, self.demod = k // 2, demod

            def forward(self, x, w):
                s = self.affine(w)                                                        # [B, ci]
                weight = self.weight * self.scale
                x = F.conv2d(x * s.unsqueeze(-1).unsqueeze(-1), weight, padding=self.pad)
                if self.demod:
                    d = torch.rsqrt((weight.unsqueeze(0) * s.view(s.shape[0], 1, -1, 1, 1)).pow(2).sum(dim=(2, 3, 4))
                                    + 1e-8)                                                # [B, co]
                    x = x * d.unsqueeze(-1).unsqueeze(-1)
                return x

        class Layer(nn.Module):
            def __init__(self, ci, co, wdim):
                super().__init__()
                self.conv = ModConv(ci, co, 3, wdim)
                self.noise_strength = nn.Parameter(torch.zeros(1))
                self.bias = nn.Parameter(torch.zeros(1, co, 1, 1))

            def forward(self, x, w):
                x = self.conv(x, w)
                x = x + torch.randn_like(x[:, :1]) * self.noise_strength
                return F.leaky_relu(x + self.bias, 0.2) * math.sqrt(2)

        class Net(nn.Module):
            def __init__(self, z=64, wdim=64, ch=(64, 64, 32, 32)):
                super().__init__()
                layers = []
                for _ in range(4):
                    layers += [nn.Linear(z, wdim), nn.LeakyReLU(0.2)]
                self.mapping = nn.Sequential(*layers)
                self.const = nn.Parameter(torch.randn(1, ch[0], 4, 4))
                self.l0 = Layer(ch[0], ch[0], wdim)
                self.ups = nn.ModuleList()
                self.rgbs = nn.ModuleList([ModConv(ch[0], classes, 1, wdim, demod=False)])
                for i in range(1, 4):
                    self.ups.append(nn.ModuleList([Layer(ch[i - 1], ch[i], wdim), Layer(ch[i], ch[i], wdim)]))
                    self.rgbs.append(ModConv(ch[i], classes, 1, wdim, demod=False))

            def forward(self, z):
                w = self.mapping(F.normalize(z, dim=1) * math.sqrt(z.shape[1]))
                x = self.l0(self.const.expand(z.shape[0], -1, -1, -1), w)
                img = self.rgbs[0](x, w)
                for (a, b), rgb in zip(self.ups, self.rgbs[1:]):
                    x = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
                    x = b(a(x, w), w)
                    img = F.interpolate(img, scale_factor=2.0, mode="bilinear", align_corners=False) + rgb(x, w)
                return img
        return Net()

    raise ValueError("unknown builder " + kind)
