// The host side of `oomguard plan` and `fit` as a user sees it: flags, JSON, text, exit codes.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "run_cli_for_test.h"

namespace oomguard {
namespace {

using testing::RunCli;
const std::string kExe = OOMGUARD_EXE;

nlohmann::json Json(const testing::CliResult& r) { return nlohmann::json::parse(r.out); }

// The article: 5100 photos of 480x640 preloaded as float32 on a 16 GB machine; the GPU is fine.
const std::vector<std::string> kArticle = {"plan", "resnet18", "--batch", "32", "--memory", "24GiB",
                                           "--sample", "3x480x640:float32", "--dataset-in-memory", "5100",
                                           "--host-memory", "16GB"};

TEST(HostCli, WithoutHostFlagsThereIsNoHostSection) {
  auto r = RunCli(kExe, {"plan", "resnet18", "--batch", "4", "--memory", "24GiB", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = Json(r);
  EXPECT_FALSE(j.contains("host"));
  EXPECT_EQ(j["fits"], true);
}

TEST(HostCli, TheArticlesRunDoesNotFitOnTheHost) {
  std::vector<std::string> args = kArticle;
  args.push_back("--json");
  auto r = RunCli(kExe, args);
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "");
  nlohmann::json j = Json(r);
  EXPECT_EQ(j["fits"], false);                // either side short: false
  EXPECT_GT(j["headroom_bytes"].get<int64_t>(), 0);  // the device side fits
  const nlohmann::json& h = j["host"];
  EXPECT_EQ(h["fits"], false);
  EXPECT_EQ(h["held_bytes"], 18800640000ull);
  EXPECT_EQ(h["capacity_bytes"], 16000000000ull);
  EXPECT_EQ(h["sample"], "3x480x640:float32");
  for (const char* key : {"peak_bytes", "pinned_bytes", "baseline_bytes", "per_worker_bytes", "in_flight_bytes",
                          "held_bytes", "capacity_bytes", "fits", "advice"}) {
    EXPECT_TRUE(h.contains(key)) << key;
  }
  EXPECT_EQ(h["peak_bytes"].get<uint64_t>(),
            h["baseline_bytes"].get<uint64_t>() + h["cuda_runtime_bytes"].get<uint64_t>() +
                h["workers_bytes"].get<uint64_t>() + h["in_flight_bytes"].get<uint64_t>() +
                h["held_bytes"].get<uint64_t>() + h["preload_slack_bytes"].get<uint64_t>() +
                h["pinned_bytes"].get<uint64_t>());
  ASSERT_FALSE(h["advice"].empty());
  bool uint8_fits = false;
  for (const auto& a : h["advice"]) {
    EXPECT_EQ(a["saves_bytes"].get<uint64_t>(), h["peak_bytes"].get<uint64_t>() - a["peak_bytes"].get<uint64_t>());
    if (a["action"].get<std::string>().find("keep items as uint8") == 0) uint8_fits = a["fits"].get<bool>();
  }
  EXPECT_TRUE(uint8_fits);
}

TEST(HostCli, TextShowsBothSidesAndWhichRunsOutFirst) {
  auto r = RunCli(kExe, kArticle);
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("Host and device, side by side"), std::string::npos);
  EXPECT_NE(r.out.find("Verdict (host and device): DOES NOT FIT — the host runs out first"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("keep items as uint8"), std::string::npos);
}

TEST(HostCli, HtmlHasTheHostSection) {
  std::string path = ::testing::TempDir() + "/host_plan.html";
  std::vector<std::string> args = kArticle;
  args.insert(args.end(), {"--html", path});
  auto r = RunCli(kExe, args);
  ASSERT_EQ(r.exit_code, 1) << r.err;
  std::string html = testing::ReadWholeFile(path);
  EXPECT_NE(html.find("<h2>Host and device</h2>"), std::string::npos);
  EXPECT_NE(html.find("the host runs out first"), std::string::npos);
}

TEST(HostCli, TheSampleDefaultsToTheModelsInput) {
  auto r = RunCli(kExe, {"plan", "resnet18", "--batch", "4", "--loader-workers", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json(r)["host"]["sample"], "3x224x224:float32");
  EXPECT_EQ(Json(r)["host"]["capacity_bytes"].is_number(), true);  // this machine's MemTotal
  r = RunCli(kExe, {"plan", "resnet18", "--batch", "4", "--input", "input=3x128x96", "--queue", "10", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json(r)["host"]["sample"], "3x128x96:float32");
  EXPECT_EQ(Json(r)["host"]["held_bytes"], 10 * 3 * 128 * 96 * 4);
}

TEST(HostCli, TargetCpuCountsTheStepOnTheHost) {
  auto r = RunCli(kExe, {"plan", "resnet18", "--batch", "4", "--target", "cpu", "--loader-workers", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = Json(r);
  EXPECT_EQ(j["host"]["step_bytes"], j["required_bytes"]);
  EXPECT_EQ(j["host"]["cuda_runtime_bytes"], 0);
}

TEST(HostCli, FitCarriesTheHostSideAtTheAnswer) {
  auto r = RunCli(kExe, {"fit", "resnet18", "--memory", "8GiB", "--sample", "3x480x640:float32", "--dataset-in-memory",
                         "5100", "--host-memory", "16GB", "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  nlohmann::json j = Json(r);
  EXPECT_GE(j["max_batch"].get<int64_t>(), 1);
  EXPECT_EQ(j["host"]["fits"], false);
  EXPECT_EQ(j["fits"], false);
}

TEST(HostCli, BadHostInputIsOneLineAndExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--sample", "3x480"}, "oomguard plan: --sample '3x480': expected DIMS:DTYPE like 3x480x640:uint8\n"},
      {{"--sample", "3x0x4:uint8"}, "oomguard plan: --sample '3x0x4:uint8': DIMS must be positive integers like 3x480x640\n"},
      {{"--sample", "100000x100000x1000:float32"},
       "oomguard plan: --sample '100000x100000x1000:float32': one item would be more than 1.00 TiB; is a dimension "
       "mistyped?\n"},
      {{"--loader-workers", "-1"}, "oomguard plan: --loader-workers must be at least 0, got -1\n"},
      {{"--queue", "-3"}, "oomguard plan: --queue must be at least 0, got -3\n"},
      {{"--dataset-in-memory", "99999999999"}, "oomguard plan: --dataset-in-memory 99999999999 is absurdly large\n"},
      {{"--loader-workers", "2", "--prefetch-factor", "0"}, "oomguard plan: --prefetch-factor must be at least 1, got 0\n"},
      {{"--prefetch-factor", "4"},
       "oomguard plan: --prefetch-factor needs --loader-workers 1 or more (PyTorch refuses it with 0 workers)\n"},
      {{"--host-memory", "0"}, "oomguard plan: --host-memory must be more than 0 bytes\n"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = {"plan", "resnet18", "--batch", "4"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = RunCli(kExe, args);
    EXPECT_EQ(r.exit_code, 2) << extra[0];
    EXPECT_EQ(r.err, message);
    EXPECT_EQ(r.out, "");
  }
  auto r = RunCli(kExe, {"plan", "resnet18", "--batch", "4", "--loader-workers", "many"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = RunCli(kExe, {"plan", "resnet18", "--batch", "4", "--host-memory", "lots"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace oomguard
