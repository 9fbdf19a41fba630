#include "inplace.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace oomguard::plan {

namespace {

// A SAX reader that refuses every token but strings and arrays (its subclasses decide those) at once, so
// a hostile value (deep nesting, a huge object) costs no tree and no recursion.
class StringsReader : public nlohmann::json::json_sax_t {
 public:
  bool null() override { return false; }
  bool boolean(bool) override { return false; }
  bool number_integer(number_integer_t) override { return false; }
  bool number_unsigned(number_unsigned_t) override { return false; }
  bool number_float(number_float_t, const string_t&) override { return false; }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return false; }
  bool key(string_t&) override { return false; }
  bool end_object() override { return false; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

// Accepts a flat JSON array of strings, or one string.
class HintReader : public StringsReader {
 public:
  bool string(string_t& v) override {
    if (!in_array_) single = v;
    else names.push_back(std::move(v));
    return true;
  }
  bool start_array(std::size_t) override {
    if (in_array_ || array_seen_) return false;
    in_array_ = array_seen_ = true;
    return true;
  }
  bool end_array() override {
    in_array_ = false;
    return true;
  }

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

uint64_t MarkAsBuffers(const std::set<std::string>& names, Model* model) {
  uint64_t marked = 0;
  for (TensorInfo& t : model->tensors) {
    if (t.kind != TensorKind::kParameter || !names.count(t.name)) continue;
    t.kind = TensorKind::kBuffer;
    uint64_t numel = 1;
    for (int64_t d : t.dims) numel *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    marked += numel;
    model->parameter_count -= std::min(model->parameter_count, numel);
    model->parameter_bytes -= std::min(model->parameter_bytes, numel * ElementBytes(t.dtype));
  }
  return marked;
}

namespace {

std::optional<std::set<std::string>> ReadNameList(std::string_view value, std::string_view key, Model* model,
                                                  std::string_view what = "initializer") {
  HintReader reader;
  const bool parsed = nlohmann::json::sax_parse(value.begin(), value.end(), &reader);
  if (!parsed || !reader.array()) {
    model->warnings.push_back("metadata " + std::string(key) + " is not a JSON list of " + std::string(what) +
                              " names; ignored");
    return std::nullopt;
  }
  return std::set<std::string>(reader.names.begin(), reader.names.end());
}

}  // namespace

bool GlobMatches(std::string_view pattern, std::string_view name) {
  size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++, resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p, ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1, n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

// The PyTorch name of a weight the exporter renamed ("onnx::MatMul_123": constant folding stores
// nn.Linear's transposed weight anew), from the module path of the node that reads it: the weight
// operand of "/encoder/layer.0/fc1/MatMul" is "encoder.layer.0.fc1.weight" (an nn.Sequential child,
// "/layer1/layer1.0/conv1", is "layer1.0.conv1"). "" for any other initializer.
std::string ModuleWeightName(const Model& model, const TensorInfo& t, int id) {
  if (!t.name.starts_with("onnx::") || t.consumers.empty()) return "";
  const NodeInfo& n = model.nodes[static_cast<size_t>(t.consumers.front())];
  const bool weight_operand = (n.op_type == "MatMul" || n.op_type == "Gemm" || n.op_type == "Conv" ||
                               n.op_type == "ConvTranspose") &&
                              n.inputs.size() > 1 && n.inputs[1] == id;
  if (!weight_operand || n.name.empty() || n.name[0] != '/') return "";
  std::string name, parent;
  for (size_t from = 1, to; (to = n.name.find('/', from)) != std::string::npos; from = to + 1) {
    std::string part = n.name.substr(from, to - from);
    if (!parent.empty() && part.starts_with(parent + ".")) part = part.substr(parent.size() + 1);
    parent = n.name.substr(from, to - from);
    name += part + ".";
  }
  return name.empty() ? "" : name + "weight";
}

}  // namespace

void ReadBuffersMetadata(std::string_view value, Model* model) {
  if (auto names = ReadNameList(value, kBuffersMetadataKey, model)) {
    model->has_buffers_hint = true;
    MarkAsBuffers(*names, model);
  }
}

void ReadFrozenMetadata(std::string_view value, Model* model) {
  if (auto names = ReadNameList(value, kFrozenMetadataKey, model)) {
    model->frozen_parameter_count += MarkAsBuffers(*names, model);
  }
}

Result<std::shared_ptr<const Model>> FreezeParameters(const Model& model, const std::vector<std::string>& patterns) {
  auto frozen = std::make_shared<Model>(model);
  std::set<std::string> names;
  for (const std::string& pattern : patterns) {
    bool matched = false;
    for (size_t i = 0; i < model.tensors.size(); ++i) {
      const TensorInfo& t = model.tensors[i];
      if (t.kind != TensorKind::kParameter && t.kind != TensorKind::kBuffer) continue;
      if (!GlobMatches(pattern, t.name) && !GlobMatches(pattern, ModuleWeightName(model, t, static_cast<int>(i)))) {
        continue;
      }
      matched = true;
      names.insert(t.name);
    }
    if (!matched) {
      std::string example;
      for (const TensorInfo& t : model.tensors) {
        if (t.kind == TensorKind::kParameter) {
          example = " (its parameters are named like '" + t.name + "')";
          break;
        }
      }
      return MakeError("--frozen '" + pattern + "' matches no initializer of the model" + example);
    }
  }
  frozen->frozen_parameter_count += MarkAsBuffers(names, frozen.get());
  return std::shared_ptr<const Model>(std::move(frozen));
}

void ReadGradModeMetadata(std::string_view key, std::string_view value, Model* model) {
  const GradMode mode = key == kNoGradMetadataKey ? GradMode::kNoGrad : GradMode::kDetached;
  auto names = ReadNameList(value, key, model, "node");
  if (!names) return;
  size_t found = 0;
  for (NodeInfo& n : model->nodes) {
    if (!names->count(n.name)) continue;
    ++found;
    if (n.grad_mode != GradMode::kNoGrad) n.grad_mode = mode;  // under no_grad, a detach changes nothing
  }
  if (found < names->size()) {
    model->warnings.push_back("metadata " + std::string(key) + " names " + std::to_string(names->size() - found) +
                              " node(s) this model does not have; ignored");
  }
  if (found > 0) model->grad_mode_hint = "metadata";
}

void ReadLocalsMetadata(std::string_view value, Model* model) {
  auto names = ReadNameList(value, kLocalsMetadataKey, model, "value");
  if (!names) return;
  model->has_locals_hint = true;
  model->held_locals.clear();
  for (size_t id = 0; id < model->tensors.size(); ++id) {
    const TensorInfo& t = model->tensors[id];
    if (t.kind == TensorKind::kActivation && t.producer >= 0 && names->count(t.name)) {
      model->held_locals.push_back(static_cast<int>(id));
    }
  }
  if (model->held_locals.size() < names->size()) {
    model->warnings.push_back("metadata " + std::string(kLocalsMetadataKey) + " names " +
                              std::to_string(names->size() - model->held_locals.size()) +
                              " value(s) this model does not compute; ignored");
  }
}

namespace {

// "FLAG 'PATTERN' matches no node of the model", with the name of one node and a glob naming a module's.
std::string NoNodeMatches(const Model& model, const std::string& flag, const std::string& pattern,
                          const std::string& module) {
  std::string example;
  for (const NodeInfo& n : model.nodes) {
    if (n.op_type != "Constant" && !n.name.empty()) {
      example = " (its nodes are named like '" + n.name + "'; '/" + module + "/*' names every node of module " +
                module + ")";
      break;
    }
  }
  return flag + " '" + pattern + "' matches no node of the model" + example;
}

}  // namespace

Result<std::shared_ptr<const Model>> MarkGradMode(const Model& model, const std::vector<std::string>& no_grad,
                                                 const std::vector<std::string>& detached) {
  auto marked = std::make_shared<Model>(model);
  auto mark = [&](const std::vector<std::string>& patterns, GradMode mode, const char* flag) -> Status {
    for (const std::string& pattern : patterns) {
      bool matched = false;
      for (NodeInfo& n : marked->nodes) {
        if (!GlobMatches(pattern, n.name)) continue;
        matched = true;
        if (n.grad_mode != GradMode::kNoGrad) n.grad_mode = mode;
      }
      if (!matched) return MakeError(NoNodeMatches(model, flag, pattern, "teacher"));
    }
    return Status::Ok();
  };
  if (Status s = mark(no_grad, GradMode::kNoGrad, "--no-grad"); !s) return MakeError(s.error());
  if (Status s = mark(detached, GradMode::kDetached, "--detached"); !s) return MakeError(s.error());
  if (!no_grad.empty() || !detached.empty()) marked->grad_mode_hint = "option";
  return std::shared_ptr<const Model>(std::move(marked));
}

namespace {

// Accepts a JSON array of arrays of strings (checkpointed segments), refusing anything else at its first token.
class SegmentsReader : public StringsReader {
 public:
  bool string(string_t& v) override {
    if (depth_ != 2) return false;
    segments.back().push_back(std::move(v));
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0 && seen_) return false;
    if (depth_ == 2) return false;
    seen_ = true;
    if (++depth_ == 2) segments.emplace_back();
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }

  std::vector<std::vector<std::string>> segments;

 private:
  int depth_ = 0;
  bool seen_ = false;
};

}  // namespace

void ReadCheckpointedMetadata(std::string_view value, Model* model) {
  SegmentsReader reader;
  if (!nlohmann::json::sax_parse(value.begin(), value.end(), &reader)) {
    model->warnings.push_back("metadata " + std::string(kCheckpointedMetadataKey) +
                              " is not a JSON list of lists of node names; ignored");
    return;
  }
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < model->nodes.size(); ++i) index.emplace(model->nodes[i].name, i);
  size_t missing = 0;
  int segments = 0;
  for (const std::vector<std::string>& segment : reader.segments) {
    bool any = false;
    for (const std::string& n : segment) {
      auto it = index.find(n);
      if (it == index.end()) {
        ++missing;
        continue;
      }
      model->nodes[it->second].checkpoint_segment = segments;
      any = true;
    }
    segments += any;
  }
  if (missing > 0) {
    model->warnings.push_back("metadata " + std::string(kCheckpointedMetadataKey) + " names " +
                              std::to_string(missing) + " node(s) this model does not have; ignored");
  }
  model->checkpoint_segments = segments;
  if (segments > 0) model->checkpoint_hint = "metadata";
}

void ReadCheckpointedReentrantMetadata(std::string_view value, Model* model) {
  auto names = ReadNameList(value, kCheckpointedReentrantMetadataKey, model, "node");
  if (!names) return;
  for (NodeInfo& n : model->nodes) n.checkpoint_reentrant = names->count(n.name) > 0;
}

Result<std::shared_ptr<const Model>> MarkCheckpointed(const Model& model,
                                                     const std::vector<std::vector<std::string>>& segments) {
  auto marked = std::make_shared<Model>(model);
  for (NodeInfo& n : marked->nodes) n.checkpoint_segment = -1, n.checkpoint_reentrant = false;
  int id = 0;
  for (const std::vector<std::string>& patterns : segments) {
    for (const std::string& pattern : patterns) {
      bool matched = false;
      for (NodeInfo& n : marked->nodes) {
        if (n.op_type == "Constant" || !GlobMatches(pattern, n.name)) continue;
        matched = true;
        n.checkpoint_segment = id;
      }
      if (!matched) return MakeError(NoNodeMatches(model, "--checkpointed", pattern, "layers.0"));
    }
    ++id;
  }
  marked->checkpoint_segments = id;
  marked->checkpoint_hint = id > 0 ? "option" : "none";
  return std::shared_ptr<const Model>(std::move(marked));
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
