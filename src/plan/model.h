// The planner's view of an ONNX model: tensors (with the shapes ONNX's own
// shape inference found, possibly symbolic) and nodes in graph order. Built
// once by the importer; immutable afterwards, so plans may run concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oomguard/plan/planner.h"

namespace oomguard::plan {

// ONNX TensorProto data types the planner cares about.
enum OnnxType : int {
  kUndefined = 0, kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kInt64 = 7,
  kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13, kBfloat16 = 16,
};
// Bytes per element (0 for unknown/string types).
int ElementBytes(int onnx_type);
// A floating-point type: float, double, float16 or bfloat16.
inline bool IsFloat(int onnx_type) {
  return onnx_type == kFloat || onnx_type == kFloat16 || onnx_type == kBfloat16 || onnx_type == kDouble;
}

enum class TensorKind { kActivation, kGraphInput, kParameter, kBuffer, kConstant };

struct TensorInfo {
  std::string name;
  int dtype = kUndefined;
  bool has_shape = false;
  std::vector<int64_t> dims;             // -1 where unknown or symbolic
  std::vector<std::string> dim_symbols;  // symbolic name per dim ("batch"), empty if none
  TensorKind kind = TensorKind::kActivation;
  int producer = -1;           // node index, -1 for inputs/initializers
  std::vector<int> consumers;  // node indices, one per use
  bool has_value = false;      // small constant known at import (Constant node, inline initializer)
  std::vector<double> value;
};

// How autograd saw a node: recorded as usual, run under torch.no_grad() (nothing recorded, its
// outputs need no gradient), or run with grad but inside a module whose result the model .detach()es
// (recorded, but the graph dies when that result does: what it saved is freed before backward, and
// no gradient comes back). ONNX records neither; grad_mode.h reads the hints.
enum class GradMode : uint8_t { kRecorded, kNoGrad, kDetached };

struct NodeInfo {
  std::string name;
  std::string op_type;
  GradMode grad_mode = GradMode::kRecorded;
  // The torch.utils.checkpoint call the node ran in (0, 1, ...; -1: none): its saved tensors are dropped after
  // forward and recomputed when backward reaches the segment (Model::checkpoint_hint says from where).
  int checkpoint_segment = -1;
  // Its call used use_reentrant=True: backward also holds the recomputed outputs and their gradients.
  bool checkpoint_reentrant = false;
  std::vector<int> inputs;  // tensor indices; -1 for an omitted optional input
  std::vector<int> outputs;
  std::map<std::string, int64_t> int_attrs;
  std::map<std::string, double> float_attrs;
  std::map<std::string, std::vector<int64_t>> ints_attrs;
  std::map<std::string, std::string> string_attrs;
  // A control-flow node (If, Loop, Scan) reads tensors of the enclosing graph inside its
  // subgraphs: they are appended to `inputs` (the last `implicit_inputs` of them), so that
  // liveness and gradients see them (an EmbeddingBag's weight, read in its Loop's body).
  int implicit_inputs = 0;
  // Per graph attribute ("body", "then_branch", "else_branch"): the types of its outputs.
  std::map<std::string, std::vector<TensorInfo>> subgraph_outputs;
  // Weights a Loop's body gathers rows from (Gather's data input): torch exports
  // EmbeddingBag as a Loop, one bag per iteration, gathering rows of the weight.
  std::vector<int> body_gathers;
  // An If branch that is one view of a tensor of the enclosing graph (torch's dynamic squeeze:
  // If(Equal(dim, 1), Squeeze(x, axes), Identity(x))), per branch name: the op ("Identity",
  // "Squeeze" or "Unsqueeze"), the position of x in `inputs`, and the axes.
  struct BranchView {
    std::string op;
    size_t input = 0;
    std::vector<int64_t> axes;
  };
  std::map<std::string, BranchView> branch_views;
};

class Model {
 public:
  std::string name;
  std::string description;
  std::vector<TensorInfo> tensors;
  std::vector<NodeInfo> nodes;
  std::vector<int> inputs;   // graph inputs that are not initializers
  std::vector<int> outputs;  // graph outputs
  uint64_t parameter_count = 0;
  uint64_t parameter_bytes = 0;
  // The initializers frozen (requires_grad=False), now buffers: their elements (out of parameter_count).
  uint64_t frozen_parameter_count = 0;
  int64_t opset = 0;                  // of the default ONNX domain
  std::vector<std::string> warnings;  // from import, e.g. an eval-mode export
  // metadata_props "oomguard.inplace" (inplace.h): which activation nodes ran in place.
  bool has_inplace_hint = false;
  // metadata_props "oomguard.buffers" (inplace.h): the model's registered buffers are known.
  bool has_buffers_hint = false;
  bool inplace_hint_all = false;
  std::vector<std::string> inplace_hint;
  // Nodes whose grad_mode a hint set (grad_mode.h): "metadata", "option" (either way the flag
  // adds to the metadata), or "none".
  const char* grad_mode_hint = "none";
  // Checkpointed segments (NodeInfo::checkpoint_segment): how many, and from where: "metadata"
  // ("oomguard.checkpointed"), "option" (--checkpointed, which replaces the metadata's) or "none".
  int checkpoint_segments = 0;
  const char* checkpoint_hint = "none";
  // metadata_props "oomguard.locals" (inplace.h): values a module's forward held in a name until it returned.
  bool has_locals_hint = false;
  std::vector<int> held_locals;  // tensor ids
};

// A trained weight or a registered buffer (an initializer of floating type).
inline bool IsParam(const Model& m, int id) {
  return id >= 0 && (m.tensors[id].kind == TensorKind::kParameter || m.tensors[id].kind == TensorKind::kBuffer);
}

// Where the importer takes the symbolic shapes from.
enum class ShapeSource {
  kInfer,   // ONNX's shape inference, run on the model (any file a user gives)
  kStored,  // the file's own value_info, written by that same inference (the embedded zoo:
            // tools/export_zoo.py); skips building ONNX's operator-schema registry
};

// Parses an ONNX model from memory. `name` labels errors and the plan.
Result<std::shared_ptr<const Model>> ParseModel(std::string_view bytes, std::string_view name,
                                                ShapeSource shapes = ShapeSource::kInfer);

}  // namespace oomguard::plan
