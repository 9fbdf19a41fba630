"""Model definitions shared by the zoo export and the PyTorch reference measurements.

Every model here is built exactly the same way by tools/export_zoo.py (which writes the
shape-only ONNX file) and by tools/measure_step.py / tools/capture_trace.py (which run a real
PyTorch training step), so the planner's prediction and the measurement describe the same
network. Each model ends in an output that torch.nn.functional.cross_entropy accepts:
class logits [B, C], or [B, C, H, W] with labels [B, H, W] for the segmentation UNet.

Usage: `SPECS[name].build()` returns a fresh torch.nn.Module (random weights, seeded);
`SPECS[name].example_inputs(batch)` returns the input tensors for a batch.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Dict, List, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------------------------------------
# Models that are not in torchvision.


class MlpDropout(nn.Module):
    """An MLP on flattened 28x28 images with ReLU and dropout (p=0.5) after each hidden layer."""

    def __init__(self, in_features: int = 784, hidden: int = 2048, classes: int = 10):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden), nn.ReLU(), nn.Dropout(0.5),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(0.5),
            nn.Linear(hidden, hidden // 2), nn.ReLU(), nn.Dropout(0.5),
            nn.Linear(hidden // 2, classes))

    def forward(self, x):
        return self.net(x)


def _conv_bn_relu(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


class UNetSmall(nn.Module):
    """A 3-level UNet: double conv blocks, max-pool down, ConvTranspose2d up, skip Concat."""

    def __init__(self, in_channels: int = 3, classes: int = 4, width: int = 32):
        super().__init__()
        w = width
        self.enc1 = nn.Sequential(_conv_bn_relu(in_channels, w), _conv_bn_relu(w, w))
        self.enc2 = nn.Sequential(_conv_bn_relu(w, 2 * w), _conv_bn_relu(2 * w, 2 * w))
        self.enc3 = nn.Sequential(_conv_bn_relu(2 * w, 4 * w), _conv_bn_relu(4 * w, 4 * w))
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
        self.dec2 = nn.Sequential(_conv_bn_relu(4 * w, 2 * w), _conv_bn_relu(2 * w, 2 * w))
        self.up1 = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.dec1 = nn.Sequential(_conv_bn_relu(2 * w, w), _conv_bn_relu(w, w))
        self.head = nn.Conv2d(w, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        e3 = self.enc3(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(e3), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.head(d1)


class Conv1dNet(nn.Module):
    """A 1-D conv net on raw audio-like signals: conv/BN/ReLU/max-pool stages, global pooling, Linear."""

    def __init__(self, in_channels: int = 1, classes: int = 35):
        super().__init__()
        layers: List[nn.Module] = []
        cin = in_channels
        for cout, k, s in [(32, 80, 4), (32, 3, 1), (64, 3, 1), (128, 3, 1)]:
            layers += [nn.Conv1d(cin, cout, k, stride=s, padding=k // 2), nn.BatchNorm1d(cout),
                       nn.ReLU(), nn.MaxPool1d(4)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.fc(torch.flatten(x, 1))


class BertBase(nn.Module):
    """A BERT-base-sized encoder: token + position embeddings, LayerNorm, 12 post-norm layers
    (d=768, 12 heads, FFN 3072, GELU), a tanh pooler on the first token and a classifier head.
    Input: int64 token ids [B, seq]."""

    def __init__(self, vocab: int = 30522, seq: int = 128, d: int = 768, heads: int = 12,
                 ffn: int = 3072, layers: int = 12, classes: int = 2, dropout: float = 0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, seq, d))
        nn.init.normal_(self.pos, std=0.02)
        self.norm = nn.LayerNorm(d)
        self.drop = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=dropout, activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pooler = nn.Linear(d, d)
        self.classifier = nn.Linear(d, classes)

    def forward(self, ids):
        x = self.drop(self.norm(self.tok(ids) + self.pos))
        x = self.encoder(x)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return self.classifier(pooled)


# ---------------------------------------------------------------------------------------------
# The table.


@dataclasses.dataclass(frozen=True)
class InputSpec:
    name: str
    shape: Tuple[int, ...]  # per sample (without the batch dimension)
    dtype: torch.dtype
    high: int = 0  # for integer inputs: values drawn from [0, high)


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    name: str
    description: str
    factory: Callable[[], nn.Module]
    inputs: Tuple[InputSpec, ...]
    classes: int
    label_shape: Tuple[int, ...] = ()  # per sample; () = one class index per sample
    in_zoo: bool = True        # shipped as a zoo model (oomguard models)
    validation_batches: Tuple[int, ...] = (1, 2, 4)

    def build(self, seed: int = 0) -> nn.Module:
        torch.manual_seed(seed)
        model = self.factory()
        model.train()
        return model

    def example_inputs(self, batch: int, seed: int = 1) -> List[torch.Tensor]:
        g = torch.Generator().manual_seed(seed)
        out = []
        for spec in self.inputs:
            shape = (batch,) + tuple(spec.shape)
            if spec.dtype.is_floating_point:
                out.append(torch.randn(shape, generator=g, dtype=spec.dtype))
            else:
                out.append(torch.randint(0, spec.high, shape, generator=g, dtype=spec.dtype))
        return out

    def example_labels(self, batch: int, seed: int = 2) -> torch.Tensor:
        g = torch.Generator().manual_seed(seed)
        return torch.randint(0, self.classes, (batch,) + tuple(self.label_shape), generator=g,
                             dtype=torch.int64)


def _tv(fn_name: str, **kwargs) -> Callable[[], nn.Module]:
    def make() -> nn.Module:
        import torchvision  # only the torchvision models need it (a GPU machine may lack it)
        return getattr(torchvision.models, fn_name)(weights=None, **kwargs)
    return make


_IMAGE = (InputSpec("input", (3, 224, 224), torch.float32),)

_SPECS: Sequence[ModelSpec] = [
    ModelSpec("resnet18", "torchvision ResNet-18, 224x224 RGB, 1000 classes", _tv("resnet18"),
              _IMAGE, 1000, validation_batches=(2, 4, 8)),
    ModelSpec("resnet50", "torchvision ResNet-50, 224x224 RGB, 1000 classes", _tv("resnet50"),
              _IMAGE, 1000, validation_batches=(1, 2, 4)),
    ModelSpec("vgg16", "torchvision VGG-16 (no BN), 224x224 RGB, 1000 classes", _tv("vgg16"),
              _IMAGE, 1000, validation_batches=(1, 2, 3)),
    ModelSpec("mobilenet_v2", "torchvision MobileNetV2, 224x224 RGB, 1000 classes",
              _tv("mobilenet_v2"), _IMAGE, 1000, validation_batches=(2, 4, 8)),
    ModelSpec("densenet121", "torchvision DenseNet-121, 224x224 RGB, 1000 classes",
              _tv("densenet121"), _IMAGE, 1000, validation_batches=(1, 2, 4)),
    ModelSpec("efficientnet_b0", "torchvision EfficientNet-B0 (SiLU, squeeze-excite), 224x224 RGB; "
              "stochastic depth off (torch 1.13 cannot export its bernoulli)",
              _tv("efficientnet_b0", stochastic_depth_prob=0.0), _IMAGE, 1000, validation_batches=(2, 4, 8)),
    ModelSpec("vit_b_16", "torchvision ViT-B/16 transformer, 224x224 RGB, 1000 classes",
              _tv("vit_b_16"), _IMAGE, 1000, validation_batches=(1, 2, 4)),
    ModelSpec("bert_base", "BERT-base-sized encoder (12x768, 110M params), int64 tokens, seq 128",
              BertBase, (InputSpec("input_ids", (128,), torch.int64, high=30522),), 2,
              validation_batches=(1, 2, 4)),
    # Validation extras (also planned from data/zoo, listed as extras in the manifest).
    ModelSpec("mlp_dropout", "MLP 784-2048-2048-1024-10 with ReLU and Dropout(0.5)", MlpDropout,
              (InputSpec("input", (784,), torch.float32),), 10, in_zoo=False,
              validation_batches=(16, 64, 256)),
    ModelSpec("unet_small", "3-level UNet (ConvTranspose2d up, Concat skips), 4-class segmentation "
              "of 128x128 RGB", UNetSmall, (InputSpec("input", (3, 128, 128), torch.float32),), 4,
              label_shape=(128, 128), in_zoo=False, validation_batches=(1, 2, 4)),
    ModelSpec("conv1d_net", "1-D conv net (Conv1d/BN/ReLU/MaxPool1d) on 16000-sample mono audio, "
              "35 classes", Conv1dNet, (InputSpec("input", (1, 16000), torch.float32),), 35,
              in_zoo=False, validation_batches=(4, 16, 32)),
    ModelSpec("alexnet", "torchvision AlexNet (Dropout in the classifier), 224x224 RGB",
              _tv("alexnet"), _IMAGE, 1000, in_zoo=False, validation_batches=(2, 4, 8)),
    ModelSpec("squeezenet1_0", "torchvision SqueezeNet 1.0 (fire modules, Concat), 224x224 RGB",
              _tv("squeezenet1_0"), _IMAGE, 1000, in_zoo=False, validation_batches=(2, 4, 8)),
    ModelSpec("shufflenet_v2_x1_0", "torchvision ShuffleNetV2 x1.0 (channel shuffle, Split), "
              "224x224 RGB", _tv("shufflenet_v2_x1_0"), _IMAGE, 1000, in_zoo=False,
              validation_batches=(2, 4, 8)),
]

SPECS: Dict[str, ModelSpec] = {s.name: s for s in _SPECS}


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
