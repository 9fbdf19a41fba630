// The operator table embedded in the planner: its header checks, the matcher (longest pattern
// first, ambiguous rows never), the rules it gives, and the shape rules for ops it made plannable.
#include "op_table.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "oomguard/plan/planner.h"
#include "op_table_match.h"
#include "test_graphs.h"

namespace oomguard::plan {
namespace {

using testing::GraphBuilder;

StepPlan MustPlan(const std::string& bytes, int64_t batch) {
  auto model = LoadModelFromBytes(bytes, "test");
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error());
  PlanOptions o;
  o.batch = batch;
  o.target = Target::kCpu;
  o.loss = Loss::kNone;
  auto plan = PlanStep(**model, o);
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error());
  return plan.ok() ? *plan : StepPlan{};
}

const LayerMemory* Layer(const StepPlan& p, const std::string& op_type) {
  for (const LayerMemory& l : p.layers) {
    if (l.op_type == op_type) return &l;
  }
  return nullptr;
}

// `in` + a one-element parameter: an activation that requires grad and that nothing saves yet (the
// operator table's one-op models feed every float input this way).
void Pre(GraphBuilder& g, const std::string& in, const std::string& out) {
  g.Weight("pre_" + in, {1});
  g.Node("Add", {in, "pre_" + in}, {out});
}

// A float Constant node holding `n` copies of `value` (shape [n]).
void FloatVector(GraphBuilder& g, const std::string& name, int n, float value) {
  auto& node = g.Node("Constant", {}, {name});
  auto* a = node.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(1);
  a->mutable_t()->add_dims(n);
  for (int i = 0; i < n; ++i) a->mutable_t()->add_float_data(value);
}

TEST(OpTable, EmbeddedTableLoadsAndNamesItsTorch) {
  const OpTable& t = EmbeddedOpTable();
  EXPECT_EQ(EmbeddedOpTableError(), "");
  EXPECT_EQ(t.torch_version.rfind("1.13", 0), 0u) << t.torch_version;
  EXPECT_EQ(t.backend, "cpu");
  EXPECT_GE(t.rows.size(), 200u);
  auto gelu = std::find_if(t.rows.begin(), t.rows.end(), [](const OpTableRow& r) { return r.name == "gelu_tanh"; });
  ASSERT_NE(gelu, t.rows.end());
  EXPECT_EQ(gelu->nodes.size(), 9u);  // Mul Mul Mul Add Mul Tanh Add Mul Mul, Constants left out
  ASSERT_EQ(gelu->nodes[1].inputs.size(), 2u);
  EXPECT_EQ(gelu->nodes[1].inputs[0].kind, TableRef::kInput);  // x * (x * x)
  EXPECT_EQ(gelu->nodes[1].inputs[1].kind, TableRef::kNode);
}

TEST(OpTable, RefusesAnotherBackendAnotherTorchAndMalformedJson) {
  const std::string row = R"("rows": [{"name": "relu", "saved": []}])";
  EXPECT_TRUE(ParseOpTable(R"({"header": {"torch_version": "1.13.1", "backend": "cpu"}, )" + row + "}").ok());
  auto cuda = ParseOpTable(R"({"header": {"torch_version": "1.13.1", "backend": "cuda"}, )" + row + "}");
  ASSERT_FALSE(cuda.ok());
  EXPECT_NE(cuda.error().find("cuda"), std::string::npos);
  auto torch2 = ParseOpTable(R"({"header": {"torch_version": "2.3.0", "backend": "cpu"}, )" + row + "}");
  ASSERT_FALSE(torch2.ok());
  EXPECT_NE(torch2.error().find("2.3.0"), std::string::npos);
  EXPECT_FALSE(ParseOpTable("{\"header\": ").ok());
  auto bad_ref = ParseOpTable(R"({"header": {"torch_version": "1.13", "backend": "cpu"}, "rows": [{"name": "r",
      "graph": {"nodes": [{"op": "Relu", "in": ["n1.x"], "out": 1}], "outputs": ["n0.0"]}, "saved": []}]})");
  ASSERT_FALSE(bad_ref.ok());
  EXPECT_NE(bad_ref.error().find("n1.x"), std::string::npos) << bad_ref.error();
  EXPECT_FALSE(ParseOpTable(R"({"header": {"torch_version": "1.13", "backend": "cpu"}, "rows": [{"saved": []}]})").ok());
}

