#!/usr/bin/env python3
"""Checks that two oomguard binaries give the same plan, fit and split JSON.

For every zoo model and the ONNX files under tests/data/plan, on both targets, runs
  plan MODEL --batch 4 --json,  fit MODEL --memory M --json,  split MODEL --global-batch 6 --gpus 2 --memory M --json
with the baseline and the new binary and compares the JSON (every field; the outputs carry no timing
field) and the exit status. A speed change must leave every prediction byte-identical.
  /usr/bin/python3 tools/check_same_plans.py BASELINE_EXE NEW_EXE [--quick] [--added-field NAME ...]
Exit 0 when all agree, 1 with the differences listed. --quick: plan and fit only, cuda and cpu, six models.
--added-field NAME: a key only the new binary writes (a field the change adds on purpose, at any depth)
is no difference; its value is not compared.
"""
import glob
import json
import os
import subprocess
import sys


def run(exe, args):
    p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=600)
    try:
        out = json.loads(p.stdout) if p.stdout.strip() else None
    except json.JSONDecodeError:
        out = p.stdout
    return p.returncode, out, p.stderr.strip()


ADDED_FIELDS = set()


def first_difference(a, b, path="$"):
    if type(a) is not type(b):
        return f"{path}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a and k in ADDED_FIELDS:
                continue
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'baseline' if k in a else 'new'}"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} entries"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base, new = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv[3:]
    rest = sys.argv[3:]
    ADDED_FIELDS.update(rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "--added-field")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _, models, _ = run(base, ["models", "--json"])
    names = [m["name"] for m in models["models"]]
    files = sorted(glob.glob(os.path.join(root, "tests/data/plan/*.onnx")))
    if quick:
        names = [n for n in names if n in ("resnet18", "mobilenet_v2", "bert_base", "unet_small", "mlp_dropout",
                                            "conv1d_net")]
        files = files[:1]
    cases = []
    for model in names + files:
        for target in ("cuda", "cpu"):
            common = ["--target", target, "--json"]
            cases.append(["plan", model, "--batch", "4"] + common)
            cases.append(["fit", model, "--memory", "6GiB"] + common)
            if not quick:
                cases.append(["split", model, "--global-batch", "6", "--gpus", "2", "--memory", "6GiB"] + common)
    differences = 0
    for args in cases:
        rb, jb, eb = run(base, args)
        rn, jn, en = run(new, args)
        d = None
        if rb != rn:
            d = f"exit {rb} vs {rn}"
        elif jb is None and jn is None:
            d = None if eb == en else f"stderr {eb!r} vs {en!r}"
        else:
            d = first_difference(jb, jn)
        if d:
            differences += 1
            print("DIFFERENT", " ".join(args), "--", d)
    print(f"{len(cases)} commands, {differences} different ({base} vs {new})")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
