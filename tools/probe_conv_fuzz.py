#!/usr/bin/python3
"""Random single convolutions as whole PyTorch 1.13 CPU training steps against `oomguard plan --target cpu`.

Each seed draws one layer (Conv1d/2d/3d or ConvTranspose1d/2d/3d; in/out channels 1-512 weighted toward
realistic widths; kernel 1-7, anisotropic ones such as (1, k), (k, 1), (k, 1, 1) and (1, k, k) too;
stride 1-3; padding 0..k; dilation 1-4; groups 1, depthwise or another common divisor; output padding
for transposed layers; spatial sizes from 1 to realistic; bias or not) and a batch of 1-8. The net is
the one of tools/probe_conv3d_steps.py: a 1x1 convolution before the layer (so that its input needs a
gradient), a mean over the spatial axes and a linear head after it, exported in training mode, measured
in a fresh process per row under the LD_PRELOAD tracker (tools/measure_step.py, SGD, one intra-op thread)
and planned. A draw whose step would hold more than ~1.5 GB or cost more than ~4 GFLOP is redrawn from
the same generator, so a seed always names the same row.

Seed ranges, fixed before any row of the held-out range was planned or measured:
  dev      0-199            rows studied while writing rules (tuning data)
  heldout  900000-900079    measured once, planned blind with the build before any rule change, and
                            planned once more (--replan) at the end; not looked at row by row in between
  heldout2 900100-900179    a second held-out range, fixed (this line committed alone) before any of its rows was
                            planned or measured: measured and planned blind with the build before the next rule
                            changes, re-planned (--replan) once at the end; never looked at row by row in between
  heldout3 900200-900279    a third held-out range, fixed (this line committed alone) before any of its rows was
                            planned or measured: measured and planned blind with the build of the tree before the
                            next rule changes, re-planned (--replan) once at the end; never looked at row by row
                            in between, and no rule is changed because of one of its rows
  heldout4 900300-900379    a fourth held-out range, fixed (this line committed alone) before any of its rows was
                            planned or measured: measured and planned blind with the build of the tree before the
                            next rule changes, re-planned (--replan) once at the end; never looked at row by row
                            in between, and no rule is changed because of one of its rows
  heldout5 900400-900479    a fifth held-out range, fixed (this line committed alone) before any of its rows was
                            planned or measured: measured and planned blind with the build of the tree before the
                            next rule changes, re-planned (--replan) once at the end; never looked at row by row
                            in between, and no rule is changed because of one of its rows
  heldout6 900500-900579    a sixth held-out range, fixed (this line committed alone, conv fuzz round 5) before any
                            of its rows was planned or measured: measured and planned ONCE, blind, with the build at
                            the end of round 5; never looked at row by row, never tuned on
  heldout7 900600-900679    a seventh held-out range, fixed (this line committed alone, conv fuzz round 7) before any
                            of its rows was planned or measured: measured ONCE at the end of round 7 and planned
                            blind with the build of main before round 7's rule changes and with the final build;
                            never looked at row by row, never tuned on
  heldout8 900700-900779    an eighth held-out range, fixed (this line committed alone, conv fuzz round 10) before
                            any of its rows was planned or measured: measured ONCE and planned blind with the build
                            at the start of round 10 and once more with its final build; never looked at row by row,
                            never tuned on
  (dev seeds 200-319 and 320-439 are tuning data too: --seeds 200:320, --seeds 320:440; and 440-839, fixed at the
  start of round 10 before any of its rows was drawn, measured or planned: --seeds 440:840, measured and planned
  first with the round-start build as a blind dev figure, then studied)

    /usr/bin/python3 tools/probe_conv_fuzz.py [--set dev|heldout|heldout2|heldout3|heldout4|heldout5|heldout6|heldout7|heldout8 | --seeds A:B] [--jobs 2]
        [--oomguard build-conv/oomguard] [--work DIR] [--out bench/results/conv_fuzz_<set>.json]
    /usr/bin/python3 tools/probe_conv_fuzz.py --show SEED          # the layer a seed draws
    /usr/bin/python3 tools/probe_conv_fuzz.py --replan FILE.json [--oomguard ...] [--out ...]
        # plans the measured rows again (re-exporting when the work folder lacks them)
Exit status: 0 measured, 1 a row failed, 2 bad usage.
"""
import argparse
import concurrent.futures
import json
import math
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import probe_conv3d_steps as steps  # noqa: E402  (plan, summarize, git_head)

