#!/usr/bin/python3
"""Development probe: random einsum equations in real PyTorch 1.13 CPU training steps, against the plan.

    /usr/bin/python3 tools/probe_einsum.py --seeds 1-40 [--oomguard build/oomguard] [--other OOMGUARD]
                                           [--work DIR] [--out FILE] [--measured EARLIER_OUT]
    /usr/bin/python3 tools/probe_einsum.py --show 7
    /usr/bin/python3 tools/probe_einsum.py --autograd --seeds 1000-1299

Each seed draws one net around one einsum: 2 to 4 operands, random letters (lower and upper case) and sizes,
each operand either an activation (a Linear of the input, viewed with a batch letter) or a weight
(nn.Parameter), some of either kind permuted before the einsum (a non-contiguous view), some equations written
with an ellipsis for the batch. The einsum's output, flattened, feeds a Linear head. Exported in training mode
(tools/export_zoo.py, opset 14), the real step measured in a fresh process under the LD_PRELOAD tracker (one
thread; tools/probe_misses.py's measure_child), then planned with `oomguard plan --target cpu`.

--measured replans an earlier run's exports against its measurements (a new build, no new measurement). --autograd
runs each seed's einsum alone in torch and stores what its autograd graph keeps (tests/data/plan/einsum_autograd.json,
the reference of EinsumRun.KeepsWhatTorchAutogradKeeps; some operands there without requires_grad).

Seeds below 500000 are development seeds; seeds >= 500000 are held out (measured once, never tuned on).
"""
import argparse
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

FEATURES = 8
CLASSES = 5
BATCH = 64
SIZES = (2, 3, 4, 6, 8, 12, 16, 24)
LETTERS = "abcdefghijklmopqrstuvwxyzAB"  # no "n": the batch letter
AUTOGRAD_DATA = "tests/data/plan/einsum_autograd.json"


def draw(seed: int) -> dict:
    """The case of one seed: the equation, each operand's letters as stored and as the equation reads them,
    whether it is a weight, and each letter's size."""
    rng = random.Random(seed)
    n_ops = rng.choice((2, 2, 3, 3, 4))
    letters = rng.sample(LETTERS, rng.randint(3, 6))
    size = {c: rng.choice(SIZES) for c in letters}
    ops = []
    for i in range(n_ops):
        weight = i > 0 and rng.random() < 0.4
        own = rng.sample(letters, rng.randint(1, 3))
        stored = own if weight else ["n"] + own
        read = list(stored)
        if len(read) > 1 and rng.random() < 0.35:
            while read == stored:
                rng.shuffle(read)
        ops.append({"weight": weight, "stored": "".join(stored), "read": "".join(read)})
    used = sorted({c for op in ops for c in op["read"] if c != "n"}, key=letters.index)
    out = ["n"] + rng.sample(used, rng.randint(0, min(3, len(used))))
    ellipsis = rng.random() < 0.2
    terms = [op["read"] for op in ops]
    rhs = "".join(out)
    if ellipsis:
        terms = [t.replace("n", "...") for t in terms]
        rhs = rhs.replace("n", "...")
    size["n"] = BATCH
    return {"seed": seed, "equation": ",".join(terms) + "->" + rhs, "ops": ops, "out": "".join(out),
            "size": {c: size[c] for c in sorted(set("".join(op["stored"] for op in ops)) | {"n"})}}


