// The host side of `plan` and `fit` (docs/host.md): the flags --sample,
// --loader-workers, --prefetch-factor, --pin-memory, --persistent-workers,
// --queue, --dataset-in-memory, --host-memory, --memlock; the host plan at the
// step's batch; its JSON object, text block and HTML section; and the verdict
// over both sides. The section exists only when a host flag was given, so
// plans without host flags print exactly what they printed before.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "oomguard/host/host_plan.h"
#include "oomguard/plan/planner.h"
#include "oomguard/result.h"

namespace oomguard::doctor {
class SystemView;
}

namespace oomguard::cli {

// The host flags as typed. Owned by the caller; must outlive the CLI::App.
struct HostCliValues {
  std::string sample;
  std::optional<int64_t> loader_workers;
  std::optional<int64_t> prefetch_factor;
  bool pin_memory = false;
  bool persistent_workers = false;
  std::optional<int64_t> queue;
  std::optional<int64_t> dataset_in_memory;
  std::optional<uint64_t> host_memory;
  std::optional<uint64_t> memlock;
  bool Any() const;
};

void AddHostOptions(CLI::App& app, HostCliValues* values);

struct HostSection {
  host::PipelineOptions options;
  host::HostPlan plan;
  host::HostLimits limits;
  host::HostVerdict verdict;
  std::vector<host::HostAdvice> advice;
};

// nullopt when no host flag was given. The sample defaults to the model's
// first input (per-sample shape, float32); --host-memory defaults to MemTotal
// and --memlock to RLIMIT_MEMLOCK, both read through `system`. On target cpu
// the step's own bytes are host memory and join the host peak. Errors are one
// line (the caller exits 2).
Result<std::optional<HostSection>> ResolveHostSection(const HostCliValues& values, const plan::Model& model,
                                                      const plan::PlanOptions& options, const plan::StepPlan& step,
                                                      const doctor::SystemView& system);

// The "host" object of docs/DESIGN.md.
nlohmann::json HostToJson(const HostSection& host);

// Both sides: false when either does not fit, null when the device side has
// no capacity and the host fits, else true.
std::optional<bool> CombinedFits(std::optional<bool> device_fits, const HostSection& host);

// Host and device side by side, the host breakdown, the verdict naming the
// side that runs out first, and the host what-ifs.
std::string HostToText(const HostSection& host, const plan::StepPlan& step,
                       std::optional<uint64_t> device_capacity_bytes);

// The same as an HTML fragment (a table and a stacked bar).
std::string HostToHtml(const HostSection& host, const plan::StepPlan& step,
                       std::optional<uint64_t> device_capacity_bytes);

}  // namespace oomguard::cli
