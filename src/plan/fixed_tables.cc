#include "fixed_tables.h"

#include <array>
#include <string_view>
#include <vector>

#include "inplace.h"

namespace oomguard::plan {
namespace {

// The last part of a registered buffer's name, as code commonly writes it (`*` any run of characters): rotary
// tables (LLaMA's freqs_cis, Hugging Face's inv_freq and cos_cached / sin_cached, 2-D tables named cos / sin),
// sinusoid position tables (the Transformer tutorial's pe), NeRF's frequency bands, Performer's random features,
// attention masks and PixelCNN's weight masks. A learned table of such a name would be planned low (SAM's learned
// no_mask embedding is why "*_mask" is not one of them).
constexpr std::array<std::string_view, 20> kFixedTableNames = {
    "cos", "sin", "cos_*", "sin_*", "*_cos", "*_sin", "*cos_cached", "*sin_cached", "inv_freq*", "freqs*",
    "freq_*", "pe", "pos_table", "sinusoid*", "projection_matrix", "mask", "attn_mask", "attention_mask",
    "causal", "causal_mask"};

std::string_view LastPart(std::string_view name) {
  const size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

bool IsView(const std::string& op) {
  return op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Slice" || op == "Transpose" ||
         op == "Expand" || op == "Identity";
}

// Made from initializers and constants alone (within a few producers): no activation.
bool Fixed(const Model& m, int id, int depth = 0) {
  if (id < 0) return true;
  const TensorInfo& t = m.tensors[static_cast<size_t>(id)];
  if (t.kind != TensorKind::kActivation && t.kind != TensorKind::kGraphInput) return true;
  if (t.kind == TensorKind::kGraphInput || t.producer < 0 || depth >= 8) return false;
  for (int in : m.nodes[static_cast<size_t>(t.producer)].inputs) {
    if (!Fixed(m, in, depth + 1)) return false;
  }
  return true;
}

// Read only through views by Muls, at least one of them with an activation. (A table read by a MatMul, as
// Performer's random features or Fourier features are, reads as every hand-written weight `x @ self.w` does: left
// to the names and the metadata.)
bool OnlyMultipliedWithActivations(const Model& m, int table) {
  bool any = false;
  std::vector<int> work{table};
  for (size_t steps = 0; !work.empty() && steps < 256; ++steps) {
    const int id = work.back();
    work.pop_back();
    for (int c : m.tensors[static_cast<size_t>(id)].consumers) {
      const NodeInfo& n = m.nodes[static_cast<size_t>(c)];
      if (IsView(n.op_type) && !n.inputs.empty() && n.inputs[0] == id && !n.outputs.empty()) {
        work.push_back(n.outputs[0]);
        continue;
      }
      if (n.op_type != "Mul" || n.inputs.size() != 2) return false;
      any = any || !Fixed(m, n.inputs[0] == id ? n.inputs[1] : n.inputs[0]);
    }
  }
  return any && work.empty();
}

}  // namespace

void MarkNamedTablesAsBuffers(Model* model) {
  if (model->has_buffers_hint) return;
  std::set<std::string> named;
  for (const TensorInfo& t : model->tensors) {
    if (t.kind != TensorKind::kParameter) continue;
    for (std::string_view pattern : kFixedTableNames) {
      if (GlobMatches(pattern, LastPart(t.name))) named.insert(t.name);
    }
  }
  if (!named.empty()) MarkAsBuffers(named, model);
}

std::set<std::string> TablesThatMayBeBuffers(const Model& model) {
  std::set<std::string> tables;
  if (model.has_buffers_hint) return tables;
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const TensorInfo& t = model.tensors[i];
    const std::string_view last = LastPart(t.name);
    if (t.kind != TensorKind::kParameter || last.ends_with("weight") || last.ends_with("bias")) continue;
    int wide = 0;
    for (int64_t d : t.dims) wide += d > 1;
    if (wide >= 2 && OnlyMultipliedWithActivations(model, static_cast<int>(i))) tables.insert(t.name);
  }
  return tables;
}

}  // namespace oomguard::plan
