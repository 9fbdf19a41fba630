"""Which exported ONNX nodes come from modules with inplace=True (nn.ReLU(inplace=True), ...).

torch.onnx.export writes the same graph for an activation with and without inplace=True, so the
planner cannot see it; it reads the answer from the model's metadata_props key "oomguard.inplace"
(a JSON list of node names) when present. This module finds those names and writes that entry.
It needs only torch (no compiled part of oomguard), so tools can load it on its own.

torch 1.13 names a node after the modules that were running when it was traced:
"/body/body.9/inner/inner.2/f/LeakyRelu" is a LeakyRelu traced inside module body.9.inner.2.f, each
level named by its attribute name (numeric ones with their parent's: "body.9"), and a module
called a second time gets "_1" on its level ("/layer1/layer1.0/relu_1/Relu"). In-place calls
outside a module (F.relu(x, inplace=True), x.relu_()) have no module to look at and are not found.
"""

from __future__ import annotations

import json
import re
from typing import Iterable, List

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


def hint_value(names: Iterable[str]) -> str:
    """The metadata value: a JSON list of node names."""
    return json.dumps(sorted(set(names)))


def add_inplace_metadata(onnx_bytes: bytes, model) -> bytes:
    """The exported model with metadata_props "oomguard.inplace" listing its in-place nodes (an
    empty list says nothing ran in place). Needs the onnx package."""
    import onnx
    proto = onnx.load_from_string(onnx_bytes)
    names = inplace_node_names(model, [n.name for n in proto.graph.node if n.op_type != "Constant"])
    for entry in list(proto.metadata_props):
        if entry.key == METADATA_KEY:
            proto.metadata_props.remove(entry)
    entry = proto.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, hint_value(names)
    return proto.SerializeToString()
