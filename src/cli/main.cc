// oomguard: a table of subcommands, each with a one-line help; "did you mean"
// for typos. All work happens in the subcommands (cmd_*.cc).
#include <algorithm>
#include <cstdio>
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

}  // namespace

int Main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return kExitUsage;
  }
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(stdout);
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
      return s.run(static_cast<int>(args.size()), args.data());
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

int main(int argc, char** argv) { return oomguard::cli::Main(argc, argv); }
