"""The nineteenth held-out set of real architectures (tools/unseen_models.py --set unseen19).

Fixed on 2026-12-08, after set 18 had been planned (blind bench/results/unseen18_blind_20261207.json), pooled into
sets 3-18 and the rules written after it merged (main e442df9), before any of these was exported for a row, measured
or planned (each model was only built, stepped once in torch at each row's batch and exported to a throwaway
directory at opset 14, with and without oomguard.export's metadata, to check that it exports; all 16 do. xDeepFM's
field offsets are a constant made in forward, as pytorch-fm makes them: as a registered int64 buffer, ONNX's data
propagation stopped on the weight-stripped file, "Cannot parse data from external tensors"; the sLSTM's per-head
norm is a LayerNorm over each head: GroupNorm over a 2-D input does not export).
Architectures and training idioms that the zoo, sets 2-18 and the random nets lack (Mamba's selective scan, RWKV,
RetNet, Perceiver, Q-Former, MLP-Mixer, gMLP, ConvMixer, EfficientNet-V2, RegNet, HRNet, NeRF, GAT, the Temporal
Fusion Transformer, N-BEATS, WaveNet, Conformer, CLIP / SigLIP, Barlow Twins, distillation, the attention U-Net,
SegFormer, Swin-V2, MaxViT, the mLSTM and the others named in the earlier sets' docstrings are not repeated;
grid_sample needs opset 16 and torch.autograd.grad inside a step does not export, so deformable attention and WGAN-GP
are left out): Mamba-2's chunked state-space duality in plain torch (the minimal SSD: segment sums by cumsum and a
-inf triangle, exp, a four-operand einsum inside chunks and a recurrence over chunk states), an xLSTM sLSTM LM
(exponential input and forget gates with a max stabiliser state, head-wise recurrent weights, unrolled over 48
steps), a TTT-Linear LM (per-head inner linear models whose weights are updated in forward by the closed-form
gradient of a reconstruction loss, mini-batch by mini-batch, and differentiated through), a Soft MoE ViT (dispatch
weights softmaxed over tokens, combine weights over slots, experts as stacked weights under einsum), a Recurrent
Memory Transformer (memory tokens read and written across three segments, back-propagated through all),
a Universal Transformer with adaptive computation time (one shared block, tensor2tensor's halting probabilities,
remainders and update weights), a deep-equilibrium image model (fixed-point iterations under torch.no_grad, then two
steps with gradient from the detached fixed point), a soft actor-critic update (tanh-squashed Gaussian policy by
rsample with the log-det correction, twin critics, target critics frozen by requires_grad_(False) under no_grad, a
learned temperature), a LLaVA-style vision-language step (a frozen ViT tower under no_grad, a two-layer MLP
projector, image tokens concatenated before the text in a causal LM, logits on the text), a Tacotron-2 decoder
(prenet with dropout left on, an attention LSTMCell, location-sensitive attention over the cumulative alignment,
unrolled 24 frames, a BatchNorm postnet, stop tokens), EDM's preconditioned denoiser (log-normal sigma from
torch.randn, c_skip / c_out / c_in / c_noise, Fourier noise features, the 1 / c_out^2 loss weight), an EnCodec-style
codec with Snake activations and a residual vector quantiser of four codebooks (distances by expansion, argmin,
F.embedding, straight-through per stage, commitment terms), the Visual Attention Network's large-kernel attention
(depthwise 5x5, depthwise dilated 7x7, 1x1, multiplied in), NAFNet (LayerNorm2d, SimpleGate, simplified channel
attention, PixelShuffle decoder, a PSNR loss on a denoising target made in forward), xDeepFM (a compressed
interaction network by einsum outer products and 1-wide Conv1d, offsets into one shared embedding table, a linear
part and a DNN) and Mask2Former's masked attention (queries cross-attend to one scale per layer under a mask of
their previous prediction thresholded at 0.5, detached, rows masked everywhere opened; semantic logits by
einsum of class probabilities and mask sigmoids).

Frozen parameters (SAC's target critics, LLaVA's vision tower) are frozen the way users freeze them
(requires_grad_(False)); tools/measure_step.py hands every parameter to the optimizer, which skips those without a
gradient. The shape-only ONNX file cannot say which initializers are frozen; oomguard.export's metadata can
(tools/unseen_hinted.py).

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "mamba2_ssd", "builder": "mamba2_ssd", "args": {},
     "inputs": [["input_ids", [128], "int64", 1000]], "classes": 1000, "label_shape": [128],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Mamba-2 LM: d 128, 2 layers, in_proj to z, x, B, C, dt (8 heads of 32, state 32), causal "
                    "depthwise Conv1d k4 on x B C, softplus dt, the minimal chunked SSD (chunk 32: segsum by "
                    "cumsum and a -inf triangle, exp, 4-operand einsum, chunk-state recurrence by einsum), D skip, "
                    "gated RMSNorm, vocabulary 1000"},
    {"name": "slstm_xlstm", "builder": "slstm_xlstm", "args": {},
     "inputs": [["input_ids", [48], "int64", 2000]], "classes": 2000, "label_shape": [48],
     "rows": [[4, "adam"], [16, "adamw"]],
     "description": "xLSTM sLSTM LM: d 128, 2 blocks, input projections for all steps, then 48 unrolled steps of "
                    "head-wise (4 x 32) recurrent einsum, exponential input gate and log-sigmoid forget gate "
                    "stabilised by m = max(log f + m, log i), c / n normaliser, LayerNorm per head, gated GELU "
                    "up-projection, vocabulary 2000"},
    {"name": "ttt_linear", "builder": "ttt_linear", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 2000, "label_shape": [64],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "TTT-Linear LM: d 128, 2 layers x 4 heads, per head an inner Linear (W0, b0 learned) updated "
                    "over 4 mini-batches of 16 tokens by the closed-form gradient of ||K W + b - (V - K)||^2 with "
                    "learned per-token step sizes (dual form: causal tril of Q K^T), outputs Q + LN(Z), gated by "
                    "GELU, SwiGLU, vocabulary 2000"},
    {"name": "soft_moe_vit", "builder": "soft_moe_vit", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Soft MoE ViT: patch 8, d 192, 4 layers x 3 heads, the MLP of layers 2 and 4 a Soft MoE "
                    "(L2-normalised tokens and slot parameters with a learned scale, dispatch softmax over the 64 "
                    "tokens, combine softmax over 8 experts x 4 slots, expert MLPs as stacked weights under einsum)"},
    {"name": "rmt_segments", "builder": "rmt_segments", "args": {},
     "inputs": [["input_ids", [96], "int64", 2000]], "classes": 2000, "label_shape": [96],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Recurrent Memory Transformer: 3 segments of 32 tokens, 8 memory tokens read before and "
                    "written after each segment, a 2-layer pre-LN nn.TransformerEncoder (d 128, 4 heads, GELU, "
                    "dropout 0.1) over [memory, segment, memory], the written memory carried to the next segment "
                    "with gradient, per-token logits of every segment, vocabulary 2000"},
    {"name": "universal_act", "builder": "universal_act", "args": {},
     "inputs": [["input_ids", [64], "int64", 3000]], "classes": 4, "rows": [[8, "adam"], [32, "momentum"]],
     "description": "Universal Transformer with adaptive computation time: one shared post-LN block (d 128, 4 "
                    "heads, ReLU FFN 512) applied up to 6 times with a timestep embedding, per position halting "
                    "probability by sigmoid, tensor2tensor's still-running / new-halted masks, remainders and "
                    "update-weighted state, the ponder cost added to a head over the mean"},
    {"name": "deq_fixed_point", "builder": "deq_fixed_point", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Deep equilibrium image model: conv stem 3 -> 64 at 32 px, a cell z <- GroupNorm(ReLU(z + "
                    "GroupNorm(conv(ReLU(GroupNorm(conv(z)))) + x))) iterated 12 times under torch.no_grad(), "
                    "then 2 steps with gradient from the detached fixed point, strided conv and pooled head"},
    {"name": "sac_update", "builder": "sac_update", "args": {},
     "inputs": [["obs", [24], "float32", 0], ["action", [6], "float32", 0], ["reward", [1], "float32", 0],
                ["next_obs", [24], "float32", 0], ["done", [1], "float32", 0]], "classes": 2,
     "rows": [[256, "adam"], [1024, "adamw"]],
     "description": "Soft actor-critic update: actor MLP 24 -> 256 -> 256 to mean and clamped log-std, "
                    "tanh-squashed rsample with the log(1 - a^2) correction, twin critics 30 -> 256 -> 256 -> 1, "
                    "target critics frozen by requires_grad_(False) and run with the next action under "
                    "torch.no_grad(), learned log-alpha; critic, actor and temperature losses added to a head"},
    {"name": "llava_projector", "builder": "llava_projector", "args": {},
     "inputs": [["image", [3, 64, 64], "float32", 0], ["text_ids", [32], "int64", 2000]], "classes": 2000,
     "label_shape": [32], "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "LLaVA-style step: a ViT tower (patch 8, d 192, 3 layers) frozen by requires_grad_(False) and "
                    "run under torch.no_grad(), its penultimate layer's 64 patch tokens through a 2-layer GELU MLP "
                    "projector, concatenated before 32 text embeddings in a 2-layer causal LM (d 192, 4 heads), "
                    "logits on the text positions, vocabulary 2000"},
    {"name": "tacotron2_lsa", "builder": "tacotron2_lsa", "args": {},
     "inputs": [["text", [24], "int64", 60], ["mel", [24, 80], "float32", 0]], "classes": 2,
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Tacotron-2: embedding 128, 3 Conv1d k5 + BatchNorm + ReLU, BiLSTM 2 x 64; decoder unrolled "
                    "over 24 teacher-forced mel frames: prenet 80 -> 128 -> 128 with dropout 0.5 always on, "
                    "attention LSTMCell 256, location-sensitive attention (Conv1d k15 over previous and cumulative "
                    "alignment), decoder LSTMCell 256, mel and stop projections, 3-conv BatchNorm tanh postnet; "
                    "mel, postnet and stop losses added to a head"},
    {"name": "edm_precond", "builder": "edm_precond", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "EDM denoiser step: sigma = exp(1.2 randn - 1.2), noised input scaled by c_in, a U-Net (32 / "
                    "16 / 8 px, 64 / 128 / 128 channels, GroupNorm SiLU ResBlocks with the Fourier-feature "
                    "embedding of c_noise = log(sigma) / 4 from a random buffer, self attention at 8 px), "
                    "D = c_skip y + c_out F, the weighted squared error added to a head over the middle"},
    {"name": "encodec_rvq", "builder": "encodec_rvq", "args": {},
     "inputs": [["audio", [1, 2048], "float32", 0]], "classes": 2, "rows": [[4, "adam"], [16, "adamw"]],
     "description": "EnCodec-style codec: Conv1d encoder 1 -> 32 -> 64 -> 128 -> 128 (strides 2, 4, 4) with "
                    "Snake activations and dilated residual units, a residual vector quantiser of 4 codebooks of "
                    "256 x 128 (squared distances by expansion, argmin, F.embedding, straight-through each stage, "
                    "commitment and codebook terms), ConvTranspose1d decoder, L1 reconstruction added to a head"},
    {"name": "van_lka", "builder": "van_lka", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[8, "adamw"], [32, "sgd"]],
     "description": "Visual Attention Network: overlapping patch embeds (7x7 s4, 3x3 s2 twice), 2 blocks per "
                    "stage at 64 / 128 / 256 channels of BatchNorm, large-kernel attention (depthwise 5x5, "
                    "depthwise 7x7 dilation 3, 1x1, multiplied with its input) between 1x1 projections with GELU, "
                    "a depthwise-conv MLP, layer scale, pooled head"},
    {"name": "nafnet", "builder": "nafnet", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "NAFNet denoiser: the input plus 0.1 randn as the noisy image, widths 32 / 64 / 128 / 256, "
                    "NAF blocks (LayerNorm2d by mean / var over channels, 1x1 to 2c, depthwise 3x3, SimpleGate, "
                    "simplified channel attention, beta / gamma residual scales), strided 2x2 down, 1x1 + "
                    "PixelShuffle up, the PSNR loss added to a head over the middle"},
    {"name": "xdeepfm_cin", "builder": "xdeepfm_cin", "args": {},
     "inputs": [["fields", [26], "int64", 1000], ["dense", [13], "float32", 0]], "classes": 2,
     "rows": [[128, "adam"], [512, "adagrad"]],
     "description": "xDeepFM click-through model: 26 categorical fields by constant offsets into one embedding "
                    "table of 26000 x 16, 13 dense features, a linear part (1-wide embedding summed), a CIN of "
                    "two layers (32, 32: einsum outer product with the field embeddings, 1-wide Conv1d, ReLU, sum "
                    "pooled) and a DNN 429 -> 256 -> 256"},
    {"name": "mask2former_masked", "builder": "mask2former_masked", "args": {},
     "inputs": IMG(64), "classes": 8, "label_shape": [16, 16], "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Mask2Former: conv backbone to strides 4 / 8 / 16 (64 / 128 / 128 channels), FPN pixel "
                    "decoder to 64-channel mask features at 16 x 16, 16 queries through 3 decoder layers "
                    "(masked cross attention into one scale each under the previous mask prediction bilinearly "
                    "resized, sigmoid < 0.5, detached, fully masked rows opened, then self attention and FFN), "
                    "semantic logits by einsum of class softmax and mask sigmoid"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w

    class SwiGLU(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.w1, self.w3, self.w2 = nn.Linear(d, h, bias=False), nn.Linear(d, h, bias=False), nn.Linear(h, d, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Attention(nn.Module):
        """Multi-head attention, queries from x, keys / values from ctx (self attention when ctx is None); an
        additive float mask or a boolean mask (True = blocked)."""
        def __init__(self, d, h):
            super().__init__()
            self.h, self.dh = h, d // h
            self.q, self.k, self.v, self.o = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

        def forward(self, x, ctx=None, mask=None):
            ctx = x if ctx is None else ctx
            b, t, d = x.shape
            s_ = ctx.shape[1]
            q = self.q(x).view(b, t, self.h, self.dh).transpose(1, 2)
            k = self.k(ctx).view(b, s_, self.h, self.dh).transpose(1, 2)
            v = self.v(ctx).view(b, s_, self.h, self.dh).transpose(1, 2)
            s = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
            if mask is not None:
                s = s.masked_fill(mask, float("-inf")) if mask.dtype == torch.bool else s + mask
            return self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d))

    class PreLNBlock(nn.Module):
        def __init__(self, d, h, ffn):
            super().__init__()
            self.n1, self.att, self.n2 = nn.LayerNorm(d), Attention(d, h), nn.LayerNorm(d)
            self.ffn = nn.Sequential(nn.Linear(d, ffn), nn.GELU(), nn.Linear(ffn, d))

        def forward(self, x, mask=None):
            x = x + self.att(self.n1(x), mask=mask)
            return x + self.ffn(self.n2(x))

    def causal_mask(n):
        return torch.full((n, n), float("-inf")).triu(1)

    if kind == "mamba2_ssd":
        def segsum(x):  # x [..., T] -> [..., T, T]: sum of x[j+1..i] below the diagonal, -inf above
            t = x.size(-1)
            x = x[..., None].expand(*x.shape, t)
            x = x.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(-1), 0)
            x = torch.cumsum(x, dim=-2)
            return x.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(0), float("-inf"))

        def ssd(x, a, bm, cm, chunk):  # x [b, l, h, p], a [b, l, h], bm / cm [b, l, h, n]
            b, l, h, p = x.shape
            c = l // chunk
            x = x.reshape(b, c, chunk, h, p)
            bm, cm = bm.reshape(b, c, chunk, h, -1), cm.reshape(b, c, chunk, h, -1)
            a = a.reshape(b, c, chunk, h).permute(0, 3, 1, 2)                      # [b, h, c, l]
            a_cum = torch.cumsum(a, -1)
            lmat = torch.exp(segsum(a))
            y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", cm, bm, lmat, x)
            decay_states = torch.exp(a_cum[..., -1:] - a_cum)
            states = torch.einsum("bclhn,bhcl,bclhp->bchpn", bm, decay_states, x)
            states = torch.cat([torch.zeros_like(states[:, :1]), states], 1)
            decay_chunk = torch.exp(segsum(F.pad(a_cum[..., -1], (1, 0))))
            states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)[:, :-1]
            y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", cm, states, torch.exp(a_cum))
            return (y_diag + y_off).reshape(b, l, h, p)

        class Mamba2(nn.Module):
            def __init__(self, d=128, heads=8, p=32, n=32, chunk=32):
                super().__init__()
                self.h, self.p, self.n, self.chunk = heads, p, n, chunk
                inner = heads * p
                self.inner = inner
                self.in_proj = nn.Linear(d, 2 * inner + 2 * n + heads, bias=False)
                self.conv = nn.Conv1d(inner + 2 * n, inner + 2 * n, 4, groups=inner + 2 * n, padding=3)
                self.dt_bias = nn.Parameter(torch.rand(heads) * 0.1)
                self.a_log = nn.Parameter(torch.log(torch.arange(1, heads + 1, dtype=torch.float32)))
                self.dskip = nn.Parameter(torch.ones(heads))
                self.norm, self.out_proj = RMSNorm(inner), nn.Linear(inner, d, bias=False)

            def forward(self, u):
                b, l, _ = u.shape
                z, xbc, dt = self.in_proj(u).split([self.inner, self.inner + 2 * self.n, self.h], -1)
                xbc = F.silu(self.conv(xbc.transpose(1, 2))[..., :l].transpose(1, 2))
                x, bm, cm = xbc.split([self.inner, self.n, self.n], -1)
                dt = F.softplus(dt + self.dt_bias)                                     # [b, l, h]
                a = -torch.exp(self.a_log)
                x = x.view(b, l, self.h, self.p)
                bm = bm[:, :, None].expand(b, l, self.h, self.n)
                cm = cm[:, :, None].expand(b, l, self.h, self.n)
                y = ssd(x * dt[..., None], a * dt, bm, cm, self.chunk)
                y = y + x * self.dskip[:, None]
                return self.out_proj(self.norm(y.reshape(b, l, self.inner) * F.silu(z)))

        class Net(nn.Module):
            def __init__(self, d=128, layers=2):
                super().__init__()
                self.emb = nn.Embedding(1000, d)
                self.mixers = nn.ModuleList([Mamba2(d) for _ in range(layers)])
                self.norms = nn.ModuleList([RMSNorm(d) for _ in range(layers)])
                self.nf, self.out = RMSNorm(d), nn.Linear(d, classes, bias=False)

            def forward(self, input_ids):
                x = self.emb(input_ids)
                for m, n in zip(self.mixers, self.norms):
                    x = x + m(n(x))
                return self.out(self.nf(x)).transpose(1, 2)
        return Net()

    if kind == "slstm_xlstm":
        class SLSTM(nn.Module):
            def __init__(self, d=128, heads=4):
                super().__init__()
                self.h, self.dh = heads, d // heads
                self.wx = nn.Linear(d, 4 * d)
                self.r = nn.Parameter(torch.randn(4, heads, self.dh, self.dh) / math.sqrt(self.dh))
                self.norm_w = nn.Parameter(torch.ones(d))

            def forward(self, x):
                b, t, d = x.shape
                gx = self.wx(x).view(b, t, 4, self.h, self.dh)
                h = c = n = m = x.new_zeros(b, self.h, self.dh)
                outs = []
                for i in range(t):
                    g = gx[:, i] + torch.einsum("bhd,ghde->bghe", h, self.r)
                    it, ft, zt, ot = g.unbind(1)
                    logf = F.logsigmoid(ft)
                    m_new = torch.maximum(logf + m, it)
                    ig, fg = torch.exp(it - m_new), torch.exp(logf + m - m_new)
                    c = fg * c + ig * torch.tanh(zt)
                    n = fg * n + ig
                    h = torch.sigmoid(ot) * c / n
                    m = m_new
                    outs.append(h.reshape(b, d))
                y = torch.stack(outs, 1)                                               # [b, t, d]
                y = F.layer_norm(y.view(b, t, self.h, self.dh), (self.dh,))           # per-head norm
                return y.reshape(b, t, d) * self.norm_w

        class Block(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.n1, self.cell, self.n2 = nn.LayerNorm(d), SLSTM(d), nn.LayerNorm(d)
                self.up, self.down = nn.Linear(d, 2 * 171), nn.Linear(171, d)

            def forward(self, x):
                x = x + self.cell(self.n1(x))
                a, g = self.up(self.n2(x)).chunk(2, -1)
                return x + self.down(a * F.gelu(g))

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.blocks = nn.ModuleList([Block(d) for _ in range(2)])
                self.nf, self.out = nn.LayerNorm(d), nn.Linear(d, classes)

            def forward(self, input_ids):
                x = self.emb(input_ids)
                for blk in self.blocks:
                    x = blk(x)
                return self.out(self.nf(x)).transpose(1, 2)
        return Net()

    if kind == "ttt_linear":
        class TTTLinear(nn.Module):
            def __init__(self, d=128, heads=4, mini=16, base_lr=1.0):
                super().__init__()
                self.h, self.dh, self.mini, self.base_lr = heads, d // heads, mini, base_lr
                self.qkv = nn.Linear(d, 3 * d, bias=False)
                self.lr = nn.Linear(d, heads)
                self.w0 = nn.Parameter(torch.randn(heads, self.dh, self.dh) * 0.02)
                self.b0 = nn.Parameter(torch.zeros(heads, 1, self.dh))
                self.ln_w, self.ln_b = nn.Parameter(torch.ones(heads, 1, self.dh)), nn.Parameter(torch.zeros(heads, 1, self.dh))
                self.gate, self.o = nn.Linear(d, d), nn.Linear(d, d)
                self.register_buffer("tril", torch.ones(mini, mini).tril())

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(x).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)   # [b, h, t, dh]
                eta = torch.sigmoid(self.lr(x)).transpose(1, 2)[..., None] * self.base_lr / self.dh  # [b, h, t, 1]
                w = self.w0[None].expand(b, -1, -1, -1)
                bias = self.b0[None].expand(b, -1, -1, -1)
                outs = []
                for s in range(0, t, self.mini):
                    xq, xk, xv = q[:, :, s:s + self.mini], k[:, :, s:s + self.mini], v[:, :, s:s + self.mini]
                    e = eta[:, :, s:s + self.mini]
                    grad = xk @ w + bias - (xv - xk)                                   # d loss / d Z
                    attn = (xq @ xk.transpose(-1, -2)) * self.tril
                    eta_mat = self.tril * e.transpose(-1, -2)                          # [b, h, m, m]
                    bias_bar = bias - eta_mat @ grad
                    z = xq @ w - (eta_mat * attn) @ grad + bias_bar
                    e_last = e[:, :, -1:]
                    w = w - (e_last * xk).transpose(-1, -2) @ grad
                    bias = bias - (e_last * grad).sum(2, keepdim=True)
                    mu, var = z.mean(-1, keepdim=True), z.var(-1, keepdim=True, unbiased=False)
                    outs.append(xq + (z - mu) * torch.rsqrt(var + 1e-6) * self.ln_w + self.ln_b)
                y = torch.cat(outs, 2).transpose(1, 2).reshape(b, t, d)
                return self.o(y * F.gelu(self.gate(x)))

        class Net(nn.Module):
            def __init__(self, d=128, layers=2):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.mix = nn.ModuleList([TTTLinear(d) for _ in range(layers)])
                self.ffn = nn.ModuleList([SwiGLU(d, 384) for _ in range(layers)])
                self.n1 = nn.ModuleList([RMSNorm(d) for _ in range(layers)])
                self.n2 = nn.ModuleList([RMSNorm(d) for _ in range(layers)])
                self.nf, self.out = RMSNorm(d), nn.Linear(d, classes, bias=False)

            def forward(self, input_ids):
                x = self.emb(input_ids)
                for m, f, n1, n2 in zip(self.mix, self.ffn, self.n1, self.n2):
                    x = x + m(n1(x))
                    x = x + f(n2(x))
                return self.out(self.nf(x)).transpose(1, 2)
        return Net()

    if kind == "soft_moe_vit":
        class SoftMoE(nn.Module):
            def __init__(self, d=192, experts=8, slots=4, hidden=384):
                super().__init__()
                self.e, self.s = experts, slots
                self.phi = nn.Parameter(torch.randn(d, experts * slots) / math.sqrt(d))
                self.scale = nn.Parameter(torch.ones(1))
                self.w1 = nn.Parameter(torch.randn(experts, d, hidden) / math.sqrt(d))
                self.b1 = nn.Parameter(torch.zeros(experts, 1, hidden))
                self.w2 = nn.Parameter(torch.randn(experts, hidden, d) / math.sqrt(hidden))
                self.b2 = nn.Parameter(torch.zeros(experts, 1, d))

            def forward(self, x):
                b, n, d = x.shape
                logits = torch.einsum("bnd,ds->bns", F.normalize(x, dim=-1), F.normalize(self.phi, dim=0)) * self.scale
                dispatch = logits.softmax(1)                                           # over tokens
                combine = logits.softmax(-1)                                           # over slots
                slots = torch.einsum("bnd,bns->bsd", x, dispatch).view(b, self.e, self.s, d)
                hdn = F.gelu(torch.einsum("besd,edh->besh", slots, self.w1) + self.b1)
                ys = (torch.einsum("besh,ehd->besd", hdn, self.w2) + self.b2).reshape(b, self.e * self.s, d)
                return torch.einsum("bns,bsd->bnd", combine, ys)

        class Block(nn.Module):
            def __init__(self, d, moe):
                super().__init__()
                self.n1, self.att, self.n2 = nn.LayerNorm(d), Attention(d, 3), nn.LayerNorm(d)
                self.mlp = SoftMoE(d) if moe else nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x):
                x = x + self.att(self.n1(x))
                return x + self.mlp(self.n2(x))

        class Net(nn.Module):
            def __init__(self, d=192):
                super().__init__()
                self.patch = nn.Conv2d(3, d, 8, 8)
                self.pos = nn.Parameter(torch.zeros(1, 64, d))
                self.blocks = nn.ModuleList([Block(d, i % 2 == 1) for i in range(4)])
                self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

            def forward(self, input):
                x = self.patch(input).flatten(2).transpose(1, 2) + self.pos
                for blk in self.blocks:
                    x = blk(x)
                return self.head(self.norm(x).mean(1))
        return Net()

    if kind == "rmt_segments":
        class Net(nn.Module):
            def __init__(self, d=128, mem=8, seg=32):
                super().__init__()
                self.mem_n, self.seg = mem, seg
                self.emb = nn.Embedding(2000, d)
                self.pos = nn.Parameter(torch.zeros(1, seg + 2 * mem, d))
                self.memory = nn.Parameter(torch.randn(1, mem, d) * 0.02)
                layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.1, activation="gelu", batch_first=True,
                                                   norm_first=True)
                self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.nf, self.out = nn.LayerNorm(d), nn.Linear(d, classes)

            def forward(self, input_ids):
                b = input_ids.shape[0]
                memory = self.memory.expand(b, -1, -1)
                outs = []
                for s in range(0, input_ids.shape[1], self.seg):
                    x = self.emb(input_ids[:, s:s + self.seg])
                    y = self.encoder(torch.cat([memory, x, memory], 1) + self.pos)
                    memory = y[:, -self.mem_n:]
                    outs.append(y[:, self.mem_n:-self.mem_n])
                return self.out(self.nf(torch.cat(outs, 1))).transpose(1, 2)
        return Net()

    if kind == "universal_act":
        class Net(nn.Module):
            def __init__(self, d=128, steps=6, threshold=0.99):
                super().__init__()
                self.steps, self.threshold = steps, threshold
                self.emb = nn.Embedding(3000, d)
                self.pos = nn.Parameter(torch.zeros(1, 64, d))
                self.time = nn.Parameter(torch.zeros(steps, 1, 1, d))
                self.att, self.n1 = Attention(d, 4), nn.LayerNorm(d)
                self.ffn, self.n2 = nn.Sequential(nn.Linear(d, 512), nn.ReLU(), nn.Linear(512, d)), nn.LayerNorm(d)
                self.halt = nn.Linear(d, 1)
                self.head = nn.Linear(d, classes)

            def block(self, x):
                x = self.n1(x + F.dropout(self.att(x), 0.1, self.training))
                return self.n2(x + F.dropout(self.ffn(x), 0.1, self.training))

            def forward(self, input_ids):
                x = self.emb(input_ids) + self.pos
                b, n, _ = x.shape
                halting = x.new_zeros(b, n)
                remainders = x.new_zeros(b, n)
                n_updates = x.new_zeros(b, n)
                prev = torch.zeros_like(x)
                for step in range(self.steps):
                    x = x + self.time[step]
                    p = torch.sigmoid(self.halt(x)).squeeze(-1)
                    still = (halting < 1.0).float()
                    new_halted = ((halting + p * still) > self.threshold).float() * still
                    still = ((halting + p * still) <= self.threshold).float() * still
                    halting = halting + p * still
                    remainders = remainders + new_halted * (1 - halting)
                    halting = halting + new_halted * remainders
                    n_updates = n_updates + still + new_halted
                    w = (p * still + new_halted * remainders)[..., None]
                    x = self.block(x)
                    prev = x * w + prev * (1 - w)
                ponder = (n_updates + remainders).mean(1)
                return self.head(prev.mean(1)) + 0.01 * ponder[:, None]
        return Net()

    if kind == "deq_fixed_point":
        class Cell(nn.Module):
            def __init__(self, c=64):
                super().__init__()
                self.c1, self.c2 = nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.Conv2d(c, c, 3, 1, 1, bias=False)
                self.g1, self.g2, self.g3 = nn.GroupNorm(8, c), nn.GroupNorm(8, c), nn.GroupNorm(8, c)

            def forward(self, z, x):
                y = self.g1(F.relu(self.c1(z)))
                return self.g3(F.relu(z + self.g2(self.c2(y) + x)))

        class Net(nn.Module):
            def __init__(self, c=64, solver_steps=12, grad_steps=2):
                super().__init__()
                self.solver_steps, self.grad_steps = solver_steps, grad_steps
                self.stem = nn.Sequential(nn.Conv2d(3, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c))
                self.cell = Cell(c)
                self.down = nn.Sequential(nn.Conv2d(c, 2 * c, 3, 2, 1), nn.BatchNorm2d(2 * c), nn.ReLU())
                self.head = nn.Linear(2 * c, classes)

            def forward(self, input):
                x = self.stem(input)
                with torch.no_grad():
                    z = torch.zeros_like(x)
                    for _ in range(self.solver_steps):
                        z = self.cell(z, x)
                z = z.detach()
                for _ in range(self.grad_steps):
                    z = self.cell(z, x)
                return self.head(self.down(z).mean((2, 3)))
        return Net()

    if kind == "sac_update":
        def mlp(i, o):
            return nn.Sequential(nn.Linear(i, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, o))

        class Actor(nn.Module):
            def __init__(self, obs=24, act=6):
                super().__init__()
                self.trunk = nn.Sequential(nn.Linear(obs, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU())
                self.mu, self.log_std = nn.Linear(256, act), nn.Linear(256, act)

            def forward(self, obs):
                h = self.trunk(obs)
                mu, log_std = self.mu(h), self.log_std(h).clamp(-20, 2)
                std = log_std.exp()
                u = mu + std * torch.randn_like(mu)                                    # rsample
                a = torch.tanh(u)
                logp = (-0.5 * ((u - mu) / std).pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
                logp = logp - torch.log(1 - a.pow(2) + 1e-6).sum(-1)
                return a, logp, h

        class Net(nn.Module):
            def __init__(self, act=6, gamma=0.99):
                super().__init__()
                self.gamma, self.target_entropy = gamma, -float(act)
                self.actor = Actor()
                self.q1, self.q2 = mlp(30, 1), mlp(30, 1)
                self.q1_target, self.q2_target = mlp(30, 1), mlp(30, 1)
                self.q1_target.load_state_dict(self.q1.state_dict())
                self.q2_target.load_state_dict(self.q2.state_dict())
                self.q1_target.requires_grad_(False)
                self.q2_target.requires_grad_(False)
                self.log_alpha = nn.Parameter(torch.zeros(1))
                self.head = nn.Linear(256, classes)

            def forward(self, obs, action, reward, next_obs, done):
                alpha = self.log_alpha.exp()
                with torch.no_grad():
                    next_a, next_logp, _ = self.actor(next_obs)
                    sa = torch.cat([next_obs, next_a], -1)
                    q_next = torch.min(self.q1_target(sa), self.q2_target(sa)).squeeze(-1) - alpha * next_logp
                    y = reward.squeeze(-1) + self.gamma * (1 - done.squeeze(-1)) * q_next
                sa = torch.cat([obs, action], -1)
                critic = (self.q1(sa).squeeze(-1) - y).pow(2) + (self.q2(sa).squeeze(-1) - y).pow(2)
                a, logp, h = self.actor(obs)
                sa_new = torch.cat([obs, a], -1)
                q_new = torch.min(self.q1(sa_new), self.q2(sa_new)).squeeze(-1)
                actor = alpha.detach() * logp - q_new
                temperature = -(self.log_alpha * (logp + self.target_entropy).detach())
                loss = critic + actor + temperature
                return self.head(h) + loss[:, None]
        return Net()

    if kind == "llava_projector":
        class Tower(nn.Module):
            def __init__(self, d=192, layers=3):
                super().__init__()
                self.patch = nn.Conv2d(3, d, 8, 8)
                self.pos = nn.Parameter(torch.zeros(1, 64, d))
                self.blocks = nn.ModuleList([PreLNBlock(d, 3, 4 * d) for _ in range(layers)])

            def forward(self, image):  # the penultimate layer's patch tokens
                x = self.patch(image).flatten(2).transpose(1, 2) + self.pos
                for blk in self.blocks[:-1]:
                    x = blk(x)
                return x

        class Net(nn.Module):
            def __init__(self, d=192, layers=2, n_img=64, n_txt=32):
                super().__init__()
                self.tower = Tower()
                self.tower.requires_grad_(False)
                self.projector = nn.Sequential(nn.Linear(192, d), nn.GELU(), nn.Linear(d, d))
                self.emb = nn.Embedding(2000, d)
                self.pos = nn.Parameter(torch.zeros(1, n_img + n_txt, d))
                self.blocks = nn.ModuleList([PreLNBlock(d, 4, 4 * d) for _ in range(layers)])
                self.register_buffer("mask", causal_mask(n_img + n_txt))
                self.nf, self.lm_head = nn.LayerNorm(d), nn.Linear(d, classes, bias=False)
                self.n_img = n_img

            def forward(self, image, text_ids):
                with torch.no_grad():
                    feats = self.tower(image)
                x = torch.cat([self.projector(feats), self.emb(text_ids)], 1) + self.pos
                for blk in self.blocks:
                    x = blk(x, self.mask)
                return self.lm_head(self.nf(x[:, self.n_img:])).transpose(1, 2)
        return Net()

    if kind == "tacotron2_lsa":
        class Net(nn.Module):
            def __init__(self, d=128, mels=80, rnn=256, att=64):
                super().__init__()
                self.mels, self.rnn = mels, rnn
                self.emb = nn.Embedding(60, d)
                self.convs = nn.ModuleList([nn.Sequential(nn.Conv1d(d, d, 5, 1, 2, bias=False), nn.BatchNorm1d(d),
                                                          nn.ReLU(), nn.Dropout(0.5)) for _ in range(3)])
                self.lstm = nn.LSTM(d, d // 2, batch_first=True, bidirectional=True)
                self.pre1, self.pre2 = nn.Linear(mels, 128), nn.Linear(128, 128)
                self.att_rnn = nn.LSTMCell(128 + d, rnn)
                self.query, self.memory = nn.Linear(rnn, att, bias=False), nn.Linear(d, att, bias=False)
                self.loc_conv = nn.Conv1d(2, 16, 15, 1, 7, bias=False)
                self.loc_dense, self.v = nn.Linear(16, att, bias=False), nn.Linear(att, 1, bias=False)
                self.dec_rnn = nn.LSTMCell(rnn + d, rnn)
                self.mel_proj, self.stop_proj = nn.Linear(rnn + d, mels), nn.Linear(rnn + d, 1)
                chans = [mels, 256, 256, mels]
                self.postnet = nn.ModuleList([nn.Sequential(nn.Conv1d(a, b, 5, 1, 2, bias=False), nn.BatchNorm1d(b))
                                              for a, b in zip(chans[:-1], chans[1:])])
                self.head = nn.Linear(rnn, classes)

            def forward(self, text, mel):
                b, t_out, _ = mel.shape
                x = self.emb(text).transpose(1, 2)
                for conv in self.convs:
                    x = conv(x)
                enc, _ = self.lstm(x.transpose(1, 2))                                  # [b, n, d]
                n = enc.shape[1]
                keys = self.memory(enc)
                prev = torch.cat([mel.new_zeros(b, 1, self.mels), mel[:, :-1]], 1)   # teacher forcing
                ah = ac = dh = dc = mel.new_zeros(b, self.rnn)
                ctx = enc.new_zeros(b, enc.shape[2])
                align = cum = enc.new_zeros(b, n)
                frames, stops = [], []
                for i in range(t_out):
                    p = F.dropout(F.relu(self.pre1(prev[:, i])), 0.5, True)
                    p = F.dropout(F.relu(self.pre2(p)), 0.5, True)
                    ah, ac = self.att_rnn(torch.cat([p, ctx], -1), (ah, ac))
                    loc = self.loc_dense(self.loc_conv(torch.stack([align, cum], 1)).transpose(1, 2))
                    energy = self.v(torch.tanh(self.query(ah)[:, None] + keys + loc)).squeeze(-1)
                    align = energy.softmax(-1)
                    cum = cum + align
                    ctx = torch.bmm(align[:, None], enc).squeeze(1)
                    dh, dc = self.dec_rnn(torch.cat([ah, ctx], -1), (dh, dc))
                    out = torch.cat([dh, ctx], -1)
                    frames.append(self.mel_proj(out))
                    stops.append(self.stop_proj(out))
                mel_out = torch.stack(frames, 1)                                       # [b, t, mels]
                y = mel_out.transpose(1, 2)
                for i, conv in enumerate(self.postnet):
                    y = conv(y)
                    y = F.dropout(torch.tanh(y) if i < len(self.postnet) - 1 else y, 0.5, True)
                post = mel_out + y.transpose(1, 2)
                stop_target = F.pad(mel.new_zeros(b, t_out - 1), (0, 1), value=1.0)      # the last frame stops
                loss = ((mel_out - mel).pow(2).mean((1, 2)) + (post - mel).pow(2).mean((1, 2))
                        + F.binary_cross_entropy_with_logits(torch.cat(stops, 1), stop_target,
                                                             reduction="none").mean(1))
                return self.head(dh) + loss[:, None]
        return Net()

    if kind == "edm_precond":
        class ResBlock(nn.Module):
            def __init__(self, cin, cout, emb=128):
                super().__init__()
                self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, 1, 1)
                self.e = nn.Linear(emb, cout)
                self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, 1, 1)
                self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

            def forward(self, x, emb):
                h = self.c1(F.silu(self.n1(x))) + self.e(emb)[:, :, None, None]
                h = self.c2(F.dropout(F.silu(self.n2(h)), 0.1, self.training))
                return (self.skip(x) + h) / math.sqrt(2)

        class AttnBlock(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.n, self.att = nn.GroupNorm(32, c), Attention(c, 4)

            def forward(self, x):
                b, c, hh, ww = x.shape
                y = self.att(self.n(x).flatten(2).transpose(1, 2))
                return x + y.transpose(1, 2).reshape(b, c, hh, ww)

        class Net(nn.Module):
            def __init__(self, sigma_data=0.5):
                super().__init__()
                self.sd = sigma_data
                self.register_buffer("freqs", torch.randn(64) * 16)
                self.emb = nn.Sequential(nn.Linear(128, 128), nn.SiLU(), nn.Linear(128, 128))
                self.inc = nn.Conv2d(3, 64, 3, 1, 1)
                self.d1, self.d2 = ResBlock(64, 64), ResBlock(64, 128)
                self.down1, self.down2 = nn.Conv2d(64, 64, 3, 2, 1), nn.Conv2d(128, 128, 3, 2, 1)
                self.mid1, self.mid_att, self.mid2 = ResBlock(128, 128), AttnBlock(128), ResBlock(128, 128)
                self.u2, self.u1 = ResBlock(256, 128), ResBlock(192, 64)
                self.out = nn.Sequential(nn.GroupNorm(32, 64), nn.SiLU(), nn.Conv2d(64, 3, 3, 1, 1))
                self.head = nn.Linear(128, classes)

            def forward(self, input):
                b = input.shape[0]
                sigma = torch.exp(torch.randn(b, 1, 1, 1, device=input.device) * 1.2 - 1.2)
                noised = input + torch.randn_like(input) * sigma
                s2, sd2 = sigma.pow(2), self.sd ** 2
                c_skip, c_out = sd2 / (s2 + sd2), sigma * self.sd / (s2 + sd2).sqrt()
                c_in, c_noise = 1 / (sd2 + s2).sqrt(), sigma.log().flatten() / 4
                f = c_noise[:, None] * self.freqs[None] * 2 * math.pi
                emb = self.emb(torch.cat([f.cos(), f.sin()], -1))
                h1 = self.d1(self.inc(c_in * noised), emb)                             # 32 px
                h2 = self.d2(self.down1(h1), emb)                                      # 16 px
                m = self.mid2(self.mid_att(self.mid1(self.down2(h2), emb)), emb)      # 8 px
                u = self.u2(torch.cat([F.interpolate(m, scale_factor=2.0, mode="nearest"), h2], 1), emb)
                u = self.u1(torch.cat([F.interpolate(u, scale_factor=2.0, mode="nearest"), h1], 1), emb)
                denoised = c_skip * noised + c_out * self.out(u)
                weight = (s2 + sd2) / (sigma * self.sd).pow(2)
                loss = (weight * (denoised - input).pow(2)).mean((1, 2, 3))
                return self.head(m.mean((2, 3))) + loss[:, None]
        return Net()

    if kind == "encodec_rvq":
        class Snake(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.alpha = nn.Parameter(torch.ones(1, c, 1))

            def forward(self, x):
                return x + torch.sin(self.alpha * x).pow(2) / (self.alpha + 1e-9)

        class ResUnit(nn.Module):
            def __init__(self, c, dilation):
                super().__init__()
                self.body = nn.Sequential(Snake(c), nn.Conv1d(c, c, 7, 1, 3 * dilation, dilation=dilation),
                                          Snake(c), nn.Conv1d(c, c, 1))

            def forward(self, x):
                return x + self.body(x)

        def enc_block(cin, cout, stride):
            return nn.Sequential(ResUnit(cin, 1), ResUnit(cin, 3), Snake(cin),
                                 nn.Conv1d(cin, cout, 2 * stride, stride, stride // 2 if stride > 1 else 0))

        def dec_block(cin, cout, stride):
            return nn.Sequential(Snake(cin), nn.ConvTranspose1d(cin, cout, 2 * stride, stride, stride // 2),
                                 ResUnit(cout, 1), ResUnit(cout, 3))

        class Net(nn.Module):
            def __init__(self, dim=128, books=4, size=256):
                super().__init__()
                self.enc = nn.Sequential(nn.Conv1d(1, 32, 7, 1, 3), enc_block(32, 64, 2), enc_block(64, 128, 4),
                                         enc_block(128, 128, 4), Snake(128), nn.Conv1d(128, dim, 3, 1, 1))
                self.codebooks = nn.Parameter(torch.randn(books, size, dim))
                self.dec = nn.Sequential(nn.Conv1d(dim, 128, 7, 1, 3), dec_block(128, 128, 4),
                                         dec_block(128, 64, 4), dec_block(64, 32, 2), Snake(32),
                                         nn.Conv1d(32, 1, 7, 1, 3), nn.Tanh())
                self.head = nn.Linear(dim, classes)

            def forward(self, audio):
                z = self.enc(audio).transpose(1, 2)                                    # [b, frames, dim]
                residual, quantized = z, torch.zeros_like(z)
                vq_loss = 0.0
                for cb in self.codebooks.unbind(0):
                    dist = residual.pow(2).sum(-1, keepdim=True) - 2 * residual @ cb.t() + cb.pow(2).sum(-1)
                    q = F.embedding(dist.argmin(-1), cb)
                    vq_loss = vq_loss + 0.25 * (residual - q.detach()).pow(2).mean((1, 2)) \
                        + (q - residual.detach()).pow(2).mean((1, 2))
                    quantized = quantized + residual + (q - residual).detach()
                    residual = residual - q.detach()
                rec = self.dec(quantized.transpose(1, 2))
                loss = (rec - audio).abs().mean((1, 2)) + vq_loss
                return self.head(quantized.mean(1)) + loss[:, None]
        return Net()

    if kind == "van_lka":
        class LKA(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.dw = nn.Conv2d(c, c, 5, 1, 2, groups=c)
                self.dw_d = nn.Conv2d(c, c, 7, 1, 9, groups=c, dilation=3)
                self.pw = nn.Conv2d(c, c, 1)

            def forward(self, x):
                return x * self.pw(self.dw_d(self.dw(x)))

        class Block(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.n1, self.proj1, self.lka, self.proj2 = nn.BatchNorm2d(c), nn.Conv2d(c, c, 1), LKA(c), nn.Conv2d(c, c, 1)
                self.n2 = nn.BatchNorm2d(c)
                self.fc1, self.dw, self.fc2 = nn.Conv2d(c, 4 * c, 1), nn.Conv2d(4 * c, 4 * c, 3, 1, 1, groups=4 * c), nn.Conv2d(4 * c, c, 1)
                self.ls1, self.ls2 = nn.Parameter(torch.full((1, c, 1, 1), 1e-2)), nn.Parameter(torch.full((1, c, 1, 1), 1e-2))

            def forward(self, x):
                y = self.n1(x)
                x = x + self.ls1 * (self.proj2(self.lka(F.gelu(self.proj1(y)))) + y)
                return x + self.ls2 * self.fc2(F.gelu(self.dw(self.fc1(self.n2(x)))))

        class Net(nn.Module):
            def __init__(self, widths=(64, 128, 256)):
                super().__init__()
                stages, cin = [], 3
                for i, c in enumerate(widths):
                    k, s = (7, 4) if i == 0 else (3, 2)
                    stages.append(nn.Sequential(nn.Conv2d(cin, c, k, s, k // 2), nn.BatchNorm2d(c), Block(c), Block(c)))
                    cin = c
                self.stages = nn.Sequential(*stages)
                self.norm, self.head = nn.LayerNorm(cin), nn.Linear(cin, classes)

            def forward(self, input):
                return self.head(self.norm(self.stages(input).mean((2, 3))))
        return Net()

    if kind == "nafnet":
        class LayerNorm2d(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.w, self.b = nn.Parameter(torch.ones(1, c, 1, 1)), nn.Parameter(torch.zeros(1, c, 1, 1))

            def forward(self, x):
                mu = x.mean(1, keepdim=True)
                var = (x - mu).pow(2).mean(1, keepdim=True)
                return (x - mu) / (var + 1e-6).sqrt() * self.w + self.b

        def simple_gate(x):
            a, b = x.chunk(2, 1)
            return a * b

        class NAFBlock(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.n1, self.c1 = LayerNorm2d(c), nn.Conv2d(c, 2 * c, 1)
                self.dw = nn.Conv2d(2 * c, 2 * c, 3, 1, 1, groups=2 * c)
                self.sca = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c, 1))
                self.c3 = nn.Conv2d(c, c, 1)
                self.n2, self.c4, self.c5 = LayerNorm2d(c), nn.Conv2d(c, 2 * c, 1), nn.Conv2d(c, c, 1)
                self.beta, self.gamma = nn.Parameter(torch.zeros(1, c, 1, 1)), nn.Parameter(torch.zeros(1, c, 1, 1))

            def forward(self, inp):
                x = simple_gate(self.dw(self.c1(self.n1(inp))))
                x = self.c3(x * self.sca(x))
                y = inp + x * self.beta
                x = self.c5(simple_gate(self.c4(self.n2(y))))
                return y + x * self.gamma

        class Net(nn.Module):
            def __init__(self, w=32, levels=3):
                super().__init__()
                self.intro, self.ending = nn.Conv2d(3, w, 3, 1, 1), nn.Conv2d(w, 3, 3, 1, 1)
                self.encs, self.downs, self.ups, self.decs = nn.ModuleList(), nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
                c = w
                for _ in range(levels):
                    self.encs.append(NAFBlock(c))
                    self.downs.append(nn.Conv2d(c, 2 * c, 2, 2))
                    c *= 2
                self.middle = nn.Sequential(NAFBlock(c), NAFBlock(c))
                for _ in range(levels):
                    self.ups.append(nn.Sequential(nn.Conv2d(c, 2 * c, 1, bias=False), nn.PixelShuffle(2)))
                    c //= 2
                    self.decs.append(NAFBlock(c))
                self.head = nn.Linear(w * 2 ** levels, classes)

            def forward(self, input):
                noisy = input + 0.1 * torch.randn_like(input)
                x = self.intro(noisy)
                skips = []
                for enc, down in zip(self.encs, self.downs):
                    x = enc(x)
                    skips.append(x)
                    x = down(x)
                mid = x = self.middle(x)
                for dec, up, skip in zip(self.decs, self.ups, reversed(skips)):
                    x = dec(up(x) + skip)
                restored = self.ending(x) + noisy
                psnr_loss = 10 * torch.log10((restored - input).pow(2).mean((1, 2, 3)) + 1e-8)
                return self.head(mid.mean((2, 3))) + psnr_loss[:, None]
        return Net()

    if kind == "xdeepfm_cin":
        class Net(nn.Module):
            def __init__(self, fields=26, vocab=1000, k=16, dense=13, cin=(32, 32)):
                super().__init__()
                self.offsets = tuple(i * vocab for i in range(fields))                 # pytorch-fm's FeaturesEmbedding
                self.emb = nn.Embedding(fields * vocab, k)
                self.lin_emb, self.lin_dense = nn.Embedding(fields * vocab, 1), nn.Linear(dense, 1)
                self.cin = nn.ModuleList()
                h_prev = fields
                for h in cin:
                    self.cin.append(nn.Conv1d(h_prev * fields, h, 1))
                    h_prev = h
                self.dnn = nn.Sequential(nn.Linear(fields * k + dense, 256), nn.BatchNorm1d(256), nn.ReLU(),
                                         nn.Dropout(0.2), nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU())
                self.out = nn.Linear(256 + sum(cin) + 1, classes)

            def forward(self, fields, dense):
                idx = fields + fields.new_tensor(self.offsets)[None]
                x0 = self.emb(idx)                                                     # [b, m, k]
                b, m, k = x0.shape
                linear = self.lin_emb(idx).sum(1) + self.lin_dense(dense)
                xk, pooled = x0, []
                for conv in self.cin:
                    z = torch.einsum("bhd,bmd->bhmd", xk, x0).reshape(b, -1, k)
                    xk = F.relu(conv(z))
                    pooled.append(xk.sum(-1))
                deep = self.dnn(torch.cat([x0.reshape(b, m * k), dense], -1))
                return self.out(torch.cat([deep, torch.cat(pooled, -1), linear], -1))
        return Net()

    if kind == "mask2former_masked":
        class DecoderLayer(nn.Module):
            def __init__(self, d=64, h=4):
                super().__init__()
                self.h = h
                self.cross, self.n1 = Attention(d, h), nn.LayerNorm(d)
                self.self_att, self.n2 = Attention(d, h), nn.LayerNorm(d)
                self.ffn, self.n3 = nn.Sequential(nn.Linear(d, 256), nn.ReLU(), nn.Linear(256, d)), nn.LayerNorm(d)

            def forward(self, q, qpos, mem, mpos, mask):
                q = self.n1(q + self.cross(q + qpos, mem + mpos, mask))
                q = self.n2(q + self.self_att(q + qpos))
                return self.n3(q + self.ffn(q))

        class Net(nn.Module):
            def __init__(self, d=64, queries=16, layers=3):
                super().__init__()
                def stage(cin, cout):
                    return nn.Sequential(nn.Conv2d(cin, cout, 3, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                                         nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
                self.s1 = nn.Sequential(stage(3, 32), stage(32, 64))                   # stride 4: 16 px
                self.s2, self.s3 = stage(64, 128), stage(128, 128)                    # 8, 4 px
                self.lat = nn.ModuleList([nn.Conv2d(c, d, 1) for c in (64, 128, 128)])
                self.fpn_out = nn.ModuleList([nn.Sequential(nn.Conv2d(d, d, 3, 1, 1, bias=False), nn.GroupNorm(8, d),
                                                            nn.ReLU()) for _ in range(3)])
                self.mask_feat = nn.Conv2d(d, d, 1)
                self.level_embed = nn.Parameter(torch.zeros(3, 1, 1, d))
                self.query_feat, self.query_pos = nn.Parameter(torch.randn(1, queries, d)), nn.Parameter(torch.randn(1, queries, d))
                self.layers = nn.ModuleList([DecoderLayer(d) for _ in range(layers)])
                self.norm = nn.LayerNorm(d)
                self.cls = nn.Linear(d, classes + 1)
                self.mask_embed = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))

            def predict(self, q, mask_features, size):
                q = self.norm(q)
                masks = torch.einsum("bqc,bchw->bqhw", self.mask_embed(q), mask_features)
                attn = F.interpolate(masks, size=size, mode="bilinear", align_corners=False)
                attn = (attn.sigmoid().flatten(2) < 0.5)[:, None].expand(-1, self.layers[0].h, -1, -1)
                attn = attn & ~attn.all(-1, keepdim=True)
                return self.cls(q), masks, attn.detach()

            def forward(self, input):
                c1 = self.s1(input)
                c2 = self.s2(c1)
                c3 = self.s3(c2)
                p3 = self.fpn_out[0](self.lat[2](c3))
                p2 = self.fpn_out[1](self.lat[1](c2) + F.interpolate(p3, scale_factor=2.0, mode="nearest"))
                p1 = self.fpn_out[2](self.lat[0](c1) + F.interpolate(p2, scale_factor=2.0, mode="nearest"))
                mask_features = self.mask_feat(p1)
                levels = [p3, p2, p1]
                b = input.shape[0]
                q = self.query_feat.expand(b, -1, -1)
                qpos = self.query_pos.expand(b, -1, -1)
                _, _, attn = self.predict(q, mask_features, p3.shape[-2:])
                for i, layer in enumerate(self.layers):
                    lv = levels[i % 3]
                    mem = lv.flatten(2).transpose(1, 2) + self.level_embed[i % 3]
                    q = layer(q, qpos, mem, torch.zeros_like(mem), attn)
                    nxt = levels[(i + 1) % 3].shape[-2:]
                    logits, masks, attn = self.predict(q, mask_features, nxt)
                return torch.einsum("bqc,bqhw->bchw", logits.softmax(-1)[..., :-1], masks.sigmoid())
        return Net()

    raise ValueError("unknown builder %s" % kind)
