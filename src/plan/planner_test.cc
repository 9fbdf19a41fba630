// The planner on small hand-built graphs whose memory is computed by hand.
#include "oomguard/plan/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "conv_scratch_table.h"
#include "elementwise_scratch.h"
#include "model.h"
#include "saved_tensor_rules.h"
#include "shapes.h"
#include "test_graphs.h"
#include "training_step.h"
#include "zoo.h"

namespace oomguard::plan {
namespace {

using testing::GraphBuilder;

// input[B,8] -> Gemm(16) -> Relu -> Gemm(4) -> logits[B,4]
std::string Mlp(bool external_weights = true) {
  GraphBuilder g;
  g.Input("input", {8})
      .Weight("fc1.weight", {16, 8}, external_weights)
      .Weight("fc1.bias", {16}, external_weights)
      .Weight("fc2.weight", {4, 16}, external_weights)
      .Weight("fc2.bias", {4}, external_weights);
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc1.weight", "fc1.bias"}, {"h"}, "fc1"), "transB", 1);
  g.Node("Relu", {"h"}, {"r"}, "relu");
  GraphBuilder::IntAttr(g.Node("Gemm", {"r", "fc2.weight", "fc2.bias"}, {"logits"}, "fc2"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

StepPlan MustPlan(const std::string& bytes, PlanOptions o) {
  auto model = LoadModelFromBytes(bytes, "test");
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error());
  auto plan = PlanStep(**model, o);
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error());
  return *plan;
}

PlanOptions Cpu(int64_t batch, Optimizer opt = Optimizer::kSgd) {
  PlanOptions o;
  o.batch = batch;
  o.target = Target::kCpu;
  o.optimizer = opt;
  return o;
}

// The embedded zoo is loaded with the shapes stored in each file (no ONNX shape inference at
// start-up): they must be exactly what the inference finds, tensor by tensor. A file exported
// without the annotation (tools/export_zoo.py) loses every activation's shape and fails here.
TEST(Zoo, StoredShapesAreWhatOnnxShapeInferenceFinds) {
  ASSERT_FALSE(ZooFiles().empty());
  for (const ZooFile& z : ZooFiles()) {
    SCOPED_TRACE(z.name);
    auto inferred = ParseModel(z.bytes, z.name, ShapeSource::kInfer);
    auto stored = ParseModel(z.bytes, z.name, ShapeSource::kStored);
    ASSERT_TRUE(inferred.ok() && stored.ok());
    const Model& a = **inferred;
    const Model& b = **stored;
    ASSERT_EQ(a.tensors.size(), b.tensors.size());
    int shaped = 0;
    for (size_t i = 0; i < a.tensors.size(); ++i) {
      const TensorInfo& x = a.tensors[i];
      const TensorInfo& y = b.tensors[i];
      ASSERT_EQ(x.name, y.name);
      EXPECT_EQ(x.dtype, y.dtype) << x.name;
      EXPECT_EQ(x.has_shape, y.has_shape) << x.name;
      EXPECT_EQ(x.dims, y.dims) << x.name;
      EXPECT_EQ(x.dim_symbols, y.dim_symbols) << x.name;
      shaped += x.kind == TensorKind::kActivation && x.has_shape;
    }
    EXPECT_GT(shaped, 0);
  }
}

TEST(Planner, MlpSgdPeaksInBackwardAtTheFirstLayersGradients) {
  // Hand count, batch 2, fp32: params 212 floats = 848 B; input 64 B + labels 16 B.
  // Forward keeps relu's output r (128 B) and log_softmax (32 B); logits (32 B) stay referenced.
  // Backward of fc1 allocates its weight+bias grads (576 B) while fc2's (272 B) and
  // d r/d h (128 B) are alive: 848 + 80 + 32 + 4 (loss) + 848 + 128 = 1940 B.
  StepPlan p = MustPlan(Mlp(), Cpu(2));
  EXPECT_EQ(p.peak_allocated_bytes, 1940u);
  EXPECT_EQ(p.peak_phase, "backward");
  EXPECT_EQ(p.parameter_count, 212u);
  EXPECT_EQ(p.bytes.activations_saved, 128u + 32u);
  EXPECT_EQ(p.at_peak.weights, 848u);
  EXPECT_EQ(p.at_peak.gradients, 848u);
  EXPECT_EQ(p.at_peak.inputs, 80u);
  EXPECT_EQ(p.at_peak.optimizer_state, 0u);
  uint64_t sum = p.at_peak.weights + p.at_peak.gradients + p.at_peak.optimizer_state +
                 p.at_peak.activations_saved + p.at_peak.inputs + p.at_peak.transient;
  EXPECT_EQ(sum, p.peak_allocated_bytes);
  EXPECT_EQ(p.peak_reserved_bytes, p.peak_allocated_bytes);  // cpu: no rounding
}

TEST(Planner, AdamLoopAddsTwoCopiesOfTheLargestParameterAtTheStep) {
  // State 2 x 848 + a 4-byte step per parameter (16 B); the step: params + grads + state + inputs
  // + logits + loss + 2 x 512 (fc1.weight, the first parameter: nothing of an earlier one is alive).
  StepPlan p = MustPlan(Mlp(), Cpu(2, Optimizer::kAdam));
  EXPECT_EQ(p.peak_phase, "optimizer");
  EXPECT_EQ(p.peak_allocated_bytes, 848u + 848u + 1712u + 80u + 32u + 4u + 1024u);
  PlanOptions foreach_opts = Cpu(2, Optimizer::kAdam);
  foreach_opts.optimizer_impl = OptimizerImpl::kForeach;  // one copy of all parameters
  EXPECT_EQ(MustPlan(Mlp(), foreach_opts).peak_allocated_bytes, 848u + 848u + 1712u + 80u + 32u + 4u + 848u);
  PlanOptions fused = Cpu(2, Optimizer::kAdam);
  fused.optimizer_impl = OptimizerImpl::kFused;  // no temporaries: backward peak + state
  EXPECT_EQ(MustPlan(Mlp(), fused).peak_allocated_bytes, 1940u + 1712u);
}

// torch 1.13's single-tensor Adam binds `denom` of one parameter until the next parameter's
// sqrt and quotient exist (measured: peak = 2 x this parameter + the previous one).
TEST(Planner, AdamLoopKeepsThePreviousParametersDenominator) {
  GraphBuilder g;
  g.Input("input", {8}).Weight("fc1.weight", {16, 8}).Weight("fc2.weight", {16, 16});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc1.weight"}, {"h"}, "fc1"), "transB", 1);
  GraphBuilder::IntAttr(g.Node("Gemm", {"h", "fc2.weight"}, {"logits"}, "fc2"), "transB", 1);
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(2, Optimizer::kAdam));
  // params 512 + 1024, grads the same, state 2 x 1536 + 2 x 4 B steps, input 64 + labels 16,
  // logits 128 + loss 4; the step: fc2's sqrt and quotient (2 x 1024) while fc1's denom (512) lives.
  EXPECT_EQ(p.peak_phase, "optimizer");
  EXPECT_EQ(p.peak_allocated_bytes, 1536u + 1536u + 3080u + 80u + 132u + 2048u + 512u);
  EXPECT_EQ(p.bytes.optimizer_state, 3080u);
  // On cuda the step counters are CPU tensors (capturable=False): not device memory.
  PlanOptions cuda = Cpu(2, Optimizer::kAdam);
  cuda.target = Target::kCuda;
  EXPECT_EQ(MustPlan(g.Bytes(), cuda).bytes.optimizer_state, 2u * 1536u);
}

TEST(Planner, StateCopiesPerOptimizer) {
  EXPECT_EQ(MustPlan(Mlp(), Cpu(2, Optimizer::kMomentum)).peak_allocated_bytes, 1940u + 848u);
  // rmsprop: 1 state copy (its step is a number, not a tensor); the step's sqrt of fc1.bias (64 B)
  // is made while fc1.weight's (512 B) is still bound.
  StepPlan r = MustPlan(Mlp(), Cpu(2, Optimizer::kRmsprop));
  EXPECT_EQ(r.peak_allocated_bytes, std::max<uint64_t>(1940u + 848u, 848u * 3 + 80 + 36 + 512 + 64));
}

TEST(Planner, MissingWeightFileplansTheSameAsInlineWeights) {
  StepPlan a = MustPlan(Mlp(true), Cpu(4));
  StepPlan b = MustPlan(Mlp(false), Cpu(4));
  EXPECT_EQ(a.peak_allocated_bytes, b.peak_allocated_bytes);
  EXPECT_EQ(a.bytes.activations_saved, b.bytes.activations_saved);
}

TEST(Planner, ActivationsScaleWithTheBatch) {
  StepPlan a = MustPlan(Mlp(), Cpu(2));
  StepPlan b = MustPlan(Mlp(), Cpu(20));
  EXPECT_EQ(b.bytes.activations_saved, 10 * a.bytes.activations_saved);
  EXPECT_EQ(b.batch, 20);
}

TEST(Planner, MaxPoolKeepsItsInputAndInt64Indices) {
  GraphBuilder g;
  g.Input("input", {1, 4, 4}).Weight("conv.weight", {2, 1, 3, 3});
  auto& conv = g.Node("Conv", {"input", "conv.weight"}, {"c"}, "conv");
  GraphBuilder::IntsAttr(conv, "pads", {1, 1, 1, 1});
  auto& pool = g.Node("MaxPool", {"c"}, {"p"}, "pool");
  GraphBuilder::IntsAttr(pool, "kernel_shape", {2, 2});
  GraphBuilder::IntsAttr(pool, "strides", {2, 2});
  g.Node("Flatten", {"p"}, {"f"}, "flatten");
  g.Weight("fc.weight", {3, 8});
  GraphBuilder::IntAttr(g.Node("Gemm", {"f", "fc.weight"}, {"logits"}, "fc"), "transB", 1);
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(1));
  // conv out [1,2,4,4] 128 B + indices 8 x int64 64 B + pooled [1,8] 32 B (fc's input) + log_softmax 12 B.
  EXPECT_EQ(p.bytes.activations_saved, 128u + 64u + 32u + 12u);
  ASSERT_EQ(p.layers.size(), 4u);
  EXPECT_EQ(p.layers[1].name, "pool");
  EXPECT_EQ(p.layers[1].saved_bytes, 128u + 64u);
  EXPECT_EQ(p.layers[1].output_shape, (std::vector<int64_t>{1, 2, 2, 2}));
  EXPECT_EQ(p.layers[2].saved_bytes, 0u) << "flatten is a view";
  EXPECT_EQ(p.layers[3].saved_bytes, 32u);
}

TEST(Planner, DecomposedGeluIsOneOpThatKeepsItsInput) {
  GraphBuilder g;
  g.Input("input", {8}).Weight("fc.weight", {6, 8}).Weight("head.weight", {3, 6});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"x"}, "fc"), "transB", 1);
  g.FloatConstant("sqrt2", 1.4142135f).FloatConstant("one", 1.0f).FloatConstant("half", 0.5f);
  g.Node("Div", {"x", "sqrt2"}, {"d"}, "gelu_div");
  g.Node("Erf", {"d"}, {"e"});
  g.Node("Add", {"e", "one"}, {"a"});
  g.Node("Mul", {"x", "a"}, {"m"});
  g.Node("Mul", {"m", "half"}, {"y"});
  GraphBuilder::IntAttr(g.Node("Gemm", {"y", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(2));
  ASSERT_EQ(p.layers.size(), 3u);
  EXPECT_EQ(p.layers[1].op_type, "Gelu");
  EXPECT_EQ(p.layers[1].name, "gelu_div");
  EXPECT_EQ(p.layers[1].saved_bytes, 48u);  // x [2,6]
  // x (48) + y (48, head's input) + log_softmax [2,3] (24).
  EXPECT_EQ(p.bytes.activations_saved, 48u + 48u + 24u);
  EXPECT_TRUE(p.warnings.empty());
}

// input[B,16] -> Gemm -> h -> Reshape [B,4,2,2] -> group_norm(2 groups) as torch 1.13 exports it ->
// Flatten -> Gemm -> logits[B,3].
std::string GroupNormNet() {
  GraphBuilder g;
  g.Input("input", {16}).Weight("fc.weight", {16, 16}).Weight("gn.weight", {4}).Weight("gn.bias", {4});
  g.Weight("in.scale", {2}, false).Weight("in.bias", {2}, false).Weight("head.weight", {3, 16});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"h"}, "fc"), "transB", 1);
  g.Constant("shape4", {0, 4, 2, 2}, {4}).Constant("groups", {0, 2, -1}, {3}).Constant("axes", {1, 2}, {2});
  g.Node("Reshape", {"h", "shape4"}, {"x"}, "to4d");
  g.Node("Reshape", {"x", "groups"}, {"xg"}, "gn");
  g.Node("InstanceNormalization", {"xg", "in.scale", "in.bias"}, {"n"});
  g.Node("Shape", {"x"}, {"xs"});
  g.Node("Reshape", {"n", "xs"}, {"nx"});
  g.Node("Unsqueeze", {"gn.weight", "axes"}, {"w"});
  g.Node("Mul", {"nx", "w"}, {"m"});
  g.Node("Unsqueeze", {"gn.bias", "axes"}, {"b"});
  g.Node("Add", {"m", "b"}, {"y"});
  g.Node("Flatten", {"y"}, {"f"}, "flatten");
  GraphBuilder::IntAttr(g.Node("Gemm", {"f", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

TEST(Planner, GroupNormPatternIsOneOpThatKeepsItsInputAndGroupStatistics) {
  StepPlan p = MustPlan(GroupNormNet(), Cpu(2));
  const LayerMemory* gn = nullptr;
  for (const LayerMemory& l : p.layers) {
    if (l.name == "gn") gn = &l;
    EXPECT_NE(l.op_type, "InstanceNormalization") << "the InstanceNormalization was not fused";
  }
  ASSERT_NE(gn, nullptr);
  EXPECT_EQ(gn->op_type, "GroupNorm");
  // h [2,16] (128 B, the storage of x) + mean and rstd per (sample, group): 2 x 2 x 2 x 4 B.
  EXPECT_EQ(gn->saved_bytes, 128u + 32u);
  // + head's input [2,16] (128 B) + log_softmax [2,3] (24 B); the normalized tensor is not kept.
  EXPECT_EQ(p.bytes.activations_saved, 160u + 128u + 24u);
}

// input[B,4,6] -> MatMul [6,5] -> Erf -> ReduceMean(axes) -> Gemm -> logits[B,3]
std::string MeanNet(std::vector<int64_t> axes) {
  GraphBuilder g;
  g.Input("input", {4, 6}).Weight("proj", {6, 5}).Weight("head.weight", {3, 5});
  g.Node("MatMul", {"input", "proj"}, {"h"}, "proj");
  g.Node("Erf", {"h"}, {"e"}, "erf");
  auto& mean = g.Node("ReduceMean", {"e"}, {"m"}, "mean");
  GraphBuilder::IntsAttr(mean, "axes", axes);
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  g.Node("Flatten", {"m"}, {"f"}, "flatten");
  GraphBuilder::IntAttr(g.Node("Gemm", {"f", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

TEST(Planner, MeanOverSomeAxesKeepsItsInputLikeTorch113) {
  // h [2,4,5] 160 B (erf's input) + e 160 B (the mean's input) + m [2,5] 40 B + log_softmax 24 B.
  EXPECT_EQ(MustPlan(MeanNet({1}), Cpu(2)).bytes.activations_saved, 160u + 160u + 40u + 24u);
}

// x -> ReduceMean(axis, dropped) -> Gemm(head.weight) -> logits; the model's bytes.
std::string MeanThenHead(GraphBuilder& g, const std::string& x, int64_t axis) {
  auto& mean = g.Node("ReduceMean", {x}, {"m"}, "mean");
  GraphBuilder::IntsAttr(mean, "axes", {axis});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  GraphBuilder::IntAttr(g.Node("Gemm", {"m", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

// input[B,5,4] -> Transpose (time first) -> LSTM(hidden 8) -> Squeeze -> ReduceMean(time) -> Gemm.
// `reordered`: W and R reach the LSTM as Concat(parameters) [-> Unsqueeze]; `sliced`: as
// torch.onnx.export writes them, each of nn.LSTM's weight_ih/weight_hh cut into its four gates
// (Slice) and put together again in ONNX's gate order.
enum class LstmWeights { kDirect, kReordered, kSliced };
std::string LstmNet(LstmWeights form) {
  GraphBuilder g;
  g.Input("input", {5, 4}).Weight("B", {1, 64});
  g.Weight("head.weight", {3, 8}).Constant("axes", {1}, {1}).Constant("zero", {0}, {1});
  if (form == LstmWeights::kSliced) {
    g.Weight("weight_ih", {32, 4}).Weight("weight_hh", {32, 8});
    for (int gate = 0; gate < 4; ++gate) {
      g.Constant("start" + std::to_string(gate), {8 * gate}, {1});
      g.Constant("end" + std::to_string(gate), {8 * gate + 8}, {1});
    }
    for (const std::string w : {"weight_ih", "weight_hh"}) {
      std::vector<std::string> gates;
      for (int gate : {0, 3, 1, 2}) {  // i, f, g, o -> i, o, f, c
        gates.push_back(w + "_gate" + std::to_string(gate));
        g.Node("Slice", {w, "start" + std::to_string(gate), "end" + std::to_string(gate), "zero"}, {gates.back()},
               w + "_slice" + std::to_string(gate));
      }
      GraphBuilder::IntAttr(g.Node("Concat", gates, {w + "_onnx"}, w + "_concat"), "axis", 0);
    }
    g.Node("Unsqueeze", {"weight_ih_onnx", "zero"}, {"W"}, "unsqueeze_w");
    g.Node("Unsqueeze", {"weight_hh_onnx", "zero"}, {"R"}, "unsqueeze_r");
  } else if (form == LstmWeights::kReordered) {
    g.Weight("W_a", {1, 16, 4}).Weight("W_b", {1, 16, 4}).Weight("R_a", {16, 8}).Weight("R_b", {16, 8});
    GraphBuilder::IntAttr(g.Node("Concat", {"W_b", "W_a"}, {"W"}, "gates_w"), "axis", 1);
    GraphBuilder::IntAttr(g.Node("Concat", {"R_b", "R_a"}, {"R2"}, "gates_r"), "axis", 0);
    g.Node("Unsqueeze", {"R2", "zero"}, {"R"}, "unsqueeze_r");
  } else {
    g.Weight("W", {1, 32, 4}).Weight("R", {1, 32, 8});
  }
  GraphBuilder::IntsAttr(g.Node("Transpose", {"input"}, {"x"}, "time_first"), "perm", {1, 0, 2});
  auto& lstm = g.Node("LSTM", {"x", "W", "R", "B"}, {"y", "yh", "yc"}, "lstm");
  GraphBuilder::IntAttr(lstm, "hidden_size", 8);
  g.Node("Squeeze", {"y", "axes"}, {"ys"}, "squeeze");
  return MeanThenHead(g, "ys", 0);
}

TEST(Planner, LstmKeepsSevenHiddenFloatsPerStepAndAContiguousInput) {
  PlanOptions o = Cpu(2);
  o.record_timeline = true;
  StepPlan p = MustPlan(LstmNet(LstmWeights::kDirect), o);
  ASSERT_GE(p.layers.size(), 2u);
  EXPECT_EQ(p.layers[1].op_type, "LSTM");
  // Measured with saved_tensors_hooks for nn.LSTM(4, 8, batch_first=True), batch 2, 5 steps: 2400 B
  // = 7 x 8 floats x 5 steps x 2 samples (2240 B) + the contiguous [5,2,4] input (160 B).
  EXPECT_EQ(p.layers[1].saved_bytes, 2400u);
  for (const std::string& w : p.warnings) EXPECT_EQ(w.find("LSTM"), std::string::npos) << w;
  // Backward unwinds the steps, freeing their states, before the input gradient and the gates'
  // gradient exist (measured per autograd node): at the LSTM's last point the 2240 B of states are
  // gone.
  const TimelinePoint* last = nullptr;
  for (const TimelinePoint& t : p.timeline) {
    if (t.phase == "backward" && t.node == "lstm") last = &t;
  }
  ASSERT_NE(last, nullptr);
  EXPECT_LT(last->live.activations_saved, 2240u);
}

// Reshape targets computed from an LSTM's output shape (nn.MultiheadAttention after an LSTM does this)
// resolve only if the shape pass itself knows LSTM.
TEST(Planner, LstmOutputShapeFeedsComputedReshapeTargets) {
  GraphBuilder g;
  g.Input("input", {5, 4}).Weight("W", {1, 32, 4}).Weight("R", {1, 32, 8}).Weight("B", {1, 64});
  g.Constant("zero", {0}, {1}).Constant("minus_one", {-1}, {1});
  GraphBuilder::IntsAttr(g.Node("Transpose", {"input"}, {"x"}, "time_first"), "perm", {1, 0, 2});
  GraphBuilder::IntAttr(g.Node("LSTM", {"x", "W", "R", "B"}, {"y"}, "lstm"), "hidden_size", 8);
  g.Node("Shape", {"y"}, {"s"});
  g.Node("Gather", {"s", "zero"}, {"steps"});
  GraphBuilder::IntAttr(g.Node("Concat", {"steps", "minus_one"}, {"target"}, "target"), "axis", 0);
  g.Node("Reshape", {"y", "target"}, {"logits"}, "flat");
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(2));
  const LayerMemory* flat = nullptr;
  for (const LayerMemory& l : p.layers) {
    if (l.name == "flat") flat = &l;
  }
  ASSERT_NE(flat, nullptr);
  EXPECT_EQ(flat->output_shape, (std::vector<int64_t>{5, 16}));
}

// x = rnn2(dropout(x)): ONNX cannot say whether the caller's x (the dropout's input) lives on
// over rnn2's forward; the plan frees it and says by how much the forward peak may be higher.
TEST(Planner, DropoutInputBeforeARecurrentLayerIsNamedAsAtRisk) {
  auto build = [](bool dropout) {
    GraphBuilder g;
    g.Input("input", {64, 16}).Weight("W1", {1, 96, 16}).Weight("R1", {1, 96, 32});
    g.Weight("W2", {1, 96, 32}).Weight("R2", {1, 96, 32});
    g.Constant("axis1", {1}, {1});
    GraphBuilder::IntsAttr(g.Node("Transpose", {"input"}, {"x"}, "time_first"), "perm", {1, 0, 2});
    GraphBuilder::IntAttr(g.Node("GRU", {"x", "W1", "R1"}, {"y1"}, "gru1"), "hidden_size", 32);
    g.Node("Squeeze", {"y1", "axis1"}, {"h1"}, "squeeze1");
    std::string next = "h1";
    if (dropout) {
      g.FloatConstant("ratio", 0.3f);
      g.Node("Dropout", {"h1", "ratio"}, {"d1"}, "between");
      next = "d1";
    }
    GraphBuilder::IntAttr(g.Node("GRU", {next, "W2", "R2"}, {"y2"}, "gru2"), "hidden_size", 32);
    auto& sum = g.Node("ReduceSum", {"y2"}, {"logits"}, "sum");
    GraphBuilder::IntAttr(sum, "keepdims", 0);
    g.Output("logits");
    return g.Bytes();
  };
  PlanOptions o = Cpu(4);
  o.loss = Loss::kNone;
  auto warned = [](const StepPlan& p) {
    for (const std::string& w : p.warnings) {
      if (w.find("x = rnn(dropout(x))") != std::string::npos) return w;
    }
    return std::string();
  };
  StepPlan with = MustPlan(build(true), o);
  ASSERT_EQ(with.peak_phase, "forward");
  // The dropout's input: [64 steps, 4, 32] floats.
  EXPECT_NE(warned(with).find("up to " + std::to_string(64 * 4 * 32 * 4) + " bytes"), std::string::npos)
      << warned(with);
  EXPECT_EQ(with.risks, (std::vector<PlanRisk>{{"dropout_input_held_by_caller", 64 * 4 * 32 * 4, "higher"}}));
  EXPECT_EQ(warned(MustPlan(build(false), o)), "");
}

// torch.onnx.export reorders an LSTM's gates by slicing its weights and concatenating them again;
// PyTorch reads the parameters as they are, so the plan must not change.
TEST(Planner, LstmWeightsReorderedByTheExportAreNoMemory) {
  auto forward_peak = [](const StepPlan& p) {
    uint64_t peak = 0;
    for (const TimelinePoint& t : p.timeline) {
      if (t.phase == "forward") peak = std::max(peak, t.allocated_bytes);
    }
    return peak;
  };
  PlanOptions o = Cpu(2);
  o.record_timeline = true;
  StepPlan direct = MustPlan(LstmNet(LstmWeights::kDirect), o);
  EXPECT_GT(forward_peak(direct), 0u);
  for (LstmWeights form : {LstmWeights::kReordered, LstmWeights::kSliced}) {
    StepPlan reordered = MustPlan(LstmNet(form), o);
    EXPECT_EQ(forward_peak(reordered), forward_peak(direct));
    EXPECT_EQ(reordered.peak_allocated_bytes, direct.peak_allocated_bytes);
    EXPECT_EQ(reordered.bytes.activations_saved, direct.bytes.activations_saved);
  }
}

// The layer's backward gives its own parameters their gradients, once each: the export's slices
// and concatenations have no gradient, and no slice's gradient is added to a parameter's out of
// place (tagger nets of tools/random_nets_modern.py: planned up to 5.6 % high in backward). While
// the steps unwind (their states still kept), each step adds its own hidden-to-hidden weight
// gradient to the running one out of place: two of that weight's bytes more (measured per autograd
// node with tools/step_profile.py); the input-to-hidden gradient is formed after the steps.
TEST(Planner, RecurrentLayerGivesItsParametersTheirGradientsWhileItsStepsUnwind) {
  PlanOptions o = Cpu(2);
  o.record_timeline = true;
  const StepPlan p = MustPlan(LstmNet(LstmWeights::kSliced), o);
  const uint64_t w_ih = 32 * 4 * 4, w_hh = 32 * 8 * 4, bias = 64 * 4, head = 3 * 8 * 4;
  const uint64_t states = 7 * 8 * 5 * 2 * 4;  // 7 hidden floats per step and sample
  uint64_t gradients_before = 0, most_gradients = 0;
  bool step_seen = false;
  for (const TimelinePoint& t : p.timeline) {
    most_gradients = std::max(most_gradients, t.live.gradients);
    if (t.phase != "backward") continue;
    if (t.node != "lstm") {
      if (!step_seen) gradients_before = t.live.gradients;
      continue;
    }
    if (step_seen) continue;
    step_seen = true;
    EXPECT_GE(t.live.activations_saved, states);
    EXPECT_EQ(t.live.gradients - gradients_before, w_hh);  // weight_hh's running gradient only
    EXPECT_GE(t.live.transient, 2 * w_hh);
  }
  EXPECT_TRUE(step_seen);
  EXPECT_EQ(gradients_before, head);
  EXPECT_EQ(most_gradients, w_ih + w_hh + bias + head);
}

// A tied embedding / LM head: the weight gets one gradient from the head and one from the
// embedding, and autograd 1.13 adds them out of place (measured: three weight-sized gradients live).
// torch.onnx writes nn.EmbeddingBag as a Loop whose body gathers rows of the weight, which the
// Loop reads from the enclosing graph without listing it as an input. The planner sees that read:
// the weight gets its gradient and its optimizer state, and the bags' output is [batch, dim].
// Against real PyTorch 1.13 steps (tools/measure_embedding_bag.py); without the implicit read the
// Adam peak was 16.7 % low (the 25.6 MB weight's gradient missing) and the layers after the Loop
// had no shapes.
// A measured model of tests/data/plan: NAME.onnx and its reference NAME.json.
struct Measured {
  nlohmann::json ref;
  std::shared_ptr<const Model> model;
};
Measured LoadMeasured(const std::string& name) {
  const std::string dir = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/";
  Measured m;
  std::ifstream in(dir + name + ".json");
  EXPECT_TRUE(in.good()) << name;
  if (in.good()) m.ref = nlohmann::json::parse(in);
  auto model = LoadModel(dir + name + ".onnx");
  EXPECT_TRUE(model.ok()) << model.error();
  if (model.ok()) m.model = *model;
  return m;
}

TEST(Planner, EmbeddingBagLoopGivesTheOuterWeightItsGradient) {
  const auto [ref, model] = LoadMeasured("embedding_bag");
  ASSERT_TRUE(model && !ref.is_null());
  for (const auto& [name, optimizer] : {std::pair<std::string, Optimizer>{"adam", Optimizer::kAdam},
                                        std::pair<std::string, Optimizer>{"sgd", Optimizer::kSgd}}) {
    SCOPED_TRACE(name);
    auto plan = PlanStep(*model, Cpu(ref["batch"].get<int64_t>(), optimizer));
    ASSERT_TRUE(plan.ok()) << plan.error();
    const double measured = ref["steps"][name]["peak_live_bytes"].get<double>();
    EXPECT_NEAR(static_cast<double>(plan->peak_allocated_bytes), measured, 0.001 * measured);
    EXPECT_EQ(plan->peak_phase, ref["steps"][name]["peak_phase"].get<std::string>());
    for (const LayerMemory& l : plan->layers) {
      if (l.op_type == "Loop") {
        EXPECT_EQ(l.output_shape, (std::vector<int64_t>{32, 64}));
      }
    }
    for (const std::string& w : plan->warnings) EXPECT_EQ(w.find("shape inference stopped"), std::string::npos) << w;
  }
}

// A Perceiver-style net (tools/measure_xattn.py --perceiver): kv = self.inp(x) feeds the
// cross-attention only through a transpose that is copied, so nothing keeps it; with `del kv` the
// step peaks in backward as planned, and left in its name it lifts the forward peak by kv's bytes.
// The ONNX is the same, so the plan follows the first and lists the second as a risk. The risk bounds
// every frame's values (the cross-attention's own q, k and scores too), so it reaches the named peak
// and passes it by up to a tenth.
TEST(Planner, NamedLocalsOfTheTopLevelForwardAreARisk) {
  const auto [ref, model] = LoadMeasured("perceiver_locals");
  ASSERT_TRUE(model && !ref.is_null());
  auto plan = PlanStep(*model, Cpu(ref["batch"].get<int64_t>(), Optimizer::kMomentum));
  ASSERT_TRUE(plan.ok()) << plan.error();
  const double with_del = ref["peak_live_bytes"]["del"].get<double>();
  const double named = ref["peak_live_bytes"]["named"].get<double>();
  EXPECT_NEAR(static_cast<double>(plan->peak_allocated_bytes), with_del, 0.001 * with_del);
  uint64_t at_risk = 0;
  for (const PlanRisk& r : plan->risks) {
    if (r.what != "locals_held_until_forward_returns") continue;
    at_risk = r.bytes;
    EXPECT_EQ(r.direction, "higher");
  }
  EXPECT_GE(static_cast<double>(plan->peak_allocated_bytes + at_risk), named);
  EXPECT_LE(static_cast<double>(plan->peak_allocated_bytes + at_risk), 1.1 * named);
}

// Python holds what a module's forward binds to names until that forward returns, at every depth, not
// only the top level: probes of unseen sets' forward-peaked misses (einsum attention over chunked heads,
// elu feature-map attention, a VQ bottleneck, Gumbel-softmax codes; tools/probe_families.py, real PyTorch
// 1.13 steps) peak up to 22 % above the plan, and the plan + the locals risk reaches each measured peak. A
// module that calls no child module runs torch's own functional code (nn.MultiheadAttention rebinds its
// names), a value read once by the next op is an expression's temporary (involution's (w * p).sum(3), a
// step planned exactly), and nets made of layers, whose peak is in backward, get no such risk.
TEST(Planner, LocalsOfModuleFramesAreARisk) {
  const std::string dir = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/";
  std::ifstream in(dir + "family_probes.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json ref = nlohmann::json::parse(in);
  auto locals = [](const StepPlan& p) {
    uint64_t bytes = 0;
    for (const PlanRisk& r : p.risks) bytes += r.what == "locals_held_until_forward_returns" ? r.bytes : 0;
    return bytes;
  };
  for (const char* name : {"einsum_chunk_heads", "elu_feature_attn", "vq_straight_through", "gumbel_codes"}) {
    const nlohmann::json& c = ref["cases"][name];
    auto model = LoadModel(dir + c["onnx"].get<std::string>());
    ASSERT_TRUE(model.ok()) << model.error();
    for (const nlohmann::json& row : c["rows"]) {
      PlanOptions o = Cpu(row["batch"].get<int64_t>(), Optimizer::kSgd);
      auto plan = PlanStep(**model, o);
      ASSERT_TRUE(plan.ok()) << plan.error();
      const uint64_t measured = row["measured_peak"].get<uint64_t>();
      EXPECT_LT(plan->peak_allocated_bytes, measured) << name;  // the miss the risk is for
      EXPECT_GE(plan->peak_allocated_bytes + locals(*plan), measured) << name << " batch " << row["batch"];
    }
  }
  {
    const nlohmann::json& c = ref["cases"]["unfold_involution"];
    auto model = LoadModel(dir + c["onnx"].get<std::string>());
    ASSERT_TRUE(model.ok()) << model.error();
    for (const nlohmann::json& row : c["rows"]) {
      auto plan = PlanStep(**model, Cpu(row["batch"].get<int64_t>(), Optimizer::kSgd));
      ASSERT_TRUE(plan.ok()) << plan.error();
      EXPECT_EQ(locals(*plan), 0u) << "involution batch " << row["batch"];
    }
  }
  for (const char* zoo : {"resnet18", "bert_base", "unet_small"}) {
    auto model = LoadModel(zoo);
    ASSERT_TRUE(model.ok()) << model.error();
    auto plan = PlanStep(**model, Cpu(8, Optimizer::kAdam));
    ASSERT_TRUE(plan.ok()) << plan.error();
    EXPECT_EQ(locals(*plan), 0u) << zoo;
  }
}

// Weights computed in forward (tools/probe_families.py --store, whole steps of real PyTorch 1.13):
// weight standardisation's var_mean keeps only the weight, and the convolution keeps the weight it was
// given; weight_norm is one fused op that keeps v, g and the norms, not g * v / ||v|| (which the
// convolution keeps). Before the operator table's var_mean and weight_norm rows the standardised
// convolutions planned one weight too many (+16 % saved), and keeping a computed weight in the
// convolution without the weight_norm row planned one too many there. The standardisation's divisor is
// broadcast: its gradient's full-size scratch (ElementwiseScratch.BroadcastInputsTakeTheirOwnRows) was the
// last weight-sized piece (ws_conv_big's backward peak -14 % without it).
TEST(Planner, WeightsComputedInForwardAreKeptOnceAsTorchKeepsThem) {
  const std::string dir = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/";
  std::ifstream in(dir + "family_probes.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json ref = nlohmann::json::parse(in);
  for (const char* name : {"ws_conv", "ws_conv_gn", "ws_conv_big", "wn_conv1d"}) {
    SCOPED_TRACE(name);
    const nlohmann::json& c = ref["cases"][name];
    ASSERT_TRUE(c.is_object());
    auto model = LoadModel(dir + c["onnx"].get<std::string>());
    ASSERT_TRUE(model.ok()) << model.error();
    const Optimizer opt = c["optimizer"] == "momentum" ? Optimizer::kMomentum : Optimizer::kSgd;
    for (const auto& row : c["rows"]) {
      const int64_t batch = row["batch"].get<int64_t>();
      SCOPED_TRACE(batch);
      auto plan = PlanStep(**model, Cpu(batch, opt));
      ASSERT_TRUE(plan.ok()) << plan.error();
      const double saved = row["measured_saved"].get<double>();
      EXPECT_NEAR(static_cast<double>(plan->bytes.activations_saved), saved, 0.005 * saved);
      const double peak = row["measured_peak"].get<double>();
      // wn_conv1d's plan is 19.5 KB high at both batches (about its 40 x 40 x 3 weight, not a rule of the
      // convolution's); since conv fuzz round 9 its conv1d weight gradient counts its padding to 48
      // channels as oneDNN blocks it (8448 bytes more, 3.2 -> 4.6 % at batch 2, 0.87 -> 1.24 % at 8).
      const bool wn = std::string(name) == "wn_conv1d";
      EXPECT_NEAR(static_cast<double>(plan->peak_allocated_bytes), peak,
                  (wn ? (batch >= 8 ? 0.0125 : 0.05) : (batch >= 8 ? 0.01 : 0.04)) * peak);
    }
  }
}

// A stored probe of tools/probe_families.py --store: its model and measured rows (tests/data/plan).
struct FamilyProbe {
  std::shared_ptr<const Model> model;
  nlohmann::json rows;
};
FamilyProbe LoadFamilyProbe(const std::string& name) {
  const std::string dir = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/";
  std::ifstream in(dir + "family_probes.json");
  EXPECT_TRUE(in.good());
  if (!in.good()) return {};
  const nlohmann::json c = nlohmann::json::parse(in)["cases"][name];
  EXPECT_TRUE(c.is_object()) << name;
  if (!c.is_object()) return {};
  auto model = LoadModel(dir + c["onnx"].get<std::string>());
  EXPECT_TRUE(model.ok()) << model.error();
  if (!model.ok()) return {};
  return {*model, c["rows"]};
}

// Plans each measured row of the stored probe `name` (CPU; SGD unless the probe was measured with
// another optimizer, `opt`) and hands it to `check` with the plan.
void ForEachProbeRow(const std::string& name, const std::function<void(const nlohmann::json&, const StepPlan&)>& check,
                     Optimizer opt = Optimizer::kSgd) {
  const FamilyProbe probe = LoadFamilyProbe(name);
  ASSERT_TRUE(probe.model);
  for (const auto& row : probe.rows) {
    const int64_t batch = row["batch"].get<int64_t>();
    SCOPED_TRACE(batch);
    auto plan = PlanStep(*probe.model, Cpu(batch, opt));
    ASSERT_TRUE(plan.ok()) << plan.error();
    check(row, *plan);
  }
}

// Code autograd records nothing of (tools/probe_families.py --store, whole steps of real PyTorch 1.13):
// a distillation teacher under torch.no_grad(), the same teacher .detach()ed (its graph, built with grad,
// dies with its result before the student runs), a MoCo-style key encoder under no_grad beside its query
// encoder (adam). torch.onnx.export records neither; the stored files carry "oomguard.no_grad" /
// "oomguard.detached" as oomguard.export writes them. Without them the plan keeps the teacher's
// activations for a backward that never comes (+105 / +123 % under no_grad, +22 / +36 % detached).
TEST(Planner, NoGradAndDetachedCodeKeepsNothingForBackward) {
  auto plain = [](const Model& m) {
    auto copy = std::make_shared<Model>(m);
    for (NodeInfo& n : copy->nodes) n.grad_mode = GradMode::kRecorded;
    copy->grad_mode_hint = "none";
    return std::shared_ptr<const Model>(std::move(copy));
  };
  auto detached_risk = [](const StepPlan& p) {
    for (const PlanRisk& r : p.risks) {
      if (r.what == "branch_may_be_detached") return r.bytes;
    }
    return uint64_t{0};
  };
  {
    const FamilyProbe probe = LoadFamilyProbe("nograd_teacher");
    ASSERT_TRUE(probe.model);
    for (const auto& row : probe.rows) {
      const int64_t batch = row["batch"].get<int64_t>();
      SCOPED_TRACE(batch);
      auto plan = PlanStep(*probe.model, Cpu(batch));
      ASSERT_TRUE(plan.ok()) << plan.error();
      const double peak = row["measured_peak"].get<double>();
      EXPECT_NEAR(static_cast<double>(plan->peak_allocated_bytes), peak, 0.01 * peak);
      const double saved = row["measured_saved"].get<double>();
      EXPECT_NEAR(static_cast<double>(plan->bytes.activations_saved), saved, 0.005 * saved);
      EXPECT_EQ(plan->grad_mode_hint, "metadata");
      EXPECT_EQ(plan->no_grad_nodes, 10u);  // the teacher's, Constants aside
      EXPECT_EQ(plan->detached_nodes, 0u);
      auto recorded = PlanStep(*plain(*probe.model), Cpu(batch));
      ASSERT_TRUE(recorded.ok()) << recorded.error();
      EXPECT_GT(static_cast<double>(recorded->peak_allocated_bytes), 1.5 * peak);  // the miss without the hint
      EXPECT_EQ(plan->parameter_count + plan->no_grad_parameter_count, recorded->parameter_count);
      // Without the hint, two towers read the input: the risk names the bytes, and they cover the miss.
      EXPECT_EQ(detached_risk(*plan), 0u);
      const uint64_t at_risk = detached_risk(*recorded);
      EXPECT_LE(static_cast<double>(recorded->peak_allocated_bytes - at_risk), peak);
    }
  }
  {
    const FamilyProbe probe = LoadFamilyProbe("detached_teacher");
    ASSERT_TRUE(probe.model);
    for (const auto& row : probe.rows) {
      const int64_t batch = row["batch"].get<int64_t>();
      SCOPED_TRACE(batch);
      PlanOptions o = Cpu(batch);
      o.inplace = InplaceHint::kAll;  // its ReLUs are nn.ReLU(inplace=True); the stored metadata names none
      auto plan = PlanStep(*probe.model, o);
      ASSERT_TRUE(plan.ok()) << plan.error();
      EXPECT_EQ(plan->detached_nodes, 10u);
      const double peak = row["measured_peak"].get<double>();
      // Batch 4 is 3.1 % low: oneDNN's forward scratch of the teacher's second convolution (224 KB at
      // its peak, tools/step_profile.py family:detached_teacher), not the teacher's graph.
      EXPECT_NEAR(static_cast<double>(plan->peak_allocated_bytes), peak, (batch >= 16 ? 0.01 : 0.04) * peak);
      EXPECT_EQ(plan->peak_phase, "forward");  // the teacher's graph at its largest, before .detach()
      auto recorded = PlanStep(*plain(*probe.model), o);
      ASSERT_TRUE(recorded.ok()) << recorded.error();
      EXPECT_GT(static_cast<double>(recorded->peak_allocated_bytes), 1.2 * peak);
      EXPECT_LE(static_cast<double>(recorded->peak_allocated_bytes - detached_risk(*recorded)), peak);
    }
  }
  // Models of one tower get no such risk, nor do a router beside its experts or a container's members.
  for (const char* zoo : {"resnet18", "bert_base", "unet_small", "vit_b_16"}) {
    auto model = LoadModel(zoo);
    ASSERT_TRUE(model.ok()) << model.error();
    auto plan = PlanStep(**model, Cpu(4, Optimizer::kAdam));
    ASSERT_TRUE(plan.ok()) << plan.error();
    EXPECT_EQ(detached_risk(*plan), 0u) << zoo;
  }
  auto two_modules = [&](const std::string& a, const std::string& b, int64_t b_width) {
    GraphBuilder g;
    g.Input("input", {64}).Weight("wa", {256, 64}).Weight("wb", {b_width, 64}).Weight("wc", {10, 256 + b_width});
    GraphBuilder::IntAttr(g.Node("Gemm", {"input", "wa"}, {"ya"}, "/" + a + "/Gemm"), "transB", 1);
    g.Node("Relu", {"ya"}, {"ra"}, "/" + a + "/act/Relu");
    GraphBuilder::IntAttr(g.Node("Gemm", {"input", "wb"}, {"yb"}, "/" + b + "/Gemm"), "transB", 1);
    g.Node("Relu", {"yb"}, {"rb"}, "/" + b + "/act/Relu");
    GraphBuilder::IntAttr(g.Node("Concat", {"ra", "rb"}, {"cat"}, "/Concat"), "axis", 1);
    GraphBuilder::IntAttr(g.Node("Gemm", {"cat", "wc"}, {"logits"}, "/head/Gemm"), "transB", 1);
    g.Output("logits");
    auto model = LoadModelFromBytes(g.Bytes(), "towers");
    EXPECT_TRUE(model.ok()) << model.error();
    auto plan = PlanStep(**model, Cpu(8));
    EXPECT_TRUE(plan.ok()) << plan.error();
    return detached_risk(*plan);
  };
  EXPECT_GT(two_modules("teacher", "student", 128), 0u);
  EXPECT_EQ(two_modules("experts.0", "experts.1", 256), 0u);  // one container's members
  EXPECT_EQ(two_modules("experts", "router", 4), 0u);        // a gate beside the experts: no second tower
  // The key encoder reads torch.flip(x): a Slice with step -1, a copy (planned as a view of x it was
  // -6.9 / -9.3 % low, the flipped batch missing while the encoder runs).
  ForEachProbeRow("momentum_key_encoder", [](const nlohmann::json& row, const StepPlan& plan) {
    const double peak = row["measured_peak"].get<double>();
    EXPECT_NEAR(static_cast<double>(plan.peak_allocated_bytes), peak, 0.01 * peak);
    const double saved = row["measured_saved"].get<double>();
    EXPECT_NEAR(static_cast<double>(plan.bytes.activations_saved), saved, 0.005 * saved);
    EXPECT_GT(plan.no_grad_parameter_count, 0u);
    // adam's two state tensors per trained weight, and a step counter per tensor: the key encoder has none
    EXPECT_LT(plan.bytes.optimizer_state, 2 * 4 * (plan.parameter_count + plan.no_grad_parameter_count));
  }, Optimizer::kAdam);
  // nn.MultiheadAttention under torch.no_grad(): torch 1.13's F.multi_head_attention_forward holds q, k, v, the
  // scaled q and the attention weights until it returns (planned as freed after their last read: -8.1 / -10.9 %,
  // one [B, T, d] tensor short at the output projection). The plain file keeps them all for backward.
  ForEachProbeRow("mha_nograd", [](const nlohmann::json& row, const StepPlan& plan) {
    const double peak = row["measured_peak"].get<double>();
    EXPECT_NEAR(static_cast<double>(plan.peak_allocated_bytes), peak, 0.01 * peak);
    EXPECT_EQ(plan.peak_phase, "forward");
  });
  {
    auto model = LoadModel(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/family_nograd_teacher.onnx");
    ASSERT_TRUE(model.ok()) << model.error();
    auto bad = MarkGradMode(**model, {"/nothing/*"}, {});
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("--no-grad '/nothing/*' matches no node"), std::string::npos) << bad.error();
    auto both = MarkGradMode(**model, {"/student/student.0/*"}, {"/student/*"});
    ASSERT_TRUE(both.ok()) << both.error();
    auto plan = PlanStep(**both, Cpu(4));
    ASSERT_TRUE(plan.ok()) << plan.error();
    EXPECT_EQ(plan->grad_mode_hint, "option");
    EXPECT_EQ(plan->no_grad_nodes, 11u);   // the teacher's 10 (metadata) and the student's first conv
    EXPECT_EQ(plan->detached_nodes, 9u);   // the rest of the student: no_grad wins where both name a node
  }
}

// Gradient checkpointing (tools/probe_families.py --store, whole steps of real PyTorch 1.13): MLP, post-norm
// transformer and conv blocks run through torch.utils.checkpoint.checkpoint (use_reentrant=False and True) and
// checkpoint_sequential. The ONNX file is the plain forward's; the stored files carry "oomguard.checkpointed" /
// "oomguard.checkpointed_reentrant" as oomguard.export writes them. Without them the plan keeps every block's
// activations through forward (+33 to +101 % at the larger batch).
TEST(Planner, CheckpointedSegmentsFollowTorchUtilsCheckpoint) {
  for (const char* name : {"ckpt_mlp", "ckpt_mlp_reentrant", "ckpt_transformer", "ckpt_transformer_reentrant",
                           "ckpt_conv", "ckpt_conv_reentrant", "ckpt_sequential"}) {
    SCOPED_TRACE(name);
    const FamilyProbe probe = LoadFamilyProbe(name);
    ASSERT_TRUE(probe.model);
    auto plain = std::make_shared<Model>(*probe.model);
    for (NodeInfo& n : plain->nodes) n.checkpoint_segment = -1, n.checkpoint_reentrant = false;
    plain->checkpoint_segments = 0;
    plain->checkpoint_hint = "none";
    for (const auto& row : probe.rows) {
      const int64_t batch = row["batch"].get<int64_t>();
      SCOPED_TRACE(batch);
      const Optimizer opt = std::string(name).find("transformer") != std::string::npos ? Optimizer::kAdam
                                                                                        : Optimizer::kSgd;
      auto plan = PlanStep(*probe.model, Cpu(batch, opt));
      ASSERT_TRUE(plan.ok()) << plan.error();
      const double peak = row["measured_peak"].get<double>();
      EXPECT_NEAR(static_cast<double>(plan->peak_allocated_bytes), peak, 0.01 * peak);
      EXPECT_EQ(plan->checkpoint_hint, "metadata");
      EXPECT_GE(plan->checkpointed_segments, 2u);
      auto recorded = PlanStep(*plain, Cpu(batch, opt));
      ASSERT_TRUE(recorded.ok()) << recorded.error();
      EXPECT_GT(static_cast<double>(recorded->peak_allocated_bytes), 1.02 * peak);  // the miss without them
    }
  }
}

// A planned byte count within `tolerance` (a fraction) of a probe row's measured `field`.
void ExpectNearMeasured(uint64_t planned, const nlohmann::json& row, const char* field, double tolerance) {
  const double measured = row[field].get<double>();
  EXPECT_NEAR(static_cast<double>(planned), measured, tolerance * measured) << field;
}

// Every row of each stored probe (name, optimizer): saved bytes within `saved` and the peak within `peak`
// (fractions) of what was measured.
void ExpectProbesNearMeasured(const std::vector<std::pair<const char*, Optimizer>>& probes, double saved, double peak) {
  for (const auto& [name, opt] : probes) {
    SCOPED_TRACE(name);
    ForEachProbeRow(
        name,
        [&](const nlohmann::json& row, const StepPlan& plan) {
          ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", saved);
          ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", peak);
        },
        opt);
  }
}

// Fine-tuning with frozen parameters (requires_grad=False), planned from the export's "oomguard.frozen"
// metadata (tools/probe_families.py writes it as oomguard.export does; real PyTorch 1.13 CPU steps, whose
// optimizers skip the parameters without a gradient): a CNN whose first two conv blocks are frozen (Adam and
// SGD), a Linear stack with LoRA adapters whose base weights are frozen (Adam), a frozen embedding under a
// trained head (SGD). The frozen initializers are planned as buffers: no gradient, no optimizer state, and
// nothing before the first trained weight kept for backward. Without the metadata (every initializer
// trained) the same rows plan 35-91 % high (the CNN), see tools/probe_families.py's plain variants.
TEST(Planner, FrozenParametersPlanLikeBuffersInRealFineTuningSteps) {
  const std::vector<std::pair<const char*, Optimizer>> probes = {{"frozen_stem_cnn", Optimizer::kAdam},
                                                                {"frozen_stem_cnn_sgd", Optimizer::kSgd},
                                                                {"lora_mlp", Optimizer::kAdam},
                                                                {"frozen_embed_head", Optimizer::kSgd}};
  for (const auto& [name, opt] : probes) {
    SCOPED_TRACE(name);
    ForEachProbeRow(
        name,
        [](const nlohmann::json& row, const StepPlan& plan) {
          EXPECT_GT(plan.frozen_parameter_count, 0u);
          ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
          ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.002);
        },
        opt);
  }
}

// A matmul whose operands' batch dims broadcast over two or more dims (a capsule layer's W [1, I, J, n, m]
// @ u [N, I, 1, m, 1]): matmul() copies each expanded operand for bmm, which keeps the copies, and
// backward forms their gradients at the expanded size before summing them down (tools/probe_families.py
// bcast_matmul5d, real PyTorch 1.13 steps). Without the copies the plan kept 1 % of the saved bytes and
// was 58-83 % low.
TEST(Planner, BroadcastBatchMatmulKeepsTheExpandedCopies) {
  ForEachProbeRow("bcast_matmul5d", [](const nlohmann::json& row, const StepPlan& plan) {
    ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
    ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.001);
  });
}

// A dense convolution after a LayerNorm written as permute -> nn.LayerNorm(C) -> permute reads a
// channels-last input, and oneDNN's channels-last kernels reorder its weights, not its activations:
// 2 x the weight in forward, 3 x in backward (tools/probe_families.py ln_channels_first, real PyTorch
// 1.13 steps: -18 % at batch 2 with the blocked rule).
TEST(Planner, ChannelsLastDenseConvolutionsReorderTheirWeights) {
  ForEachProbeRow("ln_channels_first", [](const nlohmann::json& row, const StepPlan& plan) {
    ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.002);
  });
}

// Message passing sums messages into destinations with index_add (exported as ScatterElements over an
// expanded index and source): torch keeps the 1-D index and the source, not the zeros, the expanded
// int64 index or the result the planner assumed without a rule (tools/probe_families.py gnn_scatter:
// saved +18 %, peak +6.3 % before).
TEST(Planner, ScatterKeepsItsIndexAndIndexAddItsSource) {
  ForEachProbeRow("gnn_scatter", [](const nlohmann::json& row, const StepPlan& plan) {
    EXPECT_TRUE(plan.uncovered.empty());
    ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
    ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.001);
  });
}

// torch.repeat_interleave exports its repeats as values: a constant expanded to the repeated dim's
// length, split into one value per slice, concatenated into each slice's Expand shape. Without Expand
// and Split carrying known values the planner could not infer the output's shape and refused the
// model (unseen set 7; tools/probe_families.py repeat_interleave, real PyTorch 1.13 steps).
TEST(Planner, RepeatInterleaveExportIsPlanned) {
  ForEachProbeRow("repeat_interleave", [](const nlohmann::json& row, const StepPlan& plan) {
    ASSERT_FALSE(plan.layers.empty());
    EXPECT_EQ(plan.layers.back().output_shape, (std::vector<int64_t>{row["batch"].get<int64_t>(), 4, 90}));
    ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.05);
  });
}

// An einsum whose operand is not in the order bmm needs ("bchw,cd->bdhw": [b, h, w, c]) copies it, and
// bmm keeps the copy even where the operand itself is kept by another op (a softmax's output):
// tools/probe_families.py gumbel_codes, saved -40 % without the copy.
TEST(Planner, EinsumKeepsTheOperandCopiesBmmWasGiven) {
  ForEachProbeRow("gumbel_codes", [](const nlohmann::json& row, const StepPlan& plan) {
    ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
  });
}

// Dense layers of 4-15 input channels whose kernel is 14 or more wide (a strided k15-k17 1-D audio
// front end) are refused by both direct weight-gradient kernels and run oneDNN's gemm on plain buffers:
// its scratch (one sample's im2col columns, weight copies, sgemm's packing) does not grow with the
// batch, and none of the blocked reorders the direct kernels take is made (tools/probe_families.py,
// real PyTorch 1.13 steps: 1-D up to 49 % low at batch 2 and 2-D 16 % high at batch 8 with them).
// Wider inputs under a kernel wider than 14 alike (the AVX-512 kernel refuses kw > 14): 1-D 16-64
// channels, k15 s2 (a 1-D U-Net's down path was 17 % low at batch 2), and 2-D 1x17.
TEST(Planner, WideKernelWeightGradientRunsGemm) {
  for (const char* name : {"conv1d_s2_only", "conv1d_k15_mid", "conv1d_k17_stem", "conv2d_k1x15_stem",
                           "conv2d_k3x15_mid", "conv1d_k15_wide_mid", "conv1d_k15_wider_mid", "conv1d_k15_wide_stem",
                           "conv2d_k1x17_wide_mid", "unet1d_k15"}) {
    SCOPED_TRACE(name);
    ForEachProbeRow(name, [](const nlohmann::json& row, const StepPlan& plan) {
      ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.002);
    });
  }
}

// A 'same'-padded kernel 25 or more wide (k21 over a length that leaves a right padding past the last
// unroll) is beyond oneDNN's direct forward kernels (DenseForwardKernel): gemm_convolution_fwd runs on
// plain buffers, with no input reorder and no blocked output (tools/probe_families.py conv1d_k25_wide_in_stem,
// 64 -> 16 k25 over 256: planned +2.6 % at batch 64 with the direct kernel's reordered input, its peak
// moved into forward; conv1d_k31_same, 16 -> 32 k31 over 1024, whose steps peak in backward).
TEST(Planner, WideSamePaddedKernelForwardRunsGemm) {
  for (const char* name : {"conv1d_k25_wide_in_stem", "conv1d_k31_same"}) {
    SCOPED_TRACE(name);
    ForEachProbeRow(name, [](const nlohmann::json& row, const StepPlan& plan) {
      ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.002);
    });
  }
}

// Autograd 1.13 adds the gradients a tensor gets from two consumers out of place (InputBuffer::accumulate:
// old_var + var), a third tensor-sized buffer while both addends are held: two Linears reading one
// tensor, and an auxiliary loss computed in forward from the trunk the classifier also reads
// (tools/probe_families.py grad_sum_heads, sqerr_aux; unseen set 8's multi-task net). Planned as added
// in place, the peaks were 19 % and 9 % low. Where the addends are narrow() slices of torch.cat gradients
// (dense_cat: a feature read only by three concatenations) the sum also lets the cat gradients go, which
// the plan had held until the feature's producer ran (+0.8 / +2.9 % at batches 16 / 64).
TEST(Planner, GradientsOfTwoConsumersAreAddedOutOfPlace) {
  for (const char* name : {"grad_sum_heads", "sqerr_aux", "dense_cat"}) {
    SCOPED_TRACE(name);
    ForEachProbeRow(name, [](const nlohmann::json& row, const StepPlan& plan) {
      ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.001);
    });
  }
}

// A DGCNN edge convolution written with amax over the neighbours exports the ReduceMax that
// torch.max(x, dim)[0] exports too; the plan takes max(dim)'s backward (no temporaries) and says what
// amax's mask would add as a risk in bytes. With amax, the real step peaks in that backward: within
// 1 % of the plan plus the risk (tools/probe_families.py edge_knn, edge_knn_one: 16 % and 28 % above
// the plan alone).
TEST(Planner, AmaxOverNeighboursIsWithinThePlanPlusItsRisk) {
  for (const char* name : {"edge_knn", "edge_knn_one"}) {
    SCOPED_TRACE(name);
    ForEachProbeRow(name, [](const nlohmann::json& row, const StepPlan& plan) {
      ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
      auto risk = std::find_if(plan.risks.begin(), plan.risks.end(),
                               [](const PlanRisk& r) { return r.what == "reduction_may_be_amax"; });
      ASSERT_NE(risk, plan.risks.end());
      EXPECT_EQ(risk->direction, "higher");
      const double measured = row["measured_peak"].get<double>();
      EXPECT_LT(static_cast<double>(plan.peak_allocated_bytes), measured);
      ExpectNearMeasured(plan.peak_allocated_bytes + risk->bytes, row, "measured_peak", 0.01);
    });
  }
}

// F.binary_cross_entropy_with_logits(..., reduction='none').mean(dim=1): torch keeps the logits and the
// target, and the mean over a dim keeps its input (MeanBackward1); the table's reduction='mean' row
// (whose whole-tensor mean keeps nothing) no longer matches a ReduceMean with axes
// (tools/probe_families.py bce_logits_aux: saved -17 % before).
TEST(Planner, BceWithLogitsThenMeanOverADimKeepsTheLoss) {
  ForEachProbeRow("bce_logits_aux", [](const nlohmann::json& row, const StepPlan& plan) {
    ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
    ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.001);
  });
}

// A 1x1 Conv1d over h.transpose(1, 2) below batch 16 runs PyTorch's slow_conv2d (one thread), which
// copies the strided input and the transposed output gradient contiguous as oneDNN's path does
// (tools/probe_families.py sine_refine, Adam: -11 % at batches 2-8 without the copies, exact at 16, 32).
TEST(Planner, SlowConvolutionCopiesStridedInputsAndGradients) {
  ForEachProbeRow(
      "sine_refine",
      [](const nlohmann::json& row, const StepPlan& plan) {
        ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.001);
      },
      Optimizer::kAdam);
}

// torchvision's FrozenBatchNorm2d registers weight, bias and its statistics as buffers: exported as
// "<module>.weight/.bias/.running_mean/.running_var" initializers no BatchNormalization reads. Its
// affine gets no gradient and no optimizer state, and x * scale keeps no copy of x (tools/probe_families.py
// frozen_bn_cnn with Adam, frozen_bn_cnn_sgd: +12 to +20 % and twice the saved bytes when the affine was
// planned as parameters).
TEST(Planner, FrozenBatchNormAffineIsABuffer) {
  ExpectProbesNearMeasured({{"frozen_bn_cnn", Optimizer::kAdam}, {"frozen_bn_cnn_sgd", Optimizer::kSgd}}, 0.001, 0.001);
}

// Unseen set 10's misses, on probes of their own sizes (tools/probe_families.py). A chunk of qkv viewed per
// head is a view: what keeps it keeps all of qkv (elu + 1 feature maps), an unflattened gradient stays a
// view, F.unfold's decomposition copies nothing (involution), and an einsum keeps copies of head views.
TEST(Planner, ReshapeOfAStridedViewStaysAView) {
  for (const auto& [name, opt] : {std::pair{"elu_feature_attn", Optimizer::kSgd}, {"unfold_involution", Optimizer::kSgd},
                                  {"einsum_chunk_heads", Optimizer::kSgd}}) {
    SCOPED_TRACE(name);
    ForEachProbeRow(
        name,
        [&](const nlohmann::json& row, const StepPlan& plan) {
          ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
          // (elu_feature_attn and einsum_chunk_heads peak in forward with Python locals that hold q, k
          // and v until forward returns, which the plan frees: -6 % and -17 %, not modelled.)
          if (std::string(name) == "unfold_involution") {
            ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.001);
          }
        },
        opt);
  }
}

// sum(dim)'s backward expands the output gradient (a view) where elementwise operators read it: a
// mixture log-density summed over coordinates and reduced by logsumexp (planned +11 % with an
// input-sized gradient).
TEST(Planner, SumGradientIsAnExpandedView) {
  ExpectProbesNearMeasured({{"mixture_logsumexp", Optimizer::kSgd}}, 0.001, 0.002);
}

// A depthwise 3x3 conv over tokens viewed channels-last (SegFormer's Mix-FFN) runs oneDNN's nhwc depthwise
// kernels on the plain buffers: no blocked reorders (planned +16 % with them).
TEST(Planner, ChannelsLastDepthwise3x3ReordersNothing) {
  ExpectProbesNearMeasured({{"sr_attention_mixffn", Optimizer::kSgd}, {"token_depthwise_ffn", Optimizer::kAdam}}, 0.001,
                           0.001);
}

// Unseen set 11's minGRU, on a probe of its own sizes (tools/probe_families.py cumsum_gates): cumsum's backward
// reverses the gradient, sums and reverses it back (grad.flip(dim).cumsum(dim).flip(dim)), two gradient-sized
// temporaries beside the one it returns (data/elementwise_scratch.json's cumsum row; planned -7 % without them).
// A TFT-style variable selection (per-variable GRNs stacked, weighted by a softmax over variables) was exact
// before and stays so.
// Unseen set 11's VQ-VAE, on a probe of its own sizes (tools/probe_families.py vq_straight_through): the top
// level's distances to the codebook, read only by argmin, are planned as freed after it (autograd keeps
// nothing of them), but `dist = ...; ids = dist.argmin(1)` holds them until forward returns: the forward
// peak 4.8 % above the plan at batches 2 and 8. The file cannot say which, so they are the locals risk's
// bytes, and plan + risk covers what was measured. The plan itself stays as it was.
TEST(Planner, ValuesOnlyArgminReadsAreALocalsRisk) {
  ForEachProbeRow("vq_straight_through", [](const nlohmann::json& row, const StepPlan& plan) {
    ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
    uint64_t at_risk = 0;
    for (const PlanRisk& r : plan.risks) {
      if (r.what == "locals_held_until_forward_returns") at_risk = r.bytes;
    }
    const double measured = row["measured_peak"].get<double>();
    EXPECT_LT(static_cast<double>(plan.peak_allocated_bytes), measured);
    EXPECT_GE(static_cast<double>(plan.peak_allocated_bytes + at_risk), measured);
  });
}

// The same four probes exported with "oomguard.locals" (tools/probe_families.py --store writes
// family_<case>_locals.onnx: python/oomguard/frame_locals.py names the values each forward still bound to a
// name when it returned, from one eager forward; a view names its base). The named values are held until their
// frame returns: a point, no longer the risk's. The plain files plan 5-22 % low; with the metadata every row is
// planned within 0.01 % of the measured peak (the einsum attention over chunked heads was 7.8 / 8.6 % high until
// nn.Linear's bias add shared its product's storage: its output projection, where the held locals put the
// peak, had two outputs live). Every plan is at least the plain file's plan and at most that plan + its locals risk.
TEST(Planner, LocalsNamedByTheMetadataAreHeldUntilTheirFrameReturns) {
  auto locals = [](const StepPlan& p) {
    uint64_t bytes = 0;
    for (const PlanRisk& r : p.risks) bytes += r.what == "locals_held_until_forward_returns" ? r.bytes : 0;
    return bytes;
  };
  for (const char* name : {"einsum_chunk_heads", "elu_feature_attn", "vq_straight_through", "gumbel_codes"}) {
    SCOPED_TRACE(name);
    const FamilyProbe plain = LoadFamilyProbe(name);
    auto held = LoadModel(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/family_" + name + "_locals.onnx");
    ASSERT_TRUE(plain.model && held.ok());
    EXPECT_TRUE((*held)->has_locals_hint);
    EXPECT_FALSE(plain.model->has_locals_hint);
    for (const nlohmann::json& row : plain.rows) {
      SCOPED_TRACE(row["batch"].get<int64_t>());
      auto a = PlanStep(*plain.model, Cpu(row["batch"].get<int64_t>(), Optimizer::kSgd));
      auto b = PlanStep(**held, Cpu(row["batch"].get<int64_t>(), Optimizer::kSgd));
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->locals_hint, "none");
      EXPECT_EQ(b->locals_hint, "metadata");
      EXPECT_GT(b->locals_held, 0u);
      EXPECT_GE(b->peak_allocated_bytes, a->peak_allocated_bytes);
      EXPECT_LE(b->peak_allocated_bytes, a->peak_allocated_bytes + locals(*a));  // within what the risk named
      ExpectNearMeasured(b->peak_allocated_bytes, row, "measured_peak", 0.001);
    }
  }
}

// Unseen set 11's DETR, on a probe of its own sizes (tools/probe_families.py detr_memory_pos): each decoder
// layer's cross-attention keys are memory + the same position buffer, which torch.onnx's common-subexpression
// pass merges into one tensor both layers read; PyTorch computes and keeps one per layer. The plan keeps it
// once, as the file has it, and names the second copy as the merged_by_export risk: planned saved + risk is
// what was measured. Sequence-first nn.MultiheadAttention with attention dropout and learned queries
// (mha_dropout_queries) and an LSTM with TFT's shared-value attention (lstm_shared_value_attn) were planned
// within 0.5 % before and are unchanged; neither gets the risk.
TEST(Planner, ExportMergedRepeatsAreARisk) {
  ForEachProbeRow("detr_memory_pos", [](const nlohmann::json& row, const StepPlan& plan) {
    uint64_t at_risk = 0;
    for (const PlanRisk& r : plan.risks) {
      if (r.what != "merged_by_export") continue;
      at_risk = r.bytes;
      EXPECT_EQ(r.direction, "higher");
    }
    const double saved = row["measured_saved"].get<double>();
    EXPECT_LT(static_cast<double>(plan.bytes.activations_saved), 0.97 * saved);
    EXPECT_NEAR(static_cast<double>(plan.bytes.activations_saved + at_risk), saved, 0.001 * saved);
  });
  for (const char* name : {"mha_dropout_queries", "lstm_shared_value_attn"}) {
    SCOPED_TRACE(name);
    ForEachProbeRow(
        name,
        [](const nlohmann::json& row, const StepPlan& plan) {
          for (const PlanRisk& r : plan.risks) EXPECT_NE(r.what, "merged_by_export");
          ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
          ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.006);
        },
        std::string(name) == "lstm_shared_value_attn" ? Optimizer::kAdam : Optimizer::kSgd);
  }
}

