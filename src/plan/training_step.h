// The training-step simulation: replays one steady-state PyTorch step
// (zero_grad(set_to_none) -> forward -> loss -> backward -> optimizer.step())
// over the model's logical operators, allocating and freeing every tensor the
// way PyTorch's autograd does, and records the live-byte maximum.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuda_caching_allocator.h"
#include "model.h"
#include "saved_tensor_rules.h"
#include "shapes.h"

namespace oomguard::plan {

enum Category { kWeights, kGradients, kOptimizerState, kSaved, kInputs, kTransient, kExtra, kCategories };

// What one simulation did, recorded for BatchPlanner (step_template.cc): every
// allocation with its unrounded bytes, every free, recategorisation and
// observation in order, and which buffers each byte total of the plan sums.
struct StepTrace {
  enum Kind : uint8_t { kAlloc, kFree, kRecategorize, kObserve, kStepBegin };
  struct Event {
    Kind kind = kAlloc;
    uint8_t category = 0;         // kAlloc, kRecategorize
    int buffer = -1;              // kAlloc (the new buffer), kFree, kRecategorize
    const char* phase = nullptr;  // kObserve (a string literal)
    uint64_t bytes = 0;           // kAlloc, kObserve: as requested, before rounding
    // (24 bytes in this order: a large graph's trace holds millions.)
  };
  static_assert(sizeof(Event) <= 24);
  std::vector<Event> events;
  std::vector<std::vector<int>> layer_saved;  // per layer: the buffers its saved_bytes sums
  std::vector<int> total_saved;               // the buffers bytes.activations_saved sums
  std::vector<int> inplace_buffers;           // the buffers the in-place warning's bytes sum
  std::string inplace_kinds;
  int inplace_warning = -1;  // its index in the simulation's warnings, -1 when none
  // The forward end (the number of events before it), and the buffers a module's frame may hold
  // past their free (LocalsHeldUntil), each with the event before which it would go: the locals
  // risk is recomputed from them at every batch (AddLocalsRisk).
  size_t forward_end_event = 0;
  std::vector<std::pair<int, size_t>> locals_holds;
  bool has_matmul = false, has_conv = false;
  // Set by the caller, not the simulation: the caching allocator's result to take instead of running
  // the model over the step (a check that compares the trace with a recording's, event for event, and
  // reads nothing of the plan but how it compares).
  std::optional<ReplayResult> assumed_replay;
};

struct Buffer {
  uint64_t bytes = 0;  // as the allocator sees it (rounded on cuda)
  Category category = kTransient;
  int refs = 0;
};

// The step's live bytes: buffers by category, the running total, the peak and
// what was live at it, and on cuda the allocation events for the caching-
// allocator model. The simulation drives it; a recording replays into it.
class StepLedger {
 public:
  StepLedger(Target target, StepTrace* trace) : cuda_(target == Target::kCuda), trace_(trace) {}

  uint64_t Round(uint64_t bytes) const { return cuda_ ? CudaRoundSize(bytes) : bytes; }
  int Alloc(uint64_t bytes, Category c);
  void Ref(int b) {
    if (b >= 0) ++buffers[b].refs;
  }
  void Unref(int b);
  void Free(int b);  // the last reference went
  void Recategorize(int b, Category c);
  // Checks the peak with `temp` bytes of scratch on top of the live buffers; returns them rounded.
  uint64_t Observe(const char* phase, uint64_t temp);
  void MarkStepBegin();  // events before it persist across steps

  std::vector<Buffer> buffers;
  std::array<uint64_t, kCategories> live{};
  std::array<uint64_t, kCategories> at_peak{};
  uint64_t total = 0, peak = 0;
  std::vector<AllocationEvent> events;  // cuda: the step's allocations
  size_t step_begin = 0;
  std::vector<int>* freed = nullptr;    // when set, Free appends each buffer it frees
  std::string phase = "forward";

 private:
  void Count(const Buffer& b, int sign);
  bool cuda_;
  StepTrace* trace_;
};

// A cuda step's bytes beyond its tensors: cuBLAS and cuDNN workspaces and the context.
struct CudaStepOverheads {
  uint64_t workspace = 0, context = 0;
};
CudaStepOverheads CudaOverheads(const PlanOptions& options, bool has_matmul, bool has_conv);

// A cuda step's peaks from the ledger's peak and the caching allocator's replay: what
// FinishStepPlan reports and what its required bytes rest on.
struct CudaPeaks {
  uint64_t allocated = 0, reserved = 0;
};
CudaPeaks CudaStepPeaks(uint64_t ledger_peak, const ReplayResult& replay);
// What a cuda step needs of the device: its reserved peak and the overheads.
uint64_t CudaRequiredBytes(const CudaPeaks& peaks, const CudaStepOverheads& overheads);

// The plan's peak, breakdowns and required bytes from a finished ledger (on
// cuda, replayed through the caching-allocator model, or `replayed`: that replay's result, known
// already for these very events).
void FinishStepPlan(const StepLedger& ledger, const PlanOptions& options, bool has_matmul, bool has_conv,
                    uint64_t total_saved, StepPlan* plan, const ReplayResult* replayed = nullptr);

// The risk that module forwards hold their locals until they return: added to `plan` (risk
// and warning) when the forward peak with them held, `forward_peak_with_locals`, exceeds the step's
// `peak` by at least 1 % of it. StripLocalsRisk removes it again (a recording recomputes it).
void AddLocalsRisk(uint64_t forward_peak_with_locals, uint64_t peak, StepPlan* plan);
void StripLocalsRisk(StepPlan* plan);

// Where a risk of a plan sits: its index in plan.risks and its warning's in plan.warnings.
struct RiskPlace {
  size_t risk = 0, warning = 0;
  bool operator==(const RiskPlace&) const = default;
};
// Every risk of `plan` but the locals one (whose bytes are no line in the batch: a recording
// recomputes it), in order; nullopt where one is unknown or its warning is missing. A recording
// fits each one's bytes in the batch and replays them in place (SetRiskBytes).
std::optional<std::vector<RiskPlace>> FindRisks(const StepPlan& plan);
// Gives the risk at `at` `bytes`, in plan->risks and in its warning's words.
void SetRiskBytes(uint64_t bytes, RiskPlace at, StepPlan* plan);

// The warning that leaky_relu_/elu_ may have been in place, `bytes` at stake.
std::string InplaceWarning(const std::string& kinds, uint64_t bytes);

// Simulates the step for concrete shapes. Unknown operators get the
// conservative rule and a warning; fails only on a what-if that does not apply
// (replace_layer_with_pooling naming no suitable layer).
// With `trace`, records what the simulation did into it.
// With `share` (simulation_share.h), takes what other simulations at these shapes computed already.
class SimulationShare;
Result<StepPlan> SimulateTrainingStep(const Model& model, const ConcreteShapes& shapes, const PlanOptions& options,
                                      StepTrace* trace = nullptr, SimulationShare* share = nullptr);

// PlanStep's check of the options' shard counts (planner.cc), before any work.
Status CheckShardCounts(const PlanOptions& options);

// PlanStep after the shape pass (planner.cc): the simulation, the model's
// warnings first, the uncovered operators sorted. REQUIRES: CheckShardCounts passed.
Result<StepPlan> PlanFromShapes(const Model& model, const ConcreteShapes& shapes, const PlanOptions& options,
                                StepTrace* trace, SimulationShare* share = nullptr);

}  // namespace oomguard::plan
