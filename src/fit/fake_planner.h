// A fake planner for tests: a memory curve with known parts, so the right
// answers can be computed by exhaustive search in the test itself.
//   weights W; gradients W / gradient_shards; optimizer state k x W / shards
//   (sgd 0, momentum 1, adam 2); activations per sample A (halved by AMP,
//   quartered by checkpointing, scaled by the input area); a workspace step of
//   J bytes from batch `step_batch` on; everything rounded up to `round`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oomguard/fit/fit.h"

namespace oomguard::fit::testing {

struct FakeCurve {
  uint64_t weights = 100ull << 20;
  uint64_t fc_weights = 40ull << 20;  // part of weights, in layer "fc"
  uint64_t activations_per_sample = 30ull << 20;
  uint64_t input_per_sample = 3 * 224 * 224 * 4 + 8;
  int64_t output_classes = 1000;
  int64_t step_batch = 1 << 30;  // workspace step from this batch on
  uint64_t step_bytes = 0;
  uint64_t round = 1;            // rounding of the total (monotone)
  uint64_t context = 0;
  std::vector<int64_t> input_dims = {3, 224, 224};
  // Batches whose required bytes are lowered by `dip_bytes` (a non-monotone curve).
  std::map<int64_t, uint64_t> dips;
};

class FakePlanner {
 public:
  explicit FakePlanner(FakeCurve curve) : c_(std::move(curve)) {}

  Result<plan::StepPlan> Plan(const plan::PlanOptions& o) {
    ++calls_;
    last_options_ = o;
    if (!o.batch || *o.batch < 1) return MakeError("batch must be at least 1");
    const int64_t b = *o.batch;
    plan::StepPlan p;
    p.model = "fake";
    p.batch = b;
    p.target = o.target;
    uint64_t w = c_.weights;
    if (!o.replace_layer_with_pooling.empty()) {
      if (o.replace_layer_with_pooling != "fc") return MakeError("no layer " + o.replace_layer_with_pooling);
      w -= c_.fc_weights;
    }
    p.bytes.weights = w / static_cast<uint64_t>(o.parameter_shards);
    p.bytes.gradients = w / static_cast<uint64_t>(o.gradient_shards);
    uint64_t k = 0;
    if (o.optimizer == plan::Optimizer::kMomentum) k = 1;
    if (o.optimizer == plan::Optimizer::kAdam || o.optimizer == plan::Optimizer::kAdamW) k = 2;
    p.bytes.optimizer_state = k * w / static_cast<uint64_t>(o.optimizer_state_shards);
    long double a = static_cast<long double>(c_.activations_per_sample);
    if (o.precision != plan::Precision::kFp32) a /= 2;
    if (o.activation_checkpointing) a /= 4;
    auto in = o.input_overrides.find("input");
    long double area = 1;
    if (in != o.input_overrides.end()) {
      const auto& d = in->second;
      area = static_cast<long double>(d[1] * d[2]) / (c_.input_dims[1] * c_.input_dims[2]);
    }
    p.bytes.activations_saved = static_cast<uint64_t>(a * area) * static_cast<uint64_t>(b);
    p.bytes.inputs = static_cast<uint64_t>(static_cast<long double>(c_.input_per_sample) * area) *
                     static_cast<uint64_t>(b);
    p.bytes.workspace = b >= c_.step_batch ? c_.step_bytes : 0;
    p.bytes.context = c_.context;
    uint64_t total = p.bytes.weights + p.bytes.gradients + p.bytes.optimizer_state +
                     p.bytes.activations_saved + p.bytes.inputs + p.bytes.workspace + p.bytes.context;
    total = (total + c_.round - 1) / c_.round * c_.round;
    auto dip = c_.dips.find(b);
    if (dip != c_.dips.end()) total -= dip->second;
    p.peak_allocated_bytes = total;
    p.peak_reserved_bytes = total;
    p.required_bytes = total;
    p.layers.push_back({"conv1", "Conv", {b, 64, 112, 112}, 0, c_.weights - c_.fc_weights, 0});
    p.layers.push_back({"fc", "Gemm", {b, c_.output_classes}, 0, c_.fc_weights, 0});
    return p;
  }

  PlanFunction Function() {
    return [this](const plan::PlanOptions& o) { return Plan(o); };
  }
  int calls() const { return calls_; }
  const plan::PlanOptions& last_options() const { return last_options_; }
  const FakeCurve& curve() const { return c_; }

 private:
  FakeCurve c_;
  int calls_ = 0;
  plan::PlanOptions last_options_;
};

}  // namespace oomguard::fit::testing
