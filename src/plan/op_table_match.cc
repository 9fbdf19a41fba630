#include "op_table_match.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "oomguard/thread_annotations.h"

namespace oomguard::plan {
namespace {

// Rows whose saved set the planner takes from the table, because the hand rules in
// saved_tensor_rules.cc had none or disagreed with torch on the one-op model
// (bench/results/op_table_vs_planner.json at 34f8389, the 43 gaps). Every other row keeps its hand
// rule: it agrees with the table there, and it also models what the table does not record (oneDNN
// scratch of Conv, BatchNorm/LayerNorm statistics that scale with channels or rows, dropout noise,
// views and gradient aliases, saved operands that depend on which inputs require grad), which the
// zoo reference (bench/reference/cpu) and the random-net sample check. Ops the hand rules do not
// know at all take any unambiguous single-node row (MatchSingleNode).
const std::set<std::string>& DrivingRows() {
  static const std::set<std::string> rows = {
      "instance_norm1d", "instance_norm2d", "instance_norm3d", "instance_norm2d_affine",  // stats per (N, C)
      "gelu_tanh", "hardshrink", "softshrink", "log_sigmoid", "glu", "lp_pool2d", "pixel_shuffle",
      "gru_cell", "bce_with_logits", "bce_with_logits_none", "kl_div", "cosine_similarity", "einsum_bij_bjk", "einsum_outer",
      "gather", "pad_constant", "pad_reflect", "pad_replicate", "norm_l1", "logsumexp", "var", "std",
      "var_biased", "var_mean_biased", "var_mean", "weight_norm",
      "cumsum", "maximum", "minimum", "atan", "sign_mul", "lerp", "expand", "mul_scalar", "div_scalar",
  };
  return rows;
}

// Driving rows whose last node reduces the whole tensor in the row's one-op model (reduction='mean'):
// mean() keeps nothing for backward, but a mean over some axes (MeanBackward1 in torch 1.13) keeps
// its input, so a graph whose ReduceMean names axes (F.binary_cross_entropy_with_logits(...,
// reduction='none').mean(dim=1): an auxiliary loss computed in forward) is not this row; the row
// without the reduction (bce_with_logits_none) takes the rest. Probe bce_logits_aux
// (tools/probe_families.py): saved -17 % with the whole-tensor row.
const std::set<std::string>& WholeTensorReductionRows() {
  static const std::set<std::string> rows = {"bce_with_logits"};
  return rows;
}

// A tensor fixed at export: a Constant node's output or a non-float initializer (or a folded scalar).
bool IsConstantLike(const Model& m, int id) {
  if (id < 0) return false;
  const TensorInfo& t = m.tensors[id];
  if (t.kind == TensorKind::kConstant) return true;
  return t.producer >= 0 && m.nodes[t.producer].op_type == "Constant";
}

std::string RefKey(const TableRef& r) {
  switch (r.kind) {
    case TableRef::kInput: return "x" + std::to_string(r.index);
    case TableRef::kNode: return "n" + std::to_string(r.index) + "." + std::to_string(r.output);
    case TableRef::kParameter: return "p";
    case TableRef::kConstant: return "c";
    case TableRef::kOmitted: return "-";
    case TableRef::kAny: return "?";
  }
  return "?";
}

// String attributes that parametrize an op rather than tell ops apart: einsum's equation (every
// einsum keeps both operands).
bool FreeForm(const std::string& attr) { return attr == "equation"; }

std::string WiringKey(const OpTableRow& row) {
  std::string k;
  for (const TablePatternNode& n : row.nodes) {
    k += n.op + "(";
    for (const TableRef& r : n.inputs) k += RefKey(r) + ",";
    for (const auto& [a, v] : n.attrs) {
      if (!FreeForm(a)) k += a + "=" + v + ",";
    }
    k += ")" + std::to_string(n.outputs) + ";";
  }
  for (const TableRef& r : row.outputs) k += RefKey(r) + ",";
  return k;
}

std::string SavedKey(const OpTableRow& row) {
  std::vector<std::string> parts;
  for (const TableSaved& s : row.saved) {
    if (s.role == "parameter") continue;
    std::string p = s.role + (s.graph_input ? "!" : "") + (s.of_output ? "y" : "x") + std::to_string(s.of_index);
    if (s.role == "other") {
      for (const TableSizeFactor& f : s.size) {
        p += f.kind == TableSizeFactor::kBatch  ? "B"
             : f.kind == TableSizeFactor::kDim ? (f.output ? "y" : "x") + std::to_string(f.index) + "." +
                                                      std::to_string(f.dim)
                                                : std::to_string(f.literal);
        p += "*";
      }
      if (s.size.empty()) {
        p += (s.scale_output ? "y" : "x") + std::to_string(s.scale_index) + "r" + std::to_string(s.ratio) + "f" +
             std::to_string(s.fixed_bytes) + "p" + std::to_string(s.bytes_per_sample);
      }
    }
    parts.push_back(p);
  }
  std::sort(parts.begin(), parts.end());
  std::string k;
  for (const std::string& p : parts) k += p + ";";
  return k;
}

// Per table: which rows share their wiring with a row that saves something else.
struct TableIndex {
  std::vector<bool> ambiguous;
  std::vector<int> longest_first;  // driving rows with a pattern, most nodes first
  std::map<std::string, std::vector<int>> single_by_op;  // unambiguous one-node rows by op type
  std::map<std::string, std::vector<int>> driving_single_by_op;
  std::map<std::string, std::vector<int>> inplace_by_op;  // in-place rows by their first node's op type
};

TableIndex BuildIndex(const OpTable& table) {
  TableIndex idx;
  idx.ambiguous.assign(table.rows.size(), false);
  std::vector<std::string> wiring(table.rows.size()), saved(table.rows.size());
  for (size_t i = 0; i < table.rows.size(); ++i) {
    wiring[i] = WiringKey(table.rows[i]);
    saved[i] = SavedKey(table.rows[i]);
  }
  // In-place rows are alternatives applied only where the user says so (MatchInplaceRow): they
  // neither match on their own nor make their out-of-place twin ambiguous.
  for (size_t i = 0; i < table.rows.size(); ++i) {
    if (table.rows[i].inplace) {
      idx.ambiguous[i] = true;
      if (!table.rows[i].nodes.empty()) idx.inplace_by_op[table.rows[i].nodes[0].op].push_back(static_cast<int>(i));
      continue;
    }
    for (size_t j = 0; j < table.rows.size(); ++j) {
      if (table.rows[j].inplace) continue;
      if (i != j && !table.rows[i].nodes.empty() && wiring[i] == wiring[j] && saved[i] != saved[j]) {
        idx.ambiguous[i] = true;
      }
    }
    if (!table.rows[i].nodes.empty() && !idx.ambiguous[i] && TableDrivesRow(table.rows[i])) {
      idx.longest_first.push_back(static_cast<int>(i));
    }
  }
  std::stable_sort(idx.longest_first.begin(), idx.longest_first.end(),
                   [&](int a, int b) { return table.rows[a].nodes.size() > table.rows[b].nodes.size(); });
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const OpTableRow& row = table.rows[i];
    if (row.nodes.size() != 1 || idx.ambiguous[i]) continue;
    idx.single_by_op[row.nodes[0].op].push_back(static_cast<int>(i));
    if (TableDrivesRow(row)) idx.driving_single_by_op[row.nodes[0].op].push_back(static_cast<int>(i));
  }
  return idx;
}

// Built once per table (the embedded one in practice); entries are never removed, so a reference
// stays valid while plans run concurrently.
class IndexCache {
 public:
  const TableIndex& Get(const OpTable& table) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    auto& slot = cache_[&table];
    if (!slot || slot->ambiguous.size() != table.rows.size()) slot = std::make_unique<TableIndex>(BuildIndex(table));
    return *slot;
  }

