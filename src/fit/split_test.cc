#include "oomguard/fit/split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "fake_planner.h"
#include "oomguard/fit/advice.h"

namespace oomguard::fit {
namespace {

using testing::FakeCurve;
using testing::FakePlanner;

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;

// The documented per-GPU memory models, written out independently of split.cc.
uint64_t DdpPeak(FakePlanner& f, int64_t b) {
  plan::PlanOptions o;
  o.batch = b;
  return f.Plan(o)->required_bytes + 2 * 25 * MiB;
}
uint64_t DpCentralPeak(FakePlanner& f, int gpus, int64_t b0, int64_t global) {
  plan::PlanOptions o;
  o.batch = b0;
  const FakeCurve& c = f.curve();
  return f.Plan(o)->required_bytes + gpus * 10 * MiB +
         static_cast<uint64_t>(global - b0) * (c.input_per_sample + 3 * 4 * c.output_classes);
}
uint64_t DpReplicaPeak(FakePlanner& f, int64_t b) {
  plan::PlanOptions o;
  o.batch = b;
  o.optimizer = plan::Optimizer::kSgd;
  o.loss = plan::Loss::kNone;
  return f.Plan(o)->required_bytes;
}
template <typename Peak>
int64_t MaxLocal(Peak peak, uint64_t budget, int64_t limit = 2000) {
  int64_t best = 0;
  for (int64_t b = 1; b <= limit; ++b) {
    if (peak(b) <= budget) best = b;
  }
  return best;
}

SplitRequest Request(std::vector<uint64_t> budgets, Strategy s, std::optional<int64_t> n) {
  SplitRequest r;
  r.budget_bytes = std::move(budgets);
  r.strategy = s;
  r.global_batch = n;
  return r;
}

TEST(ParseStrategy, KnowsTheFiveAndListsThemOnError) {
  EXPECT_EQ(*ParseStrategy("dp"), Strategy::kDp);
  EXPECT_EQ(*ParseStrategy("zero3"), Strategy::kZero3);
  EXPECT_EQ(Name(Strategy::kZero2), "zero2");
  Result<Strategy> r = ParseStrategy("fsdp");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "unknown strategy 'fsdp' (expected dp, ddp, zero1, zero2 or zero3)");
}

TEST(PlanSplit, DdpOnEqualCardsSplitsEvenlyWithEqualWeights) {
  FakePlanner fake{FakeCurve{}};
  Result<SplitResult> r = PlanSplit(fake.Function(), Request({8 * GiB, 8 * GiB, 8 * GiB, 8 * GiB},
                                                             Strategy::kDdp, 32));
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_TRUE(r->possible) << r->reason;
  ASSERT_EQ(r->per_gpu.size(), 4u);
  for (const GpuShare& g : r->per_gpu) {
    EXPECT_EQ(g.batch, 8);
    EXPECT_DOUBLE_EQ(g.loss_weight, 0.25);
    EXPECT_EQ(g.peak_bytes, DdpPeak(fake, 8));
    EXPECT_EQ(g.extra_bytes, 50 * MiB);
  }
  EXPECT_EQ(r->max_global_batch, 4 * MaxLocal([&](int64_t b) { return DdpPeak(fake, b); }, 8 * GiB));
  // Even shares: no note about join.
  for (const std::string& n : r->notes) EXPECT_EQ(n.find("join"), std::string::npos);
}

TEST(PlanSplit, HeterogeneousCardsGetTheMostEvenSplitTheirLimitsAllow) {
  FakePlanner fake{FakeCurve{}};
  const std::vector<uint64_t> budgets = {3 * GiB / 2, 3 * GiB / 2, 24 * GiB};
  std::vector<int64_t> m;
  for (uint64_t b : budgets) m.push_back(MaxLocal([&](int64_t x) { return DdpPeak(fake, x); }, b));
  ASSERT_LT(m[0], 40);  // the small cards cannot take a third of 120
  for (int64_t n : {int64_t{3}, int64_t{50}, int64_t{120}, m[0] + m[1] + m[2]}) {
    Result<SplitResult> r = PlanSplit(fake.Function(), Request(budgets, Strategy::kDdp, n));
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->possible) << n << ": " << r->reason;
    int64_t sum = 0, largest = 0;
    double weights = 0;
    for (const GpuShare& g : r->per_gpu) {
      EXPECT_GE(g.batch, 1);
      EXPECT_LE(g.batch, m[g.index]);
      EXPECT_EQ(g.max_batch, m[g.index]);
      EXPECT_LE(g.peak_bytes, g.budget_bytes);
      EXPECT_EQ(g.peak_bytes, DdpPeak(fake, g.batch));
      sum += g.batch;
      largest = std::max(largest, g.batch);
      weights += g.loss_weight;
    }
    EXPECT_EQ(sum, n);
    EXPECT_NEAR(weights, 1.0, 1e-12);
    // No split has a smaller largest local batch.
    int64_t level = 1;
    while (std::min(m[0], level) + std::min(m[1], level) + std::min(m[2], level) < n) ++level;
    EXPECT_EQ(largest, level) << n;
  }
  Result<SplitResult> most = PlanSplit(fake.Function(), Request(budgets, Strategy::kDdp, std::nullopt));
  ASSERT_TRUE(most.ok());
  EXPECT_EQ(most->global_batch, m[0] + m[1] + m[2]);
  EXPECT_EQ(most->max_global_batch, m[0] + m[1] + m[2]);
  EXPECT_FALSE(most->even.has_value());
}

