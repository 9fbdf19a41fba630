#!/usr/bin/python3
"""What a user of oomguard.export would get on the unseen sets: each stored export (torch.onnx.export's file, as
tools/unseen_models.py planned it) with the metadata oomguard.export adds (tools/export_hints.py: in-place modules,
registered buffers, frozen parameters, modules run under torch.no_grad() or .detach()ed, from the set's own builder
and one eager forward of a batch of 2), planned against the same measured rows.

    /usr/bin/python3 tools/unseen_hinted.py --oomguard build/oomguard [--sets 3-13] [--work DIR] [--out FILE]

Prints, per set and pooled, peak |error| median / p90 / max for the plain files and the hinted ones, and how many
rows' plans the metadata changed. The sets were each planned blind once before (tools/pool_blind_sets.py); this is
not a blind figure, and nothing is tuned on it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def parse_sets(text: str) -> list:
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def hinted_file(um, model: dict, src: str, work: str) -> tuple:
    """(path of the hinted copy of `src`, the metadata entries added) for one model of the current set."""
    import warnings
    warnings.filterwarnings("ignore")
    import onnx
    import export_hints
    builder = __import__(um.SET_MODULES[um.SET]).build if um.SET in um.SET_MODULES else um.build
    module = builder(model)
    inputs = export_hints.example_inputs([(n, s, d, h) for n, s, d, h in model["inputs"]])
    with open(src, "rb") as f:
        data = export_hints.add_export_hints(f.read(), module, inputs,
                                             export_hints.zoo_reexport(module, [tuple(i) for i in model["inputs"]]))
    path = os.path.join(work, "%s__%s.onnx" % (um.SET, model["name"]))
    with open(path, "wb") as f:
        f.write(data)
    proto = onnx.load_from_string(data)
    return path, {e.key: json.loads(e.value) for e in proto.metadata_props}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oomguard", required=True)
    ap.add_argument("--sets", default="3-13")
    ap.add_argument("--work", default="/tmp/oomguard_unseen_hinted")
    ap.add_argument("--out")
    args = ap.parse_args()
    if not (os.path.isfile(args.oomguard) and os.access(args.oomguard, os.X_OK)):
        print("unseen_hinted: %s is not an executable" % args.oomguard, file=sys.stderr)
        return 2
    import unseen_models as um
    import random_nets
    os.makedirs(args.work, exist_ok=True)
    t0 = time.time()
    result = {"what": __doc__.splitlines()[0], "command": " ".join(["tools/unseen_hinted.py"] + sys.argv[1:]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "load_before": os.getloadavg()[0],
              "sets": {}, "rows": []}
    pooled_plain, pooled_hinted = [], []
    for n in parse_sets(args.sets):
        um.use_set("unseen%d" % n)
        recs = [r for r in um.load_rows(um.REFERENCES, None) if not r.get("error")]
        hinted = {}
        for name in sorted({r["model"] for r in recs}):
            src = next(r["onnx"] for r in recs if r["model"] == name)
            src = src if os.path.isabs(src) else os.path.join(ROOT, src)
            try:
                hinted[name] = hinted_file(um, um.BY_NAME[name], src, args.work)
            except Exception as e:  # noqa: BLE001 (the model is planned plain; reported)
                hinted[name] = (None, {"error": um.short_error(e)})
        plain_err, hinted_err, changed = [], [], 0
        for rec in recs:
            plain = um.compare_row(rec, args.oomguard)
            path, meta = hinted[rec["model"]]
            with_hints = um.compare_row(dict(rec, onnx=path), args.oomguard) if path else plain
            if not plain.get("rel_error") or not with_hints.get("rel_error"):
                continue
            a, b = plain["rel_error"]["peak"], with_hints["rel_error"]["peak"]
            plain_err.append(a)
            hinted_err.append(b)
            changed += plain["predicted"]["peak"] != with_hints["predicted"]["peak"]
            result["rows"].append({"set": n, "model": rec["model"], "batch": rec["batch"],
                                   "optimizer": rec["optimizer"], "measured_peak": plain["measured"]["peak"],
                                   "plain_peak": plain["predicted"]["peak"], "hinted_peak": with_hints["predicted"]["peak"],
                                   "plain_error": a, "hinted_error": b,
                                   "hints": {k: (v if not isinstance(v, list) else len(v)) for k, v in meta.items()}})
        pooled_plain += plain_err
        pooled_hinted += hinted_err
        s = {"rows": len(plain_err), "changed": changed, "plain": random_nets.stats(plain_err),
             "hinted": random_nets.stats(hinted_err)}
        result["sets"][n] = s
        print("set %2d: %3d rows, %2d changed; plain p90 %6.2f%% max %6.2f%%; hinted p90 %6.2f%% max %6.2f%%" % (
            n, s["rows"], changed, 100 * s["plain"]["p90"], 100 * s["plain"]["max"], 100 * s["hinted"]["p90"],
            100 * s["hinted"]["max"]), flush=True)
    result["pooled"] = {"rows": len(pooled_plain), "plain": random_nets.stats(pooled_plain),
                        "hinted": random_nets.stats(pooled_hinted),
                        "within_3pct": {"plain": sum(abs(e) <= 0.03 for e in pooled_plain),
                                        "hinted": sum(abs(e) <= 0.03 for e in pooled_hinted)}}
    result["wall_seconds"] = round(time.time() - t0, 1)
    p = result["pooled"]
    print("pooled: %d rows; plain median %.3f%% p90 %.2f%% max %.2f%% (%d within 3 %%); hinted median %.3f%% "
          "p90 %.2f%% max %.2f%% (%d within 3 %%)" % (
              p["rows"], 100 * p["plain"]["median"], 100 * p["plain"]["p90"], 100 * p["plain"]["max"],
              p["within_3pct"]["plain"], 100 * p["hinted"]["median"], 100 * p["hinted"]["p90"],
              100 * p["hinted"]["max"], p["within_3pct"]["hinted"]))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
