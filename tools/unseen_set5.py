"""The fifth held-out set of real architectures (tools/unseen_models.py --set unseen5).

Fixed on 2026-12-07, after set 4's rules (76a9325, 9b6bb07, 1be7ca2), before any of these was exported, measured or
planned. Standard torch.nn building blocks in combinations the zoo and sets 1-4 lack: a 2-layer bidirectional
LSTM classifier, nn.TransformerDecoder over encoder memory with key-padding masks, nn.MultiheadAttention with
need_weights (averaged attention weights returned), ConvTranspose2d with output_padding, bicubic upsampling,
AdaptiveMaxPool2d and LPPool2d heads, several embedding tables with padding_idx, a channels-first LayerNorm CNN
(permute around nn.LayerNorm), Mish/SiLU/Hardswish MLPs, PReLU with per-channel slopes, GRU over CNN features with
packed-free masking, a depthwise-separable MobileNetV1, a ResNet with stochastic-free pre-activation and dropout
before the head, and an nn.Bilinear interaction.

Plain data (MODELS) plus the builders (build). Same row format as tools/unseen_models.py.
"""

from __future__ import annotations

IMG = lambda px: [["input", [3, px, px], "float32", 0]]  # noqa: E731

MODELS = [
    {"name": "bilstm2_classifier", "builder": "bilstm2_classifier", "args": {},
     "inputs": [["input_ids", [40], "int64", 4000]], "classes": 5, "rows": [[8, "adam"], [32, "sgd"]],
     "description": "Embedding 4000 x 128, nn.LSTM(128, 160, num_layers=2, bidirectional=True), max over time, "
                    "Dropout, Linear; 40 tokens"},
    {"name": "transformer_decoder_lm", "builder": "transformer_decoder_lm", "args": {},
     "inputs": [["memory_ids", [32], "int64", 3000], ["tgt_ids", [24], "int64", 3000]], "classes": 3000,
     "label_shape": [24], "rows": [[4, "adamw"], [8, "momentum"]],
     "description": "nn.TransformerEncoder (2 x 128) over memory tokens, nn.TransformerDecoder (2 x 128, 4 heads) "
                    "with a causal tgt_mask and a memory key-padding mask from the ids (id 0 = pad), tied-free head"},
    {"name": "mha_need_weights", "builder": "mha_need_weights", "args": {},
     "inputs": [["input", [50, 96], "float32", 0]], "classes": 7, "rows": [[4, "adam"], [16, "sgd"]],
     "description": "Two nn.MultiheadAttention(96, 4, batch_first) layers called with need_weights=True "
                    "(head-averaged weights used as a token score), LayerNorm, 50 tokens"},
    {"name": "convtranspose_decoder", "builder": "convtranspose_decoder", "args": {},
     "inputs": [["input", [64], "float32", 0]], "classes": 4, "label_shape": [47, 47],
     "rows": [[4, "adam"], [16, "momentum"]],
     "description": "Linear to 128 x 6 x 6, ConvTranspose2d stride 2 with output_padding (6 -> 12 -> 24 -> 47) "
                    "and BatchNorm/ReLU, 4-class per-pixel output at 47x47"},
    {"name": "bicubic_sr", "builder": "bicubic_sr", "args": {},
     "inputs": IMG(32), "classes": 6, "label_shape": [64, 64], "rows": [[2, "adam"], [8, "sgd"]],
     "description": "Conv features, F.interpolate(scale 2, bicubic, align_corners=False) then convs, 6-class "
                    "per-pixel output at 64x64 from 32x32"},
    {"name": "pool_heads", "builder": "pool_heads", "args": {},
     "inputs": IMG(48), "classes": 12, "rows": [[4, "adam"], [16, "momentum"]],
     "description": "Conv/BN/ReLU trunk with three heads concatenated: AdaptiveMaxPool2d(2), AdaptiveAvgPool2d(1) "
                    "and LPPool2d(norm 2, kernel 4), 48x48 RGB"},
    {"name": "multi_embedding", "builder": "multi_embedding", "args": {},
     "inputs": [["cat_ids", [6], "int64", 500], ["seq_ids", [20], "int64", 2000], ["dense", [10], "float32", 0]],
     "classes": 3, "rows": [[32, "adam"], [128, "adagrad"]],
     "description": "Tabular/sequence recommender: 6 categorical Embedding(500, 24) tables, a sequence "
                    "Embedding(2000, 32, padding_idx=0) mean-pooled with a pad mask, dense features, MLP"},
    {"name": "layernorm_cnn", "builder": "layernorm_cnn", "args": {},
     "inputs": IMG(48), "classes": 10, "rows": [[2, "adamw"], [8, "sgd"]],
     "description": "CNN with channels-first LayerNorm written as permute -> nn.LayerNorm(C) -> permute after "
                    "each conv, GELU, 3 stages, 48x48"},
    {"name": "activation_mlp", "builder": "activation_mlp", "args": {},
     "inputs": [["input", [256], "float32", 0]], "classes": 10, "rows": [[64, "adam"], [256, "momentum"]],
     "description": "MLP 256 -> 1024 -> 1024 -> 512 -> 256 with Mish, SiLU, Hardswish and GELU(tanh) "
                    "activations, LayerNorm, Dropout"},
    {"name": "prelu_cnn", "builder": "prelu_cnn", "args": {},
     "inputs": IMG(64), "classes": 10, "rows": [[4, "adam"], [8, "sgd"]],
     "description": "CNN with per-channel PReLU after BatchNorm, MaxPool, 4 stages, 64x64 RGB"},
    {"name": "crnn_masked_gru", "builder": "crnn_masked_gru", "args": {},
     "inputs": [["input", [1, 32, 96], "float32", 0], ["lengths_mask", [24], "float32", 0]], "classes": 30,
     "rows": [[4, "adam"], [16, "sgd"]],
     "description": "CNN over a 32x96 line image to 24 columns, a GRU(128, 96) whose outputs are multiplied by a "
                    "per-column mask (mask > 0), masked mean over time, classifier"},
    {"name": "mobilenet_v1", "builder": "mobilenet_v1", "args": {},
     "inputs": IMG(64), "classes": 100, "rows": [[4, "momentum"], [8, "adam"]],
     "description": "MobileNetV1 written by hand: depthwise 3x3 + pointwise 1x1 with BatchNorm/ReLU6, width 0.5, "
                    "64x64 RGB"},
    {"name": "preact_resnet_dropout", "builder": "preact_resnet_dropout", "args": {},
     "inputs": IMG(32), "classes": 10, "rows": [[8, "sgd"], [32, "momentum"]],
     "description": "Pre-activation ResNet-18-style for 32x32 (BN-ReLU-conv, identity shortcuts, 1x1 projection), "
                    "Dropout(0.3) before the linear head"},
    {"name": "bilinear_interaction", "builder": "bilinear_interaction", "args": {},
     "inputs": [["left", [64], "float32", 0], ["right", [48], "float32", 0]], "classes": 6,
     "rows": [[32, "adam"], [128, "sgd"]],
     "description": "Two MLP towers joined by nn.Bilinear(96, 96, 64), then ReLU and a linear classifier"},
]


