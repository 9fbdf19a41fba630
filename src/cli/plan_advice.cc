#include "plan_advice.h"

#include "oomguard/units.h"

namespace oomguard::cli {

std::vector<fit::ModelInput> PerSampleInputs(const plan::Model& model) {
  std::vector<fit::ModelInput> out;
  for (const auto& [name, dims] : plan::Summarize(model).inputs) {
    if (dims.empty()) continue;
    out.push_back({name, std::vector<int64_t>(dims.begin() + 1, dims.end())});
  }
  return out;
}

std::vector<fit::AdviceItem> AdviseStep(const plan::Model& model, plan::BatchPlanner& batch_planner,
                                        const plan::PlanOptions& options, uint64_t budget_bytes,
                                        const plan::StepPlan& baseline, int threads, int64_t max_batch_limit) {
  fit::PlanFunction planner = fit::PlanWith(batch_planner);
  fit::AdviceRequest request;
  request.base = options;
  request.budget_bytes = budget_bytes;
  request.inputs = PerSampleInputs(model);
  request.threads = threads;
  request.max_batch_limit = max_batch_limit;
  Result<fit::AdviceList> advice = fit::Advise(planner, request, baseline);
  return advice ? advice->items : std::vector<fit::AdviceItem>{};
}

void PrintAdvice(std::ostream& out, const std::vector<fit::AdviceItem>& items) {
  int n = 0;
  for (const fit::AdviceItem& i : items) {
    out << "  " << ++n << ". " << i.description << "\n     saves " << FormatBytes(i.saves_bytes) << " -> "
        << FormatBytes(i.required_bytes) << (i.fits ? ", fits" : ", still does not fit");
    if (i.max_batch && i.action != "lower_batch") out << "; largest batch " << *i.max_batch;
    out << "\n";
  }
}

}  // namespace oomguard::cli
