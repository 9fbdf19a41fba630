#include "oomguard/fit/fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>

#include "oomguard/units.h"

namespace oomguard::fit {

Result<uint64_t> UsableBytes(const Budget& budget) {
  if (!(budget.margin_percent >= 0.0 && budget.margin_percent < 100.0)) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", budget.margin_percent);
    return MakeError(std::string("margin must be at least 0 and below 100 percent, got ") + got);
  }
  if (budget.capacity_bytes == 0) return MakeError("capacity is 0 bytes");
  const auto margin = static_cast<uint64_t>(
      std::llround(static_cast<long double>(budget.capacity_bytes) * budget.margin_percent / 100.0L));
  const uint64_t taken = budget.reserve_bytes + margin;
  if (budget.reserve_bytes >= budget.capacity_bytes || taken >= budget.capacity_bytes) {
    return MakeError("reserve " + FormatBytes(budget.reserve_bytes) + " and margin " +
                     FormatBytes(margin) + " leave nothing of the capacity " +
                     FormatBytes(budget.capacity_bytes));
  }
  return budget.capacity_bytes - taken;
}

uint64_t BatchIndependentBytes(const plan::StepPlan& p) {
  return p.bytes.weights + p.bytes.gradients + p.bytes.optimizer_state + p.bytes.context +
         p.bytes.workspace;
}

namespace {

// Plans each batch at most once.
class CachedPlanner {
 public:
  CachedPlanner(const PlanFunction& plan, const plan::PlanOptions& base) : plan_(plan), base_(base) {}

  Result<const plan::StepPlan*> At(int64_t batch) {
    auto it = cache_.find(batch);
    if (it == cache_.end()) {
      if (auto f = failed_.find(batch); f != failed_.end()) return MakeError(f->second);
      plan::PlanOptions o = base_;
      o.batch = batch;
      Result<plan::StepPlan> r = plan_(o);
      if (!r) {
        failed_.emplace(batch, r.error());
        return MakeError(r.error());
      }
      it = cache_.emplace(batch, std::move(r).value()).first;
    }
    return &it->second;
  }
  int evaluated() const { return static_cast<int>(cache_.size()); }
  const std::map<int64_t, plan::StepPlan>& all() const { return cache_; }

 private:
  const PlanFunction& plan_;
  const plan::PlanOptions& base_;
  std::map<int64_t, plan::StepPlan> cache_;
  std::map<int64_t, std::string> failed_;
};

bool Monotone(const std::map<int64_t, plan::StepPlan>& plans) {
  uint64_t prev = 0;
  for (const auto& [batch, p] : plans) {
    if (p.required_bytes < prev) return false;
    prev = p.required_bytes;
  }
  return true;
}

}  // namespace

