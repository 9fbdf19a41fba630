#!/usr/bin/python3
"""Checks `oomguard fit --target cpu` against real PyTorch (Debian python3-torch, CPU).

For each model: pick a capacity between the predicted peaks of two neighbouring batches
(half a per-sample step above the plan at a target batch, rounded down to a MiB), run
`oomguard fit MODEL --target cpu --memory CAP --margin 0 --json`, then measure the real
steady-state step peak at max_batch and max_batch + 1 with tools/measure_step.py (LD_PRELOAD
allocation tracker). A model passes when the measured peak at max_batch is <= the capacity and
the one at max_batch + 1 exceeds it, or, failing that, when each measured peak is within
--tolerance (default 5 %, the planner's worst-case target) of the prediction.
Writes bench/results/fit_cpu.json.

    /usr/bin/python3 tools/validate_fit.py [--exe build/oomguard] [--models a,b,...]
        [--optimizer adam] [--out bench/results/fit_cpu.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_step import machine, now_utc  # noqa: E402  (one description of the machine for every tool)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MiB = 1 << 20

# model -> the batch the capacity is placed above (small batches keep the CPU measurement short).
DEFAULT_MODELS = {
    "resnet18": 6,
    "mobilenet_v2": 6,
    "squeezenet1_0": 6,
    "mlp_dropout": 96,
    "conv1d_net": 24,
    "unet_small": 3,
    "efficientnet_b0": 4,
}


def run_json(cmd: list[str]) -> tuple[int, dict]:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit("validate_fit: %s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    return p.returncode, json.loads(p.stdout)


def predicted_peak(exe: str, model: str, batch: int, optimizer: str) -> int:
    _, j = run_json([exe, "plan", model, "--target", "cpu", "--optimizer", optimizer,
                     "--batch", str(batch), "--json"])
    return int(j["peak_allocated_bytes"])


def measure(model: str, batches: list[int], optimizer: str, out_dir: str) -> dict[int, dict]:
    cmd = [sys.executable, os.path.join(HERE, "measure_step.py"), model,
           "--batches", ",".join(map(str, batches)), "--optimizers", optimizer, "--out", out_dir,
           "--quiet"]
    subprocess.run(cmd, check=True)
    res = {}
    for b in batches:
        with open(os.path.join(out_dir, "%s__b%d__%s.json" % (model, b, optimizer))) as f:
            res[b] = json.load(f)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "oomguard"))
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--optimizer", default="adam")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "fit_cpu.json"))
    args = ap.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            target = DEFAULT_MODELS.get(model, 4)
            lo = predicted_peak(args.exe, model, target, args.optimizer)
            hi = predicted_peak(args.exe, model, target + 1, args.optimizer)
            capacity = (lo + (hi - lo) // 2) // MiB * MiB
            rc, fit = run_json([args.exe, "fit", model, "--target", "cpu", "--optimizer", args.optimizer,
                                "--memory", str(capacity), "--margin", "0", "--json"])
            mb = int(fit["max_batch"])
            row = {"model": model, "optimizer": args.optimizer, "capacity_bytes": capacity,
                   "max_batch": mb, "fit_exit": rc,
                   "predicted_peak_at_max": int(fit["peak_allocated_bytes"]),
                   "predicted_peak_at_next": fit["next_batch_required_bytes"]}
            if mb >= 1:
                m = measure(model, [mb, mb + 1], args.optimizer, tmp)
                at, nxt = int(m[mb]["peak_live_bytes"]), int(m[mb + 1]["peak_live_bytes"])
                row["measured_peak_at_max"] = at
                row["measured_peak_at_next"] = nxt
                row["error_at_max"] = (row["predicted_peak_at_max"] - at) / at
                row["error_at_next"] = (int(row["predicted_peak_at_next"]) - nxt) / nxt
                row["max_fits_measured"] = at <= capacity
                row["next_exceeds_measured"] = nxt > capacity
                if row["max_fits_measured"] and row["next_exceeds_measured"]:
                    row["verdict"] = "exact"
                elif abs(row["error_at_max"]) <= args.tolerance and abs(row["error_at_next"]) <= args.tolerance:
                    row["verdict"] = "within_planner_error"
                else:
                    row["verdict"] = "wrong"
            else:
                row["verdict"] = "nothing_fits"
            print("%-16s cap %8.1f MiB  max_batch %4d  measured %s / %s  %s" % (
                model, capacity / MiB, mb, row.get("measured_peak_at_max"), row.get("measured_peak_at_next"),
                row["verdict"]), flush=True)
            rows.append(row)

    out = {
        "date": now_utc(),
        "machine": machine(),
        "command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
        "tolerance": args.tolerance,
        "models": rows,
        "summary": {v: sum(1 for r in rows if r["verdict"] == v)
                    for v in ("exact", "within_planner_error", "wrong", "nothing_fits")},
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    print("wrote", os.path.relpath(args.out, ROOT), out["summary"])
    return 0 if out["summary"]["wrong"] == 0 and out["summary"]["nothing_fits"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