def autograd_row(seed: int) -> dict:
    """What torch's autograd graph of the seed's einsum alone keeps: each operand a leaf in its stored layout, viewed
    (permuted) as the equation reads it, some without requires_grad; the storages its saved tensors hold, the
    operands' own apart."""
    import torch
    case = draw(seed)
    rng = random.Random(seed + 1)
    operands, leaves, rows = [], [], []
    for i, op in enumerate(case["ops"]):
        leaf = torch.randn([case["size"][c] for c in op["stored"]])
        leaf.requires_grad_(op["weight"] or i == 0 or rng.random() > 0.25)
        t = leaf.permute([op["stored"].index(c) for c in op["read"]]) if op["read"] != op["stored"] else leaf
        operands.append(t)
        leaves.append(leaf)
        rows.append({"dims": list(t.shape), "strides": list(t.stride()), "requires_grad": leaf.requires_grad})
    y = torch.einsum(case["equation"], *operands)
    own = {leaf.storage().data_ptr(): i for i, leaf in enumerate(leaves)}
    kept, saved_operands, seen, stack = {}, set(), set(), [y.grad_fn]
    while stack:
        f = stack.pop()
        if f is None or f in seen or type(f).__name__ == "AccumulateGrad":
            continue
        seen.add(f)
        for name in dir(f):
            if name.startswith("_saved_"):
                t = getattr(f, name)
                if isinstance(t, torch.Tensor):
                    ptr = t.storage().data_ptr()
                    if ptr in own:
                        saved_operands.add(own[ptr])
                    elif ptr != y.storage().data_ptr():
                        kept[ptr] = t.storage().size()
        stack.extend(g for g, _ in f.next_functions)
    return {"seed": seed, "equation": case["equation"], "operands": rows,
            "operand_saved": [i in saved_operands for i in range(len(rows))],
            "saved_elements": sorted(kept.values()), "result_contiguous": y.is_contiguous()}


def build(case: dict):
    import torch
    from torch import nn

    class EinsumNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.ModuleDict()
            self.weights = nn.ParameterDict()
            for i, op in enumerate(case["ops"]):
                dims = [case["size"][c] for c in op["stored"] if c != "n"]
                if op["weight"]:
                    self.weights[str(i)] = nn.Parameter(0.1 * torch.randn(dims))
                else:
                    self.proj[str(i)] = nn.Linear(FEATURES, _prod(dims))
            out = _prod([case["size"][c] for c in case["out"] if c != "n"])
            self.head = nn.Linear(out, CLASSES)

        def forward(self, x):
            b = x.shape[0]
            operands = []
            for i, op in enumerate(case["ops"]):
                if op["weight"]:
                    t = self.weights[str(i)]
                else:
                    t = self.proj[str(i)](x).view([b] + [case["size"][c] for c in op["stored"][1:]])
                if op["read"] != op["stored"]:
                    t = t.permute([op["stored"].index(c) for c in op["read"]])
                operands.append(t)
            return self.head(torch.einsum(case["equation"], *operands).reshape(b, -1))
    return EinsumNet()


def _prod(dims) -> int:
    p = 1
    for d in dims:
        p *= d
    return p


def spec(seed: int):
    import torch
    import models
    case = draw(seed)
    return models.ModelSpec("einsum_%d" % seed, "einsum probe %s" % case["equation"], lambda: build(case),
                            (models.InputSpec("input", (FEATURES,), torch.float32, high=0),), CLASSES,
                            in_zoo=False, validation_batches=(BATCH,))


def parse_seeds(text: str):
    seeds = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    return seeds


