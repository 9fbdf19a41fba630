#include "frozen_signs.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <set>
#include <string_view>

namespace oomguard::plan {
namespace {

bool ShapeOnly(const NodeInfo& n) { return n.op_type == "Shape" || n.op_type == "Size"; }

// The nodes whose outputs reach the graph's outputs only through `seed` (its producer included): what runs
// without autograd if `seed` is computed under no_grad or .detach()ed. Reads of a shape carry no gradient.
std::vector<bool> DominatedBy(const Model& m, int seed) {
  std::vector<bool> in(m.nodes.size(), false);
  std::set<int> outputs(m.outputs.begin(), m.outputs.end());
  for (size_t i = m.nodes.size(); i-- > 0;) {
    const NodeInfo& n = m.nodes[i];
    if (ShapeOnly(n)) continue;
    bool reaches = false, only_through = true;
    for (int t : n.outputs) {
      if (t < 0) continue;
      if (t == seed) {
        reaches = true;
        continue;
      }
      if (outputs.count(t)) only_through = false;
      for (int c : m.tensors[static_cast<size_t>(t)].consumers) {
        if (ShapeOnly(m.nodes[static_cast<size_t>(c)])) continue;
        if (in[static_cast<size_t>(c)]) {
          reaches = true;
        } else {
          only_through = false;
        }
      }
    }
    in[i] = reaches && only_through;
  }
  return in;
}

// Whether `id` is computed from a tensor `fits` (within a bounded walk back; shapes read carry no values).
template <typename Fits>
bool ComputedFrom(const Model& m, int id, Fits&& fits) {
  std::vector<int> stack = {id};
  std::set<int> seen;
  while (!stack.empty() && seen.size() < 100000) {
    const int t = stack.back();
    stack.pop_back();
    if (t < 0 || !seen.insert(t).second) continue;
    if (fits(t)) return true;
    const int producer = m.tensors[static_cast<size_t>(t)].producer;
    if (producer < 0) continue;
    const NodeInfo& n = m.nodes[static_cast<size_t>(producer)];
    if (ShapeOnly(n)) continue;
    stack.insert(stack.end(), n.inputs.begin(), n.inputs.end());
  }
  return false;
}

bool FromTrainedWeight(const Model& m, int id) {
  return ComputedFrom(m, id, [&](int t) { return m.tensors[static_cast<size_t>(t)].kind == TensorKind::kParameter; });
}

// The trained weights that only nodes in `in` read.
std::vector<int> OwnWeights(const Model& m, const std::vector<bool>& in) {
  std::vector<int> own;
  for (size_t t = 0; t < m.tensors.size(); ++t) {
    const TensorInfo& info = m.tensors[t];
    if (info.kind != TensorKind::kParameter || info.consumers.empty()) continue;
    if (std::all_of(info.consumers.begin(), info.consumers.end(), [&](int c) { return in[static_cast<size_t>(c)]; })) {
      own.push_back(static_cast<int>(t));
    }
  }
  return own;
}

// Every weight of `own` has a twin of its shape among the other trained weights, one each: a copy of a trained
// network (a target critic, a momentum encoder, a reference model).
bool Twinned(const Model& m, const std::vector<int>& own) {
  std::multiset<std::vector<int64_t>> others;
  const std::set<int> mine(own.begin(), own.end());
  for (size_t t = 0; t < m.tensors.size(); ++t) {
    if (m.tensors[t].kind == TensorKind::kParameter && !mine.count(static_cast<int>(t))) others.insert(m.tensors[t].dims);
  }
  for (int t : own) {
    auto it = others.find(m.tensors[static_cast<size_t>(t)].dims);
    if (it == others.end()) return false;
    others.erase(it);
  }
  return true;
}

std::vector<int> Members(const std::vector<bool>& in) {
  std::vector<int> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i]) out.push_back(static_cast<int>(i));
  }
  return out;
}

// The module a weight belongs to: "cell.c1" for "cell.c1.weight".
std::string ModuleOf(const std::string& weight) {
  const size_t dot = weight.rfind('.');
  return dot == std::string::npos ? weight : weight.substr(0, dot);
}

