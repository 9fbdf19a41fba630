// Activations that PyTorch may have run in place (nn.ReLU(inplace=True), F.leaky_relu_, ...).
// torch.onnx.export writes the same graph either way, so the planner takes the answer from a hint:
// PlanOptions::inplace, or the model's metadata_props "oomguard.inplace" (a JSON list of node
// names, or "all"), which oomguard.export() writes. What each in-place variant keeps for backward
// comes from the operator table's in-place rows (OpTableRow::inplace).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model.h"
#include "saved_tensor_rules.h"

namespace oomguard::plan {

inline constexpr std::string_view kInplaceMetadataKey = "oomguard.inplace";
// metadata_props key written by oomguard.export: a JSON list of the initializers that are the module's
// registered buffers (a PixelCNN's weight mask, a rotary table), which get no gradient and no optimizer
// state; ONNX stores them like parameters.
inline constexpr std::string_view kBuffersMetadataKey = "oomguard.buffers";
// Marks the float initializers `value` names as buffers (a warning where it is not a JSON list of names).
void ReadBuffersMetadata(std::string_view value, Model* model);
// metadata_props key written by oomguard.export: a JSON list of the initializers that are parameters
// with requires_grad=False (a frozen backbone, LoRA's base weights). To memory they are buffers.
inline constexpr std::string_view kFrozenMetadataKey = "oomguard.frozen";
// Marks the float parameters `value` names as buffers and counts them frozen.
void ReadFrozenMetadata(std::string_view value, Model* model);
// `*` in `pattern` matches any run of characters; everything else itself.
bool GlobMatches(std::string_view pattern, std::string_view name);
// Marks the float parameters `names` (a set) as buffers; returns the elements marked.
uint64_t MarkAsBuffers(const std::set<std::string>& names, Model* model);

// Code that ran under torch.no_grad() or whose result was .detach()ed (NodeInfo::grad_mode): metadata_props
// keys written by oomguard.export, each a JSON list of node names (the nodes of the modules concerned).
inline constexpr std::string_view kNoGradMetadataKey = "oomguard.no_grad";
inline constexpr std::string_view kDetachedMetadataKey = "oomguard.detached";
// Sets the grad_mode of the nodes `value` names (key is one of the two above); a warning for a value
// that is not a list of names, or names that are no node.
void ReadGradModeMetadata(std::string_view key, std::string_view value, Model* model);
// MarkGradMode (planner.h) sets them from --no-grad / --detached.

// Code run inside torch.utils.checkpoint (NodeInfo::checkpoint_segment): metadata_props key written by
// oomguard.export, a JSON list of segments, each the list of node names of one checkpointed call.
inline constexpr std::string_view kCheckpointedMetadataKey = "oomguard.checkpointed";
// The nodes of the calls made with use_reentrant=True (a JSON list of node names; NodeInfo::checkpoint_reentrant).
inline constexpr std::string_view kCheckpointedReentrantMetadataKey = "oomguard.checkpointed_reentrant";
void ReadCheckpointedReentrantMetadata(std::string_view value, Model* model);
// Sets the nodes' checkpoint_segment from `value`; a warning for a value that is not a list of lists of names,
// or names that are no node. MarkCheckpointed (planner.h) sets them from --checkpointed.
void ReadCheckpointedMetadata(std::string_view value, Model* model);

// metadata_props key written by oomguard.export: a JSON list of the values (tensor names) a module's forward
// still bound to a name when it returned (python/oomguard/frame_locals.py), which the step holds until then.
inline constexpr std::string_view kLocalsMetadataKey = "oomguard.locals";
// Sets model's held_locals from the values `value` names; a warning for a value that is not a list of names,
// or names that are no activation of the model.
void ReadLocalsMetadata(std::string_view value, Model* model);

// Reads a metadata value into model's inplace_hint fields. A value that is neither a JSON list of
// strings nor "all"/"none" is ignored with a warning on the model.
void ReadInplaceMetadata(std::string_view value, Model* model);

// The hint in force for one simulation: the options', else the model's, else none.
class InplaceHintInForce {
 public:
  InplaceHintInForce(const Model& model, const PlanOptions& options);

  // "none", "option" or "metadata" (InplaceSummary::hint).
  const char* source() const { return source_; }
  bool known() const { return source_[0] != 'n'; }
  // The hint says op ran in place (every candidate under "all").
  bool Says(const Model& model, const LogicalOp& op) const;
  // Names the hint gives that are no node of the model.
  std::vector<std::string> UnknownNames(const Model& model) const;

 private:
  const char* source_ = "none";
  bool all_ = false;
  std::set<std::string> names_;
};

}  // namespace oomguard::plan