def summary(errors) -> str:
    a = sorted(abs(e) for e in errors)
    if not a:
        return "no rows"
    pick = lambda q: a[min(len(a) - 1, int(q * len(a)))]  # noqa: E731
    return "%d rows: |error| median %.2f %%, p90 %.2f %%, max %.2f %%, %d within 3 %%, signed min %+.2f %% max %+.2f %%" % (
        len(a), pick(0.5), pick(0.9), a[-1], sum(1 for e in a if e <= 3.0), min(errors), max(errors))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1-40", help="e.g. 1-40 or 3,7,9-12")
    parser.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    parser.add_argument("--other", help="a second oomguard build planned beside it (main's)")
    parser.add_argument("--work", default="/tmp/oomguard_einsum_probe")
    parser.add_argument("--out", help="write the rows as JSON here")
    parser.add_argument("--show", type=int, help="print one seed's case and exit")
    parser.add_argument("--measured", help="a JSON of an earlier run (--out): its measurements and --work's exports "
                                           "are reused, only the plans are made again")
    parser.add_argument("--autograd", action="store_true",
                        help="store what autograd keeps for each seed's einsum alone in " + AUTOGRAD_DATA)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.autograd:
        import torch
        rows = [autograd_row(seed) for seed in parse_seeds(args.seeds)]
        with open(os.path.join(ROOT, AUTOGRAD_DATA), "w") as f:
            json.dump({"torch_version": torch.__version__, "opt_einsum": torch.backends.opt_einsum.is_available(),
                       "command": "/usr/bin/python3 tools/probe_einsum.py --autograd --seeds " + args.seeds,
                       "cases": rows}, f, indent=None, separators=(",", ":"))
            f.write("\n")
        print("%d cases in %s" % (len(rows), AUTOGRAD_DATA))
        return 0
    if args.show is not None:
        print(json.dumps(draw(args.show), indent=1))
        return 0
    import probe_misses
    if args.child is not None:
        return probe_misses.measure_child(lambda: spec(args.child), BATCH, "sgd",
                                          ("peak_live_bytes", "peak_phase", "saved_tensor_bytes", "phase_peaks"))
    import warnings
    warnings.filterwarnings("ignore")
    import export_zoo
    os.makedirs(args.work, exist_ok=True)
    rows = []
    earlier = {}
    if args.measured:
        with open(args.measured) as f:
            earlier = {r["seed"]: r for r in json.load(f)["rows"]}
    for seed in parse_seeds(args.seeds):
        case = draw(seed)
        if args.measured:
            if seed not in earlier:
                continue
            rec = {"peak_live_bytes": earlier[seed]["measured_peak"], "saved_tensor_bytes": earlier[seed]["measured_saved"],
                   "peak_phase": earlier[seed]["measured_phase"]}
        else:
            try:
                export_zoo.export_one(spec(seed), args.work, 14, require_inferred_output=False)
                out = subprocess.run([sys.executable, __file__, "--child", str(seed)], capture_output=True, text=True,
                                     check=True).stdout.strip().splitlines()[-1]
                rec = json.loads(out)
            except Exception as e:  # noqa: BLE001 (an equation torch or the exporter refuses: reported, skipped)
                print("seed %-7d %-34s failed: %s" % (seed, case["equation"], str(e).splitlines()[0][:80]), flush=True)
                continue
        onnx_path = os.path.join(args.work, "einsum_%d.onnx" % seed)
        row = {"seed": seed, "equation": case["equation"], "weights": [op["weight"] for op in case["ops"]],
               "permuted": [op["read"] != op["stored"] for op in case["ops"]], "batch": BATCH,
               "measured_peak": rec["peak_live_bytes"], "measured_saved": rec["saved_tensor_bytes"],
               "measured_phase": rec["peak_phase"]}
        line = "seed %-7d %-34s peak %9d" % (seed, case["equation"], row["measured_peak"])
        for key, binary in (("planned", args.oomguard), ("other", args.other)):
            if not binary:
                continue
            p = probe_misses.plan(binary, onnx_path, BATCH, "sgd")
            row[key + "_peak"] = p["peak_allocated_bytes"]
            row[key + "_saved"] = p["bytes"]["activations_saved"]
            row[key + "_error_pct"] = round(100.0 * (row[key + "_peak"] - row["measured_peak"]) / row["measured_peak"], 3)
            line += "  %s %9d (%+7.2f%%)" % (key, row[key + "_peak"], row[key + "_error_pct"])
        line += "  saved %d plan %d" % (row["measured_saved"], row.get("planned_saved", -1))
        rows.append(row)
        print(line, flush=True)
    for key in ("planned", "other"):
        errs = [r[key + "_error_pct"] for r in rows if key + "_error_pct" in r]
        if errs:
            print("%s: %s" % (key, summary(errs)))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"command": " ".join(["/usr/bin/python3", "tools/probe_einsum.py"] + sys.argv[1:]),
                       "rows": rows}, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