// The longest module prefix of every weight in `weights` ("tower" for tower.patch.weight, tower.blocks.0...),
// leaving out the names torch.onnx makes up ("onnx::MatMul_812").
std::string CommonModule(const Model& m, const std::vector<int>& weights) {
  std::string module;
  bool first = true;
  for (int t : weights) {
    const std::string& name = m.tensors[static_cast<size_t>(t)].name;
    if (name.rfind("onnx::", 0) == 0) continue;
    if (first) module = ModuleOf(name), first = false;
    while (!module.empty() && name.rfind(module + ".", 0) != 0) {
      const std::string up = ModuleOf(module);
      module = up == module ? "" : up;
    }
  }
  return module;
}

// The activations the op reading a weight at `node` computes with: its own, or, for the weight's transpose (a
// Linear exported as MatMul), those of the op that reads the transpose.
std::vector<int> ActivationOperands(const Model& m, int node) {
  const NodeInfo& n = m.nodes[static_cast<size_t>(node)];
  std::vector<int> out;
  auto add_from = [&](const NodeInfo& op) {
    for (int t : op.inputs) {
      if (t >= 0 && m.tensors[static_cast<size_t>(t)].kind == TensorKind::kActivation) out.push_back(t);
    }
  };
  if (n.op_type == "Transpose" && n.outputs.size() == 1 && n.outputs[0] >= 0) {
    for (int c : m.tensors[static_cast<size_t>(n.outputs[0])].consumers) {
      for (int t : m.nodes[static_cast<size_t>(c)].inputs) {
        if (t >= 0 && t != n.outputs[0] && m.tensors[static_cast<size_t>(t)].kind == TensorKind::kActivation) {
          out.push_back(t);
        }
      }
    }
    return out;
  }
  add_from(n);
  return out;
}

// kSolverSteps: the weight read by the most calls of a chain z_{i+1} = f(z_i, x), x read at each call by an
// elementwise op and of z's shape. The calls are the stretches of the graph between one read of the weight and
// the next (the module's first weight: the earliest first read wins).
std::vector<GradModeGuess> SolverSteps(const Model& m, const ConcreteShapes& s) {
  constexpr size_t kMinCalls = 4;
  std::vector<GradModeGuess> out;
  size_t best_first = m.nodes.size();
  for (size_t w = 0; w < m.tensors.size(); ++w) {
    const TensorInfo& weight = m.tensors[w];
    if (weight.kind != TensorKind::kParameter) continue;
    std::vector<int> reads;
    for (int c : weight.consumers) {
      if (!ShapeOnly(m.nodes[static_cast<size_t>(c)])) reads.push_back(c);
    }
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    if (reads.size() < kMinCalls || static_cast<size_t>(reads.front()) >= best_first) continue;
    auto call_of = [&](int node) {
      return static_cast<int>(std::upper_bound(reads.begin(), reads.end(), node) - reads.begin()) - 1;
    };
    const int calls = static_cast<int>(reads.size());
    // Per call: the activations made before the first call that it reads in an elementwise op, and the shapes of
    // what the previous call hands to the op that reads the weight (z).
    std::vector<std::set<int>> injected(static_cast<size_t>(calls));
    std::vector<std::set<std::vector<int64_t>>> handed(static_cast<size_t>(calls));
    for (size_t i = static_cast<size_t>(reads.front()); i < m.nodes.size(); ++i) {
      const NodeInfo& n = m.nodes[i];
      const int call = call_of(static_cast<int>(i));
      const bool elementwise = n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Concat";
      for (int t : n.inputs) {
        if (t < 0) continue;
        const TensorInfo& info = m.tensors[static_cast<size_t>(t)];
        if (info.kind != TensorKind::kActivation && info.kind != TensorKind::kGraphInput) continue;
        if (elementwise && info.producer < reads.front()) injected[static_cast<size_t>(call)].insert(t);
      }
    }
    for (int c = 1; c < calls; ++c) {
      for (int t : ActivationOperands(m, reads[static_cast<size_t>(c)])) {
        const int producer = m.tensors[static_cast<size_t>(t)].producer;
        if (producer >= reads.front() && call_of(producer) == c - 1) {
          handed[static_cast<size_t>(c - 1)].insert(s.tensors[static_cast<size_t>(t)].dims);
        }
      }
    }
    std::set<int> common = injected[0];
    for (const auto& in : injected) {
      std::set<int> both;
      std::set_intersection(common.begin(), common.end(), in.begin(), in.end(), std::inserter(both, both.begin()));
      common = std::move(both);
    }
    const bool fixed_point = std::any_of(common.begin(), common.end(), [&](int x) {
      const std::vector<int64_t>& dims = s.tensors[static_cast<size_t>(x)].dims;
      return s.tensors[static_cast<size_t>(x)].known &&
             std::all_of(handed.begin(), handed.end() - 1, [&](const auto& shapes) { return shapes.count(dims) > 0; });
    });
    if (!fixed_point) continue;
    GradModeGuess g;
    g.sign = GradModeSign::kSolverSteps;
    // Named by the module that holds every weight the first call reads ("cell" for cell.c1, cell.g1, ...).
    std::vector<int> first_call = {static_cast<int>(w)};
    for (int i = reads[0]; i < reads[1]; ++i) {
      for (int t : m.nodes[static_cast<size_t>(i)].inputs) {
        if (t >= 0 && m.tensors[static_cast<size_t>(t)].kind == TensorKind::kParameter) first_call.push_back(t);
      }
    }
    const std::string module = CommonModule(m, first_call);
    g.where = "'" + (module.empty() ? ModuleOf(weight.name) : module) + "' (" + std::to_string(calls) + " calls)";
    for (int i = reads.front(); i < reads.back(); ++i) g.no_grad.push_back(i);
    best_first = static_cast<size_t>(reads.front());
    out.assign(1, std::move(g));
  }
  return out;
}

