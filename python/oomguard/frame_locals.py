"""Which exported ONNX values a module's forward still binds to a name when it returns.

Python keeps a tensor bound to a name in a forward (`s = q @ k.T; a = s.softmax(-1)`) until that forward returns
(or rebinds the name); a temporary dies after its last read. torch.onnx.export records neither, so the planner
frees every value after its last read and lists what a frame may hold as the risk
`locals_held_until_forward_returns`. It reads the values that were held from the model's metadata_props key
"oomguard.locals" (a JSON list of ONNX value names) when present, and holds each until its frame returns. This
module finds those names and writes that entry. It needs only torch (no compiled part of oomguard).

One eager forward (inplace.recorded_calls: training mode, grad enabled; buffers and random number generators as
they were afterwards) records, for each torch function run directly in a module call, the ONNX op types it
exports to (_EXPORTS, opset 14 on torch 1.13) and the tensors it returned; a profiler reads each module's
`forward` frame as it returns: the tensors its names (and the lists, tuples and dicts they hold) still bind,
less the returned value, the call's own arguments (and their bases), parameters and buffers, were held until
then; a view (`q = x.view(b, t, h, -1).transpose(1, 2)`) holds its base (torch's `_base`, the tensor that owns
the storage), and that is what is named: the recorded call's result, or the recorded call whose result views all
of it (F.linear on a 3-D input returns a view of its 2-D product). Each such tensor made by a recorded call is the k-th data node of that call's op type in the call's scope when the call
was the k-th recorded call exporting to that type there (inplace.matched_scopes finds the scopes); a scope whose
eager calls and exported data nodes of that type differ in number names none of them. Data nodes are those that
read the inputs or the floating-point initializers, directly or through other data nodes (not the shape
arithmetic torch traces for `x.view(b, t, -1)` or `chunk`), Shape nodes left out.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from . import inplace

METADATA_KEY = "oomguard.locals"

# torch function name (func.__name__ under a TorchFunctionMode) -> the data nodes' op types its call exports to,
# in order, the result being the last one's first output (checked on torch 1.13, opset 14).
_EXPORTS: Dict[str, Tuple[str, ...]] = {
    "matmul": ("MatMul",), "bmm": ("MatMul",), "einsum": ("Einsum",),
    "softmax": ("Softmax",), "log_softmax": ("LogSoftmax",),
    "add": ("Add",), "add_": ("Add",), "sub": ("Sub",), "sub_": ("Sub",), "__rsub__": ("Sub",), "rsub": ("Sub",),
    "mul": ("Mul",), "mul_": ("Mul",), "div": ("Div",), "div_": ("Div",), "true_divide": ("Div",),
    "__rdiv__": ("Reciprocal", "Mul"),  # 1.0 / x
    "exp": ("Exp",), "log": ("Log",), "relu": ("Relu",), "sigmoid": ("Sigmoid",), "tanh": ("Tanh",),
    "elu": ("Elu",), "sqrt": ("Sqrt",), "abs": ("Abs",), "neg": ("Neg",), "pow": ("Pow",),
    "cat": ("Concat",), "concat": ("Concat",), "reshape": ("Reshape",), "view": ("Reshape",),
    "permute": ("Transpose",), "transpose": ("Transpose",), "t": ("Transpose",), "T": ("Transpose",),
    "sum": ("ReduceSum",), "mean": ("ReduceMean",),
    "conv1d": ("Conv",), "conv2d": ("Conv",), "conv3d": ("Conv",), "embedding": ("Gather",),
    "clamp": ("Clip",), "clip": ("Clip",), "rand_like": ("RandomUniformLike",), "randn_like": ("RandomNormalLike",),
    "dropout": ("Dropout",),
}


def classify(func: Any, args: Any, kwargs: Dict[str, Any]) -> Optional[Tuple[str, ...]]:
    """The data nodes' op types an eager call exports to (_EXPORTS), or None for a call left out."""
    import torch
    name = getattr(func, "__name__", "")
    if name == "__get__":  # a property: x.T
        name = getattr(getattr(func, "__self__", None), "__name__", "")
    if name == "linear":  # addmm for a 2-D input with a bias, else transposed weight, MatMul (, Add)
        x = args[0] if args else kwargs.get("input")
        bias = args[2] if len(args) > 2 else kwargs.get("bias")
        if not isinstance(x, torch.Tensor):
            return None
        if x.dim() == 2 and bias is not None:
            return ("Gemm",)
        return ("Transpose", "MatMul") + (("Add",) if bias is not None else ())
    types = _EXPORTS.get(name)
    if types is None:
        return None
    if name in ("add", "add_", "sub", "sub_") and kwargs.get("alpha", 1) != 1:
        return None  # alpha multiplies first
    if name in ("div", "div_") and kwargs.get("rounding_mode") is not None:
        return None
    if name in ("sum", "mean", "softmax", "log_softmax") and kwargs.get("dtype") is not None:
        return None  # a Cast first
    if name in ("clamp", "clip") and any(isinstance(a, torch.Tensor) for a in list(args[1:]) + list(kwargs.values())):
        return None  # tensor bounds export as Max / Min
    return types


class _Held:
    """A module call's frame: the ids of its arguments, then the tensors its names bound when it returned."""

    __slots__ = ("arguments", "tensors")

    def __init__(self, arguments: Set[int]) -> None:
        self.arguments = arguments
        self.tensors: List[Any] = []


def _tensors(value: Any, depth: int = 0) -> Iterator[Any]:
    import torch
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 4 and isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v, depth + 1)
    elif depth < 4 and isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v, depth + 1)


