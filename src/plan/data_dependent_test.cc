// Sizes the data decides (data_dependent.h): small nets of tools/probe_datadep.py --store (their own sizes, never a
// set's model; whole steps of real PyTorch 1.13 on the CPU, tests/data/plan/datadep_probes.json) and hand-built
// graphs.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "oomguard/plan/planner.h"
#include "test_graphs.h"

namespace oomguard::plan {
namespace {

using testing::GraphBuilder;

PlanOptions Cpu(int64_t batch, Optimizer optimizer = Optimizer::kSgd) {
  PlanOptions o;
  o.batch = batch;
  o.target = Target::kCpu;
  o.optimizer = optimizer;
  return o;
}

const PlanRisk* DataRisk(const StepPlan& p) {
  for (const PlanRisk& r : p.risks) {
    if (r.what == "data_dependent_shape") return &r;
  }
  return nullptr;
}

// Every probe (boolean-mask indexing, nonzero + index_select + index_add_, a top-1 MoE over 4 experts): the start
// planned what follows the NonZero at 0 bytes without a word, 5 to 52 % low. Now each row is flagged, its measured
// peak lies within the plan's peak widened by the bytes at risk, and the point estimate is within 10 %.
TEST(DataDependentShapes, ProbesAreFlaggedCoveredAndClose) {
  const std::string dir = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/";
  std::ifstream in(dir + "datadep_probes.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json cases = nlohmann::json::parse(in)["cases"];
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& [name, c] : cases.items()) {
    auto model = LoadModel(dir + c["onnx"].get<std::string>());
    ASSERT_TRUE(model.ok()) << model.error();
    const Optimizer opt = c["optimizer"] == "adam" ? Optimizer::kAdam : Optimizer::kSgd;
    for (const auto& row : c["rows"]) {
      SCOPED_TRACE(name + " batch " + std::to_string(row["batch"].get<int64_t>()));
      auto plan = PlanStep(**model, Cpu(row["batch"].get<int64_t>(), opt));
      ASSERT_TRUE(plan.ok()) << plan.error();
      const PlanRisk* risk = DataRisk(*plan);
      ASSERT_NE(risk, nullptr);
      EXPECT_EQ(risk->direction, "either");
      const double measured = row["measured_peak"].get<double>();
      const double planned = static_cast<double>(plan->peak_allocated_bytes);
      EXPECT_LE(std::abs(planned - measured), static_cast<double>(risk->bytes));
      EXPECT_LT(std::abs(planned - measured) / measured, 0.10);
      const DataDependentShapes& d = plan->data_dependent;
      EXPECT_FALSE(d.nodes.empty());
      EXPECT_GT(d.tensors, 0);
      EXPECT_LE(d.least_bytes, d.planned_bytes);
      EXPECT_LT(d.planned_bytes, d.most_bytes);
    }
  }
}

// A top-1 router over 4 experts: each expert's torch.where(mask[i]) NonZero is planned at 1/4 of its [1, N]
// mask (one_hot has one one per row), the others at 1/2.
TEST(DataDependentShapes, AOneHotMaskIsPlannedAtOneOverItsDepth) {
  const std::string dir = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/";
  auto moe = LoadModel(dir + "datadep_topk_moe.onnx");
  ASSERT_TRUE(moe.ok()) << moe.error();
  auto plan = PlanStep(**moe, Cpu(4));  // 4 x 32 tokens
  ASSERT_TRUE(plan.ok()) << plan.error();
  ASSERT_EQ(plan->data_dependent.nodes.size(), 4u);
  for (const std::string& n : plan->data_dependent.nodes) EXPECT_NE(n.find(": 32 of at most 128, 1/4"), std::string::npos) << n;
  auto mask = LoadModel(dir + "datadep_mask_tokens.onnx");
  ASSERT_TRUE(mask.ok()) << mask.error();
  auto half = PlanStep(**mask, Cpu(4));  // 4 x 48 tokens
  ASSERT_TRUE(half.ok()) << half.error();
  ASSERT_EQ(half->data_dependent.nodes.size(), 1u);
  EXPECT_NE(half->data_dependent.nodes[0].find(": 96 of at most 192, 1/2"), std::string::npos);
}

// x [B, 8] -> NonZero(x > 0) -> Transpose -> GatherND(x) -> MatMul [n, 8] x [8, 64]: the product is planned at
// half the rows (the midpoint), and its range spans none to all B * 8 of them. Compress (masked_select) alike.
TEST(DataDependentShapes, NonZeroAndCompressArePlannedAtTheMidpointWithTheirRange) {
  for (const bool compress : {false, true}) {
    SCOPED_TRACE(compress ? "Compress" : "NonZero");
    GraphBuilder b;
    b.Input("x", {8}).Weight("w", {8, 64}).FloatConstant("zero", 0.0f);
    b.Node("Greater", {"x", "zero"}, {"mask"});
    if (compress) {
      b.Constant("flat", {-1}, {1}).Constant("row", {-1, 8}, {2});
      b.Node("Reshape", {"mask", "flat"}, {"mask1"});
      b.Node("Compress", {"x", "mask1"}, {"picked"});
      b.Node("Reshape", {"picked", "row"}, {"rows"});
    } else {
      b.Constant("s0", {0}, {1}).Constant("s1", {1}, {1}).Constant("s2", {1}, {1});
      b.Node("NonZero", {"mask"}, {"nz"});
      auto& t = b.Node("Transpose", {"nz"}, {"idx"});
      GraphBuilder::IntsAttr(t, "perm", {1, 0});
      b.Node("Slice", {"idx", "s0", "s1", "s2"}, {"rowidx"});
      b.Node("GatherND", {"x", "rowidx"}, {"rows"});
    }
    b.Node("MatMul", {"rows", "w"}, {"y"});
    b.Node("ReduceSum", {"y"}, {"out"});
    b.Output("out");
    auto model = LoadModelFromBytes(b.Bytes(), "datadep");
    ASSERT_TRUE(model.ok()) << model.error();
    auto plan = PlanStep(**model, Cpu(16));
    ASSERT_TRUE(plan.ok()) << plan.error();
    ASSERT_NE(DataRisk(*plan), nullptr);
    const DataDependentShapes& d = plan->data_dependent;
    ASSERT_EQ(d.nodes.size(), 1u);
    EXPECT_EQ(d.least_bytes, 0u);
    EXPECT_GE(d.most_bytes, 2 * d.planned_bytes - 64);
    const uint64_t y_half = (compress ? 64 / 8 : 64) * 64 * 4;  // half the rows of y
    EXPECT_GE(d.planned_bytes, y_half);
    EXPECT_NE(plan->warnings.back().find("data-dependent sizes"), std::string::npos);
  }
}

// Unique has a size the data decides and no shape rule: it is listed as planned at no extent, and its input's
// bytes are at risk (at least that much follows it).
TEST(DataDependentShapes, AnOpPlannedAtNoExtentIsListedWithItsInputsBytes) {
  GraphBuilder b;
  b.Input("x", {8});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Unique", {"r"}, {"u"}, "unique");
  b.Node("ReduceSum", {"r"}, {"out"});
  b.Output("out");
  auto model = LoadModelFromBytes(b.Bytes(), "unique");
  ASSERT_TRUE(model.ok()) << model.error();
  auto plan = PlanStep(**model, Cpu(16));
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_TRUE(plan->data_dependent.nodes.empty());
  ASSERT_EQ(plan->data_dependent.unplanned.size(), 1u);
  EXPECT_EQ(plan->data_dependent.unplanned[0], "'unique' (Unique)");
  const PlanRisk* risk = DataRisk(*plan);
  ASSERT_NE(risk, nullptr);
  EXPECT_EQ(risk->bytes, 16u * 8 * 4);
  EXPECT_NE(plan->warnings.back().find("could not be planned at any extent"), std::string::npos);
}

}  // namespace
}  // namespace oomguard::plan
