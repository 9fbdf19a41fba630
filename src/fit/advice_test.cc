#include "oomguard/fit/advice.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "advice_json.h"
#include "fake_planner.h"

namespace oomguard::fit {
namespace {

using testing::FakeCurve;
using testing::FakePlanner;

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;

const AdviceItem* Find(const AdviceList& list, const std::string& action) {
  for (const AdviceItem& i : list.items) {
    if (i.action == action) return &i;
  }
  return nullptr;
}

uint64_t Required(FakePlanner& fake, plan::PlanOptions o) {
  return fake.Plan(o)->required_bytes;
}

TEST(AccumulationSteps, KeepsTheEffectiveBatchExactly) {
  EXPECT_EQ(AccumulationSteps(32, 12), 4);   // 4 x 8
  EXPECT_EQ(AccumulationSteps(32, 32), 1);
  EXPECT_EQ(AccumulationSteps(30, 7), 5);    // 5 x 6
  EXPECT_EQ(AccumulationSteps(31, 30), 31);  // a prime: 31 x 1
  EXPECT_EQ(AccumulationSteps(64, 1), 64);
}

class AdviceTest : public ::testing::Test {
 protected:
  AdviceTest() : fake_(FakeCurve{}) {
    request_.base.batch = 64;
    request_.base.optimizer = plan::Optimizer::kAdam;
    request_.inputs = {{"input", {3, 224, 224}}};
  }
  FakePlanner fake_;
  AdviceRequest request_;
};

TEST_F(AdviceTest, EveryItemIsReplannedWithItsOptions) {
  const plan::StepPlan baseline = *fake_.Plan(request_.base);
  request_.budget_bytes = baseline.required_bytes - 1;  // just does not fit
  Result<AdviceList> r = Advise(fake_.Function(), request_, baseline);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->skipped.empty());

  plan::PlanOptions o = request_.base;
  o.precision = plan::Precision::kAmpFp16;
  const AdviceItem* amp = Find(*r, "amp");
  ASSERT_NE(amp, nullptr);
  EXPECT_EQ(amp->required_bytes, Required(fake_, o));
  EXPECT_EQ(amp->saves_bytes, baseline.required_bytes - amp->required_bytes);
  EXPECT_TRUE(amp->fits);

  o = request_.base;
  o.activation_checkpointing = true;
  const AdviceItem* ckpt = Find(*r, "activation_checkpointing");
  ASSERT_NE(ckpt, nullptr);
  EXPECT_EQ(ckpt->required_bytes, Required(fake_, o));

  o = request_.base;
  o.optimizer = plan::Optimizer::kMomentum;
  const AdviceItem* opt = Find(*r, "lighter_optimizer");
  ASSERT_NE(opt, nullptr);
  EXPECT_EQ(opt->saves_bytes, 100 * MiB);  // one Adam state tensor of the 100 MiB weights

  o = request_.base;
  o.input_overrides["input"] = {3, 112, 112};
  const AdviceItem* res = Find(*r, "halve_resolution");
  ASSERT_NE(res, nullptr);
  EXPECT_EQ(res->required_bytes, Required(fake_, o));
  EXPECT_NE(res->description.find("input 3x224x224 -> 3x112x112 (--input input=3,112,112)"),
            std::string::npos)
      << res->description;

  const AdviceItem* fc = Find(*r, "replace_fc_with_pooling");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->layer, "fc");
  EXPECT_EQ(fc->layer_parameter_bytes, 40 * MiB);
  EXPECT_EQ(fc->saves_bytes, 4 * 40 * MiB);  // weights, gradients, two Adam states
  EXPECT_NE(fc->description.find("'fc' (40.00 MiB of parameters)"), std::string::npos);
}

TEST_F(AdviceTest, LowerBatchKeepsTheEffectiveBatchWithAccumulation) {
  const plan::StepPlan baseline = *fake_.Plan(request_.base);
  // 400 MiB of states + 30 MiB (+input) per sample: budget for 20 samples.
  request_.budget_bytes = Required(fake_, [&] { auto o = request_.base; o.batch = 20; return o; }());
  Result<AdviceList> r = Advise(fake_.Function(), request_, baseline);
  ASSERT_TRUE(r.ok());
  const AdviceItem* lower = Find(*r, "lower_batch");
  ASSERT_NE(lower, nullptr);
  EXPECT_EQ(lower->max_batch, 20);
  EXPECT_EQ(lower->accumulation_steps, 4);  // 64 = 4 x 16
  EXPECT_EQ(lower->micro_batch, 16);
  EXPECT_TRUE(lower->fits);
  EXPECT_EQ(lower->description,
            "lower the batch to 16 and accumulate gradients over 4 steps to keep the effective "
            "batch of 64 (the largest batch that fits is 20)");
}

