#include "saved_tensor_rules.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>

#include "conv_scratch_table.h"
#include "einsum_run.h"
#include "elementwise_scratch.h"
#include "op_table.h"
#include "op_table_match.h"

namespace oomguard::plan {
namespace {

bool IsConstant(const Model& m, int id) { return id >= 0 && m.tensors[id].kind == TensorKind::kConstant; }

// The only node consuming tensor `id` (or -1).
int SoleConsumer(const Model& m, int id) {
  if (id < 0 || m.tensors[id].consumers.size() != 1) return -1;
  return m.tensors[id].consumers[0];
}

bool ScalarNear(const ConcreteShapes& s, int id, double want) {
  if (id < 0 || !s.tensors[id].has_value || s.tensors[id].value.size() != 1) return false;
  return std::fabs(s.tensors[id].value[0] - want) < 1e-3 * std::max(1.0, std::fabs(want));
}

int Other(const NodeInfo& n, int id) {
  if (n.inputs.size() != 2) return -1;
  return n.inputs[0] == id ? n.inputs[1] : n.inputs[1] == id ? n.inputs[0] : -1;
}

class Fuser {
 public:
  Fuser(const Model& m, const ConcreteShapes& s) : m_(m), s_(s), used_(m.nodes.size(), false) {}

  std::vector<LogicalOp> Run() {
    std::vector<LogicalOp> ops;
    // The operator table's patterns of several nodes first, longest first (op_table_match.cc says
    // which rows); each runs at its last node. Single-node rows come after the hand fusions.
    std::map<int, LogicalOp> table_ops;
    for (const TableMatch& mt : MatchTableRows(m_, s_, EmbeddedOpTable(), &used_, 2)) {
      LogicalOp op = TableOp(m_, EmbeddedOpTable(), mt);
      table_ops.emplace(op.nodes.back(), std::move(op));
    }
    for (size_t i = 0; i < m_.nodes.size(); ++i) {
      if (auto t = table_ops.find(static_cast<int>(i)); t != table_ops.end()) ops.push_back(std::move(t->second));
      if (used_[i]) continue;
      const NodeInfo& n = m_.nodes[i];
      if (n.op_type == "Constant") continue;
      LogicalOp op;
      const int ni = static_cast<int>(i);
      if (Gelu(ni, &op) || Silu(ni, &op) || LayerNorm(ni, &op) || GroupNorm(ni, &op) || HardSwish(ni, &op) ||
          Mish(ni, &op) || PaddedAveragePool(ni, &op)) {
        for (int k : op.nodes) used_[k] = true;
        ops.push_back(std::move(op));
        continue;
      }
      if (TableMatch mt; MatchDrivingNode(m_, s_, EmbeddedOpTable(), ni, &mt)) {
        used_[i] = true;
        ops.push_back(TableOp(m_, EmbeddedOpTable(), mt));
        continue;
      }
      op.kind = n.op_type;
      op.nodes = {static_cast<int>(i)};
      op.inputs = n.inputs;
      op.outputs = n.outputs;
      used_[i] = true;
      ops.push_back(std::move(op));
    }
    return ops;
  }

 private:
  const NodeInfo& N(int i) const { return m_.nodes[i]; }
  bool Is(int node, const char* op) const { return node >= 0 && !used_[node] && N(node).op_type == op; }
  int Out(int node) const { return N(node).outputs.empty() ? -1 : N(node).outputs[0]; }

  // x / sqrt(2) -> Erf -> + 1 -> x * . -> * 0.5
  bool Gelu(int i, LogicalOp* op) {
    const NodeInfo& div = N(i);
    if (div.op_type != "Div" || div.inputs.size() != 2 || !ScalarNear(s_, div.inputs[1], std::sqrt(2.0))) return false;
    int x = div.inputs[0];
    int erf = SoleConsumer(m_, Out(i));
    if (!Is(erf, "Erf")) return false;
    int add = SoleConsumer(m_, Out(erf));
    if (!Is(add, "Add") || !ScalarNear(s_, Other(N(add), Out(erf)), 1.0)) return false;
    int mul = SoleConsumer(m_, Out(add));
    if (!Is(mul, "Mul") || Other(N(mul), Out(add)) != x) return false;
    int half = SoleConsumer(m_, Out(mul));
    if (!Is(half, "Mul") || !ScalarNear(s_, Other(N(half), Out(mul)), 0.5)) return false;
    *op = LogicalOp{"Gelu", {i, erf, add, mul, half}, {x}, {Out(half)}};
    return true;
  }

  // x * f(x), f's output used nowhere else: one logical operator `kind` over x.
  bool SelfGated(int i, const char* f, const char* kind, LogicalOp* op) {
    const NodeInfo& gate = N(i);
    if (gate.op_type != f || gate.inputs.empty()) return false;
    int x = gate.inputs[0];
    int mul = SoleConsumer(m_, Out(i));
    if (!Is(mul, "Mul") || Other(N(mul), Out(i)) != x) return false;
    *op = LogicalOp{kind, {i, mul}, {x}, {Out(mul)}};
    return true;
  }

  // silu: x * sigmoid(x).
  bool Silu(int i, LogicalOp* op) { return SelfGated(i, "Sigmoid", "Silu", op); }

  // mean = ReduceMean(x); d = x - mean; var = ReduceMean(d^2); y = d / sqrt(var + eps) [* w + b]
  // is layer_norm's decomposition only over x's trailing axes (layer_norm normalizes the last
  // dims); over other axes (a channels-first LayerNorm written with mean/var over dim 1) each
  // operator runs as written and autograd keeps what each one saves.
  bool LayerNorm(int i, LogicalOp* op) {
    const NodeInfo& mean = N(i);
    if (mean.op_type != "ReduceMean" || mean.inputs.empty()) return false;
    int x = mean.inputs[0];
    if (!OverTrailingAxes(mean, x)) return false;
    int sub = SoleConsumer(m_, Out(i));
    if (!Is(sub, "Sub") || N(sub).inputs.size() != 2 || N(sub).inputs[0] != x) return false;
    const auto& dc = m_.tensors[Out(sub)].consumers;
    if (dc.size() != 2) return false;
    int pow = -1, div = -1;
    for (int c : dc) {
      if (Is(c, "Pow")) pow = c;
      if (Is(c, "Div")) div = c;
    }
    if (pow < 0 || div < 0) return false;
    int mean2 = SoleConsumer(m_, Out(pow));
    if (!Is(mean2, "ReduceMean")) return false;
    int add = SoleConsumer(m_, Out(mean2));
    if (!Is(add, "Add")) return false;
    int sqrt = SoleConsumer(m_, Out(add));
    if (!Is(sqrt, "Sqrt") || SoleConsumer(m_, Out(sqrt)) != div) return false;
    op->kind = "LayerNorm";
    op->nodes = {i, sub, pow, mean2, add, sqrt, div};
    op->inputs = {x};
    int last = div;
    int mul = SoleConsumer(m_, Out(div));
    if (Is(mul, "Mul") && IsParam(m_, Other(N(mul), Out(div)))) {
      op->nodes.push_back(mul);
      op->inputs.push_back(Other(N(mul), Out(div)));
      last = mul;
      int bias = SoleConsumer(m_, Out(mul));
      if (Is(bias, "Add") && IsParam(m_, Other(N(bias), Out(mul)))) {
        op->nodes.push_back(bias);
        op->inputs.push_back(Other(N(bias), Out(mul)));
        last = bias;
      }
    }
    op->outputs = {Out(last)};
    return true;
  }

  // Whether a reduction's axes are the last ones of x (unknown axes or rank: assumed so).
  bool OverTrailingAxes(const NodeInfo& reduce, int x) const {
    auto ax = reduce.ints_attrs.find("axes");
    if (ax == reduce.ints_attrs.end() || ax->second.empty() || x < 0 || s_.tensors[x].dims.empty()) return true;
    const int64_t rank = static_cast<int64_t>(s_.tensors[x].dims.size());
    const int64_t n = static_cast<int64_t>(ax->second.size());
    for (int64_t a : ax->second) {
      const int64_t axis = a < 0 ? a + rank : a;
      if (axis < rank - n || axis >= rank) return false;
    }
    return true;
  }

  // A parameter, or an Unsqueeze view of one (how group_norm's affine weight reaches its Mul).
  int ParamOrView(int id) const {
    if (IsParam(m_, id) || IsConstant(m_, id)) return id;
    int p = id >= 0 ? m_.tensors[id].producer : -1;
    if (p >= 0 && (N(p).op_type == "Unsqueeze" || N(p).op_type == "Identity") && !N(p).inputs.empty() &&
        (IsParam(m_, N(p).inputs[0]) || IsConstant(m_, N(p).inputs[0]))) {
      return id;
    }
    return -1;
  }

  // group_norm: Reshape(x, [N, G, -1]) -> InstanceNormalization -> Reshape(Shape(x)) [-> Mul w -> Add b].
  // PyTorch runs one native_group_norm that keeps x and per-(sample, group) mean and rstd.
  bool GroupNorm(int i, LogicalOp* op) {
    const NodeInfo& r1 = N(i);
    if (r1.op_type != "Reshape" || r1.inputs.empty()) return false;
    int in_norm = SoleConsumer(m_, Out(i));
    if (!Is(in_norm, "InstanceNormalization")) return false;
    int r2 = SoleConsumer(m_, Out(in_norm));
    if (!Is(r2, "Reshape")) return false;
    *op = LogicalOp{"GroupNorm", {i, in_norm, r2}, {r1.inputs[0]}, {Out(r2)}};
    int last = r2;
    int mul = SoleConsumer(m_, Out(r2));
    if (Is(mul, "Mul") && ParamOrView(Other(N(mul), Out(r2))) >= 0) {
      op->nodes.push_back(mul);
      op->inputs.push_back(Other(N(mul), Out(r2)));
      last = mul;
      int add = SoleConsumer(m_, Out(mul));
      if (Is(add, "Add") && ParamOrView(Other(N(add), Out(mul))) >= 0) {
        op->nodes.push_back(add);
        op->inputs.push_back(Other(N(add), Out(mul)));
        last = add;
      }
    }
    op->outputs = {Out(last)};
    return true;
  }

  // hardswish below opset 14: x * HardSigmoid(x) (alpha 1/6, beta 0.5).
  bool HardSwish(int i, LogicalOp* op) {
    auto alpha = N(i).float_attrs.find("alpha");
    bool sixth = alpha != N(i).float_attrs.end() && std::fabs(alpha->second - 1.0 / 6.0) <= 1e-4;
    return sixth && SelfGated(i, "HardSigmoid", "HardSwish", op);
  }

  // mish: x * tanh(softplus(x)); PyTorch keeps x only.
  bool Mish(int i, LogicalOp* op) {
    const NodeInfo& sp = N(i);
    if (sp.op_type != "Softplus" || sp.inputs.empty()) return false;
    int x = sp.inputs[0];
    int tanh = SoleConsumer(m_, Out(i));
    if (!Is(tanh, "Tanh")) return false;
    int mul = SoleConsumer(m_, Out(tanh));
    if (!Is(mul, "Mul") || Other(N(mul), Out(tanh)) != x) return false;
    *op = LogicalOp{"Mish", {i, tanh, mul}, {x}, {Out(mul)}};
    return true;
  }

  // avg_pool exports its padding as a Pad node; PyTorch pads inside the pooling and keeps the
  // unpadded input.
  bool PaddedAveragePool(int i, LogicalOp* op) {
    const NodeInfo& pad = N(i);
    if (pad.op_type != "Pad" || pad.inputs.empty()) return false;
    int pool = SoleConsumer(m_, Out(i));
    if (!Is(pool, "AveragePool")) return false;
    *op = LogicalOp{"AveragePool", {i, pool}, {pad.inputs[0]}, {Out(pool)}};
    return true;
  }

  const Model& m_;
  const ConcreteShapes& s_;
  std::vector<bool> used_;
};

// How a tensor's dims lie in memory in PyTorch, outermost first (identity: contiguous), or nullopt
// for a view that is no permutation of a dense tensor (a slice or select along an inner axis, an
// expand). A transpose permutes its input's order; an elementwise operator's result follows its
// operands (TensorIterator: for each pair of dims the first operand that is not broadcast along
// them decides), so x.transpose(1, 2) + y keeps x's memory order and transposing it back is
// contiguous again. Every other operator makes a contiguous result.
// Each call walks at most kBudget producers (once each), so a hostile graph cannot make it slow.
class DimOrder {
 public:
  DimOrder(const Model& m, const ConcreteShapes& s) : m_(m), s_(s) {}
  std::optional<std::vector<int>> Of(int id, int depth = 0);

