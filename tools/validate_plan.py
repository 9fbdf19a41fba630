#!/usr/bin/python3
"""Checks `oomguard plan --target cpu` against real PyTorch CPU training steps.

    /usr/bin/python3 tools/validate_plan.py --oomguard build/oomguard
        compares against every stored reference bench/reference/cpu/*.json (tools/measure_step.py)
        and writes bench/results/plan_accuracy_cpu.json
    /usr/bin/python3 tools/validate_plan.py --subset --oomguard build/oomguard [--tracker LIB]
        measures a few small models LIVE with torch (not from stored files), then compares
        (the ctest plan_accuracy_cpu_subset; writes only where --out says)
    /usr/bin/python3 tools/validate_plan.py --self-test
        checks this script's own verdicts with a fake planner (no torch, no oomguard)

For each (model, batch, optimizer) it runs
    oomguard plan data/zoo/<model>.onnx --target cpu --batch B --optimizer O --loss cross_entropy --json
and computes the relative error (predicted - measured) / measured of
    peak_allocated_bytes      vs peak_live_bytes        (the gate: median <= 2 %, worst <= 5 %)
    bytes.activations_saved   vs saved_tensor_bytes     (the gate: median <= 1 %)
    bytes.weights             vs parameter_bytes + buffer_bytes      (reported)
    bytes.optimizer_state     vs optimizer_state_bytes               (reported)
    bytes.gradients           vs gradient_bytes, rows whose peak is in the optimizer step only,
                              when every gradient exists                (reported)
Exit status: 0 when the targets are met, 1 when they are not (or a plan failed), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

TARGETS = {"peak_median": 0.02, "peak_worst": 0.05, "activations_median": 0.01}

# The live subset: small models of three kinds, two batch sizes each, all three optimizers.
SUBSET = {"mlp_dropout": (16, 64), "conv1d_net": (4, 16), "unet_small": (1, 2)}


def fail_usage(msg: str) -> int:
    print("validate_plan: " + msg, file=sys.stderr)
    return 2


def run_plan(oomguard: str, ref: dict) -> dict:
    """Runs the planner for one reference; returns its JSON or {"error": reason}."""
    onnx = ref["onnx"] if os.path.isabs(ref["onnx"]) else os.path.join(ROOT, ref["onnx"])
    cmd = [oomguard, "plan", onnx, "--target", "cpu", "--batch", str(ref["batch"]),
           "--optimizer", ref["optimizer"], "--loss", ref.get("loss", "cross_entropy"), "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    if p.returncode not in (0, 1):  # 1 = "does not fit", still a plan
        return {"error": "exit %d: %s" % (p.returncode, p.stderr.strip().splitlines()[-1:]
                                          and p.stderr.strip().splitlines()[-1])}
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        return {"error": "not JSON on stdout (%s)" % e}


def rel(pred, meas):
    if pred is None or meas is None:
        return None
    if meas == 0:
        return 0.0 if pred == 0 else None
    return (pred - meas) / meas


def compare(ref: dict, plan: dict) -> dict:
    row = {"model": ref["model"], "batch": ref["batch"], "optimizer": ref["optimizer"],
           "measured": {"peak": ref["peak_live_bytes"], "activations": ref["saved_tensor_bytes"],
                        "weights": ref["parameter_bytes"] + ref.get("buffer_bytes", 0),
                        "optimizer_state": ref["optimizer_state_bytes"],
                        "gradients": ref["gradient_bytes"], "peak_phase": ref.get("peak_phase")}}
    if "error" in plan:
        row["error"] = plan["error"]
        return row
    b = plan.get("bytes", {})
    row["predicted"] = {"peak": plan.get("peak_allocated_bytes"),
                        "activations": b.get("activations_saved"),
                        "weights": b.get("weights"), "optimizer_state": b.get("optimizer_state"),
                        "gradients": b.get("gradients"), "peak_phase": plan.get("peak_phase")}
    m, p = row["measured"], row["predicted"]
    row["error"] = None
    row["rel_error"] = {k: rel(p[k], m[k]) for k in ("peak", "activations", "weights",
                                                        "optimizer_state")}
    if ref.get("peak_phase") == "optimizer":
        row["rel_error"]["gradients"] = rel(p["gradients"], m["gradients"])
    return row


def summarize(rows: list) -> dict:
    def stats(key):
        vals = [abs(r["rel_error"][key]) for r in rows
                if r.get("rel_error") and r["rel_error"].get(key) is not None]
        if not vals:
            return {"n": 0, "median": None, "worst": None}
        return {"n": len(vals), "median": statistics.median(vals), "worst": max(vals)}

    s = {k: stats(k) for k in ("peak", "activations", "weights", "optimizer_state", "gradients")}
    s["failed_plans"] = sum(1 for r in rows if r.get("error"))
    s["rows"] = len(rows)
    ok = (s["failed_plans"] == 0 and s["peak"]["n"] > 0 and s["activations"]["n"] > 0
          and s["peak"]["median"] <= TARGETS["peak_median"]
          and s["peak"]["worst"] <= TARGETS["peak_worst"]
          and s["activations"]["median"] <= TARGETS["activations_median"])
    s["targets"] = TARGETS
    s["pass"] = bool(ok)
    return s


def pct(x):
    return "   n/a" if x is None else "%+6.1f%%" % (100 * x)


def print_table(rows: list, summary: dict) -> None:
    print("%-20s %5s %-9s %14s %14s %8s %13s %13s %8s" % (
        "model", "batch", "optimizer", "peak measured", "peak planned", "error",
        "saved meas.", "saved plan", "error"))
    for r in rows:
        m = r["measured"]
        if r.get("error"):
            print("%-20s %5d %-9s %14d %14s  plan failed: %s" % (
                r["model"], r["batch"], r["optimizer"], m["peak"], "-", r["error"]))
            continue
        p, e = r["predicted"], r["rel_error"]
        print("%-20s %5d %-9s %14d %14s %8s %13d %13s %8s" % (
            r["model"], r["batch"], r["optimizer"], m["peak"], p["peak"], pct(e["peak"]),
            m["activations"], p["activations"], pct(e["activations"])))
    for key in ("peak", "activations", "weights", "optimizer_state", "gradients"):
        st = summary[key]
        if st["n"]:
            print("%-16s |error| median %5.2f%%  worst %6.2f%%  (%d rows)" % (
                key, 100 * st["median"], 100 * st["worst"], st["n"]))
    print("failed plans: %d of %d; targets: peak median <= %.0f%%, worst <= %.0f%%, "
          "activations median <= %.0f%% -> %s" % (
              summary["failed_plans"], summary["rows"], 100 * TARGETS["peak_median"],
              100 * TARGETS["peak_worst"], 100 * TARGETS["activations_median"],
              "PASS" if summary["pass"] else "FAIL"))


def git_head() -> str | None:
    """The commit of the source tree (with "+dirty" when src/ has uncommitted changes)."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return (head + ("+dirty" if dirty else "")) or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def load_references(directory: str) -> list:
    refs = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as f:
            refs.append(json.load(f))
    order = {"sgd": 0, "momentum": 1, "adam": 2}
    refs.sort(key=lambda r: (r["model"], r["batch"], order.get(r["optimizer"], 9), r["optimizer"]))
    return refs