// Hints of where each GPU's search likely ends (the advice passes the split it compares with) change
// how many plans the searches take, not the split: at, below and above each GPU's largest batch, and
// for a hint list shorter than the GPUs.
TEST(PlanSplit, LikelyLocalBatchesGiveTheSameSplitInFewerPlans) {
  const std::vector<uint64_t> budgets = {3 * GiB / 2, 3 * GiB / 2, 24 * GiB};
  FakePlanner cold{FakeCurve{}};
  Result<SplitResult> base = PlanSplit(cold.Function(), Request(budgets, Strategy::kZero1, std::nullopt));
  ASSERT_TRUE(base.ok() && base->possible);
  std::vector<int64_t> at;
  for (const GpuShare& g : base->per_gpu) at.push_back(g.max_batch);
  for (const std::vector<int64_t>& likely : {at, std::vector<int64_t>{at[0] / 2, at[1] + 7, at[2] * 3},
                                             std::vector<int64_t>{at[0]}}) {
    FakePlanner warm{FakeCurve{}};
    SplitRequest r = Request(budgets, Strategy::kZero1, std::nullopt);
    r.likely_max_batch = likely;
    Result<SplitResult> hinted = PlanSplit(warm.Function(), r);
    ASSERT_TRUE(hinted.ok() && hinted->possible);
    EXPECT_EQ(hinted->max_global_batch, base->max_global_batch);
    ASSERT_EQ(hinted->per_gpu.size(), base->per_gpu.size());
    for (size_t i = 0; i < at.size(); ++i) {
      EXPECT_EQ(hinted->per_gpu[i].batch, base->per_gpu[i].batch);
      EXPECT_EQ(hinted->per_gpu[i].max_batch, base->per_gpu[i].max_batch);
    }
    if (likely == at) {
      EXPECT_LE(warm.calls(), cold.calls());
    }
  }
}

