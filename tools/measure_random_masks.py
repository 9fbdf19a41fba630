#!/usr/bin/python3
"""Networks with random masks torch.onnx.export refuses in training mode, exported by oomguard and planned.

    /usr/bin/python3 tools/measure_random_masks.py [--oomguard build/oomguard] [--work DIR]
                                                   [--out bench/results/random_masks_probe.json]

torchvision's EfficientNet, EfficientNetV2, ConvNeXt and Swin train with stochastic depth (p = 0.1-0.2 by
default), whose mask torch.onnx.export refuses in training mode ("ONNX export of operator Bernoulli, out
parameter is not supported"); tools/unseen_models.py therefore measured them with it off. oomguard.export
and oomguard.plan(module) now export the mask as RandomUniformLike < p (python/oomguard/_export.py). Here each
model keeps its default stochastic depth: the real PyTorch 1.13 CPU step is measured in a fresh process under
the LD_PRELOAD tracker (tools/unseen_models.py's one-row measurement, tools/measure_step.py) and the export of
build/python's oomguard is planned with `oomguard plan --target cpu`. The planner was not changed for these
models; the rows were chosen before it was run on them. The same holds for nn.Dropout1d/2d/3d and
nn.AlphaDropout ("Unsupported: ONNX export of operator aten::feature_dropout, training mode"): small nets with
them (built here) are measured and planned the same way.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import unseen_models  # noqa: E402  (the builders, the one-row measurement)

IMG = unseen_models.IMG
MODELS = [
    {"name": "efficientnet_b0_sd", "builder": "tv", "args": {"fn": "efficientnet_b0"}, "inputs": IMG(64),
     "classes": 100, "rows": [[4, "adam"], [8, "sgd"]], "description": "EfficientNet-B0, stochastic depth 0.2"},
    {"name": "efficientnet_v2_s_sd", "builder": "tv", "args": {"fn": "efficientnet_v2_s"}, "inputs": IMG(64),
     "classes": 100, "rows": [[2, "momentum"]], "description": "EfficientNetV2-S, stochastic depth 0.2"},
    {"name": "convnext_tiny_sd", "builder": "tv", "args": {"fn": "convnext_tiny"}, "inputs": IMG(64),
     "classes": 100, "rows": [[2, "adam"]], "description": "ConvNeXt-T, stochastic depth 0.1"},
    {"name": "swin_t_sd", "builder": "tv", "args": {"fn": "swin_t"}, "inputs": IMG(64),
     "classes": 100, "rows": [[2, "sgd"]], "description": "Swin-T, stochastic depth 0.2"},
    {"name": "dropout2d_cnn", "builder": "masks", "args": {"dims": 2}, "inputs": [["input", [3, 48, 48], "float32", 0]],
     "classes": 10, "rows": [[8, "adam"], [16, "sgd"]],
     "description": "conv/BN/ReLU blocks with nn.Dropout2d(0.2) after each, a UNet-style down path"},
    {"name": "dropout1d_tcn", "builder": "masks", "args": {"dims": 1}, "inputs": [["input", [16, 256], "float32", 0]],
     "classes": 10, "rows": [[8, "momentum"]], "description": "1-D conv net with nn.Dropout1d(0.1)"},
    {"name": "dropout3d_video", "builder": "masks", "args": {"dims": 3}, "inputs": [["input", [3, 8, 32, 32], "float32", 0]],
     "classes": 10, "rows": [[2, "adam"]], "description": "3-D conv net with nn.Dropout3d(0.2)"},
    {"name": "selu_alpha_mlp", "builder": "masks", "args": {"dims": 0}, "inputs": [["input", [512], "float32", 0]],
     "classes": 10, "rows": [[32, "sgd"], [64, "adam"]],
     "description": "self-normalising MLP: Linear, SELU, nn.AlphaDropout(0.1)"},
]


def build_masks(model: dict):
    """The small nets of builder "masks"."""
    import torch.nn as nn
    dims = model["args"]["dims"]
    if dims == 0:
        layers = []
        for i in range(3):
            layers += [nn.Linear(512, 512), nn.SELU(), nn.AlphaDropout(0.1)]
        return nn.Sequential(*layers, nn.Linear(512, model["classes"]))
    conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[dims]
    norm = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}[dims]
    drop = {1: nn.Dropout1d, 2: nn.Dropout2d, 3: nn.Dropout3d}[dims]
    pool = {1: nn.MaxPool1d, 2: nn.MaxPool2d, 3: nn.MaxPool3d}[dims]
    channels = model["inputs"][0][1][0]
    layers = []
    for width in (32, 64, 96):
        layers += [conv(channels, width, 3, padding=1), norm(width), nn.ReLU(), drop(0.2 if dims != 1 else 0.1),
                   pool(2)]
        channels = width
    gap = {1: nn.AdaptiveAvgPool1d, 2: nn.AdaptiveAvgPool2d, 3: nn.AdaptiveAvgPool3d}[dims](1)
    return nn.Sequential(*layers, gap, nn.Flatten(), nn.Linear(channels, model["classes"]))


def use_models() -> None:
    builtin = unseen_models.build
    unseen_models.build = lambda m: build_masks(m) if m["builder"] == "masks" else builtin(m)
    unseen_models.MODELS = MODELS
    unseen_models.BY_NAME = {m["name"]: m for m in MODELS}
    unseen_models.SET = "unseen"


def export_all(work: str) -> None:
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    from oomguard._export import export_onnx
    from oomguard.inplace import add_inplace_metadata
    for m in MODELS:
        module = unseen_models.build(m)
        (_, shape, _, _), = m["inputs"]
        graph = add_inplace_metadata(export_onnx(module, torch.randn(2, *shape)), module)
        with open(os.path.join(work, m["name"] + ".onnx"), "wb") as f:
            f.write(graph)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    parser.add_argument("--work", default="/tmp/oomguard_random_masks")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "random_masks_probe.json"))
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--export-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    use_models()
    if args.child:
        name, batch, optimizer = args.child
        return unseen_models.one_main(name, int(batch), optimizer, args.work, None)
    if args.export_child:
        export_all(args.work)
        return 0

    os.makedirs(args.work, exist_ok=True)
    load_before = os.getloadavg()
    start = time.time()
    me = [sys.executable, os.path.abspath(__file__), "--work", args.work]
    subprocess.run(me + ["--export-child"], check=True)
    rows = []
    for m in MODELS:
        for batch, optimizer in m["rows"]:
            child = subprocess.run(me + ["--child", m["name"], str(batch), optimizer], capture_output=True,
                                   text=True, timeout=900)
            if child.returncode != 0:
                print("%s b%d %s: measure failed: %s" % (m["name"], batch, optimizer,
                                                         (child.stdout + child.stderr).strip()[-300:]))
                return 1
            with open(os.path.join(args.work, unseen_models.row_file(m["name"], batch, optimizer))) as f:
                rec = json.load(f)
            plan = subprocess.run([args.oomguard, "plan", os.path.join(args.work, m["name"] + ".onnx"),
                                   "--target", "cpu", "--batch", str(batch), "--optimizer", optimizer,
                                   "--loss", "cross_entropy", "--json"], capture_output=True, text=True)
            if plan.returncode != 0:
                print("%s: plan failed: %s" % (m["name"], plan.stderr.strip()))
                return 1
            j = json.loads(plan.stdout)
            row = {"model": m["name"], "description": m["description"], "batch": batch, "optimizer": optimizer,
                   "measured": {"peak": rec["peak_live_bytes"], "activations": rec["saved_tensor_bytes"],
                                "peak_phase": rec["peak_phase"]},
                   "predicted": {"peak": j["peak_allocated_bytes"], "activations": j["bytes"]["activations_saved"],
                                 "peak_phase": j["peak_phase"]},
                   "warnings": j["warnings"]}
            row["rel_error"] = {k: (row["predicted"][k] - row["measured"][k]) / row["measured"][k]
                                for k in ("peak", "activations")}
            rows.append(row)
            print("%-22s b%-2d %-8s peak measured %11d planned %11d (%+.2f %%)  saved %+.3f %%" % (
                m["name"], batch, optimizer, row["measured"]["peak"], row["predicted"]["peak"],
                100 * row["rel_error"]["peak"], 100 * row["rel_error"]["activations"]))
    worst = max(abs(r["rel_error"]["peak"]) for r in rows)
    out = {"what": __doc__.strip().splitlines()[0],
           "command": "/usr/bin/python3 tools/measure_random_masks.py",
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": "%s %s, %d CPUs" % (platform.system(), platform.release(), os.cpu_count() or 0),
           "load_average_before": load_before, "load_average_after": os.getloadavg(),
           "wall_seconds": round(time.time() - start, 1),
           "git": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip(),
           "peak_abs_error_max": worst, "rows": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("worst |peak error| %.2f %%; wrote %s" % (100 * worst, os.path.relpath(args.out, ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
