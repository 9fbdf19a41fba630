"""The metadata oomguard.export writes (python/oomguard: inplace.py, _export.py, grad_mode.py), added to an ONNX file
that torch.onnx.export wrote, for tools that measure what a user of oomguard.export would get. Uses the package's
pure-Python files alone (no built extension): they are loaded as the package "oomguard_hints"."""
from __future__ import annotations

import importlib
import os
import sys
import types
from typing import Any, Callable, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def package_module(name: str) -> Any:
    """python/oomguard/NAME.py, imported as part of the package "oomguard_hints" (relative imports work)."""
    if "oomguard_hints" not in sys.modules:
        pkg = types.ModuleType("oomguard_hints")
        pkg.__path__ = [os.path.join(ROOT, "python", "oomguard")]
        sys.modules["oomguard_hints"] = pkg
    return importlib.import_module("oomguard_hints." + name)


def example_inputs(inputs: Sequence[Tuple[str, Sequence[int], str, int]], batch: int = 2) -> Tuple[Any, ...]:
    """A batch of `batch` for inputs given as (name, per-sample shape, dtype name, high for integers)."""
    import torch
    torch.manual_seed(0)
    return tuple(torch.randn(batch, *shape) if dtype.startswith("float")
                 else torch.randint(0, max(int(high), 1), (batch, *shape), dtype=getattr(torch, dtype))
                 for _, shape, dtype, high in inputs)


def zoo_reexport(module: Any, inputs: Sequence[Tuple[str, Sequence[int], str, int]]) -> Callable[[], bytes]:
    """A function that exports `module` as tools/export_zoo.py exported the stored file (a batch of 2 of `inputs`,
    given as (name, per-sample shape, dtype name, high)): what grad_mode needs to export it a second time."""
    import export_zoo
    return lambda: export_zoo.export_bytes(module, list(example_inputs(inputs)), [n for n, *_ in inputs], 14)


def add_export_hints(onnx_bytes: bytes, module: Any, inputs: Tuple[Any, ...],
                     reexport: Optional[Callable[[], bytes]] = None) -> bytes:
    """onnx_bytes with metadata_props "oomguard.inplace", "oomguard.buffers", "oomguard.frozen",
    "oomguard.no_grad", "oomguard.detached", "oomguard.locals" and (given `reexport`) "oomguard.checkpointed" /
    "oomguard.checkpointed_reentrant" as oomguard.export writes them (in-place
    activation calls in forward and the last three from eager forwards of `inputs`; `reexport`, exporting the
    module as onnx_bytes was exported, lets grad_mode find code under no_grad or .detach()ed outside a module of
    its own)."""
    inplace, export, grad_mode = package_module("inplace"), package_module("_export"), package_module("grad_mode")
    frame_locals, checkpoint = package_module("frame_locals"), package_module("checkpoint")
    data = onnx_bytes
    if reexport is not None:  # torch.utils.checkpoint calls traced as oomguard.export traces them
        first = reexport

        def reexport() -> bytes:
            with checkpoint.traced_checkpoints():
                return first()

        def scoped_reexport() -> tuple:
            with checkpoint.traced_checkpoints(scoped=True) as calls:
                return first(), calls.reentrant
        data = checkpoint.add_checkpoint_metadata(data, checkpoint.count_calls(module, inputs), scoped_reexport)
    data = inplace.add_inplace_metadata(data, module, inputs)
    data = export.add_frozen_metadata(export.add_buffers_metadata(data, module), module)
    return frame_locals.add_locals_metadata(grad_mode.add_grad_mode_metadata(data, module, inputs, reexport), module, inputs)
