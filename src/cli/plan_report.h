// Rendering a StepPlan: the JSON object of docs/DESIGN.md, the human table and
// the self-contained HTML page. Shared by plan (and usable by fit/split).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "oomguard/plan/planner.h"
#include "plan_options.h"

namespace oomguard::cli {

struct PlanVerdict {
  std::optional<uint64_t> capacity_bytes;
  std::optional<uint64_t> device_total_bytes;
  std::optional<bool> fits;  // required_bytes <= capacity
};

PlanVerdict Judge(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved);

// "uncovered": [{"op":…, "nodes":N, "bytes_at_risk":…}]
nlohmann::json UncoveredJson(const std::vector<plan::UncoveredOp>& uncovered);

// The line a report starts with when operators lack a rule ("" when none do).
std::string UncoveredLine(const plan::StepPlan& plan);

// With --strict, any warning is an error: the line to print (exit 2), or nullopt.
std::optional<std::string> StrictFailure(const plan::StepPlan& plan);

nlohmann::json PlanToJson(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved);

// The human report (categories with bars, top layers, verdict).
std::string PlanToText(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved);

// A self-contained HTML page: stacked bar of the breakdown and a memory-vs-batch
// curve (points: batch, required bytes) with the capacity line.
std::string PlanToHtml(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved,
                       const std::vector<std::pair<int64_t, uint64_t>>& curve);

}  // namespace oomguard::cli
