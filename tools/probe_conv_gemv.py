#!/usr/bin/python3
"""Targeted dev probes for oneDNN's sgemm gemv shortcut (gemm_threading_driver's jump_to_gemv, tried before
any buffer is allocated): grouped convolutions refused by the direct kernels (per-group channels not a
multiple of 4), so that forward and input gradient run x64:gemm:jit, on output maps of 1, 2 and 4 positions.
Dev data only (ids 950000+, drawn by hand, not by a seed). Same net, tracker and planner as
tools/probe_conv_fuzz.py.

    /usr/bin/python3 tools/probe_conv_gemv.py [--oomguard build-conv/oomguard] [--out FILE.json]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe_conv_fuzz as pcf  # noqa: E402


def _l(nd, cin, cout, g, sp, k, p=0, s=1):
    return {"nd": nd, "transposed": False, "cin": cin, "cout": cout, "groups": g, "spatial": [sp] * nd,
            "k": [k] * nd, "s": [s] * nd, "p": [p] * nd, "d": [1] * nd, "op": [0] * nd, "bias": True}


LAYERS = {
    950000: (_l(2, 24, 24, 4, 3, 3), 2),     # 6 -> 6 per group, 1x1 map
    950001: (_l(2, 24, 24, 4, 4, 3), 2),     # same, 2x2 map
    950002: (_l(2, 24, 24, 4, 6, 3), 2),     # same, 4x4 map
    950003: (_l(2, 60, 120, 6, 5, 5), 1),    # 10 -> 20 per group, 1x1 map
    950004: (_l(2, 60, 120, 6, 6, 5), 1),    # same, 2x2 map
    950005: (_l(1, 36, 72, 3, 3, 3), 4),     # conv1d 12 -> 24 per group, 1 position
    950006: (_l(1, 36, 72, 3, 4, 3), 4),     # same, 2 positions
    950007: (_l(2, 12, 6, 6, 3, 3), 2),      # 2 -> 1 per group (n = 1 forward), 1x1 map
    950008: (_l(2, 12, 6, 6, 5, 3), 2),      # same, 3x3 map
}


def draw(seed):
    layer, batch = LAYERS[seed]
    return {"seed": seed, "layer": layer, "batch": batch}


pcf.draw = draw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oomguard", default=os.path.join(pcf.ROOT, "build-conv", "oomguard"))
    ap.add_argument("--work", default="/tmp/oomguard_conv_gemv")
    ap.add_argument("--out")
    ap.add_argument("--child", type=int)
    a = ap.parse_args()
    if a.child is not None:
        return pcf.child(a.child)
    import warnings
    warnings.filterwarnings("ignore")
    os.makedirs(a.work, exist_ok=True)
    rows = []
    for seed in sorted(LAYERS):
        pcf.export(seed, a.work)
        m = subprocess.run([sys.executable, __file__, "--child", str(seed)], capture_output=True, text=True)
        d = draw(seed)
        row = {"seed": seed, "what": pcf.describe(d["layer"]), "layer": d["layer"], "batch": d["batch"]}
        meas = json.loads(m.stdout.strip().splitlines()[-1])
        row["measured_peak"], row["measured_phase"] = meas["peak_live_bytes"], meas["peak_phase"]
        pcf.plan_row(a.oomguard, a.work, row)
        rows.append(row)
        print("%d %-50s b=%d peak %10d plan %10d (%+.2f%%) diff %+d %s/%s" % (
            seed, row["what"], row["batch"], row["measured_peak"], row.get("planned_peak", -1),
            row.get("peak_error_pct", 0), row.get("planned_peak", 0) - row["measured_peak"],
            row["measured_phase"], row.get("planned_phase")), flush=True)
    if a.out:
        pcf.write_json(a.out, {"command": " ".join(sys.argv), "oomguard": a.oomguard, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