SETS = {"dev": (0, 200), "heldout": (900000, 900080), "heldout2": (900100, 900180),
        "heldout3": (900200, 900280), "heldout4": (900300, 900380),
        "heldout5": (900400, 900480), "heldout6": (900500, 900580),
        "heldout7": (900600, 900680), "heldout8": (900700, 900780)}
CHANNELS = [1, 2, 3, 4, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128, 160, 192, 256, 320, 384, 512]
MAX_BYTES = 1.5e9
MAX_FLOP = 4e9


def _channels(rng: random.Random) -> int:
    return rng.randint(1, 512) if rng.random() < 0.2 else rng.choice(CHANNELS)


def _kernel(rng: random.Random, nd: int) -> list:
    k = rng.choice([1, 3, 3, 3, 5, 7, 2, 4, 6]) if rng.random() < 0.85 else rng.randint(1, 7)
    if nd > 1 and rng.random() < 0.25:  # anisotropic: (1, k), (k, 1), (k, 1, 1), (1, k, k), random
        shape = rng.choice(["first", "rest", "random"])
        if shape == "first":
            return [k] + [1] * (nd - 1)
        if shape == "rest":
            return [1] + [k] * (nd - 1)
        return [rng.randint(1, 7) for _ in range(nd)]
    return [k] * nd


def _spatial(rng: random.Random, nd: int) -> list:
    if nd == 1:
        n = rng.choice([1, 2, 3, 7, 16, 32, 50, 64, 100, 128, 256, 500, 1000]) if rng.random() < 0.6 else \
            rng.randint(1, 1024)
        return [n]
    if nd == 2:
        n = rng.choice([1, 2, 4, 7, 8, 14, 16, 28, 32, 56, 64, 112]) if rng.random() < 0.6 else rng.randint(1, 128)
        m = n if rng.random() < 0.7 else rng.randint(1, 128)
        return [n, m]
    d = rng.choice([1, 2, 3, 4, 8, 16]) if rng.random() < 0.7 else rng.randint(1, 20)
    n = rng.choice([1, 2, 4, 7, 8, 14, 16, 28, 32, 56]) if rng.random() < 0.6 else rng.randint(1, 64)
    m = n if rng.random() < 0.8 else rng.randint(1, 64)
    return [d, n, m]