// The difference whose only readers square it or take its absolute value.
bool SquaredDifference(const Model& m, const NodeInfo& sub) {
  if (sub.op_type != "Sub" || sub.inputs.size() != 2 || sub.outputs.empty() || sub.outputs[0] < 0) return false;
  const int d = sub.outputs[0];
  const std::vector<int>& readers = m.tensors[static_cast<size_t>(d)].consumers;
  return !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](int c) {
    const NodeInfo& r = m.nodes[static_cast<size_t>(c)];
    if (r.op_type == "Abs") return true;
    if (r.op_type == "Mul") return r.inputs.size() == 2 && r.inputs[0] == d && r.inputs[1] == d;
    if (r.op_type != "Pow" || r.inputs.size() != 2 || r.inputs[1] < 0) return false;
    const TensorInfo& e = m.tensors[static_cast<size_t>(r.inputs[1])];
    return e.has_value && e.value.size() == 1 && e.value[0] == 2.0;
  });
}

// kTargetBranch: per squared difference, the operand read only by such differences whose computation reaches the
// loss only there and reads weights nothing else reads, each the twin of a trained weight (a copy of a network),
// the other operand computed from trained weights too; where both qualify, the larger. One guess: all such
// branches under no_grad, their own weights frozen.
std::vector<GradModeGuess> TargetBranches(const Model& m) {
  std::vector<bool> all(m.nodes.size(), false);
  std::set<int> frozen;
  std::string where;
  for (const NodeInfo& sub : m.nodes) {
    if (!SquaredDifference(m, sub)) continue;
    std::vector<bool> best;
    std::vector<int> best_own;
    size_t best_size = 0;
    for (size_t side = 0; side < 2; ++side) {
      const int b = sub.inputs[side], a = sub.inputs[1 - side];
      if (b < 0 || a < 0 || m.tensors[static_cast<size_t>(b)].producer < 0) continue;
      const std::vector<int>& readers = m.tensors[static_cast<size_t>(b)].consumers;
      if (!std::all_of(readers.begin(), readers.end(), [&](int c) {
            const NodeInfo& r = m.nodes[static_cast<size_t>(c)];
            return ShapeOnly(r) || SquaredDifference(m, r);
          })) {
        continue;
      }
      std::vector<bool> in = DominatedBy(m, b);
      const size_t size = static_cast<size_t>(std::count(in.begin(), in.end(), true));
      if (size <= best_size || !FromTrainedWeight(m, a)) continue;
      std::vector<int> own = OwnWeights(m, in);
      if (own.empty() || !Twinned(m, own)) continue;
      best = std::move(in);
      best_size = size;
      best_own = std::move(own);
    }
    if (best.empty()) continue;
    for (size_t i = 0; i < best.size(); ++i) all[i] = all[i] || best[i];
    frozen.insert(best_own.begin(), best_own.end());
    if (where.empty()) where = "'" + sub.name + "'";
  }
  if (where.empty()) return {};
  GradModeGuess g;
  g.sign = GradModeSign::kTargetBranch;
  g.where = where;
  g.no_grad = Members(all);
  g.frozen.assign(frozen.begin(), frozen.end());
  return {g};
}

