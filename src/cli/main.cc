// oomguard: a table of subcommands, each with a one-line help; "did you mean"
// for typos. All work happens in the subcommands (cmd_*.cc).
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "common.h"
#include "oomguard/edit_distance.h"

namespace oomguard::cli {
namespace {

struct Subcommand {
  const char* name;
  const char* help;
  int (*run)(int argc, char** argv);
};

constexpr Subcommand kSubcommands[] = {
    {"plan", "predict a training step's memory from an ONNX model", RunPlan},
    {"fit", "find the largest batch that fits a GPU", RunFit},
    {"split", "split a global batch over several GPUs", RunSplit},
    {"models", "list the built-in model zoo", RunModels},
    {"gpus", "list the built-in GPU catalog", RunGpus},
    {"feed", "stream JPEG images under a hard host-memory budget", RunFeed},
    {"explain", "read an error log and say which memory ran out and why", RunExplain},
    {"devices", "list GPUs and map CUDA ordinals to nvidia-smi indices", RunDevices},
    {"doctor", "check the driver stack and host memory settings", RunDoctor},
    {"watch", "watch a run's memory and stop it before it runs out", RunWatch},
};

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "oomguard: end the guesswork around out-of-memory errors in deep-learning training\n\n"
               "usage: oomguard COMMAND [options]   (oomguard COMMAND --help for its options)\n\n"
               "commands:\n");
  for (const Subcommand& s : kSubcommands) std::fprintf(out, "  %-9s %s\n", s.name, s.help);
  std::fprintf(out,
               "\nEvery command takes --json. Exit status: 0 ok, 1 the answer is no "
               "(does not fit, a check failed, a run was stopped), 2 bad input.\n");
}

nlohmann::json UsageJson() {
  nlohmann::json commands = nlohmann::json::array();
  for (const Subcommand& s : kSubcommands) commands.push_back({{"name", s.name}, {"help", s.help}});
  return {{"usage", "oomguard COMMAND [options]"}, {"commands", commands},
          {"exit_status", {{"0", "ok"}, {"1", "the answer is no"}, {"2", "bad input"}}}};
}

// Runs a subcommand; an exception that escapes it (memory exhausted by a huge
// input, a library error) becomes one line on stderr and exit 2, not an abort.
int RunGuarded(const Subcommand& s, int argc, char** argv) {
  try {
    return s.run(argc, argv);
  } catch (const std::bad_alloc&) {
    PrintError(s.name, "out of memory: the input needs more memory than this process can get");
  } catch (const std::exception& e) {
    PrintError(s.name, std::string("internal error: ") + e.what());
  } catch (...) {
    PrintError(s.name, "internal error");
  }
  return kExitUsage;
}

}  // namespace

int Main(int argc, char** argv) {
  if (argc < 2) return UsageError("", "no command given (usage: oomguard COMMAND [options]; see 'oomguard --help')");
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    if (WantsJson(argc, argv)) {
      PrintJson(UsageJson());
    } else {
      PrintUsage(stdout);
    }
    return kExitOk;
  }
  if (name == "--version") {
    std::printf("oomguard 0.1.0\n");
    return kExitOk;
  }
  for (const Subcommand& s : kSubcommands) {
    if (name == s.name) {
      std::string program = std::string("oomguard ") + s.name;
      std::vector<char*> args(argv + 1, argv + argc);
      args[0] = program.data();
      return RunGuarded(s, static_cast<int>(args.size()), args.data());
    }
  }
  const Subcommand* best = nullptr;
  size_t best_distance = 3;  // suggest only close matches
  for (const Subcommand& s : kSubcommands) {
    size_t d = EditDistance(name, s.name);
    if (d < best_distance) {
      best_distance = d;
      best = &s;
    }
  }
  std::string message = "unknown command '" + std::string(name) + "'";
  if (best != nullptr) {
    message += ", did you mean '" + std::string(best->name) + "'?";
  } else {
    message += " (see 'oomguard --help')";
  }
  return UsageError("", message);
}

}  // namespace oomguard::cli

int main(int argc, char** argv) {
  try {
    return oomguard::cli::Main(argc, argv);
  } catch (const std::bad_alloc&) {
    oomguard::cli::PrintError("", "out of memory");
  } catch (...) {
    oomguard::cli::PrintError("", "internal error");
  }
  return oomguard::cli::kExitUsage;
}
