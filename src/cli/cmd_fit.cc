// oomguard fit MODEL [plan options] [--reserve BYTES] [--margin PCT]: the
// largest batch whose predicted step fits the capacity, the plan at that
// batch, and what-if advice.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "commands.h"
#include "common.h"
#include "host_section.h"
#include "oomguard/doctor/system_view.h"
#include "oomguard/fit/advice.h"
#include "oomguard/fit/chart.h"
#include "oomguard/fit/fit.h"
#include "oomguard/units.h"
#include "plan_advice.h"
#include "plan_options.h"
#include "plan_report.h"

namespace oomguard::cli {

namespace {

constexpr const char* kCommand = "fit";

std::string Describe(const plan::PlanOptions& o) {
  return std::string(plan::Name(o.optimizer)) + ", " + std::string(plan::Name(o.precision)) + ", " +
         std::string(plan::Name(o.target));
}

std::string StatesLine(const plan::StepPlan& p) {
  std::string s = "model states alone need " + FormatBytes(fit::BatchIndependentBytes(p)) +
                  " (weights " + FormatBytes(p.bytes.weights) + ", gradients " +
                  FormatBytes(p.bytes.gradients) + ", optimizer state " +
                  FormatBytes(p.bytes.optimizer_state);
  if (p.bytes.context + p.bytes.workspace > 0) {
    s += ", CUDA context and workspace " + FormatBytes(p.bytes.context + p.bytes.workspace);
  }
  return s + ")";
}

}  // namespace

int RunFit(int argc, char** argv) {
  CLI::App app{"Find the largest batch whose predicted training step fits the GPU."};
  PlanCliValues values;
  AddPlanOptions(app, &values, {.with_batch = false, .with_html = true});
  std::optional<uint64_t> reserve;
  ShowDefault(AddBytesOption(app, "--reserve", &reserve, "memory held by other processes on the device (e.g. 1GiB)"),
              "0");
  double margin = fit::kDefaultMarginPercent;
  AddNumberOption(app, "--margin", &margin, 0, 100, "safety margin, percent of the capacity");
  int64_t max_batch_limit = 1'000'000;
  AddNumberOption(app, "--max-batch", &max_batch_limit, 1, std::numeric_limits<int64_t>::max(),
                  "never search beyond this batch (above 2^31 it is clamped, with a note)");
  HostCliValues host_values;
  AddHostOptions(app, &host_values);
  if (std::optional<int> rc = Parse(app, kCommand, argc, argv)) return *rc;

  Result<ResolvedPlanOptions> resolved = ResolvePlanOptions(values);
  if (!resolved) return UsageError(kCommand, resolved.error());
  if (!resolved->capacity_bytes) {
    return UsageError(kCommand, "nothing to fit into: give --gpu NAME (oomguard gpus) or --memory BYTES");
  }
  if (max_batch_limit < 1) return UsageError(kCommand, "--max-batch must be at least 1");
  std::string clamp_note;
  if (max_batch_limit > plan::kMaxBatch) {
    const auto& typed = app.get_option("--max-batch")->results();
    clamp_note = "--max-batch " + (typed.empty() ? std::to_string(max_batch_limit) : typed.back()) +
                 " clamped to " + std::to_string(plan::kMaxBatch) + ", the largest batch oomguard plans";
    max_batch_limit = plan::kMaxBatch;
  }
  Result<uint64_t> budget = fit::UsableBytes(
      {.capacity_bytes = *resolved->capacity_bytes, .reserve_bytes = reserve.value_or(0), .margin_percent = margin});
  if (!budget) return UsageError(kCommand, budget.error());

  Result<std::shared_ptr<const plan::Model>> loaded = plan::LoadModel(values.model);
  if (!loaded) return UsageError(kCommand, loaded.error());
  Result<std::shared_ptr<const plan::Model>> model = ModelToPlan(*loaded, *resolved);
  if (!model) return UsageError(kCommand, model.error());
  const plan::Model& m = **model;
  plan::BatchPlanner batch_planner(m);
  fit::PlanFunction planner = fit::PlanWith(batch_planner);

  fit::FitOptions options;
  options.budget_bytes = *budget;
  options.max_batch_limit = max_batch_limit;
  Result<fit::FitResult> found = fit::FindMaxBatch(planner, resolved->options, options);
  if (!found) return UsageError(kCommand, found.error());
  fit::FitResult& r = *found;
  if (values.strict) {
    if (auto failure = StrictFailure(r.plan)) return UsageError(kCommand, *failure);
  }
  // Then, each an option set of its own planned on a thread of its own (--threads): unsure whether
  // activations ran in place, the largest batch if every candidate did; and the advice at the answer
  // (or at batch 1 when nothing fits), what each change buys.
  const int threads = PlanThreads(values);
  plan::PlanOptions at_answer = resolved->options;
  at_answer.batch = std::max<int64_t>(1, r.max_batch);
  const bool unsure = r.plan.inplace.Unsure();  // (read before the advice's thread fills the range in)
  std::optional<Result<fit::FitResult>> in_place;
  std::vector<fit::AdviceItem> items;
  Status range = Status::Ok();
  fit::ForEachOnThreads(2, threads, [&](size_t task) {
    if (task == 0) {
      if (!unsure) return;
      plan::PlanOptions all = resolved->options;
      all.inplace = plan::InplaceHint::kAll;
      fit::FitOptions from_answer = options;  // in place needs no more memory than out of place
      from_answer.likely_fits = r.max_batch;
      from_answer.answer_only = true;  // the range reads the largest batch alone
      in_place = fit::FindMaxBatch(planner, all, from_answer);
      return;
    }
    range = plan::AddInplaceRange(batch_planner, at_answer, &r.plan);
    if (range) items = AdviseStep(m, batch_planner, at_answer, *budget, r.plan, threads, max_batch_limit);
  });
  std::optional<int64_t> max_batch_in_place;
  if (in_place && !*in_place) return UsageError(kCommand, in_place->error());
  if (in_place) max_batch_in_place = (*in_place)->max_batch;
  if (!range) return UsageError(kCommand, range.error());
  // The host side at the answer's batch: the input pipeline must fit too.
  auto host = ResolveHostSection(host_values, m, at_answer, r.plan, *doctor::MakeRealSystem());
  if (!host) return UsageError(kCommand, host.error());
  const bool host_short = *host && (*host)->verdict.fits && !*(*host)->verdict.fits;

  if (!values.html.empty()) {
    const int64_t last = std::max<int64_t>(8, r.max_batch + r.max_batch / 3 + 2);
    Result<std::vector<fit::CurvePoint>> curve =
        fit::SampleCurve(planner, resolved->options, std::min(last, max_batch_limit), r.max_batch);
    if (!curve) return UsageError(kCommand, curve.error());
    std::ofstream out(values.html, std::ios::binary);
    out << fit::FitChartHtml(values.model + ": memory vs batch", *curve, *resolved->capacity_bytes, *budget,
                             r.max_batch);
    if (!out.good()) return UsageError(kCommand, "cannot write " + values.html);
  }

  const uint64_t margin_bytes = *resolved->capacity_bytes - reserve.value_or(0) - *budget;
  if (values.json) {
    nlohmann::json j = PlanToJson(r.plan, *resolved);
    if (!clamp_note.empty()) j["warnings"].push_back(clamp_note);
    j["max_batch"] = r.max_batch;
    j["max_batch_range"] = {{"low", std::min(r.max_batch, max_batch_in_place.value_or(r.max_batch))},
                            {"high", std::max(r.max_batch, max_batch_in_place.value_or(r.max_batch))}};
    j["budget_bytes"] = *budget;
    j["reserve_bytes"] = reserve.value_or(0);
    j["margin_percent"] = margin;
    j["margin_bytes"] = margin_bytes;
    j["fits_budget"] = r.max_batch >= 1;
    j["next_batch_required_bytes"] =
        r.next_plan ? nlohmann::json(r.next_plan->required_bytes) : nlohmann::json(nullptr);
    j["model_states_bytes"] = fit::BatchIndependentBytes(r.plan);
    j["search"] = {{"plans", r.plans_evaluated},
                   {"exhaustive_fallback", r.exhaustive_fallback},
                   {"hit_limit", r.hit_limit}};
    j["advice"] = fit::ToJson(items);
    if (*host) {
      j["host"] = HostToJson(**host);
      std::optional<bool> fits = CombinedFits(j["fits"].is_boolean() ? std::optional<bool>(j["fits"].get<bool>())
                                                                     : std::nullopt,
                                              **host);
      j["fits"] = fits ? nlohmann::json(*fits) : nlohmann::json(nullptr);
    }
    PrintJson(j);
    return r.max_batch >= 1 && !host_short ? kExitOk : kExitNo;
  }

  std::ostringstream out;
  out << UncoveredLine(r.plan);
  if (!clamp_note.empty()) out << "note: " << clamp_note << "\n";
  const std::string where = resolved->gpu ? std::string(resolved->gpu->name) + " (" +
                                                FormatBytes(*resolved->capacity_bytes) + ")"
                                          : FormatBytes(*resolved->capacity_bytes);
  out << values.model << " (" << Describe(resolved->options) << ") on " << where << "\n";
  out << "budget " << FormatBytes(*budget) << " = capacity " << FormatBytes(*resolved->capacity_bytes)
      << " - reserve " << FormatBytes(reserve.value_or(0)) << " - margin " << FormatBytes(margin_bytes)
      << " (" << margin << "%)\n\n";
  if (r.max_batch >= 1) {
    out << "largest batch: " << r.max_batch << (r.hit_limit ? " (the --max-batch limit)" : "") << " -> needs "
        << FormatBytes(r.plan.required_bytes) << " of " << FormatBytes(*budget);
    if (r.next_plan) out << "; batch " << r.max_batch + 1 << " would need " << FormatBytes(r.next_plan->required_bytes);
    if (max_batch_in_place && *max_batch_in_place != r.max_batch) {
      out << "\nlargest batch if every candidate activation ran in place: " << *max_batch_in_place;
    }
    out << "\n\n" << PlanToText(r.plan, *resolved);
    if (!items.empty()) {
      out << "\nwhat-ifs (each re-planned at batch " << r.max_batch << "):\n";
      PrintAdvice(out, items);
    }
    if (*host) out << HostToText(**host, r.plan, *budget);
    std::cout << out.str();
    return host_short ? kExitNo : kExitOk;
  }
  out << "nothing fits: batch 1 needs " << FormatBytes(r.plan.required_bytes) << " of " << FormatBytes(*budget)
      << "; " << StatesLine(r.plan) << "\n";
  std::vector<fit::AdviceItem> helping;
  for (const fit::AdviceItem& i : items) {
    if (i.fits) helping.push_back(i);
  }
  if (helping.empty()) {
    out << "no single change makes batch 1 fit; the changes that help most:\n";
    PrintAdvice(out, items);
  } else {
    out << "what would make batch 1 fit:\n";
    PrintAdvice(out, helping);
  }
  std::cout << out.str();
  return kExitNo;
}

}  // namespace oomguard::cli
