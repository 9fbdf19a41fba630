// The training-step simulation: replays one steady-state PyTorch step
// (zero_grad(set_to_none) -> forward -> loss -> backward -> optimizer.step())
// over the model's logical operators, allocating and freeing every tensor the
// way PyTorch's autograd does, and records the live-byte maximum.
#pragma once

#include "model.h"
#include "saved_tensor_rules.h"
#include "shapes.h"

namespace oomguard::plan {

// Simulates the step for concrete shapes. Unknown operators get the
// conservative rule and a warning; fails only on a what-if that does not apply
// (replace_layer_with_pooling naming no suitable layer).
Result<StepPlan> SimulateTrainingStep(const Model& model, const ConcreteShapes& shapes, const PlanOptions& options);

}  // namespace oomguard::plan
