// Signs that part of a plain export ran without autograd (frozen_signs.h): each risk names what the plan would drop
// if the guess held, the plan less the plan of the same file with the guess given as hints (--no-grad, --detached,
// --frozen); the structures it must not take for one name nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "oomguard/plan/planner.h"
#include "test_graphs.h"

namespace oomguard::plan {
namespace {

using testing::GraphBuilder;

PlanOptions Cpu(int64_t batch, Optimizer optimizer = Optimizer::kSgd) {
  PlanOptions o;
  o.batch = batch;
  o.target = Target::kCpu;
  o.optimizer = optimizer;
  return o;
}

std::shared_ptr<const Model> Load(const std::string& bytes) {
  auto model = LoadModelFromBytes(bytes, "test");
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error());
  return *model;
}

uint64_t Peak(const Model& model, const PlanOptions& o) {
  auto plan = PlanStep(model, o);
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error());
  return plan.ok() ? plan->peak_allocated_bytes : 0;
}

// The bytes of risk `what` in the plan of `model` (0: not named), and whether a warning names `where`.
uint64_t RiskBytes(const Model& model, const PlanOptions& o, const std::string& what, const std::string& where = "") {
  auto plan = PlanStep(model, o);
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error());
  if (!plan.ok()) return 0;
  for (const PlanRisk& r : plan->risks) {
    if (r.what != what) continue;
    const bool named = std::any_of(plan->warnings.begin(), plan->warnings.end(),
                                   [&](const std::string& w) { return w.find(where) != std::string::npos; });
    EXPECT_TRUE(named) << where;
    return r.bytes;
  }
  return 0;
}

// Risk `what` names `where` and exactly the peak that naming the guess as hints takes off; the hinted model gets none.
void ExpectTheGuess(const Model& model, const Model& guessed, const PlanOptions& o, const std::string& what,
                    const std::string& where) {
  const uint64_t bytes = RiskBytes(model, o, what, where);
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(bytes, Peak(model, o) - Peak(guessed, o));
  EXPECT_EQ(RiskBytes(guessed, o, what), 0u);  // the hint says how it ran
}

// `model` with the nodes `nodes` names under no_grad and the weights `weights` names frozen.
std::shared_ptr<const Model> NoGradAndFrozen(const Model& model, const std::string& nodes, const std::string& weights) {
  auto no_grad = MarkGradMode(model, {nodes}, {});
  EXPECT_TRUE(no_grad.ok()) << (no_grad.ok() ? "" : no_grad.error());
  auto frozen = FreezeParameters(**no_grad, {weights});
  EXPECT_TRUE(frozen.ok()) << (frozen.ok() ? "" : frozen.error());
  return *frozen;
}

void Linear(GraphBuilder& g, const std::string& x, const std::string& w, const std::string& y, const std::string& name) {
  GraphBuilder::IntAttr(g.Node("Gemm", {x, w}, {y}, name), "transB", 1);
}

// A deep-equilibrium step: z = relu(s * (W z) + x) five times from x (the file cannot show that the first four ran under
// no_grad). With `inject` false, the chain reads only its previous result (ALBERT's shared layer): nothing named.
std::string FixedPoint(bool inject) {
  GraphBuilder g;
  g.Input("input", {64}).Weight("stem.weight", {256, 64}).Weight("cell.fc.weight", {256, 256});
  g.Weight("cell.scale", {256});
  g.Weight("head.weight", {5, 256});
  Linear(g, "input", "stem.weight", "x", "/stem/Gemm");
  std::string z = "x";
  for (int i = 0; i < 5; ++i) {
    const std::string k = std::to_string(i);
    Linear(g, z, "cell.fc.weight", "fz" + k, "/cell/fc_" + k + "/Gemm");
    g.Node("Mul", {"fz" + k, "cell.scale"}, {"m" + k}, "/cell_" + k + "/Mul");
    if (inject) g.Node("Add", {"m" + k, "x"}, {"s" + k}, "/cell_" + k + "/Add");
    g.Node("Relu", {inject ? "s" + k : "m" + k}, {"z" + k}, "/cell_" + k + "/Relu");
    z = "z" + k;
  }
  Linear(g, z, "head.weight", "logits", "/head/Gemm");
  g.Output("logits");
  return g.Bytes();
}

