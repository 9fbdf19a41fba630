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

// "uncovered": [{"op":…, "nodes":N, "bytes_at_risk":…}]
nlohmann::json UncoveredJson(const std::vector<plan::UncoveredOp>& uncovered);
// [{"what", "bytes", "direction"}]: the warnings that carry bytes (plan::PlanRisk).
nlohmann::json RisksJson(const std::vector<plan::PlanRisk>& risks);

// The line a report starts with when operators lack a rule ("" when none do).
std::string UncoveredLine(const plan::StepPlan& plan);

// With --strict, any warning is an error: the line to print (exit 2), or nullopt.
std::optional<std::string> StrictFailure(const plan::StepPlan& plan);

// "unseen_model_band": {"coverage", "error_low", "error_high", "rows", "models", "sets", "peak_allocated_bytes":
// {"low", "high"}, "required_bytes": {"low", "high"}}: where the measured peak of a model nobody here has seen
// lies for `coverage` of such models (plan::EmbeddedErrorBand); null when the band is not embedded.
nlohmann::json UnseenModelBandJson(const plan::StepPlan& plan);

// The text line with that band ("" when it is not embedded).
std::string UnseenModelBandLine(const plan::StepPlan& plan);

// "inplace": {"hint", "candidates", "nodes", "unsure"}: what the plan assumed about inplace=True.
nlohmann::json InplaceJson(const plan::InplaceSummary& inplace);

// The text line saying the plan is unsure about in-place activations, with the range ("" when sure).
std::string InplaceLine(const plan::InplaceSummary& inplace);

// "grad_mode": {"hint", "no_grad_nodes", "detached_nodes", "no_grad_parameters"}: code planned as run
// under torch.no_grad() or .detach()ed (plan::MarkGradMode), and the parameters that therefore get no gradient.
nlohmann::json GradModeJson(const plan::StepPlan& plan);

// "checkpointed": {"hint", "segments", "nodes"}: the torch.utils.checkpoint segments the plan followed
// (plan::MarkCheckpointed, the model's "oomguard.checkpointed" metadata; hint "none", "metadata" or "option").
nlohmann::json CheckpointedJson(const plan::StepPlan& plan);

// "locals": {"hint", "held"}: values planned as held by their module's forward until it returns (the model's
// metadata "oomguard.locals").
nlohmann::json LocalsJson(const plan::StepPlan& plan);

// The text lines naming that code and the checkpointed segments ("" when there are none).
std::string GradModeLine(const plan::StepPlan& plan);

nlohmann::json PlanToJson(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved);


// The human report (categories with bars, top layers, verdict).
std::string PlanToText(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved);

}  // namespace oomguard::cli
