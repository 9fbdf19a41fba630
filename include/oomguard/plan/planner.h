// The training-step memory planner: from an ONNX model, predict the memory of
// one steady-state PyTorch training step (zero_grad(set_to_none) -> forward ->
// loss -> backward -> optimizer.step()) without running it.
//
// This header is the contract between the planner and its users (the plan, fit
// and split commands, what-if advice). Fields may be added; existing ones keep
// their meaning. Thread safety: a Model is immutable after loading and may be
// planned from several threads at once.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomguard/result.h"

namespace oomguard::plan {

enum class Optimizer { kSgd, kMomentum, kAdam, kAdamW, kRmsprop, kAdagrad };
// How the optimizer step is implemented; kDefault picks what PyTorch uses on the target.
enum class OptimizerImpl { kDefault, kLoop, kForeach, kFused };
enum class Precision { kFp32, kAmpFp16, kAmpBf16, kFp16, kBf16 };
enum class Loss { kCrossEntropy, kMse, kNone };
enum class Target { kCuda, kCpu };

Result<Optimizer> ParseOptimizer(std::string_view name);
Result<OptimizerImpl> ParseOptimizerImpl(std::string_view name);
Result<Precision> ParsePrecision(std::string_view name);
Result<Loss> ParseLoss(std::string_view name);
Result<Target> ParseTarget(std::string_view name);
std::string_view Name(Optimizer);
std::string_view Name(OptimizerImpl);
std::string_view Name(Precision);
std::string_view Name(Loss);
std::string_view Name(Target);

// A loaded ONNX model (graph and shapes; weights are never needed).
class Model;

// Loads an .onnx file, or a zoo model by name ("resnet50"). Errors name the
// file and what is wrong (missing, not ONNX, truncated, no inputs...).
Result<std::shared_ptr<const Model>> LoadModel(std::string_view path_or_zoo_name);

// The model with the initializers `patterns` name frozen (requires_grad=False): planned like registered
// buffers, with no gradient and no optimizer state, and no requires_grad flowing from them. A pattern is
// an initializer name, or a glob where `*` matches any run of characters ("backbone.*"). A pattern that
// matches no floating-point initializer is an error naming it. Patterns add to the model's own
// "oomguard.frozen" metadata.
Result<std::shared_ptr<const Model>> FreezeParameters(const Model& model, const std::vector<std::string>& patterns);

// The model with the nodes `no_grad` names run under torch.no_grad() (autograd records nothing: nothing
// saved, no gradient, their weights no optimizer state) and those `detached` names run inside a module
// whose result the model .detach()es (autograd records them, but their graph is freed with that result,
// before backward: what they save counts in forward only; no gradient comes back). Patterns are node
// names or globs where `*` matches any run of characters ("/teacher/*" is every node of module teacher).
// A pattern that matches no node is an error naming it. They add to the model's "oomguard.no_grad" and
// "oomguard.detached" metadata; no_grad wins where both name a node.
Result<std::shared_ptr<const Model>> MarkGradMode(const Model& model, const std::vector<std::string>& no_grad,
                                                 const std::vector<std::string>& detached);

// The model with the nodes of each segment (a list of node names or globs with `*`) run inside one
// torch.utils.checkpoint call: what they save is dropped after forward and recomputed in backward. A pattern
// that matches no node is an error naming it. They replace the model's "oomguard.checkpointed" metadata.
Result<std::shared_ptr<const Model>> MarkCheckpointed(const Model& model,
                                                     const std::vector<std::vector<std::string>>& segments);

// The largest batch the planner plans (--batch above it is refused; fit and
// split clamp their search to it).
inline constexpr int64_t kMaxBatch = int64_t{1} << 31;

enum class InplaceHint { kFromModel, kNone, kAll, kNodes };

struct PlanOptions {
  std::optional<int64_t> batch;  // overrides the batch axis; required if the model's is symbolic
  Optimizer optimizer = Optimizer::kAdam;
  OptimizerImpl optimizer_impl = OptimizerImpl::kDefault;
  Precision precision = Precision::kFp32;
  Loss loss = Loss::kCrossEntropy;
  Target target = Target::kCuda;
  int cuda_compute_capability = 80;  // selects the CUDA context size (e.g. 86 for sm_86)
  // PYTORCH_CUDA_ALLOC_CONF as the caching-allocator model sees it (cuda target).
  bool cuda_expandable_segments = false;                            // expandable_segments:True
  uint64_t cuda_max_split_size = std::numeric_limits<uint64_t>::max();  // max_split_size_mb, in bytes
  // Per-sample shape overrides (without the batch dimension): "input" -> {3, 240, 320}.
  std::map<std::string, std::vector<int64_t>> input_overrides;

