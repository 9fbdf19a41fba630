// Attribute checks the importer runs before ONNX's shape inference: values no
// exporter writes, which make shapes meaningless or crash libonnx (strides of
// 0 divide by zero inside its convolution shape inference). A model that fails
// is refused with one line naming the node and the attribute.
#pragma once

#include <cstdint>
#include <string>

#include "model.h"

namespace oomguard::plan {

// The newest default-domain opset any ONNX release defines is far below this;
// an opset above it is corruption, not a newer exporter.
inline constexpr int64_t kMaxPlausibleOpset = 64;

// Checks every node of `model` (whose default-domain opset is `opset`):
//  - convolution and pooling: kernel_shape, strides and dilations at least 1,
//    pads and output_padding at least 0, their lengths consistent with each
//    other, auto_pad one of NOTSET, SAME_UPPER, SAME_LOWER, VALID;
//  - group at least 1 (any operator);
//  - Transpose: perm a permutation of 0..n-1;
//  - the opset in [1, kMaxPlausibleOpset].
// Errors read "<label>: malformed ONNX model (node 'conv1' (Conv): strides must
// be at least 1, got [0, 0])".
Status CheckAttributes(const Model& model, int64_t opset, const std::string& label);

}  // namespace oomguard::plan
