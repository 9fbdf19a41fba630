// What-if advice shared by plan and fit: the model's per-sample inputs, the
// advice for a planned step, and its human rendering.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "fit/advice_json.h"
#include "oomguard/fit/advice.h"
#include "oomguard/plan/planner.h"

namespace oomguard::cli {

// The model's inputs with per-sample shapes (the batch axis dropped).
std::vector<fit::ModelInput> PerSampleInputs(const plan::Model& model);

// The ranked what-ifs for `options` (at its batch) against `budget_bytes`, each what-if's largest
// batch searched up to `max_batch_limit`; empty when the planner cannot plan any. `planner` plans `model`.
std::vector<fit::AdviceItem> AdviseStep(const plan::Model& model, plan::BatchPlanner& planner,
                                        const plan::PlanOptions& options,
                                        uint64_t budget_bytes, const plan::StepPlan& baseline, int threads = 1,
                                        int64_t max_batch_limit = fit::FitOptions{}.max_batch_limit);

// "  1. <description>\n     saves X -> Y, fits; largest batch N\n" per item.
void PrintAdvice(std::ostream& out, const std::vector<fit::AdviceItem>& items);

}  // namespace oomguard::cli
