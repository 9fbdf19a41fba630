// Rendering a StepPlan: the JSON object of docs/DESIGN.md and the human table
// (the HTML page is plan_page.h). Shared by plan (and usable by fit/split).
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

nlohmann::json PlanToJson(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved);

// Escapes <, >, & and " for HTML text and attributes.
std::string HtmlEscape(const std::string& s);

// The human report (categories with bars, top layers, verdict).
std::string PlanToText(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved);

}  // namespace oomguard::cli
