// The command table: every subcommand with its one-line help and an example. main.cc dispatches on it;
// --help, completion and the man page are generated from it.
#include "commands.h"

namespace oomguard::cli {
namespace {

constexpr Subcommand kSubcommands[] = {
    {"plan", "predict a training step's memory from an ONNX model",
     "oomguard plan resnet50 --batch 64 --gpu rtx-3090 --optimizer adam --html plan.html", RunPlan},
    {"fit", "find the largest batch that fits a GPU", "oomguard fit model.onnx --gpu a100-40gb --reserve 1GiB",
     RunFit},
    {"split", "split a global batch over several GPUs",
     "oomguard split resnet50 --global-batch 256 --gpu-memory 24GiB,24GiB,11GiB --strategy ddp", RunSplit},
    {"models", "list the built-in model zoo", "oomguard models --json", RunModels},
    {"gpus", "list the built-in GPU catalog", "oomguard gpus", RunGpus},
    {"feed", "stream JPEG images under a hard host-memory budget",
     "oomguard feed /data/train --budget 2GiB --batch 64 --workers 4 --size 224x224", RunFeed},
    {"explain", "read an error log and say which memory ran out and why", "oomguard explain train.log --json",
     RunExplain},
    {"devices", "list GPUs and map CUDA ordinals to nvidia-smi indices", "CUDA_VISIBLE_DEVICES=1,0 oomguard devices",
     RunDevices},
    {"doctor", "check the driver stack and host memory settings", "oomguard doctor --json", RunDoctor},
    {"watch", "watch a run's memory and stop it before it runs out",
     "oomguard watch --stop-before-oom --plot run.svg -- python train.py", RunWatch},
    {"version", "print the version, git revision and dependency versions", "oomguard version --json", RunVersion},
    {"completion", "print a bash or zsh completion script", "source <(oomguard completion bash)", RunCompletion},
    {"man", "print the manual page (roff)", "oomguard man | man -l -", RunMan},
};

}  // namespace

std::span<const Subcommand> Subcommands() { return kSubcommands; }

}  // namespace oomguard::cli