TEST(Planner, CumsumBackwardHoldsTwoReversedCopies) {
  EXPECT_DOUBLE_EQ(EmbeddedElementwiseScratchTable().ScratchOutputs("CumSum", {0}), 2.0);
  ExpectProbesNearMeasured({{"cumsum_gates", Optimizer::kSgd}, {"variable_selection_grn", Optimizer::kAdam}}, 0.001,
                           0.001);
}

// prod(dim) over an input holding a zero runs prod_safe_zeros_backward: 6.25 x the input + 2 x the output of
// temporaries (ReduceProd:zeros, tools/probe_elementwise.py), not prod_dim's 1.25 x input; the plan takes that
// form where the input comes from a clamp at 0 (NODE's oblivious trees, probe sparsemax_trees: -48.6 / -50.1 %
// before). Its saved bytes are still high (+20 %, the sparsemax part, not studied).
TEST(Planner, ProdOverClampedZerosRunsTheSafeZerosBackward) {
  EXPECT_DOUBLE_EQ(EmbeddedElementwiseScratchTable().ScratchInputs("ReduceProd", {0}), 1.25);
  EXPECT_DOUBLE_EQ(EmbeddedElementwiseScratchTable().ScratchInputs("ReduceProd:zeros", {0}), 6.25);
  EXPECT_DOUBLE_EQ(EmbeddedElementwiseScratchTable().ScratchOutputs("ReduceProd:zeros", {0}), 2.0);
  ForEachProbeRow(
      "sparsemax_trees",
      [&](const nlohmann::json& row, const StepPlan& plan) {
        ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.006);
      },
      Optimizer::kSgd);
}

