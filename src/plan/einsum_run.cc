#include "einsum_run.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <utility>

namespace oomguard::plan {

namespace {

constexpr int kLetters = 26;
constexpr int kLabels = 2 * kLetters;
constexpr int kEllipsis = kLabels;

int Subscript(char c) { return std::isupper(static_cast<unsigned char>(c)) ? c - 'A' : c - 'a' + kLetters; }

std::vector<int64_t> Dense(const std::vector<int64_t>& dims) {
  std::vector<int64_t> st(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) st[i - 1] = st[i] * std::max<int64_t>(dims[i], 1);
  return st;
}

uint64_t Elements(const std::vector<int64_t>& dims) {
  uint64_t e = 1;
  for (int64_t d : dims) e *= static_cast<uint64_t>(d);
  return e;
}

// A tensor in the aligned label order: its sizes, its strides (nullopt: not known) and the storage it views.
struct Value {
  std::vector<int64_t> dims;
  std::optional<std::vector<int64_t>> strides;
  int storage = -1;
  bool requires_grad = false;
};

// The storages einsum sees: the operands' first, then those it makes, with the live bytes they add.
class Storages {
 public:
  explicit Storages(size_t operands) : operands_(operands), all_(operands) {}

  int Make(uint64_t elements, std::string what, int operand) {
    all_.push_back({elements, std::move(what), operand, 1, false});
    live_ += elements;
    peak_ = std::max(peak_, live_);
    return static_cast<int>(all_.size() - 1);
  }
  // A value that viewed `id` is gone; a made storage nothing views and autograd does not keep is freed.
  void Release(int id) {
    Entry& e = all_[static_cast<size_t>(id)];
    if (static_cast<size_t>(id) < operands_ || --e.refs > 0 || e.saved) return;
    live_ -= e.elements;
  }
  void Save(int id) { all_[static_cast<size_t>(id)].saved = true; }
  bool Saved(int id) const { return all_[static_cast<size_t>(id)].saved; }
  size_t size() const { return all_.size(); }
  EinsumBuffer Buffer(int id) const {
    const Entry& e = all_[static_cast<size_t>(id)];
    return {e.elements, e.what, e.operand};
  }
  uint64_t peak() const { return peak_; }

