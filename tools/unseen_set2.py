"""The second held-out set of real architectures (tools/unseen_models.py --set unseen2).

Fixed on 2026-12-05, after the first set (bench/reference/unseen) had been compared several times and
so no longer told anyone how the planner does on a model like none it has seen. Nobody had planned
any of these before the list was committed. Architectures are ones a user writes or takes from
torchvision 0.14 and that neither the zoo (tools/models.py) nor the first set has: tied LM heads, a
weight-normed TCN, an unrolled LSTMCell, a dense GCN, a DLRM-style interaction, a dense mixture of
experts, a VAE's sampling, two inputs through one shared encoder, an encoder-decoder transformer,
Perceiver-style cross-attention, segmentation and (2+1)-D video from torchvision.

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "inception_v3", "builder": "tv", "args": {"fn": "inception_v3", "aux_logits": False, "init_weights": True},
     "inputs": IMG(128), "classes": 100, "rows": [[2, "sgd"], [4, "adam"]],
     "description": "torchvision Inception v3 (no aux head; asymmetric 1x7/7x1 convs), 128x128 RGB"},
    {"name": "wide_resnet50_2", "builder": "tv", "args": {"fn": "wide_resnet50_2"},
     "inputs": IMG(64), "classes": 1000, "rows": [[2, "momentum"], [4, "adam"]],
     "description": "torchvision Wide ResNet-50-2, 64x64 RGB"},
    {"name": "efficientnet_v2_s", "builder": "tv", "args": {"fn": "efficientnet_v2_s", "stochastic_depth_prob": 0.0},
     "inputs": IMG(64), "classes": 100, "rows": [[2, "adam"], [4, "sgd"]],
     "description": "torchvision EfficientNetV2-S (fused MBConv), stochastic depth off, 64x64 RGB"},
    {"name": "densenet161", "builder": "tv", "args": {"fn": "densenet161"},
     "inputs": IMG(64), "classes": 100, "rows": [[2, "sgd"], [3, "momentum"]],
     "description": "torchvision DenseNet-161 (growth 48), 64x64 RGB"},
    {"name": "deeplabv3_mbv3", "builder": "tv_seg", "args": {"fn": "deeplabv3_mobilenet_v3_large"},
     "inputs": IMG(64), "classes": 5, "label_shape": [64, 64], "rows": [[2, "adam"], [4, "momentum"]],
     "description": "torchvision DeepLabV3 on MobileNetV3-Large (dilated convs, ASPP with image pooling), "
                    "5-class segmentation of 64x64 RGB"},
    {"name": "r2plus1d_18", "builder": "tv_video", "args": {"fn": "r2plus1d_18"},
     "inputs": [["input", [3, 8, 56, 56], "float32", 0]], "classes": 10, "rows": [[1, "sgd"], [2, "adam"]],
     "description": "torchvision R(2+1)D-18 video net, 8 frames of 56x56 RGB"},
    {"name": "gpt_mini", "builder": "gpt_mini", "args": {},
     "inputs": [["input_ids", [64], "int64", 4000]], "classes": 4000, "label_shape": [64],
     "rows": [[2, "adam"], [8, "momentum"]],
     "description": "GPT-style causal LM written by hand (pre-LN, fused qkv Linear, triu mask, GELU), "
                    "4 layers x 192, LM head tied to the token embedding, vocab 4000, seq 64"},
    {"name": "bert_prenorm", "builder": "bert_prenorm", "args": {},
     "inputs": [["input_ids", [96], "int64", 8000]], "classes": 3, "rows": [[4, "adam"], [8, "sgd"]],
     "description": "nn.TransformerEncoderLayer(norm_first, gelu) text classifier, 4 layers x 256, learned "
                    "positions, tanh pooler on the first token, vocab 8000, seq 96"},
    {"name": "transformer_seq2seq", "builder": "transformer_seq2seq", "args": {},
     "inputs": [["src_ids", [40], "int64", 3000], ["tgt_ids", [32], "int64", 3000]], "classes": 3000,
     "label_shape": [32], "rows": [[4, "adam"], [8, "momentum"]],
     "description": "nn.Transformer encoder-decoder (2+2 layers x 128, 4 heads, causal target mask), "
                    "vocab 3000, 40 -> 32 tokens"},
    {"name": "mlp_mixer", "builder": "mlp_mixer", "args": {},
     "inputs": IMG(64), "classes": 100, "rows": [[4, "adam"], [8, "sgd"]],
     "description": "MLP-Mixer (patch 8, 6 layers x 128, token- and channel-mixing MLPs), 64x64 RGB"},
    {"name": "pointnet", "builder": "pointnet", "args": {},
     "inputs": [["input", [3, 1024], "float32", 0]], "classes": 40, "rows": [[4, "momentum"], [16, "adam"]],
     "description": "PointNet classifier (shared 1x1 Conv1d/BatchNorm1d/ReLU, max over 1024 points)"},
    {"name": "tcn_weightnorm", "builder": "tcn_weightnorm", "args": {},
     "inputs": [["input", [16, 512], "float32", 0]], "classes": 8, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Temporal conv net: weight_norm Conv1d, dilations 1-8, causal padding chomped by a "
                    "slice, residual 1x1, Dropout; 16 channels x 512 steps"},
    {"name": "conformer_lite", "builder": "conformer_lite", "args": {},
     "inputs": [["input", [100, 80], "float32", 0]], "classes": 10, "rows": [[2, "adam"], [8, "momentum"]],
     "description": "2 Conformer blocks x 144 (half-step FFNs with SiLU, MHA, conv module with GLU, depthwise "
                    "Conv1d k=15, BatchNorm1d), 100 frames x 80 features"},
    {"name": "vae_conv", "builder": "vae_conv", "args": {},
     "inputs": [["input", [1, 28, 28], "float32", 0]], "classes": 2, "label_shape": [28, 28],
     "rows": [[16, "adam"], [64, "sgd"]],
     "description": "Conv VAE (mu/logvar heads, z = mu + randn_like * exp(logvar/2), ConvTranspose2d "
                    "decoder) trained on per-pixel 2-class logits, 28x28"},
    {"name": "siamese_cnn", "builder": "siamese_cnn", "args": {},
     "inputs": [["left", [3, 64, 64], "float32", 0], ["right", [3, 64, 64], "float32", 0]], "classes": 2,
     "rows": [[4, "momentum"], [8, "adam"]],
     "description": "Siamese CNN: one encoder (Conv/BN/ReLU) applied to two 64x64 images, |a - b| head"},
    {"name": "dlrm_lite", "builder": "dlrm_lite", "args": {},
     "inputs": [["dense", [13], "float32", 0], ["sparse_ids", [8], "int64", 1000]], "classes": 2,
     "rows": [[64, "adam"], [256, "sgd"]],
     "description": "DLRM-style recommender: bottom MLP, 8 Embedding(1000, 16) tables, pairwise dot "
                    "interaction (bmm, upper triangle by index), top MLP"},
    {"name": "char_rnn_cell", "builder": "char_rnn_cell", "args": {},
     "inputs": [["input_ids", [32], "int64", 100]], "classes": 100, "label_shape": [32],
     "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Character LM: Embedding + nn.LSTMCell(64, 128) unrolled over 32 steps in Python, "
                    "per-step Linear, stacked"},
    {"name": "gcn_dense", "builder": "gcn_dense", "args": {},
     "inputs": [["x", [64, 32], "float32", 0], ["adj", [64, 64], "float32", 0]], "classes": 6,
     "rows": [[8, "adam"], [32, "momentum"]],
     "description": "Dense graph conv net: 3 layers relu(adj @ (h W)) on 64-node graphs, mean pool"},
    {"name": "tabular_mlp", "builder": "tabular_mlp", "args": {},
     "inputs": [["input", [40], "float32", 0]], "classes": 5, "rows": [[32, "adam"], [128, "sgd"]],
     "description": "Tabular MLP 40-512-512-256-128-64 with BatchNorm1d, Dropout and the activations Mish, "
                    "SELU, ELU, PReLU, ReLU6"},
    {"name": "text_cnn", "builder": "text_cnn", "args": {},
     "inputs": [["input_ids", [100], "int64", 20000]], "classes": 4, "rows": [[8, "adam"], [32, "momentum"]],
     "description": "Kim-style text CNN: Embedding(20000, 128), Conv1d k=3/4/5 x 100, max over time, "
                    "Dropout(0.5)"},
    {"name": "moe_mlp", "builder": "moe_mlp", "args": {},
     "inputs": [["input", [16, 64], "float32", 0]], "classes": 10, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Dense mixture of 4 experts (64-256-64, GELU) with top-2 softmax gating (topk, "
                    "scatter), einsum combine, 16 tokens x 64"},
    {"name": "crnn_ocr", "builder": "crnn_ocr", "args": {},
     "inputs": [["input", [1, 32, 128], "float32", 0]], "classes": 37, "label_shape": [32],
     "rows": [[4, "momentum"], [16, "adam"]],
     "description": "CRNN text recogniser: Conv/BN/ReLU with (2,1) pooling, mean over height, "
                    "bidirectional GRU, per-column classes, 32x128 grey"},
    {"name": "perceiver_lite", "builder": "perceiver_lite", "args": {},
     "inputs": [["input", [256, 64], "float32", 0]], "classes": 10, "rows": [[4, "adam"], [16, "momentum"]],
     "description": "Perceiver-style: 32 learned latents cross-attend (nn.MultiheadAttention) to 256 "
                    "input tokens, then 2 self-attention layers x 128"},
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
    if kind == "tv_seg":
        import torchvision

        class Seg(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = getattr(torchvision.models.segmentation, args["fn"])(
                    weights=None, weights_backbone=None, num_classes=classes, aux_loss=False)

            def forward(self, x):
                return self.net(x)["out"]
        return Seg()
    if kind == "tv_video":
        import torchvision
        return getattr(torchvision.models.video, args["fn"])(weights=None, num_classes=classes)

    if kind == "gpt_mini":
        class Block(nn.Module):
            def __init__(self, d, heads, seq):
                super().__init__()
                self.heads = heads
                self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(0.1))
                self.drop = nn.Dropout(0.1)
                self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
                q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
                att = (q @ k.transpose(-2, -1)) * (1.0 / (d // self.heads) ** 0.5)
                att = self.drop(F.softmax(att.masked_fill(self.mask[:t, :t], float("-inf")), dim=-1))
                y = (att @ v).transpose(1, 2).reshape(b, t, d)
                x = x + self.drop(self.proj(y))
                return x + self.mlp(self.ln2(x))

        class GptMini(nn.Module):
            def __init__(self, vocab=classes, seq=64, d=192, heads=6, layers=4):
                super().__init__()
                self.tok = nn.Embedding(vocab, d)
                self.pos = nn.Embedding(seq, d)
                self.blocks = nn.Sequential(*[Block(d, heads, seq) for _ in range(layers)])
                self.ln = nn.LayerNorm(d)
                self.head = nn.Linear(d, vocab, bias=False)
                self.head.weight = self.tok.weight  # tied

            def forward(self, ids):
                pos = torch.arange(ids.shape[1], device=ids.device)
                x = self.blocks(self.tok(ids) + self.pos(pos))
                return self.head(self.ln(x)).permute(0, 2, 1)  # [B, vocab, T]
        return GptMini()

    if kind == "bert_prenorm":
        class BertPreNorm(nn.Module):
            def __init__(self, vocab=8000, seq=96, d=256, heads=4, layers=4):
                super().__init__()
                self.tok = nn.Embedding(vocab, d)
                self.pos = nn.Parameter(torch.zeros(1, seq, d))
                self.emb_norm = nn.LayerNorm(d)
                layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, activation="gelu",
                                                   batch_first=True, norm_first=True)
                self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
                self.pool = nn.Linear(d, d)
                self.fc = nn.Linear(d, classes)

            def forward(self, ids):
                x = self.encoder(self.emb_norm(self.tok(ids) + self.pos))
                return self.fc(torch.tanh(self.pool(x[:, 0])))
        return BertPreNorm()

    if kind == "transformer_seq2seq":
        class Seq2Seq(nn.Module):
            def __init__(self, vocab=3000, d=128, tgt_len=32):
                super().__init__()
                self.src_emb = nn.Embedding(vocab, d)
                self.tgt_emb = nn.Embedding(vocab, d)
                self.core = nn.Transformer(d, 4, 2, 2, 4 * d, dropout=0.1, batch_first=True)
                self.register_buffer("tgt_mask", nn.Transformer.generate_square_subsequent_mask(tgt_len))
                self.out = nn.Linear(d, vocab)

            def forward(self, src, tgt):
                y = self.core(self.src_emb(src), self.tgt_emb(tgt), tgt_mask=self.tgt_mask)
                return self.out(y).permute(0, 2, 1)
        return Seq2Seq()

    if kind == "mlp_mixer":
        class MixerLayer(nn.Module):
            def __init__(self, tokens, d):
                super().__init__()
                self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.tok = nn.Sequential(nn.Linear(tokens, 2 * tokens), nn.GELU(), nn.Linear(2 * tokens, tokens))
                self.ch = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x):
                x = x + self.tok(self.n1(x).transpose(1, 2)).transpose(1, 2)
                return x + self.ch(self.n2(x))

        class Mixer(nn.Module):
            def __init__(self, px=64, patch=8, d=128, layers=6):
                super().__init__()
                self.stem = nn.Conv2d(3, d, patch, stride=patch)
                tokens = (px // patch) ** 2
                self.layers = nn.Sequential(*[MixerLayer(tokens, d) for _ in range(layers)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                x = self.stem(x).flatten(2).transpose(1, 2)
                return self.fc(self.norm(self.layers(x)).mean(dim=1))
        return Mixer()

    if kind == "pointnet":
        def shared(cin, cout):
            return [nn.Conv1d(cin, cout, 1), nn.BatchNorm1d(cout), nn.ReLU()]

        class PointNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.feat = nn.Sequential(*shared(3, 64), *shared(64, 64), *shared(64, 128), *shared(128, 1024))
                self.head = nn.Sequential(nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Dropout(0.3),
                                          nn.Linear(512, 256), nn.BatchNorm1d(256), nn.ReLU(),
                                          nn.Linear(256, classes))

            def forward(self, x):
                return self.head(torch.max(self.feat(x), dim=2)[0])
        return PointNet()

    if kind == "tcn_weightnorm":
        from torch.nn.utils import weight_norm

        class TemporalBlock(nn.Module):
            def __init__(self, cin, cout, k, dilation):
                super().__init__()
                self.chomp = (k - 1) * dilation
                self.c1 = weight_norm(nn.Conv1d(cin, cout, k, padding=self.chomp, dilation=dilation))
                self.c2 = weight_norm(nn.Conv1d(cout, cout, k, padding=self.chomp, dilation=dilation))
                self.drop = nn.Dropout(0.2)
                self.down = nn.Conv1d(cin, cout, 1) if cin != cout else None

            def forward(self, x):
                y = self.drop(F.relu(self.c1(x)[:, :, :-self.chomp]))
                y = self.drop(F.relu(self.c2(y)[:, :, :-self.chomp]))
                return F.relu(y + (x if self.down is None else self.down(x)))

        class Tcn(nn.Module):
            def __init__(self):
                super().__init__()
                chans, cin, blocks = [32, 32, 64, 64], 16, []
                for i, c in enumerate(chans):
                    blocks.append(TemporalBlock(cin, c, 3, 2 ** i))
                    cin = c
                self.blocks = nn.Sequential(*blocks)
                self.fc = nn.Linear(cin, classes)

            def forward(self, x):
                return self.fc(self.blocks(x)[:, :, -1])
        return Tcn()

    if kind == "conformer_lite":
        class ConvModule(nn.Module):
            def __init__(self, d, k=15):
                super().__init__()
                self.norm = nn.LayerNorm(d)
                self.pw1 = nn.Conv1d(d, 2 * d, 1)
                self.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
                self.bn = nn.BatchNorm1d(d)
                self.pw2 = nn.Conv1d(d, d, 1)
                self.drop = nn.Dropout(0.1)

            def forward(self, x):  # [B, T, d]
                y = F.glu(self.pw1(self.norm(x).transpose(1, 2)), dim=1)
                y = self.pw2(F.silu(self.bn(self.dw(y))))
                return self.drop(y.transpose(1, 2))

        class Ffn(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.net = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Dropout(0.1),
                                         nn.Linear(4 * d, d), nn.Dropout(0.1))

            def forward(self, x):
                return self.net(x)

        class ConformerBlock(nn.Module):
            def __init__(self, d, heads=4):
                super().__init__()
                self.ff1, self.ff2 = Ffn(d), Ffn(d)
                self.att_norm = nn.LayerNorm(d)
                self.att = nn.MultiheadAttention(d, heads, dropout=0.1, batch_first=True)
                self.conv = ConvModule(d)
                self.out_norm = nn.LayerNorm(d)

            def forward(self, x):
                x = x + 0.5 * self.ff1(x)
                a = self.att_norm(x)
                x = x + self.att(a, a, a, need_weights=False)[0]
                x = x + self.conv(x)
                return self.out_norm(x + 0.5 * self.ff2(x))

        class Conformer(nn.Module):
            def __init__(self, feats=80, d=144):
                super().__init__()
                self.inp = nn.Linear(feats, d)
                self.blocks = nn.Sequential(ConformerBlock(d), ConformerBlock(d))
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                return self.fc(self.blocks(self.inp(x)).mean(dim=1))
        return Conformer()

    if kind == "vae_conv":
        class Vae(nn.Module):
            def __init__(self, z=16):
                super().__init__()
                self.enc = nn.Sequential(nn.Conv2d(1, 32, 4, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 4, 2, 1), nn.ReLU(),
                                         nn.Flatten())
                self.mu, self.logvar = nn.Linear(64 * 7 * 7, z), nn.Linear(64 * 7 * 7, z)
                self.dec_in = nn.Linear(z, 64 * 7 * 7)
                self.dec = nn.Sequential(nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(),
                                         nn.ConvTranspose2d(32, classes, 4, 2, 1))

            def forward(self, x):
                h = self.enc(x)
                mu, logvar = self.mu(h), self.logvar(h)
                zz = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
                return self.dec(F.relu(self.dec_in(zz)).view(-1, 64, 7, 7))
        return Vae()

    if kind == "siamese_cnn":
        class Siamese(nn.Module):
            def __init__(self):
                super().__init__()
                layers, cin = [], 3
                for c in (32, 64, 128):
                    layers += [nn.Conv2d(cin, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                               nn.MaxPool2d(2)]
                    cin = c
                self.enc = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 128))
                self.fc = nn.Linear(128, classes)

            def forward(self, left, right):
                return self.fc(torch.abs(self.enc(left) - self.enc(right)))
        return Siamese()

    if kind == "dlrm_lite":
        class Dlrm(nn.Module):
            def __init__(self, tables=8, rows=1000, d=16):
                super().__init__()
                self.bottom = nn.Sequential(nn.Linear(13, 64), nn.ReLU(), nn.Linear(64, d), nn.ReLU())
                self.emb = nn.ModuleList([nn.Embedding(rows, d) for _ in range(tables)])
                n = tables + 1
                iu = torch.triu_indices(n, n, offset=1)
                self.register_buffer("flat_index", iu[0] * n + iu[1])
                self.top = nn.Sequential(nn.Linear(d + n * (n - 1) // 2, 128), nn.ReLU(), nn.Linear(128, 64),
                                         nn.ReLU(), nn.Linear(64, classes))

            def forward(self, dense, ids):
                x = self.bottom(dense)
                t = torch.stack([x] + [e(ids[:, i]) for i, e in enumerate(self.emb)], dim=1)  # [B, n, d]
                z = torch.bmm(t, t.transpose(1, 2)).flatten(1)[:, self.flat_index]
                return self.top(torch.cat([x, z], dim=1))
        return Dlrm()

    if kind == "char_rnn_cell":
        class CharRnn(nn.Module):
            def __init__(self, d=64, hidden=128):
                super().__init__()
                self.hidden = hidden
                self.emb = nn.Embedding(classes, d)
                self.cell = nn.LSTMCell(d, hidden)
                self.out = nn.Linear(hidden, classes)

            def forward(self, ids):
                x = self.emb(ids)
                h = x.new_zeros(ids.shape[0], self.hidden)
                c = x.new_zeros(ids.shape[0], self.hidden)
                ys = []
                for t in range(ids.shape[1]):
                    h, c = self.cell(x[:, t], (h, c))
                    ys.append(self.out(h))
                return torch.stack(ys, dim=2)  # [B, classes, T]
        return CharRnn()

    if kind == "gcn_dense":
        class Gcn(nn.Module):
            def __init__(self, fin=32, d=64):
                super().__init__()
                self.ws = nn.ModuleList([nn.Linear(fin, d), nn.Linear(d, d), nn.Linear(d, d)])
                self.drop = nn.Dropout(0.2)
                self.fc = nn.Linear(d, classes)

            def forward(self, x, adj):
                h = x
                for w in self.ws:
                    h = self.drop(F.relu(torch.bmm(adj, w(h))))
                return self.fc(h.mean(dim=1))
        return Gcn()

    if kind == "tabular_mlp":
        acts = [nn.Mish(), nn.SELU(), nn.ELU(), nn.PReLU(), nn.ReLU6()]
        layers, cin = [], 40
        for cout, act in zip([512, 512, 256, 128, 64], acts):
            layers += [nn.Linear(cin, cout), nn.BatchNorm1d(cout), act, nn.Dropout(0.1)]
            cin = cout
        return nn.Sequential(*layers, nn.Linear(cin, classes))

    if kind == "text_cnn":
        class TextCnn(nn.Module):
            def __init__(self, vocab=20000, d=128, filters=100):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                self.convs = nn.ModuleList([nn.Conv1d(d, filters, k) for k in (3, 4, 5)])
                self.drop = nn.Dropout(0.5)
                self.fc = nn.Linear(3 * filters, classes)

            def forward(self, ids):
                x = self.emb(ids).transpose(1, 2)
                return self.fc(self.drop(torch.cat([F.relu(c(x)).amax(dim=2) for c in self.convs], dim=1)))
        return TextCnn()

    if kind == "moe_mlp":
        class Moe(nn.Module):
            def __init__(self, d=64, experts=4, k=2):
                super().__init__()
                self.k = k
                self.gate = nn.Linear(d, experts)
                self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                              for _ in range(experts)])
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):  # [B, T, d]
                probs = F.softmax(self.gate(x), dim=-1)
                top, idx = probs.topk(self.k, dim=-1)
                weights = torch.zeros_like(probs).scatter(-1, idx, top)
                outs = torch.stack([e(x) for e in self.experts], dim=2)  # [B, T, E, d]
                y = x + torch.einsum("bte,bted->btd", weights, outs)
                return self.fc(self.norm(y).mean(dim=1))
        return Moe()

    if kind == "crnn_ocr":
        class Crnn(nn.Module):
            def __init__(self):
                super().__init__()

                def cbr(cin, cout):
                    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
                self.cnn = nn.Sequential(*cbr(1, 32), nn.MaxPool2d(2), *cbr(32, 64), nn.MaxPool2d(2),
                                         *cbr(64, 128), nn.MaxPool2d((2, 1)), *cbr(128, 128), nn.MaxPool2d((2, 1)))
                self.rnn = nn.GRU(128, 96, batch_first=True, bidirectional=True)
                self.fc = nn.Linear(192, classes)

            def forward(self, x):
                f = self.cnn(x).mean(dim=2).permute(0, 2, 1)  # [B, W/4, 128]
                y, _ = self.rnn(f)
                return self.fc(y).permute(0, 2, 1)
        return Crnn()

    if kind == "perceiver_lite":
        class Perceiver(nn.Module):
            def __init__(self, fin=64, d=128, latents=32):
                super().__init__()
                self.latents = nn.Parameter(torch.randn(latents, d) * 0.02)
                self.inp = nn.Linear(fin, d)
                self.cross = nn.MultiheadAttention(d, 4, batch_first=True)
                self.norm = nn.LayerNorm(d)
                layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
                self.selfatt = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                kv = self.inp(x)
                q = self.latents.unsqueeze(0).expand(x.shape[0], -1, -1)
                z = self.norm(q + self.cross(q, kv, kv, need_weights=False)[0])
                return self.fc(self.selfatt(z).mean(dim=1))
        return Perceiver()
    raise ValueError("unknown builder %s" % kind)
