#!/usr/bin/python3
"""Pools the blind results of the held-out sets of real architectures into one figure.

Each set (tools/unseen_setN.py) was committed alone, measured, then planned ONCE with the planner of that
moment before any rule was written for it; that first result is its `*_blind*.json` under bench/results/.
A set's rules then fix its own rows, so its later figures are not evidence. The honest estimate for a model
nobody here has seen is the pool of the blind results: this tool reads them, prints per set and pooled
  rows compared, peak |error| median / p90 / max, the share within 1 / 3 / 5 %,
  and of the rows off by more than 3 %: how many the plan flagged (`unsure`, or a warning naming bytes)
  and how many it "covered" (the measured peak inside the plan's peak range widened by every byte count its
  warnings name: a loose test that counts a warning's bytes whatever their direction),
and writes them as JSON with --out. Sets 1 and 2 are left out: their first figures were not kept as blind.

    /usr/bin/python3 tools/pool_blind_sets.py [--out bench/results/unseen_blind_pool_<date>.json]
    /usr/bin/python3 tools/pool_blind_sets.py --dir DIR [--before DIR0] [--out FILE]
        the same summary of later plans of the same sets, DIR/unseenN.json for N = 3..18 as
        `tools/unseen_models.py --set unseenN compare --out DIR/unseenN.json` writes them (not blind: each set's
        own rules are in them; for a change that moves no point prediction, such as a new risk, its flagged /
        covered counts against the same sets' before); with --before, the plans of DIR0 (the same files of the
        build before the change) too: every row whose warnings gain named bytes, and the false flags among them
        (rows within 3 % that gain any), with the bytes named as a share of the plan's peak
Exit status: 0 (a report, not a gate); 2 when a blind file is missing or unreadable.
"""
import argparse
import datetime
import json
import os
import platform
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_nets  # noqa: E402 (stats; no torch at import)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")

# set -> its blind file (the first and only blind plan of that set)
BLIND = {
    3: "unseen_models3_blind.json",
    4: "unseen_models4_blind.json",
    5: "unseen_models5_blind.json",
    6: "unseen_models6_blind.json",
    7: "unseen_models7_blind.json",
    8: "unseen_models8_blind.json",
    9: "unseen_models9_blind.json",
    10: "unseen10_blind_20261207.json",
    11: "unseen11_blind_20261207.json",
    12: "unseen12_blind_20261207.json",
    13: "unseen13_blind_20261207.json",
    14: "unseen14_blind_20261207.json",
    15: "unseen15_blind_20261207.json",
    16: "unseen16_blind_20261207.json",
    17: "unseen17_blind_20261207.json",
    18: "unseen18_blind_20261207.json",
    19: "unseen19_blind_20261208.json",
    20: "unseen20_blind_20261208.json",
}

BYTES = re.compile(r"(\d+) bytes")


def row_facts(row):
    err = (row.get("rel_error") or {}).get("peak")
    if err is None:
        return None
    measured = row["measured"]["peak"]
    pred = row["predicted"]
    lo, hi = pred.get("peak_range") or [pred["peak"], pred["peak"]]
    named = sum(int(n) for w in row.get("warnings", []) for n in BYTES.findall(w))
    flagged = bool(row.get("unsure")) or named > 0
    covered = lo - named <= measured <= hi + named
    return {"err": abs(err), "flagged": flagged, "covered": covered}


def named_warnings(row):
    return [w for w in row.get("warnings", []) if BYTES.search(w)]


def gained(before_rows, rows):
    """Rows whose warnings gain named bytes against `before_rows` (the same rows planned by the build before)."""
    old = {(r["model"], r["batch"], r["optimizer"]): r for r in before_rows}
    out = []
    for r in rows:
        facts, b = row_facts(r), old.get((r["model"], r["batch"], r["optimizer"]))
        if facts is None or b is None:
            continue
        new = [w for w in named_warnings(r) if w not in named_warnings(b)]
        if not new:
            continue
        named = sum(int(n) for w in new for n in BYTES.findall(w))
        out.append({"model": r["model"], "batch": r["batch"], "optimizer": r["optimizer"],
                    "peak_error_pct": round(100 * r["rel_error"]["peak"], 3),
                    "named_share_of_plan": round(named / r["predicted"]["peak"], 4),
                    "false_flag": facts["err"] <= 0.03, "covered_before": bool(row_facts(b)["covered"]),
                    "covered": facts["covered"], "warnings": [w.split(":")[0][:80] for w in new]})
    return out


