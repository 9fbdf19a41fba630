#include "oomguard/fit/fit.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "fake_planner.h"

namespace oomguard::fit {
namespace {

using testing::FakeCurve;
using testing::FakePlanner;

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;

FitOptions WithBudget(uint64_t budget, int64_t limit = 1'000'000) {
  FitOptions o;
  o.budget_bytes = budget;
  o.max_batch_limit = limit;
  return o;
}

TEST(UsableBytes, SubtractsReserveAndMarginPercentOfCapacity) {
  Budget b{.capacity_bytes = 10 * GiB, .reserve_bytes = 1 * GiB, .margin_percent = 5};
  Result<uint64_t> r = UsableBytes(b);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, 10 * GiB - 1 * GiB - 512 * MiB);
  b.margin_percent = 0;
  EXPECT_EQ(*UsableBytes(b), 9 * GiB);
}

TEST(UsableBytes, RejectsBudgetsThatLeaveNothing) {
  Result<uint64_t> r = UsableBytes({.capacity_bytes = 4 * GiB, .reserve_bytes = 4 * GiB, .margin_percent = 0});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "reserve 4.00 GiB and margin 0 B leave nothing of the capacity 4.00 GiB");
  Result<uint64_t> hundred = UsableBytes({.capacity_bytes = 4 * GiB, .reserve_bytes = 0, .margin_percent = 100});
  ASSERT_FALSE(hundred.ok());
  EXPECT_EQ(hundred.error(), "margin must be at least 0 and below 100 percent, got 100");
  EXPECT_FALSE(UsableBytes({.capacity_bytes = 4 * GiB, .reserve_bytes = 0, .margin_percent = -1}).ok());
  EXPECT_FALSE(UsableBytes({.capacity_bytes = 0, .reserve_bytes = 0, .margin_percent = 5}).ok());
}

TEST(FindMaxBatch, AffineCurveMatchesTheLineAndNeedsFewPlans) {
  FakeCurve c;  // 100 MiB weights + 100 grads + 200 adam + (30 MiB + input) per sample
  FakePlanner fake(c);
  plan::PlanOptions base;
  const uint64_t budget = 4 * GiB;
  Result<FitResult> r = FindMaxBatch(fake.Function(), base, WithBudget(budget));
  ASSERT_TRUE(r.ok()) << r.error();
  const uint64_t per_sample = c.activations_per_sample + c.input_per_sample;
  const int64_t expected = static_cast<int64_t>((budget - 400 * MiB) / per_sample);
  EXPECT_EQ(r->max_batch, expected);
  EXPECT_EQ(r->plan.batch, expected);
  EXPECT_LE(r->plan.required_bytes, budget);
  ASSERT_TRUE(r->next_plan.has_value());
  EXPECT_EQ(r->next_plan->batch, expected + 1);
  EXPECT_GT(r->next_plan->required_bytes, budget);
  EXPECT_FALSE(r->exhaustive_fallback);
  EXPECT_LE(r->plans_evaluated, 8);  // 1, 2, the aim, its neighbour, the verify window
  EXPECT_EQ(r->plans_evaluated, fake.calls());
}

TEST(FindMaxBatch, EqualsExhaustiveSearchOnRandomPiecewiseLinearCurves) {
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 300; ++trial) {
    FakeCurve c;
    c.weights = (1 + rng() % 2000) * MiB;
    c.fc_weights = c.weights / 3;
    c.activations_per_sample = (1 + rng() % (200 * 1024)) * 1024;
    c.input_per_sample = rng() % (4 * MiB);
    c.step_batch = 1 + static_cast<int64_t>(rng() % 300);
    c.step_bytes = (rng() % 2) ? (rng() % 700) * MiB : 0;
    c.round = (rng() % 2) ? 2 * MiB : 1;
    c.context = (rng() % 2) ? 500 * MiB : 0;
    FakePlanner fake(c);
    plan::PlanOptions base;
    base.optimizer = (rng() % 2) ? plan::Optimizer::kAdam : plan::Optimizer::kSgd;
    const uint64_t budget = (1 + rng() % 24) * GiB + rng() % GiB;
    const int64_t limit = 3000;
    Result<int64_t> truth = FindMaxBatchExhaustive(fake.Function(), base, budget, limit);
    ASSERT_TRUE(truth.ok());
    Result<FitResult> r = FindMaxBatch(fake.Function(), base, WithBudget(budget, limit));
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->max_batch, *truth) << "trial " << trial << " budget " << budget;
    EXPECT_FALSE(r->exhaustive_fallback) << "trial " << trial;
    EXPECT_LE(r->plans_evaluated, 30) << "trial " << trial;
  }
}

