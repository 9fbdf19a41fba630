#include "oomguard/fit/fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// The caching allocator's fragmentation makes the required bytes wobble by a
// few percent from one batch to the next (PyTorch's reserved memory does the
// same): a decrease within this fraction is noise, not a broken curve.
constexpr uint64_t kNoiseDivisor = 32;  // about 3 %

// Plans each batch at most once. Keeps every batch's required bytes, but the
// whole plan (every layer: megabytes for a large graph) only for the last few;
// a planner that answers the required bytes alone is asked for those, and for
// a whole plan only where the search shows one. (Counts a batch as evaluated
// the way a planner without that shortcut would be called.)
class CachedPlanner {
 public:
  // `reach`: the largest batch the search may ask.
  CachedPlanner(const PlanFunction& plan, const plan::PlanOptions& base, int64_t reach)
      : plan_(plan), base_(base), reach_(reach) {}

  // The required bytes at `batch`, or the planner's error.
  Result<uint64_t> Required(int64_t batch) {
    if (auto it = required_.find(batch); it != required_.end()) return it->second;
    if (!plan_.answers_required_alone()) {
      Result<const plan::StepPlan*> p = At(batch);
      if (!p) return MakeError(p.error());
      return (*p)->required_bytes;
    }
    if (auto f = failed_.find(batch); f != failed_.end()) return MakeError(f->second);
    plan::PlanOptions o = base_;
    o.batch = batch;
    Result<uint64_t> r = plan_.RequiredBytes(o, reach_);
    if (!r) {
      failed_.emplace(batch, r.error());
      return MakeError(r.error());
    }
    required_[batch] = *r;
    Remember(batch, std::nullopt);
    ++plans_;
    return *r;
  }

  Result<const plan::StepPlan*> At(int64_t batch) {
    bool recent = false;
    for (auto& [b, p] : recent_) {
      if (b != batch) continue;
      if (p) return &*p;
      recent = true;
    }
    if (auto f = failed_.find(batch); f != failed_.end()) return MakeError(f->second);
    plan::PlanOptions o = base_;
    o.batch = batch;
    Result<plan::StepPlan> r = plan_(o);
    if (!r) {
      failed_.emplace(batch, r.error());
      return MakeError(r.error());
    }
    required_[batch] = r->required_bytes;
    if (recent) {
      for (auto& [b, p] : recent_) {
        if (b == batch) return &p.emplace(std::move(r).value());
      }
    }
    ++plans_;
    return &*Remember(batch, std::move(r).value());
  }
  int evaluated() const { return plans_; }
  const std::map<int64_t, uint64_t>& all() const { return required_; }

 private:
  std::optional<plan::StepPlan>& Remember(int64_t batch, std::optional<plan::StepPlan> plan) {
    if (recent_.size() == kRecent) recent_.erase(recent_.begin());
    recent_.emplace_back(batch, std::move(plan));
    return recent_.back().second;
  }
  static constexpr size_t kRecent = 4;
  const PlanFunction& plan_;
  const plan::PlanOptions& base_;
  const int64_t reach_;
  std::map<int64_t, uint64_t> required_;
  std::vector<std::pair<int64_t, std::optional<plan::StepPlan>>> recent_;
  std::map<int64_t, std::string> failed_;
  int plans_ = 0;
};

// Non-decreasing in the batch, up to the allocator's noise.
bool Monotone(const std::map<int64_t, uint64_t>& required) {
  uint64_t prev = 0;
  for (const auto& [batch, r] : required) {
    if (r + prev / kNoiseDivisor < prev) return false;
    prev = std::max(prev, r);
  }
  return true;
}

}  // namespace

Result<FitResult> FindMaxBatch(const PlanFunction& plan, const plan::PlanOptions& base,
                               const FitOptions& options) {
  const uint64_t budget = options.budget_bytes;
  const int64_t limit = std::max<int64_t>(1, options.max_batch_limit);
  CachedPlanner planner(plan, base, limit);
  // The required bytes at batch b, or the planner's error at batch 1. A batch
  // above 1 that cannot be planned (its tensors overflow what the planner
  // represents) fits nowhere: it counts as needing every byte.
  auto required = [&](int64_t b) -> Result<uint64_t> {
    Result<uint64_t> r = planner.Required(b);
    if (!r && b == 1) return MakeError(r.error());
    if (!r) return std::numeric_limits<uint64_t>::max();
    return *r;
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
  if (const int64_t likely = options.likely_fits; likely > lo && likely <= limit && !done()) {
    if (Status s = learn(likely); !s) return MakeError(s.error());
    if (lo == likely && !done()) {
      if (Status s = learn(likely + 1); !s) return MakeError(s.error());
    }
  }
  // Memory is close to affine in the batch: aim where the chord through two
  // planned points crosses the budget, plan the aim and its neighbour (the
  // aim is the chord's answer: the neighbour confirms it), repeat on the
  // narrowed bracket. Bisect when an aim did not halve the bracket. The
  // caching allocator makes the curve a staircase, where a chord from an end
  // just under the budget creeps up one batch at a time: an aim stays an
  // eighth of the bracket away from its ends, and a bisection or an aim at
  // the limit is planned without its neighbour.
  bool bisect_next = false;
  while (lo >= 1 && !done()) {
    const int64_t width_before = hi < 0 ? -1 : hi - lo;
    int64_t aim;
    bool predicted = false;
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
        predicted = aim < limit;
      } else {
        aim = limit;  // flat so far: try the limit, bisect if it does not fit
      }
      if (hi > 0) {
        const int64_t margin = (hi - lo) / 8;
        if (aim < lo + margin || aim > hi - margin) predicted = false;
        aim = std::clamp(aim, lo + margin, hi - margin);
      }
    }
    aim = std::max(aim, lo + 1);
    if (hi > 0) aim = std::min(aim, hi - 1);
    aim = std::min(aim, limit);
    if (Status s = learn(aim); !s) return MakeError(s.error());
    const int64_t neighbour = lo == aim ? aim + 1 : aim - 1;
    if (predicted && neighbour > lo && neighbour <= limit && (hi < 0 || neighbour < hi)) {
      if (Status s = learn(neighbour); !s) return MakeError(s.error());
    }
    const int64_t width_after = hi < 0 ? -1 : hi - lo;
    bisect_next = width_before > 0 && width_after * 2 > width_before;
  }

  // Check the assumption the search rests on: the planned curve is monotone
  // and nothing just above the answer fits.
  // A batch just above that fits again is noise when the first failing batch
  // is within the noise of the budget.
  bool suspicious = !Monotone(planner.all());
  const int64_t top = std::min<int64_t>(limit, 2 * hi + options.verify_window);
  // (Without the fallback's reach, the verification changes nothing a caller of the answer alone reads.)
  const bool verify = !options.answer_only || (hi > 0 && top <= options.exhaustive_limit);
  if (!suspicious && hi > 0 && verify) {
    const uint64_t at_hi = *required(hi);
    const bool near_budget = at_hi - budget <= budget / kNoiseDivisor;
    for (int k = 1; k <= options.verify_window && hi + k <= limit; ++k) {
      Result<uint64_t> f = required(hi + k);
      if (!f) return MakeError(f.error());
      if (*f <= budget && !near_budget) suspicious = true;
    }
    suspicious = suspicious || !Monotone(planner.all());
  }
  // (When the limit itself fits, the answer is the limit; planning every batch
  // is only affordable for small batches.)
  if (suspicious && hi > 0 && top <= options.exhaustive_limit) {
    result.exhaustive_fallback = true;
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
  result.plans_evaluated = planner.evaluated();
  if (options.answer_only) return result;
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
