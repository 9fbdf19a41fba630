// What simulations of one model at one batch share whatever their options: the fused operators and which
// tensors need a gradient (from the model and the shapes alone), what the simulator derives from those
// alone (module frames, when each autograd graph dies, in-place table rows), and each operator's rule (from
// those and the target). A BatchPlanner keeps one per batch it simulates and hands it to every simulation there, so
// fit's and split's option sets (each what-if, each strategy) compute them once per batch, not once each.
#pragma once

#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "oomguard/plan/planner.h"
#include "oomguard/thread_annotations.h"
#include "saved_tensor_rules.h"
#include "shapes.h"

namespace oomguard::plan {

class SimulationShare {
 public:
  // FuseOperators(model, shapes), computed by the first caller. REQUIRES: the same model and shapes
  // on every call.
  std::shared_ptr<const std::vector<LogicalOp>> Ops(const Model& model, const ConcreteShapes& shapes) EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      if (ops_) return ops_;
    }
    auto ops = std::make_shared<const std::vector<LogicalOp>>(FuseOperators(model, shapes));
    MutexLock lock(mu_);
    if (!ops_) ops_ = std::move(ops);
    return ops_;
  }
  // Which tensors need a gradient (Simulator::ComputeRequiresGrad: from the model, the fused operators
  // and the shapes' dtypes alone), from `compute` the first time.
  template <typename Compute>
  std::vector<bool> RequiresGrad(Compute compute) EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      if (requires_grad_) return *requires_grad_;
    }
    std::vector<bool> flags = compute();
    MutexLock lock(mu_);
    if (!requires_grad_) requires_grad_ = flags;
    return flags;
  }
  // The simulator's analysis of the graph from the model, Ops(), the shapes and RequiresGrad() alone (a
  // type of training_step.cc), from `compute` the first time. REQUIRES: the same T on every call.
  template <typename T, typename Compute>
  std::shared_ptr<const T> Derived(Compute compute) EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      if (derived_) return std::static_pointer_cast<const T>(derived_);
    }
    auto made = std::make_shared<const T>(compute());
    MutexLock lock(mu_);
    if (!derived_) derived_ = made;
    return std::static_pointer_cast<const T>(derived_);
  }
  // RuleFor of each of Ops()' operators with a RuleContext of this target and these requires-grad
  // flags, where a simulation kept them (KeepRules); nullptr otherwise.
  std::shared_ptr<const std::vector<OpRule>> Rules(Target target, const std::vector<bool>& requires_grad) const
      EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (const auto& [t, grad, rules] : rules_) {
      if (t == target && grad == requires_grad) return rules;
    }
    return nullptr;
  }
  void KeepRules(Target target, const std::vector<bool>& requires_grad, std::vector<OpRule> rules) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (const auto& [t, grad, kept] : rules_) {
      if (t == target && grad == requires_grad) return;
    }
    rules_.emplace_back(target, requires_grad, std::make_shared<const std::vector<OpRule>>(std::move(rules)));
  }

 private:
  // RuleFor reads the op and these of its context alone (activation_bytes is always 4 there): a field
  // added to RuleContext must be added to the key of rules_.
  static_assert(sizeof(RuleContext) == 2 * sizeof(void*) + 2 * sizeof(int) + sizeof(void*));
  mutable Mutex mu_;
  std::shared_ptr<const std::vector<LogicalOp>> ops_ GUARDED_BY(mu_);
  std::optional<std::vector<bool>> requires_grad_ GUARDED_BY(mu_);
  std::shared_ptr<const void> derived_ GUARDED_BY(mu_);
  std::vector<std::tuple<Target, std::vector<bool>, std::shared_ptr<const std::vector<OpRule>>>> rules_ GUARDED_BY(mu_);
};

}  // namespace oomguard::plan
