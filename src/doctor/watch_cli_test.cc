// `oomguard watch` on real child processes (a few seconds each).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "run_cli_for_test.h"

namespace oomguard::doctor {
namespace {

using testing::RunCli;
constexpr double kMiB = 1 << 20;
// A helper that starts in a millisecond and grows on a wall-clock schedule
// (memory_hog_for_test.cc); Python's own start-up would look like growth.
const char* kHog = MEMORY_HOG_EXE;

std::string TempPath(const std::string& name) {
  return "/tmp/oomguard_watch_test_" + std::to_string(getpid()) + "_" + name;
}

TEST(WatchCli, StopsALeakBeforeTheHostLimit) {
  std::string csv = TempPath("leak.csv"), svg = TempPath("leak.svg");
  auto r = RunCli(OOMGUARD_EXE, {"watch", "--interval", "0.1", "--host-limit", "512MiB", "--stop-before-oom",
                                 "--json", "--csv", csv, "--plot", svg, "--", kHog, "leak", "20", "100"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["stopped"].get<bool>());
  EXPECT_EQ(j["verdict"], "stopped_before_oom");
  EXPECT_EQ(j["signals_sent"][0].get<std::string>().rfind("SIGINT at ", 0), 0u);
  EXPECT_LT(j["peak_host_bytes"].get<uint64_t>(), 512ull << 20);
  // The reported rate is within 20% of the rate the run itself measured (nominally 200 MiB/s;
  // on a loaded machine the child may fall behind its schedule).
  double rate = j["host_growth_bytes_per_second"].get<double>();
  size_t at = r.err.find("grew ");
  ASSERT_NE(at, std::string::npos) << r.err;
  double actual = std::atof(r.err.c_str() + at + 5);
  EXPECT_NEAR(rate, actual, 0.2 * actual) << rate / kMiB << " MiB/s reported, " << actual / kMiB << " MiB/s actual";
  EXPECT_GT(actual, 5 * kMiB);  // it did leak (a loaded machine may fall well behind 200 MiB/s)
  EXPECT_TRUE(j["host_growth_bytes_per_second"].is_number_integer());
  EXPECT_TRUE(j["predicted_seconds_to_limit"].is_number());
  EXPECT_EQ(j["host_limit_bytes"], 512ull << 20);
  // The run caught SIGINT, "saved a checkpoint" (on stderr: --json moves its stdout there) and exited 0.
  EXPECT_EQ(j["exit_status"], 0);
  EXPECT_NE(r.err.find("checkpoint saved after "), std::string::npos) << r.err;
  std::string csv_text = testing::ReadWholeFile(csv);
  EXPECT_EQ(std::count(csv_text.begin(), csv_text.end(), '\n'), j["samples"].get<long>() + 1);
  std::string svg_text = testing::ReadWholeFile(svg);
  EXPECT_NE(svg_text.find("class=\"prediction\""), std::string::npos);
  EXPECT_NE(svg_text.find("host limit 512.00 MiB"), std::string::npos);
  std::remove(csv.c_str());
  std::remove(svg.c_str());
}

TEST(WatchCli, ReadsStepsFromTheRunsOutput) {
  auto r = RunCli(OOMGUARD_EXE, {"watch", "--interval", "0.1", "--host-limit", "512MiB", "--stop-before-oom",
                                 "--steps", "--json", "--", kHog, "leak", "20", "100", "steps"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);  // stdout holds only the JSON
  EXPECT_GE(j["last_step"].get<long>(), 5);
  // One step per 20 MiB chunk: the step rate follows the run's own measured growth rate
  // (10 steps/s on schedule; fewer when a loaded machine slows it down).
  size_t at = r.err.find("grew ");
  ASSERT_NE(at, std::string::npos) << r.err;
  double chunks_per_second = std::atof(r.err.c_str() + at + 5) / (20 * kMiB);
  EXPECT_NEAR(j["steps_per_second"].get<double>(), chunks_per_second, 0.3 * chunks_per_second);
  EXPECT_GT(j["predicted_step_at_limit"].get<long>(), j["last_step"].get<long>());
  EXPECT_LT(j["predicted_step_at_limit"].get<long>(), 40);  // 512 MiB / 20 MiB per step = step ~26
  EXPECT_NE(r.err.find("step 3 loss 0.5\n"), std::string::npos);  // passed through to stderr
}

TEST(WatchCli, WarmUpThenPlateauIsNotFlagged) {
  // Warm-up: 5 x 10 MiB in 0.25 s (a few seconds on a badly loaded machine), then 5 s flat. At
  // 0.5 s the first verdict (10 samples) comes at ~4.5 s, after the warm-up.
  auto r = RunCli(OOMGUARD_EXE, {"watch", "--interval", "0.5", "--host-limit", "512MiB", "--stop-before-oom",
                                 "--json", "--", kHog, "plateau", "10", "50", "5", "5000"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["stopped"].get<bool>());
  EXPECT_EQ(j["verdict"], "no_sustained_growth");
  EXPECT_GT(j["peak_host_bytes"].get<uint64_t>(), 50ull << 20);
  EXPECT_TRUE(j["predicted_seconds_to_limit"].is_null());
  EXPECT_EQ(j["exit_status"], 0);
}

TEST(WatchCli, CrashEndsTheWatchWithItsStatus) {
  auto r = RunCli(OOMGUARD_EXE, {"watch", "--interval", "0.1", "--json", "--", "sh", "-c", "sleep 0.3; kill -SEGV $$"});
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["exit_status"], 128 + SIGSEGV);
  EXPECT_EQ(j["signal"], SIGSEGV);
  EXPECT_FALSE(j["stopped"].get<bool>());
  EXPECT_GE(j["samples"].get<int>(), 1);
  // Without --json: the report is on stderr, the exit status is the run's.
  r = RunCli(OOMGUARD_EXE, {"watch", "--interval", "0.1", "--", "sh", "-c", "echo hello; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "hello\n");
  EXPECT_NE(r.err.find("oomguard watch: 'sh' exited with status 3 after"), std::string::npos) << r.err;
}

TEST(WatchCli, RunKilledFromOutside) {
  std::string pid_file = TempPath("pid");
  std::remove(pid_file.c_str());
  std::thread killer([&] {
    for (int i = 0; i < 200; ++i) {
      std::ifstream in(pid_file);
      int pid = 0;
      if (in >> pid && pid > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        kill(pid, SIGKILL);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  auto r = RunCli(OOMGUARD_EXE, {"watch", "--interval", "0.1", "--json", "--", "sh", "-c",
                                 "echo $$ > " + pid_file + "; exec sleep 30"});
  killer.join();
  std::remove(pid_file.c_str());
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["signal"], SIGKILL);
  EXPECT_FALSE(j["stopped"].get<bool>());
  EXPECT_EQ(j["verdict"], "too_few_samples");
}

TEST(WatchCli, AttachesToAPid) {
  pid_t child = fork();
  if (child == 0) {
    execl("/bin/sleep", "sleep", "2", nullptr);  // long enough for a slow (sanitizer) start of oomguard
    _exit(127);
  }
  auto r = RunCli(OOMGUARD_EXE, {"watch", "--interval", "0.1", "--json", "--pid", std::to_string(child)});
  waitpid(child, nullptr, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["exit_status"].is_null());  // not our child: its status cannot be known
  EXPECT_EQ(j["watched"], "pid " + std::to_string(child));
  EXPECT_GE(j["samples"].get<int>(), 3);
}

TEST(WatchCli, BadInputExits2WithOneLine) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  std::vector<Case> cases = {
      {{"watch"}, "oomguard watch: nothing to watch: give a command after -- (oomguard watch -- python train.py) or --pid\n"},
      {{"watch", "--pid", "1", "--", "true"}, "oomguard watch: give either --pid or a command after --, not both\n"},
      {{"watch", "--", "/no/such/program"}, "oomguard watch: cannot run '/no/such/program': No such file or directory\n"},
      {{"watch", "--interval", "0", "--", "true"}, ""},
      {{"watch", "--host-limit", "lots", "--", "true"}, ""},
      {{"watch", "--csv", "/no/such/dir/x.csv", "--", "true"}, "oomguard watch: cannot write /no/such/dir/x.csv\n"},
      {{"watch", "--pid", "999999999"}, "oomguard watch: no process with pid 999999999\n"},
  };
  for (const Case& c : cases) {
    auto r = RunCli(OOMGUARD_EXE, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args.back();
    EXPECT_TRUE(r.out.empty()) << r.out;
    if (!c.err.empty()) {
      EXPECT_EQ(r.err, c.err);
    } else {
      EXPECT_EQ(r.err.rfind("oomguard watch: ", 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
}

}  // namespace
}  // namespace oomguard::doctor
