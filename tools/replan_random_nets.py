#!/usr/bin/python3
"""Plan-only regression: export random nets (tools/random_nets.py, classic kind) and plan each with two binaries.

    /usr/bin/python3 tools/replan_random_nets.py BASE_EXE NEW_EXE FIRST_SEED LAST_SEED HINTED(0|1)
Prints one JSON line: plans compared and the (seed, hinted, base peak, new peak) of every changed plan.
Used by conv fuzz round 4 (bench/results/conv_fuzz_round4_20261206.txt, there as /tmp/r4/rn_replan.py)."""
import json, os, sys
sys.path.insert(0, "/work/main/tools")
import random_nets as rn
import torch
base, final, lo, hi, hinted = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
out = "/tmp/r4/rn"; os.makedirs(out, exist_ok=True)
changed, planned, failed = [], 0, 0
for seed in range(lo, hi + 1):
    net = rn.describe_kind("classic", seed); spec = rn.make_spec(net)
    path = os.path.join(out, rn.record_name("classic", seed) + ".onnx")
    try:
        if not os.path.exists(path):
            model = spec.build(); inputs = spec.example_inputs(net["batch"]); names = [i.name for i in spec.inputs]
            axes = {n: {0: "batch"} for n in names + ["logits"]}
            torch.onnx.export(model, tuple(inputs), path, opset_version=net["opset"],
                              training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                              input_names=names, output_names=["logits"], dynamic_axes=axes)
    except Exception as e:
        failed += 1; continue
    extra = rn.inplace_hint({"net": net, "onnx": path}) if hinted else []
    for ex in ([[]] + ([extra] if hinted else [])):
        a = rn.plan(base, path, net["batch"], net["optimizer"], ex); b = rn.plan(final, path, net["batch"], net["optimizer"], ex)
        planned += 1
        ka = (a.get("peak_allocated_bytes"), a.get("bytes"), a.get("warnings"), a.get("error"))
        kb = (b.get("peak_allocated_bytes"), b.get("bytes"), b.get("warnings"), b.get("error"))
        if ka != kb: changed.append((seed, bool(ex), a.get("peak_allocated_bytes"), b.get("peak_allocated_bytes")))
print(json.dumps({"seeds": [lo, hi], "plans_compared": planned, "export_failed": failed, "changed": changed}))
