"""Which exported ONNX nodes autograd kept nothing from for backward: code run under torch.no_grad()
(a momentum encoder, an EMA teacher), or inside a module whose result the model .detach()es (a
distillation teacher called with grad enabled).

torch.onnx.export writes such code like any other (no_grad leaves no trace, and aten::detach exports as
nothing), so the planner would keep its activations for a backward that never comes. This module runs
the model's forward once, eagerly, with a hook on every module call, and writes what it saw into the
metadata_props keys "oomguard.no_grad" and "oomguard.detached" (JSON lists of node names) that the
planner reads (docs/DESIGN.md, `--no-grad` / `--detached`):

- a call ran under no_grad when grad mode was off as it began;
- a call was detached when grad mode was on, it returned tensors that require grad, and none of their
  autograd nodes is reachable from the model's outputs (the caller dropped the graph: .detach(), or
  the result went nowhere that needs a gradient).

A module all of whose calls are of one such kind names every node under its scope (the outermost such
module only); a leaf module whose calls differ names the nodes of each such call ("relu", "relu_1", as
torch 1.13 names repeated calls: python/oomguard/inplace.py).

Code run under no_grad outside such a module (`with torch.no_grad(): k = x @ w` in a forward) has no module
to look at. When the eager forward ran any torch function with grad off, the model is exported a second time
with every such call traced inside a scope level of its own ("oomguard_no_grad", torch's tracer names the nodes
after it: no_grad_scope); the two exports' nodes are paired by position (the same code traced twice gives the
same op types in the same order; where it does not, nothing is named) and the first export's nodes whose twin
carries that level are no_grad. A value .detach()ed in such a forward exports as nothing and is not found.
It needs only torch (no compiled part of oomguard).
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from . import inplace

NO_GRAD_METADATA_KEY = "oomguard.no_grad"
DETACHED_METADATA_KEY = "oomguard.detached"

NO_GRAD, DETACHED, RECORDED = "no_grad", "detached", "recorded"


def _tensors(value: Any) -> Iterator[Any]:
    import torch
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _reachable(outputs: Iterable[Any], alive: List[Any]) -> set:
    """ids of the autograd nodes reachable from the outputs' grad_fn. Each node visited is appended to
    `alive`, which the caller keeps while it compares ids: a wrapper that died could hand its id on."""
    seen = set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        alive.append(node)
        stack.extend(n for n, _ in getattr(node, "next_functions", ()) if n is not None)
    return seen


def call_modes(model: Any, inputs: Tuple[Any, ...]) -> Dict[str, List[str]]:
    """Qualified module name -> the mode of each of its calls (NO_GRAD, DETACHED or RECORDED), in call
    order, from one eager forward in training mode with grad enabled. The model's buffers (BatchNorm's
    running statistics) and the random number generators are as they were afterwards."""
    import torch

    names = {m: n for n, m in model.named_modules() if n}
    calls: Dict[str, List[Tuple[bool, List[Any]]]] = {}
    keep: List[Any] = []  # the calls' grad_fns, alive until the walk below

    def pre(module: Any, _args: Any) -> None:
        calls.setdefault(names[module], []).append((torch.is_grad_enabled(), []))

    def post(module: Any, _args: Any, output: Any) -> None:
        fns = [t.grad_fn for t in _tensors(output) if t.requires_grad and t.grad_fn is not None]
        calls[names[module]][-1][1].extend(fns)
        keep.extend(fns)

    with inplace.hooked_training_forward(model, names, pre, post):
        out = model(*inputs)
        reachable = _reachable(_tensors(out), keep)
    modes: Dict[str, List[str]] = {}
    for name, recorded in calls.items():
        out_modes = []
        for grad_enabled, fns in recorded:
            if not grad_enabled:
                out_modes.append(NO_GRAD)
            elif fns and not any(id(f) in reachable for f in fns):
                out_modes.append(DETACHED)
            else:
                out_modes.append(RECORDED)
        modes[name] = out_modes
    del keep
    return modes


def marked_modules(model: Any, modes: Dict[str, List[str]]) -> Tuple[Dict[str, str], Dict[Tuple[str, int], str]]:
    """(whole modules: qualified name -> mode, the outermost whose every call had that one mode other than
    RECORDED; single calls of leaf modules whose calls differ: (qualified name, call index) -> mode)."""
    whole: Dict[str, str] = {}
    for name in sorted(modes, key=lambda n: n.count(".")):
        kinds = set(modes[name])
        if len(kinds) != 1 or RECORDED in kinds:
            continue
        if any(name.startswith(w + ".") for w in whole):
            continue
        whole[name] = kinds.pop()
    leaves = {n for n, m in model.named_modules() if n and not any(True for _ in m.children())}
    calls: Dict[Tuple[str, int], str] = {}
    for name in leaves:
        if name in whole or any(name.startswith(w + ".") for w in whole):
            continue
        for k, mode in enumerate(modes.get(name, [])):
            if mode != RECORDED:
                calls[(name, k)] = mode
    return whole, calls


def node_modes(model: Any, node_names: Iterable[str], modes: Dict[str, List[str]]) -> Dict[str, str]:
    """Node name -> NO_GRAD or DETACHED for the exported nodes that code ran (node_names: an exported
    graph's nodes)."""
    whole, calls = marked_modules(model, modes)
    known = {tuple(inplace.scope_of(n)) for n, _ in model.named_modules() if n}
    wanted_whole = [(inplace.scope_of(q), mode) for q, mode in whole.items()]
    wanted_calls = {}
    for (q, k), mode in calls.items():
        scope = inplace.scope_of(q)
        wanted_calls[tuple(scope[:-1] + [scope[-1] + ("_%d" % k if k else "")])] = mode
    out: Dict[str, str] = {}
    for name in node_names:
        levels = name.split("/")[1:-1]
        if not levels:
            continue
        mode = wanted_calls.get(tuple(levels))
        if mode is None:
            for scope, m in wanted_whole:
                if len(levels) >= len(scope) and inplace.levels_match(levels[:len(scope)], scope, known):
                    mode = m
                    break
        if mode is not None:
            out[name] = mode
    return out


NO_GRAD_SCOPE = "oomguard_no_grad"
_SCOPED = re.compile("/" + NO_GRAD_SCOPE + r"(?:_\d+)?/")


def ran_without_grad(model: Any, inputs: Tuple[Any, ...]) -> Optional[bool]:
    """Whether one eager forward (training mode, grad enabled) ran any torch function with grad off; None when
    the forward cannot be recorded."""
    import torch

    def record(call: Any, _func: Any, _args: Any, _kwargs: Any, _result: Any) -> None:
        if not torch.is_grad_enabled():
            call.records.append(True)

    calls = inplace.recorded_calls(model, inputs, record)
    return None if calls is None else any(c.records for c in calls)


@contextlib.contextmanager
def no_grad_scope() -> Iterator[None]:
    """While torch.onnx.export traces in the block (grad enabled as it begins): each torch function called with
    grad off is traced inside a scope level NO_GRAD_SCOPE, which torch names its nodes with ("/oomguard_no_grad/
    MatMul", "/enc/oomguard_no_grad_1/Relu")."""
    import torch
    from torch.overrides import TorchFunctionMode

    class Scope(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            state = torch._C._get_tracing_state()
            if state is None or torch.is_grad_enabled():
                return func(*args, **kwargs)
            state.push_scope("oomguard.NoGrad::" + NO_GRAD_SCOPE)
            try:
                return func(*args, **kwargs)
            finally:
                state.pop_scope()

    with torch.enable_grad(), Scope():
        yield


def scoped_no_grad_nodes(plain: Any, scoped: Any) -> Optional[List[str]]:
    """The names of `plain`'s nodes (an export's GraphProto) whose twin in `scoped` (the same model exported under
    no_grad_scope) was traced inside NO_GRAD_SCOPE, the two paired by position; None when the two graphs do not
    have the same op types in the same order."""
    a, b = list(plain.node), list(scoped.node)
    if [n.op_type for n in a] != [n.op_type for n in b]:
        return None
    return [x.name for x, y in zip(a, b) if x.op_type != "Constant" and _SCOPED.search(y.name)]


def _first_samples(inputs: Tuple[Any, ...], n: int = 2) -> Tuple[Any, ...]:
    """The inputs cut to their first n samples along the batch axis (the forward here only needs which code
    ran how, not the user's batch: its memory and time stay small)."""
    import torch
    return tuple(t[:n] if isinstance(t, torch.Tensor) and t.dim() > 0 and t.shape[0] > n else t for t in inputs)


def add_grad_mode_metadata(onnx_bytes: bytes, model: Any, inputs: Tuple[Any, ...],
                           reexport: Optional[Callable[[], bytes]] = None) -> bytes:
    """The exported model with metadata_props "oomguard.no_grad" and "oomguard.detached" listing the nodes
    of code run under torch.no_grad() or .detach()ed (each an empty list when there is none), from one eager
    forward of the inputs' first two samples (of all of them if that fails). `reexport`, when given, exports the
    model again as onnx_bytes was exported: it is called under no_grad_scope when some torch function ran with
    grad off, to find such code outside a module of its own. A model whose forward fails here gets neither
    entry, with a warning: the planner then assumes every node recorded. Needs the onnx package."""
    import warnings
    import onnx
    proto = onnx.load_from_string(onnx_bytes)
    modes = None
    for attempt in (_first_samples(inputs), inputs):
        try:
            modes = call_modes(model, attempt)
            break
        except Exception as e:  # noqa: BLE001 (the export stands; only the hint is missing)
            error = e
    if modes is None:
        warnings.warn("oomguard.export: could not run the model's forward to find code under torch.no_grad() or "
                      ".detach()ed (%s: %s); planned as recorded" % (type(error).__name__, error))
        return onnx_bytes
    found = node_modes(model, [n.name for n in proto.graph.node if n.op_type != "Constant"], modes)
    if reexport is not None and ran_without_grad(model, _first_samples(inputs)):
        reason = "its nodes differ"
        try:
            with no_grad_scope():
                scoped = onnx.load_from_string(reexport())
            names = scoped_no_grad_nodes(proto.graph, scoped.graph)
        except Exception as e:  # noqa: BLE001 (the module-level finding stands)
            names, reason = None, "%s: %s" % (type(e).__name__, e)
        if names is None:
            warnings.warn("oomguard.export: could not export the model a second time to find code run under "
                          "torch.no_grad() outside a module of its own (%s); that code is planned as recorded"
                          % reason)
        for name in names or ():
            if found.get(name) != DETACHED:
                found[name] = NO_GRAD
    for key, mode in ((NO_GRAD_METADATA_KEY, NO_GRAD), (DETACHED_METADATA_KEY, DETACHED)):
        inplace.set_metadata(proto, key, json.dumps(sorted(n for n, m in found.items() if m == mode)))
    return proto.SerializeToString()
