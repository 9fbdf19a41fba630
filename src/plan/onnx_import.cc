// ONNX import: protobuf parse, structural checks, ONNX shape inference (with
// data propagation), and the planner's tensor/node tables. Weights are never
// read: initializers only contribute their type and dims (and their values
// when they are small and stored inline, e.g. shape constants).
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "attribute_check.h"
#include "export_mode.h"
#include "fixed_tables.h"
#include "inplace.h"
#include "model.h"

namespace oomguard::plan {

int ElementBytes(int t) {
  switch (t) {
    case kFloat: case kInt32: case kUint32: return 4;
    case kDouble: case kInt64: case kUint64: return 8;
    case kFloat16: case kBfloat16: case kInt16: case kUint16: return 2;
    case kUint8: case kInt8: case kBool: return 1;
    default: return 0;
  }
}

namespace {

// An attribute's type; when the type field is missing (or holds a value this
// ONNX does not know) it is read from what the attribute holds, as ONNX's own
// shape inference does, so that the checks see what libonnx will use.
onnx::AttributeProto::AttributeType AttributeType(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.ints_size() > 0) return onnx::AttributeProto::INTS;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  return onnx::AttributeProto::UNDEFINED;
}

constexpr size_t kMaxValueElements = 4096;

// Number of elements, or -1 when a dim is negative or the product is absurd.
int64_t Numel(const google::protobuf::RepeatedField<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || d > (int64_t{1} << 40)) return -1;
    if (d != 0 && n > (int64_t{1} << 50) / d) return -1;
    n *= d;
  }
  return n;
}

template <typename T>
void AppendRaw(const std::string& raw, size_t n, std::vector<double>* out) {
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out->push_back(static_cast<double>(v));
  }
}

// Decodes a small inline tensor into doubles. False when it has no inline data
// (external, too large, unsupported type or inconsistent length).
bool DecodeValue(const onnx::TensorProto& t, std::vector<double>* out) {
  out->clear();
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return false;
  int64_t n = Numel(t.dims());
  if (n < 0 || static_cast<size_t>(n) > kMaxValueElements) return false;
  size_t count = static_cast<size_t>(n);
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    int eb = ElementBytes(t.data_type());
    if (eb == 0 || raw.size() != count * static_cast<size_t>(eb)) return false;
    switch (t.data_type()) {
      case kFloat: AppendRaw<float>(raw, count, out); return true;
      case kDouble: AppendRaw<double>(raw, count, out); return true;
      case kInt64: AppendRaw<int64_t>(raw, count, out); return true;
      case kInt32: AppendRaw<int32_t>(raw, count, out); return true;
      case kUint8: case kBool: AppendRaw<uint8_t>(raw, count, out); return true;
      case kInt8: AppendRaw<int8_t>(raw, count, out); return true;
      default: return false;
    }
  }
  switch (t.data_type()) {
    case kFloat:
      if (static_cast<size_t>(t.float_data_size()) != count) return false;
      for (float v : t.float_data()) out->push_back(v);
      return true;
    case kDouble:
      if (static_cast<size_t>(t.double_data_size()) != count) return false;
      for (double v : t.double_data()) out->push_back(v);
      return true;
    case kInt64:
      if (static_cast<size_t>(t.int64_data_size()) != count) return false;
      for (int64_t v : t.int64_data()) out->push_back(static_cast<double>(v));
      return true;
    case kInt32: case kUint8: case kInt8: case kBool:
      if (static_cast<size_t>(t.int32_data_size()) != count) return false;
      for (int32_t v : t.int32_data()) out->push_back(v);
      return true;
    default:
      return false;
  }
}