// The article's case: 8 cards of 11 GiB, global batch 32 with dp; 4 per card
// overflows the central GPU, which must take a smaller share.
TEST(PlanSplit, DataParallelGivesTheCentralGpuASmallerShare) {
  FakeCurve c;
  c.weights = 1 * GiB;  // adam: 4 GiB of states on GPU 0, 2 GiB on each replica
  c.activations_per_sample = 1800 * MiB;
  FakePlanner fake(c);
  const int gpus = 8;
  const uint64_t budget = 11 * GiB;
  ASSERT_GT(DpCentralPeak(fake, gpus, 4, 32), budget);
  ASSERT_LE(DpReplicaPeak(fake, 4), budget);

  Result<SplitResult> r = PlanSplit(fake.Function(), Request(std::vector<uint64_t>(gpus, budget),
                                                             Strategy::kDp, 32));
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_TRUE(r->even.has_value());
  EXPECT_EQ(r->even->batch, 4);
  EXPECT_FALSE(r->even->fits[0]);
  EXPECT_EQ(r->even->peak_bytes[0], DpCentralPeak(fake, gpus, 4, 32));
  for (int i = 1; i < gpus; ++i) EXPECT_TRUE(r->even->fits[i]);
  ASSERT_TRUE(r->possible) << r->reason;
  const int64_t m0 = MaxLocal([&](int64_t b) { return DpCentralPeak(fake, gpus, b, 32); }, budget, 32);
  EXPECT_EQ(r->per_gpu[0].max_batch, m0);
  EXPECT_LT(r->per_gpu[0].batch, 4);
  EXPECT_EQ(r->per_gpu[0].peak_bytes, DpCentralPeak(fake, gpus, r->per_gpu[0].batch, 32));
  int64_t sum = 0;
  for (const GpuShare& g : r->per_gpu) {
    sum += g.batch;
    EXPECT_LE(g.peak_bytes, budget);
    if (g.index > 0) {
      EXPECT_EQ(g.peak_bytes, DpReplicaPeak(fake, g.batch));
    }
  }
  EXPECT_EQ(sum, 32);

  // The largest global batch, by brute force over every global batch.
  const int64_t mr = MaxLocal([&](int64_t b) { return DpReplicaPeak(fake, b); }, budget);
  int64_t best = 0;
  for (int64_t n = gpus; n <= 200; ++n) {
    const int64_t m = MaxLocal([&](int64_t b) { return DpCentralPeak(fake, gpus, b, n); }, budget, n);
    if (m >= 1 && m + (gpus - 1) * mr >= n) best = n;
  }
  EXPECT_EQ(r->max_global_batch, best);
}

TEST(PlanSplit, ZeroStagesPartitionStatesOverTheRanks) {
  FakeCurve c;
  FakePlanner fake(c);
  const std::vector<uint64_t> budgets(4, 8 * GiB);
  for (Strategy s : {Strategy::kZero1, Strategy::kZero2, Strategy::kZero3}) {
    Result<SplitResult> r = PlanSplit(fake.Function(), Request(budgets, s, 8));
    ASSERT_TRUE(r.ok() && r->possible);
    plan::PlanOptions o;
    o.batch = 2;
    o.optimizer_state_shards = 4;
    if (s != Strategy::kZero1) o.gradient_shards = 4;
    if (s == Strategy::kZero3) o.parameter_shards = 4;
    uint64_t expected = fake.Plan(o)->required_bytes + 50 * MiB;
    if (s == Strategy::kZero3) expected += c.weights - c.fc_weights;  // the largest layer, gathered
    EXPECT_EQ(r->per_gpu[0].peak_bytes, expected) << Name(s);
  }
}

TEST(PlanSplit, TooLargeAGlobalBatchSaysHowMuchFits) {
  FakePlanner fake{FakeCurve{}};
  const std::vector<uint64_t> budgets = {2 * GiB, 2 * GiB};
  const int64_t m = MaxLocal([&](int64_t b) { return DdpPeak(fake, b); }, 2 * GiB);
  Result<SplitResult> r = PlanSplit(fake.Function(), Request(budgets, Strategy::kDdp, 1000));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->possible);
  EXPECT_EQ(r->max_global_batch, 2 * m);
  const std::string ms = std::to_string(m);
  EXPECT_EQ(r->reason, "the 2 GPUs hold at most " + std::to_string(2 * m) +
                           " samples of a global batch of 1000 (GPU 0: " + ms + ", GPU 1: " + ms +
                           "); the largest global batch is " + std::to_string(2 * m));
}

TEST(PlanSplit, ACardThatHoldsNoSampleMakesTheSplitImpossible) {
  FakeCurve c;
  c.weights = 1 * GiB;  // 4 GiB of states with adam
  FakePlanner fake(c);
  Result<SplitResult> r = PlanSplit(fake.Function(), Request({24 * GiB, 3 * GiB}, Strategy::kDdp, 8));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->possible);
  EXPECT_EQ(r->max_global_batch, 0);
  EXPECT_EQ(r->reason.rfind("GPU 1 cannot hold a batch of 1: it needs ", 0), 0u) << r->reason;
  EXPECT_NE(r->reason.find("of its 3.00 GiB; model states alone need 4.00 GiB"), std::string::npos)
      << r->reason;
}

