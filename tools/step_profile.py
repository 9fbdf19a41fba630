#!/usr/bin/python3
"""Where a real PyTorch CPU training step peaks: live and peak bytes per module (forward) and per
autograd node (backward), under the LD_PRELOAD tracker tools/alloc_tracker.c.

The step is measured as tools/measure_step.py measures it (one warm-up step, then zero_grad ->
forward -> cross_entropy -> backward -> optimizer.step(), one intra-op thread); byte figures are
relative to the same offset, so the largest peak printed is the record's peak_live_bytes. Forward:
a pre- and a post-hook on every leaf module (what runs between modules, a residual add, a
torch.cat, is charged to the next module's "pre" row). Backward: a hook on every node of the graph
(called after the node ran), so each row's peak is the highest live bytes while that node ran and
its scratch is peak - live after.

    /usr/bin/python3 tools/step_profile.py random 140          # a net of tools/random_nets.py
    /usr/bin/python3 tools/step_profile.py resnet18 --batch 4 --optimizer sgd   # tools/models.py
    /usr/bin/python3 tools/step_profile.py random 140 --top 5  # the five highest rows only
    /usr/bin/python3 tools/step_profile.py family:convlstm_cell --batch 4   # tools/probe_families.py
    /usr/bin/python3 tools/step_profile.py miss:topk_threshold --batch 4   # tools/probe_misses.py
    /usr/bin/python3 tools/step_profile.py fuzz:124            # a dev row of tools/probe_conv_fuzz.py, its batch
    /usr/bin/python3 tools/step_profile.py unseen16:hopfield_pooling --batch 16 --optimizer adam   # a set's model

Compare with the planner's per-layer timeline (`oomguard plan ... --html FILE`, the points of the
timeline figure) to find the layer whose scratch the planner misses.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure_step  # noqa: E402


def spec_for(args):
    if args.model == "random":
        import random_nets
        net = random_nets.describe_kind(args.kind, args.seed)
        return random_nets.make_spec(net), net["batch"], net["optimizer"]
    if args.model.startswith("family:"):  # a case of tools/probe_families.py
        import probe_families
        return probe_families.spec(args.model[len("family:"):]), args.batch, args.optimizer
    if args.model.startswith("miss:"):  # a case of tools/probe_misses.py
        import probe_misses
        return probe_misses.spec(args.model[len("miss:"):]), args.batch, args.optimizer
    if args.model.startswith("fuzz:"):  # a dev row of tools/probe_conv_fuzz.py (its own batch)
        import probe_conv_fuzz
        seed = int(args.model[len("fuzz:"):])
        row = probe_conv_fuzz.draw(seed)
        return probe_conv_fuzz.spec(seed, row["layer"]), row["batch"], "sgd"
    if args.model.startswith("unseen") and ":" in args.model:  # unseenN:model, a model of an unseen set
        import unseen_models
        set_name, name = args.model.split(":", 1)
        unseen_models.use_set(set_name)
        return unseen_models.spec_for(unseen_models.BY_NAME[name]), args.batch, args.optimizer
    import models
    spec = models.SPECS[args.model]
    return spec, args.batch, args.optimizer


def profile(spec, batch: int, optimizer: str, tracker) -> list:
    import torch
    import torch.nn.functional as F
    gc.collect()
    process_live = tracker.live()
    model = spec.build()
    params = list(model.parameters())
    buffers = list(model.buffers())
    opt = measure_step.make_optimizer(optimizer, params)
    inputs = spec.example_inputs(batch)
    labels = spec.example_labels(batch)
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(*inputs), labels)
    loss.backward()
    opt.step()
    del loss
    opt.zero_grad(set_to_none=True)
    gc.collect()
    state = [v for st in opt.state.values() for v in st.values() if torch.is_tensor(v)]
    explained = sum(measure_step.tensors_bytes(t) for t in (params, buffers, state, inputs, [labels]))
    offset = process_live + (tracker.live() - process_live - explained)
    rows = []

    def mark(phase, name):
        rows.append((phase, name, tracker.peak() - offset, tracker.live() - offset))
        tracker.reset_peak()

    names = {m: n or "(model)" for n, m in model.named_modules()}
    handles = []
    for m in model.modules():
        if not list(m.children()):
            handles.append(m.register_forward_pre_hook(lambda mod, inp: mark("forward", "pre  " + names[mod])))
            handles.append(m.register_forward_hook(lambda mod, inp, out: mark("forward", names[mod])))
    tracker.reset_peak()
    mark("forward", "start")
    out = model(*inputs)
    mark("forward", "(after last module)")
    loss = F.cross_entropy(out, labels)
    mark("forward", "loss")
    seen, stack, order = set(), [loss.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        order += 1
        label = "%s#%d" % (type(fn).__name__, order)
        fn.register_hook(lambda gi, go, label=label: mark("backward", label))
        stack.extend(f for f, _ in fn.next_functions)
    loss.backward()
    mark("backward", "(end)")
    opt.step()
    mark("optimizer", "step")
    for h in handles:
        h.remove()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="'random' (then SEED), a tools/models.py model name, family:CASE or fuzz:SEED")
    ap.add_argument("seed", nargs="?", type=int)
    ap.add_argument("--kind", default="classic", help="random_nets generator (--kinds of random_nets.py)")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--top", type=int, default=0, help="print only the N rows of highest peak")
    ap.add_argument("--tracker")
    args = ap.parse_args()
    if args.model == "random" and args.seed is None:
        print("step_profile: 'random' needs a seed", file=sys.stderr)
        return 2
    if args.model == "random" and args.seed >= 200000:
        print("step_profile: seeds from 200000 are held out", file=sys.stderr)
        return 2
    if args.model.startswith("fuzz:") and int(args.model[len("fuzz:"):]) >= 900000:
        print("step_profile: conv fuzz seeds from 900000 are held out", file=sys.stderr)
        return 2
    measure_step.reexec_with_tracker(args.tracker)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    try:
        spec, batch, optimizer = spec_for(args)
    except KeyError:
        print("step_profile: unknown model %r" % args.model, file=sys.stderr)
        return 2
    rows = profile(spec, batch, optimizer, measure_step.Tracker())
    shown = sorted(rows, key=lambda r: -r[2])[:args.top] if args.top else rows
    print("batch %d optimizer %s; bytes relative to the step's offset" % (batch, optimizer))
    print("%-9s %-52s %10s %10s %10s" % ("phase", "where", "peak", "live after", "scratch"))
    for phase, name, peak, live in shown:
        print("%-9s %-52s %10d %10d %10d" % (phase, name[:52], peak, live, peak - live))
    return 0


if __name__ == "__main__":
    sys.exit(main())
