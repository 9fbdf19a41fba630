#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli_for_test.h"

namespace oomguard {
namespace {

using testing::RunCli;

// Issue 15.9: bad input is one line on stderr.
TEST(Cli, NoArgumentsIsOneLineAndExits2) {
  auto r = RunCli(OOMGUARD_EXE, {});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard: no command given (usage: oomguard COMMAND [options]; see 'oomguard --help')\n");
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

const std::vector<std::string> kCommands = {"plan",    "fit",    "split",   "models",     "gpus",
                                           "feed",    "explain", "devices", "doctor",    "watch",
                                           "version", "completion", "man"};

int Lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// Issue 15.9: --json is JSON, --help included.
TEST(Cli, HelpWithJsonIsJson) {
  auto r = RunCli(OOMGUARD_EXE, {"--help", "--json"});
  EXPECT_EQ(r.exit_code, 0);
  nlohmann::json top = nlohmann::json::parse(r.out);
  EXPECT_EQ(top["commands"].size(), kCommands.size());
  for (const std::string& command : kCommands) {
    for (const std::vector<std::string>& args : {std::vector<std::string>{command, "--help", "--json"},
                                                 std::vector<std::string>{command, "--json", "--help"}}) {
      r = RunCli(OOMGUARD_EXE, args);
      EXPECT_EQ(r.exit_code, 0) << command;
      nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << command << ": " << r.out.substr(0, 200);
      EXPECT_TRUE(j["options"].is_array()) << command;
      EXPECT_TRUE(r.err.empty()) << r.err;
    }
  }
}

// Issue 15.6: one parser for every numeric and list flag; each refusal is one
// line naming the flag, with numbers written compactly.
TEST(Cli, HostileNumbersAreRefusedInOneLine) {
  std::string many_sizes = "1GiB";
  for (int i = 1; i < 4097; ++i) many_sizes += ",1GiB";
  struct Case {
    std::vector<std::string> args;
    std::string err;  // the whole stderr, or "" for a prefix check only
  };
  const std::vector<Case> cases = {
      {{"feed", "/tmp", "--budget", "1MiB", "--step-ms", "1e300"},
       "oomguard feed: --step-ms must be a number like 12 or 0.5, got '1e300'\n"},
      {{"feed", "/tmp", "--budget", "1MiB", "--step-ms", "99999999999999999999"},
       "oomguard feed: --step-ms must be at most 3600000, got 99999999999999999999\n"},
      {{"feed", "/tmp", "--budget", "1MiB", "--workers", "4294967295"},
       "oomguard feed: --workers must be at most 256, got 4294967295\n"},
      {{"feed", "/tmp", "--budget", "1MiB", "--batch", "0x10"},
       "oomguard feed: --batch must be a whole number like 12, got '0x10'\n"},
      {{"feed", "/tmp", "--budget", "1MiB", "--seed", ""}, "oomguard feed: --seed must not be empty\n"},
      {{"plan", "resnet18", "--batch", "2", "--fraction", "nan"},
       "oomguard plan: --fraction must be a number like 12 or 0.5, got 'nan'\n"},
      {{"plan", "resnet18", "--batch", "2", "--fraction", "2"}, "oomguard plan: --fraction must be at most 1, got 2\n"},
      {{"plan", "resnet18", "--batch", ""}, "oomguard plan: --batch must not be empty\n"},
      {{"plan", "resnet18", "-b", "99999999999999999999"},
       "oomguard plan: --batch must be at most 1099511627776, got 99999999999999999999\n"},
      {{"fit", "resnet18", "--memory", "1GiB", "--margin", "inf"},
       "oomguard fit: --margin must be a number like 12 or 0.5, got 'inf'\n"},
      {{"fit", "resnet18", "--memory", "1GiB", "--max-batch", "-1"},
       "oomguard fit: --max-batch must be at least 1, got -1\n"},
      {{"split", "resnet18", "--global-batch", "8", "--gpus", "4097", "--gpu", "rtx-3090"},
       "oomguard split: --gpus must be at most 4096, got 4097\n"},
      {{"split", "resnet18", "--global-batch", "8", "--gpu-memory", many_sizes},
       "oomguard split: --gpu-memory: more than 4096 entries in the list\n"},
      {{"split", "resnet18", "--global-batch", "8", "--gpu-memory", "1GiB,,1GiB"},
       "oomguard split: --gpu-memory: empty byte count\n"},
      {{"split", "resnet18", "--global-batch", "8", "--gpus", "2", "--gpu", "rtx-3090", "--bucket-mib", "1e300"},
       "oomguard split: --bucket-mib must be a number like 12 or 0.5, got '1e300'\n"},
      {{"watch", "--interval", "nan", "--", "true"}, "oomguard watch: --interval: not a duration in seconds: 'nan'\n"},
      {{"watch", "--interval", "", "--", "true"}, "oomguard watch: --interval: not a duration in seconds: ''\n"},
      {{"watch", "--window", "99999999999999999999", "--", "true"},
       "oomguard watch: --window: duration too long: '99999999999999999999' (at most 2592000 s)\n"},
      {{"watch", "--high-water", "0x1", "--", "true"},
       "oomguard watch: --high-water must be a number like 12 or 0.5, got '0x1'\n"},
      {{"watch", "--pid", "0"}, "oomguard watch: --pid must be at least 1, got 0\n"},
      {{"watch", "--pid", "-1"}, "oomguard watch: --pid must be at least 1, got -1\n"},
      {{"watch", "--host-limit", "", "--", "true"}, ""},
      {{"watch", "--csv", "", "--", "true"}, "oomguard watch: --csv needs a file name\n"},
      {{"feed", "/tmp", "--budget", "1MiB", "--size", ""},
       "oomguard feed: bad size '': use WxH with 1..65535 pixels each, e.g. 224x224\n"},
  };
  for (const Case& c : cases) {
    auto r = RunCli(OOMGUARD_EXE, c.args);
    std::string what = c.args[0] + " " + c.args[c.args.size() - 2].substr(0, 20);
    EXPECT_EQ(r.exit_code, 2) << what << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << what << ": " << r.err;
    EXPECT_LT(r.err.size(), 300u) << what;
    EXPECT_TRUE(r.out.empty()) << what;
    if (!c.err.empty()) {
      EXPECT_EQ(r.err, c.err) << what;
    } else {
      EXPECT_EQ(r.err.rfind("oomguard " + c.args[0] + ": ", 0), 0u) << r.err;
    }
  }
}

// Issue 15.10: every file read is bounded: /dev/zero, a FIFO nobody writes
// and a directory end at once with one line, never a hang.
TEST(Cli, SpecialFilesAreRefusedNotRead) {
  std::string fifo = "/tmp/oomguard_cli_fifo_" + std::to_string(getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo, std::string("/tmp")}) {
    for (const char* command : {"devices", "doctor"}) {
      auto r = RunCli("/usr/bin/timeout", {"10", OOMGUARD_EXE, command}, "", {"OOMGUARD_FAKE_GPUS=" + path});
      EXPECT_EQ(r.exit_code, 2) << command << " " << path << ": " << r.err;
      EXPECT_EQ(Lines(r.err), 1) << r.err;
      EXPECT_NE(r.err.find(path + ": not a regular file"), std::string::npos) << r.err;
    }
  }
  for (const std::string& device : {std::string("/dev/zero"), std::string("/dev/urandom")}) {
    auto r = RunCli("/usr/bin/timeout", {"10", OOMGUARD_EXE, "explain", device});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "oomguard explain: '" + device + "' is a device, not a log file\n");
  }
  std::string root = "/tmp/oomguard_cli_root_" + std::to_string(getpid());
  mkdir(root.c_str(), 0700);
  ASSERT_EQ(mkfifo((root + "/fake.json").c_str(), 0600), 0);
  auto r = RunCli("/usr/bin/timeout", {"10", OOMGUARD_EXE, "doctor"}, "", {"OOMGUARD_FAKE_ROOT=" + root});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "oomguard doctor: " + root + "/fake.json: not a regular file\n");
  std::remove((root + "/fake.json").c_str());
  rmdir(root.c_str());
  std::remove(fifo.c_str());
}

