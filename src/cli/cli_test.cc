#include <gtest/gtest.h>

#include "run_cli_for_test.h"

namespace oomguard {
namespace {

using testing::RunCli;

TEST(Cli, NoArgumentsPrintsUsageAndExits2) {
  auto r = RunCli(OOMGUARD_EXE, {});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("usage: oomguard COMMAND"), std::string::npos);
  EXPECT_TRUE(r.out.empty());
}

TEST(Cli, HelpListsEveryCommand) {
  auto r = RunCli(OOMGUARD_EXE, {"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name : {"plan", "fit", "split", "models", "gpus", "feed", "explain", "devices",
                           "doctor", "watch"}) {
    EXPECT_NE(r.out.find(std::string("  ") + name + " "), std::string::npos) << name;
  }
}

TEST(Cli, TypoSuggestsNearestCommand) {
  auto r = RunCli(OOMGUARD_EXE, {"pland"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard: unknown command 'pland', did you mean 'plan'?\n");
  r = RunCli(OOMGUARD_EXE, {"doctr"});
  EXPECT_EQ(r.err, "oomguard: unknown command 'doctr', did you mean 'doctor'?\n");
}

TEST(Cli, FarFromAnyCommandGetsNoSuggestion) {
  auto r = RunCli(OOMGUARD_EXE, {"xyzzyq"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard: unknown command 'xyzzyq' (see 'oomguard --help')\n");
}

}  // namespace
}  // namespace oomguard
