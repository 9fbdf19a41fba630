#!/usr/bin/python3
"""Exports nn.EmbeddingBag (which torch.onnx writes as a Loop, one bag per iteration, whose body
gathers rows of the outer weight) and measures its real PyTorch CPU training step.

    /usr/bin/python3 tools/measure_embedding_bag.py [--out tests/data/plan]

Writes <out>/embedding_bag.onnx (shape-only, tools/export_zoo.py's export) and
<out>/embedding_bag.json: the step's peak live bytes for Adam and SGD at batch 32, each measured in
a fresh process under the LD_PRELOAD tracker (tools/measure_step.py). planner_test.cc's
`Planner.EmbeddingBagLoopGivesTheOuterWeightItsGradient` plans the file against these figures.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH, ROWS, DIM, BAG = 32, 100000, 64, 20


def spec():
    import torch
    import torch.nn as nn
    import models

    class BagNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.bag = nn.EmbeddingBag(ROWS, DIM, mode="mean")
            self.fc = nn.Linear(DIM, 10)

        def forward(self, x):
            return self.fc(self.bag(x))

    return models.ModelSpec("embedding_bag", "nn.EmbeddingBag(100000, 64, mode='mean') -> Linear(64, 10), "
                            "bags of 20 indices", BagNet,
                            (models.InputSpec("input", (BAG,), torch.int64, high=ROWS),), 10,
                            label_shape=(), in_zoo=False, validation_batches=(BATCH,))


def child(optimizer: str) -> int:
    sys.path.insert(0, HERE)
    import measure_step
    measure_step.reexec_with_tracker(None)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    torch.set_num_threads(1)
    rec = measure_step.measure(spec(), BATCH, optimizer, measure_step.Tracker())
    print(json.dumps({k: rec[k] for k in ("peak_live_bytes", "peak_phase", "saved_tensor_bytes")}))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "..", "tests", "data", "plan"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    sys.path.insert(0, HERE)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    import export_zoo
    export_zoo.export_one(spec(), args.out, 14)
    result = {"model": "embedding_bag.onnx", "batch": BATCH, "torch_version": torch.__version__,
              "command": "/usr/bin/python3 tools/measure_embedding_bag.py", "steps": {}}
    for optimizer in ("adam", "sgd"):
        out = subprocess.run([sys.executable, __file__, "--child", optimizer], capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()[-1]
        result["steps"][optimizer] = json.loads(out)
        print(optimizer, out)
    with open(os.path.join(args.out, "embedding_bag.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