 private:
  struct Entry {
    uint64_t elements = 0;
    std::string what;
    int operand = -1;
    int refs = 0;
    bool saved = false;
  };
  size_t operands_;
  std::vector<Entry> all_;
  uint64_t live_ = 0, peak_ = 0;
};

// reshape() of `v` permuted by `order` into one dim per group (consecutive runs of `order` of the given
// lengths): a view where each group's dims of size above 1 step over each other in memory (computeStride).
bool ReshapeIsView(const Value& v, const std::vector<int64_t>& order, const std::vector<size_t>& groups) {
  size_t at = 0;
  for (size_t g : groups) {
    int64_t prev = -1;
    for (size_t k = at; k < at + g; ++k) {
      const int64_t d = order[k];
      if (v.dims[static_cast<size_t>(d)] == 1) continue;
      if (prev >= 0) {
        if (!v.strides) return false;
        const auto& st = *v.strides;
        if (st[static_cast<size_t>(prev)] != st[static_cast<size_t>(d)] * v.dims[static_cast<size_t>(d)]) return false;
      }
      prev = d;
    }
    at += g;
  }
  return true;
}

// The strides TensorIterator gives a new output beside `inputs` (reorder_dimensions: dims sorted by the
// inputs' strides, fastest first, broadcast dims deferring to the next input, ties to the smaller size).
std::vector<int64_t> IteratorOutputStrides(const std::vector<int64_t>& shape, const std::vector<const Value*>& inputs) {
  const size_t n = shape.size();
  std::vector<size_t> perm(n);
  for (size_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  auto stride = [&](const Value* v, size_t d) -> int64_t {
    if (v->dims[d] == 1 && shape[d] != 1) return 0;
    return v->strides ? (*v->strides)[d] : Dense(v->dims)[d];
  };
  auto should_swap = [&](size_t d0, size_t d1) {
    for (const Value* v : inputs) {
      const int64_t s0 = stride(v, d0), s1 = stride(v, d1);
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  for (size_t i = 1; i < n; ++i) {
    size_t d1 = i;
    for (size_t d0 = i; d0-- > 0;) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  std::vector<int64_t> st(n, 0);
  int64_t next = 1;
  for (size_t k = 0; k < n; ++k) {
    st[perm[k]] = next;
    next *= std::max<int64_t>(shape[perm[k]], 1);
  }
  return st;
}

class Contraction {
 public:
  explicit Contraction(size_t operands) : storages_(operands), operands_(operands) {}

  // sum(dims, keepdim=True): a new contiguous tensor.
  Value Sum(const Value& v, const std::vector<int64_t>& dims, int operand) {
    Value out = v;
    for (int64_t d : dims) out.dims[static_cast<size_t>(d)] = 1;
    out.strides = Dense(out.dims);
    out.storage = storages_.Make(Elements(out.dims), "sum", operand);
    storages_.Release(v.storage);
    return out;
  }

  // sumproduct_pair(left, right, sum_dims, keepdim=True).
  Value Pair(const Value& left, const Value& right, const std::vector<int64_t>& sum_dims) {
    const size_t dim = left.dims.size();
    Value out;
    out.requires_grad = left.requires_grad || right.requires_grad;
    if (sum_dims.empty()) {  // mul: keeps each side where the other needs a gradient, as given
      out.dims.resize(dim);
      for (size_t i = 0; i < dim; ++i) out.dims[i] = std::max(left.dims[i], right.dims[i]);
      out.strides = IteratorOutputStrides(out.dims, {&left, &right});
      out.storage = storages_.Make(Elements(out.dims), "product", -1);
      Keep(left, right);
      storages_.Release(left.storage);
      storages_.Release(right.storage);
      return out;
    }
    std::vector<bool> summed(dim, false);
    for (int64_t d : sum_dims) summed[static_cast<size_t>(d)] = true;
    std::vector<int64_t> lro, lo, ro;
    for (size_t i = 0; i < dim; ++i) {
      const bool sl = left.dims[i] != 1, sr = right.dims[i] != 1;
      if (summed[i]) continue;  // einsum passes only labels both sides hold
      if (sl && sr) lro.push_back(static_cast<int64_t>(i));
      else if (sl) lo.push_back(static_cast<int64_t>(i));
      else ro.push_back(static_cast<int64_t>(i));
    }
    auto cat = [](std::initializer_list<const std::vector<int64_t>*> parts) {
      std::vector<int64_t> v;
      for (const auto* p : parts) v.insert(v.end(), p->begin(), p->end());
      return v;
    };
    const std::vector<int64_t> lperm = cat({&lro, &lo, &sum_dims, &ro});
    const std::vector<int64_t> rperm = cat({&lro, &sum_dims, &ro, &lo});
    // The pair as given stays referenced (einsum's locals) until bmm has run.
    const Value left3 = To3d(left, lperm, {lro.size(), lo.size(), sum_dims.size()});
    const Value right3 = To3d(right, rperm, {lro.size(), sum_dims.size(), ro.size()});
    Keep(left3, right3);
    // bmm's output viewed as [lro, lo, 1 per summed dim, ro] and permuted back to the aligned order.
    out.dims.assign(dim, 1);
    for (int64_t d : lro) out.dims[static_cast<size_t>(d)] = left.dims[static_cast<size_t>(d)];
    for (int64_t d : lo) out.dims[static_cast<size_t>(d)] = left.dims[static_cast<size_t>(d)];
    for (int64_t d : ro) out.dims[static_cast<size_t>(d)] = right.dims[static_cast<size_t>(d)];
    const std::vector<int64_t> oorder = cat({&lro, &lo, &sum_dims, &ro});
    std::vector<int64_t> osizes;
    for (int64_t d : oorder) osizes.push_back(out.dims[static_cast<size_t>(d)]);
    const std::vector<int64_t> ostrides = Dense(osizes);
    std::vector<int64_t> st(dim, 0);
    for (size_t k = 0; k < oorder.size(); ++k) st[static_cast<size_t>(oorder[k])] = ostrides[k];
    out.strides = st;
    out.storage = storages_.Make(Elements(out.dims), "product", -1);
    for (const auto& [given, three] : {std::pair(&left, &left3), std::pair(&right, &right3)}) {
      storages_.Release(given->storage);
      if (three->storage != given->storage) storages_.Release(three->storage);
    }
    return out;
  }

  Storages& storages() { return storages_; }

 private:
  // permute(order).reshape(3 groups): a view of what `v` views, or a contiguous copy.
  Value To3d(const Value& v, const std::vector<int64_t>& order, const std::vector<size_t>& groups) {
    if (ReshapeIsView(v, order, groups)) return v;
    Value out = v;
    std::vector<int64_t> permuted;
    for (int64_t d : order) permuted.push_back(v.dims[static_cast<size_t>(d)]);
    const std::vector<int64_t> dense = Dense(permuted);
    std::vector<int64_t> st(v.dims.size(), 0);
    for (size_t k = 0; k < order.size(); ++k) st[static_cast<size_t>(order[k])] = dense[k];
    out.strides = st;
    const bool operand = v.storage < static_cast<int>(operands_);
    out.storage = storages_.Make(Elements(v.dims), operand ? "operand copy" : "product copy", operand ? v.storage : -1);
    return out;
  }
  void Keep(const Value& left, const Value& right) {
    if (right.requires_grad) storages_.Save(left.storage);
    if (left.requires_grad) storages_.Save(right.storage);
  }

  Storages storages_;
  size_t operands_;
};

}  // namespace

EinsumRun RunEinsum(const std::string& equation, const std::vector<EinsumOperand>& operands) {
  EinsumRun run;
  const size_t num_ops = operands.size();
  if (num_ops < 2) return run;
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  // Each operand's labels (kEllipsis for "...").
  std::vector<std::vector<int>> op_labels(1);
  for (size_t i = 0; i < lhs.size(); ++i) {
    const char c = lhs[i];
    if (c == ',') {
      op_labels.emplace_back();
    } else if (c == '.') {
      if (lhs.compare(i, 3, "...") != 0) return run;
      op_labels.back().push_back(kEllipsis);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      op_labels.back().push_back(Subscript(c));
    } else {
      return run;
    }
  }
  if (op_labels.size() != num_ops) return run;
  std::vector<int> label_count(kLabels, 0);
  int64_t ell_num_dim = 0;
  for (size_t i = 0; i < num_ops; ++i) {
    const auto ndims = static_cast<int64_t>(operands[i].dims.size());
    auto nlabels = static_cast<int64_t>(op_labels[i].size());
    bool ellipsis = false;
    std::vector<bool> seen(kLabels, false);
    for (int l : op_labels[i]) {
      if (l == kEllipsis) {
        --nlabels;
        ellipsis = true;
      } else {
        if (seen[static_cast<size_t>(l)]) return run;  // a repeated label takes a diagonal: not modelled
        seen[static_cast<size_t>(l)] = true;
        ++label_count[static_cast<size_t>(l)];
      }
    }
    if (ellipsis ? nlabels > ndims : nlabels != ndims) return run;
    if (ellipsis) ell_num_dim = std::max(ell_num_dim, ndims - nlabels);
  }
  // The aligned order: output labels, the ellipsis where it is not in the output, then summed labels.
  std::vector<int64_t> perm_of(kLabels, -1);
  int64_t perm_index = 0, ell_index = 0;
  bool ell_in_output = false;
  if (arrow == std::string::npos) {
    perm_index = ell_num_dim;
    ell_in_output = true;
    for (int l = 0; l < kLabels; ++l) {
      if (label_count[static_cast<size_t>(l)] == 1) perm_of[static_cast<size_t>(l)] = perm_index++;
    }
  } else {
    const std::string rhs = equation.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      if (rhs[i] == '.') {
        if (rhs.compare(i, 3, "...") != 0 || ell_in_output) return run;
        ell_index = perm_index;
        perm_index += ell_num_dim;
        ell_in_output = true;
        i += 2;
        continue;
      }
      if (!std::isalpha(static_cast<unsigned char>(rhs[i]))) return run;
      const auto l = static_cast<size_t>(Subscript(rhs[i]));
      if (label_count[l] == 0 || perm_of[l] != -1) return run;
      perm_of[l] = perm_index++;
    }
  }
  const int64_t out_num_dim = perm_index;
  if (!ell_in_output) {
    ell_index = perm_index;
    perm_index += ell_num_dim;
  }
  for (size_t l = 0; l < kLabels; ++l) {
    if (label_count[l] > 0 && perm_of[l] == -1) perm_of[l] = perm_index++;
  }
  // Each operand unsqueezed and permuted to the aligned order (a view); dims of size above 1 counted.
  Contraction c(num_ops);
  std::vector<uint64_t> dim_counts(static_cast<size_t>(perm_index), 0);
  std::deque<Value> ops;
  std::vector<int64_t> label_size(kLabels, 1);
  for (size_t i = 0; i < num_ops; ++i) {
    const EinsumOperand& op = operands[i];
    const std::vector<int64_t> strides = op.strides.value_or(Dense(op.dims));
    Value v;
    v.dims.assign(static_cast<size_t>(perm_index), 1);
    std::vector<int64_t> st(static_cast<size_t>(perm_index), 0);
    v.storage = static_cast<int>(i);
    v.requires_grad = op.requires_grad;
    size_t dim = 0;
    auto place = [&](int64_t target) {
      const auto t = static_cast<size_t>(target);
      v.dims[t] = op.dims[dim];
      st[t] = strides[dim];
      if (op.dims[dim] != 1) ++dim_counts[t];
      ++dim;
    };
    for (int l : op_labels[i]) {
      if (l == kEllipsis) {
        const auto ndim = static_cast<int64_t>(op.dims.size()) - static_cast<int64_t>(op_labels[i].size() - 1);
        for (int64_t j = ell_num_dim - ndim; j < ell_num_dim; ++j) place(ell_index + j);
      } else {
        const auto s = static_cast<size_t>(l);
        if (op.dims[dim] != 1 && label_size[s] != 1 && label_size[s] != op.dims[dim]) return run;
        if (op.dims[dim] != 1) label_size[s] = op.dims[dim];
        place(perm_of[s]);
      }
    }
    if (op.strides) v.strides = st;
    ops.push_back(v);
  }
  while (ops.size() > 1) {
    Value a = ops[0], b = ops[1];
    ops.erase(ops.begin(), ops.begin() + 2);
    std::vector<int64_t> sum_dims, a_sum, b_sum;
    for (int64_t d = out_num_dim; d < perm_index; ++d) {
      const auto k = static_cast<size_t>(d);
      if (a.dims[k] != 1 && b.dims[k] != 1) {
        if (--dim_counts[k] == 1) {
          sum_dims.push_back(d);
          dim_counts[k] = 0;
        }
      } else if (dim_counts[k] == 1) {
        if (a.dims[k] != 1) {
          a_sum.push_back(d);
          dim_counts[k] = 0;
        } else if (b.dims[k] != 1) {
          b_sum.push_back(d);
          dim_counts[k] = 0;
        }
      }
    }
    auto source = [&](const Value& v) { return v.storage < static_cast<int>(num_ops) ? v.storage : -1; };
    if (!a_sum.empty()) a = c.Sum(a, a_sum, source(a));
    if (!b_sum.empty()) b = c.Sum(b, b_sum, source(b));
    ops.push_front(c.Pair(a, b, sum_dims));
  }
  const Value& result = ops[0];
  Storages& storages = c.storages();
  run.known = true;
  run.operand_saved.assign(num_ops, false);
  uint64_t kept = 0;
  for (size_t id = 0; id < storages.size(); ++id) {
    if (!storages.Saved(static_cast<int>(id))) continue;
    if (id < num_ops) {
      run.operand_saved[id] = true;
    } else if (static_cast<int>(id) != result.storage) {
      run.saved.push_back(storages.Buffer(static_cast<int>(id)));
      kept += run.saved.back().elements;
    }
  }
  run.result_elements = Elements(result.dims);
  run.forward_temp_elements = storages.peak() > kept + run.result_elements ? storages.peak() - kept - run.result_elements : 0;
  std::vector<int64_t> out_dims(result.dims.begin(), result.dims.begin() + out_num_dim);
  std::vector<int64_t> out_strides(result.strides->begin(), result.strides->begin() + out_num_dim);
  int64_t expected = 1;
  for (size_t i = out_dims.size(); i-- > 0;) {
    if (out_dims[i] == 1) continue;
    if (out_strides[i] != expected) run.result_contiguous = false;
    expected *= out_dims[i];
  }
  return run;
}

}  // namespace oomguard::plan