// kStraightThrough: Add(x, Sub(q, x)) in either order, q computed from x; what reaches the loss only through the
// difference may be detached.
std::vector<GradModeGuess> StraightThrough(const Model& m) {
  std::vector<bool> all(m.nodes.size(), false);
  std::string where;
  size_t count = 0;
  for (const NodeInfo& add : m.nodes) {
    if (add.op_type != "Add" || add.inputs.size() != 2) continue;
    for (size_t side = 0; side < 2; ++side) {
      const int d = add.inputs[side], x = add.inputs[1 - side];
      if (d < 0 || x < 0 || m.tensors[static_cast<size_t>(d)].producer < 0) continue;
      const NodeInfo& sub = m.nodes[static_cast<size_t>(m.tensors[static_cast<size_t>(d)].producer)];
      if (sub.op_type != "Sub" || sub.inputs.size() != 2 || sub.inputs[1] != x || sub.inputs[0] < 0 ||
          !ComputedFrom(m, sub.inputs[0], [&](int t) { return t == x; })) {
        continue;
      }
      std::vector<bool> in = DominatedBy(m, d);
      if (std::count(in.begin(), in.end(), true) < 2) continue;  // q itself made from x there
      for (size_t i = 0; i < in.size(); ++i) all[i] = all[i] || in[i];
      if (count++ == 0) where = "'" + sub.name + "'";
      break;
    }
  }
  if (count == 0) return {};
  GradModeGuess g;
  g.sign = GradModeSign::kStraightThrough;
  g.where = where + (count > 1 ? " and " + std::to_string(count - 1) + " more" : "");
  g.detached = Members(all);
  return {g};
}

// The trained weight a MatMul or Gemm reads, directly or through a Transpose (a Linear's x @ W.t()); -1 if none.
int MatMulWeight(const Model& m, const NodeInfo& n) {
  if (n.op_type != "MatMul" && n.op_type != "Gemm") return -1;
  for (int t : n.inputs) {
    if (t < 0) continue;
    const TensorInfo& info = m.tensors[static_cast<size_t>(t)];
    if (info.kind == TensorKind::kParameter) return info.dims.size() == 2 ? t : -1;
    if (info.producer < 0) continue;
    const NodeInfo& p = m.nodes[static_cast<size_t>(info.producer)];
    if (p.op_type == "Transpose" && p.inputs.size() == 1 && p.inputs[0] >= 0 &&
        m.tensors[static_cast<size_t>(p.inputs[0])].kind == TensorKind::kParameter &&
        m.tensors[static_cast<size_t>(p.inputs[0])].dims.size() == 2) {
      return p.inputs[0];
    }
  }
  return -1;
}

// The activation a MatMul or Gemm multiplies its weight with (not the weight's transpose).
int MatMulActivation(const Model& m, const NodeInfo& n) {
  const int w = MatMulWeight(m, n);
  for (int t : n.inputs) {
    if (t < 0 || (m.tensors[static_cast<size_t>(t)].kind != TensorKind::kActivation &&
                  m.tensors[static_cast<size_t>(t)].kind != TensorKind::kGraphInput)) {
      continue;
    }
    const int p = m.tensors[static_cast<size_t>(t)].producer;
    const bool weight_transposed = p >= 0 && m.nodes[static_cast<size_t>(p)].op_type == "Transpose" &&
                                   m.nodes[static_cast<size_t>(p)].inputs == std::vector<int>{w};
    if (!weight_transposed) return t;
  }
  return -1;
}

// The single reader of a node's first output, or null.
const NodeInfo* OnlyReader(const Model& m, const NodeInfo& n) {
  if (n.outputs.empty() || n.outputs[0] < 0) return nullptr;
  const std::vector<int>& readers = m.tensors[static_cast<size_t>(n.outputs[0])].consumers;
  return readers.size() == 1 ? &m.nodes[static_cast<size_t>(readers[0])] : nullptr;
}

