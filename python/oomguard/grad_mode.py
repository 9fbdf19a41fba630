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

Code run under no_grad outside such a module (`with torch.no_grad(): k = x @ w` in a forward), and a value
.detach()ed that no module returned (VQ-VAE's straight-through `z + (q - z).detach()`, a target
`(h @ w).detach()`, a stop-gradient on an expression), have no module to look at. When the eager forward (the
same one) ran any torch function with grad off or .detach()ed a tensor that required grad, the model is exported
a second time (marked_trace) with every call under no_grad traced inside a scope level of its own
("oomguard_no_grad", which torch's tracer names the nodes after) and every such .detach() leaving a marker (two
Neg nodes in a scope level "oomguard_detach" between the value and what reads its detached alias). The markers
are dropped and the two exports' nodes paired by position (the same code traced twice gives the same op types in
the same order; where it does not, nothing is named). The first export's nodes whose twin carries the no_grad
level are no_grad; so are those that record nothing because every input requiring grad was read through a
marker; those that are recorded but whose results reach the graph's outputs only through a marker are detached
(their graph dies with the values: what they saved is freed). A value also read without .detach() names nothing.
It needs only torch (no compiled part of oomguard).
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple

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


class Forward(NamedTuple):
    """What one eager forward saw (eager_forward)."""
    modes: Dict[str, List[str]]  # qualified module name -> the mode of each of its calls, in call order
    ran_without_grad: bool  # some torch function ran with grad off
    detached: bool  # some tensor that required grad was .detach()ed


def eager_forward(model: Any, inputs: Tuple[Any, ...]) -> Forward:
    """One eager forward in training mode with grad enabled: each module call's mode (NO_GRAD, DETACHED or
    RECORDED), and whether any torch function ran with grad off or .detach()ed a tensor that required grad (then
    the second export looks for such code outside a module of its own; both False where torch has no
    TorchFunctionMode). The model's buffers (BatchNorm's running statistics) and the random number generators are
    as they were afterwards."""
    import torch
    try:
        from torch.overrides import TorchFunctionMode
    except ImportError:  # pragma: no cover (torch < 1.13)
        TorchFunctionMode = None

    names = {m: n for n, m in model.named_modules() if n}
    calls: Dict[str, List[Tuple[bool, List[Any]]]] = {}
    keep: List[Any] = []  # the calls' grad_fns, alive until the walk below
    seen = {"without_grad": False, "detached": False}

    def pre(module: Any, _args: Any) -> None:
        calls.setdefault(names[module], []).append((torch.is_grad_enabled(), []))

    def post(module: Any, _args: Any, output: Any) -> None:
        fns = [t.grad_fn for t in _tensors(output) if t.requires_grad and t.grad_fn is not None]
        calls[names[module]][-1][1].extend(fns)
        keep.extend(fns)

    watch: Any = contextlib.nullcontext()
    if TorchFunctionMode is not None:
        class Watch(TorchFunctionMode):
            def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                if not torch.is_grad_enabled():
                    seen["without_grad"] = True
                if func is torch.Tensor.detach and args and getattr(args[0], "requires_grad", False):
                    seen["detached"] = True
                return func(*args, **(kwargs or {}))
        watch = Watch()

    from .checkpoint import traced_checkpoints
    with inplace.hooked_training_forward(model, names, pre, post):
        with watch, traced_checkpoints(eager=True):  # a checkpointed function runs with grad, as recorded
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
    return Forward(modes, seen["without_grad"], seen["detached"])


def call_modes(model: Any, inputs: Tuple[Any, ...]) -> Dict[str, List[str]]:
    """Qualified module name -> the mode of each of its calls (NO_GRAD, DETACHED or RECORDED), in call
    order, from one eager forward (eager_forward)."""
    return eager_forward(model, inputs).modes


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
DETACH_SCOPE = "oomguard_detach"
_SCOPED = re.compile("/" + NO_GRAD_SCOPE + r"(?:_\d+)?/")
_MARKER = re.compile("/" + DETACH_SCOPE + r"(?:_\d+)?/")


