#include "oomguard/fit/split.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>

#include "oomguard/fit/advice.h"
#include "oomguard/units.h"

namespace oomguard::fit {

Result<Strategy> ParseStrategy(std::string_view name) {
  if (name == "dp") return Strategy::kDp;
  if (name == "ddp") return Strategy::kDdp;
  if (name == "zero1") return Strategy::kZero1;
  if (name == "zero2") return Strategy::kZero2;
  if (name == "zero3") return Strategy::kZero3;
  return MakeError("unknown strategy '" + std::string(name) +
                   "' (expected dp, ddp, zero1, zero2 or zero3)");
}

std::string_view Name(Strategy s) {
  switch (s) {
    case Strategy::kDp: return "dp";
    case Strategy::kDdp: return "ddp";
    case Strategy::kZero1: return "zero1";
    case Strategy::kZero2: return "zero2";
    case Strategy::kZero3: return "zero3";
  }
  return "?";
}

namespace {

// Bytes per element of the model's output as the loss sees it.
uint64_t OutputElementBytes(plan::Precision p) {
  return p == plan::Precision::kFp32 ? 4 : 2;
}

// The per-GPU memory model of one strategy.
class RankModel {
 public:
  RankModel(const PlanFunction& plan, const SplitRequest& request, const plan::StepPlan& at_one)
      : plan_(plan), request_(request), gpus_(static_cast<int>(request.budget_bytes.size())) {
    input_bytes_per_sample_ = at_one.bytes.inputs;
    if (!at_one.layers.empty()) {
      const std::vector<int64_t>& shape = at_one.layers.back().output_shape;
      uint64_t elems = 1;
      for (size_t i = 1; i < shape.size(); ++i) elems *= static_cast<uint64_t>(std::max<int64_t>(1, shape[i]));
      output_bytes_per_sample_ = elems * OutputElementBytes(request.base.precision);
    }
    for (const plan::LayerMemory& l : at_one.layers) {
      largest_layer_parameter_bytes_ = std::max(largest_layer_parameter_bytes_, l.parameter_bytes);
    }
  }

  // dp GPU 0 depends on the global batch; the other ranks do not.
  bool IsCentral(int rank) const { return request_.strategy == Strategy::kDp && rank == 0; }

  plan::PlanOptions Options(int rank, int64_t batch) const {
    plan::PlanOptions o = request_.base;
    o.batch = batch;
    switch (request_.strategy) {
      case Strategy::kDp:
        if (rank != 0) {  // a replica: parameter copy, gradients until reduce-add, activations
          o.optimizer = plan::Optimizer::kSgd;
          o.loss = plan::Loss::kNone;
        }
        break;
      case Strategy::kDdp: break;
      case Strategy::kZero3: o.parameter_shards = gpus_; [[fallthrough]];
      case Strategy::kZero2: o.gradient_shards = gpus_; [[fallthrough]];
      case Strategy::kZero1: o.optimizer_state_shards = gpus_; break;
    }
    return o;
  }

  uint64_t Extra(int rank, int64_t batch, int64_t global_batch) const {
    switch (request_.strategy) {
      case Strategy::kDp: {
        if (rank != 0) return 0;
        const uint64_t others = static_cast<uint64_t>(std::max<int64_t>(0, global_batch - batch));
        return static_cast<uint64_t>(gpus_) * kDataParallelReduceBufferBytes +
               others * (input_bytes_per_sample_ + 3 * output_bytes_per_sample_);
      }
      case Strategy::kDdp:
      case Strategy::kZero1:
      case Strategy::kZero2: return 2 * request_.bucket_bytes;
      case Strategy::kZero3: return 2 * request_.bucket_bytes + largest_layer_parameter_bytes_;
    }
    return 0;
  }

