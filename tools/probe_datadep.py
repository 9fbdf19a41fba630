#!/usr/bin/python3
"""Development probe (not held out): sizes the data decides (NonZero, boolean-mask indexing), each idiom alone.

    /usr/bin/python3 tools/probe_datadep.py [--oomguard build/oomguard] [--other /tmp/datadep_start_oomguard]
                                            [--cases a,b] [--work DIR] [--out FILE] [--store]

Each case is a small torch.nn net written with its own sizes (never a set's model), exported in training mode
(tools/export_zoo.py, opset 14); each row's real PyTorch 1.13 CPU step is measured in a fresh process under the
LD_PRELOAD tracker (tools/measure_step.py), then planned with `oomguard plan --target cpu` (and with --other, a
second build beside it). Cases:

- mask_tokens: h[h[..., 0] > 0] (boolean-mask indexing of a token batch: NonZero + GatherND) into an MLP.
- nonzero_index_add: (score > 0).nonzero() + index_select into an MLP, index_add_ back into the tokens.
- topk_moe: a top-1 router over 4 experts, one_hot mask, torch.where per expert, x[idx], index_add_ (Hugging Face's
  sparse-MoE form).

--store copies each case's ONNX to tests/data/plan/datadep_<case>.onnx and its measured rows to
tests/data/plan/datadep_probes.json (planner_test.cc plans them).
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import probe_families  # noqa: E402 (write_rows)
import probe_misses  # noqa: E402 (case_spec, measure_child, plan)

# name: (inputs [(name, per-sample shape, dtype, high)], classes, batches, optimizer)
CASES = {
    "mask_tokens": ([("input", (48, 64), "float32", 0)], 6, (4, 16), "sgd"),
    "nonzero_index_add": ([("input", (48, 64), "float32", 0)], 6, (4, 16), "adam"),
    "topk_moe": ([("input", (32, 64), "float32", 0)], 6, (4, 16), "sgd"),
}


def build(name: str, classes: int):
    import torch
    from torch import nn
    import torch.nn.functional as F

    def mlp(d, hid):
        return nn.Sequential(nn.Linear(d, hid), nn.GELU(), nn.Linear(hid, d))

    class MaskTokens(nn.Module):
        def __init__(self, d=64):
            super().__init__()
            self.inp = nn.Linear(d, d)
            self.mlp = mlp(d, 256)
            self.head = nn.Linear(d, classes)

        def forward(self, x):
            h = self.inp(x)
            chosen = h[h[..., 0] > 0]                      # [n, d], n of at most B * T
            return self.head(h.mean(1)) + self.mlp(chosen).mean()

    class NonzeroIndexAdd(nn.Module):
        def __init__(self, d=64):
            super().__init__()
            self.inp = nn.Linear(d, d)
            self.score = nn.Linear(d, 1)
            self.mlp = mlp(d, 256)
            self.head = nn.Linear(d, classes)

        def forward(self, x):
            b, t, d = x.shape
            h = self.inp(x).reshape(-1, d)
            idx = (self.score(h)[:, 0] > 0).nonzero().squeeze(1)
            out = torch.zeros_like(h).index_add(0, idx, self.mlp(h.index_select(0, idx)))
            return self.head((h + out).reshape(b, t, d).mean(1))

    class TopkMoE(nn.Module):
        def __init__(self, d=64, hid=192, experts=4):
            super().__init__()
            self.e = experts
            self.gate = nn.Linear(d, experts, bias=False)
            self.experts = nn.ModuleList([mlp(d, hid) for _ in range(experts)])
            self.head = nn.Linear(d, classes)

        def forward(self, x):
            b, t, d = x.shape
            h = x.reshape(-1, d)
            probs = F.softmax(self.gate(h), dim=1)
            weight, chosen = torch.topk(probs, 1, dim=-1)
            mask = F.one_hot(chosen, num_classes=self.e).permute(2, 1, 0)      # [E, 1, N]
            out = torch.zeros_like(h)
            for i, expert in enumerate(self.experts):
                k, tok = torch.where(mask[i])
                out.index_add_(0, tok, expert(h[tok]) * weight[tok, k, None])
            return self.head(out.reshape(b, t, d).mean(1))

    return {"mask_tokens": MaskTokens, "nonzero_index_add": NonzeroIndexAdd, "topk_moe": TopkMoE}[name]()


def row_for(cases, name, batch, rec, plans):
    row = {"model": name, "batch": batch, "optimizer": cases[name][3], "measured_peak": rec["peak_live_bytes"],
           "measured_phase": rec["peak_phase"], "measured_saved": rec["saved_tensor_bytes"]}
    for key, p in plans.items():
        row[key + "_peak"] = p["peak_allocated_bytes"]
        row[key + "_error_pct"] = round(100.0 * (p["peak_allocated_bytes"] - rec["peak_live_bytes"]) /
                                        rec["peak_live_bytes"], 3)
        row[key + "_risks"] = p.get("risks", [])
        row[key + "_data_dependent"] = p.get("data_dependent")
    return row


def probe_main(doc: str, tool: str, cases: dict, build_case, label: str, prefix: str) -> int:
    """A probe tool's command line: each case exported, measured per batch in a fresh process, planned; --store
    keeps tests/data/plan/PREFIX_<case>.onnx and PREFIX_probes.json (tools/probe_scatter.py uses it too)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    parser.add_argument("--other", help="a second oomguard build planned beside it (the start's)")
    parser.add_argument("--cases", help="comma-separated (default: all)")
    parser.add_argument("--work", default="/tmp/oomguard_" + prefix)
    parser.add_argument("--out", help="write the rows as JSON here")
    parser.add_argument("--store", action="store_true", help="keep the cases' ONNX and measurements in tests/data/plan")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()

    def spec(name: str):
        return probe_misses.case_spec(cases, build_case, label, name)

    if args.child:
        name = args.child[0]
        return probe_misses.measure_child(lambda: spec(name), int(args.child[1]), cases[name][3],
                                          ("peak_live_bytes", "peak_phase", "saved_tensor_bytes"), seed=0)
    names = args.cases.split(",") if args.cases else list(cases)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    import export_zoo
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for name in names:
        export_zoo.export_one(spec(name), args.work, 14, require_inferred_output=False)
        onnx_path = os.path.join(args.work, name + ".onnx")
        for batch in cases[name][2]:
            out = subprocess.run([sys.executable, tool, "--child", name, str(batch)], capture_output=True,
                                 text=True, check=True).stdout.strip().splitlines()[-1]
            plans = {"planned": probe_misses.plan(args.oomguard, onnx_path, batch, cases[name][3])}
            if args.other:
                plans["other"] = probe_misses.plan(args.other, onnx_path, batch, cases[name][3])
            row = row_for(cases, name, batch, json.loads(out), plans)
            rows.append(row)
            print("%-18s b=%-3d peak %10d  plan %+.2f%%%s" % (
                name, batch, row["measured_peak"], row["planned_error_pct"],
                "  other %+.2f%%" % row["other_error_pct"] if args.other else ""), flush=True)
    if args.store:
        import shutil
        data = os.path.join(ROOT, "tests", "data", "plan")
        stored = {"torch_version": torch.__version__,
                  "command": "/usr/bin/python3 tools/%s --store" % os.path.basename(tool), "cases": {}}
        for name in names:
            shutil.copyfile(os.path.join(args.work, name + ".onnx"),
                            os.path.join(data, "%s_%s.onnx" % (prefix, name)))
            stored["cases"][name] = {"onnx": "%s_%s.onnx" % (prefix, name), "optimizer": cases[name][3], "rows": [
                {k: r[k] for k in ("batch", "measured_peak", "measured_phase", "measured_saved")}
                for r in rows if r["model"] == name]}
        with open(os.path.join(data, prefix + "_probes.json"), "w") as f:
            json.dump(stored, f, indent=1, sort_keys=True)
            f.write("\n")
    if args.out:
        probe_families.write_rows(args.out, "tools/" + os.path.basename(tool), rows)
    return 0


def main() -> int:
    return probe_main(__doc__, __file__, CASES, build, "data-dependent probe", "datadep")


if __name__ == "__main__":
    sys.exit(main())
