#include "einsum_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

namespace oomguard::plan {
namespace {

// tests/data/plan/einsum_autograd.json (tools/probe_einsum.py --autograd): random equations of 2 to 4 operands run
// by torch 1.13 alone, with what their autograd graph keeps. RunEinsum must name the same operands and make the
// same kept tensors, case for case.
TEST(EinsumRun, KeepsWhatTorchAutogradKeeps) {
  std::ifstream in(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/einsum_autograd.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json data = nlohmann::json::parse(in);
  ASSERT_FALSE(data["opt_einsum"].get<bool>());
  ASSERT_GE(data["cases"].size(), 100u);
  int with_kept = 0;
  for (const auto& c : data["cases"]) {
    std::vector<EinsumOperand> ops;
    for (const auto& o : c["operands"]) {
      ops.push_back({o["dims"].get<std::vector<int64_t>>(), o["strides"].get<std::vector<int64_t>>(),
                     o["requires_grad"].get<bool>()});
    }
    const std::string eq = c["equation"].get<std::string>();
    const EinsumRun run = RunEinsum(eq, ops);
    ASSERT_TRUE(run.known) << eq;
    EXPECT_EQ(run.operand_saved, c["operand_saved"].get<std::vector<bool>>()) << "seed " << c["seed"] << " " << eq;
    std::vector<uint64_t> kept;
    for (const EinsumBuffer& b : run.saved) kept.push_back(b.elements);
    std::sort(kept.begin(), kept.end());
    EXPECT_EQ(kept, c["saved_elements"].get<std::vector<uint64_t>>()) << "seed " << c["seed"] << " " << eq;
    EXPECT_EQ(run.result_contiguous, c["result_contiguous"].get<bool>()) << "seed " << c["seed"] << " " << eq;
    with_kept += kept.empty() ? 0 : 1;
  }
  EXPECT_GE(with_kept, 50);  // the cases exercise copies and kept products, not only views of the operands
}

// A repeated label takes a diagonal first, which the model does not play: the planner keeps its older rule there.
TEST(EinsumRun, UnknownForRepeatedLabels) {
  EXPECT_FALSE(RunEinsum("ii,i->i", {{{3, 3}, std::vector<int64_t>{3, 1}, true}, {{3}, std::vector<int64_t>{1}, true}}).known);
  EXPECT_TRUE(RunEinsum("ij,j->i", {{{3, 4}, std::vector<int64_t>{4, 1}, true}, {{4}, std::vector<int64_t>{1}, true}}).known);
}

}  // namespace
}  // namespace oomguard::plan
