// oomguard plan MODEL: predict one training step's memory.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "common.h"
#include "host_section.h"
#include "oomguard/doctor/system_view.h"
#include "plan_advice.h"
#include "plan_options.h"
#include "plan_page.h"
#include "plan_report.h"

namespace oomguard::cli {

int RunPlan(int argc, char** argv) {
  CLI::App app("Predict the memory of one PyTorch training step from an ONNX model.", "oomguard plan");
  PlanCliValues values;
  AddPlanOptions(app, &values);
  HostCliValues host_values;
  AddHostOptions(app, &host_values);
  if (auto code = Parse(app, "plan", argc, argv)) return *code;

  auto resolved = ResolvePlanOptions(values);
  if (!resolved) return UsageError("plan", resolved.error());
  auto loaded = plan::LoadModel(values.model);
  if (!loaded) return UsageError("plan", loaded.error());
  auto model = ModelToPlan(*loaded, *resolved);
  if (!model) return UsageError("plan", model.error());
  plan::PlanOptions shown = resolved->options;
  shown.record_timeline = !values.html.empty();  // only the page draws it
  // One planner for this plan, the what-ifs and the page's searches: each
  // option set is analysed once (this plan is the first point of its recording).
  // Alone, the plan is not recorded.
  plan::BatchPlanner planner(**model);
  const bool more = !values.html.empty() || resolved->capacity_bytes.has_value();
  auto result = more ? planner.Plan(shown) : plan::PlanStep(**model, shown);
  if (!result) return UsageError("plan", result.error());
  // The same planner gives the in-place range (another option set, analysed once).
  if (Status s = plan::AddInplaceRange(planner, resolved->options, &*result); !s) return UsageError("plan", s.error());
  auto host = ResolveHostSection(host_values, **model, resolved->options, *result, *doctor::MakeRealSystem());
  if (!host) return UsageError("plan", host.error());

  if (values.strict) {
    if (auto failure = StrictFailure(*result)) return UsageError("plan", *failure);
  }

  PlanVerdict verdict = Judge(*result, *resolved);
  std::optional<bool> fits = *host ? CombinedFits(verdict.fits, **host) : verdict.fits;
  // What-ifs need a capacity to judge against; each is re-planned.
  std::vector<fit::AdviceItem> advice;
  if (resolved->capacity_bytes) {
    advice = AdviseStep(**model, planner, resolved->options, *resolved->capacity_bytes, *result, PlanThreads(values));
  }
  if (!values.html.empty()) {
    Result<PlanPage> page = PlanPageFor(planner, *resolved, *result, advice);
    if (!page) return UsageError("plan", page.error());
    if (*host) page->host_html = HostToHtml(**host, *result, resolved->capacity_bytes);
    std::ofstream out(values.html, std::ios::binary);
    out << PlanToHtml(*result, *resolved, *page);
    if (!out.good()) return UsageError("plan", "cannot write " + values.html);
  }
  if (values.json) {
    nlohmann::json j = PlanToJson(*result, *resolved);
    j["advice"] = fit::ToJson(advice);
    if (*host) {
      j["host"] = HostToJson(**host);
      j["fits"] = fits ? nlohmann::json(*fits) : nlohmann::json(nullptr);
    }
    PrintJson(j);
  } else {
    std::ostringstream out;
    out << PlanToText(*result, *resolved);
    if (!advice.empty()) {
      out << "\nWhat if (each re-planned at batch " << result->batch << "):\n";
      PrintAdvice(out, advice);
    }
    if (*host) out << HostToText(**host, *result, resolved->capacity_bytes);
    std::cout << out.str();
  }
  return fits && !*fits ? kExitNo : kExitOk;
}

}  // namespace oomguard::cli
