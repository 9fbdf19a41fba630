// The per-operator shape rules of the planner's shape pass (see shapes.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "shape_pass.h"

#include "data_dependent.h"

namespace oomguard::plan {
namespace {

constexpr int64_t kMaxDim = int64_t{1} << 40;
constexpr size_t kMaxValues = 4096;

using Dims = std::vector<int64_t>;

}  // namespace

bool SaneDims(const std::vector<int64_t>& d) {
  double total = 1;
  for (int64_t x : d) {
    if (x < 0 || x > kMaxDim) return false;
    total *= static_cast<double>(x);
  }
  return total < 1e17;
}

namespace {

int64_t Attr(const NodeInfo& n, const std::string& name, int64_t fallback) {
  auto it = n.int_attrs.find(name);
  return it == n.int_attrs.end() ? fallback : it->second;
}
const std::vector<int64_t>* Ints(const NodeInfo& n, const std::string& name) {
  auto it = n.ints_attrs.find(name);
  return it == n.ints_attrs.end() ? nullptr : &it->second;
}

bool Broadcast(const Dims& a_in, const Dims& b_in, Dims* out) {
  const Dims a = a_in, b = b_in;  // out may alias an input
  size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    (*out)[i] = x == 1 ? y : x;
  }
  return true;
}

int64_t NormAxis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

// What an elementwise op computes on small known values (shape arithmetic).
struct ElementArgs {
  const double* x;  // one per input
  bool integer;     // the result's type is not floating
  bool fmod;        // Mod's attribute
};
struct ElementwiseOp {
  int arity = 2;          // inputs the value rule reads (Where: 3)
  bool bool_result = false;
  std::optional<double> (*value)(ElementArgs) = nullptr;  // nullptr: no value rule
};

const std::unordered_map<std::string_view, ElementwiseOp>& ElementwiseOps() {
  using R = std::optional<double>;
  static const auto* ops = new std::unordered_map<std::string_view, ElementwiseOp>{
      {"Add", {2, false, [](ElementArgs a) -> R { return a.x[0] + a.x[1]; }}},
      {"Sub", {2, false, [](ElementArgs a) -> R { return a.x[0] - a.x[1]; }}},
      {"Mul", {2, false, [](ElementArgs a) -> R { return a.x[0] * a.x[1]; }}},
      {"Div", {2, false, [](ElementArgs a) -> R {
                 return a.x[1] == 0 ? 0 : (a.integer ? std::trunc(a.x[0] / a.x[1]) : a.x[0] / a.x[1]);
               }}},
      {"Pow", {2, false, [](ElementArgs a) -> R { return std::pow(a.x[0], a.x[1]); }}},
      {"Max", {2, false, [](ElementArgs a) -> R { return std::max(a.x[0], a.x[1]); }}},
      {"Min", {2, false, [](ElementArgs a) -> R { return std::min(a.x[0], a.x[1]); }}},
      // fmod=0: the sign of the divisor (Python's %, what F.pad's "round up to a multiple" exports).
      {"Mod", {2, false, [](ElementArgs a) -> R {
                 if (a.x[1] == 0) return std::nullopt;
                 return a.fmod ? std::fmod(a.x[0], a.x[1]) : a.x[0] - std::floor(a.x[0] / a.x[1]) * a.x[1];
               }}},
      {"Where", {3, false, [](ElementArgs a) -> R { return a.x[0] != 0 ? a.x[1] : a.x[2]; }}},
      {"Equal", {2, true, [](ElementArgs a) -> R { return a.x[0] == a.x[1]; }}},
      {"Less", {2, true, [](ElementArgs a) -> R { return a.x[0] < a.x[1]; }}},
      {"Greater", {2, true, [](ElementArgs a) -> R { return a.x[0] > a.x[1]; }}},
      {"GreaterOrEqual", {2, true, [](ElementArgs a) -> R { return a.x[0] >= a.x[1]; }}},
      {"LessOrEqual", {2, true, [](ElementArgs a) -> R { return a.x[0] <= a.x[1]; }}},
      {"And", {2, true, [](ElementArgs a) -> R { return a.x[0] != 0 && a.x[1] != 0; }}},
      {"Or", {2, true, [](ElementArgs a) -> R { return a.x[0] != 0 || a.x[1] != 0; }}},
      {"Xor", {2, true, [](ElementArgs a) -> R { return (a.x[0] != 0) != (a.x[1] != 0); }}},
      {"Sum", {2, false, nullptr}},
  };
  return *ops;
}

// The reductions whose small known values are folded to one number.
const std::unordered_map<std::string_view, double (*)(double, double)>& ReduceValueOps() {
  static const auto* ops = new std::unordered_map<std::string_view, double (*)(double, double)>{
      {"ReduceProd", [](double x, double y) { return x * y; }},
      {"ReduceSum", [](double x, double y) { return x + y; }},
      {"ReduceMax", [](double x, double y) { return std::max(x, y); }},
      {"ReduceMin", [](double x, double y) { return std::min(x, y); }},
  };
  return *ops;
}

// The unary ops whose small known values are computed.
const std::unordered_map<std::string_view, double (*)(double)>& UnaryValueOps() {
  static const auto* ops = new std::unordered_map<std::string_view, double (*)(double)>{
      {"Identity", [](double x) { return x; }},
      {"Neg", [](double x) { return -x; }},
      {"Abs", [](double x) { return std::fabs(x); }},
      {"Floor", [](double x) { return std::floor(x); }},
      {"Ceil", [](double x) { return std::ceil(x); }},
      {"Round", [](double x) { return std::nearbyint(x); }},  // half to even, as ONNX
      {"Sqrt", [](double x) { return std::sqrt(x); }},
      {"Not", [](double x) { return x == 0 ? 1.0 : 0.0; }},
      {"Sign", [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }},
      {"Relu", [](double x) { return std::max(x, 0.0); }},
  };
  return *ops;
}

class ShapePass {
 public:
  ShapePass(const Model& m, ConcreteShapes* s) : m_(m), s_(*s) {}

  void Run() {
    for (size_t i = 0; i < m_.nodes.size(); ++i) Node(m_.nodes[i]);
  }