  // What-if knobs (used by advice and split).
  bool activation_checkpointing = false;  // recompute activations per block; keep block inputs
  std::string replace_layer_with_pooling;  // name of a Gemm/MatMul node replaced by global pooling
  int parameter_shards = 1;        // ZeRO-3: parameters partitioned over this many ranks
  int gradient_shards = 1;         // ZeRO-2
  int optimizer_state_shards = 1;  // ZeRO-1
  uint64_t extra_persistent_bytes = 0;  // e.g. DDP gradient buckets, DP gathered outputs
  // Fill StepPlan::timeline (the plan page shows it); off, the simulation skips it.
  bool record_timeline = false;
  // Which activations ran in place (inplace=True, which ONNX does not record). kFromModel: the
  // model's metadata_props "oomguard.inplace" (a JSON list of node names, or "all") when it has
  // one, else unknown: planned out of place, and StepPlan::inplace says the plan is unsure.
  // kNodes: exactly `inplace_nodes` (names of ONNX nodes; a fused activation by any of its nodes).
  InplaceHint inplace = InplaceHint::kFromModel;
  std::vector<std::string> inplace_nodes;
  // (A new field must also go into BatchPlanner's option-set key, step_template.cc.)
};

// Bytes by category at the moment of the peak (they add up to the peak), plus
// the target's fixed costs. Context and workspace are zero on the CPU target.
struct MemoryBreakdown {
  uint64_t weights = 0;
  uint64_t gradients = 0;
  uint64_t optimizer_state = 0;
  uint64_t activations_saved = 0;  // tensors autograd keeps for backward (whole forward total)
  uint64_t inputs = 0;             // the input batch and labels
  uint64_t transient = 0;          // temporaries alive at the peak
  uint64_t workspace = 0;          // cuBLAS/cuDNN workspace
  uint64_t context = 0;            // CUDA context
  uint64_t allocator_slack = 0;    // caching-allocator rounding and segment slack
  bool operator==(const MemoryBreakdown&) const = default;
};

struct LayerMemory {
  std::string name;     // ONNX node name
  std::string op_type;  // ONNX operator
  std::vector<int64_t> output_shape;
  uint64_t saved_bytes = 0;      // bytes this node keeps for backward
  uint64_t parameter_bytes = 0;  // bytes of the parameters it owns
  uint64_t output_bytes = 0;
  bool operator==(const LayerMemory&) const = default;
};

// One moment of the simulated step: what was live, by category, while one node
// (or the loss, or the optimizer step) ran. What PyTorch's memory_viz shows
// after a GPU run, predicted before any run.
struct TimelinePoint {
  uint64_t event = 0;     // index of the simulated event in the step (grows with time)
  std::string phase;      // "forward", "backward" or "optimizer", as in StepPlan::peak_phase
  std::string node;       // the ONNX node simulated; "loss", "optimizer.step()" or "start of step"
  // Live tensor bytes by category (weights, gradients, optimizer_state,
  // activations_saved, inputs, transient; the fixed costs are zero here).
  MemoryBreakdown live;
  uint64_t allocated_bytes = 0;  // the sum of `live`
  bool operator==(const TimelinePoint&) const = default;
};

// The timeline keeps at most this many points; longer steps are downsampled by
// merging neighbours within a stage, keeping the larger (so the peak survives).
inline constexpr size_t kMaxTimelinePoints = 1000;

// Operators the planner has no rule for, by type: the simulation assumed they
// keep every input and output for backward, so the plan is only as good as
// that assumption for these bytes.
struct UncoveredOp {
  std::string op;               // operator type ("com.example.MyOp", "NonMaxSuppression")
  int nodes = 0;                // how many nodes of that type
  uint64_t bytes_at_risk = 0;   // bytes of the tensors assumed kept for their backward
  bool operator==(const UncoveredOp&) const = default;
};

// What the plan assumed about in-place activations, and the range the assumption spans. ONNX does
// not record inplace=True; where nothing says which activations ran in place (hint "none"), the
// plan assumes out of place, and AddInplaceRange() plans the other extreme too.
struct InplaceSummary {
  std::string hint = "none";  // "none", "option" (PlanOptions::inplace) or "metadata" (the model's)
  int candidates = 0;         // activation nodes PyTorch could have run in place, given the choices made
  std::vector<std::string> nodes;  // the nodes planned in place (their anchor node's name)
  // The plan's peak_allocated_bytes and required_bytes with no candidate in place (high) and with
  // every candidate in place (low); both equal the plan's own until AddInplaceRange widens them.
  uint64_t peak_allocated_low_bytes = 0, peak_allocated_high_bytes = 0;
  uint64_t required_low_bytes = 0, required_high_bytes = 0;
  bool Unsure() const { return hint == "none" && candidates > 0; }
  bool operator==(const InplaceSummary&) const = default;
};

// A byte count the ONNX file cannot pin down (two ways of writing the model that export alike, a
// kernel's scratch that depends on the CPU): the plan takes one reading, warns in words, and lists
// it here with its bytes and the way the measured step may differ from the plan. In-place
// activations have their own range (InplaceSummary); operators without a rule are `uncovered`.
struct PlanRisk {
  std::string what;       // a stable name, e.g. "dropout_input_held_by_caller"
  uint64_t bytes = 0;     // how far the step may be from the plan, at most (per layer for
                          // "shape_inference_stopped")
  std::string direction;  // "higher": the step may need more than planned; "lower"; "either"
  bool operator==(const PlanRisk&) const = default;
};

// Sizes the data decides (NonZero of a computed mask, Compress): the file records only their bound. The plan
// takes each at an expected extent (docs/plan.md "Data-dependent shapes"), and says what the tensors computed
// from them span between nothing selected and everything selected. Empty `nodes`: the model has none.
struct DataDependentShapes {
  std::vector<std::string> nodes;       // "'name' (NonZero): 64 of at most 512, 1/8 (one_hot over 8)"
  std::vector<std::string> unplanned;   // such nodes planned at no extent: their outputs are unknown
  int tensors = 0;                      // activations whose size follows those extents
  std::vector<std::string> tensor_names;  // the first few of them
  uint64_t least_bytes = 0, planned_bytes = 0, most_bytes = 0;  // those activations' bytes at each extent
  bool operator==(const DataDependentShapes&) const = default;
};

struct StepPlan {
  std::string model;
  int64_t batch = 0;
  Target target = Target::kCuda;
  uint64_t peak_allocated_bytes = 0;  // max live tensor bytes over the step
  uint64_t peak_reserved_bytes = 0;   // with the caching allocator's rounding (== allocated on CPU)
  // What must fit on the device: reserved + context + workspace (cuda); the peak on cpu.
  uint64_t required_bytes = 0;
  std::string peak_phase;  // "forward", "backward" or "optimizer"
  MemoryBreakdown bytes;
  std::vector<LayerMemory> layers;    // every node, in graph order
  std::vector<std::string> warnings;  // e.g. an eval-mode export, operators without a rule
  std::vector<UncoveredOp> uncovered;  // sorted by bytes at risk, largest first
  std::vector<PlanRisk> risks;         // the warnings that carry bytes, as data
  uint64_t parameter_count = 0;
  // Elements of the initializers frozen (requires_grad=False: --frozen, or the model's metadata
  // "oomguard.frozen"), planned like buffers: no gradient, no optimizer state; not in parameter_count.
  uint64_t frozen_parameter_count = 0;
  // Elements of the trained parameters that only code run under no_grad or detached reads (a teacher, a
  // momentum encoder): they get no gradient and no optimizer state; not in parameter_count.
  uint64_t no_grad_parameter_count = 0;
  // Nodes run under no_grad / detached (MarkGradMode, the "oomguard.no_grad" / "oomguard.detached"
  // metadata), and where the hint came from: "none", "metadata" or "option".
  uint64_t no_grad_nodes = 0;
  uint64_t detached_nodes = 0;
  std::string grad_mode_hint = "none";
  // torch.utils.checkpoint segments the plan followed (MarkCheckpointed, the "oomguard.checkpointed"
  // metadata), and where they came from: "none", "metadata" or "option". (The activation_checkpointing
  // what-if replaces them: then 0.)
  uint64_t checkpointed_segments = 0;
  uint64_t checkpointed_nodes = 0;
  std::string checkpoint_hint = "none";
  // Values held by their module's forward until it returns, from the model's metadata "oomguard.locals"
  // ("metadata"; "none" without it), and how many were planned so.
  std::string locals_hint = "none";
  uint64_t locals_held = 0;
  // Exactly what was live at the peak (sums to peak_allocated_bytes); unlike
  // `bytes`, whose activations_saved is the whole forward total.
  MemoryBreakdown at_peak;
  // Live bytes over the step, in time order (at most kMaxTimelinePoints). Its
  // largest allocated_bytes equals peak_allocated_bytes, and the first point
  // reaching it has phase == peak_phase.
  std::vector<TimelinePoint> timeline;
  InplaceSummary inplace;
  DataDependentShapes data_dependent;
  bool operator==(const StepPlan&) const = default;
};

// Plans one step. Fails with a user-facing message (no batch, bad override...).
Result<StepPlan> PlanStep(const Model& model, const PlanOptions& options);

// Plans many batches of one model, as fit, split and the what-ifs do. Per
// option set (everything but the batch) the simulation is recorded at two
// batches with each byte count fitted as a*batch + b; once a recording equals
// the full plan at a third batch, it answers every batch between the batches
// it was checked at by replaying its allocations (summed on the CPU target,
// through the caching-allocator model on CUDA). Other batches are planned in
// full and extend the range when the recording predicts them exactly; a batch
// threshold in the rules (a kernel chosen from batch 16 up) starts another
// recording. Plan(o) equals PlanStep(model, o) exactly. Thread-safe.
class BatchPlanner {
 public:
  explicit BatchPlanner(const Model& model);
  ~BatchPlanner();
  BatchPlanner(const BatchPlanner&) = delete;
  BatchPlanner& operator=(const BatchPlanner&) = delete;

