// BatchPlanner against PlanStep: the plan a recording replays must equal the
// full plan, byte for byte, for every batch, model, target and option set; and
// the recording must actually answer (a wrong one would be rejected silently
// and every batch planned in full).
#include <gtest/gtest.h>

#include <set>

#include <map>
#include <random>

#include <string>
#include <thread>
#include <vector>

#include "oomguard/plan/planner.h"
#include "test_graphs.h"

namespace oomguard::plan {
namespace {

using testing::GraphBuilder;

// In the order a fit search asks: far aims, then neighbours and points between.
const std::vector<int64_t> kBatches = {1, 2, 40, 39, 41, 20, 30, 10, 5, 3, 7, 35, 64, 100, 1000, 999, 4097, 65536, 500};

// Plans every batch both ways; returns how many the recording answered.
int ExpectSamePlans(const Model& model, const PlanOptions& base, const std::string& label) {
  BatchPlanner planner(model);
  for (int64_t b : kBatches) {
    PlanOptions o = base;
    o.batch = b;
    Result<StepPlan> full = PlanStep(model, o);
    Result<StepPlan> fast = planner.Plan(o);
    EXPECT_EQ(full.ok(), fast.ok()) << label << " batch " << b;
    if (!full.ok() || !fast.ok()) {
      if (!full.ok() && !fast.ok()) {
        EXPECT_EQ(full.error(), fast.error()) << label;
      }
      continue;
    }
    EXPECT_TRUE(*full == *fast) << label << " batch " << b << ": required " << full->required_bytes << " vs "
                                << fast->required_bytes << ", peak " << full->peak_allocated_bytes << " vs "
                                << fast->peak_allocated_bytes << ", saved " << full->bytes.activations_saved
                                << " vs " << fast->bytes.activations_saved;
  }
  return planner.stats().replayed_plans;
}

// The required bytes alone (the path fit and split take) against PlanStep at
// every batch, with a reach (the check placed at the search's far end) as a
// search passes it; returns how many the recording answered.
int ExpectSameRequired(const Model& model, const PlanOptions& base, const std::string& label, int64_t reach) {
  BatchPlanner planner(model);
  for (int64_t b : kBatches) {
    PlanOptions o = base;
    o.batch = b;
    Result<StepPlan> full = PlanStep(model, o);
    Result<uint64_t> fast = planner.RequiredBytes(o, reach);
    EXPECT_EQ(full.ok(), fast.ok()) << label << " batch " << b;
    if (!full.ok() || !fast.ok()) continue;
    EXPECT_EQ(full->required_bytes, *fast) << label << " batch " << b << " reach " << reach;
    // A whole plan from the same planner afterwards still equals the full one (on cuda, one at a
    // batch whose required bytes were replayed takes the caching allocator's result from that replay).
    if (b == 39 || b == 41 || b == 7 || b == 999) {
      Result<StepPlan> whole = planner.Plan(o);
      EXPECT_TRUE(whole.ok() && *whole == *full) << label << " batch " << b;
    }
  }
  return planner.stats().replayed_plans;
}

std::vector<PlanOptions> OptionSets() {
  std::vector<PlanOptions> sets;
  for (Target t : {Target::kCpu, Target::kCuda}) {
    PlanOptions o;
    o.target = t;
    sets.push_back(o);
    o.optimizer = Optimizer::kSgd;
    o.precision = Precision::kAmpFp16;
    o.activation_checkpointing = true;
    sets.push_back(o);
    o = PlanOptions{};
    o.target = t;
    o.precision = Precision::kBf16;
    o.optimizer_state_shards = 4;
    o.gradient_shards = 2;
    o.loss = Loss::kMse;
    o.extra_persistent_bytes = 12345;
    o.cuda_expandable_segments = true;
    sets.push_back(o);
  }
  return sets;
}

class ZooReplay : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooReplay, EqualsTheFullPlanForEveryBatchAndOptionSet) {
  auto model = LoadModel(GetParam());
  ASSERT_TRUE(model.ok()) << model.error();
  int set = 0;
  for (const PlanOptions& o : OptionSets()) {
    const std::string label = GetParam() + " option set " + std::to_string(set++) + " (" + std::string(Name(o.target)) + ")";
    // A wrong recording is caught by the comparison above; one that never answers, here.
    EXPECT_GE(ExpectSamePlans(**model, o, label), 4) << label;
    // The required bytes alone, without a reach and with one.
    EXPECT_GE(ExpectSameRequired(**model, o, label, 0), 4) << label;
    EXPECT_GE(ExpectSameRequired(**model, o, label, 4097), 4) << label;
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooReplay, ::testing::ValuesIn(ZooModelNames()),
                         [](const auto& info) { return info.param; });

// A graph with what the recording must carry besides sizes: an in-place
// warning whose bytes grow with the batch, an operator without a rule, a
// reshape computed from the batch, a pooling what-if.
std::string OddGraph() {
  GraphBuilder g;
  g.Input("input", {3, 4}).Weight("fc.weight", {10, 12}).Weight("head.weight", {5, 10});
  g.Node("Shape", {"input"}, {"s"});
  g.Constant("zero", {0}, {});
  g.Constant("axes", {0}, {1});
  g.Constant("minus_one", {-1}, {1});
  g.Node("Gather", {"s", "zero"}, {"b"});
  g.Node("Unsqueeze", {"b", "axes"}, {"b1"});
  GraphBuilder::IntAttr(g.Node("Concat", {"b1", "minus_one"}, {"target"}), "axis", 0);
  g.Node("Reshape", {"input", "target"}, {"flat"}, "flat");
  GraphBuilder::IntAttr(g.Node("Gemm", {"flat", "fc.weight"}, {"h"}, "fc"), "transB", 1);
  g.Node("LeakyRelu", {"h"}, {"a"}, "act");
  g.Node("Mystery", {"a"}, {"u"}, "mystery").set_domain("com.example");
  GraphBuilder::IntAttr(g.Node("Gemm", {"u", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  onnx::ModelProto m;
  m.ParseFromString(g.Bytes());
  auto* opset = m.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  auto* vi = m.mutable_graph()->add_value_info();  // what the exporter records for the custom op
  vi->set_name("u");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_value(10);
  return m.SerializeAsString();
}

TEST(BatchPlanner, OddGraphEqualsTheFullPlan) {
  auto model = LoadModelFromBytes(OddGraph(), "odd");
  ASSERT_TRUE(model.ok()) << model.error();
  PlanOptions probe;
  probe.batch = 4;
  probe.target = Target::kCpu;
  Result<StepPlan> p = PlanStep(**model, probe);
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_GE(p->warnings.size(), 2u);  // the graph exercises what it is meant to: in-place and no rule
  ASSERT_EQ(p->uncovered.size(), 1u);
  for (const PlanOptions& o : OptionSets()) {
    EXPECT_GE(ExpectSamePlans(**model, o, "odd " + std::string(Name(o.target))), 8);
  }
}

// The locals risk (planner_test.cc's Perceiver) comes and goes with the batch and the optimizer; a
// recording recomputes it rather than giving up.
TEST(BatchPlanner, LocalsRiskIsReplayed) {
  auto model = LoadModel(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/perceiver_locals.onnx");
  ASSERT_TRUE(model.ok()) << model.error();
  int with_risk = 0, without = 0;
  for (const PlanOptions& o : OptionSets()) {
    if (o.target != Target::kCpu) continue;
    EXPECT_GE(ExpectSamePlans(**model, o, "perceiver_locals"), 8);
    for (int64_t b : {int64_t{1}, int64_t{16}, int64_t{1000}}) {
      PlanOptions at = o;
      at.batch = b;
      Result<StepPlan> p = PlanStep(**model, at);
      ASSERT_TRUE(p.ok()) << p.error();
      (p->risks.empty() ? without : with_risk) += 1;
    }
  }
  EXPECT_GT(with_risk, 0);  // the test covers both sides
  EXPECT_GT(without, 0);
}

// The amax risk's bytes follow the batch (planner_test.cc's edge convolution): a recording replays
// it in its place rather than giving up. (This net's module-frame locals risk is replayed too, but under
// amp the full plan's forward peak with locals at the far batch is not on the line through batches 1 and
// 2, so those batches are planned in full: 5 replays there, 8 elsewhere.)
TEST(BatchPlanner, ReductionAmaxRiskIsReplayed) {
  auto model = LoadModel(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/family_edge_knn_one.onnx");
  ASSERT_TRUE(model.ok()) << model.error();
  for (const PlanOptions& o : OptionSets()) {
    EXPECT_GE(ExpectSamePlans(**model, o, "edge_knn_one " + std::string(Name(o.target))), 5);
  }
  uint64_t last = 0;
  for (int64_t b : {int64_t{1}, int64_t{16}, int64_t{1000}}) {
    PlanOptions at;
    at.batch = b;
    Result<StepPlan> p = PlanStep(**model, at);
    ASSERT_TRUE(p.ok()) << p.error();
    uint64_t amax = 0;
    for (const PlanRisk& r : p->risks) amax += r.what == "reduction_may_be_amax" ? r.bytes : 0;
    EXPECT_GT(amax, last);
    last = amax;
  }
}

// Every risk's bytes may follow the batch (a 1-D U-Net's in-place-after-instance-norm risk grows with it,
// its convolution scratch risks do not): a recording fits each and replays it in place, as it does the
// amax risk above, where before a plan with such a risk was planned in full at every batch.
TEST(BatchPlanner, RisksThatFollowTheBatchAreReplayed) {
  auto model = LoadModel(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/family_unet1d_k15.onnx");
  ASSERT_TRUE(model.ok()) << model.error();
  // (A conv's kernel changes with the batch here: each stretch of batches is a recording of its own.)
  for (const PlanOptions& o : OptionSets()) {
    EXPECT_GE(ExpectSamePlans(**model, o, "unet1d_k15 " + std::string(Name(o.target))), 4);
  }
  PlanOptions at;
  at.target = Target::kCpu;
  std::map<std::string, std::set<uint64_t>> bytes;  // per risk, the bytes seen at three batches
  for (int64_t b : {int64_t{1}, int64_t{16}, int64_t{1000}}) {
    at.batch = b;
    Result<StepPlan> p = PlanStep(**model, at);
    ASSERT_TRUE(p.ok()) << p.error();
    for (const PlanRisk& r : p->risks) bytes[r.what].insert(r.bytes);
  }
  EXPECT_EQ(bytes["inplace_after_instance_norm"].size(), 3u);  // the test covers a risk that follows the batch
  EXPECT_EQ(bytes["cpu_isa_scratch"].size(), 1u);
}

TEST(BatchPlanner, OddGraphRequiredBytesEqualTheFullPlan) {
  auto model = LoadModelFromBytes(OddGraph(), "odd");
  ASSERT_TRUE(model.ok()) << model.error();
  for (const PlanOptions& o : OptionSets()) {
    for (int64_t reach : {int64_t{0}, int64_t{1000}, kMaxBatch}) {
      EXPECT_GE(ExpectSameRequired(**model, o, "odd " + std::string(Name(o.target)), reach), 8);
    }
  }
}

// Two branches from one input joined by Concat, a residual Add, a Softmax head:
// buffers freed out of order, a peak in backward that moves with the batch.
std::string BranchGraph() {
  GraphBuilder g;
  g.Input("input", {3, 16, 16}).Weight("a.weight", {8, 3, 3, 3}).Weight("b.weight", {4, 3, 1, 1});
  g.Weight("c.weight", {12, 12, 3, 3}).Weight("fc.weight", {10, 12});
  GraphBuilder::IntsAttr(g.Node("Conv", {"input", "a.weight"}, {"a"}, "conv_a"), "pads", {1, 1, 1, 1});
  g.Node("Conv", {"input", "b.weight"}, {"b"}, "conv_b");
  g.Node("Relu", {"a"}, {"ar"}, "relu_a");
  g.Node("Sigmoid", {"b"}, {"bs"}, "sig_b");
  GraphBuilder::IntAttr(g.Node("Concat", {"ar", "bs"}, {"cat"}, "cat"), "axis", 1);
  GraphBuilder::IntsAttr(g.Node("Conv", {"cat", "c.weight"}, {"c"}, "conv_c"), "pads", {1, 1, 1, 1});
  g.Node("Add", {"c", "cat"}, {"res"}, "residual");
  g.Node("GlobalAveragePool", {"res"}, {"pool"}, "pool");
  g.Node("Flatten", {"pool"}, {"flat"}, "flatten");
  GraphBuilder::IntAttr(g.Node("Gemm", {"flat", "fc.weight"}, {"logits"}, "fc"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

TEST(BatchPlanner, BranchGraphRequiredBytesEqualTheFullPlan) {
  auto model = LoadModelFromBytes(BranchGraph(), "branches");
  ASSERT_TRUE(model.ok()) << model.error();
  for (const PlanOptions& o : OptionSets()) {
    // Batch 1 runs PyTorch's slow convolution on CPU (its columns are scratch) and batch 2 oneDNN's:
    // the recordings start at 2.
    EXPECT_GE(ExpectSameRequired(**model, o, "branches " + std::string(Name(o.target)), 65536), 6);
    EXPECT_GE(ExpectSamePlans(**model, o, "branches " + std::string(Name(o.target))), 4);
  }
}

// A random net of seed `seed`: a chain of fully connected layers of random widths (sizes on both sides
// of the caching allocator's 512-byte rounding and 1 MiB small pool at the batches below), activations,
// residual Adds, a Mul, a Dropout and a Softmax head, in a random order.
std::string RandomNet(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  const int64_t widths[] = {3, 8, 16, 63, 64, 100, 257, 1024};
  GraphBuilder g;
  int64_t width = widths[pick(8)];
  g.Input("input", {width});
  std::string x = "input";
  const int layers = 3 + pick(6);
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i);
    const int64_t out = widths[pick(8)];
    g.Weight("fc" + n + ".weight", {out, width}).Weight("fc" + n + ".bias", {out});
    GraphBuilder::IntAttr(g.Node("Gemm", {x, "fc" + n + ".weight", "fc" + n + ".bias"}, {"h" + n}, "fc" + n), "transB", 1);
    const std::string h = "h" + n;
    width = out;
    static const char* kActivations[] = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Relu"};
    g.Node(kActivations[pick(5)], {h}, {"a" + n}, "act" + n);
    x = "a" + n;
    switch (pick(4)) {
      case 0: g.Node("Add", {x, h}, {"r" + n}, "residual" + n), x = "r" + n; break;
      case 1: g.Node("Mul", {x, h}, {"m" + n}, "gate" + n), x = "m" + n; break;
      case 2: g.Node("Dropout", {x}, {"d" + n}, "dropout" + n), x = "d" + n; break;
      default: break;
    }
  }
  GraphBuilder::IntAttr(g.Node("Softmax", {x}, {"probs"}, "head"), "axis", -1);
  g.Output("probs");
  return g.Bytes();
}

// The fast path (a recording replayed, the required bytes alone with a search's reach) against the slow
// one (PlanStep) on random nets, both targets, several option sets and batches: they may never disagree.
TEST(BatchPlanner, RandomNetsEqualTheFullPlanAtEveryBatch) {
  const std::vector<int64_t> batches = {1, 2, 3, 64, 63, 7, 1000, 999, 4096, 4097, 700, 5, 100000};
  int answered = 0;
  for (uint32_t seed = 0; seed < 12; ++seed) {
    auto model = LoadModelFromBytes(RandomNet(seed), "random_" + std::to_string(seed));
    ASSERT_TRUE(model.ok()) << seed << ": " << model.error();
    for (const PlanOptions& base : OptionSets()) {
      const std::string label = "random net " + std::to_string(seed) + " (" + std::string(Name(base.target)) + ")";
      BatchPlanner required_only(**model), whole(**model);
      for (int64_t b : batches) {
        PlanOptions o = base;
        o.batch = b;
        Result<StepPlan> full = PlanStep(**model, o);
        Result<uint64_t> fast = required_only.RequiredBytes(o, 200000);
        Result<StepPlan> replayed = whole.Plan(o);
        ASSERT_EQ(full.ok(), fast.ok()) << label << " batch " << b;
        ASSERT_EQ(full.ok(), replayed.ok()) << label << " batch " << b;
        if (!full.ok()) continue;
        EXPECT_EQ(full->required_bytes, *fast) << label << " batch " << b;
        EXPECT_TRUE(*full == *replayed) << label << " batch " << b << ": required " << full->required_bytes
                                        << " vs " << replayed->required_bytes;
      }
      answered += required_only.stats().replayed_plans + whole.stats().replayed_plans;
    }
  }
  EXPECT_GT(answered, 12 * 6 * 8);  // the recordings answered most batches (not all planned in full)
}

// The reach only moves where the recording is checked: a reach beyond what
// the counts hold (or an unplannable one) falls back to checking at the batch.
// (On cuda the check at the reach runs no caching-allocator model where its trace is the recording's,
// event for event; whole plans afterwards are still PlanStep's.)
TEST(BatchPlanner, ReachChecksOnceForTheWholeSearch) {
  auto model = LoadModel("resnet18");
  ASSERT_TRUE(model.ok()) << model.error();
  PlanOptions o;
  for (Target target : {Target::kCuda, Target::kCpu}) {
    o.target = target;
    BatchPlanner planner(**model);
    // (Below about 50 samples layer4's weight gradient outweighs its reorders in backward: another
    // stretch of batches, another recording. These batches are all above it.)
    for (int64_t b : {int64_t{300}, int64_t{100}, int64_t{200}, int64_t{5000}, int64_t{177}, int64_t{4999}}) {
      o.batch = b;
      ASSERT_EQ(*planner.RequiredBytes(o, 5000), PlanStep(**model, o)->required_bytes) << b;
    }
    // 300 and 100 fitted, 5000 checked it: everything after is replayed.
    EXPECT_EQ(planner.stats().full_plans, 3);
    EXPECT_EQ(planner.stats().replayed_plans, 4);
    // A batch asked again is remembered, not replayed again.
    o.batch = 177;
    ASSERT_EQ(*planner.RequiredBytes(o, 5000), PlanStep(**model, o)->required_bytes);
    EXPECT_EQ(planner.stats().replayed_plans, 4);
    for (int64_t b : {int64_t{5000}, int64_t{178}}) {
      o.batch = b;
      Result<StepPlan> whole = planner.Plan(o);
      ASSERT_TRUE(whole.ok()) << whole.error();
      EXPECT_TRUE(*whole == *PlanStep(**model, o)) << b;
    }
  }
  BatchPlanner huge(**model);
  for (int64_t b : {int64_t{1}, int64_t{2}, int64_t{3}}) {
    o.batch = b;
    ASSERT_EQ(*huge.RequiredBytes(o, kMaxBatch), PlanStep(**model, o)->required_bytes) << b;
  }
}

// Option sets planned at one batch share the simulation's work that does not depend on the options
// (the fused operators, which tensors need a gradient, each operator's rule): every set's plans are
// still PlanStep's, whichever set planned a batch first.
TEST(BatchPlanner, OptionSetsSharingABatchGiveTheirOwnPlans) {
  for (const char* name : {"resnet18", "mobilenet_v2", "unet_small", "bert_base"}) {
    auto model = LoadModel(name);
    ASSERT_TRUE(model.ok()) << model.error();
    std::vector<PlanOptions> sets = OptionSets();
    PlanOptions all_in_place;
    all_in_place.inplace = InplaceHint::kAll;
    sets.push_back(all_in_place);
    PlanOptions adamw = sets[0];
    adamw.optimizer = Optimizer::kAdamW;
    sets.push_back(adamw);
    BatchPlanner planner(**model);
    for (int64_t b : {int64_t{2}, int64_t{1}, int64_t{24}}) {
      for (size_t i = 0; i < sets.size(); ++i) {
        PlanOptions o = sets[i];
        o.batch = b;
        Result<StepPlan> full = PlanStep(**model, o);
        Result<StepPlan> shared = planner.Plan(o);
        ASSERT_EQ(full.ok(), shared.ok()) << name << " set " << i << " batch " << b;
        if (full.ok()) {
          EXPECT_TRUE(*full == *shared) << name << " set " << i << " batch " << b;
        }
      }
    }
  }
}

// The simulations at one batch share their graph analysis (module frames, the graphs that die before backward,
// the in-place table rows): on a graph with a branch only an ArgMax reads (its graph dies in forward) and ReLUs
// that could run in place, every option set planned through one planner, in place or not, equals its own full plan.
TEST(BatchPlanner, OptionSetsSharingAGraphAnalysisGiveTheirOwnPlans) {
  GraphBuilder g;
  g.Input("input", {64}).Weight("a.weight", {256, 64}).Weight("d.weight", {512, 256}).Weight("head.weight", {4, 256});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "a.weight"}, {"h"}, "a"), "transB", 1);
  g.Node("Relu", {"h"}, {"t"}, "relu_a");
  GraphBuilder::IntAttr(g.Node("Gemm", {"t", "d.weight"}, {"dist"}, "d"), "transB", 1);
  g.Node("Relu", {"dist"}, {"r"}, "relu_d");
  auto& am = g.Node("ArgMax", {"r"}, {"code"}, "argmax");
  GraphBuilder::IntAttr(am, "axis", 1);
  GraphBuilder::IntAttr(am, "keepdims", 1);
  g.Node("Cast", {"code"}, {"codef"}, "cast");
  g.Node("Mul", {"t", "codef"}, {"u"}, "mul");
  GraphBuilder::IntAttr(g.Node("Gemm", {"u", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  auto model = LoadModelFromBytes(g.Bytes(), "test");
  ASSERT_TRUE(model.ok()) << model.error();
  std::vector<PlanOptions> sets = OptionSets();
  for (size_t i = 0, n = sets.size(); i < n; ++i) {
    PlanOptions in_place = sets[i];
    in_place.inplace = InplaceHint::kAll;
    sets.push_back(in_place);
  }
  BatchPlanner planner(**model);
  int in_place_plans = 0;
  for (int64_t b : {int64_t{2}, int64_t{1}, int64_t{24}, int64_t{7}}) {
    for (size_t i = 0; i < sets.size(); ++i) {
      PlanOptions o = sets[i];
      o.batch = b;
      Result<StepPlan> full = PlanStep(**model, o);
      Result<StepPlan> shared = planner.Plan(o);
      ASSERT_TRUE(full.ok() && shared.ok()) << "set " << i << " batch " << b;
      EXPECT_TRUE(*full == *shared) << "set " << i << " batch " << b;
      in_place_plans += !shared->inplace.nodes.empty();
    }
  }
  EXPECT_GT(in_place_plans, 0);  // the in-place rows were found and used
}

// A chain of 64-float activations (each odd batch rounds up to the next even one on cuda, and above
// 4096 samples every activation is a large-pool request while the parameters' traffic stays in the
// small pool): the required bytes a search reads, taken from an earlier replay of the same events or
// replayed for the large pool alone, equal PlanStep's; so do whole plans afterwards.
TEST(BatchPlanner, ReplaysReusedAcrossBatchesEqualTheFullPlan) {
  GraphBuilder g;
  g.Input("x0", {64});
  for (int i = 0; i < 6; ++i) {
    const std::string k = std::to_string(i);
    g.Weight("w" + k, {64, 64}).Weight("b" + k, {64});
    g.Node("MatMul", {"x" + k, "w" + k}, {"m" + k}, "mm" + k);
    g.Node("Add", {"m" + k, "b" + k}, {"a" + k}, "bias" + k);
    g.Node("Relu", {"a" + k}, {"r" + k}, "relu" + k);
    g.Node("Add", {"r" + k, "x" + k}, {"x" + std::to_string(i + 1)}, "res" + k);
  }
  g.Output("x6");
  auto model = LoadModelFromBytes(g.Bytes(), "chain");
  ASSERT_TRUE(model.ok()) << model.error();
  const std::vector<int64_t> batches = {1, 2, 9000, 8191, 8192, 4097, 4098, 12001, 12002, 12000, 5000, 5001, 4096, 3, 64};
  for (int config = 0; config < 3; ++config) {
    PlanOptions o;
    o.cuda_expandable_segments = config == 1;
    if (config == 2) o.cuda_max_split_size = 6 * 1024 * 1024;
    BatchPlanner planner(**model);
    for (int64_t b : batches) {
      o.batch = b;
      Result<uint64_t> fast = planner.RequiredBytes(o, 20000);
      ASSERT_TRUE(fast.ok()) << fast.error();
      EXPECT_EQ(*fast, PlanStep(**model, o)->required_bytes) << "batch " << b;
    }
    EXPECT_GE(planner.stats().replayed_plans, 10);
    for (int64_t b : {int64_t{12001}, int64_t{12002}, int64_t{5001}}) {
      o.batch = b;
      Result<StepPlan> whole = planner.Plan(o);
      ASSERT_TRUE(whole.ok()) << whole.error();
      EXPECT_TRUE(*whole == *PlanStep(**model, o)) << "batch " << b;
    }
  }
}

TEST(BatchPlanner, TimelineOnlyWhenAskedAndThenPlannedInFull) {
  auto model = LoadModel("resnet18");
  ASSERT_TRUE(model.ok()) << model.error();
  PlanOptions o;
  o.batch = 8;
  EXPECT_TRUE(PlanStep(**model, o)->timeline.empty());
  o.record_timeline = true;
  Result<StepPlan> with = PlanStep(**model, o);
  ASSERT_TRUE(with.ok());
  EXPECT_FALSE(with->timeline.empty());
  BatchPlanner planner(**model);
  Result<StepPlan> fast = planner.Plan(o);
  ASSERT_TRUE(fast.ok());
  EXPECT_TRUE(*fast == *with);
  // Without the timeline, the rest of the plan is the same.
  PlanOptions without = o;
  without.record_timeline = false;
  StepPlan plain = *PlanStep(**model, without);
  plain.timeline = with->timeline;
  EXPECT_TRUE(plain == *with);
}

// Option sets are told apart by a key of every PlanOptions field but the batch
// (OptionSetKey, step_template.cc). A field it misses would let two option sets
// share a recording: when PlanOptions grows, add the field there, then here.
TEST(BatchPlanner, PlanOptionsHasTheFieldsTheOptionSetKeyKnows) {
  EXPECT_EQ(sizeof(PlanOptions), 200u) << "PlanOptions changed: add the new field to OptionSetKey";
}

TEST(BatchPlanner, OptionSetsDoNotShareARecording) {
  auto model = LoadModel("resnet18");
  ASSERT_TRUE(model.ok()) << model.error();
  BatchPlanner planner(**model);
  PlanOptions a;
  PlanOptions b;
  b.optimizer = Optimizer::kSgd;
  for (int64_t n : {1, 2, 40, 39, 20}) {
    a.batch = b.batch = n;
    ASSERT_TRUE(*planner.Plan(a) == *PlanStep(**model, a)) << n;
    ASSERT_TRUE(*planner.Plan(b) == *PlanStep(**model, b)) << n;
  }
  EXPECT_EQ(planner.stats().recordings, 2);
  EXPECT_GE(planner.stats().replayed_plans, 2);
}

// fit and split plan their what-ifs on several threads through one planner: option sets run at
// once (one at a time each), sharing the shapes. Every answer must be the one planned alone.
TEST(BatchPlanner, OptionSetsPlannedFromSeveralThreadsGiveTheSequentialAnswers) {
  auto model = LoadModel("resnet18");
  ASSERT_TRUE(model.ok()) << model.error();
  std::vector<PlanOptions> sets(4);
  sets[1].optimizer = Optimizer::kSgd;
  sets[2].precision = Precision::kAmpFp16;
  sets[3].activation_checkpointing = true;
  const std::vector<int64_t> batches = {1, 2, 40, 39, 7, 64};
  BatchPlanner planner(**model);
  std::vector<std::vector<uint64_t>> required(sets.size()), peak(sets.size());
  std::vector<std::thread> threads;
  // Two threads per option set: the same set from two threads waits for its own lock.
  for (size_t t = 0; t < 2 * sets.size(); ++t) {
    threads.emplace_back([&, t] {
      const size_t i = t % sets.size();
      for (int64_t b : batches) {
        PlanOptions o = sets[i];
        o.batch = b;
        Result<uint64_t> r = planner.RequiredBytes(o, 1000);
        Result<StepPlan> p = planner.Plan(o);
        if (t < sets.size()) {
          required[i].push_back(r.ok() ? *r : 0);
          peak[i].push_back(p.ok() ? p->peak_allocated_bytes : 0);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < sets.size(); ++i) {
    for (size_t k = 0; k < batches.size(); ++k) {
      PlanOptions o = sets[i];
      o.batch = batches[k];
      Result<StepPlan> alone = PlanStep(**model, o);
      ASSERT_TRUE(alone.ok()) << alone.error();
      EXPECT_EQ(required[i][k], alone->required_bytes) << "set " << i << " batch " << batches[k];
      EXPECT_EQ(peak[i][k], alone->peak_allocated_bytes) << "set " << i << " batch " << batches[k];
    }
  }
  EXPECT_GE(planner.stats().replayed_plans, 1);
}

TEST(BatchPlanner, ErrorsAndHugeBatchesComeFromTheFullPlan) {
  auto model = LoadModel("mlp_dropout");
  ASSERT_TRUE(model.ok()) << model.error();
  BatchPlanner planner(**model);
  PlanOptions o;
  o.replace_layer_with_pooling = "no_such_layer";
  o.batch = 8;
  Result<StepPlan> bad = planner.Plan(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), PlanStep(**model, o).error());
  PlanOptions fine;
  for (int64_t b : {int64_t{5}, int64_t{1} << 30, kMaxBatch}) {
    fine.batch = b;
    Result<StepPlan> full = PlanStep(**model, fine);
    Result<StepPlan> fast = planner.Plan(fine);
    ASSERT_EQ(full.ok(), fast.ok()) << b;
    if (full.ok()) {
      EXPECT_TRUE(*full == *fast) << b;
    }
  }
}

}  // namespace
}  // namespace oomguard::plan
