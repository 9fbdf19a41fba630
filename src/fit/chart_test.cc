#include "oomguard/fit/chart.h"

#include <gtest/gtest.h>

#include "fake_planner.h"

namespace oomguard::fit {
namespace {

using testing::FakeCurve;
using testing::FakePlanner;

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(SampleCurve, IncludesTheChosenBatchAndItsNeighbourAndIsSorted) {
  FakePlanner fake{FakeCurve{}};
  Result<std::vector<CurvePoint>> c = SampleCurve(fake.Function(), {}, 130, 97, 10);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->front().batch, 1);
  EXPECT_EQ(c->back().batch, 130);
  bool chosen = false, next = false;
  for (size_t i = 0; i < c->size(); ++i) {
    if (i) {
      EXPECT_LT((*c)[i - 1].batch, (*c)[i].batch);
    }
    plan::PlanOptions o;
    o.batch = (*c)[i].batch;
    EXPECT_EQ((*c)[i].required_bytes, fake.Plan(o)->required_bytes);
    chosen = chosen || (*c)[i].batch == 97;
    next = next || (*c)[i].batch == 98;
  }
  EXPECT_TRUE(chosen && next);
}

TEST(FitChartHtml, DrawsCurveCapacityBudgetAndTheChosenPoint) {
  std::vector<CurvePoint> curve = {{1, 100}, {50, 5000}, {51, 5100}, {60, 6000}};
  std::string html = FitChartHtml("resnet50 <fit>", curve, 5500, 5050, 50);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<title>resnet50 &lt;fit&gt;</title>"), std::string::npos);
  EXPECT_EQ(Count(html, "class=\"capacity\""), 1u);
  EXPECT_EQ(Count(html, "class=\"budget\""), 1u);
  EXPECT_EQ(Count(html, "class=\"chosen\""), 1u);
  EXPECT_NE(html.find("largest batch 50: "), std::string::npos);
  EXPECT_EQ(Count(html, "<tr><td>"), 4u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(SplitChartHtml, OneStackedBarPerGpuWithItsBudget) {
  SplitResult r;
  for (int i = 0; i < 3; ++i) {
    GpuShare g;
    g.index = i;
    g.batch = 4 + i;
    g.budget_bytes = 1000;
    g.peak_bytes = 900;
    g.plan.bytes.weights = 300;
    g.plan.bytes.activations_saved = 400;
    r.per_gpu.push_back(g);
  }
  std::string html = SplitChartHtml("split", r);
  EXPECT_EQ(Count(html, "class=\"part\""), 15u);
  EXPECT_EQ(Count(html, "class=\"budget\""), 3u);
  EXPECT_NE(html.find(">GPU 2</text>"), std::string::npos);
  EXPECT_NE(html.find(">batch 6</text>"), std::string::npos);
}


}  // namespace
}  // namespace oomguard::fit