TEST(FrozenSigns, AFixedPointChainMayRunUnderNoGrad) {
  auto model = Load(FixedPoint(true));
  std::vector<std::string> solver;
  for (int i = 0; i < 4; ++i) {
    const std::string k = std::to_string(i);
    solver.insert(solver.end(),
                  {"/cell/fc_" + k + "/Gemm", "/cell_" + k + "/Mul", "/cell_" + k + "/Add", "/cell_" + k + "/Relu"});
  }
  auto guessed = MarkGradMode(*model, solver, {});
  ASSERT_TRUE(guessed.ok()) << guessed.error();
  for (const PlanOptions& o : {Cpu(16), Cpu(64, Optimizer::kAdam)}) {
    ExpectTheGuess(*model, **guessed, o, "solver_steps_may_be_no_grad", "module 'cell' (5 calls)");
  }
  EXPECT_EQ(RiskBytes(*Load(FixedPoint(false)), Cpu(16), "solver_steps_may_be_no_grad"), 0u);
  // A file from oomguard.export (its "oomguard.inplace", here naming nothing) says what ran how: no guess.
  onnx::ModelProto exported;
  ASSERT_TRUE(exported.ParseFromString(FixedPoint(true)));
  auto* entry = exported.add_metadata_props();
  entry->set_key("oomguard.inplace");
  entry->set_value("[]");
  EXPECT_EQ(RiskBytes(*Load(exported.SerializeAsString()), Cpu(16), "solver_steps_may_be_no_grad"), 0u);
}

// SAC's critic loss: (q(s, a) - y)^2 with y from a target critic, a copy of q (its weights of q's shapes) that only
// y reads. With a target of other shapes (a second critic trained on its own), nothing is named.
std::string CriticLoss(int64_t target_hidden) {
  GraphBuilder g;
  g.Input("sa", {32}).Input("next_sa", {32});
  g.Weight("q.0.weight", {128, 32}).Weight("q.1.weight", {1, 128});
  g.Weight("q_target.0.weight", {target_hidden, 32}).Weight("q_target.1.weight", {1, target_hidden});
  g.Weight("head.weight", {5, 128});
  g.FloatConstant("two", 2.0f);
  Linear(g, "sa", "q.0.weight", "h", "/q/q.0/Gemm");
  g.Node("Relu", {"h"}, {"hr"}, "/q/q.1/Relu");
  Linear(g, "hr", "q.1.weight", "pred", "/q/q.2/Gemm");
  Linear(g, "next_sa", "q_target.0.weight", "t", "/q_target/q_target.0/Gemm");
  g.Node("Relu", {"t"}, {"tr"}, "/q_target/q_target.1/Relu");
  Linear(g, "tr", "q_target.1.weight", "y", "/q_target/q_target.2/Gemm");
  g.Node("Sub", {"pred", "y"}, {"d"}, "/Sub");
  g.Node("Pow", {"d", "two"}, {"sq"}, "/Pow");
  Linear(g, "hr", "head.weight", "out", "/head/Gemm");
  g.Node("Add", {"out", "sq"}, {"logits"}, "/Add");
  g.Output("logits");
  return g.Bytes();
}

TEST(FrozenSigns, ATargetFromACopiedNetworkMayRunUnderNoGrad) {
  auto model = Load(CriticLoss(128));
  auto guessed = NoGradAndFrozen(*model, "/q_target/*", "q_target.*");
  for (const PlanOptions& o : {Cpu(64), Cpu(256, Optimizer::kAdam)}) {
    ExpectTheGuess(*model, *guessed, o, "target_may_be_no_grad", "a squared difference ('/Sub')");
  }
  EXPECT_EQ(RiskBytes(*Load(CriticLoss(96)), Cpu(64), "target_may_be_no_grad"), 0u);
}

// BitNet's weight quantisation: w + (q(w) - w), whose difference the code .detach()es. x + (q - y) with y another
// tensor is no straight-through estimator: nothing named.
std::string StraightThroughWeight(bool same) {
  GraphBuilder g;
  g.Input("input", {256}).Weight("fc.weight", {256, 256}).Weight("other.weight", {256, 256});
  g.Weight("head.weight", {5, 256});
  g.Node("Mul", {"fc.weight", "fc.weight"}, {"sq"}, "/fc/Mul");
  g.Node("Tanh", {"sq"}, {"q"}, "/fc/Tanh");
  g.Node("Sub", {"q", same ? "fc.weight" : "other.weight"}, {"d"}, "/fc/Sub");
  g.Node("Add", {"fc.weight", "d"}, {"wq"}, "/fc/Add");
  Linear(g, "input", "wq", "h", "/fc/Gemm");
  Linear(g, "h", "head.weight", "logits", "/head/Gemm");
  g.Output("logits");
  return g.Bytes();
}

TEST(FrozenSigns, AStraightThroughDifferenceMayBeDetached) {
  auto model = Load(StraightThroughWeight(true));
  auto guessed = MarkGradMode(*model, {}, {"/fc/Mul", "/fc/Tanh", "/fc/Sub"});
  ASSERT_TRUE(guessed.ok()) << guessed.error();
  const PlanOptions o = Cpu(8, Optimizer::kAdam);
  ExpectTheGuess(*model, **guessed, o, "straight_through_may_be_detached", "('/fc/Sub')");
  EXPECT_EQ(RiskBytes(*Load(StraightThroughWeight(false)), o, "straight_through_may_be_detached"), 0u);
}

