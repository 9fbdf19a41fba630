#include <gtest/gtest.h>

#include "run_cli_for_test.h"

namespace oomguard {
namespace {

using testing::RunCli;

TEST(SplitCli, UnknownStrategyIsAUsageError) {
  auto r = RunCli(OOMGUARD_EXE, {"split", "resnet50", "--global-batch", "8", "--gpus", "2",
                                 "--gpu", "rtx-3090", "--strategy", "fsdp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace oomguard