  // A planner for one rank, strategy extras included in required_bytes.
  PlanFunction ForRank(int rank, int64_t global_batch) const {
    PlanFunction::Plan plan = [this, rank, global_batch](const plan::PlanOptions& o) -> Result<plan::StepPlan> {
      const int64_t b = o.batch.value_or(1);
      Result<plan::StepPlan> p = plan_(Options(rank, b));
      if (!p) return p;
      p->required_bytes += Extra(rank, b, global_batch);
      return p;
    };
    if (!plan_.answers_required_alone()) return plan;
    return PlanFunction(
        std::move(plan),
        [this, rank, global_batch](const plan::PlanOptions& o, int64_t reach) -> Result<uint64_t> {
          const int64_t b = o.batch.value_or(1);
          Result<uint64_t> r = plan_.RequiredBytes(Options(rank, b), reach);
          if (!r) return r;
          return *r + Extra(rank, b, global_batch);
        });
  }

  // The largest local batch rank `rank` holds within its budget.
  Result<int64_t> MaxBatch(int rank, int64_t global_batch) {
    const uint64_t budget = request_.budget_bytes[rank];
    // Ranks other than the central one differ only by their budget.
    const bool central = IsCentral(rank);
    auto key = std::make_tuple(central, budget, central ? global_batch : 0);
    auto it = max_cache_.find(key);
    if (it != max_cache_.end()) return it->second;
    FitOptions fo;
    fo.budget_bytes = budget;
    fo.answer_only = true;  // the shares are planned at the batches the split chooses
    if (central) fo.max_batch_limit = std::max<int64_t>(1, global_batch);
    if (!central && static_cast<size_t>(rank) < request_.likely_max_batch.size()) {
      fo.likely_fits = request_.likely_max_batch[static_cast<size_t>(rank)];
    }
    Result<FitResult> r = FindMaxBatch(ForRank(rank, global_batch), request_.base, fo);
    if (!r) return MakeError(r.error());
    max_cache_[key] = r->max_batch;
    return r->max_batch;
  }

  // The rank's plan and peak at a local batch.
  Result<GpuShare> Share(int rank, int64_t batch, int64_t global_batch) const {
    Result<plan::StepPlan> p = plan_(Options(rank, batch));
    if (!p) return MakeError(p.error());
    GpuShare s;
    s.index = rank;
    s.batch = batch;
    s.budget_bytes = request_.budget_bytes[rank];
    s.extra_bytes = Extra(rank, batch, global_batch);
    s.peak_bytes = p->required_bytes + s.extra_bytes;
    s.plan = std::move(p).value();
    return s;
  }

 private:
  const PlanFunction& plan_;
  const SplitRequest& request_;
  int gpus_;
  uint64_t input_bytes_per_sample_ = 0;
  uint64_t output_bytes_per_sample_ = 0;
  uint64_t largest_layer_parameter_bytes_ = 0;
  std::map<std::tuple<bool, uint64_t, int64_t>, int64_t> max_cache_;
};

// Spreads `total` over GPUs holding at most max[i] each, as evenly as the
// limits allow (the largest local batch is as small as possible); the last
// samples go to the GPUs with the most room left. REQUIRES: sum(max) >= total.
std::vector<int64_t> WaterFill(const std::vector<int64_t>& max, int64_t total) {
  const size_t n = max.size();
  int64_t low = 0, high = *std::max_element(max.begin(), max.end());
  auto held = [&](int64_t level) {
    int64_t s = 0;
    for (int64_t m : max) s += std::min(m, level);
    return s;
  };
  while (low < high) {  // smallest level holding everything
    const int64_t mid = low + (high - low) / 2;
    if (held(mid) >= total) high = mid; else low = mid + 1;
  }
  std::vector<int64_t> out(n);
  int64_t placed = 0;
  for (size_t i = 0; i < n; ++i) placed += out[i] = std::min(max[i], low - 1 < 0 ? 0 : low - 1);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return max[a] - out[a] > max[b] - out[b]; });
  for (size_t i : order) {
    if (placed == total) break;
    if (out[i] < max[i]) { ++out[i]; ++placed; }
  }
  return out;
}