// LoRA unmerged: fc(x) + (x @ A.t() @ B.t()) * 2 beside a frozen backbone (fc, ffn) and a trained head. An update
// of rank 16 of 32 is no low-rank adapter: nothing named.
std::string Adapter(int64_t rank) {
  GraphBuilder g;
  g.Input("input", {32}).Weight("fc.weight", {32, 32}).Weight("fc.a", {rank, 32}).Weight("fc.b", {32, rank});
  g.Weight("ffn.weight", {32, 32}).Weight("head.weight", {5, 32});
  g.FloatConstant("two", 2.0f);
  Linear(g, "input", "fc.weight", "base", "/fc/base/Gemm");
  g.Node("Transpose", {"fc.a"}, {"at"}, "/fc/Transpose");
  g.Node("MatMul", {"input", "at"}, {"down"}, "/fc/MatMul");
  g.Node("Transpose", {"fc.b"}, {"bt"}, "/fc/Transpose_1");
  g.Node("MatMul", {"down", "bt"}, {"up"}, "/fc/MatMul_1");
  g.Node("Mul", {"up", "two"}, {"scaled"}, "/fc/Mul");
  g.Node("Add", {"base", "scaled"}, {"h"}, "/fc/Add");
  g.Node("Relu", {"h"}, {"hr"}, "/Relu");
  Linear(g, "hr", "ffn.weight", "f", "/ffn/Gemm");
  Linear(g, "f", "head.weight", "logits", "/head/Gemm");
  g.Output("logits");
  return g.Bytes();
}

TEST(FrozenSigns, AModelWithLowRankAdaptersMayBeFrozenButThem) {
  auto model = Load(Adapter(4));
  auto guessed = FreezeParameters(*model, {"fc.weight", "ffn.weight"});
  ASSERT_TRUE(guessed.ok()) << guessed.error();
  const PlanOptions o = Cpu(64, Optimizer::kAdam);
  ExpectTheGuess(*model, **guessed, o, "backbone_may_be_frozen", "('fc': base(x)");
  EXPECT_EQ(RiskBytes(*Load(Adapter(16)), o, "backbone_may_be_frozen"), 0u);
}

// A LLaVA-style step: image tokens through a tower (`tower_layers` layers) and a two-layer projector, concatenated
// with token embeddings, then a layer and a head. A tower of two layers is no pretrained tower: nothing named.
std::string ProjectedTower(int tower_layers) {
  GraphBuilder g;
  g.Input("image", {4, 64}).Input("ids", {6}, 7).Weight("emb.weight", {100, 64});
  g.Weight("llm.weight", {64, 64}).Weight("head.weight", {5, 64});
  std::string x = "image";
  for (int i = 0; i < tower_layers + 2; ++i) {
    const bool tower = i < tower_layers;
    const std::string w = tower ? "tower.blocks." + std::to_string(i) + ".weight"
                                : "projector." + std::to_string(i - tower_layers) + ".weight";
    g.Weight(w, {64, 64});
    g.Node("MatMul", {x, w}, {w + "_mm"}, "/" + w + "/MatMul");
    g.Node("Relu", {w + "_mm"}, {w + "_out"}, "/" + w + "/Relu");
    x = w + "_out";
  }
  GraphBuilder::IntAttr(g.Node("Gather", {"emb.weight", "ids"}, {"tokens"}, "/emb/Gather"), "axis", 0);
  GraphBuilder::IntAttr(g.Node("Concat", {x, "tokens"}, {"seq"}, "/Concat"), "axis", 1);
  g.Node("MatMul", {"seq", "llm.weight"}, {"h"}, "/llm/MatMul");
  auto& mean = g.Node("ReduceMean", {"h"}, {"pooled"}, "/ReduceMean");
  GraphBuilder::IntsAttr(mean, "axes", {1});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  Linear(g, "pooled", "head.weight", "logits", "/head/Gemm");
  g.Output("logits");
  return g.Bytes();
}

TEST(FrozenSigns, ATowerBehindAProjectorMayBeFrozen) {
  auto model = Load(ProjectedTower(4));
  auto guessed = NoGradAndFrozen(*model, "/tower.*", "tower.*");
  for (const PlanOptions& o : {Cpu(8), Cpu(32, Optimizer::kAdam)}) {
    ExpectTheGuess(*model, *guessed, o, "tower_may_be_frozen", "('tower.blocks')");
  }
  EXPECT_EQ(RiskBytes(*Load(ProjectedTower(2)), Cpu(8), "tower_may_be_frozen"), 0u);
}

}  // namespace
}  // namespace oomguard::plan
