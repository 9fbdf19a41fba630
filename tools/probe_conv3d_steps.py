#!/usr/bin/python3
"""3-D convolutions as whole PyTorch 1.13 CPU training steps against `oomguard plan --target cpu`.

Each layer is a small net (a 1x1x1 convolution before it, so that its input needs a gradient, and a
mean and a linear head after it), exported in training mode, measured in a fresh process per row under
the LD_PRELOAD tracker (tools/measure_step.py, SGD, one intra-op thread) at batches 2 and 4, and planned.
Two fixed lists:
  dev      layers studied while the rules were written (oneDNN's direct weight gradient refusing
           shallow depths, sgemm packing or not, slow_conv3d's columns): tuning data;
  heldout  layers chosen before any of them was planned or measured (video-net shapes: R3D/C3D late
           blocks, R(2+1)D temporal kernels, 3-D UNet and I3D blocks); not tuned on.

    /usr/bin/python3 tools/probe_conv3d_steps.py [--set dev|heldout] [--oomguard build/oomguard]
        [--work DIR] [--out bench/results/conv3d_steps_<set>.json]
    /usr/bin/python3 tools/probe_conv3d_steps.py --replan bench/results/conv3d_steps_<set>.json [--oomguard ...]
        # plans the measured rows again (the exported files in --work) and rewrites the planned fields
Exit status: 0 measured, 1 a row failed, 2 bad usage.
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
BATCHES = (2, 4)
# cin, cout, input D x H x W, kernel, padding, stride (default 1), dilation (default 1)
SETS = {
    "dev": [
        {"cin": 64, "cout": 96, "D": 2, "H": 8, "W": 8, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 256, "cout": 256, "D": 2, "H": 7, "W": 7, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 512, "cout": 512, "D": 1, "H": 4, "W": 4, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 128, "cout": 128, "D": 4, "H": 14, "W": 14, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 64, "cout": 64, "D": 1, "H": 14, "W": 14, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 128, "cout": 256, "D": 2, "H": 14, "W": 14, "k": [3, 3, 3], "p": [1, 1, 1], "s": [2, 2, 2]},
        {"cin": 32, "cout": 32, "D": 2, "H": 16, "W": 16, "k": [3, 1, 1], "p": [1, 0, 0]},
        {"cin": 32, "cout": 48, "D": 2, "H": 16, "W": 16, "k": [1, 3, 3], "p": [0, 1, 1]},
        {"cin": 96, "cout": 96, "D": 3, "H": 6, "W": 6, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 16, "cout": 24, "D": 1, "H": 12, "W": 12, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 48, "cout": 64, "D": 4, "H": 8, "W": 8, "k": [3, 3, 3], "p": [2, 1, 1], "d": [2, 1, 1]},
        {"cin": 256, "cout": 128, "D": 2, "H": 4, "W": 4, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 24, "cout": 24, "D": 4, "H": 10, "W": 10, "k": [5, 5, 5], "p": [2, 2, 2]},
        {"cin": 64, "cout": 64, "D": 2, "H": 8, "W": 8, "k": [5, 5, 5], "p": [2, 2, 2]},
        {"cin": 40, "cout": 80, "D": 2, "H": 16, "W": 16, "k": [3, 3, 3], "p": [1, 1, 1], "s": [1, 2, 2]},
        {"cin": 160, "cout": 160, "D": 2, "H": 5, "W": 5, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 64, "cout": 64, "D": 1, "H": 20, "W": 20, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 64, "cout": 64, "D": 1, "H": 28, "W": 28, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 48, "cout": 32, "D": 1, "H": 16, "W": 16, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 40, "cout": 32, "D": 1, "H": 12, "W": 12, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 96, "cout": 64, "D": 1, "H": 24, "W": 24, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 42, "cout": 32, "D": 1, "H": 16, "W": 16, "k": [3, 3, 3], "p": [1, 1, 1]},
    ],
    "heldout": [
        {"cin": 256, "cout": 512, "D": 2, "H": 14, "W": 14, "k": [3, 3, 3], "p": [1, 1, 1], "s": [2, 2, 2]},
        {"cin": 512, "cout": 512, "D": 1, "H": 7, "W": 7, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 512, "cout": 512, "D": 2, "H": 7, "W": 7, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 144, "cout": 128, "D": 4, "H": 14, "W": 14, "k": [3, 1, 1], "p": [1, 0, 0]},
        {"cin": 460, "cout": 256, "D": 2, "H": 7, "W": 7, "k": [3, 1, 1], "p": [1, 0, 0]},
        {"cin": 64, "cout": 32, "D": 4, "H": 16, "W": 16, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 192, "cout": 96, "D": 4, "H": 14, "W": 14, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 128, "cout": 128, "D": 1, "H": 28, "W": 28, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 32, "cout": 64, "D": 2, "H": 32, "W": 32, "k": [3, 3, 3], "p": [1, 1, 1], "s": [1, 2, 2]},
        {"cin": 24, "cout": 48, "D": 1, "H": 20, "W": 20, "k": [3, 3, 3], "p": [1, 1, 1]},
        {"cin": 96, "cout": 192, "D": 3, "H": 12, "W": 12, "k": [3, 3, 3], "p": [1, 1, 1], "s": [2, 2, 2]},
        {"cin": 64, "cout": 64, "D": 8, "H": 14, "W": 14, "k": [3, 1, 1], "p": [1, 0, 0]},
    ],
}


def name_of(c: dict) -> str:
    parts = [c["cin"], c["cout"], c["D"], c["H"], c["W"]] + c["k"] + c["p"] + c.get("s", [1, 1, 1]) + c.get("d", [1, 1, 1])
    return "c3_" + "_".join(str(v) for v in parts)


def spec(c: dict):
    import torch
    import torch.nn as nn
    import models

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Conv3d(c["cin"], c["cin"], 1)
            self.conv = nn.Conv3d(c["cin"], c["cout"], tuple(c["k"]), stride=tuple(c.get("s", (1, 1, 1))),
                                  padding=tuple(c["p"]), dilation=tuple(c.get("d", (1, 1, 1))))
            self.fc = nn.Linear(c["cout"], 5)

        def forward(self, x):
            return self.fc(self.conv(self.inp(x)).mean(dim=(2, 3, 4)))
    name = name_of(c)
    return models.ModelSpec(name, name, Net, (models.InputSpec("input", (c["cin"], c["D"], c["H"], c["W"]),
                                                               torch.float32),), 5, label_shape=(), in_zoo=False)


def child(layer: str, batch: int) -> int:
    sys.path.insert(0, HERE)
    import measure_step
    measure_step.reexec_with_tracker(None)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    rec = measure_step.measure(spec(json.loads(layer)), batch, "sgd", measure_step.Tracker())
    print(json.dumps({k: rec[k] for k in ("peak_live_bytes", "peak_phase")}))
    return 0


def plan(exe: str, work: str, name: str, batch: int) -> dict:
    p = subprocess.run([exe, "plan", os.path.join(work, name + ".onnx"), "--target", "cpu", "--batch", str(batch),
                        "--optimizer", "sgd", "--json"], capture_output=True, text=True)
    return json.loads(p.stdout)


def summarize(rows: list, failed: int) -> dict:
    errs = sorted(abs(r["peak_error_pct"]) for r in rows)
    summary = {"rows": len(rows), "failed": failed}
    if errs:
        summary.update({"median_abs_pct": errs[len(errs) // 2], "p90_abs_pct": errs[int(0.9 * (len(errs) - 1))],
                        "max_abs_pct": errs[-1]})
    print("rows %d, failed %d; |error| median %.2f%%, p90 %.2f%%, max %.2f%%" % (
        len(rows), failed, summary.get("median_abs_pct", 0), summary.get("p90_abs_pct", 0),
        summary.get("max_abs_pct", 0)))
    return summary


def git_head() -> str:
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True)
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def replan(path: str, exe: str, work: str, out: str) -> int:
    with open(path) as f:
        result = json.load(f)
    for r in result["rows"]:
        if not os.path.exists(os.path.join(work, r["name"] + ".onnx")):
            sys.path.insert(0, HERE)
            import export_zoo
            export_zoo.export_one(spec(r["layer"]), work, 14, require_inferred_output=False)
        planned = plan(exe, work, r["name"], r["batch"])
        r["planned_peak"], r["planned_phase"] = planned["peak_allocated_bytes"], planned["peak_phase"]
        r["peak_error_pct"] = round(100.0 * (r["planned_peak"] - r["measured_peak"]) / r["measured_peak"], 3)
        r["warnings"] = planned.get("warnings", [])
    result["summary"] = summarize(result["rows"], result["summary"].get("failed", 0))
    result["replanned"] = {"command": " ".join(sys.argv), "git": git_head()}
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="dev", choices=sorted(SETS))
    parser.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    parser.add_argument("--work", default="/tmp/oomguard_conv3d_steps")
    parser.add_argument("--out")
    parser.add_argument("--replan", help="a result file whose measured rows are planned again (no measurement)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], int(args.child[1]))
    if not os.access(args.oomguard, os.X_OK):
        print("probe_conv3d_steps: %s is not an executable oomguard" % args.oomguard, file=sys.stderr)
        return 2
    if args.replan:
        return replan(args.replan, args.oomguard, args.work, args.out or args.replan)
    out = args.out or os.path.join(ROOT, "bench", "results", "conv3d_steps_%s.json" % args.set)
    sys.path.insert(0, HERE)
    import warnings
    warnings.filterwarnings("ignore")
    import export_zoo
    import measure_step
    os.makedirs(args.work, exist_ok=True)
    start, load_before = time.time(), os.getloadavg()
    rows, failed = [], 0
    for c in SETS[args.set]:
        name = name_of(c)
        export_zoo.export_one(spec(c), args.work, 14, require_inferred_output=False)
        for batch in BATCHES:
            m = subprocess.run([sys.executable, __file__, "--child", json.dumps(c), str(batch)], capture_output=True,
                               text=True)
            try:
                measured = json.loads(m.stdout.strip().splitlines()[-1])
                planned = plan(args.oomguard, args.work, name, batch)
            except (ValueError, IndexError):
                failed += 1
                print("%s batch %d: failed (%s)" % (name, batch, m.stderr.strip()[-200:]), file=sys.stderr)
                continue
            err = 100.0 * (planned["peak_allocated_bytes"] - measured["peak_live_bytes"]) / measured["peak_live_bytes"]
            rows.append({"layer": c, "name": name, "batch": batch, "measured_peak": measured["peak_live_bytes"],
                         "measured_phase": measured["peak_phase"], "planned_peak": planned["peak_allocated_bytes"],
                         "planned_phase": planned["peak_phase"], "peak_error_pct": round(err, 3),
                         "warnings": planned.get("warnings", [])})
            print("%-44s b=%d  peak %11d  plan %11d  (%+.2f%%)" % (name, batch, measured["peak_live_bytes"],
                                                                   planned["peak_allocated_bytes"], err), flush=True)
    summary = summarize(rows, failed)
    git = git_head()
    with open(out, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "set": args.set, "command": " ".join(sys.argv),
                   "date": measure_step.now_utc(), "machine": measure_step.machine(),
                   "load_average_before": load_before, "load_average_after": os.getloadavg(),
                   "wall_seconds": round(time.time() - start, 1), "git": git, "summary": summary, "rows": rows},
                  f, indent=1)
        f.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
