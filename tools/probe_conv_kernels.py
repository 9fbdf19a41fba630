#!/usr/bin/python3
"""Which oneDNN 2.6.3 kernel runs a tools/probe_conv_fuzz.py layer's input gradient: DNNL_VERBOSE against a reading
of both direct kernels' init_conf (conv fuzz round 5).

model() below is the reading of jit_avx512_common_conv_bwd_data_kernel_f32::init_conf and
jit_avx2_conv_bwd_data_kernel_f32::init_conf (oneDNN 2.6.3, as PyTorch 1.13 bundles it) that the planner's C++
port follows (src/plan/conv_scratch_table.cc DirectInputGradientKernel; planner_test pins the same dev cases):
refusals of a dilated, strided axis, of a kernel outside the input, of channels that fill no block, and the width
blocking (ur_w) that the AVX-512 kernel sizes by the per-core L1 (32 KiB: oneDNN's guess where xbyak reads no
cache hierarchy, as on this AMD CPU). Depthwise, 1x1 and transposed layers run other kernels and are left out.
This tool runs the seeds under DNNL_VERBOSE (one process, one thread; a crashed process is restarted after the
seed it was on) and lists every layer where the reading and oneDNN disagree.

With --all-directions (conv fuzz round 8) it compares the planner itself instead: build-conv's
oomguard_conv_kernels prints the kernel ConvScratch planned each direction on (forward_training, backward_data,
backward_weights; OpRule::conv_kernels, set where its rules decide), and each is checked against DNNL_VERBOSE's
implementation for that direction ("slow" where no oneDNN convolution ran: PyTorch's own slow_conv path). It prints
the disagreements per direction and grouped by direction, layer pattern and the two names. --verbose-json reuses
the implementations of an earlier run (its --out file, or a {seed: {direction: implementation}} file).

    /usr/bin/python3 tools/probe_conv_kernels.py --seeds A:B [--out FILE.json]
    /usr/bin/python3 tools/probe_conv_kernels.py --seeds A:B --all-directions [--planner EXE] [--verbose-json F]
Exit status: 0 all agree, 1 a disagreement, 2 bad usage. Dev seeds only (below 900000): it is a tuning tool.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


# --- the reading of oneDNN 2.6.3's input-gradient init_conf (see the docstring) ---
L1_BYTES = 32768


def axes(layer: dict) -> list:
    """Depth, height, width as oneDNN sees them (conv1d as 2-D over a unit height); dilation counts gaps."""
    out = probe_conv_fuzz_out_size(layer)
    ax = [{"i": layer["spatial"][i], "o": out[i], "k": layer["k"][i], "s": layer["s"][i], "p": layer["p"][i],
           "d": layer["d"][i] - 1} for i in range(layer["nd"])]
    unit = {"i": 1, "o": 1, "k": 1, "s": 1, "p": 0, "d": 0}
    return [unit] * (3 - len(ax)) + ax


def probe_conv_fuzz_out_size(layer: dict) -> list:
    import probe_conv_fuzz
    return probe_conv_fuzz._out_size(layer)


def cdiv(a: int, b: int) -> int:
    """C's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def geometry_refused(ax: list) -> bool:
    """A dilated, strided axis, or a kernel the padding puts outside the input; fills ext and end padding."""
    if any(a["d"] != 0 and a["s"] != 1 for a in ax):
        return True
    for a in ax:
        a["ext"] = (a["k"] - 1) * (a["d"] + 1) + 1
        a["end"] = (a["o"] - 1) * a["s"] + a["ext"] - (a["i"] + a["p"])
        if a["ext"] <= a["p"] or a["ext"] <= a["end"]:
            return True
    return False


