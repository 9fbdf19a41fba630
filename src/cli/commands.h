// The oomguard subcommands. Each takes the arguments after the subcommand name
// (argv[0] is "oomguard NAME") and returns the process exit status:
//   0 success, 1 the answer is "no" (does not fit, a check failed, a run was
//   stopped), 2 bad input or usage (one line on stderr).
#pragma once

#include <span>

namespace oomguard::cli {

// One row of the command table (main.cc): what --help, completion and the man page are made from.
struct Subcommand {
  const char* name;
  const char* help;     // one line
  const char* example;  // one typical call, shown under each command's --help
  int (*run)(int argc, char** argv);
};

// The command table, in the order `oomguard --help` lists it.
std::span<const Subcommand> Subcommands();

int RunPlan(int argc, char** argv);     // cmd_plan.cc
int RunFit(int argc, char** argv);      // cmd_fit.cc
int RunSplit(int argc, char** argv);    // cmd_split.cc
int RunModels(int argc, char** argv);   // cmd_models.cc
int RunGpus(int argc, char** argv);     // cmd_gpus.cc
int RunFeed(int argc, char** argv);     // cmd_feed.cc
int RunExplain(int argc, char** argv);  // cmd_explain.cc
int RunDevices(int argc, char** argv);  // cmd_devices.cc
int RunDoctor(int argc, char** argv);   // cmd_doctor.cc
int RunWatch(int argc, char** argv);    // cmd_watch.cc
int RunVersion(int argc, char** argv);     // cmd_version.cc
int RunCompletion(int argc, char** argv);  // cmd_completion.cc
int RunMan(int argc, char** argv);         // cmd_completion.cc

}  // namespace oomguard::cli
