// oomguard plan MODEL: predict one training step's memory.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "common.h"
#include "plan_advice.h"
#include "plan_options.h"
#include "plan_report.h"

namespace oomguard::cli {

int RunPlan(int argc, char** argv) {
  CLI::App app("Predict the memory of one PyTorch training step from an ONNX model.", "oomguard plan");
  PlanCliValues values;
  AddPlanOptions(app, &values);
  if (auto code = Parse(app, "plan", argc, argv)) return *code;

  auto resolved = ResolvePlanOptions(values);
  if (!resolved) return UsageError("plan", resolved.error());
  auto model = plan::LoadModel(values.model);
  if (!model) return UsageError("plan", model.error());
  auto result = plan::PlanStep(**model, resolved->options);
  if (!result) return UsageError("plan", result.error());
  if (values.strict) {
    if (auto failure = StrictFailure(*result)) return UsageError("plan", *failure);
  }

  if (!values.html.empty()) {
    // The memory-vs-batch curve: up to twice the batch, 24 points; fewer for a
    // large graph (memory is close to affine in the batch, and each point is a plan).
    std::vector<std::pair<int64_t, uint64_t>> curve;
    int64_t end = std::max<int64_t>(2 * result->batch, 8);
    const int points = static_cast<int>(
        std::clamp<size_t>(200000 / std::max<size_t>(1, result->layers.size()), 4, 24));
    for (int i = 1; i <= points; ++i) {
      plan::PlanOptions o = resolved->options;
      o.batch = std::max<int64_t>(1, end * i / points);
      if (!curve.empty() && curve.back().first == *o.batch) continue;
      auto p = plan::PlanStep(**model, o);
      if (p) curve.emplace_back(*o.batch, p->required_bytes);
    }
    std::ofstream out(values.html, std::ios::binary);
    out << PlanToHtml(*result, *resolved, curve);
    if (!out.good()) return UsageError("plan", "cannot write " + values.html);
  }
  PlanVerdict verdict = Judge(*result, *resolved);
  // What-ifs need a capacity to judge against; each is re-planned.
  std::vector<fit::AdviceItem> advice;
  if (resolved->capacity_bytes) {
    advice = AdviseStep(**model, resolved->options, *resolved->capacity_bytes, *result);
  }
  if (values.json) {
    nlohmann::json j = PlanToJson(*result, *resolved);
    j["advice"] = fit::ToJson(advice);
    PrintJson(j);
  } else {
    std::ostringstream out;
    out << PlanToText(*result, *resolved);
    if (!advice.empty()) {
      out << "\nWhat if (each re-planned at batch " << result->batch << "):\n";
      PrintAdvice(out, advice);
    }
    std::cout << out.str();
  }
  return verdict.fits && !*verdict.fits ? kExitNo : kExitOk;
}

}  // namespace oomguard::cli
