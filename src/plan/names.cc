// Names of the planner's enums as the command line spells them.
#include <array>
#include <string>
#include <utility>

#include "oomguard/plan/planner.h"

namespace oomguard::plan {
namespace {

template <typename E, size_t N>
Result<E> Lookup(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view name,
                 std::string_view what) {
  for (const auto& [text, value] : table) {
    if (text == name) return value;
  }
  std::string choices;
  for (const auto& [text, value] : table) {
    if (!choices.empty()) choices += ", ";
    choices += text;
  }
  return MakeError("unknown " + std::string(what) + " '" + std::string(name) + "' (choose from " +
                   choices + ")");
}

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<std::string_view, E>, N>& table, E value) {
  for (const auto& [text, v] : table) {
    if (v == value) return text;
  }
  return "?";
}

constexpr std::array<std::pair<std::string_view, Optimizer>, 6> kOptimizers = {{
    {"sgd", Optimizer::kSgd},
    {"momentum", Optimizer::kMomentum},
    {"adam", Optimizer::kAdam},
    {"adamw", Optimizer::kAdamW},
    {"rmsprop", Optimizer::kRmsprop},
    {"adagrad", Optimizer::kAdagrad},
}};
constexpr std::array<std::pair<std::string_view, OptimizerImpl>, 4> kImpls = {{
    {"default", OptimizerImpl::kDefault},
    {"loop", OptimizerImpl::kLoop},
    {"foreach", OptimizerImpl::kForeach},
    {"fused", OptimizerImpl::kFused},
}};
constexpr std::array<std::pair<std::string_view, Precision>, 5> kPrecisions = {{
    {"fp32", Precision::kFp32},
    {"amp-fp16", Precision::kAmpFp16},
    {"amp-bf16", Precision::kAmpBf16},
    {"fp16", Precision::kFp16},
    {"bf16", Precision::kBf16},
}};
constexpr std::array<std::pair<std::string_view, Loss>, 3> kLosses = {{
    {"cross_entropy", Loss::kCrossEntropy},
    {"mse", Loss::kMse},
    {"none", Loss::kNone},
}};
constexpr std::array<std::pair<std::string_view, Target>, 2> kTargets = {{
    {"cuda", Target::kCuda},
    {"cpu", Target::kCpu},
}};

}  // namespace

Result<Optimizer> ParseOptimizer(std::string_view name) { return Lookup(kOptimizers, name, "optimizer"); }
Result<OptimizerImpl> ParseOptimizerImpl(std::string_view name) {
  return Lookup(kImpls, name, "optimizer implementation");
}
Result<Precision> ParsePrecision(std::string_view name) { return Lookup(kPrecisions, name, "precision"); }
Result<Loss> ParseLoss(std::string_view name) { return Lookup(kLosses, name, "loss"); }
Result<Target> ParseTarget(std::string_view name) { return Lookup(kTargets, name, "target"); }
std::string_view Name(Optimizer v) { return NameOf(kOptimizers, v); }
std::string_view Name(OptimizerImpl v) { return NameOf(kImpls, v); }
std::string_view Name(Precision v) { return NameOf(kPrecisions, v); }
std::string_view Name(Loss v) { return NameOf(kLosses, v); }
std::string_view Name(Target v) { return NameOf(kTargets, v); }

}  // namespace oomguard::plan