 private:
  Mutex mu_;
  std::map<const OpTable*, std::unique_ptr<TableIndex>> cache_ GUARDED_BY(mu_);
};

const TableIndex& IndexOf(const OpTable& table) {
  static IndexCache* cache = new IndexCache();  // never destroyed: plans may run at exit
  return cache->Get(table);
}

class RowMatcher {
 public:
  // `taken`: nodes other matches hold (nullptr: none).
  RowMatcher(const Model& m, const ConcreteShapes& s, const OpTableRow& row, const std::vector<bool>* taken)
      : m_(m), s_(s), row_(row), taken_(taken), map_(row.nodes.size(), -1) {
    int inputs = 0;
    for (const TablePatternNode& n : row.nodes) {
      for (const TableRef& r : n.inputs) {
        if (r.kind == TableRef::kInput) inputs = std::max(inputs, r.index + 1);
      }
    }
    bind_.assign(inputs, -1);
  }

  bool MatchAt(int anchor, TableMatch* out) {
    std::fill(map_.begin(), map_.end(), -1);
    std::fill(bind_.begin(), bind_.end(), -1);
    budget_ = 2000;
    if (!TryNode(0, anchor)) return false;
    out->nodes = map_;
    out->inputs = bind_;
    out->outputs.clear();
    for (const TableRef& r : row_.outputs) {
      if (r.kind != TableRef::kNode) return false;
      out->outputs.push_back(NodeOut(r.index, r.output));
    }
    return Closed(*out);
  }

