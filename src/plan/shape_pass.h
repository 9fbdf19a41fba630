// The shape pass: every node's concrete output shape (and small integer values,
// for shape arithmetic) computed in graph order from its inputs'. Unknown
// operators leave their outputs unknown; InferConcreteShapes falls back to ONNX.
#pragma once

#include <cstdint>
#include <vector>

#include "shapes.h"

namespace oomguard::plan {

// True when every dim is in [0, 2^40] and the element count stays below 1e17.
bool SaneDims(const std::vector<int64_t>& dims);

// Fills shapes->tensors for node outputs. REQUIRES: graph inputs and constants already set.
void RunShapePass(const Model& model, ConcreteShapes* shapes);

}  // namespace oomguard::plan
