#!/usr/bin/python3
"""Single dense convolutions' forward on PyTorch 1.13's CPU path: which oneDNN 2.6.3 kernel runs each direction
(DNNL_VERBOSE) and how many bytes the forward holds beyond its output (the LD_PRELOAD tracker tools/alloc_tracker.c).

Dev probes for src/plan/conv_scratch_table.cc DenseForwardKernel and ConvScratch's gemm forward (2026-12-07,
bench/results/conv_forward_refusal_20261207.txt). A layer is CIN,COUT,K,PAD,LEN,BATCH[,STRIDE,DILATION,ND,GRAD]
(ND 1: conv1d over LEN; 2: conv2d over LEN x LEN; GRAD 1: the input needs a gradient), one intra-op thread.

    /usr/bin/python3 tools/probe_conv_forward.py --verbose 16,32,31,15,1024,2 32,32,25,12,512,2
    /usr/bin/python3 tools/probe_conv_forward.py --scratch 16,32,31,15,1024,2 1,1,4,3,1,7,2,2,2
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def parse(text: str) -> dict:
    v = [int(x) for x in text.split(",")]
    if len(v) < 6:
        raise ValueError("a layer is CIN,COUT,K,PAD,LEN,BATCH[,STRIDE,DILATION,ND,GRAD]")
    v += [1, 1, 1, 1][len(v) - 6:]
    keys = ("cin", "cout", "k", "pad", "len", "batch", "stride", "dilation", "nd", "grad")
    return dict(zip(keys, v))


def layer_and_input(torch, c: dict):
    conv = (torch.nn.Conv1d if c["nd"] == 1 else torch.nn.Conv2d)(
        c["cin"], c["cout"], c["k"], padding=c["pad"], stride=c["stride"], dilation=c["dilation"])
    shape = (c["batch"], c["cin"]) + (c["len"],) * c["nd"]
    return conv, torch.randn(*shape, requires_grad=bool(c["grad"]))


def verbose(layers: list) -> int:
    os.environ["DNNL_VERBOSE"] = "1"
    import torch
    torch.set_num_threads(1)
    for text in layers:
        conv, x = layer_and_input(torch, parse(text))
        sys.stdout.flush()
        print("layer", text, flush=True)
        conv(x).sum().backward()
        sys.stdout.flush()
    return 0


def scratch(layers: list) -> int:
    import measure_step
    measure_step.reexec_with_tracker(None)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    tracker = measure_step.Tracker()
    for text in layers:
        conv, x = layer_and_input(torch, parse(text))
        for _ in range(2):  # the second forward: oneDNN's primitive and scratchpad made already
            tracker.reset_peak()
            y = conv(x)
            peak, after, out = tracker.peak(), tracker.live(), y.numel() * y.element_size()
            del y
        print("layer %s: forward scratch %d bytes (peak - live after), output %d" % (text, peak - after, out))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verbose", action="store_true", help="print DNNL_VERBOSE's convolution lines")
    ap.add_argument("--scratch", action="store_true", help="the forward's bytes beyond its output")
    ap.add_argument("layers", nargs="+")
    args = ap.parse_args()
    try:
        for text in args.layers:
            parse(text)
    except ValueError as e:
        print("probe_conv_forward: %s" % e, file=sys.stderr)
        return 2
    if args.verbose == args.scratch:
        print("probe_conv_forward: one of --verbose, --scratch", file=sys.stderr)
        return 2
    if args.verbose:
        return verbose(args.layers)
    return scratch(args.layers)


if __name__ == "__main__":
    sys.exit(main())