def _out_size(layer: dict) -> list:
    out = []
    for i, n in enumerate(layer["spatial"]):
        k, s, p, d = layer["k"][i], layer["s"][i], layer["p"][i], layer["d"][i]
        if layer["transposed"]:
            out.append((n - 1) * s - 2 * p + d * (k - 1) + layer["op"][i] + 1)
        else:
            out.append((n + 2 * p - d * (k - 1) - 1) // s + 1)
    return out


def _cost(layer: dict, batch: int):
    """(bytes, flop): a generous bound on what the step holds, and its arithmetic."""
    cin, cout, g = layer["cin"], layer["cout"], layer["groups"]
    n_in, n_out = math.prod(layer["spatial"]), math.prod(_out_size(layer))
    kvol = math.prod(layer["k"])
    if layer["transposed"]:  # the columns are those of the adjoint convolution
        cols, flop = cout * kvol * n_in, 6 * batch * cin * n_in * (cout // g) * kvol
    else:
        cols, flop = cin // g * kvol * n_out, 6 * batch * cout * n_out * (cin // g) * kvol
    weights = cin * cout // g * kvol
    data = batch * (4 * cin * n_in + 3 * cout * n_out)
    return 4 * (data + 2 * batch * cols + 6 * weights), flop


def draw(seed: int) -> dict:
    rng = random.Random(seed)
    while True:
        nd = rng.choice([1, 2, 2, 3])
        transposed = rng.random() < 0.25
        cin, cout = _channels(rng), _channels(rng)
        r = rng.random()
        if r < 0.15:  # depthwise (with a channel multiplier now and then)
            cout = cin * rng.choice([1, 1, 1, 2])
            groups = cin
        elif r < 0.27:
            divisors = [g for g in range(2, min(cin, cout) + 1) if cin % g == 0 and cout % g == 0]
            groups = rng.choice(divisors) if divisors else 1
        else:
            groups = 1
        k = _kernel(rng, nd)
        s = [rng.choice([1, 1, 1, 2, 2, 3])] * nd if rng.random() < 0.85 else [rng.randint(1, 3) for _ in range(nd)]
        d = [1] * nd if rng.random() < 0.75 else [rng.randint(1, 4)] * nd
        if rng.random() < 0.6:  # "same"-style padding, else anything in 0..k
            p = [(d[i] * (k[i] - 1)) // 2 for i in range(nd)]
        else:
            p = [rng.randint(0, k[i]) for i in range(nd)]
        op = [rng.randint(0, max(s[i], d[i]) - 1) if transposed and rng.random() < 0.3 else 0 for i in range(nd)]
        layer = {"nd": nd, "transposed": transposed, "cin": cin, "cout": cout, "groups": groups,
                 "spatial": _spatial(rng, nd), "k": k, "s": s, "p": p, "d": d, "op": op,
                 "bias": rng.random() < 0.6}
        batch = rng.randint(1, 8)
        out = _out_size(layer)
        if min(out) < 1:
            continue
        if transposed and any(2 * p[i] > d[i] * (k[i] - 1) + op[i] + (layer["spatial"][i] - 1) * s[i] for i in
                              range(nd)):
            continue
        nbytes, flop = _cost(layer, batch)
        if nbytes > MAX_BYTES or flop > MAX_FLOP:
            continue
        return {"seed": seed, "layer": layer, "batch": batch}


def describe(layer: dict) -> str:
    kind = ("ConvT%dd" if layer["transposed"] else "Conv%dd") % layer["nd"]
    text = "%s %d->%d g%d in %s k%s s%s p%s d%s" % (
        kind, layer["cin"], layer["cout"], layer["groups"], "x".join(map(str, layer["spatial"])),
        "x".join(map(str, layer["k"])), "x".join(map(str, layer["s"])), "x".join(map(str, layer["p"])),
        "x".join(map(str, layer["d"])))
    if any(layer["op"]):
        text += " op" + "x".join(map(str, layer["op"]))
    return text + ("" if layer["bias"] else " nobias")


def spec(seed: int, layer: dict):
    import torch
    import torch.nn as nn
    import models
    nd = layer["nd"]
    conv_cls = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[nd]
    layer_cls = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d, 3: nn.ConvTranspose3d}[nd] if layer["transposed"] \
        else conv_cls
    extra = {"output_padding": tuple(layer["op"])} if layer["transposed"] else {}
    axes = tuple(range(2, 2 + nd))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = conv_cls(layer["cin"], layer["cin"], 1)
            self.conv = layer_cls(layer["cin"], layer["cout"], tuple(layer["k"]), stride=tuple(layer["s"]),
                                  padding=tuple(layer["p"]), dilation=tuple(layer["d"]), groups=layer["groups"],
                                  bias=layer["bias"], **extra)
            self.fc = nn.Linear(layer["cout"], 5)

        def forward(self, x):
            return self.fc(self.conv(self.inp(x)).mean(dim=axes))
    name = "cf_%d" % seed
    return models.ModelSpec(name, describe(layer), Net,
                            (models.InputSpec("input", (layer["cin"],) + tuple(layer["spatial"]), torch.float32),),
                            5, label_shape=(), in_zoo=False)


def child(seed: int) -> int:
    import measure_step
    measure_step.reexec_with_tracker(None)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    row = draw(seed)
    rec = measure_step.measure(spec(seed, row["layer"]), row["batch"], "sgd", measure_step.Tracker())
    print(json.dumps({k: rec[k] for k in ("peak_live_bytes", "peak_phase")}))
    return 0


def export(seed: int, work: str) -> str:
    import export_zoo
    row = draw(seed)
    path = os.path.join(work, "cf_%d.onnx" % seed)
    if not os.path.exists(path):
        export_zoo.export_one(spec(seed, row["layer"]), work, 14, require_inferred_output=False)
    return path


def plan_row(exe: str, work: str, row: dict) -> dict:
    try:
        planned = steps.plan(exe, work, "cf_%d" % row["seed"], row["batch"])
    except ValueError:
        row["plan_failed"] = True
        return row
    row["planned_peak"], row["planned_phase"] = planned["peak_allocated_bytes"], planned["peak_phase"]
    row["peak_error_pct"] = round(100.0 * (row["planned_peak"] - row["measured_peak"]) / row["measured_peak"], 3)
    row["warnings"] = [w.get("code", w) if isinstance(w, dict) else w for w in planned.get("warnings", [])]
    row.pop("plan_failed", None)
    return row


def write_json(path: str, obj: dict) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def replan(path: str, exe: str, work: str, out: str) -> int:
    with open(path) as f:
        result = json.load(f)
    os.makedirs(work, exist_ok=True)
    import measure_step
    load_before = list(os.getloadavg())
    for r in result["rows"]:
        export(r["seed"], work)
        plan_row(exe, work, r)
    planned = [r for r in result["rows"] if "peak_error_pct" in r]
    result["summary"] = steps.summarize(planned, len(result["rows"]) - len(planned) + result["summary"].get(
        "measure_failed", 0))
    result["replanned"] = {"command": " ".join(sys.argv), "git": steps.git_head(), "oomguard": exe,
                           "date": measure_step.now_utc(), "machine": measure_step.machine(),
                           "load_average_before": load_before, "load_average_after": list(os.getloadavg())}
    write_json(out, result)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS))
    parser.add_argument("--seeds", help="A:B, seeds A..B-1 (instead of --set)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--oomguard", default=os.path.join(ROOT, "build-conv", "oomguard"))
    parser.add_argument("--work", default="/tmp/oomguard_conv_fuzz")
    parser.add_argument("--out")
    parser.add_argument("--replan")
    parser.add_argument("--show", type=int)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        return child(args.child)
    if args.show is not None:
        row = draw(args.show)
        print(describe(row["layer"]), "batch", row["batch"], json.dumps(row))
        return 0
    if not os.access(args.oomguard, os.X_OK):
        print("probe_conv_fuzz: %s is not an executable oomguard" % args.oomguard, file=sys.stderr)
        return 2
    if args.replan:
        return replan(args.replan, args.oomguard, args.work, args.out or args.replan)
    if args.seeds:
        a, b = (int(v) for v in args.seeds.split(":"))
        label = "seeds_%d_%d" % (a, b)
    elif args.set:
        a, b = SETS[args.set]
        label = args.set
    else:
        print("probe_conv_fuzz: --set or --seeds", file=sys.stderr)
        return 2
    out = args.out or os.path.join(ROOT, "bench", "results", "conv_fuzz_%s.json" % label)
    import warnings
    warnings.filterwarnings("ignore")
    import measure_step
    os.makedirs(args.work, exist_ok=True)
    start, load_before = time.time(), os.getloadavg()
    seeds = list(range(a, b))
    for seed in seeds:
        export(seed, args.work)

    def measure(seed):
        m = subprocess.run([sys.executable, __file__, "--child", str(seed)], capture_output=True, text=True)
        return seed, m

    rows, failed = [], 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for seed, m in pool.map(measure, seeds):
            d = draw(seed)
            row = {"seed": seed, "what": describe(d["layer"]), "layer": d["layer"], "batch": d["batch"]}
            try:
                measured = json.loads(m.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                failed += 1
                print("seed %d: measure failed (%s)" % (seed, m.stderr.strip()[-300:]), file=sys.stderr)
                continue
            row["measured_peak"], row["measured_phase"] = measured["peak_live_bytes"], measured["peak_phase"]
            plan_row(args.oomguard, args.work, row)
            rows.append(row)
            if "peak_error_pct" not in row:
                failed += 1
                print("seed %d: plan failed" % seed, file=sys.stderr)
                continue
            print("%7d %-60s b=%d peak %11d plan %11d (%+.2f%%) %s/%s" % (
                seed, row["what"], row["batch"], row["measured_peak"], row["planned_peak"], row["peak_error_pct"],
                row["measured_phase"], row["planned_phase"]), flush=True)
    planned = [r for r in rows if "peak_error_pct" in r]
    summary = steps.summarize(planned, failed)
    write_json(out, {"what": __doc__.splitlines()[0], "seeds": [a, b], "command": " ".join(sys.argv),
                     "date": measure_step.now_utc(), "machine": measure_step.machine(),
                     "load_average_before": load_before, "load_average_after": os.getloadavg(),
                     "wall_seconds": round(time.time() - start, 1), "git": steps.git_head(),
                     "oomguard": args.oomguard, "summary": summary, "rows": rows})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