// einsum permutes each operand to (batch, own, summed) and reshapes it to 3-D: only a reshape that merges
// dims not adjacent in the operand's layout copies. "btl,tol->bto" (NODE's leaf values) is a pure permutation,
// a view bmm keeps: probe sparsemax_trees saved +20 % -> +1596 bytes at both batches. The merging case
// (gumbel_codes' "bchw,cd->bdhw") still keeps its copy.
TEST(Planner, EinsumPermutationWithoutMergesKeepsTheView) {
  ForEachProbeRow(
      "sparsemax_trees",
      [&](const nlohmann::json& row, const StepPlan& plan) {
        ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.025);
      },
      Optimizer::kSgd);
  ForEachProbeRow(
      "gumbel_codes",
      [&](const nlohmann::json& row, const StepPlan& plan) {
        ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
      },
      Optimizer::kSgd);
}

// A Linear over [N, L, C] tokens transposed from [N, C, L] (a BatchNorm1d's output): matmul() does not fold it
// and runs bmm with the weight expanded over N, whose backward forms N copies of the weight gradient before
// summing them (probe patch_bn_encoder, PatchTST's encoder: -12.3 % at both batches before). Tokens transposed
// from a convolution's output are left alone (probes token_depthwise_ffn and sr_attention_mixffn stay exact).
TEST(Planner, TransposedTokensLinearExpandsItsWeightGradientOverTheBatch) {
  ExpectProbesNearMeasured({{"patch_bn_encoder", Optimizer::kSgd}}, 0.001, 0.025);
  ExpectProbesNearMeasured({{"token_depthwise_ffn", Optimizer::kAdam}, {"sr_attention_mixffn", Optimizer::kSgd}},
                           0.001, 0.001);
}

// F.cosine_similarity of a broadcast pair (an NTM's memory [B, M, W] against a key [B, 1, W], dim -1; a feature map
// [B, C, H, W] against a prototype [1, C, 1, 1], dim 1) keeps x / |x| and y / |y| at the broadcast shape and both
// norms at the output's size, and its backward builds 3 broadcast-sized temporaries. The operator table's row was
// recorded on two [N, 32] inputs, whose [B, x0.1] / [B, 1] sizes read as [B, M] / [B, 1] (probe cosine_memory:
// saved -60 %, peak -57 %; cosine_prototypes: saved -89 %, peak -73 %; unseen set 14's NTM -17 / -34 %).
TEST(Planner, CosineSimilarityOfBroadcastInputsKeepsTheBroadcastShape) {
  ExpectProbesNearMeasured({{"cosine_memory", Optimizer::kSgd}, {"cosine_prototypes", Optimizer::kSgd}}, 0.001,
                           0.005);
}

// A global layer norm by hand, g * (x - m) / sqrt(v + eps) with v = ((x - m) ** 2).mean(): the export merges the two
// x - m into one Sub, PyTorch computes and keeps both (pow's input, and the Mul's other factor since the gain g
// requires grad). Planned as two copies, like (x - m) / sqrt(...) (ConvNeXt), with the mean_centred_once risk
// (probe tasnet_gln_blocks, unseen set 13's Conv-TasNet: saved and peak -11.8 % with one copy).
TEST(Planner, GainTimesCentredIsTheSecondCopyOfXMinusMean) {
  ForEachProbeRow(
      "tasnet_gln_blocks",
      [&](const nlohmann::json& row, const StepPlan& plan) {
        ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
        ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.005);
        bool risk = false;
        for (const auto& r : plan.risks) risk = risk || r.what == "mean_centred_once";
        EXPECT_TRUE(risk);
      },
      Optimizer::kSgd);
}

// prod(dim)'s backward over a value that may hold exact zeros (NODE's clamped leaf choices) is planned with
// prod_safe_zeros_backward, but whether a zero is there is the data's: in probe node_temp_trees (two tree layers,
// a learned temperature) one layer's prod ran each formula in the same step, the plan +20 to +23 %. The plan
// says so: the prod_without_zeros risk names bytes that reach the measured peak (unseen set 12's NODE rows).
TEST(Planner, ProdOverMaybeZerosIsARiskOfAPlainBackward) {
  ForEachProbeRow(
      "node_temp_trees",
      [&](const nlohmann::json& row, const StepPlan& plan) {
        ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.005);
        uint64_t lower = 0;
        for (const auto& r : plan.risks) {
          if (r.what == "prod_without_zeros" && r.direction == "lower") lower = r.bytes;
        }
        const uint64_t measured = row["measured_peak"].get<uint64_t>();
        EXPECT_GT(lower, 0u);
        EXPECT_GE(plan.peak_allocated_bytes, measured);
        EXPECT_LE(plan.peak_allocated_bytes - lower, measured);
      },
      Optimizer::kSgd);
  // One layer whose input holds zeros (sparsemax_trees: the zeros formula ran): the same risk, the peak exact.
  ExpectProbesNearMeasured({{"sparsemax_trees", Optimizer::kSgd}}, 0.025, 0.005);
}

// A depthwise 3x3 filter registered as a buffer (BlurPool's binomial blur, stride 2 after a reflect pad): no
// weight gradient, so oneDNN's backward holds only the blocked input gradient, not the reordered input and
// output gradient a weight gradient needs (probe blur_depthwise_buffer: +1.2 / +1.3 % with them; unseen set 14's
// BlurPool CNN likewise).
TEST(Planner, DepthwiseFilterWithoutGradientHoldsOnlyTheInputGradient) {
  ExpectProbesNearMeasured({{"blur_depthwise_buffer", Optimizer::kMomentum}}, 0.001, 0.002);
}

// torch.max(x, dim)[0] over a ReLU's output (PointNet++'s max over neighbours): the input is kept by the ReLU anyway,
// so of the two readings of ReduceMax the larger is max(dim)'s int64 indices, twice the output's float bytes, not
// amax's input + output (probe pointnet_grouping: saved -2.8 % with the output's float bytes; the peak exact).
TEST(Planner, MaxOverAReluKeepsInt64Indices) {
  ExpectProbesNearMeasured({{"pointnet_grouping", Optimizer::kSgd}}, 0.005, 0.001);
}

// A boolean mask buffer picks fixed positions (h[:, mask], ids[:, mask] = y, ELECTRA's replaced tokens): the
// export's NonZero of that constant has a known count, so shapes infer through the Expand / GatherND /
// ScatterND after it (probe bool_mask_positions: shape inference stopped at the Expand, -9.6 / -15.8 %).
TEST(Planner, NonZeroOfAConstantMaskHasAKnownCount) {
  ForEachProbeRow(
      "bool_mask_positions",
      [&](const nlohmann::json& row, const StepPlan& plan) {
        EXPECT_TRUE(plan.warnings.empty() || plan.warnings[0].find("shape inference stopped") == std::string::npos)
            << plan.warnings[0];
        ExpectNearMeasured(plan.bytes.activations_saved, row, "measured_saved", 0.001);
        ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.001);
      },
      Optimizer::kSgd);
}

// Backward peaks inside an elementwise derivative formula: y / (y*y + 1), pow(y*y + 1, 0.75),
// 1 / (y*y + 1) and nn.LocalResponseNorm after a convolution (tools/probe_elementwise.py --nets:
// whole SGD steps of real PyTorch). The formulas' temporaries (data/elementwise_scratch.json) are what
// lifts each peak above the gradients; without them the plans were 17-24 % low.
TEST(Planner, ElementwiseBackwardScratchMatchesTorch) {
  const std::string dir = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/";
  std::ifstream in(dir + "elementwise_nets.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json ref = nlohmann::json::parse(in);
  ASSERT_EQ(ref["nets"].size(), 4u);
  for (const auto& [kind, net] : ref["nets"].items()) {
    SCOPED_TRACE(kind);
    auto model = LoadModel(dir + net["onnx"].get<std::string>());
    ASSERT_TRUE(model.ok()) << model.error();
    auto plan = PlanStep(**model, Cpu(ref["batch"].get<int64_t>(), Optimizer::kSgd));
    ASSERT_TRUE(plan.ok()) << plan.error();
    const double measured = net["peak_live_bytes"].get<double>();
    EXPECT_NEAR(static_cast<double>(plan->peak_allocated_bytes), measured, 0.001 * measured);
    EXPECT_EQ(plan->peak_phase, net["peak_phase"].get<std::string>());
    EXPECT_TRUE(plan->warnings.empty()) << plan->warnings[0];
  }
}

TEST(ElementwiseScratch, TableParsesAndMatchesExactlyTheInputsNeedingAGradient) {
  const ElementwiseScratchTable& t = EmbeddedElementwiseScratchTable();
  ASSERT_FALSE(t.rows.empty());
  EXPECT_EQ(t.ScratchOutputs("Pow", {0}), 2.0);     // grad * (e * x.pow(e - 1))
  EXPECT_EQ(t.ScratchOutputs("Div", {1}), 3.0);     // -grad * ((a / b) / b)
  EXPECT_EQ(t.ScratchOutputs("Div", {0}), 0.0);     // grad / b is the gradient itself
  EXPECT_EQ(t.ScratchOutputs("Mul", {0, 1}), 0.0);
  EXPECT_EQ(t.ScratchOutputs("Conv", {0}), 0.0);    // not an elementwise row
  EXPECT_FALSE(ParseElementwiseScratchTable("{\"rows\": [{\"op\": \"Pow\", \"grad_inputs\": [0]}]}").ok());
  EXPECT_FALSE(ParseElementwiseScratchTable(
                   "{\"rows\": [{\"op\": \"Pow\", \"grad_inputs\": [0], \"scratch_outputs\": -1}]}").ok());
  EXPECT_FALSE(ParseElementwiseScratchTable("[]").ok());
  auto one = ParseElementwiseScratchTable(
      "{\"rows\": [{\"op\": \"Max\", \"grad_inputs\": [1, 0], \"scratch_outputs\": 1.5}]}");
  ASSERT_TRUE(one.ok()) << one.error();
  EXPECT_EQ(one->ScratchOutputs("Max", {0, 1}), 1.5);
}

// A broadcast input's gradient is computed at the output's size and summed down (tools/probe_elementwise.py's
// broadcast forms): x * gamma keeps one output-sized gradient as scratch, a + b none; a combination never
// measured with broadcast inputs (a scalar exponent) takes the rows without.
TEST(ElementwiseScratch, BroadcastInputsTakeTheirOwnRows) {
  const ElementwiseScratchTable& t = EmbeddedElementwiseScratchTable();
  EXPECT_EQ(t.ScratchOutputs("Mul", {0, 1}, {1}), 1.0);
  EXPECT_EQ(t.ScratchOutputs("Mul", {0, 1}, {0}), 1.0);
  EXPECT_EQ(t.ScratchOutputs("Div", {0, 1}, {1}), 3.0);  // weight standardisation's (w - mean) / std
  EXPECT_EQ(t.ScratchOutputs("Add", {0, 1}, {1}), 0.0);
  EXPECT_EQ(t.ScratchOutputs("Pow", {0}, {1}), 2.0);     // x.pow(2): the exponent is a scalar
  auto parsed = ParseElementwiseScratchTable(
      "{\"rows\": [{\"op\": \"Mul\", \"grad_inputs\": [0, 1], \"scratch_outputs\": 0},"
      " {\"op\": \"Mul\", \"grad_inputs\": [0, 1], \"broadcast_inputs\": [1], \"scratch_outputs\": 1}]}");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(parsed->ScratchOutputs("Mul", {0, 1}), 0.0);
  EXPECT_EQ(parsed->ScratchOutputs("Mul", {0, 1}, {1}), 1.0);
  EXPECT_EQ(parsed->ScratchOutputs("Mul", {0, 1}, {0}), 0.0);  // not measured: the same-size row
  EXPECT_FALSE(ParseElementwiseScratchTable(
                   "{\"rows\": [{\"op\": \"Mul\", \"grad_inputs\": [0], \"broadcast_inputs\": [-1], "
                   "\"scratch_outputs\": 1}]}").ok());
}

// A reduction's backward builds temporaries of its input's size (tools/probe_elementwise.py's reduction
// forms): logsumexp exps the input again (2 x), amax a bool mask and its float copy (1.25 x, plus 3 x the
// output), mean and sum none. Probe reduce_scratch (a logsumexp over 256 channels whose backward is the
// step's peak) was -49.7 % without them; ReduceMax over some axes is planned as torch.max(x, dim), with none.
TEST(ElementwiseScratch, ReductionsBuildInputSizedTemporaries) {
  const ElementwiseScratchTable& t = EmbeddedElementwiseScratchTable();
  EXPECT_EQ(t.ScratchInputs("ReduceLogSumExp", {0}), 2.0);
  EXPECT_EQ(t.ScratchInputs("ReduceMax", {0}), 1.25);
  EXPECT_EQ(t.ScratchOutputs("ReduceMax", {0}), 3.0);
  EXPECT_EQ(t.ScratchInputs("ReduceMean", {0}), 0.0);
  EXPECT_EQ(t.ScratchInputs("Mul", {0, 1}), 0.0);
  EXPECT_FALSE(ParseElementwiseScratchTable(
                   "{\"rows\": [{\"op\": \"ReduceMax\", \"grad_inputs\": [0], \"scratch_outputs\": 0, "
                   "\"scratch_inputs\": 65}]}").ok());
  // (pool_heads: nn.LPPool2d, the operator table's lp_pool2d row taken as one op, whose backward holds
  // pow(x, 2)'s temporaries: 2 x its input - 4 x its output; -28 % without them.)
  for (const char* name : {"reduce_scratch", "pool_heads"}) {
    SCOPED_TRACE(name);
    ForEachProbeRow(name, [](const nlohmann::json& row, const StepPlan& plan) {
      ExpectNearMeasured(plan.peak_allocated_bytes, row, "measured_peak", 0.001);
    });
  }
  EXPECT_EQ(t.ScratchOutputs("lp_pool2d", {0}), -4.0);
  EXPECT_FALSE(ParseElementwiseScratchTable(  // a negative multiple only beside scratch_inputs
                   "{\"rows\": [{\"op\": \"Abs\", \"grad_inputs\": [0], \"scratch_outputs\": -1}]}").ok());
}

TEST(Planner, TiedWeightGradientsAreAddedOutOfPlace) {
  GraphBuilder g;
  g.Input("input", {4}, /*dtype=*/7).Weight("emb.weight", {1000, 64});
  g.Node("Gather", {"emb.weight", "input"}, {"e"}, "embedding");
  auto& mean = g.Node("ReduceMean", {"e"}, {"m"}, "mean");
  GraphBuilder::IntsAttr(mean, "axes", {1});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  GraphBuilder::IntsAttr(g.Node("Transpose", {"emb.weight"}, {"wt"}, "tied"), "perm", {1, 0});
  g.Node("MatMul", {"m", "wt"}, {"logits"}, "head");
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(1));
  const uint64_t w = 1000 * 64 * 4;
  // The weight, its gradient from the head, the embedding's gradient and their sum.
  EXPECT_GE(p.peak_allocated_bytes, 4 * w);
  EXPECT_LT(p.peak_allocated_bytes, 4 * w + 16 * 1024);
}

// The CPU rule of the graph's operator of `kind` after `nth` others; every tensor but the graph
// input needs a gradient.
OpRule RuleOf(const std::string& bytes, int64_t batch, const std::string& kind, int nth = 0) {
  auto model = LoadModelFromBytes(bytes, "rule");
  EXPECT_TRUE(model.ok());
  auto shapes = InferConcreteShapes(**model, Cpu(batch));
  EXPECT_TRUE(shapes.ok()) << (shapes.ok() ? "" : shapes.error());
  std::vector<bool> requires_grad((*model)->tensors.size(), true);
  for (size_t i = 0; i < requires_grad.size(); ++i) {
    requires_grad[i] = (*model)->tensors[i].kind != TensorKind::kGraphInput;
  }
  RuleContext ctx{**model, *shapes, Target::kCpu, 4, requires_grad};
  for (const LogicalOp& op : FuseOperators(**model, *shapes)) {
    if (op.kind == kind && nth-- == 0) return RuleFor(op, ctx);
  }
  ADD_FAILURE() << "no " << kind;
  return OpRule{};
}

uint64_t ConvRuleBackwardScratch(const std::string& bytes, int64_t batch) {
  return RuleOf(bytes, batch, "Conv").backward_temp_bytes;
}

// x @ weight.t(): MmBackward0 forms the gradient of weight.t() and TBackward0 hands the weight a
// view of it, which AccumulateGrad keeps: one weight-sized gradient, not two (random nets 35,
// 100129: tied LM heads planned 3-5 % high).
TEST(Planner, TransposedWeightGetsAViewOfItsGradient) {
  GraphBuilder g;
  g.Input("input", {64}).Weight("head.weight", {1000, 64});
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  GraphBuilder::IntsAttr(g.Node("Transpose", {"head.weight"}, {"wt"}, "t"), "perm", {1, 0});
  g.Node("MatMul", {"x", "wt"}, {"logits"}, "head");
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(1));
  const uint64_t w = 1000 * 64 * 4;
  EXPECT_GE(p.peak_allocated_bytes, 2 * w);  // the weight and its gradient
  EXPECT_LT(p.peak_allocated_bytes, 2 * w + 16 * 1024);
}