// A search told where the answer likely is (fit's in-place and what-if searches start from the base
// answer) finds the same answer, in a few plans when the hint is the answer, and still the answer
// when the hint is below it or does not fit at all.
TEST(FindMaxBatch, ALikelyFittingBatchGivesTheSameAnswerInFewerPlans) {
  std::mt19937_64 rng(777);
  int hinted_plans = 0, cold_plans = 0;  // over the trials the hint is the answer
  for (int trial = 0; trial < 200; ++trial) {
    FakeCurve c;
    c.weights = (1 + rng() % 2000) * MiB;
    c.activations_per_sample = (1 + rng() % (200 * 1024)) * 1024;
    c.input_per_sample = rng() % (4 * MiB);
    c.round = trial % 3 == 0 ? 1 : trial % 3 == 1 ? 2 * MiB : GiB;  // the last a staircase of flat steps
    FakePlanner fake(c);
    const uint64_t budget = (1 + rng() % 24) * GiB + rng() % GiB;
    const int64_t limit = 3000;
    Result<int64_t> truth = FindMaxBatchExhaustive(fake.Function(), {}, budget, limit);
    ASSERT_TRUE(truth.ok());
    Result<FitResult> cold = FindMaxBatch(fake.Function(), {}, WithBudget(budget, limit));
    ASSERT_TRUE(cold.ok()) << cold.error();
    for (int64_t likely : {*truth, *truth / 2, *truth + 1 + static_cast<int64_t>(rng() % 50)}) {
      FitOptions o = WithBudget(budget, limit);
      o.likely_fits = likely;
      Result<FitResult> r = FindMaxBatch(fake.Function(), {}, o);
      ASSERT_TRUE(r.ok()) << r.error();
      EXPECT_EQ(r->max_batch, *truth) << "trial " << trial << " likely " << likely;
      EXPECT_FALSE(r->exhaustive_fallback) << "trial " << trial;
      if (likely == *truth && *truth > 2 && *truth < limit) {
        EXPECT_LE(r->plans_evaluated, 6) << "trial " << trial;  // 1, 2, the hint, the batch above, the window
        hinted_plans += r->plans_evaluated;
        cold_plans += cold->plans_evaluated;
      }
    }
  }
  EXPECT_LT(hinted_plans * 4, cold_plans * 3) << hinted_plans << " vs " << cold_plans;
}

// A caller of the answer alone (what-if hints, split's per-GPU limits) gets the same max_batch and
// hit_limit, with or without the exhaustive fallback in reach, on curves with dips (not monotone).
TEST(FindMaxBatch, AnswerOnlyGivesTheSameAnswerWithoutThePlans) {
  std::mt19937_64 rng(4242);
  int fewer = 0;
  for (int trial = 0; trial < 300; ++trial) {
    FakeCurve c;
    c.weights = (1 + rng() % 2000) * MiB;
    c.activations_per_sample = (1 + rng() % (200 * 1024)) * 1024;
    c.input_per_sample = rng() % (4 * MiB);
    c.round = (rng() % 2) ? 2 * MiB : 1;
    for (int d = 0; d < 3; ++d) c.dips[1 + static_cast<int64_t>(rng() % 600)] = (rng() % 512) * MiB;
    FakePlanner fake(c);
    const uint64_t budget = (1 + rng() % 24) * GiB + rng() % GiB;
    FitOptions o = WithBudget(budget, 1 + static_cast<int64_t>(rng() % 3000));
    o.exhaustive_limit = std::vector<int64_t>{0, 64, 256, 4000}[rng() % 4];
    o.likely_fits = (rng() % 2) ? static_cast<int64_t>(rng() % 800) : 0;
    Result<FitResult> full = FindMaxBatch(fake.Function(), {}, o);
    o.answer_only = true;
    Result<FitResult> answer = FindMaxBatch(fake.Function(), {}, o);
    ASSERT_EQ(full.ok(), answer.ok()) << "trial " << trial;
    if (!full.ok()) continue;
    EXPECT_EQ(answer->max_batch, full->max_batch) << "trial " << trial;
    EXPECT_EQ(answer->hit_limit, full->hit_limit) << "trial " << trial;
    EXPECT_EQ(answer->exhaustive_fallback, full->exhaustive_fallback) << "trial " << trial;
    EXPECT_TRUE(answer->plan.layers.empty()) << "trial " << trial;
    EXPECT_FALSE(answer->next_plan.has_value()) << "trial " << trial;
    EXPECT_LE(answer->plans_evaluated, full->plans_evaluated) << "trial " << trial;
    fewer += answer->plans_evaluated < full->plans_evaluated;
  }
  EXPECT_GT(fewer, 50);  // the verification above the answer is skipped where it cannot change it
}