 private:
  int NodeOut(int k, int j) const {
    int g = map_[k];
    if (g < 0) return -1;
    const auto& outs = m_.nodes[g].outputs;
    return j < static_cast<int>(outs.size()) ? outs[j] : -1;
  }

  bool InputFits(const TableRef& r, int id, std::vector<std::pair<int, int>>* bound) {
    switch (r.kind) {
      case TableRef::kInput:
        if (bind_[r.index] >= 0) return bind_[r.index] == id;
        if (id < 0) return false;
        if (r.index < static_cast<int>(row_.input_float.size()) && row_.input_float[r.index] &&
            !IsFloat(s_.tensors[id].dtype)) {
          return false;
        }
        bind_[r.index] = id;
        bound->push_back({r.index, id});
        return true;
      case TableRef::kNode: return id >= 0 && NodeOut(r.index, r.output) == id;
      case TableRef::kParameter: return IsParam(m_, id);
      case TableRef::kConstant: return IsConstantLike(m_, id);
      case TableRef::kOmitted: return id < 0;
      case TableRef::kAny: return true;
    }
    return false;
  }

  bool NodeFits(int k, int g, std::vector<std::pair<int, int>>* bound) {
    const TablePatternNode& p = row_.nodes[k];
    const NodeInfo& n = m_.nodes[g];
    if ((taken_ && (*taken_)[g]) || n.op_type != p.op || n.inputs.size() != p.inputs.size() ||
        static_cast<int>(n.outputs.size()) != p.outputs) {
      return false;
    }
    if (std::find(map_.begin(), map_.end(), g) != map_.end()) return false;
    if (static_cast<size_t>(k) + 1 == row_.nodes.size() && WholeTensorReductionRows().count(row_.name) &&
        (n.ints_attrs.count("axes") || n.inputs.size() > 1)) {
      return false;
    }
    for (const auto& [a, v] : p.attrs) {
      if (FreeForm(a)) continue;
      auto it = n.string_attrs.find(a);
      if (it == n.string_attrs.end() || it->second != v) return false;
    }
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      if (!InputFits(p.inputs[i], n.inputs[i], bound)) return false;
    }
    return true;
  }

  bool TryNode(size_t k, int g) {
    if (--budget_ < 0) return false;
    std::vector<std::pair<int, int>> bound;
    if (!NodeFits(static_cast<int>(k), g, &bound)) {
      for (auto [i, id] : bound) bind_[i] = -1;
      return false;
    }
    map_[k] = g;
    if (k + 1 == row_.nodes.size() || Next(k + 1)) return true;
    map_[k] = -1;
    for (auto [i, id] : bound) bind_[i] = -1;
    return false;
  }

  // Candidates for pattern node k: consumers of a tensor one of its inputs names.
  bool Next(size_t k) {
    const TablePatternNode& p = row_.nodes[k];
    int via = -1;
    for (const TableRef& r : p.inputs) {
      if (r.kind == TableRef::kNode) via = NodeOut(r.index, r.output);
      else if (r.kind == TableRef::kInput && bind_[r.index] >= 0) via = bind_[r.index];
      if (via >= 0) break;
    }
    std::vector<int> cands;
    if (via >= 0) {
      cands = m_.tensors[via].consumers;
    } else {  // a node of constants only (shape arithmetic): any node of its type
      for (size_t g = 0; g < m_.nodes.size(); ++g) {
        if (m_.nodes[g].op_type == p.op) cands.push_back(static_cast<int>(g));
      }
    }
    std::sort(cands.begin(), cands.end());
    cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
    for (int g : cands) {
      if (TryNode(k, g)) return true;
    }
    return false;
  }

  // Intermediates stay inside the match; the fused op runs at its last node, so every outside use
  // of an output comes after it, and every input is there before.
  bool Closed(const TableMatch& mt) const {
    std::set<int> inside(mt.nodes.begin(), mt.nodes.end());
    int last = *std::max_element(mt.nodes.begin(), mt.nodes.end());
    std::set<int> outs(mt.outputs.begin(), mt.outputs.end());
    std::set<int> graph_outputs(m_.outputs.begin(), m_.outputs.end());
    for (int g : mt.nodes) {
      for (int t : m_.nodes[g].outputs) {
        if (t < 0) continue;
        bool is_out = outs.count(t) > 0;
        if (!is_out && graph_outputs.count(t)) return false;
        for (int c : m_.tensors[t].consumers) {
          if (inside.count(c)) continue;
          if (!is_out || c < last) return false;
        }
      }
    }
    for (int id : mt.inputs) {
      if (id >= 0 && m_.tensors[id].producer > last) return false;
    }
    return true;
  }

  const Model& m_;
  const ConcreteShapes& s_;
  const OpTableRow& row_;
  const std::vector<bool>* taken_;
  std::vector<int> map_;
  std::vector<int> bind_;
  int budget_ = 0;
};

