"""The seventeenth held-out set of real architectures (tools/unseen_models.py --set unseen17).

Fixed on 2026-12-07, after set 16 had been planned (blind bench/results/unseen16_blind_20261207.json) and pooled
(sets 3-16, bench/results/unseen_blind_pool_20261207.json), before any of these was exported for a row, measured or
planned (each model was only built, stepped once in torch and exported to a throwaway directory at opset 14 to
check that it exports). Architectures and training idioms of 2023-2026 that the zoo, sets 2-16 and the random nets
lack (Mamba, RWKV, RetNet, Hyena, DiT / adaLN-Zero, a diffusion U-Net with a timestep embedding, VQ-VAE with the
straight-through estimator, FastKAN, mixture-of-depths, Perceiver, Conformer, NeRF's MLP, LoRA with trainable base
weights, CLIP, DINO, mLSTM and the others named in the earlier sets' docstrings are not repeated; torch 1.13 cannot
export torch.fft, so an FFT long convolution is left out): Gated Linear Attention in its parallel form (low-rank
data-dependent per-key-channel log-sigmoid gates, cumsum, q * exp(b) and k * exp(-b), a causal mask buffer, a
per-head RMSNorm and a swish output gate), rectified-flow / flow-matching training (x_t = (1 - t) noise + t x from
torch.rand and randn_like, a time-conditioned conv net predicting the velocity, its squared error in the logits),
ControlNet (a locked U-Net frozen by requires_grad_(False), a trainable copy of its encoder fed a hint through a
zero-initialised conv, zero 1x1 convs into the locked decoder's skips), an efficient-KAN with B-spline bases built
by comparisons and the Cox-de Boor recursion, a BLIP-2 Q-Former (32 learned queries, self attention, cross attention
into the patch tokens of a ViT run under torch.no_grad), a graph transformer with Laplacian positional encodings
(random sign flips by torch.rand, an adjacency bias per head, BatchNorm over nodes), a transformer whose blocks run
under torch.utils.checkpoint (gradient checkpointing, use_reentrant=False: torch 1.13 cannot export the
reentrant form, "unordered_map::at"), NeRF volume rendering (stratified samples by torch.rand,
positional encoding, transmittance by an exclusive cumsum of sigma * delta, weights, rgb / depth / opacity maps),
a DDPM training step with classifier-free-guidance dropout (timesteps from torch.rand, alphas_cumprod gathered from
a buffer, the class replaced by a null class where torch.rand < 0.1, an epsilon-prediction U-Net, its error in the
logits), a VQ-VAE with an EMA codebook (F.one_hot assignments, cluster sizes and sums updated in place under
torch.no_grad, the codebook copied in place, straight-through), DeepSeek-V2 multi-head latent attention (low-rank
compressed KV and queries, decoupled rotary keys shared across heads), a SigLIP pairwise sigmoid loss (labels
2 * eye - 1 from arange comparisons, a learned temperature and bias), ColBERT late interaction (MaxSim over document
tokens for every in-batch query-document pair by einsum, the in-batch softmax term), a masked diffusion language
model (MDLM: a per-sample mask rate from torch.rand, tokens replaced by a mask id by torch.where, per-token vocabulary
logits), an E(n)-equivariant GNN (EGNN: dense pairwise messages by expand + cat with squared distances, coordinate
updates by relative positions, node updates) and LoRA on a frozen transformer backbone (requires_grad_(False) on
every base weight, rank-8 adapters on the query and value projections, a trainable head).

Frozen parameters here are frozen the way users freeze them (requires_grad_(False)); tools/measure_step.py hands
every parameter to the optimizer, which skips those without a gradient, so the measured step holds no gradient or
optimizer state for them. The shape-only ONNX file cannot say which initializers are frozen; oomguard.export's
metadata can (tools/unseen_hinted.py).

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "gated_linear_attention", "builder": "gated_linear_attention", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 2000, "label_shape": [64],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Gated Linear Attention LM: Embedding 128, 2 layers x 4 heads, gates logsigmoid(low-rank "
                    "Linear 128 -> 16 -> 128) / 16 cumsum'd over time, q * exp(b) @ (k * exp(-b))^T under a "
                    "causal mask buffer, @ v, per-head RMSNorm, swish output gate, SwiGLU FFN, vocabulary 2000"},
    {"name": "flow_matching", "builder": "flow_matching", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Rectified flow: t = torch.rand, x_t = (1 - t) randn_like + t x, a time-conditioned conv "
                    "net (sinusoid + MLP embedding added per channel, 3 GroupNorm SiLU residual blocks at 32 and "
                    "16 px) predicting x - noise; its mean squared error added to a pooled 10-class head"},
    {"name": "controlnet_zeroconv", "builder": "controlnet_zeroconv", "args": {},
     "inputs": [["input", [3, 64, 64], "float32", 0], ["hint", [3, 64, 64], "float32", 0]], "classes": 10,
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "ControlNet: a 3-level conv U-Net (GroupNorm, SiLU) and its head locked by "
                    "requires_grad_(False); a trainable copy of its encoder fed x + zero-conv(hint encoder), "
                    "zero-initialised 1x1 convs added into the locked decoder's skips and middle"},
    {"name": "kan_bspline", "builder": "kan_bspline", "args": {},
     "inputs": [["input", [1, 28, 28], "float32", 0]], "classes": 10, "rows": [[16, "adam"], [64, "sgd"]],
     "description": "efficient-KAN 784 -> 64 -> 10: cubic B-spline bases on a grid of 5 by comparisons "
                    "(x >= g_i) & (x < g_i+1) and the Cox-de Boor recursion, spline weights times a scaler, "
                    "plus a SiLU base Linear per layer"},
    {"name": "qformer", "builder": "qformer", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "BLIP-2 Q-Former: a 4x4-patch ViT (256 tokens x 128, 2 layers) run under torch.no_grad "
                    "with its parameters left trainable, LayerNorm; 32 learned queries x 128, 2 layers of query "
                    "self attention, cross attention into the patches and GELU FFN; head over the mean query"},
    {"name": "graph_transformer_lappe", "builder": "graph_transformer_lappe", "args": {},
     "inputs": [["nodes", [32, 16], "float32", 0], ["lap_pe", [32, 8], "float32", 0],
                ["adj", [32, 32], "float32", 0]], "classes": 10, "rows": [[16, "adam"], [64, "sgd"]],
     "description": "Graph transformer (Dwivedi & Bresson): node Linear + Laplacian eigenvector PE with "
                    "random sign flips from torch.rand, 3 layers x 4 heads of dense attention plus a per-head "
                    "adjacency bias, BatchNorm1d over nodes (transposed), FFN, mean readout"},
    {"name": "grad_checkpoint", "builder": "grad_checkpoint", "args": {},
     "inputs": [["input_ids", [128], "int64", 4000]], "classes": 4, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Gradient checkpointing: Embedding 192 + positions, 4 pre-norm transformer blocks (4 heads, "
                    "GELU FFN) each run through torch.utils.checkpoint.checkpoint(use_reentrant=False: the reentrant "
                    "form does not export), LayerNorm, mean pooled"},
    {"name": "nerf_volume_render", "builder": "nerf_volume_render", "args": {},
     "inputs": [["rays_o", [3], "float32", 0], ["rays_d", [3], "float32", 0]], "classes": 8,
     "rows": [[128, "adam"], [512, "sgd"]],
     "description": "NeRF rendering: 48 stratified samples per ray (linspace buffer + torch.rand), positional "
                    "encoding 10 frequencies of points and 4 of directions, 6 x 128 ReLU MLP with a skip, sigma "
                    "and view-dependent rgb, alpha = 1 - exp(-sigma delta), transmittance by an exclusive cumsum, "
                    "rgb / depth / opacity maps to a head"},
    {"name": "ddpm_cfg", "builder": "ddpm_cfg", "args": {},
     "inputs": [["input", [3, 32, 32], "float32", 0], ["label", [1], "int64", 10]], "classes": 10,
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "DDPM step with classifier-free guidance dropout: t = floor(rand * 1000), alphas_cumprod "
                    "buffer indexed by t, x_t from randn_like, the class replaced by a null class where "
                    "rand < 0.1, a 2-level U-Net (ResBlocks with time + class embedding, GroupNorm, SiLU) "
                    "predicting the noise, its squared error added to a bottleneck head"},
    {"name": "vqvae_ema", "builder": "vqvae_ema", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "VQ-VAE with an EMA codebook: conv encoder to 16 x 16 x 64, distances to 512 codes, argmin, "
                    "F.one_hot, cluster sizes and code sums updated in place (decay 0.99) under no_grad, the "
                    "codebook copied in place, straight-through x + (q - x).detach(), commitment and "
                    "reconstruction terms added to a head over the quantised map"},
    {"name": "mla_attention", "builder": "mla_attention", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 2000, "label_shape": [64],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "DeepSeek-V2 multi-head latent attention LM: d 192, 2 layers x 4 heads, queries through a "
                    "96-rank RMSNorm bottleneck, keys / values from a 64-rank compressed latent (RMSNorm, up "
                    "projection), a decoupled 16-dim rotary key shared over heads (cos / sin buffers), additive "
                    "causal mask buffer, SwiGLU FFN, vocabulary 2000"},
    {"name": "siglip", "builder": "siglip", "args": {},
     "inputs": [["input", [3, 32, 32], "float32", 0], ["text", [32], "int64", 4000]], "classes": 10,
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "SigLIP: a conv image tower and a 2-layer text transformer to 128, L2-normalised, "
                    "logits z_i z_t^T exp(t') + b, labels 2 * (arange == arange^T) - 1, the pairwise "
                    "-logsigmoid loss per image added to an image head"},
    {"name": "colbert_maxsim", "builder": "colbert_maxsim", "args": {},
     "inputs": [["query", [32], "int64", 4000], ["doc", [128], "int64", 4000]], "classes": 2,
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "ColBERT: one 2-layer nn.TransformerEncoder (d 128) for queries and documents, Linear to "
                    "64 and L2 normalise per token, MaxSim scores einsum('qid,pjd->qpij') max over document "
                    "tokens summed over query tokens for all in-batch pairs, the in-batch softmax loss added to "
                    "a relevance head"},
    {"name": "masked_diffusion_lm", "builder": "masked_diffusion_lm", "args": {},
     "inputs": [["input_ids", [96], "int64", 3000]], "classes": 3000, "label_shape": [96],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "MDLM: a per-sample mask rate t from torch.rand, tokens replaced by a mask id where "
                    "rand < t (torch.where), a bidirectional 3-layer transformer (d 192, learned positions, "
                    "sinusoidal embedding of t added), per-token vocabulary logits over 3000"},
    {"name": "egnn", "builder": "egnn", "args": {},
     "inputs": [["h", [24, 16], "float32", 0], ["x", [24, 3], "float32", 0]], "classes": 5,
     "rows": [[16, "adam"], [64, "sgd"]],
     "description": "EGNN (Satorras et al.): 4 layers of dense pairwise messages phi_e(h_i, h_j, |x_i - x_j|^2) "
                    "by expand + cat [B, 24, 24, 33], coordinate updates x_i + mean_j (x_i - x_j) phi_x(m_ij), "
                    "node updates h + phi_h(h, sum_j m_ij), sum readout"},
    {"name": "lora_frozen_backbone", "builder": "lora_frozen_backbone", "args": {},
     "inputs": [["input_ids", [128], "int64", 8000]], "classes": 4, "rows": [[8, "adam"], [32, "adamw"]],
     "description": "LoRA fine-tuning: a 4-layer pre-norm transformer (d 256, 4 heads, Embedding 8000) frozen by "
                    "requires_grad_(False), rank-8 adapters (B zero-initialised, alpha 16) on the query and "
                    "value projections, a trainable classification head"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.utils.checkpoint as ckpt
    kind = model["builder"]
    classes = model["classes"]

    def rms(x, w, eps=1e-6):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    def sinusoid(t, dim):  # t [B] float -> [B, dim]
        half = dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        a = t[:, None] * freqs[None] * 1000.0
        return torch.cat([a.sin(), a.cos()], -1)

    class SwiGLU(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.w1, self.w3, self.w2 = nn.Linear(d, h, bias=False), nn.Linear(d, h, bias=False), nn.Linear(h, d, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class ResBlock(nn.Module):
        """GroupNorm SiLU conv x 2 with an embedding added per channel."""
        def __init__(self, ci, co, de):
            super().__init__()
            self.n1, self.c1 = nn.GroupNorm(8, ci), nn.Conv2d(ci, co, 3, 1, 1)
            self.e = nn.Linear(de, co)
            self.n2, self.c2 = nn.GroupNorm(8, co), nn.Conv2d(co, co, 3, 1, 1)
            self.skip = nn.Conv2d(ci, co, 1) if ci != co else nn.Identity()

        def forward(self, x, emb):
            h = self.c1(F.silu(self.n1(x)))
            h = h + self.e(emb)[:, :, None, None]
            h = self.c2(F.silu(self.n2(h)))
            return self.skip(x) + h

    if kind == "gated_linear_attention":
        class GLA(nn.Module):
            def __init__(self, d=128, h=4):
                super().__init__()
                self.h, self.dh = h, d // h
                self.q, self.k, self.v = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
                self.g1, self.g2 = nn.Linear(d, 16, bias=False), nn.Linear(16, d)
                self.gate, self.o = nn.Linear(d, d), nn.Linear(d, d, bias=False)
                self.nw = nn.Parameter(torch.ones(self.dh))
                self.register_buffer("causal", torch.tril(torch.ones(64, 64)))

            def forward(self, x):
                b, t, d = x.shape
                sp = lambda y: y.view(b, t, self.h, self.dh).transpose(1, 2)  # noqa: E731
                q, k, v = sp(self.q(x)), sp(self.k(x)), sp(self.v(x))
                g = sp(F.logsigmoid(self.g2(self.g1(x))) / 16.0)
                bc = g.cumsum(2)
                s = (q * bc.exp()) @ (k * (-bc).exp()).transpose(-1, -2) / math.sqrt(self.dh)
                o = (s * self.causal) @ v
                o = rms(o, self.nw).transpose(1, 2).reshape(b, t, d)
                return self.o(o * F.silu(self.gate(x)))

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.att = nn.ModuleList([GLA(d) for _ in range(2)])
                self.ffn = nn.ModuleList([SwiGLU(d, 256) for _ in range(2)])
                self.n1 = nn.ParameterList([nn.Parameter(torch.ones(d)) for _ in range(4)])
                self.nf, self.out = nn.Parameter(torch.ones(d)), nn.Linear(d, classes, bias=False)

            def forward(self, input_ids):
                x = self.emb(input_ids)
                for i, (a, f) in enumerate(zip(self.att, self.ffn)):
                    x = x + a(rms(x, self.n1[2 * i]))
                    x = x + f(rms(x, self.n1[2 * i + 1]))
                return self.out(rms(x, self.nf)).transpose(1, 2)
        return Net()

    if kind == "flow_matching":
        class Net(nn.Module):
            def __init__(self, c=64, de=128):
                super().__init__()
                self.temb = nn.Sequential(nn.Linear(de, de), nn.SiLU(), nn.Linear(de, de))
                self.inp = nn.Conv2d(3, c, 3, 1, 1)
                self.b1, self.b2 = ResBlock(c, c, de), ResBlock(c, 2 * c, de)
                self.b3 = ResBlock(2 * c, c, de)
                self.down = nn.Conv2d(c, c, 3, 2, 1)
                self.up = nn.Upsample(scale_factor=2, mode="nearest")
                self.out = nn.Sequential(nn.GroupNorm(8, c), nn.SiLU(), nn.Conv2d(c, 3, 3, 1, 1))
                self.head = nn.Linear(2 * c, classes)

            def forward(self, input):
                b = input.shape[0]
                t = torch.rand(b, device=input.device)
                noise = torch.randn_like(input)
                tt = t[:, None, None, None]
                xt = (1 - tt) * noise + tt * input
                emb = self.temb(sinusoid(t, 128))
                h = self.b1(self.inp(xt), emb)
                m = self.b2(self.down(h), emb)
                h = self.b3(self.up(m), emb) + h
                vel = self.out(h)
                loss = (vel - (input - noise)).pow(2).mean((1, 2, 3))
                return self.head(m.mean((2, 3))) + loss[:, None]
        return Net()

    if kind == "controlnet_zeroconv":
        def blk(ci, co):
            return nn.Sequential(nn.Conv2d(ci, co, 3, 1, 1), nn.GroupNorm(8, co), nn.SiLU(),
                                 nn.Conv2d(co, co, 3, 1, 1), nn.GroupNorm(8, co), nn.SiLU())

        def zero(ci, co, k=1):
            c = nn.Conv2d(ci, co, k, 1, k // 2)
            nn.init.zeros_(c.weight)
            nn.init.zeros_(c.bias)
            return c

        class Encoder(nn.Module):
            def __init__(self, w):
                super().__init__()
                self.e1, self.e2, self.e3 = blk(3, w), blk(w, 2 * w), blk(2 * w, 4 * w)
                self.mid = blk(4 * w, 4 * w)

            def forward(self, x, add=None):
                h1 = self.e1(x) if add is None else self.e1[1:](self.e1[0](x) + add)
                h2 = self.e2(F.max_pool2d(h1, 2))
                h3 = self.e3(F.max_pool2d(h2, 2))
                return h1, h2, h3, self.mid(h3)

        class Net(nn.Module):
            def __init__(self, w=32):
                super().__init__()
                self.enc = Encoder(w)
                self.d3, self.d2, self.d1 = blk(8 * w, 2 * w), blk(4 * w, w), blk(2 * w, w)
                self.head = nn.Linear(w, classes)
                for m in (self.enc, self.d3, self.d2, self.d1, self.head):
                    m.requires_grad_(False)
                self.ctrl = Encoder(w)
                self.ctrl.load_state_dict(self.enc.state_dict())
                self.ctrl.requires_grad_(True)
                self.hint = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.SiLU(), nn.Conv2d(16, 32, 3, 1, 1),
                                          nn.SiLU(), zero(32, w, 3))
                self.z1, self.z2, self.z3, self.zm = zero(w, w), zero(2 * w, 2 * w), zero(4 * w, 4 * w), zero(4 * w, 4 * w)

            def forward(self, input, hint):
                h1, h2, h3, m = self.enc(input)
                c1, c2, c3, cm = self.ctrl(input, self.hint(hint))
                m = m + self.zm(cm)
                x = self.d3(torch.cat([m, h3 + self.z3(c3)], 1))
                x = F.interpolate(x, scale_factor=2.0, mode="nearest")
                x = self.d2(torch.cat([x, h2 + self.z2(c2)], 1))
                x = F.interpolate(x, scale_factor=2.0, mode="nearest")
                x = self.d1(torch.cat([x, h1 + self.z1(c1)], 1))
                return self.head(x.mean((2, 3)))
        return Net()

    if kind == "kan_bspline":
        class KANLinear(nn.Module):
            def __init__(self, fin, fout, grid=5, order=3):
                super().__init__()
                self.order = order
                h = 2.0 / grid
                g = torch.arange(-order, grid + order + 1, dtype=torch.float32) * h - 1.0
                self.register_buffer("grid", g.expand(fin, -1).contiguous())
                self.base = nn.Linear(fin, fout, bias=False)
                self.spline = nn.Parameter(torch.randn(fout, fin, grid + order) * 0.1)
                self.scaler = nn.Parameter(torch.ones(fout, fin))

            def forward(self, x):
                g = self.grid
                xx = x.unsqueeze(-1)
                bases = ((xx >= g[:, :-1]) & (xx < g[:, 1:])).to(x.dtype)
                for k in range(1, self.order + 1):
                    bases = ((xx - g[:, :-(k + 1)]) / (g[:, k:-1] - g[:, :-(k + 1)]) * bases[:, :, :-1]
                             + (g[:, k + 1:] - xx) / (g[:, k + 1:] - g[:, 1:(-k)]) * bases[:, :, 1:])
                w = self.spline * self.scaler.unsqueeze(-1)
                return self.base(F.silu(x)) + F.linear(bases.reshape(x.shape[0], -1), w.reshape(w.shape[0], -1))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.l1, self.l2 = KANLinear(784, 64), KANLinear(64, classes)
                self.n = nn.LayerNorm(64)

            def forward(self, input):
                x = torch.tanh(input.flatten(1))
                return self.l2(torch.tanh(self.n(self.l1(x))))
        return Net()

    if kind == "qformer":
        class Net(nn.Module):
            def __init__(self, d=128, nq=32):
                super().__init__()
                self.patch = nn.Conv2d(3, d, 4, 4)
                self.pos = nn.Parameter(torch.zeros(1, 256, d))
                self.vit = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, 4 * d, 0.0, batch_first=True,
                                                                            norm_first=True), 2)
                self.ln_vision = nn.LayerNorm(d)
                self.queries = nn.Parameter(torch.randn(1, nq, d) * 0.02)
                self.sa = nn.ModuleList([nn.MultiheadAttention(d, 4, batch_first=True) for _ in range(2)])
                self.ca = nn.ModuleList([nn.MultiheadAttention(d, 4, batch_first=True) for _ in range(2)])
                self.ff = nn.ModuleList([nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                         for _ in range(2)])
                self.ln = nn.ModuleList([nn.LayerNorm(d) for _ in range(6)])
                self.head = nn.Linear(d, classes)

            def forward(self, input):
                with torch.no_grad():
                    img = self.patch(input).flatten(2).transpose(1, 2) + self.pos
                    img = self.ln_vision(self.vit(img))
                q = self.queries.expand(input.shape[0], -1, -1)
                for i in range(2):
                    q = self.ln[3 * i](q + self.sa[i](q, q, q, need_weights=False)[0])
                    q = self.ln[3 * i + 1](q + self.ca[i](q, img, img, need_weights=False)[0])
                    q = self.ln[3 * i + 2](q + self.ff[i](q))
                return self.head(q.mean(1))
        return Net()

    if kind == "graph_transformer_lappe":
        class Layer(nn.Module):
            def __init__(self, d=128, h=4):
                super().__init__()
                self.h, self.dh = h, d // h
                self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
                self.adj_w = nn.Parameter(torch.ones(h))
                self.bn1, self.bn2 = nn.BatchNorm1d(d), nn.BatchNorm1d(d)
                self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))

            def forward(self, x, adj):
                b, n, d = x.shape
                q, k, v = self.qkv(x).view(b, n, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
                s = q @ k.transpose(-1, -2) / math.sqrt(self.dh) + adj[:, None] * self.adj_w[None, :, None, None]
                a = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)
                x = self.bn1((x + self.o(a)).transpose(1, 2)).transpose(1, 2)
                return self.bn2((x + self.ff(x)).transpose(1, 2)).transpose(1, 2)

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.inp, self.pe = nn.Linear(16, d), nn.Linear(8, d)
                self.layers = nn.ModuleList([Layer(d) for _ in range(3)])
                self.head = nn.Sequential(nn.Linear(d, d // 2), nn.ReLU(), nn.Linear(d // 2, classes))

            def forward(self, nodes, lap_pe, adj):
                sign = (torch.rand(nodes.shape[0], 1, 8, device=nodes.device) > 0.5).to(nodes.dtype) * 2 - 1
                x = self.inp(nodes) + self.pe(lap_pe * sign)
                for layer in self.layers:
                    x = layer(x, adj)
                return self.head(x.mean(1))
        return Net()

    if kind == "grad_checkpoint":
        class Block(nn.Module):
            def __init__(self, d=192, h=4):
                super().__init__()
                self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.att = nn.MultiheadAttention(d, h, batch_first=True)
                self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x):
                y = self.n1(x)
                x = x + self.att(y, y, y, need_weights=False)[0]
                return x + self.ff(self.n2(x))

        class Net(nn.Module):
            def __init__(self, d=192):
                super().__init__()
                self.emb, self.pos = nn.Embedding(4000, d), nn.Parameter(torch.zeros(1, 128, d))
                self.blocks = nn.ModuleList([Block(d) for _ in range(4)])
                self.n, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

            def forward(self, input_ids):
                x = self.emb(input_ids) + self.pos
                for blk in self.blocks:
                    x = ckpt.checkpoint(blk, x, use_reentrant=False)
                return self.head(self.n(x).mean(1))
        return Net()

    if kind == "nerf_volume_render":
        class Net(nn.Module):
            def __init__(self, w=128, ns=48):
                super().__init__()
                self.ns = ns
                self.register_buffer("t_lin", torch.linspace(0.0, 1.0, ns + 1)[:-1])
                self.register_buffer("freq_p", 2.0 ** torch.arange(10, dtype=torch.float32))
                self.register_buffer("freq_d", 2.0 ** torch.arange(4, dtype=torch.float32))
                dp, dd = 3 + 3 * 2 * 10, 3 + 3 * 2 * 4
                self.l1 = nn.ModuleList([nn.Linear(dp, w)] + [nn.Linear(w, w) for _ in range(2)])
                self.l2 = nn.ModuleList([nn.Linear(w + dp, w)] + [nn.Linear(w, w) for _ in range(2)])
                self.sigma, self.feat = nn.Linear(w, 1), nn.Linear(w, w)
                self.rgb = nn.Sequential(nn.Linear(w + dd, w // 2), nn.ReLU(), nn.Linear(w // 2, 3))
                self.head = nn.Linear(5, classes)

            def enc(self, x, f):
                a = (x[..., None] * f).flatten(-2)
                return torch.cat([x, a.sin(), a.cos()], -1)

            def forward(self, rays_o, rays_d):
                b = rays_o.shape[0]
                near, far = 2.0, 6.0
                u = (self.t_lin + torch.rand(b, self.ns, device=rays_o.device) / self.ns)
                t = near + (far - near) * u                                          # [B, S]
                pts = rays_o[:, None] + rays_d[:, None] * t[..., None]              # [B, S, 3]
                ep = self.enc(pts, self.freq_p)
                h = ep
                for layer in self.l1:
                    h = F.relu(layer(h))
                h = torch.cat([h, ep], -1)
                for layer in self.l2:
                    h = F.relu(layer(h))
                sigma = F.relu(self.sigma(h)).squeeze(-1)
                dirs = F.normalize(rays_d, dim=-1)[:, None].expand(-1, self.ns, -1)
                rgb = torch.sigmoid(self.rgb(torch.cat([self.feat(h), self.enc(dirs, self.freq_d)], -1)))
                delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], -1)
                sd = sigma * delta
                alpha = 1 - torch.exp(-sd)
                trans = torch.exp(-(torch.cumsum(sd, -1) - sd))
                wts = alpha * trans
                rgb_map = (wts[..., None] * rgb).sum(1)
                depth = (wts * t).sum(-1, keepdim=True)
                acc = wts.sum(-1, keepdim=True)
                return self.head(torch.cat([rgb_map, depth, acc], -1))
        return Net()

    if kind == "ddpm_cfg":
        class Net(nn.Module):
            def __init__(self, c=64, de=128):
                super().__init__()
                betas = torch.linspace(1e-4, 0.02, 1000)
                self.register_buffer("alphas_cumprod", torch.cumprod(1 - betas, 0))
                self.temb = nn.Sequential(nn.Linear(de, de), nn.SiLU(), nn.Linear(de, de))
                self.cemb = nn.Embedding(11, de)
                self.inp = nn.Conv2d(3, c, 3, 1, 1)
                self.d1, self.d2 = ResBlock(c, c, de), ResBlock(c, 2 * c, de)
                self.mid = ResBlock(2 * c, 2 * c, de)
                self.u2, self.u1 = ResBlock(4 * c, c, de), ResBlock(2 * c, c, de)
                self.down = nn.Conv2d(c, c, 3, 2, 1)
                self.out = nn.Sequential(nn.GroupNorm(8, c), nn.SiLU(), nn.Conv2d(c, 3, 3, 1, 1))
                self.head = nn.Linear(2 * c, classes)

            def forward(self, input, label):
                b = input.shape[0]
                t = (torch.rand(b, device=input.device) * 1000).long().clamp(max=999)
                a = self.alphas_cumprod[t][:, None, None, None]
                noise = torch.randn_like(input)
                xt = a.sqrt() * input + (1 - a).sqrt() * noise
                cls = label[:, 0]
                drop = torch.rand(b, device=input.device) < 0.1
                cls = torch.where(drop, torch.full_like(cls, 10), cls)
                emb = self.temb(sinusoid(t.float() / 1000.0, 128)) + self.cemb(cls)
                h1 = self.d1(self.inp(xt), emb)
                h2 = self.d2(self.down(h1), emb)
                m = self.mid(h2, emb)
                u = self.u2(torch.cat([m, h2], 1), emb)
                u = F.interpolate(u, scale_factor=2.0, mode="nearest")
                u = self.u1(torch.cat([u, h1], 1), emb)
                eps = self.out(u)
                loss = (eps - noise).pow(2).mean((1, 2, 3))
                return self.head(m.mean((2, 3))) + loss[:, None]
        return Net()

    if kind == "vqvae_ema":
        class Net(nn.Module):
            def __init__(self, d=64, k=512, decay=0.99):
                super().__init__()
                self.k, self.decay = k, decay
                self.enc = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.ReLU(), nn.Conv2d(64, 128, 4, 2, 1), nn.ReLU(),
                                         nn.Conv2d(128, d, 3, 1, 1))
                self.dec = nn.Sequential(nn.Conv2d(d, 128, 3, 1, 1), nn.ReLU(), nn.ConvTranspose2d(128, 64, 4, 2, 1),
                                         nn.ReLU(), nn.ConvTranspose2d(64, 3, 4, 2, 1))
                e = torch.randn(k, d)
                self.register_buffer("embed", e)
                self.register_buffer("cluster_size", torch.ones(k))
                self.register_buffer("embed_avg", e.clone())
                self.head = nn.Linear(d, classes)

            def forward(self, input):
                z = self.enc(input)                                       # [B, d, 16, 16]
                b, d, hh, ww = z.shape
                flat = z.permute(0, 2, 3, 1).reshape(-1, d)
                dist = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ self.embed.t() + self.embed.pow(2).sum(1)[None]
                idx = dist.argmin(1)
                onehot = F.one_hot(idx, self.k).to(flat.dtype)
                q = (onehot @ self.embed).view(b, hh, ww, d).permute(0, 3, 1, 2)
                if self.training:
                    with torch.no_grad():
                        self.cluster_size.mul_(self.decay).add_(onehot.sum(0) * (1 - self.decay))
                        self.embed_avg.mul_(self.decay).add_(onehot.t() @ flat * (1 - self.decay))
                        n = self.cluster_size.sum()
                        cs = (self.cluster_size + 1e-5) / (n + self.k * 1e-5) * n
                        self.embed.copy_(self.embed_avg / cs[:, None])
                commit = 0.25 * (z - q.detach()).pow(2).mean((1, 2, 3))
                zq = z + (q - z).detach()
                rec = (self.dec(zq) - input).pow(2).mean((1, 2, 3))
                return self.head(zq.mean((2, 3))) + (commit + rec)[:, None]
        return Net()

    if kind == "mla_attention":
        class MLA(nn.Module):
            def __init__(self, d=192, h=4, qr=96, kvr=64, nope=32, rope=16, dv=32, n=64):
                super().__init__()
                self.h, self.nope, self.rope, self.dv, self.kvr = h, nope, rope, dv, kvr
                self.dq, self.qn = nn.Linear(d, qr, bias=False), nn.Parameter(torch.ones(qr))
                self.uq = nn.Linear(qr, h * (nope + rope), bias=False)
                self.dkv, self.kvn = nn.Linear(d, kvr + rope, bias=False), nn.Parameter(torch.ones(kvr))
                self.ukv = nn.Linear(kvr, h * (nope + dv), bias=False)
                self.o = nn.Linear(h * dv, d, bias=False)
                inv = 1.0 / (10000 ** (torch.arange(0, rope, 2, dtype=torch.float32) / rope))
                f = torch.arange(n, dtype=torch.float32)[:, None] * inv[None]
                emb = torch.cat([f, f], -1)
                self.register_buffer("cos", emb.cos())
                self.register_buffer("sin", emb.sin())
                self.register_buffer("mask", torch.full((n, n), float("-inf")).triu(1))

            def rot(self, x):
                x1, x2 = x[..., : self.rope // 2], x[..., self.rope // 2:]
                return x * self.cos + torch.cat([-x2, x1], -1) * self.sin

            def forward(self, x):
                b, t, _ = x.shape
                q = self.uq(rms(self.dq(x), self.qn)).view(b, t, self.h, self.nope + self.rope).transpose(1, 2)
                q_nope, q_pe = q.split([self.nope, self.rope], -1)
                ckv = self.dkv(x)
                c, k_pe = ckv.split([self.kvr, self.rope], -1)
                kv = self.ukv(rms(c, self.kvn)).view(b, t, self.h, self.nope + self.dv).transpose(1, 2)
                k_nope, v = kv.split([self.nope, self.dv], -1)
                k_pe = self.rot(k_pe)[:, None].expand(-1, self.h, -1, -1)
                qq = torch.cat([q_nope, self.rot(q_pe)], -1)
                kk = torch.cat([k_nope, k_pe], -1)
                s = qq @ kk.transpose(-1, -2) / math.sqrt(self.nope + self.rope) + self.mask
                o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, self.h * self.dv)
                return self.o(o)

        class Net(nn.Module):
            def __init__(self, d=192):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.att = nn.ModuleList([MLA(d) for _ in range(2)])
                self.ffn = nn.ModuleList([SwiGLU(d, 384) for _ in range(2)])
                self.nw = nn.ParameterList([nn.Parameter(torch.ones(d)) for _ in range(5)])
                self.out = nn.Linear(d, classes, bias=False)

            def forward(self, input_ids):
                x = self.emb(input_ids)
                for i in range(2):
                    x = x + self.att[i](rms(x, self.nw[2 * i]))
                    x = x + self.ffn[i](rms(x, self.nw[2 * i + 1]))
                return self.out(rms(x, self.nw[4])).transpose(1, 2)
        return Net()

    if kind == "siglip":
        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.img = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                                         nn.Conv2d(32, 64, 3, 1, 1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                                         nn.Conv2d(64, 128, 3, 1, 1), nn.BatchNorm2d(128), nn.ReLU(),
                                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, d))
                self.emb, self.pos = nn.Embedding(4000, d), nn.Parameter(torch.zeros(1, 32, d))
                self.txt = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, 4 * d, 0.0, batch_first=True), 2)
                self.tproj = nn.Linear(d, d)
                self.t_prime = nn.Parameter(torch.tensor(math.log(10.0)))
                self.bias = nn.Parameter(torch.tensor(-10.0))
                self.head = nn.Linear(d, classes)

            def forward(self, input, text):
                zi_raw = self.img(input)
                zi = F.normalize(zi_raw, dim=-1)
                zt = F.normalize(self.tproj(self.txt(self.emb(text) + self.pos).mean(1)), dim=-1)
                logits = zi @ zt.t() * self.t_prime.exp() + self.bias
                ar = torch.arange(input.shape[0], device=input.device)
                labels = 2 * (ar[:, None] == ar[None, :]).to(logits.dtype) - 1
                loss = -F.logsigmoid(labels * logits).sum(1) / input.shape[0]
                return self.head(zi_raw) + loss[:, None]
        return Net()

    if kind == "colbert_maxsim":
        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.emb = nn.Embedding(4000, d)
                self.qpos, self.dpos = nn.Parameter(torch.zeros(1, 32, d)), nn.Parameter(torch.zeros(1, 128, d))
                self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, 4 * d, 0.1, batch_first=True), 2)
                self.proj = nn.Linear(d, 64, bias=False)
                self.head = nn.Linear(2 * d, classes)

            def forward(self, query, doc):
                hq = self.enc(self.emb(query) + self.qpos)
                hd = self.enc(self.emb(doc) + self.dpos)
                qv = F.normalize(self.proj(hq), dim=-1)
                dv = F.normalize(self.proj(hd), dim=-1)
                sim = torch.einsum("qid,pjd->qpij", qv, dv)                  # [B, B, 32, 128]
                scores = sim.amax(-1).sum(-1)                                  # [B, B]
                loss = torch.logsumexp(scores, 1) - torch.diagonal(scores)
                return self.head(torch.cat([hq.mean(1), hd.mean(1)], -1)) + loss[:, None]
        return Net()

    if kind == "masked_diffusion_lm":
        class Net(nn.Module):
            def __init__(self, d=192, n=96, vocab=3000):
                super().__init__()
                self.mask_id = vocab
                self.emb, self.pos = nn.Embedding(vocab + 1, d), nn.Parameter(torch.zeros(1, n, d))
                self.temb = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, d))
                self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, 4 * d, 0.1, batch_first=True,
                                                                            norm_first=True), 3)
                self.n, self.out = nn.LayerNorm(d), nn.Linear(d, vocab)

            def forward(self, input_ids):
                b, n = input_ids.shape
                t = torch.rand(b, 1, device=input_ids.device)
                masked = torch.rand(b, n, device=input_ids.device) < t
                x = torch.where(masked, torch.full_like(input_ids, self.mask_id), input_ids)
                h = self.emb(x) + self.pos + self.temb(sinusoid(t[:, 0], 192))[:, None]
                return self.out(self.n(self.enc(h))).transpose(1, 2)
        return Net()

    if kind == "egnn":
        class Layer(nn.Module):
            def __init__(self, d=16, m=64):
                super().__init__()
                self.phi_e = nn.Sequential(nn.Linear(2 * d + 1, m), nn.SiLU(), nn.Linear(m, m), nn.SiLU())
                self.phi_x = nn.Sequential(nn.Linear(m, m), nn.SiLU(), nn.Linear(m, 1, bias=False))
                self.phi_h = nn.Sequential(nn.Linear(d + m, m), nn.SiLU(), nn.Linear(m, d))

            def forward(self, h, x):
                b, n, d = h.shape
                rel = x[:, :, None] - x[:, None]                                 # [B, N, N, 3]
                d2 = rel.pow(2).sum(-1, keepdim=True)
                hi = h[:, :, None].expand(-1, -1, n, -1)
                hj = h[:, None].expand(-1, n, -1, -1)
                m = self.phi_e(torch.cat([hi, hj, d2], -1))                      # [B, N, N, M]
                x = x + (rel * self.phi_x(m)).mean(2)
                h = h + self.phi_h(torch.cat([h, m.sum(2)], -1))
                return h, x

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Layer() for _ in range(4)])
                self.head = nn.Sequential(nn.Linear(16, 64), nn.SiLU(), nn.Linear(64, classes))

            def forward(self, h, x):
                for layer in self.layers:
                    h, x = layer(h, x)
                return self.head(h.sum(1))
        return Net()

    if kind == "lora_frozen_backbone":
        class LoRALinear(nn.Module):
            def __init__(self, base, r=8, alpha=16):
                super().__init__()
                self.base = base
                self.a = nn.Parameter(torch.randn(r, base.in_features) * 0.01)
                self.b = nn.Parameter(torch.zeros(base.out_features, r))
                self.scale = alpha / r

            def forward(self, x):
                return self.base(x) + (x @ self.a.t() @ self.b.t()) * self.scale

        class Attn(nn.Module):
            def __init__(self, d, h):
                super().__init__()
                self.h, self.dh = h, d // h
                self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

            def forward(self, x):
                b, t, d = x.shape
                sp = lambda y: y.view(b, t, self.h, self.dh).transpose(1, 2)  # noqa: E731
                s = sp(self.q(x)) @ sp(self.k(x)).transpose(-1, -2) / math.sqrt(self.dh)
                return self.o((s.softmax(-1) @ sp(self.v(x))).transpose(1, 2).reshape(b, t, d))

        class Net(nn.Module):
            def __init__(self, d=256, h=4, layers=4):
                super().__init__()
                self.emb, self.pos = nn.Embedding(8000, d), nn.Parameter(torch.zeros(1, 128, d))
                self.att = nn.ModuleList([Attn(d, h) for _ in range(layers)])
                self.ffn = nn.ModuleList([nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                          for _ in range(layers)])
                self.n1 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
                self.n2 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
                self.nf = nn.LayerNorm(d)
                self.requires_grad_(False)
                for a in self.att:
                    a.q, a.v = LoRALinear(a.q), LoRALinear(a.v)
                self.head = nn.Linear(d, classes)

            def forward(self, input_ids):
                x = self.emb(input_ids) + self.pos
                for a, f, n1, n2 in zip(self.att, self.ffn, self.n1, self.n2):
                    x = x + a(n1(x))
                    x = x + f(n2(x))
                return self.head(self.nf(x).mean(1))
        return Net()

    raise ValueError("unknown builder %s" % kind)
