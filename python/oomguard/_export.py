"""A live torch.nn.Module as the planner's model, and a torch.optim.Optimizer as its options.

The module is exported the way the planner expects (docs/python.md): training mode
(BatchNorm keeps batch statistics, Dropout its mask), no constant folding, a dynamic batch
axis on every input and output. The export goes to memory; when the onnx package is
present the weights are dropped from it (the planner needs their shapes only), and the
graph is handed to the planner through an anonymous in-memory file: nothing touches disk.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
import warnings
from typing import Any, Dict, Iterator, List, Optional, Tuple


def _is_module(model: Any) -> bool:
    try:
        import torch
    except ImportError:
        return False
    return isinstance(model, torch.nn.Module)


def _as_tuple(example_inputs: Any) -> Tuple[Any, ...]:
    if isinstance(example_inputs, tuple):
        return example_inputs
    if isinstance(example_inputs, list):
        return tuple(example_inputs)
    return (example_inputs,)


_SELU_ALPHA = 1.7580993408473766  # alpha_dropout's constant (ATen's Dropout.cpp)


def _random_mask_replacements(torch: Any) -> Dict[Tuple[Any, str], Any]:
    """(owner, attribute) -> an exportable equivalent of a random-mask op torch.onnx.export refuses in
    training mode. Each makes the tensors a real training step makes: a mask drawn as
    `rand_like(src) < keep` (RandomUniformLike, Less, Cast), scaled, and the input multiplied by it, so
    autograd keeps the mask (one element per sample for stochastic depth, per sample and channel for
    Dropout1d/2d/3d, per element for AlphaDropout) as it does in the step."""
    F = torch.nn.functional

    def draw(src: Any, keep: float) -> Any:
        return (torch.rand_like(src) < keep).to(src.dtype)

    def masked(x: Any, p: float, feature: bool, alpha: bool, inplace: bool) -> Any:
        if p == 1:
            return x.mul_(0) if inplace else x * 0
        src = x[(slice(None), slice(None)) + (slice(0, 1),) * (x.dim() - 2)] if feature else x
        keep = draw(src, 1 - p)
        if not alpha:
            noise = keep / (1 - p)
            return x.mul_(noise) if inplace else x * noise
        a = 1.0 / ((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p)) ** 0.5
        b = (keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
        return (x.mul_(keep * a) if inplace else x * (keep * a)) + b

    def dropout_like(original: Any, feature: bool, alpha: bool) -> Any:
        def replacement(input: Any, p: float = 0.5, training: bool = not alpha, inplace: bool = False) -> Any:
            if not torch.jit.is_tracing() and not torch.onnx.is_in_onnx_export():
                return original(input, p, training, inplace)
            if not training or p == 0:
                return input
            return masked(input, p, feature, alpha, inplace)
        return replacement

    bernoulli_original = torch.Tensor.bernoulli_

    def bernoulli_(self: Any, p: Any = 0.5, *, generator: Any = None) -> Any:
        if not torch.jit.is_tracing() and not torch.onnx.is_in_onnx_export():
            return bernoulli_original(self, p, generator=generator)
        return self.copy_(draw(self, p))  # in place, as the caller expects

    out = {(torch.Tensor, "bernoulli_"): bernoulli_}
    for name, feature, alpha in (("dropout1d", True, False), ("dropout2d", True, False),
                                 ("dropout3d", True, False), ("alpha_dropout", False, True),
                                 ("feature_alpha_dropout", True, True)):
        if hasattr(F, name):
            out[(F, name)] = dropout_like(getattr(F, name), feature, alpha)
    return out


@contextlib.contextmanager
def _exportable_random_masks() -> Iterator[None]:
    """While exporting: the random-mask ops torch.onnx.export refuses in training mode, as exportable
    equivalents (_random_mask_replacements). Stochastic depth (torchvision's EfficientNet, ConvNeXt,
    Swin; timm's drop_path) and DropBlock draw masks with `torch.empty(...).bernoulli_(p)` ("ONNX export
    of operator Bernoulli, out parameter is not supported"); nn.Dropout1d/2d/3d and nn.AlphaDropout
    call feature_dropout / alpha_dropout ("Unsupported: ONNX export of operator aten::feature_dropout,
    training mode"). Everything is restored when the export returns or fails."""
    import torch

    replacements = _random_mask_replacements(torch)
    originals = {key: getattr(*key) for key in replacements}
    try:
        for (owner, name), replacement in replacements.items():
            setattr(owner, name, replacement)
        yield
    finally:
        for (owner, name), original in originals.items():
            setattr(owner, name, original)


def export_onnx(model: Any, example_inputs: Any, input_names: Optional[List[str]] = None,
                opset_version: int = 14, scoped_checkpoints: bool = False,
                checkpoint_calls: Optional[List[Any]] = None) -> bytes:
    """The module as ONNX bytes, exported for training (with its weights); torch.utils.checkpoint calls traced
    as plain calls (inside a scope level each when scoped_checkpoints: python/oomguard/checkpoint.py), their
    counter appended to checkpoint_calls when given."""
    import torch

    inputs = _as_tuple(example_inputs)
    if not inputs or not all(isinstance(t, torch.Tensor) for t in inputs):
        from ._commands import Error
        raise Error("example_inputs must be a tensor or a tuple of tensors (one batch of the model's inputs)")
    if input_names is None:
        input_names = ["input"] if len(inputs) == 1 else ["input%d" % i for i in range(len(inputs))]
    dynamic_axes = {name: {0: "batch"} for name in input_names}
    extra = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        extra["dynamo"] = False  # the TorchScript exporter: it has training mode and dynamic_axes
    buf = io.BytesIO()
    was_training = model.training
    from .checkpoint import traced_checkpoints
    with warnings.catch_warnings(), _exportable_random_masks(), traced_checkpoints(scoped_checkpoints) as calls:
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(model, inputs, buf, opset_version=opset_version,
                              training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                              input_names=input_names, dynamic_axes=dynamic_axes, **extra)
            if checkpoint_calls is not None:
                checkpoint_calls.append(calls)
        finally:
            model.train(was_training)
    return buf.getvalue()


BUFFERS_METADATA_KEY = "oomguard.buffers"


def _with_name_list(onnx_bytes: bytes, key: str, names: Any) -> bytes:
    """The exported model with metadata_props `key` set to the JSON list of the sorted `names` (an iterable of
    tensor names) that are initializers of the model. Needs the onnx package."""
    import onnx
    proto = onnx.load_from_string(onnx_bytes)
    initializers = {t.name for t in proto.graph.initializer}
    from .inplace import set_metadata
    set_metadata(proto, key, json.dumps(sorted(n for n in names if n in initializers)))
    return proto.SerializeToString()


def add_buffers_metadata(onnx_bytes: bytes, model: Any) -> bytes:
    """The exported model with metadata_props "oomguard.buffers": the initializers that are the module's
    registered floating-point buffers (a weight mask, a rotary table), which ONNX stores like parameters but
    which get no gradient and no optimizer state. Needs the onnx package."""
    return _with_name_list(onnx_bytes, BUFFERS_METADATA_KEY,
                           (n for n, b in model.named_buffers() if b.is_floating_point()))


FROZEN_METADATA_KEY = "oomguard.frozen"


def add_frozen_metadata(onnx_bytes: bytes, model: Any) -> bytes:
    """The exported model with metadata_props "oomguard.frozen": the initializers that are the module's
    parameters with requires_grad=False (a frozen backbone, LoRA's base weights), which the planner gives
    no gradient and no optimizer state, like buffers. Needs the onnx package."""
    return _with_name_list(onnx_bytes, FROZEN_METADATA_KEY,
                           (n for n, p in model.named_parameters() if not p.requires_grad))


def export(model: Any, args: Any, path: Any, **kw: Any) -> Any:
    """torch.onnx.export for the planner: training mode, no constant folding, a dynamic batch axis
    on every input (unless dynamic_axes is given), metadata_props "oomguard.buffers" naming the
    initializers that are registered buffers, metadata_props "oomguard.frozen" naming the parameters
    with requires_grad=False, metadata_props "oomguard.inplace" naming the nodes traced inside modules
    with inplace=True and those of in-place activation calls in forward (F.relu(x, inplace=True),
    x.relu_(), ...: python/oomguard/inplace.py), and "oomguard.no_grad" / "oomguard.detached" naming
    the nodes of modules run under torch.no_grad() or whose result is .detach()ed (eager forwards of
    `args` find these and the in-place calls; code under no_grad or .detach()ed outside a module of its own is
    found by a second export: python/oomguard/grad_mode.py), "oomguard.checkpointed" listing the nodes of each
    torch.utils.checkpoint call (found by a second export; the export traces such calls as plain calls, so the
    reentrant form exports too: python/oomguard/checkpoint.py), and "oomguard.locals" naming
    the values a module's forward still bound to a name when it returned (python/oomguard/frame_locals.py),
    which ONNX does not record otherwise. `path` is
    a file name or a writable binary file object; keywords go to torch.onnx.export (training and
    do_constant_folding may not be changed). Returns the list of in-place node names."""
    import torch
    from ._commands import Error
    from . import checkpoint, frame_locals, grad_mode, inplace

    for key in ("training", "do_constant_folding"):
        if key in kw:
            raise Error("oomguard.export sets %s itself (the planner needs a training-mode export)" % key)
    inputs = _as_tuple(args)
    names = kw.pop("input_names", None)
    if names is None:
        names = ["input"] if len(inputs) == 1 else ["input%d" % i for i in range(len(inputs))]
    kw.setdefault("dynamic_axes", {name: {0: "batch"} for name in names})
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw.setdefault("dynamo", False)
    checkpoint_calls: List[Any] = [None]

    def export_once(scoped_checkpoints: bool = False) -> bytes:
        buf = io.BytesIO()
        was_training = model.training
        try:
            with _exportable_random_masks(), checkpoint.traced_checkpoints(scoped_checkpoints) as calls:
                torch.onnx.export(model, inputs, buf, training=torch.onnx.TrainingMode.TRAINING,
                                  do_constant_folding=False, input_names=names, **kw)
            checkpoint_calls[0] = calls
        finally:
            model.train(was_training)
        return buf.getvalue()

    graph = export_once()
    graph = checkpoint.add_checkpoint_metadata(
        graph, checkpoint_calls[0].count, lambda: (export_once(True), checkpoint_calls[0].reentrant))
    graph = inplace.add_inplace_metadata(graph, model, inputs)
    graph = add_frozen_metadata(add_buffers_metadata(graph, model), model)
    graph = grad_mode.add_grad_mode_metadata(graph, model, inputs, reexport=export_once)
    graph = frame_locals.add_locals_metadata(graph, model, inputs)
    if hasattr(path, "write"):
        path.write(graph)
    else:
        with open(os.fspath(path), "wb") as f:
            f.write(graph)
    import onnx
    proto = onnx.load_from_string(graph)
    return next(json.loads(e.value) for e in proto.metadata_props if e.key == inplace.METADATA_KEY)


def strip_weights(onnx_bytes: bytes) -> bytes:
    """The model with every initializer's bytes dropped (marked as external data that does
    not exist); unchanged when the onnx package is absent."""
    try:
        import onnx
    except ImportError:
        return onnx_bytes
    proto = onnx.load_from_string(onnx_bytes)
    for init in proto.graph.initializer:
        for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
            init.ClearField(field)
        del init.external_data[:]
        entry = init.external_data.add()
        entry.key, entry.value = "location", "weights-not-exported"
        init.data_location = onnx.TensorProto.EXTERNAL
    return proto.SerializeToString()


# torch.optim class -> the planner's optimizer (momentum decides between sgd and momentum).
_OPTIMIZERS = {"SGD": "sgd", "Adam": "adam", "AdamW": "adamw", "RMSprop": "rmsprop", "Adagrad": "adagrad"}


def optimizer_options(optimizer: Any) -> Dict[str, str]:
    """--optimizer and --optimizer-impl for a torch.optim.Optimizer instance."""
    from ._commands import Error

    name = type(optimizer).__name__
    if name not in _OPTIMIZERS:
        raise Error("optimizer %s has no counterpart in the planner (choose from sgd, momentum, adam, adamw, "
                    "rmsprop, adagrad and pass its name)" % name)
    groups = getattr(optimizer, "param_groups", None) or [{}]
    group = groups[0]
    planned = _OPTIMIZERS[name]
    if planned == "sgd" and group.get("momentum", 0):
        planned = "momentum"
    if name == "RMSprop" and (group.get("momentum", 0) or group.get("centered", False)):
        raise Error("RMSprop with momentum or centered=True keeps more state than the planner's rmsprop models")
    if name in ("Adam", "AdamW") and group.get("amsgrad", False):
        raise Error("%s(amsgrad=True) keeps a third state tensor that the planner's %s does not model"
                    % (name, planned))
    options = {"optimizer": planned}
    if group.get("fused"):
        options["optimizer_impl"] = "fused"
    elif group.get("foreach") is True:
        options["optimizer_impl"] = "foreach"
    elif group.get("foreach") is False:
        options["optimizer_impl"] = "loop"
    return options


@contextlib.contextmanager
def model_argument(model: Any, example_inputs: Any, options: Dict[str, Any], takes_batch: bool
                   ) -> Iterator[Tuple[str, Optional[str], Dict[str, Any]]]:
    """Yields (the MODEL argument, a display name or None, the options with an Optimizer
    instance mapped and, when the command takes_batch, the batch from example_inputs)."""
    options = dict(options)
    optimizer = options.get("optimizer")
    if optimizer is not None and not isinstance(optimizer, str):
        del options["optimizer"]
        for key, value in optimizer_options(optimizer).items():
            options.setdefault(key, value)
    if not _is_module(model):
        if not isinstance(model, (str, os.PathLike)):
            from ._commands import Error
            raise Error("model must be a torch.nn.Module, an .onnx path or a zoo name, got %s"
                        % type(model).__name__)
        yield os.fspath(model), None, options
        return
    if example_inputs is None:
        from ._commands import Error
        raise Error("a torch.nn.Module needs example_inputs (one batch of its inputs)")
    inputs = _as_tuple(example_inputs)
    if takes_batch and "batch" not in options and len(getattr(inputs[0], "shape", ())) > 0:
        options["batch"] = int(inputs[0].shape[0])
    checkpoint_calls: List[Any] = []
    graph = export_onnx(model, inputs, checkpoint_calls=checkpoint_calls)
    try:  # which nodes ran in place (not recorded by ONNX): the planner reads it from the metadata
        from .frame_locals import add_locals_metadata
        from .grad_mode import add_grad_mode_metadata
        from .inplace import add_inplace_metadata
        graph = add_frozen_metadata(add_buffers_metadata(add_inplace_metadata(graph, model, inputs), model), model)
        graph = add_locals_metadata(
            add_grad_mode_metadata(graph, model, inputs, reexport=lambda: export_onnx(model, inputs)), model, inputs)
        from .checkpoint import add_checkpoint_metadata
        def scoped_export() -> Tuple[bytes, List[int]]:
            data = export_onnx(model, inputs, scoped_checkpoints=True, checkpoint_calls=checkpoint_calls)
            return data, checkpoint_calls[-1].reentrant
        graph = add_checkpoint_metadata(graph, checkpoint_calls[0].count, scoped_export)
    except ImportError:
        pass
    graph = strip_weights(graph)
    fd = os.memfd_create("oomguard-model.onnx")
    try:
        with os.fdopen(os.dup(fd), "wb") as f:
            f.write(graph)
        yield "/proc/self/fd/%d" % fd, type(model).__name__, options
    finally:
        os.close(fd)