@contextlib.contextmanager
def _frames(stack: List[Any], held: Dict[int, _Held]) -> Iterator[None]:
    """While in the block: each module call's forward frame (the first frame named "forward" whose `self` is a
    module, entered while that call is the innermost) read as it returns into held[id(call)]."""
    import torch
    frames: Dict[int, Tuple[Any, _Held]] = {}  # id(frame) -> (the call, its _Held)

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            if frame.f_code.co_name != "forward" or not stack or id(stack[-1]) in held:
                return
            f_locals = frame.f_locals
            if not isinstance(f_locals.get("self"), torch.nn.Module):
                return
            h = _Held({id(s) for v in f_locals.values() for t in _tensors(v) for s in (t, t._base) if s is not None})
            held[id(stack[-1])] = h
            frames[id(frame)] = (stack[-1], h)
        elif event == "return" and id(frame) in frames:
            _, h = frames.pop(id(frame))
            returned = {id(s) for t in _tensors(arg) for s in (t, t._base) if s is not None}
            seen: Set[int] = set()
            for name, v in frame.f_locals.items():
                if name == "self":
                    continue
                for t in _tensors(v):
                    s = t if t._base is None else t._base  # a view holds its base's storage
                    if id(t) in returned or id(s) in returned or id(s) in h.arguments or id(s) in seen or \
                            isinstance(s, torch.nn.Parameter):
                        continue
                    seen.add(id(s))
                    h.tensors.append(s)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)


def held_calls(model: Any, inputs: Tuple[Any, ...]) -> Optional[Tuple[List[Any], Dict[int, Any]]]:
    """One eager forward of `inputs`: (the module calls, inplace.recorded_calls, each with records (op types,
    result) of the calls _EXPORTS lists; id(tensor) -> (the call that made it, index of its record) for each
    tensor a forward frame held when it returned). None when the forward cannot be recorded."""
    held: Dict[int, _Held] = {}
    made: Dict[int, Tuple[Any, int]] = {}  # id(result) -> (call, record index); results kept alive in records

    def record(call: Any, func: Any, args: Any, kwargs: Dict[str, Any], result: Any) -> None:
        import torch
        types = classify(func, args, kwargs)
        if types is None or not isinstance(result, torch.Tensor):
            return
        call.records.append((types, result))
        made[id(result)] = (call, len(call.records) - 1)
        base = result._base
        if base is not None and base.numel() == result.numel():  # a whole view (linear's 3-D result of a 2-D mm)
            made[id(base)] = made[id(result)]

    calls = inplace.recorded_calls(model, inputs, record, lambda stack: _frames(stack, held))
    if calls is None:
        return None
    buffers = {id(b) for b in model.buffers()}
    found: Dict[int, Tuple[Any, int]] = {}
    for h in held.values():
        for t in h.tensors:
            if id(t) in made and id(t) not in buffers:
                found[id(t)] = made[id(t)]
    return calls, found


def data_nodes(graph: Any) -> List[Tuple[str, str, str]]:
    """(name, op type, first output) of the graph's data nodes: those reading the inputs or floating-point
    initializers, directly or through data nodes; Shape nodes are not."""
    import onnx
    floating = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE, onnx.TensorProto.BFLOAT16}
    data = {i.name for i in graph.input} | {t.name for t in graph.initializer if t.data_type in floating}
    data -= {t.name for t in graph.initializer if t.data_type not in floating}
    out = []
    for n in graph.node:
        if n.op_type != "Shape" and any(i in data for i in n.input):
            data.update(n.output)
            out.append((n.name, n.op_type, n.output[0] if n.output else ""))
    return out


def held_value_names(calls: List[Any], found: Dict[int, Tuple[Any, int]], graph: Any) -> List[str]:
    """The ONNX values (first outputs of data nodes) of the held tensors `found` (held_calls), where the call
    that made each is matched to its scope and that scope's data nodes of its op type are as many as the eager
    calls exporting to it."""
    nodes = [(n.name, n.op_type) for n in graph.node]
    data = data_nodes(graph)
    output = {name: first for name, _, first in data}
    scoped = inplace._scoped_nodes((name, op) for name, op, _ in data)
    scope_of = {id(call): scope for call, scope in inplace.matched_scopes(calls, nodes)}
    out = []
    for call, index in found.values():
        scope = scope_of.get(id(call))
        if scope is None:
            continue
        types = call.records[index][0]
        kind = types[-1]
        eager = sum(ts.count(kind) for ts, _ in call.records)
        exported = scoped.get(scope, {}).get(kind, [])
        if eager != len(exported):
            continue  # counts differ: which node is which is not known
        k = sum(ts.count(kind) for ts, _ in call.records[:index + 1]) - 1
        out.append(output[exported[k][1]])
    return sorted(set(out))


def add_locals_metadata(onnx_bytes: bytes, model: Any, inputs: Tuple[Any, ...]) -> bytes:
    """The exported model with metadata_props "oomguard.locals" listing the values module forwards held in names
    until they returned (an empty list: none found), from one eager forward of the example `inputs`' first two
    samples (all of them if that fails). Unchanged when the forward cannot be recorded. Needs the onnx package."""
    import onnx
    from .grad_mode import _first_samples
    found = held_calls(model, _first_samples(inputs))
    if found is None:
        found = held_calls(model, inputs)
    if found is None:
        return onnx_bytes
    proto = onnx.load_from_string(onnx_bytes)
    inplace.set_metadata(proto, METADATA_KEY, json.dumps(held_value_names(found[0], found[1], proto.graph)))
    return proto.SerializeToString()
