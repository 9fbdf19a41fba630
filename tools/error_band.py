#!/usr/bin/python3
"""The planner's error band on models nobody here has seen, from the blind results of the unseen sets.

Each unseen set (tools/unseen_setN.py) was planned once, blind, before any rule was written for it
(tools/pool_blind_sets.py lists those files). Their signed peak errors, (planned - measured) / measured on
real PyTorch 1.13 CPU training steps, are the evidence of how far a plan of a new model is off. This tool
turns them into the band the plan prints beside its peak: the central COVERAGE interval of the signed errors
(split-conformal ranks over the pooled rows), so that for a plan P the measured peak lies in
[P / (1 + error_high), P / (1 + error_low)] for that share of new models.

    /usr/bin/python3 tools/error_band.py [--coverage 0.9] [--out data/unseen_error_band.json]
        the band from the blind results; prints it and, for each set, the band fitted on the other sets and
        the share of that set's rows inside it (leave-one-set-out: the coverage to expect on a new set)
    /usr/bin/python3 tools/error_band.py --check data/unseen_error_band.json
        exit 1 when the file differs from what the blind results give (a test runs this)
    /usr/bin/python3 tools/error_band.py --evaluate BLIND.json [--band data/unseen_error_band.json]
        the share of a new set's rows (a blind file no band was fitted on) inside the committed band
Exit status: 0; 1 on --check drift; 2 on a missing or unreadable file or bad usage.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pool_blind_sets  # noqa: E402 (the blind files; no torch at import)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "data", "unseen_error_band.json")


def signed_errors(path):
    """[(model, signed peak error)] of a blind results file's rows that have both numbers."""
    with open(path) as f:
        rows = json.load(f)["rows"]
    out = []
    for r in rows:
        err = (r.get("rel_error") or {}).get("peak")
        if err is not None:
            out.append((r["model"], float(err)))
    return out


def band(errors, coverage):
    """(low, high): split-conformal ranks of the sorted signed errors for a central `coverage` interval,
    (1 - coverage) / 2 left out on each side, rounded outwards."""
    e = sorted(errors)
    n = len(e)
    tail = (1.0 - coverage) / 2.0
    lo_rank = max(1, math.floor((n + 1) * tail))  # 1-based
    hi_rank = min(n, math.ceil((n + 1) * (1.0 - tail)))
    return e[lo_rank - 1], e[hi_rank - 1]


def inside(err, lo, hi):
    return lo <= err <= hi


def load_blind():
    """{set number: [(model, err)]} from the committed blind files."""
    out = {}
    for n, name in pool_blind_sets.BLIND.items():
        out[n] = signed_errors(os.path.join(pool_blind_sets.RESULTS, name))
    return out


def build(per_set, coverage):
    rows = [e for s in per_set.values() for _, e in s]
    models = {(n, m) for n, s in per_set.items() for m, _ in s}
    lo, hi = band(rows, coverage)
    sets = sorted(per_set)
    return {
        "what": "the planner's peak error on models not seen before: the central interval of the signed errors "
                "(planned - measured) / measured of the blind first plans of unseen sets "
                f"{sets[0]}-{sets[-1]} (real PyTorch 1.13 CPU training steps); a plan P puts the measured peak in "
                "[P / (1 + error_high), P / (1 + error_low)] for `coverage` of such models",
        "generated_by": "tools/error_band.py",
        "sets": sets,
        "rows": len(rows),
        "models": len(models),
        "coverage": coverage,
        "error_low": round(lo, 6),
        "error_high": round(hi, 6),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coverage", type=float, default=0.9)
    ap.add_argument("--out")
    ap.add_argument("--check")
    ap.add_argument("--evaluate")
    ap.add_argument("--band", default=DEFAULT_OUT)
    args = ap.parse_args()
    if not 0.5 <= args.coverage < 1.0:
        print("error_band: --coverage must be in [0.5, 1)", file=sys.stderr)
        return 2
    if args.evaluate:
        try:
            with open(args.band) as f:
                b = json.load(f)
            errs = signed_errors(args.evaluate)
        except (OSError, ValueError, KeyError) as e:
            print(f"error_band: {e}", file=sys.stderr)
            return 2
        got = [x for x in errs if inside(x[1], b["error_low"], b["error_high"])]
        below = sum(e < b["error_low"] for _, e in errs)
        above = sum(e > b["error_high"] for _, e in errs)
        print(f"{len(got)} of {len(errs)} rows inside the band [{100 * b['error_low']:+.2f} %, "
              f"{100 * b['error_high']:+.2f} %] (coverage {b['coverage']}): {len(got) / max(1, len(errs)):.3f}; "
              f"{below} planned lower than the band allows (measured more), {above} higher")
        return 0
    try:
        per_set = load_blind()
    except (OSError, ValueError, KeyError) as e:
        print(f"error_band: cannot read a blind file: {e}", file=sys.stderr)
        return 2
    result = build(per_set, args.coverage)
    if args.check:
        try:
            with open(args.check) as f:
                committed = json.load(f)
        except (OSError, ValueError) as e:
            print(f"error_band: {e}", file=sys.stderr)
            return 2
        if committed != result:
            print(f"error_band: {args.check} differs from the blind results (run tools/error_band.py --out "
                  f"{args.check})", file=sys.stderr)
            return 1
        print(f"error_band: {args.check} matches the blind results of sets {result['sets']}")
        return 0
    print(f"band of {result['rows']} rows ({result['models']} models, sets {result['sets'][0]}-"
          f"{result['sets'][-1]}), coverage {args.coverage}: error [{100 * result['error_low']:+.2f} %, "
          f"{100 * result['error_high']:+.2f} %]")
    print("leave one set out (band from the other sets, share of this set's rows inside):")
    total_in = total = 0
    for n in sorted(per_set):
        rest = [e for k, s in per_set.items() if k != n for _, e in s]
        lo, hi = band(rest, args.coverage)
        rows = per_set[n]
        k = sum(inside(e, lo, hi) for _, e in rows)
        total_in += k
        total += len(rows)
        print(f"  set {n:>2}: [{100 * lo:+6.2f} %, {100 * hi:+6.2f} %]  {k:>3} of {len(rows):>3} inside")
    print(f"  pooled: {total_in} of {total} ({total_in / max(1, total):.3f}) inside their held-out band")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