 private:
  std::optional<std::vector<int>> Compute(int id, int depth);
  static constexpr int kBudget = 512;
  const Model& m_;
  const ConcreteShapes& s_;
  std::map<int, std::optional<std::vector<int>>> memo_;
  int budget_ = kBudget;
};

bool IsDenseOrder(const std::vector<int64_t>& dims, const std::vector<int>& order) {
  int last = -1;
  for (int d : order) {
    if (d < 0 || d >= static_cast<int>(dims.size()) || dims[d] == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

// Whether `order` (DimOrder, outermost first) lays a 4-D tensor of `dims` out channels-last: N, H, W,
// C, size-1 dims left out (they have no stride that matters).
bool IsChannelsLastOrder(const std::vector<int64_t>& dims, const std::vector<int>& order) {
  if (dims.size() != 4) return false;
  std::vector<int> big, nhwc;
  for (int d : order) {
    if (d >= 0 && d < 4 && dims[static_cast<size_t>(d)] != 1) big.push_back(d);
  }
  for (int d : {0, 2, 3, 1}) {
    if (dims[static_cast<size_t>(d)] != 1) nhwc.push_back(d);
  }
  return big == nhwc;
}

std::optional<std::vector<int64_t>> ViewStrides(const Model& m, const ConcreteShapes& s, int id, int depth = 0,
                                                DimOrder* orders = nullptr);

// Whether strides lay `dims` out contiguously (torch's is_contiguous: size-1 dims' strides do not matter).
bool ContiguousStrides(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  if (dims.size() != strides.size()) return false;
  int64_t expected = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= dims[i];
  }
  return true;
}

// Whether a tensor is a non-contiguous view in PyTorch: its dims out of memory order (DimOrder), or in
// order with gaps between them (a piece of chunk() or select() viewed to another shape: the order of a
// view of a view does not show that; its strides do, ViewStrides). reshape() of such a tensor copies
// unless view() can make its shape (ReshapeIsView).
bool NonContiguous(const Model& m, const ConcreteShapes& s, int id) {
  if (id < 0 || !s.tensors[id].known) return false;
  DimOrder orders(m, s);
  auto order = orders.Of(id);
  if (!order || !IsDenseOrder(s.tensors[id].dims, *order)) return true;
  auto strides = ViewStrides(m, s, id, 0, &orders);
  return strides && !ContiguousStrides(s.tensors[id].dims, *strides);
}

// Whether a tensor is a broadcast (stride-0) view: an Expand that adds elements, seen through
// views (a learned query of shape [L, C] expanded over the batch, then transposed by
// nn.MultiheadAttention's batch_first handling).
bool ExpandedView(const Model& m, const ConcreteShapes& s, int id) {
  static const std::set<std::string> kViews = {"Transpose", "Unsqueeze", "Squeeze", "Identity"};
  for (int depth = 0; depth < 8 && id >= 0; ++depth) {
    const int p = m.tensors[id].producer;
    if (p < 0 || m.nodes[p].inputs.empty()) return false;
    const NodeInfo& n = m.nodes[p];
    const int from = n.inputs[0];
    if (n.op_type == "Expand") {
      return from >= 0 && s.tensors[id].known && s.tensors[from].known &&
             s.tensors[id].Elements() > s.tensors[from].Elements();
    }
    if (!kViews.count(n.op_type)) return false;
    id = from;
  }
  return false;
}

bool ReshapeIsView(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                   const std::vector<int64_t>& to, std::vector<int64_t>* to_strides = nullptr);

// The element strides of a view in PyTorch, traced back through view ops (Transpose, Slice, Split,
// Squeeze, Unsqueeze, Identity, Expand) to a tensor laid out densely in its own order; nullopt where
// a link is none of these or the source is not dense. A Slice or Split keeps its source's strides
// (a piece along an axis leaves a gap the outer dims step over); Expand gives a broadcast dim stride 0.
std::optional<std::vector<int64_t>> ViewStrides(const Model& m, const ConcreteShapes& s, int id, int depth,
                                                DimOrder* orders) {
  if (id < 0 || !s.tensors[id].known || depth > 16) return std::nullopt;
  const std::vector<int64_t>& dims = s.tensors[id].dims;
  auto dense = [&] {
    std::vector<int64_t> st(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) st[i - 1] = st[i] * std::max<int64_t>(dims[i], 1);
    return st;
  };
  const int p = m.tensors[id].producer;
  if (p < 0) return dense();
  const NodeInfo& n = m.nodes[p];
  static const std::set<std::string> kViews = {"Transpose", "Slice", "Split", "Squeeze", "Unsqueeze", "Identity",
                                               "Expand", "Reshape", "Gather"};
  const int in = n.inputs.empty() ? -1 : n.inputs[0];
  auto by_order = [&]() -> std::optional<std::vector<int64_t>> {
    auto order = orders ? orders->Of(id) : DimOrder(m, s).Of(id);
    if (order && IsDenseOrder(dims, *order)) return dense();
    return std::nullopt;
  };
  // select() (Gather of one index from a tensor that is no weight) views its input without that dim.
  const bool select = n.op_type == "Gather" && n.inputs.size() > 1 && n.inputs[1] >= 0 &&
                      s.tensors[n.inputs[1]].known && s.tensors[n.inputs[1]].Elements() <= 1 && in >= 0 &&
                      !IsParam(m, in);
  if (!kViews.count(n.op_type) || (n.op_type == "Gather" && !select) || IsFlip(m, n) || in < 0 ||
      !s.tensors[in].known) {
    return by_order();
  }
  auto from = ViewStrides(m, s, in, depth + 1, orders);
  const std::vector<int64_t>& in_dims = s.tensors[in].dims;
  const std::string& k = n.op_type;
  if (k == "Reshape") {
    // The strides view() gives (a piece of chunk() viewed as [N, L, heads, d] keeps the gaps between
    // its rows); a reshape that copies (the Reshape rule) makes a contiguous result.
    if (!from) return by_order();
    std::vector<int64_t> to;
    const bool lone_sample = s.batch == 1 && !in_dims.empty() && in_dims[0] == 1;
    if (dims != in_dims && !(lone_sample && !ContiguousStrides(in_dims, *from)) &&
        ReshapeIsView(in_dims, *from, dims, &to)) {
      return to;
    }
    return dense();
  }
  if (!from) return std::nullopt;
  if (k == "Gather") {
    int64_t axis = 0;
    if (auto it = n.int_attrs.find("axis"); it != n.int_attrs.end()) axis = it->second;
    if (axis < 0) axis += static_cast<int64_t>(in_dims.size());
    if (axis < 0 || axis >= static_cast<int64_t>(in_dims.size()) || from->size() != in_dims.size()) {
      return std::nullopt;
    }
    if (dims.size() == in_dims.size()) return from;  // an index of shape [1] keeps the dim
    if (dims.size() + 1 != in_dims.size()) return std::nullopt;
    std::vector<int64_t> st = *from;
    st.erase(st.begin() + axis);
    return st;
  }
  if (k == "Slice" || k == "Split") {
    if (in_dims.size() != dims.size()) return std::nullopt;
    return from;
  }
  if (k == "Transpose") {
    std::vector<int64_t> perm;
    if (auto it = n.ints_attrs.find("perm"); it != n.ints_attrs.end()) perm = it->second;
    if (perm.empty()) {
      for (size_t i = dims.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    }
    if (perm.size() != dims.size() || from->size() != dims.size()) return std::nullopt;
    std::vector<int64_t> st(dims.size());
    for (size_t j = 0; j < perm.size(); ++j) {
      if (perm[j] < 0 || perm[j] >= static_cast<int64_t>(perm.size())) return std::nullopt;
      st[j] = (*from)[static_cast<size_t>(perm[j])];
    }
    return st;
  }
  if (k == "Expand") {  // numpy broadcasting: dims aligned from the right
    if (dims.size() < in_dims.size()) return std::nullopt;
    const size_t lead = dims.size() - in_dims.size();
    std::vector<int64_t> st(dims.size(), 0);
    for (size_t i = 0; i < in_dims.size(); ++i) {
      st[lead + i] = in_dims[i] == dims[lead + i] ? (*from)[i] : 0;
    }
    return st;
  }
  // Squeeze, Unsqueeze, Identity: the dims larger than 1 keep their strides in order; a size-1
  // dim's stride never matters.
  std::vector<int64_t> big;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    if (in_dims[i] != 1) big.push_back((*from)[i]);
  }
  std::vector<int64_t> st(dims.size(), 1);
  size_t next = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (next >= big.size()) return std::nullopt;
    st[i] = big[next++];
  }
  if (next != big.size()) return std::nullopt;
  return st;
}

// Whether view() can give a tensor of `dims` and `strides` the shape `to` without a copy: PyTorch's
// computeStride (aten/src/ATen/TensorUtils.cpp), which reshape() tries before it copies. Splitting a
// dim always can (a chunk of qkv viewed as [N, L, heads, d]); merging two dims only where the outer
// one steps over the inner one exactly.
bool ReshapeIsView(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                   const std::vector<int64_t>& to, std::vector<int64_t>* to_strides) {
  if (dims.empty() || dims.size() != strides.size()) return false;
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  if (numel == 0) return false;
  std::vector<int64_t> new_strides(to.size(), 0);
  int view_d = static_cast<int>(to.size()) - 1;
  int64_t chunk_base_stride = strides.back(), tensor_numel = 1, view_numel = 1;
  for (int tensor_d = static_cast<int>(dims.size()) - 1; tensor_d >= 0; --tensor_d) {
    const size_t t = static_cast<size_t>(tensor_d);
    tensor_numel *= dims[t];
    if (tensor_d == 0 || (dims[t - 1] != 1 && strides[t - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || to[static_cast<size_t>(view_d)] == 1)) {
        new_strides[static_cast<size_t>(view_d)] = view_numel * chunk_base_stride;
        view_numel *= to[static_cast<size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = strides[t - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return false;
  if (to_strides) *to_strides = std::move(new_strides);
  return true;
}

// Whether reshape() of a view with `dims` and `strides` to [product of all but the last dim, last]
// must copy: the leading dims larger than 1 cannot be merged into one stride (PyTorch's
// computeStride).
bool LeadingFoldCopies(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  int inner = -1;  // the innermost leading dim larger than 1 seen so far, walking outwards
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    if (dims[static_cast<size_t>(i)] == 1) continue;
    if (inner >= 0 && strides[static_cast<size_t>(i)] !=
                          strides[static_cast<size_t>(inner)] * dims[static_cast<size_t>(inner)]) {
      return true;
    }
    inner = i;
  }
  return false;
}

// matmul() of two batched operands runs bmm on each reshaped to [batch, n, m]: a view where the
// batch dims lie next to one another in memory, in their own order; a copy otherwise (q, k and v
// permuted out of one qkv projection, k transposed), and bmm keeps that copy, not the storage it
// came from.
bool BatchFoldCopies(const Model& m, const ConcreteShapes& s, int id) {
  if (id < 0 || !s.tensors[id].known) return false;
  const std::vector<int64_t>& dims = s.tensors[id].dims;
  const int batch_dims = static_cast<int>(dims.size()) - 2;
  auto order = DimOrder(m, s).Of(id);
  if (!order) return false;
  int position = 0, previous = -1, previous_position = -1;
  for (int d : *order) {  // outermost first; size-1 dims have no stride that matters
    if (d < 0 || d >= static_cast<int>(dims.size()) || dims[d] == 1) continue;
    if (d < batch_dims) {
      if (previous >= 0 && (position != previous_position + 1 || d < previous)) return true;
      previous = d;
      previous_position = position;
    }
    ++position;
  }
  return false;
}

// Whether `order` (DimOrder) names each of `rank` dims once.
bool IsPermutation(const std::vector<int>& order, size_t rank) {
  if (order.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int d : order) {
    if (d < 0 || d >= static_cast<int>(rank) || seen[static_cast<size_t>(d)]) return false;
    seen[static_cast<size_t>(d)] = true;
  }
  return true;
}

bool IsElementwise(const std::string& k) {
  static const std::set<std::string> kinds = {
      "Add", "Sub", "Mul", "Div", "Pow", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "Celu",
      "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs", "Clip", "HardSigmoid", "HardSwish", "Softplus", "PRelu",
      "Reciprocal", "Sin", "Cos", "Cast", "Dropout"};
  return kinds.count(k) > 0;
}

std::optional<std::vector<int>> DimOrder::Of(int id, int depth) {
  if (auto it = memo_.find(id); it != memo_.end()) return it->second;
  auto order = Compute(id, depth);
  memo_.emplace(id, order);
  return order;
}

std::optional<std::vector<int>> DimOrder::Compute(int id, int depth) {
  const Model& m = m_;
  const ConcreteShapes& s = s_;
  const int rank = static_cast<int>(s.tensors[id].dims.size());
  std::vector<int> identity(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) identity[static_cast<size_t>(i)] = i;
  int p = m.tensors[id].producer;
  if (p < 0 || depth > 32 || --budget_ < 0) return identity;
  const NodeInfo& n = m.nodes[p];
  const std::string& k = n.op_type;
  int in = n.inputs.empty() ? -1 : n.inputs[0];
  if (in < 0 || !s.tensors[in].known) return identity;
  const auto& in_dims = s.tensors[in].dims;
  auto leading = [&](size_t axis) {  // product of the input's dims before `axis`
    int64_t prod = 1;
    for (size_t i = 0; i < axis && i < in_dims.size(); ++i) prod *= in_dims[i];
    return prod;
  };
  // The input's order carried over to a result that only adds or drops size-1 dims: the k-th dim
  // larger than 1 of the one is the k-th of the other.
  auto same_big_dims = [&](const std::optional<std::vector<int>>& from) -> std::optional<std::vector<int>> {
    if (!from) return std::nullopt;
    if (IsDenseOrder(in_dims, *from)) return identity;
    std::vector<int> in_big, out_big;
    for (int i = 0; i < static_cast<int>(in_dims.size()); ++i) {
      if (in_dims[i] != 1) in_big.push_back(i);
    }
    for (int i = 0; i < rank; ++i) {
      if (s.tensors[id].dims[i] != 1) out_big.push_back(i);
    }
    if (in_big.size() != out_big.size()) return std::nullopt;
    std::vector<int> order;
    for (int d : *from) {
      auto it = std::find(in_big.begin(), in_big.end(), d);
      if (it != in_big.end()) order.push_back(out_big[static_cast<size_t>(it - in_big.begin())]);
    }
    for (int i = 0; i < rank; ++i) {
      if (s.tensors[id].dims[i] == 1) order.push_back(i);
    }
    return order;
  };
  if (k == "Transpose") {
    std::vector<int64_t> perm;
    if (auto it = n.ints_attrs.find("perm"); it != n.ints_attrs.end()) perm = it->second;
    if (perm.empty()) {
      for (int i = rank; i-- > 0;) perm.push_back(i);
    }
    auto from = Of(in, depth + 1);
    if (!from) return std::nullopt;
    if (perm.size() != from->size()) return identity;
    std::vector<int> inverse(perm.size(), 0);
    for (size_t j = 0; j < perm.size(); ++j) {
      if (perm[j] < 0 || perm[j] >= static_cast<int64_t>(perm.size())) return identity;
      inverse[static_cast<size_t>(perm[j])] = static_cast<int>(j);
    }
    std::vector<int> order;
    for (int d : *from) order.push_back(inverse[static_cast<size_t>(d)]);
    return order;
  }
  if (k == "Expand") return std::nullopt;
  if (k == "Slice" || k == "Split") {
    auto from = Of(in, depth + 1);
    // A piece of a permuted tensor keeps its strides, so its dims keep their order in memory (q, k
    // and v split out of one permuted qkv projection); it is no denser than the whole.
    if (from && !IsDenseOrder(in_dims, *from)) return from->size() == static_cast<size_t>(rank) ? from : std::nullopt;
    const auto& after = s.tensors[id].dims;
    for (size_t a = 0; a < in_dims.size() && a < after.size(); ++a) {
      if (in_dims[a] != after[a] && leading(a) > 1) return std::nullopt;
    }
    return from ? std::optional<std::vector<int>>(identity) : std::nullopt;
  }
  if (k == "Gather" && n.inputs.size() > 1 && n.inputs[1] >= 0 && s.tensors[n.inputs[1]].Elements() <= 1 &&
      m.tensors[in].kind == TensorKind::kActivation) {
    int64_t axis = 0;
    if (auto it = n.int_attrs.find("axis"); it != n.int_attrs.end()) axis = it->second;
    if (axis < 0) axis += static_cast<int64_t>(in_dims.size());
    auto from = Of(in, depth + 1);
    if (from && !IsDenseOrder(in_dims, *from) && from->size() == static_cast<size_t>(rank) + 1) {
      std::vector<int> order;  // one index along `axis` (qkv[0]): the other dims keep their order
      for (int d : *from) {
        if (d != axis) order.push_back(d > axis ? d - 1 : d);
      }
      return order;
    }
    if (axis > 0 && leading(static_cast<size_t>(axis)) > 1) return std::nullopt;
    if (from && !IsDenseOrder(in_dims, *from)) return std::nullopt;
    return from ? std::optional<std::vector<int>>(identity) : std::nullopt;
  }
  if (k == "Squeeze" || k == "Unsqueeze" || k == "Identity") return same_big_dims(Of(in, depth + 1));
  // A reshape that view() can make of a permuted tensor keeps its memory order: x.transpose(1, 2) of a
  // [N, L, C] token tensor viewed as [N, C, H, W] lies channels-last (SegFormer's Mix-FFN), the dims
  // ordered by their strides. A reshape that copies makes a contiguous result.
  if (k == "Reshape") {
    auto from = Of(in, depth + 1);
    if ((from && IsDenseOrder(in_dims, *from)) || in_dims == s.tensors[id].dims) return identity;
    auto strides = ViewStrides(m, s, in, 0, this);  // (this memo: a chain of reshapes is walked once)
    std::vector<int64_t> to_strides;
    if (!strides || !ReshapeIsView(in_dims, *strides, s.tensors[id].dims, &to_strides)) return identity;
    std::vector<int> order = identity;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return to_strides[static_cast<size_t>(a)] > to_strides[static_cast<size_t>(b)];
    });
    return order;
  }
  // A 2-D convolution of a channels-last input runs oneDNN in channels-last and returns a
  // channels-last result (ConvNeXt's downsampling conv after a permuted LayerNorm, and the
  // depthwise conv after it; measured: strides (HWC, 1, WC, C)).
  if (k == "Conv" && rank == 4 && in_dims.size() == 4) {
    auto from = Of(in, depth + 1);
    if (from && !IsDenseOrder(in_dims, *from) && IsChannelsLastOrder(in_dims, *from)) return std::vector<int>{0, 2, 3, 1};
    return identity;
  }
  if (!IsElementwise(k)) return identity;
  // layer_norm's decomposition centres x on its mean (x - ReduceMean(x)); layer_norm itself makes a
  // contiguous result. It normalizes trailing dims only: a mean over another axis (ConvNeXt's
  // channels-first LayerNorm written with mean/var over dim 1) is a real subtraction, which keeps
  // x's memory order.
  if (k == "Sub" && n.inputs.size() == 2 && n.inputs[1] >= 0) {
    int mean = m.tensors[n.inputs[1]].producer;
    if (mean >= 0 && m.nodes[mean].op_type == "ReduceMean" && !m.nodes[mean].inputs.empty() &&
        m.nodes[mean].inputs[0] == in) {
      bool trailing = true;
      if (auto it = m.nodes[mean].ints_attrs.find("axes"); it != m.nodes[mean].ints_attrs.end()) {
        std::vector<int64_t> axes = it->second;
        for (int64_t& a : axes) a = a < 0 ? a + rank : a;
        std::sort(axes.begin(), axes.end());
        for (size_t i = 0; i < axes.size(); ++i) {
          trailing = trailing && axes[axes.size() - 1 - i] == rank - 1 - static_cast<int64_t>(i);
        }
      }
      if (trailing) return identity;
    }
  }
  const auto& out_dims = s.tensors[id].dims;
  struct Operand {
    std::vector<int> position;  // per output dim: its place in the operand's memory order; -1 broadcast
  };
  std::vector<Operand> operands;
  const size_t arity = (k == "Dropout" || k == "Clip") ? 1 : n.inputs.size();
  for (size_t i = 0; i < arity && i < n.inputs.size(); ++i) {
    int op_id = n.inputs[i];
    if (op_id < 0 || !s.tensors[op_id].known) continue;
    const auto& d = s.tensors[op_id].dims;
    if (d.size() > out_dims.size()) continue;
    auto order = Of(op_id, depth + 1);
    std::vector<int> place(d.size(), 0);
    for (size_t j = 0; order && j < order->size(); ++j) {
      if ((*order)[j] >= 0 && (*order)[j] < static_cast<int>(d.size())) place[static_cast<size_t>((*order)[j])] = static_cast<int>(j);
    }
    if (!order) {
      for (size_t j = 0; j < d.size(); ++j) place[j] = static_cast<int>(j);
    }
    Operand o;
    o.position.assign(out_dims.size(), -1);
    const size_t shift = out_dims.size() - d.size();
    for (size_t j = 0; j < d.size(); ++j) {
      if (d[j] == out_dims[j + shift]) o.position[j + shift] = place[j];
    }
    operands.push_back(std::move(o));
  }
  // Dims sorted outermost first by the first operand that tells them apart (stable: the logical
  // order where none does).
  auto before = [&](int a, int b) {
    for (const Operand& o : operands) {
      int pa = o.position[static_cast<size_t>(a)], pb = o.position[static_cast<size_t>(b)];
      if (pa < 0 || pb < 0) continue;
      return pa < pb;
    }
    return false;
  };
  std::vector<int> order = identity;
  for (size_t i = 1; i < order.size(); ++i) {  // insertion sort, as TensorIterator's reorder_dimensions
    for (size_t j = i; j > 0 && before(order[j], order[j - 1]); --j) std::swap(order[j], order[j - 1]);
  }
  return order;
}

// The only consumer of tensor `id` that passes a gradient back (or -1): Shape nodes, and the
// Transpose the exporter adds for a Shape only (an LSTM's batch size), carry none.
int GradientConsumer(const Model& m, int id) {
  int found = -1;
  for (int c : m.tensors[id].consumers) {
    const NodeInfo& n = m.nodes[c];
    if (n.op_type == "Shape") continue;
    if (n.op_type == "Transpose" && !n.outputs.empty() && n.outputs[0] >= 0) {
      const auto& users = m.tensors[n.outputs[0]].consumers;
      bool shape_only = !users.empty() && std::all_of(users.begin(), users.end(), [&](int u) {
        return m.nodes[u].op_type == "Shape";
      });
      if (shape_only) continue;
    }
    if (found >= 0) return -1;
    found = c;
  }
  return found;
}

// Whether the gradient of tensor `id` reaches its producer non-contiguous. A Transpose hands its
// input the output gradient transposed (a view); an elementwise operator, Add among them, passes
// its output gradient's memory order on (the gradient is TensorIterator's first operand; relu and
// leaky_relu the memory order of their forward tensor); any other
// operator makes a fresh, contiguous gradient, and so does the sum of several consumers' gradients.
std::vector<int> GradientOrder(const Model& m, const ConcreteShapes& s, int id, int depth = 0) {
  const auto& dims = s.tensors[id].dims;
  std::vector<int> identity(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) identity[i] = static_cast<int>(i);
  int c = depth > 32 ? -1 : GradientConsumer(m, id);
  if (c < 0 || m.nodes[c].outputs.empty() || m.nodes[c].outputs[0] < 0) return identity;
  const NodeInfo& n = m.nodes[c];
  int out = n.outputs[0];
  if (!s.tensors[out].known || s.tensors[out].dims.size() != dims.size()) return identity;
  if (n.op_type == "Transpose") {
    std::vector<int64_t> perm;
    if (auto it = n.ints_attrs.find("perm"); it != n.ints_attrs.end()) perm = it->second;
    if (perm.empty()) {
      for (size_t i = dims.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    }
    if (perm.size() != dims.size()) return identity;
    std::vector<int> order;
    for (int d : GradientOrder(m, s, out, depth + 1)) {
      if (perm[static_cast<size_t>(d)] < 0 || perm[static_cast<size_t>(d)] >= static_cast<int64_t>(dims.size())) {
        return identity;
      }
      order.push_back(static_cast<int>(perm[static_cast<size_t>(d)]));
    }
    return order;
  }
  // relu's and leaky_relu's backward (threshold_backward, leaky_relu_backward) take the forward
  // tensor as TensorIterator's first operand: their gradient is laid out as that tensor is, not as
  // the gradient that reaches them (measured: a conv output used transposed, then relu/leaky_relu,
  // gets a contiguous gradient; after any other activation, mul or add, a transposed one).
  if ((n.op_type == "Relu" || n.op_type == "LeakyRelu") && s.tensors[out].dims == dims) {
    return DimOrder(m, s).Of(out).value_or(identity);
  }
  if (IsElementwise(n.op_type) && s.tensors[out].dims == dims) return GradientOrder(m, s, out, depth + 1);
  return identity;
}

bool GradientNonContiguous(const Model& m, const ConcreteShapes& s, int id) {
  return id >= 0 && s.tensors[id].known && !IsDenseOrder(s.tensors[id].dims, GradientOrder(m, s, id));
}

// Whether reshape()'s backward, grad.reshape(input sizes), copies the gradient of tensor `id` (the
// reshape's output): only where it arrives non-contiguous and its strides cannot take the input's shape
// (ReshapeIsView). A transposed gradient of x.flatten(2) unflattened back to [N, C, H, W] stays a view
// (probe sr_attention_mixffn: SegFormer's Mix-FFN depthwise conv between token and image layouts).
bool ReshapeGradientCopies(const Model& m, const ConcreteShapes& s, int id, int input) {
  if (!GradientNonContiguous(m, s, id)) return false;
  if (input < 0 || !s.tensors[input].known) return true;
  const std::vector<int64_t>& dims = s.tensors[id].dims;
  const std::vector<int> order = GradientOrder(m, s, id);
  if (order.size() != dims.size()) return true;
  std::vector<int64_t> strides(dims.size(), 1);
  int64_t step = 1;
  for (size_t j = order.size(); j-- > 0;) {  // innermost last
    const int d = order[j];
    if (d < 0 || d >= static_cast<int>(dims.size())) return true;
    strides[static_cast<size_t>(d)] = step;
    step *= std::max<int64_t>(dims[static_cast<size_t>(d)], 1);
  }
  return !ReshapeIsView(dims, strides, s.tensors[input].dims);
}

// Whether a 4-D tensor lies channels-last in PyTorch (DimOrder: N, H, W, C outermost first), the
// memory format oneDNN's convolution then runs in (ConvParams::use_mkldnn, suggest_memory_format).
bool ChannelsLastInTorch(const Model& m, const ConcreteShapes& s, int id) {
  if (id < 0 || !s.tensors[id].known || s.tensors[id].dims.size() != 4) return false;
  auto order = DimOrder(m, s).Of(id);
  return order && !IsDenseOrder(s.tensors[id].dims, *order) && IsChannelsLastOrder(s.tensors[id].dims, *order);
}

// Whether the gradient of a 4-D tensor arrives laid out channels-last (GradientOrder).
bool GradientChannelsLast(const Model& m, const ConcreteShapes& s, int id) {
  return id >= 0 && s.tensors[id].known && IsChannelsLastOrder(s.tensors[id].dims, GradientOrder(m, s, id));
}

// A dense 2-D convolution (one group, a kernel wider than 1x1) whose input lies channels-last in
// torch (after a LayerNorm written as permute -> nn.LayerNorm(C) -> permute: ConvNeXt-style
// downsampling, a channels-first LayerNorm CNN) runs oneDNN's channels-last kernels (DNNL_VERBOSE:
// brgconv forward on acdb buffers), which reorder the weights instead of the activations: forward holds
// a channels-last copy of the weight and its blocked reorder, 2 x the weight + 16868 bytes; backward
// three weight-sized buffers (the reorder for the input gradient, the blocked weight gradient and its
// reorder back) + about 3.5 KiB, whatever the batch (isolated layers, 16-128 channels, kernels 2-7,
// strides 1-2, batches 2-8: within 4 KiB; a 5x5 kernel 38 KiB more). Batch 1 may run PyTorch's slow
// path instead (ConvScratch's rules). Probe ln_channels_first (tools/probe_families.py) was -18 % at
// batch 2 with the blocked rule.
void ChannelsLastDenseConvScratch(const RuleContext& ctx, const LogicalOp& op, OpRule* r) {
  constexpr uint64_t kForwardFixed = 16868, kBackwardFixed = 3648;
  if (op.kind != "Conv" || op.inputs.size() < 2) return;
  const auto& T = ctx.shapes.tensors;
  const int x = op.inputs[0], w = op.inputs[1];
  if (x < 0 || w < 0 || !T[x].known || !T[w].known || T[x].dims.size() != 4 || T[w].dims.size() != 4) return;
  const NodeInfo& n = ctx.model.nodes[op.nodes[0]];
  const auto group = n.int_attrs.find("group");
  if ((group != n.int_attrs.end() && group->second != 1) || T[x].dims[0] < 2) return;
  if (T[w].dims[2] * T[w].dims[3] <= 1 || !ChannelsLastInTorch(ctx.model, ctx.shapes, x)) return;
  r->forward_temp_bytes = 2 * T[w].Bytes() + kForwardFixed;
  r->backward_temp_bytes = 3 * T[w].Bytes() + kBackwardFixed;
}

constexpr uint64_t kChannelsLastDepthwiseFixedBytes = 3136;
// The fixed part of a dense gemm forward (gemm_convolution_fwd under ideep; see ConvScratch): beside
// the columns and sgemm's buffer, beside the columns of a matrix-vector product, beside the output
// as it is copied out.
constexpr uint64_t kGemmForwardFixedBytes = 6900;
constexpr uint64_t kGemmForwardGemvFixedBytes = 8020;
constexpr uint64_t kGemmForwardCopyFixedBytes = 4616;
// What a 2-D weight gradient's blocked buffer comes with (probes conv2d_weight_gradient: 5400 bytes
// beside 64-960 channels of weights).
constexpr uint64_t kConv2dWeightGradientFixedBytes = 5400;

}  // namespace

const char* ConvKernelName(ConvKernel k) {
  switch (k) {
    case ConvKernel::kNone: return "";
    case ConvKernel::kSlow: return "slow";
    case ConvKernel::kJitAvx512: return "jit:avx512_core";
    case ConvKernel::kJitAvx2: return "jit:avx2";
    case ConvKernel::kJit1x1: return "jit_1x1:avx512_core";
    case ConvKernel::kJitDepthwise: return "jit_dw:avx512_core";
    case ConvKernel::kGemm: return "x64:gemm:jit";
  }
  return "";
}

namespace {

// Element i of a node's ints attribute (pads, strides, dilations), or `fallback` where it is absent.
int64_t IntsAttrAt(const NodeInfo& n, const char* name, size_t i, int64_t fallback) {
  auto it = n.ints_attrs.find(name);
  return it != n.ints_attrs.end() && i < it->second.size() ? it->second[i] : fallback;
}

// Scratch of a CPU convolution, following PyTorch 1.13's choice of kernel (ConvParams::use_mkldnn,
// one intra-op thread): oneDNN reorders the input and the weight into its blocked layout in forward,
// and the input and the output gradient in backward (measured with the allocation tracker:
// backward scratch = input + output + ~7 KiB, channels padded to whole blocks; a depthwise
// kernel wider than 3 reorders only the input). Without oneDNN, a 1x1 convolution is a plain
// matrix product (no scratch) and a transposed one unfolds one sample at a time (columns of
// out_channels x kernel x input positions, the same for any batch).
// Whether oneDNN's direct (jit) weight gradient refuses a 3-D convolution, which then runs the gemm
// implementation: the boundary checks of its configuration (oneDNN 2.6, as in PyTorch 1.13) refuse
// a dilated depth, a padding as wide as the dilated kernel, more than half of it above or below,
// and a padded kernel that reaches past the input's depth (kd >= id + front padding: the last
// blocks of a video net, where time has shrunk to 1 or 2 frames under a 3-deep kernel).
bool DirectWeightGradientRefuses3d(const NodeInfo& n, const std::vector<int64_t>& xd, const std::vector<int64_t>& wd,
                                   const std::vector<int64_t>& yd) {
  if (xd.size() != 5 || wd.size() != 5 || yd.size() != 5) return false;
  auto attr = [&](const char* name, size_t i, int64_t fallback) { return IntsAttrAt(n, name, i, fallback); };
  if (attr("dilations", 0, 1) != 1) return true;
  for (size_t d = 0; d < 3; ++d) {
    const int64_t in = xd[2 + d], out = yd[2 + d], k = wd[2 + d];
    const int64_t ext = (k - 1) * attr("dilations", d, 1) + 1;
    const int64_t begin = attr("pads", d, 0);
    const int64_t end = std::max<int64_t>(0, (out - 1) * attr("strides", d, 1) + ext - in - begin);
    if (d == 0 && (begin >= ext || end >= ext || (begin > 0 && k >= in + begin))) return true;
    if (d == 1 && (begin > ext / 2 || end > ext / 2)) return true;
    if (d == 2 && (begin >= ext || end >= ext)) return true;
  }
  return false;
}

// Whether some spatial axis is both dilated and strided, which oneDNN 2.6.3's direct input-gradient
// kernels (AVX-512 and AVX2 bwd_data init_conf) both refuse.
bool DilatedAxisStrided(const NodeInfo& n, size_t spatial) {
  for (size_t i = 0; i < spatial; ++i) {
    if (IntsAttrAt(n, "dilations", i, 1) != 1 && IntsAttrAt(n, "strides", i, 1) != 1) return true;
  }
  return false;
}

// Whether the padding reaches a whole (dilated) kernel past the input on some side, which all of
// oneDNN 2.6.3's direct f32 kernels refuse (kernel_outside_src in jit_avx512_common_conv_kernel.cpp's
// forward, input-gradient and weight-gradient init_conf): a padded 1x1 kernel, for one. The end
// padding is what the last output position reaches past the input.
bool KernelOutsideSource(const NodeInfo& n, const std::vector<int64_t>& xd, const std::vector<int64_t>& wd,
                         const std::vector<int64_t>& yd) {
  if (xd.size() != wd.size() || xd.size() != yd.size()) return false;
  for (size_t d = 0; d + 2 < xd.size(); ++d) {
    const int64_t ext = (wd[2 + d] - 1) * IntsAttrAt(n, "dilations", d, 1) + 1;
    const int64_t begin = IntsAttrAt(n, "pads", d, 0);
    const int64_t end = (yd[2 + d] - 1) * IntsAttrAt(n, "strides", d, 1) + ext - xd[2 + d] - begin;
    if (ext <= begin || ext <= end) return true;
  }
  return false;
}

// Whether both of oneDNN 2.6.3's direct 2-D weight-gradient kernels refuse a convolution, which then
// runs the gemm one. jit_avx512_common_conv_bwd_weights_kernel_f32::init_conf refuses a dilated
// height with a stride, a dilated kernel taller than the input, top or bottom padding past half the
// dilated kernel and left or right padding as wide as it; the AVX2 kernel it falls back to
// (jit_avx2_conv_bwd_weights_kernel_f32::init_conf) refuses any dilation, padding as wide as the
// kernel on any side, a kernel taller than the input, 14 or more columns wide (the end paddings are
// what the output's last position reaches past the input). Dev seed 33 of tools/probe_conv_fuzz.py
// (top padding 5 under a 6-tall kernel) ran the AVX2 kernel, with the direct rule's memory. A dense
// layer of fewer than 16 input channels is a first convolution to the AVX-512 kernel, whose
// src_ok takes only 1-3 of them: 4-15 are the AVX2 kernel's or gemm's (dev seeds 35 and 95, 8 and
// 14 channels under a kernel taller than the input, ran x64:gemm:jit backward_weights).
// conv1d is one too: PyTorch 1.13's mkldnn convolution views it as 2-D over [N, C, 1, L] (height 1,
// undilated, unstrided, unpadded), so a 3-D shape is checked as that 4-D one.
// WeightGradientBlock2d names the kernel: 16 the AVX-512 one, 8 the AVX2 one (its channel blocks),
// 0 gemm (-1: not a 1-D/2-D shape).
int64_t WeightGradientBlock2d(const NodeInfo& n, const std::vector<int64_t>& xd, const std::vector<int64_t>& wd,
                              const std::vector<int64_t>& yd) {
  const bool one_d = xd.size() == 3 && wd.size() == 3 && yd.size() == 3;
  if (!one_d && (xd.size() != 4 || wd.size() != 4 || yd.size() != 4)) return -1;
  auto attr = [&](const char* name, size_t i, int64_t fallback) {
    if (!one_d) return IntsAttrAt(n, name, i, fallback);
    if (i == 0) return std::string_view(name) == "pads" ? int64_t{0} : int64_t{1};  // the unit height
    return IntsAttrAt(n, name, i - 1, fallback);
  };
  auto dim = [&](const std::vector<int64_t>& v, size_t i) { return one_d ? (i == 2 ? int64_t{1} : v[i - (i > 2)]) : v[i]; };
  bool avx512 = (xd[1] >= 4 && xd[1] < 16) ||
                (attr("dilations", 0, 1) != 1 &&
                 (attr("strides", 0, 1) != 1 || (dim(wd, 2) - 1) * attr("dilations", 0, 1) + 1 > dim(xd, 2)));
  // The AVX-512 kernel takes no kernel wider than 14 but in its transposed special case: a 14-19 wide
  // kernel as wide as the input onto one output column, unit strides, no dilation or padding (DNNL_VERBOSE:
  // conv1d 16 -> 32 and 32 -> 64, k15 s2, ran x64:gemm:jit backward_weights; k13 jit:avx512_core).
  bool padded = false;
  for (size_t i = 0; i < (one_d ? 2u : 4u); ++i) padded = padded || IntsAttrAt(n, "pads", i, 0) != 0;
  const bool transposed_wide = dim(wd, 3) >= 14 && dim(wd, 3) < 20 && dim(yd, 3) == 1 && dim(wd, 3) == dim(xd, 3) &&
                               attr("strides", 0, 1) == 1 && attr("strides", 1, 1) == 1 &&
                               attr("dilations", 0, 1) == 1 && attr("dilations", 1, 1) == 1 && !padded;
  avx512 = avx512 || (dim(wd, 3) > 14 && !transposed_wide);
  bool avx2 = attr("dilations", 0, 1) != 1 || attr("dilations", 1, 1) != 1 || dim(wd, 3) >= 14 || dim(wd, 2) > dim(xd, 2);
  for (size_t d = 0; d < 2; ++d) {
    const int64_t in = dim(xd, 2 + d), out = dim(yd, 2 + d), k = dim(wd, 2 + d);
    const int64_t ext = (k - 1) * attr("dilations", d, 1) + 1;
    // ONNX pads list every axis's begin first: a 1-D layer's begin is pads[0].
    const int64_t begin = attr("pads", d, 0);
    const int64_t end = std::max<int64_t>(0, (out - 1) * attr("strides", d, 1) + ext - in - begin);
    if (d == 0) avx512 = avx512 || begin > ext / 2 || end > ext / 2;
    if (d == 1) avx512 = avx512 || begin >= ext || end >= ext;
    avx2 = avx2 || begin >= ext || end >= ext;
  }
  return !avx512 ? 16 : !avx2 ? 8 : 0;
}

bool DirectWeightGradientRefuses2d(const NodeInfo& n, const std::vector<int64_t>& xd, const std::vector<int64_t>& wd,
                                   const std::vector<int64_t>& yd) {
  return WeightGradientBlock2d(n, xd, wd, yd) == 0;
}

// Whether oneDNN 2.6.3's AVX2 weight-gradient kernel refuses a convolution of 1, 2 or 3 spatial axes
// (jit_avx2_conv_bwd_weights_kernel_f32::init_conf: boundaries_ok and args_ok): any dilation, a
// padded depth (front or back), padding as wide as the kernel on a side, a kernel 14 or more wide,
// taller than the input or deeper than it. conv1d is 2-D over a unit height (PyTorch 1.13's mkldnn
// convolution), which none of the height checks refuses.
bool Avx2WeightGradientRefuses(const NodeInfo& n, const std::vector<int64_t>& xd, const std::vector<int64_t>& wd,
                               const std::vector<int64_t>& yd) {
  if (xd.size() != wd.size() || xd.size() != yd.size() || xd.size() < 3 || xd.size() > 5) return false;
  const size_t spatial = xd.size() - 2;
  for (size_t d = 0; d < spatial; ++d) {
    if (IntsAttrAt(n, "dilations", d, 1) != 1) return true;
  }
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t in = xd[2 + d], out = yd[2 + d], k = wd[2 + d];
    const int64_t begin = IntsAttrAt(n, "pads", d, 0);
    const int64_t end = std::max<int64_t>(0, (out - 1) * IntsAttrAt(n, "strides", d, 1) + k - in - begin);
    const bool depth = spatial == 3 && d == 0, width = d + 1 == spatial;
    if (depth && (begin != 0 || end != 0 || k > in)) return true;
    if (!depth && (begin >= k || end >= k || k > in)) return true;
    if (width && k >= 14) return true;
  }
  return false;
}

// Whether oneDNN 2.6.3's depthwise weight-gradient kernel refuses a 1-D/2-D layer of one channel a
// group (jit_uni_dw_conv_bwd_weights_kernel::init_conf in jit_uni_dw_conv_kernel_utils.cpp: args_ok
// and boundaries_ok): any dilation, a kernel wider than 3, a stride wider than the kernel, padding
// past half the kernel on a side (the end paddings clamped at 0), an input shorter than the kernel
// plus the top padding's remainder by the stride, a top or bottom padding above 1 that the stride
// does not divide, or an output size that the padded input does not give. conv1d is 2-D over a unit
// height. The layer then runs x64:gemm:jit backward_weights (DNNL_VERBOSE over dev seeds 0-1999 of
// tools/probe_conv_fuzz.py: 142 such layers, this check names all 94 gemm and 48 jit_dw ones).
bool DepthwiseWeightGradientRefuses(const NodeInfo& n, const std::vector<int64_t>& xd,
                                    const std::vector<int64_t>& wd, const std::vector<int64_t>& yd) {
  if (xd.size() != wd.size() || xd.size() != yd.size() || xd.size() < 3 || xd.size() > 4) return false;
  const size_t spatial = xd.size() - 2;
  struct Axis {
    int64_t in = 1, out = 1, k = 1, stride = 1, begin = 0, end = 0;
  };
  Axis ax[2];  // height, width (conv1d: a unit height)
  for (size_t d = 0; d < spatial; ++d) {
    if (IntsAttrAt(n, "dilations", d, 1) != 1) return true;
    Axis& a = ax[2 - spatial + d];
    a.in = xd[2 + d];
    a.out = yd[2 + d];
    a.k = wd[2 + d];
    a.stride = IntsAttrAt(n, "strides", d, 1);
    a.begin = IntsAttrAt(n, "pads", d, 0);
    a.end = std::max<int64_t>(0, (a.out - 1) * a.stride + a.k - (a.in + a.begin));
  }
  const Axis& h = ax[0];
  const Axis& w = ax[1];
  if (w.k > 3 || w.stride > w.k) return true;
  for (const Axis& a : ax) {
    if (a.out != (a.in + a.begin + a.end - a.k) / a.stride + 1) return true;
    if (a.begin > a.k / 2 || a.end > a.k / 2) return true;
  }
  const int64_t top_remainder = ((-h.begin) % h.stride + h.stride) % h.stride;
  if (h.in < h.k + top_remainder) return true;
  return (h.begin > 1 && h.begin % h.stride != 0) || (h.end > 1 && h.end % h.stride != 0);
}

// Whether oneDNN 2.6.3's 1x1 kernels take a strided 1x1 convolution by reducing its input to unit
// stride (rtus_prepare in jit_uni_1x1_conv_utils.hpp): only over 1-2 axes (conv1d runs as 2-D), with
// no padding and an output that is exactly the input divided by the stride on every axis. Otherwise
// the direct kernels run it (DNNL_VERBOSE over dev seeds 0-1999 of tools/probe_conv_fuzz.py: seed 53,
// 256 -> 160 over 7 x 7 strided (2, 3), ran jit:avx512_core in all three directions; seed 301, 82 x
// 82 strided by 2, jit_1x1:avx512_core).
bool ReducesToUnitStride(const NodeInfo& n, const std::vector<int64_t>& xd, const std::vector<int64_t>& yd) {
  if (xd.size() != yd.size() || xd.size() < 3 || xd.size() > 4) return false;
  for (size_t d = 0; d + 2 < xd.size(); ++d) {
    if (IntsAttrAt(n, "pads", d, 0) != 0 || yd[2 + d] * IntsAttrAt(n, "strides", d, 1) != xd[2 + d]) return false;
  }
  return true;
}

// Whether a convolution needs no im2col columns: a 1x1 kernel, unit strides, the output the input's
// size (no padding) - oneDNN's gemm_convolution_utils and slow_conv2d both skip the unfolding then.
bool KeepsSize(uint64_t kernel, bool strided, const std::vector<int64_t>& xd, const std::vector<int64_t>& yd) {
  if (kernel != 1 || strided || xd.size() != yd.size()) return false;
  for (size_t i = 2; i < xd.size(); ++i) {
    if (xd[i] != yd[i]) return false;
  }
  return true;
}

// The contiguous copies a convolution makes of a strided input and output gradient. oneDNN runs a
// 2-D convolution of a channels-last input in channels-last: neither the input nor an output gradient
// that arrives channels-last is copied (ConvNeXt's depthwise conv after the permute back from a
// channels-last LayerNorm: modern2d random nets planned 3-6 % high in backward with both copies).
// PyTorch's own slow_conv2d (a 1x1 kernel below batch 16 on one thread) copies them the same way:
// _convolution makes a 3-D input contiguous before any backend ("avoid accidentally going through
// NHWC for permuted 3d input", forward and convolution_backward) and slow_conv2d's backward takes
// grad_output.contiguous() (probe sine_refine, tools/probe_families.py: a 1x1 Conv1d over
// h.transpose(1, 2) whose output is used transposed, -11 % at batches 2-8 without them, exact at 16).
void ContiguousCopies(const RuleContext& ctx, int x, int y, OpRule* r) {
  const Model& m = ctx.model;
  const ConcreteShapes& shapes = ctx.shapes;
  const auto& T = shapes.tensors;
  const bool channels_last = ChannelsLastInTorch(m, shapes, x);
  if (NonContiguous(m, shapes, x) && !channels_last) {
    // A transposed input (conv1d over [N, L, C].transpose(1, 2)) is first copied contiguous.
    r->forward_temp_bytes += T[x].Bytes();
    r->backward_temp_bytes += T[x].Bytes();
  }
  if (GradientNonContiguous(m, shapes, y) && !(channels_last && GradientChannelsLast(m, shapes, y))) {
    // The output is used transposed, so its gradient arrives transposed and is copied contiguous.
    r->backward_temp_bytes += T[y].Bytes();
  }
}

void ConvScratch(const RuleContext& ctx, const LogicalOp& op, OpRule* r) {
  ConvKernels& chosen_kernels = r->conv_kernels;
  auto set_kernels = [&](ConvKernel forward, ConvKernel input_gradient, ConvKernel weight_gradient) {
    chosen_kernels = ConvKernels{forward, input_gradient, weight_gradient};
  };
  const Model& m = ctx.model;
  const ConcreteShapes& shapes = ctx.shapes;
  const auto& T = shapes.tensors;
  int x = op.inputs.empty() ? -1 : op.inputs[0];
  int w = op.inputs.size() > 1 ? op.inputs[1] : -1;
  int y = op.outputs.empty() ? -1 : op.outputs[0];
  if (x < 0 || w < 0 || y < 0 || !T[x].known || !T[w].known || !T[y].known) return;
  const auto& xd = T[x].dims;
  const auto& wd = T[w].dims;
  if (xd.size() < 3 || wd.size() != xd.size()) return;
  const NodeInfo& n = m.nodes[op.nodes[0]];
  int64_t groups = 1;
  if (auto it = n.int_attrs.find("group"); it != n.int_attrs.end()) groups = std::max<int64_t>(1, it->second);
  bool strided = false, dilated = false;
  if (auto it = n.ints_attrs.find("strides"); it != n.ints_attrs.end()) {
    for (int64_t v : it->second) strided = strided || v != 1;
  }
  if (auto it = n.ints_attrs.find("dilations"); it != n.ints_attrs.end()) {
    for (int64_t v : it->second) dilated = dilated || v != 1;
  }
  const size_t spatial = xd.size() - 2;
  // conv1d runs as conv2d over [N, C, 1, L] with a [Co, C/g, 1, k] weight.
  int64_t k_last = wd.back();
  int64_t k_before = spatial == 1 ? 1 : wd[wd.size() - 2];
  const uint64_t eb = ElementBytes(T[x].dtype) ? ElementBytes(T[x].dtype) : 4;
  uint64_t kernel = 1;
  for (size_t i = 2; i < wd.size(); ++i) kernel *= static_cast<uint64_t>(wd[i]);
  if (n.op_type == "ConvTranspose") {
    set_kernels(ConvKernel::kSlow, ConvKernel::kSlow, ConvKernel::kSlow);
    uint64_t positions = 1;
    for (size_t i = 2; i < xd.size(); ++i) positions *= static_cast<uint64_t>(xd[i]);
    uint64_t out_channels = static_cast<uint64_t>(wd[1] * groups);
    uint64_t columns = out_channels * kernel * positions * eb;
    // Forward also fills a ones vector over the output positions (measured: columns + one output
    // channel, at every batch size).
    const uint64_t samples_channels = static_cast<uint64_t>(std::max<int64_t>(1, T[y].dims[0] * T[y].dims[1]));
    const uint64_t ones = T[y].Bytes() / samples_channels;
    r->forward_temp_bytes = columns + ones;
    // Its backward (NaiveConvolutionTranspose2d.cpp, the input gradient and acc_grad_parameters; conv1d
    // too, as 2-D) unfolds no columns where `need_columns` is false: a 1x1 kernel, unit strides and
    // dilations, no padding - the output gradient is the gemm's operand itself (dev seed 240 of
    // tools/probe_conv_fuzz.py, ConvTranspose1d 8 -> 256, k1 over 512, batch 1: planned 2.2 % high).
    const bool backward_columns = spatial > 2 || dilated || !KeepsSize(kernel, strided, xd, T[y].dims);
    const uint64_t backward_columns_bytes = backward_columns ? columns : 0;
    r->backward_temp_bytes = backward_columns_bytes;
    if (groups > 1) {
      // PyTorch 1.13's slow transposed convolution has no groups: _convolution runs it group by
      // group on contiguous copies of each group's input (and, in backward, of its output
      // gradient), then concatenates the outputs, the input gradients and the weight gradients
      // (allocation traces of ConvTranspose2d 32 -> 32, k3, stride 2, 16 x 16, groups 4 and 32).
      // Forward: the group outputs beside their concatenation, or the last group's input copy and
      // its columns (out_channels / groups of them). Backward, the last group: its output-gradient
      // and input copies and its columns (the gradients of the groups before it are what the
      // concatenation returns); or the concatenation itself, which holds the pieces of the input
      // gradient and of the weight gradient beside the results (measured 159808 / 245888 bytes at
      // batches 2 / 4 with 4 groups, 66688 / 132224 with 32: exact). The copies are those of
      // Convolution.cpp's subtensor (narrow(1, n * g, n).contiguous()): a channel slice of one
      // sample is contiguous already and is not copied (dev seed 62 of tools/probe_conv_fuzz.py,
      // 160 -> 64 in 4 groups over 55 x 84, batch 1: planned 1034880 bytes, both copies, high).
      const uint64_t g = static_cast<uint64_t>(groups);
      const bool copies = xd[0] > 1;
      const uint64_t group_columns = columns / g, group_input = copies ? T[x].Bytes() / g : 0;
      const uint64_t group_grad = copies ? T[y].Bytes() / g : 0;
      r->forward_temp_bytes = std::max(T[y].Bytes(), group_input + group_columns + ones);
      r->backward_temp_bytes = std::max(group_grad + group_input + backward_columns_bytes / g,
                                        (ctx.requires_grad[x] ? T[x].Bytes() : 0) + T[w].Bytes());
    }
    return;
  }
  int64_t first4 = 1;
  for (size_t i = 0; i < 4; ++i) first4 *= i < xd.size() ? xd[i] : 1;
  if (spatial == 1) first4 = xd[0] * xd[1] * xd[2];
  bool mkldnn = (strided || dilated || xd[0] >= 16 || k_last != 1 || k_before != 1) &&
                (groups > 1 || (k_last > 3 && k_before > 3) || xd[0] > 1 || first4 > 20480);
  const bool input_grad = ctx.requires_grad[x];
  if (!mkldnn) {
    set_kernels(ConvKernel::kSlow, ConvKernel::kSlow, ConvKernel::kSlow);
    // slow_conv3d's backward forms the input gradient through columns of the input's size even
    // for a 1x1x1 kernel (measured: input bytes at every batch; 2-D and 1-D 1x1 need none).
    if (spatial == 3 && input_grad) r->backward_temp_bytes = T[x].Bytes();
    // The whole batch's im2col columns: in_channels x kernel volume x output positions per sample.
    const uint64_t batch_positions =
        T[y].dims.size() == xd.size() ? T[y].Elements() / static_cast<uint64_t>(std::max<int64_t>(1, T[y].dims[1])) : 0;
    const uint64_t columns = eb * static_cast<uint64_t>(xd[1]) * kernel * batch_positions;
    // The columns are a view of the input only for an unpadded, unstrided 1x1(x1) kernel of one group.
    const bool columns_view = groups == 1 && KeepsSize(kernel, strided, xd, T[y].dims);
    // A wider kernel unfolds the whole batch at once, in forward and again in backward (for the
    // weight gradient too): the columns above (dev probes of (3,1,1) and (5,1,1) temporal kernels,
    // R(2+1)D's, and 3x3x3 at batch 1: exactly that, with or without an input gradient, at batches 1-4).
    // PyTorch 1.13's slow_conv3d takes groups itself (one bmm over all groups' columns, no group
    // loop in _convolution), and a padded or strided 1x1x1 kernel unfolds as well (compute_columns3d
    // takes the view only for an unpadded, unstrided 1x1x1 kernel of one group): dev seed 298 of
    // tools/probe_conv_fuzz.py, 40 -> 45 in 5 groups with a 3x1x1 kernel padded by 1 on every axis,
    // batch 3: the tracker's trace holds 4700160-byte columns in forward, then twice in backward (the
    // input gradient's, then the weight gradient's), as this formula gives; planned 32 % low with the
    // input-sized buffer alone. A dilated one (slow_conv_dilated3d) keeps the rule of one group.
    if (spatial == 3 && T[y].dims.size() == 5 &&
        ((groups == 1 && kernel > 1) || (!dilated && !columns_view))) {
      r->forward_temp_bytes = std::max(r->forward_temp_bytes, columns);
      r->backward_temp_bytes = columns;
    }
    // slow_conv2d (conv1d runs as 2-D over a unit height) unfolds the whole batch too
    // (compute_columns2d), in forward beside the output and in backward for the weight gradient,
    // beside the input gradient (whose columns, one sample's at a time, come from operator new[], which
    // the tracker and PyTorch's allocator do not see). Its kernels wider than 1x1 run there at
    // batch 1 only (probes conv2d_weight_gradient: 64-960 channels, 3x3 on 2x2-8x8 maps, exact); a
    // padded or strided 1x1 kernel at any batch below 16 (dev seed 314: 300 -> 16, 1x1 padded by
    // (1, 0) over 14 x 14, batch 4: 1075200-byte columns in both phases, planned 24.7 % low without
    // them). Dilated, slow_conv_dilated2d (batch 1 only) keeps one sample's columns, as before.
    if (spatial <= 2 && groups == 1 && T[y].dims.size() == xd.size() && !columns_view) {
      if (!dilated) r->forward_temp_bytes = std::max(r->forward_temp_bytes, columns);
      if (!dilated || kernel > 1) {
        r->backward_temp_bytes = dilated ? columns / static_cast<uint64_t>(std::max<int64_t>(1, xd[0])) : columns;
      }
    }
    if (spatial <= 2 && groups > 1 && T[y].dims.size() == xd.size()) {
      // slow_conv2d has no groups (a grouped 1x1 kernel below batch 16: PyTorch 1.13's
      // _select_conv_backend gives Slow2d): _convolution runs it group by group, as the grouped
      // transposed convolution above, on contiguous copies of each group's input and, in backward,
      // of its output gradient (copies only where the batch makes the channel slice strided), then
      // concatenates outputs, input and weight gradients. Columns: one sample's, where the kernel
      // reads past the input (padding or a stride); forward unfolds the whole batch (dev seed 75).
      const uint64_t g = static_cast<uint64_t>(groups);
      const bool copies = xd[0] > 1;
      const uint64_t group_input = copies ? T[x].Bytes() / g : 0, group_grad = copies ? T[y].Bytes() / g : 0;
      const bool keeps_size = KeepsSize(kernel, strided, xd, T[y].dims);
      const uint64_t sample_positions = T[y].Elements() / std::max<uint64_t>(1, static_cast<uint64_t>(T[y].dims[0] * T[y].dims[1]));
      const uint64_t columns = keeps_size ? 0 : eb * static_cast<uint64_t>(xd[1] / groups) * kernel * sample_positions;
      r->forward_temp_bytes = std::max(T[y].Bytes(), group_input + columns * static_cast<uint64_t>(std::max<int64_t>(1, xd[0])));
      r->backward_temp_bytes =
          std::max(group_grad + group_input + columns, (input_grad ? T[x].Bytes() : 0) + T[w].Bytes());
    }
    if (spatial <= 2 && groups == 1) ContiguousCopies(ctx, x, y, r);
    return;
  }
  const uint64_t fixed = 7 * 1024;
  const int64_t c_in = xd[1];
  const int64_t c_out = T[y].dims[1];
  const bool depthwise = groups > 1 && groups == c_in;
  set_kernels(ConvKernel::kJitAvx512, ConvKernel::kJitAvx512, ConvKernel::kJitAvx512);
  // Channels rounded up to oneDNN's blocks: 16, or 8 for a dense convolution whose input has 4 to
  // 15 channels; a depthwise one always uses 16 (tools/probe_scratch.py over the layers of the
  // random networks, batches 2/4/8: the per-sample part is what follows, the rest is ~7 KiB).
  // A dense 1x1 kernel is oneDNN's 1x1 convolution in every direction, which pads both channel
  // counts to 16 whatever they are (jit_avx512_common_1x1_conv_kernel::init_conf, ok_to_pad_channels,
  // simd_w 16; the strided one has its rule below): dev seed 343 of tools/probe_conv_fuzz.py, 12 -> 3
  // channels, 1x1 with dilation 2 (which makes PyTorch take oneDNN) over 8 x 123, batch 7: jit_1x1
  // forward_training, backward_data and backward_weights on aBcd16b buffers; its trace holds the
  // output gradient blocked by 16 (440832 bytes, 5.3 x its plain size) beside the blocked input,
  // planned 11 % low with blocks of 8.
  // A strided one only where it reduces to unit stride (ReducesToUnitStride); the others take the
  // direct kernels' rules (dev seeds 53, 215, 279: planned 1.0-4.0 % high with the 1x1 kernel's).
  const bool pointwise_1x1 =
      groups == 1 && kernel == 1 && spatial <= 2 && (!strided || ReducesToUnitStride(n, xd, T[y].dims));
  if (pointwise_1x1) set_kernels(ConvKernel::kJit1x1, ConvKernel::kJit1x1, ConvKernel::kJit1x1);
  // One channel a group over 1-2 axes: oneDNN's depthwise kernels, each direction with its own checks;
  // a weight gradient DepthwiseWeightGradientRefuses runs gemm on plain buffers (its bytes below).
  const bool dw_weight_gemm = depthwise && c_out == c_in && spatial <= 2 &&
                              DepthwiseWeightGradientRefuses(n, xd, wd, T[y].dims);
  if (depthwise && spatial <= 2) {
    set_kernels(KernelOutsideSource(n, xd, wd, T[y].dims) ? ConvKernel::kGemm : ConvKernel::kJitDepthwise,
                ConvKernel::kJitDepthwise, dw_weight_gemm ? ConvKernel::kGemm : ConvKernel::kJitDepthwise);
  }
  const uint64_t block = !depthwise && !pointwise_1x1 && c_in >= 4 && c_in < 16 ? 8 : 16;
  if (block == 8 && groups == 1 && spatial <= 2) chosen_kernels.weight_gradient = ConvKernel::kJitAvx2;
  auto padded_to = [&](int id, uint64_t b) {
    uint64_t c = T[id].dims.size() > 1 ? static_cast<uint64_t>(T[id].dims[1]) : 1;
    return c ? T[id].Bytes() / c * ((c + b - 1) / b * b) : 0;
  };
  auto padded = [&](int id) { return padded_to(id, block); };
  // Forward computes into an output blocked by 16 and reorders the input (or the weight).
  r->forward_temp_bytes = std::max(T[x].Bytes() + T[w].Bytes(), padded_to(y, 16)) + fixed;
  // A strided 3-D one only computes into the blocked output (tools/probe_scratch.py: 3-16 input
  // channels, 8-16 wide, stride 2: the blocked output + ~4.5 KiB at every batch).
  if (spatial == 3 && strided) r->forward_temp_bytes = padded_to(y, 16) + fixed;
  // A 1-D/2-D depthwise layer runs oneDNN's depthwise kernel (jit_uni_dw_conv_fwd), which reads its
  // source blocked by 16 channels only (nChw16c): the blocked input lives beside the blocked output it
  // computes into (dev pool seed 854 of tools/probe_conv_fuzz.py, conv1d 9 -> 9 in 9 groups, k2 d2
  // over 934, batch 4: jit_dw forward_training on aBcd16b; its trace holds 239104 + 239104 bytes,
  // planned 10.5 % low in forward with the larger of the two). A kernel the padding puts outside the
  // input is refused (kernel_outside_src) and runs gemm.
  if (depthwise && spatial <= 2 && T[y].dims.size() == xd.size() && !KernelOutsideSource(n, xd, wd, T[y].dims)) {
    // The plain output is made only after the blocked input is gone (then it stands beside the
    // blocked output, which the rule above holds): the plan counts it, so the scratch is less by it.
    r->forward_temp_bytes =
        std::max(r->forward_temp_bytes, padded_to(x, 16) + padded_to(y, 16) - std::min(padded_to(x, 16), T[y].Bytes()) + fixed);
  }
  const bool nhwc_depthwise_3 = depthwise && spatial == 2 && k_last <= 3 && !dw_weight_gemm &&
                                T[y].dims.size() == xd.size() && !KernelOutsideSource(n, xd, wd, T[y].dims) &&
                                ChannelsLastInTorch(m, shapes, x);
  if (nhwc_depthwise_3) r->forward_temp_bytes = T[w].Bytes() + 13864;
  // Backward reorders the input and the output gradient into the blocked layout. An input of at
  // most 3 channels that needs no gradient (the stem) is used as it is, and so is a 3-D
  // convolution's input of fewer than 8 channels. A depthwise kernel wider than 3 reorders the
  // input only, and keeps its padding twice: 2 x padded - plain. A dense
  // convolution between at most 8 channels with an input gradient keeps one more padded copy of
  // the input (plus a plain one below 8 channels): 8 -> 8 channels takes 3 x the input, 4 -> 4
  // takes 7 x.
  //
  // 3-D convolutions differ (tools/probe_scratch.py, volumes 8-16 wide): a depthwise one keeps one
  // input-sized buffer; a stem of 4 to 7 channels without an input gradient takes about one
  // sample's blocked output whatever the batch; 9 to 15 input channels keep 2 x padded - plain.
  bool plain_input = (c_in <= 3 && !input_grad) || (spatial == 3 && c_in < 8);
  // A dense 2-D layer of 16+ input channels whose geometry the AVX-512 weight-gradient kernel refuses
  // (top or bottom padding past half the kernel, ...) and the AVX2 one takes runs the AVX2 kernel:
  // its reorders of the input, the output gradient and the weights are blocked by 8, not 16 (dev seed
  // 234 of tools/probe_conv_fuzz.py: 96 -> 4, 5x1 padded by (3, 0) over 7 x 7, batch 2: jit:avx2
  // backward_weights on aBcd8b / ABcd8b8a; its trace holds a 4032-byte output gradient and
  // 15360-byte weights blocked by 8, planned 8.9 % high with blocks of 16).
  const bool avx2_weight_gradient = spatial == 2 && groups == 1 && kernel > 1 && c_in >= 16 && !depthwise &&
                                    WeightGradientBlock2d(n, xd, wd, T[y].dims) == 8;
  const uint64_t weight_block = avx2_weight_gradient ? 8 : block;
  if (avx2_weight_gradient) chosen_kernels.weight_gradient = ConvKernel::kJitAvx2;
  uint64_t input_reorder = plain_input ? 0 : padded_to(x, weight_block);
  const uint64_t samples = static_cast<uint64_t>(std::max<int64_t>(1, xd[0]));
  // Those depthwise and 9-15 channel 3-D kernels also take a scratchpad of ~80 KiB whatever the
  // batch and volume (measured 4-16 wide): the larger of the two.
  const uint64_t scratchpad_3d = 80 * 1024;
  if (spatial == 3 && depthwise) {
    // (Where the shapes are known, 3-D depthwise layers take the grouped gemm rule below instead.)
    r->backward_temp_bytes = std::max(T[x].Bytes() + fixed, scratchpad_3d);
  } else if (spatial == 3 && c_in >= 4 && c_in < 8 && !input_grad) {
    r->backward_temp_bytes = padded_to(y, 16) / samples + fixed;
  } else if (spatial == 3 && c_in > 8 && c_in < 16 && input_grad) {
    r->backward_temp_bytes = std::max(2 * padded_to(x, 16) - T[x].Bytes() + fixed, scratchpad_3d);
  } else if (nhwc_depthwise_3) {
    // A channels-last input and a kernel at most 3 wide (SegFormer's Mix-FFN: a [N, L, C] token tensor
    // transposed and viewed as [N, C, H, W]): oneDNN's nhwc depthwise kernels read and write the plain
    // buffers, no activation is reordered. Probes sr_attention_mixffn (96 channels) and
    // token_depthwise_ffn (160), batches 2 and 8: forward the weight + 13864 bytes, backward 2 x the
    // weight + 4 bytes a channel + 3136, whatever the batch (planned +16 % with the blocked reorders).
    r->backward_temp_bytes = 2 * T[w].Bytes() + 4 * static_cast<uint64_t>(c_in) + kChannelsLastDepthwiseFixedBytes;
  } else if (depthwise && k_last > 3 && ChannelsLastInTorch(m, shapes, x)) {
    // A channels-last input (ConvNeXt: the block input is the permute back from a channels-last
    // LayerNorm/Linear) takes oneDNN's nhwc depthwise kernel: no input reorder, but its weight
    // gradient keeps 256 partial copies of the weights (tools/random_nets_modern.py modern2d; probes
    // of 16-64 channels, kernels 5 and 7, 4x4 to 32x32, batches 2 and 4: 257 x the weight + 3 KiB
    // whatever the batch and size, within 0.5 KiB). How many copies follows the ISA's blocking.
    const uint64_t copies = 256 * T[w].Bytes();
    r->backward_temp_bytes = copies + T[w].Bytes() + kChannelsLastDepthwiseFixedBytes;
    r->machine_dependent_bytes = copies;
  } else if (depthwise && (k_last > 3 || dw_weight_gemm)) {
    // Those wider kernels are ones the depthwise weight-gradient kernel refuses (kw > 3), and so are
    // the other layers it refuses: only the input-gradient kernel's blocked buffers, then the gemm
    // weight gradient on plain ones (dev seeds 393, a 3x1 kernel strided by 2 over 7 x 7, planned
    // +10.3 % with the blocked reorders, and 243, a 3x3 kernel over a 1 x 1 map, -13.7 %).
    // While the kernel runs it holds the blocked output gradient and the blocked input gradient; then the
    // blocked input gradient alone beside the plain one it is reordered into (which the plan holds): the
    // larger of the two. Unstrided, the output gradient is the input's size and that is 2 x padded -
    // plain; strided, it is smaller (dev seed 124 of tools/probe_conv_fuzz.py, 61 channels, k5 s2 over
    // 16 x 16, batch 4: its trace holds the 262144-byte blocked input gradient beside the plain one at
    // the peak, the 65536-byte blocked output gradient freed before; planned 1.9 % high with 2 x padded).
    r->backward_temp_bytes =
        std::max(padded(y) + padded(x) - std::min(padded(x), T[x].Bytes()) + fixed, padded(x));
  } else if (depthwise && spatial <= 2 && input_grad && !(w >= 0 && ctx.requires_grad[w])) {
    // A depthwise kernel of at most 3 whose weight needs no gradient (a buffer: BlurPool's fixed binomial
    // filter) runs the input-gradient kernel alone: its blocked input gradient, no reordered input or
    // output gradient for a weight gradient (tools/probe_families.py blur_depthwise_buffer; one layer, 48-64
    // channels, k3, stride 2 and 1: input + 4.6 / 8.4 KiB, where a trained weight takes input + output +
    // 6.7 KiB, bench/results/depthwise_buffer_scratch_20261207.txt; planned with the output's too, +1.2 %).
    r->backward_temp_bytes = padded_to(x, 16) + fixed;
  } else {
    r->backward_temp_bytes = input_reorder + padded_to(y, weight_block) + fixed;
    // (Probed from 4 input channels on; 1-3 are first convolutions, blocked by 16: below.)
    // (Not the 1x1 kernel: its backward holds the input and the output gradient blocked by 16 and
    // nothing more - traces of 1x1 layers with dilation 2, 4 -> 4, 6 -> 3 and 8 -> 8 channels.)
    const bool narrow_both = !depthwise && !pointwise_1x1 && input_grad && c_in >= 4 && c_in <= 8 && c_out <= 8;
    if (narrow_both && strided && spatial <= 2) {
      // Strided, its scratch is two blocked input-sized buffers, nothing output-sized (probes
      // conv_strided_small_channels: 4-8 channels, kernels 3-5, 1-D and 2-D, stride 2).
      r->backward_temp_bytes = 2 * padded(x) + fixed;
    } else if (narrow_both) {
      r->backward_temp_bytes += padded(x) + (c_in < 8 ? T[x].Bytes() : 0);
    }
  }
  // The weight gradient is formed blocked in both channel dimensions and reordered to plain: its
  // padding is scratch too, blocked by 16, or by 8 where the input has 4 to 15 channels
  // (tools/probe_scratch.py, bench/results/conv_scratch_probes.json tuning_net_convs and
  // conv2d_weight_padding: 2-D 4-48 channels, kernels 3-7, the rest of the fixed part is 6.5 KiB).
  auto weight_padding = [&](uint64_t b) {
    const uint64_t blocked =
        static_cast<uint64_t>((c_out + b - 1) / b * b) * static_cast<uint64_t>((c_in + b - 1) / b * b);
    const uint64_t plain = static_cast<uint64_t>(c_out) * static_cast<uint64_t>(c_in);
    return plain ? T[w].Bytes() / plain * (blocked - plain) : 0;
  };
  if (pointwise_1x1 && strided) {
    // A strided 1x1 convolution (1-D runs as 2-D) takes oneDNN's 1x1 kernel with a reduce-to-unit-
    // stride buffer: the input and the output gradient blocked by 16 channels whatever their count
    // (a 3-channel input too), one sample's input subsampled to the output's positions (blocked by
    // 16), and the weight gradient's padding by 16 (probes conv2d_strided_pointwise: 3-32 channels,
    // 1-D and 2-D, exact to 0.5 KiB).
    const uint64_t positions = T[y].Elements() / samples / static_cast<uint64_t>(std::max<int64_t>(1, c_out));
    const uint64_t unit_stride = eb * static_cast<uint64_t>((c_in + 15) / 16 * 16) * positions;
    r->backward_temp_bytes = padded_to(x, 16) + padded_to(y, 16) + unit_stride + weight_padding(16) + fixed;
    // Blocks of 16 channels are AVX-512's; another ISA blocks and buffers differently.
    r->machine_dependent_bytes = unit_stride + (padded_to(x, 16) - T[x].Bytes()) + (padded_to(y, 16) - T[y].Bytes());
  } else if (groups == 1 && (c_in >= 16 || (spatial == 2 && c_in >= 4))) {
    // conv1d too, as 2-D over a unit height: its weight gradient is ABcd16b16a, padded (dev seed 57 of
    // tools/probe_conv_fuzz.py, conv1d 24 -> 192, k6 s2 over 764, batch 2: jit:avx512_core
    // backward_weights, planned 1.8 % low, 37028 bytes, without the 36864 of padding).
    r->backward_temp_bytes += weight_padding(weight_block);
  }
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  // The input-gradient phase of oneDNN's gemm backward_data (ideep's own input gradient beside one
  // sample's im2col columns and sgemm's buffer, then beside the plain result as it is copied out)
  // comes before the weight gradient exists: mkldnn_convolution_backward (PyTorch 1.13,
  // aten/src/ATen/native/mkldnn/Conv.cpp) runs mkldnn_convolution_backward_input and only then
  // mkldnn_convolution_backward_weights, which makes the weight and bias gradients. The plan holds those
  // gradients through the whole op's backward, so the phase is less by them (dev seed 454 of
  // tools/probe_conv_fuzz.py, conv2d 384 -> 32, k7 s(2, 3) over 22 x 56, batch 4: x64:gemm:jit
  // backward_data; its trace peaks with the 7569408-byte input gradient of ideep, 15730304 bytes of
  // columns and the 73984-byte buffer, no weight gradient yet; planned 5.8 % high, the 2408448-byte
  // weight gradient + 908 bytes). (The blocked direct phase below subtracts them already.)
  uint64_t later_gradients = 0;
  for (size_t i = 1; i < op.inputs.size() && i < 3; ++i) {
    const int id = op.inputs[i];
    if (id >= 0 && ctx.requires_grad[id] && T[id].known) later_gradients += T[id].Bytes();
  }
  // Where the input gradient's sgemm call (m = output positions, n = input channels of a group x kernel
  // volume, k = output channels of a group) is one that packs by the weight gradient's reading
  // (SgemmSkipsPacking false) and k is small, sgemm's buffer is far larger than the unpacked one
  // planned: dev seed 635 of tools/probe_conv_fuzz.py (160 -> 3, 3x3 padded by (3, 0) over 79 x 79,
  // batch 4, x64:gemm:jit backward_data with m = 6391, n = 1440, k = 3) allocates 3322144 bytes beside
  // the 36.8 MB columns, planned 3.7 % low with 73984. Its size is not modelled (round 10): the plan
  // lists it as a risk of about 4 x 128 x (m + n) bytes.
  auto note_data_gemm_pack = [&](uint64_t m, uint64_t n, uint64_t k) {
    if (SgemmRunsGemv(m, n) || k >= 16 || m < 1024 || n < 256 || SgemmSkipsPacking(m, n, k, m)) return;
    r->data_gemm_pack_bytes = std::max<uint64_t>(r->data_gemm_pack_bytes, 4 * 128 * (m + n));
  };
  auto gemm_data_phase = [&](uint64_t columns_and_buffer) {
    const uint64_t phase = std::max(columns_and_buffer, T[x].Bytes()) + g.fixed_bytes;
    return phase - std::min(phase, later_gradients);
  };
  // Which kernel runs a dense layer's input gradient (data/conv_scratch.json direct_input_gradient;
  // DirectInputGradientKernel reads both direct kernels' init_conf refusals, their width blocking
  // included). Where both refuse, gemm_convolution_bwd_data runs on plain buffers: no blocked
  // reorders, one sample's im2col columns (of one depth slice in 3-D) and sgemm's buffer, while
  // ideep's own input gradient stands in for the result and then beside it as it is copied out: the
  // phase `gemm_input_phase`. The weight gradient keeps its own kernel and phase. DNNL_VERBOSE on
  // tools/probe_conv_fuzz.py dev seeds 0-439 (tools/probe_conv_kernels.py, its Python reading of the
  // same checks): all 223 such input gradients, dense and grouped, as oneDNN chose them (gemm 81,
  // AVX2 6). Dev seed 317 (conv1d 12 -> 12, k3 s2 over 256: the AVX-512 kernel's unroll of 15 is no
  // multiple of the stride, the AVX2 kernel needs equal strides) was planned 20.9 % low with the
  // blocked reorders.
  const DirectInputGradient& dig = EmbeddedConvScratchTable().direct_input_gradient;
  bool gemm_input = false, avx2_input = false;
  uint64_t gemm_input_phase = 0, l1_dependent_bytes = 0;
  // 1-D and 2-D only: the 3-D rules above and below were fitted on 3-D steps whose input gradients
  // ran gemm already (dev seeds 9, 38, 88, 271 within 1 %); adding this phase to them planned the
  // dilated 3-D first convolution of dev seed 244 26 KB above its measured peak.
  // (A strided 1x1 kernel that oneDNN's 1x1 kernel does not take runs the direct kernels too: dev seeds
  // 215 and 279, conv1d of kernel 1 strided by 2 and 3 over 929 and 694, ran x64:gemm:jit backward_data;
  // planned 1.9 and 4.0 % high with the reduce-to-unit-stride rule, -0.05 and -0.24 % now.)
  const bool direct_1x1 = kernel == 1 && !pointwise_1x1 && !KernelOutsideSource(n, xd, wd, T[y].dims);
  // A 3-D first convolution (1-3 input channels, undilated, one whose weight gradient the direct kernel
  // takes) reads the same init_conf checks: a stride that differs between axes is refused by both (dev
  // seed 617 of tools/probe_conv_fuzz.py, 3 -> 1, 4x4x4 strided by (1, 1, 2), batch 3: x64:gemm:jit
  // backward_data, jit:avx512_core backward_weights; planned 78 % high with the blocked input gradient
  // and 16 x 16 weights of dev seed 148's rule). Other 3-D layers keep their fitted rules.
  const bool first_conv_3d_direct_weights = spatial == 3 && groups == 1 && kernel > 1 && c_in <= 3 && !dilated &&
                                            T[y].dims.size() == 5 && !DirectWeightGradientRefuses3d(n, xd, wd, T[y].dims);
  if (dig.Known() && (spatial <= 2 || first_conv_3d_direct_weights) && groups == 1 && (kernel > 1 || direct_1x1) &&
      input_grad && T[y].dims.size() == xd.size()) {
    const auto& yd = T[y].dims;
    ConvAxis axes[3];
    for (size_t i = 0; i < spatial; ++i) {
      axes[3 - spatial + i] = ConvAxis{xd[2 + i], yd[2 + i], wd[2 + i], IntsAttrAt(n, "strides", i, 1),
                                       IntsAttrAt(n, "pads", i, 0), IntsAttrAt(n, "dilations", i, 1)};
    }
    auto gemm_at = [&](uint64_t l1) {
      return DirectInputGradientKernel(axes, c_in, c_out, 1, l1) == InputGradientKernel::kGemm;
    };
    const InputGradientKernel chosen = DirectInputGradientKernel(axes, c_in, c_out, 1, dig.l1_bytes);
    gemm_input = chosen == InputGradientKernel::kGemm;
    avx2_input = chosen == InputGradientKernel::kAvx2;
    chosen_kernels.input_gradient =
        gemm_input ? ConvKernel::kGemm : (avx2_input ? ConvKernel::kJitAvx2 : ConvKernel::kJitAvx512);
    const uint64_t positions = spatial == 1 ? static_cast<uint64_t>(yd[2])
                                            : static_cast<uint64_t>(yd[yd.size() - 2]) * static_cast<uint64_t>(yd.back());
    const uint64_t col = eb * static_cast<uint64_t>(c_in) * kernel * positions;
    const uint64_t columns_and_buffer = col + g.DataGemmBufferBytes(positions, static_cast<uint64_t>(c_in) * kernel);
    gemm_input_phase = gemm_data_phase(columns_and_buffer);
    if (gemm_input) note_data_gemm_pack(positions, static_cast<uint64_t>(c_in) * kernel, static_cast<uint64_t>(c_out));
    // The AVX-512 kernel's width blocking depends on the L1 size oneDNN reads: where another CPU's
    // would decide the other way, the gemm's columns and buffer are machine-dependent bytes.
    for (uint64_t l1 : dig.other_l1_bytes) {
      if (gemm_at(l1) != gemm_input) {
        l1_dependent_bytes = columns_and_buffer;
      }
    }
  }
  // Which kernel runs a dense 1-D/2-D layer's forward (DenseForwardKernel: the AVX-512 direct kernel's
  // init_conf refusals, then the AVX2 one's). A 'same'-padded kernel 25 or more wide is refused by the
  // AVX-512 kernel's code-size check (padding on both sides x kernel width x 16 input channels x an
  // unroll of 28) and by the AVX2 kernel's left padding past its unroll of 3, so oneDNN runs
  // gemm_convolution_fwd on plain buffers (DNNL_VERBOSE: conv1d 16 -> 32 k31 padded by 15 over 1024,
  // 32 -> 32 k25 p12 over 512, 64 -> 64 k41 p20 over 256, batch 2: x64:gemm:jit forward_training).
  // No blocked output then: ideep's own output stands beside one L2-sized block of im2col columns
  // and sgemm's buffer, then beside the result as it is copied out - the grouped gemm rule below
  // with one group. tools/probe_conv_kernels.py --all-directions over dev seeds 0-1999: the forward
  // of all 912 dense layers with a kernel wider than 1x1 as oneDNN chose them (36 more gemm).
  bool dense_forward_known = false;
  if (dig.Known() && groups == 1 && !depthwise && (kernel > 1 || (direct_1x1 && spatial <= 2)) &&
      !KernelOutsideSource(n, xd, wd, T[y].dims) && T[y].dims.size() == xd.size()) {
    dense_forward_known = true;
    const auto& yd = T[y].dims;
    ConvAxis axes[3];
    for (size_t i = 0; i < spatial; ++i) {
      axes[3 - spatial + i] = ConvAxis{xd[2 + i], yd[2 + i], wd[2 + i], IntsAttrAt(n, "strides", i, 1),
                                       IntsAttrAt(n, "pads", i, 0), IntsAttrAt(n, "dilations", i, 1)};
    }
    const GroupedDirectKernels& fk = EmbeddedConvScratchTable().grouped_direct_kernels;
    const uint64_t l2 = fk.gemm_forward_l2_bytes ? fk.gemm_forward_l2_bytes : 512 * 1024;
    const ForwardKernel forward = DenseForwardKernel(axes, c_in, c_out, xd[0], spatial, dig.l1_bytes, l2);
    if (forward == ForwardKernel::kGemm) {
      chosen_kernels.forward = ConvKernel::kGemm;
      // Output positions of a sample, of one depth slice in 3-D (which oneDNN unfolds whole).
      const uint64_t positions = spatial == 1 ? static_cast<uint64_t>(yd[2])
                                              : static_cast<uint64_t>(yd[spatial]) * static_cast<uint64_t>(yd[spatial + 1]);
      int64_t stride_area = 1;
      for (size_t i = 0; i < spatial; ++i) stride_area *= IntsAttrAt(n, "strides", i, 1);
      const uint64_t forward_positions =
          spatial == 3 ? positions
                       : fk.ForwardColumnPositions(c_in, c_out, static_cast<int64_t>(kernel), stride_area, positions);
      const uint64_t forward_col =
          KeepsSize(kernel, strided, xd, yd) ? 0 : eb * static_cast<uint64_t>(c_in) * kernel * forward_positions;
      // Measured beside them (tools/alloc_tracker.c, the forward of single conv1d/conv2d layers of 1-64
      // channels, kernels 4-41, batches 2-64): sgemm's buffer + 6900 bytes, or 8020 bytes where sgemm
      // runs a matrix-vector product (one output channel or one output position: SgemmRunsGemv) and
      // takes no buffer; the output's copy-out phase holds ideep's output + 4616 bytes. Dev seed 313
      // (1 -> 1, k4 s2 d2 onto a 1 x 1 map, batch 7): 8084 bytes of forward scratch, planned 25 % low
      // with the grouped rule's 5368 bytes; 16 -> 32 k31 padded by 15 over 1024: 493556 = 16 x 31 x
      // 208 floats + 73984 + 6900.
      const bool gemv = SgemmRunsGemv(positions, static_cast<uint64_t>(c_out));
      const uint64_t beside = gemv ? kGemmForwardGemvFixedBytes
                                   : g.DataGemmBufferBytes(positions, static_cast<uint64_t>(c_out)) +
                                         kGemmForwardFixedBytes;
      r->forward_temp_bytes = std::max(forward_col + beside, T[y].Bytes() + kGemmForwardCopyFixedBytes);
    } else if (forward == ForwardKernel::kAvx2) {
      // Blocked by 8: the output and the input or weight reorders as the AVX-512 kernel's (not measured).
      chosen_kernels.forward = ConvKernel::kJitAvx2;
      r->forward_temp_bytes = std::max(T[x].Bytes() + T[w].Bytes(), padded_to(y, 8)) + fixed;
    }
  }
  // oneDNN's gemm weight gradient over `positions` output positions of one depth slice (all of them
  // in 2-D): the im2col columns, copies of the weights and the sgemm packing buffer
  // (data/conv_scratch.json). The output gradient's leading dimension is every output position of
  // a sample.
  const uint64_t sample_positions =
      T[y].Elements() / std::max<uint64_t>(1, samples * static_cast<uint64_t>(std::max<int64_t>(1, c_out)));
  // A grouped layer runs one gemm per group, over the group's channels (`in_channels`, `out_channels`).
  auto gemm_weight_gradient = [&](uint64_t positions, int64_t in_channels = -1, int64_t out_channels = -1) {
    if (in_channels < 0) in_channels = c_in;
    if (out_channels < 0) out_channels = c_out;
    const uint64_t col = eb * static_cast<uint64_t>(in_channels) * kernel * positions;
    uint64_t gemm = g.col_copies * col + g.weight_copies * T[w].Bytes() + g.fixed_bytes;
    // With several threads it reduces per-thread copies of the weight gradient, each with its own
    // columns (oneDNN's gemm convolution, outer threading over the batch).
    r->per_thread_bytes = col + T[w].Bytes();
    if (out_channels >= g.pack_min_out_channels) {
      const uint64_t pack = g.PackBytes(static_cast<uint64_t>(in_channels) * kernel, static_cast<uint64_t>(out_channels),
                                        positions, sample_positions);
      gemm += pack;
      r->machine_dependent_bytes = pack + g.pack_worst_abs_error;
    }
    return gemm;
  };
  // A depthwise weight gradient on gemm (DepthwiseWeightGradientRefuses) runs channel by channel after
  // the input gradient: its scratch against the input gradient's (dev seed 243, 40 channels, 3x3 over a
  // 1 x 1 map, batch 2: a 23.6 KB step planned 3.5 KB low without it). Its threads split the channels,
  // not the batch, as far as anything measured tells: no per-thread copies are listed for it.
  if (dw_weight_gemm && T[y].dims.size() == xd.size()) {
    const uint64_t positions = spatial == 1 ? static_cast<uint64_t>(T[y].dims[2])
                                            : static_cast<uint64_t>(T[y].dims[2]) * static_cast<uint64_t>(T[y].dims[3]);
    const uint64_t per_thread = r->per_thread_bytes, machine_dependent = r->machine_dependent_bytes;
    r->backward_temp_bytes = std::max(r->backward_temp_bytes, gemm_weight_gradient(positions, 1, 1));
    r->per_thread_bytes = per_thread;
    r->machine_dependent_bytes = machine_dependent;
  }
  if (spatial == 3 && groups == 1 && c_in >= g.min_in_channels && c_in <= g.max_in_channels &&
      T[y].dims.size() == 5) {
    if (kernel > 1) chosen_kernels.weight_gradient = ConvKernel::kGemm;
    // 3-D, 4-15 input channels (tools/probe_scratch.py, random layers 4-16 wide, batches 2/4). The
    // input gradient runs oneDNN's blocked kernel: the output gradient, the weights and the input
    // gradient blocked by 16 channels (of the weights only their padding shows), then the input
    // gradient reordered to plain while its blocked copy lives; a strided 1x1x1 kernel keeps the
    // blocked input gradient, and from 9 input channels on the blocked output gradient with it.
    uint64_t input_phase = 0;
    if (input_grad) {
      const uint64_t xp = padded_to(x, 16), yp = padded_to(y, 16);
      // The weights count with their block padding only (probes gemm3d_grid and gemm3d_dev: the
      // residual beyond the blocked gradients is the padding + ~6 KiB at every batch; counting the
      // whole blocked weights planned the input-gradient phase 1 % high at the median, 7.5 % at p90).
      const uint64_t w_padding = weight_padding(16);
      // Where the blocked input gradient alone is the larger (strided layers), it comes without the
      // fixed part (probes: 5.7 KiB less than the blocked input gradient at the median).
      // From 9 input channels on a 1x1x1 kernel's weight gradient runs oneDNN's AVX2 kernel (jit:avx2
      // backward_weights) on the input and the output gradient blocked by 8, after the input gradient's
      // blocked buffers are gone: that phase is the larger, and its output gradient is blocked by 8, not
      // 16 (dev seed 527 of tools/probe_conv_fuzz.py, 12 -> 24, 1x1x1 strided by 2 over 3 x 16 x 16,
      // batch 8: aBcde8b buffers of 393216 and 98304 bytes at the peak, the input gradient's aBcde16b
      // one alone beside the plain result before; planned 2.2 % high with the output gradient by 16).
      input_phase = kernel == 1 ? (c_in > 8 ? std::max(xp, padded_to(x, 8) + padded_to(y, 8) + weight_padding(8)) : xp) + fixed
                                : std::max(yp + xp + w_padding - T[x].Bytes() + fixed, xp);
    }
    if (kernel > 1) {
      // The weight gradient then runs oneDNN's gemm, after the input gradient's reorders are gone;
      // its scratch does not grow with the batch (data/conv_scratch.json).
      const uint64_t positions = static_cast<uint64_t>(T[y].dims[3]) * static_cast<uint64_t>(T[y].dims[4]);
      r->backward_temp_bytes = std::max(input_phase, gemm_weight_gradient(positions));
    } else if (input_grad) {
      r->backward_temp_bytes = input_phase;
    }
  }
  // A 3-D first convolution (1-3 input channels, oneDNN's is_1stconv) whose boundary checks refuse
  // the direct kernels runs gemm in every direction: its weight gradient keeps the scratch of the
  // rule above (dev seed 38 of tools/probe_conv_fuzz.py, 3 -> 160 channels, 3x3x3 padded by 3 on a
  // 3-frame input: x64:gemm:jit forward, backward_data and backward_weights; its allocation trace:
  // the weight-gradient scratch of 209560 bytes (4 x the weights + one slice's columns) and sgemm's
  // 73984-byte buffer beside the weight gradient, planned 41 % low with the blocked rule).
  const bool first_conv_3d = spatial == 3 && groups == 1 && kernel > 1 && c_in <= 3 && T[y].dims.size() == 5;
  const bool first_conv_3d_gemm = first_conv_3d && DirectWeightGradientRefuses3d(n, xd, wd, T[y].dims);
  if (first_conv_3d_gemm) {
    // The forward is DenseForwardKernel's (dev seeds 625, 960, 1304, 1569, 1798, 1985, 1993: such 3-D
    // first convolutions ran jit:avx512_core forward_training, gemm backward).
    const ConvKernel forward = dense_forward_known ? chosen_kernels.forward : ConvKernel::kGemm;
    set_kernels(forward, ConvKernel::kGemm, ConvKernel::kGemm);
    const uint64_t positions = static_cast<uint64_t>(T[y].dims[3]) * static_cast<uint64_t>(T[y].dims[4]);
    r->backward_temp_bytes = std::max(r->backward_temp_bytes, gemm_weight_gradient(positions));
  }
  if (spatial == 3 && groups == 1 && kernel > 1 && c_in > g.max_in_channels && T[y].dims.size() == 5) {
    if (DirectWeightGradientRefuses3d(n, xd, wd, T[y].dims)) {
      // Wider inputs take oneDNN's direct weight gradient unless its checks refuse the layer; then
      // the gemm one runs, with the scratch of the narrow 3-D rule above, which does not grow with
      // the batch and grows with the weights (a 3x3x3 kernel from 512 to 512 channels over 1 frame
      // of 4x4 keeps 4 copies of its 28 MiB weights: 113 MiB; tools/probe_conv3d_steps.py, dev
      // layers of 16-512 channels over 1-2 frames).
      chosen_kernels.weight_gradient = ConvKernel::kGemm;
      const uint64_t positions = static_cast<uint64_t>(T[y].dims[3]) * static_cast<uint64_t>(T[y].dims[4]);
      r->backward_temp_bytes = std::max(r->backward_temp_bytes, gemm_weight_gradient(positions));
    } else {
      // The direct one forms the weight gradient in a blocked buffer once the other reorders are
      // gone, as in 2-D below (probed: 96 -> 192 and 32 -> 64 channels, stride 2: the weights +
      // 5.5-6 KiB whatever the batch, the larger of the two phases).
      r->backward_temp_bytes =
          std::max(r->backward_temp_bytes, T[w].Bytes() + weight_padding(16) + kConv2dWeightGradientFixedBytes);
    }
  }
  if (spatial == 2 && groups == 1 && kernel > 1 && c_in >= 16) {
    // The weight gradient of a dense 2-D convolution is formed in a blocked buffer once the reorders
    // of the input and the output gradient are gone: the blocked weights + a fixed part, the larger
    // of the two phases (tools/probe_scratch.py, bench/results/conv_scratch_probes.json
    // conv2d_weight_gradient: 64-960 input channels, kernels 3 and 5, maps 2x2-16x16, stride 1 and
    // 2, batches 1-8, exact; the zoo's ResNets and AlexNet went from up to 1.45 % low to exact). It
    // shows where the weights outweigh the activations: a 3x3 convolution from 960 to 256 channels
    // on a 4x4 map keeps 8.4 MiB whatever the batch. Narrower inputs differ (8 channels keep the
    // blocked output gradient beside it; a 3-channel 16x16 patch embedding 4.3 x its weights) and
    // keep the rules above.
    uint64_t weight_phase = T[w].Bytes() + weight_padding(weight_block) + kConv2dWeightGradientFixedBytes;
    // A dilated kernel that reaches wider than the input (DeepLab's ASPP: rates 12-36 on a 4x4 map)
    // is beyond oneDNN's direct kernel: the weight gradient runs its gemm implementation, the same
    // scratch as the 3-D one of data/conv_scratch.json (probes conv2d_dilated_gemm: 64-960 channels,
    // dilation 2-36; exact where the packing buffer is the fixed one, 20-25 KiB high where it is
    // sized by the operands; a dilated kernel within the input keeps the direct kernel's rule).
    const auto dilations = n.ints_attrs.find("dilations");
    bool beyond_input = false;
    for (size_t i = 0; dilated && i < 2 && dilations != n.ints_attrs.end() && i < dilations->second.size(); ++i) {
      beyond_input = beyond_input || (wd[2 + i] - 1) * dilations->second[i] + 1 > xd[2 + i];
    }
    // The same gemm weight gradient runs wherever both direct kernels' boundary checks refuse the
    // layer (padding as wide as the kernel, a dilated and strided height: tools/probe_conv_fuzz.py
    // dev seeds 51, 107, 118 ran x64:gemm:jit backward_weights under DNNL_VERBOSE).
    if (DirectWeightGradientRefuses2d(n, xd, wd, T[y].dims)) beyond_input = true;
    if (beyond_input && T[y].dims.size() == 4) {
      chosen_kernels.weight_gradient = ConvKernel::kGemm;
      const uint64_t positions = static_cast<uint64_t>(T[y].dims[2]) * static_cast<uint64_t>(T[y].dims[3]);
      weight_phase = std::max(weight_phase, gemm_weight_gradient(positions));
    }
    r->backward_temp_bytes = std::max(r->backward_temp_bytes, weight_phase);
  }
  // A 3-D first convolution that the direct kernels take pads its input gradient the same way (dev
  // seed 148, 2 -> 96 channels, 1x3x7: jit:avx512_core backward_data with ABcde16a16b weights; its
  // trace: 129024 bytes of blocked weights beside 36864 + 24576 of blocked gradients, planned 51 %
  // low without them).
  // A dense input gradient's phase: blocked by 16 (by 8 where the AVX2 kernel runs it) it holds the
  // output gradient, the input gradient and the weights beside the plain results the plan already
  // holds; where both direct kernels refuse it, the gemm input gradient's phase instead (dev seed 86:
  // conv1d 1 -> 256, k2 s2 over 1000, planned 6.5 % high with the blocked 16 x 16 weights and gradients).
  auto direct_or_gemm_input_phase = [&] {
    if (gemm_input) return gemm_input_phase;
    const uint64_t b = avx2_input ? 8 : 16;
    const uint64_t wb = eb * kernel * ((static_cast<uint64_t>(c_out) + b - 1) / b * b) *
                        ((static_cast<uint64_t>(c_in) + b - 1) / b * b);
    const uint64_t blocked = padded_to(y, b) + padded_to(x, b) + wb;
    return blocked - std::min(blocked, T[x].Bytes() + T[w].Bytes()) + fixed;
  };
  // The input gradient's own phase where the rule below computes it apart from the weight gradient's.
  std::optional<uint64_t> input_gradient_phase;
  // A dilated 1-D/2-D layer takes it too, now that DirectInputGradientKernel names its kernel (dev seed
  // 346: 4 -> 48, 4x4 dilated by 4 and padded by 6 over 72 x 72, batch 7: jit:avx512_core backward_data
  // on aBcd16b with ABcd16a16b weights, x64:gemm:jit backward_weights; planned 3.5 % low with the
  // 8-blocked rule above).
  const bool dilated_input_known = spatial <= 2 && dig.Known();
  if ((spatial <= 2 || (first_conv_3d && !first_conv_3d_gemm)) && groups == 1 && kernel > 1 && c_in < 16 &&
      !(c_in >= 4 && c_in <= 8 && c_out <= 8) && input_grad && (!dilated || dilated_input_known)) {
    // oneDNN's AVX-512 input gradient pads the input channels to 16 (ok_to_pad_channels): it holds
    // the output gradient and the input gradient blocked by 16 and the weights blocked 16 x 16
    // (ABcd16a16b), 16 / in_channels times their size - 8 x for 2 channels (allocation trace of dev
    // seed 97: 2 -> 320, k5: 512000 bytes of blocked weights beside 81920 + 16384; 1-D too, dev
    // seed 127: jit:avx512_core backward_data with ABcd16a16b for 4 channels). A dilated layer may
    // run the gemm input gradient instead (dev seed 108: x64:gemm:jit backward_data): its phase then.
    // Layers of 4-8 input and at most 8 output channels keep the probes' rule above; 1-3 input
    // channels into at most 8 take this one (dev seed 166, 1 -> 2 over 112 x 112: planned 49 % high
    // with the 8-blocked rule's extra padded input; its trace: blocked output and input gradients
    // by 16 and the 16 x 16 weights).
    // Where the AVX-512 kernel refuses it and the AVX2 one takes it, all of that is blocked by 8 (dev
    // seed 371: 4 -> 48, k5x2, stride 3 over 124 x 62, jit:avx2 backward_data; planned 13.5 % high, 261
    // KB, with blocks of 16; exact with 8).
    const uint64_t input_phase = direct_or_gemm_input_phase();
    // A first convolution (1-3 input channels) reorders no input for its weight gradient (src_ok takes
    // the plain input): that phase holds the blocked output gradient beside the results, and the
    // general rule's blocked input + output gradients beside them count the input gradient twice (dev
    // seed 122: 3 -> 24, 1x3, its trace: 2727936 + 1363968 blocked bytes, the plain input gradient
    // only after, planned 3.8 % high; seed 166 1.9 % high).
    r->backward_temp_bytes = c_in <= 3 ? std::max(input_phase, padded_to(y, 16) + fixed)
                                       : std::max(r->backward_temp_bytes, input_phase);
    input_gradient_phase = input_phase;
  }
  if (spatial <= 2 && groups == 1 && kernel > 1 && T[y].dims.size() == xd.size() &&
      DirectWeightGradientRefuses2d(n, xd, wd, T[y].dims)) {
    // Where both direct weight-gradient kernels refuse a dense layer (for 4-15 input channels the AVX2
    // kernel's checks alone decide; a kernel wider than 14 refuses both at any width: the usual strided
    // 1-D audio front end of k15-k17), oneDNN's gemm weight gradient runs. conv1d too, as 2-D over a
    // unit height. The gemm reads the plain input and output gradient: none of the weight gradient's
    // blocked reorders, so its scratch does not grow with the batch; an input gradient keeps its own
    // phase (probes conv1d_s2_only, conv1d_k17_stem, conv1d_k15_mid, conv2d_k1x15_stem,
    // conv2d_k3x15_mid, conv1d_k15_wide_mid, conv1d_k15_wider_mid, conv1d_k15_wide_stem,
    // conv2d_k1x17_wide_mid and unet1d_k15 of tools/probe_families.py: x64:gemm:jit backward_weights
    // under DNNL_VERBOSE, 817688 bytes of scratch at every batch from 2 for 8 -> 24 channels, k15 s2
    // over 2048; planned up to 49 % low at batch 2 and 16 % high at 8 with the blocked reorders).
    chosen_kernels.weight_gradient = ConvKernel::kGemm;
    const uint64_t positions = spatial == 1 ? static_cast<uint64_t>(T[y].dims[2])
                                            : static_cast<uint64_t>(T[y].dims[2]) * static_cast<uint64_t>(T[y].dims[3]);
    const uint64_t gemm = gemm_weight_gradient(positions);
    if (!input_grad) {
      r->backward_temp_bytes = gemm;
    } else if (input_gradient_phase) {
      r->backward_temp_bytes = std::max(*input_gradient_phase, gemm);
    } else if (c_in >= 16) {
      r->backward_temp_bytes = std::max(direct_or_gemm_input_phase(), gemm);
    } else {
      // (4-8 input channels into at most 8, or dilated: the narrow rules above hold their phases.)
      r->backward_temp_bytes = std::max(r->backward_temp_bytes, gemm);
    }
  }
  if (spatial <= 2 && groups == 1 && kernel > 1 && T[y].dims.size() == xd.size() && DilatedAxisStrided(n, spatial) &&
      DirectWeightGradientRefuses2d(n, xd, wd, T[y].dims)) {
    // Both direct input-gradient kernels (jit_avx512_common_conv_bwd_data_kernel_f32 and the AVX2
    // one, oneDNN 2.6.3 init_conf) refuse a dilated axis with a stride: the input gradient runs gemm
    // too (dev seeds 100 and 108: x64:gemm:jit backward_data and backward_weights). No reorders then:
    // the grouped gemm rule below with one group. conv1d is the same 2-D convolution over a unit
    // height: its dilated, strided width is refused alike (dev seed 221, 4 -> 2 channels, k2 s2 d3
    // over 16: planned 84 % low with the blocked reorders, 68388 bytes short - sgemm's buffer).
    // sgemm takes no buffer where the input-gradient gemm is a matrix-vector product (one output
    // position or one column: SgemmRunsGemv; dev seed 313, 1 -> 1 with k4 s2 d2 onto a 1 x 1 map,
    // planned +859 %, 71612 bytes high, with the buffer).
    chosen_kernels.input_gradient = chosen_kernels.weight_gradient = ConvKernel::kGemm;
    const uint64_t positions = spatial == 1 ? static_cast<uint64_t>(T[y].dims[2])
                                            : static_cast<uint64_t>(T[y].dims[2]) * static_cast<uint64_t>(T[y].dims[3]);
    const uint64_t col = eb * static_cast<uint64_t>(c_in) * kernel * positions;
    const uint64_t sgemm_buffer = g.DataGemmBufferBytes(positions, static_cast<uint64_t>(c_in) * kernel);
    r->backward_temp_bytes = std::max(input_grad ? gemm_data_phase(col + sgemm_buffer) : 0,
                                      gemm_weight_gradient(positions));
  }
  if (spatial == 1 && input_grad) {
    // conv1d: the weight gradient is formed in a blocked buffer and reordered, at a moment when the
    // other reorders are gone (measured 16-64 channels, 16-64 wide: the larger of the two). Blocked
    // in both channel dimensions it carries their padding: by 8 for 4-15 input channels, whose weight
    // gradient is the AVX2 kernel's (dev seed 72: 12 -> 320, jit:avx2 backward_weights into
    // ABcd8b8a, planned 7.6 % low without the 15360 bytes of padding).
    const uint64_t padding = groups == 1 && c_in >= 4 ? weight_padding(block) : 0;
    r->backward_temp_bytes = std::max(r->backward_temp_bytes, T[w].Bytes() + padding + fixed);
  }
  // A grouped convolution that is not depthwise (a channel multiplier counts: 1 input and 2 output
  // channels per group) runs oneDNN's direct kernels only for the per-group channel counts their
  // init_conf checks take (data/conv_scratch.json grouped_direct_kernels); otherwise
  // x64:gemm:jit on plain buffers (DNNL_VERBOSE on tools/probe_conv_fuzz.py dev seeds 70, 79, 89,
  // 96, 99, 114, 147, 154). No reorders then: ideep computes the output and the input gradient into
  // buffers of its own before copying them out, and oneDNN's scratchpad holds the im2col columns of
  // one group (in_channels / groups x kernel volume x output positions of one sample, or of one depth
  // slice in 3-D; none for a 1x1 kernel that keeps the size) and, for the weight gradient, what
  // data/conv_scratch.json's gemm rule gives (the same gemm_convolution_utils init_conf), per group.
  const GroupedDirectKernels& gk = EmbeddedConvScratchTable().grouped_direct_kernels;
  const bool one_channel_groups = groups > 1 && c_in == groups && c_out == groups;
  // A kernel that the padding puts wholly outside the input is refused by every direct kernel (dev
  // seed 102: a 1x1 kernel padded by 1, 40 -> 64 channels per group: x64:gemm:jit in all three
  // directions, planned 6.8 % low with the 8-channel direct kernels). A dense layer so padded runs
  // the same gemm as one group (dev seed 131: 96 -> 96, 3x3 padded by 3, planned 3.9 % high with the
  // blocked reorders).
  const bool outside = KernelOutsideSource(n, xd, wd, T[y].dims);
  // 3-D layers of one channel a group too: oneDNN 2.6.3 runs them on x64:gemm:jit in all three
  // directions on plain buffers (DNNL_VERBOSE, 3-D depthwise layers of 2-32 channels; the general
  // direct kernels refuse one channel a group, and no depthwise kernel took them). Forward holds no
  // output blocked by 16 (dev seed 424, 2 -> 2 channels over 4 x 28 x 49, batch 8: planned +120 %
  // with one, its peak in forward; +0.06 % now), and the input gradient keeps one depth slice's
  // columns beside ideep's own result (dev pool seeds 1314-2346, 12 such layers of 2-12 channels
  // measured: old rules -41 % to +193 %, this rule +0.01 % to +4.3 %).
  if (((groups > 1 && (!one_channel_groups || spatial == 3)) || (groups == 1 && outside)) && gk.Known() &&
      T[y].dims.size() == xd.size()) {
    const int64_t in_g = c_in / groups, out_g = c_out / groups;
    const int64_t data_block = outside ? 0 : gk.DataBlock(in_g, out_g);
    const bool data_gemm = data_block == 0;
    // Which direct weight-gradient kernel the group's channels allow, and whether its init_conf takes
    // the geometry: the AVX2 kernel (blocks of 8) refuses any dilation and a padded depth
    // (Avx2WeightGradientRefuses); blocks of 16 are the AVX-512 kernel's first, whose refusals are the
    // dense layers' (DirectWeightGradientRefuses2d, whose AVX2 part is the same kernel's;
    // DirectWeightGradientRefuses3d), then the AVX2 one's. Dev seed 392 of tools/probe_conv_fuzz.py
    // (3-D 16 -> 48 in 2 groups, 8 -> 24 each, k3 s2 d2 padded by 2, batch 1): x64:gemm:jit
    // backward_weights under DNNL_VERBOSE, where the channel blocks alone named the AVX2 kernel.
    const int64_t weight_block = gk.WeightGradientBlock(in_g, out_g);
    bool weight_refused = weight_block == 0;
    if (weight_block != 0 && weight_block < 16) weight_refused = Avx2WeightGradientRefuses(n, xd, wd, T[y].dims);
    if (weight_block >= 16) {
      weight_refused = (spatial == 3 ? DirectWeightGradientRefuses3d(n, xd, wd, T[y].dims) &&
                                           Avx2WeightGradientRefuses(n, xd, wd, T[y].dims)
                                     : DirectWeightGradientRefuses2d(n, xd, wd, T[y].dims));
    }
    const bool weight_gemm = outside || weight_refused;
    // Both direct input-gradient kernels refuse a dilated, strided axis whatever the groups (their
    // init_conf, as for dense layers: DilatedAxisStrided); the forward keeps its direct kernel (seed
    // 392: jit:avx512_core forward_training on 8c8b blocks, x64:gemm:jit backward_data on plain ones).
    const bool input_gemm = !data_gemm && input_grad && DilatedAxisStrided(n, spatial);
    ConvKernel weight_kernel = ConvKernel::kJitAvx512;
    if (weight_gemm) {
      weight_kernel = ConvKernel::kGemm;
    } else if (weight_block < 16 || (spatial == 3 ? DirectWeightGradientRefuses3d(n, xd, wd, T[y].dims)
                                                  : WeightGradientBlock2d(n, xd, wd, T[y].dims) == 8)) {
      weight_kernel = ConvKernel::kJitAvx2;
    }
    set_kernels(data_gemm ? ConvKernel::kGemm : ConvKernel::kJitAvx512,
                data_gemm || input_gemm ? ConvKernel::kGemm : ConvKernel::kJitAvx512, weight_kernel);
    const auto& yd = T[y].dims;
    const uint64_t positions = spatial == 1 ? static_cast<uint64_t>(yd[2])
                                            : static_cast<uint64_t>(yd[yd.size() - 2]) * static_cast<uint64_t>(yd.back());
    const bool keeps_size = KeepsSize(kernel, strided, xd, yd);
    const uint64_t col = keeps_size ? 0 : eb * static_cast<uint64_t>(in_g) * kernel * positions;
    const uint64_t weight_phase = weight_gemm ? gemm_weight_gradient(positions, in_g, out_g) : 0;
    if (data_gemm) {
      // Each of the forward and input-gradient sgemm calls takes sgemm's own buffer (allocation
      // traces of dev seeds 70 and 74: 73984 bytes a call, the size the weight gradient's gemm takes
      // where it does not pack). 1-D and 2-D forward unfolds an L2-sized block of positions.
      int64_t stride_area = 1;
      for (size_t i = 0; i + 2 < xd.size(); ++i) stride_area *= IntsAttrAt(n, "strides", i, 1);
      const uint64_t forward_positions =
          spatial == 3 ? positions
                       : gk.ForwardColumnPositions(in_g, out_g, static_cast<int64_t>(kernel), stride_area, positions);
      const uint64_t forward_col = keeps_size ? 0 : eb * static_cast<uint64_t>(in_g) * kernel * forward_positions;
      // ideep's own output (input gradient) stands in for the result while the gemm runs, then both
      // live while it is copied out: the larger of columns + sgemm's buffer and one more result. The
      // fixed part is the gemm primitive's (data/conv_scratch.json fixed_bytes, probed for its weight
      // gradient), not the blocked kernels' 7 KiB: dev seeds 70, 77, 89, 136 and 153, every grouped
      // gemm row above 1 %, were planned 2.0-4.5 KiB high with 7 KiB, 0.3-2.7 KiB with it.
      // Does sgemm allocate that buffer for these calls too? Yes, on every call however small the map:
      // dev seed 70's trace (15 output positions) allocates 73984 bytes in each of its 16 forward and
      // 16 input-gradient gemm calls, dev seed 38's in each of 21 per direction.
      // Not on a one-position map: both gemms then have m = 1, and gemm_threading_driver takes
      // jump_to_gemv before it allocates anything (tools/probe_conv_gemv.py, dev ids 950000 and
      // 950007: 1 x 1 maps planned 52-71 KB high with the buffer; 2 x 2 and 3 x 3 maps hold it).
      // The same holds for a one-channel output group in forward (n = out_channels / groups = 1) and a
      // one-column input gradient (n = in_channels / groups x kernel volume = 1): SgemmRunsGemv.
      const uint64_t forward_buffer = g.DataGemmBufferBytes(positions, static_cast<uint64_t>(out_g));
      const uint64_t input_buffer = g.DataGemmBufferBytes(positions, static_cast<uint64_t>(in_g) * kernel);
      r->forward_temp_bytes = std::max(forward_col + forward_buffer, T[y].Bytes()) + g.fixed_bytes;
      r->backward_temp_bytes =
          std::max(input_grad ? gemm_data_phase(col + input_buffer) : 0, weight_phase);
      if (input_grad) note_data_gemm_pack(positions, static_cast<uint64_t>(in_g) * kernel, static_cast<uint64_t>(out_g));
    } else if (input_gemm && weight_gemm) {
      // The whole backward on gemm, as for the groups above; forward keeps the direct kernel's rule.
      // Seed 392's trace: ideep's input gradient beside one depth slice's columns and sgemm's buffer
      // (6 calls: 2 groups x 3 output depths), then the weight gradient's scratch (one slice's columns
      // + 4 x the weights) and sgemm's packing buffer (151840 bytes): planned 40 % low before.
      const uint64_t input_buffer = g.DataGemmBufferBytes(positions, static_cast<uint64_t>(in_g) * kernel);
      r->backward_temp_bytes = std::max(gemm_data_phase(col + input_buffer), weight_phase);
    } else if (weight_gemm && data_block < 16) {
      // A direct input gradient by blocks of 4 channels (ok_to_try_lower_zmm) reorders nothing for a
      // gemm weight gradient: the blocked input gradient lives beside the plain one it is reordered
      // to, then the weight gradient's gemm runs (dev seed 71: 8 -> 4 channels per group, k3: its
      // trace holds 51200 bytes of aBcd4b input gradient beside the plain one, nothing output-sized;
      // planned 6.6 % high with the 16-blocked input and output-gradient reorders). Dev seed 126 (4 ->
      // 64 channels per group, 1-D) has its input gradient refused by the 4-channel kernel's width
      // blocking (x64:gemm:jit backward_data, not modelled): ideep's own input-gradient buffer stands
      // beside the result all the same, and it planned exact this way (5.5 % high before).
      r->backward_temp_bytes = std::max(input_grad ? padded_to(x, static_cast<uint64_t>(data_block)) : 0, weight_phase);
    } else if (weight_gemm) {
      r->backward_temp_bytes = std::max(r->backward_temp_bytes, weight_phase);
    }
  }
  // A dilated depthwise layer: oneDNN's depthwise input- and weight-gradient kernels (jit_uni_dw_conv
  // bwd_data and bwd_weights init_conf) refuse any dilation, and the general direct kernels refuse one
  // channel a group, so both run gemm group by group on plain buffers: no blocked reorders, one
  // channel's columns and sgemm's buffer for the input gradient, the gemm weight gradient's scratch
  // (dev seed 389: 24 channels, k3, dilation 3 over 3 x 39, batch 7; x64:gemm:jit backward_data and
  // backward_weights, planned 33 % high with the blocked reorders). Forward keeps the depthwise
  // kernel, which takes a dilation. A stride changes none of that: those init_conf refusals of a
  // dilation come first (dev seed 553 of tools/probe_conv_fuzz.py, conv1d 16 channels in 16 groups, k3
  // s2 d4 padded by 4 over 16, batch 7: jit_dw forward_training, x64:gemm:jit backward_data and
  // backward_weights; its trace holds sgemm's 73984-byte buffer at the peak, planned 64 % low with the
  // blocked reorders of the depthwise kernels). (With a channel multiplier, dev seed 270, the grouped
  // rule above.) 3-D depthwise layers have no depthwise kernel at all.
  if (one_channel_groups && dilated && spatial <= 2 && kernel > 1 && T[y].dims.size() == xd.size()) {
    chosen_kernels.input_gradient = chosen_kernels.weight_gradient = ConvKernel::kGemm;
    const auto& yd = T[y].dims;
    const uint64_t positions = spatial == 1 ? static_cast<uint64_t>(yd[2])
                                            : static_cast<uint64_t>(yd[2]) * static_cast<uint64_t>(yd[3]);
    const uint64_t col = eb * kernel * positions;
    const uint64_t input_phase =
        input_grad ? gemm_data_phase(col + g.DataGemmBufferBytes(positions, kernel)) : 0;
    r->backward_temp_bytes = std::max(input_phase, gemm_weight_gradient(positions, 1, 1));
  }
  // A dense 2-D layer of 4-15 input channels whose weight gradient runs a direct kernel (AVX2, blocked by
  // 8: WeightGradientBlock2d) forms it blocked in both channel dimensions, as the wider layers above do,
  // and reorders it into the plain gradient while both live: the blocked weights (padded) + a fixed
  // part beside what the plan holds, once the input gradient's reorders are gone. The rules for these
  // widths held only the reorders of the activations, enough where the map outweighs the weights (dev
  // seed 487 of tools/probe_conv_fuzz.py, conv2d 12 -> 48, k7 s2 padded by (4, 3) over 7 x 7, batch 6:
  // jit:avx2 backward_weights into ABcd8b8a; its trace peaks with the 150528-byte blocked weight
  // gradient beside the 112896-byte plain one; planned 15.4 % low). Dilated layers and those the direct
  // kernels refuse run the gemm weight gradient (their rules above).
  if (spatial == 2 && groups == 1 && kernel > 1 && c_in >= 4 && c_in < 16 && !depthwise && !dilated &&
      T[y].dims.size() == xd.size() && !DirectWeightGradientRefuses2d(n, xd, wd, T[y].dims)) {
    r->backward_temp_bytes = std::max(r->backward_temp_bytes,
                                      T[w].Bytes() + weight_padding(weight_block) + kConv2dWeightGradientFixedBytes);
  }
  // A dense input gradient on gemm: its phase beside the weight gradient's (the rules above that run
  // the gemm input gradient, and the narrow rule that replaces it, give the same phase or more).
  if (gemm_input) r->backward_temp_bytes = std::max(r->backward_temp_bytes, gemm_input_phase);
  r->machine_dependent_bytes = std::max(r->machine_dependent_bytes, l1_dependent_bytes);
  ContiguousCopies(ctx, x, y, r);
}

// Whether tensor `id` is only a rearrangement of a recurrent layer's weights: torch.onnx.export
// slices LSTM/GRU parameters into ONNX's gate order and concatenates them again (per direction,
// then both directions) before the LSTM/GRU node. PyTorch's recurrent layer reads its parameters
// as they are: no such tensor exists in a training step.
bool FeedsRecurrentWeights(const Model& m, int id, int depth = 0) {
  if (id < 0 || depth > 8 || m.tensors[id].consumers.empty()) return false;
  for (int c : m.tensors[id].consumers) {
    const NodeInfo& n = m.nodes[c];
    const std::string& k = n.op_type;
    if (k == "LSTM" || k == "GRU" || k == "RNN") {
      // Inputs 1-3 are W, R and B; 0 is the sequence, 5 and 6 the initial states.
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (n.inputs[i] == id && (i == 0 || i > 3)) return false;
      }
    } else if (k == "Concat" || k == "Unsqueeze" || k == "Reshape" || k == "Squeeze") {
      if (n.outputs.empty() || !FeedsRecurrentWeights(m, n.outputs[0], depth + 1)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// A stacked nn.LSTM/GRU exports one node per layer, but PyTorch runs all layers in one call
// whose caller holds the stack's input until the last layer is done. For a second or later
// layer: the bytes of the stack's input, when nothing else keeps it alive (0 otherwise).
uint64_t StackInputHeldBytes(const Model& m, const ConcreteShapes& s, const LogicalOp& op) {
  auto scope = [&](int node) {
    const std::string& name = m.nodes[node].name;
    return name.substr(0, name.rfind('/') == std::string::npos ? 0 : name.rfind('/'));
  };
  auto through_views = [&](int id, bool up) {  // follows single-input layout ops up to the source
    for (int depth = 0; depth < 8 && id >= 0; ++depth) {
      int p = m.tensors[id].producer;
      if (p < 0 || m.nodes[p].inputs.empty()) break;
      const std::string& k = m.nodes[p].op_type;
      if (k != "Transpose" && k != "Reshape" && k != "Squeeze" && k != "Unsqueeze") break;
      if (!up) break;
      id = m.nodes[p].inputs[0];
    }
    return id;
  };
  int first = op.nodes[0];
  for (int depth = 0; depth < 16; ++depth) {
    int src = through_views(m.nodes[first].inputs.empty() ? -1 : m.nodes[first].inputs[0], true);
    int p = src >= 0 ? m.tensors[src].producer : -1;
    if (p < 0 || m.nodes[p].op_type != m.nodes[first].op_type || scope(p) != scope(first)) break;
    first = p;
  }
  if (first == op.nodes[0]) return 0;
  int x = m.nodes[first].inputs[0];
  // A contiguous stack input is what the first layer keeps for backward: alive anyway.
  if (!NonContiguous(m, s, x)) return 0;
  int source = through_views(x, true);
  if (source < 0 || !s.tensors[source].known) return 0;
  // Exported with module paths, a source made outside the recurrent module is held by the caller
  // until the module returns, and the step simulation holds it so (HeldUntilCallReturns).
  const int source_producer = m.tensors[source].producer;
  const std::string stack_scope = scope(first);
  if (!stack_scope.empty() && stack_scope[0] == '/' && source_producer >= 0) {
    const std::string from = scope(source_producer);
    const bool inside = from.size() >= stack_scope.size() && from.compare(0, stack_scope.size(), stack_scope) == 0 &&
                        (from.size() == stack_scope.size() || from[stack_scope.size()] == '/');
    if (!inside) return 0;
  }
  int users = 0;
  for (int c : m.tensors[source].consumers) users += m.nodes[c].op_type != "Shape";
  return users == 1 ? s.tensors[source].Bytes() : 0;
}

// The gradient of a broadcast operand of a product (squeeze-excite's x * s) is formed at the
// output's size and then summed down: one output-sized temporary in backward.
void BroadcastGradientScratch(const LogicalOp& op, const RuleContext& ctx, OpRule* r) {
  const auto& T = ctx.shapes.tensors;
  int out = op.outputs.empty() ? -1 : op.outputs[0];
  if (out < 0) return;
  for (int id : op.inputs) {
    if (id >= 0 && ctx.requires_grad[id] && T[id].Elements() < T[out].Elements()) {
      r->backward_temp_bytes = std::max<uint64_t>(r->backward_temp_bytes, T[out].Bytes());
    }
  }
}

}  // namespace

std::vector<LogicalOp> FuseOperators(const Model& model, const ConcreteShapes& shapes) {
  return Fuser(model, shapes).Run();
}

namespace {

// Batch dim i (of `rank`) of a matmul operand with dims d: right-aligned, 1 where the operand has fewer dims.
int64_t MatMulBatchDim(const std::vector<int64_t>& d, size_t rank, size_t i) {
  const size_t own = d.size() - 2;
  return i + own >= rank ? d[i + own - rank] : 1;
}

// Whether a Reduce* node reduces some of its input's axes, not all (axes as an attribute, or as a
// second input from opset 18 and for ReduceSum from 13).
bool ReducesSomeAxes(const Model& m, const ConcreteShapes& shapes, const LogicalOp& op) {
  if (op.nodes.empty() || op.inputs.empty() || op.inputs[0] < 0) return false;
  const auto& T = shapes.tensors;
  const size_t rank = T[op.inputs[0]].dims.size();
  const NodeInfo& first = m.nodes[op.nodes[0]];
  if (auto axes = first.ints_attrs.find("axes"); axes != first.ints_attrs.end() && axes->second.size() < rank) {
    return true;
  }
  const int axes_input = op.inputs.size() > 1 ? op.inputs[1] : -1;
  return axes_input >= 0 && T[axes_input].Elements() > 0 && T[axes_input].Elements() < rank;
}

// Whether a Slice steps by 1 on every axis (no steps input, or a known one of ones; an unknown one is taken for 1).
// chunk() and split() export such pieces only; a strided piece (x[:, ::2]) is plain slicing, whose SliceBackward0
// builds an input-sized gradient of its own (probe token_merge: ToMe's alternate tokens, planned as one joined
// gradient, backward -8 %).
bool SliceStepsAreOne(const Model& m, const NodeInfo& n) {
  if (n.inputs.size() < 5 || n.inputs[4] < 0) return true;
  const TensorInfo& steps = m.tensors[static_cast<size_t>(n.inputs[4])];
  return !steps.has_value || std::all_of(steps.value.begin(), steps.value.end(), [](double v) { return v == 1; });
}

// The output of the ArgMax (ArgMin) that torch.onnx writes beside a ReduceMax (ReduceMin) for values, indices =
// x.max(dim) (x.min(dim)): the same input, the same single axis and keepdims, indices of the first extreme; -1
// where there is none (torch.amax, or max(dim) whose indices nothing reads: the exporter drops that ArgMax).
int IndicesBeside(const Model& m, const ConcreteShapes& shapes, const LogicalOp& op) {
  if (op.nodes.size() != 1 || op.inputs.empty() || op.inputs[0] < 0) return -1;
  const NodeInfo& reduce = m.nodes[op.nodes[0]];
  const std::string arg = reduce.op_type == "ReduceMax" ? "ArgMax" : reduce.op_type == "ReduceMin" ? "ArgMin" : "";
  auto axes = reduce.ints_attrs.find("axes");
  if (arg.empty() || axes == reduce.ints_attrs.end() || axes->second.size() != 1) return -1;
  auto flag = [](const NodeInfo& n, const char* name, int64_t fallback) {
    auto it = n.int_attrs.find(name);
    return it == n.int_attrs.end() ? fallback : it->second;
  };
  const int64_t rank = static_cast<int64_t>(shapes.tensors[static_cast<size_t>(op.inputs[0])].dims.size());
  auto normal = [&](int64_t a) { return a < 0 && rank > 0 ? a + rank : a; };
  for (int c : m.tensors[op.inputs[0]].consumers) {
    const NodeInfo& n = m.nodes[static_cast<size_t>(c)];
    if (n.op_type != arg || n.inputs.empty() || n.inputs[0] != op.inputs[0] || n.outputs.empty() || n.outputs[0] < 0) {
      continue;
    }
    if (normal(flag(n, "axis", 0)) == normal(axes->second[0]) && flag(n, "keepdims", 1) == flag(reduce, "keepdims", 1) &&
        flag(n, "select_last_index", 0) == 0) {
      return n.outputs[0];
    }
  }
  return -1;
}

// Whether tensor `id` is likely to hold exact zeros when the step runs: the result of a Relu or of a clamp
// whose lower bound is 0 (torch.clamp(x, 0, 1), nn.ReLU), carried through views, indexing, concatenation,
// a product with such a value, or a sum or difference of two such values (NODE's leaf choices
// c0 * (1 - code) + c1 * code). prod(dim)'s backward takes another formula when its input holds a zero
// (ReduceProd:zeros in data/elementwise_scratch.json). Any other value (a random normal, a softmax, a
// sigmoid) is taken to hold none.
bool MayHoldExactZeros(const Model& m, const ConcreteShapes& shapes, int id, int depth = 0) {
  if (id < 0 || depth > 12 || m.tensors[id].kind != TensorKind::kActivation || m.tensors[id].producer < 0) {
    return false;
  }
  const NodeInfo& n = m.nodes[m.tensors[id].producer];
  const std::string& k = n.op_type;
  auto at = [&](size_t i) { return i < n.inputs.size() ? n.inputs[i] : -1; };
  if (k == "Relu") return true;
  if (k == "Clip") return at(1) >= 0 && ScalarNear(shapes, at(1), 0.0);
  if (k == "Unsqueeze" || k == "Squeeze" || k == "Reshape" || k == "Transpose" || k == "Slice" ||
      k == "Gather" || k == "Expand" || k == "Identity" || k == "Flatten") {
    return MayHoldExactZeros(m, shapes, at(0), depth + 1);
  }
  if (k == "Concat") {
    for (int x : n.inputs) {
      if (MayHoldExactZeros(m, shapes, x, depth + 1)) return true;
    }
    return false;
  }
  if (k == "Mul") return MayHoldExactZeros(m, shapes, at(0), depth + 1) || MayHoldExactZeros(m, shapes, at(1), depth + 1);
  if (k == "Add" || k == "Sub") {
    return MayHoldExactZeros(m, shapes, at(0), depth + 1) && MayHoldExactZeros(m, shapes, at(1), depth + 1);
  }
  return false;
}

// Whether tensor `id` is a Transpose (reached through elementwise ops) of a convolution's output, or of a view
// of one (conv(x).flatten(2).transpose(1, 2)): the convolution's memory format follows its input's (oneDNN
// keeps a channels-last input channels-last), which DimOrder does not follow, so such tokens may well be
// contiguous in PyTorch (SegFormer's Mix-FFN: probes token_depthwise_ffn and sr_attention_mixffn were exact).
bool TransposeOfConvOutput(const Model& m, int id) {
  for (int walked = 0; id >= 0 && walked < 16; ++walked) {
    const TensorInfo& t = m.tensors[id];
    if (t.kind != TensorKind::kActivation || t.producer < 0) return false;
    const NodeInfo& n = m.nodes[t.producer];
    if (n.inputs.empty()) return false;
    if (n.op_type == "Transpose") {
      for (int src = n.inputs[0], hops = 0; src >= 0 && hops < 4; ++hops) {
        const TensorInfo& st = m.tensors[src];
        if (st.kind != TensorKind::kActivation || st.producer < 0) return false;
        const NodeInfo& p = m.nodes[st.producer];
        if (p.op_type == "Conv" || p.op_type == "ConvTranspose") return true;
        if (p.op_type != "Reshape" && p.op_type != "Flatten" && p.op_type != "Unsqueeze" && p.op_type != "Squeeze") {
          return false;
        }
        src = p.inputs.empty() ? -1 : p.inputs[0];
      }
      return false;
    }
    // elementwise ops keep the operand's layout: follow the operand of the output's shape
    int next = -1;
    for (int x : n.inputs) {
      if (x >= 0 && m.tensors[x].kind == TensorKind::kActivation) {
        next = x;
        break;
      }
    }
    static const std::set<std::string> kElementwise = {"Mul", "Add", "Sub", "Div", "Erf", "Relu", "Sigmoid", "Tanh",
                                                       "Dropout", "Neg", "Exp", "Sqrt", "Pow", "Clip", "Identity"};
    if (!kElementwise.count(n.op_type)) return false;
    id = next;
  }
  return false;
}

OpRule HandRule(const LogicalOp& op, const RuleContext& ctx) {
  const Model& m = ctx.model;
  const auto& T = ctx.shapes.tensors;
  OpRule r;
  r.output_view_of.assign(op.outputs.size(), -1);
  r.grad_alias_output.assign(op.inputs.size(), -1);
  const std::string& k = op.kind;
  auto in = [&](size_t i) { return i < op.inputs.size() ? op.inputs[i] : -1; };
  auto out = [&](size_t i) { return i < op.outputs.size() ? op.outputs[i] : -1; };
  auto rg = [&](int id) { return id >= 0 && ctx.requires_grad[id]; };
  auto save = [&](int id) {
    if (id >= 0 && !IsParam(m, id) && !IsConstant(m, id)) r.saved_tensors.push_back(id);
  };
  auto bytes = [&](int id) -> uint64_t { return id >= 0 ? T[id].Bytes() : 0; };
  auto elements = [&](int id) -> uint64_t { return id >= 0 ? T[id].Elements() : 0; };
  const bool cpu = ctx.target == Target::kCpu;

  if (k == "Conv" || k == "ConvTranspose") {
    save(in(0));  // the input
    save(in(1));  // and the weight: one formula computes both gradients (a weight computed in forward is kept)
    if (cpu) ConvScratch(ctx, op, &r);
    if (cpu) ChannelsLastDenseConvScratch(ctx, op, &r);
  } else if (k == "Gemm") {
    if (rg(in(1)) || IsParam(m, in(1))) save(in(0));
    if (rg(in(0))) save(in(1));
  } else if (k == "MatMul") {
    // matmul() folds a 3-D input with a 2-D weight into [N*L, C] by reshape(), which copies an
    // input whose last dim is innermost but which is not contiguous (nn.MultiheadAttention's
    // batch_first q.transpose(1, 0)); mm keeps that copy for the weight's gradient.
    bool folded_copy = false;
    if (in(0) >= 0 && in(1) >= 0 && T[in(0)].dims.size() >= 3 && T[in(1)].dims.size() == 2 &&
        NonContiguous(m, ctx.shapes, in(0))) {
      auto order = DimOrder(m, ctx.shapes).Of(in(0));
      folded_copy = order && !order->empty() && order->back() == static_cast<int>(T[in(0)].dims.size()) - 1;
      // In order with gaps (a piece of a chunk viewed again): the fold copies only where it merges across one.
      if (folded_copy && IsDenseOrder(T[in(0)].dims, *order)) {
        auto strides = ViewStrides(m, ctx.shapes, in(0));
        folded_copy = !strides || LeadingFoldCopies(T[in(0)].dims, *strides);
      }
      // A broadcast input (a learned query expanded over the batch) is copied whole by the fold
      // (cross-attention probes, tools/measure_xattn.py: the saved bytes were one [N, L, C] short).
      folded_copy = folded_copy || (!order && ExpandedView(m, ctx.shapes, in(0)));
      // A piece of the keys (kv[:, :L] as the query) leaves a gap between the dims the fold merges:
      // reshape() copies it too (cross-attention probe xa_slice: the plan kept the whole of kv).
      if (!order && !folded_copy) {
        if (auto strides = ViewStrides(m, ctx.shapes, in(0))) {
          folded_copy = LeadingFoldCopies(T[in(0)].dims, *strides);
        }
      }
      // A permuted input whose last dim is not innermost (talking heads: Linear over the heads of
      // scores.permute(0, 2, 3, 1)) is folded too, except a 3-D one over a dense first dim (bmm, below;
      // ATen's should_fold), and reshape() copies it where its leading dims cannot merge; mm keeps the
      // copy, not the storage it was permuted from (unseen set 15's cait_talking_heads: the post-softmax
      // Linear's copy was left out, saved -6.9 %).
      if (order && !folded_copy && T[in(0)].known && IsPermutation(*order, T[in(0)].dims.size())) {
        const std::vector<int64_t>& d = T[in(0)].dims;
        std::vector<int64_t> strides(d.size(), 1);
        int64_t step = 1;
        for (size_t i = order->size(); i-- > 0;) {
          strides[static_cast<size_t>((*order)[i])] = step;
          step *= std::max<int64_t>(d[static_cast<size_t>((*order)[i])], 1);
        }
        const bool bmm = d.size() == 3 && strides[2] != 1 && strides[0] == d[1] * d[2];
        folded_copy = !bmm && LeadingFoldCopies(d, strides);
      }
    }
    // matmul() does not fold a 3-D input whose last two dims are transposed over a dense first dim
    // (x.transpose(1, 2) of a contiguous [N, C, L]; ATen's should_fold in 1.13): it expands the 2-D weight over
    // the first dim and runs bmm, whose backward forms the expanded weight's gradient [N, K, M] before
    // summing it to [K, M]: N x the weight's bytes of scratch. Probe patch_bn_encoder (tools/probe_families.py,
    // PatchTST's Linear after a BatchNorm1d over transposed tokens): the MLP's first Linear.
    if (!folded_copy && rg(in(1)) && in(0) >= 0 && in(1) >= 0 && T[in(0)].known && T[in(1)].known &&
        T[in(0)].dims.size() == 3 && T[in(1)].dims.size() == 2) {
      const std::vector<int64_t>& d = T[in(0)].dims;
      auto order = DimOrder(m, ctx.shapes).Of(in(0));
      if (order && *order == std::vector<int>{0, 2, 1} && d[0] > 1 && d[1] > 1 && d[2] > 1 &&
          !TransposeOfConvOutput(m, in(0))) {
        r.backward_temp_bytes += static_cast<uint64_t>(d[0]) * bytes(in(1));
      }
    }
    const bool batched = in(0) >= 0 && in(1) >= 0 && T[in(0)].dims.size() >= 4 &&
                         T[in(0)].dims.size() == T[in(1)].dims.size() &&
                         std::equal(T[in(0)].dims.begin(), T[in(0)].dims.end() - 2, T[in(1)].dims.begin());
    // Both operands 3-D or more with batch dims that broadcast: matmul() expands each to the
    // broadcast batch and reshapes it to [batch product, n, m]; an operand whose batch dims were
    // expanded is copied whole when two or more broadcast batch dims exceed 1 (they cannot merge
    // into one stride), and bmm keeps the copy. Backward forms that copy's gradient at its full size
    // before summing it down to the operand (the full-size gradients of both are live at once). Probe bcast_matmul5d (tools/probe_families.py: a capsule
    // layer's W [1, I, J, n, m] @ u [N, I, 1, m, 1]) kept neither copy: saved -99 %, peak -58..-83 %.
    std::array<uint64_t, 2> expanded_bytes = {0, 0};  // per operand: its expanded copy, 0 if none
    if (in(0) >= 0 && in(1) >= 0 && T[in(0)].known && T[in(1)].known && T[in(0)].dims.size() >= 3 &&
        T[in(1)].dims.size() >= 3) {
      const std::vector<int64_t>& a = T[in(0)].dims;
      const std::vector<int64_t>& b = T[in(1)].dims;
      const size_t rank = std::max(a.size(), b.size()) - 2;
      auto batch_dim = [&](const std::vector<int64_t>& d, size_t i) { return MatMulBatchDim(d, rank, i); };
      std::vector<int64_t> broadcast(rank);
      bool valid = true;
      for (size_t i = 0; i < rank; ++i) {
        const int64_t x = batch_dim(a, i), y = batch_dim(b, i);
        valid = valid && (x == y || x == 1 || y == 1);
        broadcast[i] = std::max(x, y);
      }
      const auto above_one = std::count_if(broadcast.begin(), broadcast.end(), [](int64_t d) { return d > 1; });
      for (int i = 0; valid && above_one >= 2 && i < 2; ++i) {
        const std::vector<int64_t>& d = i == 0 ? a : b;
        uint64_t product = 1, own = 1;
        for (size_t j = 0; j < rank; ++j) {
          product *= static_cast<uint64_t>(broadcast[j]);
          own *= static_cast<uint64_t>(batch_dim(d, j));
        }
        if (own < product && own > 0) expanded_bytes[i] = bytes(in(i)) / own * product;
      }
    }
    // An operand whose batch dims already are the broadcast batch (q [N, h, T, d] against a table shared over the
    // batch, [1, h, d, R]) takes the same expand-and-reshape path as when both batches agree: reshape() copies it
    // where its batch dims cannot merge (BatchFoldCopies), and bmm keeps that copy, not the storage it views
    // (probe rel_pos_scores, DeBERTa's content-to-position scores: the plan kept the whole qkv projection).
    // Two 3-D operands run bmm as they are (no reshape).
    std::array<bool, 2> reshaped_whole = {batched, batched};
    if (!batched && in(0) >= 0 && in(1) >= 0 && T[in(0)].known && T[in(1)].known && T[in(0)].dims.size() >= 3 &&
        T[in(1)].dims.size() >= 3 && std::max(T[in(0)].dims.size(), T[in(1)].dims.size()) >= 4) {
      const std::vector<int64_t>& a = T[in(0)].dims;
      const std::vector<int64_t>& b = T[in(1)].dims;
      const size_t rank = std::max(a.size(), b.size()) - 2;
      auto batch_dim = [&](const std::vector<int64_t>& d, size_t i) { return MatMulBatchDim(d, rank, i); };
      for (int i = 0; i < 2; ++i) {
        bool whole = true;
        for (size_t j = 0; j < rank; ++j) {
          whole = whole && batch_dim(i == 0 ? a : b, j) == std::max(batch_dim(a, j), batch_dim(b, j));
        }
        reshaped_whole[i] = whole;
      }
    }
    auto keep = [&](int id) {
      const int i = id == in(0) ? 0 : 1;
      if (expanded_bytes[i] > 0) {
        r.saved_extra.push_back({expanded_bytes[i], "broadcast batch copy"});
      } else if (reshaped_whole[i] && BatchFoldCopies(m, ctx.shapes, id)) {
        r.saved_extra.push_back({bytes(id), "batched copy"});
      } else {
        save(id);
      }
    };
    for (int i : {0, 1}) {  // (the gradient at the operand's own size is counted as the gradient)
      if (expanded_bytes[i] > 0 && rg(in(i))) r.backward_temp_bytes += expanded_bytes[i] - bytes(in(i));
    }
    if (rg(in(1)) && folded_copy) {
      r.saved_extra.push_back({bytes(in(0)), "folded input"});
    } else if (rg(in(1))) {
      keep(in(0));
    }
    if (rg(in(0))) keep(in(1));
    // linear() over [N, L, C] runs on the [N*L, C] view; backward views the output gradient the
    // same way, which copies it when it arrives non-contiguous (transposed back by a conv1d or an
    // LSTM that follows): one output-sized temporary (measured: ViewBackward0's clone).
    if (in(0) >= 0 && in(1) >= 0 && T[in(0)].dims.size() >= 3 && T[in(1)].dims.size() == 2 &&
        GradientNonContiguous(m, ctx.shapes, out(0))) {
      r.output_gradient_copy_bytes = bytes(out(0));
    }
    // A float constant operand (a tensor made in forward) is kept too (matmul_2d_weight in the
    // operator table); save() leaves constants out, as they are not activations of the graph.
    for (int i : {0, 1}) {
      int c = in(i), other = in(1 - i);
      if (IsConstant(m, c) && rg(other) && elements(c) > 1 && T[c].dtype == kFloat) {
        r.saved_extra.push_back({bytes(c), "constant operand"});
      }
    }
  } else if (k == "Relu" || k == "Sqrt" || k == "Reciprocal") {
    // Sigmoid, Tanh, Softmax, LogSoftmax and Exp keep their output too: their rows in the operator
    // table say so (no hand rule). Relu's two rows (relu, relu_inplace) export alike; sqrt and
    // reciprocal have no one-node row.
    save(out(0));
  } else if (k == "LSTM" || k == "GRU" || k == "RNN") {
    // PyTorch on CPU runs one cell per time step and keeps, per step and direction, about 7 x hidden
    // floats per sample (gate outputs and the operands of the cell's products; the same count for
    // GRU), measured with saved_tensors_hooks at several shapes. The layer input is kept too; a
    // transposed (batch_first) input is first made contiguous, once per direction.
    const auto& x = in(0) >= 0 ? T[in(0)].dims : std::vector<int64_t>{};
    const NodeInfo& node = m.nodes[op.nodes[0]];
    int64_t hidden = 0;
    if (auto it = node.int_attrs.find("hidden_size"); it != node.int_attrs.end()) hidden = it->second;
    auto dir = node.string_attrs.find("direction");
    uint64_t dirs = dir != node.string_attrs.end() && dir->second == "bidirectional" ? 2 : 1;
    if (x.size() == 3 && hidden > 0 && x[0] > 0 && x[1] > 0) {
      uint64_t steps_samples = static_cast<uint64_t>(x[0] * x[1]);
      // Backward unwinds step by step, freeing each step's states: by the time the input and weight
      // gradients are formed they are gone, and the gates' gradient [T, N, gates x hidden] is live
      // (measured per autograd node with the tracker).
      // A plain RNN keeps one hidden state per step and the initial one ((T + 1) x hidden per sample
      // and direction, rnn_tanh in the operator table and tanh/relu, 1-2 layers, T 5-10 measured).
      uint64_t states = k == "RNN" ? steps_samples + static_cast<uint64_t>(x[1]) : steps_samples * 7;
      r.saved_extra.push_back({dirs * states * static_cast<uint64_t>(hidden) * 4, "cell states", true});
      // Forward: the input projection of every step at once (4 gates for LSTM, 3 for GRU, 1 for RNN), one
      // direction at a time, plus about two hidden-sized tensors per step of the other direction.
      uint64_t gates = k == "LSTM" ? 4 : k == "GRU" ? 3 : 1;
      r.forward_temp_bytes = (gates + 2 * (dirs - 1)) * steps_samples * static_cast<uint64_t>(hidden) * 4 +
                             StackInputHeldBytes(m, ctx.shapes, op);
      r.backward_temp_bytes = gates * dirs * steps_samples * static_cast<uint64_t>(hidden) * 4;
      if (NonContiguous(m, ctx.shapes, in(0))) {
        r.saved_extra.push_back({dirs * bytes(in(0)), "contiguous input"});
      } else {
        save(in(0));
      }
    } else {
      r.known = false;
      save(in(0));
    }
  } else if (k == "GroupNorm") {
    save(in(0));
    // mean and rstd: one fp32 per (sample, group); InstanceNormalization's scale has G elements.
    int norm = op.nodes.size() > 1 ? op.nodes[1] : -1;
    uint64_t groups = norm >= 0 && m.nodes[norm].inputs.size() > 1 ? elements(m.nodes[norm].inputs[1]) : 1;
    uint64_t batch = in(0) >= 0 && !T[in(0)].dims.empty() ? static_cast<uint64_t>(T[in(0)].dims[0]) : 1;
    r.saved_extra.push_back({2 * batch * groups * 4, "mean+rstd"});
  } else if (k == "Clip" || k == "LeakyRelu" || k == "Elu" || k == "HardSwish" || k == "Gelu" || k == "Silu" ||
             k == "Log" || k == "Mish" || k == "Selu" || k == "Celu") {
    // HardSigmoid, Erf, Softplus, Abs, Sin and Cos keep their input too, from their one-node rows in
    // the operator table (no hand rule).
    save(in(0));
    // CPU gelu runs through oneDNN: its backward creates ~8 KiB of primitive objects (measured).
    if (cpu && k == "Gelu") r.backward_temp_bytes = 8 * 1024;
  } else if (k == "PRelu") {
    save(in(0));
    save(in(1));  // a slope that is not a parameter (rrelu's random one) is kept too
    // The weight's gradient is reduced from an input-sized product.
    if (cpu) r.backward_temp_bytes = bytes(in(0));
  } else if (k == "MaxPool") {
    save(in(0));
    // The int64 indices are an output PyTorch keeps for backward (ONNX may or may not expose them).
    r.saved_extra.push_back({elements(out(0)) * 8, "indices"});
  } else if (k == "AveragePool" || k == "LpPool") {
    save(in(0));
  } else if (k == "GlobalAveragePool") {
    // adaptive_avg_pool(1) runs as mean(dims), whose backward (MeanBackward1) keeps its input in 1.13.
    save(in(0));
  } else if (k == "GlobalMaxPool") {
    save(in(0));
    r.saved_extra.push_back({elements(out(0)) * 8, "indices"});
  } else if (k == "BatchNormalization" || k == "InstanceNormalization") {
    save(in(0));
    uint64_t channels = in(1) >= 0 ? elements(in(1)) : 0;
    r.saved_extra.push_back({2 * channels * 4, "mean+invstd"});
    // CPU batch_norm backward (instance_norm runs it too) allocates one input-sized temporary.
    if (cpu) r.backward_temp_bytes = bytes(in(0));
    for (size_t i = 1; i < op.outputs.size(); ++i) r.output_view_of[i] = in(i + 2 < op.inputs.size() ? i + 2 : 0);
  } else if (k == "LayerNorm" || k == "LayerNormalization") {
    save(in(0));
    // layer_norm makes a non-contiguous input (an LSTM's batch_first output, or a sum that follows
    // it) contiguous in forward and again in backward: an input-sized temporary each time.
    if (NonContiguous(m, ctx.shapes, in(0))) {
      r.forward_temp_bytes = bytes(in(0));
      r.backward_temp_bytes = bytes(in(0));
    }
    // mean and rstd: one fp32 per normalized row. The decomposed form normalizes over the first
    // ReduceMean's axes (layer_norm over [H, W] in the operator table keeps N x C of each).
    uint64_t last = (in(0) >= 0 && !T[in(0)].dims.empty()) ? static_cast<uint64_t>(T[in(0)].dims.back()) : 1;
    const NodeInfo& first = m.nodes[op.nodes[0]];
    if (auto ax = first.ints_attrs.find("axes"); k == "LayerNorm" && ax != first.ints_attrs.end() && in(0) >= 0) {
      const auto& d = T[in(0)].dims;
      uint64_t norm = 1;
      for (int64_t a : ax->second) {
        int64_t axis = a < 0 ? a + static_cast<int64_t>(d.size()) : a;
        if (axis >= 0 && axis < static_cast<int64_t>(d.size())) norm *= static_cast<uint64_t>(d[axis]);
      }
      last = norm;
    }
    uint64_t rows = last ? elements(in(0)) / last : 0;
    r.saved_extra.push_back({2 * rows * 4, "mean+rstd"});
    // CPU backward sums the weight and bias gradients per thread in a [2, threads, N] fp32 buffer
    // (one intra-op thread; measured 128 B at N = 16, 256 B at N = 32).
    if (cpu && op.inputs.size() > 1 && rg(in(1))) r.backward_temp_bytes += 2 * last * 4;
  } else if (k == "Dropout") {
    // The ratio is an input from opset 12, an attribute before.
    double ratio = 0.5;
    const NodeInfo& node = m.nodes[op.nodes[0]];
    if (auto it = node.float_attrs.find("ratio"); it != node.float_attrs.end()) ratio = it->second;
    if (in(1) >= 0 && T[in(1)].has_value && !T[in(1)].value.empty()) ratio = T[in(1)].value[0];
    bool training = true;
    if (in(2) >= 0 && T[in(2)].has_value && !T[in(2)].value.empty()) training = T[in(2)].value[0] != 0;
    if (ratio <= 0 || !training) {
      r.output_view_of[0] = in(0);
      r.grad_alias_output[0] = 0;
    } else if (cpu) {
      // CPU: noise = empty_like(x).bernoulli_(1-p).div_(1-p); y = x * noise (noise saved, x's dtype).
      r.saved_extra.push_back({bytes(in(0)), "dropout noise"});
    } else {
      r.saved_extra.push_back({elements(in(0)), "dropout mask"});
    }
    if (op.outputs.size() > 1) r.output_view_of[1] = -2;  // the mask output: accounted in saved_extra
  } else if (k == "Mul") {
    if (rg(in(0))) save(in(1));
    if (rg(in(1))) save(in(0));
    BroadcastGradientScratch(op, ctx, &r);
  } else if (k == "Div") {
    if (rg(in(0)) || rg(in(1))) save(in(1));
    if (rg(in(1))) save(in(0));
    BroadcastGradientScratch(op, ctx, &r);
  } else if (k == "Pow") {
    save(in(0));
    // A tensor exponent is kept too (a scalar one is a number to torch), and the result when the
    // exponent needs a gradient (pow_tensor in the operator table: base, exponent and result).
    if (rg(in(0)) && (rg(in(1)) || elements(in(1)) > 1)) save(in(1));
    if (rg(in(1))) save(out(0));
  } else if (k == "Add" || k == "Sub" || k == "Sum") {
    // Nothing saved; a gradient of the same shape passes through unchanged.
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (in(i) >= 0 && out(0) >= 0 && T[in(i)].dims == T[out(0)].dims && k != "Sub") r.grad_alias_output[i] = 0;
      if (k == "Sub" && i == 0 && in(i) >= 0 && T[in(i)].dims == T[out(0)].dims) r.grad_alias_output[i] = 0;
    }
  } else if (k == "If" && IfViewInput(m.nodes[op.nodes[0]]) >= 0) {
    // torch's dynamic squeeze, If(dim == 1, Squeeze(x), Identity(x)): either branch is a view of x.
    const size_t x = static_cast<size_t>(IfViewInput(m.nodes[op.nodes[0]]));
    r.output_view_of[0] = in(x);
    r.grad_alias_output[x] = 0;
  } else if (k == "Reshape" || k == "Flatten" || k == "Squeeze" || k == "Unsqueeze" || k == "Identity") {
    // A view, unless the input is a non-contiguous view (transpose, inner slice) whose strides cannot
    // take the new shape: then reshape copies. A piece of a chunk() split along the last dim and viewed
    // as [N, L, heads, d] stays a view, so what keeps it keeps the whole storage it came from (probe
    // elu_feature_attn: elu saves the q and k views, which hold all of qkv; the plan had kept two
    // reshaped copies, saved -10 %).
    int src = in(0);
    bool copies = k != "Identity" && k != "Squeeze" && k != "Unsqueeze" && NonContiguous(m, ctx.shapes, src);
    // (A reshape to the shape it already has is taken for nn.MultiheadAttention's q.contiguous().view()
    // with one head, which the export records as a Reshape alone: that copies. Random nets' seed 10.)
    // (At a batch of 1 a reshape that merges the batch dim away is a view whatever the strides; it is
    // planned as at larger batches, a copy, so that one recording of the step serves every batch:
    // BatchPlanner.ReductionAmaxRiskIsReplayed, DGCNN's [N, 160, 4] -> [N * 160, 4].)
    const bool lone_sample = ctx.shapes.batch == 1 && !T[src].dims.empty() && T[src].dims[0] == 1;
    if (copies && !lone_sample && k == "Reshape" && out(0) >= 0 && T[out(0)].known && T[out(0)].dims != T[src].dims) {
      auto strides = ViewStrides(m, ctx.shapes, src);
      copies = !strides || !ReshapeIsView(T[src].dims, *strides, T[out(0)].dims);
    }
    if (!copies) r.output_view_of[0] = src;
    if (FeedsRecurrentWeights(m, out(0))) r.output_view_of[0] = -2;
    r.grad_alias_output[0] = 0;
    // Backward reshapes the output gradient back, which copies one that arrives non-contiguous
    // (nn.MultiheadAttention's output .view() before its batch_first transpose).
    if ((k == "Reshape" || k == "Flatten") && ReshapeGradientCopies(m, ctx.shapes, out(0), src)) {
      r.grad_alias_output[0] = -1;
    }
  } else if (k == "Slice" && IsFlip(m, m.nodes[static_cast<size_t>(op.nodes.front())])) {
    // torch.flip: a copy that keeps nothing (the table's flip row).
  } else if (k == "Transpose" || k == "Expand" || k == "Slice" || k == "Split") {
    for (size_t i = 0; i < op.outputs.size(); ++i) r.output_view_of[i] = in(0);
    if (k == "Transpose") r.grad_alias_output[0] = 0;
    if (k == "Slice" && in(0) >= 0) {
      // chunk()/split() exported as one Slice per piece (nn.MultiheadAttention's q, k, v).
      int slices = 0, others = 0, last_slice = -1;
      uint64_t pieces = 0;
      bool known = T[in(0)].known;
      for (int c : m.tensors[in(0)].consumers) {
        const NodeInfo& cn = m.nodes[c];
        if (cn.op_type == "Slice" && !SliceStepsAreOne(m, cn)) {
          ++others;  // x[:, ::2] beside x[:, 1::2] (ToMe's alternate tokens, interleaved rotary halves): no chunk
        } else if (cn.op_type == "Slice") {
          ++slices;
          last_slice = std::max(last_slice, c);
          known = known && !cn.outputs.empty() && cn.outputs[0] >= 0 && T[cn.outputs[0]].known;
          if (known) pieces += bytes(cn.outputs[0]);
        } else if (cn.op_type != "Shape") {
          ++others;
        }
      }
      // Pieces that add up to more than the tensor overlap (x[:, u:u + 9] for each shift u): plain slicing, each
      // SliceBackward0 its own input-sized gradient, summed as autograd accumulates.
      r.gradient_joins_siblings = slices > 1 && others == 0 && !(known && pieces > bytes(in(0)));
      // The export writes a Slice only for the pieces something reads; split_backward fills zeros for the others
      // before it cats all pieces into the input's gradient. Planned on the last piece, whose backward runs first.
      if (r.gradient_joins_siblings && known && op.nodes.front() == last_slice && pieces < bytes(in(0))) {
        r.backward_temp_bytes = bytes(in(0)) - pieces;
      }
    }
    if (k == "Split" && in(0) >= 0) {
      // The same for split(): the pieces nothing reads are outputs without consumers.
      uint64_t pieces = 0;
      bool known = T[in(0)].known;
      for (int o : m.nodes[static_cast<size_t>(op.nodes.front())].outputs) {
        if (o < 0 || std::all_of(m.tensors[o].consumers.begin(), m.tensors[o].consumers.end(),
                                 [&](int c) { return m.nodes[c].op_type == "Shape"; })) {
          continue;
        }
        known = known && T[o].known;
        pieces += bytes(o);
      }
      if (known && pieces < bytes(in(0))) r.backward_temp_bytes = bytes(in(0)) - pieces;
    }
  } else if (k == "Concat") {
    // Backward hands each input a narrow() view of the output gradient.
    for (size_t i = 0; i < op.inputs.size(); ++i) r.grad_alias_output[i] = 0;
    if (FeedsRecurrentWeights(m, out(0))) r.output_view_of[0] = -2;  // the export's gate reordering
  } else if (k == "TopK") {
    save(out(1));  // topk, sort and argsort keep the int64 indices only (the table's topk/sort rows)
  } else if (k == "Gather") {
    if (IsParam(m, in(0))) {
      save(in(1));  // embedding: the indices
      // embedding_dense_backward makes its output gradient contiguous: a copy when it arrives
      // transposed (a conv1d or a batch_first LSTM next), live beside the weight's gradient.
      if (GradientNonContiguous(m, ctx.shapes, out(0))) r.backward_temp_bytes = bytes(out(0));
    } else if (in(1) >= 0 && T[in(1)].Elements() <= 1) {
      r.output_view_of[0] = in(0);  // select(): a view
      // x[:, i] runs as slice(0) then select(1): in 1.13 both backwards build an input-sized
      // gradient (zeros + copy), and the export keeps only the select. select's output gradient is
      // released before slice's runs (measured per autograd node).
      auto axis = m.nodes[op.nodes[0]].int_attrs.find("axis");
      if (axis != m.nodes[op.nodes[0]].int_attrs.end() && axis->second > 0) {
        r.backward_temp_bytes = bytes(in(0)) - std::min(bytes(in(0)), bytes(out(0)));
      }
    } else if (IsConstant(m, in(1)) && in(0) >= 0 && T[in(0)].dtype != kInt64 && T[in(0)].dtype != kInt32) {
      // index_select / x[:, idx] with a constant index list: torch keeps that index tensor
      // (index_select, index_tensor in the operator table).
      r.saved_extra.push_back({bytes(in(1)), "indices"});
    } else {
      save(in(1));
    }
  } else if (k == "ScatterElements") {
    // torch.scatter / scatter_add keep only their index (the operator table's scatter and scatter_add rows:
    // ScatterElements, and for scatter_add a zeros tensor scattered then added). index_add exports the
    // same node with its 1-D index and its source broadcast by Expand (index_add row); it keeps that
    // index and the source (its derivative expands the gathered gradient as the source).
    auto expanded_from = [&](int id) {
      const int p = id >= 0 ? m.tensors[id].producer : -1;
      return p >= 0 && m.nodes[p].op_type == "Expand" && !m.nodes[p].inputs.empty() ? m.nodes[p].inputs[0] : -1;
    };
    // A scatter_add whose own code expands its index (idx.unsqueeze(-1).expand(-1, -1, d): expert-choice
    // routing's combine, unseen set 15) has a source that is no Expand: it keeps only the index, the
    // expanded view of the index tensor (a source kept there: saved +2.5 %).
    if (const int index = expanded_from(in(1)); index >= 0) {
      save(index);
      if (const int source = expanded_from(in(2)); source >= 0) save(source);
    } else {
      save(in(1));
    }
  } else if (k == "ScatterND") {
    // A write into part of a tensor: torch.onnx's export of a slice assignment (x[:, i] = y: copy_ into a view,
    // CopySlices) or of index_put_ (x[rows, idx] = y). torch writes into the tensor's own storage and autograd
    // keeps no float tensor for it (probe_scatter: saved bytes 0 for the volume, the buffer of steps and the
    // in-place update); CopySlices' backward clones the whole gradient once to zero the written part. A float
    // tensor written is the same storage after the write; an integer one (token ids) is left to its own memory,
    // which an embedding reading it keeps (probe bool_mask_positions, ids.clone() then written).
    if (in(0) >= 0 && !IsParam(m, in(0)) && T[in(0)].dtype != kInt64 && T[in(0)].dtype != kInt32 &&
        T[in(0)].dtype != kBool) {
      r.output_view_of[0] = in(0);
    }
    r.backward_temp_bytes = bytes(out(0));
  } else if (k == "Where") {
    save(in(0));
  } else if (k == "Pad" || k == "Resize" || k == "Upsample" || k == "Cast" || k == "Neg" ||
             k.rfind("Reduce", 0) == 0 || k == "Tile") {
    // reflection and replication padding keep their input (pad_reflect/pad_replicate in the table).
    if (auto mode = m.nodes[op.nodes[0]].string_attrs.find("mode");
        k == "Pad" && mode != m.nodes[op.nodes[0]].string_attrs.end() && mode->second != "constant") {
      save(in(0));
    }
    const bool some_axes = ReducesSomeAxes(m, ctx.shapes, op);
    // values, indices = x.max(dim): torch.onnx writes the ReduceMax and an ArgMax of the same input over the same
    // axis beside it (an ArgMax nothing reads is dropped, so this is max(dim) whose indices the code reads, ToMe's
    // matching among them). max(dim) keeps only those indices, the ArgMax's output, and its backward scatters the
    // gradient into zeros: no input, no output, no amax temporaries (probe max_with_indices: saved +12 %).
    const int indices = (k == "ReduceMax" || k == "ReduceMin") && some_axes ? IndicesBeside(m, ctx.shapes, op) : -1;
    if (indices >= 0) {
      r.saved_tensors.push_back(indices);
    } else if (k == "ReduceMax" || k == "ReduceMin" || k == "ReduceProd") {
      save(in(0));
      save(out(0));
    }
    if ((k == "ReduceMax" || k == "ReduceMin") && some_axes && indices < 0) {
      // torch.amax(x, dim) and torch.max(x, dim)[0] export to the same node; max(dim) keeps only its
      // int64 indices (max_dim and amax in the operator table). Planned as amax for what it keeps, the
      // larger; its backward's temporaries (a bool mask of the input and its float copy,
      // data/elementwise_scratch.json's amax_dim row) as max(dim)'s, none (RuleFor): PointNet's max
      // over points and CBAM's channel max are usually written torch.max(x, dim)[0].
      r.ambiguity = k + " over some axes is torch.a" + (k == "ReduceMax" ? "max" : "min") +
                    " (keeps its input and output, as planned) or torch." + (k == "ReduceMax" ? "max" : "min") +
                    "(x, dim) (keeps only int64 indices of the output's size; no backward temporaries, as "
                    "planned): the export is the same, so the planned activations may be high by up to the "
                    "input's bytes per such node";
      // amax's backward temporaries (data/elementwise_scratch.json), which max(dim)'s has not: the
      // risk's bytes (probe edge_knn_one of tools/probe_families.py, a DGCNN edge convolution written
      // with amax over the neighbours: its peak in that backward, 28 % above the plan).
      const int x = in(0), y = out(0);
      // Where the input is kept anyway (its producer's backward keeps its result: relu, sigmoid, tanh,
      // exp, softmax), amax adds only its output while max(dim) adds int64 indices of the output's size,
      // twice its float bytes: that is the larger, so the other half is planned too (probe
      // pointnet_grouping, PointNet++'s max over neighbours of a ReLU MLP: saved -2.8 % with the output's
      // float bytes).
      const int xp = x >= 0 ? m.tensors[x].producer : -1;
      const std::string xk = xp >= 0 ? m.nodes[xp].op_type : "";
      if (x >= 0 && y >= 0 && ctx.shapes.tensors[y].known && ctx.requires_grad[x] &&
          (xk == "Relu" || xk == "Sigmoid" || xk == "Tanh" || xk == "Exp" || xk == "Softmax")) {
        r.saved_extra.push_back({ctx.shapes.tensors[y].Elements() * 8 - ctx.shapes.tensors[y].Bytes(),
                                 "max(dim)'s int64 indices"});
      }
      if (x >= 0 && y >= 0 && ctx.shapes.tensors[x].known && ctx.shapes.tensors[y].known) {
        const ElementwiseScratchTable& table = EmbeddedElementwiseScratchTable();
        r.amax_backward_bytes = static_cast<uint64_t>(
            table.ScratchInputs(k, {0}) * static_cast<double>(ctx.shapes.tensors[x].Bytes()) +
            table.ScratchOutputs(k, {0}) * static_cast<double>(ctx.shapes.tensors[y].Bytes()));
      }
    }
    if (k == "ReduceMean" && some_axes) {
      // mean(dims) keeps its input (MeanBackward1 in 1.13); the mean of everything does not.
      save(in(0));
    }
    if (k == "Cast" && in(0) >= 0 && out(0) >= 0 && T[in(0)].dtype == T[out(0)].dtype) r.output_view_of[0] = in(0);
  } else if (NotDifferentiable(k)) {
    // Not differentiable (integer or boolean results).
  } else {
    // No rule: assume it keeps every input and output that is not a parameter.
    r.known = false;
    for (int id : op.inputs) save(id);
    for (int id : op.outputs) save(id);
  }
  return r;
}

// Whether tensor `id`'s gradient reaches its producer as a narrow() view of a Concat's gradient
// that is not contiguous (the concat axis is not the outermost: torch.cat of feature maps along
// channels). Add and Identity hand their gradient on as it is.
bool GradientIsConcatSlice(const Model& m, const ConcreteShapes& s, int id, int depth = 0) {
  int c = depth > 8 ? -1 : GradientConsumer(m, id);
  if (c < 0 || m.nodes[c].outputs.empty() || m.nodes[c].outputs[0] < 0) return false;
  const NodeInfo& n = m.nodes[c];
  const int out = n.outputs[0];
  if (n.op_type == "Add" || n.op_type == "Identity") {
    return s.tensors[out].dims == s.tensors[id].dims && GradientIsConcatSlice(m, s, out, depth + 1);
  }
  if (n.op_type != "Concat" || n.inputs.size() < 2 || !s.tensors[out].known) return false;
  const auto& dims = s.tensors[out].dims;
  int64_t axis = 0;
  if (auto it = n.int_attrs.find("axis"); it != n.int_attrs.end()) axis = it->second;
  if (axis < 0) axis += static_cast<int64_t>(dims.size());
  if (axis <= 0 || axis >= static_cast<int64_t>(dims.size())) return false;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[static_cast<size_t>(d)];
  return outer > 1;
}

// CPU backward kernels that make a strided output gradient contiguous first: convolutions (oneDNN,
// slow_conv3d, transposed), 2-D/3-D max and average pooling, interpolation (measured with a
// torch.cat slice as the gradient: one output-sized copy each; elementwise ops, batch norm, linear
// and 1-D max pooling read it as it is).
bool CopiesAStridedOutputGradient(const std::string& kind, size_t rank) {
  if (kind == "Conv" || kind == "ConvTranspose" || kind == "Resize" || kind == "Upsample") return true;
  return (kind == "MaxPool" || kind == "AveragePool") && rank >= 4;
}

// The rule of the table or of the hand rules (RuleFor adds the strided-gradient copy).
OpRule RuleWithoutGradientCopy(const LogicalOp& op, const RuleContext& ctx) {
  const OpTable& table = EmbeddedOpTable();
  if (op.table_row >= 0) return TableRule(table, op, ctx, op.nodes.size() == 1 ? HandRule(op, ctx) : OpRule{});
  OpRule r = HandRule(op, ctx);
  TableMatch match;
  if (!r.known && op.nodes.size() == 1 && MatchSingleNode(ctx.model, ctx.shapes, table, op.nodes[0], &match)) {
    LogicalOp with = op;
    with.table_row = match.row;
    with.table_inputs = match.inputs;
    with.table_outputs = match.outputs;
    return TableRule(table, with, ctx, r);
  }
  return r;
}

}  // namespace

namespace {

// An einsum node played by RunEinsum (einsum_run.h) on its operands: each operand's strides where the views
// before it tell them (a permuted weight, a head view of a q chunk), dense where it is contiguous, unknown
// otherwise. nullopt where an operand's shape is unknown or the equation is one RunEinsum does not play.
std::optional<EinsumRun> PlayEinsum(const LogicalOp& op, const RuleContext& ctx) {
  if (op.nodes.size() != 1 || op.inputs.size() < 2 || ctx.model.nodes[op.nodes[0]].op_type != "Einsum") {
    return std::nullopt;
  }
  const NodeInfo& n = ctx.model.nodes[op.nodes[0]];
  auto eq = n.string_attrs.find("equation");
  if (eq == n.string_attrs.end()) return std::nullopt;
  std::string e;
  for (char c : eq->second) {
    if (c != ' ') e += c;
  }
  std::vector<EinsumOperand> operands;
  for (int id : op.inputs) {
    if (id < 0 || !ctx.shapes.tensors[id].known) return std::nullopt;
    EinsumOperand o;
    o.dims = ctx.shapes.tensors[id].dims;
    o.requires_grad = ctx.requires_grad[id];
    o.strides = ViewStrides(ctx.model, ctx.shapes, id);
    if (!o.strides && !NonContiguous(ctx.model, ctx.shapes, id)) {
      o.strides = std::vector<int64_t>(o.dims.size(), 1);
      for (size_t i = o.dims.size(); i-- > 1;) (*o.strides)[i - 1] = (*o.strides)[i] * std::max<int64_t>(o.dims[i], 1);
    }
    operands.push_back(o);
  }
  EinsumRun run = RunEinsum(e, operands);
  if (!run.known) return std::nullopt;
  return run;
}

}  // namespace

// Whether the gradient of tensor `id`, arriving as an expand() view (stride 0 along the summed axes),
// is only read by operators that take it as it is: an elementwise producer (TensorIterator reads a
// stride-0 operand in place), through the Add / Sub that hand it on unchanged to their inputs of the
// output's shape. A convolution, a matmul or a reshape would make it contiguous first.
bool ElementwiseReadsExpandedGradient(const Model& m, const ConcreteShapes& s, int id, int depth = 0) {
  if (id < 0 || depth > 8 || m.tensors[id].kind != TensorKind::kActivation) return false;
  const int p = m.tensors[id].producer;
  if (p < 0) return false;
  // A piece of chunk() / split() / narrow(): their backward copies the gradient into the input-sized one
  // (cat, or zeros then copy_), reading it as it is (probe chunk_fold_copy: v.sum(1) of a chunk of qkv).
  if ((m.nodes[p].op_type == "Slice" || m.nodes[p].op_type == "Split") && !IsFlip(m, m.nodes[p])) return true;
  if (!IsElementwise(m.nodes[p].op_type) || m.nodes[p].op_type == "Cast") return false;
  const NodeInfo& n = m.nodes[p];
  if (n.op_type != "Add" && n.op_type != "Sub") return true;
  for (int x : n.inputs) {
    if (x < 0 || m.tensors[x].kind != TensorKind::kActivation || s.tensors[x].dims != s.tensors[id].dims) continue;
    if (!ElementwiseReadsExpandedGradient(m, s, x, depth + 1)) return false;
  }
  return true;
}

// The table's saved set where it drives the op (a matched row), or where the hand rules have none
// (an unambiguous single-node row); the hand rule everywhere else (op_table_match.cc says why).
OpRule RuleFor(const LogicalOp& op, const RuleContext& ctx) {
  OpRule r = RuleWithoutGradientCopy(op, ctx);
  // sum(dim)'s backward expands the output gradient back to the input's shape: a view, no bytes of
  // its own, where the elementwise operators before it read it as it is (probe mixture_logsumexp: a
  // log-density summed over coordinates; the plan had held an input-sized gradient, peak +11 %).
  if (op.kind == "ReduceSum" && op.nodes.size() == 1 && !op.inputs.empty() && !r.grad_alias_output.empty() &&
      ElementwiseReadsExpandedGradient(ctx.model, ctx.shapes, op.inputs[0])) {
    r.grad_alias_output[0] = 0;
  }
  // An einsum keeps what torch 1.13's pairwise contraction gives mul and bmm (PlayEinsum): the operands it
  // views, the copies reshape made of the others (a permuted weight, [b, h, w, c] of "bchw,cd->bdhw"), and
  // the products of 3 or 4 operands before the last; the copies and products it drops are forward scratch.
  if (auto run = PlayEinsum(op, ctx); run && !op.outputs.empty() && ctx.shapes.tensors[op.outputs[0]].known) {
    const ConcreteTensor& y = ctx.shapes.tensors[op.outputs[0]];
    const uint64_t element = y.Elements() ? y.Bytes() / y.Elements() : 4;
    // The result is the last product, never kept by the einsum itself (an einsum of 3 or 4 operands matches no
    // table row: unknown, it would keep all its inputs and outputs).
    r.known = true;
    r.saved_tensors.clear();
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (run->operand_saved[i]) r.saved_tensors.push_back(op.inputs[i]);
    }
    for (const EinsumBuffer& b : run->saved) r.saved_extra.push_back({b.elements * element, "einsum " + b.what});
    r.forward_temp_bytes = std::max(r.forward_temp_bytes, run->forward_temp_elements * element);
  }
  // softmax and log_softmax make a non-contiguous input contiguous before they run (1.13's host_softmax):
  // an input-sized temporary beside the output in forward (an LM loss's shifted logits, logits[:, :-1]; probe
  // shifted_log_softmax of tools/probe_misses.py, unseen set 18's DPO reference).
  if ((op.kind == "Softmax" || op.kind == "LogSoftmax") && op.nodes.size() == 1 && !op.inputs.empty() &&
      NonContiguous(ctx.model, ctx.shapes, op.inputs[0])) {
    r.forward_temp_bytes = std::max(r.forward_temp_bytes, ctx.shapes.tensors[op.inputs[0]].Bytes());
  }
  const int y = op.outputs.empty() ? -1 : op.outputs[0];
  // The temporaries of the op's derivative formula (data/elementwise_scratch.json), for a one-node op
  // (or an operator-table row taken as one op, by the row's name) whose inputs needing a gradient are
  // those of a measured row.
  if ((op.nodes.size() == 1 || op.table_row >= 0) && y >= 0 && ctx.shapes.tensors[y].known) {
    std::vector<int> grads, broadcast;
    const uint64_t out_elements = ctx.shapes.tensors[y].Elements();
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const int in = op.inputs[i];
      if (in >= 0 && ctx.requires_grad[in]) grads.push_back(static_cast<int>(i));
      if (in >= 0 && ctx.shapes.tensors[in].known && ctx.shapes.tensors[in].Elements() < out_elements) {
        broadcast.push_back(static_cast<int>(i));
      }
    }
    const ElementwiseScratchTable& table = EmbeddedElementwiseScratchTable();
    // (ReduceMax over some axes is planned as torch.max(x, dim), whose backward scatters the gradient
    // into zeros with no temporaries; HandRule says why.)
    if ((op.kind == "ReduceMax" || op.kind == "ReduceMin") && ReducesSomeAxes(ctx.model, ctx.shapes, op)) grads.clear();
    // prod(dim) over an input holding a zero runs prod_safe_zeros_backward (two exclusive cumprods, each with
    // its concatenated copy, a flip, their product: 5 input-sized temporaries more; unseen set 12's NODE
    // trees, probe sparsemax_trees of tools/probe_families.py).
    std::string kind = op.kind;
    if (kind == "ReduceProd" && !grads.empty() && ReducesSomeAxes(ctx.model, ctx.shapes, op) && !op.inputs.empty() &&
        MayHoldExactZeros(ctx.model, ctx.shapes, op.inputs[0]) && table.ScratchOutputs("ReduceProd:zeros", grads) > 0) {
      kind = "ReduceProd:zeros";
    }
    const double k = grads.empty() ? 0 : table.ScratchOutputs(kind, grads, broadcast);
    // (a reduction's scratch is partly in its input's size)
    const int x = op.inputs.empty() ? -1 : op.inputs[0];
    const double k_in = grads.empty() || x < 0 || !ctx.shapes.tensors[x].known
                            ? 0
                            : table.ScratchInputs(kind, grads, broadcast);
    auto scratch = [&](const std::string& form) {
      const double k_out = grads.empty() ? 0 : table.ScratchOutputs(form, grads, broadcast);
      const double k_x = grads.empty() || x < 0 || !ctx.shapes.tensors[x].known
                             ? 0
                             : table.ScratchInputs(form, grads, broadcast);
      return k_out * static_cast<double>(ctx.shapes.tensors[y].Bytes()) +
             (k_x > 0 ? k_x * static_cast<double>(ctx.shapes.tensors[x].Bytes()) : 0);
    };
    const double bytes = k * static_cast<double>(ctx.shapes.tensors[y].Bytes()) +
                         (k_in > 0 ? k_in * static_cast<double>(ctx.shapes.tensors[x].Bytes()) : 0);
    if (bytes > 0) r.backward_temp_bytes = std::max(r.backward_temp_bytes, static_cast<uint64_t>(bytes));
    // Whether the input holds a zero is the data's: where it holds none, prod's backward takes the plain
    // formula (probe node_temp_trees, NODE's two tree layers: one ran each formula in one step; planned
    // with both on the zeros formula, the peak +20 to +23 %).
    if (kind == "ReduceProd:zeros") {
      const double plain = scratch("ReduceProd");
      if (bytes > plain) r.prod_zeros_backward_bytes = static_cast<uint64_t>(bytes - plain);
    }
  }
  // F.cosine_similarity (the operator table's row, taken as one op): its backward builds the gradients of
  // x / |x| and y / |y| at the inputs' broadcast shape, and where the inputs' shapes differ a third such
  // tensor (the smaller one's gradient at full size before it is summed down). Measured on torch 1.13 CPU
  // (bench/results/cosine_backward_scratch_20261207.txt): 2.00 x the broadcast bytes for equal shapes,
  // 3.00 to 3.06 x for [N, M, W] against [N, 1, W] (dim -1) and [N, C, H, W] against [1, C, 1, 1] (dim 1).
  // Probes cosine_memory and cosine_prototypes (tools/probe_families.py; unseen set 14's NTM addressing).
  if (op.kind == "cosine_similarity" && op.table_inputs.size() >= 2) {
    const int a = op.table_inputs[0], b = op.table_inputs[1];
    const auto& T = ctx.shapes.tensors;
    if (a >= 0 && b >= 0 && T[a].known && T[b].known && (ctx.requires_grad[a] || ctx.requires_grad[b])) {
      std::vector<int64_t> full = T[a].dims, other = T[b].dims;
      if (other.size() > full.size()) std::swap(full, other);
      for (size_t k = 0; k < other.size(); ++k) {
        int64_t& d = full[full.size() - other.size() + k];
        d = d == 1 ? other[k] : d;
      }
      uint64_t bytes = static_cast<uint64_t>(ctx.activation_bytes);
      for (int64_t d : full) bytes *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
      const uint64_t copies = T[a].dims == T[b].dims ? 2 : 3;
      r.backward_temp_bytes = std::max(r.backward_temp_bytes, copies * bytes);
    }
  }
  if (ctx.target == Target::kCpu && y >= 0 && ctx.shapes.tensors[y].known &&
      CopiesAStridedOutputGradient(op.kind, ctx.shapes.tensors[y].dims.size()) &&
      GradientIsConcatSlice(ctx.model, ctx.shapes, y)) {
    r.backward_temp_bytes += ctx.shapes.tensors[y].Bytes();
  }
  return r;
}

bool RecurrentWeightSources(const Model& m, int id, std::vector<int>* params) {
  params->clear();
  auto fail = [&] {
    params->clear();
    return false;
  };
  std::vector<int> pending = {id};
  for (int walked = 0; !pending.empty(); ++walked) {
    const int t = pending.back();
    pending.pop_back();
    if (t < 0 || walked > 1024) return fail();
    const TensorInfo& info = m.tensors[t];
    if (info.kind == TensorKind::kParameter) {
      if (std::find(params->begin(), params->end(), t) == params->end()) params->push_back(t);
      continue;
    }
    if (info.kind == TensorKind::kConstant || info.kind == TensorKind::kBuffer) continue;
    if (info.kind != TensorKind::kActivation || info.producer < 0 || !FeedsRecurrentWeights(m, t)) return fail();
    const NodeInfo& n = m.nodes[info.producer];
    const std::string& k = n.op_type;
    if (n.inputs.empty()) return fail();
    if (k == "Concat") {
      pending.insert(pending.end(), n.inputs.begin(), n.inputs.end());
    } else if (k == "Slice" || k == "Unsqueeze" || k == "Squeeze" || k == "Reshape" || k == "Split" ||
               k == "Transpose" || k == "Identity") {
      pending.push_back(n.inputs[0]);  // the data; the rest are constant indices
    } else {
      return fail();
    }
  }
  return !params->empty();
}

bool NonContiguousInTorch(const Model& model, const ConcreteShapes& shapes, int id) {
  return NonContiguous(model, shapes, id);
}

int IfViewInput(const NodeInfo& n) {
  auto then_view = n.branch_views.find("then_branch"), else_view = n.branch_views.find("else_branch");
  if (n.op_type != "If" || n.outputs.size() != 1 || then_view == n.branch_views.end() ||
      else_view == n.branch_views.end() || then_view->second.input != else_view->second.input ||
      then_view->second.input >= n.inputs.size()) {
    return -1;
  }
  return static_cast<int>(then_view->second.input);
}

bool IsFlip(const Model& m, const NodeInfo& n) {
  if (n.op_type != "Slice" || n.inputs.size() < 5 || n.inputs[4] < 0) return false;
  const TensorInfo& steps = m.tensors[static_cast<size_t>(n.inputs[4])];
  return steps.has_value && std::any_of(steps.value.begin(), steps.value.end(), [](double v) { return v < 0; });
}

uint64_t LowRankBaseWeightBytes(const Model& m, const ConcreteShapes& s) {
  auto param = [&](int id) { return id >= 0 && m.tensors[id].kind == TensorKind::kParameter; };
  auto producer = [&](int id) -> const NodeInfo* {
    return id >= 0 && m.tensors[id].producer >= 0 ? &m.nodes[static_cast<size_t>(m.tensors[id].producer)] : nullptr;
  };
  auto untransposed = [&](int id) {  // a weight read as w.t()
    const NodeInfo* n = producer(id);
    return n && n->op_type == "Transpose" && !n->inputs.empty() ? n->inputs[0] : id;
  };
  auto low_rank_product = [&](int id) -> const NodeInfo* {  // through a scale by a constant or scalar
    for (int depth = 0; depth < 4; ++depth) {
      const NodeInfo* n = producer(id);
      if (!n || n->inputs.size() != 2) return nullptr;
      if (n->op_type == "MatMul") return n;
      const int other = n->inputs[1];
      if ((n->op_type != "Mul" && n->op_type != "Div") || other < 0 || !s.tensors[other].known ||
          (!IsConstant(m, other) && s.tensors[other].Elements() > 1)) {
        return nullptr;
      }
      id = n->inputs[0];
    }
    return nullptr;
  };
  std::set<int> bases;
  uint64_t bytes = 0;
  for (const NodeInfo& n : m.nodes) {
    if (n.op_type != "Add" || n.inputs.size() != 2) continue;
    for (int k = 0; k < 2; ++k) {
      const int w = n.inputs[static_cast<size_t>(k)];
      if (!param(w) || !s.tensors[w].known || s.tensors[w].dims.size() != 2) continue;
      const NodeInfo* prod = low_rank_product(n.inputs[static_cast<size_t>(1 - k)]);
      if (!prod || !param(untransposed(prod->inputs[0])) || !param(untransposed(prod->inputs[1]))) continue;
      const ConcreteTensor& b = s.tensors[prod->inputs[0]];
      const std::vector<int64_t>& d = s.tensors[w].dims;
      if (!b.known || b.dims.size() != 2 || b.dims[1] * 4 > std::min(d[0], d[1])) continue;
      if (bases.insert(w).second) bytes += s.tensors[w].Bytes();
    }
  }
  return bytes;
}

bool NotDifferentiable(const std::string& k) {
  // (string_views: each comparison looks at the length first, where comparing with a C string measured
  // it and the bytes every time.)
  static constexpr std::string_view kKinds[] = {
      "Shape", "Size", "ConstantOfShape", "Equal", "Range", "Greater", "Less", "Not", "And", "Or", "ArgMax", "ArgMin",
      "NonZero", "GreaterOrEqual", "LessOrEqual", "Floor", "Ceil", "Round", "RandomUniformLike", "RandomNormalLike",
      "RandomUniform", "RandomNormal", "EyeLike", "OneHot"};
  return std::find(std::begin(kKinds), std::end(kKinds), std::string_view(k)) != std::end(kKinds);
}

}  // namespace oomguard::plan