// kBackboneFrozen: a low-rank adapter beside a weight, unmerged (base(x) + (x @ A.t() @ B.t()) * s: LoRA): the
// model's other weights are usually frozen but for the head (the last layer that multiplies by a weight, after
// the last adapter, and what follows it).
std::vector<GradModeGuess> LowRankAdapters(const Model& m) {
  std::set<int> factors;
  int last_add = -1;
  std::string where;
  size_t count = 0;
  for (const NodeInfo& down : m.nodes) {
    const int a = MatMulWeight(m, down), x = MatMulActivation(m, down);
    if (a < 0 || x < 0) continue;
    const NodeInfo* up = OnlyReader(m, down);
    const int b = up ? MatMulWeight(m, *up) : -1;
    if (b < 0 || b == a) continue;
    const std::vector<int64_t>& ad = m.tensors[static_cast<size_t>(a)].dims;
    const std::vector<int64_t>& bd = m.tensors[static_cast<size_t>(b)].dims;
    const int64_t rank = std::min(ad[0], ad[1]);
    if (rank <= 0 || std::min(bd[0], bd[1]) != rank || rank * 4 > std::max(ad[0], ad[1]) ||
        rank * 4 > std::max(bd[0], bd[1])) {
      continue;
    }
    // Through a scale (or none) to the sum with the base layer's output, which reads x with a weight of its own.
    const NodeInfo* sum = OnlyReader(m, *up);
    for (int hops = 0; sum && sum->op_type != "Add" && hops < 2; ++hops) {
      sum = (sum->op_type == "Mul" || sum->op_type == "Div") ? OnlyReader(m, *sum) : nullptr;
    }
    if (!sum || sum->op_type != "Add" || sum->inputs.size() != 2) continue;
    bool beside_base = false;
    for (int t : sum->inputs) {
      for (int hops = 0; t >= 0 && m.tensors[static_cast<size_t>(t)].producer >= 0 && hops < 2; ++hops) {
        const NodeInfo& p = m.nodes[static_cast<size_t>(m.tensors[static_cast<size_t>(t)].producer)];
        const int w = MatMulWeight(m, p);
        if (w >= 0 && w != a && w != b && MatMulActivation(m, p) == x) {
          beside_base = true;
          break;
        }
        t = p.op_type == "Add" && !p.inputs.empty() ? p.inputs[m.tensors[static_cast<size_t>(p.inputs[0])].kind ==
                                                                  TensorKind::kActivation ? 0 : 1]
                                                    : -1;
      }
    }
    if (!beside_base) continue;
    factors.insert({a, b});
    last_add = std::max(last_add, static_cast<int>(sum - m.nodes.data()));
    if (count++ == 0) where = "'" + ModuleOf(m.tensors[static_cast<size_t>(a)].name) + "'";
  }
  if (count == 0) return {};
  GradModeGuess g;
  g.sign = GradModeSign::kBackboneFrozen;
  g.where = where + (count > 1 ? " and " + std::to_string(count - 1) + " more" : "");
  // The head: the last layer that multiplies by a weight, and what follows it.
  int head = last_add;
  for (size_t i = static_cast<size_t>(last_add); i < m.nodes.size(); ++i) {
    if (MatMulWeight(m, m.nodes[i]) >= 0 || m.nodes[i].op_type == "Conv") head = static_cast<int>(i);
  }
  for (size_t t = 0; t < m.tensors.size(); ++t) {
    const TensorInfo& info = m.tensors[t];
    if (info.kind != TensorKind::kParameter || factors.count(static_cast<int>(t))) continue;
    if (std::any_of(info.consumers.begin(), info.consumers.end(), [&](int c) { return c < head; })) {
      g.frozen.push_back(static_cast<int>(t));
    }
  }
  return {g};
}

