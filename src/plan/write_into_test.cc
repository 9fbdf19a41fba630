// Writes into part of a tensor (slice assignment, index_put_), exported as ScatterND: small nets of
// tools/probe_scatter.py --store (their own sizes, never a set's model; whole steps of real PyTorch 1.13 on the
// CPU, tests/data/plan/scatter_probes.json).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "oomguard/plan/planner.h"

namespace oomguard::plan {
namespace {

// Planned as an operator without a rule (every input and output kept), the four probes were 27 to 425 % high and
// the correlation volume's 12 writes kept 12 copies of the volume. torch writes into one storage and autograd
// keeps nothing for the write: each row now lands within 5 % and no ScatterND is left uncovered.
TEST(WriteInto, ScatterNDProbesMatchTorchAndAreCovered) {
  const std::string dir = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/";
  std::ifstream in(dir + "scatter_probes.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json cases = nlohmann::json::parse(in)["cases"];
  ASSERT_EQ(cases.size(), 4u);
  for (const auto& [name, c] : cases.items()) {
    auto model = LoadModel(dir + c["onnx"].get<std::string>());
    ASSERT_TRUE(model.ok()) << model.error();
    for (const auto& row : c["rows"]) {
      SCOPED_TRACE(name + " batch " + std::to_string(row["batch"].get<int64_t>()));
      PlanOptions o;
      o.batch = row["batch"].get<int64_t>();
      o.target = Target::kCpu;
      o.optimizer = c["optimizer"] == "adam" ? Optimizer::kAdam : Optimizer::kSgd;
      auto plan = PlanStep(**model, o);
      ASSERT_TRUE(plan.ok()) << plan.error();
      const double measured = row["measured_peak"].get<double>();
      EXPECT_LT(std::abs(static_cast<double>(plan->peak_allocated_bytes) - measured) / measured, 0.05);
      for (const auto& u : plan->uncovered) EXPECT_NE(u.op, "ScatterND");
    }
  }
}

}  // namespace
}  // namespace oomguard::plan
