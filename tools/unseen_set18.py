"""The eighteenth held-out set of real architectures (tools/unseen_models.py --set unseen18).

Fixed on 2026-12-07, after set 17 had been planned (blind bench/results/unseen17_blind_20261207.json), pooled into
sets 3-17 and its rules merged (main c390c69), before any of these was exported for a row, measured or planned (each
model was only built, stepped once in torch at each row's batch and exported to a throwaway directory at opset 14,
with and without oomguard.export's metadata, to check that it exports; all 16 do. The lookup-free quantiser's
powers-of-two buffer is float32: as int64, ONNX's data propagation stopped on the weight-stripped file, "Cannot
parse data from external tensors"). Architectures and training idioms of 2023-2026 that the zoo, sets 2-17 and the
random nets lack (dense and top-1 / top-2 mixtures with every expert run, expert-choice MoE, Swin, ConvNeXt V2, MAE
masking, ViT registers, stochastic depth, an attention U-Net, YOLO C2f / SPPF, T5 buckets, ALiBi, SimCLR / SimSiam /
BYOL-like EMA teachers (DINO), a weight-normed TCN, RealNVP, PointNet++, BlurPool, manifold mixup / CutMix, weight
tying, MobileViT, LLaMA blocks, GQA, DiT, DDPM, ControlNet, LoRA / DoRA, VQ-VAE and the others named in the earlier
sets' docstrings are not repeated; torch 1.13 cannot export torch.fft, so Hyena-style FFT convolutions are left
out): a Mixtral sparse MoE language model in Hugging Face's form (softmax router, top-2 of 8 SwiGLU experts
renormalised, F.one_hot expert mask, per expert torch.where -> token indices, hidden[top_x], index_add_ back, the
Switch load-balancing term in the logits: only the routed tokens pass an expert, a data-dependent size), a DPO step
(a policy LM on chosen and rejected sequences concatenated into one batch, a frozen reference LM by
requires_grad_(False) under torch.no_grad, sequence log-probabilities by log_softmax + gather, -logsigmoid(beta *
margin)), a BitNet b1.58 LM (every projection a BitLinear: RMSNorm, 8-bit absmax activation fake quantisation and
ternary absmean weights, both straight-through by .detach()), a Gemma-2-style LM (tanh soft-capping of attention
scores and final logits, (1 + w) RMSNorm before and after each sublayer, GeGLU with tanh GELU, sqrt(d)-scaled tied
embedding, alternating sliding-window and global layers, grouped keys / values, a packed-sequence document mask from
cumsum(ids == BOS)), nGPT (the normalised transformer: hidden states, q, k and every weight matrix L2-normalised in
forward, learned eigen learning rates alpha, s_qk, s_u, s_v, s_z), a Whisper-style encoder-decoder (two Conv1d +
GELU over a log-mel input, stride 2, a sinusoid buffer, pre-LN blocks, a causal token decoder with cross attention,
tied output embedding), a latent-diffusion U-Net with SpatialTransformer blocks (GroupNorm, 1x1 proj_in, self
attention, cross attention into a text-context input, GEGLU feed-forward, zero-initialised proj_out), a
Segment-Anything mask decoder (random Fourier point / grid encodings from a Gaussian buffer, output tokens, a
two-way transformer, ConvTranspose2d upscaling, per-mask hypernetwork MLPs, masks by a batched matmul, an IoU head),
DPT dense depth (ViT tokens of four layers reassembled into maps by reshape, ConvTranspose2d / strided conv
resampling, residual-conv-unit fusion with bilinear align_corners upsampling, the scale-invariant log loss against a
depth input), an AlphaFold-style Evoformer (MSA row attention with pair bias and gating, column attention,
outer-product mean by einsum, triangle multiplicative updates outgoing and incoming, triangle self-attention around
the starting node, a distogram), TimeSformer divided space-time attention (tokens regrouped by reshape + permute
between (B N, T, D) and (B T, N, D)), a HiFi-GAN generator step (ConvTranspose1d upsampling, multi-receptive-field
dilated resblocks with LeakyReLU, a multi-period discriminator by reflect pad and view to 2-D, weight norm, LSGAN,
feature matching and L1 terms), a DreamerV3-style RSSM world model (a GRUCell unrolled over 16 steps, 8 x 8
categorical latents with 1 % unimix, Gumbel-max samples made straight-through, KL balancing with free bits, symlog
reward targets, a conv decoder over the folded time axis), a PPO update on Atari frames (the Nature CNN, clipped
surrogate on log_softmax + gather, value and entropy terms), a ViT with Dynamic Tanh in place of every LayerNorm and
2-D axial rotary positions (cos / sin buffers per row and column) and a MAGVIT-v2 lookup-free quantiser (sign
quantisation straight-through, code indices by a powers-of-two buffer, the per-token and batch entropy terms over
all 1024 codes of a +-1 buffer).

Frozen parameters (DPO's reference model) are frozen the way users freeze them (requires_grad_(False));
tools/measure_step.py hands every parameter to the optimizer, which skips those without a gradient. The shape-only
ONNX file cannot say which initializers are frozen; oomguard.export's metadata can (tools/unseen_hinted.py).

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "mixtral_sparse_moe", "builder": "mixtral_sparse_moe", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 2000, "label_shape": [64],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Mixtral-style sparse MoE LM: Embedding 128, 2 layers of causal attention (4 heads, RMSNorm) "
                    "and a sparse MoE block (softmax router over 8 SwiGLU experts 128 -> 256, top-2 renormalised, "
                    "one_hot expert mask, per expert torch.where -> hidden[top_x] -> expert -> index_add_), "
                    "the Switch load-balancing term added to the logits, vocabulary 2000"},
    {"name": "dpo_reference", "builder": "dpo_reference", "args": {},
     "inputs": [["chosen", [48], "int64", 2000], ["rejected", [48], "int64", 2000]], "classes": 2,
     "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "DPO: a 2-layer causal LM policy (d 128, 4 heads, vocabulary 2000) over chosen and rejected "
                    "concatenated into one batch, an identical reference LM frozen by requires_grad_(False) and run "
                    "under torch.no_grad, sequence log-probabilities by log_softmax + gather, "
                    "-logsigmoid(0.1 * margin) added to a 2-class head over the policy's last hidden state"},
    {"name": "bitnet_b158", "builder": "bitnet_b158", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 2000, "label_shape": [64],
     "rows": [[4, "adam"], [16, "adamw"]],
     "description": "BitNet b1.58 LM: d 192, 2 layers x 4 heads, every projection a BitLinear (RMSNorm, 8-bit "
                    "absmax activation quantisation and ternary absmean weights by round / clamp, each "
                    "straight-through x + (q - x).detach()), SwiGLU, causal mask buffer, vocabulary 2000"},
    {"name": "gemma2_softcap", "builder": "gemma2_softcap", "args": {},
     "inputs": [["input_ids", [96], "int64", 3000]], "classes": 3000, "label_shape": [96],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Gemma-2-style LM: d 128, 4 layers alternating sliding window 32 and global, 4 query / 2 "
                    "key-value heads, tanh soft-capping 50 of scores and 30 of logits, (1 + w) RMSNorm before and "
                    "after each sublayer, GeGLU (tanh GELU), sqrt(d)-scaled tied embedding, document mask of "
                    "packed sequences from cumsum(input_ids == 1), vocabulary 3000"},
    {"name": "ngpt", "builder": "ngpt", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 2000, "label_shape": [64],
     "rows": [[4, "adam"], [16, "momentum"]],
     "description": "nGPT normalised transformer: d 128, 3 layers x 4 heads, every weight matrix F.normalize'd in "
                    "forward, q and k normalised and scaled by s_qk, h <- norm(h + alpha (norm(block(h)) - h)), "
                    "SwiGLU scaled by s_u, s_v sqrt(d), logits scaled by s_z, causal mask buffer, vocabulary 2000"},
    {"name": "whisper_tiny", "builder": "whisper_tiny", "args": {},
     "inputs": [["mel", [80, 400], "float32", 0], ["tokens", [32], "int64", 2000]], "classes": 2000,
     "label_shape": [32], "rows": [[2, "adam"], [8, "sgd"]],
     "description": "Whisper-style encoder-decoder: Conv1d 80 -> 128 k3 and 128 -> 128 k3 stride 2 with GELU over "
                    "400 log-mel frames, sinusoid buffer, 2 pre-LN encoder blocks (4 heads, key without bias), a "
                    "2-block causal decoder over 32 tokens with cross attention, tied output embedding, "
                    "vocabulary 2000"},
    {"name": "ldm_spatial_transformer", "builder": "ldm_spatial_transformer", "args": {},
     "inputs": [["latent", [4, 32, 32], "float32", 0], ["context", [16, 64], "float32", 0]], "classes": 10,
     "rows": [[2, "adam"], [8, "sgd"]],
     "description": "Latent-diffusion U-Net (32 and 16 px, 64 / 128 channels): ResBlocks with a timestep from "
                    "torch.rand, SpatialTransformer blocks (GroupNorm 32, 1x1 proj_in, self attention, cross "
                    "attention into a 16 x 64 context input, GEGLU feed-forward, zero-initialised proj_out), the "
                    "noise-prediction squared error added to a head over the middle"},
    {"name": "sam_mask_decoder", "builder": "sam_mask_decoder", "args": {},
     "inputs": [["image", [3, 64, 64], "float32", 0], ["points", [2, 2], "float32", 0]], "classes": 4,
     "label_shape": [64, 64], "rows": [[2, "adam"], [8, "sgd"]],
     "description": "Segment Anything: a 2-block ViT image encoder (patch 4, 16 x 16 x 128), random Fourier "
                    "encodings of 2 point prompts and the grid from a Gaussian buffer, iou + 4 mask tokens, a "
                    "2-layer two-way transformer (token self attention, token-to-image and image-to-token cross "
                    "attention), ConvTranspose2d x 2 upscaling with LayerNorm2d, hypernetwork MLPs per mask, "
                    "masks by matmul to 64 x 64, the IoU head added"},
    {"name": "dpt_depth", "builder": "dpt_depth", "args": {},
     "inputs": [["image", [3, 64, 64], "float32", 0], ["depth", [1, 64, 64], "float32", 0]], "classes": 10,
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "DPT dense depth: ViT (patch 8, d 192, 4 layers, cls token) whose 4 layers' tokens are "
                    "reassembled into maps (ConvTranspose2d x 4 / x 2, identity, strided conv), fused coarse to "
                    "fine by residual conv units and bilinear align_corners upsampling, a depth head; the "
                    "scale-invariant log loss against the depth input added to a head over the cls token"},
    {"name": "evoformer_pair", "builder": "evoformer_pair", "args": {},
     "inputs": [["msa", [8, 32], "int64", 21]], "classes": 16, "label_shape": [32, 32],
     "rows": [[2, "adam"], [8, "sgd"]],
     "description": "AlphaFold-style Evoformer, 2 blocks over an 8 x 32 MSA (c_m 32) and a 32 x 32 pair map "
                    "(c_z 32, relative positions by an index buffer): MSA row attention with pair bias and "
                    "sigmoid gates, column attention, outer-product mean by einsum, triangle multiplicative "
                    "updates outgoing and incoming, triangle attention around the starting node, transitions, "
                    "a symmetrised 16-bin distogram"},
    {"name": "timesformer_divided", "builder": "timesformer_divided", "args": {},
     "inputs": [["video", [3, 8, 32, 32], "float32", 0]], "classes": 10, "rows": [[2, "adam"], [8, "momentum"]],
     "description": "TimeSformer divided space-time attention: 8 frames of 32 px in 8 px patches (16 per "
                    "frame, d 128), learned space and time embeddings, 3 blocks of temporal attention over "
                    "(B N, T, D), spatial attention over (B T, N, D) by reshape + permute, GELU MLP, mean pooled"},
    {"name": "hifigan_mpd", "builder": "hifigan_mpd", "args": {},
     "inputs": [["mel", [80, 32], "float32", 0], ["audio", [1, 512], "float32", 0]], "classes": 2,
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "HiFi-GAN generator step: Conv1d 80 -> 128, ConvTranspose1d x 4 twice with multi-receptive-"
                    "field resblocks (kernels 3 and 5, dilations 1, 3, 5, LeakyReLU 0.1) to a 512-sample tanh "
                    "waveform; a weight-normed multi-period discriminator (periods 2, 3, 5: reflect pad, view to "
                    "2-D, strided Conv2d) on fake and real audio; LSGAN, feature-matching and 45 x L1 terms "
                    "added to a head"},
    {"name": "dreamer_rssm", "builder": "dreamer_rssm", "args": {},
     "inputs": [["obs", [16, 3, 32, 32], "float32", 0], ["action", [16, 4], "float32", 0],
                ["reward", [16], "float32", 0]], "classes": 4, "rows": [[2, "adam"], [8, "sgd"]],
     "description": "DreamerV3-style RSSM: conv encoder over 16 folded frames of 32 px, a GRUCell (deter 128) "
                    "unrolled 16 steps, prior / posterior 8 x 8 categoricals with 1 % unimix, Gumbel-max samples "
                    "straight-through, conv decoder over the folded time axis, symlog reward head, KL balancing "
                    "(0.5 / 0.1) with free bits, all added to a head over the last state"},
    {"name": "ppo_atari", "builder": "ppo_atari", "args": {},
     "inputs": [["frames", [4, 84, 84], "float32", 0], ["action", [1], "int64", 6],
                ["old_logp", [1], "float32", 0], ["advantage", [1], "float32", 0], ["ret", [1], "float32", 0]],
     "classes": 6, "rows": [[32, "adam"], [128, "rmsprop"]],
     "description": "PPO update on Atari frames: Nature CNN (32 8x8/4, 64 4x4/2, 64 3x3/1, Linear 3136 -> 512), "
                    "policy and value heads, log_softmax + gather of the taken action, clipped ratio surrogate "
                    "(0.2), value squared error and entropy bonus added to the policy logits"},
    {"name": "vit_dyt_rope2d", "builder": "vit_dyt_rope2d", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[8, "adamw"], [32, "sgd"]],
     "description": "ViT with Dynamic Tanh (tanh(alpha x) * w + b in place of every LayerNorm) and 2-D axial "
                    "rotary positions (half of each head rotated by row, half by column, cos / sin buffers), "
                    "patch 8, d 192, 4 layers x 3 heads, SwiGLU, mean pooled"},
    {"name": "lfq_tokenizer", "builder": "lfq_tokenizer", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "MAGVIT-v2 lookup-free quantiser in a conv autoencoder: encoder to 16 x 16 x 10, sign "
                    "quantisation straight-through, indices by a powers-of-two buffer, softmax over all 1024 codes "
                    "of a +-1 buffer per token for the per-sample and batch entropy terms, commitment and "
                    "reconstruction errors added to a head over the code map"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    def rms(x, w, eps=1e-6):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return rms(x, self.w)

    class SwiGLU(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.w1, self.w3, self.w2 = nn.Linear(d, h, bias=False), nn.Linear(d, h, bias=False), nn.Linear(h, d, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class CausalAttention(nn.Module):
        """Multi-head causal self attention with an additive -inf mask buffer."""
        def __init__(self, d, h, n):
            super().__init__()
            self.h, self.dh = h, d // h
            self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
            self.register_buffer("mask", torch.full((n, n), float("-inf")).triu(1))

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(x).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
            s = q @ k.transpose(-1, -2) / math.sqrt(self.dh) + self.mask[:t, :t]
            return self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d))

    class Attention(nn.Module):
        """Plain multi-head attention, queries from x, keys / values from ctx (self attention when ctx is x)."""
        def __init__(self, d, h, dc=None, k_bias=True):
            super().__init__()
            dc = dc or d
            self.h, self.dh = h, d // h
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(dc, d, bias=k_bias), nn.Linear(dc, d)
            self.o = nn.Linear(d, d)

        def forward(self, x, ctx=None, mask=None):
            ctx = x if ctx is None else ctx
            b, t, d = x.shape
            s_ = ctx.shape[1]
            q = self.q(x).view(b, t, self.h, self.dh).transpose(1, 2)
            k = self.k(ctx).view(b, s_, self.h, self.dh).transpose(1, 2)
            v = self.v(ctx).view(b, s_, self.h, self.dh).transpose(1, 2)
            s = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
            if mask is not None:
                s = s + mask
            return self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d))

    if kind == "mixtral_sparse_moe":
        class SparseMoE(nn.Module):
            def __init__(self, d=128, hidden=256, experts=8, top_k=2):
                super().__init__()
                self.e, self.k = experts, top_k
                self.gate = nn.Linear(d, experts, bias=False)
                self.experts = nn.ModuleList([SwiGLU(d, hidden) for _ in range(experts)])

            def forward(self, x):
                b, t, d = x.shape
                hidden = x.reshape(-1, d)
                router_logits = self.gate(hidden)
                probs = F.softmax(router_logits, dim=1, dtype=torch.float)
                weights, selected = torch.topk(probs, self.k, dim=-1)
                weights = weights / weights.sum(dim=-1, keepdim=True)
                final = torch.zeros_like(hidden)
                expert_mask = F.one_hot(selected, num_classes=self.e).permute(2, 1, 0)   # [E, k, N]
                for i, expert in enumerate(self.experts):
                    idx, top_x = torch.where(expert_mask[i])
                    current = hidden[None, top_x].reshape(-1, d)
                    out = expert(current) * weights[top_x, idx, None]
                    final.index_add_(0, top_x, out.to(hidden.dtype))
                # Switch / Mixtral load balancing: E * sum_e (fraction routed to e) * (mean router prob of e)
                tokens_per_expert = F.one_hot(selected, self.e).float().mean(0)          # [k, E]
                aux = self.e * (tokens_per_expert * probs.mean(0)[None]).sum()
                return final.view(b, t, d), aux

        class Net(nn.Module):
            def __init__(self, d=128, layers=2):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.att = nn.ModuleList([CausalAttention(d, 4, 64) for _ in range(layers)])
                self.moe = nn.ModuleList([SparseMoE(d) for _ in range(layers)])
                self.n1 = nn.ModuleList([RMSNorm(d) for _ in range(layers)])
                self.n2 = nn.ModuleList([RMSNorm(d) for _ in range(layers)])
                self.nf, self.out = RMSNorm(d), nn.Linear(d, classes, bias=False)

            def forward(self, input_ids):
                x = self.emb(input_ids)
                aux = 0.0
                for a, m, n1, n2 in zip(self.att, self.moe, self.n1, self.n2):
                    x = x + a(n1(x))
                    y, l_aux = m(n2(x))
                    x = x + y
                    aux = aux + l_aux
                return self.out(self.nf(x)).transpose(1, 2) + 0.01 * aux
        return Net()

    if kind == "dpo_reference":
        class LM(nn.Module):
            def __init__(self, d=128, layers=2, vocab=2000, n=48):
                super().__init__()
                self.emb, self.pos = nn.Embedding(vocab, d), nn.Parameter(torch.zeros(1, n, d))
                self.att = nn.ModuleList([CausalAttention(d, 4, n) for _ in range(layers)])
                self.ffn = nn.ModuleList([nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                          for _ in range(layers)])
                self.n1 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
                self.n2 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
                self.nf, self.lm_head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

            def forward(self, ids):
                x = self.emb(ids) + self.pos
                for a, f, n1, n2 in zip(self.att, self.ffn, self.n1, self.n2):
                    x = x + a(n1(x))
                    x = x + f(n2(x))
                h = self.nf(x)
                return self.lm_head(h), h

        def seq_logp(logits, ids):
            logp = F.log_softmax(logits[:, :-1], -1)
            return torch.gather(logp, 2, ids[:, 1:, None]).squeeze(-1).sum(-1)

        class Net(nn.Module):
            def __init__(self, beta=0.1):
                super().__init__()
                self.beta = beta
                self.policy, self.reference = LM(), LM()
                self.reference.load_state_dict(self.policy.state_dict())
                self.reference.requires_grad_(False)
                self.head = nn.Linear(128, classes)

            def forward(self, chosen, rejected):
                b = chosen.shape[0]
                ids = torch.cat([chosen, rejected], 0)
                logits, h = self.policy(ids)
                lp = seq_logp(logits, ids)
                with torch.no_grad():
                    ref_logits, _ = self.reference(ids)
                    ref_lp = seq_logp(ref_logits, ids)
                margin = (lp[:b] - ref_lp[:b]) - (lp[b:] - ref_lp[b:])
                loss = -F.logsigmoid(self.beta * margin)
                return self.head(h[:b, -1]) + loss[:, None]
        return Net()

    if kind == "bitnet_b158":
        class BitLinear(nn.Linear):
            def __init__(self, i, o):
                super().__init__(i, o, bias=False)
                self.norm = nn.Parameter(torch.ones(i))

            def forward(self, x):
                x = rms(x, self.norm)
                scale = 127.0 / x.abs().amax(-1, keepdim=True).clamp(min=1e-5)
                xq = x + ((x * scale).round().clamp(-128, 127) / scale - x).detach()
                w = self.weight
                ws = 1.0 / w.abs().mean().clamp(min=1e-5)
                wq = w + ((w * ws).round().clamp(-1, 1) / ws - w).detach()
                return F.linear(xq, wq)

        class Block(nn.Module):
            def __init__(self, d, h, n):
                super().__init__()
                self.h, self.dh = h, d // h
                self.q, self.k, self.v, self.o = (BitLinear(d, d) for _ in range(4))
                self.w1, self.w3, self.w2 = BitLinear(d, 2 * d), BitLinear(d, 2 * d), BitLinear(2 * d, d)
                self.register_buffer("mask", torch.full((n, n), float("-inf")).triu(1))

            def forward(self, x):
                b, t, d = x.shape
                sp = lambda y: y.view(b, t, self.h, self.dh).transpose(1, 2)  # noqa: E731
                s = sp(self.q(x)) @ sp(self.k(x)).transpose(-1, -2) / math.sqrt(self.dh) + self.mask
                x = x + self.o((s.softmax(-1) @ sp(self.v(x))).transpose(1, 2).reshape(b, t, d))
                return x + self.w2(F.silu(self.w1(x)) * self.w3(x))

        class Net(nn.Module):
            def __init__(self, d=192):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.blocks = nn.ModuleList([Block(d, 4, 64) for _ in range(2)])
                self.nf, self.out = RMSNorm(d), nn.Linear(d, classes, bias=False)

            def forward(self, input_ids):
                x = self.emb(input_ids)
                for blk in self.blocks:
                    x = blk(x)
                return self.out(self.nf(x)).transpose(1, 2)
        return Net()

    if kind == "gemma2_softcap":
        class GNorm(nn.Module):  # Gemma's RMSNorm scales by (1 + w), w initialised to 0
            def __init__(self, d):
                super().__init__()
                self.w = nn.Parameter(torch.zeros(d))

            def forward(self, x):
                return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * (1.0 + self.w)

        class Attn(nn.Module):
            def __init__(self, d=128, h=4, kv=2, dh=32, cap=50.0):
                super().__init__()
                self.h, self.kv, self.dh, self.cap = h, kv, dh, cap
                self.q, self.k = nn.Linear(d, h * dh, bias=False), nn.Linear(d, kv * dh, bias=False)
                self.v, self.o = nn.Linear(d, kv * dh, bias=False), nn.Linear(h * dh, d, bias=False)

            def forward(self, x, mask):
                b, t, _ = x.shape
                q = self.q(x).view(b, t, self.h, self.dh).transpose(1, 2)
                k = self.k(x).view(b, t, self.kv, self.dh).transpose(1, 2)
                v = self.v(x).view(b, t, self.kv, self.dh).transpose(1, 2)
                rep = self.h // self.kv
                k = k[:, :, None].expand(b, self.kv, rep, t, self.dh).reshape(b, self.h, t, self.dh)
                v = v[:, :, None].expand(b, self.kv, rep, t, self.dh).reshape(b, self.h, t, self.dh)
                s = q @ k.transpose(-1, -2) * self.dh ** -0.5
                s = torch.tanh(s / self.cap) * self.cap
                s = s.masked_fill(~mask[:, None], float("-inf"))
                return self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, self.h * self.dh))

        class Net(nn.Module):
            def __init__(self, d=128, layers=4, n=96, window=32, vocab=3000):
                super().__init__()
                self.d = d
                self.emb = nn.Embedding(vocab, d)
                self.att = nn.ModuleList([Attn(d) for _ in range(layers)])
                self.gate = nn.ModuleList([nn.Linear(d, 256, bias=False) for _ in range(layers)])
                self.up = nn.ModuleList([nn.Linear(d, 256, bias=False) for _ in range(layers)])
                self.down = nn.ModuleList([nn.Linear(256, d, bias=False) for _ in range(layers)])
                self.norms = nn.ModuleList([GNorm(d) for _ in range(4 * layers + 1)])
                pos = torch.arange(n)
                causal = pos[None, :] <= pos[:, None]
                self.register_buffer("causal", causal)
                self.register_buffer("local", causal & (pos[:, None] - pos[None, :] < window))

            def forward(self, input_ids):
                doc = torch.cumsum((input_ids == 1).long(), -1)
                same = doc[:, :, None] == doc[:, None, :]
                masks = (same & self.causal, same & self.local)
                x = self.emb(input_ids) * math.sqrt(self.d)
                for i in range(len(self.att)):
                    n = self.norms[4 * i: 4 * i + 4]
                    x = x + n[1](self.att[i](n[0](x), masks[1 - i % 2]))
                    h = n[2](x)
                    x = x + n[3](self.down[i](F.gelu(self.gate[i](h), approximate="tanh") * self.up[i](h)))
                logits = self.norms[-1](x) @ self.emb.weight.t()
                logits = torch.tanh(logits / 30.0) * 30.0
                return logits.transpose(1, 2)
        return Net()

    if kind == "ngpt":
        def nrm(x, dim=-1):
            return F.normalize(x, dim=dim)

        class NLinear(nn.Module):
            """A Linear whose weight rows live on the unit sphere (normalised in forward)."""
            def __init__(self, i, o, dim=1):
                super().__init__()
                self.weight, self.dim = nn.Parameter(torch.randn(o, i) / math.sqrt(i)), dim

            def forward(self, x):
                return F.linear(x, nrm(self.weight, self.dim))

        class Block(nn.Module):
            def __init__(self, d=128, h=4, n=64):
                super().__init__()
                self.h, self.dh, self.d = h, d // h, d
                self.q, self.k, self.v = NLinear(d, d), NLinear(d, d), NLinear(d, d)
                self.o = NLinear(d, d, dim=0)
                self.u, self.g = NLinear(d, 2 * d), NLinear(d, 2 * d)
                self.down = NLinear(2 * d, d, dim=0)
                self.s_qk = nn.Parameter(torch.ones(h, 1, self.dh) * 0.05)
                self.s_u, self.s_v = nn.Parameter(torch.ones(2 * d)), nn.Parameter(torch.ones(2 * d))
                self.alpha_a, self.alpha_m = nn.Parameter(torch.full((d,), 0.05)), nn.Parameter(torch.full((d,), 0.05))
                self.register_buffer("mask", torch.full((n, n), float("-inf")).triu(1))

            def forward(self, x):
                b, t, d = x.shape
                sp = lambda y: y.view(b, t, self.h, self.dh).transpose(1, 2)  # noqa: E731
                q = nrm(sp(self.q(x))) * (self.s_qk * 20.0)
                k = nrm(sp(self.k(x))) * (self.s_qk * 20.0)
                s = q @ k.transpose(-1, -2) * math.sqrt(self.dh) + self.mask
                a = self.o((s.softmax(-1) @ sp(self.v(x))).transpose(1, 2).reshape(b, t, d))
                x = nrm(x + self.alpha_a * 5.0 * (nrm(a) - x))
                uu = self.u(x) * self.s_u
                vv = self.g(x) * (self.s_v * math.sqrt(d))
                m = self.down(uu * F.silu(vv))
                return nrm(x + self.alpha_m * 5.0 * (nrm(m) - x))

        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.emb = nn.Parameter(torch.randn(2000, d))
                self.blocks = nn.ModuleList([Block(d) for _ in range(3)])
                self.out = NLinear(d, classes)
                self.s_z = nn.Parameter(torch.ones(classes))

            def forward(self, input_ids):
                x = F.embedding(input_ids, nrm(self.emb))
                for blk in self.blocks:
                    x = blk(x)
                return (self.out(x) * (self.s_z * math.sqrt(128))).transpose(1, 2)
        return Net()

    if kind == "whisper_tiny":
        def sinusoids(length, channels):
            inc = math.log(10000) / (channels // 2 - 1)
            inv = torch.exp(-inc * torch.arange(channels // 2, dtype=torch.float32))
            t = torch.arange(length, dtype=torch.float32)[:, None] * inv[None]
            return torch.cat([t.sin(), t.cos()], 1)

        class EncBlock(nn.Module):
            def __init__(self, d, h):
                super().__init__()
                self.n1, self.att = nn.LayerNorm(d), Attention(d, h, k_bias=False)
                self.n2, self.mlp = nn.LayerNorm(d), nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x):
                x = x + self.att(self.n1(x))
                return x + self.mlp(self.n2(x))

        class DecBlock(nn.Module):
            def __init__(self, d, h):
                super().__init__()
                self.n1, self.att = nn.LayerNorm(d), Attention(d, h, k_bias=False)
                self.n2, self.xatt = nn.LayerNorm(d), Attention(d, h, k_bias=False)
                self.n3, self.mlp = nn.LayerNorm(d), nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x, mem, mask):
                x = x + self.att(self.n1(x), mask=mask)
                x = x + self.xatt(self.n2(x), mem)
                return x + self.mlp(self.n3(x))

        class Net(nn.Module):
            def __init__(self, d=128, h=4, frames=400, n=32, vocab=2000):
                super().__init__()
                self.conv1 = nn.Conv1d(80, d, 3, padding=1)
                self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
                self.register_buffer("pos_enc", sinusoids(frames // 2, d))
                self.enc = nn.ModuleList([EncBlock(d, h) for _ in range(2)])
                self.ln_post = nn.LayerNorm(d)
                self.tok, self.pos_dec = nn.Embedding(vocab, d), nn.Parameter(torch.zeros(n, d))
                self.dec = nn.ModuleList([DecBlock(d, h) for _ in range(2)])
                self.ln = nn.LayerNorm(d)
                self.register_buffer("mask", torch.full((n, n), float("-inf")).triu(1))

            def forward(self, mel, tokens):
                x = F.gelu(self.conv1(mel))
                x = F.gelu(self.conv2(x)).permute(0, 2, 1)
                x = x + self.pos_enc
                for blk in self.enc:
                    x = blk(x)
                mem = self.ln_post(x)
                y = self.tok(tokens) + self.pos_dec
                for blk in self.dec:
                    y = blk(y, mem, self.mask)
                logits = self.ln(y) @ self.tok.weight.t()
                return logits.transpose(1, 2)
        return Net()

    if kind == "ldm_spatial_transformer":
        def timestep_embedding(t, dim):
            half = dim // 2
            freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
            a = t[:, None] * freqs[None]
            return torch.cat([a.cos(), a.sin()], -1)

        class ResBlock(nn.Module):
            def __init__(self, ci, co, de=256):
                super().__init__()
                self.n1, self.c1 = nn.GroupNorm(32, ci), nn.Conv2d(ci, co, 3, 1, 1)
                self.e = nn.Linear(de, co)
                self.n2, self.c2 = nn.GroupNorm(32, co), nn.Conv2d(co, co, 3, 1, 1)
                self.skip = nn.Conv2d(ci, co, 1) if ci != co else nn.Identity()

            def forward(self, x, emb):
                h = self.c1(F.silu(self.n1(x))) + self.e(F.silu(emb))[:, :, None, None]
                return self.skip(x) + self.c2(F.silu(self.n2(h)))

        class GEGLU(nn.Module):
            def __init__(self, d, inner):
                super().__init__()
                self.proj = nn.Linear(d, 2 * inner)

            def forward(self, x):
                a, gate = self.proj(x).chunk(2, dim=-1)
                return a * F.gelu(gate)

        class SpatialTransformer(nn.Module):
            def __init__(self, c, heads=4, dc=64):
                super().__init__()
                self.norm, self.proj_in = nn.GroupNorm(32, c), nn.Conv2d(c, c, 1)
                self.n1, self.attn1 = nn.LayerNorm(c), Attention(c, heads)
                self.n2, self.attn2 = nn.LayerNorm(c), Attention(c, heads, dc)
                self.n3, self.ff = nn.LayerNorm(c), nn.Sequential(GEGLU(c, 4 * c), nn.Linear(4 * c, c))
                self.proj_out = nn.Conv2d(c, c, 1)
                nn.init.zeros_(self.proj_out.weight)
                nn.init.zeros_(self.proj_out.bias)

            def forward(self, x, ctx):
                b, c, hh, ww = x.shape
                h = self.proj_in(self.norm(x)).permute(0, 2, 3, 1).reshape(b, hh * ww, c)
                h = h + self.attn1(self.n1(h))
                h = h + self.attn2(self.n2(h), ctx)
                h = h + self.ff(self.n3(h))
                h = h.reshape(b, hh, ww, c).permute(0, 3, 1, 2)
                return x + self.proj_out(h)

        class Net(nn.Module):
            def __init__(self, c=64):
                super().__init__()
                betas = torch.linspace(0.00085 ** 0.5, 0.012 ** 0.5, 1000) ** 2
                self.register_buffer("alphas_cumprod", torch.cumprod(1 - betas, 0))
                self.temb = nn.Sequential(nn.Linear(c, 256), nn.SiLU(), nn.Linear(256, 256))
                self.inp = nn.Conv2d(4, c, 3, 1, 1)
                self.r1, self.t1 = ResBlock(c, c), SpatialTransformer(c)
                self.down = nn.Conv2d(c, c, 3, 2, 1)
                self.r2, self.t2 = ResBlock(c, 2 * c), SpatialTransformer(2 * c)
                self.m1, self.tm, self.m2 = ResBlock(2 * c, 2 * c), SpatialTransformer(2 * c), ResBlock(2 * c, 2 * c)
                self.u2, self.tu2 = ResBlock(4 * c, 2 * c), SpatialTransformer(2 * c)
                self.up = nn.Conv2d(2 * c, 2 * c, 3, 1, 1)
                self.u1, self.tu1 = ResBlock(3 * c, c), SpatialTransformer(c)
                self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, 4, 3, 1, 1))
                self.head = nn.Linear(2 * c, classes)

            def forward(self, latent, context):
                b = latent.shape[0]
                t = (torch.rand(b, device=latent.device) * 1000).long().clamp(max=999)
                a = self.alphas_cumprod[t][:, None, None, None]
                noise = torch.randn_like(latent)
                xt = a.sqrt() * latent + (1 - a).sqrt() * noise
                emb = self.temb(timestep_embedding(t.float(), 64))
                h1 = self.t1(self.r1(self.inp(xt), emb), context)
                h2 = self.t2(self.r2(self.down(h1), emb), context)
                m = self.m2(self.tm(self.m1(h2, emb), context), emb)
                u = self.tu2(self.u2(torch.cat([m, h2], 1), emb), context)
                u = self.up(F.interpolate(u, scale_factor=2.0, mode="nearest"))
                u = self.tu1(self.u1(torch.cat([u, h1], 1), emb), context)
                loss = (self.out(u) - noise).pow(2).mean((1, 2, 3))
                return self.head(m.mean((2, 3))) + loss[:, None]
        return Net()

    if kind == "sam_mask_decoder":
        class LayerNorm2d(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.w, self.b = nn.Parameter(torch.ones(c)), nn.Parameter(torch.zeros(c))

            def forward(self, x):
                u = x.mean(1, keepdim=True)
                s = (x - u).pow(2).mean(1, keepdim=True)
                x = (x - u) / torch.sqrt(s + 1e-6)
                return self.w[:, None, None] * x + self.b[:, None, None]

        class MLP(nn.Module):
            def __init__(self, i, h, o, layers=3):
                super().__init__()
                dims = [i] + [h] * (layers - 1) + [o]
                self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])

            def forward(self, x):
                for j, layer in enumerate(self.layers):
                    x = layer(x)
                    if j < len(self.layers) - 1:
                        x = F.relu(x)
                return x

        class TwoWayBlock(nn.Module):
            def __init__(self, d=128, h=4):
                super().__init__()
                self.self_attn, self.n1 = Attention(d, h), nn.LayerNorm(d)
                self.t2i, self.n2 = Attention(d, h), nn.LayerNorm(d)
                self.mlp, self.n3 = nn.Sequential(nn.Linear(d, 256), nn.ReLU(), nn.Linear(256, d)), nn.LayerNorm(d)
                self.i2t, self.n4 = Attention(d, h), nn.LayerNorm(d)

            def forward(self, q, k, qpe, kpe):
                q = self.n1(q + self.self_attn(q + qpe, q + qpe))
                q = self.n2(q + self.t2i(q + qpe, k + kpe))
                q = self.n3(q + self.mlp(q))
                k = self.n4(k + self.i2t(k + kpe, q + qpe))
                return q, k

        class Net(nn.Module):
            def __init__(self, d=128, masks=4):
                super().__init__()
                self.m = masks
                self.patch = nn.Conv2d(3, d, 4, 4)
                self.pos = nn.Parameter(torch.zeros(1, 256, d))
                self.vit = nn.ModuleList([nn.TransformerEncoderLayer(d, 4, 4 * d, 0.0, batch_first=True,
                                                                     norm_first=True) for _ in range(2)])
                self.neck = nn.Sequential(nn.Conv2d(d, d, 1, bias=False), LayerNorm2d(d))
                self.register_buffer("gauss", torch.randn(2, d // 2))
                self.point_embed = nn.Parameter(torch.randn(2, d))
                self.no_mask = nn.Parameter(torch.zeros(d))
                self.iou_token, self.mask_tokens = nn.Parameter(torch.randn(1, d)), nn.Parameter(torch.randn(masks, d))
                self.blocks = nn.ModuleList([TwoWayBlock(d) for _ in range(2)])
                self.final, self.nf = Attention(d, 4), nn.LayerNorm(d)
                self.upscale = nn.Sequential(nn.ConvTranspose2d(d, 32, 2, 2), LayerNorm2d(32), nn.GELU(),
                                             nn.ConvTranspose2d(32, 16, 2, 2), nn.GELU())
                self.hyper = nn.ModuleList([MLP(d, d, 16) for _ in range(masks)])
                self.iou_head = MLP(d, 256, masks)
                ys, xs = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
                self.register_buffer("grid", torch.stack([(xs + 0.5) / 16, (ys + 0.5) / 16], -1).reshape(256, 2))

            def pe(self, coords):  # coords in [0, 1]
                c = (2 * coords - 1) @ self.gauss * (2 * math.pi)
                return torch.cat([c.sin(), c.cos()], -1)

            def forward(self, image, points):
                b = image.shape[0]
                x = self.patch(image).flatten(2).transpose(1, 2) + self.pos
                for layer in self.vit:
                    x = layer(x)
                emb = self.neck(x.transpose(1, 2).reshape(b, -1, 16, 16))
                src = (emb + self.no_mask[None, :, None, None]).flatten(2).transpose(1, 2)     # [B, 256, d]
                src_pe = self.pe(self.grid)[None].expand(b, -1, -1)
                sparse = self.pe(torch.sigmoid(points)) + self.point_embed                      # [B, 2, d]
                out_tokens = torch.cat([self.iou_token, self.mask_tokens], 0)[None].expand(b, -1, -1)
                tokens = torch.cat([out_tokens, sparse], 1)
                q, k = tokens, src
                for blk in self.blocks:
                    q, k = blk(q, k, tokens, src_pe)
                q = self.nf(q + self.final(q + tokens, k + src_pe))
                up = self.upscale(k.transpose(1, 2).reshape(b, -1, 16, 16))                     # [B, 16, 64, 64]
                hyper = torch.stack([self.hyper[i](q[:, 1 + i]) for i in range(self.m)], 1)    # [B, 4, 16]
                masks = (hyper @ up.flatten(2)).view(b, self.m, 64, 64)
                iou = self.iou_head(q[:, 0])
                return masks + iou[:, :, None, None]
        return Net()

    if kind == "dpt_depth":
        class RCU(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.c1, self.c2 = nn.Conv2d(c, c, 3, 1, 1), nn.Conv2d(c, c, 3, 1, 1)

            def forward(self, x):
                return x + self.c2(F.relu(self.c1(F.relu(x))))

        class Fusion(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.r1, self.r2, self.out = RCU(c), RCU(c), nn.Conv2d(c, c, 1)

            def forward(self, x, skip=None):
                if skip is not None:
                    x = x + self.r1(skip)
                x = self.r2(x)
                x = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=True)
                return self.out(x)

        class Net(nn.Module):
            def __init__(self, d=192, f=64):
                super().__init__()
                self.patch = nn.Conv2d(3, d, 8, 8)
                self.cls, self.pos = nn.Parameter(torch.zeros(1, 1, d)), nn.Parameter(torch.zeros(1, 65, d))
                self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(d, 4, 4 * d, 0.1, batch_first=True,
                                                                        norm_first=True, activation="gelu")
                                             for _ in range(4)])
                chans = [48, 96, 192, 384]
                self.proj = nn.ModuleList([nn.Conv2d(d, c, 1) for c in chans])
                self.resample = nn.ModuleList([nn.ConvTranspose2d(48, 48, 4, 4), nn.ConvTranspose2d(96, 96, 2, 2),
                                               nn.Identity(), nn.Conv2d(384, 384, 3, 2, 1)])
                self.rn = nn.ModuleList([nn.Conv2d(c, f, 3, 1, 1, bias=False) for c in chans])
                self.fuse = nn.ModuleList([Fusion(f) for _ in range(4)])
                self.depth_head = nn.Sequential(nn.Conv2d(f, f // 2, 3, 1, 1), nn.Conv2d(f // 2, 32, 3, 1, 1),
                                                nn.ReLU(), nn.Conv2d(32, 1, 1), nn.ReLU())
                self.head = nn.Linear(d, classes)

            def forward(self, image, depth):
                b = image.shape[0]
                x = self.patch(image).flatten(2).transpose(1, 2)
                x = torch.cat([self.cls.expand(b, -1, -1), x], 1) + self.pos
                maps = []
                for blk, proj, res, rn in zip(self.blocks, self.proj, self.resample, self.rn):
                    x = blk(x)
                    m = x[:, 1:].transpose(1, 2).reshape(b, -1, 8, 8)
                    maps.append(rn(res(proj(m))))
                p = self.fuse[3](maps[3])
                p = self.fuse[2](p, maps[2])
                p = self.fuse[1](p, maps[1])
                p = self.fuse[0](p, maps[0])                                # [B, f, 64, 64]
                pred = self.depth_head(p)                                   # [B, 1, 64, 64]
                gt = depth.abs() + 0.1
                dl = torch.log(pred + 1e-3) - torch.log(gt)
                silog = torch.sqrt((dl.pow(2).mean((1, 2, 3)) - 0.85 * dl.mean((1, 2, 3)).pow(2)).clamp(min=1e-6))
                return self.head(x[:, 0]) + silog[:, None]
        return Net()

    if kind == "evoformer_pair":
        class GatedAttention(nn.Module):
            """Gated multi-head attention over the last-but-one axis of [B, R, L, C], with an optional bias
            [B, H, L, L] shared by all rows R."""
            def __init__(self, c, h=4, dh=8):
                super().__init__()
                self.h, self.dh = h, dh
                self.norm = nn.LayerNorm(c)
                self.qkv = nn.Linear(c, 3 * h * dh, bias=False)
                self.g, self.o = nn.Linear(c, h * dh), nn.Linear(h * dh, c)

            def forward(self, x, bias=None):
                b, r, l, c = x.shape
                x = self.norm(x)
                q, k, v = self.qkv(x).view(b, r, l, 3, self.h, self.dh).permute(3, 0, 1, 4, 2, 5)
                s = q @ k.transpose(-1, -2) / math.sqrt(self.dh)                 # [B, R, H, L, L]
                if bias is not None:
                    s = s + bias[:, None]
                o = (s.softmax(-1) @ v).permute(0, 1, 3, 2, 4).reshape(b, r, l, self.h * self.dh)
                return self.o(torch.sigmoid(self.g(x)) * o)

        class TriangleMult(nn.Module):
            def __init__(self, cz, c=32, outgoing=True):
                super().__init__()
                self.outgoing = outgoing
                self.n_in, self.n_out = nn.LayerNorm(cz), nn.LayerNorm(c)
                self.a_p, self.a_g = nn.Linear(cz, c), nn.Linear(cz, c)
                self.b_p, self.b_g = nn.Linear(cz, c), nn.Linear(cz, c)
                self.g, self.o = nn.Linear(cz, cz), nn.Linear(c, cz)

            def forward(self, z):
                z = self.n_in(z)
                a = torch.sigmoid(self.a_g(z)) * self.a_p(z)
                bb = torch.sigmoid(self.b_g(z)) * self.b_p(z)
                if self.outgoing:
                    x = torch.einsum("bikc,bjkc->bijc", a, bb)
                else:
                    x = torch.einsum("bkic,bkjc->bijc", a, bb)
                return torch.sigmoid(self.g(z)) * self.o(self.n_out(x))

        class Block(nn.Module):
            def __init__(self, cm=32, cz=32, h=4):
                super().__init__()
                self.h = h
                self.pair_bias = nn.Sequential(nn.LayerNorm(cz), nn.Linear(cz, h, bias=False))
                self.row, self.col = GatedAttention(cm, h), GatedAttention(cm, h)
                self.m_trans = nn.Sequential(nn.LayerNorm(cm), nn.Linear(cm, 4 * cm), nn.ReLU(), nn.Linear(4 * cm, cm))
                self.opm_n, self.opm_a, self.opm_b = nn.LayerNorm(cm), nn.Linear(cm, 8), nn.Linear(cm, 8)
                self.opm_o = nn.Linear(64, cz)
                self.tri_out, self.tri_in = TriangleMult(cz, outgoing=True), TriangleMult(cz, outgoing=False)
                self.tri_bias = nn.Sequential(nn.LayerNorm(cz), nn.Linear(cz, h, bias=False))
                self.tri_att = GatedAttention(cz, h)
                self.z_trans = nn.Sequential(nn.LayerNorm(cz), nn.Linear(cz, 4 * cz), nn.ReLU(), nn.Linear(4 * cz, cz))

            def forward(self, m, z):
                s = m.shape[1]
                bias = self.pair_bias(z).permute(0, 3, 1, 2)                          # [B, H, N, N]
                m = m + self.row(m, bias)
                m = m + self.col(m.transpose(1, 2)).transpose(1, 2)
                m = m + self.m_trans(m)
                mn = self.opm_n(m)
                a, bb = self.opm_a(mn), self.opm_b(mn)
                opm = torch.einsum("bsic,bsjd->bijcd", a, bb) / s
                z = z + self.opm_o(opm.reshape(opm.shape[0], opm.shape[1], opm.shape[2], 64))
                z = z + self.tri_out(z)
                z = z + self.tri_in(z)
                z = z + self.tri_att(z, self.tri_bias(z).permute(0, 3, 1, 2))
                return m, z + self.z_trans(z)

        class Net(nn.Module):
            def __init__(self, n=32, cm=32, cz=32):
                super().__init__()
                self.msa_emb = nn.Embedding(21, cm)
                self.left, self.right = nn.Embedding(21, cz), nn.Embedding(21, cz)
                idx = torch.arange(n)
                self.register_buffer("relpos", (idx[None, :] - idx[:, None]).clamp(-8, 8) + 8)
                self.rel_emb = nn.Embedding(17, cz)
                self.blocks = nn.ModuleList([Block(cm, cz) for _ in range(2)])
                self.disto = nn.Linear(cz, classes)

            def forward(self, msa):
                m = self.msa_emb(msa)                                                  # [B, S, N, cm]
                target = msa[:, 0]
                z = self.left(target)[:, :, None] + self.right(target)[:, None] + self.rel_emb(self.relpos)
                for blk in self.blocks:
                    m, z = blk(m, z)
                logits = self.disto(z + z.transpose(1, 2))                             # [B, N, N, bins]
                return logits.permute(0, 3, 1, 2)
        return Net()

    if kind == "timesformer_divided":
        class Block(nn.Module):
            def __init__(self, d=128, h=4):
                super().__init__()
                self.nt, self.time_attn, self.time_fc = nn.LayerNorm(d), Attention(d, h), nn.Linear(d, d)
                self.ns, self.space_attn = nn.LayerNorm(d), Attention(d, h)
                self.nm, self.mlp = nn.LayerNorm(d), nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x, t, n):
                b = x.shape[0] // (t * n)
                d = x.shape[-1]
                xt = x.view(b, t, n, d).permute(0, 2, 1, 3).reshape(b * n, t, d)
                xt = xt + self.time_fc(self.time_attn(self.nt(xt)))
                xs = xt.view(b, n, t, d).permute(0, 2, 1, 3).reshape(b * t, n, d)
                xs = xs + self.space_attn(self.ns(xs))
                xs = xs + self.mlp(self.nm(xs))
                return xs.reshape(b * t * n, d)

        class Net(nn.Module):
            def __init__(self, d=128, t=8, n=16):
                super().__init__()
                self.t, self.n = t, n
                self.patch = nn.Conv2d(3, d, 8, 8)
                self.space_pos, self.time_pos = nn.Parameter(torch.zeros(1, n, d)), nn.Parameter(torch.zeros(1, t, 1, d))
                self.blocks = nn.ModuleList([Block(d) for _ in range(3)])
                self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

            def forward(self, video):
                b, c, t, hh, ww = video.shape
                x = self.patch(video.transpose(1, 2).reshape(b * t, c, hh, ww)).flatten(2).transpose(1, 2)
                x = x + self.space_pos                                                  # [B T, N, d]
                x = (x.view(b, t, self.n, -1) + self.time_pos).reshape(b * t * self.n, -1)
                for blk in self.blocks:
                    x = blk(x, self.t, self.n)
                return self.head(self.norm(x.view(b, t * self.n, -1).mean(1)))
        return Net()

    if kind == "hifigan_mpd":
        wn = nn.utils.weight_norm

        class ResBlock(nn.Module):
            def __init__(self, c, k, dilations=(1, 3, 5)):
                super().__init__()
                self.c1 = nn.ModuleList([wn(nn.Conv1d(c, c, k, 1, dilation=d, padding=d * (k - 1) // 2))
                                         for d in dilations])
                self.c2 = nn.ModuleList([wn(nn.Conv1d(c, c, k, 1, padding=(k - 1) // 2)) for _ in dilations])

            def forward(self, x):
                for c1, c2 in zip(self.c1, self.c2):
                    x = x + c2(F.leaky_relu(c1(F.leaky_relu(x, 0.1)), 0.1))
                return x

        class Generator(nn.Module):
            def __init__(self, c=128):
                super().__init__()
                self.pre = wn(nn.Conv1d(80, c, 7, 1, 3))
                self.ups = nn.ModuleList([wn(nn.ConvTranspose1d(c, c // 2, 8, 4, 2)),
                                          wn(nn.ConvTranspose1d(c // 2, c // 4, 8, 4, 2))])
                self.mrf = nn.ModuleList([nn.ModuleList([ResBlock(c // 2, 3), ResBlock(c // 2, 5)]),
                                          nn.ModuleList([ResBlock(c // 4, 3), ResBlock(c // 4, 5)])])
                self.post = wn(nn.Conv1d(c // 4, 1, 7, 1, 3))

            def forward(self, mel):
                x = self.pre(mel)
                for up, blocks in zip(self.ups, self.mrf):
                    x = up(F.leaky_relu(x, 0.1))
                    x = sum(blk(x) for blk in blocks) / len(blocks)
                return torch.tanh(self.post(F.leaky_relu(x))), x

        class PeriodD(nn.Module):
            def __init__(self, p):
                super().__init__()
                self.p = p
                chans = [1, 16, 32, 64]
                self.convs = nn.ModuleList([wn(nn.Conv2d(a, b, (5, 1), (3, 1), (2, 0)))
                                            for a, b in zip(chans[:-1], chans[1:])])
                self.post = wn(nn.Conv2d(64, 1, (3, 1), 1, (1, 0)))

            def forward(self, x):
                b, c, t = x.shape
                if t % self.p:
                    x = F.pad(x, (0, self.p - t % self.p), "reflect")
                    t = x.shape[-1]
                x = x.view(b, c, t // self.p, self.p)
                feats = []
                for conv in self.convs:
                    x = F.leaky_relu(conv(x), 0.1)
                    feats.append(x)
                x = self.post(x)
                return x.flatten(1), feats

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.g = Generator()
                self.mpd = nn.ModuleList([PeriodD(p) for p in (2, 3, 5)])
                self.head = nn.Linear(32, classes)

            def forward(self, mel, audio):
                fake, last = self.g(mel)
                adv = fm = 0.0
                for d in self.mpd:
                    sf, ff = d(fake)
                    _, fr = d(audio)
                    adv = adv + (sf - 1).pow(2).mean(1)
                    for a, r in zip(ff, fr):
                        fm = fm + (a - r.detach()).abs().mean((1, 2, 3))
                l1 = (fake - audio).abs().mean((1, 2))
                loss = adv + 2.0 * fm + 45.0 * l1
                return self.head(last.mean(2)) + loss[:, None]
        return Net()

    if kind == "dreamer_rssm":
        def symlog(x):
            return torch.sign(x) * torch.log(1 + x.abs())

        class Net(nn.Module):
            def __init__(self, deter=128, groups=8, cls=8, embed=256, t=16):
                super().__init__()
                self.deter, self.g, self.c, self.t = deter, groups, cls, t
                stoch = groups * cls
                self.enc = nn.Sequential(nn.Conv2d(3, 32, 4, 2, 1), nn.LayerNorm([32, 16, 16]), nn.SiLU(),
                                         nn.Conv2d(32, 64, 4, 2, 1), nn.LayerNorm([64, 8, 8]), nn.SiLU(),
                                         nn.Conv2d(64, 128, 4, 2, 1), nn.SiLU(), nn.Flatten(),
                                         nn.Linear(128 * 16, embed))
                self.img_in = nn.Sequential(nn.Linear(stoch + 4, deter), nn.LayerNorm(deter), nn.SiLU())
                self.cell = nn.GRUCell(deter, deter)
                self.prior = nn.Sequential(nn.Linear(deter, 128), nn.LayerNorm(128), nn.SiLU(), nn.Linear(128, stoch))
                self.post = nn.Sequential(nn.Linear(deter + embed, 128), nn.LayerNorm(128), nn.SiLU(),
                                          nn.Linear(128, stoch))
                self.dec_in = nn.Linear(deter + stoch, 128 * 16)
                self.dec = nn.Sequential(nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.SiLU(),
                                         nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.SiLU(),
                                         nn.ConvTranspose2d(32, 3, 4, 2, 1))
                self.reward = nn.Sequential(nn.Linear(deter + stoch, 128), nn.SiLU(), nn.Linear(128, 1))
                self.head = nn.Linear(deter + stoch, classes)

            def dist(self, logits):
                probs = logits.view(-1, self.g, self.c).softmax(-1)
                probs = 0.99 * probs + 0.01 / self.c
                return probs

            def sample(self, probs):
                u = torch.rand_like(probs).clamp(1e-6, 1 - 1e-6)
                idx = (probs.log() - torch.log(-torch.log(u))).argmax(-1)
                onehot = F.one_hot(idx, self.c).to(probs.dtype)
                return (onehot + probs - probs.detach()).flatten(1)

            def kl(self, p, q):  # KL(p || q) summed over groups and classes
                return (p * (p.log() - q.log())).sum((-1, -2))

            def forward(self, obs, action, reward):
                b, t = obs.shape[:2]
                embed = self.enc(obs.reshape(b * t, 3, 32, 32)).view(b, t, -1)
                h = obs.new_zeros(b, self.deter)
                z = obs.new_zeros(b, self.g * self.c)
                feats, kl_loss = [], 0.0
                for i in range(t):
                    h = self.cell(self.img_in(torch.cat([z, action[:, i]], -1)), h)
                    prior = self.dist(self.prior(h))
                    post = self.dist(self.post(torch.cat([h, embed[:, i]], -1)))
                    z = self.sample(post)
                    feats.append(torch.cat([h, z], -1))
                    dyn = self.kl(post.detach(), prior).clamp(min=1.0)
                    rep = self.kl(post, prior.detach()).clamp(min=1.0)
                    kl_loss = kl_loss + 0.5 * dyn + 0.1 * rep
                feat = torch.stack(feats, 1)                                           # [B, T, F]
                rec = self.dec(self.dec_in(feat.reshape(b * t, -1)).view(b * t, 128, 4, 4))
                rec_loss = (rec - obs.reshape(b * t, 3, 32, 32)).pow(2).sum((1, 2, 3)).view(b, t).mean(1)
                rew_loss = (self.reward(feat).squeeze(-1) - symlog(reward)).pow(2).mean(1)
                loss = rec_loss + rew_loss + kl_loss / t
                return self.head(feat[:, -1]) + loss[:, None]
        return Net()

    if kind == "ppo_atari":
        class Net(nn.Module):
            def __init__(self, actions=6, clip=0.2):
                super().__init__()
                self.clip = clip
                self.trunk = nn.Sequential(nn.Conv2d(4, 32, 8, 4), nn.ReLU(), nn.Conv2d(32, 64, 4, 2), nn.ReLU(),
                                           nn.Conv2d(64, 64, 3, 1), nn.ReLU(), nn.Flatten(),
                                           nn.Linear(3136, 512), nn.ReLU())
                self.pi, self.v = nn.Linear(512, actions), nn.Linear(512, 1)

            def forward(self, frames, action, old_logp, advantage, ret):
                h = self.trunk(frames / 255.0)
                logits, value = self.pi(h), self.v(h)
                logp_all = F.log_softmax(logits, -1)
                logp = logp_all.gather(1, action)
                ratio = torch.exp(logp - old_logp)
                surr = torch.min(ratio * advantage, ratio.clamp(1 - self.clip, 1 + self.clip) * advantage)
                v_loss = 0.5 * (value - ret).pow(2)
                entropy = -(logp_all.exp() * logp_all).sum(-1, keepdim=True)
                loss = -surr + 0.5 * v_loss - 0.01 * entropy
                return logits + loss
        return Net()

    if kind == "vit_dyt_rope2d":
        class DyT(nn.Module):
            def __init__(self, d, alpha=0.5):
                super().__init__()
                self.alpha = nn.Parameter(torch.tensor(alpha))
                self.w, self.b = nn.Parameter(torch.ones(d)), nn.Parameter(torch.zeros(d))

            def forward(self, x):
                return torch.tanh(self.alpha * x) * self.w + self.b

        def rope_tables(side, dim):
            inv = 1.0 / (100 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
            ys, xs = torch.meshgrid(torch.arange(side, dtype=torch.float32),
                                    torch.arange(side, dtype=torch.float32), indexing="ij")
            fy = ys.reshape(-1)[:, None] * inv[None]
            fx = xs.reshape(-1)[:, None] * inv[None]
            f = torch.cat([fy, fy, fx, fx], -1)                                   # [N, 2 dim]
            return f.cos(), f.sin()

        class Block(nn.Module):
            def __init__(self, d=192, h=3):
                super().__init__()
                self.h, self.dh = h, d // h
                self.n1, self.qkv, self.o = DyT(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
                self.n2, self.ffn = DyT(d), SwiGLU(d, 512)

            def rot(self, x, cos, sin):  # rotate halves within the row and the column part
                q = self.dh // 4
                x1, x2, x3, x4 = x.split(q, -1)
                return x * cos + torch.cat([-x2, x1, -x4, x3], -1) * sin

            def forward(self, x, cos, sin):
                b, n, d = x.shape
                q, k, v = self.qkv(self.n1(x)).view(b, n, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
                q, k = self.rot(q, cos, sin), self.rot(k, cos, sin)
                s = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
                x = x + self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))
                return x + self.ffn(self.n2(x))

        class Net(nn.Module):
            def __init__(self, d=192):
                super().__init__()
                self.patch = nn.Conv2d(3, d, 8, 8)
                cos, sin = rope_tables(8, 32)
                self.register_buffer("cos", cos)
                self.register_buffer("sin", sin)
                self.blocks = nn.ModuleList([Block(d) for _ in range(4)])
                self.norm, self.head = DyT(d), nn.Linear(d, classes)

            def forward(self, input):
                x = self.patch(input).flatten(2).transpose(1, 2)
                for blk in self.blocks:
                    x = blk(x, self.cos, self.sin)
                return self.head(self.norm(x).mean(1))
        return Net()

    if kind == "lfq_tokenizer":
        class Net(nn.Module):
            def __init__(self, bits=10):
                super().__init__()
                self.bits = bits
                self.enc = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1), nn.GroupNorm(8, 64), nn.SiLU(),
                                         nn.Conv2d(64, 128, 4, 2, 1), nn.GroupNorm(8, 128), nn.SiLU(),
                                         nn.Conv2d(128, 128, 4, 2, 1), nn.GroupNorm(8, 128), nn.SiLU(),
                                         nn.Conv2d(128, bits, 1))
                self.dec = nn.Sequential(nn.Conv2d(bits, 128, 3, 1, 1), nn.SiLU(),
                                         nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.SiLU(),
                                         nn.ConvTranspose2d(64, 64, 4, 2, 1), nn.SiLU(), nn.Conv2d(64, 3, 3, 1, 1))
                powers = 2 ** torch.arange(bits)
                self.register_buffer("mask", powers.float())
                codes = ((torch.arange(2 ** bits)[:, None] & powers) != 0).float() * 2 - 1
                self.register_buffer("codebook", codes)                                # [1024, bits]
                self.code_emb = nn.Embedding(2 ** bits, 32)
                self.head = nn.Linear(bits + 32, classes)

            def forward(self, input):
                z = self.enc(input)                                                    # [B, bits, 16, 16]
                b, c, hh, ww = z.shape
                zf = z.permute(0, 2, 3, 1)
                q = torch.where(zf > 0, torch.ones_like(zf), -torch.ones_like(zf))
                idx = ((q > 0).float() * self.mask).sum(-1).long()                     # [B, 16, 16]
                zq = zf + (q - zf).detach()
                logits = 2 * zf.reshape(-1, c) @ self.codebook.t() / 0.01             # [B HW, 1024]
                prob = logits.softmax(-1)
                per_sample = -(prob * torch.log(prob.clamp(min=1e-5))).sum(-1).view(b, -1).mean(1)
                avg = prob.mean(0)
                codebook_entropy = -(avg * torch.log(avg.clamp(min=1e-5))).sum()
                commit = (zf - q.detach()).pow(2).mean((1, 2, 3))
                rec = (self.dec(zq.permute(0, 3, 1, 2)) - input).pow(2).mean((1, 2, 3))
                loss = rec + 0.25 * commit + 0.1 * (per_sample - codebook_entropy)
                feat = torch.cat([zq.mean((1, 2)), self.code_emb(idx).mean((1, 2))], -1)
                return self.head(feat) + loss[:, None]
        return Net()

    raise ValueError("unknown builder %s" % kind)