// kv = inp(x); attention(q, kv, kv): the caller holds kv until the attention module returns, though
// the module's only read of it is its first op (a transpose whose folded copy the projection keeps).
// The same graph exported without module paths frees kv after that read.
std::string CallerHeldGraph(bool module_paths) {
  auto name = [&](const std::string& path, const std::string& op) { return module_paths ? path + "/" + op : op; };
  GraphBuilder g;
  g.Input("input", {64, 96}).Weight("inp.weight", {96, 96}).Weight("kv.weight", {96, 192});
  g.Weight("fc.weight", {5, 192});
  g.Node("MatMul", {"input", "inp.weight"}, {"kv_in"}, name("/inp", "MatMul"));
  GraphBuilder::IntsAttr(g.Node("Transpose", {"kv_in"}, {"kv_t"}, name("/att", "Transpose")), "perm", {1, 0, 2});
  g.Node("MatMul", {"kv_t", "kv.weight"}, {"kv"}, name("/att", "MatMul"));
  g.Node("Neg", {"kv"}, {"s1"}, name("/att", "Neg"));
  g.Node("Neg", {"s1"}, {"s2"}, name("/att", "Neg_1"));
  g.Node("Neg", {"s2"}, {"s3"}, name("/att", "Neg_2"));
  auto& mean = g.Node("ReduceMean", {"s3"}, {"pooled"}, name("", "ReduceMean"));
  GraphBuilder::IntsAttr(mean, "axes", {0});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  GraphBuilder::IntAttr(g.Node("Gemm", {"pooled", "fc.weight"}, {"logits"}, name("/fc", "Gemm")), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

TEST(Planner, ModuleArgumentsLiveUntilTheCallReturns) {
  const StepPlan held = MustPlan(CallerHeldGraph(true), Cpu(16));
  const StepPlan freed = MustPlan(CallerHeldGraph(false), Cpu(16));
  const uint64_t kv_in = 16u * 64 * 96 * 4;
  EXPECT_EQ(held.peak_phase, "forward");
  // Held over the attention's forward (the peak moves, so not quite all of it shows).
  EXPECT_GT(held.peak_allocated_bytes, freed.peak_allocated_bytes + kv_in / 2);
  EXPECT_LE(held.peak_allocated_bytes, freed.peak_allocated_bytes + kv_in);
}

// q = kv[:, :16] projected after nn.MultiheadAttention's batch_first transpose: matmul() folds q to
// [16 * N, C] by reshape(), which copies (the slice leaves a gap between the dims it merges), and mm
// keeps that copy, not kv's storage (cross-attention probe xa_slice, tools/measure_xattn.py: the
// plan was 10 % high). Sliced along the last dim and not transposed, the fold is a view of kv.
std::string SlicedQueryGraph(bool rows) {
  GraphBuilder g;
  g.Input("input", {128, 64}).Weight("inp.weight", {64, 64}).Weight("q.weight", {rows ? 64 : 16, 64});
  g.Weight("fc.weight", {5, 64});
  g.Constant("s0", {0}, {1}).Constant("s1", {16}, {1}).Constant("axis", {rows ? 1 : 2}, {1});
  g.Node("MatMul", {"input", "inp.weight"}, {"kv"}, "/inp/MatMul");
  g.Node("Slice", {"kv", "s0", "s1", "axis"}, {"q"}, "/Slice");
  if (rows) {
    GraphBuilder::IntsAttr(g.Node("Transpose", {"q"}, {"qt"}, "/att/Transpose"), "perm", {1, 0, 2});
  } else {
    g.Node("Identity", {"q"}, {"qt"}, "/att/Identity");
  }
  g.Node("MatMul", {"qt", "q.weight"}, {"proj"}, "/att/MatMul");
  auto& mean = g.Node("ReduceMean", {"proj"}, {"pooled"}, "/ReduceMean");
  GraphBuilder::IntsAttr(mean, "axes", {0});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  GraphBuilder::IntAttr(g.Node("Gemm", {"pooled", "fc.weight"}, {"logits"}, "/fc/Gemm"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

TEST(Planner, MatmulFoldOfASlicedViewKeepsACopy) {
  auto saved = [](const StepPlan& p, const std::string& name) -> uint64_t {
    for (const LayerMemory& l : p.layers) {
      if (l.name == name) return l.saved_bytes;
    }
    ADD_FAILURE() << "no layer " << name;
    return 0;
  };
  const StepPlan rows = MustPlan(SlicedQueryGraph(true), Cpu(4));
  EXPECT_EQ(saved(rows, "/att/MatMul"), 4u * 16 * 64 * 4);  // the folded copy of q, not kv (4 x 128 x 64)
  const StepPlan columns = MustPlan(SlicedQueryGraph(false), Cpu(4));
  EXPECT_EQ(saved(columns, "/att/MatMul"), 4u * 128 * 64 * 4);  // a view of kv: kv's storage is kept
}

// The rule itself for one convolution (tools/probe_scratch.py measured each case at batches 2/4/8).
OpRule ConvRule(int dims, int64_t c_in, int64_t c_out, int64_t k, int64_t groups, int64_t size, int64_t batch,
                int64_t stride = 1, int64_t dilation = 1) {
  GraphBuilder g;
  std::vector<int64_t> in(static_cast<size_t>(dims), size), w(static_cast<size_t>(dims), k);
  in.insert(in.begin(), c_in);
  w.insert(w.begin(), {c_out, c_in / groups});
  g.Input("input", in).Weight("conv.weight", w);
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");  // an activation: the convolution's input needs a gradient
  auto& conv = g.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntAttr(conv, "group", groups);
  GraphBuilder::IntsAttr(conv, "pads", std::vector<int64_t>(2 * static_cast<size_t>(dims), dilation * (k / 2)));
  if (dilation != 1) GraphBuilder::IntsAttr(conv, "dilations", std::vector<int64_t>(static_cast<size_t>(dims), dilation));
  if (stride != 1) GraphBuilder::IntsAttr(conv, "strides", std::vector<int64_t>(static_cast<size_t>(dims), stride));
  g.Output("logits");
  return RuleOf(g.Bytes(), batch, "Conv");
}

uint64_t ConvBackwardScratch(int dims, int64_t c_in, int64_t c_out, int64_t k, int64_t groups, int64_t size,
                             int64_t batch) {
  return ConvRule(dims, c_in, c_out, k, groups, size, batch).backward_temp_bytes;
}

TEST(ConvScratch, BackwardFollowsTheMeasuredBlockedLayouts) {
  const uint64_t fixed = 7 * 1024;
  // conv1d 8 -> 8, k3, 64 wide, batch 2 (input 4 KiB): measured 3 x input + ~8 KiB.
  EXPECT_EQ(ConvBackwardScratch(1, 8, 8, 3, 1, 64, 2), 3 * 4096 + fixed);
  // conv1d 4 -> 4 (input 2 KiB): measured 7 x input.
  EXPECT_EQ(ConvBackwardScratch(1, 4, 4, 3, 1, 64, 2), 7 * 2048 + fixed);
  // conv1d 16 -> 16: the input and the output gradient, once each.
  EXPECT_EQ(ConvBackwardScratch(1, 16, 16, 3, 1, 64, 2), 2 * 8192 + fixed);
  // depthwise 24 channels, k5 (input 12 KiB): 2 x padded to 32 - plain, measured 1.67 x input.
  EXPECT_EQ(ConvBackwardScratch(1, 24, 24, 5, 24, 64, 2), 2 * 16384 - 12288 + fixed);
  // depthwise 8 channels, k3: blocks of 16 for the input and the output gradient (4 x input).
  EXPECT_EQ(ConvBackwardScratch(1, 8, 8, 3, 8, 64, 2), 4 * 4096 + fixed);
  // 3-D 1x1x1 (slow_conv3d): the input gradient goes through input-sized columns.
  EXPECT_EQ(ConvBackwardScratch(3, 16, 16, 1, 1, 8, 2), 2u * 16 * 512 * 4);
  // 3-D depthwise: one input-sized buffer (ideep's own input gradient beside the gemm's fixed part:
  // measured 100328 = input + 2024; 7 KiB before round 6, the gemm rule's 5368 since), before the
  // 2592-byte weight gradient exists (round 10: the plan holds it through the op's backward).
  EXPECT_EQ(ConvBackwardScratch(3, 24, 24, 3, 24, 8, 2),
            2u * 24 * 512 * 4 + EmbeddedConvScratchTable().gemm_weight_gradient_3d.fixed_bytes - 24u * 27 * 4);
}

// ConvNeXt: a depthwise 7x7 conv whose input is the permute back from channels-last
// (x.permute(0, 3, 1, 2)), or the output of a conv of such an input, runs oneDNN's nhwc kernel:
// its weight gradient keeps 256 copies of the weights whatever the batch and size (probes of
// 16-64 channels, k5/k7, 4x4-32x32, batches 2/4: 257 x weight + 3136 bytes, within 0.5 KiB;
// random net modern2d 36: 1.2 MB and 2.4 MB per layer, planned -74 % before).
std::string ChannelsLastDepthwise(int64_t c, int64_t size, int64_t k, bool channels_last, bool after_conv) {
  GraphBuilder g;
  g.Input("input", {size, size, c}).Weight("dw.weight", {c, 1, k, k}).Weight("down.weight", {c, c, 1, 1});
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  GraphBuilder::IntsAttr(g.Node("Transpose", {"x"}, {"xt"}, "permute"), "perm",
                         channels_last ? std::vector<int64_t>{0, 3, 1, 2} : std::vector<int64_t>{0, 1, 2, 3});
  std::string in = "xt";
  if (after_conv) {
    g.Node("Conv", {"xt", "down.weight"}, {"down"}, "down");
    in = "down";
  }
  auto& conv = g.Node("Conv", {in, "dw.weight"}, {"logits"}, "dwconv");
  GraphBuilder::IntAttr(conv, "group", c);
  GraphBuilder::IntsAttr(conv, "pads", std::vector<int64_t>(4, k / 2));
  g.Output("logits");
  return g.Bytes();
}

TEST(ConvScratch, ChannelsLastDepthwiseWeightGradientKeepsWeightCopies) {
  const uint64_t w48 = 48u * 49 * 4;
  for (int64_t batch : {2, 4}) {
    OpRule r = RuleOf(ChannelsLastDepthwise(48, 4, 7, true, false), batch, "Conv");
    // measured 2420992 at batch 2 and 4: oneDNN runs it in channels-last, so neither the input
    // nor the output gradient (which arrives channels-last through the permute) is copied
    EXPECT_EQ(r.backward_temp_bytes, 2420992u);
    EXPECT_EQ(r.backward_temp_bytes, 257 * w48 + 3136);
    EXPECT_EQ(r.machine_dependent_bytes, 256 * w48);
  }
  // Behind a convolution of the channels-last input (the downsampling layer): the same.
  EXPECT_GE(RuleOf(ChannelsLastDepthwise(48, 4, 7, true, true), 2, "Conv", 1).backward_temp_bytes, 257 * w48 + 3136);
  // Behind a channels-first LayerNorm written with mean/var (x - x.mean(1)): the subtraction keeps
  // x's channels-last order (layer_norm's own decomposition, a mean over the last dims, would not).
  for (int64_t axis : {1, 3}) {
    GraphBuilder g;
    g.Input("input", {4, 4, 48}).Weight("dw.weight", {48, 1, 7, 7});
    g.Node("Mul", {"input", "input"}, {"x"}, "pre");
    GraphBuilder::IntsAttr(g.Node("Transpose", {"x"}, {"xt"}, "permute"), "perm", {0, 3, 1, 2});
    auto& mean = g.Node("ReduceMean", {"xt"}, {"u"}, "mean");
    GraphBuilder::IntsAttr(mean, "axes", {axis});
    GraphBuilder::IntAttr(mean, "keepdims", 1);
    g.Node("Sub", {"xt", "u"}, {"centred"}, "sub");
    auto& conv = g.Node("Conv", {"centred", "dw.weight"}, {"logits"}, "dwconv");
    GraphBuilder::IntAttr(conv, "group", 48);
    GraphBuilder::IntsAttr(conv, "pads", std::vector<int64_t>(4, 3));
    g.Output("logits");
    OpRule r = RuleOf(g.Bytes(), 2, "Conv");
    EXPECT_EQ(r.machine_dependent_bytes, axis == 1 ? 256 * w48 : 0u) << "mean over axis " << axis;
  }
  // A contiguous input: the blocked reorders as before, no copies.
  OpRule plain = RuleOf(ChannelsLastDepthwise(48, 4, 7, false, false), 2, "Conv");
  EXPECT_LT(plain.backward_temp_bytes, 128u * 1024);
  EXPECT_EQ(plain.machine_dependent_bytes, 0u);
  // k3 takes another kernel (measured: no copies).
  EXPECT_LT(RuleOf(ChannelsLastDepthwise(48, 4, 3, true, false), 2, "Conv").backward_temp_bytes, 128u * 1024);
}

TEST(ConvScratch, StridedThreeDimensionalForwardOnlyComputesIntoTheBlockedOutput) {
  // conv3d 12 -> 8, k3, stride 2, 16 wide, batch 4 (tools/probe_scratch.py: 135688 bytes = the
  // output blocked by 16 + ~4.5 KiB), not the input and the weights (803968).
  const uint64_t blocked_output = 4u * 16 * 512 * 4;
  EXPECT_EQ(ConvRule(3, 12, 8, 3, 1, 16, 4, 2).forward_temp_bytes, blocked_output + 7 * 1024);
  // Not strided: the input and the weights are reordered as before.
  EXPECT_GT(ConvRule(3, 12, 8, 3, 1, 16, 4, 1).forward_temp_bytes, 4u * 12 * 4096 * 4);
}

TEST(ConvScratch, TwoDimensionalWeightGradientKeepsItsBlockPadding) {
  // conv2d 20 -> 20, k3, 16 wide (tools/probe_scratch.py: 160216 bytes at batch 2, 291288 at 4):
  // input and output gradient blocked to 32 channels, and the weight gradient's padding to 32 x 32.
  const uint64_t padding = 9u * 4 * (32 * 32 - 20 * 20);
  EXPECT_EQ(ConvBackwardScratch(2, 20, 20, 3, 1, 16, 2), 2 * (2u * 32 * 256 * 4) + 7 * 1024 + padding);
  EXPECT_NEAR(static_cast<double>(ConvBackwardScratch(2, 20, 20, 3, 1, 16, 4)), 291288.0, 0.01 * 291288);
  // 16 channels: no padding.
  EXPECT_EQ(ConvBackwardScratch(2, 16, 16, 3, 1, 16, 2), 2 * (2u * 16 * 256 * 4) + 7 * 1024);
  // 3-D 24 -> 24, k3, 8 wide: the same padding of the weight gradient (32 x 32 x 27 floats).
  EXPECT_EQ(ConvBackwardScratch(3, 24, 24, 3, 1, 8, 2), 2 * (2u * 32 * 512 * 4) + 7 * 1024 + 27u * 4 * (32 * 32 - 24 * 24));
}

// Measured by tools/probe_scratch.py (bench/results/conv_scratch_probes.json conv2d_weight_gradient,
// conv2d_dilated_gemm): the backward scratch of one 2-D convolution whose input needs a
// gradient, the same at batches 2, 4 and 8 where the weights outweigh the activations.
TEST(ConvScratch, TwoDimensionalWeightGradientOutweighsTheReordersOnSmallMaps) {
  // 960 -> 256, 3x3 on 4x4 (DeepLab's ASPP without dilation): the blocked weights + 5400 bytes.
  EXPECT_EQ(ConvBackwardScratch(2, 960, 256, 3, 1, 4, 2), 8852760u);
  EXPECT_EQ(ConvBackwardScratch(2, 960, 256, 3, 1, 4, 4), 8852760u);
  EXPECT_EQ(ConvBackwardScratch(2, 256, 256, 3, 1, 4, 8), 2364696u);
  // 100 -> 72: the weights blocked to 112 x 80 channels.
  EXPECT_EQ(ConvBackwardScratch(2, 100, 72, 3, 1, 4, 2), 327960u);
  // Strided, on 8x8: the same.
  EXPECT_EQ(ConvRule(2, 256, 256, 3, 1, 8, 4, 2).backward_temp_bytes, 2364696u);
  // On 16x16 at batch 8 the reorders are the larger again (measured 9968152).
  EXPECT_NEAR(static_cast<double>(ConvBackwardScratch(2, 960, 256, 3, 1, 16, 8)), 9968152.0, 0.001 * 9968152);
}

TEST(ConvScratch, DilatedKernelWiderThanItsInputTakesTheGemmWeightGradient) {
  // 256 -> 256, 3x3, dilation 2 on 4x4 (reach 5 > 4): 4 x the weights + one sample's columns + the
  // fixed packing buffer, exact.
  EXPECT_EQ(ConvRule(2, 256, 256, 3, 1, 4, 2, 1, 2).backward_temp_bytes, 9663992u);
  EXPECT_EQ(ConvRule(2, 960, 256, 3, 1, 4, 4, 1, 12).backward_temp_bytes, 36021752u);
  // 64 -> 64, dilation 3 on 6x6: the packing buffer sized by the operands, 2 % high.
  const double small = static_cast<double>(ConvRule(2, 64, 64, 3, 1, 6, 2, 1, 3).backward_temp_bytes);
  EXPECT_GE(small, 1002008.0);
  EXPECT_LE(small, 1.03 * 1002008.0);
  // A dilated kernel within its input keeps the direct kernel: 128 -> 64, dilation 4 on 12x12.
  EXPECT_EQ(ConvRule(2, 128, 64, 3, 1, 12, 2, 1, 4).backward_temp_bytes, 300312u);
}

// The kernel ConvScratch plans each direction on (OpRule::conv_kernels), as DNNL_VERBOSE named it
// for these dev layers of tools/probe_conv_fuzz.py (tools/probe_conv_kernels.py --all-directions):
// "forward input-gradient weight-gradient". in, k, s and p per spatial axis (p symmetric).
std::string ConvKernelsOf(int64_t c_in, int64_t c_out, int64_t groups, std::vector<int64_t> in, std::vector<int64_t> k,
                          std::vector<int64_t> s, std::vector<int64_t> p, int64_t batch) {
  GraphBuilder g;
  std::vector<int64_t> w = {c_out, c_in / groups};
  w.insert(w.end(), k.begin(), k.end());
  in.insert(in.begin(), c_in);
  g.Input("input", in).Weight("conv.weight", w);
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = g.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntAttr(conv, "group", groups);
  GraphBuilder::IntsAttr(conv, "kernel_shape", k);
  GraphBuilder::IntsAttr(conv, "strides", s);
  p.insert(p.end(), p.begin(), p.end());
  GraphBuilder::IntsAttr(conv, "pads", p);
  g.Output("logits");
  const ConvKernels kernels = RuleOf(g.Bytes(), batch, "Conv").conv_kernels;
  return std::string(ConvKernelName(kernels.forward)) + " " + ConvKernelName(kernels.input_gradient) + " " +
         ConvKernelName(kernels.weight_gradient);
}

TEST(ConvScratch, RecordsTheKernelEachDirectionRunsOn) {
  // Dev seed 39: depthwise 226 channels, 3x3 strided by 3 over 14 x 14: the depthwise kernels throughout.
  EXPECT_EQ(ConvKernelsOf(226, 226, 226, {14, 14}, {3, 3}, {3, 3}, {1, 1}, 7),
            "jit_dw:avx512_core jit_dw:avx512_core jit_dw:avx512_core");
  // Seeds 393 (3x1 strided by 2, padded (3, 0): the stride is wider than the kernel, and the kernel is
  // outside the input for forward) and 243 (3x3 over a 1 x 1 map): the depthwise weight-gradient
  // kernel refuses them (DepthwiseWeightGradientRefuses), gemm runs.
  EXPECT_EQ(ConvKernelsOf(128, 128, 128, {7, 7}, {3, 1}, {2, 2}, {3, 0}, 6),
            "x64:gemm:jit jit_dw:avx512_core x64:gemm:jit");
  EXPECT_EQ(ConvKernelsOf(40, 40, 40, {1, 1}, {3, 3}, {1, 1}, {1, 1}, 2),
            "jit_dw:avx512_core jit_dw:avx512_core x64:gemm:jit");
  // Strided 1x1: the 1x1 kernel where the stride divides the input exactly (seed 301, 82 x 82 by 2),
  // the direct kernels where it does not (seed 53, 7 x 7 by (2, 3); ReducesToUnitStride).
  EXPECT_EQ(ConvKernelsOf(192, 160, 1, {82, 82}, {1, 1}, {2, 2}, {0, 0}, 7),
            "jit_1x1:avx512_core jit_1x1:avx512_core jit_1x1:avx512_core");
  EXPECT_EQ(ConvKernelsOf(256, 160, 1, {7, 7}, {1, 1}, {2, 3}, {0, 0}, 3),
            "jit:avx512_core jit:avx512_core jit:avx512_core");
  // Seed 317: conv1d 12 -> 12, k3 s2 over 256: gemm input gradient, AVX2 weight gradient.
  EXPECT_EQ(ConvKernelsOf(12, 12, 1, {256}, {3}, {2}, {0}, 2), "jit:avx512_core x64:gemm:jit jit:avx2");
  // A kernel wider than 14 is beyond both direct weight-gradient kernels (DNNL_VERBOSE: conv1d 16 -> 32
  // and 32 -> 64, k15 s2, x64:gemm:jit backward_weights; k13 jit:avx512_core), but for the AVX-512
  // kernel's transposed case (a 14-19 wide kernel as wide as the input, one output column, unit
  // strides, no padding).
  EXPECT_EQ(ConvKernelsOf(32, 64, 1, {1024}, {15}, {2}, {7}, 2), "jit:avx512_core jit:avx512_core x64:gemm:jit");
  EXPECT_EQ(ConvKernelsOf(32, 64, 1, {1024}, {13}, {2}, {6}, 2),
            "jit:avx512_core jit:avx512_core jit:avx512_core");
  EXPECT_EQ(ConvKernelsOf(32, 64, 1, {4, 16}, {3, 16}, {1, 1}, {0, 0}, 2),
            "jit:avx512_core jit:avx512_core jit:avx512_core");
  // Seed 75: a padded depthwise 1x1 over 64 x 64 at batch 1 stays on PyTorch's own path.
  EXPECT_EQ(ConvKernelsOf(160, 160, 160, {64, 64}, {1, 1}, {1, 1}, {1, 1}, 1), "slow slow slow");
}

TEST(ConvScratch, WideSamePaddedKernelsRunTheForwardOnGemm) {
  // The AVX-512 direct forward kernel refuses code above 256 KiB (padding on both sides x kernel
  // width x 16 input channels x an unroll of 28 x 15 bytes), the AVX2 one a left padding past its
  // unroll of 3: 'same'-padded conv1d k31, k25 and k41 run x64:gemm:jit in all three directions
  // (DNNL_VERBOSE, batch 2, one thread; DenseForwardKernel).
  EXPECT_EQ(ConvKernelsOf(16, 32, 1, {1024}, {31}, {1}, {15}, 2), "x64:gemm:jit x64:gemm:jit x64:gemm:jit");
  EXPECT_EQ(ConvKernelsOf(32, 32, 1, {512}, {25}, {1}, {12}, 2), "x64:gemm:jit x64:gemm:jit x64:gemm:jit");
  EXPECT_EQ(ConvKernelsOf(64, 64, 1, {256}, {41}, {1}, {20}, 2), "x64:gemm:jit x64:gemm:jit x64:gemm:jit");
  // k15 and k19 over 1024 keep it: no right padding past the last full unroll (1008 columns), so the
  // code counts one padded side, 2 x 19 x 16 x 28 x 15 = 255360 bytes (DNNL_VERBOSE jit:avx512_core).
  EXPECT_EQ(ConvKernelsOf(16, 32, 1, {1024}, {15}, {1}, {7}, 2), "jit:avx512_core jit:avx512_core x64:gemm:jit");
  EXPECT_EQ(ConvKernelsOf(16, 32, 1, {1024}, {19}, {1}, {9}, 2), "jit:avx512_core jit:avx512_core x64:gemm:jit");
  // 8 input channels are a first convolution's one block of 8: k31 fits (DNNL_VERBOSE jit:avx512_core).
  EXPECT_EQ(ConvKernelsOf(8, 16, 1, {1024}, {31}, {1}, {15}, 2), "jit:avx512_core x64:gemm:jit x64:gemm:jit");
  // Unpadded k40 over 300 is too much code for the AVX-512 kernel; the AVX2 one takes it (DNNL_VERBOSE).
  EXPECT_EQ(ConvKernelsOf(32, 64, 1, {300}, {40}, {1}, {0}, 2), "jit:avx2 x64:gemm:jit x64:gemm:jit");
}

TEST(ConvScratch, BatchOfOneOnASmallMapUnfoldsOneSample) {
  // PyTorch's slow convolution (no oneDNN at batch 1 below 20480 input elements): one sample's
  // columns, in_channels x 9 x output positions floats.
  EXPECT_EQ(ConvBackwardScratch(2, 512, 128, 3, 1, 6, 1), 512u * 9 * 36 * 4);
  EXPECT_EQ(ConvBackwardScratch(2, 64, 64, 3, 1, 4, 1), 64u * 9 * 16 * 4);
}

TEST(ConvScratch, ThreeDimensionalWeightGradientTakesOneDnnsGemmScratch) {
  // conv3d 12 -> 12 and 12 -> 24, k3, 6 wide, batch 2 (tools/probe_scratch.py: 150520 and 377432
  // bytes at batches 2-8): im2col of one depth slice (12 x 27 x 6 x 6 floats) + 4 x the weights +
  // 5368, and from 16 output channels on the sgemm packing buffer (data/conv_scratch.json).
  const uint64_t col = 12u * 27 * 36 * 4;
  EXPECT_EQ(ConvBackwardScratch(3, 12, 12, 3, 1, 6, 2), col + 4 * (12u * 12 * 27 * 4) + 5368);
  const uint64_t pack = EmbeddedConvScratchTable().gemm_weight_gradient_3d.PackBytes(12 * 27, 24, 36, 216);
  EXPECT_GT(pack, 100000u);
  EXPECT_EQ(ConvBackwardScratch(3, 12, 24, 3, 1, 6, 2), col + 4 * (24u * 12 * 27 * 4) + 5368 + pack);
  // Batch-independent: the same at batch 8.
  EXPECT_EQ(ConvBackwardScratch(3, 12, 24, 3, 1, 6, 8), ConvBackwardScratch(3, 12, 24, 3, 1, 6, 2));
  // conv3d 4 -> 6, k3, 10 wide: the input gradient's blocked reorders grow with the batch and pass
  // the gemm scratch (measured 254928 at batch 2, 478928 at batch 4).
  EXPECT_NEAR(static_cast<double>(ConvBackwardScratch(3, 4, 6, 3, 1, 10, 2)), 254928.0, 0.02 * 254928);
  EXPECT_NEAR(static_cast<double>(ConvBackwardScratch(3, 4, 6, 3, 1, 10, 4)), 478928.0, 0.02 * 478928);
  // 16 input channels take oneDNN's blocked kernel: no gemm scratch, no packing buffer.
  EXPECT_LT(ConvBackwardScratch(3, 16, 24, 3, 1, 6, 2), pack);
}

// One 3-D convolution over a [c_in, D, H, W] volume (its input needs a gradient).
OpRule Conv3dRule(int64_t c_in, int64_t c_out, std::vector<int64_t> volume, std::vector<int64_t> kernel,
                  std::vector<int64_t> pads, int64_t batch, std::vector<int64_t> strides = {1, 1, 1}) {
  GraphBuilder g;
  volume.insert(volume.begin(), c_in);
  std::vector<int64_t> w = {c_out, c_in};
  w.insert(w.end(), kernel.begin(), kernel.end());
  g.Input("input", volume).Weight("conv.weight", w);
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = g.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  pads.insert(pads.end(), pads.begin(), pads.end());
  GraphBuilder::IntsAttr(conv, "pads", pads);
  GraphBuilder::IntsAttr(conv, "strides", strides);
  g.Output("logits");
  return RuleOf(g.Bytes(), batch, "Conv");
}

// tools/probe_conv3d_steps.py (whole steps, exact to 4 bytes with these rules; before them up to 66 %
// low on held-out video-net shapes): oneDNN's direct weight gradient refuses a 3x3x3 kernel over 1
// or 2 frames (kd >= depth + front padding), and its gemm weight gradient keeps the weights 4 times
// whatever the batch; sgemm does not pack these operands (1 / m + 1 / n >= 0.00196).
TEST(ConvScratch, ThreeDimensionalKernelDeeperThanItsFramesTakesTheGemmWeightGradient) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  const uint64_t col = 512u * 27 * 16 * 4, weights = 512u * 512 * 27 * 4;
  const uint64_t gemm = col + 4 * weights + g.fixed_bytes + g.pack_beyond_bytes;
  EXPECT_EQ(Conv3dRule(512, 512, {1, 4, 4}, {3, 3, 3}, {1, 1, 1}, 2).backward_temp_bytes, gemm);
  EXPECT_EQ(Conv3dRule(512, 512, {2, 4, 4}, {3, 3, 3}, {1, 1, 1}, 4).backward_temp_bytes, gemm);
  // Over 4 frames the direct kernel runs: its weight gradient is one blocked copy of the weights.
  const uint64_t direct = Conv3dRule(512, 512, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, 2).backward_temp_bytes;
  EXPECT_GE(direct, weights);
  EXPECT_LT(direct, 2 * weights);
  // A stride-2 direct kernel whose weights outweigh its reorders (96 -> 192 over 3 x 12 x 12,
  // measured 1996824 bytes at batches 2 and 4).
  EXPECT_NEAR(static_cast<double>(Conv3dRule(96, 192, {3, 12, 12}, {3, 3, 3}, {1, 1, 1}, 2, {2, 2, 2}).backward_temp_bytes),
              1996824.0, 1024.0);
}

// A temporal kernel (R(2+1)D's 3x1x1) at a batch below 16 is not oneDNN's: slow_conv3d unfolds the
// whole batch into columns of in_channels x 3 x output positions, in forward and again in backward
// (measured 393216 bytes for 32 channels over 2 x 16 x 16 at batch 2, both phases).
TEST(ConvScratch, SlowConv3dUnfoldsTheWholeBatch) {
  const OpRule r = Conv3dRule(32, 32, {2, 16, 16}, {3, 1, 1}, {1, 0, 0}, 2);
  EXPECT_EQ(r.forward_temp_bytes, 393216u);
  EXPECT_EQ(r.backward_temp_bytes, 393216u);
  EXPECT_EQ(Conv3dRule(32, 32, {2, 16, 16}, {3, 1, 1}, {1, 0, 0}, 4).backward_temp_bytes, 2 * 393216u);
}

// Any convolution below oneDNN's thresholds (PyTorch 1.13's use_mkldnn) with a real im2col unfolds the
// whole batch: a padded or strided 1x1 kernel too (slow_conv2d's compute_columns2d, conv1d as 2-D), and
// a grouped slow_conv3d, which takes its groups itself (one set of columns for all of them). Allocation
// traces of tools/probe_conv_fuzz.py dev seeds 314 and 298: the columns in forward and in backward.
OpRule SlowConvRule(std::vector<int64_t> in, std::vector<int64_t> w, std::vector<int64_t> pads, int64_t groups,
                    int64_t batch) {
  GraphBuilder g;
  g.Input("input", in).Weight("conv.weight", w);
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = g.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntAttr(conv, "group", groups);
  pads.insert(pads.end(), pads.begin(), pads.end());
  GraphBuilder::IntsAttr(conv, "pads", pads);
  g.Output("logits");
  return RuleOf(g.Bytes(), batch, "Conv");
}

TEST(ConvScratch, SlowConvolutionsUnfoldPaddedPointwiseAndGroupedKernels) {
  // Dev seed 314: 300 -> 16, 1x1 padded by (1, 0) over 14 x 14, batch 4 (output 16 x 14): measured
  // 1075200-byte columns in forward and in backward (the weight gradient's); planned 24.7 % low without.
  const OpRule padded = SlowConvRule({300, 14, 14}, {16, 300, 1, 1}, {1, 0}, 1, 4);
  EXPECT_EQ(padded.forward_temp_bytes, 4u * 300 * 16 * 14 * 4);
  EXPECT_EQ(padded.backward_temp_bytes, 4u * 300 * 16 * 14 * 4);
  // Unpadded, the columns are a view of the input: nothing.
  const OpRule plain = SlowConvRule({300, 14, 14}, {16, 300, 1, 1}, {0, 0}, 1, 4);
  EXPECT_EQ(plain.forward_temp_bytes, 0u);
  EXPECT_EQ(plain.backward_temp_bytes, 0u);
  // conv1d runs as 2-D: 384 -> 465, k1 padded by 1 over 32, batch 2 (dev seed 156's layer).
  EXPECT_EQ(SlowConvRule({384, 32}, {465, 384, 1}, {1}, 1, 2).backward_temp_bytes, 2u * 384 * 34 * 4);
  // Dev seed 298: 40 -> 45 in 5 groups, 3x1x1 padded by 1 on every axis over 4 x 14 x 49, batch 3
  // (output 4 x 16 x 51): columns of all 40 input channels, 4700160 bytes, in both phases (planned
  // 32 % low with an input-sized buffer, 1317120 bytes).
  const OpRule grouped = SlowConvRule({40, 4, 14, 49}, {45, 8, 3, 1, 1}, {1, 1, 1}, 5, 3);
  EXPECT_EQ(grouped.forward_temp_bytes, 4700160u);
  EXPECT_EQ(grouped.backward_temp_bytes, 4700160u);
  // A grouped 1x1x1 kernel copies the input into its columns even unpadded; one group takes the view.
  EXPECT_EQ(SlowConvRule({40, 4, 8, 8}, {40, 8, 1, 1, 1}, {0, 0, 0}, 5, 2).forward_temp_bytes, 2u * 40 * 256 * 4);
  EXPECT_EQ(SlowConvRule({40, 4, 8, 8}, {40, 40, 1, 1, 1}, {0, 0, 0}, 1, 2).forward_temp_bytes, 0u);
}

// PyTorch 1.13 runs a grouped transposed convolution group by group (slow_conv_transpose2d has no
// groups) and concatenates: allocation traces of ConvTranspose2d 32 -> 32, k3, stride 2 over 16 x 16
// measured 159808 / 245888 bytes of backward scratch at batches 2 / 4 with 4 groups and 66688 /
// 132224 with 32 (depthwise); the forward keeps the group outputs beside their concatenation (the
// output). Planned as one ungrouped layer, the columns of all groups, it was up to 56 % off on whole
// steps (tools/probe_conv_fuzz.py).
OpRule ConvTransposeRule(int64_t groups, int64_t batch) {
  GraphBuilder g;
  g.Input("input", {32, 16, 16}).Weight("conv.weight", {32, 32 / groups, 3, 3});
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = g.Node("ConvTranspose", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntAttr(conv, "group", groups);
  GraphBuilder::IntsAttr(conv, "strides", {2, 2});
  g.Output("logits");
  return RuleOf(g.Bytes(), batch, "ConvTranspose");
}

TEST(ConvScratch, GroupedTransposedConvolutionRunsGroupByGroup) {
  EXPECT_EQ(ConvTransposeRule(4, 2).backward_temp_bytes, 159808u);
  EXPECT_EQ(ConvTransposeRule(4, 4).backward_temp_bytes, 245888u);
  EXPECT_EQ(ConvTransposeRule(32, 2).backward_temp_bytes, 65536u + 1152);  // measured 66688
  EXPECT_EQ(ConvTransposeRule(32, 4).backward_temp_bytes, 131072u + 1152);  // measured 132224
  EXPECT_EQ(ConvTransposeRule(4, 2).forward_temp_bytes, 2u * 32 * 33 * 33 * 4);
  // Ungrouped, the columns of one sample (32 x 9 x 256 floats) as before.
  EXPECT_EQ(ConvTransposeRule(1, 2).backward_temp_bytes, 294912u);
}

// At batch 1 a group's channel slice is contiguous: subtensor's .contiguous() copies neither the
// input nor the output gradient, and the last group's columns alone are the scratch (dev seed 62 of
// tools/probe_conv_fuzz.py, 160 -> 64 in 4 groups over 55 x 84: planned 5.7 % high with both copies).
TEST(ConvScratch, GroupedTransposedConvolutionOfOneSampleCopiesNoGroup) {
  EXPECT_EQ(ConvTransposeRule(4, 1).backward_temp_bytes, 32u * 9 * 256 * 4 / 4);
  EXPECT_EQ(ConvTransposeRule(4, 1).forward_temp_bytes, 32u * 33 * 33 * 4);  // the output, as at batch 2
}

// slow_conv_transpose2d's backward unfolds no columns for a 1x1 kernel with unit strides and no padding
// (need_columns in NaiveConvolutionTranspose2d.cpp); its forward still does. conv1d runs as 2-D: dev
// seed 240 of tools/probe_conv_fuzz.py, ConvTranspose1d 8 -> 256, k1 over 512, batch 1, planned 2.2 %
// high with one sample's columns in backward.
OpRule ConvTranspose1dRule(int64_t k, int64_t stride) {
  GraphBuilder g;
  g.Input("input", {8, 512}).Weight("conv.weight", {8, 256, k});
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = g.Node("ConvTranspose", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntsAttr(conv, "strides", {stride});
  g.Output("logits");
  return RuleOf(g.Bytes(), 1, "ConvTranspose");
}

TEST(ConvScratch, TransposedPointwiseConvolutionUnfoldsNoColumnsInBackward) {
  const OpRule pointwise = ConvTranspose1dRule(1, 1);
  EXPECT_EQ(pointwise.backward_temp_bytes, 0u);
  EXPECT_EQ(pointwise.forward_temp_bytes, 256u * 512 * 4 + 512 * 4);  // the columns and the ones
  // Strided, the columns are back (512 positions of 256 channels).
  EXPECT_EQ(ConvTranspose1dRule(1, 2).backward_temp_bytes, 256u * 512 * 4);
}

// oneDNN 2.6.3's direct 2-D weight gradients (AVX-512, then AVX2) refuse padding as wide as the
// kernel and a dilated, strided height; the gemm one runs (DNNL_VERBOSE on
// tools/probe_conv_fuzz.py dev seeds 107 and 118: x64:gemm:jit backward_weights; planned 49 % and
// 28 % low with the direct kernel's blocked weights).
OpRule Conv2dRule(int64_t c_in, int64_t c_out, std::vector<int64_t> size, int64_t k, std::vector<int64_t> pads,
                  int64_t stride, int64_t dilation, int64_t batch) {
  GraphBuilder g;
  g.Input("input", {c_in, size[0], size[1]}).Weight("conv.weight", {c_out, c_in, k, k});
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = g.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  pads.insert(pads.end(), pads.begin(), pads.end());
  GraphBuilder::IntsAttr(conv, "pads", pads);
  GraphBuilder::IntsAttr(conv, "strides", {stride, stride});
  GraphBuilder::IntsAttr(conv, "dilations", {dilation, dilation});
  g.Output("logits");
  return RuleOf(g.Bytes(), batch, "Conv");
}

TEST(ConvScratch, TwoDimensionalPaddingTheDirectKernelRefusesTakesTheGemmWeightGradient) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  // 128 -> 40, k6, stride 2, padding (2, 6) over 4 x 50: the output is 2 x 28.
  const uint64_t weights = 40u * 128 * 36 * 4, col = 128u * 36 * 2 * 28 * 4;
  const OpRule wide = Conv2dRule(128, 40, {4, 50}, 6, {2, 6}, 2, 1, 3);
  EXPECT_GE(wide.backward_temp_bytes, col + g.weight_copies * weights + g.fixed_bytes);
  // Padding (2, 2) is within the direct kernel's bounds: its blocked weights only.
  const OpRule within = Conv2dRule(128, 40, {4, 50}, 6, {2, 2}, 2, 1, 3);
  EXPECT_LT(within.backward_temp_bytes, 2 * weights);
  // A dilated height with a stride (40 -> 40, k4, dilation 2, stride 2 over 34 x 97).
  EXPECT_GE(Conv2dRule(40, 40, {34, 97}, 4, {4, 0}, 2, 2, 2).backward_temp_bytes, g.weight_copies * 40u * 40 * 16 * 4);
  // Top padding 5 under a 6-tall kernel is past the AVX-512 kernel's half but within the AVX2 one's,
  // which runs with the direct rule's memory (dev seed 33: 32 -> 320 over 8 x 8, exact before).
  const uint64_t w33 = 320u * 32 * 36 * 4;
  EXPECT_LT(Conv2dRule(32, 320, {8, 8}, 6, {5, 0}, 2, 1, 7).backward_temp_bytes, 2 * w33);
}

// A dense 2-D layer of 4-15 input channels is refused by oneDNN's AVX-512 weight gradient (a first
// convolution of more than 3 channels); where the AVX2 one refuses it too (a kernel taller than the
// input), gemm runs (dev seed 35: 8 -> 32, k5, stride 2 over 3 x 3, batch 1, planned 80 % low).
TEST(ConvScratch, NarrowInputTheAvx2KernelRefusesTakesTheGemmWeightGradient) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  const uint64_t w = 32u * 8 * 25 * 4, col = 8u * 25 * 4 * 4;
  const uint64_t gemm = col + g.weight_copies * w + g.fixed_bytes + g.PackBytes(8 * 25, 32, 4, 4);
  EXPECT_EQ(Conv2dRule(8, 32, {3, 3}, 5, {2, 2}, 2, 1, 1).backward_temp_bytes, gemm);
  // Over 8 x 8 the AVX2 kernel takes it: its blocked rule, far less than four weight copies.
  EXPECT_LT(Conv2dRule(8, 32, {8, 8}, 5, {2, 2}, 2, 1, 1).backward_temp_bytes, g.weight_copies * w);
}

// oneDNN's AVX-512 input gradient pads fewer than 16 input channels to 16 and blocks the weights
// 16 x 16: 2 -> 320, k5, stride 2 over 8 x 8, batch 4 (dev seed 97, planned 57 % low) holds 512000
// bytes of blocked weights beside the blocked output and input gradients (its allocation trace).
TEST(ConvScratch, NarrowInputGradientBlocksTheWeightsSixteenBySixteen) {
  const uint64_t y16 = 4u * 320 * 16 * 4, x16 = 4u * 16 * 64 * 4, w16 = 320u * 16 * 25 * 4;
  const uint64_t x = 4u * 2 * 64 * 4, w = 320u * 2 * 25 * 4;
  EXPECT_EQ(Conv2dRule(2, 320, {8, 8}, 5, {2, 2}, 2, 1, 4).backward_temp_bytes, y16 + x16 + w16 - x - w + 7 * 1024);
  // 1 -> 2, k7 over 112 x 112, batch 3 (dev seed 166): the blocked input and output gradients by 16,
  // not the 4-8-channel probes' extra padded and plain input (planned 49 % high with them).
  // Its input gradient is counted once: beside the blocked gradients, the plain one is not there yet
  // (planned 1.9 % high with both; dev seed 122, 3 -> 24 with a 1x3 kernel, 3.8 % high).
  const uint64_t p16 = 3u * 16 * 12544 * 4, w16_1 = 16u * 16 * 49 * 4, x_1 = 3u * 12544 * 4, w_1 = 2u * 49 * 4;
  EXPECT_EQ(Conv2dRule(1, 2, {112, 112}, 7, {3, 3}, 1, 1, 3).backward_temp_bytes,
            2 * p16 + w16_1 - x_1 - w_1 + 7 * 1024);
}

// A dilated layer whose input gradient the direct AVX-512 kernel takes pads it the same way, while its
// weight gradient runs gemm on plain buffers (dev seed 346: 4 -> 48, 4x4 dilated by 4 and padded by 6
// over 72 x 72, batch 7: jit:avx512_core backward_data on aBcd16b with ABcd16a16b weights, x64:gemm:jit
// backward_weights; planned 3.5 % low with the AVX2 weight gradient's 8-blocked input and padding).
TEST(ConvScratch, DilatedNarrowInputGradientBlocksTheWeightsSixteenBySixteen) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  const uint64_t y16 = 7u * 48 * 5184 * 4, x16 = 7u * 16 * 5184 * 4, w16 = 48u * 16 * 16 * 4;
  const uint64_t x = 7u * 4 * 5184 * 4, w = 48u * 4 * 16 * 4, col = 4u * 16 * 5184 * 4;
  const uint64_t input_phase = y16 + x16 + w16 - x - w + 7 * 1024;
  const uint64_t gemm = col + g.weight_copies * w + g.fixed_bytes + g.PackBytes(64, 48, 5184, 5184);
  EXPECT_EQ(Conv2dRule(4, 48, {72, 72}, 4, {6, 6}, 1, 4, 7).backward_temp_bytes, std::max(input_phase, gemm));
}

// A 3-D first convolution (1-3 input channels) pads its input gradient as the 2-D one does: 2 -> 96,
// 1x3x7, stride 2 over 1 x 8 x 8, batch 6 (dev seed 148, planned 51 % low: its trace holds 129024
// bytes of 16 x 16-blocked weights beside the blocked gradients). Where the direct kernels' boundary
// checks refuse it (padding 3 under a 3-deep kernel: dev seed 38, 3 -> 160, planned 41 % low), gemm
// runs in every direction and the weight gradient keeps the gemm rule's scratch.
TEST(ConvScratch, ThreeDimensionalFirstConvolutionPadsOrRunsGemm) {
  const uint64_t y16 = 6u * 96 * 16 * 4, x16 = 6u * 16 * 64 * 4, w16 = 96u * 16 * 21 * 4;
  const uint64_t x = 6u * 2 * 64 * 4, w = 96u * 2 * 21 * 4;
  EXPECT_EQ(Conv3dRule(2, 96, {1, 8, 8}, {1, 3, 7}, {0, 1, 3}, 6, {2, 2, 2}).backward_temp_bytes,
            y16 + x16 + w16 - x - w + 7 * 1024);
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  // Output 3 x 3 x 2: one depth slice's columns are 3 x 27 x 6 floats.
  const uint64_t col = 3u * 27 * 6 * 4, weights = 160u * 3 * 27 * 4;
  const uint64_t gemm = col + g.weight_copies * weights + g.fixed_bytes + g.PackBytes(81, 160, 6, 18);
  EXPECT_EQ(Conv3dRule(3, 160, {3, 4, 4}, {3, 3, 3}, {3, 3, 1}, 7, {3, 3, 3}).backward_temp_bytes, gemm);
}

// A dilated, strided axis is refused by both direct input-gradient kernels (oneDNN 2.6.3 bwd_data
// init_conf); with the weight gradient refused too, the whole backward runs gemm, without reorders
// (dev seed 100: 12 -> 64, dilation 3, stride 3; planned 23 % high with the blocked reorders).
TEST(ConvScratch, DilatedStridedLayerRunsTheGemmInputGradient) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  // 12 -> 64, k3, padding 3, stride 3, dilation 3 over 53 x 37, batch 6: the output is 18 x 13.
  const uint64_t x = 6u * 12 * 53 * 37 * 4, w = 64u * 12 * 9 * 4, col = 12u * 9 * 234 * 4;
  const uint64_t weight_phase = col + g.weight_copies * w + g.fixed_bytes + g.PackBytes(108, 64, 234, 234);
  const uint64_t backward = Conv2dRule(12, 64, {53, 37}, 3, {3, 3}, 3, 3, 6).backward_temp_bytes;
  EXPECT_EQ(backward, std::max(std::max(col + g.pack_beyond_bytes, x) + g.fixed_bytes - w, weight_phase));
  EXPECT_LT(backward, x / 12 * 16);  // no input blocked by 8 (the old rule held it and more)
}

// conv1d runs as a 2-D convolution over a unit height: a dilated, strided width is refused by both
// direct input-gradient kernels as in 2-D (dev seed 221: 4 -> 2, k2, stride 2, padding 1, dilation 3
// over 16, batch 3; planned 84 % low, 68388 bytes short, with the blocked reorders and no sgemm buffer).
TEST(ConvScratch, DilatedStridedConv1dRunsTheGemmInputGradient) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  // The layer's rule at batch 3, with the given dilation.
  auto rule = [](int64_t dilation) {
    GraphBuilder b;
    b.Input("input", {4, 16}).Weight("conv.weight", {2, 4, 2});
    b.Node("Mul", {"input", "input"}, {"x"}, "pre");
    auto& conv = b.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
    GraphBuilder::IntsAttr(conv, "pads", {1, 1});
    GraphBuilder::IntsAttr(conv, "strides", {2});
    if (dilation != 1) GraphBuilder::IntsAttr(conv, "dilations", {dilation});
    b.Output("logits");
    return RuleOf(b.Bytes(), 3, "Conv");
  };
  const OpRule r = rule(3);
  // Output (16 + 2 - 3 - 1) / 2 + 1 = 8 positions: one sample's columns are 4 x 2 x 8 floats.
  const uint64_t x = 3u * 4 * 16 * 4, w = 2u * 4 * 2 * 4, col = 4u * 2 * 8 * 4;
  const uint64_t weight_phase = col + g.weight_copies * w + g.fixed_bytes;  // 2 output channels: no packing
  EXPECT_EQ(r.backward_temp_bytes, std::max(std::max(col + g.pack_beyond_bytes, x) + g.fixed_bytes - w, weight_phase));
  // Undilated, the direct kernels keep it: far less than sgemm's buffer.
  EXPECT_LT(rule(1).backward_temp_bytes, g.pack_beyond_bytes);
}

// Which kernel oneDNN 2.6.3 runs an input gradient on, from both direct kernels' init_conf refusals
// (each case is a tools/probe_conv_fuzz.py dev seed whose backward_data DNNL_VERBOSE names).
TEST(ConvScratch, DirectInputGradientKernelFollowsOneDnnsInitConf) {
  const uint64_t l1 = EmbeddedConvScratchTable().direct_input_gradient.l1_bytes;
  ASSERT_EQ(l1, 32u * 1024);
  using K = InputGradientKernel;
  const ConvAxis unit;
  // conv1d 12 -> 12, k3, stride 2 over 256 (seed 317): the AVX-512 kernel's unroll, 31 / 2 = 15 with
  // the rows over L1, is no multiple of the stride; AVX2 needs the unit height's stride too: gemm.
  // With a 48 KiB L1 the rows fit, the unroll is 28 and the AVX-512 kernel takes it.
  const ConvAxis s317{256, 127, 3, 2, 0, 1};
  EXPECT_EQ(DirectInputGradientKernel({unit, unit, s317}, 12, 12, 1, l1), K::kGemm);
  EXPECT_EQ(DirectInputGradientKernel({unit, unit, s317}, 12, 12, 1, 48 * 1024), K::kAvx512);
  // Height and width of 2-D layers (a unit height for conv1d), channels, and oneDNN's choice.
  struct Case {
    const char* what;
    ConvAxis height, width;
    int64_t in, out;
    K kernel;
  };
  const Case cases[] = {
      {"seed 86: conv1d 1 -> 256, k2 s2 p1 over 1000", unit, {1000, 501, 2, 2, 1, 1}, 1, 256, K::kGemm},
      {"seed 285: 3 -> 96, k4 s3 p1 over 14 x 84", {14, 5, 4, 3, 1, 1}, {84, 28, 4, 3, 1, 1}, 3, 96, K::kGemm},
      {"seed 3: 486 -> 3, k4 s3 p3 over 39 x 39", {39, 14, 4, 3, 3, 1}, {39, 14, 4, 3, 3, 1}, 486, 3, K::kAvx2},
      {"seed 90: 16 -> 64, k1x7 s3 p(0, 3) over 64 x 102", {64, 22, 1, 3, 0, 1}, {102, 34, 7, 3, 3, 1}, 16, 64,
       K::kAvx2},
      {"ResNet 3x3, stride 1", {56, 56, 3, 1, 1, 1}, {56, 56, 3, 1, 1, 1}, 64, 64, K::kAvx512},
      {"ResNet 3x3, stride 2", {56, 28, 3, 2, 1, 1}, {56, 28, 3, 2, 1, 1}, 128, 128, K::kAvx512},
      {"seed 118: a dilated, strided axis", {34, 14, 4, 2, 4, 2}, {97, 46, 4, 2, 0, 2}, 40, 40, K::kGemm},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DirectInputGradientKernel({unit, c.height, c.width}, c.in, c.out, 1, l1), c.kernel) << c.what;
  }
}