TEST(PlanSplit, RejectsBadInputWithOneLine) {
  FakePlanner fake{FakeCurve{}};
  Result<SplitResult> r = PlanSplit(fake.Function(), Request({GiB, GiB, GiB}, Strategy::kDdp, 2));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "global batch 2 is smaller than the number of GPUs (3)");
  r = PlanSplit(fake.Function(), Request({}, Strategy::kDdp, 2));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "no GPUs given");
  r = PlanSplit(fake.Function(), Request({GiB, 0}, Strategy::kDdp, 2));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "GPU 1 has no memory left to use");
}

TEST(PlanSplit, UnevenDdpSplitMentionsJoin) {
  FakePlanner fake{FakeCurve{}};
  Result<SplitResult> r = PlanSplit(fake.Function(), Request({8 * GiB, 8 * GiB}, Strategy::kDdp, 5));
  ASSERT_TRUE(r.ok() && r->possible);
  EXPECT_NE(r->per_gpu[0].batch, r->per_gpu[1].batch);
  bool join = false;
  for (const std::string& n : r->notes) join = join || n.find("model.join()") != std::string::npos;
  EXPECT_TRUE(join);
}

TEST(AdviseStrategies, DataParallelToDdpAndZeroEachReplanned) {
  FakeCurve c;
  c.weights = 1 * GiB;
  c.activations_per_sample = 1800 * MiB;
  FakePlanner fake(c);
  SplitRequest req = Request(std::vector<uint64_t>(8, 11 * GiB), Strategy::kDp, 32);
  Result<SplitResult> base = PlanSplit(fake.Function(), req);
  ASSERT_TRUE(base.ok());
  Result<std::vector<AdviceItem>> items = AdviseStrategies(fake.Function(), req, *base);
  ASSERT_TRUE(items.ok()) << items.error();
  ASSERT_EQ(items->size(), 4u);
  for (const AdviceItem& i : *items) {
    SplitRequest alt = req;
    alt.strategy = *ParseStrategy(i.action.substr(std::string("strategy_").size()));
    Result<SplitResult> r = PlanSplit(fake.Function(), alt);
    EXPECT_EQ(i.max_batch, r->max_global_batch) << i.action;
    EXPECT_EQ(i.fits, r->possible);
    EXPECT_EQ(i.required_bytes, *std::max_element(r->even->peak_bytes.begin(), r->even->peak_bytes.end()));
  }
  // More partitioning never holds less: ddp <= zero1 <= zero2.
  auto max_of = [&](const std::string& action) {
    for (const AdviceItem& i : *items) {
      if (i.action == action) return *i.max_batch;
    }
    return int64_t{-1};
  };
  EXPECT_LT(max_of("strategy_ddp"), max_of("strategy_zero1"));
  EXPECT_LT(max_of("strategy_zero1"), max_of("strategy_zero2"));
  // Ranked: what fits first, then by bytes saved.
  for (size_t k = 1; k < items->size(); ++k) {
    const AdviceItem& a = (*items)[k - 1];
    const AdviceItem& b = (*items)[k];
    EXPECT_TRUE(a.fits > b.fits || (a.fits == b.fits && a.saves_bytes >= b.saves_bytes));
  }
}

TEST(AdviseSplitWhatIfs, EachChangeReplansTheWholeSplit) {
  FakeCurve c;
  c.activations_per_sample = 900ull << 20;
  FakePlanner fake(c);
  SplitRequest req = Request(std::vector<uint64_t>(4, 8 * GiB), Strategy::kDdp, 64);
  Result<SplitResult> base = PlanSplit(fake.Function(), req);
  ASSERT_TRUE(base.ok());
  ASSERT_FALSE(base->possible);
  Result<std::vector<AdviceItem>> items =
      AdviseSplitWhatIfs(fake.Function(), req, *base, {{"input", {3, 224, 224}}});
  ASSERT_TRUE(items.ok()) << items.error();
  bool amp = false;
  for (const AdviceItem& i : *items) {
    if (i.action != "amp") continue;
    amp = true;
    SplitRequest alt = req;
    alt.base.precision = plan::Precision::kAmpFp16;
    Result<SplitResult> r = PlanSplit(fake.Function(), alt);
    EXPECT_EQ(i.max_batch, r->max_global_batch);
    EXPECT_EQ(i.fits, r->possible);
    EXPECT_GT(*i.max_batch, base->max_global_batch);
  }
  EXPECT_TRUE(amp);
}

}  // namespace
}  // namespace oomguard::fit
