"""The twentieth held-out set of real architectures (tools/unseen_models.py --set unseen20).

Fixed on 2026-12-08, after set 19 had been planned (blind bench/results/unseen19_blind_20261208.json) and pooled into
sets 3-19 (main b108077), before any of these was exported for a row, measured or planned (each model was only
built, stepped once in torch at each row's batch and exported to a throwaway directory at opset 14, with and without
oomguard.export's metadata, to check that it exports; all 16 do).
Architectures and training idioms that the zoo, sets 2-19 and the random nets lack (RWKV, RetNet, Perceiver, the
Q-Former, MLP-Mixer, gMLP, ConvMixer, EfficientNet-V2, RegNet, HRNet, NeRF, GAT, the Temporal Fusion Transformer,
N-BEATS, WaveNet, Conformer, CLIP / SigLIP, Barlow Twins, distillation, mixup, the attention U-Net, Swin-V2, MaxViT,
SpecAugment, the two-tower recommender, DiT / adaLN-Zero, GATv2 with edge features, LLaVA and the
others named in the earlier sets' docstrings are not repeated): a Gated DeltaNet LM in the flash-linear-attention
naive chunk form (L2-normed q / k after short causal convs, beta and log decays, the in-chunk WY / UT transform by
row-wise forward substitution on a cloned matrix, a chunk-state recurrence), MoBA block-sparse causal attention
(gate scores of queries against mean-pooled key blocks, the current block forced and future blocks barred, top-k
blocks by topk + scatter, expanded to a token mask), PSMNet stereo (a shared feature net on left and right
images, a concatenation cost volume filled in place slice by slice into new_zeros, a 3-D conv hourglass with
ConvTranspose3d, trilinear upsampling, soft-argmin disparity regression, a smooth L1 written by hand), a SlowFast
video net (a fast pathway at 4x the frame rate and 1/4 the channels, the slow one by a strided time slice, a
time-strided Conv3d lateral fused by concatenation), PixelCNN++ (down and down-right shifted convs by F.pad,
concat_elu gated resnets with skip streams, a stride-2 U, the discretized mixture-of-logistics loss with its
torch.where-free float-mask branches), DiffPool (dense GraphSAGE embeddings and soft assignments, S^T Z and
S^T A S, the link-prediction and entropy terms, two pools), a Gilmer MPNN (NNConv's edge network producing a
per-edge weight matrix, bmm messages, index_add mean aggregation, a GRU update shared over 3 rounds, Set2Set
readout by an LSTMCell), the Point Transformer (k nearest by topk, neighbours by advanced indexing, vector attention
of q - k + delta softmaxed over neighbours per channel, a strided transition down with max pooling), SAINT
(per-feature embeddings, attention over features, then intersample attention across the batch by reshaping it to one
sequence), SASRec (causal nn.MultiheadAttention over an item history with a timeline mask, Conv1d feed-forward,
positive and sampled-negative item logits, a masked BCE), DIEN (a GRU interest extractor with the auxiliary
next-click loss against negative histories, attention scores over the history, an AUGRU unrolled by hand, Dice
activations by affine-free BatchNorm), RETRO (retrieved neighbours encoded by a bidirectional encoder, chunked cross
attention: hidden states shifted by chunk - 1, folded into chunks, attending to their neighbours, shifted back),
Flamingo (a frozen vision encoder under torch.no_grad, a Perceiver resampler, tanh-gated cross-attention dense
blocks with zero-initialised gates inserted before frozen LM blocks, the LM embedding, blocks and head frozen by
requires_grad_(False)), HorNet's recursive gated convolution (gnConv: 1x1 to 2C, split, a depthwise 7x7 over the
pyramid of widths, products recursively widened by 1x1 convs), a Demucs waveform separator (strided Conv1d + GLU
encoder, a BiLSTM bottleneck, GLU + ConvTranspose1d decoder with centre-trimmed skips, L1 against the sources) and a
KL autoencoder trained with an LPIPS-style perceptual loss (the latent-diffusion first stage: a reparameterised
latent, L1 reconstruction, the KL, channel-normalised features of a frozen VGG-style net compared at four depths
through frozen 1x1 weights).

Frozen parameters (Flamingo's vision encoder and LM, the perceptual net) are frozen the way users freeze them
(requires_grad_(False)); tools/measure_step.py hands every parameter to the optimizer, which skips those without a
gradient. The shape-only ONNX file cannot say which initializers are frozen; oomguard.export's metadata can
(tools/unseen_hinted.py).

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "gated_deltanet", "builder": "gated_deltanet", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 2000, "label_shape": [64],
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Gated DeltaNet LM: d 128, 2 layers x 4 heads of 32, q / k / v through causal depthwise "
                    "Conv1d k4 + SiLU, L2-normed q and k, beta = sigmoid, log decay -exp(A) softplus(a + dt), the "
                    "naive chunk form (chunk 16: UT transform by forward substitution over rows of a cloned "
                    "matrix, chunk-state recurrence), gated RMSNorm output, SwiGLU, vocabulary 2000"},
    {"name": "moba_attention", "builder": "moba_attention", "args": {},
     "inputs": [["input_ids", [128], "int64", 2000]], "classes": 2000, "label_shape": [128],
     "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "MoBA LM: d 128, 2 pre-LN layers x 4 heads, keys in blocks of 16, gate = q . mean(key "
                    "block), future blocks -inf, the own block +inf, top-3 blocks by topk scattered into a block "
                    "mask, expanded to tokens and and-ed with the causal mask, softmax attention, GELU FFN, "
                    "vocabulary 2000"},
    {"name": "psmnet_stereo", "builder": "psmnet_stereo", "args": {},
     "inputs": [["left", [3, 64, 64], "float32", 0], ["right", [3, 64, 64], "float32", 0],
                ["disparity", [64, 64], "float32", 0]], "classes": 10,
     "rows": [[2, "adam"], [8, "sgd"]],
     "description": "PSMNet stereo: a shared conv feature net (strides 2, 2 to 16 x 16, 32 channels, residual "
                    "blocks), a concatenation cost volume of 12 disparities filled in place into new_zeros, "
                    "Conv3d + BatchNorm3d stack with a stride-2 hourglass and ConvTranspose3d, trilinear upsampling "
                    "to 48 x 64 x 64, softmax over disparity times an arange, smooth L1 against the disparity "
                    "input added to a pooled head"},
    {"name": "slowfast_video", "builder": "slowfast_video", "args": {},
     "inputs": [["clip", [3, 16, 32, 32], "float32", 0]], "classes": 10,
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "SlowFast: fast pathway on 16 frames (8 / 16 / 32 channels, temporal kernels 5 and 3), slow "
                    "pathway on every 4th frame by a strided slice (32 / 64 / 128 channels, temporal kernel 1 then "
                    "3), time-strided Conv3d laterals (k 5x1x1, stride 4) concatenated into the slow path after "
                    "the stem and stage 1, bottleneck blocks with BatchNorm3d, pooled concat, dropout, head"},
    {"name": "pixelcnnpp_dmol", "builder": "pixelcnnpp_dmol", "args": {},
     "inputs": IMG(16), "classes": 10, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "PixelCNN++: 32 filters, u and ul streams by down-shifted (2x3) and down-right-shifted (2x2) "
                    "convs padded by F.pad and shifted by slicing, 2 gated resnets (concat_elu, dropout 0.5, a * "
                    "sigmoid(b)) per scale at 16 / 8 px with stride-2 shifted convs down and ConvTranspose2d up, "
                    "skips, nin to 5 logistics, the discretized mixture-of-logistics loss on tanh(input) added to a "
                    "pooled head"},
    {"name": "diffpool_graph", "builder": "diffpool_graph", "args": {},
     "inputs": [["nodes", [64, 16], "float32", 0], ["adjacency", [64, 64], "float32", 0]], "classes": 6,
     "rows": [[16, "adam"], [64, "sgd"]],
     "description": "DiffPool: dense adjacency (input > 1, symmetrised, self loops), 3-layer dense GraphSAGE "
                    "blocks (mean aggregation by adj @ x / degree, L2 normalise, ReLU, BatchNorm over nodes) for "
                    "embeddings and softmax assignments, 64 -> 16 -> 4 clusters by S^T Z and S^T A S, link loss "
                    "||A - S S^T|| and assignment entropy added to the mean-pooled head"},
    {"name": "mpnn_set2set", "builder": "mpnn_set2set", "args": {},
     "inputs": [["nodes", [24, 11], "float32", 0], ["edges", [72, 4], "float32", 0]], "classes": 2,
     "rows": [[16, "adam"], [64, "adamw"]],
     "description": "Gilmer MPNN (PyG's QM9 example): 24 nodes x 11 features, 72 edges x 4 features per graph on "
                    "a fixed edge list, node Linear to 32, NNConv (edge net 4 -> 64 -> 32 x 32 per edge, bmm "
                    "messages, index_add mean aggregation, root weight) and a GRU shared over 3 rounds, Set2Set "
                    "readout (3 LSTMCell steps, softmax over nodes), 2-layer head"},
    {"name": "point_transformer", "builder": "point_transformer", "args": {},
     "inputs": [["points", [256, 3], "float32", 0]], "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Point Transformer: 256 points, 16 nearest neighbours by topk of squared distances, "
                    "neighbours by advanced indexing, vector attention (MLP of q - k + delta, delta an MLP of "
                    "relative positions, softmax over neighbours per channel, sum of (v + delta)), 2 blocks at 32 "
                    "channels, a transition down to every 4th point (kNN grouping, Linear, BatchNorm, max), 2 "
                    "blocks at 64, mean-pooled head"},
    {"name": "saint_intersample", "builder": "saint_intersample", "args": {},
     "inputs": [["categorical", [16], "int64", 100], ["continuous", [8], "float32", 0]], "classes": 2,
     "rows": [[64, "adam"], [256, "adamw"]],
     "description": "SAINT: 16 categorical fields by offsets into one table, 8 continuous features each through "
                    "its own MLP 1 -> 100 -> 32, a cls token, 2 layers of pre-norm self attention over the 25 "
                    "fields (8 heads) and intersample attention over the batch (the batch reshaped to one sequence "
                    "of 25 x 32 wide rows), GEGLU feed-forwards, head on the cls token"},
    {"name": "sasrec_negatives", "builder": "sasrec_negatives", "args": {},
     "inputs": [["history", [50], "int64", 3000], ["positives", [50], "int64", 3000],
                ["negatives", [50], "int64", 3000]], "classes": 2, "rows": [[32, "adam"], [128, "sgd"]],
     "description": "SASRec: item embedding 3000 x 64 (padding_idx 0) scaled by sqrt(d) plus learned positions, "
                    "timeline mask of padded items, 2 blocks of LayerNorm query, causal nn.MultiheadAttention "
                    "(1 head), Conv1d 1x1 point-wise feed-forward with dropout, positive and negative item logits "
                    "by dot products with their embeddings, BCE masked at padding, added to a head"},
    {"name": "dien_augru", "builder": "dien_augru", "args": {},
     "inputs": [["history", [20], "int64", 1000], ["negative_history", [20], "int64", 1000],
                ["target", [1], "int64", 1000], ["profile", [8], "float32", 0]], "classes": 2,
     "rows": [[128, "adam"], [512, "adagrad"]],
     "description": "DIEN: item embedding 1000 x 18, a GRU interest extractor (36), the auxiliary loss of an MLP "
                    "on [h_t, e_t+1] against [h_t, negative e_t+1], attention over the 20 states by an MLP of "
                    "[q, k, q - k, q * k] and softmax, an AUGRU unrolled by hand (update gate scaled by "
                    "attention), the target, final state, profile and attention-pooled history through an MLP "
                    "80 -> 200 -> 80 with Dice (affine-free BatchNorm1d, sigmoid, learned alpha)"},
    {"name": "retro_cca", "builder": "retro_cca", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000], ["neighbours", [4, 2, 32], "int64", 2000]], "classes": 2000,
     "label_shape": [64], "rows": [[4, "adam"], [16, "sgd"]],
     "description": "RETRO: 4 chunks of 16 tokens, 2 retrieved neighbours of 32 tokens per chunk through a "
                    "2-layer bidirectional pre-LN encoder (d 128), a 4-layer causal decoder with chunked cross "
                    "attention after layers 2 and 4 (states shifted left by 15, padded, folded to [B x 4, 16, d], "
                    "attending to the chunk's 64 neighbour tokens, shifted back), vocabulary 2000"},
    {"name": "flamingo_gated", "builder": "flamingo_gated", "args": {},
     "inputs": [["image", [3, 64, 64], "float32", 0], ["text_ids", [32], "int64", 2000]], "classes": 2000,
     "label_shape": [32], "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "Flamingo: a conv vision encoder (64 patch features of 128) frozen and run under "
                    "torch.no_grad(), a Perceiver resampler (16 latents attending to media and latents, 2 layers), "
                    "gated cross-attention dense blocks (cross attention and FFN each scaled by tanh of a "
                    "zero-initialised gate) before LM layers 1 and 3 of a 4-layer causal LM (d 128) whose "
                    "embedding, blocks and head are frozen by requires_grad_(False), vocabulary 2000"},
    {"name": "hornet_gnconv", "builder": "hornet_gnconv", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[8, "adamw"], [32, "sgd"]],
     "description": "HorNet: stem 4x4 stride 4, stages 32 / 64 / 128 / 256 channels (depths 1, 1, 2, 1) with "
                    "channels-first LayerNorm by mean / var, gnConv of order 2 / 3 / 4 / 5 (1x1 to 2C, split, "
                    "depthwise 7x7 over the widths' sum scaled 1 / 3, recursive products through 1x1 convs), layer "
                    "scale, a channels-last LayerNorm MLP, strided 2x2 downsampling, pooled head"},
    {"name": "demucs_lstm", "builder": "demucs_lstm", "args": {},
     "inputs": [["sources", [4, 2, 4096], "float32", 0]], "classes": 2, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Demucs v2 separator: the mixture as the sum of 4 stereo sources, normalised by its std, padded "
                    "to a valid length, 4 encoder layers (Conv1d k8 s4, ReLU, 1x1 to 2C, GLU; 32 / 64 / 128 / "
                    "256 channels), a 2-layer BiLSTM bottleneck with a Linear back, decoder layers (Conv1d k3 to "
                    "2C, GLU, ConvTranspose1d k8 s4, ReLU) with centre-trimmed skips, L1 against the sources "
                    "added to a pooled head"},
    {"name": "kl_autoencoder_lpips", "builder": "kl_autoencoder_lpips", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[4, "adam"], [16, "adamw"]],
     "description": "KL autoencoder (latent-diffusion first stage): encoder 64 / 128 / 128 channels of GroupNorm "
                    "SiLU ResBlocks down to 16 px, 2 x 4 latent moments, a reparameterised sample, a mirrored "
                    "nearest-upsampling decoder; L1, the KL and an LPIPS-style term (a VGG-style net of 4 stages "
                    "frozen by requires_grad_(False) on the reconstruction and the input, unit-normalised "
                    "channels, frozen 1x1 weights, spatial means) added to a pooled head"},
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

    if kind == "gated_deltanet":
        def chunk_gated_delta_rule(q, k, v, g, beta, chunk=16):
            # q / k / v [b, h, l, d], g (log decay) and beta [b, h, l]
            b, h, l, dk = q.shape
            q = q * dk ** -0.5
            v = v * beta[..., None]
            k_beta = k * beta[..., None]
            q, k, v, k_beta = [x.reshape(b, h, l // chunk, chunk, x.shape[-1]) for x in (q, k, v, k_beta)]
            g = g.reshape(b, h, l // chunk, chunk).cumsum(-1)
            decay = (g[..., :, None] - g[..., None, :]).tril().exp().tril()
            upper = torch.triu(torch.ones(chunk, chunk, dtype=torch.bool), diagonal=0)
            attn = -((k_beta @ k.transpose(-1, -2)) * decay).masked_fill(upper, 0)
            for i in range(1, chunk):
                attn[..., i, :i] = attn[..., i, :i].clone() + (attn[..., i, :, None].clone() * attn[..., :, :i].clone()).sum(-2)
            attn = attn + torch.eye(chunk)
            u = attn @ v
            w = attn @ (k_beta * g.exp()[..., None])
            state = q.new_zeros(b, h, dk, v.shape[-1])
            strict = torch.triu(torch.ones(chunk, chunk, dtype=torch.bool), diagonal=1)
            out = []
            for i in range(l // chunk):
                q_i, k_i, u_i, g_i = q[:, :, i], k[:, :, i], u[:, :, i], g[:, :, i]
                attn_i = (q_i @ k_i.transpose(-1, -2) * decay[:, :, i]).masked_fill(strict, 0)
                v_new = u_i - w[:, :, i] @ state
                out.append((q_i * g_i[..., None].exp()) @ state + attn_i @ v_new)
                state = (state * g_i[..., -1, None, None].exp()
                         + (k_i * (g_i[..., -1, None] - g_i).exp()[..., None]).transpose(-1, -2) @ v_new)
            return torch.stack(out, 2).reshape(b, h, l, -1)

        class GatedDeltaNet(nn.Module):
            def __init__(self, d=128, heads=4, dh=32):
                super().__init__()
                self.h, self.dh = heads, dh
                self.q, self.k, self.v = (nn.Linear(d, heads * dh, bias=False) for _ in range(3))
                self.convs = nn.ModuleList([nn.Conv1d(heads * dh, heads * dh, 4, groups=heads * dh, padding=3,
                                                      bias=False) for _ in range(3)])
                self.a_proj, self.b_proj = nn.Linear(d, heads, bias=False), nn.Linear(d, heads, bias=False)
                self.a_log = nn.Parameter(torch.log(torch.empty(heads).uniform_(1, 16)))
                self.dt_bias = nn.Parameter(torch.rand(heads) * 0.1)
                self.g_proj = nn.Linear(d, heads * dh, bias=False)
                self.o_norm = RMSNorm(dh)
                self.o = nn.Linear(heads * dh, d, bias=False)

            def forward(self, x):
                b, l, _ = x.shape

                def short_conv(i, t):
                    return F.silu(self.convs[i](t.transpose(1, 2))[..., :l]).transpose(1, 2)

                def heads(t):
                    return t.view(b, l, self.h, self.dh).transpose(1, 2)
                q = F.normalize(heads(short_conv(0, self.q(x))), dim=-1)
                k = F.normalize(heads(short_conv(1, self.k(x))), dim=-1)
                v = heads(short_conv(2, self.v(x)))
                beta = self.b_proj(x).sigmoid().transpose(1, 2)
                g = (-self.a_log.exp() * F.softplus(self.a_proj(x) + self.dt_bias)).transpose(1, 2)
                o = chunk_gated_delta_rule(q, k, v, g, beta).transpose(1, 2)       # [b, l, h, dh]
                gate = self.g_proj(x).view(b, l, self.h, self.dh)
                return self.o((self.o_norm(o) * F.silu(gate)).reshape(b, l, -1))

        class LM(nn.Module):
            def __init__(self, d=128, layers=2):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.mix = nn.ModuleList([GatedDeltaNet(d) for _ in range(layers)])
                self.mlp = nn.ModuleList([SwiGLU(d, 4 * d) for _ in range(layers)])
                self.n1 = nn.ModuleList([RMSNorm(d) for _ in range(layers)])
                self.n2 = nn.ModuleList([RMSNorm(d) for _ in range(layers)])
                self.norm, self.head = RMSNorm(d), nn.Linear(d, classes, bias=False)

            def forward(self, input_ids):
                x = self.emb(input_ids)
                for mix, mlp, n1, n2 in zip(self.mix, self.mlp, self.n1, self.n2):
                    x = x + mix(n1(x))
                    x = x + mlp(n2(x))
                return self.head(self.norm(x)).transpose(1, 2)
        return LM()

    if kind == "moba_attention":
        class MoBA(nn.Module):
            def __init__(self, d=128, h=4, block=16, topk=3):
                super().__init__()
                self.h, self.dh, self.block, self.topk = h, d // h, block, topk
                self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(x).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
                nb = t // self.block
                key_blocks = k.view(b, self.h, nb, self.block, self.dh).mean(3)         # [b, h, nb, dh]
                gate = q @ key_blocks.transpose(-1, -2)                                  # [b, h, t, nb]
                q_block = torch.arange(t) // self.block
                k_block = torch.arange(nb)
                gate = gate.masked_fill(k_block[None, :] > q_block[:, None], float("-inf"))
                gate = gate.masked_fill(k_block[None, :] == q_block[:, None], float("inf"))
                idx = gate.topk(self.topk, dim=-1).indices
                chosen = torch.zeros_like(gate).scatter(-1, idx, 1.0) * (gate != float("-inf")).float()
                tokens = chosen[..., None].expand(b, self.h, t, nb, self.block).reshape(b, self.h, t, t) > 0
                causal = torch.ones(t, t, dtype=torch.bool).tril()
                s = (q @ k.transpose(-1, -2)) / math.sqrt(self.dh)
                s = s.masked_fill(~(tokens & causal), float("-inf"))
                return self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d))

        class LM(nn.Module):
            def __init__(self, d=128, layers=2):
                super().__init__()
                self.emb, self.pos = nn.Embedding(2000, d), nn.Parameter(torch.randn(128, d) * 0.02)
                self.att = nn.ModuleList([MoBA(d) for _ in range(layers)])
                self.n1 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
                self.n2 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
                self.ffn = nn.ModuleList([nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                          for _ in range(layers)])
                self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

            def forward(self, input_ids):
                x = self.emb(input_ids) + self.pos[:input_ids.shape[1]]
                for att, n1, n2, ffn in zip(self.att, self.n1, self.n2, self.ffn):
                    x = x + att(n1(x))
                    x = x + ffn(n2(x))
                return self.head(self.norm(x)).transpose(1, 2)
        return LM()

    if kind == "psmnet_stereo":
        def conv_bn(cin, cout, k, s, dim=2):
            conv, bn = (nn.Conv2d, nn.BatchNorm2d) if dim == 2 else (nn.Conv3d, nn.BatchNorm3d)
            return nn.Sequential(conv(cin, cout, k, s, k // 2, bias=False), bn(cout))

        class Res(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.a, self.b = conv_bn(c, c, 3, 1), conv_bn(c, c, 3, 1)

            def forward(self, x):
                return x + self.b(F.relu(self.a(x)))

        class Net(nn.Module):
            def __init__(self, c=32, disp=12):
                super().__init__()
                self.disp = disp
                self.feature = nn.Sequential(conv_bn(3, 32, 3, 2), nn.ReLU(), Res(32), conv_bn(32, 64, 3, 2), nn.ReLU(),
                                             Res(64), Res(64), nn.Conv2d(64, c, 1, bias=False))
                self.dres0 = nn.Sequential(conv_bn(2 * c, 32, 3, 1, 3), nn.ReLU(), conv_bn(32, 32, 3, 1, 3), nn.ReLU())
                self.down = nn.Sequential(conv_bn(32, 64, 3, 2, 3), nn.ReLU(), conv_bn(64, 64, 3, 1, 3), nn.ReLU())
                self.up = nn.Sequential(nn.ConvTranspose3d(64, 32, 3, 2, 1, output_padding=1, bias=False),
                                        nn.BatchNorm3d(32))
                self.classify = nn.Sequential(conv_bn(32, 32, 3, 1, 3), nn.ReLU(), nn.Conv3d(32, 1, 3, 1, 1, bias=False))
                self.head = nn.Linear(c, classes)

            def forward(self, left, right, disparity):
                fl, fr = self.feature(left), self.feature(right)
                b, c, h, w = fl.shape
                cost = fl.new_zeros(b, 2 * c, self.disp, h, w)
                for i in range(self.disp):
                    if i > 0:
                        cost[:, :c, i, :, i:] = fl[:, :, :, i:]
                        cost[:, c:, i, :, i:] = fr[:, :, :, :-i]
                    else:
                        cost[:, :c, i, :, :] = fl
                        cost[:, c:, i, :, :] = fr
                x = self.dres0(cost)
                x = F.relu(self.up(self.down(x)) + x)
                x = self.classify(x)
                x = F.interpolate(x, size=(4 * self.disp, left.shape[2], left.shape[3]), mode="trilinear",
                                  align_corners=False).squeeze(1)
                prob = x.softmax(1)
                pred = (prob * torch.arange(4 * self.disp, dtype=torch.float32)[None, :, None, None]).sum(1)
                diff = (pred - disparity.abs() * 8).abs()
                loss = torch.where(diff < 1, 0.5 * diff * diff, diff - 0.5).mean()
                return self.head(fl.mean((2, 3))) + loss
        return Net()

    if kind == "slowfast_video":
        class Bottleneck(nn.Module):
            def __init__(self, cin, cout, kt, stride):
                super().__init__()
                mid = cout // 4
                self.body = nn.Sequential(
                    nn.Conv3d(cin, mid, (kt, 1, 1), padding=(kt // 2, 0, 0), bias=False), nn.BatchNorm3d(mid), nn.ReLU(),
                    nn.Conv3d(mid, mid, (1, 3, 3), (1, stride, stride), (0, 1, 1), bias=False), nn.BatchNorm3d(mid),
                    nn.ReLU(), nn.Conv3d(mid, cout, 1, bias=False), nn.BatchNorm3d(cout))
                self.short = (nn.Sequential(nn.Conv3d(cin, cout, 1, (1, stride, stride), bias=False), nn.BatchNorm3d(cout))
                              if cin != cout or stride != 1 else nn.Identity())

            def forward(self, x):
                return F.relu(self.body(x) + self.short(x))

        def lateral(c):
            return nn.Sequential(nn.Conv3d(c, 2 * c, (5, 1, 1), (4, 1, 1), (2, 0, 0), bias=False), nn.BatchNorm3d(2 * c),
                                 nn.ReLU())

        class Net(nn.Module):
            def __init__(self, alpha=4):
                super().__init__()
                self.alpha = alpha
                self.slow_stem = nn.Sequential(nn.Conv3d(3, 32, (1, 7, 7), (1, 2, 2), (0, 3, 3), bias=False),
                                               nn.BatchNorm3d(32), nn.ReLU())
                self.fast_stem = nn.Sequential(nn.Conv3d(3, 8, (5, 7, 7), (1, 2, 2), (2, 3, 3), bias=False),
                                               nn.BatchNorm3d(8), nn.ReLU())
                self.lat0, self.lat1 = lateral(8), lateral(16)
                self.slow1 = nn.Sequential(Bottleneck(32 + 16, 64, 1, 1), Bottleneck(64, 64, 1, 1))
                self.fast1 = nn.Sequential(Bottleneck(8, 16, 3, 1), Bottleneck(16, 16, 3, 1))
                self.slow2 = nn.Sequential(Bottleneck(64 + 32, 128, 3, 2), Bottleneck(128, 128, 3, 1))
                self.fast2 = nn.Sequential(Bottleneck(16, 32, 3, 2), Bottleneck(32, 32, 3, 1))
                self.drop, self.head = nn.Dropout(0.5), nn.Linear(128 + 32, classes)

            def forward(self, clip):
                slow = self.slow_stem(clip[:, :, ::self.alpha])
                fast = self.fast_stem(clip)
                slow = torch.cat([slow, self.lat0(fast)], 1)
                slow, fast = self.slow1(slow), self.fast1(fast)
                slow = torch.cat([slow, self.lat1(fast)], 1)
                slow, fast = self.slow2(slow), self.fast2(fast)
                return self.head(self.drop(torch.cat([slow.mean((2, 3, 4)), fast.mean((2, 3, 4))], 1)))
        return Net()

    if kind == "pixelcnnpp_dmol":
        def concat_elu(x):
            return F.elu(torch.cat([x, -x], 1))

        def down_shift(x):
            return F.pad(x[:, :, :-1, :], (0, 0, 1, 0))

        def right_shift(x):
            return F.pad(x[:, :, :, :-1], (1, 0, 0, 0))

        class DownShifted(nn.Module):
            def __init__(self, cin, cout, k=(2, 3), stride=1):
                super().__init__()
                self.k, self.conv = k, nn.Conv2d(cin, cout, k, stride)

            def forward(self, x):
                return self.conv(F.pad(x, ((self.k[1] - 1) // 2, (self.k[1] - 1) // 2, self.k[0] - 1, 0)))

        class DownRightShifted(nn.Module):
            def __init__(self, cin, cout, k=(2, 2), stride=1):
                super().__init__()
                self.k, self.conv = k, nn.Conv2d(cin, cout, k, stride)

            def forward(self, x):
                return self.conv(F.pad(x, (self.k[1] - 1, 0, self.k[0] - 1, 0)))

        class GatedResnet(nn.Module):
            def __init__(self, c, conv, skip=0):
                super().__init__()
                self.conv_in = conv(2 * c, c)
                self.nin = nn.Linear(2 * skip * c, c) if skip else None
                self.drop, self.conv_out = nn.Dropout(0.5), conv(2 * c, 2 * c)

            def forward(self, og, a=None):
                x = self.conv_in(concat_elu(og))
                if a is not None:
                    x = x + self.nin(concat_elu(a).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
                x = self.conv_out(self.drop(concat_elu(x)))
                a_, b_ = x.chunk(2, 1)
                return og + a_ * torch.sigmoid(b_)

        def dmol_loss(x, l, nr_mix):
            x, l = x.permute(0, 2, 3, 1), l.permute(0, 2, 3, 1)
            xs = list(x.shape)
            logit_probs = l[..., :nr_mix]
            l = l[..., nr_mix:].reshape(xs + [nr_mix * 3])
            means, log_scales = l[..., :nr_mix], torch.clamp(l[..., nr_mix:2 * nr_mix], min=-7.0)
            coeffs = torch.tanh(l[..., 2 * nr_mix:3 * nr_mix])
            x = x.unsqueeze(-1) + torch.zeros(xs + [nr_mix])
            m2 = (means[:, :, :, 1, :] + coeffs[:, :, :, 0, :] * x[:, :, :, 0, :]).unsqueeze(3)
            m3 = (means[:, :, :, 2, :] + coeffs[:, :, :, 1, :] * x[:, :, :, 0, :]
                  + coeffs[:, :, :, 2, :] * x[:, :, :, 1, :]).unsqueeze(3)
            means = torch.cat([means[:, :, :, 0:1, :], m2, m3], dim=3)
            centered = x - means
            inv_stdv = torch.exp(-log_scales)
            plus_in = inv_stdv * (centered + 1.0 / 255.0)
            cdf_plus = torch.sigmoid(plus_in)
            min_in = inv_stdv * (centered - 1.0 / 255.0)
            cdf_min = torch.sigmoid(min_in)
            log_cdf_plus = plus_in - F.softplus(plus_in)
            log_one_minus_cdf_min = -F.softplus(min_in)
            cdf_delta = cdf_plus - cdf_min
            mid_in = inv_stdv * centered
            log_pdf_mid = mid_in - log_scales - 2.0 * F.softplus(mid_in)
            inner_inner_cond = (cdf_delta > 1e-5).float()
            inner_inner_out = (inner_inner_cond * torch.log(torch.clamp(cdf_delta, min=1e-12))
                               + (1.0 - inner_inner_cond) * (log_pdf_mid - math.log(127.5)))
            inner_cond = (x > 0.999).float()
            inner_out = inner_cond * log_one_minus_cdf_min + (1.0 - inner_cond) * inner_inner_out
            cond = (x < -0.999).float()
            log_probs = cond * log_cdf_plus + (1.0 - cond) * inner_out
            log_probs = torch.sum(log_probs, dim=3) + F.log_softmax(logit_probs, -1)
            return -torch.logsumexp(log_probs, -1).sum() / x.shape[0]

        class Net(nn.Module):
            def __init__(self, c=32, nr_mix=5):
                super().__init__()
                self.nr_mix = nr_mix
                self.u_init, self.ul_init = DownShifted(3, c, (2, 3)), DownShifted(3, c, (1, 3))
                self.ul_init2 = DownRightShifted(3, c, (2, 1))
                self.up_u = nn.ModuleList([GatedResnet(c, DownShifted) for _ in range(4)])
                self.up_ul = nn.ModuleList([GatedResnet(c, DownRightShifted, 1) for _ in range(4)])
                self.down_u_conv, self.down_ul_conv = DownShifted(c, c, (2, 3), 2), DownRightShifted(c, c, (2, 2), 2)
                self.dn_u = nn.ModuleList([GatedResnet(c, DownShifted, 1) for _ in range(4)])
                self.dn_ul = nn.ModuleList([GatedResnet(c, DownRightShifted, 2) for _ in range(4)])
                self.up_u_deconv = nn.ConvTranspose2d(c, c, (2, 3), 2, output_padding=1)
                self.up_ul_deconv = nn.ConvTranspose2d(c, c, (2, 2), 2, output_padding=1)
                self.nin_out = nn.Conv2d(c, 10 * nr_mix, 1)
                self.head = nn.Linear(c, classes)

            def forward(self, input):
                x = torch.tanh(input)
                u_list = [down_shift(self.u_init(x))]
                ul_list = [down_shift(self.ul_init(x)) + right_shift(self.ul_init2(x))]
                for scale in range(2):
                    for j in range(2):
                        i = 2 * scale + j
                        u_list.append(self.up_u[i](u_list[-1]))
                        ul_list.append(self.up_ul[i](ul_list[-1], a=u_list[-1]))
                    if scale == 0:
                        u_list.append(self.down_u_conv(u_list[-1]))
                        ul_list.append(self.down_ul_conv(ul_list[-1]))
                u, ul = u_list.pop(), ul_list.pop()
                for scale in range(2):
                    for j in range(2):
                        i = 2 * scale + j
                        u = self.dn_u[i](u, u_list.pop())
                        ul = self.dn_ul[i](ul, torch.cat([u, ul_list.pop()], 1))
                    if scale == 0:
                        u_list.pop()
                        ul_list.pop()
                        u = self.up_u_deconv(u)[:, :, :x.shape[2], 1:x.shape[3] + 1]
                        ul = self.up_ul_deconv(ul)[:, :, :x.shape[2], :x.shape[3]]
                out = self.nin_out(F.elu(ul))
                return self.head(ul.mean((2, 3))) + dmol_loss(x, out, self.nr_mix)
        return Net()

    if kind == "diffpool_graph":
        class DenseSAGE(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.rel, self.root = nn.Linear(cin, cout), nn.Linear(cin, cout, bias=False)

            def forward(self, x, adj):
                agg = adj @ x / adj.sum(-1, keepdim=True).clamp(min=1)
                return F.normalize(self.rel(agg) + self.root(x), p=2.0, dim=-1)

        class GNN(nn.Module):
            def __init__(self, cin, hidden, cout, lin=True):
                super().__init__()
                self.convs = nn.ModuleList([DenseSAGE(cin, hidden), DenseSAGE(hidden, hidden), DenseSAGE(hidden, cout)])
                self.bns = nn.ModuleList([nn.BatchNorm1d(hidden), nn.BatchNorm1d(hidden), nn.BatchNorm1d(cout)])
                self.lin = nn.Linear(2 * hidden + cout, cout) if lin else None

            def forward(self, x, adj):
                xs = []
                for conv, bn in zip(self.convs, self.bns):
                    x = F.relu(conv(x, adj))
                    b, n, c = x.shape
                    x = bn(x.view(-1, c)).view(b, n, c)
                    xs.append(x)
                x = torch.cat(xs, -1)
                return F.relu(self.lin(x)) if self.lin is not None else x

        def dense_diff_pool(x, adj, s):
            s = s.softmax(-1)
            out = s.transpose(1, 2) @ x
            out_adj = s.transpose(1, 2) @ adj @ s
            link = torch.norm(adj - s @ s.transpose(1, 2), p=2) / adj.numel()
            ent = (-s * torch.log(s + 1e-15)).sum(-1).mean()
            return out, out_adj, link, ent

        class Net(nn.Module):
            def __init__(self, cin=16, h=32):
                super().__init__()
                self.pool1, self.embed1 = GNN(cin, h, 16), GNN(cin, h, h, lin=False)
                self.pool2, self.embed2 = GNN(3 * h, h, 4), GNN(3 * h, h, h, lin=False)
                self.embed3 = GNN(3 * h, h, h, lin=False)
                self.lin1, self.lin2 = nn.Linear(3 * h, h), nn.Linear(h, classes)

            def forward(self, nodes, adjacency):
                a = (adjacency > 1.0).float()
                a = ((a + a.transpose(1, 2) + torch.eye(a.shape[-1])) > 0).float()
                s, x = self.pool1(nodes, a), self.embed1(nodes, a)
                x, a, l1, e1 = dense_diff_pool(x, a, s)
                s, x = self.pool2(x, a), self.embed2(x, a)
                x, a, l2, e2 = dense_diff_pool(x, a, s)
                x = self.embed3(x, a).mean(1)
                return self.lin2(F.relu(self.lin1(x))) + l1 + l2 + e1 + e2
        return Net()

    if kind == "mpnn_set2set":
        n_nodes, n_edges = 24, 72
        gen = torch.Generator().manual_seed(20)
        ring = torch.arange(n_nodes)
        src = torch.cat([ring, (ring + 1) % n_nodes, torch.randint(0, n_nodes, (n_edges - 2 * n_nodes,), generator=gen)])
        dst = torch.cat([(ring + 1) % n_nodes, ring, torch.randint(0, n_nodes, (n_edges - 2 * n_nodes,), generator=gen)])

        class NNConv(nn.Module):
            def __init__(self, c, edge_net):
                super().__init__()
                self.c, self.edge_net, self.root = c, edge_net, nn.Linear(c, c)

            def forward(self, x, src, dst, edge_attr, n):
                w = self.edge_net(edge_attr).view(-1, self.c, self.c)
                msg = torch.bmm(x[src].unsqueeze(1), w).squeeze(1)
                agg = torch.zeros_like(x).index_add(0, dst, msg)
                deg = torch.zeros(x.shape[0], 1).index_add(0, dst, torch.ones(dst.shape[0], 1)).clamp(min=1)
                return agg / deg + self.root(x)

        class Net(nn.Module):
            def __init__(self, c=32):
                super().__init__()
                self.c = c
                self.lin0 = nn.Linear(11, c)
                self.conv = NNConv(c, nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, c * c)))
                self.gru = nn.GRU(c, c)
                self.lstm = nn.LSTMCell(2 * c, c)
                self.lin1, self.lin2 = nn.Linear(2 * c, c), nn.Linear(c, classes)

            def forward(self, nodes, edges):
                b = nodes.shape[0]
                offset = (torch.arange(b) * n_nodes)[:, None]
                s = (src[None, :] + offset).reshape(-1)
                d = (dst[None, :] + offset).reshape(-1)
                out = F.relu(self.lin0(nodes.reshape(-1, 11)))
                h = out.unsqueeze(0)
                e = edges.reshape(-1, 4)
                for _ in range(3):
                    m = F.relu(self.conv(out, s, d, e, n_nodes))
                    out, h = self.gru(m.unsqueeze(0), h)
                    out = out.squeeze(0)
                x = out.view(b, n_nodes, self.c)
                q_star = x.new_zeros(b, 2 * self.c)
                hc = (x.new_zeros(b, self.c), x.new_zeros(b, self.c))
                for _ in range(3):
                    hc = self.lstm(q_star, hc)
                    q = hc[0]
                    a = (x * q[:, None]).sum(-1).softmax(-1)
                    q_star = torch.cat([q, (a[..., None] * x).sum(1)], -1)
                return self.lin2(F.relu(self.lin1(q_star)))
        return Net()

    if kind == "point_transformer":
        def index_points(points, idx):
            b = points.shape[0]
            batch = torch.arange(b).view(b, *([1] * (idx.dim() - 1)))
            return points[batch, idx]

        def knn(xyz, query, k):
            d = (query.pow(2).sum(-1, keepdim=True) - 2 * query @ xyz.transpose(1, 2)
                 + xyz.pow(2).sum(-1)[:, None, :])
            return d.topk(k, dim=-1, largest=False).indices

        class PTBlock(nn.Module):
            def __init__(self, c, k=16):
                super().__init__()
                self.k = k
                self.fc1, self.fc2 = nn.Linear(c, c), nn.Linear(c, c)
                self.fc_delta = nn.Sequential(nn.Linear(3, c), nn.ReLU(), nn.Linear(c, c))
                self.fc_gamma = nn.Sequential(nn.Linear(c, c), nn.ReLU(), nn.Linear(c, c))
                self.w_qs, self.w_ks, self.w_vs = (nn.Linear(c, c, bias=False) for _ in range(3))

            def forward(self, xyz, features):
                idx = knn(xyz, xyz, self.k)
                knn_xyz = index_points(xyz, idx)
                x = self.fc1(features)
                q, k, v = self.w_qs(x), index_points(self.w_ks(x), idx), index_points(self.w_vs(x), idx)
                pos = self.fc_delta(xyz[:, :, None] - knn_xyz)
                attn = self.fc_gamma(q[:, :, None] - k + pos)
                attn = F.softmax(attn / math.sqrt(k.size(-1)), dim=-2)
                res = torch.einsum("bmnf,bmnf->bmf", attn, v + pos)
                return self.fc2(res) + features

        class TransitionDown(nn.Module):
            def __init__(self, cin, cout, stride=4, k=16):
                super().__init__()
                self.stride, self.k = stride, k
                self.lin, self.bn = nn.Linear(cin + 3, cout), nn.BatchNorm2d(cout)

            def forward(self, xyz, features):
                new_xyz = xyz[:, ::self.stride]
                idx = knn(xyz, new_xyz, self.k)
                grouped = torch.cat([index_points(xyz, idx) - new_xyz[:, :, None], index_points(features, idx)], -1)
                x = self.lin(grouped).permute(0, 3, 1, 2)
                return new_xyz, F.relu(self.bn(x)).max(-1)[0].transpose(1, 2)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 32))
                self.b1 = nn.ModuleList([PTBlock(32), PTBlock(32)])
                self.down = TransitionDown(32, 64)
                self.b2 = nn.ModuleList([PTBlock(64), PTBlock(64)])
                self.head = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, classes))

            def forward(self, points):
                f = self.embed(points)
                for blk in self.b1:
                    f = blk(points, f)
                xyz, f = self.down(points, f)
                for blk in self.b2:
                    f = blk(xyz, f)
                return self.head(f.mean(1))
        return Net()

    if kind == "saint_intersample":
        class GEGLU(nn.Module):
            def forward(self, x):
                x, gates = x.chunk(2, dim=-1)
                return x * F.gelu(gates)

        def ff(d, mult=4):
            return nn.Sequential(nn.Linear(d, d * mult * 2), GEGLU(), nn.Dropout(0.1), nn.Linear(d * mult, d))

        class SAttention(nn.Module):
            def __init__(self, d, heads=8, dim_head=16):
                super().__init__()
                inner = heads * dim_head
                self.h, self.scale = heads, dim_head ** -0.5
                self.to_qkv, self.to_out = nn.Linear(d, inner * 3, bias=False), nn.Linear(inner, d)

            def forward(self, x):
                b, n, _ = x.shape
                q, k, v = (t.reshape(b, n, self.h, -1).transpose(1, 2) for t in self.to_qkv(x).chunk(3, dim=-1))
                attn = (q @ k.transpose(-1, -2) * self.scale).softmax(-1)
                return self.to_out((attn @ v).transpose(1, 2).reshape(b, n, -1))

        class PreNorm(nn.Module):
            def __init__(self, d, fn):
                super().__init__()
                self.norm, self.fn = nn.LayerNorm(d), fn

            def forward(self, x):
                return self.fn(self.norm(x))

        class Net(nn.Module):
            def __init__(self, d=32, n_cat=16, n_cont=8, layers=2):
                super().__init__()
                self.n_cat, self.n_cont = n_cat, n_cont
                self.embeds = nn.Embedding(n_cat * 100 + 1, d)
                self.cont = nn.ModuleList([nn.Sequential(nn.Linear(1, 100), nn.ReLU(), nn.Linear(100, d))
                                           for _ in range(n_cont)])
                n = n_cat + n_cont + 1
                self.layers = nn.ModuleList([nn.ModuleList([
                    PreNorm(d, SAttention(d)), PreNorm(d, ff(d)),
                    PreNorm(n * d, SAttention(n * d, 8, 64)), PreNorm(n * d, ff(n * d, 1))]) for _ in range(layers)])
                self.head = nn.Sequential(nn.Linear(d, 1000), nn.ReLU(), nn.Linear(1000, classes))

            def forward(self, categorical, continuous):
                offsets = torch.arange(self.n_cat) * 100 + 1
                x_cat = self.embeds(torch.cat([torch.zeros_like(categorical[:, :1]), categorical + offsets], 1))
                x_cont = torch.stack([mlp(continuous[:, i:i + 1]) for i, mlp in enumerate(self.cont)], 1)
                x = torch.cat([x_cat, x_cont], 1)
                b, n, d = x.shape
                for att, f1, inter, f2 in self.layers:
                    x = att(x) + x
                    x = f1(x) + x
                    x = x.reshape(1, b, n * d)
                    x = inter(x) + x
                    x = f2(x) + x
                    x = x.reshape(b, n, d)
                return self.head(x[:, 0])
        return Net()

    if kind == "sasrec_negatives":
        class PointWiseFeedForward(nn.Module):
            def __init__(self, d, p=0.2):
                super().__init__()
                self.conv1, self.conv2 = nn.Conv1d(d, d, 1), nn.Conv1d(d, d, 1)
                self.drop1, self.drop2 = nn.Dropout(p), nn.Dropout(p)

            def forward(self, x):
                y = self.drop2(self.conv2(F.relu(self.drop1(self.conv1(x.transpose(-1, -2))))))
                return y.transpose(-1, -2) + x

        class Net(nn.Module):
            def __init__(self, d=64, items=3000, maxlen=50, blocks=2):
                super().__init__()
                self.d = d
                self.item_emb = nn.Embedding(items + 1, d, padding_idx=0)
                self.pos_emb = nn.Embedding(maxlen + 1, d, padding_idx=0)
                self.emb_drop = nn.Dropout(0.2)
                self.attn_norms = nn.ModuleList([nn.LayerNorm(d, eps=1e-8) for _ in range(blocks)])
                self.attns = nn.ModuleList([nn.MultiheadAttention(d, 1, dropout=0.2) for _ in range(blocks)])
                self.fwd_norms = nn.ModuleList([nn.LayerNorm(d, eps=1e-8) for _ in range(blocks)])
                self.fwds = nn.ModuleList([PointWiseFeedForward(d) for _ in range(blocks)])
                self.last_norm = nn.LayerNorm(d, eps=1e-8)
                self.head = nn.Linear(d, classes)

            def log2feats(self, log_seqs):
                seqs = self.item_emb(log_seqs) * self.d ** 0.5
                poss = torch.arange(1, log_seqs.shape[1] + 1)[None, :] * (log_seqs != 0).long()
                seqs = self.emb_drop(seqs + self.pos_emb(poss))
                timeline = (log_seqs != 0).float().unsqueeze(-1)
                seqs = seqs * timeline
                t = seqs.shape[1]
                causal = ~torch.tril(torch.ones(t, t, dtype=torch.bool))
                for norm, attn, fnorm, fwd in zip(self.attn_norms, self.attns, self.fwd_norms, self.fwds):
                    seqs = seqs.transpose(0, 1)
                    q = norm(seqs)
                    out, _ = attn(q, seqs, seqs, attn_mask=causal, need_weights=False)
                    seqs = (q + out).transpose(0, 1)
                    seqs = fwd(fnorm(seqs)) * timeline
                return self.last_norm(seqs)

            def forward(self, history, positives, negatives):
                feats = self.log2feats(history)
                pos_logits = (feats * self.item_emb(positives)).sum(-1)
                neg_logits = (feats * self.item_emb(negatives)).sum(-1)
                valid = (positives != 0).float()
                loss = ((F.softplus(-pos_logits) + F.softplus(neg_logits)) * valid).sum() / valid.sum()
                return self.head(feats[:, -1]) + loss
        return Net()

    if kind == "dien_augru":
        class Dice(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.bn, self.alpha = nn.BatchNorm1d(c, eps=1e-9, affine=False), nn.Parameter(torch.zeros(c))

            def forward(self, x):
                p = torch.sigmoid(self.bn(x))
                return p * x + (1 - p) * self.alpha * x

        class AUGRUCell(nn.Module):
            def __init__(self, cin, h):
                super().__init__()
                self.x2h, self.h2h = nn.Linear(cin, 3 * h), nn.Linear(h, 3 * h)

            def forward(self, x, h, att):
                xr, xz, xn = self.x2h(x).chunk(3, -1)
                hr, hz, hn = self.h2h(h).chunk(3, -1)
                r = torch.sigmoid(xr + hr)
                z = torch.sigmoid(xz + hz) * att
                n = torch.tanh(xn + r * hn)
                return (1 - z) * h + z * n

        class Net(nn.Module):
            def __init__(self, e=18, h=36):
                super().__init__()
                self.h = h
                self.emb = nn.Embedding(1000, e)
                self.gru = nn.GRU(e, h, batch_first=True)
                self.aux = nn.Sequential(nn.Linear(h + e, 100), nn.Sigmoid(), nn.Linear(100, 50), nn.Sigmoid(),
                                         nn.Linear(50, 1))
                self.q = nn.Linear(e, h)
                self.att = nn.Sequential(nn.Linear(4 * h, 80), nn.Sigmoid(), nn.Linear(80, 40), nn.Sigmoid(),
                                         nn.Linear(40, 1))
                self.augru = AUGRUCell(h, h)
                self.mlp = nn.Sequential(nn.Linear(e + h + 8 + e, 200), Dice(200), nn.Linear(200, 80), Dice(80),
                                         nn.Linear(80, classes))

            def forward(self, history, negative_history, target, profile):
                hist, neg, tgt = self.emb(history), self.emb(negative_history), self.emb(target).squeeze(1)
                states, _ = self.gru(hist)
                click = torch.sigmoid(self.aux(torch.cat([states[:, :-1], hist[:, 1:]], -1)))
                noclick = torch.sigmoid(self.aux(torch.cat([states[:, :-1], neg[:, 1:]], -1)))
                aux_loss = -(torch.log(click + 1e-8) + torch.log(1 - noclick + 1e-8)).mean()
                q = self.q(tgt)[:, None].expand_as(states)
                scores = self.att(torch.cat([q, states, q - states, q * states], -1)).squeeze(-1).softmax(-1)
                h = states.new_zeros(states.shape[0], self.h)
                for t in range(states.shape[1]):
                    h = self.augru(states[:, t], h, scores[:, t:t + 1])
                x = torch.cat([tgt, h, profile, (hist * scores[..., None]).sum(1)], -1)
                return self.mlp(x) + aux_loss
        return Net()

    if kind == "retro_cca":
        class CCA(nn.Module):
            def __init__(self, d, chunk, h=4):
                super().__init__()
                self.chunk, self.norm, self.att = chunk, nn.LayerNorm(d), Attention(d, h)

            def forward(self, x, neighbours):            # x [b, n, d]; neighbours [b, chunks, k * r, d]
                b, n, d = x.shape
                c = self.chunk
                chunks = n // c
                y = F.pad(self.norm(x)[:, c - 1:], (0, 0, 0, c - 1))           # shift left by chunk - 1
                y = y.reshape(b * chunks, c, d)
                y = self.att(y, neighbours.reshape(b * chunks, -1, d)).reshape(b, n, d)
                return x + F.pad(y, (0, 0, c - 1, 0))[:, :n]                    # shift back

        class Net(nn.Module):
            def __init__(self, d=128, chunk=16, layers=4):
                super().__init__()
                self.emb, self.pos = nn.Embedding(2000, d), nn.Parameter(torch.randn(64, d) * 0.02)
                self.npos = nn.Parameter(torch.randn(32, d) * 0.02)
                self.encoder = nn.ModuleList([PreLNBlock(d, 4, 4 * d) for _ in range(2)])
                self.enc_norm = nn.LayerNorm(d)
                self.blocks = nn.ModuleList([PreLNBlock(d, 4, 4 * d) for _ in range(layers)])
                self.cca = nn.ModuleDict({"1": CCA(d, chunk), "3": CCA(d, chunk)})
                self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

            def forward(self, input_ids, neighbours):
                b, chunks, k, r = neighbours.shape
                e = self.emb(neighbours.reshape(-1, r)) + self.npos
                for blk in self.encoder:
                    e = blk(e)
                e = self.enc_norm(e).reshape(b, chunks, k * r, -1)
                x = self.emb(input_ids) + self.pos
                mask = causal_mask(x.shape[1])
                for i, blk in enumerate(self.blocks):
                    x = blk(x, mask)
                    if str(i) in self.cca:
                        x = self.cca[str(i)](x, e)
                return self.head(self.norm(x)).transpose(1, 2)
        return Net()

    if kind == "flamingo_gated":
        class FF(nn.Module):
            def __init__(self, d, mult=4):
                super().__init__()
                self.net = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d * mult, bias=False), nn.GELU(),
                                         nn.Linear(d * mult, d, bias=False))

            def forward(self, x):
                return self.net(x)

        class PerceiverAttention(nn.Module):
            def __init__(self, d, h=4):
                super().__init__()
                self.norm_media, self.norm_latents, self.att = nn.LayerNorm(d), nn.LayerNorm(d), Attention(d, h)

            def forward(self, x, latents):
                x, latents = self.norm_media(x), self.norm_latents(latents)
                return self.att(latents, torch.cat([x, latents], 1))

        class Resampler(nn.Module):
            def __init__(self, d, n_latents=16, depth=2):
                super().__init__()
                self.latents = nn.Parameter(torch.randn(n_latents, d))
                self.layers = nn.ModuleList([nn.ModuleList([PerceiverAttention(d), FF(d)]) for _ in range(depth)])
                self.norm = nn.LayerNorm(d)

            def forward(self, x):
                latents = self.latents.expand(x.shape[0], -1, -1)
                for att, ff in self.layers:
                    latents = att(x, latents) + latents
                    latents = ff(latents) + latents
                return self.norm(latents)

        class GatedCrossAttentionBlock(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.norm, self.att, self.ff = nn.LayerNorm(d), Attention(d, 4), FF(d)
                self.attn_gate, self.ff_gate = nn.Parameter(torch.tensor([0.])), nn.Parameter(torch.tensor([0.]))

            def forward(self, x, media):
                x = self.att(self.norm(x), media) * self.attn_gate.tanh() + x
                return self.ff(x) * self.ff_gate.tanh() + x

        class Net(nn.Module):
            def __init__(self, d=128, layers=4):
                super().__init__()
                self.vision = nn.Sequential(nn.Conv2d(3, 64, 4, 4), nn.GELU(), nn.Conv2d(64, d, 2, 2), nn.GELU(),
                                            nn.Conv2d(d, d, 3, 1, 1))
                self.resampler = Resampler(d)
                self.emb, self.pos = nn.Embedding(2000, d), nn.Parameter(torch.randn(32, d) * 0.02)
                self.blocks = nn.ModuleList([PreLNBlock(d, 4, 4 * d) for _ in range(layers)])
                self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, classes)
                self.xattn = nn.ModuleDict({"0": GatedCrossAttentionBlock(d), "2": GatedCrossAttentionBlock(d)})
                for m in (self.vision, self.emb, self.blocks, self.norm, self.head):
                    m.requires_grad_(False)
                self.pos.requires_grad_(False)

            def forward(self, image, text_ids):
                with torch.no_grad():
                    media = self.vision(image).flatten(2).transpose(1, 2)
                media = self.resampler(media)
                x = self.emb(text_ids) + self.pos
                mask = causal_mask(x.shape[1])
                for i, blk in enumerate(self.blocks):
                    if str(i) in self.xattn:
                        x = self.xattn[str(i)](x, media)
                    x = blk(x, mask)
                return self.head(self.norm(x)).transpose(1, 2)
        return Net()

    if kind == "hornet_gnconv":
        class LayerNormCF(nn.Module):
            def __init__(self, c, eps=1e-6):
                super().__init__()
                self.w, self.b, self.eps = nn.Parameter(torch.ones(c)), nn.Parameter(torch.zeros(c)), eps

            def forward(self, x):
                u = x.mean(1, keepdim=True)
                s = (x - u).pow(2).mean(1, keepdim=True)
                x = (x - u) / torch.sqrt(s + self.eps)
                return self.w[:, None, None] * x + self.b[:, None, None]

        class GnConv(nn.Module):
            def __init__(self, dim, order, s=1.0 / 3.0):
                super().__init__()
                self.dims = [dim // 2 ** i for i in range(order)]
                self.dims.reverse()
                self.proj_in = nn.Conv2d(dim, 2 * dim, 1)
                self.dwconv = nn.Conv2d(sum(self.dims), sum(self.dims), 7, padding=3, groups=sum(self.dims))
                self.proj_out = nn.Conv2d(dim, dim, 1)
                self.pws = nn.ModuleList([nn.Conv2d(self.dims[i], self.dims[i + 1], 1) for i in range(order - 1)])
                self.scale = s

            def forward(self, x):
                pwa, abc = torch.split(self.proj_in(x), (self.dims[0], sum(self.dims)), dim=1)
                dw_list = torch.split(self.dwconv(abc) * self.scale, self.dims, dim=1)
                x = pwa * dw_list[0]
                for i, pw in enumerate(self.pws):
                    x = pw(x) * dw_list[i + 1]
                return self.proj_out(x)

        class Block(nn.Module):
            def __init__(self, dim, order):
                super().__init__()
                self.norm1, self.gnconv = LayerNormCF(dim), GnConv(dim, order)
                self.norm2 = nn.LayerNorm(dim, eps=1e-6)
                self.pw1, self.pw2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
                self.gamma1 = nn.Parameter(1e-6 * torch.ones(dim))
                self.gamma2 = nn.Parameter(1e-6 * torch.ones(dim))

            def forward(self, x):
                x = x + self.gamma1[:, None, None] * self.gnconv(self.norm1(x))
                y = self.pw2(F.gelu(self.pw1(self.norm2(x.permute(0, 2, 3, 1))))) * self.gamma2
                return x + y.permute(0, 3, 1, 2)

        class Net(nn.Module):
            def __init__(self, dims=(32, 64, 128, 256), depths=(1, 1, 2, 1)):
                super().__init__()
                self.downs = nn.ModuleList([nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), LayerNormCF(dims[0]))])
                for i in range(3):
                    self.downs.append(nn.Sequential(LayerNormCF(dims[i]), nn.Conv2d(dims[i], dims[i + 1], 2, 2)))
                self.stages = nn.ModuleList([nn.Sequential(*[Block(dims[i], i + 2) for _ in range(depths[i])])
                                             for i in range(4)])
                self.norm, self.head = nn.LayerNorm(dims[-1], eps=1e-6), nn.Linear(dims[-1], classes)

            def forward(self, input):
                x = input
                for down, stage in zip(self.downs, self.stages):
                    x = stage(down(x))
                return self.head(self.norm(x.mean((2, 3))))
        return Net()

    if kind == "demucs_lstm":
        def center_trim(t, ref):
            delta = t.shape[-1] - ref.shape[-1]
            return t[..., delta // 2:t.shape[-1] - (delta - delta // 2)]

        class Net(nn.Module):
            def __init__(self, sources=4, audio=2, channels=32, depth=4, kernel=8, stride=4, length=4096):
                super().__init__()
                self.kernel, self.stride, self.depth, self.sources = kernel, stride, depth, sources
                self.encoder, self.decoder = nn.ModuleList(), nn.ModuleList()
                cin = audio
                for i in range(depth):
                    self.encoder.append(nn.Sequential(nn.Conv1d(cin, channels, kernel, stride), nn.ReLU(),
                                                      nn.Conv1d(channels, 2 * channels, 1), nn.GLU(1)))
                    cout = sources * audio if i == 0 else cin
                    dec = [nn.Conv1d(channels, 2 * channels, 3, padding=1), nn.GLU(1),
                           nn.ConvTranspose1d(channels, cout, kernel, stride)]
                    if i > 0:
                        dec.append(nn.ReLU())
                    self.decoder.insert(0, nn.Sequential(*dec))
                    cin, channels = channels, 2 * channels
                self.lstm = nn.LSTM(cin, cin, num_layers=2, bidirectional=True)
                self.lstm_lin = nn.Linear(2 * cin, cin)
                self.valid = self.valid_length(length)
                self.head = nn.Linear(cin, classes)

            def valid_length(self, length):
                for _ in range(self.depth):
                    length = max(math.ceil((length - self.kernel) / self.stride) + 1, 1)
                for _ in range(self.depth):
                    length = (length - 1) * self.stride + self.kernel
                return int(length)

            def forward(self, sources):
                mix = sources.sum(1)
                length = mix.shape[-1]
                std = mix.std(dim=(1, 2), keepdim=True)
                x = F.pad(mix / (1e-5 + std), ((self.valid - length) // 2, self.valid - length - (self.valid - length) // 2))
                saved = []
                for enc in self.encoder:
                    x = enc(x)
                    saved.append(x)
                y = self.lstm(x.permute(2, 0, 1))[0]
                x = self.lstm_lin(y).permute(1, 2, 0)
                pooled = x.mean(-1)
                for dec in self.decoder:
                    x = dec(x + center_trim(saved.pop(-1), x))
                x = center_trim(x, mix) * std
                x = x.view(x.shape[0], self.sources, -1, x.shape[-1])
                return self.head(pooled) + (x - sources).abs().mean()
        return Net()

    if kind == "kl_autoencoder_lpips":
        class ResBlock(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, 1, 1)
                self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, 1, 1)
                self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

            def forward(self, x):
                h = self.c1(F.silu(self.n1(x)))
                return self.skip(x) + self.c2(F.silu(self.n2(h)))

        def normalize_tensor(x, eps=1e-10):
            return x / (torch.sqrt(torch.sum(x ** 2, dim=1, keepdim=True)) + eps)

        class LPIPS(nn.Module):
            def __init__(self, chns=(32, 64, 128, 128)):
                super().__init__()
                self.register_buffer("shift", torch.tensor([-.030, -.088, -.188])[None, :, None, None])
                self.register_buffer("scale", torch.tensor([.458, .448, .450])[None, :, None, None])
                self.stages, cin = nn.ModuleList(), 3
                for i, c in enumerate(chns):
                    layers = ([nn.MaxPool2d(2)] if i else []) + [nn.Conv2d(cin, c, 3, 1, 1), nn.ReLU(),
                                                                  nn.Conv2d(c, c, 3, 1, 1), nn.ReLU()]
                    self.stages.append(nn.Sequential(*layers))
                    cin = c
                self.lins = nn.ModuleList([nn.Sequential(nn.Dropout(), nn.Conv2d(c, 1, 1, bias=False)) for c in chns])
                self.requires_grad_(False)

            def forward(self, a, b):
                a, b = (a - self.shift) / self.scale, (b - self.shift) / self.scale
                total = 0
                for stage, lin in zip(self.stages, self.lins):
                    a, b = stage(a), stage(b)
                    total = total + lin((normalize_tensor(a) - normalize_tensor(b)) ** 2).mean((2, 3), keepdim=True)
                return total

        class Net(nn.Module):
            def __init__(self, z=4):
                super().__init__()
                self.encoder = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1), ResBlock(64, 64), nn.Conv2d(64, 64, 3, 2, 1),
                                             ResBlock(64, 128), nn.Conv2d(128, 128, 3, 2, 1), ResBlock(128, 128),
                                             nn.GroupNorm(32, 128), nn.SiLU(), nn.Conv2d(128, 2 * z, 3, 1, 1))
                self.quant_conv, self.post_quant_conv = nn.Conv2d(2 * z, 2 * z, 1), nn.Conv2d(z, z, 1)
                self.decoder = nn.Sequential(nn.Conv2d(z, 128, 3, 1, 1), ResBlock(128, 128), nn.Upsample(scale_factor=2.0),
                                             nn.Conv2d(128, 128, 3, 1, 1), ResBlock(128, 64), nn.Upsample(scale_factor=2.0),
                                             nn.Conv2d(64, 64, 3, 1, 1), ResBlock(64, 64), nn.GroupNorm(32, 64), nn.SiLU(),
                                             nn.Conv2d(64, 3, 3, 1, 1))
                self.lpips = LPIPS()
                self.head = nn.Linear(2 * z, classes)

            def forward(self, input):
                moments = self.quant_conv(self.encoder(input))
                mean, logvar = moments.chunk(2, 1)
                logvar = torch.clamp(logvar, -30.0, 20.0)
                zs = mean + torch.exp(0.5 * logvar) * torch.randn_like(mean)
                rec = self.decoder(self.post_quant_conv(zs))
                nll = (input - rec).abs().mean() + self.lpips(input, rec).mean()
                kl = 0.5 * torch.sum(mean.pow(2) + logvar.exp() - 1.0 - logvar, dim=[1, 2, 3]).mean()
                return self.head(moments.mean((2, 3))) + nll + 1e-6 * kl
        return Net()

    raise ValueError("unknown builder %s" % kind)
