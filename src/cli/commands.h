// The oomguard subcommands. Each takes the arguments after the subcommand name
// (argv[0] is "oomguard NAME") and returns the process exit status:
//   0 success, 1 the answer is "no" (does not fit, a check failed, a run was
//   stopped), 2 bad input or usage (one line on stderr).
#pragma once

namespace oomguard::cli {

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

}  // namespace oomguard::cli
