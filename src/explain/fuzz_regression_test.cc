// Inputs the explainer fuzzer once crashed on: each must explain and serialize.
#include <gtest/gtest.h>

#include <filesystem>

#include "oomguard/explain/explainer.h"
#include "report_json.h"

namespace oomguard::explain {
namespace {

TEST(FuzzRegressions, EveryStoredCrashNowSerializes) {
  const std::filesystem::path dir = std::filesystem::path(OOMGUARD_SOURCE_DIR) / "src/explain/fuzz_regressions";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    Result<Report> report = ExplainFile(entry.path().string());
    ASSERT_TRUE(report.ok()) << entry.path();
    EXPECT_NO_THROW((void)ReportToJson(*report, entry.path().string()).dump()) << entry.path();
    EXPECT_FALSE(report->findings.empty()) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 1);
}

}  // namespace
}  // namespace oomguard::explain