std::string CountsByGpu(const std::vector<int64_t>& counts) {
  std::string s;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (i) s += ", ";
    s += "GPU " + std::to_string(i) + ": " + std::to_string(counts[i]);
  }
  return s;
}

std::vector<std::string> Notes(Strategy s, bool uneven) {
  std::vector<std::string> notes;
  switch (s) {
    case Strategy::kDp:
      notes.push_back(
          "nn.DataParallel splits a batch evenly; for this split scatter with these chunk sizes "
          "(e.g. a DataParallel subclass whose scatter uses the per-GPU batches). The loss on the "
          "gathered outputs already averages over the global batch.");
      break;
    case Strategy::kDdp:
    case Strategy::kZero1:
    case Strategy::kZero2:
    case Strategy::kZero3:
      notes.push_back(
          "each rank computes the mean loss over its local batch; DDP averages gradients over "
          "ranks, so multiply the loss by world_size x loss_weight.");
      if (uneven) {
        notes.push_back(
            "uneven local batches: if ranks can run different numbers of steps, wrap the loop in "
            "`with model.join():` (torch.distributed.algorithms.Join) so no rank hangs.");
      }
      break;
  }
  return notes;
}

// The largest per-GPU peak of an even split (0 without one).
uint64_t WorstEvenPeak(const SplitResult& r) {
  uint64_t w = 0;
  if (r.even) {
    for (uint64_t p : r.even->peak_bytes) w = std::max(w, p);
  }
  return w;
}

// Each GPU's largest local batch in a split (empty where none was possible).
std::vector<int64_t> LocalMaxima(const SplitResult& split) {
  std::vector<int64_t> out;
  for (const GpuShare& g : split.per_gpu) out.push_back(g.max_batch);
  return out;
}

}  // namespace