// A branch of an If that is one Identity, Squeeze or Unsqueeze of a tensor `outer` names (Constants
// for the axes aside), or nothing. `axes` come from the attribute (before opset 13) or a Constant.
std::optional<NodeInfo::BranchView> ReadBranchView(const onnx::GraphProto& g,
                                                   const std::function<int(const std::string&)>& outer_position) {
  if (g.output_size() != 1) return std::nullopt;
  std::unordered_map<std::string, std::vector<double>> constants;
  const onnx::NodeProto* view = nullptr;
  for (const auto& bn : g.node()) {
    if (bn.op_type() == "Constant" && bn.output_size() == 1) {
      for (const auto& a : bn.attribute()) {
        std::vector<double> v;
        if (a.name() == "value" && a.has_t() && DecodeValue(a.t(), &v)) constants[bn.output(0)] = std::move(v);
      }
      continue;
    }
    if (view || (bn.op_type() != "Identity" && bn.op_type() != "Squeeze" && bn.op_type() != "Unsqueeze")) {
      return std::nullopt;
    }
    view = &bn;
  }
  if (!view || view->input_size() < 1 || view->output_size() != 1 || view->output(0) != g.output(0).name()) {
    return std::nullopt;
  }
  const int position = outer_position(view->input(0));
  if (position < 0) return std::nullopt;
  NodeInfo::BranchView out{view->op_type(), static_cast<size_t>(position), {}};
  for (const auto& a : view->attribute()) {
    if (a.name() == "axes") out.axes.assign(a.ints().begin(), a.ints().end());
  }
  if (view->input_size() > 1) {
    auto c = constants.find(view->input(1));
    if (c == constants.end()) return std::nullopt;
    for (double v : c->second) out.axes.push_back(static_cast<int64_t>(v));
  }
  if (out.op != "Identity" && out.axes.empty()) return std::nullopt;
  return out;
}

// A float initializer that a comparison reads (x >= grid[:, :-1]: an efficient-KAN's B-spline grid), directly or
// through views of it, is a registered buffer. torch.onnx stores parameters and buffers alike; a comparison gives
// no gradient, and what users compare against is a fixed grid, range or threshold. As a buffer it gets no gradient
// or optimizer state, and arithmetic with it keeps nothing for its gradient (unseen set 17's kan_bspline: the
// grid's Sub / Div kept every B-spline basis, +57 / +254 %).
void MarkComparedInitializersAsBuffers(Model* m) {
  std::set<std::string> compared;
  for (const NodeInfo& n : m->nodes) {
    if (n.op_type != "Less" && n.op_type != "Greater" && n.op_type != "LessOrEqual" &&
        n.op_type != "GreaterOrEqual" && n.op_type != "Equal") {
      continue;
    }
    for (int id : n.inputs) {
      for (int depth = 0; id >= 0 && depth < 8; ++depth) {
        const TensorInfo& t = m->tensors[static_cast<size_t>(id)];
        if (t.kind == TensorKind::kParameter) compared.insert(t.name);
        if (t.producer < 0) break;
        const NodeInfo& p = m->nodes[static_cast<size_t>(t.producer)];
        const bool view = p.op_type == "Slice" || p.op_type == "Unsqueeze" || p.op_type == "Squeeze" ||
                          p.op_type == "Reshape" || p.op_type == "Transpose" || p.op_type == "Expand" ||
                          p.op_type == "Identity" || p.op_type == "Gather";
        if (!view || p.inputs.empty()) break;
        id = p.inputs[0];
      }
    }
  }
  if (!compared.empty()) MarkAsBuffers(compared, m);
}

void ReadType(const onnx::TypeProto& type, TensorInfo* t) {
  if (!type.has_tensor_type()) return;
  const auto& tt = type.tensor_type();
  if (tt.elem_type() != 0) t->dtype = tt.elem_type();
  if (!tt.has_shape()) return;
  t->has_shape = true;
  t->dims.clear();
  t->dim_symbols.clear();
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      t->dims.push_back(d.dim_value());
      t->dim_symbols.emplace_back();
    } else {
      t->dims.push_back(-1);
      t->dim_symbols.push_back(d.has_dim_param() ? d.dim_param() : std::string());
    }
  }
}

// Subgraphs nested deeper than this are not searched for outer reads (a hostile file).
constexpr int kMaxSubgraphDepth = 16;