// A row's intermediate recorded at the full shape of its float inputs (all of one recorded shape), some
// dims maybe reduced to 1: [B, x0.1] of "f:32" inputs. torch's composites build such intermediates
// elementwise over the inputs broadcast to one shape, so at a higher rank than the recording they have
// every dim of the broadcast shape, not just the recorded leading ones. F.cosine_similarity(mem [B, M, W],
// key [B, 1, W], dim=-1) keeps both x / |x| at [B, M, W] and both norms at [B, M, 1] (torch 1.13's
// autograd graph; probe cosine_memory: the [B, x0.1] reading kept [B, M] and [B, 1], saved -37 %). A dim
// reduced to 1 is sized by the op's output where that output dropped just the reduced dims (cosine's
// [B, M]: the same count wherever dim= pointed); otherwise one reduced in the recording's last position
// stays the last and another keeps its index. Absent (nullopt) when the saved entry is not of this form
// or a shape is unknown; the recorded reading then applies, as it does at the recorded rank.
std::optional<uint64_t> BroadcastFullShapeSize(const TableSaved& s, const OpTableRow& row, const LogicalOp& op,
                                               const RuleContext& ctx) {
  const auto& T = ctx.shapes.tensors;
  if (s.size.size() < 2 || s.size[0].kind != TableSizeFactor::kBatch) return std::nullopt;
  int input = -1;
  for (const TableSizeFactor& f : s.size) {
    if (f.kind == TableSizeFactor::kDim) {
      if (f.output || (input >= 0 && f.index != input)) return std::nullopt;
      input = f.index;
    }
  }
  if (input < 0) {  // only the batch and 1s ([B, 1], cosine's norms): the float inputs must agree on one shape
    for (size_t i = 0; i < row.input_dims.size(); ++i) {
      if (!row.input_float[i]) continue;
      if (input >= 0 && row.input_dims[i] != row.input_dims[input]) return std::nullopt;
      if (input < 0) input = static_cast<int>(i);
    }
  }
  if (input < 0 || input >= static_cast<int>(row.input_dims.size())) return std::nullopt;
  const std::vector<int64_t>& recorded = row.input_dims[input];
  const size_t r = recorded.size() + 1;  // with the batch
  if (s.size.size() != r) return std::nullopt;
  std::vector<bool> reduced(r, false);
  for (size_t p = 1; p < r; ++p) {
    const TableSizeFactor& f = s.size[p];
    if (f.kind == TableSizeFactor::kDim && f.dim == static_cast<int>(p)) continue;
    if (f.kind == TableSizeFactor::kLiteral && f.literal == 1 && recorded[p - 1] != 1) {
      reduced[p] = true;
      continue;
    }
    return std::nullopt;
  }
  // The broadcast shape of the bound float inputs recorded with that shape.
  std::vector<int64_t> shape;
  for (size_t i = 0; i < row.input_dims.size(); ++i) {
    if (!row.input_float[i] || row.input_dims[i] != recorded) continue;
    int id = i < op.table_inputs.size() ? op.table_inputs[i] : -1;
    if (id < 0 || !T[id].known) return std::nullopt;
    const std::vector<int64_t>& d = T[id].dims;
    if (d.size() > shape.size()) shape.insert(shape.begin(), d.size() - shape.size(), 1);
    for (size_t k = 0; k < d.size(); ++k) {
      int64_t& a = shape[shape.size() - d.size() + k];
      a = a == 1 ? d[k] : a;
    }
  }
  const size_t n_reduced = static_cast<size_t>(std::count(reduced.begin(), reduced.end(), true));
  // At a lower rank than the recording, the full shape is the inputs' own (an in-place activation's
  // clone of its input, recorded [B, 8, 10, 10], at [B, 256]); a reduced dim's place is then unknown.
  if (shape.size() < r && (n_reduced > 0 || shape.empty())) return std::nullopt;
  const int out = op.table_outputs.empty() ? -1 : op.table_outputs[0];
  if (n_reduced > 0 && out >= 0 && T[out].known && T[out].dims.size() + n_reduced == shape.size()) {
    shape = T[out].dims;  // the op's output dropped the reduced dims: the same elements, wherever they were
  } else {
    for (size_t p = 1; p < r; ++p) {
      if (reduced[p]) shape[p + 1 == r ? shape.size() - 1 : p] = 1;
    }
  }
  uint64_t n = static_cast<uint64_t>(s.element_bytes);
  for (int64_t d : shape) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  return n;
}

