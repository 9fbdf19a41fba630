#!/usr/bin/python3
"""Development probe (not held out): the stored family probes (tests/data/plan/family_probes.json, real PyTorch 1.13
steps measured by tools/probe_families.py) planned as stored and with "oomguard.locals" added as oomguard.export
writes it (python/oomguard/frame_locals.py: one eager forward of a batch of 2 of the case's own module).

    /usr/bin/python3 tools/locals_stored_probes.py --oomguard build/oomguard [--cases a,b] [--out FILE]

Prints each row whose plan the metadata moves, and a summary: rows, rows moved, values named, peak |error| median /
p90 / max and rows within 1 % for both. Measures nothing itself.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def plan(exe: str, path: str, batch: int, optimizer: str) -> dict:
    return json.loads(subprocess.run(
        [exe, "plan", path, "--target", "cpu", "--batch", str(batch), "--optimizer", optimizer, "--loss",
         "cross_entropy", "--json"], capture_output=True, text=True, check=True).stdout)


def summary(errors: list) -> str:
    a = sorted(abs(e) for e in errors)
    p90 = a[min(len(a) - 1, int(0.9 * len(a)))]
    return "median %.3f%% p90 %.2f%% max %.2f%% (%d within 1 %%)" % (
        100 * statistics.median(a), 100 * p90, 100 * a[-1], sum(e <= 0.01 for e in a))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    ap.add_argument("--cases")
    ap.add_argument("--out")
    args = ap.parse_args()
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    import export_hints
    import probe_families
    frame_locals = export_hints.package_module("frame_locals")
    data = os.path.join(ROOT, "tests", "data", "plan")
    with open(os.path.join(data, "family_probes.json")) as f:
        stored = json.load(f)["cases"]
    names = args.cases.split(",") if args.cases else [n for n in stored if n in probe_families.CASES]
    rows, plain_err, held_err, named = [], [], [], 0
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            case = stored[name]
            src = os.path.join(data, case["onnx"])
            torch.manual_seed(0)
            module = probe_families.build(name, probe_families.CASES[name][1])
            with open(src, "rb") as f:
                try:
                    graph = frame_locals.add_locals_metadata(
                        f.read(), module, export_hints.example_inputs(probe_families.CASES[name][0]))
                except Exception as e:  # noqa: BLE001 (reported; the case is left out)
                    print("%-28s error %s" % (name, str(e).splitlines()[0][:100]))
                    continue
            path = os.path.join(work, name + ".onnx")
            with open(path, "wb") as f:
                f.write(graph)
            for row in case["rows"]:
                a = plan(args.oomguard, src, row["batch"], case["optimizer"])
                b = plan(args.oomguard, path, row["batch"], case["optimizer"])
                m = row["measured_peak"]
                ea, eb = (a["peak_allocated_bytes"] - m) / m, (b["peak_allocated_bytes"] - m) / m
                plain_err.append(ea)
                held_err.append(eb)
                named += b["locals"]["held"] if row is case["rows"][0] else 0
                risk = {r["what"]: r["bytes"] for r in b["risks"]}.get("locals_held_until_forward_returns", 0)
                rows.append({"case": name, "batch": row["batch"], "measured_peak": m,
                             "plain_peak": a["peak_allocated_bytes"], "locals_peak": b["peak_allocated_bytes"],
                             "held": b["locals"]["held"], "locals_risk_left": risk})
                if a["peak_allocated_bytes"] != b["peak_allocated_bytes"]:
                    print("%-28s b=%-4d held %2d  plain %+7.2f%%  with locals %+7.2f%%  (risk left %d)" % (
                        name, row["batch"], b["locals"]["held"], 100 * ea, 100 * eb, risk), flush=True)
    moved = sum(r["plain_peak"] != r["locals_peak"] for r in rows)
    print("%d rows, %d moved, %d values held (first rows); plain %s; with locals %s" % (
        len(rows), moved, named, summary(plain_err), summary(held_err)))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"command": "tools/locals_stored_probes.py " + " ".join(sys.argv[1:]), "rows": rows,
                       "development_data": True}, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
