// Self-contained HTML pictures for fit and split (inline SVG, no scripts, no
// network). Pure functions: they return the page; the CLI writes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oomguard/fit/fit.h"
#include "oomguard/fit/split.h"

namespace oomguard::fit {

struct CurvePoint {
  int64_t batch = 0;
  uint64_t required_bytes = 0;
};

// Plans about `points` batches spread over [1, last] (always including
// `chosen` and `chosen + 1` when in range). REQUIRES: last >= 1.
Result<std::vector<CurvePoint>> SampleCurve(const PlanFunction& plan, const plan::PlanOptions& base,
                                            int64_t last, int64_t chosen, int points = 40);

// Memory vs batch with the capacity and budget lines and the chosen batch marked.
std::string FitChartHtml(const std::string& title, const std::vector<CurvePoint>& curve,
                         uint64_t capacity_bytes, uint64_t budget_bytes, int64_t chosen_batch);

// A stacked bar per GPU (model states, activations, inputs, strategy extras,
// the rest) with each GPU's budget marked.
std::string SplitChartHtml(const std::string& title, const SplitResult& split);


}  // namespace oomguard::fit