@contextlib.contextmanager
def marked_trace() -> Iterator[None]:
    """While torch.onnx.export traces in the block (grad enabled as it begins): each torch function called with
    grad off is traced inside a scope level NO_GRAD_SCOPE, which torch names its nodes with ("/oomguard_no_grad/
    MatMul", "/enc/oomguard_no_grad_1/Relu"), and each .detach() of a tensor that requires grad, which exports as
    nothing, leaves a marker: two Neg nodes in a scope level DETACH_SCOPE ("/oomguard_detach/Neg",
    "/oomguard_detach/Neg_1") between the value and what reads the detached alias (the same values: -(-x))."""
    import torch
    from torch.overrides import TorchFunctionMode

    class Scope(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            state = torch._C._get_tracing_state()
            if state is None:
                return func(*args, **kwargs)
            if func is torch.Tensor.detach and args and getattr(args[0], "requires_grad", False):
                out = func(*args, **kwargs)
                state.push_scope("oomguard.Detach::" + DETACH_SCOPE)
                try:
                    return torch.neg(torch.neg(out))
                finally:
                    state.pop_scope()
            if torch.is_grad_enabled():
                return func(*args, **kwargs)
            state.push_scope("oomguard.NoGrad::" + NO_GRAD_SCOPE)
            try:
                return func(*args, **kwargs)
            finally:
                state.pop_scope()

    with torch.enable_grad(), Scope():
        yield


# Op types whose outputs never require grad (integer or boolean results, random draws), and single outputs so.
_NO_GRADIENT_OPS = frozenset((
    "Shape", "Size", "ArgMax", "ArgMin", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And",
    "Or", "Xor", "NonZero", "Range", "ConstantOfShape", "EyeLike", "IsNaN", "IsInf", "RandomUniform", "RandomNormal",
    "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli", "Constant"))
_NO_GRADIENT_OUTPUTS = frozenset((("TopK", 1), ("MaxPool", 1), ("Dropout", 1), ("BatchNormalization", 1),
                                  ("BatchNormalization", 2)))
_FLOAT_TYPES = frozenset((1, 10, 11, 16))  # FLOAT, FLOAT16, DOUBLE, BFLOAT16


def _recorded(nodes: List[Any], trained: set, alias: Dict[str, str], cut: bool, no_grad: List[bool]) -> List[bool]:
    """Per node of `nodes` (a graph's nodes in order, the markers left out): whether autograd records it, i.e. some
    input requires grad (never one of _NO_GRADIENT_OPS). The values in `trained` require it, the graph's inputs do
    not, a node's outputs do when it is recorded (not a Cast's to a type that is not floating point). A value read
    through a marker (`alias`: the marker's output -> the value .detach()ed) requires grad as that value does, or
    not at all when `cut`. Nodes with `no_grad` set record nothing."""
    grad = set(trained)
    out = []
    for k, n in enumerate(nodes):
        recorded = not no_grad[k] and n.op_type not in _NO_GRADIENT_OPS and any(
            (v not in alias and v in grad) or (v in alias and not cut and alias[v] in grad) for v in n.input)
        out.append(recorded)
        if not recorded:
            continue
        if n.op_type == "Cast" and not any(a.name == "to" and a.i in _FLOAT_TYPES for a in n.attribute):
            continue
        grad.update(v for i, v in enumerate(n.output) if (n.op_type, i) not in _NO_GRADIENT_OUTPUTS)
    return out


def _reach_outputs(nodes: List[Any], outputs: Iterable[str], alias: Dict[str, str], through: bool) -> List[bool]:
    """Per node: whether the graph's `outputs` read what it makes, through .detach() markers (`alias`) when
    `through`, else only along other edges."""
    made = {v: k for k, n in enumerate(nodes) for v in n.output}
    reach = [False] * len(nodes)

    def values(vs: Iterable[str]) -> Iterator[str]:
        for v in vs:
            if v in alias:
                if through:
                    yield alias[v]
            else:
                yield v
    stack = [made[v] for v in values(outputs) if v in made]
    while stack:
        k = stack.pop()
        if reach[k]:
            continue
        reach[k] = True
        stack.extend(made[v] for v in values(nodes[k].input) if v in made)
    return reach


def scoped_node_modes(plain: Any, scoped: Any, untrained: Iterable[str] = ()) -> Optional[Dict[str, str]]:
    """`plain`'s node names (an export's GraphProto) -> NO_GRAD or DETACHED, from `scoped` (the same model exported
    under marked_trace), the two paired by position once the markers are dropped; None when they do not then have
    the same op types in the same order. NO_GRAD: traced inside NO_GRAD_SCOPE, or recorded by nothing because every
    input that requires grad was read through a .detach() (autograd records nothing of them either). DETACHED:
    recorded, but what it makes reaches the graph's outputs only through a .detach() (a straight-through
    `z + (q - z).detach()`'s Sub, a target `(h @ w).detach()`'s MatMul); its graph dies with the values. Float
    initializers require grad unless named in `untrained` (buffers, frozen parameters)."""
    alias: Dict[str, str] = {}
    kept = []
    for n in scoped.node:
        if _MARKER.search(n.name) and len(n.input) == 1 and len(n.output) == 1:
            alias[n.output[0]] = alias.get(n.input[0], n.input[0])
        else:
            kept.append(n)
    a = list(plain.node)
    if [n.op_type for n in a] != [n.op_type for n in kept]:
        return None
    untrained = set(untrained)
    trained = {t.name for t in scoped.initializer if t.data_type in _FLOAT_TYPES and t.name not in untrained}
    no_grad = [bool(_SCOPED.search(n.name)) for n in kept]
    full = _recorded(kept, trained, alias, False, no_grad)
    cut = _recorded(kept, trained, alias, True, no_grad)
    outputs = [o.name for o in scoped.output]
    live = _reach_outputs(kept, outputs, alias, False)
    through = _reach_outputs(kept, outputs, alias, True)
    out: Dict[str, str] = {}
    for k, (x, y) in enumerate(zip(a, kept)):
        if x.op_type == "Constant":
            continue
        if no_grad[k] or (full[k] and not cut[k]):
            out[x.name] = NO_GRAD
        elif full[k] and through[k] and not live[k]:
            out[x.name] = DETACHED
    return out


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
    model again as onnx_bytes was exported: it is called under marked_trace when some torch function ran with
    grad off or some tensor that required grad was .detach()ed, to find such code outside a module of its own
    (scoped_node_modes). A model whose forward fails here gets neither entry, with a warning: the planner then
    assumes every node recorded. Needs the onnx package."""
    import warnings
    import onnx
    proto = onnx.load_from_string(onnx_bytes)
    forward = None
    for attempt in (_first_samples(inputs), inputs):
        try:
            forward = eager_forward(model, attempt)
            break
        except Exception as e:  # noqa: BLE001 (the export stands; only the hint is missing)
            error = e
    if forward is None:
        warnings.warn("oomguard.export: could not run the model's forward to find code under torch.no_grad() or "
                      ".detach()ed (%s: %s); planned as recorded" % (type(error).__name__, error))
        return onnx_bytes
    found = node_modes(model, [n.name for n in proto.graph.node if n.op_type != "Constant"], forward.modes)
    if reexport is not None and (forward.ran_without_grad or forward.detached):
        reason = "its nodes differ"
        untrained = set()
        for e in proto.metadata_props:
            if e.key in ("oomguard.buffers", "oomguard.frozen"):
                untrained.update(json.loads(e.value))
        try:
            with marked_trace():
                scoped = onnx.load_from_string(reexport())
            names = scoped_node_modes(proto.graph, scoped.graph, untrained)
        except Exception as e:  # noqa: BLE001 (the module-level finding stands)
            names, reason = None, "%s: %s" % (type(e).__name__, e)
        if names is None:
            warnings.warn("oomguard.export: could not export the model a second time to find code run under "
                          "torch.no_grad() or .detach()ed outside a module of its own (%s); that code is planned as "
                          "recorded" % reason)
        for name, mode in (names or {}).items():
            if name not in found or (mode == NO_GRAD and found[name] != DETACHED):
                found[name] = mode
    for key, mode in ((NO_GRAD_METADATA_KEY, NO_GRAD), (DETACHED_METADATA_KEY, DETACHED)):
        inplace.set_metadata(proto, key, json.dumps(sorted(n for n, m in found.items() if m == mode)))
    return proto.SerializeToString()
