// oomguard_conv_kernels: which kernel the planner's CPU convolution rules (ConvScratch in
// saved_tensor_rules.cc) plan each direction on, for layers read from stdin - one a line:
//   conv|convT ND IN_CHANNELS OUT_CHANNELS GROUPS BATCH SPATIAL... KERNEL... STRIDE... PAD... DILATION... OUTPUT_PAD...
// (ND values for each of the six lists; PAD is PyTorch's symmetric padding). Each layer is planned
// as tools/probe_conv_fuzz.py's layer is: its input needs a gradient. Prints, a line per layer,
// "FORWARD INPUT_GRADIENT WEIGHT_GRADIENT" as DNNL_VERBOSE names them ("slow": no oneDNN; "-": the
// planner decided nothing). A development tool for tools/probe_conv_kernels.py; not installed.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "oomguard/plan/planner.h"
#include "saved_tensor_rules.h"
#include "shapes.h"
#include "test_graphs.h"

namespace {

using oomguard::plan::ConvKernelName;
using oomguard::plan::OpRule;

// The layer's rule, or an error message.
std::string KernelsOf(const std::string& line) {
  namespace p = oomguard::plan;
  std::istringstream in(line);
  std::string kind;
  int64_t nd = 0, cin = 0, cout = 0, groups = 1, batch = 1;
  if (!(in >> kind >> nd >> cin >> cout >> groups >> batch) || nd < 1 || nd > 3 || groups < 1) return "error: header";
  std::vector<int64_t> lists[6];
  for (auto& l : lists) {
    l.resize(static_cast<size_t>(nd));
    for (auto& v : l) {
      if (!(in >> v)) return "error: lists";
    }
  }
  const bool transposed = kind == "convT";
  p::testing::GraphBuilder b;
  std::vector<int64_t> per_sample{cin};
  per_sample.insert(per_sample.end(), lists[0].begin(), lists[0].end());
  std::vector<int64_t> w{transposed ? cin : cout, transposed ? cout / groups : cin / groups};
  w.insert(w.end(), lists[1].begin(), lists[1].end());
  b.Input("input", per_sample).Weight("conv.weight", w);
  b.Node("Mul", {"input", "input"}, {"x"}, "pre");
  auto& conv = b.Node(transposed ? "ConvTranspose" : "Conv", {"x", "conv.weight"}, {"y"}, "conv");
  std::vector<int64_t> pads = lists[3];
  pads.insert(pads.end(), lists[3].begin(), lists[3].end());
  p::testing::GraphBuilder::IntsAttr(conv, "kernel_shape", lists[1]);
  p::testing::GraphBuilder::IntsAttr(conv, "strides", lists[2]);
  p::testing::GraphBuilder::IntsAttr(conv, "pads", pads);
  p::testing::GraphBuilder::IntsAttr(conv, "dilations", lists[4]);
  if (transposed) p::testing::GraphBuilder::IntsAttr(conv, "output_padding", lists[5]);
  p::testing::GraphBuilder::IntAttr(conv, "group", groups);
  b.Output("y");
  auto model = p::LoadModelFromBytes(b.Bytes(), "layer");
  if (!model.ok()) return "error: " + model.error();
  p::PlanOptions options;
  options.batch = batch;
  options.target = p::Target::kCpu;
  auto shapes = p::InferConcreteShapes(**model, options);
  if (!shapes.ok()) return "error: " + shapes.error();
  std::vector<bool> requires_grad((*model)->tensors.size(), true);
  for (size_t i = 0; i < requires_grad.size(); ++i) {
    requires_grad[i] = (*model)->tensors[i].kind != p::TensorKind::kGraphInput;
  }
  p::RuleContext ctx{**model, *shapes, p::Target::kCpu, 4, requires_grad};
  for (const p::LogicalOp& op : p::FuseOperators(**model, *shapes)) {
    if (op.kind != "Conv" && op.kind != "ConvTranspose") continue;
    const OpRule r = p::RuleFor(op, ctx);
    auto name = [](p::ConvKernel k) {
      return k == p::ConvKernel::kNone ? std::string("-") : std::string(ConvKernelName(k));
    };
    return name(r.conv_kernels.forward) + " " + name(r.conv_kernels.input_gradient) + " " +
           name(r.conv_kernels.weight_gradient);
  }
  return "error: no convolution";
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty()) std::cout << KernelsOf(line) << "\n";
  }
  return 0;
}
