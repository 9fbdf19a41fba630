#!/usr/bin/python3
"""The planner's error band on models nobody here has seen, from the blind results of the unseen sets.

Each unseen set (tools/unseen_setN.py) was planned once, blind, before any rule was written for it
(tools/pool_blind_sets.py lists those files). Their signed peak errors, (planned - measured) / measured on
real PyTorch 1.13 CPU training steps, are the evidence of how far a plan of a new model is off. This tool
turns them into the band the plan prints beside its peak: a central interval of the signed errors
(split-conformal ranks over the pooled rows), so that for a plan P the measured peak lies in
[P / (1 + error_high), P / (1 + error_low)] for COVERAGE of new models.

Calibrated forwards in time. The sets were made one after another, each chosen for idioms the earlier ones
lack, so a later set is harder than the pool: a band fitted at rank level 0.9 held only 0.85 of each set's
rows when fitted on the sets made before it. The rank level is therefore chosen, not assumed: the smallest
level on a 0.005 grid from COVERAGE up whose forward-chained share (for each set with at least
MIN_EARLIER_ROWS rows before it: the band fitted on the earlier sets alone, the share of that set's rows
inside) reaches COVERAGE. The file records the level, that share, and whether it was reached.

    /usr/bin/python3 tools/error_band.py [--coverage 0.9] [--out data/unseen_error_band.json]
        the band from the blind results; prints it, the forward-chained share of each rank level tried, and for
        each set the band at the chosen level fitted on the other sets (leave-one-set-out)
    /usr/bin/python3 tools/error_band.py --check data/unseen_error_band.json
        exit 1 when the file differs from what the blind results give (a test runs this)
    /usr/bin/python3 tools/error_band.py --evaluate BLIND.json [--band data/unseen_error_band.json]
        the share of a new set's rows (a blind file no band was fitted on) inside the committed band
Exit status: 0; 1 on --check drift; 2 on a missing, oversized or unreadable file or bad usage.
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
MAX_FILE_BYTES = 64 << 20  # a blind results file is well under 1 MB; refuse /dev/zero and the like
MIN_EARLIER_ROWS = 80       # forward chaining starts at the first set with this many rows before it
LEVEL_STEP = 0.005
MAX_LEVEL = 0.99


def read_json(path):
    """The JSON in `path`, read with a bound: ValueError when it is not a regular file or too large."""
    if not os.path.isfile(path):
        raise ValueError(f"{path}: not a regular file")
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
    return json.loads(data)


def signed_errors(path):
    """[(model, signed peak error)] of a blind results file's rows that have both numbers."""
    rows = read_json(path)["rows"]
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


def forward_chained(per_set, level):
    """(rows inside, rows): for each set with at least MIN_EARLIER_ROWS rows in the sets before it, the band at
    rank `level` fitted on those earlier sets alone, and how many of this set's rows it holds."""
    inside_n = total = 0
    for n in sorted(per_set):
        earlier = [e for k, s in per_set.items() if k < n for _, e in s]
        if len(earlier) < MIN_EARLIER_ROWS:
            continue
        lo, hi = band(earlier, level)
        inside_n += sum(inside(e, lo, hi) for _, e in per_set[n])
        total += len(per_set[n])
    return inside_n, total


def levels(coverage):
    """The rank levels tried, from `coverage` up to MAX_LEVEL in LEVEL_STEP steps."""
    out, k = [], 0
    while True:
        lv = round(coverage + k * LEVEL_STEP, 6)
        if lv > MAX_LEVEL + 1e-9:
            return out
        out.append(lv)
        k += 1


def choose_level(per_set, coverage):
    """(level, (inside, rows), reached, tried): the smallest rank level whose forward-chained share reaches
    `coverage`; MAX_LEVEL with reached False when none does. `tried` lists (level, inside, rows)."""
    tried = []
    for lv in levels(coverage):
        k, t = forward_chained(per_set, lv)
        tried.append((lv, k, t))
        if t and k / t >= coverage:
            return lv, (k, t), True, tried
    lv, k, t = tried[-1]
    return lv, (k, t), False, tried


def build(per_set, coverage):
    rows = [e for s in per_set.values() for _, e in s]
    models = {(n, m) for n, s in per_set.items() for m, _ in s}
    level, (fc_in, fc_rows), reached, _ = choose_level(per_set, coverage)
    lo, hi = band(rows, level)
    sets = sorted(per_set)
    return {
        "what": "the planner's peak error on models not seen before: the central interval of the signed errors "
                "(planned - measured) / measured of the blind first plans of unseen sets "
                f"{sets[0]}-{sets[-1]} (real PyTorch 1.13 CPU training steps); a plan P puts the measured peak in "
                "[P / (1 + error_high), P / (1 + error_low)] for `coverage` of such models; the ranks are taken at "
                "`level`, the smallest level whose band, fitted on the sets made before each set, held "
                "`coverage` of that set's rows (`forward_chained`)",
        "generated_by": "tools/error_band.py",
        "sets": sets,
        "rows": len(rows),
        "models": len(models),
        "coverage": coverage,
        "level": level,
        "forward_chained": {"inside": fc_in, "rows": fc_rows, "share": round(fc_in / max(1, fc_rows), 4),
                            "reached": reached},
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
            b = read_json(args.band)
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
            committed = read_json(args.check)
        except (OSError, ValueError) as e:
            print(f"error_band: {e}", file=sys.stderr)
            return 2
        if committed != result:
            print(f"error_band: {args.check} differs from the blind results (run tools/error_band.py --out "
                  f"{args.check})", file=sys.stderr)
            return 1
        print(f"error_band: {args.check} matches the blind results of sets {result['sets']}")
        return 0
    _, _, _, tried = choose_level(per_set, args.coverage)
    print(f"forward-chained share by rank level (each set from {MIN_EARLIER_ROWS}+ earlier rows: band fitted on the "
          f"earlier sets only):")
    for lv, k, t in tried:
        print(f"  level {lv:.3f}: {k} of {t} ({k / max(1, t):.3f})")
    fc = result["forward_chained"]
    print(f"band of {result['rows']} rows ({result['models']} models, sets {result['sets'][0]}-"
          f"{result['sets'][-1]}), coverage {args.coverage} at level {result['level']} (forward-chained "
          f"{fc['share']:.3f}{'' if fc['reached'] else ', NOT reached'}): error [{100 * result['error_low']:+.2f} %, "
          f"{100 * result['error_high']:+.2f} %]")
    print("leave one set out at that level (band from the other sets, share of this set's rows inside):")
    total_in = total = 0
    for n in sorted(per_set):
        rest = [e for k, s in per_set.items() if k != n for _, e in s]
        lo, hi = band(rest, result["level"])
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
