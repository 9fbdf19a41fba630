// `oomguard watch` on real child processes (a few seconds each).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
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
  EXPECT_EQ(j["exit_reason"], "stopped_before_oom");
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

// A process that is not ours: `sleep 30` in a new session, as `setsid` makes it.
pid_t StartForeignSleep() {
  pid_t child = fork();
  if (child == 0) {
    setsid();
    execl("/bin/sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  return child;
}

bool Running(pid_t pid) {
  std::string stat = testing::ReadWholeFile("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] != 'Z';
}

// Issue 15.1: a signal sent to `watch --pid P` (timeout, systemd stop, ssh hang-up)
// ends the watch; P, which it only observes, is never signalled.
TEST(WatchCli, SignalToAPidWatchLeavesTheProcessAlone) {
  for (const char* sig : {"TERM", "HUP", "INT"}) {
    pid_t victim = StartForeignSleep();
    auto r = RunCli("/usr/bin/timeout", {"--preserve-status", "-s", sig, "1", OOMGUARD_EXE, "watch", "--interval",
                                         "0.1", "--json", "--pid", std::to_string(victim)});
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(Running(victim)) << "SIG" << sig << " to watch killed the watched process";
    kill(victim, SIGKILL);
    waitpid(victim, nullptr, 0);
    int signo = std::string(sig) == "TERM" ? SIGTERM : std::string(sig) == "HUP" ? SIGHUP : SIGINT;
    EXPECT_EQ(r.exit_code, 128 + signo) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["exit_reason"], "watch_interrupted");
    EXPECT_EQ(j["interrupted_by"], std::string("SIG") + sig);
    EXPECT_TRUE(j["signals_sent"].empty());
    EXPECT_TRUE(j["signals_forwarded"].empty());
    EXPECT_FALSE(j["stopped"].get<bool>());
    EXPECT_GE(j["samples"].get<int>(), 1);
  }
}

// A run we started gets SIGTERM passed on, and the report says so.
TEST(WatchCli, SignalToACommandWatchIsPassedOnAndReported) {
  // --foreground: timeout signals watch alone, not its whole process group (the run included).
  auto r = RunCli("/usr/bin/timeout", {"--foreground", "--preserve-status", "1", OOMGUARD_EXE, "watch",
                                       "--interval", "0.1", "--json", "--", "sleep", "30"});
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["exit_reason"], "run_exited");
  ASSERT_EQ(j["signals_forwarded"].size(), 1u) << r.out;
  EXPECT_EQ(j["signals_forwarded"][0].get<std::string>().rfind("SIGTERM at ", 0), 0u);
  EXPECT_EQ(j["signal"], SIGTERM);
  EXPECT_FALSE(j["stopped"].get<bool>());
}

// Issue 15.7: processes the run leaves behind are watched until they end.
TEST(WatchCli, WatchesWhatTheRunLeavesBehind) {
  auto r = RunCli(OOMGUARD_EXE, {"watch", "--interval", "0.1", "--json", "--", "sh", "-c",
                                 "(sleep 1.5; echo orphan done >&2) & exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["exit_status"], 3);
  EXPECT_EQ(j["exit_reason"], "run_exited");
  EXPECT_GE(j["processes_outlived_run"].get<int>(), 1);
  EXPECT_GE(j["duration_seconds"].get<double>(), 1.2);
  EXPECT_NE(r.err.find("orphan done"), std::string::npos) << r.err;
  // A signal to watch after the run's own process ended goes to what it left behind.
  r = RunCli("/usr/bin/timeout", {"--foreground", "--preserve-status", "1", OOMGUARD_EXE, "watch", "--interval", "0.1",
                                  "--json", "--", "sh", "-c", "sleep 60 & exit 0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["processes_outlived_run"], 1);
  ASSERT_EQ(j["signals_forwarded"].size(), 1u);
  EXPECT_LT(j["duration_seconds"].get<double>(), 5.0);
}

// Issue 15.7: the run's own exit status 1 or 2 is told apart from oomguard's.
TEST(WatchCli, ExitReasonTellsTheRunsStatusFromOomguards) {
  for (int code : {1, 2}) {
    auto r = RunCli(OOMGUARD_EXE, {"watch", "--interval", "0.1", "--json", "--", "sh", "-c",
                                   "exit " + std::to_string(code)});
    EXPECT_EQ(r.exit_code, code);
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["exit_reason"], "run_exited");
    EXPECT_FALSE(j["stopped"].get<bool>());
  }
}

// Issue 15.7: `kill -9` of watch does not leave the run running unobserved (PR_SET_PDEATHSIG).
TEST(WatchCli, RunEndsWhenWatchIsKilled) {
  std::string pid_file = TempPath("orphan_pid");
  std::remove(pid_file.c_str());
  pid_t watch = fork();
  if (watch == 0) {
    int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    std::string script = "echo $$ > " + pid_file + "; exec sleep 30";
    execl(OOMGUARD_EXE, OOMGUARD_EXE, "watch", "--", "sh", "-c", script.c_str(), nullptr);
    _exit(127);
  }
  int run = 0;
  for (int i = 0; i < 300 && run <= 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ifstream in(pid_file);
    in >> run;
  }
  ASSERT_GT(run, 0);
  kill(watch, SIGKILL);
  waitpid(watch, nullptr, 0);
  bool ended = false;
  for (int i = 0; i < 100 && !ended; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ended = !Running(run);
  }
  if (!ended) kill(run, SIGKILL);
  std::remove(pid_file.c_str());
  EXPECT_TRUE(ended) << "the run kept running after watch was killed";
}

// Runs `oomguard args...` with its stderr on a terminal (a pseudo-terminal in
// raw mode, so the bytes arrive as written) and its stdout in a file; returns
// what the terminal received in `err`.
testing::CliResult RunWithStderrOnTerminal(const std::vector<std::string>& args) {
  testing::CliResult r;
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return r;
  int slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) return r;
  termios raw{};
  tcgetattr(slave, &raw);
  cfmakeraw(&raw);
  tcsetattr(slave, TCSANOW, &raw);
  std::string out_path = TempPath("terminal_out");
  pid_t pid = fork();
  if (pid == 0) {
    int null_fd = open("/dev/null", O_RDONLY);
    int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(slave, 2);
    std::vector<char*> argv = {const_cast<char*>(OOMGUARD_EXE)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(OOMGUARD_EXE, argv.data());
    _exit(127);
  }
  close(slave);
  // Read until every holder of the terminal has closed it (EIO), at most 30 s.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) {
      r.err.append(buf, static_cast<size_t>(n));
    } else if (!(n < 0 && errno == EINTR)) {
      break;
    }
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = testing::ReadWholeFile(out_path);
  std::remove(out_path.c_str());
  return r;
}

// On a terminal the status line is cleared before the run's own stderr, whose
// bytes pass through intact; the run closing its stderr does not end the watch.
TEST(WatchCli, ClearsTheStatusLineBeforeTheRunsStderr) {
  const std::string first = "E1 \xc3\xa9\t\x01x\n";  // UTF-8, a tab and a control byte
  auto r = RunWithStderrOnTerminal(
      {"watch", "--interval", "0.1", "--", "sh", "-c",
       "readlink /proc/self/fd/2; sleep 1; printf 'E1 \\303\\251\\t\\001x\\n' >&2; sleep 0.3; "
       "printf partial >&2; sleep 0.3; printf ' end\\n' >&2; exec 2>&-; sleep 0.3; echo out-done"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The run's stderr was a pipe (not the terminal); its stdout went on as before.
  EXPECT_EQ(r.out.rfind("pipe:[", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("]\nout-done\n"), std::string::npos) << r.out;
  const std::string clear = "\r\033[2K";
  size_t at = r.err.find(first);
  ASSERT_NE(at, std::string::npos) << r.err;
  ASSERT_GE(at, clear.size());
  EXPECT_EQ(r.err.substr(at - clear.size(), clear.size()), clear) << r.err;
  // A status line was drawn before the run wrote, and is drawn again after.
  size_t status = r.err.rfind(clear + "watch ", at);
  ASSERT_NE(status, std::string::npos) << r.err;
  EXPECT_LT(r.err.find(clear + "watch 0s  "), status) << r.err;
  EXPECT_LT(r.err.find("collecting (1 of "), status) << r.err;  // until the slope means something
  EXPECT_EQ(r.err.find(clear + "watch ", at), at + first.size()) << r.err;
  // An unfinished line of the run is not overwritten: the status waits for its end.
  EXPECT_NE(r.err.find("partial end\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("oomguard watch: 'sh' exited with status 0"), std::string::npos) << r.err;
}

// Without a terminal nothing is drawn and the run's stderr is ours, inherited.
TEST(WatchCli, WithoutATerminalTheRunInheritsStderr) {
  auto r = RunCli(OOMGUARD_EXE, {"watch", "--interval", "0.1", "--", "sh", "-c", "readlink /proc/self/fd/2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("/tmp/oomguard_cli_", 0), 0u) << r.out;  // RunCli's file for our stderr
  EXPECT_NE(r.out.find("/err\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("\033[2K"), std::string::npos) << r.err;
}

TEST(WatchCli, BadInputExits2WithOneLine) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  std::string fifo = TempPath("plot_fifo");  // nobody reads it: opening it must not hang
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::vector<Case> cases = {
      {{"watch"}, "oomguard watch: nothing to watch: give a command after -- (oomguard watch -- python train.py) or --pid\n"},
      {{"watch", "--pid", "1", "--", "true"}, "oomguard watch: give either --pid or a command after --, not both\n"},
      {{"watch", "--", "/no/such/program"}, "oomguard watch: cannot run '/no/such/program': No such file or directory\n"},
      {{"watch", "--interval", "0", "--", "true"}, ""},
      {{"watch", "--host-limit", "lots", "--", "true"}, ""},
      {{"watch", "--csv", "/no/such/dir/x.csv", "--", "true"},
       "oomguard watch: cannot write /no/such/dir/x.csv: No such file or directory\n"},
      {{"watch", "--plot", fifo, "--", "true"}, "oomguard watch: cannot write " + fifo + ": No such device or address\n"},
      {{"watch", "--pid", "4194304"}, "oomguard watch: no process with pid 4194304\n"},
      {{"watch", "--pid", "999999999"}, "oomguard watch: --pid must be at most 4194304, got 999999999\n"},
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
  std::remove(fifo.c_str());
}

}  // namespace
}  // namespace oomguard::doctor
