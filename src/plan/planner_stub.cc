// Temporary: the importer and simulator land next.
#include "oomguard/plan/planner.h"

namespace oomguard::plan {
class Model {};
Result<std::shared_ptr<const Model>> LoadModel(std::string_view path_or_zoo_name) {
  return MakeError("the planner is not implemented yet");
}
Result<StepPlan> PlanStep(const Model& model, const PlanOptions& options) {
  return MakeError("the planner is not implemented yet");
}
}  // namespace oomguard::plan
