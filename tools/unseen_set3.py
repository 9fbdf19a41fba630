"""The third held-out set of real architectures (tools/unseen_models.py --set unseen3).

Fixed on 2026-12-06, after the first two sets (bench/reference/unseen, bench/reference/unseen2) had
been compared more than once and so no longer told anyone how the planner does on a model like none
it has seen. Nobody had planned any of these before the list was committed. Architectures are ones a
user writes or takes from torchvision 0.14 and that neither the zoo (tools/models.py) nor the first
two sets have: Swin V2 and MaxViT, FCN and LR-ASPP segmentation, a mixed-convolution video net, a
LLaMA-style decoder (RMSNorm, rotary positions, SwiGLU), WaveNet's gated dilated convolutions, a
pixel-shuffle super-resolution net, dense graph attention, an unrolled ConvLSTM, gMLP's spatial
gating, weight-standardised GroupNorm ResNets (BiT), QuartzNet's separable 1-D convolutions, an
EmbeddingBag text classifier, a 1-D audio U-Net with instance norm and transposed convolutions, a
cosine-margin (ArcFace-style) head, an hourglass pose net, N-BEATS, a MobileViT block, a character-
CNN + two-layer BiLSTM tagger, and a bilinear-upsampling decoder.

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "swin_v2_t", "builder": "swin_v2", "args": {"patch_size": [4, 4], "embed_dim": 96, "depths": [2, 2, 6, 2],
                                                     "num_heads": [3, 6, 12, 24], "window_size": [8, 8],
                                                     "stochastic_depth_prob": 0.0},
     "inputs": IMG(64), "classes": 100, "rows": [[2, "adamw"], [4, "sgd"]],
     "description": "torchvision Swin Transformer V2-T (cosine attention, log-spaced continuous position "
                    "bias MLP), stochastic depth off, 64x64 RGB"},
    {"name": "maxvit_t", "builder": "maxvit", "args": {"input_size": [224, 224], "stem_channels": 64,
                                                    "partition_size": 7, "block_channels": [64, 128, 256, 512],
                                                    "block_layers": [2, 2, 5, 2], "head_dim": 32,
                                                    "stochastic_depth_prob": 0.0},
     "inputs": IMG(224), "classes": 100, "rows": [[1, "sgd"], [2, "adamw"]],
     "description": "torchvision MaxViT-T (MBConv + block and grid attention), stochastic depth off, 224x224 RGB"},
    {"name": "fcn_resnet50", "builder": "tv_seg", "args": {"fn": "fcn_resnet50"},
     "inputs": IMG(64), "classes": 6, "label_shape": [64, 64], "rows": [[1, "momentum"], [2, "adam"]],
     "description": "torchvision FCN on a dilated ResNet-50, 6-class segmentation of 64x64 RGB"},
    {"name": "lraspp_mbv3", "builder": "tv_seg_noaux", "args": {"fn": "lraspp_mobilenet_v3_large"},
     "inputs": IMG(96), "classes": 4, "label_shape": [96, 96], "rows": [[2, "adam"], [4, "sgd"]],
     "description": "torchvision LR-ASPP on MobileNetV3-Large (sigmoid-gated pooling branch), 4-class "
                    "segmentation of 96x96 RGB"},
    {"name": "mc3_18", "builder": "tv_video", "args": {"fn": "mc3_18"},
     "inputs": [["input", [3, 8, 56, 56], "float32", 0]], "classes": 10, "rows": [[1, "adam"], [2, "momentum"]],
     "description": "torchvision MC3-18 video net (3-D stem, then 1x3x3 convolutions), 8 frames of 56x56 RGB"},
    {"name": "llama_mini", "builder": "llama_mini", "args": {},
     "inputs": [["input_ids", [64], "int64", 4000]], "classes": 4000, "label_shape": [64],
     "rows": [[2, "adamw"], [6, "sgd"]],
     "description": "LLaMA-style causal LM written by hand: RMSNorm, rotary positions (rotate-half), "
                    "SwiGLU MLP, no biases, masked_fill causal mask, 4 layers x 192, vocab 4000, seq 64"},
    {"name": "wavenet_lite", "builder": "wavenet_lite", "args": {},
     "inputs": [["input", [1, 2000], "float32", 0]], "classes": 64, "label_shape": [2000],
     "rows": [[2, "adam"], [6, "momentum"]],
     "description": "WaveNet-style: causal dilated Conv1d (left F.pad), tanh x sigmoid gate, residual and "
                    "skip 1x1 convolutions, dilations 1-64 twice, 64-way per-sample classes, 2000 samples"},
    {"name": "espcn_sr", "builder": "espcn_sr", "args": {},
     "inputs": IMG(48), "classes": 8, "label_shape": [96, 96], "rows": [[2, "adam"], [8, "sgd"]],
     "description": "EDSR-style super-resolution: residual blocks without norm (x + 0.1 * body), "
                    "nn.PixelShuffle x2, 8-class per-pixel output at 96x96 from 48x48"},
    {"name": "gat_dense", "builder": "gat_dense", "args": {},
     "inputs": [["x", [64, 32], "float32", 0], ["adj", [64, 64], "float32", 0]], "classes": 7,
     "rows": [[4, "adam"], [16, "momentum"]],
     "description": "Dense graph attention (GAT): 2 layers x 4 heads, LeakyReLU(0.2) scores, masked_fill "
                    "where adj <= 0, softmax, dropout on attention, 64 nodes x 32 features, mean readout"},
    {"name": "convlstm", "builder": "convlstm", "args": {},
     "inputs": [["input", [6, 1, 32, 32], "float32", 0]], "classes": 10, "rows": [[2, "adam"], [4, "sgd"]],
     "description": "ConvLSTM unrolled over 6 frames (cat, 3x3 conv to 4 gates, chunk, sigmoid/tanh), "
                    "32 hidden channels at 32x32, mean-pooled classifier"},
    {"name": "gmlp", "builder": "gmlp", "args": {},
     "inputs": [["input", [64, 96], "float32", 0]], "classes": 10, "rows": [[4, "adamw"], [16, "sgd"]],
     "description": "gMLP: 4 blocks x 96 (LayerNorm, Linear to 384, GELU, spatial gating unit: chunk, "
                    "LayerNorm, Linear over the 64 tokens via transpose, multiply), 64 tokens"},
    {"name": "bit_resnet_ws", "builder": "bit_resnet_ws", "args": {},
     "inputs": IMG(64), "classes": 100, "rows": [[2, "momentum"], [4, "adam"]],
     "description": "BiT-style pre-activation ResNet: weight-standardised convolutions (var_mean of the "
                    "weight in forward), GroupNorm(32), 2-2-2 bottleneck blocks x 64..256, 64x64 RGB"},
    {"name": "quartznet_lite", "builder": "quartznet_lite", "args": {},
     "inputs": [["input", [64, 200], "float32", 0]], "classes": 29, "label_shape": [200],
     "rows": [[2, "adam"], [8, "momentum"]],
     "description": "QuartzNet-style ASR: depthwise Conv1d k=33/39/51 + pointwise, BatchNorm1d, ReLU, "
                    "residual per block, 64 mel features x 200 frames, 29 classes per frame"},
    {"name": "fasttext_bag", "builder": "fasttext_bag", "args": {},
     "inputs": [["input_ids", [50], "int64", 20000]], "classes": 5, "rows": [[16, "adagrad"], [64, "adam"]],
     "description": "fastText-style classifier: nn.EmbeddingBag(20000, 64, mode='mean') over bags of 50 "
                    "ids, Linear to 5 classes"},
    {"name": "unet1d_audio", "builder": "unet1d_audio", "args": {},
     "inputs": [["input", [1, 4096], "float32", 0]], "classes": 2, "label_shape": [4096],
     "rows": [[2, "adam"], [4, "sgd"]],
     "description": "1-D audio U-Net: Conv1d k=15 stride 2 + InstanceNorm1d(affine) + LeakyReLU(0.2) "
                    "down 4 levels, ConvTranspose1d up with skip concatenation, 4096 samples"},
    {"name": "arcface_cnn", "builder": "arcface_cnn", "args": {},
     "inputs": IMG(64), "classes": 200, "rows": [[4, "sgd"], [8, "adam"]],
     "description": "Face-embedding CNN (Conv/BN/PReLU, 4 stages) with a cosine head: F.normalize of "
                    "the 128-d embedding and of the class weights, scaled by 30, 64x64 RGB"},
    {"name": "hourglass_pose", "builder": "hourglass_pose", "args": {},
     "inputs": IMG(64), "classes": 16, "label_shape": [32, 32], "rows": [[2, "adam"], [4, "momentum"]],
     "description": "Stacked-hourglass pose net (one stack, depth 3): bottleneck residuals, MaxPool down, "
                    "nearest Upsample up, skip additions, 16 heatmap classes at 32x32 from 64x64"},
    {"name": "nbeats", "builder": "nbeats", "args": {},
     "inputs": [["input", [168], "float32", 0]], "classes": 24, "rows": [[32, "adam"], [128, "sgd"]],
     "description": "N-BEATS generic: 6 blocks of 4 x Linear(512) + ReLU, backcast subtracted from the "
                    "residual, forecasts summed, 168-step history, 24 outputs"},
    {"name": "mobilevit_lite", "builder": "mobilevit_lite", "args": {},
     "inputs": IMG(64), "classes": 100, "rows": [[2, "adam"], [8, "sgd"]],
     "description": "MobileViT-style: inverted residuals (SiLU), then MobileViT blocks (3x3 + 1x1 conv, "
                    "2x2 patches unfolded by reshape/permute, 2 TransformerEncoderLayers, fold back, concat, "
                    "fuse conv), 64x64 RGB"},
    {"name": "bilstm_charcnn", "builder": "bilstm_charcnn", "args": {},
     "inputs": [["word_ids", [30], "int64", 5000], ["char_ids", [30, 12], "int64", 80]], "classes": 9,
     "label_shape": [30], "rows": [[4, "adam"], [16, "sgd"]],
     "description": "NER tagger: char CNN (Embedding 80x24, Conv1d k=3, max over 12 chars) concatenated "
                    "with word embeddings (5000x100), 2-layer bidirectional LSTM 128 with dropout 0.3 between "
                    "layers, 9 tags per word, 30 words"},
    {"name": "bilinear_decoder", "builder": "bilinear_decoder", "args": {},
     "inputs": IMG(64), "classes": 5, "label_shape": [64, 64], "rows": [[2, "adam"], [4, "momentum"]],
     "description": "Encoder (Conv/BN/ReLU, stride 2 x 3) and decoder of F.interpolate(scale 2, bilinear, "
                    "align_corners=False) + Conv, 5-class per-pixel output at 64x64"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind, args = model["builder"], dict(model["args"])
    classes = model["classes"]

    if kind == "tv":
        import torchvision
        fn = args.pop("fn")
        return getattr(torchvision.models, fn)(weights=None, num_classes=classes, **args)
    if kind == "swin_v2":  # swin_v2_t() fixes stochastic_depth_prob=0.2; its configuration, without it
        from torchvision.models.swin_transformer import PatchMergingV2, SwinTransformer, SwinTransformerBlockV2
        return SwinTransformer(num_classes=classes, block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2,
                               **args)
    if kind == "maxvit":  # maxvit_t()'s configuration without stochastic depth
        from torchvision.models.maxvit import MaxVit
        args["input_size"] = tuple(args["input_size"])
        return MaxVit(num_classes=classes, **args)
    if kind in ("tv_seg", "tv_seg_noaux"):
        import torchvision
        extra = {"aux_loss": False} if kind == "tv_seg" else {}

        class Seg(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = getattr(torchvision.models.segmentation, args["fn"])(
                    weights=None, weights_backbone=None, num_classes=classes, **extra)

            def forward(self, x):
                return self.net(x)["out"]
        return Seg()
    if kind == "tv_video":
        import torchvision
        return getattr(torchvision.models.video, args["fn"])(weights=None, num_classes=classes)

    if kind == "llama_mini":
        class RmsNorm(nn.Module):
            def __init__(self, d, eps=1e-6):
                super().__init__()
                self.eps = eps
                self.weight = nn.Parameter(torch.ones(d))

            def forward(self, x):
                return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

        def rotate_half(x):
            x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
            return torch.cat((-x2, x1), dim=-1)

        class Block(nn.Module):
            def __init__(self, d, heads, seq):
                super().__init__()
                self.heads = heads
                self.n1, self.n2 = RmsNorm(d), RmsNorm(d)
                self.q = nn.Linear(d, d, bias=False)
                self.k = nn.Linear(d, d, bias=False)
                self.v = nn.Linear(d, d, bias=False)
                self.o = nn.Linear(d, d, bias=False)
                hidden = 512
                self.gate = nn.Linear(d, hidden, bias=False)
                self.up = nn.Linear(d, hidden, bias=False)
                self.down = nn.Linear(hidden, d, bias=False)
                hd = d // heads
                inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
                freqs = torch.outer(torch.arange(seq).float(), inv)
                emb = torch.cat((freqs, freqs), dim=-1)
                self.register_buffer("cos", emb.cos(), persistent=False)
                self.register_buffer("sin", emb.sin(), persistent=False)
                self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1),
                                     persistent=False)

            def forward(self, x):
                b, t, d = x.shape
                h = self.n1(x)
                q = self.q(h).view(b, t, self.heads, -1).transpose(1, 2)
                k = self.k(h).view(b, t, self.heads, -1).transpose(1, 2)
                v = self.v(h).view(b, t, self.heads, -1).transpose(1, 2)
                q = q * self.cos + rotate_half(q) * self.sin
                k = k * self.cos + rotate_half(k) * self.sin
                att = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
                att = att.masked_fill(self.mask, float("-inf")).softmax(dim=-1)
                y = (att @ v).transpose(1, 2).reshape(b, t, d)
                x = x + self.o(y)
                h = self.n2(x)
                return x + self.down(F.silu(self.gate(h)) * self.up(h))

        class Llama(nn.Module):
            def __init__(self, vocab=4000, d=192, heads=6, layers=4, seq=64):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                self.blocks = nn.Sequential(*[Block(d, heads, seq) for _ in range(layers)])
                self.norm = RmsNorm(d)
                self.head = nn.Linear(d, vocab, bias=False)

            def forward(self, ids):
                return self.head(self.norm(self.blocks(self.emb(ids)))).transpose(1, 2)  # [B, V, T]
        return Llama()

    if kind == "wavenet_lite":
        class Layer(nn.Module):
            def __init__(self, ch, skip, dilation):
                super().__init__()
                self.pad = dilation
                self.filt = nn.Conv1d(ch, ch, 2, dilation=dilation)
                self.gate = nn.Conv1d(ch, ch, 2, dilation=dilation)
                self.res = nn.Conv1d(ch, ch, 1)
                self.skip = nn.Conv1d(ch, skip, 1)

            def forward(self, x):
                p = F.pad(x, (self.pad, 0))
                z = torch.tanh(self.filt(p)) * torch.sigmoid(self.gate(p))
                return x + self.res(z), self.skip(z)

        class WaveNet(nn.Module):
            def __init__(self, ch=32, skip=64):
                super().__init__()
                self.inp = nn.Conv1d(1, ch, 1)
                self.layers = nn.ModuleList([Layer(ch, skip, 2 ** i) for _ in range(2) for i in range(7)])
                self.out1 = nn.Conv1d(skip, skip, 1)
                self.out2 = nn.Conv1d(skip, classes, 1)

            def forward(self, x):
                x = self.inp(x)
                total = 0
                for layer in self.layers:
                    x, s = layer(x)
                    total = total + s
                return self.out2(F.relu(self.out1(F.relu(total))))
        return WaveNet()

    if kind == "espcn_sr":
        class Res(nn.Module):
            def __init__(self, ch):
                super().__init__()
                self.body = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1))

            def forward(self, x):
                return x + 0.1 * self.body(x)

        class Sr(nn.Module):
            def __init__(self, ch=48):
                super().__init__()
                self.head = nn.Conv2d(3, ch, 3, padding=1)
                self.body = nn.Sequential(*[Res(ch) for _ in range(6)])
                self.up = nn.Sequential(nn.Conv2d(ch, ch * 4, 3, padding=1), nn.PixelShuffle(2))
                self.tail = nn.Conv2d(ch, classes, 3, padding=1)

            def forward(self, x):
                h = self.head(x)
                return self.tail(self.up(h + self.body(h)))
        return Sr()

    if kind == "gat_dense":
        class GatLayer(nn.Module):
            def __init__(self, fin, fout, heads):
                super().__init__()
                self.heads, self.fout = heads, fout
                self.w = nn.Linear(fin, heads * fout, bias=False)
                self.a_src = nn.Parameter(torch.randn(heads, fout) * 0.1)
                self.a_dst = nn.Parameter(torch.randn(heads, fout) * 0.1)
                self.drop = nn.Dropout(0.2)

            def forward(self, x, mask):
                b, n, _ = x.shape
                h = self.w(x).view(b, n, self.heads, self.fout)
                src = (h * self.a_src).sum(-1)  # [B, N, H]
                dst = (h * self.a_dst).sum(-1)
                e = F.leaky_relu(src.unsqueeze(2) + dst.unsqueeze(1), 0.2)  # [B, N, N, H]
                e = e.masked_fill(mask.unsqueeze(-1), -1e9)
                att = self.drop(torch.softmax(e, dim=2))
                out = torch.einsum("bijh,bjhf->bihf", att, h)
                return F.elu(out.reshape(b, n, self.heads * self.fout))

        class Gat(nn.Module):
            def __init__(self):
                super().__init__()
                self.l1 = GatLayer(32, 16, 4)
                self.l2 = GatLayer(64, 16, 4)
                self.fc = nn.Linear(64, classes)

            def forward(self, x, adj):
                mask = adj <= 0
                return self.fc(self.l2(self.l1(x, mask), mask).mean(dim=1))
        return Gat()

    if kind == "convlstm":
        class ConvLstm(nn.Module):
            def __init__(self, cin=1, hid=32):
                super().__init__()
                self.hid = hid
                self.gates = nn.Conv2d(cin + hid, 4 * hid, 3, padding=1)
                self.fc = nn.Linear(hid, classes)

            def forward(self, x):  # [B, T, C, H, W]
                b, t, _, hgt, wid = x.shape
                h = x.new_zeros(b, self.hid, hgt, wid)
                c = x.new_zeros(b, self.hid, hgt, wid)
                for i in range(t):
                    i_g, f_g, o_g, g_g = self.gates(torch.cat([x[:, i], h], dim=1)).chunk(4, dim=1)
                    c = torch.sigmoid(f_g) * c + torch.sigmoid(i_g) * torch.tanh(g_g)
                    h = torch.sigmoid(o_g) * torch.tanh(c)
                return self.fc(h.mean(dim=(2, 3)))
        return ConvLstm()

    if kind == "gmlp":
        class Block(nn.Module):
            def __init__(self, d, tokens, hidden):
                super().__init__()
                self.norm = nn.LayerNorm(d)
                self.proj_in = nn.Linear(d, hidden)
                self.sgu_norm = nn.LayerNorm(hidden // 2)
                self.spatial = nn.Linear(tokens, tokens)
                self.proj_out = nn.Linear(hidden // 2, d)

            def forward(self, x):
                h = F.gelu(self.proj_in(self.norm(x)))
                u, v = h.chunk(2, dim=-1)
                v = self.spatial(self.sgu_norm(v).transpose(1, 2)).transpose(1, 2)
                return x + self.proj_out(u * v)

        class Gmlp(nn.Module):
            def __init__(self, d=96, tokens=64, layers=4):
                super().__init__()
                self.blocks = nn.Sequential(*[Block(d, tokens, 4 * d) for _ in range(layers)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                return self.fc(self.norm(self.blocks(x)).mean(dim=1))
        return Gmlp()

    if kind == "bit_resnet_ws":
        class StdConv(nn.Conv2d):
            def forward(self, x):
                var, mean = torch.var_mean(self.weight, dim=[1, 2, 3], keepdim=True, unbiased=False)
                w = (self.weight - mean) / torch.sqrt(var + 1e-10)
                return F.conv2d(x, w, self.bias, self.stride, self.padding, self.dilation, self.groups)

        class PreAct(nn.Module):
            def __init__(self, cin, cout, mid, stride):
                super().__init__()
                self.gn1 = nn.GroupNorm(32, cin)
                self.conv1 = StdConv(cin, mid, 1, bias=False)
                self.gn2 = nn.GroupNorm(32, mid)
                self.conv2 = StdConv(mid, mid, 3, stride=stride, padding=1, bias=False)
                self.gn3 = nn.GroupNorm(32, mid)
                self.conv3 = StdConv(mid, cout, 1, bias=False)
                self.down = StdConv(cin, cout, 1, stride=stride, bias=False) if stride != 1 or cin != cout else None

            def forward(self, x):
                out = F.relu(self.gn1(x))
                res = self.down(out) if self.down is not None else x
                out = self.conv1(out)
                out = self.conv2(F.relu(self.gn2(out)))
                out = self.conv3(F.relu(self.gn3(out)))
                return out + res

        class Bit(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Sequential(StdConv(3, 64, 7, stride=2, padding=3, bias=False),
                                          nn.MaxPool2d(3, stride=2, padding=1))
                blocks, cin = [], 64
                for cout, mid, stride in ((256, 64, 1), (256, 64, 1), (512, 128, 2), (512, 128, 1),
                                          (1024, 256, 2), (1024, 256, 1)):
                    blocks.append(PreAct(cin, cout, mid, stride))
                    cin = cout
                self.body = nn.Sequential(*blocks)
                self.norm = nn.GroupNorm(32, cin)
                self.fc = nn.Linear(cin, classes)

            def forward(self, x):
                h = F.relu(self.norm(self.body(self.stem(x))))
                return self.fc(h.mean(dim=(2, 3)))
        return Bit()

    if kind == "quartznet_lite":
        class Sep(nn.Module):
            def __init__(self, cin, cout, k):
                super().__init__()
                self.dw = nn.Conv1d(cin, cin, k, padding=k // 2, groups=cin, bias=False)
                self.pw = nn.Conv1d(cin, cout, 1, bias=False)
                self.bn = nn.BatchNorm1d(cout)

            def forward(self, x):
                return self.bn(self.pw(self.dw(x)))

        class Block(nn.Module):
            def __init__(self, cin, cout, k, repeat=2):
                super().__init__()
                self.seps = nn.ModuleList([Sep(cin if i == 0 else cout, cout, k) for i in range(repeat)])
                self.res = nn.Sequential(nn.Conv1d(cin, cout, 1, bias=False), nn.BatchNorm1d(cout))

            def forward(self, x):
                h = x
                for i, s in enumerate(self.seps):
                    h = s(h)
                    if i < len(self.seps) - 1:
                        h = F.relu(h)
                return F.relu(h + self.res(x))

        class Quartz(nn.Module):
            def __init__(self):
                super().__init__()
                self.first = nn.Sequential(Sep(64, 128, 33), nn.ReLU())
                self.blocks = nn.Sequential(Block(128, 128, 33), Block(128, 160, 39), Block(160, 192, 51))
                self.last = nn.Sequential(nn.Conv1d(192, 256, 1), nn.ReLU(), nn.Conv1d(256, classes, 1))

            def forward(self, x):
                return self.last(self.blocks(self.first(x)))
        return Quartz()

    if kind == "fasttext_bag":
        class FastText(nn.Module):
            def __init__(self):
                super().__init__()
                self.bag = nn.EmbeddingBag(20000, 64, mode="mean")
                self.fc = nn.Linear(64, classes)

            def forward(self, ids):
                return self.fc(self.bag(ids))
        return FastText()

    if kind == "unet1d_audio":
        def down(cin, cout):
            return nn.Sequential(nn.Conv1d(cin, cout, 15, stride=2, padding=7),
                                 nn.InstanceNorm1d(cout, affine=True), nn.LeakyReLU(0.2))

        class Up(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.up = nn.ConvTranspose1d(cin, cout, 4, stride=2, padding=1)
                self.conv = nn.Sequential(nn.Conv1d(2 * cout, cout, 5, padding=2),
                                          nn.InstanceNorm1d(cout, affine=True), nn.LeakyReLU(0.2))

            def forward(self, x, skip):
                return self.conv(torch.cat([self.up(x), skip], dim=1))

        class Unet1d(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Conv1d(1, 16, 7, padding=3)
                self.downs = nn.ModuleList([down(16, 32), down(32, 64), down(64, 128), down(128, 256)])
                self.ups = nn.ModuleList([Up(256, 128), Up(128, 64), Up(64, 32), Up(32, 16)])
                self.out = nn.Conv1d(16, classes, 1)

            def forward(self, x):
                h = self.inp(x)
                skips = [h]
                for d in self.downs:
                    h = d(h)
                    skips.append(h)
                skips.pop()
                for u in self.ups:
                    h = u(h, skips.pop())
                return self.out(h)
        return Unet1d()

    if kind == "arcface_cnn":
        def stage(cin, cout):
            return [nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(cout), nn.PReLU(cout),
                    nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.PReLU(cout)]

        class Arc(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(*stage(3, 32), *stage(32, 64), *stage(64, 128), *stage(128, 256))
                self.emb = nn.Sequential(nn.Flatten(), nn.Linear(256 * 4 * 4, 128), nn.BatchNorm1d(128))
                self.weight = nn.Parameter(torch.randn(classes, 128) * 0.01)

            def forward(self, x):
                e = F.normalize(self.emb(self.body(x)), dim=1)
                return 30.0 * F.linear(e, F.normalize(self.weight, dim=1))
        return Arc()

    if kind == "hourglass_pose":
        class Residual(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                mid = cout // 2
                self.body = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, mid, 1),
                                          nn.BatchNorm2d(mid), nn.ReLU(), nn.Conv2d(mid, mid, 3, padding=1),
                                          nn.BatchNorm2d(mid), nn.ReLU(), nn.Conv2d(mid, cout, 1))
                self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else None

            def forward(self, x):
                return self.body(x) + (self.skip(x) if self.skip is not None else x)

        class Hourglass(nn.Module):
            def __init__(self, depth, ch):
                super().__init__()
                self.up1 = Residual(ch, ch)
                self.low1 = Residual(ch, ch)
                self.low2 = Hourglass(depth - 1, ch) if depth > 1 else Residual(ch, ch)
                self.low3 = Residual(ch, ch)

            def forward(self, x):
                low = self.low3(self.low2(self.low1(F.max_pool2d(x, 2))))
                return self.up1(x) + F.interpolate(low, scale_factor=2, mode="nearest")

        class Pose(nn.Module):
            def __init__(self, ch=128):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3), nn.BatchNorm2d(64), nn.ReLU(),
                                          Residual(64, ch))
                self.hg = Hourglass(3, ch)
                self.out = nn.Sequential(Residual(ch, ch), nn.Conv2d(ch, classes, 1))

            def forward(self, x):
                return self.out(self.hg(self.stem(x)))
        return Pose()

    if kind == "nbeats":
        class NBlock(nn.Module):
            def __init__(self, back, fore, width=512):
                super().__init__()
                self.fc = nn.Sequential(nn.Linear(back, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                        nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
                self.theta_b = nn.Linear(width, back)
                self.theta_f = nn.Linear(width, fore)

            def forward(self, x):
                h = self.fc(x)
                return self.theta_b(h), self.theta_f(h)

        class NBeats(nn.Module):
            def __init__(self, back=168):
                super().__init__()
                self.blocks = nn.ModuleList([NBlock(back, classes) for _ in range(6)])

            def forward(self, x):
                residual, forecast = x, 0
                for b in self.blocks:
                    back, fore = b(residual)
                    residual = residual - back
                    forecast = forecast + fore
                return forecast
        return NBeats()

    if kind == "mobilevit_lite":
        class InvRes(nn.Module):
            def __init__(self, cin, cout, stride, expand=4):
                super().__init__()
                mid = cin * expand
                self.use_res = stride == 1 and cin == cout
                self.body = nn.Sequential(nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU(),
                                          nn.Conv2d(mid, mid, 3, stride=stride, padding=1, groups=mid, bias=False),
                                          nn.BatchNorm2d(mid), nn.SiLU(),
                                          nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))

            def forward(self, x):
                return x + self.body(x) if self.use_res else self.body(x)

        class MvitBlock(nn.Module):
            def __init__(self, ch, d, layers=2, patch=2):
                super().__init__()
                self.patch = patch
                self.local = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), nn.SiLU(),
                                           nn.Conv2d(ch, d, 1, bias=False))
                layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.1, activation="gelu", batch_first=True,
                                                   norm_first=True)
                self.transformer = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
                self.proj = nn.Sequential(nn.Conv2d(d, ch, 1, bias=False), nn.BatchNorm2d(ch), nn.SiLU())
                self.fuse = nn.Sequential(nn.Conv2d(2 * ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch),
                                          nn.SiLU())

            def forward(self, x):
                b, _, h, w = x.shape
                p = self.patch
                y = self.local(x)
                d = y.shape[1]
                # [B, d, H, W] -> [B * p * p, H/p * W/p, d]
                y = y.reshape(b, d, h // p, p, w // p, p).permute(0, 3, 5, 2, 4, 1)
                y = y.reshape(b * p * p, (h // p) * (w // p), d)
                y = self.transformer(y)
                y = y.reshape(b, p, p, h // p, w // p, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, h, w)
                return self.fuse(torch.cat([x, self.proj(y)], dim=1))

        class MobileVit(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16),
                                          nn.SiLU())
                self.body = nn.Sequential(InvRes(16, 32, 1), InvRes(32, 48, 2), InvRes(48, 48, 1),
                                          InvRes(48, 64, 2), MvitBlock(64, 96),
                                          InvRes(64, 80, 2), MvitBlock(80, 120))
                self.head = nn.Sequential(nn.Conv2d(80, 320, 1, bias=False), nn.BatchNorm2d(320), nn.SiLU())
                self.fc = nn.Linear(320, classes)

            def forward(self, x):
                return self.fc(self.head(self.body(self.stem(x))).mean(dim=(2, 3)))
        return MobileVit()

    if kind == "bilstm_charcnn":
        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.char_emb = nn.Embedding(80, 24)
                self.char_conv = nn.Conv1d(24, 50, 3, padding=1)
                self.word_emb = nn.Embedding(5000, 100)
                self.drop = nn.Dropout(0.3)
                self.lstm = nn.LSTM(150, 128, num_layers=2, bidirectional=True, batch_first=True, dropout=0.3)
                self.fc = nn.Linear(256, classes)

            def forward(self, words, chars):
                b, t, c = chars.shape
                ce = self.char_emb(chars.reshape(b * t, c)).transpose(1, 2)  # [B*T, 24, C]
                cf = F.relu(self.char_conv(ce)).amax(dim=2).reshape(b, t, -1)
                x = self.drop(torch.cat([self.word_emb(words), cf], dim=2))
                y, _ = self.lstm(x)
                return self.fc(self.drop(y)).transpose(1, 2)  # [B, tags, T]
        return Tagger()

    if kind == "bilinear_decoder":
        def cbr(cin, cout, stride=1):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout),
                                 nn.ReLU())

        class Decoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Sequential(cbr(3, 32), cbr(32, 64, 2), cbr(64, 128, 2), cbr(128, 256, 2))
                self.dec = nn.ModuleList([cbr(256, 128), cbr(128, 64), cbr(64, 32)])
                self.out = nn.Conv2d(32, classes, 1)

            def forward(self, x):
                h = self.enc(x)
                for d in self.dec:
                    h = d(F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=False))
                return self.out(h)
        return Decoder()
    raise ValueError("unknown builder %s" % kind)