// kTowerFrozen: a sequence concatenated from token embeddings (a Gather of a weight by a graph input) and the output
// of a network over another input that reaches the rest only through its last one or two layers with weights (a
// vision tower and its projector: LLaVA). The tower, four layers with weights or more before the projector, is
// usually pretrained, frozen and run under no_grad.
std::vector<GradModeGuess> ProjectedTowers(const Model& m) {
  constexpr int kMinTowerLayers = 4;
  std::set<int> inputs(m.inputs.begin(), m.inputs.end());
  for (const NodeInfo& cat : m.nodes) {
    if (cat.op_type != "Concat" || cat.inputs.size() != 2) continue;
    for (size_t side = 0; side < 2; ++side) {
      const int tokens = cat.inputs[1 - side], other = cat.inputs[side];
      if (tokens < 0 || other < 0 || m.tensors[static_cast<size_t>(tokens)].producer < 0) continue;
      const NodeInfo& gather = m.nodes[static_cast<size_t>(m.tensors[static_cast<size_t>(tokens)].producer)];
      if (gather.op_type != "Gather" || gather.inputs.size() != 2 || gather.inputs[0] < 0 ||
          m.tensors[static_cast<size_t>(gather.inputs[0])].kind != TensorKind::kParameter ||
          !inputs.count(gather.inputs[1])) {
        continue;
      }
      if (m.tensors[static_cast<size_t>(other)].producer < 0) continue;
      const std::vector<bool> behind = DominatedBy(m, other);
      std::vector<int> layers;  // nodes behind the concat that multiply by a weight, in graph order
      for (size_t i = 0; i < behind.size(); ++i) {
        if (behind[i] && (MatMulWeight(m, m.nodes[i]) >= 0 || m.nodes[i].op_type == "Conv")) {
          layers.push_back(static_cast<int>(i));
        }
      }
      for (size_t projector : {2, 1}) {  // a two-layer MLP projector (LLaVA-1.5) or a linear one
        if (static_cast<int>(layers.size()) - static_cast<int>(projector) < kMinTowerLayers) continue;
        // The tower: what computes the projector's input (not the projector's own weight transposes).
        const int first = layers[layers.size() - projector];
        std::vector<bool> tower(behind.size(), false);
        ComputedFrom(m, MatMulActivation(m, m.nodes[static_cast<size_t>(first)]), [&](int t) {
          const int p = m.tensors[static_cast<size_t>(t)].producer;
          if (p >= 0 && behind[static_cast<size_t>(p)]) tower[static_cast<size_t>(p)] = true;
          return false;
        });
        if (ComputedFrom(m, other, [&](int t) { return t == gather.inputs[1]; })) break;  // not another input's
        std::vector<int> own = OwnWeights(m, tower);
        if (own.empty()) continue;
        GradModeGuess g;
        g.sign = GradModeSign::kTowerFrozen;
        const std::string module = CommonModule(m, own);
        g.where = "'" + (module.empty() ? m.nodes[static_cast<size_t>(first)].name : module) + "'";
        g.no_grad = Members(tower);
        g.frozen = std::move(own);
        return {g};
      }
    }
  }
  return {};
}

}  // namespace

std::vector<GradModeGuess> FindGradModeGuesses(const Model& model, const ConcreteShapes& shapes) {
  // oomguard.export always writes "oomguard.inplace": a file with it says what ran how, even where it names nothing.
  if (std::string_view(model.grad_mode_hint) != "none" || model.frozen_parameter_count > 0 || model.has_inplace_hint) {
    return {};
  }
  std::vector<GradModeGuess> out = SolverSteps(model, shapes);
  for (auto* find : {&TargetBranches, &StraightThrough, &LowRankAdapters, &ProjectedTowers}) {
    std::vector<GradModeGuess> more = find(model);
    out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return out;
}

Result<std::shared_ptr<const Model>> ApplyGuess(const Model& model, const GradModeGuess& guess) {
  auto guessed = std::make_shared<Model>(model);
  for (int n : guess.detached) guessed->nodes[static_cast<size_t>(n)].grad_mode = GradMode::kDetached;
  for (int n : guess.no_grad) guessed->nodes[static_cast<size_t>(n)].grad_mode = GradMode::kNoGrad;
  guessed->grad_mode_hint = "option";
  if (guess.frozen.empty()) return std::shared_ptr<const Model>(std::move(guessed));
  std::vector<std::string> names;
  for (int t : guess.frozen) names.push_back(model.tensors[static_cast<size_t>(t)].name);
  return FreezeParameters(*guessed, names);
}

}  // namespace oomguard::plan
