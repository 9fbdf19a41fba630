#!/usr/bin/env python3
"""Writes the planner's large-graph benchmark model: BLOCKS x (MatMul 64x64 -> Add bias -> Relu -> residual Add),
4 nodes a block, weights external (never read), input [batch, 64], opset 14.
  /usr/bin/python3 tools/make_chain.py OUT.onnx [BLOCKS]   (default 25 000 blocks = 100 000 nodes)
Used by tools/bench_chain100k.sh and tools/callgrind_chain.sh."""
import sys

from onnx import TensorProto, helper


def external(name, dims):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key = "location"
    e.value = "missing.bin"
    return t


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    blocks = int(sys.argv[2]) if len(sys.argv) == 3 else 25000
    nodes, inits, x = [], [], "input"
    for b in range(blocks):
        inits += [external(f"w{b}", [64, 64]), external(f"b{b}", [64])]
        nodes += [helper.make_node("MatMul", [x, f"w{b}"], [f"m{b}"], name=f"mm{b}"),
                  helper.make_node("Add", [f"m{b}", f"b{b}"], [f"a{b}"], name=f"add{b}"),
                  helper.make_node("Relu", [f"a{b}"], [f"r{b}"], name=f"relu{b}"),
                  helper.make_node("Add", [f"r{b}", x], [f"s{b}"], name=f"res{b}")]
        x = f"s{b}"
    count = 4 * blocks
    name = f"chain{count // 1000}k" if count % 1000 == 0 else f"chain{count}"  # chain100k: the bench's model as before
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 64])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits)
    with open(sys.argv[1], "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString())


if __name__ == "__main__":
    main()
