// The plan page (oomguard plan --html FILE): a self-contained HTML page that
// answers first. The verdict (red or green, the shortfall or headroom in bytes
// and %), the ranked what-ifs (the advice the text output prints), memory vs
// batch with the capacity and the largest batch with and without fit's margin,
// and the memory over one training step (StepPlan::timeline) stacked by
// category with its peak and the layer there. No scripts, no network.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oomguard/fit/advice.h"
#include "oomguard/fit/fit.h"
#include "oomguard/plan/planner.h"
#include "plan_options.h"

namespace oomguard::cli {

// What the page shows beside the plan.
struct PlanPage {
  std::vector<std::pair<int64_t, uint64_t>> curve;  // (batch, required bytes), ascending batch
  std::vector<fit::AdviceItem> advice;              // ranked what-ifs (AdviseStep)
  // With a capacity: the largest batch whose step fits the whole capacity (what
  // the verdict compares against; 0 when batch 1 does not) and the one
  // `oomguard fit` answers, which keeps margin_percent of the capacity free.
  std::optional<int64_t> max_batch;
  std::optional<int64_t> max_batch_with_margin;
  double margin_percent = fit::kDefaultMarginPercent;
  std::optional<uint64_t> margin_budget_bytes;  // capacity - margin
  std::string host_html;  // the host side (HostToHtml), when planned; shown after the device breakdown
};

// Plans what the page needs: fit's search for the largest batch (with no margin
// and with fit's default margin) and the memory-vs-batch curve around them and
// `plan.batch`, from `planner` (which the advice used too: the searches share
// its recordings). Fails with the planner's error.
Result<PlanPage> PlanPageFor(plan::BatchPlanner& planner, const ResolvedPlanOptions& resolved,
                             const plan::StepPlan& plan, std::vector<fit::AdviceItem> advice);

// The page. Stable hooks for tests: the first element of <body> is
// <section id="verdict" class="verdict fits|does-not-fit|unknown">; the
// what-ifs are <tr class="whatif ...">; the curve's SVG has classes xtick,
// ytick, capacity, max-batch and max-batch-margin; the timeline is a
// <figure class="timeline" data-peak-bytes="N"> whose SVG marks the peak with
// class peak-marker (its title carries the same N).
std::string PlanToHtml(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved, const PlanPage& page);

}  // namespace oomguard::cli