TEST(FindMaxBatch, NothingFitsGivesZeroAndThePlanAtBatchOne) {
  FakeCurve c;
  c.weights = 3 * GiB;  // adam: 12 GiB of model states
  FakePlanner fake(c);
  Result<FitResult> r = FindMaxBatch(fake.Function(), {}, WithBudget(11 * GiB));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_batch, 0);
  EXPECT_EQ(r->plan.batch, 1);
  EXPECT_FALSE(r->next_plan.has_value());
  EXPECT_EQ(BatchIndependentBytes(r->plan), 12 * GiB);
}

TEST(FindMaxBatch, StopsAtTheLimitWhenEverythingFits) {
  FakeCurve c;
  c.activations_per_sample = 0;
  c.input_per_sample = 0;
  FakePlanner fake(c);
  Result<FitResult> r = FindMaxBatch(fake.Function(), {}, WithBudget(GiB, 5000));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_batch, 5000);
  EXPECT_TRUE(r->hit_limit);
  EXPECT_FALSE(r->next_plan.has_value());
  EXPECT_LE(r->plans_evaluated, 20);
}

TEST(FindMaxBatch, ANonMonotoneCurveFallsBackToPlanningEveryBatch) {
  FakeCurve c;
  c.input_per_sample = 0;
  c.weights = 100 * MiB;  // 400 MiB of states with adam, 30 MiB per sample
  FakePlanner fake(c);
  const uint64_t budget = 400 * MiB + 50 * 30 * MiB;  // batch 50 fits exactly
  // Batch 52 dips back under the budget (as allocator rounding can make it).
  FakeCurve dipped = c;
  dipped.dips[52] = 100 * MiB;
  FakePlanner fake2(dipped);
  Result<FitResult> r = FindMaxBatch(fake2.Function(), {}, WithBudget(budget, 1000));
  ASSERT_TRUE(r.ok());
  Result<int64_t> truth = FindMaxBatchExhaustive(fake2.Function(), {}, budget, 1000);
  EXPECT_EQ(*truth, 52);
  EXPECT_EQ(r->max_batch, 52);
  EXPECT_TRUE(r->exhaustive_fallback);
  // Without the dip the same search stays fast and finds 50.
  Result<FitResult> plain = FindMaxBatch(fake.Function(), {}, WithBudget(budget, 1000));
  EXPECT_EQ(plain->max_batch, 50);
  EXPECT_FALSE(plain->exhaustive_fallback);
}

TEST(FindMaxBatch, PassesThePlannersErrorThrough) {
  PlanFunction failing = [](const plan::PlanOptions&) -> Result<plan::StepPlan> {
    return MakeError("model.onnx: no batch dimension");
  };
  Result<FitResult> r = FindMaxBatch(failing, {}, WithBudget(GiB));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "model.onnx: no batch dimension");
}

TEST(FindMaxBatch, KeepsTheOtherOptionsOfTheBase) {
  FakeCurve c;
  FakePlanner fake(c);
  plan::PlanOptions base;
  base.optimizer = plan::Optimizer::kSgd;
  base.precision = plan::Precision::kAmpFp16;
  Result<FitResult> r = FindMaxBatch(fake.Function(), base, WithBudget(2 * GiB));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(fake.last_options().optimizer, plan::Optimizer::kSgd);
  EXPECT_EQ(fake.last_options().precision, plan::Precision::kAmpFp16);
  EXPECT_EQ(r->plan.bytes.optimizer_state, 0u);
}

}  // namespace
}  // namespace oomguard::fit
