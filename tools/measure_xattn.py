#!/usr/bin/python3
"""Development probe (not held out): cross-attention with nn.MultiheadAttention, measured against the plan.

    /usr/bin/python3 tools/measure_xattn.py [--oomguard build/oomguard] [--work DIR]
                                            [--out bench/results/xattn_probe.json]
    /usr/bin/python3 tools/measure_xattn.py --perceiver     # tests/data/plan/perceiver_locals.*

Four small nets feed a learned query (a Parameter broadcast over the batch with expand, the Perceiver
idiom) or a slice of the keys into nn.MultiheadAttention(batch_first=True). Each is exported in training
mode (tools/export_zoo.py) and each row's real PyTorch 1.13 CPU step (SGD, batch 4 and 16) is measured
in a fresh process under the LD_PRELOAD tracker (tools/measure_step.py), then planned with
`oomguard plan --target cpu`. These probes are where the planner learned that a module's arguments stay
alive until the module call returns and that matmul copies a broadcast input; they are development data.
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
# (variant, embedding dim, query length, key/value length, heads)
CASES = [("expand", 64, 16, 128, 4), ("slice", 64, 16, 128, 4), ("expand", 96, 8, 64, 2),
         ("expand", 32, 32, 96, 4)]
BATCHES = (4, 16)
# --perceiver: 24 learned latents cross-attend to 192 tokens, then 2 encoder layers (d 96), batch 16,
# momentum; written with kv left in a name until forward returns ("named") and with `del kv` ("del").
# The two export alike; tests/data/plan/perceiver_locals.{onnx,json} (planner_test.cc).
PERCEIVER = {"fin": 48, "d": 96, "latents": 24, "tokens": 192, "layers": 2, "batch": 16, "optimizer": "momentum"}


def case_name(variant, d, lq, lkv):
    return "xa_%s_%d_%d_%d" % (variant, d, lq, lkv)


def spec(variant, d, lq, lkv, heads):
    import torch
    import torch.nn as nn
    import models

    class CrossAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Parameter(torch.randn(lq, d) * 0.02)
            self.inp = nn.Linear(d, d)
            self.att = nn.MultiheadAttention(d, heads, batch_first=True)
            self.fc = nn.Linear(d, 5)

        def forward(self, x):
            kv = self.inp(x)
            if variant == "expand":
                q = self.q.unsqueeze(0).expand(x.shape[0], -1, -1)
            else:
                q = kv[:, :lq]
            return self.fc(self.att(q, kv, kv, need_weights=False)[0].mean(dim=1))

    name = case_name(variant, d, lq, lkv)
    return models.ModelSpec(name, name, CrossAttention, (models.InputSpec("input", (lkv, d), torch.float32, high=0),),
                            5, label_shape=(), in_zoo=False, validation_batches=(BATCHES[0],))


def perceiver_spec(form: str):
    import torch
    import torch.nn as nn
    import models
    c = PERCEIVER

    class Perceiver(nn.Module):
        def __init__(self):
            super().__init__()
            self.latents = nn.Parameter(torch.randn(c["latents"], c["d"]) * 0.02)
            self.inp = nn.Linear(c["fin"], c["d"])
            self.cross = nn.MultiheadAttention(c["d"], 4, batch_first=True)
            self.norm = nn.LayerNorm(c["d"])
            layer = nn.TransformerEncoderLayer(c["d"], 4, 2 * c["d"], dropout=0.0, batch_first=True)
            self.selfatt = nn.TransformerEncoder(layer, c["layers"], enable_nested_tensor=False)
            self.fc = nn.Linear(c["d"], 7)

        def forward(self, x):
            kv = self.inp(x)
            q = self.latents.unsqueeze(0).expand(x.shape[0], -1, -1)
            z = self.norm(q + self.cross(q, kv, kv, need_weights=False)[0])
            if form == "del":
                del kv
            return self.fc(self.selfatt(z).mean(dim=1))

    return models.ModelSpec("perceiver_locals", "Perceiver-style cross-attention, kv " + form, Perceiver,
                            (models.InputSpec("input", (c["tokens"], c["fin"]), torch.float32, high=0),), 7,
                            label_shape=(), in_zoo=False, validation_batches=(c["batch"],))


def perceiver(out_dir: str) -> int:
    import torch
    import export_zoo
    export_zoo.export_one(perceiver_spec("named"), out_dir, 14, require_inferred_output=False)
    result = dict(PERCEIVER, model="perceiver_locals.onnx", torch_version=torch.__version__,
                  command="/usr/bin/python3 tools/measure_xattn.py --perceiver", peak_live_bytes={})
    for form in ("named", "del"):
        out = subprocess.run([sys.executable, __file__, "--perceiver-child", form], capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()[-1]
        result["peak_live_bytes"][form] = json.loads(out)["peak_live_bytes"]
        print(form, out)
    with open(os.path.join(out_dir, "perceiver_locals.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    return 0


def child(index: int, batch: int, form: str = "") -> int:
    sys.path.insert(0, HERE)
    import measure_step
    measure_step.reexec_with_tracker(None)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    torch.set_num_threads(1)
    if form:
        rec = measure_step.measure(perceiver_spec(form), PERCEIVER["batch"], PERCEIVER["optimizer"],
                                   measure_step.Tracker())
    else:
        rec = measure_step.measure(spec(*CASES[index]), batch, "sgd", measure_step.Tracker())
    print(json.dumps({k: rec[k] for k in ("peak_live_bytes", "peak_phase", "saved_tensor_bytes")}))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    parser.add_argument("--work", default="/tmp/oomguard_xattn", help="where the exported .onnx files go")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "xattn_probe.json"))
    parser.add_argument("--perceiver", action="store_true",
                        help="measure the named/del Perceiver pair into tests/data/plan instead")
    parser.add_argument("--child", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--perceiver-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    if args.perceiver_child:
        return child(0, 0, args.perceiver_child)
    if args.perceiver:
        sys.path.insert(0, HERE)
        return perceiver(os.path.join(ROOT, "tests", "data", "plan"))
    if not os.access(args.oomguard, os.X_OK):
        print("measure_xattn: %s is not an executable oomguard" % args.oomguard, file=sys.stderr)
        return 2
    sys.path.insert(0, HERE)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    import export_zoo
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for index, case in enumerate(CASES):
        name = case_name(*case[:4])
        export_zoo.export_one(spec(*case), args.work, 14, require_inferred_output=False)
        for batch in BATCHES:
            out = subprocess.run([sys.executable, __file__, "--child", str(index), str(batch)], capture_output=True,
                                 text=True, check=True).stdout.strip().splitlines()[-1]
            rec = json.loads(out)
            plan = json.loads(subprocess.run(
                [args.oomguard, "plan", os.path.join(args.work, name + ".onnx"), "--target", "cpu", "--batch",
                 str(batch), "--optimizer", "sgd", "--loss", "cross_entropy", "--json"],
                capture_output=True, text=True, check=True).stdout)
            row = {"model": name, "batch": batch, "optimizer": "sgd", "measured_peak": rec["peak_live_bytes"],
                   "measured_phase": rec["peak_phase"], "planned_peak": plan["peak_allocated_bytes"],
                   "measured_saved": rec["saved_tensor_bytes"], "planned_saved": plan["bytes"]["activations_saved"]}
            row["peak_error_pct"] = round(100.0 * (row["planned_peak"] - row["measured_peak"]) / row["measured_peak"], 3)
            rows.append(row)
            print("%-24s b=%-3d peak %10d plan %10d (%+.2f%%) [%s]  saved %10d plan %10d" % (
                name, batch, row["measured_peak"], row["planned_peak"], row["peak_error_pct"], row["measured_phase"],
                row["measured_saved"], row["planned_saved"]), flush=True)
    with open(os.path.join(args.out), "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "machine": platform.node(),
                   "cpus": os.cpu_count(), "load": os.getloadavg()[0], "torch_version": torch.__version__,
                   "command": "/usr/bin/python3 tools/measure_xattn.py", "development_data": True, "rows": rows},
                  f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
