"""The tenth held-out set of real architectures (tools/unseen_models.py --set unseen10).

Fixed on 2026-12-07, after set 9 had been planned (blind 8942a0b, after 833f9b0) and the dense gemm weight-gradient
rule (f352cb7), before any of these was exported, measured or planned. Architectures and idioms the zoo, sets 1-9
and the random nets lack (several suggested ones - Swin, ConvNeXt, MobileNetV3, EfficientNet, DenseNet, WaveNet,
capsules, attention U-Net, mixture of experts, dense GCN - are already in sets 1-4 and 7, so they are not repeated):
RetNet parallel retention (a fixed per-head decay mask, no softmax, GroupNorm over heads, swish gate), linear
attention with elu + 1 feature maps (k^T v first, a normaliser), an RWKV-4 block (token shift by nn.ZeroPad2d with a
negative pad, time-mix WKV in matrix form with exp decay, squared-ReLU channel mix), Transformer-XL relative
positions (sinusoid table, r_w / r_r biases, the pad-view-slice rel_shift), grouped-query attention (8 query heads
over 2 key / value heads, HF repeat_kv by expand + reshape, an additive -inf mask buffer), PointNet with its input
and feature T-Nets (bmm by a predicted 3x3 and 64x64 matrix, the orthogonality term in the logits), a SegFormer
stage pair (overlapping patch embedding, efficient attention whose keys come from a strided conv, Mix-FFN with a
depthwise conv between token and image layouts, an all-MLP decoder), axial attention (rows then columns of a
channels-last map), involution (per-pixel kernels generated from the input, F.unfold), an end-to-end memory
network (bag-of-words memories, 3 hops, adjacent weight tying), ESIM natural-language inference (two BiLSTMs, soft
alignment both ways, [a, a~, a - a~, a * a~]), a Deep Interest Network attention unit (target item against a
history, [q, k, q - k, q * k], PReLU, padding mask, no softmax), AdaIN style transfer (two images through one
encoder, instance statistics by hand, reflection-padded decoder), a mixture density network scored on a fixed grid
(logsumexp over components), a CycleGAN ResNet generator (ReflectionPad2d, InstanceNorm2d, ConvTranspose2d) and a
CLIP-style dual encoder (end-of-text pooling by argmax and advanced indexing, a learned log temperature).

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "retnet_retention", "builder": "retnet_retention", "args": {},
     "inputs": [["input_ids", [48], "int64", 3000]], "classes": 16, "label_shape": [48],
     "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "RetNet-style tagger: parallel retention ((q k^T) * decay mask buffer gamma^(n-m), no softmax) "
                    "x 4 heads, GroupNorm over heads, swish gate, pre-LN, 2 layers x 128"},
    {"name": "linear_attention_elu", "builder": "linear_attention_elu", "args": {},
     "inputs": [["input", [256, 32], "float32", 0]], "classes": 6, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Linear-attention encoder (Katharopoulos et al.): phi = elu + 1, kv = phi(k)^T v per head, "
                    "normaliser 1 / (phi(q) . sum phi(k)), 3 layers x 96, 256 steps, mean-pooled"},
    {"name": "rwkv_timemix", "builder": "rwkv_timemix", "args": {},
     "inputs": [["input_ids", [32], "int64", 2000]], "classes": 2000, "label_shape": [32],
     "rows": [[4, "adam"], [16, "momentum"]],
     "description": "RWKV-4 LM: token shift by nn.ZeroPad2d((0, 0, 1, -1)), time-mix WKV in matrix form "
                    "(exp decay per channel, time_first bonus), sigmoid receptance, squared-ReLU channel mix, "
                    "2 blocks x 96"},
    {"name": "transformer_xl_relpos", "builder": "transformer_xl_relpos", "args": {},
     "inputs": [["input_ids", [48], "int64", 3000]], "classes": 3000, "label_shape": [48],
     "rows": [[4, "adam"], [8, "momentum"]],
     "description": "Transformer-XL attention (no memory): sinusoid relative table through r_net, "
                    "r_w_bias / r_r_bias, rel_shift by zero column cat + view + slice, causal masked_fill, post-LN, "
                    "2 x 128"},
    {"name": "gqa_decoder", "builder": "gqa_decoder", "args": {},
     "inputs": [["input_ids", [64], "int64", 2000]], "classes": 2000, "label_shape": [64],
     "rows": [[4, "adamw"], [8, "sgd"]],
     "description": "Decoder LM with grouped-query attention: 8 query heads over 2 key/value heads (HF repeat_kv: "
                    "expand + reshape), additive -inf causal mask buffer, pre-LN GELU MLP, 2 layers x 128"},
    {"name": "pointnet_tnet", "builder": "pointnet_tnet", "args": {},
     "inputs": [["input", [3, 512], "float32", 0]], "classes": 10, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "PointNet with input (3x3) and feature (64x64) T-Nets: predicted matrix + identity buffer, "
                    "torch.bmm, max over 512 points, orthogonality term ||I - A A^T|| subtracted from the logits"},
    {"name": "segformer_lite", "builder": "segformer_lite", "args": {},
     "inputs": IMG(64), "classes": 5, "label_shape": [64, 64], "rows": [[2, "adamw"], [8, "sgd"]],
     "description": "SegFormer-style: overlapping patch embeddings (7x7 s4, 3x3 s2), efficient self-attention with "
                    "keys / values from a strided conv + LayerNorm (reduction 4, 2), Mix-FFN (Linear, depthwise "
                    "3x3 in image layout, GELU), all-MLP decoder with bilinear upsampling, 64x64 segmentation"},
    {"name": "axial_attention", "builder": "axial_attention", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Axial attention: conv stem to 16x16 x 64, then 2 blocks of attention along rows and along "
                    "columns of a channels-last map (permute + reshape to sequences, 4 heads), LayerNorm, MLP"},
    {"name": "involution_net", "builder": "involution_net", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[4, "adam"], [8, "momentum"]],
     "description": "RedNet-style involution bottlenecks: a per-pixel 7x7 kernel per group generated from the input "
                    "(1x1 reduce + BN + ReLU, 1x1 span), applied to F.unfold(x) by multiply and sum, 32x32 RGB"},
    {"name": "memn2n", "builder": "memn2n", "args": {},
     "inputs": [["story", [10, 6], "int64", 500], ["query", [6], "int64", 500]], "classes": 500,
     "rows": [[32, "adam"], [128, "sgd"]],
     "description": "End-to-end memory network: bag-of-words sentence memories with a temporal encoding, 3 hops "
                    "of softmax over 10 memories, adjacent weight tying (4 Embedding(500, 64)), answer Linear"},
    {"name": "esim_nli", "builder": "esim_nli", "args": {},
     "inputs": [["premise", [32], "int64", 3000], ["hypothesis", [24], "int64", 3000]], "classes": 3,
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "ESIM: shared Embedding + BiLSTM encoder of both sentences, soft alignment e = a b^T with "
                    "softmax both ways, [a, a~, a - a~, a * a~] projected, composition BiLSTM, mean + max pooling"},
    {"name": "din_attention", "builder": "din_attention", "args": {},
     "inputs": [["item", [1], "int64", 5000], ["history", [20], "int64", 5000], ["dense", [8], "float32", 0]],
     "classes": 2, "rows": [[64, "adam"], [256, "adagrad"]],
     "description": "Deep Interest Network: Embedding(5000, 32, padding_idx=0), activation unit over [q, k, "
                    "q - k, q * k] (Linear, PReLU with one slope, Linear), scores times the non-pad mask (no "
                    "softmax), weighted history sum, PReLU MLP"},
    {"name": "adain_style", "builder": "adain_style", "args": {},
     "inputs": [["content", [3, 64, 64], "float32", 0], ["style", [3, 64, 64], "float32", 0]], "classes": 3,
     "label_shape": [64, 64], "rows": [[2, "adam"], [8, "sgd"]],
     "description": "AdaIN style transfer: content and style through one conv encoder, (c - mean) / std * s_std + "
                    "s_mean with var_mean statistics by hand, decoder of ReflectionPad2d + conv and nearest x2 "
                    "upsampling, per-pixel 3 classes"},
    {"name": "mdn_grid", "builder": "mdn_grid", "args": {},
     "inputs": [["input", [16], "float32", 0]], "classes": 24, "rows": [[64, "adam"], [256, "rmsprop"]],
     "description": "Mixture density network: tanh MLP to 8 components (log_softmax weights, 2-D means, log "
                    "sigmas), log-density of 24 fixed grid points (buffer) by logsumexp over components"},
    {"name": "cyclegan_resnet_gen", "builder": "cyclegan_resnet_gen", "args": {},
     "inputs": IMG(64), "classes": 3, "label_shape": [64, 64], "rows": [[1, "adam"], [4, "sgd"]],
     "description": "CycleGAN ResNet generator: ReflectionPad2d(3) 7x7 conv, InstanceNorm2d, two stride-2 downs, "
                    "4 residual blocks (ReflectionPad2d(1)), ConvTranspose2d ups, tanh; per-pixel 3 classes"},
    {"name": "clip_dual", "builder": "clip_dual", "args": {},
     "inputs": [["image", [3, 32, 32], "float32", 0], ["text_ids", [16], "int64", 1000]], "classes": 4,
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "CLIP-style dual encoder: CNN image tower, causal nn.TransformerEncoderLayer text tower "
                    "(norm_first, GELU) pooled at argmax(ids) by advanced indexing, projections, F.normalize, "
                    "logit_scale.exp() x img @ txt^T ([B, B], targets < 4)"},
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

    if kind == "retnet_retention":
        class Retention(nn.Module):
            def __init__(self, d, heads, t):
                super().__init__()
                self.heads = heads
                self.q = nn.Linear(d, d, bias=False)
                self.k = nn.Linear(d, d, bias=False)
                self.v = nn.Linear(d, d, bias=False)
                self.g = nn.Linear(d, d, bias=False)
                self.o = nn.Linear(d, d, bias=False)
                self.gn = nn.GroupNorm(heads, d)
                gamma = 1 - 2.0 ** (-5 - torch.arange(heads).float())
                n = torch.arange(t).float()
                diff = n[:, None] - n[None, :]
                decay = gamma[:, None, None] ** diff.clamp(min=0) * (diff >= 0).float()
                self.register_buffer("decay", decay.unsqueeze(0), persistent=False)   # [1, h, T, T]

            def forward(self, x):
                b, t, d = x.shape
                q = heads_of(self.q(x), self.heads)
                k = heads_of(self.k(x), self.heads) / math.sqrt(d // self.heads)
                v = heads_of(self.v(x), self.heads)
                r = merge(((q @ k.transpose(-1, -2)) * self.decay) @ v)
                r = self.gn(r.reshape(b * t, d)).view(b, t, d)
                return self.o(F.silu(self.g(x)) * r)

        class Net(nn.Module):
            def __init__(self, d=128, heads=4, t=48):
                super().__init__()
                self.emb = nn.Embedding(3000, d)
                self.blocks = nn.ModuleList()
                for _ in range(2):
                    self.blocks.append(nn.ModuleDict({
                        "n1": nn.LayerNorm(d), "ret": Retention(d, heads, t), "n2": nn.LayerNorm(d),
                        "ff": nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))}))
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                x = self.emb(ids)
                for blk in self.blocks:
                    x = x + blk["ret"](blk["n1"](x))
                    x = x + blk["ff"](blk["n2"](x))
                return self.fc(self.norm(x)).transpose(1, 2)
        return Net()

    if kind == "linear_attention_elu":
        class Layer(nn.Module):
            def __init__(self, d=96, heads=4):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)
                self.n1 = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
                self.n2 = nn.LayerNorm(d)

            def forward(self, x):
                q, k, v = self.qkv(self.n1(x)).chunk(3, dim=-1)
                q = F.elu(heads_of(q, self.heads)) + 1
                k = F.elu(heads_of(k, self.heads)) + 1
                v = heads_of(v, self.heads)
                kv = k.transpose(-1, -2) @ v                                     # [B, h, dh, dh]
                z = 1.0 / (q @ k.sum(dim=2, keepdim=True).transpose(-1, -2) + 1e-6)  # [B, h, T, 1]
                x = x + self.o(merge((q @ kv) * z))
                return x + self.ff(self.n2(x))

        class Net(nn.Module):
            def __init__(self, din=32, d=96):
                super().__init__()
                self.inp = nn.Linear(din, d)
                self.layers = nn.Sequential(Layer(d), Layer(d), Layer(d))
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                return self.fc(self.layers(self.inp(x)).mean(dim=1))
        return Net()

    if kind == "rwkv_timemix":
        class TimeMix(nn.Module):
            def __init__(self, d, t):
                super().__init__()
                self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
                self.mix_k = nn.Parameter(torch.rand(1, 1, d))
                self.mix_v = nn.Parameter(torch.rand(1, 1, d))
                self.mix_r = nn.Parameter(torch.rand(1, 1, d))
                self.time_decay = nn.Parameter(torch.linspace(-3, 0, d))
                self.time_first = nn.Parameter(torch.full((d,), math.log(0.3)))
                self.key = nn.Linear(d, d, bias=False)
                self.value = nn.Linear(d, d, bias=False)
                self.receptance = nn.Linear(d, d, bias=False)
                self.output = nn.Linear(d, d, bias=False)
                n = torch.arange(t).float()
                dist = n[:, None] - 1 - n[None, :]                        # t - 1 - s
                self.register_buffer("dist", dist.clamp(min=0), persistent=False)
                self.register_buffer("past", (dist >= 0).float(), persistent=False)

            def forward(self, x):
                xx = self.time_shift(x)
                k = self.key(x * self.mix_k + xx * (1 - self.mix_k))
                v = self.value(x * self.mix_v + xx * (1 - self.mix_v))
                r = self.receptance(x * self.mix_r + xx * (1 - self.mix_r))
                w = -torch.exp(self.time_decay)                            # [C]
                decay = torch.exp(w[:, None, None] * self.dist) * self.past  # [C, T, T]
                ek = torch.exp(k.clamp(max=30)).transpose(1, 2)            # [B, C, T]
                a = decay.unsqueeze(0) * ek.unsqueeze(2)                   # [B, C, T, T]
                vt = v.transpose(1, 2)
                bonus = torch.exp(self.time_first[None, :, None]) * ek    # [B, C, T]
                num = (a @ vt.unsqueeze(-1)).squeeze(-1) + bonus * vt
                den = a.sum(dim=-1) + bonus
                wkv = (num / den).transpose(1, 2)
                return self.output(torch.sigmoid(r) * wkv)

        class ChannelMix(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
                self.mix_k = nn.Parameter(torch.rand(1, 1, d))
                self.mix_r = nn.Parameter(torch.rand(1, 1, d))
                self.key = nn.Linear(d, 4 * d, bias=False)
                self.value = nn.Linear(4 * d, d, bias=False)
                self.receptance = nn.Linear(d, d, bias=False)

            def forward(self, x):
                xx = self.time_shift(x)
                k = torch.square(torch.relu(self.key(x * self.mix_k + xx * (1 - self.mix_k))))
                return torch.sigmoid(self.receptance(x * self.mix_r + xx * (1 - self.mix_r))) * self.value(k)

        class Net(nn.Module):
            def __init__(self, d=96, t=32):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.ln0 = nn.LayerNorm(d)
                self.blocks = nn.ModuleList([nn.ModuleDict({
                    "ln1": nn.LayerNorm(d), "att": TimeMix(d, t), "ln2": nn.LayerNorm(d), "ffn": ChannelMix(d)})
                    for _ in range(2)])
                self.ln_out = nn.LayerNorm(d)
                self.head = nn.Linear(d, classes, bias=False)

            def forward(self, ids):
                x = self.ln0(self.emb(ids))
                for blk in self.blocks:
                    x = x + blk["att"](blk["ln1"](x))
                    x = x + blk["ffn"](blk["ln2"](x))
                return self.head(self.ln_out(x)).transpose(1, 2)
        return Net()

    if kind == "transformer_xl_relpos":
        class RelLayer(nn.Module):
            def __init__(self, d, heads, t):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d, bias=False)
                self.r_net = nn.Linear(d, d, bias=False)
                self.o = nn.Linear(d, d, bias=False)
                self.r_w_bias = nn.Parameter(torch.zeros(heads, d // heads))
                self.r_r_bias = nn.Parameter(torch.zeros(heads, d // heads))
                self.n1 = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Dropout(0.1), nn.Linear(4 * d, d))
                self.n2 = nn.LayerNorm(d)
                self.drop = nn.Dropout(0.1)

            @staticmethod
            def rel_shift(x):
                b, h, q, k = x.shape
                zero_pad = x.new_zeros((b, h, q, 1))
                padded = torch.cat([zero_pad, x], dim=-1).view(b, h, k + 1, q)
                return padded[:, :, 1:].view_as(x)

            def forward(self, x, pos, mask):
                b, t, d = x.shape
                h, dh = self.heads, d // self.heads
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                q = q.view(b, t, h, dh)
                k = heads_of(k, h)
                v = heads_of(v, h)
                r = self.r_net(pos).view(t, h, dh).permute(1, 2, 0)           # [h, dh, T]
                ac = (q + self.r_w_bias).transpose(1, 2) @ k.transpose(-1, -2)
                bd = self.rel_shift((q + self.r_r_bias).transpose(1, 2) @ r)
                score = ((ac + bd) / math.sqrt(dh)).masked_fill(mask, -1e4)
                a = merge(self.drop(score.softmax(dim=-1)) @ v)
                x = self.n1(x + self.drop(self.o(a)))
                return self.n2(x + self.ff(x))

        class Net(nn.Module):
            def __init__(self, d=128, heads=4, t=48):
                super().__init__()
                self.emb = nn.Embedding(3000, d)
                pos_seq = torch.arange(t - 1, -1, -1.0)
                inv_freq = 1 / (10000 ** (torch.arange(0.0, d, 2.0) / d))
                sinusoid = pos_seq[:, None] * inv_freq[None, :]
                self.register_buffer("pos", torch.cat([sinusoid.sin(), sinusoid.cos()], dim=-1), persistent=False)
                self.register_buffer("mask", torch.triu(torch.ones(t, t, dtype=torch.bool), 1), persistent=False)
                self.layers = nn.ModuleList([RelLayer(d, heads, t) for _ in range(2)])
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                x = self.emb(ids) * math.sqrt(self.emb.embedding_dim)
                for layer in self.layers:
                    x = layer(x, self.pos, self.mask)
                return self.fc(x).transpose(1, 2)
        return Net()

    if kind == "gqa_decoder":
        class Layer(nn.Module):
            def __init__(self, d=128, heads=8, kv_heads=2):
                super().__init__()
                self.heads, self.kv_heads, self.dh = heads, kv_heads, d // heads
                self.q = nn.Linear(d, d, bias=False)
                self.k = nn.Linear(d, kv_heads * self.dh, bias=False)
                self.v = nn.Linear(d, kv_heads * self.dh, bias=False)
                self.o = nn.Linear(d, d, bias=False)
                self.n1 = nn.LayerNorm(d)
                self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                self.n2 = nn.LayerNorm(d)

            def repeat_kv(self, x):  # transformers' repeat_kv
                b, kvh, t, dh = x.shape
                rep = self.heads // kvh
                return x[:, :, None, :, :].expand(b, kvh, rep, t, dh).reshape(b, kvh * rep, t, dh)

            def forward(self, x, mask):
                h = self.n1(x)
                q = heads_of(self.q(h), self.heads)
                k = self.repeat_kv(heads_of(self.k(h), self.kv_heads))
                v = self.repeat_kv(heads_of(self.v(h), self.kv_heads))
                w = (q @ k.transpose(-1, -2)) / math.sqrt(self.dh) + mask
                x = x + self.o(merge(w.softmax(dim=-1) @ v))
                return x + self.ff(self.n2(x))

        class Net(nn.Module):
            def __init__(self, d=128, t=64):
                super().__init__()
                self.emb = nn.Embedding(2000, d)
                self.pos = nn.Parameter(torch.zeros(1, t, d))
                self.register_buffer("mask", torch.triu(torch.full((t, t), float("-inf")), 1), persistent=False)
                self.layers = nn.ModuleList([Layer(d), Layer(d)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes, bias=False)

            def forward(self, ids):
                x = self.emb(ids) + self.pos
                for layer in self.layers:
                    x = layer(x, self.mask)
                return self.fc(self.norm(x)).transpose(1, 2)
        return Net()

    if kind == "pointnet_tnet":
        def shared(cin, cout):
            return nn.Sequential(nn.Conv1d(cin, cout, 1), nn.BatchNorm1d(cout), nn.ReLU())

        class TNet(nn.Module):
            def __init__(self, k):
                super().__init__()
                self.k = k
                self.convs = nn.Sequential(shared(k, 64), shared(64, 128), shared(128, 512))
                self.fc = nn.Sequential(nn.Linear(512, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Linear(256, k * k))
                self.register_buffer("eye", torch.eye(k).flatten().unsqueeze(0), persistent=False)

            def forward(self, x):
                m = self.convs(x).max(dim=2)[0]
                return (self.fc(m) + self.eye).view(-1, self.k, self.k)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.tnet3 = TNet(3)
                self.conv1 = nn.Sequential(shared(3, 64), shared(64, 64))
                self.tnet64 = TNet(64)
                self.conv2 = nn.Sequential(shared(64, 128), shared(128, 512))
                self.head = nn.Sequential(nn.Linear(512, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.3),
                                          nn.Linear(256, classes))
                self.register_buffer("eye64", torch.eye(64).unsqueeze(0), persistent=False)

            def forward(self, x):
                t3 = self.tnet3(x)
                x = torch.bmm(x.transpose(1, 2), t3).transpose(1, 2)
                x = self.conv1(x)
                t64 = self.tnet64(x)
                x = torch.bmm(x.transpose(1, 2), t64).transpose(1, 2)
                g = self.conv2(x).max(dim=2)[0]
                reg = torch.norm(self.eye64 - torch.bmm(t64, t64.transpose(1, 2)), dim=(1, 2))
                return self.head(g) - 0.001 * reg.unsqueeze(1)
        return Net()

    if kind == "segformer_lite":
        class EfficientAttention(nn.Module):
            def __init__(self, d, heads, sr):
                super().__init__()
                self.heads = heads
                self.q = nn.Linear(d, d)
                self.kv = nn.Linear(d, 2 * d)
                self.o = nn.Linear(d, d)
                self.sr = nn.Conv2d(d, d, sr, sr)
                self.sr_norm = nn.LayerNorm(d)

            def forward(self, x, hh, ww):
                b, n, d = x.shape
                q = heads_of(self.q(x), self.heads)
                r = self.sr(x.transpose(1, 2).reshape(b, d, hh, ww)).flatten(2).transpose(1, 2)
                k, v = self.kv(self.sr_norm(r)).chunk(2, dim=-1)
                w = (q @ heads_of(k, self.heads).transpose(-1, -2)) / math.sqrt(d // self.heads)
                return self.o(merge(w.softmax(dim=-1) @ heads_of(v, self.heads)))

        class MixFFN(nn.Module):
            def __init__(self, d, hidden):
                super().__init__()
                self.fc1 = nn.Linear(d, hidden)
                self.dw = nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden)
                self.fc2 = nn.Linear(hidden, d)

            def forward(self, x, hh, ww):
                b, n, _ = x.shape
                h = self.fc1(x)
                h = self.dw(h.transpose(1, 2).reshape(b, -1, hh, ww)).flatten(2).transpose(1, 2)
                return self.fc2(F.gelu(h))

        class Block(nn.Module):
            def __init__(self, d, heads, sr):
                super().__init__()
                self.n1 = nn.LayerNorm(d)
                self.attn = EfficientAttention(d, heads, sr)
                self.n2 = nn.LayerNorm(d)
                self.ffn = MixFFN(d, 4 * d)

            def forward(self, x, hh, ww):
                x = x + self.attn(self.n1(x), hh, ww)
                return x + self.ffn(self.n2(x), hh, ww)

        class Stage(nn.Module):
            def __init__(self, cin, d, k, s, heads, sr):
                super().__init__()
                self.embed = nn.Conv2d(cin, d, k, s, k // 2)
                self.embed_norm = nn.LayerNorm(d)
                self.blocks = nn.ModuleList([Block(d, heads, sr), Block(d, heads, sr)])
                self.norm = nn.LayerNorm(d)

            def forward(self, x):
                x = self.embed(x)
                b, d, hh, ww = x.shape
                x = self.embed_norm(x.flatten(2).transpose(1, 2))
                for blk in self.blocks:
                    x = blk(x, hh, ww)
                return self.norm(x).transpose(1, 2).reshape(b, d, hh, ww)

        class Net(nn.Module):
            def __init__(self, e=64):
                super().__init__()
                self.s1 = Stage(3, 32, 7, 4, 1, 4)      # 16x16
                self.s2 = Stage(32, 64, 3, 2, 2, 2)     # 8x8
                self.l1 = nn.Linear(32, e)
                self.l2 = nn.Linear(64, e)
                self.fuse = nn.Sequential(nn.Conv2d(2 * e, e, 1, bias=False), nn.BatchNorm2d(e), nn.ReLU())
                self.cls = nn.Conv2d(e, classes, 1)

            def forward(self, x):
                f1 = self.s1(x)
                f2 = self.s2(f1)
                b, _, hh, ww = f1.shape
                m1 = self.l1(f1.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, -1, hh, ww)
                m2 = self.l2(f2.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, -1, hh // 2, ww // 2)
                m2 = F.interpolate(m2, scale_factor=2.0, mode="bilinear", align_corners=False)
                y = self.cls(self.fuse(torch.cat([m2, m1], dim=1)))
                return F.interpolate(y, scale_factor=4.0, mode="bilinear", align_corners=False)
        return Net()

    if kind == "axial_attention":
        class AxialAttention(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.o = nn.Linear(d, d)

            def forward(self, x):  # x [N, L, D]: attention along L
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                q, k, v = (heads_of(a, self.heads) for a in (q, k, v))
                w = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
                return self.o(merge(w.softmax(dim=-1) @ v))

        class Block(nn.Module):
            def __init__(self, d=64, heads=4):
                super().__init__()
                self.n1 = nn.LayerNorm(d)
                self.rows = AxialAttention(d, heads)
                self.n2 = nn.LayerNorm(d)
                self.cols = AxialAttention(d, heads)
                self.n3 = nn.LayerNorm(d)
                self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

            def forward(self, x):  # [B, H, W, D]
                b, hh, ww, d = x.shape
                x = x + self.rows(self.n1(x).reshape(b * hh, ww, d)).view(b, hh, ww, d)
                c = self.n2(x).permute(0, 2, 1, 3).reshape(b * ww, hh, d)
                x = x + self.cols(c).view(b, ww, hh, d).permute(0, 2, 1, 3)
                return x + self.mlp(self.n3(x))

        class Net(nn.Module):
            def __init__(self, d=64):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                                          nn.Conv2d(32, d, 3, 2, 1, bias=False), nn.BatchNorm2d(d), nn.ReLU())
                self.blocks = nn.Sequential(Block(d), Block(d))
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                x = self.blocks(self.stem(x).permute(0, 2, 3, 1))
                return self.fc(self.norm(x).mean(dim=(1, 2)))
        return Net()

    if kind == "involution_net":
        class Involution(nn.Module):
            def __init__(self, c, k=7, group_ch=16, reduction=4):
                super().__init__()
                self.k, self.groups = k, c // group_ch
                self.reduce = nn.Sequential(nn.Conv2d(c, c // reduction, 1, bias=False),
                                            nn.BatchNorm2d(c // reduction), nn.ReLU())
                self.span = nn.Conv2d(c // reduction, k * k * self.groups, 1)

            def forward(self, x):
                b, c, hh, ww = x.shape
                kk, g = self.k * self.k, self.groups
                weight = self.span(self.reduce(x)).view(b, g, 1, kk, hh, ww)
                patches = F.unfold(x, self.k, padding=self.k // 2).view(b, g, c // g, kk, hh, ww)
                return (weight * patches).sum(dim=3).view(b, c, hh, ww)

        class Bottleneck(nn.Module):
            def __init__(self, c, mid):
                super().__init__()
                self.body = nn.Sequential(nn.Conv2d(c, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
                                          Involution(mid), nn.BatchNorm2d(mid), nn.ReLU(),
                                          nn.Conv2d(mid, c, 1, bias=False), nn.BatchNorm2d(c))

            def forward(self, x):
                return F.relu(x + self.body(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
                self.b1 = Bottleneck(64, 32)
                self.down = nn.Sequential(nn.Conv2d(64, 128, 3, 2, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU())
                self.b2 = Bottleneck(128, 64)
                self.b3 = Bottleneck(128, 64)
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                x = self.b3(self.b2(self.down(self.b1(self.stem(x)))))
                return self.fc(x.mean(dim=(2, 3)))
        return Net()

    if kind == "memn2n":
        class Net(nn.Module):
            def __init__(self, vocab=500, d=64, memories=10, hops=3):
                super().__init__()
                self.hops = hops
                self.emb = nn.ModuleList([nn.Embedding(vocab, d) for _ in range(hops + 1)])   # A1, C1 = A2, ...
                self.temporal = nn.ParameterList([nn.Parameter(torch.randn(memories, d) * 0.1)
                                                  for _ in range(hops + 1)])
                self.fc = nn.Linear(d, classes, bias=False)

            def forward(self, story, query):
                u = self.emb[0](query).sum(dim=1)                                   # [B, d]
                for hop in range(self.hops):
                    m = self.emb[hop](story).sum(dim=2) + self.temporal[hop]      # [B, M, d]
                    c = self.emb[hop + 1](story).sum(dim=2) + self.temporal[hop + 1]
                    p = torch.softmax((m @ u.unsqueeze(2)).squeeze(2), dim=1)     # [B, M]
                    u = u + (p.unsqueeze(1) @ c).squeeze(1)
                return self.fc(u)
        return Net()

    if kind == "esim_nli":
        class Net(nn.Module):
            def __init__(self, vocab=3000, e=100, h=96):
                super().__init__()
                self.emb = nn.Embedding(vocab, e)
                self.encode = nn.LSTM(e, h, batch_first=True, bidirectional=True)
                self.project = nn.Sequential(nn.Linear(8 * h, h), nn.ReLU())
                self.compose = nn.LSTM(h, h, batch_first=True, bidirectional=True)
                self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(8 * h, h), nn.Tanh(), nn.Linear(h, classes))

            def forward(self, premise, hypothesis):
                a, _ = self.encode(self.emb(premise))          # [B, La, 2h]
                b, _ = self.encode(self.emb(hypothesis))       # [B, Lb, 2h]
                e = a @ b.transpose(1, 2)                      # [B, La, Lb]
                a_t = e.softmax(dim=2) @ b
                b_t = e.transpose(1, 2).softmax(dim=2) @ a
                va, _ = self.compose(self.project(torch.cat([a, a_t, a - a_t, a * a_t], dim=-1)))
                vb, _ = self.compose(self.project(torch.cat([b, b_t, b - b_t, b * b_t], dim=-1)))
                v = torch.cat([va.mean(dim=1), va.max(dim=1)[0], vb.mean(dim=1), vb.max(dim=1)[0]], dim=-1)
                return self.head(v)
        return Net()

    if kind == "din_attention":
        class Net(nn.Module):
            def __init__(self, items=5000, e=32, dense=8):
                super().__init__()
                self.emb = nn.Embedding(items, e, padding_idx=0)
                self.unit = nn.Sequential(nn.Linear(4 * e, 64), nn.PReLU(), nn.Linear(64, 1))  # one slope: [B, L, 64]
                self.mlp = nn.Sequential(nn.Linear(2 * e + dense, 200), nn.PReLU(200), nn.Linear(200, 80),
                                         nn.PReLU(80), nn.Linear(80, classes))

            def forward(self, item, history, dense):
                q = self.emb(item)                                  # [B, 1, e]
                k = self.emb(history)                               # [B, L, e]
                qq = q.expand_as(k)
                score = self.unit(torch.cat([qq, k, qq - k, qq * k], dim=-1))   # [B, L, 1]
                score = score * (history > 0).float().unsqueeze(-1)
                interest = (score * k).sum(dim=1)
                return self.mlp(torch.cat([q.squeeze(1), interest, dense], dim=-1))
        return Net()

    if kind == "adain_style":
        def adain(c, s, eps=1e-5):
            c_var, c_mean = torch.var_mean(c, dim=(2, 3), keepdim=True, unbiased=False)
            s_var, s_mean = torch.var_mean(s, dim=(2, 3), keepdim=True, unbiased=False)
            return (c - c_mean) / torch.sqrt(c_var + eps) * torch.sqrt(s_var + eps) + s_mean

        def rconv(cin, cout, act=True):
            layers = [nn.ReflectionPad2d(1), nn.Conv2d(cin, cout, 3)]
            return nn.Sequential(*(layers + [nn.ReLU()] if act else layers))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1), nn.ReLU(), nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU(),
                                         nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU())
                self.dec = nn.Sequential(rconv(128, 64), nn.Upsample(scale_factor=2, mode="nearest"),
                                         rconv(64, 32), nn.Upsample(scale_factor=2, mode="nearest"),
                                         rconv(32, 32), rconv(32, classes, act=False))

            def forward(self, content, style):
                return self.dec(adain(self.enc(content), self.enc(style)))
        return Net()

    if kind == "mdn_grid":
        class Net(nn.Module):
            def __init__(self, din=16, h=128, comps=8):
                super().__init__()
                self.comps = comps
                self.trunk = nn.Sequential(nn.Linear(din, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh())
                self.pi = nn.Linear(h, comps)
                self.mu = nn.Linear(h, comps * 2)
                self.log_sigma = nn.Linear(h, comps * 2)
                g = torch.linspace(-2, 2, classes)
                self.register_buffer("grid", torch.stack([g, g.flip(0) * 0.5], dim=1), persistent=False)  # [G, 2]

            def forward(self, x):
                hdn = self.trunk(x)
                b = hdn.shape[0]
                log_pi = F.log_softmax(self.pi(hdn), dim=-1)                     # [B, K]
                mu = self.mu(hdn).view(b, 1, self.comps, 2)
                log_sigma = self.log_sigma(hdn).view(b, 1, self.comps, 2).clamp(-5, 5)
                z = (self.grid[None, :, None, :] - mu) * torch.exp(-log_sigma)  # [B, G, K, 2]
                log_n = (-0.5 * z * z - log_sigma - 0.5 * math.log(2 * math.pi)).sum(dim=-1)
                return torch.logsumexp(log_n + log_pi.unsqueeze(1), dim=-1)     # [B, G]
        return Net()

    if kind == "cyclegan_resnet_gen":
        class ResBlock(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.body = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), nn.InstanceNorm2d(c), nn.ReLU(),
                                          nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), nn.InstanceNorm2d(c))

            def forward(self, x):
                return x + self.body(x)

        def down(cin, cout):
            return [nn.Conv2d(cin, cout, 3, 2, 1), nn.InstanceNorm2d(cout), nn.ReLU()]

        def up(cin, cout):
            return [nn.ConvTranspose2d(cin, cout, 3, 2, 1, output_padding=1), nn.InstanceNorm2d(cout), nn.ReLU()]

        return nn.Sequential(nn.ReflectionPad2d(3), nn.Conv2d(3, 32, 7), nn.InstanceNorm2d(32), nn.ReLU(),
                             *down(32, 64), *down(64, 128), *[ResBlock(128) for _ in range(4)],
                             *up(128, 64), *up(64, 32), nn.ReflectionPad2d(3), nn.Conv2d(32, classes, 7), nn.Tanh())

    if kind == "clip_dual":
        class Net(nn.Module):
            def __init__(self, d=128, t=16, e=64):
                super().__init__()
                self.image = nn.Sequential(
                    nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(32, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(64, 128, 3, 1, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, e, bias=False))
                self.tok = nn.Embedding(1000, d)
                self.pos = nn.Parameter(torch.zeros(t, d))
                self.layers = nn.ModuleList([nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, activation="gelu",
                                                                        batch_first=True, norm_first=True)
                                             for _ in range(2)])
                self.ln_final = nn.LayerNorm(d)
                self.text_projection = nn.Parameter(torch.randn(d, e) * d ** -0.5)
                self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
                self.register_buffer("mask", torch.triu(torch.full((t, t), float("-inf")), 1), persistent=False)

            def forward(self, image, ids):
                x = self.tok(ids) + self.pos
                for layer in self.layers:
                    x = layer(x, src_mask=self.mask)
                x = self.ln_final(x)
                txt = x[torch.arange(x.shape[0]), ids.argmax(dim=-1)] @ self.text_projection
                img = F.normalize(self.image(image), dim=-1)
                txt = F.normalize(txt, dim=-1)
                return self.logit_scale.exp() * img @ txt.t()
        return Net()

    raise ValueError("unknown builder " + kind)