// Issue 15.11: an exception that escapes a command (here: memory exhausted
// parsing a 15 MiB fake-GPU file under a 200 MiB address-space limit) is one
// line and exit 2, not an abort (134).
TEST(Cli, OutOfMemoryIsOneLineNotAnAbort) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer reserves more address space than the limit";
#else
  std::string path = "/tmp/oomguard_cli_big_" + std::to_string(getpid()) + ".json";
  {
    std::ofstream out(path);
    out << "{\"gpus\": [";
    for (int i = 0; i < 7'500'000; ++i) out << (i ? ",0" : "0");
    out << "]}";
  }
  auto r = RunCli("/bin/sh", {"-c", std::string("ulimit -v 200000; exec ") + OOMGUARD_EXE + " devices"}, "",
                  {"OOMGUARD_FAKE_GPUS=" + path});
  std::remove(path.c_str());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "oomguard devices: out of memory: the input needs more memory than this process can get\n");
#endif
}


// Issue 14.4: --version, version --json, an example in every --help, completion and man page from the table.
TEST(Cli, VersionNamesTheRevisionAndDependencies) {
  auto r = RunCli(OOMGUARD_EXE, {"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("oomguard 0.", 0), 0u) << r.out;
  r = RunCli(OOMGUARD_EXE, {"version", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["git_revision"].get<std::string>().empty());
  for (const char* dep : {"onnx", "protobuf", "cli11", "nlohmann_json", "re2", "turbojpeg"}) {
    EXPECT_TRUE(j["dependencies"].contains(dep)) << dep;
  }
}

TEST(Cli, EveryCommandsHelpShowsAnExample) {
  for (const std::string& name : kCommands) {
    auto r = RunCli(OOMGUARD_EXE, {name, "--help"});
    EXPECT_EQ(r.exit_code, 0) << name;
    size_t at = r.out.find("Example:\n  oomguard ");
    if (at == std::string::npos) at = r.out.find("Example:\n  CUDA_VISIBLE_DEVICES");
    if (at == std::string::npos) at = r.out.find("Example:\n  source <(oomguard");
    EXPECT_NE(at, std::string::npos) << name << ":\n" << r.out;
    auto j = RunCli(OOMGUARD_EXE, {name, "--help", "--json"});
    EXPECT_TRUE(nlohmann::json::parse(j.out).contains("example")) << name;
  }
}

TEST(Cli, CompletionCoversEveryCommandAndItsOptions) {
  auto r = RunCli(OOMGUARD_EXE, {"completion", "bash"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("complete -o default -F _oomguard oomguard"), std::string::npos);
  EXPECT_NE(r.out.find("plan) opts=\"--help --batch "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--stop-before-oom"), std::string::npos);
  EXPECT_NE(r.out.find("--budget"), std::string::npos);
  auto z = RunCli(OOMGUARD_EXE, {"completion", "zsh"});
  EXPECT_EQ(z.out.rfind("#compdef oomguard\n", 0), 0u);
  auto bad = RunCli(OOMGUARD_EXE, {"completion", "fish"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1);
  // The script is valid bash: bash -n parses it.
  std::string path = ::testing::TempDir() + "/oomguard_completion.bash";
  std::ofstream(path) << r.out;
  EXPECT_EQ(std::system(("bash -n " + path).c_str()), 0);
}

TEST(Cli, ManPageDocumentsEveryCommand) {
  auto r = RunCli(OOMGUARD_EXE, {"man"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(".TH OOMGUARD 1", 0), 0u);
  for (const char* name : {"plan", "fit", "split", "feed", "explain", "doctor", "watch"}) {
    EXPECT_NE(r.out.find(std::string(".SS ") + name + "\n"), std::string::npos) << name;
  }
  EXPECT_NE(r.out.find(".SH EXIT STATUS"), std::string::npos);
  EXPECT_NE(r.out.find("\\-\\-stop\\-before\\-oom"), std::string::npos);
}

}  // namespace
}  // namespace oomguard