// The names a subgraph reads from enclosing scopes (what its inputs, initializers and its own
// nodes do not define), nested subgraphs included, in order of first read.
void OuterReads(const onnx::GraphProto& g, int depth, std::vector<std::string>* out,
                std::unordered_set<std::string>* seen) {
  if (depth > kMaxSubgraphDepth) return;
  std::unordered_set<std::string> local;
  for (const auto& i : g.input()) local.insert(i.name());
  for (const auto& i : g.initializer()) local.insert(i.name());
  auto read = [&](const std::string& name) {
    if (!name.empty() && !local.count(name) && seen->insert(name).second) out->push_back(name);
  };
  for (const auto& n : g.node()) {
    for (const std::string& in : n.input()) read(in);
    for (const auto& a : n.attribute()) {
      std::vector<std::string> inner;
      std::unordered_set<std::string> inner_seen;
      if (a.has_g()) OuterReads(a.g(), depth + 1, &inner, &inner_seen);
      for (const auto& sg : a.graphs()) OuterReads(sg, depth + 1, &inner, &inner_seen);
      for (const std::string& name : inner) read(name);
    }
    for (const std::string& o : n.output()) local.insert(o);
  }
}

class Builder {
 public:
  explicit Builder(Model* m) : m_(m) {}

  void Reserve(size_t tensors) { index_.reserve(tensors); }
  int Find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }
  int Add(const std::string& name, TensorKind kind) {
    int id = static_cast<int>(m_->tensors.size());
    TensorInfo t;
    t.name = name;
    t.kind = kind;
    m_->tensors.push_back(std::move(t));
    index_[name] = id;
    return id;
  }

 private:
  Model* m_;
  std::unordered_map<std::string, int> index_;
};

}  // namespace

