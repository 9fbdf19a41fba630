// The step timeline: its peak is the plan's peak, in the plan's phase, at a
// bounded number of points however long the model.
#include "step_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "oomguard/plan/planner.h"
#include "test_graphs.h"

namespace oomguard::plan {
namespace {

using testing::GraphBuilder;

int Stage(const TimelinePoint& p) {
  if (p.node == "start of step") return 0;
  if (p.node == "loss") return 2;
  if (p.phase == "optimizer") return 4;
  return p.phase == "backward" ? 3 : 1;
}

// The timeline's contract against its plan.
void ExpectTimelineAgrees(const StepPlan& plan, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_FALSE(plan.timeline.empty());
  EXPECT_LE(plan.timeline.size(), kMaxTimelinePoints);
  auto peak = std::max_element(plan.timeline.begin(), plan.timeline.end(),
                               [](const auto& a, const auto& b) { return a.allocated_bytes < b.allocated_bytes; });
  if (plan.target == Target::kCuda) {
    // On CUDA the plan's peak is the caching-allocator replay's: it adds each block's rounding (an unsplit
    // block counts whole), which the timeline of tensor bytes does not show. Within 2 %, never above.
    EXPECT_LE(peak->allocated_bytes, plan.peak_allocated_bytes);
    EXPECT_GE(static_cast<double>(peak->allocated_bytes), 0.98 * static_cast<double>(plan.peak_allocated_bytes));
  } else {
    EXPECT_EQ(peak->allocated_bytes, plan.peak_allocated_bytes);
  }
  EXPECT_EQ(peak->phase, plan.peak_phase);
  EXPECT_FALSE(peak->node.empty());
  for (size_t i = 0; i < plan.timeline.size(); ++i) {
    const TimelinePoint& p = plan.timeline[i];
    const MemoryBreakdown& b = p.live;
    EXPECT_EQ(b.weights + b.gradients + b.optimizer_state + b.activations_saved + b.inputs + b.transient,
              p.allocated_bytes);
    if (i > 0) {
      EXPECT_GT(p.event, plan.timeline[i - 1].event);
      EXPECT_GE(Stage(p), Stage(plan.timeline[i - 1])) << "stages run forward, loss, backward, optimizer";
    }
  }
  EXPECT_EQ(plan.timeline.front().node, "start of step");
  EXPECT_EQ(plan.timeline.back().node, "optimizer.step()");
  // The breakdown at the peak is the first point that reaches it.
  EXPECT_EQ(peak->live.weights, plan.at_peak.weights);
  EXPECT_EQ(peak->live.gradients, plan.at_peak.gradients);
  EXPECT_EQ(peak->live.activations_saved, plan.at_peak.activations_saved);
}

StepPlan Plan(const std::string& model, PlanOptions o) {
  auto m = LoadModel(model);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error());
  o.record_timeline = true;
  auto p = PlanStep(**m, o);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error());
  return *p;
}

TEST(StepTimeline, PeakEqualsThePlansPeakInItsPhase) {
  PlanOptions o;
  o.batch = 16;
  StepPlan cuda = Plan("resnet18", o);
  ExpectTimelineAgrees(cuda, "resnet18 cuda adam");

  o.target = Target::kCpu;
  o.optimizer = Optimizer::kAdam;
  o.optimizer_impl = OptimizerImpl::kLoop;
  o.batch = 1;
  StepPlan optimizer_peak = Plan("bert_base", o);
  ExpectTimelineAgrees(optimizer_peak, "bert_base cpu adam loop batch 1");

  o.optimizer = Optimizer::kSgd;
  o.batch = 32;
  StepPlan backward_peak = Plan("vgg16", o);
  ExpectTimelineAgrees(backward_peak, "vgg16 cpu sgd");

  o.activation_checkpointing = true;
  ExpectTimelineAgrees(Plan("resnet50", o), "resnet50 checkpointed");

  // The three phases are all represented as peaks somewhere above.
  EXPECT_EQ(backward_peak.peak_phase, "backward");
  EXPECT_EQ(optimizer_peak.peak_phase, "optimizer");
}

TEST(StepTimeline, ALongChainStaysBoundedAndFast) {
  // input[B,64] -> Gemm -> 20 000 x Relu: about 40 000 simulated events.
  GraphBuilder g;
  g.Input("input", {64}).Weight("fc.weight", {64, 64}).Weight("fc.bias", {64});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight", "fc.bias"}, {"x0"}, "fc"), "transB", 1);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    g.Node("Relu", {"x" + std::to_string(i)}, {"x" + std::to_string(i + 1)}, "relu" + std::to_string(i));
  }
  g.Output("x" + std::to_string(n));
  auto model = LoadModelFromBytes(g.Bytes(), "chain");
  ASSERT_TRUE(model.ok()) << model.error();
  PlanOptions o;
  o.batch = 4;
  o.record_timeline = true;
  o.target = Target::kCpu;
  o.loss = Loss::kMse;
  auto start = std::chrono::steady_clock::now();
  auto plan = PlanStep(**model, o);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(plan.ok()) << plan.error();
  ExpectTimelineAgrees(*plan, "chain");
  // Evenly spread: forward and backward (about as many events each) both keep a fair share.
  auto in = [&](const char* phase) {
    return std::count_if(plan->timeline.begin(), plan->timeline.end(), [&](const auto& p) { return p.phase == phase; });
  };
  EXPECT_GT(in("forward"), static_cast<long>(kMaxTimelinePoints / 4));
  EXPECT_GT(in("backward"), static_cast<long>(kMaxTimelinePoints / 4));
  EXPECT_GE(plan->timeline.size(), kMaxTimelinePoints / 2);
  EXPECT_LT(seconds, 10.0);
}

TEST(StepTimeline, RecorderKeepsTheSpikeAndEveryStage) {
  TimelineRecorder r(16);
  MemoryBreakdown b;
  for (int i = 0; i < 10000; ++i) {
    b.transient = (i == 7777) ? 1000 : static_cast<uint64_t>(i % 7);
    r.Record("forward", i, b);
  }
  b.transient = 3;
  r.Record("forward", TimelineRecorder::kLoss, b);
  for (int i = 0; i < 5000; ++i) r.Record("backward", i, b);
  r.Record("optimizer", TimelineRecorder::kOptimizerStep, b);
  auto points = r.Finish([](int i) { return "n" + std::to_string(i); });
  ASSERT_LE(points.size(), 16u);
  auto spike = std::find_if(points.begin(), points.end(), [](const auto& p) { return p.allocated_bytes == 1000; });
  ASSERT_NE(spike, points.end());
  EXPECT_EQ(spike->node, "n7777");
  EXPECT_EQ(spike->event, 7777u);
  EXPECT_TRUE(std::any_of(points.begin(), points.end(), [](const auto& p) { return p.node == "loss"; }));
  EXPECT_EQ(points.back().node, "optimizer.step()");
  EXPECT_EQ(points.back().event, 15001u);
}

TEST(StepTimeline, TiesKeepTheEarlierPoint) {
  TimelineRecorder r(8);
  MemoryBreakdown b;
  b.weights = 5;
  for (int i = 0; i < 100; ++i) r.Record("forward", i, b);
  auto points = r.Finish([](int i) { return std::to_string(i); });
  ASSERT_FALSE(points.empty());
  EXPECT_EQ(points.front().event, 0u);
  // Each kept point is the first event of its (even-aligned) group.
  for (const TimelinePoint& p : points) EXPECT_EQ(p.event % 2, 0u) << p.event;
}

}  // namespace
}  // namespace oomguard::plan