 private:
  ConcreteTensor* In(const NodeInfo& n, size_t i) {
    if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
    ConcreteTensor* t = &s_.tensors[n.inputs[i]];
    return t->known ? t : nullptr;
  }
  const std::vector<double>* InValue(const NodeInfo& n, size_t i) {
    ConcreteTensor* t = In(n, i);
    return t && t->has_value ? &t->value : nullptr;
  }
  ConcreteTensor* Out(const NodeInfo& n, size_t i) {
    if (i >= n.outputs.size() || n.outputs[i] < 0) return nullptr;
    return &s_.tensors[n.outputs[i]];
  }
  void Set(const NodeInfo& n, size_t i, Dims dims, int dtype) {
    ConcreteTensor* o = Out(n, i);
    if (!o) return;
    if (!SaneDims(dims)) {
      bool overflow = std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; });
      if (overflow && s_.overflow.empty()) {
        std::string shape;
        for (int64_t d : dims) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
        s_.overflow = "the output of node '" + n.name + "' (" + n.op_type + ") would be [" + shape + "]";
      }
      return;
    }
    o->known = true;
    o->dims = std::move(dims);
    o->dtype = dtype;
  }
  void SetValue(const NodeInfo& n, size_t i, std::vector<double> v) {
    ConcreteTensor* o = Out(n, i);
    if (!o || !o->known || v.size() > kMaxValues || v.size() != o->Elements()) return;
    // Pow, Sqrt or a division can leave inf or NaN, which no shape or index may be cast from.
    if (!std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); })) return;
    o->has_value = true;
    o->value = std::move(v);
  }

  // Broadcast to one shape; small results get their values (shape arithmetic).
  void Elementwise(const NodeInfo& n) {
    auto rule = ElementwiseOps().find(n.op_type);
    if (n.inputs.empty() || rule == ElementwiseOps().end()) return;
    const ElementwiseOp& op = rule->second;
    Dims d;
    bool first = true;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      ConcreteTensor* t = In(n, i);
      if (!t) return;
      if (first) {
        d = t->dims;
        first = false;
      } else if (!Broadcast(d, t->dims, &d)) {
        return;
      }
    }
    const int dtype = op.bool_result ? kBool : In(n, op.arity == 3 ? 1 : 0)->dtype;
    Set(n, 0, d, dtype);
    ConcreteTensor* o = Out(n, 0);
    if (op.value == nullptr || !o || !o->known || o->Elements() > kMaxValues) return;
    std::vector<const ConcreteTensor*> ins;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      ConcreteTensor* t = In(n, i);
      if (!t->has_value) return;
      ins.push_back(t);
    }
    if (ins.size() < static_cast<size_t>(op.arity)) return;  // a malformed node
    const bool integer = !IsFloat(dtype);
    const bool fmod = Attr(n, "fmod", 0) != 0;
    size_t count = o->Elements();
    std::vector<double> v(count);
    for (size_t k = 0; k < count; ++k) {
      // Index into each input with broadcasting.
      std::vector<double> args;
      for (const ConcreteTensor* t : ins) {
        size_t idx = 0, stride = 1, rem = k;
        std::vector<size_t> coord(d.size());
        for (size_t j = d.size(); j-- > 0;) {
          coord[j] = d[j] ? rem % d[j] : 0;
          rem = d[j] ? rem / d[j] : 0;
        }
        size_t off = d.size() - t->dims.size();
        for (size_t j = t->dims.size(); j-- > 0;) {
          size_t c = t->dims[j] == 1 ? 0 : coord[j + off];
          idx += c * stride;
          stride *= t->dims[j];
        }
        args.push_back(idx < t->value.size() ? t->value[idx] : 0);
      }
      std::optional<double> r = op.value({args.data(), integer, fmod});
      if (!r) return;
      v[k] = *r;
    }
    SetValue(n, 0, std::move(v));
  }

  void Node(const NodeInfo& n) {
    // Constant outputs are set from the model; an op without a rule stays unknown.
    auto rule = Rules().find(n.op_type);
    if (rule != Rules().end()) (this->*(rule->second))(n);
  }

  using Rule = void (ShapePass::*)(const NodeInfo&);
  // The shape rule of each ONNX op the pass knows (the elementwise ops: ElementwiseOps()).
  static const std::unordered_map<std::string_view, Rule>& Rules() {
    static const auto* rules = WithElementwise(new std::unordered_map<std::string_view, Rule>{
      {"Relu", &ShapePass::SameShape}, {"Sigmoid", &ShapePass::SameShape}, {"Tanh", &ShapePass::SameShape},
      {"Erf", &ShapePass::SameShape}, {"Sqrt", &ShapePass::SameShape}, {"Exp", &ShapePass::SameShape},
      {"Log", &ShapePass::SameShape}, {"Neg", &ShapePass::SameShape}, {"Abs", &ShapePass::SameShape},
      {"Clip", &ShapePass::SameShape}, {"LeakyRelu", &ShapePass::SameShape}, {"Elu", &ShapePass::SameShape},
      {"HardSigmoid", &ShapePass::SameShape}, {"HardSwish", &ShapePass::SameShape},
      {"Softmax", &ShapePass::SameShape}, {"LogSoftmax", &ShapePass::SameShape},
      {"Identity", &ShapePass::SameShape}, {"Reciprocal", &ShapePass::SameShape},
      {"Floor", &ShapePass::SameShape}, {"Ceil", &ShapePass::SameShape}, {"Round", &ShapePass::SameShape},
      {"Gelu", &ShapePass::SameShape}, {"Celu", &ShapePass::SameShape}, {"Selu", &ShapePass::SameShape},
      {"Softplus", &ShapePass::SameShape}, {"Softsign", &ShapePass::SameShape},
      {"PRelu", &ShapePass::SameShape}, {"InstanceNormalization", &ShapePass::SameShape},
      {"LRN", &ShapePass::SameShape}, {"Mish", &ShapePass::SameShape}, {"Sin", &ShapePass::SameShape},
      {"Cos", &ShapePass::SameShape}, {"Atan", &ShapePass::SameShape}, {"Sign", &ShapePass::SameShape},
      {"CumSum", &ShapePass::SameShape}, {"Tan", &ShapePass::SameShape}, {"Asin", &ShapePass::SameShape},
      {"Acos", &ShapePass::SameShape}, {"Sinh", &ShapePass::SameShape}, {"Cosh", &ShapePass::SameShape},
      {"Asinh", &ShapePass::SameShape}, {"Acosh", &ShapePass::SameShape}, {"Atanh", &ShapePass::SameShape},
      {"ThresholdedRelu", &ShapePass::SameShape}, {"Shrink", &ShapePass::SameShape},
      {"Trilu", &ShapePass::SameShape}, {"ScatterND", &ShapePass::SameShape},
      {"ScatterElements", &ShapePass::SameShape}, {"Scatter", &ShapePass::SameShape},
      {"Not", &ShapePass::Predicate}, {"IsNaN", &ShapePass::Predicate}, {"IsInf", &ShapePass::Predicate},
      {"Dropout", &ShapePass::DropoutShape}, {"LayerNormalization", &ShapePass::LayerNormShape},
      {"TopK", &ShapePass::TopK}, {"OneHot", &ShapePass::OneHot},
      {"RandomUniformLike", &ShapePass::RandomLike}, {"RandomNormalLike", &ShapePass::RandomLike},
      {"RandomNormal", &ShapePass::RandomOfShape}, {"RandomUniform", &ShapePass::RandomOfShape},
      {"EyeLike", &ShapePass::RandomLike},  // torch.eye(x.shape[-1]): the input's 2-D shape, `dtype` or its own
      {"Cast", &ShapePass::Cast}, {"BatchNormalization", &ShapePass::BatchNorm}, {"Conv", &ShapePass::Window},
      {"ConvTranspose", &ShapePass::Window}, {"MaxPool", &ShapePass::Window},
      {"AveragePool", &ShapePass::Window}, {"LpPool", &ShapePass::Window},
      {"GlobalAveragePool", &ShapePass::GlobalPool}, {"GlobalMaxPool", &ShapePass::GlobalPool},
      {"GlobalLpPool", &ShapePass::GlobalPool}, {"Flatten", &ShapePass::Flatten}, {"Gemm", &ShapePass::Gemm},
      {"MatMul", &ShapePass::MatMul}, {"Shape", &ShapePass::ShapeOf}, {"Size", &ShapePass::SizeOf},
      {"Reshape", &ShapePass::Reshape}, {"Transpose", &ShapePass::Transpose},
      {"Unsqueeze", &ShapePass::SqueezeOrUnsqueeze}, {"Squeeze", &ShapePass::SqueezeOrUnsqueeze},
      {"Concat", &ShapePass::Concat}, {"Gather", &ShapePass::Gather}, {"Slice", &ShapePass::Slice},
      {"Einsum", &ShapePass::Einsum}, {"GatherElements", &ShapePass::GatherElements},
      {"DepthToSpace", &ShapePass::DepthSpace}, {"SpaceToDepth", &ShapePass::DepthSpace},
      {"Split", &ShapePass::Split}, {"ReduceL1", &ShapePass::Reduce}, {"ReduceL2", &ShapePass::Reduce},
      {"ReduceLogSum", &ShapePass::Reduce}, {"ReduceLogSumExp", &ShapePass::Reduce},
      {"ReduceMax", &ShapePass::Reduce}, {"ReduceMean", &ShapePass::Reduce}, {"ReduceMin", &ShapePass::Reduce},
      {"ReduceProd", &ShapePass::Reduce}, {"ReduceSum", &ShapePass::Reduce},
      {"ReduceSumSquare", &ShapePass::Reduce}, {"ArgMax", &ShapePass::Reduce}, {"ArgMin", &ShapePass::Reduce},
      {"ConstantOfShape", &ShapePass::ConstantOfShape}, {"Expand", &ShapePass::Expand},
      {"LSTM", &ShapePass::Recurrent}, {"GRU", &ShapePass::Recurrent}, {"RNN", &ShapePass::Recurrent},
      {"Range", &ShapePass::Range}, {"Pad", &ShapePass::Pad}, {"Resize", &ShapePass::Resize},
      {"Upsample", &ShapePass::Resize}, {"Tile", &ShapePass::Tile}, {"Loop", &ShapePass::LoopShape},
      {"If", &ShapePass::IfShape}, {"NonZero", &ShapePass::NonZero}, {"Compress", &ShapePass::Compress},
      {"GatherND", &ShapePass::GatherND},
    });
    return *rules;
  }
  static std::unordered_map<std::string_view, Rule>* WithElementwise(std::unordered_map<std::string_view, Rule>* rules) {
    for (const auto& [op, unused] : ElementwiseOps()) rules->emplace(op, &ShapePass::Elementwise);
    return rules;
  }

  // The input's shape and type (values for the few unary ops with a value rule).
  void SameShape(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    Set(n, 0, a->dims, a->dtype);
    if (a->has_value) UnaryValues(n, *a);
  }

  // The input's shape, bool.
  void Predicate(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    Set(n, 0, a->dims, kBool);
    if (a->has_value) UnaryValues(n, *a);
  }

  // The output and its bool mask.
  void DropoutShape(const NodeInfo& n) {
    SameShape(n);
    if (ConcreteTensor* a = In(n, 0)) Set(n, 1, a->dims, kBool);
  }

  // The output, and the mean and inverse deviation over the normalized axes.
  void LayerNormShape(const NodeInfo& n) {
    SameShape(n);
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    int64_t axis = NormAxis(Attr(n, "axis", -1), a->dims.size());
    Dims stat = a->dims;
    for (size_t i = std::max<int64_t>(axis, 0); i < stat.size(); ++i) stat[i] = 1;
    Set(n, 1, stat, kFloat);
    Set(n, 2, stat, kFloat);
  }

  void TopK(const NodeInfo& n) {  // k along `axis`: values and int64 indices (argsort and sort export as TopK)
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    int64_t k = Attr(n, "k", -1);  // opset < 10
    if (const auto* kv = InValue(n, 1); kv && kv->size() == 1) k = static_cast<int64_t>((*kv)[0]);
    int64_t axis = NormAxis(Attr(n, "axis", -1), a->dims.size());
    if (k < 0 || axis < 0 || axis >= static_cast<int64_t>(a->dims.size()) || k > a->dims[axis]) return;
    Dims d = a->dims;
    d[axis] = k;
    Set(n, 0, d, a->dtype);
    Set(n, 1, d, kInt64);
  }

  // F.one_hot(idx, n): the indices' shape with the constant depth inserted at `axis`, the dtype of `values`
  // ([off, on]; int64 from torch). Unseen set 17's EMA codebook (vqvae_ema) stopped the pass here.
  void OneHot(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    ConcreteTensor* v = In(n, 2);
    const std::vector<double>* depth = InValue(n, 1);
    if (!a || !v || !depth || depth->size() != 1 || !((*depth)[0] >= 1) || (*depth)[0] > 1e12) return;
    Dims d = a->dims;
    int64_t axis = NormAxis(Attr(n, "axis", -1), d.size() + 1);
    if (axis < 0 || axis > static_cast<int64_t>(d.size())) return;
    d.insert(d.begin() + axis, static_cast<int64_t>((*depth)[0]));
    Set(n, 0, d, v->dtype);
  }

  void RandomLike(const NodeInfo& n) {  // the input's shape, `dtype` or the input's
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    Set(n, 0, a->dims, static_cast<int>(Attr(n, "dtype", a->dtype)));
  }

  // torch.randn(shape) / torch.rand(shape) with a fixed shape: no input, the `shape` attribute, `dtype` or float
  // (Reformer's random rotations drawn in forward stopped the pass, unseen set 15's lsh_attention).
  void RandomOfShape(const NodeInfo& n) {
    const std::vector<int64_t>* shape = Ints(n, "shape");
    if (!shape || std::any_of(shape->begin(), shape->end(), [](int64_t x) { return x < 0; })) return;
    Set(n, 0, Dims(shape->begin(), shape->end()), static_cast<int>(Attr(n, "dtype", kFloat)));
  }

  void Cast(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    Set(n, 0, a->dims, static_cast<int>(Attr(n, "to", kFloat)));
    if (a->has_value) {
      std::vector<double> v = a->value;
      int to = static_cast<int>(Attr(n, "to", kFloat));
      if (to != kFloat && to != kDouble && to != kFloat16 && to != kBfloat16) {
        for (double& x : v) x = std::trunc(x);
      }
      SetValue(n, 0, v);
    }
  }

  void BatchNorm(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    Set(n, 0, a->dims, a->dtype);
    Dims c = {a->dims.size() > 1 ? a->dims[1] : 1};
    for (size_t i = 1; i < n.outputs.size(); ++i) Set(n, i, c, a->dtype);
  }

  void GlobalPool(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a || a->dims.size() < 2) return;
    Dims d = a->dims;
    for (size_t i = 2; i < d.size(); ++i) d[i] = 1;
    Set(n, 0, d, a->dtype);
  }

  void Flatten(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    int64_t axis = NormAxis(Attr(n, "axis", 1), a->dims.size());
    if (axis < 0 || axis > static_cast<int64_t>(a->dims.size())) return;
    int64_t x = 1, y = 1;
    for (int64_t i = 0; i < static_cast<int64_t>(a->dims.size()); ++i) (i < axis ? x : y) *= a->dims[i];
    Set(n, 0, {x, y}, a->dtype);
  }

  void Gemm(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    ConcreteTensor* b = In(n, 1);
    if (!a || !b || a->dims.size() != 2 || b->dims.size() != 2) return;
    int64_t m = Attr(n, "transA", 0) ? a->dims[1] : a->dims[0];
    int64_t ka = Attr(n, "transA", 0) ? a->dims[0] : a->dims[1];
    int64_t kb = Attr(n, "transB", 0) ? b->dims[1] : b->dims[0];
    int64_t k = Attr(n, "transB", 0) ? b->dims[0] : b->dims[1];
    if (ka != kb) return;  // PyTorch would fail: the features do not match the weight
    Set(n, 0, {m, k}, a->dtype);
  }

  void MatMul(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    ConcreteTensor* b = In(n, 1);
    if (!a || !b || a->dims.empty() || b->dims.empty()) return;
    Dims x = a->dims, y = b->dims;
    bool xv = x.size() == 1, yv = y.size() == 1;
    if (xv) x.insert(x.begin(), 1);
    if (yv) y.push_back(1);
    if (x.back() != y[y.size() - 2]) return;
    Dims bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2), batch;
    if (!Broadcast(bx, by, &batch)) return;
    Dims d = batch;
    if (!xv) d.push_back(x[x.size() - 2]);
    if (!yv) d.push_back(y.back());
    Set(n, 0, d, a->dtype);
  }

  void ShapeOf(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    int64_t r = static_cast<int64_t>(a->dims.size());
    int64_t start = std::clamp<int64_t>(NormAxis(Attr(n, "start", 0), r), 0, r);
    int64_t end = std::clamp<int64_t>(NormAxis(Attr(n, "end", r), r), 0, r);
    std::vector<double> v;
    for (int64_t i = start; i < end; ++i) v.push_back(static_cast<double>(a->dims[i]));
    Set(n, 0, {static_cast<int64_t>(v.size())}, kInt64);
    SetValue(n, 0, v);
  }

  void SizeOf(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    Set(n, 0, {}, kInt64);
    SetValue(n, 0, {static_cast<double>(a->Elements())});
  }

  void Reshape(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    const std::vector<double>* shape = InValue(n, 1);
    if (!a || !shape) return;
    Dims d;
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < shape->size(); ++i) {
      int64_t v = static_cast<int64_t>((*shape)[i]);
      if (v == 0 && !Attr(n, "allowzero", 0)) v = i < a->dims.size() ? a->dims[i] : 1;
      if (v == -1) {
        if (infer >= 0) return;
        infer = static_cast<int64_t>(i);
        d.push_back(1);
        continue;
      }
      if (v < 0) return;
      d.push_back(v);
      known *= v;
    }
    int64_t total = static_cast<int64_t>(a->Elements());
    if (infer >= 0) {
      if (known == 0 || total % known != 0) return;
      d[infer] = total / known;
    } else if (known != total) {
      return;
    }
    Set(n, 0, d, a->dtype);
    if (a->has_value) SetValue(n, 0, a->value);
  }

  void Transpose(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    Dims perm;
    if (const auto* p = Ints(n, "perm")) {
      perm = *p;
    } else {
      for (size_t i = a->dims.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    }
    if (perm.size() != a->dims.size()) return;
    Dims d;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(a->dims.size())) return;
      d.push_back(a->dims[p]);
    }
    Set(n, 0, d, a->dtype);
    if (a->has_value) TransposeValues(n, *a, perm);
  }

  // Squeeze's or Unsqueeze's output dims (`op`), or nothing for an axis out of range.
  static std::optional<Dims> ViewDims(const std::string& op, const Dims& d, std::vector<int64_t> axes) {
    if (op == "Identity") return d;
    if (op == "Unsqueeze") {
      Dims out = d;
      size_t r = d.size() + axes.size();
      for (int64_t& x : axes) x = NormAxis(x, r);
      std::sort(axes.begin(), axes.end());
      for (int64_t x : axes) {
        if (x < 0 || x > static_cast<int64_t>(out.size())) return std::nullopt;
        out.insert(out.begin() + x, 1);
      }
      return out;
    }
    Dims out;
    for (size_t i = 0; i < d.size(); ++i) {
      bool drop = axes.empty() ? d[i] == 1 : false;
      for (int64_t x : axes) drop = drop || NormAxis(x, d.size()) == static_cast<int64_t>(i);
      if (!drop) out.push_back(d[i]);
    }
    return out;
  }

  void SqueezeOrUnsqueeze(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    std::vector<int64_t> axes;
    if (const auto* p = Ints(n, "axes")) {
      axes = *p;
    } else if (const auto* v = InValue(n, 1)) {
      for (double x : *v) axes.push_back(static_cast<int64_t>(x));
    } else if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
      return;
    }
    std::optional<Dims> d = ViewDims(n.op_type, a->dims, std::move(axes));
    if (!d) return;
    Set(n, 0, *d, a->dtype);
    if (a->has_value) SetValue(n, 0, a->value);
  }

  // If(cond) whose taken branch is one view of an outer tensor (NodeInfo::branch_views): torch's
  // export of a squeeze whose dim it cannot prove is 1. Known when the condition's value is.
  void IfShape(const NodeInfo& n) {
    const std::vector<double>* cond = InValue(n, 0);
    if (!cond || cond->size() != 1) return;
    auto branch = n.branch_views.find((*cond)[0] != 0 ? "then_branch" : "else_branch");
    if (branch == n.branch_views.end()) return;
    ConcreteTensor* a = In(n, branch->second.input);
    if (!a) return;
    std::optional<Dims> d = ViewDims(branch->second.op, a->dims, branch->second.axes);
    if (!d) return;
    Set(n, 0, *d, a->dtype);
    if (a->has_value) SetValue(n, 0, a->value);
  }

  void Concat(const NodeInfo& n) {
    Dims d;
    int64_t axis = Attr(n, "axis", 0);
    std::vector<double> values;
    bool all_values = true;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      ConcreteTensor* t = In(n, i);
      if (!t) return;
      if (i == 0) {
        d = t->dims;
        axis = NormAxis(axis, d.size());
        if (axis < 0 || axis >= static_cast<int64_t>(d.size())) return;
      } else {
        if (t->dims.size() != d.size()) return;
        d[axis] += t->dims[axis];
      }
      if (t->has_value) {
        values.insert(values.end(), t->value.begin(), t->value.end());
      } else {
        all_values = false;
      }
    }
    ConcreteTensor* first = In(n, 0);
    Set(n, 0, d, first->dtype);
    if (all_values && d.size() == 1) SetValue(n, 0, values);
  }

  void Gather(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    ConcreteTensor* idx = In(n, 1);
    if (!a || !idx || a->dims.empty()) return;
    int64_t axis = NormAxis(Attr(n, "axis", 0), a->dims.size());
    if (axis < 0 || axis >= static_cast<int64_t>(a->dims.size())) return;
    Dims d(a->dims.begin(), a->dims.begin() + axis);
    d.insert(d.end(), idx->dims.begin(), idx->dims.end());
    d.insert(d.end(), a->dims.begin() + axis + 1, a->dims.end());
    Set(n, 0, d, a->dtype);
    if (a->has_value && idx->has_value && a->dims.size() == 1) {
      std::vector<double> v;
      for (double x : idx->value) {
        int64_t i = static_cast<int64_t>(x);
        if (i < 0) i += a->dims[0];
        if (i < 0 || i >= a->dims[0]) return;
        v.push_back(a->value[i]);
      }
      SetValue(n, 0, v);
    }
  }

  void GatherElements(const NodeInfo& n) {  // the indices' shape, the data's type
    ConcreteTensor* a = In(n, 0);
    ConcreteTensor* idx = In(n, 1);
    if (!a || !idx || idx->dims.size() != a->dims.size()) return;
    Set(n, 0, idx->dims, a->dtype);
  }

  void DepthSpace(const NodeInfo& n) {
    const std::string& op = n.op_type;
    ConcreteTensor* a = In(n, 0);
    int64_t b = Attr(n, "blocksize", 0);
    if (!a || a->dims.size() != 4 || b <= 0) return;
    Dims d = a->dims;
    if (op == "DepthToSpace") {
      if (d[1] % (b * b) != 0) return;
      d = {d[0], d[1] / (b * b), d[2] * b, d[3] * b};
    } else {
      if (d[2] % b != 0 || d[3] % b != 0) return;
      d = {d[0], d[1] * b * b, d[2] / b, d[3] / b};
    }
    Set(n, 0, d, a->dtype);
  }

  void Split(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a || a->dims.empty() || n.outputs.empty()) return;
    int64_t axis = NormAxis(Attr(n, "axis", 0), a->dims.size());
    if (axis < 0 || axis >= static_cast<int64_t>(a->dims.size())) return;
    std::vector<int64_t> sizes;
    if (const auto* p = Ints(n, "split")) {
      sizes = *p;
    } else if (const auto* v = InValue(n, 1)) {
      for (double x : *v) sizes.push_back(static_cast<int64_t>(x));
    } else {
      int64_t k = static_cast<int64_t>(n.outputs.size());
      int64_t each = (a->dims[axis] + k - 1) / k;
      for (int64_t i = 0; i < k; ++i) sizes.push_back(std::min(each, a->dims[axis] - i * each));
    }
    int64_t begin = 0;
    for (size_t i = 0; i < n.outputs.size() && i < sizes.size(); ++i) {
      Dims d = a->dims;
      d[axis] = std::max<int64_t>(sizes[i], 0);
      Set(n, i, d, a->dtype);
      // A known 1-D value splits into its pieces (torch.repeat_interleave's export splits its repeats).
      if (a->has_value && a->dims.size() == 1 && begin + d[axis] <= static_cast<int64_t>(a->value.size())) {
        SetValue(n, i, std::vector<double>(a->value.begin() + begin, a->value.begin() + begin + d[axis]));
      }
      begin += d[axis];
    }
  }

  void Reduce(const NodeInfo& n) {
    const std::string& op = n.op_type;
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    std::vector<int64_t> axes;
    if (op == "ArgMax" || op == "ArgMin") {
      axes = {Attr(n, "axis", 0)};
    } else if (const auto* p = Ints(n, "axes")) {
      axes = *p;
    } else if (const auto* v = InValue(n, 1)) {
      for (double x : *v) axes.push_back(static_cast<int64_t>(x));
    }
    bool keep = Attr(n, "keepdims", 1) != 0;
    Dims d;
    for (size_t i = 0; i < a->dims.size(); ++i) {
      bool reduced = axes.empty() && !Attr(n, "noop_with_empty_axes", 0);
      for (int64_t x : axes) reduced = reduced || NormAxis(x, a->dims.size()) == static_cast<int64_t>(i);
      if (!reduced) d.push_back(a->dims[i]);
      else if (keep) d.push_back(1);
    }
    Set(n, 0, d, op[0] == 'A' ? kInt64 : a->dtype);
    // The value of a small known tensor reduced to one number (numel = ReduceProd(Shape(x))).
    auto fold = ReduceValueOps().find(op);
    ConcreteTensor* o = Out(n, 0);
    if (fold == ReduceValueOps().end() || !a->has_value || a->value.empty() || !o || !o->known || o->Elements() != 1) {
      return;
    }
    double r = a->value[0];
    for (size_t i = 1; i < a->value.size(); ++i) r = fold->second(r, a->value[i]);
    SetValue(n, 0, {r});
  }

  void ConstantOfShape(const NodeInfo& n) {
    const std::vector<double>* v = InValue(n, 0);
    if (!v) return;
    Dims d;
    for (double x : *v) d.push_back(static_cast<int64_t>(x));
    int dtype = static_cast<int>(Attr(n, "value.dtype", kFloat));
    Set(n, 0, d, dtype == kUndefined ? kFloat : dtype);
    ConcreteTensor* o = Out(n, 0);
    if (o && o->known && o->Elements() <= kMaxValues) {
      auto fill = n.float_attrs.find("value");
      SetValue(n, 0, std::vector<double>(o->Elements(), fill == n.float_attrs.end() ? 0.0 : fill->second));
    }
  }

  void Expand(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    const std::vector<double>* v = InValue(n, 1);
    if (!a || !v) return;
    Dims shape, d;
    for (double x : *v) shape.push_back(static_cast<int64_t>(x));
    if (!Broadcast(a->dims, shape, &d)) return;
    Set(n, 0, d, a->dtype);
    // A known value broadcast to the new shape (torch.repeat_interleave's export expands its repeats).
    ConcreteTensor* o = Out(n, 0);
    if (!a->has_value || !o || !o->known || o->Elements() > kMaxValues || a->value.size() != a->Elements()) return;
    std::vector<double> out(o->Elements());
    const size_t rank = d.size(), lead = rank - a->dims.size();
    for (size_t flat = 0; flat < out.size(); ++flat) {
      size_t rest = flat, from = 0, stride = 1;
      for (size_t k = rank; k-- > 0;) {
        const size_t index = rest % static_cast<size_t>(d[k]);
        rest /= static_cast<size_t>(d[k]);
        if (k >= lead) {
          const size_t size = static_cast<size_t>(a->dims[k - lead]);
          from += (size == 1 ? 0 : index) * stride;
          stride *= size;
        }
      }
      out[flat] = a->value[from];
    }
    SetValue(n, 0, std::move(out));
  }

  void Recurrent(const NodeInfo& n) {
    // X [T, B, I] (layout 0) -> Y [T, dirs, B, H], Y_h and Y_c [dirs, B, H].
    ConcreteTensor* x = In(n, 0);
    int64_t hidden = Attr(n, "hidden_size", 0);
    if (!x || x->dims.size() != 3 || hidden <= 0 || Attr(n, "layout", 0) != 0) return;
    auto dir = n.string_attrs.find("direction");
    int64_t dirs = dir != n.string_attrs.end() && dir->second == "bidirectional" ? 2 : 1;
    Set(n, 0, {x->dims[0], dirs, x->dims[1], hidden}, x->dtype);
    for (size_t i = 1; i < n.outputs.size(); ++i) Set(n, i, {dirs, x->dims[1], hidden}, x->dtype);
  }

  // NonZero of a tensor whose values are known (a boolean mask buffer exported as a constant: x[:, mask] and
  // x[:, mask] = y index fixed positions): [rank, count] int64, and the indices themselves. Of anything
  // else the count depends on the data: planned at s_.extent (DataSized).
  void NonZero(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    const size_t rank = std::max<size_t>(1, a->dims.size());
    if (!a->has_value || a->value.size() != a->Elements()) {
      const int64_t count = DataSized(n, static_cast<int64_t>(a->Elements()));
      Set(n, 0, {static_cast<int64_t>(rank), count}, kInt64);
      return;
    }
    std::vector<size_t> hits;
    for (size_t i = 0; i < a->value.size(); ++i) {
      if (a->value[i] != 0) hits.push_back(i);
    }
    Set(n, 0, {static_cast<int64_t>(rank), static_cast<int64_t>(hits.size())}, kInt64);
    std::vector<double> v(rank * hits.size());
    for (size_t j = 0; j < hits.size(); ++j) {
      size_t flat = hits[j];
      for (size_t d = rank; d-- > 0;) {
        const size_t extent = a->dims.empty() ? 1 : static_cast<size_t>(a->dims[d]);
        v[d * hits.size() + j] = static_cast<double>(extent == 0 ? 0 : flat % extent);
        flat = extent == 0 ? 0 : flat / extent;
      }
    }
    SetValue(n, 0, std::move(v));
  }

  // GatherND (x[mask] of a boolean mask: NonZero's indices, transposed): the indices' leading dims, then the
  // dims of the data its last index axis does not reach.
  void GatherND(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    ConcreteTensor* idx = In(n, 1);
    if (!a || !idx || idx->dims.empty()) return;
    const int64_t batch_dims = Attr(n, "batch_dims", 0);
    const int64_t depth = idx->dims.back();
    if (batch_dims < 0 || depth < 1 || batch_dims + depth > static_cast<int64_t>(a->dims.size()) ||
        batch_dims >= static_cast<int64_t>(idx->dims.size())) {
      return;
    }
    Dims d(idx->dims.begin(), idx->dims.end() - 1);
    d.insert(d.end(), a->dims.begin() + batch_dims + depth, a->dims.end());
    Set(n, 0, d, a->dtype);
  }

  // A count the data decides, of at most `most`: planned at s_.extent and noted in s_.data_dependent.
  int64_t DataSized(const NodeInfo& n, int64_t most) {
    const NonzeroShare share = ExpectedNonzeroShare(m_, s_, n.inputs[n.op_type == "Compress" ? 1 : 0]);
    const int64_t count = DataExtentCount(s_.extent, share.share, most);
    s_.data_dependent.push_back({static_cast<int>(&n - m_.nodes.data()), count, most, share.share, share.basis});
    return count;
  }

  // Compress (masked_select, x[mask] of a 1-D mask): the elements, or the slices along `axis`, whose condition
  // is true; exact when the condition's values are known.
  void Compress(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    ConcreteTensor* c = In(n, 1);
    if (!a || !c || c->dims.size() != 1) return;
    auto axis_it = n.int_attrs.find("axis");
    const bool flat = axis_it == n.int_attrs.end();
    const int64_t axis = flat ? 0 : NormAxis(axis_it->second, a->dims.size());
    if (!flat && (axis < 0 || axis >= static_cast<int64_t>(a->dims.size()))) return;
    const int64_t extent = flat ? static_cast<int64_t>(a->Elements()) : a->dims[axis];
    const int64_t most = std::min(extent, c->dims[0]);
    int64_t count = 0;
    if (c->has_value && c->value.size() == c->Elements()) {
      for (int64_t i = 0; i < most; ++i) count += c->value[i] != 0;
    } else {
      count = DataSized(n, most);
    }
    Dims d = flat ? Dims{count} : a->dims;
    if (!flat) d[axis] = count;
    Set(n, 0, d, a->dtype);
  }

  void Range(const NodeInfo& n) {
    const auto* start = InValue(n, 0);
    const auto* limit = InValue(n, 1);
    const auto* delta = InValue(n, 2);
    ConcreteTensor* a = In(n, 0);
    if (!start || !limit || !delta || start->empty() || limit->empty() || delta->empty() || (*delta)[0] == 0) return;
    double len = std::ceil(((*limit)[0] - (*start)[0]) / (*delta)[0]);
    Set(n, 0, {std::max<int64_t>(0, static_cast<int64_t>(len))}, a->dtype);
  }

  void Pad(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    std::vector<int64_t> pads;
    if (const auto* p = Ints(n, "pads")) pads = *p;
    else if (const auto* v = InValue(n, 1)) for (double x : *v) pads.push_back(static_cast<int64_t>(x));
    else return;
    size_t r = a->dims.size();
    if (pads.size() != 2 * r) return;
    Dims d = a->dims;
    for (size_t i = 0; i < r; ++i) d[i] += pads[i] + pads[i + r];
    Set(n, 0, d, a->dtype);
  }

  void Resize(const NodeInfo& n) {
    const std::string& op = n.op_type;
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    Dims d = a->dims;
    const std::vector<double>* sizes = InValue(n, 3);
    const std::vector<double>* scales = op == "Upsample" ? InValue(n, 1) : InValue(n, 2);
    if (sizes && sizes->size() == d.size()) {
      for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<int64_t>((*sizes)[i]);
    } else if (scales && scales->size() == d.size()) {
      for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<int64_t>(std::floor(d[i] * (*scales)[i]));
    } else {
      return;
    }
    Set(n, 0, d, a->dtype);
  }

  void Tile(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    const std::vector<double>* rep = InValue(n, 1);
    if (!a || !rep || rep->size() != a->dims.size()) return;
    Dims d = a->dims;
    for (size_t i = 0; i < d.size(); ++i) d[i] *= static_cast<int64_t>((*rep)[i]);
    Set(n, 0, d, a->dtype);
  }

  // Loop(M, cond, carried...): the carried values keep their shapes; each scan output stacks
  // the body's per-iteration output M times (what torch exports for EmbeddingBag, one bag per
  // iteration). Known when M is known and the body's outputs are static.
  void LoopShape(const NodeInfo& n) {
    const size_t explicit_inputs = n.inputs.size() - static_cast<size_t>(n.implicit_inputs);
    if (explicit_inputs < 2) return;
    const size_t carried = explicit_inputs - 2;
    for (size_t i = 0; i < carried && i < n.outputs.size(); ++i) {
      if (ConcreteTensor* c = In(n, 2 + i)) Set(n, i, c->dims, c->dtype);
    }
    const std::vector<double>* trips = InValue(n, 0);
    auto body = n.subgraph_outputs.find("body");
    if (!trips || trips->size() != 1 || body == n.subgraph_outputs.end() || body->second.size() < 1 + carried) return;
    const double m = (*trips)[0];
    if (!(m >= 0 && m <= static_cast<double>(kMaxDim))) return;
    for (size_t j = carried; j < n.outputs.size() && 1 + j < body->second.size(); ++j) {
      const TensorInfo& t = body->second[1 + j];
      Dims d = {static_cast<int64_t>(m)};
      if (std::optional<Dims> per = IterationDims(n, t)) {
        d.insert(d.end(), per->begin(), per->end());
        Set(n, j, d, t.dtype == kUndefined ? kFloat : t.dtype);
      }
    }
  }

  // A Loop body's per-iteration output: its stored shape when static; else, for a vector
  // reduced from rows the body gathers from one outer [rows, D] table (EmbeddingBag's
  // export: the dims ONNX cannot infer, the weight being outside the body), [D].
  std::optional<Dims> IterationDims(const NodeInfo& n, const TensorInfo& t) {
    if (t.has_shape && std::all_of(t.dims.begin(), t.dims.end(), [](int64_t d) { return d >= 0; })) return t.dims;
    if (!t.has_shape || t.dims.size() != 1 || n.body_gathers.size() != 1) return std::nullopt;
    const ConcreteTensor* table = &s_.tensors[n.body_gathers[0]];
    if (!table->known || table->dims.size() != 2) return std::nullopt;
    return Dims{table->dims[1]};
  }

  void Slice(const NodeInfo& n) {
    ConcreteTensor* a = In(n, 0);
    if (!a) return;
    std::vector<int64_t> starts, ends, axes, steps;
    auto read = [&](size_t i, const char* attr, std::vector<int64_t>* out) -> bool {
      if (const auto* p = Ints(n, attr)) {
        *out = *p;
        return true;
      }
      if (i < n.inputs.size() && n.inputs[i] >= 0) {
        const auto* v = InValue(n, i);
        if (!v) return false;
        for (double x : *v) out->push_back(static_cast<int64_t>(std::clamp(x, -9.2e18, 9.2e18)));
      }
      return true;
    };
    if (!read(1, "starts", &starts) || !read(2, "ends", &ends) || !read(3, "axes", &axes) ||
        !read(4, "steps", &steps)) {
      return;
    }
    if (starts.size() != ends.size()) return;
    if (axes.empty()) for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size()) return;
    Dims d = a->dims;
    std::vector<std::vector<int64_t>> picks(d.size());
    for (size_t i = 0; i < starts.size(); ++i) {
      int64_t ax = NormAxis(axes[i], d.size());
      if (ax < 0 || ax >= static_cast<int64_t>(d.size()) || steps[i] == 0) return;
      int64_t dim = a->dims[ax];
      int64_t s = starts[i], e = ends[i], st = steps[i];
      if (s < 0) s += dim;
      if (e < 0) e += dim;
      if (st > 0) {
        s = std::clamp<int64_t>(s, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        d[ax] = e > s ? (e - s + st - 1) / st : 0;
      } else {
        s = std::clamp<int64_t>(s, -1, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        d[ax] = s > e ? (s - e + (-st) - 1) / (-st) : 0;
      }
      if (a->has_value) {  // values are small (<= kMaxValues)
        for (int64_t k = 0; k < d[ax]; ++k) picks[ax].push_back(s + k * st);
      }
    }
    Set(n, 0, d, a->dtype);
    if (a->has_value && a->value.size() == a->Elements()) {
      // Values of a small N-D slice (pads computed by F.pad's export are sliced in 2-D).
      for (size_t ax = 0; ax < d.size(); ++ax) {
        if (picks[ax].empty()) {
          for (int64_t k = 0; k < d[ax]; ++k) picks[ax].push_back(k);
        }
      }
      std::vector<double> v;
      ConcreteTensor* o = Out(n, 0);
      if (!o || !o->known) return;
      size_t count = o->Elements();
      for (size_t flat = 0; flat < count; ++flat) {
        size_t rem = flat, src = 0, stride = 1;
        std::vector<int64_t> coord(d.size());
        for (size_t j = d.size(); j-- > 0;) {
          coord[j] = d[j] ? static_cast<int64_t>(rem % static_cast<size_t>(d[j])) : 0;
          rem = d[j] ? rem / static_cast<size_t>(d[j]) : 0;
        }
        for (size_t j = d.size(); j-- > 0;) {
          int64_t k = picks[j][static_cast<size_t>(coord[j])];
          if (k < 0 || k >= a->dims[j]) return;
          src += static_cast<size_t>(k) * stride;
          stride *= static_cast<size_t>(a->dims[j]);
        }
        if (src >= a->value.size()) return;
        v.push_back(a->value[src]);
      }
      SetValue(n, 0, v);
    }
  }

  // Values of small unary results (shape arithmetic: torch.div(..., rounding_mode='floor'), ceil, sqrt).
  void UnaryValues(const NodeInfo& n, const ConcreteTensor& a) {
    auto f = UnaryValueOps().find(n.op_type);
    if (f == UnaryValueOps().end()) return;
    std::vector<double> v = a.value;
    for (double& x : v) x = f->second(x);
    SetValue(n, 0, std::move(v));
  }

  // Values of a small transposed tensor.
  void TransposeValues(const NodeInfo& n, const ConcreteTensor& a, const Dims& perm) {
    ConcreteTensor* o = Out(n, 0);
    if (!o || !o->known || a.value.size() != a.Elements()) return;
    const Dims& od = o->dims;
    std::vector<size_t> in_stride(a.dims.size(), 1);
    for (size_t j = a.dims.size(); j-- > 1;) in_stride[j - 1] = in_stride[j] * static_cast<size_t>(a.dims[j]);
    std::vector<double> v;
    for (size_t flat = 0; flat < o->Elements(); ++flat) {
      size_t rem = flat, src = 0;
      for (size_t j = od.size(); j-- > 0;) {
        size_t c = od[j] ? rem % static_cast<size_t>(od[j]) : 0;
        rem = od[j] ? rem / static_cast<size_t>(od[j]) : 0;
        src += c * in_stride[static_cast<size_t>(perm[j])];
      }
      if (src >= a.value.size()) return;
      v.push_back(a.value[src]);
    }
    SetValue(n, 0, v);
  }

  // Einsum: every letter's size from the operands, the dims an ellipsis covers broadcast across the operands
  // that have one (aligned from the right); the output's from the terms after "->" or, implicitly, the
  // ellipsis, then the letters used once in A-Z, a-z order (as torch.einsum).
  void Einsum(const NodeInfo& n) {
    auto it = n.string_attrs.find("equation");
    if (it == n.string_attrs.end()) return;
    std::string eq;
    for (char c : it->second) {
      if (c != ' ') eq += c;
    }
    std::string lhs = eq, rhs;
    const bool has_arrow = eq.find("->") != std::string::npos;
    if (has_arrow) {
      lhs = eq.substr(0, eq.find("->"));
      rhs = eq.substr(eq.find("->") + 2);
    }
    std::vector<std::string> terms;
    size_t start = 0;
    for (size_t i = 0; i <= lhs.size(); ++i) {
      if (i == lhs.size() || lhs[i] == ',') {
        terms.push_back(lhs.substr(start, i - start));
        start = i + 1;
      }
    }
    if (terms.size() != n.inputs.size()) return;
    std::map<char, int64_t> size;
    std::map<char, int> count;
    Dims ellipsis;
    bool has_ellipsis = false;
    auto broadcast = [](int64_t& into, int64_t dim) {
      if (into == 1) into = dim;
      return dim == 1 || into == dim;
    };
    for (size_t t = 0; t < terms.size(); ++t) {
      ConcreteTensor* a = In(n, t);
      const size_t dots = terms[t].find("...");
      std::string labels = terms[t];
      if (dots != std::string::npos) labels.erase(dots, 3);
      if (!a || labels.find('.') != std::string::npos || a->dims.size() < labels.size() ||
          (dots == std::string::npos && a->dims.size() != labels.size())) {
        return;
      }
      const size_t covered = a->dims.size() - labels.size();
      if (dots != std::string::npos) {
        has_ellipsis = true;
        if (ellipsis.size() < covered) ellipsis.insert(ellipsis.begin(), covered - ellipsis.size(), 1);
        for (size_t j = 0; j < covered; ++j) {
          if (!broadcast(ellipsis[ellipsis.size() - covered + j], a->dims[dots + j])) return;
        }
      }
      for (size_t j = 0; j < labels.size(); ++j) {
        const char c = labels[j];
        const int64_t dim = a->dims[dots != std::string::npos && j >= dots ? j + covered : j];
        auto [pos, fresh] = size.emplace(c, dim);
        if (!fresh && !broadcast(pos->second, dim)) return;
        ++count[c];
      }
    }
    if (!has_arrow) {
      if (has_ellipsis) rhs = "...";
      for (const auto& [c, k] : count) {
        if (k == 1) rhs += c;
      }
    }
    Dims d;
    for (size_t i = 0; i < rhs.size(); ++i) {
      if (rhs.compare(i, 3, "...") == 0) {
        d.insert(d.end(), ellipsis.begin(), ellipsis.end());
        i += 2;
        continue;
      }
      auto pos = size.find(rhs[i]);
      if (pos == size.end()) return;
      d.push_back(pos->second);
    }
    Set(n, 0, d, In(n, 0)->dtype);
  }

  void Window(const NodeInfo& n) {
    const std::string& op = n.op_type;
    ConcreteTensor* x = In(n, 0);
    if (!x || x->dims.size() < 3) return;
    size_t spatial = x->dims.size() - 2;
    Dims kernel;
    int64_t channels = x->dims[1];
    if (op == "Conv" || op == "ConvTranspose") {
      ConcreteTensor* w = In(n, 1);
      if (!w || w->dims.size() != x->dims.size()) return;
      kernel.assign(w->dims.begin() + 2, w->dims.end());
      int64_t group = std::max<int64_t>(1, Attr(n, "group", 1));
      if (op == "Conv" && w->dims[1] * group != x->dims[1]) return;  // channels do not match the weight
      if (op == "ConvTranspose" && w->dims[0] != x->dims[1]) return;
      channels = op == "Conv" ? w->dims[0] : w->dims[1] * Attr(n, "group", 1);
    } else if (const auto* k = Ints(n, "kernel_shape")) {
      kernel = *k;
    }
    if (const auto* k = Ints(n, "kernel_shape")) kernel = *k;
    if (kernel.size() != spatial) return;
    Dims strides(spatial, 1), dil(spatial, 1), pads(2 * spatial, 0), outpad(spatial, 0);
    if (const auto* p = Ints(n, "strides"); p && p->size() == spatial) strides = *p;
    if (const auto* p = Ints(n, "dilations"); p && p->size() == spatial) dil = *p;
    if (const auto* p = Ints(n, "pads"); p && p->size() == 2 * spatial) pads = *p;
    if (const auto* p = Ints(n, "output_padding"); p && p->size() == spatial) outpad = *p;
    std::string auto_pad = n.string_attrs.count("auto_pad") ? n.string_attrs.at("auto_pad") : "NOTSET";
    bool ceil_mode = Attr(n, "ceil_mode", 0) != 0;
    Dims d = {x->dims[0], channels};
    for (size_t i = 0; i < spatial; ++i) {
      int64_t in = x->dims[2 + i];
      if (strides[i] <= 0 || dil[i] <= 0 || kernel[i] <= 0) return;
      int64_t eff = (kernel[i] - 1) * dil[i] + 1;
      int64_t out;
      if (op == "ConvTranspose") {
        if (const auto* os = Ints(n, "output_shape"); os && os->size() == spatial) {
          out = (*os)[i];
        } else {
          out = strides[i] * (in - 1) + outpad[i] + eff - pads[i] - pads[i + spatial];
        }
      } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        out = (in + strides[i] - 1) / strides[i];
      } else {
        int64_t padded = in + (auto_pad == "VALID" ? 0 : pads[i] + pads[i + spatial]) - eff;
        if (padded < 0) return;
        out = (ceil_mode ? (padded + strides[i] - 1) / strides[i] : padded / strides[i]) + 1;
      }
      if (out <= 0) return;
      d.push_back(out);
    }
    Set(n, 0, d, x->dtype);
    if (op == "MaxPool") Set(n, 1, d, kInt64);
  }

  const Model& m_;
  ConcreteShapes& s_;
};

}  // namespace

void RunShapePass(const Model& model, ConcreteShapes* shapes) { ShapePass(model, shapes).Run(); }

}  // namespace oomguard::plan
