#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

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

// Issue 14: --input takes at most 16 dimensions after the batch, and an empty
// --gpu is an error, not "no GPU given"; each is one line and exit 2.
TEST(Cli, InputDimensionsAreCappedAndAnEmptyGpuIsRefused) {
  std::string dims17 = "1";
  for (int i = 1; i < 17; ++i) dims17 += "x1";
  std::string dims50k = "1";  // one argument under the kernel's 128 KiB
  for (int i = 1; i < 50000; ++i) dims50k += ",1";
  const std::string empty_gpu = "must not be empty: name a GPU (oomguard gpus) or auto\n";
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"plan", "resnet18", "--batch", "2", "--input", "input=" + dims17},
       "oomguard plan: --input 'input=" + dims17 + "': at most 16 dimensions after the batch, got 17\n"},
      {{"plan", "resnet18", "--batch", "2", "--input", "input=" + dims50k},
       "oomguard plan: --input '" + ("input=" + dims50k).substr(0, 60) +
           "...': at most 16 dimensions after the batch, got 50000\n"},
      {{"fit", "resnet18", "--memory", "8GiB", "--input", "input=" + dims17}, ""},
      {{"plan", "resnet18", "--batch", "2", "--gpu", ""}, "oomguard plan: --gpu " + empty_gpu},
      {{"plan", "resnet18", "--batch", "2", "--gpu="}, "oomguard plan: --gpu: 1 required TEXT missing (see 'oomguard plan --help')\n"},
      {{"fit", "resnet18", "--gpu", ""}, "oomguard fit: --gpu " + empty_gpu},
      {{"split", "resnet18", "--global-batch", "8", "--gpus", "2", "--gpu", ""}, "oomguard split: --gpu " + empty_gpu},
  };
  for (const Case& c : cases) {
    auto r = RunCli(OOMGUARD_EXE, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args.back().substr(0, 40) << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err.substr(0, 300);
    EXPECT_TRUE(r.out.empty());
    if (!c.err.empty()) {
      EXPECT_EQ(r.err, c.err);
    } else {
      EXPECT_NE(r.err.find("at most 16 dimensions after the batch, got 17"), std::string::npos) << r.err;
    }
  }
  // Sixteen is allowed: the parser accepts it and the model then says it wants three.
  std::string dims16 = dims17.substr(2);
  auto r = RunCli(OOMGUARD_EXE, {"plan", "resnet18", "--batch", "2", "--input", "input=" + dims16});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("dimensions after the batch, got 16"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("at most 16"), std::string::npos) << r.err;
  // Not giving --gpu at all is still fine.
  r = RunCli(OOMGUARD_EXE, {"plan", "resnet18", "--batch", "2", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Issue 14: every command shows each default one way: "[default: X]" at the end
// of the option's --help line, "default": "X" in --help --json (null when there
// is none), the same in the man page, and in no other form.
TEST(Cli, EveryDefaultIsShownOneWay) {
  nlohmann::json top = nlohmann::json::parse(RunCli(OOMGUARD_EXE, {"--help", "--json"}).out);
  std::map<std::string, std::map<std::string, nlohmann::json>> defaults;  // command -> option -> default
  const std::regex number_in_parentheses(R"(\(\d+(\.\d+)?\))");
  ASSERT_GE(top["commands"].size(), 10u);
  for (const nlohmann::json& command : top["commands"]) {
    const std::string name = command["name"];
    auto text = RunCli(OOMGUARD_EXE, {name, "--help"});
    auto json = RunCli(OOMGUARD_EXE, {name, "--help", "--json"});
    ASSERT_EQ(text.exit_code, 0) << name;
    nlohmann::json help = nlohmann::json::parse(json.out);
    size_t with_default = 0;
    for (const nlohmann::json& o : help["options"]) {
      const std::string option = o["name"], description = o["help"];
      const std::string where = name + " " + option + ": " + description;
      EXPECT_EQ(Lower(description).find("default"), std::string::npos) << where;
      EXPECT_FALSE(std::regex_search(description, number_in_parentheses)) << where;
      ASSERT_TRUE(o.contains("default")) << where;
      defaults[name][option] = o["default"];
      if (o["default"].is_null()) continue;
      ASSERT_TRUE(o["default"].is_string()) << where;
      const std::string value = o["default"];
      EXPECT_FALSE(value.empty()) << where;
      ++with_default;
      EXPECT_NE(text.out.find(description + " [default: " + value + "]\n"), std::string::npos) << where << "\n"
                                                                                              << text.out;
      if (o["value"].is_string()) {  // CLI11's own form, "TEXT=adam", is gone
        EXPECT_EQ(text.out.find(o["value"].get<std::string>() + "=" + value), std::string::npos) << where;
      }
    }
    size_t shown = 0;
    for (size_t at = text.out.find("[default: "); at != std::string::npos; at = text.out.find("[default: ", at + 1)) {
      ++shown;
    }
    EXPECT_EQ(shown, with_default) << name << "\n" << text.out;
    EXPECT_EQ(Lower(text.out).find("(default"), std::string::npos) << name << "\n" << text.out;
  }
  // Options that have a default show it: each kind of option (bound to a
  // variable, a number, a default that is not a value) in each command.
  const std::vector<std::tuple<std::string, std::string, std::string>> expected = {
      {"plan", "--optimizer", "adam"},
      {"plan", "--optimizer-impl", "what PyTorch uses on the target"},
      {"plan", "--fraction", "1"},
      {"plan", "--prefetch-factor", "2"},
      {"fit", "--margin", "5"},
      {"fit", "--max-batch", "1000000"},
      {"fit", "--reserve", "0"},
      {"split", "--strategy", "ddp"},
      {"split", "--bucket-mib", "25"},
      {"feed", "--batch", "32"},
      {"feed", "--workers", "one per core"},
      {"feed", "--on-error", "skip"},
      {"watch", "--interval", "1"},
      {"watch", "--high-water", "0.9"},
      {"watch", "--host-limit", "its use + MemAvailable + SwapFree"},
  };
  for (const auto& [command, option, value] : expected) {
    ASSERT_TRUE(defaults[command].count(option)) << command << " " << option;
    EXPECT_EQ(defaults[command][option], value) << command << " " << option;
  }
  // Absent means "not given": no default to show.
  for (const auto& [command, option] : std::vector<std::pair<std::string, std::string>>{
           {"plan", "--gpu"}, {"plan", "--memory"}, {"watch", "--pid"}, {"watch", "--csv"}, {"feed", "--size"}}) {
    ASSERT_TRUE(defaults[command].count(option)) << command << " " << option;
    EXPECT_TRUE(defaults[command][option].is_null()) << command << " " << option;
  }
  auto man = RunCli(OOMGUARD_EXE, {"man"});
  EXPECT_NE(man.out.find("[default: adam]"), std::string::npos);
  EXPECT_NE(man.out.find("[default: one per core]"), std::string::npos);
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

// Issue 15.11: a 15 MiB fake-GPU file of 7.5 million values under a 200 MiB
// address-space limit is one line and exit 2, not an abort (134). Parsed
// whole, its document ran out of memory half built, and freeing that document
// allocates: whether the process aborted depended on where the limit fell
// (the binary's size moved it). ParseJsonBounded refuses it by its count.
TEST(Cli, HugeInputUnderAMemoryLimitIsOneLineNotAnAbort) {
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
  EXPECT_EQ(r.err, "oomguard devices: " + path + ": more than 65536 JSON values\n");
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
