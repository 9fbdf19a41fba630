// In-place activations: the hint (options, model metadata), the operator table's in-place rows,
// and the range a plan without a hint reports.
#include "inplace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <nlohmann/json.hpp>

#include "oomguard/plan/planner.h"
#include "run_cli_for_test.h"
#include "op_table.h"
#include "test_graphs.h"

namespace oomguard::plan {
namespace {

using testing::GraphBuilder;

// input [B, 8] -> Gemm fc -> ACT -> Gemm head -> logits [B, 3].
GraphBuilder Net(const char* act) {
  GraphBuilder g;
  g.Input("input", {8}).Weight("fc.weight", {6, 8}).Weight("head.weight", {3, 6});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"h"}, "fc"), "transB", 1);
  g.Node(act, {"h"}, {"a"}, "/act/" + std::string(act));
  GraphBuilder::IntAttr(g.Node("Gemm", {"a", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  return g;
}

// input [B, 8] -> Gemm fc [B, 4096] -> LeakyRelu -> a * a -> Tanh -> Gemm head: activations
// dominate, the square keeps the LeakyRelu's output, and the peak (the Tanh's backward) holds every
// activation kept for backward.
std::string WideNet() {
  GraphBuilder g;
  g.Input("input", {8}).Weight("fc.weight", {4096, 8}).Weight("head.weight", {3, 4096});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"h"}, "fc"), "transB", 1);
  g.Node("LeakyRelu", {"h"}, {"a"}, "/act/LeakyRelu");
  g.Node("Mul", {"a", "a"}, {"s"}, "square");
  g.Node("Tanh", {"s"}, {"t"}, "tanh");
  GraphBuilder::IntAttr(g.Node("Gemm", {"t", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

std::string WithMetadata(const std::string& bytes, const std::string& value) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  auto* e = m.add_metadata_props();
  e->set_key(std::string(kInplaceMetadataKey));
  e->set_value(value);
  return m.SerializeAsString();
}

PlanOptions Cpu(int64_t batch) {
  PlanOptions o;
  o.batch = batch;
  o.target = Target::kCpu;
  o.optimizer = Optimizer::kSgd;
  return o;
}

Result<StepPlan> Plan(const std::string& bytes, const PlanOptions& o) {
  auto model = LoadModelFromBytes(bytes, "test");
  if (!model) return MakeError(model.error());
  return PlanStep(**model, o);
}

TEST(InplaceTable, HasTheInPlaceVariantsGeneratedFromPyTorch) {
  std::set<std::string> rows;
  for (const OpTableRow& r : EmbeddedOpTable().rows) {
    if (r.inplace) rows.insert(r.name);
  }
  for (const char* name : {"relu_inplace", "leaky_relu_inplace", "elu_inplace", "selu_inplace", "celu_inplace",
                           "relu6_inplace", "hardtanh_inplace", "silu_inplace", "hardswish_inplace",
                           "hardsigmoid_inplace", "mish_inplace"}) {
    EXPECT_TRUE(rows.count(name)) << name;
  }
  EXPECT_FALSE(rows.count("leaky_relu"));
}

TEST(Inplace, LeakyReluNamedInPlaceKeepsOneStorageAndDropsTheWarning) {
  const std::string bytes = Net("LeakyRelu").Bytes();
  StepPlan out_of_place = *Plan(bytes, Cpu(2));
  PlanOptions o = Cpu(2);
  o.inplace = InplaceHint::kNodes;
  o.inplace_nodes = {"/act/LeakyRelu"};
  Result<StepPlan> in_place = Plan(bytes, o);
  ASSERT_TRUE(in_place.ok()) << in_place.error();
  // Out of place h and a (48 B each) are kept, and the loss's 24 B; in place h and a are one storage.
  EXPECT_EQ(out_of_place.bytes.activations_saved, 48u + 48u + 24u);
  EXPECT_EQ(in_place->bytes.activations_saved, 48u + 24u);
  // Where activations dominate (4096 features at batch 16), one storage fewer lowers the peak by it.
  const std::string wide = WideNet();
  PlanOptions o16 = o;
  o16.batch = 16;
  EXPECT_EQ(Plan(wide, Cpu(16))->peak_allocated_bytes - Plan(wide, o16)->peak_allocated_bytes, 16u * 4096 * 4);
  EXPECT_TRUE(in_place->warnings.empty()) << in_place->warnings[0];
  EXPECT_EQ(in_place->inplace.hint, "option");
  EXPECT_EQ(in_place->inplace.nodes, std::vector<std::string>{"/act/LeakyRelu"});
  EXPECT_FALSE(in_place->inplace.Unsure());
  // --inplace none: out of place, and sure of it.
  o.inplace = InplaceHint::kNone;
  StepPlan none = *Plan(bytes, o);
  EXPECT_EQ(none.peak_allocated_bytes, out_of_place.peak_allocated_bytes);
  EXPECT_TRUE(none.warnings.empty());
  EXPECT_FALSE(none.inplace.Unsure());
}

TEST(Inplace, WithoutAHintThePlanIsUnsureAndTheRangeSpansBothExtremes) {
  const std::string bytes = WideNet();
  auto model = LoadModelFromBytes(bytes, "test");
  ASSERT_TRUE(model.ok());
  StepPlan p = *PlanStep(**model, Cpu(16));
  EXPECT_EQ(p.inplace.hint, "none");
  EXPECT_EQ(p.inplace.candidates, 1);
  EXPECT_TRUE(p.inplace.Unsure());
  EXPECT_EQ(p.inplace.peak_allocated_low_bytes, p.peak_allocated_bytes);  // until AddInplaceRange
  BatchPlanner planner(**model);
  ASSERT_TRUE(AddInplaceRange(planner, Cpu(16), &p).ok());
  PlanOptions all = Cpu(16);
  all.inplace = InplaceHint::kAll;
  StepPlan in_place = *PlanStep(**model, all);
  EXPECT_EQ(p.inplace.peak_allocated_high_bytes, p.peak_allocated_bytes);
  EXPECT_EQ(p.inplace.peak_allocated_low_bytes, in_place.peak_allocated_bytes);
  EXPECT_LT(p.inplace.peak_allocated_low_bytes, p.inplace.peak_allocated_high_bytes);
  EXPECT_EQ(p.inplace.required_low_bytes, in_place.required_bytes);
}

TEST(Inplace, TheModelsMetadataIsTheHint) {
  const std::string bytes = Net("Elu").Bytes();
  StepPlan hinted = *Plan(WithMetadata(bytes, "[\"/act/Elu\"]"), Cpu(2));
  EXPECT_EQ(hinted.inplace.hint, "metadata");
  EXPECT_EQ(hinted.inplace.nodes, std::vector<std::string>{"/act/Elu"});
  EXPECT_EQ(hinted.bytes.activations_saved, 48u + 24u);
  EXPECT_TRUE(hinted.warnings.empty());
  EXPECT_EQ(Plan(WithMetadata(bytes, "\"all\""), Cpu(2))->bytes.activations_saved, 48u + 24u);
  // An empty list: nothing ran in place, and the plan is sure of it.
  StepPlan none = *Plan(WithMetadata(bytes, "[]"), Cpu(2));
  EXPECT_EQ(none.bytes.activations_saved, 48u + 48u + 24u);
  EXPECT_FALSE(none.inplace.Unsure());
  // The option overrides the metadata.
  PlanOptions o = Cpu(2);
  o.inplace = InplaceHint::kNone;
  EXPECT_EQ(Plan(WithMetadata(bytes, "[\"/act/Elu\"]"), o)->bytes.activations_saved, 48u + 48u + 24u);
  // A malformed value and an unknown name are warnings, not failures.
  StepPlan bad = *Plan(WithMetadata(bytes, "{not json"), Cpu(2));
  EXPECT_EQ(bad.inplace.hint, "none");
  ASSERT_FALSE(bad.warnings.empty());
  EXPECT_NE(bad.warnings[0].find("oomguard.inplace is not a JSON list"), std::string::npos) << bad.warnings[0];
  for (const std::string& hostile : {std::string(100000, '[') + std::string(100000, ']'), std::string("[1]"),
                                     std::string("[\"a\", [\"b\"]]"), std::string("{\"a\": 1}"), std::string("\"some\"")}) {
    StepPlan p = *Plan(WithMetadata(bytes, hostile), Cpu(2));
    EXPECT_EQ(p.inplace.hint, "none") << hostile.substr(0, 20);
    EXPECT_EQ(p.warnings.size(), 2u) << hostile.substr(0, 20);  // the ignored metadata, the LeakyRelu/Elu one
  }
  StepPlan unknown = *Plan(WithMetadata(bytes, "[\"/nowhere/Elu\"]"), Cpu(2));
  ASSERT_FALSE(unknown.warnings.empty());
  EXPECT_NE(unknown.warnings[0].find("'/nowhere/Elu', which is not a node"), std::string::npos) << unknown.warnings[0];
}

TEST(Inplace, AnOptionNamingNoNodeIsAnError) {
  PlanOptions o = Cpu(2);
  o.inplace = InplaceHint::kNodes;
  o.inplace_nodes = {"/act/Nope"};
  Result<StepPlan> p = Plan(Net("Relu").Bytes(), o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().find("no node named '/act/Nope'"), std::string::npos) << p.error();
}

TEST(Inplace, AnActivationWhoseInputIsKeptCannotRunInPlace) {
  // sigmoid keeps its output; leaky_relu_ on it would fail backward in PyTorch.
  GraphBuilder g;
  g.Input("input", {8}).Weight("fc.weight", {6, 8}).Weight("head.weight", {3, 6});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"h"}, "fc"), "transB", 1);
  g.Node("Sigmoid", {"h"}, {"s"}, "sig");
  g.Node("LeakyRelu", {"s"}, {"a"}, "act");
  GraphBuilder::IntAttr(g.Node("Gemm", {"a", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  StepPlan unsure = *Plan(g.Bytes(), Cpu(2));
  EXPECT_EQ(unsure.inplace.candidates, 0);
  EXPECT_FALSE(unsure.inplace.Unsure());
  PlanOptions o = Cpu(2);
  o.inplace = InplaceHint::kNodes;
  o.inplace_nodes = {"act"};
  StepPlan p = *Plan(g.Bytes(), o);
  EXPECT_TRUE(p.inplace.nodes.empty());
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("'act' (LeakyRelu) cannot have run in place"), std::string::npos) << p.warnings[0];
}

// F.silu(x, inplace=True) keeps a clone of its input (SiluBackward0._saved_self: an input-sized storage of
// its own, torch 1.13) and writes the result over the input. The table's row was recorded on [B, 8, 10,
// 10] (3200 B a sample); on a [B, 256] input the clone is 1024 B a sample, not the recording's bytes
// (probe fn_act_mlp: saved +34812 B at batch 16 -> -4 B).
TEST(Inplace, InPlaceSiluKeepsAnInputSizedCloneAtAnyRank) {
  GraphBuilder g;
  g.Input("input", {8}).Weight("fc.weight", {256, 8}).Weight("head.weight", {3, 256});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"h"}, "fc"), "transB", 1);
  g.Node("Sigmoid", {"h"}, {"s"}, "/act/Sigmoid");
  g.Node("Mul", {"h", "s"}, {"a"}, "/act/Mul");
  GraphBuilder::IntAttr(g.Node("Gemm", {"a", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  PlanOptions o = Cpu(16);
  o.inplace = InplaceHint::kAll;
  StepPlan p = *Plan(g.Bytes(), o);
  ASSERT_EQ(p.inplace.nodes, std::vector<std::string>{"/act/Sigmoid"});
  const auto silu = std::find_if(p.layers.begin(), p.layers.end(), [](const LayerMemory& l) { return l.op_type == "Silu"; });
  ASSERT_NE(silu, p.layers.end());
  EXPECT_EQ(silu->saved_bytes, 16u * 256 * 4);
}

TEST(Inplace, AnInputReadAfterTheActivationCannotRunInPlace) {
  // h feeds the activation and, later, an Add: in place, the Add would read the result instead.
  GraphBuilder g;
  g.Input("input", {8}).Weight("fc.weight", {6, 8}).Weight("head.weight", {3, 6});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "fc.weight"}, {"h"}, "fc"), "transB", 1);
  g.Node("Relu", {"h"}, {"a"}, "act");
  g.Node("Add", {"a", "h"}, {"s"}, "add");
  GraphBuilder::IntAttr(g.Node("Gemm", {"s", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  EXPECT_EQ(Plan(g.Bytes(), Cpu(2))->inplace.candidates, 0);
}

TEST(Inplace, BatchPlannerReplaysInPlacePlansExactly) {
  const std::string bytes = WideNet();
  auto model = LoadModelFromBytes(bytes, "test");
  ASSERT_TRUE(model.ok());
  BatchPlanner planner(**model);
  for (InplaceHint h : {InplaceHint::kFromModel, InplaceHint::kAll, InplaceHint::kNone}) {
    for (int64_t b : {1, 2, 40, 39, 20, 30}) {
      PlanOptions o;
      o.batch = b;
      o.inplace = h;
      Result<StepPlan> full = PlanStep(**model, o);
      Result<StepPlan> fast = planner.Plan(o);
      ASSERT_TRUE(full.ok() && fast.ok());
      EXPECT_EQ(*full, *fast) << "batch " << b << " hint " << static_cast<int>(h);
    }
  }
  EXPECT_GE(planner.stats().replayed_plans, 3);
}

// input [B, 16, 8] -> nn.Linear(8, 256) as exported for a 3-D input (MatMul with the transposed weight,
// then Add of the bias, when `bias`) -> LeakyRelu -> ReduceMean over the sequence -> Gemm head.
// With `transposed`, the input arrives as [B, 8, 16] and is transposed first (not contiguous), and
// with `then_tanh` goes through a tanh after the transpose (laid out like the transpose: still not
// contiguous; random net 100296's GRU output -> relu -> nn.Linear).
std::string Linear3d(bool bias, bool transposed = false, bool then_tanh = false) {
  GraphBuilder g;
  g.Input("input", transposed ? std::vector<int64_t>{8, 16} : std::vector<int64_t>{16, 8});
  g.Weight("fc.weight", {256, 8}).Weight("fc.bias", {256}).Weight("head.weight", {3, 256});
  if (transposed) GraphBuilder::IntsAttr(g.Node("Transpose", {"input"}, {"x"}, "in/Transpose"), "perm", {0, 2, 1});
  if (then_tanh) g.Node("Tanh", {"x"}, {"xt"}, "in/Tanh");
  g.Node("Transpose", {"fc.weight"}, {"wt"}, "fc/Transpose");
  g.Node("MatMul", {then_tanh ? "xt" : transposed ? "x" : "input", "wt"}, {bias ? "mm" : "h"}, "fc/MatMul");
  if (bias) g.Node("Add", {"fc.bias", "mm"}, {"h"}, "fc/Add");
  g.Node("LeakyRelu", {"h"}, {"a"}, "act");
  onnx::NodeProto& mean = g.Node("ReduceMean", {"a"}, {"m"}, "mean");
  GraphBuilder::IntsAttr(mean, "axes", {1});
  GraphBuilder::IntAttr(mean, "keepdims", 0);
  GraphBuilder::IntAttr(g.Node("Gemm", {"m", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

TEST(Inplace, InPlaceOnTheViewALinearReturnsCostsTwoCopiesInBackward) {
  // at::linear on a 3-D input with a bias returns addmm's result viewed back to 3-D; an in-place
  // activation on it makes backward go through as_strided and CopySlices (measured on random nets:
  // two copies of the activation more, like after instance_norm).
  PlanOptions o = Cpu(4);
  o.inplace = InplaceHint::kNodes;
  o.inplace_nodes = {"act"};
  const uint64_t act = 4u * 16 * 256 * 4;
  for (int variant = 0; variant < 4; ++variant) {
    // A transposed input, or an activation of one, goes through matmul (random net 100296: +2.4 %).
    const bool bias = variant != 1, transposed = variant >= 2, then_tanh = variant == 3;
    StepPlan in_place = *Plan(Linear3d(bias, transposed, then_tanh), o);
    ASSERT_EQ(in_place.inplace.nodes.size(), 1u) << variant;
    PlanOptions plain = o;
    plain.inplace = InplaceHint::kNone;
    StepPlan out_of_place = *Plan(Linear3d(bias, transposed, then_tanh), plain);
    EXPECT_EQ(in_place.peak_phase, "backward");
    if (bias && !transposed) {
      EXPECT_GE(in_place.peak_allocated_bytes, out_of_place.peak_allocated_bytes + act) << "view: two copies more";
    } else {
      EXPECT_LE(in_place.peak_allocated_bytes, out_of_place.peak_allocated_bytes) << "no view " << variant;
    }
  }
}

// The CLI: --inplace, and the range in plan, fit and split.
const std::string kExe = OOMGUARD_EXE;

nlohmann::json Json(const std::vector<std::string>& args, int want_exit = 0) {
  auto r = oomguard::testing::RunCli(kExe, args);
  EXPECT_EQ(r.exit_code, want_exit) << r.err;
  return r.out.empty() ? nlohmann::json() : nlohmann::json::parse(r.out);
}

std::string WideNetFile() {
  const std::string path = "/tmp/oomguard_inplace_test_" + std::to_string(getpid()) + ".onnx";
  std::ofstream(path, std::ios::binary) << WideNet();
  return path;
}

TEST(InplaceCli, PlanWithoutAHintGivesTheRangeAndWithOneFollowsIt) {
  const std::string model = WideNetFile();
  nlohmann::json unsure = Json({"plan", model, "--batch", "16", "--target", "cpu", "--json"});
  EXPECT_TRUE(unsure["inplace"]["unsure"].get<bool>());
  EXPECT_EQ(unsure["inplace"]["hint"], "none");
  EXPECT_EQ(unsure["inplace"]["candidates"], 1);
  const uint64_t low = unsure["peak_allocated_range_bytes"]["low"], high = unsure["peak_allocated_range_bytes"]["high"];
  EXPECT_EQ(high, unsure["peak_allocated_bytes"].get<uint64_t>());
  EXPECT_EQ(high - low, 16u * 4096 * 4);
  nlohmann::json all = Json({"plan", model, "--batch", "16", "--target", "cpu", "--inplace", "all", "--json"});
  EXPECT_FALSE(all["inplace"]["unsure"].get<bool>());
  EXPECT_EQ(all["inplace"]["hint"], "option");
  EXPECT_EQ(all["inplace"]["nodes"], nlohmann::json::array({"/act/LeakyRelu"}));
  EXPECT_EQ(all["peak_allocated_bytes"].get<uint64_t>(), low);
  EXPECT_EQ(all["peak_allocated_range_bytes"]["low"], all["peak_allocated_range_bytes"]["high"]);
  nlohmann::json one =
      Json({"plan", model, "--batch", "16", "--target", "cpu", "--inplace", "/act/LeakyRelu", "--json"});
  EXPECT_EQ(one["peak_allocated_bytes"], all["peak_allocated_bytes"]);
  auto text = oomguard::testing::RunCli(kExe, {"plan", model, "--batch", "16", "--target", "cpu"});
  EXPECT_NE(text.out.find("UNSURE: 1 activation node may have run in place"), std::string::npos) << text.out;
  EXPECT_EQ(oomguard::testing::RunCli(kExe, {"plan", model, "--batch", "16", "--inplace", "none"}).out.find("UNSURE"),
            std::string::npos);
  std::remove(model.c_str());
}

TEST(InplaceCli, FitAndSplitCarryTheRange) {
  const std::string model = WideNetFile();
  // A capacity between the two extremes at batch 64: out of place it does not fit, in place it does.
  nlohmann::json at64 = Json({"plan", model, "--batch", "64", "--target", "cpu", "--json"});
  const uint64_t memory =
      (at64["required_range_bytes"]["low"].get<uint64_t>() + at64["required_range_bytes"]["high"].get<uint64_t>()) / 2;
  const std::vector<std::string> fit_args = {"fit", model, "--memory", std::to_string(memory), "--margin", "0",
                                             "--target", "cpu", "--json"};
  nlohmann::json fit = Json(fit_args);
  EXPECT_EQ(fit["max_batch_range"]["low"], fit["max_batch"]);
  EXPECT_LT(fit["max_batch"].get<int64_t>(), 64);
  EXPECT_GE(fit["max_batch_range"]["high"].get<int64_t>(), 64);
  EXPECT_TRUE(fit["inplace"]["unsure"].get<bool>());
  std::vector<std::string> sure_args = fit_args;
  sure_args.insert(sure_args.end(), {"--inplace", "all"});
  EXPECT_EQ(Json(sure_args)["max_batch"], fit["max_batch_range"]["high"]);
  nlohmann::json split = Json({"split", model, "--global-batch", "64", "--gpus", "2", "--memory", "1GiB",
                               "--target", "cpu", "--json"});
  EXPECT_TRUE(split["inplace"]["unsure"].get<bool>());
  ASSERT_EQ(split["per_gpu"].size(), 2u);
  for (const auto& g : split["per_gpu"]) {
    EXPECT_EQ(g["peak_bytes_range"]["high"], g["peak_bytes"]);
    EXPECT_EQ(g["peak_bytes"].get<uint64_t>() - g["peak_bytes_range"]["low"].get<uint64_t>(),
              g["batch"].get<uint64_t>() * 4096 * 4);
  }
  std::remove(model.c_str());
}

TEST(InplaceCli, BadHintsAreOneLineUsageErrors) {
  auto bad = [](std::vector<std::string> extra, const std::string& line) {
    std::vector<std::string> args = {"plan", "resnet18", "--batch", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = oomguard::testing::RunCli(kExe, args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, line + "\n");
  };
  bad({"--inplace", "a,,b"}, "oomguard plan: --inplace: an empty node name in 'a,,b'");
  bad({"--inplace", "all,x"}, "oomguard plan: --inplace all and --inplace none stand alone");
  bad({"--inplace", "/no/Relu"}, "oomguard plan: in-place hint: the model has no node named '/no/Relu'");
}

// oomguard.export names the module's registered float buffers (metadata "oomguard.buffers"): a weight
// mask multiplied into a convolution's weight in forward (PixelCNN) is stored like a parameter, but torch
// gives it no gradient and Adam no state. Without the names the plan counts it as a parameter (here named
// "keep": a buffer named "mask" the planner takes for one by its name, fixed_tables.h).
TEST(BuffersMetadata, NamedBuffersGetNoGradientAndNoOptimizerState) {
  GraphBuilder g;
  g.Input("input", {4, 6, 6}).Weight("conv.weight", {8, 4, 3, 3}).Weight("conv.keep", {8, 4, 3, 3});
  g.Weight("head.weight", {3, 8 * 6 * 6});
  g.Node("Mul", {"conv.weight", "conv.keep"}, {"w"}, "/conv/Mul");
  GraphBuilder::IntsAttr(g.Node("Conv", {"input", "w"}, {"y"}, "/conv/Conv"), "pads", {1, 1, 1, 1});
  GraphBuilder::IntAttr(g.Node("Flatten", {"y"}, {"f"}, "flatten"), "axis", 1);
  GraphBuilder::IntAttr(g.Node("Gemm", {"f", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  const std::string plain = g.Bytes();
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(plain));
  auto* e = m.add_metadata_props();
  e->set_key(std::string(kBuffersMetadataKey));
  e->set_value("[\"conv.keep\", \"no.such.tensor\"]");
  const std::string named = m.SerializeAsString();
  PlanOptions o = Cpu(2);
  o.optimizer = Optimizer::kAdam;
  auto without = Plan(plain, o);
  auto with = Plan(named, o);
  ASSERT_TRUE(without.ok() && with.ok());
  const uint64_t mask = 8 * 4 * 3 * 3;
  EXPECT_EQ(without->parameter_count - with->parameter_count, mask);
  EXPECT_EQ(without->bytes.optimizer_state - with->bytes.optimizer_state, 2 * mask * 4 + 4);  // and its step
  EXPECT_LT(with->peak_allocated_bytes, without->peak_allocated_bytes);
  EXPECT_TRUE(with->warnings.empty()) << with->warnings[0];
  // A value that is not a list of names is ignored with a warning.
  e->set_value("{\"conv.keep\": 1}");
  auto bad = Plan(m.SerializeAsString(), o);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->parameter_count, without->parameter_count);
  ASSERT_FALSE(bad->warnings.empty());
  EXPECT_NE(bad->warnings[0].find("oomguard.buffers"), std::string::npos);
}

// Parameters with requires_grad=False (a frozen stem, LoRA's base weights): oomguard.export names them in
// metadata "oomguard.frozen", or --frozen names them (plan::FreezeParameters, names or `*` globs). Either
// way they are planned as buffers: no gradient, no optimizer state, and nothing before the first trained
// weight needs a gradient, so nothing there is kept for backward. Without the names the plan gives the
// stem a gradient and Adam's two moments.
std::string FrozenStemNet() {
  GraphBuilder g;
  g.Input("input", {4, 6, 6}).Weight("stem.weight", {8, 4, 3, 3}).Weight("stem.bias", {8});
  g.Weight("head.weight", {3, 8 * 6 * 6});
  GraphBuilder::IntsAttr(g.Node("Conv", {"input", "stem.weight", "stem.bias"}, {"y"}, "/stem/Conv"), "pads",
                         {1, 1, 1, 1});
  g.Node("Sigmoid", {"y"}, {"s"}, "/act/Sigmoid");
  g.Node("Mul", {"s", "s"}, {"q"}, "square");
  GraphBuilder::IntAttr(g.Node("Flatten", {"q"}, {"f"}, "flatten"), "axis", 1);
  GraphBuilder::IntAttr(g.Node("Gemm", {"f", "head.weight"}, {"logits"}, "head"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

TEST(FrozenParameters, GetNoGradientNoOptimizerStateAndNothingBeforeThemIsKept) {
  const std::string plain = FrozenStemNet();
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(plain));
  auto* e = m.add_metadata_props();
  e->set_key(std::string(kFrozenMetadataKey));
  e->set_value("[\"stem.weight\", \"stem.bias\", \"no.such.tensor\"]");
  const std::string named = m.SerializeAsString();
  PlanOptions o = Cpu(2);
  o.optimizer = Optimizer::kAdam;
  auto without = Plan(plain, o);
  auto with = Plan(named, o);
  ASSERT_TRUE(without.ok() && with.ok());
  const uint64_t stem = 8 * 4 * 3 * 3 + 8;
  EXPECT_EQ(without->frozen_parameter_count, 0u);
  EXPECT_EQ(with->frozen_parameter_count, stem);
  EXPECT_EQ(without->parameter_count - with->parameter_count, stem);
  // Adam's two moments per element and a step per tensor.
  EXPECT_EQ(without->bytes.optimizer_state - with->bytes.optimizer_state, 2 * stem * 4 + 2 * 4);
  // The sigmoid keeps its output for its own backward only where the stem needs a gradient; the square
  // keeps its input either way.
  const uint64_t map = 2 * 8 * 6 * 6 * 4;
  EXPECT_EQ(without->bytes.activations_saved - with->bytes.activations_saved, map);
  EXPECT_LT(with->peak_allocated_bytes, without->peak_allocated_bytes);
  EXPECT_TRUE(with->warnings.empty()) << with->warnings[0];

  // --frozen's route: names and globs, on the plain export, plan exactly as the metadata.
  auto model = LoadModelFromBytes(plain, "test");
  ASSERT_TRUE(model.ok());
  for (const std::vector<std::string>& patterns :
       {std::vector<std::string>{"stem.*"}, {"stem.weight", "stem.bias"}, {"*m.w*", "*.bias"}}) {
    auto frozen = FreezeParameters(**model, patterns);
    ASSERT_TRUE(frozen.ok()) << frozen.error();
    auto p = PlanStep(**frozen, o);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->frozen_parameter_count, stem) << patterns[0];
    EXPECT_EQ(p->peak_allocated_bytes, with->peak_allocated_bytes) << patterns[0];
    EXPECT_EQ(p->bytes, with->bytes) << patterns[0];
  }
  // The flag adds to the metadata; freezing a frozen initializer again changes nothing.
  auto named_model = LoadModelFromBytes(named, "test");
  ASSERT_TRUE(named_model.ok());
  auto again = FreezeParameters(**named_model, {"stem.bias"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(PlanStep(**again, o)->bytes, with->bytes);
  // A pattern that matches no initializer is an error, not a silent plan of the wrong thing.
  auto typo = FreezeParameters(**model, {"stem.*", "backbone.*"});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error(),
            "--frozen 'backbone.*' matches no initializer of the model (its parameters are named like 'stem.weight')");
  // A value that is not a list of names is ignored with a warning.
  e->set_value("\"stem.weight\"");
  auto bad = Plan(m.SerializeAsString(), o);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->parameter_count, without->parameter_count);
  ASSERT_FALSE(bad->warnings.empty());
  EXPECT_NE(bad->warnings[0].find("oomguard.frozen"), std::string::npos);
}

// Code under torch.no_grad() or .detach()ed (oomguard.export's "oomguard.no_grad" / "oomguard.detached",
// JSON lists of node names): the stem under no_grad keeps nothing for backward and its weights get no
// gradient and no optimizer state. Names that are no node, and values that are no list, are warnings.
TEST(GradModeMetadata, NamesNodesAndWarnsAboutTheRest) {
  const std::string plain = FrozenStemNet();
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(plain));
  auto* e = m.add_metadata_props();
  e->set_key(std::string(kNoGradMetadataKey));
  e->set_value("[\"/stem/Conv\", \"/act/Sigmoid\", \"/no/such/Node\"]");
  PlanOptions o;
  o.target = Target::kCpu;
  o.batch = 2;
  o.optimizer = Optimizer::kAdam;
  auto without = Plan(plain, o);
  auto with = Plan(m.SerializeAsString(), o);
  ASSERT_TRUE(without.ok() && with.ok());
  const uint64_t stem = 8 * 4 * 3 * 3 + 8;
  EXPECT_EQ(with->no_grad_parameter_count, stem);
  EXPECT_EQ(with->parameter_count, without->parameter_count - stem);
  EXPECT_EQ(with->no_grad_nodes, 2u);
  EXPECT_EQ(with->grad_mode_hint, "metadata");
  // The conv's and the sigmoid's saved tensors are gone; the square of s is recorded no more either.
  EXPECT_LT(with->bytes.activations_saved, without->bytes.activations_saved);
  ASSERT_EQ(with->warnings.size(), 1u);
  EXPECT_EQ(with->warnings[0], "metadata oomguard.no_grad names 1 node(s) this model does not have; ignored");
  e->set_key(std::string(kDetachedMetadataKey));
  e->set_value("\"/stem/Conv\"");
  auto bad = Plan(m.SerializeAsString(), o);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->detached_nodes, 0u);
  EXPECT_EQ(bad->bytes, without->bytes);
  ASSERT_FALSE(bad->warnings.empty());
  EXPECT_EQ(bad->warnings[0], "metadata oomguard.detached is not a JSON list of node names; ignored");
}

// An export with constant folding (torch.onnx.export's default) stores nn.Linear's transposed weight
// anew as "onnx::MatMul_N": --frozen names it by its module, as PyTorch does ("encoder.layer.0.fc1.weight",
// an nn.Sequential child's "layer1/layer1.0" read as "layer1.0").
TEST(FrozenParameters, WeightsTheExporterRenamedAreNamedByTheirModule) {
  GraphBuilder g;
  g.Input("input", {8}).Weight("onnx::MatMul_7", {8, 16}).Weight("onnx::MatMul_9", {16, 4});
  g.Weight("onnx::Mul_11", {16});
  g.Node("MatMul", {"input", "onnx::MatMul_7"}, {"h"}, "/encoder/layer.0/fc1/MatMul");
  g.Node("Mul", {"h", "onnx::Mul_11"}, {"hs"}, "/encoder/layer.0/Mul");
  g.Node("Relu", {"hs"}, {"r"}, "/encoder/layer.0/act/Relu");
  g.Node("MatMul", {"r", "onnx::MatMul_9"}, {"logits"}, "/head/head.1/MatMul");
  g.Output("logits");
  auto model = LoadModelFromBytes(g.Bytes(), "test");
  ASSERT_TRUE(model.ok()) << model.error();
  auto count = [&](const std::vector<std::string>& patterns) -> int64_t {
    auto frozen = FreezeParameters(**model, patterns);
    if (!frozen.ok()) return -1;
    return static_cast<int64_t>((*frozen)->frozen_parameter_count);
  };
  EXPECT_EQ(count({"encoder.*"}), 8 * 16);  // the weight; the Mul's renamed scale is no weight operand
  EXPECT_EQ(count({"encoder.layer.0.fc1.weight"}), 8 * 16);
  EXPECT_EQ(count({"head.1.weight"}), 16 * 4);
  EXPECT_EQ(count({"onnx::MatMul_*"}), 8 * 16 + 16 * 4);  // the stored names still work
  EXPECT_EQ(count({"head.head.1.weight"}), -1);
  EXPECT_EQ(count({"encoder.layer.0.weight"}), -1);
}

TEST(FrozenCli, BadPatternsAreOneLineUsageErrors) {
  auto bad = [](const std::string& command, std::vector<std::string> extra, const std::string& line) {
    std::vector<std::string> args = {command, "resnet18"};
    if (command == "plan") args.insert(args.end(), {"--batch", "2"});
    if (command == "fit") args.insert(args.end(), {"--memory", "4GiB"});
    if (command == "split") args.insert(args.end(), {"--global-batch", "8", "--gpus", "2", "--memory", "4GiB"});
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = oomguard::testing::RunCli(kExe, args);
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.out, "") << command;
    EXPECT_EQ(r.err, "oomguard " + command + ": " + line + "\n");
  };
  for (const std::string command : {"plan", "fit", "split"}) {
    bad(command, {"--frozen", "backbone.*"},
        "--frozen 'backbone.*' matches no initializer of the model (its parameters are named like 'conv1.weight')");
    bad(command, {"--frozen", "conv1.weight,,fc.*"}, "--frozen: an empty name in 'conv1.weight,,fc.*'");
  }
  std::string many = "a";
  for (int i = 0; i < 5000; ++i) many += ",a";
  bad("plan", {"--frozen", many}, "--frozen must name at most 4096 patterns");
}

TEST(FrozenCli, ReportsTheFrozenParametersInTextAndJson) {
  auto plain = oomguard::testing::RunCli(kExe, {"plan", "resnet18", "--batch", "2", "--target", "cpu", "--json"});
  auto frozen = oomguard::testing::RunCli(
      kExe, {"plan", "resnet18", "--batch", "2", "--target", "cpu", "--json", "--frozen", "conv1.*,layer1.*"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(frozen.exit_code, 0) << frozen.err;
  const auto a = nlohmann::json::parse(plain.out), b = nlohmann::json::parse(frozen.out);
  EXPECT_EQ(a["frozen_parameters"], 0);
  const uint64_t n = b["frozen_parameters"].get<uint64_t>();
  // conv1, layer1's four 64 x 64 x 3 x 3 convolutions and its four batch norms' affines (their running
  // statistics are buffers already).
  EXPECT_EQ(n, 9408u + 4u * 36864u + 4u * 128u);
  EXPECT_EQ(a["parameter_count"].get<uint64_t>() - b["parameter_count"].get<uint64_t>(), n);
  EXPECT_EQ(a["bytes"]["optimizer_state"].get<uint64_t>() - b["bytes"]["optimizer_state"].get<uint64_t>(),
            2 * 4 * n + 13 * 4);  // Adam's two moments, and a step for each of the 13 frozen tensors
  EXPECT_LT(b["peak_allocated_bytes"].get<uint64_t>(), a["peak_allocated_bytes"].get<uint64_t>());
  auto text = oomguard::testing::RunCli(kExe, {"plan", "resnet18", "--batch", "2", "--frozen", "conv1.*,layer1.*"});
  EXPECT_NE(text.out.find(" parameters trained, " + std::to_string(n) + " frozen"), std::string::npos) << text.out;
  // split's JSON carries the count too.
  auto split = oomguard::testing::RunCli(kExe, {"split", "resnet18", "--global-batch", "8", "--gpus", "2", "--memory",
                                                "6GiB", "--target", "cpu", "--json", "--frozen", "conv1.*,layer1.*"});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_EQ(nlohmann::json::parse(split.out)["frozen_parameters"].get<uint64_t>(), n);
  // ... and its text, and plan's HTML page.
  auto split_text = oomguard::testing::RunCli(kExe, {"split", "resnet18", "--global-batch", "8", "--gpus", "2", "--memory",
                                                     "6GiB", "--target", "cpu", "--frozen", "conv1.*,layer1.*"});
  EXPECT_NE(split_text.out.find(" parameters trained, " + std::to_string(n) + " frozen"), std::string::npos)
      << split_text.out;
  const std::string page = ::testing::TempDir() + "frozen_page.html";
  auto html = oomguard::testing::RunCli(
      kExe, {"plan", "resnet18", "--batch", "2", "--target", "cpu", "--frozen", "conv1.*,layer1.*", "--html", page});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  std::ifstream in(page);
  const std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(body.find("data-frozen-parameters=\"" + std::to_string(n) + "\""), std::string::npos);
  auto unfrozen = oomguard::testing::RunCli(kExe, {"plan", "resnet18", "--batch", "2", "--target", "cpu", "--html", page});
  ASSERT_EQ(unfrozen.exit_code, 0) << unfrozen.err;
  std::ifstream again(page);
  const std::string plain_body((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_EQ(plain_body.find("data-frozen-parameters"), std::string::npos);
}

// plan, fit and split of resnet18 with `flag` refuse it: exit 2, nothing on stdout, "oomguard COMMAND" + `why`.
void ExpectRefusedByEveryCommand(const std::vector<std::string>& flag, const std::string& why) {
  for (const std::string command : {"plan", "fit", "split"}) {
    std::vector<std::string> args = {command, "resnet18"};
    args.insert(args.end(), flag.begin(), flag.end());
    if (command == "plan") args.insert(args.end(), {"--batch", "2"});
    if (command == "fit") args.insert(args.end(), {"--memory", "4GiB"});
    if (command == "split") args.insert(args.end(), {"--global-batch", "8", "--gpus", "2", "--memory", "4GiB"});
    auto r = oomguard::testing::RunCli(kExe, args);
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.out, "") << command;
    EXPECT_EQ(r.err, "oomguard " + command + why);
  }
}

// Four residual MLP blocks (256 -> 1024 -> 256, ReLU) between a stem and a head, each block's nodes under
// "/blocks.K/" as torch.onnx.export names them.
std::string CheckpointBlocks() {
  GraphBuilder g;
  g.Input("input", {256}).Weight("stem", {256, 256}).Weight("head", {10, 256});
  GraphBuilder::IntAttr(g.Node("Gemm", {"input", "stem"}, {"x0"}, "/stem/Gemm"), "transB", 1);
  for (int k = 0; k < 4; ++k) {
    const std::string b = "/blocks." + std::to_string(k) + "/", n = std::to_string(k);
    g.Weight("w1_" + n, {1024, 256}).Weight("w2_" + n, {256, 1024});
    GraphBuilder::IntAttr(g.Node("Gemm", {"x" + n, "w1_" + n}, {"h" + n}, b + "fc1/Gemm"), "transB", 1);
    g.Node("Relu", {"h" + n}, {"r" + n}, b + "act/Relu");
    GraphBuilder::IntAttr(g.Node("Gemm", {"r" + n, "w2_" + n}, {"y" + n}, b + "fc2/Gemm"), "transB", 1);
    g.Node("Add", {"x" + n, "y" + n}, {"x" + std::to_string(k + 1)}, "/Add_" + n);
  }
  GraphBuilder::IntAttr(g.Node("Gemm", {"x4", "head"}, {"logits"}, "/head/Gemm"), "transB", 1);
  g.Output("logits");
  return g.Bytes();
}

// torch.utils.checkpoint (oomguard.export's "oomguard.checkpointed", --checkpointed): a checkpointed block keeps
// only its input through forward; what it saves (the ReLU's output, which fc2 and the ReLU's backward read) is
// recomputed when backward reaches the block and freed by its backward, so the peak moves into the recompute.
TEST(Checkpointed, SegmentsKeepTheirInputsAndRecomputeInBackward) {
  const std::string plain = CheckpointBlocks();
  PlanOptions o;
  o.target = Target::kCpu;
  o.batch = 2048;  // activations well above the weights and their gradients
  auto model = LoadModelFromBytes(plain, "blocks");
  ASSERT_TRUE(model.ok()) << model.error();
  auto marked = MarkCheckpointed(**model, {{"/blocks.0/*"}, {"/blocks.1/*"}, {"/blocks.2/*"}, {"/blocks.3/*"}});
  ASSERT_TRUE(marked.ok()) << marked.error();
  auto without = PlanStep(**model, o);
  auto with = PlanStep(**marked, o);
  ASSERT_TRUE(without.ok() && with.ok());
  EXPECT_EQ(with->checkpoint_hint, "option");
  EXPECT_EQ(with->checkpointed_segments, 4u);
  EXPECT_EQ(with->checkpointed_nodes, 12u);
  EXPECT_EQ(without->checkpoint_hint, "none");
  EXPECT_EQ(without->checkpointed_segments, 0u);
  const uint64_t act = 2048 * 1024 * 4;  // a block's ReLU output
  // Kept through forward: each block's input (the segment's), no ReLU output.
  EXPECT_EQ(without->bytes.activations_saved - with->bytes.activations_saved, 4 * act);
  EXPECT_EQ(with->bytes.weights, without->bytes.weights);
  // The plan without checkpointing holds four ReLU outputs into backward; with it, one recomputed at a time.
  EXPECT_LE(with->peak_allocated_bytes + 2 * act, without->peak_allocated_bytes);
  EXPECT_EQ(with->peak_phase, "backward");
  EXPECT_GE(with->at_peak.activations_saved, act);  // the recomputed block's ReLU output is live at the peak
  // The model's metadata says the same; a name that is no node is a warning, a value that is no list of lists
  // is ignored with one.
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(plain));
  auto* e = m.add_metadata_props();
  e->set_key(std::string(kCheckpointedMetadataKey));
  e->set_value(R"([["/blocks.0/fc1/Gemm", "/blocks.0/act/Relu", "/blocks.0/fc2/Gemm"],
                   ["/blocks.1/fc1/Gemm", "/blocks.1/act/Relu", "/blocks.1/fc2/Gemm"],
                   ["/blocks.2/fc1/Gemm", "/blocks.2/act/Relu", "/blocks.2/fc2/Gemm"],
                   ["/blocks.3/fc1/Gemm", "/blocks.3/act/Relu", "/blocks.3/fc2/Gemm", "/no/such/Node"]])");
  auto from_metadata = Plan(m.SerializeAsString(), o);
  ASSERT_TRUE(from_metadata.ok()) << from_metadata.error();
  EXPECT_EQ(from_metadata->checkpoint_hint, "metadata");
  EXPECT_EQ(from_metadata->checkpointed_segments, 4u);
  EXPECT_EQ(from_metadata->peak_allocated_bytes, with->peak_allocated_bytes);
  EXPECT_EQ(from_metadata->bytes, with->bytes);
  ASSERT_EQ(from_metadata->warnings.size(), 1u);
  EXPECT_EQ(from_metadata->warnings[0], "metadata oomguard.checkpointed names 1 node(s) this model does not have; ignored");
  for (const char* bad_value : {R"(["/blocks.0/fc1/Gemm"])", R"([[["/blocks.0/fc1/Gemm"]]])", R"({"a": 1})"}) {
    e->set_value(bad_value);
    auto bad = Plan(m.SerializeAsString(), o);
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->checkpointed_segments, 0u) << bad_value;
    EXPECT_EQ(bad->bytes, without->bytes) << bad_value;
    ASSERT_FALSE(bad->warnings.empty());
    EXPECT_EQ(bad->warnings[0], "metadata oomguard.checkpointed is not a JSON list of lists of node names; ignored");
  }
  // --checkpointed replaces the metadata's segments; a pattern that matches no node is an error.
  auto loaded = LoadModelFromBytes(m.SerializeAsString(), "blocks");
  ASSERT_TRUE(loaded.ok());
  auto one = MarkCheckpointed(**loaded, {{"/blocks.1/*"}});
  ASSERT_TRUE(one.ok()) << one.error();
  auto one_plan = PlanStep(**one, o);
  ASSERT_TRUE(one_plan.ok());
  EXPECT_EQ(one_plan->checkpointed_segments, 1u);
  EXPECT_EQ(without->bytes.activations_saved - one_plan->bytes.activations_saved, act);
  auto typo = MarkCheckpointed(**model, {{"/blocks.0/*"}, {"/block.1/*"}});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error(), "--checkpointed '/block.1/*' matches no node of the model (its nodes are named like "
                          "'/stem/Gemm'; '/layers.0/*' names every node of module layers.0)");
}

// The activation checkpointing what-if (plan/fit/split advice) on a model that checkpoints already: its own
// segments stay and the what-if adds none, so it saves nothing and the advice leaves it out. It used to replace
// them with its own sqrt(n) cut, and offered a user who checkpoints a block the saving of a cut they had not made
// (and one who checkpoints every block the cost of a coarser one).
TEST(Checkpointed, WhatIfKeepsTheModelsSegments) {
  PlanOptions o;
  o.target = Target::kCpu;
  o.batch = 2048;
  PlanOptions what_if = o;
  what_if.activation_checkpointing = true;
  auto model = LoadModelFromBytes(CheckpointBlocks(), "blocks");
  ASSERT_TRUE(model.ok()) << model.error();
  auto every = MarkCheckpointed(**model, {{"/blocks.0/*"}, {"/blocks.1/*"}, {"/blocks.2/*"}, {"/blocks.3/*"}});
  auto one = MarkCheckpointed(**model, {{"/blocks.1/*"}});
  ASSERT_TRUE(every.ok() && one.ok());
  auto plain_plan = PlanStep(**model, o), plain_what_if = PlanStep(**model, what_if);
  auto every_plan = PlanStep(**every, o), every_what_if = PlanStep(**every, what_if);
  auto one_plan = PlanStep(**one, o), one_what_if = PlanStep(**one, what_if);
  ASSERT_TRUE(plain_plan.ok() && plain_what_if.ok() && every_plan.ok() && every_what_if.ok() && one_plan.ok() &&
              one_what_if.ok());
  // The model's segments are followed in the what-if too, and it adds none.
  EXPECT_EQ(every_what_if->checkpointed_segments, 4u);
  EXPECT_EQ(one_what_if->checkpointed_segments, 1u);
  EXPECT_EQ(every_what_if->bytes, every_plan->bytes);
  EXPECT_EQ(every_what_if->required_bytes, every_plan->required_bytes);
  EXPECT_EQ(one_what_if->bytes, one_plan->bytes);
  EXPECT_EQ(one_what_if->required_bytes, one_plan->required_bytes);
  // A plain model's what-if cuts it as before.
  EXPECT_EQ(plain_what_if->checkpointed_segments, 0u);
  EXPECT_LT(plain_what_if->required_bytes, plain_plan->required_bytes);
  // In the advice: offered for plain resnet18, left out once layer1 is checkpointed (it was "saves 5.84 MiB").
  auto advice = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"plan", "resnet18", "--batch", "2", "--target", "cpu", "--memory", "100MiB", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = oomguard::testing::RunCli(kExe, args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    std::set<std::string> actions;
    for (const auto& a : j["advice"]) actions.insert(a["action"].get<std::string>());
    return actions;
  };
  EXPECT_EQ(advice({}).count("activation_checkpointing"), 1u);
  const std::set<std::string> checkpointed = advice({"--checkpointed", "/layer1/*"});
  EXPECT_EQ(checkpointed.count("activation_checkpointing"), 0u);
  EXPECT_EQ(checkpointed.count("amp"), 1u);
}

// --checkpointed: one segment per option or per ';'; a typo is a usage error (exit 2); the plan says in text and
// JSON ("checkpointed") what it followed.
TEST(CheckpointedCli, PatternsReportsAndErrors) {
  ExpectRefusedByEveryCommand({"--checkpointed", "/layer1/*;/teacher/*"},
                              ": --checkpointed '/teacher/*' matches no node of the model (its nodes are named like "
                              "'/conv1/Conv'; '/layers.0/*' names every node of module layers.0)\n");
  auto empty = oomguard::testing::RunCli(kExe, {"plan", "resnet18", "--batch", "2", "--checkpointed", "/layer1/*;"});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "oomguard plan: --checkpointed: an empty node in ''\n");
  auto plain = oomguard::testing::RunCli(kExe, {"plan", "resnet18", "--batch", "8", "--target", "cpu", "--json"});
  auto marked = oomguard::testing::RunCli(kExe, {"plan", "resnet18", "--batch", "8", "--target", "cpu", "--json",
                                                 "--checkpointed", "/layer1/*;/layer2/*", "--checkpointed", "/layer3/*"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(marked.exit_code, 0) << marked.err;
  const auto a = nlohmann::json::parse(plain.out), b = nlohmann::json::parse(marked.out);
  EXPECT_EQ(a["checkpointed"], nlohmann::json({{"hint", "none"}, {"segments", 0}, {"nodes", 0}}));
  EXPECT_EQ(b["checkpointed"]["hint"], "option");
  EXPECT_EQ(b["checkpointed"]["segments"], 3);
  EXPECT_LT(b["bytes"]["activations_saved"].get<uint64_t>(), a["bytes"]["activations_saved"].get<uint64_t>());
  EXPECT_LT(b["peak_allocated_bytes"].get<uint64_t>(), a["peak_allocated_bytes"].get<uint64_t>());
  auto text = oomguard::testing::RunCli(kExe, {"plan", "resnet18", "--batch", "2", "--checkpointed", "/layer1/*"});
  EXPECT_NE(text.out.find("Planned with 1 torch.utils.checkpoint segment ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" nodes, from --checkpointed): they keep only their inputs through forward and recompute "
                          "the rest in backward\n"),
            std::string::npos)
      << text.out;
  auto split = oomguard::testing::RunCli(kExe, {"split", "resnet18", "--global-batch", "8", "--gpus", "2", "--memory",
                                                "6GiB", "--target", "cpu", "--json", "--checkpointed", "/layer1/*"});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_EQ(nlohmann::json::parse(split.out)["checkpointed"]["segments"], 1);
}

// --no-grad / --detached: node globs; a typo is a one-line usage error (exit 2), and the plan says in text
// and JSON what it planned so ("grad_mode").
TEST(GradModeCli, PatternsReportsAndErrors) {
  ExpectRefusedByEveryCommand({"--no-grad", "/teacher/*"},
                              ": --no-grad '/teacher/*' matches no node of the model (its nodes are named like "
                              "'/conv1/Conv'; '/teacher/*' names every node of module teacher)\n");
  auto empty = oomguard::testing::RunCli(kExe, {"plan", "resnet18", "--batch", "2", "--detached", "/conv1/*,"});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "oomguard plan: --detached: an empty node in '/conv1/*,'\n");
  auto plain = oomguard::testing::RunCli(kExe, {"plan", "resnet18", "--batch", "2", "--target", "cpu", "--json"});
  auto marked = oomguard::testing::RunCli(
      kExe, {"plan", "resnet18", "--batch", "2", "--target", "cpu", "--json", "--no-grad", "/conv1/*,/bn1/*"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(marked.exit_code, 0) << marked.err;
  const auto a = nlohmann::json::parse(plain.out), b = nlohmann::json::parse(marked.out);
  EXPECT_EQ(a["grad_mode"], nlohmann::json({{"hint", "none"}, {"no_grad_nodes", 0}, {"detached_nodes", 0},
                                            {"no_grad_parameters", 0}}));
  EXPECT_EQ(b["grad_mode"]["hint"], "option");
  EXPECT_EQ(b["grad_mode"]["no_grad_nodes"], 2);
  EXPECT_EQ(b["grad_mode"]["no_grad_parameters"], 9408 + 128);  // conv1's weight, bn1's affine
  EXPECT_EQ(a["parameter_count"].get<uint64_t>() - b["parameter_count"].get<uint64_t>(), 9408u + 128u);
  EXPECT_LT(b["bytes"]["activations_saved"].get<uint64_t>(), a["bytes"]["activations_saved"].get<uint64_t>());
  auto text = oomguard::testing::RunCli(kExe, {"plan", "resnet18", "--batch", "2", "--no-grad", "/conv1/*,/bn1/*"});
  EXPECT_NE(text.out.find("2 nodes planned under torch.no_grad() and 0 as .detach()ed (from --no-grad / --detached); "
                          "9536 parameters read only there get no gradient and no optimizer state\n"),
            std::string::npos)
      << text.out;
  auto split = oomguard::testing::RunCli(kExe, {"split", "resnet18", "--global-batch", "8", "--gpus", "2", "--memory",
                                                "6GiB", "--target", "cpu", "--json", "--detached", "/conv1/*"});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_EQ(nlohmann::json::parse(split.out)["grad_mode"]["detached_nodes"], 1);
}

}  // namespace
}  // namespace oomguard::plan