// x + pre -> Sigmoid -> Log, planned at batch 3; with `escape`, the sigmoid also feeds a Mul.
StepPlan SigmoidLog(bool escape) {
  GraphBuilder g;
  g.Input("x", {64});
  Pre(g, "x", "a");
  g.Node("Sigmoid", {"a"}, {"s"});
  g.Node("Log", {"s"}, {"y"});
  if (escape) g.Node("Mul", {"s", "y"}, {"z"});
  g.Output(escape ? "z" : "y");
  return MustPlan(g.Bytes(), 3);
}

// log_sigmoid exports as Sigmoid -> Log. Node by node, the planner kept sigmoid's output once (Log's
// input is the same storage); torch keeps the input and a buffer of the same size.
TEST(OpTable, LogSigmoidPatternKeepsInputAndBuffer) {
  StepPlan p = SigmoidLog(false);
  const LayerMemory* l = Layer(p, "log_sigmoid");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->saved_bytes, 2u * 3 * 64 * 4);
  EXPECT_TRUE(p.uncovered.empty());
}

// A pattern whose intermediate is used outside it is not that op: Sigmoid -> Log where the sigmoid
// also feeds a Mul is a sigmoid and a log, planned node by node.
TEST(OpTable, PatternWithAnEscapingIntermediateIsNotMatched) {
  StepPlan p = SigmoidLog(true);
  EXPECT_EQ(Layer(p, "log_sigmoid"), nullptr);
  ASSERT_NE(Layer(p, "Sigmoid"), nullptr);
  EXPECT_NE(Layer(p, "Log"), nullptr);
}

// instance_norm keeps mean and invstd per (sample, channel); the hand rule kept 2 x C floats.
TEST(OpTable, InstanceNormStatisticsGrowWithTheBatch) {
  for (int64_t batch : {3, 6}) {
    GraphBuilder g;
    g.Input("x", {8, 10, 10});
    FloatVector(g, "scale", 8, 1.0f);
    FloatVector(g, "bias", 8, 0.0f);
    Pre(g, "x", "a");
    g.Node("InstanceNormalization", {"a", "scale", "bias"}, {"y"});
    g.Output("y");
    StepPlan p = MustPlan(g.Bytes(), batch);
    const LayerMemory* l = Layer(p, "InstanceNormalization");
    ASSERT_NE(l, nullptr);
    const uint64_t b = static_cast<uint64_t>(batch);
    EXPECT_EQ(l->saved_bytes, b * 8 * 100 * 4 + 2 * b * 8 * 4) << "batch " << batch;
  }
}

// max(dim) and amax export to the same ReduceMax but keep different tensors: the matcher must not
// pick either row, so the hand rule (input and output) stays.
TEST(OpTable, AmbiguousRowsAreNeverMatched) {
  const OpTable& t = EmbeddedOpTable();
  GraphBuilder g;
  g.Input("x", {8, 10});
  Pre(g, "x", "a");
  auto& n = g.Node("ReduceMax", {"a"}, {"y"});
  GraphBuilder::IntsAttr(n, "axes", {1});
  GraphBuilder::IntAttr(n, "keepdims", 0);
  g.Output("y");
  auto model = LoadModelFromBytes(g.Bytes(), "test");
  ASSERT_TRUE(model.ok());
  PlanOptions o;
  o.batch = 3;
  auto shapes = InferConcreteShapes(**model, o);
  ASSERT_TRUE(shapes.ok());
  TableMatch m;
  EXPECT_FALSE(MatchSingleNode(**model, *shapes, t, 1, &m));
  EXPECT_FALSE(MatchDrivingNode(**model, *shapes, t, 1, &m));
  StepPlan p = MustPlan(g.Bytes(), 3);
  ASSERT_NE(Layer(p, "ReduceMax"), nullptr);
  EXPECT_EQ(Layer(p, "ReduceMax")->saved_bytes, 3u * 80 * 4 + 3u * 10 * 4);
  // Planned as amax, the larger, and said so: max(dim) would keep 3 x 10 int64 indices only. Its
  // backward is planned as max(dim)'s; amax's would build a bool mask of the input and its float copy
  // (1.25 x the input) and 3 x the output (data/elementwise_scratch.json): the peak's risk, in bytes.
  ASSERT_EQ(p.warnings.size(), 2u);
  EXPECT_NE(p.warnings[1].find("torch.max(x, dim)"), std::string::npos) << p.warnings[1];
  ASSERT_EQ(p.risks.size(), 1u);
  EXPECT_EQ(p.risks[0].what, "reduction_may_be_amax");
  EXPECT_EQ(p.risks[0].direction, "higher");
  EXPECT_EQ(p.risks[0].bytes, 5u * 3 * 80 * 4 / 4 + 3u * 3 * 10 * 4);
  EXPECT_NE(p.warnings[0].find(std::to_string(p.risks[0].bytes) + " bytes"), std::string::npos) << p.warnings[0];
}

