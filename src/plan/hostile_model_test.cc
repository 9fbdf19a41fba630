// The importer against hostile and misleading files, end to end through the
// CLI: malformed attributes, endless inputs, overflowing shapes, absurd
// numbers on the command line; and the honesty contract (uncovered operators,
// eval-mode exports, --strict). Each would crash, hang or mislead without its fix.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "oomguard/plan/planner.h"
#include "run_cli_for_test.h"
#include "test_graphs.h"

namespace oomguard::plan {
namespace {

using oomguard::testing::RunCli;
using testing::GraphBuilder;

const std::string kExe = OOMGUARD_EXE;
const std::string kData = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/plan/";

std::string TempModel(const std::string& name, const std::string& bytes) {
  std::string path = "/tmp/oomguard_hostile_" + std::to_string(getpid()) + "_" + name + ".onnx";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// input[B,3,8,8] -> Conv(4, 3x3) with the attributes `set` adds -> y
std::string ConvModel(const std::function<void(onnx::NodeProto&)>& set, const std::string& op = "Conv") {
  GraphBuilder g;
  g.Input("input", {3, 8, 8});
  std::vector<std::string> inputs = {"input"};
  if (op == "Conv") {
    g.Weight("w", {4, 3, 3, 3});
    inputs.push_back("w");
  }
  onnx::NodeProto& n = g.Node(op, inputs, {"y"}, "layer");
  GraphBuilder::IntsAttr(n, "kernel_shape", {3, 3});
  set(n);
  g.Output("y");
  return g.Bytes();
}

void StringAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// Runs `oomguard plan FILE --batch 2 --json` and expects exit 2 with one line naming `what`.
void ExpectRefused(const std::string& bytes, const std::string& what) {
  std::string path = TempModel("refused", bytes);
  auto r = RunCli(kExe, {"plan", path, "--batch", "2", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("oomguard plan: " + path + ": malformed ONNX model (", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::remove(path.c_str());
}

TEST(HostileModel, ZeroStridesAreRefusedBeforeShapeInference) {
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { GraphBuilder::IntsAttr(n, "strides", {0, 0}); }),
                "node 'layer' (Conv): strides must be at least 1, got [0, 0]");
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { GraphBuilder::IntsAttr(n, "strides", {0, 0}); }, "MaxPool"),
                "node 'layer' (MaxPool): strides must be at least 1, got [0, 0]");
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { GraphBuilder::IntsAttr(n, "strides", {0, 0}); }, "AveragePool"),
                "strides must be at least 1");
}

// Found by the fuzzer: an attribute whose type field is missing (or a value
// this ONNX does not know) is still read by libonnx's shape inference, where
// strides of 0 divide by zero. The importer reads its type from its values.
TEST(HostileModel, UntypedZeroStridesAreRefusedToo) {
  auto untyped = [](onnx::NodeProto& n) {
    GraphBuilder::IntsAttr(n, "strides", {0, 0});
    n.mutable_attribute(n.attribute_size() - 1)->clear_type();
  };
  ExpectRefused(ConvModel(untyped, "MaxPool"), "node 'layer' (MaxPool): strides must be at least 1, got [0, 0]");
  ExpectRefused(ConvModel(untyped), "node 'layer' (Conv): strides must be at least 1, got [0, 0]");
}

// Found by the fuzzer too (CI, 2026-12-07): strides [0, 0] whose type field says SPARSE_TENSOR; libonnx
// reads the values whatever the type, so the importer's checks do. A group of 0 given the same way.
TEST(HostileModel, MistypedZeroStridesAndGroupsAreRefused) {
  auto mistyped = [](onnx::NodeProto& n) {
    GraphBuilder::IntsAttr(n, "strides", {0, 0});
    n.mutable_attribute(n.attribute_size() - 1)->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  };
  ExpectRefused(ConvModel(mistyped), "node 'layer' (Conv): strides must be at least 1, got [0, 0]");
  ExpectRefused(ConvModel(mistyped, "MaxPool"), "node 'layer' (MaxPool): strides must be at least 1, got [0, 0]");
  auto mistyped_group = [](onnx::NodeProto& n) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name("group");
    a->set_i(0);
    a->set_type(onnx::AttributeProto::FLOATS);
  };
  ExpectRefused(ConvModel(mistyped_group), "node 'layer' (Conv): group must be at least 1, got 0");
}