  Result<StepPlan> Plan(const PlanOptions& options);
  // Plan(options)->required_bytes (or its error), without building the plan
  // where a recording answers: on the CPU target the peak of the recorded live
  // totals, each affine in the batch; on CUDA the recorded allocations alone
  // replayed through the caching-allocator model. `reach`: the largest batch
  // the caller expects to ask for this option set (a search's limit; 0 when
  // unknown): a recording not yet checked is checked there, so one full plan
  // covers the whole search.
  Result<uint64_t> RequiredBytes(const PlanOptions& options, int64_t reach = 0);

  struct Stats {
    int full_plans = 0;      // full plans (recording and checking included)
    int replayed_plans = 0;  // batches answered from a recording (plans and required bytes)
    int recordings = 0;      // recordings made
    int rejected = 0;        // recordings dropped: the check at a third batch failed
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// When `plan` is unsure about in-place activations (plan->inplace.Unsure()), plans `options` again
// with every candidate in place and sets plan->inplace's low and high bytes from the two plans;
// otherwise leaves them as they are (both the plan's own). `options` must be the ones `plan` came from.
Status AddInplaceRange(BatchPlanner& planner, const PlanOptions& options, StepPlan* plan);

// What `oomguard models` shows for a model.
struct ModelSummary {
  std::string name;
  std::string description;
  uint64_t parameter_count = 0;
  uint64_t parameter_bytes = 0;
  // Per input: name and shape; -1 marks the symbolic batch axis.
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;
};
ModelSummary Summarize(const Model& model);

// Names of the models built into the binary (data/zoo/*.onnx), sorted.
std::vector<std::string> ZooModelNames();

// Loads an ONNX model from bytes in memory (the fuzzer's entry point); `name` labels errors.
Result<std::shared_ptr<const Model>> LoadModelFromBytes(std::string_view bytes, std::string_view name);

}  // namespace oomguard::plan