def measure_subset(tracker: str | None, out_dir: str) -> bool:
    for model, batches in SUBSET.items():
        cmd = [sys.executable, os.path.join(HERE, "measure_step.py"), model,
               "--batches", ",".join(map(str, batches)), "--out", out_dir, "--quiet"]
        if tracker:
            cmd += ["--tracker", tracker]
        if subprocess.run(cmd).returncode != 0:
            print("validate_plan: measuring %s failed" % model, file=sys.stderr)
            return False
    return True


FAKE_PLANNER = r"""#!/usr/bin/env python3
import json, os, sys
a = sys.argv
ref = json.load(open(os.environ["FAKE_REF"]))
f = float(os.environ["FAKE_FACTOR"])
if os.environ.get("FAKE_FAIL"):
    print("oomguard plan: something is wrong", file=sys.stderr); sys.exit(2)
assert a[1] == "plan" and a[a.index("--target") + 1] == "cpu" and "--json" in a
assert int(a[a.index("--batch") + 1]) == ref["batch"]
assert a[a.index("--optimizer") + 1] == ref["optimizer"]
print(json.dumps({"peak_allocated_bytes": int(ref["peak_live_bytes"] * f), "peak_phase": "backward",
                  "bytes": {"activations_saved": int(ref["saved_tensor_bytes"] * f),
                            "weights": ref["parameter_bytes"], "optimizer_state": 0,
                            "gradients": 0}}))
"""


