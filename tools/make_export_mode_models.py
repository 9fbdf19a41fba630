#!/usr/bin/python3
"""Writes the tiny ONNX files the export-mode tests read (tests/data/plan/):
the same conv + batch-norm + mean + batch-norm + dropout + linear net exported for training and,
the way torch.onnx.export does by default, for inference (BatchNorm folded into
the Conv, Dropout dropped). Needs Debian's python3-torch (1.13).

    /usr/bin/python3 tools/make_export_mode_models.py tests/data/plan
"""
import os
import sys
import warnings

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.bn2 = nn.BatchNorm1d(8)  # after a mean, not a Conv: stays a BatchNormalization in eval mode
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.fc(self.drop(self.bn2(x.mean((2, 3)))))


def export(path, training, opset):
    torch.manual_seed(0)
    model = Net()
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    if not training:
        model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.randn(2, 3, 16, 16),), path, training=mode,
                          do_constant_folding=not training, opset_version=opset, input_names=["input"],
                          output_names=["logits"], dynamic_axes={"input": {0: "batch"}})


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/plan"
    os.makedirs(out, exist_ok=True)
    for opset in (13, 14):
        export(os.path.join(out, f"export_training_opset{opset}.onnx"), True, opset)
        export(os.path.join(out, f"export_eval_opset{opset}.onnx"), False, opset)


if __name__ == "__main__":
    main()