def build(model: dict):
    """The torch.nn.Module of one row's model (random weights)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    kind = model["builder"]
    classes = model["classes"]

    def cbr(cin, cout, stride=1, k=3, groups=1, act=None):
        return nn.Sequential(nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=False),
                             nn.BatchNorm2d(cout), act if act is not None else nn.ReLU())

    if kind == "bilstm2_classifier":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(4000, 128)
                self.lstm = nn.LSTM(128, 160, num_layers=2, bidirectional=True, batch_first=True)
                self.drop = nn.Dropout(0.3)
                self.fc = nn.Linear(320, classes)

            def forward(self, ids):
                y, _ = self.lstm(self.emb(ids))
                return self.fc(self.drop(y.amax(dim=1)))
        return Net()

    if kind == "transformer_decoder_lm":
        class Net(nn.Module):
            def __init__(self, d=128):
                super().__init__()
                self.emb = nn.Embedding(3000, d)
                self.pos = nn.Parameter(torch.randn(32, d) * 0.02)
                enc = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.1, batch_first=True)
                dec = nn.TransformerDecoderLayer(d, 4, 4 * d, dropout=0.1, batch_first=True)
                self.encoder = nn.TransformerEncoder(enc, 2, enable_nested_tensor=False)
                self.decoder = nn.TransformerDecoder(dec, 2)
                self.register_buffer("causal", torch.triu(torch.full((24, 24), float("-inf")), 1), persistent=False)
                self.head = nn.Linear(d, classes)

            def forward(self, memory_ids, tgt_ids):
                pad = memory_ids == 0
                memory = self.encoder(self.emb(memory_ids) + self.pos, src_key_padding_mask=pad)
                y = self.decoder(self.emb(tgt_ids) + self.pos[:24], memory, tgt_mask=self.causal,
                                 memory_key_padding_mask=pad)
                return self.head(y).transpose(1, 2)
        return Net()

    if kind == "mha_need_weights":
        class Net(nn.Module):
            def __init__(self, d=96):
                super().__init__()
                self.att1 = nn.MultiheadAttention(d, 4, batch_first=True)
                self.att2 = nn.MultiheadAttention(d, 4, batch_first=True)
                self.norm = nn.LayerNorm(d)
                self.fc = nn.Linear(d, classes)

            def forward(self, x):
                y, w = self.att1(x, x, x, need_weights=True)
                x = self.norm(x + y)
                y, w2 = self.att2(x, x, x, need_weights=True)
                x = self.norm(x + y)
                score = (w + w2).mean(dim=1)  # [B, L]
                return self.fc((x * score.unsqueeze(-1)).sum(dim=1))
        return Net()

    if kind == "convtranspose_decoder":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(64, 128 * 6 * 6)
                self.up = nn.Sequential(
                    nn.ConvTranspose2d(128, 64, 3, stride=2, padding=1, output_padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                    nn.ConvTranspose2d(64, 32, 3, stride=2, padding=1, output_padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                    nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=0), nn.BatchNorm2d(16), nn.ReLU(),
                    nn.Conv2d(16, classes, 3, padding=1))

            def forward(self, z):
                return self.up(self.fc(z).view(-1, 128, 6, 6))
        return Net()

    if kind == "bicubic_sr":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Sequential(cbr(3, 32), cbr(32, 32))
                self.tail = nn.Sequential(cbr(32, 32), nn.Conv2d(32, classes, 3, padding=1))

            def forward(self, x):
                return self.tail(F.interpolate(self.head(x), scale_factor=2, mode="bicubic", align_corners=False))
        return Net()

    if kind == "pool_heads":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.trunk = nn.Sequential(cbr(3, 32, 2), cbr(32, 64), cbr(64, 64, 2), cbr(64, 96))
                self.maxp = nn.AdaptiveMaxPool2d(2)
                self.avgp = nn.AdaptiveAvgPool2d(1)
                self.lpp = nn.LPPool2d(2, 4)
                self.fc = nn.Linear(96 * 4 + 96 + 96 * 9, classes)

            def forward(self, x):
                h = self.trunk(x)
                return self.fc(torch.cat([self.maxp(h).flatten(1), self.avgp(h).flatten(1), self.lpp(h).flatten(1)], 1))
        return Net()

    if kind == "multi_embedding":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.cats = nn.ModuleList([nn.Embedding(500, 24) for _ in range(6)])
                self.seq = nn.Embedding(2000, 32, padding_idx=0)
                self.mlp = nn.Sequential(nn.Linear(6 * 24 + 32 + 10, 256), nn.ReLU(), nn.Dropout(0.2),
                                         nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, classes))

            def forward(self, cat_ids, seq_ids, dense):
                cats = torch.cat([e(cat_ids[:, i]) for i, e in enumerate(self.cats)], dim=1)
                mask = (seq_ids != 0).float().unsqueeze(-1)
                seq = (self.seq(seq_ids) * mask).sum(1) / mask.sum(1).clamp(min=1.0)
                return self.mlp(torch.cat([cats, seq, dense], dim=1))
        return Net()

    if kind == "layernorm_cnn":
        class LnConv(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.conv = nn.Conv2d(cin, cout, 3, stride=stride, padding=1)
                self.norm = nn.LayerNorm(cout)

            def forward(self, x):
                y = self.conv(x).permute(0, 2, 3, 1)
                return F.gelu(self.norm(y).permute(0, 3, 1, 2))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(LnConv(3, 32, 2), LnConv(32, 32, 1), LnConv(32, 64, 2), LnConv(64, 64, 1),
                                          LnConv(64, 128, 2))
                self.fc = nn.Linear(128, classes)

            def forward(self, x):
                return self.fc(self.body(x).mean(dim=(2, 3)))
        return Net()

    if kind == "activation_mlp":
        return nn.Sequential(nn.Linear(256, 1024), nn.Mish(), nn.LayerNorm(1024), nn.Linear(1024, 1024), nn.SiLU(),
                             nn.Dropout(0.1), nn.Linear(1024, 512), nn.Hardswish(), nn.Linear(512, 256),
                             nn.GELU(approximate="tanh"), nn.Linear(256, classes))

    if kind == "prelu_cnn":
        layers, cin = [], 3
        for cout in (32, 64, 128, 128):
            layers += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.PReLU(cout),
                       nn.MaxPool2d(2)]
            cin = cout
        return nn.Sequential(*layers, nn.Flatten(), nn.Linear(cin * 4 * 4, classes))

    if kind == "crnn_masked_gru":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.cnn = nn.Sequential(cbr(1, 32), nn.MaxPool2d(2), cbr(32, 64), nn.MaxPool2d(2), cbr(64, 128),
                                         nn.MaxPool2d((8, 1)))
                self.gru = nn.GRU(128, 96, batch_first=True)
                self.fc = nn.Linear(96, classes)

            def forward(self, x, lengths_mask):
                f = self.cnn(x).squeeze(2).transpose(1, 2)  # [B, 24, 128]
                y, _ = self.gru(f)
                m = (lengths_mask > 0).float().unsqueeze(-1)
                return self.fc((y * m).sum(1) / m.sum(1).clamp(min=1.0))
        return Net()

    if kind == "mobilenet_v1":
        def dw(cin, cout, stride):
            return nn.Sequential(cbr(cin, cin, stride, groups=cin, act=nn.ReLU6()), cbr(cin, cout, k=1, act=nn.ReLU6()))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                cfg = [(16, 32, 1), (32, 64, 2), (64, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2),
                       (256, 256, 1), (256, 256, 1), (256, 512, 2), (512, 512, 1)]
                self.stem = cbr(3, 16, 2, act=nn.ReLU6())
                self.body = nn.Sequential(*[dw(a, b, s) for a, b, s in cfg])
                self.fc = nn.Linear(512, classes)

            def forward(self, x):
                return self.fc(self.body(self.stem(x)).mean(dim=(2, 3)))
        return Net()

    if kind == "preact_resnet_dropout":
        class Block(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.bn1, self.bn2 = nn.BatchNorm2d(cin), nn.BatchNorm2d(cout)
                self.c1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
                self.c2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
                self.proj = nn.Conv2d(cin, cout, 1, stride=stride, bias=False) if stride != 1 or cin != cout else None

            def forward(self, x):
                out = F.relu(self.bn1(x))
                short = self.proj(out) if self.proj is not None else x
                out = self.c1(out)
                out = self.c2(F.relu(self.bn2(out)))
                return out + short

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Conv2d(3, 32, 3, padding=1, bias=False)
                blocks, cin = [], 32
                for cout, stride in ((32, 1), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1)):
                    blocks.append(Block(cin, cout, stride))
                    cin = cout
                self.blocks = nn.Sequential(*blocks)
                self.bn = nn.BatchNorm2d(cin)
                self.drop = nn.Dropout(0.3)
                self.fc = nn.Linear(cin, classes)

            def forward(self, x):
                h = F.relu(self.bn(self.blocks(self.stem(x))))
                return self.fc(self.drop(h.mean(dim=(2, 3))))
        return Net()

    if kind == "bilinear_interaction":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.left = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 96))
                self.right = nn.Sequential(nn.Linear(48, 128), nn.ReLU(), nn.Linear(128, 96))
                self.bil = nn.Bilinear(96, 96, 64)
                self.fc = nn.Linear(64, classes)

            def forward(self, left, right):
                return self.fc(F.relu(self.bil(self.left(left), self.right(right))))
        return Net()
    raise ValueError("unknown builder %s" % kind)