def self_test() -> int:
    """The verdicts of this script: errors within the targets pass, beyond them fail."""
    ref = {"model": "m", "onnx": "/nonexistent/m.onnx", "batch": 3, "optimizer": "momentum",
           "peak_live_bytes": 1000000, "saved_tensor_bytes": 400000, "parameter_bytes": 1000,
           "buffer_bytes": 0, "optimizer_state_bytes": 0, "gradient_bytes": 1000,
           "peak_phase": "backward"}
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "oomguard")
        with open(exe, "w") as f:
            f.write(FAKE_PLANNER.replace("/usr/bin/env python3", sys.executable))
        os.chmod(exe, 0o755)
        with open(os.path.join(tmp, "ref.json"), "w") as f:
            json.dump(ref, f)
        os.environ["FAKE_REF"] = os.path.join(tmp, "ref.json")
        for factor, fail, want_pass, want_peak in ((1.0, "", True, 0.0), (1.015, "", False, 0.015),
                                                   (0.996, "", True, -0.004),
                                                   (1.03, "", False, 0.03), (1.0, "1", False, None)):
            os.environ["FAKE_FACTOR"] = str(factor)
            os.environ["FAKE_FAIL"] = fail
            row = compare(ref, run_plan(exe, ref))
            got = summarize([row])
            peak = row.get("rel_error", {}).get("peak")
            if got["pass"] != want_pass:
                failures.append("factor %s fail=%r: pass=%s" % (factor, fail, got["pass"]))
            if (peak is None) != (want_peak is None) or (
                    peak is not None and abs(peak - want_peak) > 1e-6):
                failures.append("factor %s: peak error %s, expected %s" % (factor, peak, want_peak))
            if fail and row.get("error") != "exit 2: oomguard plan: something is wrong":
                failures.append("failed plan reported as %r" % row.get("error"))
    # Medians and worst over several rows: 1 % median passes, one 6 % row fails the worst.
    rows = [{"rel_error": {"peak": e, "activations": 0.0}} for e in (0.01, -0.01, 0.015, 0.0)]
    if not summarize(rows)["pass"]:
        failures.append("four rows within 1.5 % failed")
    if summarize(rows + [{"rel_error": {"peak": 0.06, "activations": 0.0}}])["pass"]:
        failures.append("a 6 % row passed the worst-case target")
    if summarize([{"rel_error": {"peak": 0.0, "activations": 0.011}}])["pass"]:
        failures.append("activations 1.1 % passed")
    for f in failures:
        print("validate_plan --self-test: " + f, file=sys.stderr)
    if not failures:
        print("validate_plan self-test passed")
    return 1 if failures else 0


def main() -> int:
    if "--self-test" in sys.argv[1:]:
        return self_test()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oomguard", required=True, help="path of the oomguard binary")
    parser.add_argument("--references", default=os.path.join(ROOT, "bench", "reference", "cpu"))
    parser.add_argument("--subset", action="store_true",
                        help="measure %s live instead of reading references" % ", ".join(SUBSET))
    parser.add_argument("--tracker", help="liboomguard_alloc_tracker.so (for --subset)")
    parser.add_argument("--out", help="result JSON (default: bench/results/plan_accuracy_cpu.json; "
                        "none for --subset)")
    args = parser.parse_args()
    if not (os.path.isfile(args.oomguard) and os.access(args.oomguard, os.X_OK)):
        return fail_usage("%s is not an executable" % args.oomguard)

    import measure_step  # machine(), now_utc()

    if args.subset:
        with tempfile.TemporaryDirectory(prefix="oomguard_subset_") as tmp:
            if not measure_subset(args.tracker, tmp):
                return 1
            refs = load_references(tmp)
        out = args.out
    else:
        refs = load_references(args.references)
        out = args.out or os.path.join(ROOT, "bench", "results", "plan_accuracy_cpu.json")
    if not refs:
        return fail_usage("no references in %s (run tools/measure_step.py --all)" % args.references)

    rows = [compare(r, run_plan(args.oomguard, r)) for r in refs]
    summary = summarize(rows)
    print_table(rows, summary)
    if out:
        result = {
            "what": "oomguard plan --target cpu vs a real PyTorch CPU training step",
            "command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
            "mode": "subset-live" if args.subset else "stored-references",
            "date": measure_step.now_utc(),
            "machine": measure_step.machine(),
            "torch_version": refs[0].get("torch_version"),
            "oomguard": os.path.abspath(args.oomguard),
            "git_head": git_head(),
            "summary": summary,
            "rows": rows,
        }
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return 0 if summary["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