// A dense conv1d whose input gradient both direct kernels refuse runs it on gemm: one sample's
// columns and sgemm's buffer on plain buffers, beside the weight gradient's own phase (dev seed 317:
// 12 -> 12, k3, stride 2 over 256, batch 2; planned 20.9 % low with the blocked reorders, +1.4 % so).
// Its choice flips on a 48 KiB L1: the columns and buffer are machine-dependent bytes.
TEST(ConvScratch, InputGradientTheDirectKernelsRefuseRunsGemm) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  GraphBuilder b;
  b.Input("input", {12, 256}).Weight("conv.weight", {12, 12, 3});
  b.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = b.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntsAttr(conv, "strides", {2});
  b.Output("logits");
  const OpRule r = RuleOf(b.Bytes(), 2, "Conv");
  const uint64_t x = 2u * 12 * 256 * 4, col = 12u * 3 * 127 * 4, w = 12u * 12 * 3 * 4;
  // (Less the weight gradient, which is made after this phase: round 10, dev seed 454.)
  EXPECT_EQ(r.backward_temp_bytes, std::max(col + g.pack_beyond_bytes, x) + g.fixed_bytes - w);
  EXPECT_EQ(r.machine_dependent_bytes, col + g.pack_beyond_bytes);
}

// A narrow first convolution whose input gradient the AVX-512 kernel refuses and the AVX2 one takes
// blocks it by 8, not 16 (dev seed 371: 4 -> 48, k5x2, stride 3, padding (2, 0) over 124 x 62, batch 2;
// jit:avx2 backward_data; planned 13.5 % high with blocks of 16, exact so).
TEST(ConvScratch, Avx2InputGradientBlocksByEight) {
  GraphBuilder b;
  b.Input("input", {4, 124, 62}).Weight("conv.weight", {48, 4, 5, 2});
  b.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = b.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntsAttr(conv, "pads", {2, 0, 2, 0});
  GraphBuilder::IntsAttr(conv, "strides", {3, 3});
  b.Output("logits");
  const OpRule r = RuleOf(b.Bytes(), 2, "Conv");
  // Output 42 x 21. The input and the weights padded to 8 channels, the output gradient has 48.
  const uint64_t x = 2u * 4 * 124 * 62 * 4, x8 = 2 * x, y = 2u * 48 * 42 * 21 * 4, w = 48u * 4 * 10 * 4;
  const uint64_t input_phase8 = y + x8 + 2 * w - x - w + 7 * 1024;
  // The weight-gradient phase (the input and output gradient blocked by 8, the weights' padding) is the larger.
  const uint64_t weight_phase = x8 + y + 7 * 1024 + w;
  EXPECT_EQ(r.backward_temp_bytes, std::max(input_phase8, weight_phase));
}

// A depthwise layer whose weight gradient runs gemm holds, while its input-gradient kernel runs, the
// blocked output and input gradients; then the blocked input gradient beside the plain one. Strided,
// the output gradient is the smaller (dev seed 124 of tools/probe_conv_fuzz.py: 61 channels, k5 s2
// over 16 x 16, batch 4: its trace holds the 262144-byte blocked input gradient beside the plain one at
// the peak; planned 1.9 % high with 2 x padded - plain).
TEST(ConvScratch, StridedDepthwiseInputGradientHoldsTheBlockedInputGradientBesideThePlainOne) {
  const uint64_t x16 = 4u * 64 * 256 * 4;
  EXPECT_EQ(ConvRule(2, 61, 61, 5, 61, 16, 4, 2).backward_temp_bytes, x16);
  // Unstrided: 2 x padded - plain, as before (output gradient and input gradient blocked alike).
  const uint64_t x = 4u * 61 * 256 * 4;
  EXPECT_EQ(ConvRule(2, 61, 61, 5, 61, 16, 4).backward_temp_bytes, 2 * x16 - x + 7 * 1024);
}

// oneDNN's gemm input gradient runs before the weight gradient is made (mkldnn_convolution_backward:
// backward_input, then backward_weights): its phase is less by the weight gradient the plan holds
// through the op's backward (dev seed 454: 384 -> 32, k7, stride (2, 3), padding 3 over 22 x 56, batch 4,
// x64:gemm:jit backward_data; planned 5.8 % high, the 2408448-byte weight gradient + 908 bytes).
TEST(ConvScratch, GemmInputGradientPhaseComesBeforeTheWeightGradient) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  GraphBuilder b;
  b.Input("input", {384, 22, 56}).Weight("conv.weight", {32, 384, 7, 7});
  b.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = b.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntsAttr(conv, "pads", {3, 3, 3, 3});
  GraphBuilder::IntsAttr(conv, "strides", {2, 3});
  b.Output("logits");
  const OpRule r = RuleOf(b.Bytes(), 4, "Conv");
  EXPECT_EQ(r.conv_kernels.input_gradient, ConvKernel::kGemm);
  // Output 11 x 19: one sample's columns are 384 x 49 x 209 floats, 15.7 MB, above the weight phase.
  const uint64_t x = 4u * 384 * 22 * 56 * 4, w = 32u * 384 * 49 * 4, col = 384u * 49 * 209 * 4;
  EXPECT_GT(col, x);
  EXPECT_EQ(r.backward_temp_bytes, col + g.DataGemmBufferBytes(209, 384u * 49) + g.fixed_bytes - w);
}

// A dense 2-D layer of 4-15 input channels forms its weight gradient blocked by 8 (jit:avx2
// backward_weights, ABcd8b8a) and reorders it into the plain one while both live (dev seed 487: 12 -> 48,
// k7, stride 2, padding (4, 3) over 7 x 7, batch 6; planned 15.4 % low with the activations' reorders).
TEST(ConvScratch, NarrowDenseWeightGradientHoldsItsBlockedCopy) {
  GraphBuilder b;
  b.Input("input", {12, 7, 7}).Weight("conv.weight", {48, 12, 7, 7});
  b.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = b.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntsAttr(conv, "pads", {4, 3, 4, 3});
  GraphBuilder::IntsAttr(conv, "strides", {2, 2});
  b.Output("logits");
  const OpRule r = RuleOf(b.Bytes(), 6, "Conv");
  // 48 x 16 (12 padded to 8's multiple) x 49 floats: 150528 bytes, + the fixed part (the trace: 6508).
  EXPECT_EQ(r.conv_kernels.weight_gradient, ConvKernel::kJitAvx2);
  EXPECT_EQ(r.backward_temp_bytes, 48u * 16 * 49 * 4 + 5400);
}

// A 3-D first convolution with unequal strides: both direct input-gradient kernels refuse it, as in 2-D
// (dev seed 617: 3 -> 1, 4x4x4 strided by (1, 1, 2), padding (3, 1, 1) over 16 x 7 x 38, batch 3:
// x64:gemm:jit backward_data, jit:avx512_core backward_weights; planned 78 % high with the blocked
// input gradient and 16 x 16 weights).
TEST(ConvScratch, ThreeDimensionalFirstConvolutionWithUnequalStridesRunsTheGemmInputGradient) {
  GraphBuilder b;
  b.Input("input", {3, 16, 7, 38}).Weight("conv.weight", {1, 3, 4, 4, 4});
  b.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = b.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntsAttr(conv, "pads", {3, 1, 1, 3, 1, 1});
  GraphBuilder::IntsAttr(conv, "strides", {1, 1, 2});
  b.Output("logits");
  const OpRule r = RuleOf(b.Bytes(), 3, "Conv");
  EXPECT_EQ(r.conv_kernels.input_gradient, ConvKernel::kGemm);
  // The output gradient blocked by 16 (415872 bytes) + the fixed part is the larger phase now.
  const uint64_t y16 = 3u * 16 * 19 * 6 * 19 * 4;
  EXPECT_EQ(r.backward_temp_bytes, y16 + 7 * 1024);
}

// A strided 1x1x1 kernel of 9-15 input channels: its weight gradient runs the AVX2 kernel on the input
// and the output gradient blocked by 8 (dev seed 527: 12 -> 24, stride 2 over 3 x 16 x 16, batch 8;
// planned 2.2 % high with the output gradient blocked by 16).
TEST(ConvScratch, StridedPointwise3dWeightGradientBlocksByEight) {
  const OpRule r = ConvRule(3, 12, 24, 1, 1, 16, 8, 2);
  const uint64_t x8 = 8u * 16 * 4096 * 4, y8 = 8u * 24 * 512 * 4, w_padding = 24u * 4 * 4;
  EXPECT_EQ(r.backward_temp_bytes, x8 + y8 + w_padding + 7 * 1024);
}

// A gemm input gradient over many positions and columns with few output channels: sgemm may pack it
// (dev seed 635: 160 -> 3, 3x3 padded by (3, 0) over 79 x 79, batch 4: a 3322144-byte buffer, planned
// 3.7 % low with 73984). Not modelled: listed as a risk of 4 x 128 x (m + n) bytes.
TEST(ConvScratch, DataGemmThatMayPackIsARisk) {
  const OpRule r = Conv2dRule(160, 3, {79, 79}, 3, {3, 0}, 1, 1, 4);
  EXPECT_EQ(r.conv_kernels.input_gradient, ConvKernel::kGemm);
  EXPECT_EQ(r.data_gemm_pack_bytes, 4u * 128 * (83 * 77 + 160 * 9));
  // Many output channels: no risk (dev seed 454's layer, 384 -> 32, runs an unpacked gemm).
  EXPECT_EQ(Conv2dRule(160, 64, {79, 79}, 3, {3, 0}, 1, 1, 4).data_gemm_pack_bytes, 0u);
}

// A dilated depthwise layer with a stride runs both gradients on gemm as well: the depthwise kernels'
// refusal of a dilation comes first (dev seed 553: conv1d 16 channels, k3, stride 2, dilation 4, padding
// 4 over 16, batch 7; planned 64 % low with the blocked reorders).
TEST(ConvScratch, DilatedStridedDepthwiseGradientsRunGemm) {
  const OpRule r = ConvRule(1, 16, 16, 3, 16, 16, 7, 2, 4);
  EXPECT_EQ(r.conv_kernels.input_gradient, ConvKernel::kGemm);
  EXPECT_EQ(r.conv_kernels.weight_gradient, ConvKernel::kGemm);
}

// A dilated depthwise layer runs both gradients on gemm, channel by channel (dev seed 389: 24 channels,
// k3, dilation 3; planned 33 % high with the blocked reorders, +0.4 % so).
TEST(ConvScratch, DilatedDepthwiseGradientsRunGemm) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  // 24 channels over 8 x 8, k3, dilation 3, padding 3, batch 7: one channel's columns are 9 x 64 floats.
  const uint64_t x = 7u * 24 * 64 * 4, col = 9u * 64 * 4, w = 24u * 9 * 4;
  const OpRule r = ConvRule(2, 24, 24, 3, 24, 8, 7, 1, 3);
  EXPECT_EQ(r.backward_temp_bytes, std::max(std::max(col + g.pack_beyond_bytes, x) + g.fixed_bytes - w,
                                            col + g.weight_copies * w + g.fixed_bytes));
  // Undilated, the depthwise kernels' blocked reorders.
  EXPECT_GT(ConvRule(2, 24, 24, 3, 24, 8, 7).backward_temp_bytes, r.backward_temp_bytes);
}

// A 3-D layer of one channel a group runs x64:gemm:jit in every direction (oneDNN 2.6.3): forward holds
// ideep's own output, not one blocked by 16 (dev seed 424: 2 -> 2 channels, k3 over 4 x 28 x 49, batch 8,
// planned +120 % in forward with the blocked output, +0.06 % so); backward one depth slice's columns.
TEST(ConvScratch, ThreeDimensionalDepthwiseRunsGemmWithoutBlockedOutput) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  // 2 channels over 12 x 12 x 12, k3 padded by 1, batch 8: one slice's columns are 27 x 144 floats.
  const uint64_t x = 8u * 2 * 1728 * 4, col = 27u * 144 * 4;
  const OpRule r = ConvRule(3, 2, 2, 3, 2, 12, 8);
  // sgemm runs a matrix-vector product in forward (one output channel a group): no buffer.
  EXPECT_EQ(r.forward_temp_bytes, std::max(col, x) + g.fixed_bytes);
  EXPECT_LT(r.forward_temp_bytes, x / 2 * 16);
  EXPECT_GE(r.backward_temp_bytes, std::max(col + g.pack_beyond_bytes, x) + g.fixed_bytes - 2u * 27 * 4);
}

// The same gemm input gradient onto a one-position map is a matrix-vector product (jump_to_gemv): no
// sgemm buffer (dev seed 313: 1 -> 1, k4, stride 2, padding 3, dilation 2 over 1 x 1, batch 7, planned
// +859 %, 71612 bytes high, with it).
TEST(ConvScratch, DilatedStridedLayerOntoOnePositionTakesNoSgemmBuffer) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  const uint64_t x = 7u * 1 * 1 * 4, w = 1u * 16 * 4, col = 1u * 16 * 1 * 4;
  const OpRule r = Conv2dRule(1, 1, {1, 1}, 4, {3, 3}, 2, 2, 7);
  EXPECT_EQ(r.backward_temp_bytes,
            std::max(std::max(col, x) + g.fixed_bytes, col + g.weight_copies * w + g.fixed_bytes));
  // Over 4 x 4 (output 2 x 2) the buffer is there.
  EXPECT_GE(Conv2dRule(1, 1, {4, 4}, 4, {3, 3}, 2, 2, 7).backward_temp_bytes, g.pack_beyond_bytes);
}

// A grouped gemm layer with one output channel per group runs its forward gemm (n = 1) as gemv, and
// one with a 1-wide kernel over one input channel per group its input-gradient gemm (n = 1 x 1).
TEST(ConvScratch, GroupedGemmWithOneChannelPerGroupTakesNoForwardSgemmBuffer) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  // 24 -> 4 in 4 groups (6 -> 1 each), k3 over 8 x 8, batch 2: forward holds its columns, no buffer.
  const uint64_t y = 2u * 4 * 64 * 4, col = 6u * 9 * 64 * 4;
  const OpRule r = ConvRule(2, 24, 4, 3, 4, 8, 2);
  EXPECT_EQ(r.forward_temp_bytes, std::max(col, y) + g.fixed_bytes);
  // 6 -> 12 in 2 groups (3 -> 6 each) keeps it in forward.
  EXPECT_GE(ConvRule(2, 6, 12, 3, 2, 8, 2).forward_temp_bytes, g.pack_beyond_bytes);
}

// A grouped layer whose channels fit the AVX2 weight-gradient kernel's blocks of 8 (not the AVX-512
// one's 16) runs gemm where that kernel's init_conf refuses the geometry (any dilation, a padded
// depth), and its dilated, strided input gradient runs gemm too (dev seed 392: 3-D 16 -> 48 in 2
// groups, k3 s2 d2 padded by 2 over 5 x 14 x 14, batch 1: x64:gemm:jit backward_data and
// backward_weights, forward jit:avx512_core on 8c8b blocks; planned 40 % low with blocked reorders).
OpRule GroupedConv3dRule(int64_t stride, int64_t dilation, int64_t pad) {
  GraphBuilder g;
  g.Input("input", {16, 5, 14, 14}).Weight("conv.weight", {48, 8, 3, 3, 3});
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = g.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
  GraphBuilder::IntAttr(conv, "group", 2);
  GraphBuilder::IntsAttr(conv, "pads", std::vector<int64_t>(6, pad));
  GraphBuilder::IntsAttr(conv, "strides", std::vector<int64_t>(3, stride));
  GraphBuilder::IntsAttr(conv, "dilations", std::vector<int64_t>(3, dilation));
  g.Output("logits");
  return RuleOf(g.Bytes(), 1, "Conv");
}

TEST(ConvScratch, GroupedLayerTheAvx2WeightGradientRefusesRunsGemm) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  // Seed 392's layer: output 3 x 7 x 7; one depth slice's columns of a group are 8 x 27 x 49 floats.
  const uint64_t x = 16u * 5 * 14 * 14 * 4, w = 48u * 8 * 27 * 4, col = 8u * 27 * 49 * 4;
  const uint64_t weight_phase = col + g.weight_copies * w + g.fixed_bytes + g.PackBytes(8 * 27, 24, 49, 147);
  EXPECT_EQ(g.PackBytes(8 * 27, 24, 49, 147), 151840u);  // seed 392's trace: six 151840-byte sgemm buffers
  const uint64_t input_phase = std::max(col + g.pack_beyond_bytes, x) + g.fixed_bytes;
  EXPECT_EQ(GroupedConv3dRule(2, 2, 2).backward_temp_bytes, std::max(input_phase, weight_phase));
  // Undilated and unpadded in depth the AVX2 kernel takes the weight gradient: no gemm scratch.
  EXPECT_LT(GroupedConv3dRule(1, 1, 0).backward_temp_bytes, weight_phase);
  // Depth padding alone refuses it (f_pad != 0): the gemm weight gradient, beside direct data kernels.
  EXPECT_GE(GroupedConv3dRule(1, 1, 1).backward_temp_bytes, weight_phase);
}

// A dense 1x1 kernel on oneDNN (dilated, or a batch of 16+) is jit_1x1's in every direction, which
// pads both channel counts to 16 (jit_avx512_common_1x1_conv_kernel::init_conf): dev seed 343, 12 -> 3
// channels with dilation 2 over 8 x 123, batch 7, held the output gradient blocked by 16 (planned 11 %
// low with blocks of 8); its backward holds the blocked input and output gradients and nothing more,
// also for 8 -> 8 (traces of 4 -> 4, 6 -> 3, 8 -> 8: within 0.4 % so, -12.5 % .. +40 % otherwise).
TEST(ConvScratch, PointwiseKernelBlocksBySixteen) {
  const uint64_t fixed = 7 * 1024;
  const uint64_t x16 = 7u * 16 * 984 * 4, y16 = 7u * 16 * 984 * 4, wpad = (16u * 16 - 3 * 12) * 4;
  EXPECT_EQ(Conv2dRule(12, 3, {8, 123}, 1, {0, 0}, 1, 2, 7).backward_temp_bytes, x16 + y16 + fixed + wpad);
  const uint64_t x8 = 4u * 16 * 240 * 4, wpad8 = (16u * 16 - 8 * 8) * 4;
  EXPECT_EQ(Conv2dRule(8, 8, {12, 20}, 1, {0, 0}, 1, 2, 4).backward_temp_bytes, 2 * x8 + fixed + wpad8);
}

// A dense layer of 16+ input channels whose top padding the AVX-512 weight-gradient kernel refuses
// (more than half the kernel) runs the AVX2 one, blocked by 8 (dev seed 234: 96 -> 4, 5x1 padded by
// (3, 0) over 7 x 7: jit:avx2 backward_weights on aBcd8b / ABcd8b8a, planned 8.9 % high by 16).
TEST(ConvScratch, WeightGradientTheAvx512KernelRefusesBlocksByEight) {
  const uint64_t fixed = 7 * 1024, x = 2u * 96 * 49 * 4;
  // 96 -> 4, k5 padded by (3, 2) over 7 x 7, batch 2: output 9 x 7; 4 output channels pad to 8.
  const uint64_t y8 = 2u * 8 * 63 * 4, wpad8 = (8u - 4) * 96 * 25 * 4;
  EXPECT_EQ(Conv2dRule(96, 4, {7, 7}, 5, {3, 2}, 1, 1, 2).backward_temp_bytes, x + y8 + fixed + wpad8);
  // Padded by (2, 2) the AVX-512 kernel takes it: blocks of 16.
  const uint64_t y16 = 2u * 16 * 49 * 4, wpad16 = (16u - 4) * 96 * 25 * 4;
  EXPECT_EQ(Conv2dRule(96, 4, {7, 7}, 5, {2, 2}, 1, 1, 2).backward_temp_bytes, x + y16 + fixed + wpad16);
}

// A 1-D/2-D depthwise layer's forward (jit_uni_dw_conv_fwd) reads its source blocked by 16 channels:
// the blocked input beside the blocked output, the plain output only after (dev pool seeds 854, 3070,
// 3798 of tools/probe_conv_fuzz.py, dilated depthwise layers of 9, 4 and 2 channels whose gemm backward
// is small: planned 10-39 % low in forward with the blocked output alone, within 0.6 % so).
TEST(ConvScratch, DepthwiseForwardHoldsBlockedInputAndOutput) {
  const uint64_t fixed = 7 * 1024;
  // 4 channels, 3x3 with dilation 2 padded by 2 over 16 x 16, batch 8: input and output 32768 bytes,
  // 131072 blocked by 16.
  const uint64_t x = 8u * 4 * 256 * 4, blocked = 8u * 16 * 256 * 4;
  EXPECT_EQ(ConvRule(2, 4, 4, 3, 4, 16, 8, 1, 2).forward_temp_bytes, blocked + blocked - x + fixed);
}

// A grouped 1x1 convolution below batch 16 runs slow_conv2d (no oneDNN), which has no groups:
// PyTorch 1.13 runs it group by group and concatenates (dev seed 75: a depthwise 1x1 over 160
// channels planned 18 % low with no scratch at all).
TEST(ConvScratch, GroupedSlowConv2dRunsGroupByGroup) {
  // 32 -> 32, 4 groups, 1x1, 16 x 16, batch 2: the concatenation holds the input and weight
  // gradients' pieces beside the results; each group's input and output-gradient copies are less.
  const uint64_t x = 2u * 32 * 256 * 4, w = 32u * 8 * 4;
  const OpRule r = ConvRule(2, 32, 32, 1, 4, 16, 2);
  EXPECT_EQ(r.backward_temp_bytes, x + w);
  EXPECT_EQ(r.forward_temp_bytes, x);  // the group outputs beside their concatenation (output = input size)
}