Result<SplitResult> PlanSplit(const PlanFunction& plan, const SplitRequest& request) {
  const int gpus = static_cast<int>(request.budget_bytes.size());
  if (gpus == 0) return MakeError("no GPUs given");
  for (int i = 0; i < gpus; ++i) {
    if (request.budget_bytes[i] == 0) {
      return MakeError("GPU " + std::to_string(i) + " has no memory left to use");
    }
  }
  if (request.global_batch && *request.global_batch < gpus) {
    return MakeError("global batch " + std::to_string(*request.global_batch) +
                     " is smaller than the number of GPUs (" + std::to_string(gpus) + ")");
  }
  plan::PlanOptions one = request.base;
  one.batch = 1;
  Result<plan::StepPlan> at_one = plan(one);
  if (!at_one) return MakeError(at_one.error());
  RankModel model(plan, request, *at_one);

  SplitResult result;
  result.strategy = request.strategy;
  result.gpus = gpus;

  // The most each GPU holds when the global batch is `n`.
  auto maxima = [&](int64_t n) -> Result<std::vector<int64_t>> {
    std::vector<int64_t> m(gpus);
    for (int i = 0; i < gpus; ++i) {
      Result<int64_t> r = model.MaxBatch(i, n);
      if (!r) return MakeError(r.error());
      m[i] = *r;
    }
    return m;
  };
  auto holds = [](const std::vector<int64_t>& m, int64_t n) {
    int64_t sum = 0;
    for (int64_t v : m) {
      if (v < 1) return false;
      sum += v;
    }
    return sum >= n;
  };

  // The largest global batch.
  Result<std::vector<int64_t>> at_min = maxima(gpus);
  if (!at_min) return MakeError(at_min.error());
  if (holds(*at_min, gpus)) {
    int64_t lo = gpus;
    int64_t hi = std::accumulate(at_min->begin(), at_min->end(), int64_t{0});
    if (request.strategy == Strategy::kDp) {
      while (lo < hi) {  // GPU 0 holds less as the global batch grows
        const int64_t mid = lo + (hi - lo + 1) / 2;
        Result<std::vector<int64_t>> m = maxima(mid);
        if (!m) return MakeError(m.error());
        if (holds(*m, mid)) lo = mid; else hi = mid - 1;
      }
    } else {
      lo = hi;
    }
    result.max_global_batch = lo;
  }

  const int64_t n = request.global_batch.value_or(result.max_global_batch);
  result.global_batch = n;
  if (request.global_batch) {
    EvenShare even;
    even.batch = (n + gpus - 1) / gpus;
    for (int i = 0; i < gpus; ++i) {
      Result<GpuShare> s = model.Share(i, even.batch, n);
      if (!s) return MakeError(s.error());
      even.peak_bytes.push_back(s->peak_bytes);
      even.fits.push_back(s->peak_bytes <= request.budget_bytes[i]);
    }
    result.even = std::move(even);
  }

  Result<std::vector<int64_t>> m = maxima(std::max<int64_t>(n, gpus));
  if (!m) return MakeError(m.error());
  for (int i = 0; i < gpus; ++i) {
    if ((*m)[i] >= 1) continue;
    Result<GpuShare> s = model.Share(i, 1, std::max<int64_t>(n, gpus));
    if (!s) return MakeError(s.error());
    result.reason = "GPU " + std::to_string(i) + " cannot hold a batch of 1: it needs " +
                    FormatBytes(s->peak_bytes) + " of its " + FormatBytes(request.budget_bytes[i]) +
                    (model.IsCentral(i) ? " as the central GPU of dp (global batch " +
                                              std::to_string(std::max<int64_t>(n, gpus)) + ")"
                                        : "") +
                    "; model states alone need " + FormatBytes(BatchIndependentBytes(s->plan));
    return result;
  }
  if (!holds(*m, n)) {
    const int64_t sum = std::accumulate(m->begin(), m->end(), int64_t{0});
    result.reason = "the " + std::to_string(gpus) + " GPUs hold at most " + std::to_string(sum) +
                    " samples of a global batch of " + std::to_string(n) + " (" + CountsByGpu(*m) +
                    "); the largest global batch is " + std::to_string(result.max_global_batch);
    return result;
  }

  const std::vector<int64_t> batches = WaterFill(*m, n);
  bool uneven = false;
  for (int i = 0; i < gpus; ++i) {
    Result<GpuShare> s = model.Share(i, batches[i], n);
    if (!s) return MakeError(s.error());
    s->loss_weight = static_cast<double>(batches[i]) / static_cast<double>(n);
    s->max_batch = (*m)[i];
    uneven = uneven || batches[i] != batches[0];
    result.per_gpu.push_back(std::move(s).value());
  }
  result.possible = true;
  result.notes = Notes(request.strategy, uneven);
  return result;
}