// Found by the fuzzer (2026-12-07, a longer run than CI's): a Flatten with no inputs was indexed past
// its ends by the memory rules (SEGV under ASan). A node with fewer inputs or outputs than its schema
// requires, or with no operator type, is refused with one line.
TEST(HostileModel, NodesMissingRequiredInputsAreRefused) {
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { n.clear_input(); }), "node 'layer' (Conv) has 0 inputs and 1 outputs");
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { n.clear_input(); }, "MaxPool"),
                "node 'layer' (MaxPool) has 0 inputs and 1 outputs");
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { n.clear_op_type(); }), "a node has no operator type");
}

TEST(HostileModel, SameUpperConvPlansWithTheInputsSpatialSize) {
  std::string path = TempModel("same_upper", ConvModel([](onnx::NodeProto& n) { StringAttr(n, "auto_pad", "SAME_UPPER"); }));
  auto r = RunCli(kExe, {"plan", path, "--batch", "2", "--target", "cpu", "--loss", "none", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["layers"][0]["output_shape"], nlohmann::json::parse("[2, 4, 8, 8]"));
  std::remove(path.c_str());
}

TEST(HostileModel, MalformedAttributesAreRefused) {
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { GraphBuilder::IntAttr(n, "group", 0); }),
                "group must be at least 1, got 0");
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { GraphBuilder::IntAttr(n, "group", -3); }),
                "group must be at least 1, got -3");
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { GraphBuilder::IntsAttr(n, "dilations", {-1, -1}); }),
                "dilations must be at least 1, got [-1, -1]");
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { GraphBuilder::IntsAttr(n, "pads", {-1, 0, 0, 0}); }),
                "pads must not be negative");
  ExpectRefused(ConvModel([](onnx::NodeProto& n) { StringAttr(n, "auto_pad", "SIDEWAYS"); }),
                "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got 'SIDEWAYS'");
  GraphBuilder t;
  t.Input("input", {3, 4});
  GraphBuilder::IntsAttr(t.Node("Transpose", {"input"}, {"y"}, "tr"), "perm", {0, 0, 1});
  t.Output("y");
  ExpectRefused(t.Bytes(), "node 'tr' (Transpose): perm must be a permutation of 0..2, got [0, 0, 1]");
}

TEST(HostileModel, AbsurdOpsetIsRefused) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(ConvModel([](onnx::NodeProto&) {})));
  m.mutable_opset_import(0)->set_version(int64_t{1} << 62);
  ExpectRefused(m.SerializeAsString(), "opset 4611686018427387904 is not an ONNX opset");
}