uint64_t SizeOf(const TableSaved& s, const OpTableRow& row, const LogicalOp& op, const RuleContext& ctx) {
  const auto& T = ctx.shapes.tensors;
  auto tensor = [&](bool output, int index) {
    const auto& v = output ? op.table_outputs : op.table_inputs;
    return index >= 0 && index < static_cast<int>(v.size()) ? v[index] : -1;
  };
  const uint64_t batch = ctx.shapes.batch > 0 ? static_cast<uint64_t>(ctx.shapes.batch) : 1;
  if (std::optional<uint64_t> full = BroadcastFullShapeSize(s, row, op, ctx)) return *full;
  if (!s.size.empty()) {
    uint64_t n = static_cast<uint64_t>(s.element_bytes);
    for (const TableSizeFactor& f : s.size) {
      if (f.kind == TableSizeFactor::kBatch) {
        n *= batch;
      } else if (f.kind == TableSizeFactor::kLiteral) {
        n *= static_cast<uint64_t>(std::max<int64_t>(f.literal, 0));
      } else {
        int id = tensor(f.output, f.index);
        if (id < 0 || !T[id].known || f.dim >= static_cast<int>(T[id].dims.size())) {
          return s.fixed_bytes + s.bytes_per_sample * batch;  // as measured
        }
        n *= static_cast<uint64_t>(std::max<int64_t>(T[id].dims[f.dim], 0));
      }
    }
    return n;
  }
  if (s.scale_index >= 0 && s.ratio > 0) {
    int id = tensor(s.scale_output, s.scale_index);
    if (id >= 0 && T[id].known) {
      return s.fixed_bytes + static_cast<uint64_t>(std::llround(s.ratio * static_cast<double>(T[id].Bytes())));
    }
  }
  return s.fixed_bytes + s.bytes_per_sample * batch;
}

}  // namespace

