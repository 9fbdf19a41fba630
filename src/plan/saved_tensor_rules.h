// What PyTorch's autograd keeps for backward, per operator, and how each
// operator's outputs and gradients relate to its inputs (new memory or a view).
// Rules are written against what torch.onnx.export emits, including the
// decomposed GELU, LayerNorm and SiLU patterns, which are first fused back
// into one logical operator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model.h"
#include "shapes.h"

namespace oomguard::plan {

// One logical operator: a single ONNX node, or a fused pattern of several.
struct LogicalOp {
  std::string kind;           // "Conv", "Gelu", "LayerNorm", "Silu", ... (ONNX op or fused name)
  std::vector<int> nodes;     // ONNX node indices it covers (first is the anchor, names the layer)
  std::vector<int> inputs;    // tensor ids (data inputs first, then parameters)
  std::vector<int> outputs;   // tensor ids it produces that others may use
  // Set when the operator table (data/op_table.json) gives the saved set: the row, and the tensor
  // bound to each of its inputs x<i> and outputs y<j> (op_table_match.h).
  int table_row = -1;
  std::vector<int> table_inputs{};
  std::vector<int> table_outputs{};
};

// How autograd saw the op: its anchor node's (NodeInfo::grad_mode).
inline GradMode OpGradMode(const Model& model, const LogicalOp& op) {
  return op.nodes.empty() ? GradMode::kRecorded : model.nodes[static_cast<size_t>(op.nodes.front())].grad_mode;
}

// torch.flip's export: a Slice with a negative step, which PyTorch's own slicing never has. A new tensor (a
// copy), not a view; its backward flips the gradient into a new one.
bool IsFlip(const Model& model, const NodeInfo& n);

// Groups the graph into logical operators, in graph order.
std::vector<LogicalOp> FuseOperators(const Model& model, const ConcreteShapes& shapes);

// A tensor-sized piece of memory an operator keeps (or allocates) beyond its inputs/outputs.
struct ExtraBuffer {
  uint64_t bytes = 0;
  std::string what;  // "indices", "mask", "mean+invstd"...
  // Released as the operator's backward unwinds, before its input and weight gradients are formed
  // (a recurrent layer's per-step states), instead of after them.
  bool freed_before_gradients = false;
};

// The implementation a CPU convolution's scratch is planned for, per direction (PyTorch 1.13 with
// oneDNN 2.6.3, one intra-op thread): oneDNN's direct jit kernels (AVX-512 blocked by 16 or fewer
// channels, AVX2 by 8), its 1x1 and depthwise kernels, its gemm convolution, or PyTorch's own slow
// path (slow_conv2d / slow_conv3d / slow transposed: no oneDNN primitive at all).
enum class ConvKernel { kNone, kSlow, kJitAvx512, kJitAvx2, kJit1x1, kJitDepthwise, kGemm };

// The name DNNL_VERBOSE gives the implementation ("slow" for PyTorch's own path, "" for kNone).
const char* ConvKernelName(ConvKernel k);

// Which kernel ConvScratch planned each direction on: set where its rules decide it (kNone for an op
// that is no convolution). tools/probe_conv_kernels.py compares it with DNNL_VERBOSE.
struct ConvKernels {
  ConvKernel forward = ConvKernel::kNone;
  ConvKernel input_gradient = ConvKernel::kNone;
  ConvKernel weight_gradient = ConvKernel::kNone;
};

struct OpRule {
  bool known = true;                   // false: conservative default (warn)
  std::vector<int> saved_tensors;      // input/output tensor ids kept for backward
  std::vector<ExtraBuffer> saved_extra;  // e.g. MaxPool indices, BN statistics, dropout noise
  std::vector<int> output_view_of;     // per output: tensor id it is a view of, or -1 (new memory)
  uint64_t forward_temp_bytes = 0;     // scratch alive only while the op runs forward
  uint64_t backward_temp_bytes = 0;    // scratch alive only while its backward runs
  // Of that scratch, bytes whose size depends on the CPU (oneDNN's sgemm blocking and channel blocks
  // for the ISA): the plan warns with the largest such figure.
  uint64_t machine_dependent_bytes = 0;
  // Of that scratch, bytes oneDNN keeps once per intra-op thread where it threads over the batch (the
  // gemm weight gradient's weight copy and im2col slice): planned for one thread, as measured.
  uint64_t per_thread_bytes = 0;
  // A contiguous copy of the output gradient made by a view's backward of its own before this op's
  // (linear over [N, L, C] views its output gradient as [N*L, C]); the gradient it copied goes then,
  // unless something else holds it.
  uint64_t output_gradient_copy_bytes = 0;
  // Per input: its gradient aliases the gradient of this output (no new memory), or -1.
  std::vector<int> grad_alias_output;
  // One of several slices of the same tensor (chunk/split): PyTorch's backward joins the pieces'
  // gradients into one input-sized tensor, so a later piece adds no input-sized gradient of its own.
  bool gradient_joins_siblings = false;
  // Non-empty when the export cannot tell this op from another that keeps something else (the
  // planner takes the larger): why, as a warning that does not depend on the batch.
  std::string ambiguity;
  // A ReduceMax/ReduceMin over some axes, planned as torch.max/min(x, dim) (no backward temporaries):
  // the temporaries torch.amax/amin's backward would build instead (bytes at risk, higher).
  uint64_t amax_backward_bytes = 0;
  // A ReduceProd over some axes planned with prod_safe_zeros_backward (its input may hold exact zeros: a clamp
  // at 0, a ReLU): the scratch that formula adds over the plain one, which runs where no element is exactly
  // zero when the step runs (bytes at risk, lower).
  uint64_t prod_zeros_backward_bytes = 0;
  // CPU convolutions: the kernel each direction's scratch follows.
  ConvKernels conv_kernels;
  // A gemm input gradient whose sgemm call may pack its operands (large m and n, small k), which the
  // plan does not model: about the packed operands' bytes, at risk (higher).
  uint64_t data_gemm_pack_bytes = 0;
};

struct RuleContext {
  const Model& model;
  const ConcreteShapes& shapes;
  Target target;
  int activation_bytes;  // bytes per element of activations (4 fp32, 2 half)
  const std::vector<bool>& requires_grad;
};

OpRule RuleFor(const LogicalOp& op, const RuleContext& ctx);

// Whether tensor `id` is not contiguous in PyTorch: a transpose, or an elementwise result laid out
// like one (TensorIterator keeps its operands' memory order).
bool NonContiguousInTorch(const Model& model, const ConcreteShapes& shapes, int id);

// Whether tensor `id`, a recurrent layer's weight input (W, R or B of LSTM/GRU/RNN), is only the
// export's gate reordering of parameters (slices concatenated again); then `params` lists them
// (empty otherwise).
// PyTorch hands those parameters to the layer as they are, so their gradients come from the layer
// itself: no gradient of the rearranged tensor exists.
bool RecurrentWeightSources(const Model& model, int id, std::vector<int>* params);

// Operators whose results carry no gradient (shapes, comparisons, indices, rounding, random noise):
// they keep nothing for backward and stop the gradient's walk.
bool NotDifferentiable(const std::string& kind);

// The bytes of the parameters added to a low-rank product of two parameters in forward (W0 + (B @ A) * s:
// LoRA or DoRA merged into the weight, rank at most a quarter of the weight's smaller dim), each once: base
// weights that are usually frozen, which a plain export cannot say (unseen set 15's dora_linear).
uint64_t LowRankBaseWeightBytes(const Model& model, const ConcreteShapes& shapes);

// For an If whose two branches are views of one tensor of the enclosing graph (torch's dynamic
// squeeze), that tensor's position in n.inputs; -1 otherwise.
int IfViewInput(const NodeInfo& n);

}  // namespace oomguard::plan
