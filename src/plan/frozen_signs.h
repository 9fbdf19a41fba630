// Signs in a plain export that part of the model ran without autograd: code under torch.no_grad(), a result
// .detach()ed, weights frozen (requires_grad_(False)). ONNX records none of them; a file exported with
// oomguard.export names them (inplace.h's metadata keys), and --frozen / --no-grad / --detached name them by hand.
// Where the structure suggests one and no hint is given, the plan stays as if everything were trained and
// recorded, and a risk names what the plan would drop if the guess held (docs/plan.md "Signs of code run without
// autograd").
#ifndef OOMGUARD_SRC_PLAN_FROZEN_SIGNS_H_
#define OOMGUARD_SRC_PLAN_FROZEN_SIGNS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model.h"
#include "oomguard/plan/planner.h"
#include "shapes.h"

namespace oomguard::plan {

enum class GradModeSign : uint8_t {
  // One weight's module applied four times or more in a chain, each call reading its previous result and the
  // same input of the state's shape (a fixed-point iteration z = f(z, x)): all calls but the last may run under
  // torch.no_grad() (a deep-equilibrium solve).
  kSolverSteps,
  // A squared or absolute difference one of whose operands reaches the loss only there, computed with weights of
  // its own that copy the shapes of trained ones (a TD target from target networks, a momentum encoder's
  // output), against an operand computed from trained weights: that operand's computation may run under
  // torch.no_grad() and its weights be frozen.
  kTargetBranch,
  // x + (q - x) with q computed from x (a straight-through estimator: BitNet, VQ, Gumbel): the difference is
  // usually .detach()ed, and what computes q keeps nothing for backward.
  kStraightThrough,
  // A low-rank adapter beside a weight, unmerged (base(x) + x A^T B^T: LoRA): the rest of the model is usually
  // frozen but for the head (the last layer with a weight).
  kBackboneFrozen,
  // Token embeddings concatenated with a network's output over another input through its last one or two layers
  // (a vision tower and its projector: LLaVA): the tower may be pretrained, frozen and run under no_grad.
  kTowerFrozen,
};

// A guess: the nodes that may run under no_grad or detached and the initializers that may be frozen.
struct GradModeGuess {
  GradModeSign sign = GradModeSign::kSolverSteps;
  std::string where;  // the module or node the warning names, quoted
  std::vector<int> no_grad, detached;  // node indices
  std::vector<int> frozen;             // parameter tensor ids
};

// The guesses the structure of `model` suggests; none when any grad-mode or frozen hint is present or the file
// carries oomguard.export's metadata (the user said what ran how).
std::vector<GradModeGuess> FindGradModeGuesses(const Model& model, const ConcreteShapes& shapes);

// `model` with `guess` applied, as the hints would have it (MarkGradMode, FreezeParameters).
Result<std::shared_ptr<const Model>> ApplyGuess(const Model& model, const GradModeGuess& guess);

}  // namespace oomguard::plan

#endif  // OOMGUARD_SRC_PLAN_FROZEN_SIGNS_H_
