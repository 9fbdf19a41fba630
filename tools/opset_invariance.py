#!/usr/bin/python3
"""Differential test: one network exported at several ONNX opsets must get one plan.

    /usr/bin/python3 tools/opset_invariance.py [--oomguard build/oomguard] [--seeds 800000-800099]
        [--kinds classic,modern2d,window,tagger] [--opsets 11,13,14,17] [--torchvision]
        [--example-batches 2,5] [--work DIR] [--out bench/results/opset_invariance.json] [--quiet]

The same module exported with opset_version 11, 13, 14 or 17 is the same training step: PyTorch runs it
the same way whatever the file says. The exporter writes different graphs (Dropout's ratio an attribute
below 12, Split/Squeeze/Reduce* axes as attributes below 13 or 18, Hardswish as x * HardSigmoid below 14,
LayerNormalization from 17), so a plan that changes with the opset reads one of the forms wrong. Every
network of tools/random_nets.py for the seeds (each kind), and with --torchvision a few torchvision models,
is exported (training mode, no constant folding, dynamic batch) at each opset and planned with
`oomguard plan --target cpu` at its batch and optimizer; peak and saved bytes must be equal. With
--example-batches each opset is also exported from example inputs of each of those batch sizes (the batch axis
is dynamic, so a plan must not depend on the example it was traced with). No PyTorch step
is measured: this finds disagreements, not which form is right (tools/random_nets.py measures that).
Exit status: 0 every network agrees, 1 a disagreement or a plan failure, 2 bad usage.
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
import random_nets  # noqa: E402 (no torch at import)

TORCHVISION = [("resnet18", 64), ("mobilenet_v3_small", 64), ("shufflenet_v2_x0_5", 64), ("regnet_x_400mf", 64),
               ("squeezenet1_1", 64), ("googlenet", 64)]


def export(model, inputs, names, path: str, opset: int) -> str:
    """'' when exported, else a one-line reason."""
    import torch
    axes = {n: {0: "batch"} for n in names + ["logits"]}
    try:
        torch.onnx.export(model, tuple(inputs), path, opset_version=opset,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                          input_names=names, output_names=["logits"], dynamic_axes=axes)
    except Exception as e:  # noqa: BLE001 (an op without an exporter at this opset: reported)
        return "%s: %s" % (type(e).__name__, (str(e).strip().splitlines() or [""])[0][:160])
    return ""


def plan(oomguard: str, path: str, batch: int, optimizer: str) -> dict:
    p = subprocess.run([oomguard, "plan", path, "--target", "cpu", "--batch", str(batch), "--optimizer",
                        optimizer, "--loss", "cross_entropy", "--json"], capture_output=True, text=True)
    if p.returncode != 0 or not p.stdout.strip():
        return {"error": "exit %d: %s" % (p.returncode, p.stderr.strip()[:200])}
    j = json.loads(p.stdout)
    return {"peak": j["peak_allocated_bytes"], "saved": j["bytes"]["activations_saved"]}


def cases(args):
    """(name, build, example inputs of a batch size, input names, batch, optimizer) for every network."""
    import torch
    for kind in args.kinds:
        for seed in args.seeds:
            net = random_nets.describe_kind(kind, seed)
            spec = random_nets.make_spec(net)
            yield (random_nets.record_name(kind, seed), spec.build, spec.example_inputs,
                   [i.name for i in spec.inputs], net["batch"], net["optimizer"])
    if args.torchvision:
        import torchvision
        for fn, px in TORCHVISION:
            def build(fn=fn):
                torch.manual_seed(0)
                return getattr(torchvision.models, fn)(weights=None, num_classes=10)
            yield fn, build, lambda n, px=px: [torch.randn(n, 3, px, px)], ["input"], 2, "momentum"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    parser.add_argument("--seeds", default="800000-800099")
    parser.add_argument("--kinds", default="classic")
    parser.add_argument("--opsets", default="11,13,14,17")
    parser.add_argument("--torchvision", action="store_true")
    parser.add_argument("--example-batches", help="also export from example inputs of these batch sizes")
    parser.add_argument("--work", default="/tmp/oomguard_opsets")
    parser.add_argument("--out")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    try:
        args.seeds = random_nets.parse_seeds(args.seeds)
        args.opsets = [int(o) for o in args.opsets.split(",")]
        args.kinds = [k for k in args.kinds.split(",") if k]
        args.example_batches = [int(b) for b in args.example_batches.split(",")] if args.example_batches else []
        if any(b < 1 for b in args.example_batches):
            raise ValueError("example batches must be positive")
    except ValueError as e:
        print("opset_invariance: %s" % e, file=sys.stderr)
        return 2
    unknown = [k for k in args.kinds if k not in random_nets.KINDS]
    if unknown or len(args.opsets) * max(1, len(args.example_batches)) < 2 or not os.access(args.oomguard, os.X_OK):
        print("opset_invariance: need known --kinds (%s), two variants or more (opsets x example batches) and an "
              "oomguard binary"
              % ",".join(random_nets.KINDS), file=sys.stderr)
        return 2
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    torch.set_num_threads(1)
    os.makedirs(args.work, exist_ok=True)
    load_before = os.getloadavg()
    start = time.time()
    rows, disagree, failed = [], 0, 0
    for name, build, make_inputs, names, batch, optimizer in cases(args):
        row = {"net": name, "batch": batch, "optimizer": optimizer, "plans": {}, "not_exported": {}}
        for opset in args.opsets:
            for example in args.example_batches or [batch]:
                variant = str(opset) if not args.example_batches else "%d/b%d" % (opset, example)
                path = os.path.join(args.work, "%s_op%d_b%d.onnx" % (name, opset, example))
                why = export(build(), make_inputs(example), names, path, opset)
                if why:
                    row["not_exported"][variant] = why
                    continue
                row["plans"][variant] = plan(args.oomguard, path, batch, optimizer)
        planned = [p for p in row["plans"].values() if "error" not in p]
        errors = [p for p in row["plans"].values() if "error" in p]
        row["agree"] = not errors and len({(p["peak"], p["saved"]) for p in planned}) <= 1
        disagree += not row["agree"] and not errors
        failed += bool(errors)
        rows.append(row)
        if not args.quiet or not row["agree"]:
            print("%-22s %s  %s" % (name, "agree   " if row["agree"] else "DISAGREE",
                                    "  ".join("op%s %s" % (o, p.get("peak", p.get("error")))
                                              for o, p in row["plans"].items())))
    compared = sum(len(r["plans"]) >= 2 for r in rows)
    print("%d networks, %d planned at two opsets or more: %d disagree, %d with a failed plan; %d exports refused"
          % (len(rows), compared, disagree, failed, sum(len(r["not_exported"]) for r in rows)))
    if args.out:
        out = {"what": __doc__.strip().splitlines()[0], "command": " ".join(["/usr/bin/python3"] + sys.argv),
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "machine": "%s %s, %d CPUs" % (platform.system(), platform.release(), os.cpu_count() or 0),
               "load_average_before": load_before, "load_average_after": os.getloadavg(),
               "wall_seconds": round(time.time() - start, 1), "torch_version": torch.__version__,
               "git": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                     text=True).stdout.strip(),
               "summary": {"networks": len(rows), "compared": compared, "disagree": disagree, "failed": failed},
               "rows": rows}
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
    return 1 if disagree or failed else 0


if __name__ == "__main__":
    sys.exit(main())