def avx512_takes(ax: list, ic: int, oc: int, groups: int, l1: int) -> bool:
    ax = [dict(a) for a in ax]
    if geometry_refused(ax):
        return False
    simd = 16
    if groups == 1:  # ok_to_pad_channels
        ic, oc = -(-ic // 16) * 16, -(-oc // 16) * 16
    elif ic % 16 or oc % 16:  # ok_to_try_lower_zmm
        simd = next((s for s in (8, 4) if ic % s == 0 and oc % s == 0), 16)
    if ic % simd or oc % simd:
        return False
    d, h, w = ax
    iw, ow, kw, sw, r_pad = w["i"], w["o"], w["k"], w["s"], w["end"]
    nb_ic = ic // simd
    l_overflow = max(0, cdiv((kw - 1) * (w["d"] + 1) - w["p"], sw))
    large_w = 14 <= kw < 20 and ow == 1 and nb_ic > 1 and kw == iw and sw == 1 and all(a["d"] == 0 for a in ax)
    total = 4 * iw * simd * 2 * h["k"] + 4 * ow * simd + 4 * h["k"] * kw * simd * simd * 2
    small = kw == 1 or (kw == 5 and iw < 8) or (kw < 5 and ((iw <= 5 or 8 < iw <= 13) or total > l1))
    if (not small or h["s"] > 1 or d["s"] > 1) and not large_w:
        ur_w, blocking = min(iw, 28), 1
        if not (kw > 3 or (kw == 3 and total < l1 and ow > 8)) and h["s"] == 1 and d["s"] == 1 and nb_ic % 2 == 0:
            ur_w, blocking = min(iw, 31 // 3), 2
    else:
        blocking = min(2 if large_w else 4, nb_ic)
        while nb_ic % blocking:
            blocking -= 1
        ur_w = min(iw, 31 // (blocking + 1))
    tail = iw % ur_w
    if l_overflow * sw > ur_w and not large_w:
        return False
    r_overflow = max(0, cdiv((kw - 1) * (w["d"] + 1) - max(0, r_pad + tail), sw))
    if r_overflow * sw > ur_w or (iw > ur_w and ur_w % sw) or (iw > ur_w and r_pad + tail < 0):
        return False
    mult = 1 + (l_overflow > 0) + (r_overflow > 0)
    return not (mult * kw * simd * blocking * ur_w * 15 > 262144 and not large_w)


def avx2_takes(ax: list, ic: int, oc: int, groups: int) -> bool:
    if any(a["d"] != 0 and a["s"] != 1 for a in ax):
        return False
    d, h, w = ax
    if ic < 8 and w["k"] > 3 and w["s"] > 1:
        return False
    if groups == 1:
        ic, oc = -(-ic // 8) * 8, -(-oc // 8) * 8
    if not (w["s"] == h["s"] and d["s"] == 1 and ic % 8 == 0 and oc % 8 == 0):
        return False
    ax = [dict(a) for a in ax]
    if geometry_refused(ax):
        return False
    w = ax[2]
    iw, sw = w["i"], w["s"]
    l_overflow = max(0, cdiv(w["ext"] - 1 - w["p"], sw))
    if sw + 1 > 15:
        return False
    best, ur_w = 0, 1
    for blocking in range(1, 5):
        if (ic // 8) % blocking:
            continue
        u = sw
        while u * blocking + u // sw <= 15 and u < iw + sw:
            ur = min(u, iw)
            if not (l_overflow * sw > ur and ur != iw):
                fmas = -(-ur // sw) * blocking
                if fmas > best or (fmas == best and ur_w < ur):
                    ur_w, best = ur, fmas
            u += sw
    if best == 0:
        return False
    tail = iw % ur_w
    r_overflow = max(0, cdiv(w["ext"] - 1 - w["end"] - tail, sw))
    return not (r_overflow * sw > ur_w or (iw > ur_w and ur_w % sw) or (iw > ur_w and w["end"] + tail < 0))


def predict(layer: dict, l1: int = L1_BYTES):
    """oneDNN's implementation name for the input gradient, or None for a layer another kernel runs."""
    g, cin, cout = layer["groups"], layer["cin"], layer["cout"]
    if layer["transposed"] or (g == cin and g > 1) or all(k == 1 for k in layer["k"]):
        return None
    ax = axes(layer)
    if avx512_takes(ax, cin // g, cout // g, g, l1):
        return "jit:avx512_core"
    if avx2_takes(ax, cin // g, cout // g, g):
        return "jit:avx2"
    return "x64:gemm:jit"


def child(a: int, b: int) -> int:
    os.environ["DNNL_VERBOSE"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"
    import probe_conv_fuzz as cf
    import torch
    torch.set_num_threads(1)
    for seed in range(a, b):
        row = cf.draw(seed)
        sp = cf.spec(seed, row["layer"])
        print("== seed", seed, flush=True)
        net = sp.build()
        x = torch.randn((row["batch"],) + tuple(sp.inputs[0].shape))
        net(x).sum().backward()
        sys.stdout.flush()
    return 0


def parse(text: str) -> dict:
    """seed -> {direction: implementation} of its convolutions (the fuzzed layer's: the 1x1 one before it runs
    no oneDNN kernel at these sizes, or the same direction earlier)."""
    out, seed = {}, None
    for line in text.splitlines():
        if line.startswith("== seed"):
            seed = int(line.split()[2])
            out[seed] = {}
            continue
        f = line.split(",")
        if seed is None or len(f) < 7 or f[1] != "exec" or f[3] != "convolution":
            continue
        out[seed][f[5]] = f[4]
    return out


def verbose_log(a: int, b: int) -> str:
    """The --child log of seeds a..b-1, restarting after a crashed seed (heap corruption under DNNL_VERBOSE)."""
    text, start = "", a
    while start < b:
        out = subprocess.run([sys.executable, __file__, "--child", "%d:%d" % (start, b)], capture_output=True,
                             text=True).stdout
        text += out
        seeds = [int(line.split()[2]) for line in out.splitlines() if line.startswith("== seed")]
        start = (seeds[-1] + 1) if seeds else b
    return text


DIRECTIONS = ("forward_training", "backward_data", "backward_weights")


def planner_line(layer: dict, batch: int) -> str:
    """The layer as oomguard_conv_kernels reads it (see src/plan/conv_kernels_main.cc)."""
    fields = ["convT" if layer["transposed"] else "conv", layer["nd"], layer["cin"], layer["cout"], layer["groups"],
              batch]
    for key in ("spatial", "k", "s", "p", "d", "op"):
        fields += layer[key]
    return " ".join(map(str, fields))


def planner_kernels(rows: list, exe: str) -> list:
    """The planner's kernel per direction ({direction: name}) for each (layer, batch) of rows."""
    text = "\n".join(planner_line(layer, batch) for layer, batch in rows) + "\n"
    out = subprocess.run([exe], input=text, capture_output=True, text=True, check=True).stdout.splitlines()
    if len(out) != len(rows):
        raise RuntimeError("oomguard_conv_kernels answered %d lines for %d layers" % (len(out), len(rows)))
    return [dict(zip(DIRECTIONS, line.split())) if not line.startswith("error") else {} for line in out]


def layer_class(layer: dict) -> str:
    """A coarse pattern of the layer for the disagreement table."""
    g, cin, cout = layer["groups"], layer["cin"], layer["cout"]
    kind = "dw" if g > 1 and g == cin else "grouped" if g > 1 else "dense"
    tags = ["%dd" % layer["nd"], "T" if layer["transposed"] else "", kind]
    if all(k == 1 for k in layer["k"]):
        tags.append("k1")
    if any(d != 1 for d in layer["d"]):
        tags.append("dil")
    if any(v != 1 for v in layer["s"]):
        tags.append("str")
    if kind == "dense" and cin < 16:
        tags.append("cin<16")
    return "-".join(t for t in tags if t)


def all_directions(a: int, b: int, exe: str, out_file: str, log_json: str) -> int:
    """Every direction of every seed: the planner's kernel (oomguard_conv_kernels) against DNNL_VERBOSE's
    (no oneDNN convolution in a direction: PyTorch's slow path, "slow")."""
    import probe_conv_fuzz as cf
    if log_json:
        with open(log_json) as f:
            loaded = json.load(f)
        if "rows" in loaded:  # an earlier --all-directions --out file
            loaded = {r["seed"]: {d: i for d, i in r["onednn"].items() if i != "slow"} for r in loaded["rows"]}
        seen = {int(k): v for k, v in loaded.items() if a <= int(k) < b}
    else:
        seen = parse(verbose_log(a, b))
    seeds = sorted(seen)
    draws = [cf.draw(seed) for seed in seeds]
    planned = planner_kernels([(d["layer"], d["batch"]) for d in draws], exe)
    rows, table, disagree = [], {}, {d: 0 for d in DIRECTIONS}
    for seed, draw, plan in zip(seeds, draws, planned):
        got = {d: seen[seed].get(d, "slow") for d in DIRECTIONS}
        row = {"seed": seed, "batch": draw["batch"], "what": cf.describe(draw["layer"]), "planner": plan,
               "onednn": got, "differ": []}
        for d in DIRECTIONS:
            if plan.get(d) != got[d]:
                disagree[d] += 1
                row["differ"].append(d)
                key = "%s %s: planner %s, torch %s" % (d, layer_class(draw["layer"]), plan.get(d), got[d])
                table.setdefault(key, []).append(seed)
        rows.append(row)
    print("%d layers (seeds %d:%d); disagreements per direction: %s" % (len(rows), a, b, json.dumps(disagree)))
    for key, group in sorted(table.items(), key=lambda kv: -len(kv[1])):
        print("%5d  %s  e.g. %s" % (len(group), key, " ".join(map(str, group[:6]))))
    if out_file:
        with open(out_file, "w") as f:
            json.dump({"what": "planner kernel per direction vs DNNL_VERBOSE", "seeds": [a, b],
                       "command": " ".join(sys.argv), "layers": len(rows), "disagree": disagree,
                       "patterns": {k: v for k, v in sorted(table.items(), key=lambda kv: -len(kv[1]))},
                       "rows": rows}, f, indent=1)
            f.write("\n")
    return 1 if any(disagree.values()) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", help="A:B")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out")
    parser.add_argument("--all-directions", action="store_true",
                        help="compare the planner's own choice (oomguard_conv_kernels) in every direction")
    parser.add_argument("--planner", default=os.path.join(os.path.dirname(HERE), "build-conv", "src", "plan",
                                                          "oomguard_conv_kernels"))
    parser.add_argument("--verbose-json", help="seed -> {direction: implementation} from an earlier run")
    args = parser.parse_args()
    if args.child:
        a, b = (int(v) for v in args.child.split(":"))
        return child(a, b)
    if not args.seeds:
        print("probe_conv_kernels: --seeds A:B", file=sys.stderr)
        return 2
    a, b = (int(v) for v in args.seeds.split(":"))
    if b > 900000:
        print("probe_conv_kernels: held-out seeds (900000 and above) are not for this tool", file=sys.stderr)
        return 2
    if args.all_directions:
        return all_directions(a, b, args.planner, args.out, args.verbose_json)
    import probe_conv_fuzz as cf
    rows, counts, disagree = [], {}, 0
    for seed, impl in sorted(parse(verbose_log(a, b)).items()):
        row = cf.draw(seed)
        want = predict(row["layer"])
        if want is None or "backward_data" not in impl:
            continue
        got = impl["backward_data"]
        counts[got] = counts.get(got, 0) + 1
        rows.append({"seed": seed, "what": cf.describe(row["layer"]), "model": want, "onednn": impl})
        if want != got:
            disagree += 1
            print("seed %d %s: model %s, oneDNN %s" % (seed, cf.describe(row["layer"]), want, got))
    print("%d layers, %d disagree; oneDNN's input-gradient kernels: %s" % (len(rows), disagree, json.dumps(counts)))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"what": __doc__.splitlines()[0], "seeds": [a, b], "command": " ".join(sys.argv),
                       "layers": len(rows), "disagree": disagree, "kernels": counts, "rows": rows}, f, indent=1)
            f.write("\n")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
