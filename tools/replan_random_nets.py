#!/usr/bin/python3
"""Plan-only regression: export random nets (tools/random_nets.py, classic kind) and plan each with two binaries.

    /usr/bin/python3 tools/replan_random_nets.py BASE_EXE NEW_EXE FIRST_SEED LAST_SEED [--hinted] [--work DIR]
Plans each net at its batch and optimizer with both binaries (with --hinted, also with the in-place hint) and
compares peak, bytes, warnings and error. Prints one JSON line: the plans compared, the exports that failed and
the (seed, hinted, base peak, new peak) of every changed plan. Exports are kept in --work and reused.
Used by conv fuzz round 4 (bench/results/conv_fuzz_round4_20261206.txt, there as /tmp/r4/rn_replan.py).
Exit status: 0 no plan changed, 1 some changed, 2 bad usage."""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import random_nets as rn  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("first_seed", type=int)
    parser.add_argument("last_seed", type=int)
    parser.add_argument("--hinted", action="store_true", help="also plan each net with its in-place hint")
    parser.add_argument("--work", default="/tmp/replan_random_nets", help="where the exports are kept")
    args = parser.parse_args()
    for exe in (args.base, args.new):
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            print("replan_random_nets: %s is not an executable" % exe, file=sys.stderr)
            return 2
    if args.last_seed < args.first_seed:
        print("replan_random_nets: the last seed is below the first", file=sys.stderr)
        return 2
    os.makedirs(args.work, exist_ok=True)
    changed, planned, failed = [], 0, 0
    for seed in range(args.first_seed, args.last_seed + 1):
        net = rn.describe_kind("classic", seed)
        path = os.path.join(args.work, rn.record_name("classic", seed) + ".onnx")
        if not os.path.exists(path):
            try:
                rn.export_onnx(net, rn.make_spec(net), path)
            except Exception:  # noqa: BLE001 (a net torch cannot export is counted)
                failed += 1
                continue
        extras = [[]] + ([rn.inplace_hint({"net": net, "onnx": path})] if args.hinted else [])
        for extra in extras:
            a = rn.plan(args.base, path, net["batch"], net["optimizer"], extra)
            b = rn.plan(args.new, path, net["batch"], net["optimizer"], extra)
            planned += 1
            key = ("peak_allocated_bytes", "bytes", "warnings", "error")
            if tuple(a.get(k) for k in key) != tuple(b.get(k) for k in key):
                changed.append((seed, bool(extra), a.get("peak_allocated_bytes"), b.get("peak_allocated_bytes")))
    print(json.dumps({"seeds": [args.first_seed, args.last_seed], "plans_compared": planned,
                      "export_failed": failed, "changed": changed}))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