Result<std::shared_ptr<const Model>> ParseModel(std::string_view bytes, std::string_view name, ShapeSource shapes) {
  const std::string label(name);
  if (bytes.empty()) return MakeError(label + ": empty file, not an ONNX model");
  onnx::ModelProto proto;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    // A model whose subgraphs (If/Loop bodies) nest past protobuf's default limit of 100 messages
    // parses with a higher one; say so instead of calling it truncated. Bounded: the parse reads the
    // same bytes once, 1000 levels deep at most.
    onnx::ModelProto deeper;
    google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(std::min<size_t>(bytes.size(), INT32_MAX)));
    google::protobuf::io::CodedInputStream in(&raw);
    in.SetRecursionLimit(1000);
    if (bytes.size() <= static_cast<size_t>(INT32_MAX) && deeper.ParseFromCodedStream(&in) &&
        in.ConsumedEntireMessage() && static_cast<size_t>(in.CurrentPosition()) == bytes.size()) {
      return MakeError(label + ": subgraphs (If/Loop bodies) nested deeper than the 100 levels an ONNX file may have");
    }
    return MakeError(label + ": not an ONNX model, or truncated (protobuf parsing failed)");
  }
  if (!proto.has_graph() || proto.graph().node_size() == 0) {
    return MakeError(label + ": not an ONNX model, or truncated (no graph nodes)");
  }
  if (proto.ir_version() <= 0 || proto.opset_import_size() == 0) {
    return MakeError(label + ": not an ONNX model, or truncated (no IR version or opset)");
  }

  auto model = std::make_shared<Model>();
  Model& m = *model;
  m.name = label;
  m.description = proto.doc_string();
  Builder b(&m);
  const onnx::GraphProto& g = proto.graph();
  // (Sized once: a graph of 100 000 nodes spent a tenth of its import moving nodes as they grew.)
  m.nodes.reserve(static_cast<size_t>(g.node_size()));
  size_t tensors = static_cast<size_t>(g.initializer_size() + g.input_size());
  for (const auto& n : g.node()) tensors += static_cast<size_t>(n.output_size());
  m.tensors.reserve(tensors);
  b.Reserve(tensors);

  // Which initializers are BatchNormalization running statistics (buffers, not parameters).
  std::unordered_map<std::string, bool> bn_stat;
  for (const auto& n : g.node()) {
    if (n.op_type() == "BatchNormalization") {
      for (int i = 3; i < n.input_size() && i < 5; ++i) bn_stat[n.input(i)] = true;
    }
  }
  // torch names a module's state by its path: "<module>.running_mean" / ".running_var" are a batch
  // norm's buffers. A module that has both, whose forward reads its statistics (a hand-written training
  // batch norm only updates them, which the export drops) and no BatchNormalization reads them, is a
  // frozen batch norm (torchvision.ops.misc.FrozenBatchNorm2d, detectron2's FrozenBatchNorm2d): it
  // registers its "<module>.weight" and ".bias" as buffers too, so its affine gets no gradient and no
  // optimizer state, and x * scale keeps no copy of x for backward.
  {
    auto ends_with = [](const std::string& s, std::string_view tail) {
      return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
    };
    std::unordered_set<std::string> names, read;
    for (const auto& init : g.initializer()) names.insert(init.name());
    for (const auto& n : g.node()) read.insert(n.input().begin(), n.input().end());
    for (const auto& init : g.initializer()) {
      const std::string& name = init.name();
      if (!ends_with(name, ".running_var") || bn_stat.count(name) || !read.count(name)) continue;
      const std::string module = name.substr(0, name.size() - std::string_view(".running_var").size());
      if (!names.count(module + ".running_mean") || bn_stat.count(module + ".running_mean")) continue;
      for (const char* part : {".weight", ".bias", ".running_mean", ".running_var"}) {
        if (names.count(module + part)) bn_stat[module + part] = true;
      }
    }
  }
  for (const auto& init : g.initializer()) {
    if (init.name().empty() || b.Find(init.name()) >= 0) {
      return MakeError(label + ": corrupt ONNX model (initializer with an empty or repeated name)");
    }
    int64_t numel = Numel(init.dims());
    if (numel < 0) return MakeError(label + ": corrupt ONNX model (initializer '" + init.name() + "' has bad dims)");
    bool floating = IsFloat(init.data_type());
    TensorKind kind = !floating ? TensorKind::kConstant
                      : bn_stat.count(init.name()) ? TensorKind::kBuffer
                                                    : TensorKind::kParameter;
    int id = b.Add(init.name(), kind);
    TensorInfo& t = m.tensors[id];
    t.dtype = init.data_type();
    t.has_shape = true;
    t.dims.assign(init.dims().begin(), init.dims().end());
    t.dim_symbols.assign(t.dims.size(), std::string());
    t.has_value = DecodeValue(init, &t.value);
    // A small inline float initializer that is not a weight (a scale, an epsilon)
    // is a constant; a weight is anything stored externally or larger than a few values.
    if (kind == TensorKind::kParameter && t.has_value && numel <= 1 &&
        init.name().rfind("onnx::", 0) == 0) {
      t.kind = TensorKind::kConstant;
    }
    if (t.kind == TensorKind::kParameter) {
      m.parameter_count += static_cast<uint64_t>(numel);
      m.parameter_bytes += static_cast<uint64_t>(numel) * ElementBytes(t.dtype);
    }
  }
  for (const auto& in : g.input()) {
    int id = b.Find(in.name());
    if (id >= 0) continue;  // an initializer listed as input (old exporters)
    if (in.name().empty()) return MakeError(label + ": corrupt ONNX model (graph input without a name)");
    id = b.Add(in.name(), TensorKind::kGraphInput);
    ReadType(in.type(), &m.tensors[id]);
    m.inputs.push_back(id);
  }
  if (m.inputs.empty()) return MakeError(label + ": the model has no inputs");

  for (int ni = 0; ni < g.node_size(); ++ni) {
    const onnx::NodeProto& n = g.node(ni);
    NodeInfo node;
    node.name = n.name().empty() ? n.op_type() + "_" + std::to_string(ni) : n.name();
    node.op_type = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      node.op_type = n.domain() + "." + n.op_type();
    }
    for (const std::string& in : n.input()) {
      if (in.empty()) {
        node.inputs.push_back(-1);
        continue;
      }
      int id = b.Find(in);
      if (id < 0) {
        return MakeError(label + ": corrupt ONNX model (node '" + node.name + "' reads '" + in +
                         "', which nothing produces before it)");
      }
      node.inputs.push_back(id);
      m.tensors[id].consumers.push_back(ni);
    }
    std::vector<std::string> outer;
    std::unordered_set<std::string> outer_seen;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) OuterReads(a.g(), 1, &outer, &outer_seen);
      for (const auto& sg : a.graphs()) OuterReads(sg, 1, &outer, &outer_seen);
    }
    for (const std::string& name : outer) {
      const int id = b.Find(name);  // a name defined nowhere before: left to ONNX's checks
      if (id < 0 || std::find(node.inputs.begin(), node.inputs.end(), id) != node.inputs.end()) continue;
      node.inputs.push_back(id);
      m.tensors[id].consumers.push_back(ni);
      ++node.implicit_inputs;
    }
    if (n.op_type() == "If") {
      auto position = [&](const std::string& name) -> int {
        const int id = b.Find(name);
        auto it = std::find(node.inputs.begin(), node.inputs.end(), id);
        return id < 0 || it == node.inputs.end() ? -1 : static_cast<int>(it - node.inputs.begin());
      };
      for (const auto& a : n.attribute()) {
        if (!a.has_g() || (a.name() != "then_branch" && a.name() != "else_branch")) continue;
        if (auto v = ReadBranchView(a.g(), position)) node.branch_views[a.name()] = std::move(*v);
      }
    }
    for (const auto& a : n.attribute()) {
      if (a.name() != "body" || !a.has_g()) continue;
      for (const auto& bn : a.g().node()) {
        if (bn.op_type() != "Gather" || bn.input_size() < 1) continue;
        const int id = b.Find(bn.input(0));
        if (id >= 0 && m.tensors[id].kind == TensorKind::kParameter &&
            std::find(outer.begin(), outer.end(), bn.input(0)) != outer.end()) {
          node.body_gathers.push_back(id);
        }
      }
    }
    for (const auto& a : n.attribute()) {
      // libonnx's shape inference reads an attribute's list and integer whatever its type field says
      // (a wrong type included: the fuzzer's strides [0, 0] typed SPARSE_TENSOR divided by zero in
      // convPoolShapeInference), so the checks see every one present.
      if (a.ints_size() > 0) node.ints_attrs[a.name()].assign(a.ints().begin(), a.ints().end());
      if (a.has_i()) node.int_attrs[a.name()] = a.i();
      switch (AttributeType(a)) {
        case onnx::AttributeProto::INT: node.int_attrs[a.name()] = a.i(); break;
        case onnx::AttributeProto::FLOAT: node.float_attrs[a.name()] = a.f(); break;
        case onnx::AttributeProto::INTS:
          node.ints_attrs[a.name()].assign(a.ints().begin(), a.ints().end());
          break;
        case onnx::AttributeProto::STRING: node.string_attrs[a.name()] = a.s(); break;
        case onnx::AttributeProto::TENSOR: {
          // Small tensor attributes (ConstantOfShape's fill value): first element and type.
          std::vector<double> v;
          if (DecodeValue(a.t(), &v) && !v.empty()) node.float_attrs[a.name()] = v[0];
          node.int_attrs[a.name() + ".dtype"] = a.t().data_type();
          break;
        }
        default: break;
      }
    }
    for (const std::string& out : n.output()) {
      if (out.empty()) {
        node.outputs.push_back(-1);
        continue;
      }
      if (b.Find(out) >= 0) {
        return MakeError(label + ": corrupt ONNX model (tensor '" + out + "' is produced twice)");
      }
      int id = b.Add(out, n.op_type() == "Constant" ? TensorKind::kConstant : TensorKind::kActivation);
      m.tensors[id].producer = ni;
      node.outputs.push_back(id);
    }
    if (n.op_type() == "Constant" && !node.outputs.empty() && node.outputs[0] >= 0) {
      TensorInfo& t = m.tensors[node.outputs[0]];
      for (const auto& a : n.attribute()) {
        if (a.name() == "value" && a.has_t()) {
          t.dtype = a.t().data_type();
          int64_t numel = Numel(a.t().dims());
          if (numel >= 0) {
            t.has_shape = true;
            t.dims.assign(a.t().dims().begin(), a.t().dims().end());
            t.dim_symbols.assign(t.dims.size(), std::string());
          }
          t.has_value = DecodeValue(a.t(), &t.value);
        } else if (a.name() == "value_int") {
          t.dtype = kInt64, t.has_shape = true, t.has_value = true;
          t.value = {static_cast<double>(a.i())};
        } else if (a.name() == "value_ints") {
          t.dtype = kInt64, t.has_shape = true, t.has_value = true;
          t.dims = {a.ints_size()};
          t.dim_symbols = {std::string()};
          for (int64_t v : a.ints()) t.value.push_back(static_cast<double>(v));
        } else if (a.name() == "value_float") {
          t.dtype = kFloat, t.has_shape = true, t.has_value = true;
          t.value = {a.f()};
        }
      }
    }
    m.nodes.push_back(std::move(node));
  }
  for (const auto& out : g.output()) {
    int id = b.Find(out.name());
    if (id < 0) return MakeError(label + ": corrupt ONNX model (graph output '" + out.name() + "' is never produced)");
    m.outputs.push_back(id);
  }
  if (m.outputs.empty()) return MakeError(label + ": the model has no outputs");

  // Refuse what would crash ONNX's shape inference or make shapes meaningless.
  int64_t opset = 1;
  for (const auto& o : proto.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  }
  // A node with fewer inputs or outputs than its operator's schema requires (a fuzzed Flatten with
  // none) would be indexed past its ends by the memory rules: refused. The schemas are the ones
  // shape inference loads below anyway; the embedded zoo (stored shapes) is not checked.
  if (shapes == ShapeSource::kInfer) {
    for (const auto& n : proto.graph().node()) {
      if (n.op_type().empty()) return MakeError(label + ": malformed ONNX model (a node has no operator type)");
      if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), "");
      if (schema == nullptr) continue;
      if (n.input_size() < schema->min_input() || n.output_size() < schema->min_output()) {
        return MakeError(label + ": malformed ONNX model (node '" + n.name() + "' (" + n.op_type() + ") has " +
                         std::to_string(n.input_size()) + " inputs and " + std::to_string(n.output_size()) +
                         " outputs; opset " + std::to_string(opset) + " requires at least " +
                         std::to_string(schema->min_input()) + " and " + std::to_string(schema->min_output()) + ")");
      }
    }
  }
  if (Status s = CheckAttributes(m, opset, label); !s) return MakeError(s.error());
  m.opset = opset;
  if (auto w = DetectInferenceExport(m)) m.warnings.push_back(*w);
  MarkComparedInitializersAsBuffers(&m);
  for (const auto& entry : proto.metadata_props()) {
    if (entry.key() == kInplaceMetadataKey) ReadInplaceMetadata(entry.value(), &m);
    if (entry.key() == kBuffersMetadataKey) ReadBuffersMetadata(entry.value(), &m);
    if (entry.key() == kFrozenMetadataKey) ReadFrozenMetadata(entry.value(), &m);
    if (entry.key() == kLocalsMetadataKey) ReadLocalsMetadata(entry.value(), &m);
    if (entry.key() == kCheckpointedMetadataKey) ReadCheckpointedMetadata(entry.value(), &m);
    if (entry.key() == kCheckpointedReentrantMetadataKey) ReadCheckpointedReentrantMetadata(entry.value(), &m);
    if (entry.key() == kNoGradMetadataKey || entry.key() == kDetachedMetadataKey) {
      ReadGradModeMetadata(entry.key(), entry.value(), &m);
    }
  }
  MarkNamedTablesAsBuffers(&m);

  // ONNX's own shape inference: symbolic shapes for every tensor it can reach.
  // Node-level failures are tolerated (error_mode 0); the planner's own shape
  // pass fills what ONNX cannot (e.g. Reshape targets computed from Shape).
  // A stored annotation is what this call wrote (planner_test checks the zoo).
  if (shapes == ShapeSource::kInfer) {
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/true);
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception&) {
    }
  }
  for (const auto& vi : proto.graph().value_info()) {
    int id = b.Find(vi.name());
    if (id >= 0 && m.tensors[id].kind == TensorKind::kActivation) ReadType(vi.type(), &m.tensors[id]);
  }
  for (const auto& vi : proto.graph().output()) {
    int id = b.Find(vi.name());
    if (id >= 0 && m.tensors[id].kind == TensorKind::kActivation) ReadType(vi.type(), &m.tensors[id]);
  }
  for (int ni = 0; ni < proto.graph().node_size(); ++ni) {
    for (const auto& a : proto.graph().node(ni).attribute()) {
      if (!a.has_g()) continue;
      std::vector<TensorInfo>& outs = m.nodes[ni].subgraph_outputs[a.name()];
      for (const auto& vi : a.g().output()) {
        outs.emplace_back();
        outs.back().name = vi.name();
        ReadType(vi.type(), &outs.back());
      }
    }
  }
  return std::shared_ptr<const Model>(std::move(model));
}

}  // namespace oomguard::plan
