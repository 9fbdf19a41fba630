// Concrete shapes for one plan: the batch and per-sample overrides applied to
// the graph inputs, then every node's output shape computed in graph order
// (with small integer values propagated, so Reshape targets built from Shape
// and Gather resolve). Falls back to ONNX's symbolic shape inference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model.h"

namespace oomguard::plan {

struct ConcreteTensor {
  bool known = false;
  int dtype = kFloat;
  std::vector<int64_t> dims;
  bool has_value = false;  // small tensors whose values are known (shape arithmetic)
  std::vector<double> value;

  // Elements and bytes; 0 when unknown.
  uint64_t Elements() const;
  uint64_t Bytes() const;
};

// The extent a data-dependent size (data_dependent.h) is planned at.
enum class DataExtent { kExpected, kLeast, kMost };

// A node whose output size the data decides, as the shape pass planned it: `planned` of at most `most` (rows
// of NonZero, elements of Compress); `planned` and `most` are -1 where the pass could not plan it at all.
struct DataDependentNode {
  int node = -1;
  int64_t planned = -1, most = -1;
  double share = 0;
  std::string basis;  // the share's reason, in words
};

struct ConcreteShapes {
  int64_t batch = 0;
  std::vector<ConcreteTensor> tensors;  // indexed like Model::tensors
  std::vector<std::string> warnings;
  // The first tensor whose dims overflow what the planner represents (a dim
  // above 2^40 or 1e17 elements), described; empty when none does.
  std::string overflow;
  // Data-dependent sizes: the extent the pass plans them at, the nodes, and the activations whose size
  // follows them (in graph order) with their bytes at the least, planned and most extent.
  DataExtent extent = DataExtent::kExpected;
  std::vector<DataDependentNode> data_dependent;
  std::vector<int> data_sized_tensors;
  uint64_t data_sized_least_bytes = 0, data_sized_planned_bytes = 0, data_sized_most_bytes = 0;
};

// Applies the batch (required when an input's first dimension is symbolic or
// when the model has none) and the overrides; fails with a user-facing message.
Result<ConcreteShapes> InferConcreteShapes(const Model& model, const PlanOptions& options);

}  // namespace oomguard::plan