Result<std::vector<AdviceItem>> AdviseStrategies(const PlanFunction& plan,
                                                 const SplitRequest& request,
                                                 const SplitResult& baseline, int threads) {
  const Strategy order[] = {Strategy::kDp, Strategy::kDdp, Strategy::kZero1, Strategy::kZero2,
                            Strategy::kZero3};
  const int64_t n = std::max<int64_t>(baseline.global_batch, baseline.gpus);
  SplitRequest base_req = request;
  base_req.global_batch = n;
  Result<SplitResult> base = request.global_batch ? Result<SplitResult>(baseline)
                                                  : PlanSplit(plan, base_req);
  if (!base) return MakeError(base.error());
  const uint64_t base_worst = WorstEvenPeak(*base);
  const std::vector<int64_t> likely = LocalMaxima(*base);

  std::vector<Strategy> others;
  bool after = false;
  for (Strategy s : order) {
    if (s == request.strategy) { after = true; continue; }
    if (after) others.push_back(s);
  }
  // Each strategy is its own option set: split on up to `threads` threads, read in order.
  std::vector<std::optional<Result<SplitResult>>> alts(others.size());
  ForEachOnThreads(others.size(), threads, [&](size_t i) {
    SplitRequest r = request;
    r.strategy = others[i];
    r.global_batch = n;
    r.likely_max_batch = likely;  // each later strategy shards more of the step
    alts[i] = PlanSplit(plan, r);
  });
  std::vector<AdviceItem> items;
  for (size_t i = 0; i < others.size(); ++i) {
    const Strategy s = others[i];
    Result<SplitResult>& alt = *alts[i];
    if (!alt) return MakeError(alt.error());
    AdviceItem item;
    item.action = "strategy_" + std::string(Name(s));
    item.required_bytes = WorstEvenPeak(*alt);
    item.saves_bytes = base_worst > item.required_bytes ? base_worst - item.required_bytes : 0;
    item.fits = alt->possible;
    item.max_batch = alt->max_global_batch;
    static const char* kWhat[] = {
        "nn.DataParallel", "DistributedDataParallel (torchrun, one process per GPU)",
        "ZeRO stage 1 (optimizer state partitioned; DeepSpeed or torch ZeroRedundancyOptimizer)",
        "ZeRO stage 2 (optimizer state and gradients partitioned)",
        "ZeRO stage 3 / FSDP full sharding (parameters, gradients and optimizer state partitioned)"};
    item.description = std::string("switch to ") + kWhat[static_cast<int>(s)] +
                       ": the largest global batch becomes " +
                       std::to_string(alt->max_global_batch);
    items.push_back(std::move(item));
  }
  RankAdvice(items);
  return items;
}

Result<std::vector<AdviceItem>> AdviseSplitWhatIfs(const PlanFunction& plan, const SplitRequest& request,
                                                   const SplitResult& baseline,
                                                   const std::vector<ModelInput>& inputs, int threads) {
  const int64_t n = std::max<int64_t>(baseline.global_batch, baseline.gpus);
  SplitRequest base_req = request;
  base_req.global_batch = n;
  Result<SplitResult> base = request.global_batch ? Result<SplitResult>(baseline) : PlanSplit(plan, base_req);
  if (!base) return MakeError(base.error());
  const uint64_t base_worst = WorstEvenPeak(*base);
  const std::vector<int64_t> likely = LocalMaxima(*base);
  plan::PlanOptions one = request.base;
  one.batch = 1;
  Result<plan::StepPlan> at_one = plan(one);
  if (!at_one) return MakeError(at_one.error());

  std::vector<WhatIf> what_ifs = WhatIfs(request.base, inputs, *at_one);
  std::vector<std::optional<Result<SplitResult>>> alts(what_ifs.size());
  ForEachOnThreads(what_ifs.size(), threads, [&](size_t i) {
    SplitRequest r = base_req;
    r.base = what_ifs[i].options;
    r.likely_max_batch = likely;
    alts[i] = PlanSplit(plan, r);
  });
  std::vector<AdviceItem> items;
  for (size_t i = 0; i < what_ifs.size(); ++i) {
    WhatIf& w = what_ifs[i];
    Result<SplitResult>& alt = *alts[i];
    if (!alt) continue;  // the planner cannot plan this change for this model
    AdviceItem item;
    item.action = w.action;
    item.required_bytes = WorstEvenPeak(*alt);
    if (item.required_bytes >= base_worst) continue;
    item.saves_bytes = base_worst - item.required_bytes;
    item.fits = alt->possible;
    item.max_batch = alt->max_global_batch;
    item.description = std::move(w.description) + ": the largest global batch becomes " +
                       std::to_string(alt->max_global_batch);
    item.layer = std::move(w.layer);
    item.layer_parameter_bytes = w.layer_parameter_bytes;
    items.push_back(std::move(item));
  }
  RankAdvice(items);
  return items;
}

}  // namespace oomguard::fit