// A grouped convolution whose per-group channel counts oneDNN's direct kernels refuse (not 16, 8 or
// 4 in and out for forward and the input gradient, not 16 or 8 for the weight gradient; oneDNN 2.6.3
// init_conf) runs x64:gemm:jit on plain buffers: no reorders, ideep's own output / input-gradient
// buffer and one group's im2col columns (DNNL_VERBOSE on tools/probe_conv_fuzz.py dev seeds 79, 89).
TEST(ConvScratch, GroupedConvolutionOneDnnRefusesRunsGemmPerGroup) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  const uint64_t fixed = g.fixed_bytes;  // the gemm primitive's, not the blocked kernels' 7 KiB
  // 24 -> 192, 4 groups (6 -> 48 each), k3, 24 x 24, batch 8.
  const uint64_t x = 8u * 24 * 576 * 4, y = 8u * 192 * 576 * 4, w = 192u * 6 * 9 * 4;
  const uint64_t col = 6u * 9 * 576 * 4;
  const uint64_t weight_phase = col + g.weight_copies * w + g.fixed_bytes + g.PackBytes(6 * 9, 48, 576, 576);
  const OpRule r = ConvRule(2, 24, 192, 3, 4, 24, 8);
  // ideep's input gradient stands in for the result during the gemm (its columns and sgemm's own
  // buffer beside it), then is copied out; the weight gradient's gemm is the larger here.
  EXPECT_EQ(r.backward_temp_bytes, std::max(std::max(col + g.pack_beyond_bytes, x) + fixed - w, weight_phase));
  EXPECT_EQ(r.forward_temp_bytes, y + fixed);  // ideep's output beside the result, while it is copied
  EXPECT_LT(r.backward_temp_bytes, y);  // the old rule: the input and the output gradient blocked, > 3.9 MB
  // A channel multiplier (32 -> 64, 32 groups: 1 -> 2 each) is no depthwise kernel's either: 1-D, k3.
  const uint64_t x1 = 3u * 32 * 128 * 4, col1 = 1u * 3 * 128 * 4, w1 = 64u * 3 * 4;
  EXPECT_EQ(ConvRule(1, 32, 64, 3, 32, 128, 3).backward_temp_bytes,
            std::max(std::max(col1 + g.pack_beyond_bytes, x1) + fixed - w1, col1 + g.weight_copies * w1 + g.fixed_bytes));
  // 32 -> 64 in 2 groups (16 -> 32 each) keeps the direct kernels' blocked rule.
  EXPECT_GT(ConvRule(2, 32, 64, 3, 2, 24, 8).backward_temp_bytes, 8u * (32 + 64) * 576 * 4);
}

// On a one-position output map both data gemms of such a layer have m = 1: oneDNN's
// gemm_threading_driver takes jump_to_gemv before it allocates, so sgemm's buffer is not there
// (tools/probe_conv_gemv.py dev ids 950000 and 950007: 1 x 1 maps planned 113 % and 562 % high with it;
// the 2 x 2 and 3 x 3 maps of the same layers hold it).
TEST(ConvScratch, GroupedGemmOnAOnePositionMapTakesNoSgemmBuffer) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  // 24 -> 24, 4 groups (6 -> 6 each), k3 padded by 1 over 1 x 1: output 1 x 1, batch 2.
  const uint64_t x = 2u * 24 * 1 * 4, w = 24u * 6 * 9 * 4, col = 6u * 9 * 1 * 4;
  const OpRule one = ConvRule(2, 24, 24, 3, 4, 1, 2);
  EXPECT_EQ(one.forward_temp_bytes, std::max<uint64_t>(col, 2u * 24 * 4) + g.fixed_bytes);
  // The backward phase is the weight gradient's (its columns and weight copies), no 73984 bytes.
  EXPECT_GE(one.backward_temp_bytes, std::max(col, x) + g.fixed_bytes);
  EXPECT_LT(one.backward_temp_bytes, g.pack_beyond_bytes);
  EXPECT_GE(one.backward_temp_bytes, col + g.weight_copies * w);
  // On a 2 x 2 map sgemm's buffer is there in both directions.
  const OpRule two = ConvRule(2, 24, 24, 3, 4, 2, 2);
  EXPECT_GE(two.forward_temp_bytes, g.pack_beyond_bytes);
  EXPECT_GE(two.backward_temp_bytes, g.pack_beyond_bytes);
}

// A grouped layer whose input gradient runs oneDNN's 4-channel direct kernel (ok_to_try_lower_zmm)
// and whose weight gradient runs gemm holds the aBcd4b input gradient beside the plain one, nothing
// output-sized (dev seed 71: 32 -> 16 in 4 groups, k3, stride 2 over 10 x 10, batch 4; planned 6.6 %
// high with the 16-blocked reorders). A kernel that the padding puts wholly outside the input (a 1x1
// kernel padded by 1) is refused by every direct kernel: gemm per group (dev seed 102, 320 -> 512 in
// 8 groups, planned 6.8 % low with the 8-channel direct kernels).
TEST(ConvScratch, GroupedFourChannelBlocksAndKernelsOutsideTheInput) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  const uint64_t x = 4u * 32 * 100 * 4, w = 16u * 8 * 9 * 4, col = 8u * 9 * 25 * 4;
  const OpRule four = ConvRule(2, 32, 16, 3, 4, 10, 4, 2);
  EXPECT_EQ(four.backward_temp_bytes, std::max(x, col + g.weight_copies * w + g.fixed_bytes));
  auto padded_pointwise = [](int64_t pad) {
    GraphBuilder b;
    b.Input("input", {320, 4, 4}).Weight("conv.weight", {512, 40, 1, 1});
    b.Node("Mul", {"input", "input"}, {"x"}, "pre");
    auto& conv = b.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv");
    GraphBuilder::IntAttr(conv, "group", 8);
    GraphBuilder::IntsAttr(conv, "pads", std::vector<int64_t>(4, pad));
    GraphBuilder::IntsAttr(conv, "strides", {3, 3});
    b.Output("logits");
    return RuleOf(b.Bytes(), 3, "Conv");
  };
  // Output 2 x 2: one group's columns are 40 x 4 floats; the weight gradient's gemm is the larger.
  const uint64_t x8 = 3u * 320 * 16 * 4, w8 = 512u * 40 * 4, col8 = 40u * 4 * 4;
  const uint64_t weight_phase = col8 + g.weight_copies * w8 + g.fixed_bytes + g.PackBytes(40, 64, 4, 4);
  EXPECT_EQ(padded_pointwise(1).backward_temp_bytes,
            std::max(std::max(col8 + g.pack_beyond_bytes, x8) + g.fixed_bytes, weight_phase));
  EXPECT_EQ(padded_pointwise(1).forward_temp_bytes, std::max<uint64_t>(col8 + g.pack_beyond_bytes, 3u * 512 * 4 * 4) + g.fixed_bytes);
}

// A dense layer whose padding puts the kernel wholly outside the input (oneDNN's kernel_outside_src)
// runs gemm in all three directions, no reorders (dev seed 131: 96 -> 96, 3x3, stride 3, padding 3
// over 58 x 58, batch 8: x64:gemm:jit forward, backward_data and backward_weights; planned 3.9 % high).
TEST(ConvScratch, DenseKernelOutsideTheInputRunsGemm) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  const uint64_t x = 8u * 96 * 58 * 58 * 4, w = 96u * 96 * 9 * 4, col = 96u * 9 * 441 * 4;
  const uint64_t weight_phase = col + g.weight_copies * w + g.fixed_bytes + g.PackBytes(864, 96, 441, 441);
  EXPECT_EQ(Conv2dRule(96, 96, {58, 58}, 3, {3, 3}, 3, 1, 8).backward_temp_bytes,
            std::max(std::max(col + g.pack_beyond_bytes, x) + g.fixed_bytes - w, weight_phase));
}

// A 1-D weight gradient is formed blocked in both channel dimensions: by 8 for 4-15 input channels
// (AVX2's ABcd8b8a; dev seed 72: 12 -> 320, k3, stride 3 over 1 position, batch 4, planned 7.6 % low
// without the padding of 12 to 16 input channels).
TEST(ConvScratch, OneDimensionalWeightGradientCarriesItsBlockPadding) {
  const uint64_t w = 320u * 12 * 3 * 4, padding = 320u * (16 - 12) * 3 * 4;
  EXPECT_EQ(ConvRule(1, 12, 320, 3, 1, 1, 4, 3).backward_temp_bytes, w + padding + 7 * 1024);
}

// The input-gradient phase of a 3-D convolution with 4-15 input channels holds the blocked input
// and output gradients and the weights' block padding, not the whole blocked weights (probe
// gemm3d_grid: conv3d 10 -> 12, k3, 12 wide measured 324664 at batch 2 and 628792 at batch 4;
// the whole blocked weights planned them 4.4 % and 2.3 % high; tuning net 148 +2.7 %).
TEST(ConvScratch, ThreeDimensionalInputGradientHoldsOnlyTheWeightsPadding) {
  const uint64_t xp = 2u * 16 * 1728 * 4, yp = xp, x = 2u * 10 * 1728 * 4;
  const uint64_t padding = 27u * 4 * (16 * 16 - 12 * 10);
  EXPECT_EQ(ConvBackwardScratch(3, 10, 12, 3, 1, 12, 2), xp + yp + padding - x + 7 * 1024);
  EXPECT_NEAR(static_cast<double>(ConvBackwardScratch(3, 10, 12, 3, 1, 12, 2)), 324664.0, 0.01 * 324664);
  EXPECT_NEAR(static_cast<double>(ConvBackwardScratch(3, 10, 12, 3, 1, 12, 4)), 628792.0, 0.01 * 628792);
  // Strided, the blocked input gradient alone is the larger, without the fixed part (conv3d 12 -> 8,
  // k3, stride 2, 16 wide: measured 518504 at batch 2; dev net 100091 was planned 3.2 % high).
  EXPECT_EQ(ConvRule(3, 12, 8, 3, 1, 16, 2, 2).backward_temp_bytes, 2u * 16 * 4096 * 4);
  EXPECT_NEAR(static_cast<double>(ConvRule(3, 12, 8, 3, 1, 16, 2, 2).backward_temp_bytes), 518504.0, 0.012 * 518504);
}

TEST(Planner, GemmPackingBufferOfA3dConvolutionIsAWarningWithTheBytesAtRisk) {
  auto build = [](int64_t c_out) {
    GraphBuilder g;
    g.Input("input", {12, 6, 6, 6}).Weight("conv.weight", {c_out, 12, 3, 3, 3});
    auto& conv = g.Node("Conv", {"input", "conv.weight"}, {"logits"}, "conv");
    GraphBuilder::IntsAttr(conv, "pads", std::vector<int64_t>(6, 1));
    g.Output("logits");
    return g.Bytes();
  };
  // 24 output channels: sgemm packs 12 x 27 rows (its blocking is the CPU's): a warning that says so.
  StepPlan wide = MustPlan(build(24), Cpu(2));
  const uint64_t pack = EmbeddedConvScratchTable().gemm_weight_gradient_3d.PackBytes(12 * 27, 24, 36, 216);
  const uint64_t at_risk = pack + EmbeddedConvScratchTable().gemm_weight_gradient_3d.pack_worst_abs_error;
  ASSERT_EQ(wide.warnings.size(), 2u);
  EXPECT_NE(wide.warnings[0].find("packing buffer, a strided 1x1 kernel's 16-channel blocks, a channels-last "
                                  "depthwise kernel's weight-gradient copies) depends on the CPU's ISA"),
            std::string::npos)
      << wide.warnings[0];
  EXPECT_NE(wide.warnings[0].find(" " + std::to_string(at_risk) + " bytes"), std::string::npos) << wide.warnings[0];
  // The gemm weight gradient is planned for one thread; each extra one keeps its own weight-gradient
  // copy and im2col slice.
  const uint64_t per_thread = 12u * 27 * 36 * 4 + 24u * 12 * 27 * 4;
  EXPECT_NE(wide.warnings[1].find(" " + std::to_string(per_thread) + " bytes more per extra thread"),
            std::string::npos)
      << wide.warnings[1];
  ASSERT_EQ(wide.risks.size(), 2u);
  EXPECT_EQ(wide.risks[1].what, "cpu_thread_scratch");
  EXPECT_EQ(wide.risks[1].bytes, per_thread);
  // 12 output channels: no packing buffer, nothing ISA-dependent to warn about; the threads still count.
  const StepPlan narrow = MustPlan(build(12), Cpu(2));
  ASSERT_EQ(narrow.risks.size(), 1u);
  EXPECT_EQ(narrow.risks[0].what, "cpu_thread_scratch");
  // A strided 1x1 convolution: its 16-channel blocks and unit-stride buffer are AVX-512's.
  GraphBuilder g;
  g.Input("input", {12, 16, 16}).Weight("conv.weight", {24, 12, 1, 1});
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  GraphBuilder::IntsAttr(g.Node("Conv", {"x", "conv.weight"}, {"logits"}, "conv"), "strides", {2, 2});
  g.Output("logits");
  StepPlan pointwise = MustPlan(g.Bytes(), Cpu(2));
  const uint64_t blocks = 2u * (16 - 12) * 256 * 4 + 2u * (32 - 24) * 64 * 4, unit_stride = 16u * 64 * 4;
  ASSERT_EQ(pointwise.warnings.size(), 1u);
  EXPECT_NE(pointwise.warnings[0].find(" " + std::to_string(blocks + unit_stride) + " bytes"), std::string::npos)
      << pointwise.warnings[0];
}

// ReduceMean(x, axis) as the graph's logits; the model's bytes.
std::string MeanAsLogits(GraphBuilder& g, const std::string& x, int64_t axis) {
  auto& mean = g.Node("ReduceMean", {x}, {"logits"}, "mean");
  GraphBuilder::IntsAttr(mean, "axes", {axis});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  g.Output("logits");
  return g.Bytes();
}

// Dense 2-D convolutions with 4-15 input channels block both channel dimensions by 8 (tools/
// probe_scratch.py, tuning_net_convs): the weight gradient's padding is scratch there too.
TEST(ConvScratch, SmallChannelWeightGradientKeepsItsBlockPadding) {
  // conv2d 12 -> 20, k3, 16 wide, batch 2: measured 93784 = 2 x (12 -> 16 and 20 -> 24 channels
  // x 256 positions x 4) + (24 x 16 - 20 x 12) x 9 x 4 + 6.5 KiB.
  const uint64_t padding = 9u * 4 * (24 * 16 - 20 * 12);
  EXPECT_EQ(ConvBackwardScratch(2, 12, 20, 3, 1, 16, 2), 2u * (16 + 24) * 256 * 4 + padding + 7 * 1024);
  EXPECT_NEAR(static_cast<double>(ConvBackwardScratch(2, 12, 20, 3, 1, 16, 2)), 93784.0, 0.01 * 93784);
  // 12 -> 12, k5: measured 83416 at batch 2.
  EXPECT_NEAR(static_cast<double>(ConvBackwardScratch(2, 12, 12, 5, 1, 16, 2)), 83416.0, 0.01 * 83416);
}

// A strided 1x1 convolution runs oneDNN's 1x1 kernel with a reduce-to-unit-stride buffer (probes
// conv_strided_pointwise, exact to 0.5 KiB): random nets 100209 and 100227 were planned 5 % low.
TEST(ConvScratch, StridedPointwiseConvolutionKeepsAUnitStrideCopyOfOneSample) {
  // conv2d 12 -> 24, 1x1, stride 2, 64 wide, batch 4: measured 1646104.
  const uint64_t x16 = 4u * 16 * 4096 * 4, y32 = 4u * 32 * 1024 * 4, rtus = 16u * 1024 * 4;
  const uint64_t padding = 4u * (32 * 16 - 24 * 12);
  EXPECT_EQ(ConvRule(2, 12, 24, 1, 1, 64, 4, 2).backward_temp_bytes, x16 + y32 + rtus + padding + 7 * 1024);
  EXPECT_NEAR(static_cast<double>(ConvRule(2, 12, 24, 1, 1, 64, 4, 2).backward_temp_bytes), 1646104.0, 0.001 * 1646104);
  // conv2d 8 -> 8, stride 2, 48 wide, batch 4: measured 781720.
  EXPECT_NEAR(static_cast<double>(ConvRule(2, 8, 8, 1, 1, 48, 4, 2).backward_temp_bytes), 781720.0, 0.001 * 781720);
  // conv1d 12 -> 24, stride 2, 256 long, batch 4: measured 146968.
  EXPECT_NEAR(static_cast<double>(ConvRule(1, 12, 24, 1, 1, 256, 4, 2).backward_temp_bytes), 146968.0, 0.005 * 146968);
}

// Strided, a dense convolution between at most 8 channels keeps two blocked input-sized buffers
// (probes conv_strided_small_channels; tuning net 43 was planned 3.4 % high).
TEST(ConvScratch, StridedSmallChannelConvolutionKeepsTwoBlockedInputs) {
  // conv2d 8 -> 8, k3, stride 2, 48 wide, batch 4: measured 592136 (input 294912).
  EXPECT_NEAR(static_cast<double>(ConvRule(2, 8, 8, 3, 1, 48, 4, 2).backward_temp_bytes), 592136.0, 0.02 * 592136);
  // 4 -> 4, 32 wide, batch 4 (input blocked to 8 channels): measured 276680 (its fixed part is
  // 14 KiB, the rule keeps 8.7 KiB).
  EXPECT_NEAR(static_cast<double>(ConvRule(2, 4, 4, 3, 1, 32, 4, 2).backward_temp_bytes), 276680.0, 0.025 * 276680);
  // Not strided: three input-sized buffers, as before.
  EXPECT_EQ(ConvRule(2, 8, 8, 3, 1, 48, 4, 1).backward_temp_bytes, 3u * 4 * 8 * 2304 * 4 + 7 * 1024);
}

// torch.cat hands each input a narrow() view of its gradient; cut along channels it is not
// contiguous, and convolution, 2-D/3-D pooling and interpolation backward copy it first (measured:
// one output-sized copy; tuning net 83, conv3d 1x1x1 before a cat, was planned 3.6 % low).
TEST(ConvScratch, ConcatSliceGradientIsCopiedContiguous) {
  auto scratch = [](const char* kind, int64_t axis, bool add_between) {
    GraphBuilder g;
    g.Input("input", {8, 8, 8, 8}).Weight("conv.weight", {8, 8, 1, 1, 1});
    g.Node("Mul", {"input", "input"}, {"x"}, "pre");
    if (std::string(kind) == "Conv") {
      g.Node("Conv", {"x", "conv.weight"}, {"y"}, "conv");
    } else {
      auto& pool = g.Node("MaxPool", {"x"}, {"y"}, "pool");
      GraphBuilder::IntsAttr(pool, "kernel_shape", {1, 1, 1});
    }
    std::string last = "y";
    if (add_between) {
      g.Node("Add", {"y", "x"}, {"s"}, "residual");
      last = "s";
    }
    GraphBuilder::IntAttr(g.Node("Concat", {"x", last}, {"c"}, "cat"), "axis", axis);
    return RuleOf(MeanAsLogits(g, "c", 1), 3, kind).backward_temp_bytes;
  };
  const uint64_t output = 3u * 8 * 512 * 4;
  EXPECT_EQ(scratch("Conv", 1, false), scratch("Conv", 0, false) + output);  // measured 98016 = 2 x 49152 - 288
  EXPECT_EQ(scratch("Conv", 1, true), scratch("Conv", 0, false) + output);   // Add hands the view on
  EXPECT_EQ(scratch("MaxPool", 1, false), output);
  EXPECT_EQ(scratch("MaxPool", 0, false), 0u);  // cut along the batch: contiguous
}

// x feeds both a conv and torch.cat([x, conv(x)], 1): x's gradient first arrives as a narrow() slice
// of the cat's gradient, then the conv's input gradient is added. autograd cannot add into the
// slice (it shares the cat gradient's storage), so it adds into the conv's fresh gradient and the
// cat gradient goes (InputBuffer::accumulate; measured per autograd node: random nets 112 and
// 100088 were planned 1.2-1.3 % high holding the cat gradient on).
TEST(Planner, GradientAddedToAConcatSliceLetsTheConcatGradientGo) {
  GraphBuilder g;
  g.Input("input", {8, 8, 8}).Weight("w0", {8, 8, 1, 1}).Weight("w1", {8, 8, 1, 1});
  g.Node("Conv", {"input", "w0"}, {"a"}, "conv0");
  g.Node("Tanh", {"a"}, {"x"}, "tanh");
  g.Node("Conv", {"x", "w1"}, {"y"}, "conv1");
  GraphBuilder::IntAttr(g.Node("Concat", {"x", "y"}, {"c"}, "cat"), "axis", 1);
  auto& mean = g.Node("ReduceMean", {"c"}, {"logits"}, "mean");
  GraphBuilder::IntsAttr(mean, "axes", {2, 3});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  g.Output("logits");
  PlanOptions o = Cpu(2);
  o.record_timeline = true;
  StepPlan p = MustPlan(g.Bytes(), o);
  const uint64_t x = 2u * 8 * 64 * 4;
  bool seen = false;
  for (const TimelinePoint& t : p.timeline) {
    if (t.phase != "backward" || t.node != "tanh") continue;
    seen = true;
    // x's gradient and tanh's input gradient (+ the logits' 128 B): not the 2 x of the cat gradient.
    EXPECT_LT(t.live.transient, 3 * x) << t.live.transient;
    EXPECT_GE(t.live.transient, 2 * x);
  }
  EXPECT_TRUE(seen);
}

// A seqconv block: conv1d over x.transpose(1, 2) whose output is used transposed. An LSTM after it
// makes the export add a second Transpose of the output that only feeds Shape (the batch size):
// it passes no gradient, so the output gradient still arrives transposed and is copied contiguous
// (measured in tools/random_nets.py rows 100051, 100117: one output-sized copy more in backward).
uint64_t SeqConvBackwardScratch(bool shape_transpose) {
  GraphBuilder g;
  g.Input("input", {16, 64}).Weight("conv.weight", {64, 64, 3});
  g.Node("Mul", {"input", "input"}, {"a"}, "pre");
  GraphBuilder::IntsAttr(g.Node("Transpose", {"a"}, {"x"}, "in_t"), "perm", {0, 2, 1});
  auto& conv = g.Node("Conv", {"x", "conv.weight"}, {"y"}, "conv");
  GraphBuilder::IntsAttr(conv, "pads", {1, 1});
  if (shape_transpose) {
    GraphBuilder::IntsAttr(g.Node("Transpose", {"y"}, {"yt"}, "out_t_for_shape"), "perm", {0, 2, 1});
    g.Node("Shape", {"yt"}, {"yt_shape"}, "shape");
  }
  GraphBuilder::IntsAttr(g.Node("Transpose", {"y"}, {"z"}, "out_t"), "perm", {2, 0, 1});
  return ConvRuleBackwardScratch(MeanAsLogits(g, "z", 0), 8);
}

TEST(ConvScratch, TransposeForShapeOnlyDoesNotHideTheTransposedGradient) {
  const uint64_t input = 8 * 64 * 16 * 4;  // also the output's size
  EXPECT_EQ(SeqConvBackwardScratch(true), SeqConvBackwardScratch(false));
  // input reorder + output gradient reorder + 7 KiB, the transposed input's and output gradient's copies.
  EXPECT_EQ(SeqConvBackwardScratch(true), 4 * input + 7 * 1024);
}

// An elementwise result keeps its operands' memory order (TensorIterator): relu(x.transpose(1, 2))
// is laid out like x, so transposing it back gives a contiguous tensor and conv1d copies nothing;
// y + x.transpose(1, 2) with a contiguous y first is contiguous, so its transpose is copied
// (random nets: seqconv after attention or a residual block, rows 100098 and 38).
uint64_t ConvAfterTransposedElementwise(const char* op, bool contiguous_first) {
  GraphBuilder g;
  g.Input("input", {64, 16}).Weight("conv.weight", {64, 64, 3});
  g.Node("Mul", {"input", "input"}, {"a"}, "pre");
  GraphBuilder::IntsAttr(g.Node("Transpose", {"a"}, {"at"}, "to_nlc"), "perm", {0, 2, 1});
  if (contiguous_first) {
    GraphBuilder::IntsAttr(g.Node("Transpose", {"input"}, {"it"}, "input_nlc"), "perm", {0, 2, 1});
    g.Node("Softmax", {"it"}, {"b"}, "b");  // a fresh [N, L, C]: contiguous
    g.Node(op, {"b", "at"}, {"r"}, "elementwise");
  } else if (std::string(op) == "Relu") {
    g.Node(op, {"at"}, {"r"}, "elementwise");
  } else {
    g.Node(op, {"at", "at"}, {"r"}, "elementwise");
  }
  GraphBuilder::IntsAttr(g.Node("Transpose", {"r"}, {"x"}, "to_ncl"), "perm", {0, 2, 1});
  auto& conv = g.Node("Conv", {"x", "conv.weight"}, {"y"}, "conv");
  GraphBuilder::IntsAttr(conv, "pads", {1, 1});
  return ConvRuleBackwardScratch(MeanAsLogits(g, "y", 2), 8);
}

TEST(ConvScratch, ElementwiseResultsKeepTheirOperandsMemoryOrder) {
  const uint64_t input = 8 * 64 * 16 * 4;
  const uint64_t plain = 2 * input + 7 * 1024;  // the input and output gradient reorders
  EXPECT_EQ(ConvAfterTransposedElementwise("Relu", false), plain);
  EXPECT_EQ(ConvAfterTransposedElementwise("Add", false), plain);
  EXPECT_EQ(ConvAfterTransposedElementwise("Add", true), plain + input);  // the transposed copy
  EXPECT_EQ(ConvAfterTransposedElementwise("Mul", true), plain + input);
}

// A gradient handed back through a Transpose is a transposed view. linear() over [N, L, C] views
// its output gradient as [N*L, C] in backward, a Reshape reshapes it back and an embedding makes
// it contiguous: each copies such a gradient (measured: ViewBackward0's clone, random nets 84,
// 100286 with a conv1d or an LSTM after a feed-forward block, 100173 with nn.MultiheadAttention's
// batch_first output).
std::string ThenTransposedOrNot(GraphBuilder& g, const std::string& y, bool transposed) {
  if (!transposed) return MeanAsLogits(g, y, 1);
  GraphBuilder::IntsAttr(g.Node("Transpose", {y}, {"yt"}, "to_ncl"), "perm", {0, 2, 1});
  g.Node("Tanh", {"yt"}, {"yr"}, "tanh");  // passes the gradient's memory order on
  return MeanAsLogits(g, "yr", 2);
}

TEST(Planner, TransposedGradientsAreCopiedWhereBackwardViewsThem) {
  auto linear = [](bool transposed) {
    GraphBuilder g;
    g.Input("input", {16, 64}).Weight("fc.weight", {64, 32});
    g.Node("Mul", {"input", "input"}, {"x"}, "pre");
    g.Node("MatMul", {"x", "fc.weight"}, {"y"}, "fc");
    const OpRule r = RuleOf(ThenTransposedOrNot(g, "y", transposed), 4, "MatMul");
    EXPECT_EQ(r.backward_temp_bytes, 0u);
    return r.output_gradient_copy_bytes;
  };
  EXPECT_EQ(linear(false), 0u);
  // The output gradient's copy, made by the view's backward before mm's: the transposed gradient
  // goes then (modern2d random nets: planned 3-5 % high with both alive over mm's backward).
  EXPECT_EQ(linear(true), 4u * 16 * 32 * 4);
  {
    GraphBuilder g;
    g.Input("input", {16, 64}).Weight("fc.weight", {64, 32});
    g.Node("Mul", {"input", "input"}, {"x"}, "pre");
    g.Node("MatMul", {"x", "fc.weight"}, {"y"}, "fc");
    PlanOptions o = Cpu(4);
    o.record_timeline = true;
    const StepPlan p = MustPlan(ThenTransposedOrNot(g, "y", true), o);
    std::vector<uint64_t> transient;  // at fc's backward points: the copy, then the product
    for (const TimelinePoint& t : p.timeline) {
      if (t.phase == "backward" && t.node == "fc") transient.push_back(t.live.transient);
    }
    ASSERT_EQ(transient.size(), 2u);
    const uint64_t gradient = 4u * 16 * 32 * 4;
    // The copy beside the transposed gradient it copies; then mm's backward beside the copy only.
    EXPECT_EQ(transient[0] - transient[1], gradient);
    EXPECT_LT(transient[1], 2 * gradient);
  }
  auto reshape = [](bool transposed) {
    GraphBuilder g;
    g.Input("input", {1024}).Constant("shape", {0, 16, 64}, {3});
    g.Node("Mul", {"input", "input"}, {"x"}, "pre");
    g.Node("Reshape", {"x", "shape"}, {"y"}, "view");
    return RuleOf(ThenTransposedOrNot(g, "y", transposed), 4, "Reshape").grad_alias_output[0];
  };
  EXPECT_EQ(reshape(false), 0);   // the input's gradient is a view of the output's
  EXPECT_EQ(reshape(true), -1);   // a fresh copy
  // embedding_dense_backward makes the output gradient contiguous (random nets 100006, 100051, 35).
  auto embedding = [](bool transposed) {
    GraphBuilder g;
    g.Input("input", {16}, /*dtype=*/7).Weight("emb.weight", {1000, 64});
    g.Node("Gather", {"emb.weight", "input"}, {"e"}, "embedding");
    return RuleOf(ThenTransposedOrNot(g, "e", transposed), 4, "Gather").backward_temp_bytes;
  };
  EXPECT_EQ(embedding(false), 0u);
  EXPECT_EQ(embedding(true), 4u * 16 * 64 * 4);
}

// relu's and leaky_relu's backward lay their gradient out as their forward tensor is, so after
// y.transpose(1, 2) -> relu the gradient reaches y contiguous; after tanh it arrives transposed
// and conv1d copies it (measured with tools/step_profile.py: random net 100213, planned +2.7 %).
TEST(ConvScratch, ReluHandsBackAGradientInItsForwardLayout) {
  auto conv = [](const char* act) {
    GraphBuilder g;
    g.Input("input", {32, 32}).Weight("conv.weight", {32, 32, 5});
    g.Node("Mul", {"input", "input"}, {"x"}, "pre");
    GraphBuilder::IntsAttr(g.Node("Conv", {"x", "conv.weight"}, {"y"}, "conv"), "pads", {2, 2});
    GraphBuilder::IntsAttr(g.Node("Transpose", {"y"}, {"yt"}, "to_nlc"), "perm", {0, 2, 1});
    g.Node(act, {"yt"}, {"a"}, "act");
    return ConvRuleBackwardScratch(MeanAsLogits(g, "a", 2), 8);
  };
  const uint64_t output = 8u * 32 * 32 * 4;
  EXPECT_EQ(conv("Relu"), 2 * output + 7 * 1024);  // measured 72864
  EXPECT_EQ(conv("LeakyRelu"), conv("Relu"));
  EXPECT_EQ(conv("Tanh"), conv("Relu") + output);  // measured 105632
}

// matmul() folds a transposed [L, N, E] input (nn.MultiheadAttention's batch_first q) into
// [L*N, E] by reshape(): a copy, which mm keeps for the weight's gradient instead of the input
// itself (random nets 100212, 100296: saved activations 9 % and 4 % short).
TEST(Planner, LinearOverATransposedInputKeepsItsFoldedCopy) {
  auto rule = [](bool transposed) {
    GraphBuilder g;
    g.Input("input", {16, 64}).Weight("in_proj.weight", {64, 32});
    g.Node("Mul", {"input", "input"}, {"x"}, "pre");
    if (transposed) GraphBuilder::IntsAttr(g.Node("Transpose", {"x"}, {"q"}, "time_first"), "perm", {1, 0, 2});
    g.Node("MatMul", {transposed ? "q" : "x", "in_proj.weight"}, {"y"}, "in_proj");
    return RuleOf(MeanAsLogits(g, "y", 1), 4, "MatMul");
  };
  OpRule plain = rule(false);
  EXPECT_EQ(plain.saved_tensors.size(), 1u);
  EXPECT_TRUE(plain.saved_extra.empty());
  OpRule folded = rule(true);
  EXPECT_TRUE(folded.saved_tensors.empty());
  ASSERT_EQ(folded.saved_extra.size(), 1u);
  EXPECT_EQ(folded.saved_extra[0].bytes, 4u * 16 * 64 * 4);
}