bool TableDrivesRow(const OpTableRow& row) { return DrivingRows().count(row.name) > 0; }

std::vector<TableMatch> MatchTableRows(const Model& model, const ConcreteShapes& shapes, const OpTable& table, std::vector<bool>* taken,
                                       size_t min_nodes) {
  std::vector<TableMatch> matches;
  const TableIndex& idx = IndexOf(table);
  std::set<std::string> present;
  for (const NodeInfo& n : model.nodes) present.insert(n.op_type);
  for (int r : idx.longest_first) {
    const OpTableRow& row = table.rows[r];
    if (row.nodes.size() < min_nodes || !present.count(row.nodes[0].op)) continue;
    RowMatcher matcher(model, shapes, row, taken);
    for (size_t g = 0; g < model.nodes.size(); ++g) {
      if ((*taken)[g] || model.nodes[g].op_type != row.nodes[0].op) continue;
      TableMatch mt;
      if (!matcher.MatchAt(static_cast<int>(g), &mt)) continue;
      mt.row = r;
      for (int n : mt.nodes) (*taken)[n] = true;
      matches.push_back(std::move(mt));
    }
  }
  return matches;
}

namespace {
bool MatchOneOf(const Model& model, const ConcreteShapes& shapes, const OpTable& table,
                const std::map<std::string, std::vector<int>>& by_op, int node, TableMatch* match) {
  auto it = by_op.find(model.nodes[node].op_type);
  if (it == by_op.end()) return false;
  for (int r : it->second) {
    RowMatcher matcher(model, shapes, table.rows[r], nullptr);
    if (matcher.MatchAt(node, match)) {
      match->row = r;
      return true;
    }
  }
  return false;
}
}  // namespace

bool MatchDrivingNode(const Model& model, const ConcreteShapes& shapes, const OpTable& table, int node,
                      TableMatch* match) {
  return MatchOneOf(model, shapes, table, IndexOf(table).driving_single_by_op, node, match);
}

bool MatchSingleNode(const Model& model, const ConcreteShapes& shapes, const OpTable& table, int node,
                     TableMatch* match) {
  return MatchOneOf(model, shapes, table, IndexOf(table).single_by_op, node, match);
}

LogicalOp TableOp(const Model& model, const OpTable& table, const TableMatch& match) {
  LogicalOp op;
  const OpTableRow& row = table.rows[match.row];
  op.nodes = match.nodes;
  std::sort(op.nodes.begin(), op.nodes.end());
  if (match.nodes.size() == 1) {
    // One node: its own inputs and outputs, so that a hand rule's scratch and views still apply.
    const NodeInfo& n = model.nodes[match.nodes[0]];
    op.kind = n.op_type;
    op.inputs = n.inputs;
    op.outputs = n.outputs;
  } else {
    // The bound inputs first, then every other tensor from outside the match (weights, constants).
    op.kind = row.name;
    std::set<int> inside(match.nodes.begin(), match.nodes.end());
    for (int id : match.inputs) {
      if (id >= 0 && std::find(op.inputs.begin(), op.inputs.end(), id) == op.inputs.end()) op.inputs.push_back(id);
    }
    for (int g : op.nodes) {
      for (int id : model.nodes[g].inputs) {
        if (id < 0 || (model.tensors[id].producer >= 0 && inside.count(model.tensors[id].producer))) continue;
        if (std::find(op.inputs.begin(), op.inputs.end(), id) == op.inputs.end()) op.inputs.push_back(id);
      }
    }
    op.outputs = match.outputs;
  }
  op.table_row = match.row;
  op.table_inputs = match.inputs;
  op.table_outputs = match.outputs;
  return op;
}

