// The `oomguard explain` command as a user runs it: exit codes, one-line
// errors, JSON on stdout only, and the seed log's report word for word.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_cli_for_test.h"

namespace {

using oomguard::testing::ReadWholeFile;
using oomguard::testing::RunCli;

const std::string kExe = OOMGUARD_EXE;
const std::string kData = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/explain/";

TEST(ExplainCli, SeedLogFromStdinWordForWord) {
  auto r = RunCli(kExe, {"explain"}, ReadWholeFile(kData + "seed_log.txt"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, ReadWholeFile(kData + "golden/seed_log.expected"));
  EXPECT_EQ(r.err, "");
}

TEST(ExplainCli, FileArgumentNamesTheSource) {
  auto r = RunCli(kExe, {"explain", kData + "seed_log.txt"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("1 finding in " + kData + "seed_log.txt (10 lines), most important first\n", 0), 0u) << r.out;
}

TEST(ExplainCli, JsonOnStdoutOnly) {
  auto r = RunCli(kExe, {"explain", "--json", "-"}, ReadWholeFile(kData + "seed_log.txt"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["findings"][0]["cause"], "host_pinned_oom");
  EXPECT_EQ(j["findings"][0]["numbers"]["requested_bytes"], 8589934592u);
}

TEST(ExplainCli, EmptyInputIsNoProblem) {
  auto r = RunCli(kExe, {"explain"}, "");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "no memory problem found in stdin (0 lines)\n");
  auto j = RunCli(kExe, {"explain", "--json"}, "");
  EXPECT_EQ(j.exit_code, 0);
  EXPECT_TRUE(nlohmann::json::parse(j.out)["findings"].empty());
}

TEST(ExplainCli, MissingFileIsOneLineAndExit2) {
  auto r = RunCli(kExe, {"explain", "/nonexistent/train.log"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard explain: cannot open '/nonexistent/train.log': No such file or directory\n");
  EXPECT_EQ(r.out, "");
}

TEST(ExplainCli, DirectoryIsOneLineAndExit2) {
  auto r = RunCli(kExe, {"explain", "/tmp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard explain: '/tmp' is a directory, not a log file\n");
}

TEST(ExplainCli, UnreadableFileIsOneLineAndExit2) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads any file";
  std::string path = "/tmp/oomguard_explain_unreadable_" + std::to_string(getpid());
  std::ofstream(path) << "Killed\n";
  chmod(path.c_str(), 0);
  auto r = RunCli(kExe, {"explain", path});
  std::remove(path.c_str());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard explain: cannot open '" + path + "': Permission denied\n");
}

TEST(ExplainCli, UnknownFlagIsExit2) {
  auto r = RunCli(kExe, {"explain", "--jsn"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("oomguard explain: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(ExplainCli, HereAddsThisMachine) {
  auto r = RunCli(kExe, {"explain", "--json", "--here"}, "Killed\n");
  EXPECT_EQ(r.exit_code, 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("here"));
  EXPECT_GT(j["here"]["ram_total_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["findings"][0]["cause"], "host_ram_oom");
}

TEST(ExplainCli, EnvironmentExpandableSegmentsIsRespected) {
  std::string log =
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of "
      "23.65 GiB of which 1.66 GiB is free. Including non-PyTorch memory, this process has 20.81 GiB memory in use. "
      "Of the allocated memory 12.09 GiB is allocated by PyTorch, and 4.84 GiB is reserved by PyTorch but "
      "unallocated.\n";
  auto with = RunCli(kExe, {"explain"}, log, {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"});
  EXPECT_EQ(with.out.find("Set PYTORCH_CUDA_ALLOC_CONF"), std::string::npos);
  EXPECT_NE(with.out.find("already on"), std::string::npos);
  auto without = RunCli(kExe, {"explain"}, log, {"PYTORCH_CUDA_ALLOC_CONF="});
  EXPECT_NE(without.out.find("Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"), std::string::npos);
}

}  // namespace