// ReduceMin over some axes warns the same way (min_dim vs amin); over all axes max() and amax() keep
// the same tensors, so there is nothing to warn of.
TEST(OpTable, MinAlongADimWarnsAndAReductionOverEverythingDoesNot) {
  for (bool all : {false, true}) {
    GraphBuilder g;
    g.Input("x", {8, 10});
    Pre(g, "x", "a");
    auto& n = g.Node("ReduceMin", {"a"}, {"y"});
    if (!all) GraphBuilder::IntsAttr(n, "axes", {1});
    GraphBuilder::IntAttr(n, "keepdims", 0);
    g.Output("y");
    StepPlan p = MustPlan(g.Bytes(), 3);
    EXPECT_EQ(p.warnings.size(), all ? 0u : 2u) << (all ? "all axes" : "axis 1");
    EXPECT_EQ(p.risks.size(), all ? 0u : 1u);
    for (const std::string& w : p.warnings) EXPECT_NE(w.find("min(x, dim)"), std::string::npos) << w;
  }
}

// nn.RNN(16, 24, batch_first=True) over 10 steps (rnn_tanh in the table): torch keeps the contiguous
// time-first input and 11 hidden states (the initial one and one per step); the LSTM rule's 7 per
// step was 4x too many. Bidirectional: both per direction (nn.RNN(16, 32, bidirectional), 7 steps,
// batch 2: 5888 B measured).
TEST(OpTable, RnnKeepsOneHiddenStatePerStepAndTheInitialOne) {
  for (int dirs : {1, 2}) {
    const int64_t steps = dirs == 1 ? 10 : 7, hidden = dirs == 1 ? 24 : 32, batch = dirs == 1 ? 3 : 2;
    GraphBuilder g;
    g.Input("input", {steps, 16})
        .Weight("W", {dirs, hidden, 16})
        .Weight("R", {dirs, hidden, hidden})
        .Weight("B", {dirs, 2 * hidden});
    Pre(g, "input", "a");
    GraphBuilder::IntsAttr(g.Node("Transpose", {"a"}, {"x"}), "perm", {1, 0, 2});
    auto& rnn = g.Node("RNN", {"x", "W", "R", "B"}, {"y"}, "rnn");
    GraphBuilder::IntAttr(rnn, "hidden_size", hidden);
    if (dirs == 2) {
      auto* d = rnn.add_attribute();
      d->set_name("direction");
      d->set_type(onnx::AttributeProto::STRING);
      d->set_s("bidirectional");
    }
    g.Output("y");
    StepPlan p = MustPlan(g.Bytes(), batch);
    const LayerMemory* l = Layer(p, "RNN");
    ASSERT_NE(l, nullptr);
    const uint64_t b = static_cast<uint64_t>(batch), t = static_cast<uint64_t>(steps);
    const uint64_t h = static_cast<uint64_t>(hidden), d = static_cast<uint64_t>(dirs);
    EXPECT_EQ(l->saved_bytes, d * (b * t * 16 * 4 + (t + 1) * b * h * 4)) << dirs << " direction(s)";
    if (dirs == 2) {
      EXPECT_EQ(l->saved_bytes, 5888u);
    }
    EXPECT_TRUE(p.uncovered.empty());
  }
}