OpRule TableRule(const OpTable& table, const LogicalOp& op, const RuleContext& ctx, OpRule base) {
  OpRule r = std::move(base);
  r.known = true;
  r.saved_tensors.clear();
  r.saved_extra.clear();
  r.output_view_of.resize(op.outputs.size(), -1);
  r.grad_alias_output.resize(op.inputs.size(), -1);
  if (op.table_row < 0 || op.table_row >= static_cast<int>(table.rows.size())) return r;
  const OpTableRow& row = table.rows[op.table_row];
  const Model& m = ctx.model;
  auto bound = [&](bool output, int index) {
    const auto& v = output ? op.table_outputs : op.table_inputs;
    return index >= 0 && index < static_cast<int>(v.size()) ? v[index] : -1;
  };
  for (const TableSaved& s : row.saved) {
    if (s.role == "parameter") continue;
    if (s.role == "other") {
      uint64_t bytes = SizeOf(s, row, op, ctx);
      if (bytes) r.saved_extra.push_back({bytes, "saved by " + row.name});
      continue;
    }
    int id = bound(s.of_output, s.of_index);
    if (id < 0) {  // the row does not say which tensor: keep its bytes as measured
      uint64_t b = ctx.shapes.batch > 0 ? static_cast<uint64_t>(ctx.shapes.batch) : 1;
      r.saved_extra.push_back({s.fixed_bytes + s.bytes_per_sample * b, "saved by " + row.name});
      continue;
    }
    if (IsParam(m, id) || IsConstantLike(m, id)) continue;
    if (std::find(r.saved_tensors.begin(), r.saved_tensors.end(), id) == r.saved_tensors.end()) {
      r.saved_tensors.push_back(id);
    }
    // An output on its input's storage (in place, or a view): one storage, not two.
    if (s.role == "input_output" && op.outputs.size() == 1 && !s.of_output && op.nodes.size() > 1) {
      r.output_view_of[0] = id;
    }
  }
  return r;
}

bool MatchInplaceRow(const Model& model, const ConcreteShapes& shapes, const OpTable& table, const LogicalOp& op,
                     TableMatch* match) {
  if (op.nodes.empty() || op.outputs.size() != 1) return false;
  std::vector<int> want = op.nodes;
  std::sort(want.begin(), want.end());
  const TableIndex& idx = IndexOf(table);
  auto rows = idx.inplace_by_op.find(model.nodes[want.front()].op_type);
  if (rows == idx.inplace_by_op.end()) return false;
  for (int i : rows->second) {
    const OpTableRow& row = table.rows[i];
    if (row.nodes.size() != want.size()) continue;
    TableMatch m;
    if (!RowMatcher(model, shapes, row, nullptr).MatchAt(want.front(), &m)) continue;
    std::vector<int> got = m.nodes;
    std::sort(got.begin(), got.end());
    if (got != want || m.outputs.size() != 1 || m.outputs[0] != op.outputs[0] || m.inputs.empty()) continue;
    m.row = i;
    *match = std::move(m);
    return true;
  }
  return false;
}

OpRule InplaceRule(const OpTable& table, const LogicalOp& op, const TableMatch& match, const RuleContext& ctx,
                   OpRule base) {
  LogicalOp bound = op;
  bound.table_row = match.row;
  bound.table_inputs = match.inputs;
  bound.table_outputs = match.outputs;
  OpRule r = TableRule(table, bound, ctx, std::move(base));
  // The result is written over the input: one storage, whatever autograd keeps of it.
  r.output_view_of.assign(op.outputs.size(), -1);
  r.output_view_of[0] = match.inputs[0];
  return r;
}

}  // namespace oomguard::plan