// A model path that never ends must be refused before it is read.
void ExpectNotARegularFile(const std::string& path) {
  auto start = std::chrono::steady_clock::now();
  auto r = RunCli(kExe, {"plan", path, "--batch", "2"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "oomguard plan: " + path + ": not a regular file (a device, FIFO or socket); give an .onnx file\n");
  EXPECT_LT(seconds, 10.0);
}

TEST(HostileModel, DevicesAndFifosAreNotRead) {
  ExpectNotARegularFile("/dev/zero");
  ExpectNotARegularFile("/dev/urandom");
  std::string fifo = "/tmp/oomguard_hostile_fifo_" + std::to_string(getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ExpectNotARegularFile(fifo);  // without the fix: blocks forever waiting for a writer
  std::remove(fifo.c_str());
}

// If nodes nested `depth` deep, each then-branch holding the next level (the innermost a Relu of
// the input), each else-branch an Identity: a file that grows linearly with the depth.
std::string NestedIfModel(int depth) {
  auto value = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  };
  onnx::GraphProto inner;
  inner.set_name("level0");
  auto* relu = inner.add_node();
  relu->set_op_type("Relu");
  relu->add_input("input");
  relu->add_output("y0");
  value(inner.add_output(), "y0");
  for (int level = 1; level <= depth; ++level) {
    const std::string n = std::to_string(level);
    onnx::GraphProto outer;
    outer.set_name("level" + n);
    auto* cond = outer.add_node();
    cond->set_op_type("Constant");
    cond->add_output("c" + n);
    auto* v = cond->add_attribute();
    v->set_name("value");
    v->set_type(onnx::AttributeProto::TENSOR);
    v->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
    v->mutable_t()->add_int32_data(1);
    auto* node = outer.add_node();
    node->set_op_type("If");
    node->set_name("if" + n);
    node->add_input("c" + n);
    node->add_output("y" + n);
    auto* then_branch = node->add_attribute();
    then_branch->set_name("then_branch");
    then_branch->set_type(onnx::AttributeProto::GRAPH);
    *then_branch->mutable_g() = std::move(inner);
    auto* else_branch = node->add_attribute();
    else_branch->set_name("else_branch");
    else_branch->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* e = else_branch->mutable_g();
    e->set_name("else" + n);
    auto* id = e->add_node();
    id->set_op_type("Identity");
    id->add_input("input");
    id->add_output("e" + n);
    value(e->add_output(), "e" + n);
    value(outer.add_output(), "y" + n);
    inner = std::move(outer);
  }
  GraphBuilder g;
  g.Input("input", {8});
  onnx::ModelProto m;
  m.ParseFromString(g.Bytes());
  onnx::GraphProto* top = m.mutable_graph();
  for (const onnx::NodeProto& node : inner.node()) *top->add_node() = node;
  *top->add_output() = inner.output(0);
  return m.SerializeAsString();
}

// Control flow nested deeper than any exporter writes is refused in one line, quickly and in
// bounded memory (protobuf's nesting limit), never a stack overflow; nesting a model can have plans.
TEST(HostileModel, DeeplyNestedControlFlowIsRefusedNotACrash) {
  for (int depth : {20, 200, 5000}) {
    SCOPED_TRACE(depth);
    std::string path = TempModel("nested_if", NestedIfModel(depth));
    const auto start = std::chrono::steady_clock::now();
    auto r = RunCli(kExe, {"plan", path, "--batch", "2", "--target", "cpu", "--json"});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    if (depth == 20) {
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_GT(nlohmann::json::parse(r.out)["peak_allocated_bytes"].get<uint64_t>(), 0u);
    } else {
      EXPECT_EQ(r.exit_code, 2) << r.out;
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_NE(r.err.find(depth == 200 ? "nested deeper than the 100 levels" : "not an ONNX model"), std::string::npos)
          << r.err;
    }
    std::remove(path.c_str());
  }
}

TEST(HostileModel, DimensionOverflowIsAnErrorNotZeroBytes) {
  // Reshape to [1, 2^41]: more than any device holds; must not plan as 0 bytes.
  GraphBuilder g;
  g.Input("input", {4});
  g.Constant("shape", {1, int64_t{1} << 41}, {2});
  g.Node("Reshape", {"input", "shape"}, {"y"}, "reshape");
  g.Node("Relu", {"y"}, {"z"}, "relu");
  g.Output("z");
  std::string path = TempModel("overflow", g.Bytes());
  auto r = RunCli(kExe, {"plan", path, "--batch", "1", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("too large to plan"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::remove(path.c_str());
}

TEST(HostileModel, HugeNumbersOnTheCommandLineAreClampedAndQuoted) {
  auto fit = RunCli(kExe, {"fit", "resnet18", "--memory", "18446744073709551615", "--max-batch",
                           "9223372036854775807", "--target", "cpu"});
  EXPECT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_EQ(fit.err.find("absurdly"), std::string::npos) << fit.err;
  EXPECT_NE(fit.out.find("--max-batch 9223372036854775807 clamped to 2147483648"), std::string::npos) << fit.out;
  auto split = RunCli(kExe, {"split", "resnet18", "--global-batch", "9223372036854775807", "--gpus", "2", "--gpu",
                             "t4", "--json"});
  EXPECT_EQ(split.exit_code, 1) << split.err;  // does not fit, but an honest answer
  auto j = nlohmann::json::parse(split.out);
  EXPECT_EQ(j["global_batch"], 4294967296);
  EXPECT_GT(j["even_split"]["batch"].get<int64_t>(), 0);
  EXPECT_NE(j["warnings"].dump().find("--global-batch 9223372036854775807 clamped to 4294967296"), std::string::npos)
      << j["warnings"];
}

// input x scale -> Relu -> com.example.Mystery -> Relu -> y: the middle operator has no rule.
std::string UncoveredModel() {
  GraphBuilder g;
  g.Input("input", {256}).Weight("scale", {256});
  g.Node("Mul", {"input", "scale"}, {"s"}, "scale");  // a gradient flows from here on
  g.Node("Relu", {"s"}, {"a"}, "relu1");
  g.Node("Mystery", {"a"}, {"b"}, "mystery").set_domain("com.example");
  g.Node("Relu", {"b"}, {"y"}, "relu2");
  g.Output("y");
  // The exporter's recorded shape of the custom operator's output (ONNX cannot infer it).
  onnx::ModelProto m;
  m.ParseFromString(g.Bytes());
  auto* opset = m.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  auto* vi = m.mutable_graph()->add_value_info();
  vi->set_name("b");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_value(256);
  return m.SerializeAsString();
}

TEST(Uncovered, PlanListsOperatorsWithoutARuleAndTheirBytes) {
  auto model = LoadModelFromBytes(UncoveredModel(), "m");
  ASSERT_TRUE(model.ok()) << model.error();
  PlanOptions o;
  o.batch = 4;
  o.target = Target::kCpu;
  auto p = PlanStep(**model, o);
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_EQ(p->uncovered.size(), 1u);
  EXPECT_EQ(p->uncovered[0].op, "com.example.Mystery");
  EXPECT_EQ(p->uncovered[0].nodes, 1);
  // Its input and output, [4,256] fp32 each, are assumed kept for backward.
  EXPECT_EQ(p->uncovered[0].bytes_at_risk, 2u * 4 * 256 * 4);

  std::string path = TempModel("uncovered", UncoveredModel());
  auto r = RunCli(kExe, {"plan", path, "--batch", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("UNCOVERED: 1 operator type without a memory rule (com.example.Mystery ×1)", 0), 0u) << r.out;
  auto j = nlohmann::json::parse(RunCli(kExe, {"plan", path, "--batch", "4", "--json"}).out);
  ASSERT_EQ(j["uncovered"].size(), 1u);
  EXPECT_EQ(j["uncovered"][0]["op"], "com.example.Mystery");
  EXPECT_EQ(j["uncovered"][0]["nodes"], 1);
  EXPECT_TRUE(j["uncovered"][0]["bytes_at_risk"].is_number_unsigned());
  auto fit = nlohmann::json::parse(RunCli(kExe, {"fit", path, "--memory", "1GiB", "--json"}).out);
  EXPECT_EQ(fit["uncovered"].size(), 1u);
  auto split = nlohmann::json::parse(
      RunCli(kExe, {"split", path, "--global-batch", "8", "--gpus", "2", "--memory", "1GiB", "--json"}).out);
  EXPECT_EQ(split["uncovered"].size(), 1u);
  auto strict = RunCli(kExe, {"plan", path, "--batch", "4", "--strict"});
  EXPECT_EQ(strict.exit_code, 2);
  EXPECT_NE(strict.err.find("--strict: no memory rule for operator com.example.Mystery"), std::string::npos)
      << strict.err;
  std::remove(path.c_str());
}

// A normalization written with mean/var over dim 1: the export merges x - mean written twice, the
// plan counts two copies, and plan, fit and split list what one copy less would save as data.
TEST(Risks, WarningsWithBytesAreListedInJson) {
  GraphBuilder g;
  g.Input("input", {4, 6}).Weight("pre.weight", {6}).FloatConstant("two", 2.0f).FloatConstant("eps", 1e-6f);
  g.Node("Mul", {"input", "pre.weight"}, {"x"}, "pre");
  auto& mean = g.Node("ReduceMean", {"x"}, {"u"}, "mean");
  GraphBuilder::IntsAttr(mean, "axes", {1});
  GraphBuilder::IntAttr(mean, "keepdims", 1);
  g.Node("Sub", {"x", "u"}, {"d"}, "sub");
  g.Node("Pow", {"d", "two"}, {"d2"}, "pow");
  auto& var = g.Node("ReduceMean", {"d2"}, {"v"}, "var");
  GraphBuilder::IntsAttr(var, "axes", {1});
  GraphBuilder::IntAttr(var, "keepdims", 1);
  g.Node("Add", {"v", "eps"}, {"ve"}, "add_eps");
  g.Node("Sqrt", {"ve"}, {"s"}, "sqrt");
  g.Node("Div", {"d", "s"}, {"y"}, "div");
  auto& pool = g.Node("ReduceMean", {"y"}, {"logits"}, "pool");
  GraphBuilder::IntsAttr(pool, "axes", {1});
  GraphBuilder::IntAttr(pool, "keepdims", 0);
  g.Output("logits");
  std::string path = TempModel("risks", g.Bytes());
  auto j = nlohmann::json::parse(RunCli(kExe, {"plan", path, "--batch", "2", "--target", "cpu", "--json"}).out);
  ASSERT_EQ(j["risks"].size(), 1u) << j["risks"];
  EXPECT_EQ(j["risks"][0]["what"], "mean_centred_once");
  EXPECT_EQ(j["risks"][0]["bytes"], 2u * 4 * 6 * 4);  // the second copy of x - mean, [2, 4, 6] floats
  EXPECT_EQ(j["risks"][0]["direction"], "lower");
  auto fit = nlohmann::json::parse(RunCli(kExe, {"fit", path, "--memory", "1GiB", "--target", "cpu", "--json"}).out);
  EXPECT_EQ(fit["risks"].size(), 1u) << fit["risks"];
  auto split = nlohmann::json::parse(RunCli(
      kExe, {"split", path, "--global-batch", "8", "--gpus", "2", "--memory", "1GiB", "--json"}).out);
  EXPECT_EQ(split["risks"].size(), 1u) << split["risks"];
  std::remove(path.c_str());
}

TEST(Uncovered, ZooModelsAreFullyCovered) {
  for (const char* name : {"resnet50", "bert_base"}) {
    auto j = nlohmann::json::parse(RunCli(kExe, {"plan", name, "--batch", "2", "--json"}).out);
    EXPECT_TRUE(j["uncovered"].empty()) << name << ": " << j["uncovered"];
    EXPECT_TRUE(j["risks"].is_array()) << name;
  }
}

// Real torch 1.13 exports (tools/make_export_mode_models.py).
TEST(ExportMode, EvalExportsWarnLoudlyWithTheCallToUse) {
  for (const char* file : {"export_eval_opset13.onnx", "export_eval_opset14.onnx"}) {
    std::string path = kData + file;
    auto r = RunCli(kExe, {"plan", path, "--batch", "2", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["warnings"].size(), 1u) << file;
    std::string w = j["warnings"][0];
    EXPECT_NE(w.find("eval-mode or constant-folded export"), std::string::npos) << w;
    EXPECT_NE(w.find("1 BatchNormalization in inference form"), std::string::npos) << w;
    EXPECT_NE(w.find("1 layers with constant-folded weights ('onnx::Conv_"), std::string::npos) << w;
    EXPECT_NE(w.find("torch.onnx.export(model, args, f, training=torch.onnx.TrainingMode.TRAINING, "
                     "do_constant_folding=False, dynamic_axes={'input': {0: 'batch'}})"),
              std::string::npos)
        << w;
    auto text = RunCli(kExe, {"plan", path, "--batch", "2"});
    EXPECT_NE(text.out.find("WARNING: this is an eval-mode"), std::string::npos) << text.out;
    EXPECT_LT(text.out.find("WARNING:"), text.out.find("Where the memory goes")) << "near the top";
    auto strict = RunCli(kExe, {"plan", path, "--batch", "2", "--strict"});
    EXPECT_EQ(strict.exit_code, 2);
    EXPECT_EQ(strict.out, "");
    EXPECT_EQ(strict.err.rfind("oomguard plan: --strict: this is an eval-mode", 0), 0u) << strict.err;
  }
}

TEST(ExportMode, FitAndSplitCarryTheWarningAndStrictRefuses) {
  std::string path = kData + "export_eval_opset14.onnx";
  auto fit = nlohmann::json::parse(RunCli(kExe, {"fit", path, "--memory", "1GiB", "--json"}).out);
  ASSERT_EQ(fit["warnings"].size(), 1u);
  EXPECT_NE(fit["warnings"][0].get<std::string>().find("eval-mode"), std::string::npos);
  auto split = nlohmann::json::parse(
      RunCli(kExe, {"split", path, "--global-batch", "8", "--gpus", "2", "--memory", "1GiB", "--json"}).out);
  ASSERT_EQ(split["warnings"].size(), 1u);
  for (std::vector<std::string> args :
       {std::vector<std::string>{"fit", path, "--memory", "1GiB", "--strict"},
        std::vector<std::string>{"split", path, "--global-batch", "8", "--gpus", "2", "--memory", "1GiB", "--strict"}}) {
    auto r = RunCli(kExe, args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("oomguard " + args[0] + ": --strict: this is an eval-mode", 0), 0u) << r.err;
  }
}

TEST(ExportMode, TrainingExportsHaveNoWarningAndBuffersAreNotParameters) {
  for (const char* file : {"export_training_opset13.onnx", "export_training_opset14.onnx"}) {
    std::string path = kData + file;
    auto r = RunCli(kExe, {"plan", path, "--batch", "2", "--target", "cpu", "--optimizer", "adam", "--json",
                           "--strict"});
    ASSERT_EQ(r.exit_code, 0) << file << ": " << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["warnings"].empty()) << j["warnings"];
    // conv 216 + bn 16 + bn2 16 + fc 36 parameters; the 32 running statistics are buffers.
    EXPECT_EQ(j["parameter_count"], 284);
    // Buffers are weights without gradients or Adam state: 2 x 284 x 4 bytes of state, and a 4-byte
    // step per parameter tensor (7 of them; CPU).
    EXPECT_EQ(j["bytes"]["optimizer_state"], 2u * 284 * 4 + 7 * 4);
  }
}

}  // namespace
}  // namespace oomguard::plan

namespace oomguard::plan {
namespace {

TEST(CudaAllocConf, ExpandableSegmentsReserveLessAndBadKeysAreRefused) {
  auto plan = [](const std::string& conf) {
    auto r = RunCli(kExe, {"plan", "resnet50", "--batch", "64", "--json", "--cuda-alloc-conf", conf});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  auto base = plan("");
  auto expandable = plan("expandable_segments:True");
  EXPECT_LT(expandable["peak_reserved_bytes"].get<uint64_t>(), base["peak_reserved_bytes"].get<uint64_t>());
  EXPECT_GE(expandable["peak_reserved_bytes"].get<uint64_t>(), expandable["peak_allocated_bytes"].get<uint64_t>());
  auto r = RunCli(kExe, {"plan", "resnet50", "--batch", "2", "--cuda-alloc-conf", "max_split_size_mb:5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard plan: --cuda-alloc-conf 'max_split_size_mb:5': max_split_size_mb must be an integer "
                   "above 20\n");
  r = RunCli(kExe, {"plan", "resnet50", "--batch", "2", "--cuda-alloc-conf", "bogus:1"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace oomguard::plan