// Ops users export at newer opsets or write out by hand: tril (Trilu, opset 14) keeps nothing; a
// decomposed dropout2d (RandomUniformLike -> Greater -> Cast -> Mul) keeps its [N, C, 1, 1] mask
// only; rrelu's random slope (RandomUniformLike -> PRelu) is kept with the input.
TEST(OpTable, TriluAndRandomNoisePlanLikeTorch) {
  GraphBuilder g;
  g.Input("x", {8, 8}).Input("v", {8, 10, 10}).Input("r", {64});
  Pre(g, "x", "a");
  g.Constant("k", {0}, {});
  g.Node("Trilu", {"a", "k"}, {"tril"});  // torch.tril(x) exports its diagonal as a constant
  Pre(g, "v", "b");
  g.Constant("starts", {0, 0}, {2}).Constant("ends", {1, 1}, {2}).Constant("axes", {2, 3}, {2});
  g.Node("Slice", {"b", "starts", "ends", "axes"}, {"corner"});
  g.Node("RandomUniformLike", {"corner"}, {"noise"});
  g.FloatConstant("half", 0.5f).FloatConstant("two", 2.0f);
  g.Node("Greater", {"noise", "half"}, {"keep"});
  GraphBuilder::IntAttr(g.Node("Cast", {"keep"}, {"mask"}), "to", 1);
  g.Node("Mul", {"b", "mask"}, {"dropped"});
  g.Node("Mul", {"dropped", "two"}, {"scaled"});
  Pre(g, "r", "c");
  g.Node("RandomUniformLike", {"c"}, {"slope"});
  g.Node("PRelu", {"c", "slope"}, {"rrelu"});
  g.Output("tril").Output("scaled").Output("rrelu");
  StepPlan p = MustPlan(g.Bytes(), 3);
  ASSERT_NE(Layer(p, "Trilu"), nullptr);
  EXPECT_EQ(Layer(p, "Trilu")->output_shape, (std::vector<int64_t>{3, 8, 8}));
  EXPECT_EQ(Layer(p, "Trilu")->saved_bytes, 0u);
  EXPECT_EQ(Layer(p, "RandomUniformLike")->saved_bytes, 0u);
  EXPECT_EQ(Layer(p, "PRelu")->saved_bytes, 2u * 3 * 64 * 4);
  // The mask, the scalar 2.0 as torch wraps it (8 bytes, mul_scalar in the table), input and slope.
  EXPECT_EQ(p.bytes.activations_saved, 3u * 8 * 4 + 8 + 2u * 3 * 64 * 4);
  for (const UncoveredOp& u : p.uncovered) ADD_FAILURE() << "uncovered: " << u.op;
}

// Ops the shape pass used to refuse (the whole plan failed): Einsum, GatherElements, DepthToSpace,
// CumSum, Atan; each now planned with the table's saved set.
TEST(OpTable, FormerlyRefusedOpsArePlanned) {
  GraphBuilder g;
  g.Input("a", {8, 16}).Input("b", {12, 16}).Input("idx", {4, 12}, 7).Input("c", {8, 6, 6});
  Pre(g, "a", "ra");
  Pre(g, "b", "rb");
  auto& e = g.Node("Einsum", {"ra", "rb"}, {"e"});
  auto* eq = e.add_attribute();
  eq->set_name("equation");
  eq->set_type(onnx::AttributeProto::STRING);
  eq->set_s("bij,bkj->bik");  // no row has this equation: einsum's equation does not tell rows apart
  GraphBuilder::IntAttr(g.Node("GatherElements", {"e", "idx"}, {"ge"}), "axis", 1);
  g.Node("Atan", {"ge"}, {"at"});
  g.Constant("axis", {1}, {});
  g.Node("CumSum", {"at", "axis"}, {"cs"});
  Pre(g, "c", "rc");
  auto& d2s = g.Node("DepthToSpace", {"rc"}, {"ds"});
  GraphBuilder::IntAttr(d2s, "blocksize", 2);
  auto* mode = d2s.add_attribute();  // pixel_shuffle exports column-row-depth order
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("CRD");
  g.Output("cs").Output("ds");
  StepPlan p = MustPlan(g.Bytes(), 3);
  const LayerMemory* einsum = Layer(p, "Einsum");
  ASSERT_NE(einsum, nullptr);
  EXPECT_EQ(einsum->output_shape, (std::vector<int64_t>{3, 8, 12}));
  EXPECT_EQ(einsum->saved_bytes, 3u * (8 * 16 + 16 * 12) * 4);  // both operands
  const LayerMemory* gather = Layer(p, "GatherElements");
  ASSERT_NE(gather, nullptr);
  EXPECT_EQ(gather->output_shape, (std::vector<int64_t>{3, 4, 12}));
  EXPECT_EQ(Layer(p, "Atan")->saved_bytes, 3u * 4 * 12 * 4);  // its input
  EXPECT_EQ(Layer(p, "CumSum")->saved_bytes, 0u);
  EXPECT_EQ(Layer(p, "DepthToSpace")->output_shape, (std::vector<int64_t>{3, 2, 12, 12}));
  for (const UncoveredOp& u : p.uncovered) ADD_FAILURE() << "uncovered: " << u.op;
}

