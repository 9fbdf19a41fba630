"""Which exported ONNX nodes ran inside a torch.utils.checkpoint call (gradient checkpointing; Hugging Face's
gradient_checkpointing_enable calls it per layer).

torch.onnx.export writes a checkpointed function like any other code (use_reentrant=False), or fails on it
(use_reentrant=True in torch 1.13: "unordered_map::at"), so the planner would keep the function's activations
through the forward although torch drops them and recomputes them when backward reaches the call. While
oomguard.export exports, torch.utils.checkpoint.checkpoint (and the two functions it calls in torch 1.13,
CheckpointFunction.apply and _checkpoint_without_reentrant, which a reference bound before the export such as
functools.partial(checkpoint, ...) still reaches; checkpoint_sequential calls checkpoint) runs the function
directly when torch is tracing: the export is the plain forward, the same as without checkpointing, for both
forms. When some call ran, the model is exported a second time with each call N traced inside a scope level
"oomguard_checkpoint_N" of its own, which torch names the nodes after; the two exports' nodes are paired by
position (the same code traced twice gives the same op types in the same order; where it does not, nothing is
named), and metadata_props "oomguard.checkpointed" lists, per call in call order, the names of its nodes (a JSON
list of lists; Constant nodes left out), "oomguard.checkpointed_reentrant" the nodes of the calls made with
use_reentrant=True (torch's default in 1.13), whose backward also holds the recomputed outputs and their gradients. The planner (docs/DESIGN.md, `--checkpointed`) keeps only each
segment's inputs through forward and recomputes its saved tensors when backward reaches it. Only calls made
while the model's forward runs are seen; a checkpoint function the model imported under another module's name
is not. It needs only torch.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

METADATA_KEY = "oomguard.checkpointed"
REENTRANT_METADATA_KEY = "oomguard.checkpointed_reentrant"
SCOPE = "oomguard_checkpoint"
_SCOPED = re.compile("/" + SCOPE + r"_(\d+)(?:_\d+)?/")


class _Calls:
    """What the patched checkpoint functions do while the model is traced: count the calls, and trace each
    inside its own scope level when `scoped`."""

    def __init__(self, scoped: bool) -> None:
        self.scoped = scoped
        self.count = 0
        self.reentrant: List[int] = []  # the calls made with use_reentrant=True

    def run(self, function: Callable[..., Any], args: Any, kwargs: Dict[str, Any], reentrant: bool) -> Any:
        import torch
        state = torch._C._get_tracing_state()
        n = self.count
        self.count += 1
        if reentrant:
            self.reentrant.append(n)
        if not self.scoped or state is None:
            return function(*args, **kwargs)
        state.push_scope("oomguard.Checkpoint::%s_%d" % (SCOPE, n))
        try:
            return function(*args, **kwargs)
        finally:
            state.pop_scope()


# checkpoint's own keywords (torch 1.13 to 2.x), not the function's.
_CHECKPOINT_KEYWORDS = ("use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug")

@contextlib.contextmanager
def traced_checkpoints(scoped: bool = False, eager: bool = False) -> Iterator[_Calls]:
    """While in the block, a torch.utils.checkpoint call made while torch traces runs its function directly
    (traced inside a scope level "oomguard_checkpoint_N" when `scoped`); calls outside tracing are torch's own,
    unless `eager` (then they run directly too: grad_mode's eager forward must see the function's modules run
    with grad on, as a real step's recompute does, not under the no_grad of use_reentrant=True's forward).
    Yields the counter of calls. Everything is restored when the block ends."""
    import torch
    import torch.utils.checkpoint as ckpt

    calls = _Calls(scoped)
    originals: Dict[Any, Any] = {}

    def tracing() -> bool:
        return eager or torch._C._get_tracing_state() is not None

    original_checkpoint = ckpt.checkpoint

    def checkpoint(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not tracing():
            return original_checkpoint(function, *args, **kwargs)
        reentrant = kwargs.get("use_reentrant", None) is not False  # torch's default is the reentrant form
        for key in _CHECKPOINT_KEYWORDS:
            kwargs.pop(key, None)
        return calls.run(function, args, kwargs, reentrant)

    patches: List[Any] = [(ckpt, "checkpoint", checkpoint)]
    original_without = getattr(ckpt, "_checkpoint_without_reentrant", None)
    if original_without is not None:
        def without_reentrant(function: Callable[..., Any], preserve_rng_state: bool = True, *args: Any,
                              **kwargs: Any) -> Any:
            if not tracing():
                return original_without(function, preserve_rng_state, *args, **kwargs)
            return calls.run(function, args, kwargs, False)
        patches.append((ckpt, "_checkpoint_without_reentrant", without_reentrant))
    function_class = getattr(ckpt, "CheckpointFunction", None)
    if function_class is not None and "apply" not in function_class.__dict__:
        original_apply = function_class.apply

        def apply(function: Callable[..., Any], preserve: bool, *args: Any) -> Any:
            if not tracing():
                return original_apply(function, preserve, *args)
            return calls.run(function, args, {}, True)
        patches.append((function_class, "apply", staticmethod(apply)))
    try:
        for owner, name, replacement in patches:
            originals[(owner, name)] = owner.__dict__.get(name, _MISSING)
            setattr(owner, name, replacement)
        yield calls
    finally:
        for (owner, name), original in originals.items():
            if original is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, original)


_MISSING = object()


def count_calls(model: Any, inputs: Any) -> int:
    """How many torch.utils.checkpoint calls one eager training forward of `inputs` makes (the calls run directly;
    the model's buffers and the CPU random number generator are restored afterwards): for tools that add the
    metadata to a file exported elsewhere."""
    import torch
    was_training = model.training
    saved = [b.detach().clone() for b in model.buffers()]
    try:
        model.train()
        with torch.random.fork_rng(devices=[]), torch.enable_grad(), traced_checkpoints(eager=True) as calls:
            model(*inputs)
    finally:
        model.train(was_training)
        with torch.no_grad():
            for b, s in zip(model.buffers(), saved):
                b.copy_(s)
    return calls.count


def scoped_segments(plain: Any, scoped: Any) -> Optional[Dict[int, List[str]]]:
    """Per checkpoint call (its number, in call order), the names of `plain`'s nodes (an export's GraphProto) whose
    twin in `scoped` (the same model exported under traced_checkpoints(scoped=True)) was traced inside the call's
    scope level (the outermost one: a call inside a checkpointed function belongs to its caller's segment); the two
    paired by position. None when they do not have the same op types in the same order. Calls that traced no node
    are left out; Constant nodes too."""
    a, b = list(plain.node), list(scoped.node)
    if [n.op_type for n in a] != [n.op_type for n in b]:
        return None
    segments: Dict[int, List[str]] = {}
    for x, y in zip(a, b):
        if x.op_type == "Constant":
            continue
        m = _SCOPED.search(y.name)
        if m:
            segments.setdefault(int(m.group(1)), []).append(x.name)
    return segments


def add_checkpoint_metadata(onnx_bytes: bytes, calls: int, reexport: Callable[[], Tuple[bytes, List[int]]]) -> bytes:
    """The exported model (exported under traced_checkpoints, which counted `calls`) with metadata_props
    "oomguard.checkpointed": the nodes of each torch.utils.checkpoint call, found by `reexport` (exporting the
    model again as onnx_bytes was exported, under traced_checkpoints(scoped=True); it returns the bytes and the
    calls made with use_reentrant=True), and "oomguard.checkpointed_reentrant": the nodes of the calls made with
    use_reentrant=True (their recompute also holds the segment's outputs and their gradients until the segment's
    backward is done); empty lists when no call ran. When the second export fails or differs, a warning and no
    entry: the planner then keeps the checkpointed code's activations as if it were not. Needs the onnx
    package."""
    import warnings
    import onnx
    from .inplace import set_metadata
    proto = onnx.load_from_string(onnx_bytes)
    segments: Optional[Dict[int, List[str]]] = {}
    reentrant: List[int] = []
    reason = "its nodes differ"
    if calls:
        try:
            data, reentrant = reexport()
            segments = scoped_segments(proto.graph, onnx.load_from_string(data).graph)
        except Exception as e:  # noqa: BLE001 (the export stands; only the hint is missing)
            segments, reason = None, "%s: %s" % (type(e).__name__, e)
    if segments is None:
        warnings.warn("oomguard.export: could not export the model a second time to find the nodes run inside "
                      "torch.utils.checkpoint (%s); planned as if not checkpointed" % reason)
        return onnx_bytes
    set_metadata(proto, METADATA_KEY, json.dumps([segments[k] for k in sorted(segments)]))
    set_metadata(proto, REENTRANT_METADATA_KEY,
                 json.dumps(sorted(n for k in sorted(segments) if k in reentrant for n in segments[k])))
    return proto.SerializeToString()
