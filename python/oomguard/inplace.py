"""Which exported ONNX nodes ran in place: those of modules with inplace=True (nn.ReLU(inplace=True), ...)
and of in-place activation calls in forward (F.relu(x, inplace=True), x.relu_(), ...).

torch.onnx.export writes the same graph for an activation with and without inplace=True, so the
planner cannot see it; it reads the answer from the model's metadata_props key "oomguard.inplace"
(a JSON list of node names) when present. This module finds those names and writes that entry.
It needs only torch (no compiled part of oomguard), so tools can load it on its own.

torch 1.13 names a node after the modules that were running when it was traced:
"/body/body.9/inner/inner.2/f/LeakyRelu" is a LeakyRelu traced inside module body.9.inner.2.f, each
level named by its attribute name (numeric ones with their parent's: "body.9"), and a module
called a second time gets "_1" on its level ("/layer1/layer1.0/relu_1/Relu"). The levels are the
modules being called, not their owners: a ModuleList member that forward loops over has no level for the
list ("/steps.0/nn/nn.1/Relu"), and the suffix counts calls of the whole path ("/inner/lin_1/Gemm" is the
Linear's call inside the second call of inner, whose own nodes are "/inner_1/...").

In-place calls written in a forward (F.relu(x, inplace=True), x.relu_(), F.leaky_relu_(x), x.clamp_(min=0),
torch.sigmoid_(x), ...) have no module of their own: given the example inputs, one eager forward (training
mode, grad enabled; buffers and random number generators as they were afterwards) records each activation
call with the module call it ran in (functional_calls), and each in-place one names the k-th node of its ONNX
op type among the nodes traced directly in that call's scope when it was the k-th call exporting to that op
type there (functional_node_names). A scope whose counts differ, or whose calls cannot be told apart, names
nothing: a node is named only where the eager calls and the exported nodes agree.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

METADATA_KEY = "oomguard.inplace"


def _unqualified(name: str) -> str:
    # torch.onnx.utils._setup_trace_module_map's _unqualified_variable_name
    atoms = name.split(".")
    for i in range(len(atoms) - 1, -1, -1):
        if not atoms[i].isnumeric():
            return ".".join(atoms[i:])
    return name


def scope_of(qualified: str) -> List[str]:
    """The scope levels of the module called `qualified` in model.named_modules()."""
    atoms = qualified.split(".")
    return [_unqualified(".".join(atoms[:k])) for k in range(1, len(atoms) + 1)]


def levels_match(levels: List[str], scope: List[str], known: set) -> bool:
    """A node's scope levels (as many as `scope`'s) are the module's: each level exactly, or with the "_N"
    suffix of a repeated call where no module (`known`: the scopes of model.named_modules()) has that
    name exactly."""
    return all(a == b or (re.fullmatch(re.escape(b) + r"_\d+", a) and tuple(levels[: i + 1]) not in known)
               for i, (a, b) in enumerate(zip(levels, scope)))


def inplace_modules(model) -> List[str]:
    """Qualified names of the submodules with inplace=True."""
    return [n for n, m in model.named_modules() if n and getattr(m, "inplace", False) is True]


def inplace_node_names(model, node_names: Iterable[str]) -> List[str]:
    """The names among node_names (an exported graph's nodes, Constants left out by the caller or
    not) that were traced inside a module with inplace=True. A level matches exactly, or with the
    "_N" suffix of a repeated call when no module has that name exactly."""
    wanted = [scope_of(q) for q in inplace_modules(model)]
    if not wanted:
        return []
    known = {tuple(scope_of(n)) for n, _ in model.named_modules() if n}
    out = []
    for name in node_names:
        levels = [x for x in name.split("/")[1:-1]]
        if not levels:
            continue
        for scope in wanted:
            if len(scope) == len(levels) and levels_match(levels, scope, known):
                out.append(name)
                break
    return out


# Eager activation calls -> the ONNX op types torch 1.13 exports them to (opset 14) that are counted per scope.
# A function's in-place form is its name with "_" (torch.relu_, Tensor.relu_, F.leaky_relu_, F.hardtanh_) or
# its F function with inplace=True. A call the table leaves out that exports to a counted type makes its
# scope's counts differ, and that scope names nothing (F.normalize, whose norm is clamped, is listed for that).
_EXPORTS: Dict[str, Tuple[str, ...]] = {
    "relu": ("Relu",), "relu6": ("Relu", "Clip"),  # F.relu6: Relu, Cast, Cast, Clip (nn.ReLU6: Clip)
    "threshold": ("Relu",),  # only threshold 0, value 0 exports at all
    "leaky_relu": ("LeakyRelu",), "rrelu": ("LeakyRelu",),  # rrelu: LeakyRelu unless training=True (PRelu)
    "sigmoid": ("Sigmoid",), "silu": ("Sigmoid",), "glu": ("Sigmoid",), "logsigmoid": ("Sigmoid",),
    "hardsigmoid": ("HardSigmoid",), "hardswish": ("HardSwish",),
    "hardtanh": ("Clip",), "clamp": ("Clip",), "clip": ("Clip",), "clamp_min": ("Clip",), "clamp_max": ("Clip",),
    "normalize": ("Clip",),
    "elu": ("Elu",), "selu": ("Selu",), "celu": ("Celu",),
    "softplus": ("Softplus",), "mish": ("Softplus", "Tanh"), "tanh": ("Tanh",), "gelu": ("Tanh",),
}
# The op types whose in-place nodes are named (the others are only counted).
_NAMED_TYPES = ("Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Clip", "Elu", "Selu", "Celu", "Softplus")


def classify_call(func: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Optional[Tuple[Tuple[str, ...], bool]]:
    """(the counted ONNX op types an eager call exports to, whether it ran in place), or None for a call that
    exports none of them."""
    import torch
    name = getattr(func, "__name__", "")
    inplace = name.endswith("_") and not name.startswith("_")
    base = name[:-1] if inplace else name
    types = _EXPORTS.get(base)
    if types is None:
        return None
    bound: Dict[str, Any] = {}
    if func is getattr(torch.nn.functional, name, None):
        import inspect
        try:
            bound = dict(inspect.signature(func).bind(*args, **kwargs).arguments)
        except (TypeError, ValueError):  # a C function without a Python signature
            bound = {}
        inplace = inplace or bound.get("inplace") is True
    if base in ("clamp", "clip", "clamp_min", "clamp_max"):
        if any(isinstance(a, torch.Tensor) for a in list(args[1:]) + list(kwargs.values())):
            return None  # tensor bounds export as Max / Min
    elif base == "rrelu":
        training = bound.get("training", args[3] if len(args) > 3 else kwargs.get("training", False))
        if training:
            return None  # RandomUniformLike, PRelu
    elif base == "gelu":
        if kwargs.get("approximate", args[1] if len(args) > 1 else "none") != "tanh":
            return None  # Erf
    return types, inplace


class _Call:
    """One module call of the eager forward: its scope path and the activation calls run directly in it."""

    __slots__ = ("path", "records")

    def __init__(self, path: Tuple[str, ...]) -> None:
        self.path = path
        self.records: List[Tuple[Tuple[str, ...], bool]] = []


@contextlib.contextmanager
def hooked_training_forward(model: Any, modules: Iterable[Any], pre: Any, post: Any) -> Iterator[None]:
    """For one eager forward in the block: `pre` / `post` as forward pre- and post-hooks on `modules`, the model
    in training mode, grad enabled, the random number generators forked. Afterwards the hooks are gone and the
    model's training flag and buffers (BatchNorm's running statistics) are as they were."""
    import torch
    handles = []
    saved_buffers = {k: v.detach().clone() for k, v in model.named_buffers()}
    was_training = model.training
    try:
        for m in modules:
            handles.append(m.register_forward_pre_hook(pre))
            handles.append(m.register_forward_hook(post))
        with torch.random.fork_rng(devices=[]), torch.enable_grad():
            model.train()
            yield
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
        with torch.no_grad():
            for k, v in model.named_buffers():
                if k in saved_buffers and v.shape == saved_buffers[k].shape:
                    v.copy_(saved_buffers[k])


def recorded_calls(model: Any, inputs: Tuple[Any, ...], record: Any, around: Any = None) -> Optional[List[_Call]]:
    """The module calls of one eager forward of `inputs` (training mode, grad enabled), in call order, each with
    its scope path (the levels torch 1.13 names its nodes with, the root's being ()) and the records that
    `record(call, func, args, kwargs, result)` appended to its `records` for each torch function run directly
    in it. `around(stack)`, when given, is a context manager entered around the forward, `stack` the module
    calls running (innermost last). The model's buffers (BatchNorm's running statistics) and the random
    number generators are as they were afterwards. None when the forward cannot be recorded (torch without
    TorchFunctionMode, or the forward raised under it)."""
    try:
        from torch.overrides import TorchFunctionMode
    except ImportError:
        return None

    qualified = {m: n for n, m in model.named_modules()}
    calls: List[_Call] = []
    stack: List[_Call] = []

    def pre(module: Any, _args: Any) -> None:
        q = qualified[module]
        path = (stack[-1].path if stack else ()) + ((_unqualified(q),) if q else ())
        calls.append(_Call(path))
        stack.append(calls[-1])

    def post(module: Any, _args: Any, _output: Any) -> None:
        if stack:
            stack.pop()

    class Record(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            result = func(*args, **kwargs)
            if stack:
                record(stack[-1], func, args, kwargs, result)
            return result

    try:
        with hooked_training_forward(model, qualified, pre, post), \
                (around(stack) if around is not None else contextlib.nullcontext()), Record():
            model(*inputs)
    except Exception:  # noqa: BLE001 (the caller names nothing from it)
        return None
    return calls


def functional_calls(model: Any, inputs: Tuple[Any, ...]) -> Optional[List[_Call]]:
    """The module calls of one eager forward of `inputs` (recorded_calls), each with the activation calls made
    directly in it (classify_call). None when the forward cannot be recorded."""
    def record(call: _Call, func: Any, args: Any, kwargs: Dict[str, Any], _result: Any) -> None:
        found = classify_call(func, args, kwargs)
        if found is not None:
            call.records.append(found)

    return recorded_calls(model, inputs, record)


def _scoped_nodes(nodes: Iterable[Tuple[str, str]]) -> Dict[str, Dict[str, List[Tuple[int, str]]]]:
    """Scope instance ("inner/lin_1", "" for the root) -> op type -> [(ordinal, node name)] in the order torch
    numbered them ("Relu", "Relu_1", ...), from (node name, op type) pairs, Constants included."""
    out: Dict[str, Dict[str, List[Tuple[int, str]]]] = {}
    for name, op in nodes:
        if not name.startswith("/"):
            continue
        scope, _, leaf = name[1:].rpartition("/")
        m = re.fullmatch(re.escape(op) + r"(?:_(\d+))?", leaf)
        if not m:
            continue
        out.setdefault(scope, {}).setdefault(op, []).append((int(m.group(1) or 0), name))
    for by_op in out.values():
        for seq in by_op.values():
            seq.sort()
    return out


def matched_scopes(calls: List[_Call], nodes: Iterable[Tuple[str, str]]) -> List[Tuple[_Call, str]]:
    """(module call, the scope instance its nodes are named with: "inner/lin_1", "" for the root) for the calls
    of `calls` (recorded_calls) that can be told apart, given the exported graph's (name, op type) pairs,
    Constants included.

    torch 1.13 names a call's scope by its levels joined with "/", and a later call with the same levels
    that traced nodes of its own gets "_1", "_2", ... ("inner/lin_1"). The calls with the same levels are
    matched to those scopes in order when as many have nodes as were made, or when the calls with records are
    exactly as many; otherwise (or when a suffixed name is also some module's own) they are left out."""
    scoped = _scoped_nodes(nodes)
    by_path: Dict[str, List[_Call]] = {}
    for c in calls:
        by_path.setdefault("/".join(c.path), []).append(c)
    scope_names = {base: [base + ("_%d" % j if j else "") for j in range(len(group) + 1)]
                   for base, group in by_path.items()}
    mixed = set()  # "relu_1" is a module's own path as well as relu's second call: neither is named
    for base, names in scope_names.items():
        for n in names[1:]:
            if n in by_path:
                mixed.update((base, n))
    out: List[Tuple[_Call, str]] = []
    for base, group in by_path.items():
        if base in mixed:
            continue
        names = scope_names[base]
        present = [j for j, n in enumerate(names) if n in scoped]
        if present != list(range(len(present))) or len(present) > len(group):
            continue
        if len(present) == len(group):
            out.extend(zip(group, names))
        else:
            ran = [c for c in group if c.records]  # a recorded call traces a node
            if len(ran) == len(present):
                out.extend(zip(ran, names))
    return out


def functional_node_names(calls: List[_Call], nodes: Iterable[Tuple[str, str]]) -> List[str]:
    """The nodes (from (name, op type) pairs of an exported graph, Constants included) of the in-place
    activation calls in `calls` (functional_calls), in the scopes matched_scopes finds. Within a scope, for
    each op type an in-place call exports to, the eager calls exporting to it and the scope's nodes of that
    type must be equally many, or the scope names nothing."""
    nodes = list(nodes)
    scoped = _scoped_nodes(nodes)
    out: List[str] = []
    for call, scope in matched_scopes(calls, nodes):
        wanted = {t for types, inplace in call.records if inplace for t in types if t in _NAMED_TYPES}
        if not wanted:
            continue
        exported = scoped.get(scope, {})
        eager: Dict[str, List[bool]] = {}
        for types, inplace in call.records:
            for t in types:
                eager.setdefault(t, []).append(inplace)
        if any(len(eager[t]) != len(exported.get(t, [])) for t in wanted):
            continue  # counts differ: which node is which is not known
        for t in sorted(wanted):
            out.extend(name for (_, name), inplace in zip(exported[t], eager[t]) if inplace)
    return sorted(set(out))


def set_metadata(proto: Any, key: str, value: str) -> None:
    """proto's metadata_props entry `key` set to `value` (the one entry of that key)."""
    for entry in list(proto.metadata_props):
        if entry.key == key:
            proto.metadata_props.remove(entry)
    entry = proto.metadata_props.add()
    entry.key, entry.value = key, value


def hint_value(names: Iterable[str]) -> str:
    """The metadata value: a JSON list of node names."""
    return json.dumps(sorted(set(names)))


def add_inplace_metadata(onnx_bytes: bytes, model, inputs: Optional[Tuple[Any, ...]] = None) -> bytes:
    """The exported model with metadata_props "oomguard.inplace" listing its in-place nodes (an
    empty list says nothing ran in place): those of modules with inplace=True and, given the example
    `inputs`, those of in-place activation calls run in forward (one eager forward finds them:
    functional_calls, on the inputs' first two samples, or all of them if that fails). Needs the onnx
    package."""
    import onnx
    proto = onnx.load_from_string(onnx_bytes)
    names = inplace_node_names(model, [n.name for n in proto.graph.node if n.op_type != "Constant"])
    calls = None
    if inputs is not None:
        from .grad_mode import _first_samples
        calls = functional_calls(model, _first_samples(inputs))
        if calls is None:
            calls = functional_calls(model, inputs)
    if calls:
        names += functional_node_names(calls, [(n.name, n.op_type) for n in proto.graph.node])
    set_metadata(proto, METADATA_KEY, hint_value(names))
    return proto.SerializeToString()