// Ops whose hand rules went because the table's one-node rows give the same saved set: each is
// planned from its row (not uncovered, no warning) and keeps its input or its output (the same
// size here), at two batches.
TEST(OpTable, OpsWithoutHandRulesKeepWhatTheirRowsSay) {
  const std::string ops[] = {"Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Exp", "HardSigmoid", "Erf", "Softplus",
                             "Abs", "Sin", "Cos"};
  for (const std::string& op : ops) {
    for (int64_t batch : {3, 6}) {
      GraphBuilder g;
      g.Input("x", {10, 32});
      Pre(g, "x", "a");
      g.Node(op, {"a"}, {"y"});
      g.Output("y");
      StepPlan p = MustPlan(g.Bytes(), batch);
      const LayerMemory* l = Layer(p, op);
      ASSERT_NE(l, nullptr) << op;
      EXPECT_EQ(l->saved_bytes, static_cast<uint64_t>(batch) * 10 * 32 * 4) << op << " at batch " << batch;
      EXPECT_TRUE(p.uncovered.empty()) << op;
      EXPECT_TRUE(p.warnings.empty()) << op;
    }
  }
}

// nn.GRUCell(x, h) with its hidden state given (every step of a recurrence after the first: GRU-D, unseen
// set 15): on CPU torch updates the hidden gates in place, keeping the two inputs and 6 x hidden floats per
// sample (the gates' storage and three more), where the nodes alone would keep 7 x hidden (gru_cell_hidden
// row; gru_d +8.5 % before).
TEST(OpTable, GruCellWithAGivenHiddenStateKeepsWhatTorchKeeps) {
  for (int64_t batch : {3, 6}) {
    GraphBuilder g;
    g.Input("x", {16}).Input("h", {24});
    g.Weight("w_ih", {72, 16}).Weight("b_ih", {72}).Weight("w_hh", {72, 24}).Weight("b_hh", {72});
    g.Constant("split", {24, 24, 24}, {3});
    Pre(g, "x", "a");
    Pre(g, "h", "hx");
    GraphBuilder::IntAttr(g.Node("Gemm", {"a", "w_ih", "b_ih"}, {"gi"}), "transB", 1);
    GraphBuilder::IntAttr(g.Node("Split", {"gi", "split"}, {"i0", "i1", "i2"}), "axis", 1);
    GraphBuilder::IntAttr(g.Node("Gemm", {"hx", "w_hh", "b_hh"}, {"gh"}), "transB", 1);
    GraphBuilder::IntAttr(g.Node("Split", {"gh", "split"}, {"h0", "h1", "h2"}), "axis", 1);
    g.Node("Add", {"h0", "i0"}, {"rs"});
    g.Node("Sigmoid", {"rs"}, {"r"});
    g.Node("Add", {"h1", "i1"}, {"zs"});
    g.Node("Sigmoid", {"zs"}, {"z"});
    g.Node("Mul", {"h2", "r"}, {"hr"});
    g.Node("Add", {"i2", "hr"}, {"ns"});
    g.Node("Tanh", {"ns"}, {"n"});
    g.Node("Sub", {"hx", "n"}, {"d"});
    g.Node("Mul", {"d", "z"}, {"dz"});
    g.Node("Add", {"dz", "n"}, {"y"});
    g.Output("y");
    StepPlan p = MustPlan(g.Bytes(), batch);
    uint64_t saved = 0;
    for (const LayerMemory& l : p.layers) saved += l.saved_bytes;
    EXPECT_EQ(saved, static_cast<uint64_t>(batch) * (16 + 24 + 6 * 24) * 4) << batch;
  }
}

}  // namespace
}  // namespace oomguard::plan