def summarise(facts):
    errs = [f["err"] for f in facts]
    misses = [f for f in facts if f["err"] > 0.03]
    st = random_nets.stats(errs)  # the median, p90 and max every accuracy report here uses
    return {
        "rows": len(facts),
        "peak_median_pct": round(100 * st["median"], 3) if errs else None,
        "peak_p90_pct": round(100 * st["p90"], 3) if errs else None,
        "peak_max_pct": round(100 * st["max"], 3) if errs else None,
        "within_1pct": round(sum(e <= 0.01 for e in errs) / len(errs), 3) if errs else None,
        "within_3pct": round(sum(e <= 0.03 for e in errs) / len(errs), 3) if errs else None,
        "within_5pct": round(sum(e <= 0.05 for e in errs) / len(errs), 3) if errs else None,
        "misses_over_3pct": len(misses),
        "misses_flagged": sum(f["flagged"] for f in misses),
        "misses_covered": sum(f["covered"] for f in misses),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--dir", help="read DIR/unseenN.json (later compare runs) instead of the blind files")
    ap.add_argument("--before", help="with --dir: DIR0/unseenN.json, the same sets planned by the build before")
    args = ap.parse_args()
    if args.before and not args.dir:
        ap.error("--before needs --dir")
    per_set, pooled, gains = {}, [], []
    for n, name in BLIND.items():
        if args.dir:
            name = os.path.join(args.dir, f"unseen{n}.json")
        try:
            with open(os.path.join(RESULTS, name)) as f:
                rows = json.load(f)["rows"]
        except (OSError, ValueError, KeyError) as e:
            print(f"pool_blind_sets: cannot read {name}: {e}", file=sys.stderr)
            return 2
        if args.before:
            try:
                with open(os.path.join(args.before, f"unseen{n}.json")) as f:
                    gains += [dict(g, set=n) for g in gained(json.load(f)["rows"], rows)]
            except (OSError, ValueError, KeyError) as e:
                print(f"pool_blind_sets: cannot read unseen{n}.json in {args.before}: {e}", file=sys.stderr)
                return 2
        facts = [x for x in (row_facts(r) for r in rows) if x is not None]
        per_set[n] = dict(summarise(facts), file=name)
        pooled += facts
    what = f"compare results in {args.dir}" if args.dir else "blind results"
    report = {"what": what + f" of unseen sets 3-{max(BLIND)} pooled (tools/pool_blind_sets.py)",
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "machine": f"{platform.system()} {platform.release()} {platform.machine()}, {os.cpu_count()} CPUs",
              "command": "tools/pool_blind_sets.py " + " ".join(sys.argv[1:]),
              "note": "reads committed results only; no model is measured or planned, so load does not matter",
              "sets": per_set, "pooled": summarise(pooled)}
    fmt = "{:>6} {:>5} {:>8} {:>8} {:>8} {:>6} {:>6} {:>6} {:>7} {:>8} {:>8}"
    print(fmt.format("set", "rows", "median%", "p90%", "max%", "<=1%", "<=3%", "<=5%", ">3%", "flagged", "covered"))
    for key, s in list(per_set.items()) + [("pooled", report["pooled"])]:
        print(fmt.format(key, s["rows"], s["peak_median_pct"], s["peak_p90_pct"], s["peak_max_pct"], s["within_1pct"],
                         s["within_3pct"], s["within_5pct"], s["misses_over_3pct"], s["misses_flagged"],
                         s["misses_covered"]))
    if args.before:
        false = [g for g in gains if g["false_flag"]]
        report["gained"] = {"before": args.before, "rows": gains, "false_flags": len(false),
                            "rows_within_3pct": sum(f["err"] <= 0.03 for f in pooled)}
        print(f"rows gaining named bytes against {args.before}: {len(gains)}, of them within 3 % (false flags): "
              f"{len(false)} of {report['gained']['rows_within_3pct']} rows within 3 %")
        for g in gains:
            print("  set {set} {model} b{batch} {optimizer}: {peak_error_pct:+.2f} %, named {share:.1f} % of the plan, "
                  "covered {cb} -> {c}; {w}".format(share=100 * g["named_share_of_plan"], cb=g["covered_before"],
                                                   c=g["covered"], w="; ".join(g["warnings"]), **g))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
