#!/usr/bin/python3
"""Exports the model zoo as shape-only ONNX files: data/zoo/<name>.onnx + data/zoo/manifest.json.

Each model from tools/models.py is exported in training mode (BatchNormalization with
training_mode=1, Dropout with its training flag), without constant folding, with a dynamic
batch axis named "batch". All initializers are then marked as external data pointing to
<name>.onnx.data, and that data file is NOT written: the planner needs shapes, not weights,
and the files stay a few kilobytes to a few hundred kilobytes each.

Each file then carries ONNX's own shape inference (value_info for every tensor, the options the
planner's importer uses): the binary embeds these files and skips that inference when it loads
a zoo model by name, which would otherwise build ONNX's whole operator-schema registry on every
start. `--annotate-only` adds the annotation to the files already in --out without exporting.

Run with Debian's interpreter (it has torch 1.13, torchvision and onnx):
    /usr/bin/python3 tools/export_zoo.py [--out data/zoo] [--opset 14] [--annotate-only] [MODEL...]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import warnings
from typing import List

import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def strip_weights(model: onnx.ModelProto, data_file: str) -> int:
    """Marks every initializer as external data in `data_file` and drops its bytes.
    Returns the number of bytes the weights would take. Offsets are laid out as if the
    file existed (4096-aligned, like onnx's own writer)."""
    offset = 0
    total = 0
    for init in model.graph.initializer:
        raw = init.raw_data
        if not raw:
            # Some exporters use typed fields; convert to raw first so length is exact.
            from onnx import numpy_helper
            raw = numpy_helper.to_array(init).tobytes()
        length = len(raw)
        offset = (offset + 4095) // 4096 * 4096
        init.ClearField("raw_data")
        for field in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data",
                      "string_data"):
            init.ClearField(field)
        del init.external_data[:]
        for key, value in (("location", data_file), ("offset", str(offset)),
                           ("length", str(length))):
            entry = init.external_data.add()
            entry.key = key
            entry.value = value
        init.data_location = onnx.TensorProto.EXTERNAL
        offset += length
        total += length
    return total


def annotate_shapes(proto: onnx.ModelProto) -> onnx.ModelProto:
    """ONNX's shape inference with the options of src/plan/onnx_import.cc (no type check, not
    strict, data propagation): the same library the planner links. Raises when a node output is
    left without a type, so the binary never trusts a partial annotation."""
    inferred = onnx.shape_inference.infer_shapes(proto, check_type=False, strict_mode=False,
                                                 data_prop=True)
    typed = {v.name for v in inferred.graph.value_info} | {v.name for v in inferred.graph.output}
    missing = [o for n in inferred.graph.node for o in n.output if o and o not in typed]
    if missing:
        raise RuntimeError("shape inference left %d tensors untyped (first: %s)" % (len(missing), missing[0]))
    return inferred


def save_annotated(proto: onnx.ModelProto, path: str) -> None:
    with open(path, "wb") as f:  # onnx.save_model would look for the absent external data
        f.write(annotate_shapes(proto).SerializeToString())


def export_bytes(module: torch.nn.Module, example: List[torch.Tensor], input_names: List[str], opset: int) -> bytes:
    """The module exported as export_one exports it (training mode, no constant folding, a dynamic batch axis on
    the inputs and the output "logits"), with its weights."""
    output_names = ["logits"]
    dynamic_axes = {n: {0: "batch"} for n in input_names + output_names}
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, tuple(example), buf, opset_version=opset,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes)
    return buf.getvalue()


def export_one(spec: models.ModelSpec, out_dir: str, opset: int, require_inferred_output: bool = True) -> dict:
    """Exports one model to out_dir. With require_inferred_output, ONNX's own shape inference must
    reach the logits without the weights (the zoo's files); without it, a model whose output shape
    ONNX cannot infer (a Resize whose sizes come from a Shape) is kept for the planner to try."""
    module = spec.build()
    proto = onnx.load_from_string(export_bytes(module, spec.example_inputs(2), [i.name for i in spec.inputs], opset))
    onnx.checker.check_model(proto)  # with the weights still inside
    weight_bytes = strip_weights(proto, spec.name + ".onnx.data")
    proto.doc_string = spec.description
    proto.producer_name = "oomguard tools/export_zoo.py (torch %s)" % torch.__version__
    path = os.path.join(out_dir, spec.name + ".onnx")
    save_annotated(proto, path)  # the data file is deliberately not written
    # Shapes must infer through to the logits without the weights.
    inferred = onnx.shape_inference.infer_shapes(proto)
    out_type = inferred.graph.output[0].type.tensor_type
    out_dims = [d.dim_param or d.dim_value for d in out_type.shape.dim]
    if require_inferred_output and (not out_dims or out_dims[0] != "batch" or out_dims[1] != spec.classes):
        raise RuntimeError("%s: inferred output shape %s, expected [batch, %d, ...]"
                           % (spec.name, out_dims, spec.classes))
    label_shape = list(spec.label_shape)
    return {
        "file": spec.name + ".onnx",
        "description": spec.description,
        "zoo": spec.in_zoo,
        "inputs": [{"name": i.name, "shape": list(i.shape),
                    "dtype": str(i.dtype).replace("torch.", ""),
                    **({"high": i.high} if i.high else {})} for i in spec.inputs],
        "batch_axis": 0,
        "output": {"name": "logits", "classes": spec.classes},
        "loss": "cross_entropy",
        "label_shape": label_shape,
        "label_dtype": "int64",
        "parameter_count": models.parameter_count(module),
        "weight_bytes": weight_bytes,
        "validation_batches": list(spec.validation_batches),
        "opset": opset,
        "file_bytes": os.path.getsize(path),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "data", "zoo"))
    parser.add_argument("--opset", type=int, default=14)
    parser.add_argument("--annotate-only", action="store_true",
                        help="add ONNX's shape inference to the files in --out, export nothing")
    parser.add_argument("names", nargs="*", help="models to export (default: all)")
    args = parser.parse_args()
    if args.annotate_only:
        for name in sorted(f[:-5] for f in os.listdir(args.out) if f.endswith(".onnx")):
            if args.names and name not in args.names:
                continue
            path = os.path.join(args.out, name + ".onnx")
            save_annotated(onnx.load(path, load_external_data=False), path)
            print("%-20s %8d bytes" % (name, os.path.getsize(path)))
        return 0
    names = args.names or list(models.SPECS)
    unknown = [n for n in names if n not in models.SPECS]
    if unknown:
        print("export_zoo: unknown model %s (known: %s)" % (", ".join(unknown),
              ", ".join(models.SPECS)), file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = {"models": {}}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    manifest["generator"] = "tools/export_zoo.py"
    manifest["torch_version"] = torch.__version__
    manifest["note"] = ("Shape-only ONNX: initializers are external data in <name>.onnx.data, "
                        "which is deliberately absent. Inputs have a symbolic batch axis 'batch'.")
    for name in names:
        entry = export_one(models.SPECS[name], args.out, args.opset)
        manifest["models"][name] = entry
        manifest["models"] = dict(sorted(manifest["models"].items()))
        # Written after every model, so a later failure keeps the entries already exported.
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")
        print("%-20s %9d params  %8d bytes" % (name, entry["parameter_count"], entry["file_bytes"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
