#include "inplace.h"

#include <nlohmann/json.hpp>

namespace oomguard::plan {

void ReadInplaceMetadata(std::string_view value, Model* model) {
  nlohmann::json j = nlohmann::json::parse(value.begin(), value.end(), nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> names;
  bool all = false, ok = true;
  if (j.is_string() && (j.get<std::string>() == "all" || j.get<std::string>() == "none")) {
    all = j.get<std::string>() == "all";
  } else if (j.is_array()) {
    for (const auto& e : j) {
      if (!e.is_string()) {
        ok = false;
        break;
      }
      names.push_back(e.get<std::string>());
    }
  } else {
    ok = false;
  }
  if (!ok) {
    model->warnings.push_back("metadata " + std::string(kInplaceMetadataKey) +
                              " is not a JSON list of node names (nor \"all\" or \"none\"); ignored");
    return;
  }
  model->has_inplace_hint = true;
  model->inplace_hint_all = all;
  model->inplace_hint = std::move(names);
}

InplaceHintInForce::InplaceHintInForce(const Model& model, const PlanOptions& options) {
  switch (options.inplace) {
    case InplaceHint::kNone: source_ = "option"; return;
    case InplaceHint::kAll: source_ = "option", all_ = true; return;
    case InplaceHint::kNodes:
      source_ = "option";
      names_.insert(options.inplace_nodes.begin(), options.inplace_nodes.end());
      return;
    case InplaceHint::kFromModel: break;
  }
  if (!model.has_inplace_hint) return;
  source_ = "metadata";
  all_ = model.inplace_hint_all;
  names_.insert(model.inplace_hint.begin(), model.inplace_hint.end());
}

bool InplaceHintInForce::Says(const Model& model, const LogicalOp& op) const {
  if (all_) return true;
  for (int n : op.nodes) {
    if (names_.count(model.nodes[n].name)) return true;
  }
  return false;
}

std::vector<std::string> InplaceHintInForce::UnknownNames(const Model& model) const {
  std::set<std::string> left = names_;
  for (const NodeInfo& n : model.nodes) left.erase(n.name);
  return {left.begin(), left.end()};
}

}  // namespace oomguard::plan
