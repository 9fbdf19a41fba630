// Word for word: the human report for the article's log and three others
// (tests/data/explain/golden/NAME.log -> NAME.expected), and the JSON shape.
#include "oomguard/explain/report_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "oomguard/explain/explainer.h"
#include "report_json.h"

namespace oomguard::explain {
namespace {

std::string Golden(const std::string& name) {
  std::ifstream in(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/explain/golden/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Explained(const std::string& path) {
  Result<Report> r = ExplainFile(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/explain/" + path);
  EXPECT_TRUE(r.ok());
  return r.ok() ? FormatReport(*r, "stdin") : "";
}

TEST(ReportFormat, SeedLogWordForWord) {
  EXPECT_EQ(Explained("seed_log.txt"), Golden("seed_log.expected"));
}

TEST(ReportFormat, PyTorchOtherProcessAcrossRanksWordForWord) {
  EXPECT_EQ(Explained("golden/torch_other_process.log"), Golden("torch_other_process.expected"));
}

TEST(ReportFormat, DataLoaderBusErrorWithCrlfWordForWord) {
  EXPECT_EQ(Explained("golden/dataloader_bus_error.log"), Golden("dataloader_bus_error.expected"));
}

TEST(ReportFormat, TensorFlowWindowsLogWithWarningAndFailureWordForWord) {
  EXPECT_EQ(Explained("golden/tf_windows_gpu_full.log"), Golden("tf_windows_gpu_full.expected"));
}

TEST(ReportFormat, NothingFound) {
  Report r = ExplainText("all good\n");
  EXPECT_EQ(FormatReport(r, "train.log"), "no memory problem found in train.log (1 line)\n");
}

TEST(ReportFormat, JsonCarriesTheContract) {
  Result<Report> r = ExplainFile(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/explain/seed_log.txt");
  ASSERT_TRUE(r.ok());
  nlohmann::json j = ReportToJson(*r, "seed_log.txt");
  ASSERT_EQ(j["findings"].size(), 1u);
  const nlohmann::json& f = j["findings"][0];
  EXPECT_EQ(f["cause"], "host_pinned_oom");
  EXPECT_EQ(f["domain"], "host");
  EXPECT_EQ(f["framework"], "tensorflow");
  EXPECT_TRUE(f["numbers"]["requested_bytes"].is_number_unsigned());
  EXPECT_EQ(f["numbers"]["requested_bytes"], 8589934592u);
  EXPECT_EQ(f["numbers"]["last_attempt_bytes"], 5635855360u);
  EXPECT_EQ(f["evidence"].size(), f["evidence_lines"].size());
  EXPECT_TRUE(f["advice"].is_array());
  EXPECT_TRUE(f["alternatives"].empty());
  EXPECT_TRUE(f["undecided_because"].is_null());
  EXPECT_EQ(j["lines"], 10u);
}

TEST(ReportFormat, JsonIsValidUtf8ForGarbageEvidence) {
  Report r = ExplainText("RuntimeError: CUDA error: out of memory \xff\xfe\x80 \xe6\x98\n");
  nlohmann::json j = ReportToJson(r, "x");
  EXPECT_NO_THROW(j.dump());
  EXPECT_EQ(j["findings"][0]["evidence"][0], "RuntimeError: CUDA error: out of memory ??? ??");
}

TEST(ReportFormat, HereFactsArePrinted) {
  ExplainOptions options;
  HereFacts here;
  here.ram_total_bytes = 16ull << 30;
  here.ram_available_bytes = 4ull << 30;
  here.swap_total_bytes = 0;
  here.shm_total_bytes = 64ull << 20;
  options.here = here;
  Report r = ExplainText("", options);
  EXPECT_EQ(FormatReport(r, "stdin"),
            "no memory problem found in stdin (0 lines)\n\nthis machine: RAM 16.00 GiB (4.00 GiB available), swap "
            "0 B, /dev/shm 64.00 MiB, memlock unlimited, NVIDIA driver none\n");
  nlohmann::json j = ReportToJson(r, "stdin");
  EXPECT_EQ(j["here"]["shm_total_bytes"], 64ull << 20);
  EXPECT_TRUE(j["here"]["memlock_limit_bytes"].is_null());
}

}  // namespace
}  // namespace oomguard::explain