TEST_F(AdviceTest, RanksWhatFitsFirstThenByBytesSaved) {
  const plan::StepPlan baseline = *fake_.Plan(request_.base);
  // Between the plan with halved resolution and the one with AMP.
  plan::PlanOptions amp = request_.base;
  amp.precision = plan::Precision::kAmpFp16;
  request_.budget_bytes = Required(fake_, amp) - 1;
  request_.search_max_batch = false;
  Result<AdviceList> r = Advise(fake_.Function(), request_, baseline);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->items.size(), 3u);
  bool seen_no_fit = false;
  for (size_t i = 0; i < r->items.size(); ++i) {
    if (!r->items[i].fits) seen_no_fit = true;
    if (seen_no_fit) {
      EXPECT_FALSE(r->items[i].fits) << r->items[i].action;
    }
    if (i > 0 && r->items[i].fits == r->items[i - 1].fits) {
      EXPECT_LE(r->items[i].saves_bytes, r->items[i - 1].saves_bytes);
    }
    if (r->items[i].action != "lower_batch") {
      EXPECT_FALSE(r->items[i].max_batch.has_value()) << r->items[i].action;
    }
  }
  EXPECT_FALSE(Find(*r, "amp")->fits);
}

TEST_F(AdviceTest, SkipsWhatIfsThatDoNotApply) {
  request_.base.optimizer = plan::Optimizer::kSgd;
  request_.base.precision = plan::Precision::kAmpBf16;
  request_.base.activation_checkpointing = true;
  request_.inputs = {{"tokens", {128}}};  // not an image
  const plan::StepPlan baseline = *fake_.Plan(request_.base);
  request_.budget_bytes = 100 * GiB;
  Result<AdviceList> r = Advise(fake_.Function(), request_, baseline);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->items.size(), 1u);  // only the FC layer is left
  EXPECT_EQ(r->items[0].action, "replace_fc_with_pooling");
  EXPECT_EQ(Find(*r, "lower_batch"), nullptr);  // it fits: nothing to lower
}

TEST_F(AdviceTest, APlannerErrorSkipsTheItemAndSaysWhy) {
  PlanFunction picky = [&](const plan::PlanOptions& o) -> Result<plan::StepPlan> {
    if (o.activation_checkpointing) return MakeError("checkpointing not supported");
    return fake_.Plan(o);
  };
  const plan::StepPlan baseline = *fake_.Plan(request_.base);
  request_.budget_bytes = baseline.required_bytes;
  Result<AdviceList> r = Advise(picky, request_, baseline);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Find(*r, "activation_checkpointing"), nullptr);
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_EQ(r->skipped[0], "activation_checkpointing: checkpointing not supported");
}

TEST_F(AdviceTest, JsonHasIntegerBytesAndTheDesignFields) {
  const plan::StepPlan baseline = *fake_.Plan(request_.base);
  request_.budget_bytes = GiB;
  Result<AdviceList> r = Advise(fake_.Function(), request_, baseline);
  ASSERT_TRUE(r.ok());
  nlohmann::json j = ToJson(r->items);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), r->items.size());
  for (size_t i = 0; i < j.size(); ++i) {
    EXPECT_TRUE(j[i]["saves_bytes"].is_number_unsigned());
    EXPECT_TRUE(j[i]["required_bytes"].is_number_unsigned());
    EXPECT_EQ(j[i]["action"], r->items[i].action);
    EXPECT_EQ(j[i]["saves_bytes"].get<uint64_t>(), r->items[i].saves_bytes);
  }
}

// On several threads the what-ifs are planned at once and collected in order: the same advice.
TEST_F(AdviceTest, ThreadsGiveTheSameAdvice) {
  const plan::StepPlan baseline = *fake_.Plan(request_.base);
  request_.budget_bytes = baseline.required_bytes - 1;
  std::mutex mu;  // the fake counts its calls; the planner it stands for locks per option set
  PlanFunction locked = [&](const plan::PlanOptions& o) {
    std::lock_guard<std::mutex> lock(mu);
    return fake_.Plan(o);
  };
  Result<AdviceList> one = Advise(locked, request_, baseline);
  request_.threads = 4;
  Result<AdviceList> four = Advise(locked, request_, baseline);
  ASSERT_TRUE(one.ok() && four.ok());
  ASSERT_GE(one->items.size(), 4u);
  EXPECT_EQ(ToJson(one->items).dump(), ToJson(four->items).dump());
  EXPECT_EQ(one->skipped, four->skipped);
}

TEST(ForEachOnThreads, RunsEveryIndexOnce) {
  for (int threads : {1, 3, 16}) {
    std::vector<std::atomic<int>> runs(10);
    ForEachOnThreads(runs.size(), threads, [&](size_t i) { ++runs[i]; });
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << i << " on " << threads;
  }
  ForEachOnThreads(0, 4, [](size_t) { ADD_FAILURE() << "no index to run"; });
}

TEST(Advise, NeedsABatch) {
  FakePlanner fake{FakeCurve{}};
  AdviceRequest request;
  Result<AdviceList> r = Advise(fake.Function(), request, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "advice needs the batch size of the step");
}

}  // namespace
}  // namespace oomguard::fit