// layer_norm makes a non-contiguous input contiguous in forward and again in backward (measured:
// an input-sized temporary each time after a batch_first LSTM, random nets 100083, 106).
TEST(Planner, LayerNormCopiesANonContiguousInput) {
  auto rule = [](bool transposed) {
    GraphBuilder g;
    g.Input("input", {16, 64}).Weight("ln.weight", {64}).Weight("ln.bias", {64});
    g.Node("Mul", {"input", "input"}, {"x"}, "pre");
    if (transposed) GraphBuilder::IntsAttr(g.Node("Transpose", {"x"}, {"t"}, "time_first"), "perm", {1, 0, 2});
    GraphBuilder::IntAttr(g.Node("LayerNormalization", {transposed ? "t" : "x", "ln.weight", "ln.bias"}, {"y"}, "ln"),
                          "axis", -1);
    return RuleOf(MeanAsLogits(g, "y", 1), 4, "LayerNormalization");
  };
  // Backward also sums the weight and bias gradients in a [2, threads, 64] fp32 buffer (measured
  // 128 B at 16 features, 256 B at 32: random nets 100083, 27).
  const uint64_t partial_sums = 2 * 64 * 4;
  EXPECT_EQ(rule(false).forward_temp_bytes, 0u);
  EXPECT_EQ(rule(false).backward_temp_bytes, partial_sums);
  EXPECT_EQ(rule(true).forward_temp_bytes, 4u * 16 * 64 * 4);
  EXPECT_EQ(rule(true).backward_temp_bytes, 4u * 16 * 64 * 4 + partial_sums);
}

// mean/var normalization: layer_norm's decomposition only over the trailing axes (layer_norm
// normalizes the last dims); over dim 1 (a channels-first LayerNorm written with mean/var, as in
// ConvNeXt) each operator runs as written and torch 1.13 keeps x for the mean, x - mean for pow
// and div, pow's result for the second mean and sqrt's result (modern2d random nets: saved
// activations 16-20 % low when fused).
std::string MeanVarNorm(int64_t axis) {
  GraphBuilder g;
  g.Input("input", {4, 6}).Weight("pre.weight", {6}).FloatConstant("two", 2.0f).FloatConstant("eps", 1e-6f);
  g.Node("Mul", {"input", "pre.weight"}, {"x"}, "pre");  // x requires grad, as after any layer
  auto& mean = g.Node("ReduceMean", {"x"}, {"u"}, "mean");
  GraphBuilder::IntsAttr(mean, "axes", {axis});
  GraphBuilder::IntAttr(mean, "keepdims", 1);
  g.Node("Sub", {"x", "u"}, {"d"}, "sub");
  g.Node("Pow", {"d", "two"}, {"d2"}, "pow");
  auto& var = g.Node("ReduceMean", {"d2"}, {"v"}, "var");
  GraphBuilder::IntsAttr(var, "axes", {axis});
  GraphBuilder::IntAttr(var, "keepdims", 1);
  g.Node("Add", {"v", "eps"}, {"ve"}, "add_eps");
  g.Node("Sqrt", {"ve"}, {"s"}, "sqrt");
  g.Node("Div", {"d", "s"}, {"y"}, "div");
  return MeanAsLogits(g, "y", 1);
}

TEST(Planner, MeanVarNormIsLayerNormOnlyOverTheTrailingAxes) {
  auto has_layer_norm = [](const StepPlan& p) {
    for (const LayerMemory& l : p.layers) {
      if (l.op_type == "LayerNorm") return true;
    }
    return false;
  };
  StepPlan trailing = MustPlan(MeanVarNorm(-1), Cpu(2));
  StepPlan channels = MustPlan(MeanVarNorm(1), Cpu(2));
  EXPECT_TRUE(has_layer_norm(trailing));
  EXPECT_FALSE(has_layer_norm(channels));
  // Over dim 1, as torch 1.13 keeps it (saved-tensor hooks, the same graph written in Python, x - u
  // written twice as ConvNeXt does): x, both copies of d, d^2 and y [2,4,6] (192 B each) + sqrt's
  // result [2,1,6] and log_softmax's [2,6] (48 B each).
  EXPECT_EQ(channels.bytes.activations_saved, 5 * 192u + 48u + 48u);
  // Fused, the normalization keeps x and 2 x 8 rows of statistics instead of x, d and d^2.
  EXPECT_LT(trailing.bytes.activations_saved, channels.bytes.activations_saved - 2 * 192u);
  // The export merges a twice-written x - mean into one Sub: the plan counts two and says what
  // computing it once saves.
  ASSERT_EQ(channels.warnings.size(), 1u);
  EXPECT_NE(channels.warnings[0].find("up to 192 bytes fewer"), std::string::npos) << channels.warnings[0];
  EXPECT_TRUE(trailing.warnings.empty());
  EXPECT_EQ(channels.risks, (std::vector<PlanRisk>{{"mean_centred_once", 192, "lower"}}));
  EXPECT_TRUE(trailing.risks.empty());
}

// y[:, -1] runs as slice then select; select_backward's input-sized gradient is made while the
// output gradient lives, slice_backward's after that is released (measured per autograd node:
// random nets 135, 69, 100248 planned ~1 % high).
TEST(Planner, SelectAlongAnInnerAxisFreesItsGradientBeforeTheSliceCopy) {
  GraphBuilder g;
  g.Input("input", {16, 64}).Constant("last", {-1}, {});
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  GraphBuilder::IntAttr(g.Node("Gather", {"x", "last"}, {"logits"}, "select"), "axis", 1);
  g.Output("logits");
  OpRule r = RuleOf(g.Bytes(), 4, "Gather");
  EXPECT_GE(r.output_view_of[0], 0);  // a view
  EXPECT_EQ(r.backward_temp_bytes, 4u * 16 * 64 * 4 - 4u * 64 * 4);  // input - output
}

// qkv [2, 16, 96] (an activation) -> `piece` -> Reshape to `to`.
// piece "chunk": qkv[..., 32:64] (chunk(3, -1)[1], a Slice) viewed as [B, 16, 4, 8] first;
// piece "select": qkv viewed as [B, 16, 3, 32], then [:, :, 1] (a Gather of one index).
// Returns whether the final Reshape is a view of qkv.
bool FinalReshapeIsAView(const std::string& piece, const std::vector<int64_t>& to) {
  GraphBuilder g;
  g.Input("input", {16, 96});
  g.Constant("starts", {32}, {1}).Constant("ends", {64}, {1}).Constant("axes", {2}, {1});
  g.Constant("heads", {2, 16, 4, 8}, {4}).Constant("three", {2, 16, 3, 32}, {4}).Constant("one", {1}, {});
  g.Constant("to", to, {static_cast<int64_t>(to.size())});
  g.Node("Mul", {"input", "input"}, {"qkv"}, "/qkv");
  if (piece == "chunk") {
    g.Node("Slice", {"qkv", "starts", "ends", "axes"}, {"k"}, "/Slice");
    g.Node("Reshape", {"k", "heads"}, {"p"}, "/Reshape");
  } else {
    g.Node("Reshape", {"qkv", "three"}, {"t"}, "/Reshape");
    GraphBuilder::IntAttr(g.Node("Gather", {"t", "one"}, {"p"}, "/Gather"), "axis", 2);
  }
  g.Node("Reshape", {"p", "to"}, {"y"}, "/Reshape_1");
  g.Node("Mul", {"y", "y"}, {"logits"}, "/out");
  g.Output("logits");
  const OpRule r = RuleOf(g.Bytes(), 2, "Reshape", 1);
  return !r.output_view_of.empty() && r.output_view_of[0] >= 0;
}

// Pieces of one projection viewed again: view() works where the merged dims step over each other
// exactly, and the gaps a chunk or a select leaves between rows must be traced through the earlier
// view (torch 1.13, the storages and strides of each result):
//   qkv.chunk(3, -1)[1].view(B, 16, 4, 8).reshape(B * 16, 32)  a view (strides 96, 1)
//   qkv.chunk(3, -1)[1].view(B, 16, 4, 8).reshape(B, 512)      a copy (16 rows 96 apart, 32 wide)
//   qkv.view(B, 16, 3, 32)[:, :, 1].reshape(B * 16, 32)          a view
//   qkv.view(B, 16, 3, 32)[:, :, 1].reshape(B, 512)              a copy
// The first view's order is dense, so the dim order alone took the second for a view and the select
// (no link of the stride trace) made the third a copy.
TEST(Planner, ReshapeOfAPieceFollowsTheStridesItCameWith) {
  EXPECT_TRUE(FinalReshapeIsAView("chunk", {32, 32}));
  EXPECT_FALSE(FinalReshapeIsAView("chunk", {2, 512}));
  EXPECT_TRUE(FinalReshapeIsAView("select", {32, 32}));
  EXPECT_FALSE(FinalReshapeIsAView("select", {2, 512}));
}

// nn.LSTM(num_layers=2) exports one node per layer; PyTorch runs the stack in one call whose
// caller holds a transposed (batch_first) input's storage until the last layer is done, beside the
// first layer's contiguous copy. A contiguous input is not copied: the first layer keeps that very
// storage for backward, so the second layer holds nothing more (random net 100125: +3.3 % -> 0.0 %).
uint64_t SecondLayerForwardScratch(bool contiguous_input) {
  GraphBuilder g;
  g.Input("input", {5, 4}).Weight("proj.weight", {4, 4}).Constant("axes", {1}, {1});
  g.Weight("W0", {1, 32, 4}).Weight("R0", {1, 32, 8}).Weight("W1", {1, 32, 8}).Weight("R1", {1, 32, 8});
  GraphBuilder::IntsAttr(g.Node("Transpose", {"input"}, {"t"}, "time_first"), "perm", {1, 0, 2});
  if (contiguous_input) {
    g.Node("MatMul", {"t", "proj.weight"}, {"x"}, "proj");  // a fresh [T, N, C]
  } else {
    g.Node("Relu", {"t"}, {"x"}, "relu");  // laid out like its transposed input
  }
  GraphBuilder::IntAttr(g.Node("LSTM", {"x", "W0", "R0"}, {"y0"}, "rnn/LSTM"), "hidden_size", 8);
  g.Node("Squeeze", {"y0", "axes"}, {"x1"}, "rnn/Squeeze");
  GraphBuilder::IntAttr(g.Node("LSTM", {"x1", "W1", "R1"}, {"y1"}, "rnn/LSTM_1"), "hidden_size", 8);
  g.Node("Squeeze", {"y1", "axes"}, {"ys"}, "rnn/Squeeze_1");
  return RuleOf(MeanAsLogits(g, "ys", 0), 2, "LSTM", 1).forward_temp_bytes;
}

TEST(Planner, StackedLstmHoldsOnlyAnInputItCopied) {
  const uint64_t projection = 4 * 5 * 2 * 8 * 4;  // 4 gates x steps x samples x hidden floats
  const uint64_t input = 5 * 2 * 4 * 4;
  EXPECT_EQ(SecondLayerForwardScratch(false), projection + input);
  EXPECT_EQ(SecondLayerForwardScratch(true), projection);
}

TEST(Planner, PossiblyInPlaceLeakyReluIsAWarningWithTheBytesAtStake) {
  auto build = [](const char* act) {
    GraphBuilder g;
    g.Input("input", {8}).Weight("fc.weight", {6, 8}).Weight("head.weight", {3, 6});
    GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"h"}, "fc"), "transB", 1);
    g.Node(act, {"h"}, {"a"}, "act");
    GraphBuilder::IntAttr(g.Node("Gemm", {"a", "head.weight"}, {"logits"}, "head"), "transB", 1);
    g.Output("logits");
    return g.Bytes();
  };
  StepPlan leaky = MustPlan(build("LeakyRelu"), Cpu(2));
  // Out of place: h (48 B) and a (48 B) are both kept; leaky_relu_ would keep one of them.
  EXPECT_EQ(leaky.bytes.activations_saved, 48u + 48u + 24u);
  ASSERT_EQ(leaky.warnings.size(), 1u);
  EXPECT_NE(leaky.warnings[0].find("LeakyRelu may have been in-place"), std::string::npos) << leaky.warnings[0];
  EXPECT_NE(leaky.warnings[0].find(" 48 bytes fewer"), std::string::npos) << leaky.warnings[0];
  // relu keeps its output either way: nothing to warn about.
  EXPECT_TRUE(MustPlan(build("Relu"), Cpu(2)).warnings.empty());
}

TEST(Planner, ActivationAfterInstanceNormWarnsOfTheInPlaceViewCopies) {
  auto build = [](const char* norm) {
    GraphBuilder g;
    g.Input("input", {4, 8}).Weight("scale", {4}).Weight("bias", {4}).Weight("mean", {4}).Weight("var", {4});
    g.Weight("head.weight", {3, 4});
    if (std::string(norm) == "InstanceNormalization") {
      g.Node(norm, {"input", "scale", "bias"}, {"n"}, "norm");
    } else {
      g.Node(norm, {"input", "scale", "bias", "mean", "var"}, {"n"}, "norm");
    }
    g.Node("Relu", {"n"}, {"a"}, "act");
    return MeanThenHead(g, "a", 2);
  };
  // relu_ on instance_norm's output (a view): two copies of its 2 x 4 x 8 floats (256 B) in backward.
  StepPlan p = MustPlan(build("InstanceNormalization"), Cpu(2));
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("after InstanceNormalization may have been in-place"), std::string::npos) << p.warnings[0];
  EXPECT_NE(p.warnings[0].find("up to 512 bytes more"), std::string::npos) << p.warnings[0];
  for (const std::string& w : MustPlan(build("BatchNormalization"), Cpu(2)).warnings) {
    EXPECT_EQ(w.find("InstanceNormalization"), std::string::npos) << w;
  }
}

// chunk(3) exported as three Slices (nn.MultiheadAttention's q, k, v): PyTorch's split backward joins
// the three gradients into one input-sized tensor, as for a single Split node.
TEST(Planner, SlicesOfOneTensorJoinTheirGradientsLikeASplit) {
  auto build = [](bool slices) {
    GraphBuilder g;
    g.Input("input", {4}).Weight("proj.weight", {192, 4}).Weight("head.weight", {3, 64});
    g.Constant("s0", {0}, {1}).Constant("s1", {64}, {1}).Constant("s2", {128}, {1}).Constant("s3", {192}, {1});
    g.Constant("axis", {1}, {1}).Constant("sizes", {64, 64, 64}, {3});
    GraphBuilder::IntAttr(g.Node("Gemm", {"input", "proj.weight"}, {"qkv"}, "proj"), "transB", 1);
    if (slices) {
      g.Node("Slice", {"qkv", "s0", "s1", "axis"}, {"q"}, "q");
      g.Node("Slice", {"qkv", "s1", "s2", "axis"}, {"k"}, "k");
      g.Node("Slice", {"qkv", "s2", "s3", "axis"}, {"v"}, "v");
    } else {
      GraphBuilder::IntAttr(g.Node("Split", {"qkv", "sizes"}, {"q", "k", "v"}, "split"), "axis", 1);
    }
    g.Node("Mul", {"q", "k"}, {"qk"}, "qk");
    g.Node("Add", {"qk", "v"}, {"h"}, "h");
    GraphBuilder::IntAttr(g.Node("Gemm", {"h", "head.weight"}, {"logits"}, "head"), "transB", 1);
    g.Output("logits");
    return g.Bytes();
  };
  StepPlan split = MustPlan(build(false), Cpu(64));
  StepPlan slices = MustPlan(build(true), Cpu(64));
  EXPECT_EQ(slices.peak_allocated_bytes, split.peak_allocated_bytes);
}

TEST(Planner, CpuDropoutKeepsAFloatNoiseTensorAndRatioZeroIsAView) {
  auto build = [](int64_t ratio_percent) {
    GraphBuilder g;
    g.Input("input", {10}).Weight("scale", {10}).Weight("fc.weight", {5, 10});
    g.Node("Mul", {"input", "scale"}, {"x"}, "scale");  // x requires grad, as after any layer
    g.FloatConstant("ratio", static_cast<float>(ratio_percent) / 100.0f);
    auto& mode = g.Node("Constant", {}, {"training"});
    auto* a = mode.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(9);
    a->mutable_t()->add_int32_data(1);
    g.Node("Dropout", {"x", "ratio", "training"}, {"dropped", "mask"}, "drop");
    GraphBuilder::IntAttr(g.Node("Gemm", {"dropped", "fc.weight"}, {"logits"}, "fc"), "transB", 1);
    g.Output("logits");
    return g.Bytes();
  };
  // batch 4: noise [4,10] fp32 = 160 B; fc keeps the dropped output (160 B); log_softmax 80 B.
  StepPlan p = MustPlan(build(50), Cpu(4));
  EXPECT_EQ(p.bytes.activations_saved, 160u + 160u + 80u);
  PlanOptions cuda = Cpu(4);
  cuda.target = Target::kCuda;
  // cuda: a 1-byte mask (40 B, one 512 B block), the rest rounded to 512 B blocks too.
  EXPECT_EQ(MustPlan(build(50), cuda).bytes.activations_saved, 3 * 512u);
  // p = 0: the output is the input itself; fc then saves x (160 B), no noise.
  EXPECT_EQ(MustPlan(build(0), Cpu(4)).bytes.activations_saved, 160u + 80u);
}

// Below opset 12 Dropout's ratio is an attribute (torch.onnx.export with opset_version=11 writes
// ratio=0.0 for nn.Dropout(p=0), as in torchvision's ViT): p = 0 is a view there too.
TEST(Planner, DropoutRatioAttributeOfOpsetElevenIsRead) {
  auto build = [](float ratio) {
    GraphBuilder g;
    g.Opset(11).Input("input", {10}).Weight("scale", {10}).Weight("fc.weight", {5, 10});
    g.Node("Mul", {"input", "scale"}, {"x"}, "scale");
    GraphBuilder::FloatAttr(g.Node("Dropout", {"x"}, {"dropped", "mask"}, "drop"), "ratio", ratio);
    GraphBuilder::IntAttr(g.Node("Gemm", {"dropped", "fc.weight"}, {"logits"}, "fc"), "transB", 1);
    g.Output("logits");
    return g.Bytes();
  };
  EXPECT_EQ(MustPlan(build(0.5f), Cpu(4)).bytes.activations_saved, 160u + 160u + 80u);
  EXPECT_EQ(MustPlan(build(0.0f), Cpu(4)).bytes.activations_saved, 160u + 80u);
}

// torch exports x.squeeze(d), where it cannot prove dim d is 1 (shapes that went through Shape ops,
// as in nn.LocalResponseNorm), as If(Equal(dim d, 1), Squeeze(x, [d]), Identity(x)). The If is planned
// as the view it is: the same plan as a plain Squeeze, at a batch where the dim is 1 and where it is not.
TEST(Planner, DynamicSqueezeExportedAsIfIsAView) {
  auto build = [](bool as_if, int64_t dim2) {
    GraphBuilder g;
    g.Input("input", {4, dim2, 6}).Weight("scale.weight", {4, dim2, 6});
    g.Weight("fc.weight", {5, 4 * dim2 * 6});
    g.Node("Mul", {"input", "scale.weight"}, {"x"}, "scale");
    g.Constant("axes", {2}, {1});
    if (!as_if) {
      g.Node(dim2 == 1 ? "Squeeze" : "Identity", dim2 == 1 ? std::vector<std::string>{"x", "axes"}
                                                          : std::vector<std::string>{"x"}, {"y"}, "squeeze");
    } else {
      g.Node("Shape", {"x"}, {"shape"});
      g.Constant("two", {2}, {});
      g.Node("Gather", {"shape", "two"}, {"dim"});
      g.Constant("one", {1}, {});
      g.Node("Equal", {"dim", "one"}, {"is_one"});
      onnx::NodeProto& node = g.Node("If", {"is_one"}, {"y"}, "squeeze_if");
      auto branch = [&](const char* name, const char* op) {
        auto* a = node.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        onnx::GraphProto* b = a->mutable_g();
        b->set_name(name);
        auto* c = b->add_node();
        c->set_op_type("Constant");
        c->add_output(std::string(name) + "_axes");
        auto* v = c->add_attribute();
        v->set_name("value");
        v->set_type(onnx::AttributeProto::TENSOR);
        v->mutable_t()->set_data_type(onnx::TensorProto::INT64);
        v->mutable_t()->add_dims(1);
        v->mutable_t()->add_int64_data(2);
        auto* view = b->add_node();
        view->set_op_type(op);
        view->add_input("x");
        if (std::string(op) == "Squeeze") view->add_input(std::string(name) + "_axes");
        view->add_output(std::string(name) + "_y");
        auto* out = b->add_output();
        out->set_name(std::string(name) + "_y");
        out->mutable_type()->mutable_tensor_type()->set_elem_type(1);
      };
      branch("then_branch", "Squeeze");
      branch("else_branch", "Identity");
    }
    g.Node("Flatten", {"y"}, {"flat"});
    GraphBuilder::IntAttr(g.Node("Gemm", {"flat", "fc.weight"}, {"logits"}, "fc"), "transB", 1);
    g.Output("logits");
    return g.Bytes();
  };
  for (int64_t dim2 : {1, 3}) {
    StepPlan plain = MustPlan(build(false, dim2), Cpu(4));
    StepPlan via_if = MustPlan(build(true, dim2), Cpu(4));
    EXPECT_EQ(via_if.peak_allocated_bytes, plain.peak_allocated_bytes) << dim2;
    EXPECT_EQ(via_if.bytes.activations_saved, plain.bytes.activations_saved) << dim2;
    EXPECT_TRUE(via_if.warnings.empty()) << dim2 << ": " << (via_if.warnings.empty() ? "" : via_if.warnings[0]);
    EXPECT_TRUE(via_if.uncovered.empty()) << dim2;
  }
}

TEST(Planner, ReshapeTargetComputedFromShapeResolves) {
  // Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) -> [B, 12]
  GraphBuilder g;
  g.Input("input", {3, 4}).Weight("fc.weight", {2, 12});
  g.Node("Shape", {"input"}, {"s"});
  g.Constant("zero", {0}, {});
  g.Constant("axes", {0}, {1});
  g.Constant("minus1", {-1}, {1});
  g.Node("Gather", {"s", "zero"}, {"b"});
  g.Node("Unsqueeze", {"b", "axes"}, {"bu"});
  GraphBuilder::IntAttr(g.Node("Concat", {"bu", "minus1"}, {"shape"}), "axis", 0);
  g.Node("Reshape", {"input", "shape"}, {"flat"}, "reshape");
  GraphBuilder::IntAttr(g.Node("Gemm", {"flat", "fc.weight"}, {"logits"}, "fc"), "transB", 1);
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(5));
  const LayerMemory* reshape = nullptr;
  for (const auto& l : p.layers) if (l.name == "reshape") reshape = &l;
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->output_shape, (std::vector<int64_t>{5, 12}));
  EXPECT_EQ(p.layers.back().output_shape, (std::vector<int64_t>{5, 2}));
}

TEST(Planner, OperatorWithoutARuleIsConservativeAndNamed) {
  GraphBuilder g;
  g.Input("input", {4}).Weight("fc.weight", {4, 4});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"x"}, "fc"), "transB", 1);
  g.Node("Hardmax", {"x"}, {"logits"}, "odd");
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(2));
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0], "no memory rule for operator Hardmax; assumed it keeps all its inputs and outputs for backward");
  EXPECT_EQ(p.layers[1].saved_bytes, 32u + 32u);  // its input and output
}

TEST(Planner, SymbolicBatchNeedsBatchAndOverridesNeedKnownInputs) {
  auto model = LoadModelFromBytes(Mlp(), "mlp.onnx").value();
  PlanOptions o = Cpu(1);
  o.batch.reset();
  EXPECT_EQ(PlanStep(*model, o).error(), "mlp.onnx: the batch dimension is symbolic ('batch'); give --batch N");
  o.batch = 0;
  EXPECT_EQ(PlanStep(*model, o).error(), "the batch must be at least 1, got 0");
  o.batch = 2;
  o.input_overrides["image"] = {3, 4};
  EXPECT_EQ(PlanStep(*model, o).error(), "--input: the model has no input 'image' (inputs: input)");
  o.input_overrides.clear();
  o.input_overrides["input"] = {16};
  EXPECT_FALSE(PlanStep(*model, o).ok()) << "fc1 expects 8 features; the output cannot be inferred";
}

TEST(Planner, InputOverrideChangesActivations) {
  GraphBuilder g;
  g.Input("input", {1, 8, 8}).Weight("conv.weight", {4, 1, 3, 3}).Weight("fc.weight", {2, 4});
  g.Node("Conv", {"input", "conv.weight"}, {"c"}, "conv");
  g.Node("Relu", {"c"}, {"r"}, "relu");
  g.Node("GlobalAveragePool", {"r"}, {"p"}, "pool");
  g.Node("Flatten", {"p"}, {"f"});
  GraphBuilder::IntAttr(g.Node("Gemm", {"f", "fc.weight"}, {"logits"}, "fc"), "transB", 1);
  g.Output("logits");
  auto model = LoadModelFromBytes(g.Bytes(), "m").value();
  PlanOptions o = Cpu(1);
  StepPlan small = PlanStep(*model, o).value();
  o.input_overrides["input"] = {1, 18, 18};
  StepPlan big = PlanStep(*model, o).value();
  // relu keeps [1,4,6,6] = 576 B at 8x8 and [1,4,16,16] = 4096 B at 18x18.
  EXPECT_EQ(small.layers[1].saved_bytes, 576u);
  EXPECT_EQ(big.layers[1].saved_bytes, 4096u);
}

TEST(Planner, BadFilesFailWithAReason) {
  EXPECT_EQ(LoadModelFromBytes("", "x.onnx").error(), "x.onnx: empty file, not an ONNX model");
  EXPECT_EQ(LoadModelFromBytes("hello, world", "x.onnx").error(),
            "x.onnx: not an ONNX model, or truncated (protobuf parsing failed)");
  std::string mlp = Mlp();
  EXPECT_FALSE(LoadModelFromBytes(mlp.substr(0, mlp.size() / 2), "x.onnx").ok());
  EXPECT_EQ(LoadModel("/nonexistent/model.onnx").error(), "/nonexistent/model.onnx: no such file");
}

TEST(Planner, CudaAddsContextWorkspaceAndRounding) {
  PlanOptions o = Cpu(2);
  o.target = Target::kCuda;
  o.cuda_compute_capability = 86;
  StepPlan p = MustPlan(Mlp(), o);
  EXPECT_EQ(p.peak_allocated_bytes % 512, 0u);
  EXPECT_GT(p.peak_allocated_bytes, 1940u);
  EXPECT_EQ(p.bytes.context, 420u << 20);
  EXPECT_EQ(p.required_bytes, p.peak_reserved_bytes + p.bytes.workspace + p.bytes.context);
  EXPECT_GE(p.peak_reserved_bytes, p.peak_allocated_bytes);
}

TEST(Planner, ZooModelsLoadByName) {
  auto names = ZooModelNames();
  ASSERT_FALSE(names.empty());
  auto r = LoadModel("resnet18");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(Summarize(**r).parameter_count, 11689512u);
  EXPECT_EQ(LoadModel("resnet5").error(), "'resnet5' is neither a file nor a zoo model, did you mean 'resnet50'? (see 'oomguard models')");
}

}  // namespace
}  // namespace oomguard::plan

namespace oomguard::plan {
namespace {

// input[B,2,4,4] -> Conv(4ch, 3x3 pad 1) -> Relu -> Flatten -> Gemm(3) -> logits
std::string ConvFc() {
  testing::GraphBuilder g;
  g.Input("input", {2, 4, 4}).Weight("conv.weight", {4, 2, 3, 3}).Weight("fc.weight", {3, 64});
  testing::GraphBuilder::IntsAttr(g.Node("Conv", {"input", "conv.weight"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  g.Node("Relu", {"c"}, {"r"}, "relu");
  g.Node("Flatten", {"r"}, {"f"}, "flatten");
  testing::GraphBuilder::IntAttr(g.Node("Gemm", {"f", "fc.weight"}, {"logits"}, "fc"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

TEST(WhatIf, ReplacingTheFcWithPoolingShrinksItsWeightBySpatialSize) {
  auto model = LoadModelFromBytes(ConvFc(), "m").value();
  PlanOptions o;
  o.batch = 2;
  o.target = Target::kCpu;
  StepPlan base = PlanStep(*model, o).value();
  o.replace_layer_with_pooling = "fc";
  StepPlan pooled = PlanStep(*model, o).value();
  // fc.weight 3x64 -> 3x4 (64 features = 4 channels x 16 positions): 192 -> 12 parameters.
  EXPECT_EQ(base.parameter_count - pooled.parameter_count, 180u);
  EXPECT_EQ(pooled.layers.back().parameter_bytes, 48u);
  o.replace_layer_with_pooling = "relu";
  EXPECT_EQ(PlanStep(*model, o).error(), "no Gemm or MatMul node named 'relu'");
}

TEST(WhatIf, CheckpointingKeepsLessForBackward) {
  auto model = LoadModel("resnet18").value();
  PlanOptions o;
  o.batch = 8;
  o.target = Target::kCpu;
  StepPlan base = PlanStep(*model, o).value();
  o.activation_checkpointing = true;
  StepPlan ckpt = PlanStep(*model, o).value();
  EXPECT_LT(ckpt.bytes.activations_saved, base.bytes.activations_saved / 2);
  EXPECT_LT(ckpt.peak_allocated_bytes, base.peak_allocated_bytes);
  EXPECT_GT(ckpt.peak_allocated_bytes, base.bytes.weights + base.bytes.optimizer_state);
}

TEST(WhatIf, ShardsDivideStateAndExtraBytesAdd) {
  auto model = LoadModelFromBytes(ConvFc(), "m").value();
  PlanOptions o;
  o.batch = 2;
  o.target = Target::kCpu;
  o.optimizer = Optimizer::kAdam;
  o.optimizer_impl = OptimizerImpl::kFused;
  StepPlan base = PlanStep(*model, o).value();
  o.optimizer_state_shards = 2;
  StepPlan sharded = PlanStep(*model, o).value();
  // Adam state: 2 x (72 + 192) floats = 2112 B; halved.
  EXPECT_EQ(base.peak_allocated_bytes - sharded.peak_allocated_bytes, 1056u);
  o.optimizer_state_shards = 1;
  o.extra_persistent_bytes = 1000;
  EXPECT_EQ(PlanStep(*model, o)->peak_allocated_bytes, base.peak_allocated_bytes + 1000);
}

}  // namespace
}  // namespace oomguard::plan

namespace oomguard::plan {
namespace {

// Where shape inference stops, the layers after it have no saved tensors or scratch in the plan:
// the plan says so, with the bytes where it stopped (random nets window: Swin's mask built in
// forward, planned -40 % without a word).
TEST(Planner, ShapeInferenceThatStopsIsAWarningWithTheBytesAtRisk) {
  GraphBuilder g;
  g.Input("input", {64});
  g.Node("Mul", {"input", "input"}, {"x"}, "pre");
  // A Reshape to a shape computed from the data: its values are unknown before running.
  auto& max = g.Node("ReduceMax", {"x"}, {"m"}, "max");
  GraphBuilder::IntsAttr(max, "axes", {1});
  GraphBuilder::IntAttr(max, "keepdims", 0);
  GraphBuilder::IntAttr(g.Node("Cast", {"m"}, {"shape"}, "cast"), "to", 7);
  g.Node("Reshape", {"x", "shape"}, {"y"}, "mystery");
  g.Constant("back", {4, 64}, {2});  // a constant shape makes the output known again
  g.Node("Reshape", {"y", "back"}, {"z"}, "back_to_batch");
  g.Node("Relu", {"z"}, {"logits"}, "act");
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(4));
  bool found = false;
  for (const std::string& w : p.warnings) {
    found = found || (w.find("shape inference stopped at 'mystery' (Reshape)") != std::string::npos &&
                      w.find("at least 1024 bytes") != std::string::npos);
  }
  EXPECT_TRUE(found);
  // Every shape known: no such warning.
  GraphBuilder ok;
  ok.Input("input", {64});
  ok.Node("Mul", {"input", "input"}, {"x"}, "pre");
  ok.Node("Relu", {"x"}, {"logits"}, "act");
  ok.Output("logits");
  for (const std::string& w : MustPlan(ok.Bytes(), Cpu(4)).warnings) {
    EXPECT_EQ(w.find("shape inference stopped"), std::string::npos) << w;
  }
}

// F.pad to a multiple of a window exports its amounts as shape arithmetic with Mod
// ((w - W % w) % w); ONNX's Mod (fmod=0) takes the divisor's sign, like Python's %.
TEST(Planner, PadAmountsComputedWithModResolve) {
  GraphBuilder g;
  g.Input("input", {12});
  g.Constant("minus12", {-12}, {});
  g.Constant("seven", {7}, {});
  g.Node("Mod", {"minus12", "seven"}, {"amount"});  // -12 % 7 = 2 (C's fmod would say -5)
  g.Constant("axes", {0}, {1});
  g.Node("Unsqueeze", {"amount", "axes"}, {"amount1"});
  g.Constant("zeros", {0, 0, 0}, {3});
  GraphBuilder::IntAttr(g.Node("Concat", {"zeros", "amount1"}, {"pads"}), "axis", 0);
  g.Node("Pad", {"input", "pads"}, {"padded"}, "pad");
  g.Node("Relu", {"padded"}, {"logits"}, "act");
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(4));
  EXPECT_EQ(p.layers.back().output_shape, (std::vector<int64_t>{4, 14}));
}

// topk, sort and argsort export as TopK and keep only the int64 indices (data/op_table.json's
// topk and sort rows, measured in PyTorch).
TEST(Planner, TopKKeepsItsIndices) {
  GraphBuilder g;
  g.Input("input", {10}).Weight("fc.weight", {10, 10});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"x"}, "fc"), "transB", 1);
  g.Constant("k", {3}, {1});
  g.Node("TopK", {"x", "k"}, {"values", "indices"}, "topk");
  g.Node("Relu", {"values"}, {"logits"}, "act");
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(4));
  EXPECT_TRUE(p.uncovered.empty());
  const LayerMemory* topk = nullptr;
  for (const auto& l : p.layers) if (l.name == "topk") topk = &l;
  ASSERT_NE(topk, nullptr);
  EXPECT_EQ(topk->output_shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(topk->saved_bytes, 4u * 3 * 8);  // [4, 3] int64
}

// An op no gradient flows through (a causal mask built from constants) keeps nothing, whatever
// the op: it is neither saved nor listed as uncovered.
TEST(Planner, OpsWithoutGradientInputsKeepNothing) {
  GraphBuilder g;
  g.Input("input", {8}).Weight("fc.weight", {8, 8});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"x"}, "fc"), "transB", 1);
  g.Constant("shape", {8, 8}, {2});
  g.Node("ConstantOfShape", {"shape"}, {"ones"});
  g.Node("Hardmax", {"ones"}, {"mask"}, "mystery");  // no rule for it
  g.Node("MatMul", {"x", "mask"}, {"logits"}, "mm");
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(4));
  EXPECT_TRUE(p.uncovered.empty());
  for (const auto& l : p.layers) {
    if (l.name == "mystery") {
      EXPECT_EQ(l.saved_bytes, 0u);
    }
  }
}