Result<FitResult> FindMaxBatch(const PlanFunction& plan, const plan::PlanOptions& base,
                               const FitOptions& options) {
  const uint64_t budget = options.budget_bytes;
  const int64_t limit = std::max<int64_t>(1, options.max_batch_limit);
  CachedPlanner planner(plan, base);
  // The required bytes at batch b, or the planner's error at batch 1. A batch
  // above 1 that cannot be planned (its tensors overflow what the planner
  // represents) fits nowhere: it counts as needing every byte.
  auto required = [&](int64_t b) -> Result<uint64_t> {
    Result<const plan::StepPlan*> p = planner.At(b);
    if (!p && b == 1) return MakeError(p.error());
    if (!p) return std::numeric_limits<uint64_t>::max();
    return (*p)->required_bytes;
  };

  FitResult result;
  result.budget_bytes = budget;
  Result<uint64_t> f1 = required(1);
  if (!f1) return MakeError(f1.error());

  int64_t lo = 0;   // largest batch known to fit (0: none)
  int64_t hi = -1;  // smallest batch above lo known not to fit (-1: none known)
  // Records a planned batch in the bracket.
  auto learn = [&](int64_t b) -> Status {
    Result<uint64_t> f = required(b);
    if (!f) return MakeError(f.error());
    if (*f <= budget) {
      if (b > lo && (hi < 0 || b < hi)) lo = b;
    } else if (b > lo && (hi < 0 || b < hi)) {
      hi = b;
    }
    return Status::Ok();
  };
  auto done = [&] { return (hi > 0 && hi - lo <= 1) || (hi < 0 && lo >= limit); };

  if (Status s = learn(1); !s) return MakeError(s.error());
  if (lo == 1 && !done()) {
    if (Status s = learn(2); !s) return MakeError(s.error());
  }
  // Memory is close to affine in the batch: aim where the chord through two
  // planned points crosses the budget, plan the aim and its neighbour, repeat
  // on the narrowed bracket. Bisect when an aim did not halve the bracket.
  bool bisect_next = false;
  while (lo >= 1 && !done()) {
    const int64_t width_before = hi < 0 ? -1 : hi - lo;
    int64_t aim;
    if (bisect_next) {
      aim = lo + (hi - lo) / 2;
    } else {
      const int64_t a = hi > 0 ? lo : 1;
      const int64_t b = hi > 0 ? hi : lo;
      const long double fa = static_cast<long double>(*required(a));
      const long double fb = static_cast<long double>(*required(b));
      const long double slope = b > a ? (fb - fa) / static_cast<long double>(b - a) : 0;
      const long double room =
          static_cast<long double>(budget) - static_cast<long double>(*required(lo));
      if (slope > 0) {
        const long double steps = std::floor(room / slope);
        aim = steps >= static_cast<long double>(limit) ? limit : lo + static_cast<int64_t>(steps);
      } else {
        aim = limit;  // flat so far: try the limit, bisect if it does not fit
      }
    }
    aim = std::max(aim, lo + 1);
    if (hi > 0) aim = std::min(aim, hi - 1);
    aim = std::min(aim, limit);
    if (Status s = learn(aim); !s) return MakeError(s.error());
    const int64_t neighbour = lo == aim ? aim + 1 : aim - 1;
    if (neighbour > lo && neighbour <= limit && (hi < 0 || neighbour < hi)) {
      if (Status s = learn(neighbour); !s) return MakeError(s.error());
    }
    const int64_t width_after = hi < 0 ? -1 : hi - lo;
    bisect_next = width_before > 0 && width_after * 2 > width_before;
  }

  // Check the assumption the search rests on: the planned curve is monotone
  // and nothing just above the answer fits.
  bool suspicious = !Monotone(planner.all());
  if (!suspicious && hi > 0) {
    for (int k = 1; k <= options.verify_window && hi + k <= limit; ++k) {
      Result<uint64_t> f = required(hi + k);
      if (!f) return MakeError(f.error());
      if (*f <= budget) suspicious = true;
    }
    suspicious = suspicious || !Monotone(planner.all());
  }
  if (suspicious && hi > 0) {  // (when the limit itself fits, the answer is the limit)
    result.exhaustive_fallback = true;
    const int64_t top = std::min<int64_t>(limit, 2 * hi + options.verify_window);
    lo = 0;
    for (int64_t b = 1; b <= top; ++b) {
      Result<uint64_t> f = required(b);
      if (!f) return MakeError(f.error());
      if (*f <= budget) lo = b;
    }
    hi = lo + 1 <= limit ? lo + 1 : -1;
  }

  result.max_batch = lo;
  result.hit_limit = lo == limit;
  const int64_t shown = lo > 0 ? lo : 1;
  result.plan = **planner.At(shown);
  if (lo > 0 && lo < limit) {
    Result<const plan::StepPlan*> next = planner.At(lo + 1);
    if (next) result.next_plan = **next;
  }
  result.plans_evaluated = planner.evaluated();
  return result;
}

Result<int64_t> FindMaxBatchExhaustive(const PlanFunction& plan, const plan::PlanOptions& base,
                                       uint64_t budget_bytes, int64_t limit) {
  int64_t best = 0;
  plan::PlanOptions o = base;
  for (int64_t b = 1; b <= limit; ++b) {
    o.batch = b;
    Result<plan::StepPlan> r = plan(o);
    if (!r) return MakeError(r.error());
    if (r->required_bytes <= budget_bytes) best = b;
  }
  return best;
}

}  // namespace oomguard::fit
