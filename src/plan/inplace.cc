#include "inplace.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <optional>
#include <set>

namespace oomguard::plan {

namespace {

// Accepts a flat JSON array of strings, or one string; refuses anything else at its first token, so
// a hostile value (deep nesting, a huge object) costs no tree and no recursion.
class HintReader : public nlohmann::json::json_sax_t {
 public:
  bool null() override { return false; }
  bool boolean(bool) override { return false; }
  bool number_integer(number_integer_t) override { return false; }
  bool number_unsigned(number_unsigned_t) override { return false; }
  bool number_float(number_float_t, const string_t&) override { return false; }
  bool binary(binary_t&) override { return false; }
  bool string(string_t& v) override {
    if (!in_array_) single = v;
    else names.push_back(std::move(v));
    return true;
  }
  bool start_object(std::size_t) override { return false; }
  bool key(string_t&) override { return false; }
  bool end_object() override { return false; }
  bool start_array(std::size_t) override {
    if (in_array_ || array_seen_) return false;
    in_array_ = array_seen_ = true;
    return true;
  }
  bool end_array() override {
    in_array_ = false;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

  std::vector<std::string> names;
  std::optional<std::string> single;
  bool array() const { return array_seen_; }

 private:
  bool in_array_ = false, array_seen_ = false;
};

}  // namespace

void ReadInplaceMetadata(std::string_view value, Model* model) {
  HintReader reader;
  const bool parsed = nlohmann::json::sax_parse(value.begin(), value.end(), &reader);
  const bool word = !reader.array() && reader.single && (*reader.single == "all" || *reader.single == "none");
  if (!parsed || !(reader.array() || word)) {
    model->warnings.push_back("metadata " + std::string(kInplaceMetadataKey) +
                              " is not a JSON list of node names (nor \"all\" or \"none\"); ignored");
    return;
  }
  model->has_inplace_hint = true;
  model->inplace_hint_all = word && *reader.single == "all";
  model->inplace_hint = std::move(reader.names);
}

void ReadBuffersMetadata(std::string_view value, Model* model) {
  HintReader reader;
  const bool parsed = nlohmann::json::sax_parse(value.begin(), value.end(), &reader);
  if (!parsed || !reader.array()) {
    model->warnings.push_back("metadata " + std::string(kBuffersMetadataKey) +
                              " is not a JSON list of initializer names; ignored");
    return;
  }
  const std::set<std::string> names(reader.names.begin(), reader.names.end());
  for (TensorInfo& t : model->tensors) {
    if (t.kind != TensorKind::kParameter || !names.count(t.name)) continue;
    t.kind = TensorKind::kBuffer;
    uint64_t numel = 1;
    for (int64_t d : t.dims) numel *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    model->parameter_count -= std::min(model->parameter_count, numel);
    model->parameter_bytes -= std::min(model->parameter_bytes, numel * ElementBytes(t.dtype));
  }
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