// torch.eye(n) in forward exports as ConstantOfShape([n, n]) -> EyeLike (Nystromformer's iterative
// pseudo-inverse, 13 I - K Z): the identity has its input's shape and no gradient, and the shape pass goes on
// past it (unseen set 16, development data after its blind plan: nystromformer -15.4 / -20.7 % with shape
// inference stopped at the EyeLike, exact after).
TEST(Planner, EyeLikeHasItsInputShape) {
  GraphBuilder g;
  g.Input("input", {8}).Weight("fc.weight", {8, 8});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"x"}, "fc"), "transB", 1);
  g.Constant("shape", {8, 8}, {2});
  g.Node("ConstantOfShape", {"shape"}, {"zeros"});
  g.Node("EyeLike", {"zeros"}, {"eye"}, "eye");
  g.Node("MatMul", {"x", "eye"}, {"y"}, "mm");
  g.Node("Relu", {"y"}, {"logits"}, "act");
  g.Output("logits");
  StepPlan p = MustPlan(g.Bytes(), Cpu(4));
  for (const std::string& w : p.warnings) EXPECT_EQ(w.find("shape inference stopped"), std::string::npos) << w;
  EXPECT_TRUE(p.uncovered.empty());
  for (const auto& l : p.layers) {
    if (l.name == "eye") {
      EXPECT_EQ(l.output_shape, (std::vector<int64_t>{8, 8}));
      EXPECT_EQ(l.saved_bytes, 0u);
    }
  }
  EXPECT_EQ(p.layers.back().output_shape, (std::vector<int64_t>{4, 8}));
}

// F.one_hot(argmin, K) (a VQ-VAE's EMA codebook assignments) exports as OneHot(indices, depth, [0, 1]):
// the indices' shape plus the depth, int64 like its values, no gradient; the pass goes on past it
// (unseen set 17's vqvae_ema stopped there: -22 / -33 %).
TEST(Planner, OneHotHasTheIndicesShapeAndDepth) {
  GraphBuilder g;
  g.Input("input", {3, 6}).Weight("codes", {5, 6}).Weight("head.weight", {2, 6});
  auto& arg = g.Node("ArgMin", {"input"}, {"idx"}, "assign");
  GraphBuilder::IntAttr(arg, "axis", -1);
  GraphBuilder::IntAttr(arg, "keepdims", 0);
  g.Constant("depth", {5}, {}).Constant("values", {0, 1}, {2});
  GraphBuilder::IntAttr(g.Node("OneHot", {"idx", "depth", "values"}, {"onehot"}, "onehot"), "axis", -1);
  GraphBuilder::IntAttr(g.Node("Cast", {"onehot"}, {"onehot_f"}, "cast"), "to", 1);
  g.Node("MatMul", {"onehot_f", "codes"}, {"q"}, "lookup");
  auto& mean = g.Node("ReduceMean", {"q"}, {"pooled"}, "pool");
  GraphBuilder::IntsAttr(mean, "axes", {1});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  GraphBuilder::IntAttr(g.Node("Gemm", {"pooled", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  const StepPlan p = MustPlan(g.Bytes(), Cpu(4));
  for (const std::string& w : p.warnings) EXPECT_EQ(w.find("shape inference stopped"), std::string::npos) << w;
  std::map<std::string, const LayerMemory*> layer;
  for (const LayerMemory& l : p.layers) layer[l.name] = &l;
  ASSERT_TRUE(layer.count("onehot") && layer.count("lookup") && layer.count("head"));
  EXPECT_EQ(layer["onehot"]->output_shape, (std::vector<int64_t>{4, 3, 5}));
  EXPECT_EQ(layer["onehot"]->saved_bytes, 0u);
  EXPECT_EQ(layer["lookup"]->output_shape, (std::vector<int64_t>{4, 3, 6}));
  EXPECT_EQ(layer["lookup"]->saved_bytes, 4u * 3 * 5 * 4);  // the float one-hot, for the codebook's gradient
  EXPECT_EQ(layer["head"]->output_shape, (std::vector<int64_t>{4, 2}));
}

// A float initializer that a comparison reads through a view (an efficient-KAN's B-spline grid:
// x >= grid[:, :-1], then (x - grid) / ...) is a registered buffer: no gradient, no optimizer state, and the
// arithmetic on it keeps nothing for it (unseen set 17's kan_bspline planned the grid as a weight: +57 / +254 %).
TEST(Planner, AnInitializerThatIsComparedIsABuffer) {
  GraphBuilder g;
  g.Input("input", {6}).Weight("l.grid", {6, 5}).Weight("l.spline", {3, 24});
  g.Constant("last", {-1}, {1});
  g.Node("Unsqueeze", {"input", "last"}, {"xx"}, "unsqueeze");
  g.Constant("zero", {0}, {1}).Constant("m1", {-1}, {1}).Constant("one", {1}, {1}).Constant("big", {99}, {1});
  g.Node("Slice", {"l.grid", "zero", "m1", "one"}, {"lo"}, "lo");
  g.Node("Slice", {"l.grid", "one", "big", "one"}, {"hi"}, "hi");
  g.Node("GreaterOrEqual", {"xx", "lo"}, {"ge"}, "ge");
  g.Node("Less", {"xx", "hi"}, {"lt"}, "lt");
  g.Node("And", {"ge", "lt"}, {"in"}, "and");
  GraphBuilder::IntAttr(g.Node("Cast", {"in"}, {"basis"}, "cast"), "to", 1);
  g.Node("Sub", {"xx", "lo"}, {"d"}, "sub");
  g.Node("Mul", {"d", "basis"}, {"b1"}, "mul");
  g.Constant("flat", {0, 24}, {2});
  g.Node("Reshape", {"b1", "flat"}, {"bases"}, "flatten");
  GraphBuilder::IntAttr(g.Node("Gemm", {"bases", "l.spline"}, {"logits"}, "spline"), "transB", 1);
  g.Output("logits");
  PlanOptions o = Cpu(4);
  o.optimizer = Optimizer::kAdam;
  const StepPlan p = MustPlan(g.Bytes(), o);
  EXPECT_EQ(p.parameter_count, 3u * 24);  // the spline weights; the grid is a buffer
  std::map<std::string, uint64_t> saved;
  for (const LayerMemory& l : p.layers) saved[l.name] = l.saved_bytes;
  EXPECT_EQ(saved["sub"], 0u);
  EXPECT_EQ(saved["mul"], 0u);  // nothing before the spline weights needs a gradient
  EXPECT_EQ(saved["spline"], 4u * 24 * 4);  // the bases, for the spline weights' gradient
}

// Shape arithmetic without a finite result (the root of a negative, a power past double's range)
// leaves the value unknown: no shape or index is ever cast from inf or NaN.
TEST(Planner, ShapeArithmeticKeepsOnlyFiniteValues) {
  GraphBuilder g;
  g.Input("input", {4});
  g.FloatConstant("minus4", -4.0f).FloatConstant("four", 4.0f).FloatConstant("ten", 10.0f);
  g.FloatConstant("e400", 400.0f);
  g.Node("Sqrt", {"minus4"}, {"nan"});
  g.Node("Sqrt", {"four"}, {"two"});
  g.Node("Pow", {"ten", "e400"}, {"inf"});
  g.Node("Add", {"input", "two"}, {"a"});
  g.Node("Add", {"a", "nan"}, {"b"});
  g.Node("Add", {"b", "inf"}, {"logits"});
  g.Output("logits");
  auto model = LoadModelFromBytes(g.Bytes(), "m");
  ASSERT_TRUE(model.ok()) << model.error();
  auto shapes = InferConcreteShapes(**model, Cpu(2));
  ASSERT_TRUE(shapes.ok()) << shapes.error();
  auto value_known = [&](const std::string& name) {
    for (size_t i = 0; i < (*model)->tensors.size(); ++i) {
      if ((*model)->tensors[i].name == name) return shapes->tensors[i].has_value;
    }
    ADD_FAILURE() << "no tensor " << name;
    return false;
  };
  EXPECT_TRUE(value_known("two"));
  EXPECT_FALSE(value_known("nan"));
  EXPECT_FALSE(value_known("inf"));
}

// A scatter keeps its data input's shape. Swin's shift mask is built in forward by slice
// assignment (exported as ScatterND); the reshapes that read that mask's shape must resolve.
TEST(Planner, ScatterKeepsItsInputShapeForShapesComputedDownstream) {
  for (const char* op : {"ScatterND", "ScatterElements"}) {
    GraphBuilder g;
    g.Input("input", {64});
    g.Node("Mul", {"input", "input"}, {"x"}, "pre");
    auto& max = g.Node("ReduceMax", {"x"}, {"m"}, "max");  // [1, 1]
    GraphBuilder::IntsAttr(max, "axes", {0, 1});
    GraphBuilder::IntAttr(max, "keepdims", 1);
    if (std::string(op) == "ScatterND") {
      g.Constant("idx", {0, 0}, {1, 1, 2});
    } else {
      g.Constant("idx", {0}, {1, 1});
    }
    g.Node(op, {"x", "idx", "m"}, {"masked"}, "scatter");
    g.Node("Shape", {"masked"}, {"shape"});
    g.Node("Reshape", {"x", "shape"}, {"y"}, "reshape");
    g.Node("Relu", {"y"}, {"logits"}, "act");
    g.Output("logits");
    StepPlan p = MustPlan(g.Bytes(), Cpu(4));
    for (const std::string& w : p.warnings) {
      EXPECT_EQ(w.find("shape inference stopped"), std::string::npos) << op << ": " << w;
    }
    EXPECT_EQ(p.layers.back().output_shape, (std::vector<int64_t>{4, 64})) << op;
  }
}

// Window attention's q, k and v permuted out of one qkv projection (x.reshape(B, N, 3, H, d)
// .permute(2, 0, 3, 1, 4), then unbind or qkv[i]): matmul() reshapes each batched operand to
// [B*H, n, m], which copies a permuted one, and bmm keeps the copies, not the projection's storage
// (torch 1.13's saved tensors: window random nets 100003 and others, saved activations 4-7 % high
// before, exact after).
std::string WindowAttention(bool index) {
  GraphBuilder g;
  // input [B, 4 tokens, 6 channels]; 2 heads of 3.
  g.Input("input", {4, 6}).Weight("qkv.weight", {6, 18}).Weight("head.weight", {5, 6});
  g.Constant("split_shape", {0, 4, 3, 2, 3}, {5}).Constant("merge_shape", {0, 4, 6}, {3});
  g.Constant("zero", {0}, {1}).Constant("one", {1}, {}).Constant("two", {2}, {}).Constant("first", {0}, {});
  g.Constant("ones", {1, 1, 1}, {3}).FloatConstant("scale", 0.5f);
  g.Node("MatMul", {"input", "qkv.weight"}, {"qkv_flat"}, "qkv");
  g.Node("Reshape", {"qkv_flat", "split_shape"}, {"qkv5"}, "split_heads");
  GraphBuilder::IntsAttr(g.Node("Transpose", {"qkv5"}, {"qkvp"}, "permute"), "perm", {2, 0, 3, 1, 4});
  if (index) {
    GraphBuilder::IntAttr(g.Node("Gather", {"qkvp", "first"}, {"q0"}, "q"), "axis", 0);
    GraphBuilder::IntAttr(g.Node("Gather", {"qkvp", "one"}, {"k"}, "k"), "axis", 0);
    GraphBuilder::IntAttr(g.Node("Gather", {"qkvp", "two"}, {"v"}, "v"), "axis", 0);
  } else {
    GraphBuilder::IntAttr(g.Node("Split", {"qkvp", "ones"}, {"q5", "k5", "v5"}, "unbind"), "axis", 0);
    g.Node("Squeeze", {"q5", "zero"}, {"q0"}, "q");
    g.Node("Squeeze", {"k5", "zero"}, {"k"}, "k");
    g.Node("Squeeze", {"v5", "zero"}, {"v"}, "v");
  }
  g.Node("Mul", {"q0", "scale"}, {"q1"}, "scale_q");
  GraphBuilder::IntsAttr(g.Node("Transpose", {"k"}, {"kt"}, "kt"), "perm", {0, 1, 3, 2});
  g.Node("MatMul", {"q1", "kt"}, {"scores"}, "scores");
  GraphBuilder::IntAttr(g.Node("Softmax", {"scores"}, {"attn"}, "softmax"), "axis", -1);
  g.Node("MatMul", {"attn", "v"}, {"heads"}, "attn_v");
  GraphBuilder::IntsAttr(g.Node("Transpose", {"heads"}, {"tokens"}, "merge"), "perm", {0, 2, 1, 3});
  g.Node("Reshape", {"tokens", "merge_shape"}, {"y"}, "merge_heads");
  auto& mean = g.Node("ReduceMean", {"y"}, {"pooled"}, "pool");
  GraphBuilder::IntsAttr(mean, "axes", {1});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  GraphBuilder::IntAttr(g.Node("Gemm", {"pooled", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

TEST(Planner, BatchedMatmulKeepsCopiesOfPermutedOperands) {
  for (bool index : {false, true}) {
    const StepPlan p = MustPlan(WindowAttention(index), Cpu(2));
    const uint64_t head = 2 * 2 * 4 * 3 * 4;     // q, k or v: [2, 2 heads, 4 tokens, 3] floats
    const uint64_t scores = 2 * 2 * 4 * 4 * 4;   // [2, 2, 4, 4]
    std::map<std::string, uint64_t> saved;
    for (const LayerMemory& l : p.layers) saved[l.name] = l.saved_bytes;
    EXPECT_EQ(saved["scores"], 2 * head) << index;  // copies of q * scale and of k^T, not qkv's storage
    EXPECT_EQ(saved["attn_v"], head) << index;      // a copy of v; attn is softmax's output, kept there
    EXPECT_EQ(saved["softmax"], scores) << index;
  }
}

// Linear over the heads of permuted attention scores (CaiT's talking heads: softmax, then
// permute(0, 2, 3, 1) and a Linear over the heads): matmul() folds the 4-D input to [N*L*L, H] with
// reshape(), which copies it (the heads dim is outermost), and mm keeps the copy, not the softmax's
// output it came from (unseen set 15's cait_talking_heads: saved -6.9 % without the copy).
TEST(Planner, LinearOverPermutedHeadsKeepsTheFoldedCopy) {
  GraphBuilder g;
  g.Input("input", {2, 3, 3}).Weight("scale", {3}).Weight("mix.weight", {2, 2}).Weight("head.weight", {5, 18});
  g.Constant("flat", {0, 18}, {2});
  g.Node("Mul", {"input", "scale"}, {"scores"}, "scale");
  GraphBuilder::IntAttr(g.Node("Softmax", {"scores"}, {"attn"}, "softmax"), "axis", -1);
  GraphBuilder::IntsAttr(g.Node("Transpose", {"attn"}, {"by_head"}, "to_heads_last"), "perm", {0, 2, 3, 1});
  GraphBuilder::IntsAttr(g.Node("Transpose", {"mix.weight"}, {"wt"}, "wt"), "perm", {1, 0});
  g.Node("MatMul", {"by_head", "wt"}, {"mixed"}, "talk");
  g.Node("Reshape", {"mixed", "flat"}, {"y"}, "flatten");
  GraphBuilder::IntAttr(g.Node("Gemm", {"y", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  const StepPlan p = MustPlan(g.Bytes(), Cpu(4));
  std::map<std::string, uint64_t> saved;
  for (const LayerMemory& l : p.layers) saved[l.name] = l.saved_bytes;
  const uint64_t scores = 4 * 2 * 3 * 3 * 4;  // [4, 2 heads, 3, 3] floats
  EXPECT_EQ(saved["softmax"], scores);
  EXPECT_EQ(saved["talk"], scores);  // the folded copy of the permuted scores
}

// torch.randn(shape) drawn in forward (Reformer's random rotations) exports as RandomNormal with a
// `shape` attribute and no input; its shape must reach the layers after it (unseen set 15's
// lsh_attention: shape inference stopped at the argsort after it, planned -26 / -31 %).
TEST(Planner, RandomNormalOfAFixedShapeHasThatShape) {
  for (const char* op : {"RandomNormal", "RandomUniform"}) {
    GraphBuilder g;
    g.Input("input", {3, 6}).Weight("head.weight", {5, 6});
    GraphBuilder::IntsAttr(g.Node(op, {}, {"rot"}, "draw"), "shape", {6, 2});
    g.Node("MatMul", {"input", "rot"}, {"proj"}, "rotate");
    auto& arg = g.Node("ArgMax", {"proj"}, {"bucket"}, "bucket");
    GraphBuilder::IntAttr(arg, "axis", -1);
    GraphBuilder::IntAttr(arg, "keepdims", 0);
    g.Node("Shape", {"bucket"}, {"bshape"});
    g.Constant("last", {-1}, {1});
    GraphBuilder::IntAttr(g.Node("Gather", {"bshape", "last"}, {"k"}, "k"), "axis", 0);
    auto& sort = g.Node("TopK", {"bucket", "k"}, {"sorted", "order"}, "argsort");
    GraphBuilder::IntAttr(sort, "largest", 0);
    auto& mean = g.Node("ReduceMean", {"input"}, {"pooled"}, "pool");
    GraphBuilder::IntsAttr(mean, "axes", {1});
    GraphBuilder::IntAttr(mean, "keepdims", 0);
    GraphBuilder::IntAttr(g.Node("Gemm", {"pooled", "head.weight"}, {"scores"}, "head"), "transB", 1);
    GraphBuilder::IntAttr(g.Node("Cast", {"order"}, {"order_f"}, "cast"), "to", 1);
    auto& sum = g.Node("ReduceSum", {"order_f"}, {"shift"}, "sum");
    GraphBuilder::IntsAttr(sum, "axes", {1});
    GraphBuilder::IntAttr(sum, "keepdims", 1);
    g.Node("Add", {"scores", "shift"}, {"logits"}, "shifted");
    g.Output("logits");
    const StepPlan p = MustPlan(g.Bytes(), Cpu(4));
    for (const std::string& w : p.warnings) {
      EXPECT_EQ(w.find("shape inference stopped"), std::string::npos) << op << ": " << w;
    }
    std::map<std::string, std::vector<int64_t>> shape;
    for (const LayerMemory& l : p.layers) shape[l.name] = l.output_shape;
    EXPECT_EQ(shape["rotate"], (std::vector<int64_t>{4, 3, 2})) << op;
    EXPECT_EQ(shape["argsort"], (std::vector<int64_t>{4, 3})) << op;
  }
}

// A student called twice (DINO's global and local crops) beside a teacher on the global crops: torch.onnx
// names the second call's own nodes "/student_1/..." and its layers' "/student/fc_1/...", so each scope
// read the other's values and neither was a tower; they are one module, and the risk names the bytes
// (unseen set 15's dino_multicrop: +38 / +34 % with no risk before).
TEST(Planner, AModuleCalledTwiceIsOneTowerBesideATeacher) {
  GraphBuilder g;
  g.Input("global", {16}).Input("local", {16});
  g.Weight("student.fc.weight", {32, 16}).Weight("student.head.weight", {5, 32});
  g.Weight("teacher.fc.weight", {32, 16}).Weight("teacher.head.weight", {5, 32});
  auto gemm = [&](const std::string& x, const std::string& w, const std::string& y, const std::string& name) {
    GraphBuilder::IntAttr(g.Node("Gemm", {x, w}, {y}, name), "transB", 1);
  };
  gemm("global", "student.fc.weight", "s1", "/student/fc/Gemm");
  g.Node("Relu", {"s1"}, {"s1r"}, "/student/Relu");
  gemm("s1r", "student.head.weight", "out1", "/student/head/Gemm");
  gemm("local", "student.fc.weight", "s2", "/student/fc_1/Gemm");
  g.Node("Relu", {"s2"}, {"s2r"}, "/student_1/Relu");
  gemm("s2r", "student.head.weight", "out2", "/student/head_1/Gemm");
  gemm("global", "teacher.fc.weight", "t1", "/teacher/fc/Gemm");
  g.Node("Relu", {"t1"}, {"t1r"}, "/teacher/Relu");
  gemm("t1r", "teacher.head.weight", "out3", "/teacher/head/Gemm");
  g.Node("Add", {"out1", "out2"}, {"sum"}, "/Add");
  g.Node("Add", {"sum", "out3"}, {"logits"}, "/Add_1");
  g.Output("logits");
  const StepPlan p = MustPlan(g.Bytes(), Cpu(64));
  uint64_t at_risk = 0;
  for (const PlanRisk& r : p.risks) {
    if (r.what == "branch_may_be_detached") at_risk = r.bytes;
  }
  EXPECT_GT(at_risk, 0u);
  const bool named = std::any_of(p.warnings.begin(), p.warnings.end(), [](const std::string& w) {
    return w.find("modules 'student' and 'teacher'") != std::string::npos;
  });
  EXPECT_TRUE(named);
}

// DoRA / merged LoRA: the weight is W0 + (B @ A) * 2 computed in forward; W0 is usually frozen
// (requires_grad=False), which the export cannot say. The risk names W0's gradient and Adam state
// (unseen set 15's dora_linear: +25 / +11 % with no risk before); a full-rank sum names nothing, and
// neither does a base weight the --frozen hint already names.
TEST(Planner, ALowRankUpdatedWeightMayBeFrozen) {
  auto model = [](int64_t rank) {
    GraphBuilder g;
    g.Input("input", {64}).Weight("fc.w0", {32, 64}).Weight("fc.b", {32, rank}).Weight("fc.a", {rank, 64});
    g.Weight("head.weight", {5, 32});
    g.FloatConstant("two", 2.0f);
    g.Node("MatMul", {"fc.b", "fc.a"}, {"ba"}, "/fc/MatMul");
    g.Node("Mul", {"ba", "two"}, {"scaled"}, "/fc/Mul");
    g.Node("Add", {"fc.w0", "scaled"}, {"w"}, "/fc/Add");
    GraphBuilder::IntAttr(g.Node("Gemm", {"input", "w"}, {"h"}, "/fc/Gemm"), "transB", 1);
    GraphBuilder::IntAttr(g.Node("Gemm", {"h", "head.weight"}, {"logits"}, "/head/Gemm"), "transB", 1);
    g.Output("logits");
    return g.Bytes();
  };
  auto frozen_risk = [](const StepPlan& p) {
    for (const PlanRisk& r : p.risks) {
      if (r.what == "weight_may_be_frozen") return r.bytes;
    }
    return uint64_t{0};
  };
  PlanOptions adam = Cpu(8, Optimizer::kAdam);
  EXPECT_EQ(frozen_risk(MustPlan(model(4), adam)), 3u * 32 * 64 * 4);  // gradient and two Adam states of W0
  EXPECT_EQ(frozen_risk(MustPlan(model(4), Cpu(8))), 32u * 64 * 4);    // SGD: its gradient
  EXPECT_EQ(frozen_risk(MustPlan(model(32), adam)), 0u);               // rank 32 of 32: no low-rank update
  auto hinted = LoadModelFromBytes(model(4), "test");
  ASSERT_TRUE(hinted.ok());
  auto frozen = FreezeParameters(**hinted, {"fc.w0"});
  ASSERT_TRUE(frozen.ok()) << frozen.error();
  auto plan = PlanStep(**frozen, adam);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(frozen_risk(*plan), 0u);
}

// Expert-choice routing's combine: x.new_zeros(...).scatter_add(1, idx.expand(-1, -1, d), out) with the
// index expanded by the model's own code. torch keeps only the index (its storage: top-k's indices); the
// source is kept only by index_add, whose export broadcasts the source too (unseen set 15's
// expert_choice_moe: the source kept as well, saved +2.5 %).
TEST(Planner, ScatterAddWithAnExpandedIndexKeepsNoSource) {
  GraphBuilder g;
  g.Input("input", {8, 4}).Weight("scale", {4}).Weight("head.weight", {5, 4});
  g.Constant("k", {4}, {1}).Constant("wide", {1, 1, 4}, {3});
  g.Node("Mul", {"input", "scale"}, {"src"}, "scale");
  auto& sum = g.Node("ReduceSum", {"src"}, {"score"}, "score");
  GraphBuilder::IntsAttr(sum, "axes", {2});
  GraphBuilder::IntAttr(sum, "keepdims", 1);
  GraphBuilder::IntAttr(g.Node("TopK", {"score", "k"}, {"gate", "idx"}, "topk"), "axis", 1);
  g.Node("Expand", {"idx", "wide"}, {"idx_e"}, "expand");
  GraphBuilder::IntAttr(g.Node("GatherElements", {"src", "idx_e"}, {"picked"}, "pick"), "axis", 1);
  g.Node("Mul", {"picked", "gate"}, {"upd"}, "gated");
  g.Node("Shape", {"src"}, {"src_shape"});
  g.Node("ConstantOfShape", {"src_shape"}, {"zeros"});
  GraphBuilder::IntAttr(g.Node("ScatterElements", {"zeros", "idx_e", "upd"}, {"scat"}, "scatter"), "axis", 1);
  g.Node("Add", {"src", "scat"}, {"combined"}, "combine");
  auto& mean = g.Node("ReduceMean", {"combined"}, {"pooled"}, "pool");
  GraphBuilder::IntsAttr(mean, "axes", {1});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  GraphBuilder::IntAttr(g.Node("Gemm", {"pooled", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  const StepPlan p = MustPlan(g.Bytes(), Cpu(8));
  uint64_t scatter_saved = 0;
  bool found = false;
  for (const LayerMemory& l : p.layers) {
    if (l.op_type.find("Scatter") != std::string::npos || l.name == "scatter") {
      scatter_saved += l.saved_bytes;
      found = true;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_LT(scatter_saved, 8u * 4 * 4 * 4);  // not the [8, 4, 4] source
}

// A registered buffer that forward reads (Swin's relative-position index, 49 x 49 int64) is exported
// as a Constant node; PyTorch holds it for the whole step (window random nets: planned 8.7 % low).
TEST(Planner, DataSizedConstantsAreHeldLikeBuffers) {
  auto build = [](int64_t entries) {
    GraphBuilder g;
    std::vector<int64_t> index(static_cast<size_t>(entries));
    for (int64_t i = 0; i < entries; ++i) index[static_cast<size_t>(i)] = i % 13;
    g.Input("input", {entries}).Weight("table", {13});
    g.Constant("index", index, {entries});
    GraphBuilder::IntAttr(g.Node("Gather", {"table", "index"}, {"bias"}, "lookup"), "axis", 0);
    g.Node("Add", {"input", "bias"}, {"logits"}, "add");
    g.Output("logits");
    return g.Bytes();
  };
  PlanOptions o = Cpu(1);
  o.loss = Loss::kNone;
  const StepPlan small = MustPlan(build(4), o);     // 32 B: a shape-like constant, not planned
  const StepPlan large = MustPlan(build(2401), o);  // 19208 B
  EXPECT_EQ(small.bytes.weights, 13u * 4);
  EXPECT_EQ(large.bytes.weights, 13u * 4 + 2401u * 8);
}

// exp(x - x.amax(dim, keepdim=True).detach()) and the same max kept in the graph export alike: a ReduceMax
// read only by x - max, whose difference only an Exp reads. The plan keeps the max's input for its backward
// and says so as a "lower" risk of exactly those bytes, what naming the max --detached takes off the saved
// activations (and off the peak of unseen set 16's Performer, +16.8 / +21.5 % without it). A max that
// something else reads too (m + log(sum(exp(x - m))), the logsumexp) has no such risk, nor a plan with a
// grad-mode hint.
TEST(Planner, MaxReadOnlyByAStabilisedExpMayBeDetached) {
  auto graph = [](bool logsumexp) {
    GraphBuilder g;
    g.Input("input", {64}).Weight("w", {64, 256}).Weight("fc.weight", {4, 256});
    g.Node("MatMul", {"input", "w"}, {"x"}, "/proj/MatMul");
    auto& max = g.Node("ReduceMax", {"x"}, {"m"}, "/attn/ReduceMax");
    GraphBuilder::IntsAttr(max, "axes", {1});
    GraphBuilder::IntAttr(max, "keepdims", 1);
    g.Node("Sub", {"x", "m"}, {"d"}, "/attn/Sub");
    g.Node("Exp", {"d"}, {"e"}, "/attn/Exp");
    if (logsumexp) {
      g.Node("Add", {"e", "m"}, {"f"}, "/attn/Add");
    } else {
      g.Node("Relu", {"e"}, {"f"}, "/attn/Relu");
    }
    GraphBuilder::IntAttr(g.Node("Gemm", {"f", "fc.weight"}, {"logits"}, "/fc/Gemm"), "transB", 1);
    g.Output("logits");
    return g.Bytes();
  };
  auto at_risk = [](const StepPlan& p) {
    for (const PlanRisk& r : p.risks) {
      if (r.what == "max_may_be_detached") {
        EXPECT_EQ(r.direction, "lower");
        return r.bytes;
      }
    }
    return uint64_t{0};
  };
  auto model = LoadModelFromBytes(graph(false), "test");
  ASSERT_TRUE(model.ok()) << model.error();
  auto plan = PlanStep(**model, Cpu(16));
  ASSERT_TRUE(plan.ok()) << plan.error();
  const uint64_t bytes = at_risk(*plan);
  EXPECT_GE(bytes, 16u * 256 * 4);  // at least the max's input
  EXPECT_NE(std::find_if(plan->warnings.begin(), plan->warnings.end(),
                         [](const std::string& w) { return w.find("('/attn/ReduceMax')") != std::string::npos; }),
            plan->warnings.end());
  auto detached = std::make_shared<Model>(**model);
  for (NodeInfo& n : detached->nodes) {
    if (n.name == "/attn/ReduceMax") n.grad_mode = GradMode::kDetached;
  }
  detached->grad_mode_hint = "option";
  auto named = PlanStep(*detached, Cpu(16));
  ASSERT_TRUE(named.ok()) << named.error();
  EXPECT_EQ(plan->bytes.activations_saved - named->bytes.activations_saved, bytes);
  EXPECT_LE(plan->peak_allocated_bytes - named->peak_allocated_bytes, bytes);  // this net peaks outside backward
  EXPECT_EQ(at_risk(*named), 0u);
  EXPECT_EQ(at_risk(MustPlan(graph(true), Cpu(16))), 0u);
}

}  // namespace
}  // namespace oomguard::plan
