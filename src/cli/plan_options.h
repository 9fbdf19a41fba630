// The options shared by `plan`, `fit` and `split`: MODEL, --batch, --optimizer,
// --optimizer-impl, --precision, --loss, --target, --gpu, --memory, --fraction,
// --input NAME=DIMS..., --json, --html FILE. AddPlanOptions() registers them on
// a CLI11 app; ResolvePlanOptions() turns the parsed text into PlanOptions and a
// capacity, failing with a one-line message (the caller prints it, exit 2).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oomguard/plan/gpu_catalog.h"
#include "oomguard/plan/planner.h"
#include "oomguard/result.h"

namespace oomguard::cli {

// The options as typed. Owned by the caller; must outlive the CLI::App.
struct PlanCliValues {
  std::string model;
  std::optional<int64_t> batch;
  std::string optimizer = "adam";
  std::string optimizer_impl = "default";
  std::string precision = "fp32";
  std::string loss = "cross_entropy";
  std::string target = "cuda";
  std::string gpu;  // empty, a catalog key, or "auto"
  std::optional<uint64_t> memory;
  std::optional<double> fraction;
  std::vector<std::string> inputs;  // "NAME=DIMS", DIMS like 3x240x320 or 3,240,320
  bool json = false;
  std::string html;
  bool strict = false;
  std::vector<std::string> inplace;  // --inplace NODE[,NODE...] | all | none (repeatable)
  std::vector<std::string> frozen;   // --frozen NAME[,NAME...], `*` globs (repeatable)
  std::vector<std::string> no_grad;  // --no-grad NODE[,NODE...], `*` globs (repeatable)
  std::vector<std::string> detached; // --detached NODE[,NODE...], `*` globs (repeatable)
  std::vector<std::string> checkpointed;  // --checkpointed NODE[,NODE...][;NODE...], one segment each (repeatable)
  int threads = 0;  // --threads: what-ifs planned at once; 0: the CPUs, at most kDefaultMaxThreads
  std::string cuda_alloc_conf;  // PYTORCH_CUDA_ALLOC_CONF, e.g. "expandable_segments:True,max_split_size_mb:128"  // warnings (eval-mode export, operators without a rule) are errors, exit 2
};

struct PlanOptionsSpec {
  bool with_batch = true;  // fit searches the batch, split has --global-batch
  bool with_html = true;
};

// The what-ifs and searches fit, split and plan --memory run at once: --threads, else the CPUs up to
// kDefaultMaxThreads (each holds a plan of the whole graph while it runs).
inline constexpr int kDefaultMaxThreads = 4;
int PlanThreads(const PlanCliValues& values);

// Registers the shared options on `app`, writing into *values.
void AddPlanOptions(CLI::App& app, PlanCliValues* values, PlanOptionsSpec spec = {});

struct ResolvedPlanOptions {
  plan::PlanOptions options;
  std::optional<plan::Gpu> gpu;             // when --gpu names a catalog card
  std::optional<uint64_t> device_total_bytes;  // --memory, else the GPU's total
  std::optional<uint64_t> capacity_bytes;   // device total x --fraction; nullopt: nothing to compare
  std::vector<std::string> frozen;          // --frozen patterns (initializer names, `*` globs)
  std::vector<std::string> no_grad;         // --no-grad patterns (node names, `*` globs)
  std::vector<std::string> detached;        // --detached patterns (node names, `*` globs)
  std::vector<std::vector<std::string>> checkpointed;  // --checkpointed segments, each its patterns
};

// The model the commands plan: `model`, with the --frozen initializers frozen (plan::FreezeParameters)
// and the --no-grad / --detached nodes marked (plan::MarkGradMode), the --checkpointed segments
// (plan::MarkCheckpointed); a pattern that matches nothing is an error.
Result<std::shared_ptr<const plan::Model>> ModelToPlan(std::shared_ptr<const plan::Model> model,
                                                      const ResolvedPlanOptions& resolved);

// Validates and converts. Errors are one line, e.g. "unknown optimizer 'adan'
// (choose from sgd, momentum, ...)", "--batch must be at least 1, got 0",
// "--input 'x=3xa': DIMS must be positive integers like 3x224x224".
Result<ResolvedPlanOptions> ResolvePlanOptions(const PlanCliValues& values);

// Applies --inplace values (each NODE[,NODE...], or all, or none) to the options.
Status ApplyInplaceHint(const std::vector<std::string>& values, plan::PlanOptions* options);

// Splits --frozen values (each NAME[,NAME...]) into patterns, at most kMaxListEntries.
Result<std::vector<std::string>> ParseFrozen(const std::vector<std::string>& values);

// Applies a PYTORCH_CUDA_ALLOC_CONF string ("expandable_segments:True,max_split_size_mb:128";
// other known keys are accepted and do not change the plan) to the options.
Status ApplyCudaAllocConf(const std::string& conf, plan::PlanOptions* options);

// The most dimensions --input gives after the batch: PyTorch's CUDA kernels
// take tensors of up to 25 dimensions, and no training input comes near.
inline constexpr size_t kMaxInputDims = 16;

// Parses "NAME=DIMS" (DIMS "3x224x224" or "3,224,224"; at most kMaxInputDims).
Result<std::pair<std::string, std::vector<int64_t>>> ParseInputOverride(const std::string& text);

}  // namespace oomguard::cli
