#include "training_step.h"
#include "simulation_share.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include "coverage.h"
#include "cuda_caching_allocator.h"
#include "data_dependent.h"
#include "fixed_tables.h"
#include "frozen_signs.h"
#include "inplace.h"
#include "op_table.h"
#include "op_table_match.h"
#include "oomguard/plan/gpu_catalog.h"
#include "step_timeline.h"

namespace oomguard::plan {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

bool IsAmp(Precision p) { return p == Precision::kAmpFp16 || p == Precision::kAmpBf16; }

// The module an exported node ran in: torch.onnx.export names nodes by their module path
// ("/att/MatMul_1" ran in the module att); "" for a top-level node or a name without a path.
std::string_view ModulePath(const std::string& node_name) {
  if (node_name.empty() || node_name[0] != '/') return {};
  const size_t last = node_name.rfind('/');
  return std::string_view(node_name).substr(0, last);
}

// "name" and k of torch.onnx.export's "name_k" (the k-th call of a module, k >= 1); k = 0 otherwise.
std::pair<std::string_view, int> CallSuffix(std::string_view component) {
  const size_t u = component.rfind('_');
  if (u == std::string_view::npos || u == 0 || u + 1 >= component.size() || u + 4 < component.size()) {
    return {component, 0};
  }
  int k = 0;
  for (size_t i = u + 1; i < component.size(); ++i) {
    if (component[i] < '0' || component[i] > '9') return {component, 0};
    k = k * 10 + (component[i] - '0');
  }
  return {component.substr(0, u), k};
}

// Each op's module path with every call named where it ran. torch.onnx.export scopes the k-th call of module
// "a.b" as "/a/b_k" whatever call of "a" it ran in: a layer called three times (ALBERT's shared layer) names its own
// ops "/layer", "/layer_1", "/layer_2" but its child's "/layer/qkv", "/layer/qkv_1", "/layer/qkv_2", so the child's
// second call looked like part of the first call of "layer". Where the child runs once per call of its parent
// ("/A/B_m" for m below the number of A's calls, "/A_m" a call without child paths of its own), "/A/B_m/..." is
// the call "/A_m/B/...", inner components first.
std::vector<std::string> CallPaths(const Model& m, const std::vector<LogicalOp>& ops) {
  std::vector<std::string> raw(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].nodes.empty()) raw[i] = std::string(ModulePath(m.nodes[static_cast<size_t>(ops[i].nodes[0])].name));
  }
  const std::set<std::string> paths(raw.begin(), raw.end());
  auto has_children = [&](const std::string& p) {
    auto it = paths.lower_bound(p + "/");
    return it != paths.end() && it->compare(0, p.size() + 1, p + "/") == 0;
  };
  // Per parent path and child base name, the highest call suffix of the child; per path, the calls of it.
  std::map<std::pair<std::string, std::string>, int> child_calls;
  std::map<std::string, int> calls;  // "/x/A" -> 1 + the highest k of "/x/A_k" seen as a path of its own
  for (const std::string& p : paths) {
    for (size_t at = p.find('/', 1);; at = p.find('/', at + 1)) {
      const std::string sub = p.substr(0, at == std::string::npos ? p.size() : at);
      const size_t slash = sub.rfind('/');
      const auto [base, k] = CallSuffix(std::string_view(sub).substr(slash + 1));
      const std::string parent = sub.substr(0, slash), whole = parent + "/" + std::string(base);
      int& c = child_calls[{parent, std::string(base)}];
      c = std::max(c, k);
      if (paths.count(sub) && (k == 0 || !has_children(sub))) calls[whole] = std::max(calls[whole], k + 1);
      if (at == std::string::npos) break;
    }
  }
  std::vector<std::string> out = raw;
  for (std::string& p : out) {
    if (p.empty()) continue;
    std::vector<std::string> comps;
    for (size_t from = 1;;) {
      const size_t at = p.find('/', from);
      comps.push_back(p.substr(from, at == std::string::npos ? std::string::npos : at - from));
      if (at == std::string::npos) break;
      from = at + 1;
    }
    for (size_t d = comps.size(); d-- > 1;) {
      const auto [base, k] = CallSuffix(comps[d]);
      const auto [parent_base, parent_k] = CallSuffix(comps[d - 1]);
      if (k == 0 || parent_k != 0) continue;
      std::string parent;
      for (size_t j = 0; j + 1 < d; ++j) parent += "/" + comps[j];
      const std::string a = parent + "/" + comps[d - 1], a_k = a + "_" + std::to_string(k);
      auto n = calls.find(a);
      if (!paths.count(a_k) || has_children(a_k) || n == calls.end() ||
          child_calls[{a, std::string(base)}] >= n->second) {
        continue;
      }
      comps[d] = std::string(base);
      comps[d - 1] += "_" + std::to_string(k);
    }
    p.clear();
    for (const std::string& c : comps) p += "/" + c;
  }
  return out;
}

// The module each op ran in and the calls it is part of. A call is the run of consecutive ops under
// one module path (a module called twice is two runs; torch.onnx.export also names the second call
// "relu_1" where the first is "relu"; CallPaths).
struct ModuleRuns {
  ModuleRuns(const Model& m, const std::vector<LogicalOp>& ops)
      : owned(CallPaths(m, ops)), path(ops.size()), prefix(ops.size()), run_end(ops.size()) {
    const size_t n = ops.size();
    for (size_t i = 0; i < n; ++i) {
      path[i] = owned[i];
      if (path[i].empty()) continue;
      for (size_t at = path[i].find('/', 1);; at = path[i].find('/', at + 1)) {
        prefix[i].push_back(at == std::string_view::npos ? path[i].size() : at);
        if (at == std::string_view::npos) break;
      }
    }
    for (size_t i = n; i-- > 0;) {
      run_end[i].resize(prefix[i].size(), static_cast<int>(i));
      for (size_t d = 0; d < prefix[i].size(); ++d) {
        if (i + 1 < n && Common(i, i + 1) > d) run_end[i][d] = run_end[i + 1][d];
      }
    }
  }
  // The leading components the paths of ops i and j share.
  size_t Common(size_t i, size_t j) const {
    size_t d = 0;
    while (d < prefix[i].size() && d < prefix[j].size() && prefix[i][d] == prefix[j][d] &&
           path[i].substr(0, prefix[i][d]) == path[j].substr(0, prefix[j][d])) {
      ++d;
    }
    return d;
  }
  // Component d of op i's path ("b" of "/a/b" for d = 1); "" where the path is shorter.
  std::string_view Component(size_t i, size_t d) const {
    if (d >= prefix[i].size()) return {};
    const size_t from = d == 0 ? 1 : prefix[i][d - 1] + 1;
    return path[i].substr(from, prefix[i][d] - from);
  }
  // The last op of the call, at depth d (its first d components: d = 0 is the whole forward), that op i
  // is part of.
  int CallEnd(size_t i, size_t d) const { return d == 0 ? static_cast<int>(path.size()) - 1 : run_end[i][d - 1]; }

  std::vector<std::string> owned;  // CallPaths
  std::vector<std::string_view> path;
  std::vector<std::vector<size_t>> prefix;  // prefix[i][d]: the length of path[i]'s first d + 1 components
  std::vector<std::vector<int>> run_end;    // run_end[i][d]: the last op of the run sharing that prefix with i
};

// The op that makes each tensor (its index in ops); -1 for inputs and initializers.
std::vector<int> OpProducers(const Model& m, const std::vector<LogicalOp>& ops) {
  std::vector<int> producer(m.tensors.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    for (int id : ops[i].outputs) {
      if (id >= 0) producer[id] = static_cast<int>(i);
    }
  }
  return producer;
}

// Python holds the arguments of a module call until it returns: a tensor handed to a module
// (nn.MultiheadAttention's key and value) stays alive over the whole call, even where the
// module's last read of it is its first op (a transpose folded into a copy). For each tensor,
// the last op of the outermost module call it enters, where that is after its last read; -1
// elsewhere. Cross-attention probes (tools/measure_xattn.py): the forward peak was one
// key-sized tensor low.
std::vector<int> HeldUntilCallReturns(const Model& m, const std::vector<LogicalOp>& ops, const ModuleRuns& runs,
                                      const std::vector<int>& producer) {
  std::vector<int> hold(m.tensors.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    for (int id : ops[i].inputs) {
      if (id < 0 || m.tensors[id].kind != TensorKind::kActivation || producer[id] < 0) continue;
      // The outermost module on this op's path that is not on the producer's.
      const size_t d = runs.Common(i, static_cast<size_t>(producer[id]));
      if (d < runs.prefix[i].size()) hold[id] = std::max(hold[id], runs.run_end[i][d]);
    }
  }
  return hold;
}

// Python keeps a tensor bound to a name until the function that bound it returns (or rebinds the
// name); a temporary dies after its last read, and ONNX records neither. A value lives in the frame
// of the innermost module whose call holds its producer and every reader (a module's own
// intermediates in its forward; what one child returns and another reads, in the parent's). For
// each tensor, the last op of that call where it is after the tensor's last read: how long the
// frame may hold it; -1 where no frame holds it longer. What a child returns to a call of the
// next child alone is a pipeline (x = self.a(x); x = self.b(x), or self.b(self.a(x))) and held no
// longer; a frame's own ops name their results more often (s = q @ k.T; a = s.softmax(-1)). Frames
// that rebind their names hold nothing: a container (nn.Sequential: numbered children, "features.0"
// or "0"), a frame that calls a child more than once (a loop, x = self.relu(x) twice: "relu" and
// "relu_1") and a module below the top that calls no child module (torch's own functional code).
// `frame_end`, when given, gets that last op for every tensor read before it, whatever the frame binds: where
// the model's metadata says a name held it (Model::held_locals).
std::vector<int> LocalsHeldUntil(const Model& m, const std::vector<LogicalOp>& ops, const ModuleRuns& runs,
                                 const std::vector<int>& producer, std::vector<int>* frame_end = nullptr) {
  const size_t n = ops.size();
  std::vector<int> hold(m.tensors.size(), -1);
  if (frame_end) frame_end->assign(m.tensors.size(), -1);
  // Without module paths (a graph not from torch.onnx.export) the frames are unknown.
  if (std::all_of(runs.path.begin(), runs.path.end(), [](std::string_view p) { return p.empty(); })) return hold;
  std::vector<int> last_read(m.tensors.size(), -1);
  std::vector<size_t> depth(m.tensors.size(), 0);  // the depth of the frame that holds it
  for (size_t id = 0; id < m.tensors.size(); ++id) {
    if (producer[id] >= 0) depth[id] = runs.prefix[static_cast<size_t>(producer[id])].size();
  }
  std::vector<int> first_read(m.tensors.size(), -1), readers(m.tensors.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    if (ops[i].kind == "Shape") continue;  // reads no data
    for (int id : ops[i].inputs) {
      if (id < 0 || producer[id] < 0 || producer[id] >= static_cast<int>(i)) continue;
      if (last_read[id] != static_cast<int>(i)) ++readers[id];
      if (first_read[id] < 0) first_read[id] = static_cast<int>(i);
      last_read[id] = static_cast<int>(i);
      depth[id] = std::min(depth[id], runs.Common(i, static_cast<size_t>(producer[id])));
    }
  }
  // Whether tensor id is returned by a child of its frame to the next child call alone.
  auto piped = [&](size_t id) {
    const size_t p = static_cast<size_t>(producer[id]), d = depth[id];
    if (runs.Component(p, d).empty()) return false;  // the frame's own op
    const size_t next = static_cast<size_t>(runs.run_end[p][d]) + 1;  // the op after the child's call
    const size_t r = static_cast<size_t>(first_read[id]);
    if (r != next || runs.Component(r, d).empty()) return false;
    return static_cast<size_t>(last_read[id]) <= static_cast<size_t>(runs.run_end[r][d]);
  };
  // Whether the call at depth d that op i is part of binds its values (by its last op and depth).
  std::map<std::pair<int, size_t>, bool> binds;
  // A frame that calls a child again (gates, gates_1, ...): the ops that end each call of the child it calls
  // most often (a loop's body), by the frame's last op and depth.
  std::map<std::pair<int, size_t>, std::vector<int>> loop_calls;
  auto frame_binds = [&](size_t i, size_t d) {
    const int end = runs.CallEnd(i, d);
    auto [it, fresh] = binds.try_emplace({end, d}, true);
    if (!fresh) return it->second;
    std::map<std::string_view, std::vector<int>> child_runs;  // base name -> the last op of each call
    bool container = false;
    size_t first = i;
    while (first > 0 && (d == 0 || runs.Common(first - 1, i) >= d)) --first;
    const std::string_view self = d == 0 ? std::string_view() : runs.Component(i, d - 1);
    std::set<std::string_view> children;
    std::string_view previous;
    for (size_t j = first; j <= static_cast<size_t>(end); ++j) {
      const std::string_view child = runs.Component(j, d);
      if (child.empty() || child == previous) {
        previous = child;
        continue;
      }
      previous = child;
      // numbered: nn.Sequential's "0" at the top, "features.0" under "features"
      std::string_view number = child;
      if (!self.empty() && child.size() > self.size() + 1 && child.substr(0, self.size()) == self &&
          child[self.size()] == '.') {
        number = child.substr(self.size() + 1);
      }
      const bool numbered = std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
      // called again: a second run of the child, or torch's "name_k" for its k-th call
      std::string_view base = child;
      if (const size_t u = child.rfind('_'); u != std::string_view::npos && u + 1 < child.size() &&
                                             std::all_of(child.begin() + static_cast<std::ptrdiff_t>(u) + 1, child.end(),
                                                         [](char c) { return c >= '0' && c <= '9'; })) {
        base = child.substr(0, u);
      }
      container = container || numbered;
      child_runs[base].push_back(runs.run_end[j][d]);
      if (numbered || !children.insert(child).second || (base != child && children.count(base))) it->second = false;
    }
    // A loop's body: every child called between the first and the last call of the one called most is called at
    // least as often (a UNet calls its pool twice, with one call of enc2 between: no loop).
    if (!it->second && !container) {
      const std::vector<int>* most = nullptr;
      for (const auto& [base, ends] : child_runs) {
        if (ends.size() > 1 && (!most || ends.size() > most->size())) most = &ends;
      }
      const bool body = most && std::all_of(child_runs.begin(), child_runs.end(), [&](const auto& c) {
        return c.second.size() >= most->size() ||
               std::all_of(c.second.begin(), c.second.end(), [&](int e) { return e < most->front() || e > most->back(); });
      });
      if (body) loop_calls[{end, d}] = *most;
    }
    // A module below the top that calls no child module runs functional code of its own: torch's
    // (nn.MultiheadAttention's F.multi_head_attention_forward rebinds q, k and v at every step).
    if (d > 0 && children.empty()) it->second = false;
    return it->second;
  };
  const std::set<int> outputs(m.outputs.begin(), m.outputs.end());
  for (size_t id = 0; id < m.tensors.size(); ++id) {
    const int p = producer[id];
    if (p < 0 || last_read[id] < 0 || m.tensors[id].kind != TensorKind::kActivation || outputs.count(static_cast<int>(id))) {
      continue;
    }
    const int end = runs.CallEnd(static_cast<size_t>(p), depth[id]);
    if (frame_end && end > last_read[id]) (*frame_end)[id] = end;
    // An expression's temporary: the frame's own value read once, by the next op ((w * p).sum(3)).
    const bool temporary = readers[id] == 1 && first_read[id] == p + 1 && runs.Component(static_cast<size_t>(p), depth[id]).empty();
    if (end <= last_read[id] || temporary || piped(id)) continue;
    if (frame_binds(static_cast<size_t>(p), depth[id])) {
      hold[id] = end;
    } else if (auto loop = loop_calls.find({end, depth[id]}); loop != loop_calls.end()) {
      // A loop rebinds its names in the next iteration: a value is held at most until the next call of the
      // body's child returns (ConvLSTM's i, f, o, g = self.gates(...).chunk(4) keep the previous step's gates
      // across the next convolution), the last iteration's until the frame returns.
      auto next = std::upper_bound(loop->second.begin(), loop->second.end(), p);
      const int until = next == loop->second.end() ? end : *next;
      if (until > last_read[id]) hold[id] = until;
    }
  }
  return hold;
}

bool AutocastHalf(const std::string& k) {
  return k == "Conv" || k == "ConvTranspose" || k == "Gemm" || k == "MatMul";
}
bool AutocastFloat(const std::string& k) {
  return k == "Softmax" || k == "LogSoftmax" || k == "LayerNorm" || k == "LayerNormalization" || k == "Pow" ||
         k == "Exp" || k == "Log" || k.rfind("Reduce", 0) == 0;
}

// The warnings that carry bytes, as data: the name in the JSON's risks, the way the step may
// differ from the plan, and the words ({bytes}: the bytes at risk, {where}: the op it concerns).
enum class Risk { kShapeInferenceStopped, kMeanCentredOnce, kCpuIsaScratch, kInplaceAfterInstanceNorm, kDropoutInputHeldByCaller,
                  kLocalsHeldUntilForwardReturns, kCpuThreadScratch, kReductionMayBeAmax, kMergedByExport,
                  kConvDataGemmMayPack, kBranchMayBeDetached, kProdWithoutZeros, kWeightMayBeFrozen,
                  kMaxMayBeDetached, kViewMayBeSeveral, kDataDependentShape, kTableMayBeBuffer,
                  kSolverStepsMayBeNoGrad, kTargetMayBeNoGrad, kStraightThroughMayBeDetached, kBackboneMayBeFrozen,
                  kTowerMayBeFrozen };
struct RiskText {
  std::string_view what, direction, text;
};
constexpr std::array<RiskText, 22> kRiskTexts = {{
    {"shape_inference_stopped", "higher",
     "shape inference stopped at {where}: the layers after it are planned without their saved tensors and scratch; "
     "at least {bytes} bytes (the inputs where it stopped) per layer more than planned"},
    {"mean_centred_once", "lower",
     "a normalization written with mean/var (x - mean feeds both the variance and the division): planned as code "
     "that computes x - mean twice (ConvNeXt's LayerNorm), whose two copies PyTorch keeps (the export merges them "
     "into one); if the model computes it once, up to {bytes} bytes fewer are kept than planned"},
    {"cpu_isa_scratch", "either",
     "oneDNN's convolution scratch (a 3-D weight gradient's gemm packing buffer, a strided 1x1 kernel's 16-channel "
     "blocks, a channels-last depthwise kernel's weight-gradient copies) depends on the CPU's ISA (planned for "
     "AVX-512): up to {bytes} bytes more or less scratch in backward than planned"},
    {"inplace_after_instance_norm", "higher",
     "an activation after InstanceNormalization may have been in-place (not recorded in ONNX); if so, backward needs "
     "up to {bytes} bytes more than planned (instance_norm's output is a view)"},
    {"dropout_input_held_by_caller", "higher",
     "a dropout's input before a recurrent layer is planned as freed after the dropout; code written "
     "x = rnn(dropout(x)) holds it until the recurrent layer returns: the forward peak up to {bytes} bytes higher "
     "than planned"},
    {"locals_held_until_forward_returns", "higher",
     "tensors a forward() makes or gets back from its layers are planned as freed after their last read; where "
     "forward binds them to names (kv = self.inp(x); s = q @ k.T), Python keeps them until that forward returns: "
     "the peak up to {bytes} bytes higher than planned"},
    {"cpu_thread_scratch", "higher",
     "oneDNN's gemm weight gradient (3-D convolutions of few input channels or a kernel deeper than their frames, "
     "dilated 2-D kernels wider than their input) is planned for one intra-op thread, as measured; threading over "
     "the batch, it keeps a copy of the weight gradient and of its columns per thread: up to {bytes} bytes more per "
     "extra thread"},
    {"reduction_may_be_amax", "higher",
     "a ReduceMax/ReduceMin over some axes is planned as torch.max/min(x, dim), whose backward builds nothing; "
     "written as torch.amax/amin, its backward builds a mask of the input and a float copy: the peak up to {bytes} "
     "bytes higher than planned"},
    {"merged_by_export", "higher",
     "a value with a fixed operand (memory + pos) that repeated layers (dec.0, dec.1, ...) read and keep is planned "
     "once, as the export has it; torch.onnx merges the same expression written in each layer into one, which "
     "PyTorch computes and keeps once per layer: up to {bytes} bytes more kept than planned"},
    {"conv_data_gemm_may_pack", "higher",
     "a convolution's input gradient runs oneDNN's gemm (x64:gemm:jit backward_data) over many output positions and "
     "many columns with few output channels, where sgemm may pack its operands instead of the small buffer planned "
     "(not modelled): the peak up to {bytes} bytes higher than planned"},
    {"branch_may_be_detached", "lower",
     "modules {where} each read the same input with weights of their own: if one of them runs under "
     "torch.no_grad() or its result is .detach()ed (a teacher, a momentum encoder), which ONNX does not record, "
     "autograd keeps nothing of it for backward: the plan up to {bytes} bytes high (export with oomguard.export, "
     "or name it with --no-grad / --detached)"},
    {"prod_without_zeros", "lower",
     "a prod over some axes of a value that may hold exact zeros (a clamp at 0, a ReLU) is planned with the "
     "backward that torch takes when the input holds a zero (two exclusive cumprods and their copies); where no "
     "element is exactly zero in the step, it takes the plain formula: the peak up to {bytes} bytes lower than "
     "planned"},
    {"weight_may_be_frozen", "lower",
     "a weight is added in forward to a low-rank product of two weights (W0 + B A: LoRA or DoRA merged into it); "
     "such a base weight is usually frozen (requires_grad=False), which ONNX does not record: then it gets no "
     "gradient and no optimizer state, the plan up to {bytes} bytes high (name it with --frozen, or export with "
     "oomguard.export)"},
    {"max_may_be_detached", "lower",
     "a max over some axes ({where}) is read only by x - max before an exp (a stabilised exp or softmax), where "
     "code often writes x - x.amax(dim, keepdim=True).detach(), which ONNX does not record: then autograd keeps "
     "nothing for that max's backward, the plan up to {bytes} bytes high (export with oomguard.export, or name it "
     "with --detached)"},
    {"view_may_be_several", "lower",
     "a transpose ({where}) is read by several ops and planned as one view whose gradients are summed before they "
     "reach the tensor it views; torch.onnx merges the same view written at each use (k.transpose(1, 2) in each step "
     "of a loop) into one, and such views hand their gradients straight to that tensor: the plan up to {bytes} bytes "
     "high"},
    {"data_dependent_shape", "either",
     "the size of {where} depends on the data (a count the file does not record, only its bound): planned at the "
     "share expected (docs/plan.md), the tensors computed from it may take up to {bytes} bytes more or fewer than "
     "planned (everything or nothing selected)"},
    {"table_may_be_buffer", "lower",
     "float initializers ({where}) are multiplied with activations and planned as trained weights, whose gradients "
     "keep the other operands for backward; if they are registered buffers (a rotary or position table, random "
     "features), which ONNX stores like weights, nothing is kept for them: the plan up to {bytes} bytes high "
     "(export with oomguard.export, or name them with --frozen)"},
    {"solver_steps_may_be_no_grad", "lower",
     "module {where} is applied in a chain, each call reading its previous result and the same input of its shape (a "
     "fixed-point iteration z = f(z, x)): a deep-equilibrium or other iterative solve runs all calls but the last "
     "under torch.no_grad(), which ONNX does not record; then autograd keeps nothing of them, the plan up to {bytes} "
     "bytes high (export with oomguard.export, or name them with --no-grad)"},
    {"target_may_be_no_grad", "lower",
     "a squared difference ({where}) has an operand computed only for it, with weights nothing else reads (a TD "
     "target from target networks, a teacher's output), against a trained prediction: such a target is usually "
     "computed under torch.no_grad(), which ONNX does not record; then autograd keeps nothing of it and its weights "
     "get no gradient or optimizer state, the plan up to {bytes} bytes high (export with oomguard.export, or name it "
     "with --no-grad / --frozen)"},
    {"straight_through_may_be_detached", "lower",
     "x + (q - x) with q computed from x ({where}) is a straight-through estimator, whose difference code writes "
     ".detach()ed (BitNet, VQ, Gumbel), which ONNX does not record; then autograd keeps nothing of what computes q, "
     "the plan up to {bytes} bytes high (export with oomguard.export, or name it with --detached)"},
    {"backbone_may_be_frozen", "lower",
     "low-rank adapters sit beside weights ({where}: base(x) + x A^T B^T, LoRA), whose model is usually frozen "
     "(requires_grad_(False)) but for the adapters and the head, which ONNX does not record; then the "
     "frozen weights get no gradient or optimizer state and autograd keeps less for backward, the plan up to {bytes} "
     "bytes high (name them with --frozen, or export with oomguard.export)"},
    {"tower_may_be_frozen", "lower",
     "a network over another input ({where}) joins token embeddings only through a small projector (a vision tower "
     "in a LLaVA-style model): such a tower is usually pretrained, frozen and run under torch.no_grad(), which ONNX "
     "does not record; then autograd keeps nothing of it and its weights get no gradient or optimizer state, the "
     "plan up to {bytes} bytes high (export with oomguard.export, or name it with --no-grad / --frozen)"},
}};
static_assert(kRiskTexts.size() == static_cast<size_t>(Risk::kTowerMayBeFrozen) + 1);

// A risk's warning: its words with the bytes and the op filled in.
std::string RiskWarning(const RiskText& r, uint64_t bytes, const std::string& where) {
  std::string text(r.text);
  for (const auto& [key, value] : {std::pair<std::string_view, std::string>{"{bytes}", std::to_string(bytes)},
                                   std::pair<std::string_view, std::string>{"{where}", where}}) {
    if (size_t at = text.find(key); at != std::string::npos) text.replace(at, key.size(), value);
  }
  return text;
}

// The words of a risk before its first placeholder: how its warning begins.
std::string_view RiskHead(const RiskText& r) { return r.text.substr(0, r.text.find('{')); }

// Adds the risk and its warning to the plan; nothing when no bytes are at risk.
void AddRisk(StepPlan* plan, Risk risk, uint64_t bytes, const std::string& where = "") {
  if (bytes == 0) return;
  const RiskText& r = kRiskTexts[static_cast<size_t>(risk)];
  plan->risks.push_back({std::string(r.what), bytes, std::string(r.direction)});
  plan->warnings.push_back(RiskWarning(r, bytes, where));
}

}  // namespace

void AddLocalsRisk(uint64_t forward_peak_with_locals, uint64_t peak, StepPlan* plan) {
  if (forward_peak_with_locals <= peak) return;
  const uint64_t bytes = forward_peak_with_locals - peak;
  if (bytes * 100 >= peak) AddRisk(plan, Risk::kLocalsHeldUntilForwardReturns, bytes);
}

std::optional<std::vector<RiskPlace>> FindRisks(const StepPlan& plan) {
  std::vector<RiskPlace> places;
  for (size_t i = 0; i < plan.risks.size(); ++i) {
    auto r = std::find_if(kRiskTexts.begin(), kRiskTexts.end(), [&](const RiskText& t) { return t.what == plan.risks[i].what; });
    if (r == kRiskTexts.end()) return std::nullopt;
    if (r == &kRiskTexts[static_cast<size_t>(Risk::kLocalsHeldUntilForwardReturns)]) continue;
    auto w = std::find_if(plan.warnings.begin(), plan.warnings.end(),
                          [&](const std::string& text) { return text.starts_with(RiskHead(*r)); });
    if (w == plan.warnings.end()) return std::nullopt;
    places.push_back({i, static_cast<size_t>(w - plan.warnings.begin())});
  }
  return places;
}

void SetRiskBytes(uint64_t bytes, RiskPlace at, StepPlan* plan) {
  if (at.risk >= plan->risks.size() || at.warning >= plan->warnings.size()) return;
  PlanRisk& risk = plan->risks[at.risk];
  auto r = std::find_if(kRiskTexts.begin(), kRiskTexts.end(), [&](const RiskText& t) { return t.what == risk.what; });
  if (r == kRiskTexts.end()) return;
  // The op the warning names ({where}) does not follow the batch: read back from the words around it.
  std::string where;
  const std::string& old = plan->warnings[at.warning];
  if (const size_t w = r->text.find("{where}"); w != std::string_view::npos) {
    const std::string_view after = r->text.substr(w + 7, r->text.find('{', w + 7) - (w + 7));
    const size_t end = old.find(after, w);
    if (end != std::string::npos) where = old.substr(w, end - w);
  }
  risk.bytes = bytes;
  plan->warnings[at.warning] = RiskWarning(*r, bytes, where);
}

void StripLocalsRisk(StepPlan* plan) {
  const RiskText& r = kRiskTexts[static_cast<size_t>(Risk::kLocalsHeldUntilForwardReturns)];
  std::erase_if(plan->risks, [&](const PlanRisk& x) { return x.what == r.what; });
  std::erase_if(plan->warnings, [&](const std::string& w) { return w.starts_with(RiskHead(r)); });
}

namespace {

bool IsViewOp(const std::string& k) {
  return k == "Transpose" || k == "Reshape" || k == "Flatten" || k == "Squeeze" || k == "Unsqueeze" || k == "Identity";
}

// What a simulation derives from the model, the fused operators, the shapes and which tensors need a gradient
// alone (no option changes it), so that the simulations at one batch share it (SimulationShare::Derived).
struct GraphAnalysis {
  std::vector<int> producer;           // OpProducers
  std::vector<int> held_until;         // HeldUntilCallReturns, with the values named below held to their frame's end
  std::vector<int> locals_held_until;  // LocalsHeldUntil, but the values the metadata says a name held
  uint64_t locals_held = 0;            // StepPlan::locals_held
  std::vector<int> graph_dies, graph_held_to;  // GraphDiesAfter
  std::vector<TableMatch> inplace_rows;  // MatchInplaceRow's rows where one fits an op
  std::vector<int> inplace_row_of;       // per op: its row's index in inplace_rows, or -1
  const TableMatch* InplaceRow(size_t op) const {
    return inplace_row_of[op] < 0 ? nullptr : &inplace_rows[static_cast<size_t>(inplace_row_of[op])];
  }
};

class Simulator {
 public:
  Simulator(const Model& m, const ConcreteShapes& s, const PlanOptions& o, StepTrace* trace, SimulationShare* share,
            bool plan_guesses = true)
      : m_(m), s_(s), o_(o), ledger_(o.target, trace), trace_(trace), share_(share), plan_guesses_(plan_guesses) {}

  Result<StepPlan> Run();

 private:
  uint64_t Round(uint64_t bytes) const { return ledger_.Round(bytes); }
  int Alloc(uint64_t bytes, Category c) { return ledger_.Alloc(bytes, c); }
  void Ref(int b) { ledger_.Ref(b); }
  void Unref(int b) { ledger_.Unref(b); }
  void Recategorize(int b, Category c) { ledger_.Recategorize(b, c); }
  void Observe(const char* phase, uint64_t temp) {
    uint64_t t = ledger_.Observe(phase, temp);
    if (o_.record_timeline) RecordTimeline(phase, t);
  }
  // A buffer's bytes count towards what `layer` keeps for backward.
  void AddSaved(LayerMemory* layer, int b) {
    layer->saved_bytes += buffers_[b].bytes;
    if (trace_) trace_->layer_saved.back().push_back(b);
  }
  void RecordTimeline(const char* phase, uint64_t temp) {
    const auto& live_ = ledger_.live;
    MemoryBreakdown b;
    b.weights = live_[kWeights];
    b.gradients = live_[kGradients];
    b.optimizer_state = live_[kOptimizerState];
    b.activations_saved = live_[kSaved];
    b.inputs = live_[kInputs];
    b.transient = live_[kTransient] + live_[kExtra] + temp;
    timeline_.Record(phase, timeline_node_, b);
  }

  uint64_t ElemBytes(int id) const { return elem_bytes_[id]; }
  uint64_t TensorBytes(int id) const { return id < 0 ? 0 : s_.tensors[id].Elements() * ElemBytes(id); }

  // op could have run in place (an in-place row of the table fits it: `row`, from MatchInplaceRow; its input
  // is not kept for backward by an earlier op, and nothing after it reads the input): the row, or nullptr.
  const TableMatch* InplaceCandidate(const LogicalOp& op, const TableMatch* row, const std::vector<int>& buf) const;
  GraphAnalysis Analyse(const std::vector<LogicalOp>& ops) const;
  // PyTorch returns node's output as a view of another tensor (autograd tracks it as one).
  bool OutputIsAView(int node) const;

  void ComputeTypes(const std::vector<LogicalOp>& ops);
  void ComputeRequiresGrad(const std::vector<LogicalOp>& ops);
  bool AnyInputRequiresGrad(const LogicalOp& op) const;
  bool CentredTwice(const LogicalOp& op) const;
  void RecurrentSourceGradients(const LogicalOp& op, uint64_t master_bytes, int grad_shards,
                                std::vector<bool>* from_sources, std::vector<std::pair<int, int>>* source_grads);
  uint64_t HeldByCallerAtRisk(const std::vector<LogicalOp>& ops, const std::vector<int>& buf,
                              const std::set<int>& saved) const;
  uint64_t MergedByExportAtRisk(const std::vector<int>& buf, const std::set<int>& saved) const;
  uint64_t InplaceAtRisk(const std::vector<LogicalOp>& ops, const std::vector<int>& buf, const std::set<int>& saved,
                         std::set<std::string>* kinds) const;
  uint64_t ShapeInferenceStoppedAtRisk(std::string* where) const;
  uint64_t InplaceAfterInstanceNormAtRisk(const std::vector<LogicalOp>& ops) const;
  uint64_t BranchMayBeDetachedAtRisk(const std::vector<LogicalOp>& ops, const std::vector<LayerMemory>& layers,
                                     std::string* where) const;
  uint64_t MaxMayBeDetachedAtRisk(const std::vector<LogicalOp>& ops, const std::vector<LayerMemory>& layers,
                                  std::string* where) const;
  uint64_t ViewMayBeSeveralAtRisk(const std::vector<LogicalOp>& ops, std::string* where) const;
  // Per sign that part of the model ran without autograd (frozen_signs.h): the model planned again as if the
  // guess held; at risk, the peak it would drop (at least 1 % of it).
  void AddGradModeRisks(StepPlan* plan) const;
  // Per op: the op after which the autograd graph it recorded dies, or -1 where its outputs reach the loss; in
  // `frame_holds`, the last op a frame may hold it to by a name bound to one of its outputs (LocalsHeldUntil's
  // frame_end), or -1.
  std::vector<int> GraphDiesAfter(const std::vector<LogicalOp>& ops, const std::vector<int>& producer,
                                  const std::vector<int>& held_until, const std::vector<int>& frame_end,
                                  std::vector<int>* frame_holds) const;

  const Model& m_;
  const ConcreteShapes& s_;
  const PlanOptions& o_;
  StepLedger ledger_;
  std::vector<Buffer>& buffers_ = ledger_.buffers;
  StepTrace* trace_;  // null unless recording
  SimulationShare* share_;  // null: everything computed here
  bool plan_guesses_;       // false for a model a guess made (PeakDroppedByGuess): no guesses of its own
  std::vector<uint64_t> elem_bytes_;
  std::vector<bool> requires_grad_;
  std::vector<uint64_t> param_elems_;  // per tensor; changed by replace_layer_with_pooling
  TimelineRecorder timeline_;
  int timeline_node_ = TimelineRecorder::kStart;  // the op being simulated, for the timeline
};

// What the model a guess made (`variant`: tables as buffers, a part under no_grad) drops from `peak`, planned
// without a timeline, a trace or guesses of its own; 0 where it drops less than 1 % of it.
uint64_t PeakDroppedByGuess(const Model& variant, const ConcreteShapes& s, const PlanOptions& o, uint64_t peak) {
  PlanOptions quiet = o;
  quiet.record_timeline = false;
  Result<StepPlan> other = Simulator(variant, s, quiet, nullptr, nullptr, /*plan_guesses=*/false).Run();
  if (!other || other->peak_allocated_bytes >= peak) return 0;
  const uint64_t bytes = peak - other->peak_allocated_bytes;
  return bytes * 100 < peak ? 0 : bytes;
}

// The module a node was traced in at the top level: "teacher" for "/teacher/teacher.0/Conv"; "" for a node of
// the root's own forward ("/Div") or one without a scope name.
std::string_view TopScope(std::string_view name) {
  if (name.size() < 2 || name[0] != '/') return {};
  const size_t end = name.find('/', 1);
  return end == std::string_view::npos ? std::string_view{} : name.substr(1, end - 1);
}

// Towers: top-level modules with trained weights whose nodes read nothing of another module, only graph inputs
// (directly or through the root's own weightless ops: torch.flip(x), x * 2). Two towers reading one input are a
// teacher and its student, a momentum encoder and its query encoder, or two branches trained together; ONNX
// cannot tell. At risk: the larger tower's saved bytes (the plan keeps them; under no_grad or .detach() nothing
// is kept). Nothing when a grad-mode hint is in force.
uint64_t Simulator::BranchMayBeDetachedAtRisk(const std::vector<LogicalOp>& ops, const std::vector<LayerMemory>& layers,
                                              std::string* where) const {
  if (std::string_view(m_.grad_mode_hint) != "none") return 0;
  struct Tower {
    uint64_t saved = 0;
    bool weights = false, other_module = false;
    std::set<int> inputs;
  };
  std::map<std::string_view, Tower> towers;
  // A module called twice: torch.onnx names the second call's own nodes "/student_1/..." (its layers' stay
  // "/student/...", unseen set 15's DINO student over global and local crops); both are the one module.
  std::set<std::string_view> scopes;
  for (const NodeInfo& n : m_.nodes) scopes.insert(TopScope(n.name));
  auto module = [&](std::string_view scope) {
    const size_t us = scope.rfind('_');
    if (us == std::string_view::npos || us + 1 >= scope.size() ||
        !std::all_of(scope.begin() + static_cast<std::ptrdiff_t>(us) + 1, scope.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      return scope;
    }
    return scopes.count(scope.substr(0, us)) ? scope.substr(0, us) : scope;
  };
  // The graph inputs a value of the root's own weightless ops comes from; -1 in the set: another module's value.
  std::map<int, std::set<int>> sources;
  auto sources_of = [&](int id) -> const std::set<int>& {
    if (auto it = sources.find(id); it != sources.end()) return it->second;
    std::set<int> out;
    std::vector<int> stack = {id};
    std::set<int> seen;
    while (!stack.empty() && out.size() < 64) {
      const int t = stack.back();
      stack.pop_back();
      if (t < 0 || !seen.insert(t).second) continue;
      const TensorInfo& info = m_.tensors[static_cast<size_t>(t)];
      if (info.kind == TensorKind::kGraphInput) {
        out.insert(t);
        continue;
      }
      if (info.kind != TensorKind::kActivation || info.producer < 0) continue;
      const NodeInfo& n = m_.nodes[static_cast<size_t>(info.producer)];
      const bool weightless = std::none_of(n.inputs.begin(), n.inputs.end(), [&](int x) {
        return x >= 0 && m_.tensors[static_cast<size_t>(x)].kind == TensorKind::kParameter;
      });
      if (!TopScope(n.name).empty() || !weightless || seen.size() > 4096) {
        out.insert(-1);
        continue;
      }
      stack.insert(stack.end(), n.inputs.begin(), n.inputs.end());
    }
    return sources.emplace(id, std::move(out)).first->second;
  };
  for (size_t oi = 0; oi < ops.size() && oi < layers.size(); ++oi) {
    const LogicalOp& op = ops[oi];
    if (op.nodes.empty()) continue;
    const std::string_view scope = module(TopScope(m_.nodes[static_cast<size_t>(op.nodes.front())].name));
    if (scope.empty()) continue;
    Tower& t = towers[scope];
    t.saved += layers[oi].saved_bytes;
    for (int id : op.inputs) {
      if (id < 0) continue;
      const TensorInfo& info = m_.tensors[static_cast<size_t>(id)];
      if (info.kind == TensorKind::kParameter) t.weights = true;
      if (info.kind == TensorKind::kGraphInput) t.inputs.insert(id);
      if (info.kind != TensorKind::kActivation || info.producer < 0) continue;
      const std::string_view from = module(TopScope(m_.nodes[static_cast<size_t>(info.producer)].name));
      if (from == scope) continue;
      if (!from.empty()) {
        t.other_module = true;
        continue;
      }
      const std::set<int>& src = sources_of(id);
      if (src.count(-1)) t.other_module = true;
      for (int g : src) {
        if (g >= 0) t.inputs.insert(g);
      }
    }
  }
  // The members of one container (experts.0, experts.1, ...: a mixture's experts, a hash grid's tables) are
  // trained together; a teacher and a student are modules of their own.
  auto container = [](std::string_view scope) {
    const size_t dot = scope.rfind('.');
    const bool numbered = dot != std::string_view::npos && dot + 1 < scope.size() &&
                          std::all_of(scope.begin() + static_cast<std::ptrdiff_t>(dot) + 1, scope.end(),
                                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
    return numbered ? scope.substr(0, dot) : scope;
  };
  uint64_t at_risk = 0;
  for (int input : m_.inputs) {
    std::vector<std::string_view> readers;
    std::map<std::string_view, uint64_t> containers;  // saved bytes per container
    uint64_t largest = 0;
    for (const auto& [scope, t] : towers) {
      if (!t.weights || t.other_module || !t.inputs.count(input)) continue;
      readers.push_back(scope);
      containers[container(scope)] += t.saved;
      largest = std::max(largest, t.saved);
    }
    // Two towers of some size: a router or a gate beside its experts is no second tower.
    std::vector<uint64_t> sizes;
    for (const auto& [name, saved] : containers) sizes.push_back(saved);
    std::sort(sizes.rbegin(), sizes.rend());
    if (sizes.size() < 2 || sizes[1] * 20 < sizes[0] || largest <= at_risk) continue;
    at_risk = largest;
    *where = "'" + std::string(readers[0]) + "' and '" + std::string(readers[1]) + "'" +
             (readers.size() > 2 ? " (and " + std::to_string(readers.size() - 2) + " more)" : "");
  }
  return at_risk;
}

// The stabilised exp: a ReduceMax whose output only x - max reads (Sub, the max second), each difference read
// only by Exp, Softmax or LogSoftmax. Code writes the max .detach()ed as often as not (Performer's FAVOR+
// features, a hand-written softmax); ONNX cannot tell. At risk: what the plan keeps for those maxes'
// backward (their layers' saved bytes; all held at a backward peak), summed. Nothing when a grad-mode hint
// is in force.
uint64_t Simulator::MaxMayBeDetachedAtRisk(const std::vector<LogicalOp>& ops, const std::vector<LayerMemory>& layers,
                                           std::string* where) const {
  if (std::string_view(m_.grad_mode_hint) != "none") return 0;
  auto only_read_by = [&](int id, auto&& fits) {
    const std::vector<int>& readers = m_.tensors[static_cast<size_t>(id)].consumers;
    return !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](int n) {
      return fits(m_.nodes[static_cast<size_t>(n)]);
    });
  };
  uint64_t at_risk = 0;
  size_t count = 0;
  for (size_t oi = 0; oi < ops.size() && oi < layers.size(); ++oi) {
    const LogicalOp& op = ops[oi];
    if (op.kind != "ReduceMax" || op.nodes.empty() || op.outputs.empty() || op.outputs[0] < 0 ||
        layers[oi].saved_bytes == 0) {
      continue;
    }
    const int max = op.outputs[0];
    const bool stabilised = only_read_by(max, [&](const NodeInfo& sub) {
      return sub.op_type == "Sub" && sub.inputs.size() == 2 && sub.inputs[1] == max && sub.inputs[0] != max &&
             !sub.outputs.empty() && sub.outputs[0] >= 0 && only_read_by(sub.outputs[0], [](const NodeInfo& n) {
               return n.op_type == "Exp" || n.op_type == "Softmax" || n.op_type == "LogSoftmax";
             });
    });
    if (!stabilised) continue;
    at_risk += layers[oi].saved_bytes;
    if (count++ == 0) *where = "'" + m_.nodes[static_cast<size_t>(op.nodes.front())].name + "'";
  }
  if (count > 1) *where += " and " + std::to_string(count - 1) + " more";
  return at_risk;
}

// torch.onnx's common-subexpression pass merges the same view written at each use (k.transpose(1, 2) in each step
// of a Hopfield update loop) into one Transpose that several ops read. The plan sums their gradients at that view, in
// a buffer of its size, before its backward hands the sum on, as for one view named once (kt = k.transpose(1, 2));
// a view written at each use hands its gradient straight to the tensor it views. The file is the same either way
// (probes key_read_by_steps and key_read_by_steps_one_view, tools/probe_misses.py: the plan exact for one view,
// +17 / +18 % for a view per step). Only a transpose that matmuls alone read (q @ k.transpose(-2, -1) at each use);
// at risk: the largest such view's bytes.
uint64_t Simulator::ViewMayBeSeveralAtRisk(const std::vector<LogicalOp>& ops, std::string* where) const {
  uint64_t at_risk = 0;
  for (const LogicalOp& op : ops) {
    if (op.kind != "Transpose" || op.nodes.empty() || op.inputs.empty() || op.outputs.empty() || op.inputs[0] < 0 ||
        op.outputs[0] < 0 || !requires_grad_[op.inputs[0]] || !requires_grad_[op.outputs[0]] ||
        m_.tensors[op.inputs[0]].kind != TensorKind::kActivation) {
      continue;
    }
    const std::vector<int>& readers = m_.tensors[static_cast<size_t>(op.outputs[0])].consumers;
    // Read as a matmul operand at each use (q @ k.transpose(-2, -1)): a transpose kept as a name is read by ops of
    // any kind (a norm and a residual over x.transpose(1, 2)), which the plan follows.
    const auto matmul = [&](int n) { return m_.nodes[static_cast<size_t>(n)].op_type == "MatMul"; };
    if (readers.size() < 2 || !std::all_of(readers.begin(), readers.end(), matmul)) continue;
    const uint64_t bytes = TensorBytes(op.outputs[0]);
    if (bytes > at_risk) {
      at_risk = bytes;
      *where = "'" + m_.nodes[static_cast<size_t>(op.nodes.front())].name + "'";
    }
  }
  return at_risk;
}

void Simulator::AddGradModeRisks(StepPlan* plan) const {
  for (const GradModeGuess& guess : FindGradModeGuesses(m_, s_)) {
    auto guessed = ApplyGuess(m_, guess);
    if (!guessed) continue;
    const uint64_t bytes = PeakDroppedByGuess(**guessed, s_, o_, plan->peak_allocated_bytes);
    if (bytes == 0) continue;
    static constexpr std::array<Risk, 5> kRiskOf = {Risk::kSolverStepsMayBeNoGrad, Risk::kTargetMayBeNoGrad,
                                                    Risk::kStraightThroughMayBeDetached, Risk::kBackboneMayBeFrozen,
                                                    Risk::kTowerMayBeFrozen};
    AddRisk(plan, kRiskOf[static_cast<size_t>(guess.sign)], bytes, guess.where);
  }
}

const TableMatch* Simulator::InplaceCandidate(const LogicalOp& op, const TableMatch* row,
                                             const std::vector<int>& buf) const {
  if (op.nodes.empty() || !row) return nullptr;
  const int in = row->inputs[0];
  if (in < 0 || buf[in] < 0 || m_.tensors[in].kind != TensorKind::kActivation || m_.tensors[in].producer < 0) {
    return nullptr;
  }
  const Category c = buffers_[buf[in]].category;
  if (c == kSaved || c == kInputs || c == kWeights) return nullptr;  // torch would refuse backward
  if (std::find(m_.outputs.begin(), m_.outputs.end(), in) != m_.outputs.end()) return nullptr;
  const int first = *std::min_element(op.nodes.begin(), op.nodes.end());
  for (int consumer : m_.tensors[in].consumers) {
    // A later reader would see the result (the traced graph would name the output instead).
    if (consumer > first && std::find(op.nodes.begin(), op.nodes.end(), consumer) == op.nodes.end()) return nullptr;
  }
  return row;
}

// nn.Linear on an input of more than two dims is exported as MatMul(x, weight or its Transpose) then Add
// of the bias; the MatMul's result when `node` is that Add (and the Add its only reader), else -1.
int LinearProduct(const Model& m, int node) {
  const NodeInfo& n = m.nodes[static_cast<size_t>(node)];
  if (n.op_type != "Add" || n.inputs.size() != 2 || n.outputs.empty()) return -1;
  for (int k = 0; k < 2; ++k) {
    const int mm = n.inputs[k], bias = n.inputs[1 - k];
    if (mm < 0 || bias < 0 || !IsParam(m, bias) || m.tensors[mm].producer < 0) continue;
    if (m.tensors[mm].consumers.size() != 1) continue;
    const NodeInfo& p = m.nodes[static_cast<size_t>(m.tensors[mm].producer)];
    if (p.op_type != "MatMul" || p.inputs.size() != 2 || p.inputs[0] < 0 || p.inputs[1] < 0) continue;
    int weight = p.inputs[1];  // the weight, or its Transpose (nn.Linear's export)
    const int t = m.tensors[weight].producer;
    if (t >= 0 && m.nodes[t].op_type == "Transpose" && !m.nodes[t].inputs.empty()) weight = m.nodes[t].inputs[0];
    if (IsParam(m, weight)) return mm;
  }
  return -1;
}

bool Simulator::OutputIsAView(int node) const {
  const NodeInfo& n = m_.nodes[node];
  if (n.op_type == "InstanceNormalization") return true;
  // at::linear on a contiguous 3-D input with a bias: addmm on the flattened input, viewed back to
  // 3-D (exported as MatMul then Add of the bias).
  if (n.outputs.empty() || s_.tensors[n.outputs[0]].dims.size() != 3) return false;
  const int mm = LinearProduct(m_, node);
  if (mm < 0) return false;
  // Only for a contiguous input: a transposed one (an LSTM's batch_first output, or an activation
  // of it, laid out the same way) goes through matmul, whose result is no view.
  return !NonContiguousInTorch(m_, s_, m_.nodes[m_.tensors[mm].producer].inputs[0]);
}

void Simulator::ComputeTypes(const std::vector<LogicalOp>& ops) {
  const Precision p = o_.precision;
  elem_bytes_.assign(m_.tensors.size(), 4);
  for (size_t i = 0; i < m_.tensors.size(); ++i) {
    const ConcreteTensor& c = s_.tensors[i];
    int eb = ElementBytes(c.dtype);
    elem_bytes_[i] = eb ? eb : 4;
    bool pure_half = p == Precision::kFp16 || p == Precision::kBf16;
    if (pure_half && IsFloat(c.dtype)) elem_bytes_[i] = 2;
  }
  if (!IsAmp(p)) return;
  for (const LogicalOp& op : ops) {
    uint64_t eb = 0;
    if (AutocastHalf(op.kind)) {
      eb = 2;
    } else if (AutocastFloat(op.kind)) {
      eb = 4;
    } else {
      for (int id : op.inputs) {
        if (id < 0 || m_.tensors[id].kind != TensorKind::kActivation || !IsFloat(s_.tensors[id].dtype)) continue;
        eb = std::max(eb, elem_bytes_[id]);
      }
      if (eb == 0) eb = 4;
    }
    for (int id : op.outputs) {
      if (id >= 0 && IsFloat(s_.tensors[id].dtype)) elem_bytes_[id] = eb;
    }
  }
}

// ONNX keeps no trace of the caller's variables. In x = rnn(dropout(x)) the caller's x (the
// dropout's input) stays alive until the recurrent layer returns, over that layer's forward
// transients; in x = dropout(x); x = rnn(x) it dies after the dropout, as planned. Measured on
// stacked one-layer nn.GRU/nn.LSTM modules with nn.Dropout between them (random_nets tagger
// rows: the forward peak low by the dropout input's bytes less one step, exact without the
// dropout). The bytes of such inputs that nothing keeps for backward.
uint64_t Simulator::HeldByCallerAtRisk(const std::vector<LogicalOp>& ops, const std::vector<int>& buf,
                                       const std::set<int>& saved) const {
  uint64_t at_risk = 0;
  for (const LogicalOp& op : ops) {
    if (op.kind != "Dropout" || op.inputs.empty() || op.outputs.empty() || op.inputs[0] < 0 || op.outputs[0] < 0) {
      continue;
    }
    const int in = op.inputs[0];
    if (m_.tensors[in].kind != TensorKind::kActivation || buf[in] < 0 || saved.count(buf[in])) continue;
    if (buf[op.outputs[0]] == buf[in]) continue;  // p = 0 or inference: the output is the input
    int readers = 0;  // read again later, it is alive over the recurrent layer in the plan too
    for (int c : m_.tensors[in].consumers) readers += m_.nodes[c].op_type != "Shape";
    if (readers != 1) continue;
    // The dropout's output reaches a recurrent layer's sequence input through layout ops.
    bool feeds_recurrent = false;
    std::vector<int> frontier = {op.outputs[0]};
    for (int depth = 0; depth < 4 && !frontier.empty() && !feeds_recurrent; ++depth) {
      std::vector<int> next;
      for (int t : frontier) {
        for (int c : m_.tensors[t].consumers) {
          const NodeInfo& n = m_.nodes[c];
          const std::string& k = n.op_type;
          if ((k == "LSTM" || k == "GRU" || k == "RNN") && !n.inputs.empty() && n.inputs[0] == t) {
            feeds_recurrent = true;
          } else if ((k == "Transpose" || k == "Reshape" || k == "Squeeze" || k == "Unsqueeze") && !n.outputs.empty() &&
                     n.outputs[0] >= 0) {
            next.push_back(n.outputs[0]);
          }
        }
      }
      frontier = std::move(next);
    }
    if (feeds_recurrent) at_risk += TensorBytes(in);
  }
  return at_risk;
}

// torch.onnx's common-subexpression pass merges identical expressions: `memory + pos` written inside each
// decoder layer (DETR's cross-attention keys) becomes one tensor that every layer reads, where PyTorch computes
// and keeps one per layer. The file cannot tell that from a value computed once before the loop, so the
// copies are a risk: an elementwise value of one operand needing a gradient and one that needs none (a
// constant, a buffer), kept for backward, and read by n > 1 repeats of one layer list (module paths that
// differ in one numeric index): (n - 1) x its bytes. Dev probe detr_memory_pos (unseen set 11's DETR,
// at its own sizes): one key-sized tensor per extra layer kept beside the plan's saved bytes.
uint64_t Simulator::MergedByExportAtRisk(const std::vector<int>& buf, const std::set<int>& saved) const {
  uint64_t at_risk = 0;
  for (size_t id = 0; id < m_.tensors.size(); ++id) {
    const TensorInfo& t = m_.tensors[id];
    if (t.kind != TensorKind::kActivation || t.producer < 0 || buf[id] < 0 || !saved.count(buf[id])) continue;
    const NodeInfo& p = m_.nodes[t.producer];
    if ((p.op_type != "Add" && p.op_type != "Sub" && p.op_type != "Mul") || p.inputs.size() != 2) continue;
    if (p.inputs[0] < 0 || p.inputs[1] < 0) continue;
    auto needs_grad = [&](int x) { return m_.tensors[x].kind == TensorKind::kActivation && requires_grad_[x]; };
    auto fixed = [&](int x) {
      const TensorKind k = m_.tensors[x].kind;
      return k == TensorKind::kConstant || k == TensorKind::kBuffer || (k == TensorKind::kActivation && !requires_grad_[x]);
    };
    if (!(needs_grad(p.inputs[0]) && fixed(p.inputs[1])) && !(needs_grad(p.inputs[1]) && fixed(p.inputs[0]))) continue;
    // The repeats reading it: per layer list (the path before "name.<i>"), its distinct indices.
    std::map<std::string, std::set<std::string>> repeats;
    for (int c : t.consumers) {
      const std::string_view path = ModulePath(m_.nodes[c].name);
      for (size_t at = 1; at < path.size();) {
        const size_t end = std::min(path.find('/', at), path.size());
        const std::string_view part = path.substr(at, end - at);
        const size_t dot = part.rfind('.');
        if (dot != std::string_view::npos && dot + 1 < part.size() &&
            std::all_of(part.begin() + dot + 1, part.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
          repeats[std::string(path.substr(0, at + dot))].insert(std::string(part.substr(dot + 1)));
          break;
        }
        at = end + 1;
      }
    }
    size_t n = 0;
    for (const auto& [list, indices] : repeats) n = std::max(n, indices.size());
    if (n > 1) at_risk += (n - 1) * buffers_[buf[id]].bytes;
  }
  return at_risk;
}

// ONNX does not record inplace=True. leaky_relu_/elu_ keep their result, which then shares the
// storage of their input; the out-of-place form keeps the input and allocates the output. Where
// both are kept, in-place would keep one storage fewer: the bytes at stake; *kinds: those ops.
uint64_t Simulator::InplaceAtRisk(const std::vector<LogicalOp>& ops, const std::vector<int>& buf,
                                  const std::set<int>& saved, std::set<std::string>* kinds) const {
  uint64_t at_risk = 0;
  for (const LogicalOp& op : ops) {
    if (op.kind != "LeakyRelu" && op.kind != "Elu" && op.kind != "Selu" && op.kind != "Celu") continue;
    int in = op.inputs.empty() ? -1 : op.inputs[0];
    int out = op.outputs.empty() ? -1 : op.outputs[0];
    if (in < 0 || out < 0 || buf[in] < 0 || buf[out] < 0 || buf[in] == buf[out]) continue;
    int producer = m_.tensors[in].producer;
    if (producer < 0) continue;
    const std::string& pk = m_.nodes[producer].op_type;
    // In place is impossible after an op that keeps its output (torch would refuse backward).
    if (pk == "Relu" || pk == "Sigmoid" || pk == "Tanh" || pk == "Softmax" || pk == "LogSoftmax" || pk == "Exp" ||
        pk == "Sqrt" || pk == "LeakyRelu" || pk == "Elu" || pk == "Selu" || pk == "Celu") {
      continue;
    }
    if (saved.count(buf[in]) && saved.count(buf[out])) {
      at_risk += buffers_[buf[out]].bytes;
      kinds->insert(op.kind);
      if (trace_) trace_->inplace_buffers.push_back(buf[out]);
    }
  }
  return at_risk;
}

// Where shape inference stops (an operator whose inputs are known but whose output is not), every
// layer after it is planned without its saved tensors and scratch: a confident number would be
// wrong (Swin's attention mask built in forward by slice assignment, tools/random_nets_modern.py
// window: planned -40 % at the peak). The bytes at risk: at least the inputs where it stopped.
// *where: the first such op.
uint64_t Simulator::ShapeInferenceStoppedAtRisk(std::string* where) const {
  uint64_t at_risk = 0;
  for (const NodeInfo& n : m_.nodes) {
    if (n.outputs.empty() || n.outputs[0] < 0 || s_.tensors[n.outputs[0]].known) continue;
    if (n.op_type == "Shape" || NotDifferentiable(n.op_type)) continue;
    bool inputs_known = !n.inputs.empty();
    uint64_t largest = 0;
    for (int in : n.inputs) {
      if (in < 0) continue;
      inputs_known = inputs_known && s_.tensors[in].known;
      if (s_.tensors[in].known && m_.tensors[in].kind == TensorKind::kActivation) {
        largest = std::max(largest, TensorBytes(in));
      }
    }
    if (!inputs_known || largest == 0) continue;
    at_risk += largest;
    if (where->empty()) *where = "'" + n.name + "' (" + n.op_type + ")";
  }
  return at_risk;
}

// instance_norm returns a view; an in-place activation on it (relu_, leaky_relu_, ...) makes
// backward rebuild the view's gradient through as_strided and CopySlices: two output-sized copies
// more at that point (measured), which the out-of-place plan does not hold.
uint64_t Simulator::InplaceAfterInstanceNormAtRisk(const std::vector<LogicalOp>& ops) const {
  uint64_t at_risk = 0;
  for (const LogicalOp& op : ops) {
    if (op.kind != "Relu" && op.kind != "LeakyRelu" && op.kind != "Elu" && op.kind != "Clip") continue;
    int in = op.inputs.empty() ? -1 : op.inputs[0];
    int producer = in >= 0 ? m_.tensors[in].producer : -1;
    if (producer < 0 || m_.nodes[producer].op_type != "InstanceNormalization") continue;
    at_risk = std::max(at_risk, 2 * TensorBytes(in));
  }
  return at_risk;
}

// PyTorch's CPU LSTM/GRU/RNN reads its parameters as they are (the export's gate reordering does
// not exist in the step), so the layer's backward gives them their gradients: the hidden-to-hidden
// weights while it unwinds the steps, the input-to-hidden weights and the biases after (one
// product over all steps at once). Each step forms its own hidden-to-hidden weight gradient and adds it to
// the running sum out of place: two more of that weight's bytes per direction at the step, while
// the steps' states are still kept (measured per autograd node with the tracker,
// tools/step_profile.py on tagger nets of tools/random_nets_modern.py, LSTM and GRU).
void Simulator::RecurrentSourceGradients(const LogicalOp& op, uint64_t master_bytes, int grad_shards,
                                         std::vector<bool>* from_sources,
                                         std::vector<std::pair<int, int>>* source_grads) {
  std::vector<int> sources[4];
  for (size_t i = 1; i <= 3 && i < op.inputs.size(); ++i) {
    const int id = op.inputs[i];
    if (id < 0 || !requires_grad_[id]) continue;
    if (m_.tensors[id].kind == TensorKind::kParameter) {
      sources[i] = {id};
    } else {
      RecurrentWeightSources(m_, id, &sources[i]);
    }
    (*from_sources)[i] = !sources[i].empty();
  }
  auto give = [&](int p) {
    const uint64_t bytes = param_elems_[p] * master_bytes / grad_shards;
    source_grads->push_back({p, Alloc(bytes, kGradients)});
    return bytes;
  };
  // A bidirectional layer unwinds one direction, then the other: the first one's steps run beside
  // that direction's hidden-to-hidden gradient only (the export's R is made of one parameter per
  // direction; an R that is itself one parameter holds both, and is given whole).
  const NodeInfo& node = m_.nodes[op.nodes[0]];
  auto dir = node.string_attrs.find("direction");
  const uint64_t dirs = dir != node.string_attrs.end() && dir->second == "bidirectional" ? 2 : 1;
  uint64_t r_bytes = 0;
  for (int p : sources[2]) r_bytes += param_elems_[p] * master_bytes / grad_shards;
  const uint64_t step_weight = r_bytes / dirs;
  uint64_t given = 0;
  while (!sources[2].empty() && given < step_weight) {
    given += give(sources[2].front());
    sources[2].erase(sources[2].begin());
  }
  const auto& x = op.inputs.empty() || op.inputs[0] < 0 ? std::vector<int64_t>{} : s_.tensors[op.inputs[0]].dims;
  if (step_weight > 0 && x.size() == 3 && x[0] > 1) Observe("backward", 2 * step_weight);
  for (int i : {2, 3, 1}) {
    for (int p : sources[i]) give(p);
  }
}

// x - mean(x) feeding both a Pow and a Div (or a Mul by a gain that requires grad), not fused as
// layer_norm (a normalization written with mean/var over a non-trailing axis): torch.onnx.export
// merges repeated subexpressions, so the graph has one difference where code that writes (x - u)
// twice makes two, and autograd keeps both (pow's and div's or mul's input). ConvNeXt's
// channels-first LayerNorm writes it twice, and of the two readings the higher plan is the one that
// does not run out of memory: planned twice, and the warning says what computing it once saves.
bool Simulator::CentredTwice(const LogicalOp& op) const {
  if (op.kind != "Sub" || op.inputs.size() != 2 || op.outputs.empty() || op.outputs[0] < 0) return false;
  if (op.inputs[0] < 0 || !requires_grad_[op.inputs[0]]) return false;
  const int mean = op.inputs[1] >= 0 ? m_.tensors[op.inputs[1]].producer : -1;
  if (mean < 0 || m_.nodes[mean].op_type != "ReduceMean" || m_.nodes[mean].inputs.empty() ||
      m_.nodes[mean].inputs[0] != op.inputs[0]) {
    return false;
  }
  bool pow = false, div = false;
  for (int c : m_.tensors[op.outputs[0]].consumers) {
    const NodeInfo& n = m_.nodes[c];
    pow = pow || n.op_type == "Pow";
    div = div || n.op_type == "Div";
    // g * (x - m) / sqrt(v) (Conv-TasNet's global layer norm): the Mul keeps its copy of x - m where the
    // other factor requires grad (a gain parameter), as the Div does (probe tasnet_gln_blocks: saved and
    // peak -11.8 % with the second copy left out)
    if (n.op_type == "Mul" && n.inputs.size() == 2) {
      const int other = n.inputs[0] == op.outputs[0] ? n.inputs[1] : n.inputs[0];
      div = div || (other >= 0 && requires_grad_[other]);
    }
  }
  return pow && div;
}

bool Simulator::AnyInputRequiresGrad(const LogicalOp& op) const {
  for (int id : op.inputs) {
    if (id >= 0 && requires_grad_[id]) return true;
  }
  return false;
}

// Recorded ops whose outputs reach the loss by no differentiable path: a similarity only sorted or argmax'ed
// (ToMe's matching, a VQ code's distances), a score compared with a threshold (top-k masks), values only turned
// into integers. Autograd records them and saves what their backward would need, but nothing holds their graph
// once their outputs are gone: its saved tensors are freed then, in forward, and backward never runs there.
// Measured on probe token_merge of tools/probe_misses.py (the normalized halves bmm keeps for a similarity that
// only max(dim) and argsort read: planned as kept to backward, +15 %).
// A tensor needs a gradient where a recorded differentiable op that reads it has an output that needs one,
// from the graph's outputs back; Floor, Ceil and Round pass a zero gradient on in torch (their input needs one
// where it requires one). The graph of a dead op lives until its last float output is last read (or held by
// a module call), and as long as that of a recorded op reading one of them.
std::vector<int> Simulator::GraphDiesAfter(const std::vector<LogicalOp>& ops, const std::vector<int>& producer,
                                           const std::vector<int>& held_until, const std::vector<int>& frame_end,
                                           std::vector<int>* frame_holds) const {
  auto records = [&](const LogicalOp& op) {
    return OpGradMode(m_, op) == GradMode::kRecorded && !NotDifferentiable(op.kind) && AnyInputRequiresGrad(op);
  };
  auto zero_gradient = [](const LogicalOp& op) { return op.kind == "Floor" || op.kind == "Ceil" || op.kind == "Round"; };
  // Which tensors need a gradient, from the graph's outputs back (a worklist: a fused op may sit before an op
  // whose output it reads, so the ops' order is no topological order).
  std::vector<bool> needs(m_.tensors.size(), false), reached(ops.size(), false);
  std::vector<int> work;
  auto need = [&](int id) {
    if (id < 0 || needs[static_cast<size_t>(id)] || !requires_grad_[static_cast<size_t>(id)]) return;
    needs[static_cast<size_t>(id)] = true;
    work.push_back(id);
  };
  for (int id : m_.outputs) need(id);
  for (size_t oi = 0; oi < ops.size(); ++oi) {
    if (!zero_gradient(ops[oi])) continue;  // torch passes a zero gradient on: its input needs one all the same
    reached[oi] = true;
    for (int id : ops[oi].inputs) need(id);
  }
  while (!work.empty()) {
    const int id = work.back();
    work.pop_back();
    const int p = producer[static_cast<size_t>(id)];
    if (p < 0 || reached[static_cast<size_t>(p)] || !records(ops[static_cast<size_t>(p)])) continue;
    reached[static_cast<size_t>(p)] = true;
    const LogicalOp& op = ops[static_cast<size_t>(p)];
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (op.kind == "BatchNormalization" && i >= 3) continue;
      need(op.inputs[i]);
    }
  }
  // Dead: recorded, an output that requires a gradient (so autograd made a graph for it), none that needs one.
  std::vector<bool> dead(ops.size(), false);
  for (size_t oi = 0; oi < ops.size(); ++oi) {
    bool any = false, graph = false;
    for (int id : ops[oi].outputs) {
      any = any || (id >= 0 && needs[static_cast<size_t>(id)]);
      graph = graph || (id >= 0 && requires_grad_[static_cast<size_t>(id)]);
    }
    dead[oi] = !any && graph && records(ops[oi]);
  }
  std::vector<int> last_read(m_.tensors.size(), -1);
  std::vector<std::vector<int>> readers(m_.tensors.size());
  for (size_t oi = 0; oi < ops.size(); ++oi) {
    for (int id : ops[oi].inputs) {
      if (id < 0) continue;
      last_read[static_cast<size_t>(id)] = std::max(last_read[static_cast<size_t>(id)], static_cast<int>(oi));
      readers[static_cast<size_t>(id)].push_back(static_cast<int>(oi));
    }
  }
  std::vector<bool> graph_output(m_.tensors.size(), false);
  for (int id : m_.outputs) {
    if (id >= 0) graph_output[static_cast<size_t>(id)] = true;
  }
  const int last = static_cast<int>(ops.size()) - 1;
  std::vector<int> dies(ops.size(), -1);
  frame_holds->assign(ops.size(), -1);
  for (size_t oi = 0; oi < ops.size(); ++oi) {
    if (!dead[oi]) continue;
    dies[oi] = static_cast<int>(oi);
    for (int id : ops[oi].outputs) {
      if (id < 0 || !requires_grad_[static_cast<size_t>(id)]) continue;  // an integer output holds no graph
      const size_t t = static_cast<size_t>(id);
      dies[oi] = std::max({dies[oi], graph_output[t] ? last : -1, last_read[t], held_until[t]});
      (*frame_holds)[oi] = std::max((*frame_holds)[oi], frame_end[t]);
    }
  }
  // The graph of a dead op lives as long as that of a recorded op reading it (all dead too): to a fixed point,
  // as the ops' order need not be topological (each pass only raises the values, so it ends).
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t oi = 0; oi < ops.size(); ++oi) {
      if (!dead[oi]) continue;
      for (int id : ops[oi].outputs) {
        if (id < 0 || !requires_grad_[static_cast<size_t>(id)]) continue;
        for (int r : readers[static_cast<size_t>(id)]) {
          const size_t u = static_cast<size_t>(r);
          if (!dead[u]) continue;
          if (dies[u] > dies[oi]) dies[oi] = dies[u], changed = true;
          if ((*frame_holds)[u] > (*frame_holds)[oi]) (*frame_holds)[oi] = (*frame_holds)[u], changed = true;
        }
      }
    }
  }
  for (size_t oi = 0; oi < ops.size(); ++oi) {
    if (!dead[oi]) continue;
    dies[oi] = std::min(dies[oi], last);
    (*frame_holds)[oi] = (*frame_holds)[oi] > dies[oi] ? std::min((*frame_holds)[oi], last) : -1;
  }
  return dies;
}

// Walked to a fixed point, not once in list order: a fused op sits where its first node was, and may read a tensor
// an op later in the list makes (torch.onnx writes a group_norm's affine Unsqueezes after its
// InstanceNormalization). Each pass only sets flags, so it ends.
void Simulator::ComputeRequiresGrad(const std::vector<LogicalOp>& ops) {
  requires_grad_.assign(m_.tensors.size(), false);
  for (size_t i = 0; i < m_.tensors.size(); ++i) requires_grad_[i] = m_.tensors[i].kind == TensorKind::kParameter;
  std::vector<bool> from_detached(m_.tensors.size(), false);  // made by code whose result is .detach()ed
  for (const LogicalOp& op : ops) {
    if (NotDifferentiable(op.kind) || OpGradMode(m_, op) != GradMode::kDetached) continue;
    for (int id : op.outputs) {
      if (id >= 0) from_detached[id] = true;
    }
  }
  std::vector<bool> cut(m_.tensors.size(), false);  // such values that recorded code reads
  for (bool changed = true; changed;) {
    changed = false;
    for (const LogicalOp& op : ops) {
      const GradMode mode = OpGradMode(m_, op);
      if (NotDifferentiable(op.kind) || mode == GradMode::kNoGrad) continue;
      bool any = false;
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        int id = op.inputs[i];
        // BatchNormalization's running statistics and Dropout's ratio do not carry gradients.
        if (op.kind == "BatchNormalization" && i >= 3) continue;
        if (id >= 0 && mode == GradMode::kRecorded && from_detached[id]) {
          cut[id] = true;
          continue;
        }
        any = any || (id >= 0 && requires_grad_[id]);
      }
      if (!any) continue;
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        int id = op.outputs[i];
        if (id < 0 || !IsFloat(s_.tensors[id].dtype) || requires_grad_[id]) continue;
        if (op.kind == "BatchNormalization" && i > 0) continue;
        requires_grad_[id] = true;
        changed = true;
      }
    }
  }
  // What recorded code reads of a detached result is the .detach()ed alias: no gradient flows back.
  for (size_t id = 0; id < cut.size(); ++id) {
    if (cut[id]) requires_grad_[id] = false;
  }
}

GraphAnalysis Simulator::Analyse(const std::vector<LogicalOp>& ops) const {
  const ModuleRuns runs(m_, ops);
  GraphAnalysis a;
  a.producer = OpProducers(m_, ops);
  const std::vector<int>& producer = a.producer;
  std::vector<int>& held_until = a.held_until;
  held_until = HeldUntilCallReturns(m_, ops, runs, producer);
  std::vector<int> frame_end;
  std::vector<int>& locals_held_until = a.locals_held_until;
  locals_held_until = LocalsHeldUntil(m_, ops, runs, producer, &frame_end);
  // Values the model's metadata says a name held (python/oomguard/frame_locals.py): held until their frame
  // returns, a point, no longer the locals risk's.
  for (int id : m_.held_locals) {
    const size_t t = static_cast<size_t>(id);
    locals_held_until[t] = -1;
    if (frame_end[t] < 0) continue;
    held_until[t] = std::max(held_until[t], frame_end[t]);
    ++a.locals_held;
  }
  // torch 1.13's F.multi_head_attention_forward (nn.MultiheadAttention's own code: a module below the top whose
  // call runs no child module) binds q, k, v, the scaled q and the attention weights and never rebinds them; under
  // no_grad nothing saves them for backward, so they are held until it returns, not freed after their last read.
  // The operands of its MatMuls of two activations, and the value an operand was scaled from (q), held until
  // the frame returns (probe mha_nograd: -8.1 / -10.9 % before).
  for (size_t oi = 0; oi < ops.size(); ++oi) {
    const LogicalOp& op = ops[oi];
    if (op.kind != "MatMul" || op.inputs.size() != 2 || OpGradMode(m_, op) != GradMode::kNoGrad) continue;
    const size_t d = runs.prefix[oi].size();
    if (d == 0 || std::any_of(op.inputs.begin(), op.inputs.end(), [&](int id) {
          return id < 0 || m_.tensors[static_cast<size_t>(id)].kind != TensorKind::kActivation;
        })) {
      continue;
    }
    size_t first = oi;
    while (first > 0 && runs.Common(first - 1, oi) >= d) --first;
    bool calls_child = false;
    for (size_t j = first; j <= static_cast<size_t>(runs.run_end[oi][d - 1]); ++j) {
      calls_child = calls_child || runs.prefix[j].size() > d;
    }
    if (calls_child) continue;
    for (int id : op.inputs) {
      for (int t = id, step = 0; t >= 0 && step < 2; ++step) {
        const size_t u = static_cast<size_t>(t);
        if (frame_end[u] > held_until[u]) held_until[u] = frame_end[u];
        const int p = producer[u];
        if (p < 0 || (ops[static_cast<size_t>(p)].kind != "Div" && ops[static_cast<size_t>(p)].kind != "Mul")) break;
        t = ops[static_cast<size_t>(p)].inputs.empty() ? -1 : ops[static_cast<size_t>(p)].inputs[0];
      }
    }
  }
  a.graph_dies = GraphDiesAfter(ops, producer, held_until, frame_end, &a.graph_held_to);
  a.inplace_row_of.assign(ops.size(), -1);
  for (size_t oi = 0; oi < ops.size(); ++oi) {
    TableMatch row;
    if (!ops[oi].nodes.empty() && MatchInplaceRow(m_, s_, EmbeddedOpTable(), ops[oi], &row)) {
      a.inplace_row_of[oi] = static_cast<int>(a.inplace_rows.size());
      a.inplace_rows.push_back(std::move(row));
    }
  }
  return a;
}

Result<StepPlan> Simulator::Run() {
  StepPlan plan;
  plan.model = m_.name;
  plan.batch = s_.batch;
  plan.target = o_.target;
  plan.warnings = s_.warnings;
  const bool cuda = o_.target == Target::kCuda;

  const std::shared_ptr<const std::vector<LogicalOp>> fused =
      share_ ? share_->Ops(m_, s_) : std::make_shared<const std::vector<LogicalOp>>(FuseOperators(m_, s_));
  const std::vector<LogicalOp>& ops = *fused;
  ComputeTypes(ops);
  if (share_) {
    requires_grad_ = share_->RequiresGrad([&] {
      ComputeRequiresGrad(ops);
      return requires_grad_;
    });
  } else {
    ComputeRequiresGrad(ops);
  }

  // What-if: a Gemm/MatMul fed by a flattened feature map [B,C,H,W] takes the
  // globally pooled [B,C] instead, so its weight shrinks by H*W.
  param_elems_.assign(m_.tensors.size(), 0);
  for (size_t i = 0; i < m_.tensors.size(); ++i) param_elems_[i] = s_.tensors[i].Elements();
  int pooled_op = -1;
  uint64_t pooled_input_bytes = 0;
  if (!o_.replace_layer_with_pooling.empty()) {
    for (size_t oi = 0; oi < ops.size(); ++oi) {
      if (m_.nodes[ops[oi].nodes[0]].name == o_.replace_layer_with_pooling &&
          (ops[oi].kind == "Gemm" || ops[oi].kind == "MatMul")) {
        pooled_op = static_cast<int>(oi);
      }
    }
    if (pooled_op < 0) {
      return MakeError("no Gemm or MatMul node named '" + o_.replace_layer_with_pooling + "'");
    }
    const LogicalOp& op = ops[pooled_op];
    int src = op.inputs.empty() ? -1 : op.inputs[0];
    while (src >= 0 && s_.tensors[src].dims.size() < 3 && m_.tensors[src].producer >= 0) {
      const NodeInfo& producer = m_.nodes[m_.tensors[src].producer];
      if (producer.op_type != "Flatten" && producer.op_type != "Reshape") break;
      src = producer.inputs.empty() ? -1 : producer.inputs[0];
    }
    int weight = op.inputs.size() > 1 ? op.inputs[1] : -1;
    if (src < 0 || s_.tensors[src].dims.size() < 3 || weight < 0 ||
        m_.tensors[weight].kind != TensorKind::kParameter) {
      return MakeError("cannot replace '" + o_.replace_layer_with_pooling +
                       "' with pooling: its input is not a flattened feature map");
    }
    const auto& d = s_.tensors[src].dims;
    uint64_t spatial = 1;
    for (size_t k = 2; k < d.size(); ++k) spatial *= static_cast<uint64_t>(d[k]);
    param_elems_[weight] = spatial ? param_elems_[weight] / spatial : param_elems_[weight];
    pooled_input_bytes = spatial ? TensorBytes(src) / spatial : 0;
  }

  // What-if: activation checkpointing in about sqrt(n) segments; every segment
  // but the last keeps only its inputs and recomputes the rest in backward. Not on a model that checkpoints
  // already: its own segments stay and the what-if adds none, so it saves nothing and the advice leaves it out
  // (a cut of the ops between the model's segments makes stray one-op segments that hold inputs the op would
  // not have saved: more, not less, on four checkpointed MLP blocks).
  std::vector<int> segment(ops.size(), -1);
  int segments = 0;
  const bool user_segments = m_.checkpoint_segments > 0;
  if (o_.activation_checkpointing && !user_segments && ops.size() > 1) {
    segments = std::max<int>(2, static_cast<int>(std::lround(std::sqrt(static_cast<double>(ops.size())))));
    for (size_t oi = 0; oi < ops.size(); ++oi) {
      int seg = static_cast<int>(oi * segments / ops.size());
      segment[oi] = seg == segments - 1 ? -1 : seg;
    }
  }
  if (user_segments) {
    // The model's torch.utils.checkpoint calls (NodeInfo::checkpoint_segment): every one, the last included,
    // keeps only its inputs and recomputes the rest when backward reaches it. An op is in a call's segment
    // when its anchor node is; each run of consecutive ops of one call is a segment of its own.
    int last = -1;
    for (size_t oi = 0; oi < ops.size(); ++oi) {
      const int call =
          ops[oi].nodes.empty() ? -1 : m_.nodes[static_cast<size_t>(ops[oi].nodes.front())].checkpoint_segment;
      if (call >= 0) segment[oi] = call == last && oi > 0 && segment[oi - 1] >= 0 ? segment[oi - 1] : segments++;
      last = call;
    }
    plan.checkpointed_segments = static_cast<uint64_t>(m_.checkpoint_segments);
    plan.checkpoint_hint = m_.checkpoint_hint;
    for (const NodeInfo& n : m_.nodes) plan.checkpointed_nodes += n.checkpoint_segment >= 0;
  }
  std::vector<std::vector<int>> segment_holds(std::max(segments, 1));
  // use_reentrant=True: its backward re-runs the function with grad and holds the recomputed outputs, and the
  // gradients of the outputs it was given, until the whole segment's backward is done.
  std::vector<bool> reentrant(std::max(segments, 1), false);
  for (size_t oi = 0; user_segments && oi < ops.size(); ++oi) {
    if (segment[oi] >= 0 && !ops[oi].nodes.empty()) {
      reentrant[static_cast<size_t>(segment[oi])] =
          m_.nodes[static_cast<size_t>(ops[oi].nodes.front())].checkpoint_reentrant;
    }
  }
  std::vector<std::vector<int>> deferred_saved(ops.size());          // tensor ids
  std::vector<std::vector<uint64_t>> deferred_extra(ops.size());     // bytes

  // Pending forward uses per tensor: one per consuming operator, one for a graph output.
  std::vector<int> uses(m_.tensors.size(), 0);
  for (const LogicalOp& op : ops) {
    for (int id : op.inputs) {
      if (id >= 0) ++uses[id];
    }
  }
  for (int id : m_.outputs) ++uses[id];
  std::vector<int> buf(m_.tensors.size(), -1);
  const std::shared_ptr<const GraphAnalysis> analysis =
      share_ ? share_->Derived<GraphAnalysis>([&] { return Analyse(ops); })
             : std::make_shared<const GraphAnalysis>(Analyse(ops));
  const std::vector<int>& producer = analysis->producer;
  const std::vector<int>& held_until = analysis->held_until;
  const std::vector<int>& locals_held_until = analysis->locals_held_until;
  const std::vector<int>& graph_held_to = analysis->graph_held_to;  // the locals risk
  const std::vector<int>& graph_dies = analysis->graph_dies;
  if (m_.has_locals_hint) plan.locals_hint = "metadata";
  plan.locals_held = analysis->locals_held;
  std::vector<std::vector<int>> release_after(ops.size());  // tensors whose module call returns there
  std::vector<std::vector<size_t>> kept_when_made(m_.tensors.size());  // per tensor: earlier ops that keep it
  std::vector<std::vector<size_t>> graphs_die_after(ops.size());  // dead ops whose graph goes after that op
  for (size_t oi = 0; oi < ops.size(); ++oi) {
    if (graph_dies[oi] >= 0) graphs_die_after[static_cast<size_t>(graph_dies[oi])].push_back(oi);
  }

  // Persistent state: parameters (and buffers), optimizer state, the input batch and labels.
  const int param_shards = std::max(1, o_.parameter_shards);
  const int grad_shards = std::max(1, o_.gradient_shards);
  const int state_shards = std::max(1, o_.optimizer_state_shards);
  const int master_bytes = (o_.precision == Precision::kFp16 || o_.precision == Precision::kBf16) ? 2 : 4;
  int state_copies = 0;
  switch (o_.optimizer) {
    case Optimizer::kSgd: state_copies = 0; break;
    case Optimizer::kMomentum: case Optimizer::kRmsprop: case Optimizer::kAdagrad: state_copies = 1; break;
    case Optimizer::kAdam: case Optimizer::kAdamW: state_copies = 2; break;
  }
  const bool step_tensor = o_.optimizer == Optimizer::kAdam || o_.optimizer == Optimizer::kAdamW ||
                           o_.optimizer == Optimizer::kAdagrad;
  uint64_t all_params = 0;
  plan.frozen_parameter_count = m_.frozen_parameter_count;
  std::vector<int> param_ids;
  for (const NodeInfo& n : m_.nodes) {
    plan.no_grad_nodes += n.grad_mode == GradMode::kNoGrad;
    plan.detached_nodes += n.grad_mode == GradMode::kDetached;
  }
  plan.grad_mode_hint = m_.grad_mode_hint;
  for (size_t i = 0; i < m_.tensors.size(); ++i) {
    const TensorInfo& t = m_.tensors[i];
    if (t.kind != TensorKind::kParameter && t.kind != TensorKind::kBuffer) continue;
    uint64_t elems = param_elems_[i];
    buf[i] = Alloc(elems * master_bytes / param_shards, kWeights);
    // Read only by code under no_grad or detached (a teacher, a momentum encoder): never a gradient,
    // so the optimizer keeps no state for it (torch.optim skips a parameter whose .grad is None).
    const bool gets_gradient = std::any_of(t.consumers.begin(), t.consumers.end(), [&](int c) {
      return m_.nodes[static_cast<size_t>(c)].grad_mode == GradMode::kRecorded;
    });
    if (t.kind == TensorKind::kParameter && !gets_gradient && !t.consumers.empty()) {
      plan.no_grad_parameter_count += elems;
    } else if (t.kind == TensorKind::kParameter) {
      param_ids.push_back(static_cast<int>(i));
      plan.parameter_count += elems;
      all_params += elems * master_bytes;
      for (int c = 0; c < state_copies; ++c) Alloc(elems * master_bytes / state_shards, kOptimizerState);
      // adam/adamw/adagrad also keep state['step'] per parameter: a float32 scalar on the CPU
      // (capturable=False), so only a CPU step holds it in the device's memory.
      if (!cuda && step_tensor) Alloc(4, kOptimizerState);
    }
  }
  // A registered buffer that forward reads (Swin's relative-position index) is exported as a
  // Constant node or an integer initializer, with no name that says so; PyTorch holds it for the
  // whole step (measured: window random nets' baseline held the 49 x 49 int64 index). Data-sized
  // constants are planned as such buffers; a constant that forward builds instead is alive at least
  // where it is read, so this errs on the side of memory.
  constexpr uint64_t kConstantBufferBytes = 1024;
  for (size_t i = 0; i < m_.tensors.size(); ++i) {
    if (m_.tensors[i].kind != TensorKind::kConstant || m_.tensors[i].consumers.empty() || !s_.tensors[i].known) continue;
    const uint64_t bytes = TensorBytes(static_cast<int>(i));
    if (bytes >= kConstantBufferBytes) buf[i] = Alloc(bytes, kWeights);
  }
  for (int id : m_.inputs) buf[id] = Alloc(TensorBytes(id), kInputs);
  int logits = m_.outputs.empty() ? -1 : m_.outputs[0];
  if (o_.extra_persistent_bytes) Alloc(o_.extra_persistent_bytes, kExtra);
  uint64_t label_bytes = 0;
  if (logits >= 0 && o_.loss == Loss::kCrossEntropy) {
    const auto& d = s_.tensors[logits].dims;
    uint64_t classes = d.size() >= 2 ? static_cast<uint64_t>(d[1]) : 1;
    label_bytes = classes ? s_.tensors[logits].Elements() / classes * 8 : 0;
  } else if (logits >= 0 && o_.loss == Loss::kMse) {
    label_bytes = TensorBytes(logits);
  }
  int labels = label_bytes ? Alloc(label_bytes, kInputs) : -1;
  ledger_.MarkStepBegin();
  Observe("forward", 0);

  // Forward.
  RuleContext ctx{m_, s_, o_.target, 4, requires_grad_};
  // Each op's rule, from the share where another simulation at these shapes made them (kept for the next).
  const std::shared_ptr<const std::vector<OpRule>> shared_rules = share_ ? share_->Rules(o_.target, requires_grad_) : nullptr;
  std::vector<OpRule> new_rules;
  const InplaceHintInForce inplace_hint(m_, o_);
  plan.inplace.hint = inplace_hint.source();
  std::vector<std::string> not_in_place;  // hinted nodes that cannot have run in place
  if (const std::vector<std::string> unknown = inplace_hint.UnknownNames(m_); !unknown.empty()) {
    const std::string& name = unknown.front();
    if (o_.inplace == InplaceHint::kNodes) return MakeError("in-place hint: the model has no node named '" + name + "'");
    plan.warnings.push_back("metadata " + std::string(kInplaceMetadataKey) + " names '" + name + "'" +
                            (unknown.size() > 1 ? " and " + std::to_string(unknown.size() - 1) + " more" : "") +
                            ", which is not a node of this model; ignored");
  }
  std::vector<OpRule> rules;
  rules.reserve(ops.size());
  std::vector<std::vector<int>> saved_bufs(ops.size());
  std::vector<std::vector<int>> unwound_bufs(ops.size());  // saved, released before the op's gradients
  std::set<int> counted_saved;  // buffers already attributed to a layer
  std::set<std::string> unknown_ops;
  uint64_t machine_dependent_at_risk = 0;
  uint64_t per_thread_at_risk = 0;
  uint64_t centred_at_risk = 0;  // the second copies of x - mean planned (CentredTwice)
  uint64_t amax_at_risk = 0;     // the largest OpRule::amax_backward_bytes
  uint64_t prod_zeros_at_risk = 0;  // the largest OpRule::prod_zeros_backward_bytes
  uint64_t data_gemm_pack_at_risk = 0;  // the largest OpRule::data_gemm_pack_bytes
  std::set<std::string> ambiguities;  // OpRule::ambiguity, once each
  plan.layers.reserve(ops.size());
  // The locals risk (LocalsHeldUntil): per buffer, the last op a frame may hold it to; the bytes freed
  // before then and still held so, the op after which each goes, and the forward's peak with them.
  std::vector<int> buffer_held_until;
  std::vector<std::vector<int>> locals_release(ops.size());
  std::vector<std::pair<int, int>> locals_holds;  // (buffer, op), recorded for the trace
  std::vector<size_t> op_end_event(ops.size(), 0);
  uint64_t locals_bytes = 0, forward_peak_with_locals = 0;
  std::vector<int> freed;
  ledger_.freed = &freed;
  auto hold_freed = [&](size_t first_op_after) {
    for (int b : freed) {
      if (static_cast<size_t>(b) >= buffer_held_until.size() || buffer_held_until[b] < static_cast<int>(first_op_after)) {
        continue;
      }
      locals_bytes += buffers_[b].bytes;
      locals_release[static_cast<size_t>(buffer_held_until[b])].push_back(b);
      if (trace_) locals_holds.emplace_back(b, buffer_held_until[b]);
    }
    freed.clear();
  };
  int segment_first_buffer = 0;
  std::vector<size_t> detached_run;  // the ops of the detached module running now
  for (size_t oi = 0; oi < ops.size(); ++oi) {
    const LogicalOp& op = ops[oi];
    timeline_node_ = static_cast<int>(oi);
    if (segment[oi] >= 0 && (oi == 0 || segment[oi - 1] != segment[oi])) {
      segment_first_buffer = static_cast<int>(buffers_.size());
    }
    if (trace_) trace_->layer_saved.emplace_back();
    OpRule rule = shared_rules ? (*shared_rules)[oi] : RuleFor(op, ctx);
    if (share_ && !shared_rules) new_rules.push_back(rule);
    TableMatch inplace_row;
    if (const TableMatch* candidate = InplaceCandidate(op, analysis->InplaceRow(oi), buf)) {
      inplace_row = *candidate;
      ++plan.inplace.candidates;
      if (inplace_hint.Says(m_, op)) {
        rule = InplaceRule(EmbeddedOpTable(), op, inplace_row, ctx, std::move(rule));
        plan.inplace.nodes.push_back(m_.nodes[op.nodes[0]].name);
        // On a view (instance_norm's output; nn.Linear's on a 3-D input with a bias, addmm then
        // view), backward rebuilds the view's gradient through as_strided and CopySlices: two
        // input-sized copies more (measured after instance_norm; see the warning below).
        const int in = inplace_row.inputs[0];
        if (OutputIsAView(m_.tensors[in].producer)) rule.backward_temp_bytes += 2 * TensorBytes(in);
      }
    } else if (inplace_hint.known() && o_.inplace != InplaceHint::kAll && !m_.inplace_hint_all &&
               inplace_hint.Says(m_, op) &&
               (o_.inplace == InplaceHint::kNodes || MatchInplaceRow(m_, s_, EmbeddedOpTable(), op, &inplace_row))) {
      // (The metadata may also name in-place modules that are no activation, Dropout(inplace=True).)
      not_in_place.push_back("'" + m_.nodes[op.nodes[0]].name + "' (" + op.kind + ")");
    }
    machine_dependent_at_risk = std::max(machine_dependent_at_risk, rule.machine_dependent_bytes);
    per_thread_at_risk = std::max(per_thread_at_risk, rule.per_thread_bytes);
    if (!rule.ambiguity.empty()) ambiguities.insert(rule.ambiguity);
    if (CentredTwice(op)) {
      rule.saved_extra.push_back({TensorBytes(op.outputs[0]), "second x - mean"});
      centred_at_risk += TensorBytes(op.outputs[0]);
    }
    const GradMode grad_mode = OpGradMode(m_, op);
    const bool dead_graph = graph_dies[oi] >= 0;  // recorded, but no output reaches the loss (GraphDiesAfter)
    const bool backward_runs = grad_mode == GradMode::kRecorded && AnyInputRequiresGrad(op) && !dead_graph;
    if (backward_runs) amax_at_risk = std::max(amax_at_risk, rule.amax_backward_bytes);
    if (backward_runs) prod_zeros_at_risk = std::max(prod_zeros_at_risk, rule.prod_zeros_backward_bytes);
    if (backward_runs) data_gemm_pack_at_risk = std::max(data_gemm_pack_at_risk, rule.data_gemm_pack_bytes);
    if (!AnyInputRequiresGrad(op) || grad_mode == GradMode::kNoGrad) {
      // No gradient flows through it (shape arithmetic, a mask built from constants, code under
      // torch.no_grad()): autograd records nothing, whatever the op, so nothing is saved and nothing
      // is guessed.
      rule.known = true;
      rule.saved_tensors.clear();
      rule.saved_extra.clear();
      rule.backward_temp_bytes = 0;
    }
    if (!rule.known) {
      unknown_ops.insert(op.kind);
      uint64_t at_risk = 0;
      for (int id : rule.saved_tensors) at_risk += TensorBytes(id);
      NoteUncovered(op.kind, at_risk, &plan.uncovered);
    }
    LayerMemory layer;
    layer.name = m_.nodes[op.nodes[0]].name;
    layer.op_type = op.kind;
    if (!op.outputs.empty() && op.outputs[0] >= 0) {
      layer.output_shape = s_.tensors[op.outputs[0]].dims;
      layer.output_bytes = TensorBytes(op.outputs[0]);
    }
    for (int id : op.inputs) {
      if (id >= 0 && m_.tensors[id].kind == TensorKind::kParameter) layer.parameter_bytes += param_elems_[id] * master_bytes;
    }
    // Outputs: new memory or views.
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      int id = op.outputs[k];
      if (id < 0) continue;
      int view = rule.output_view_of[k];
      if (view == -2) continue;
      // at::linear adds the bias to its product in place (addmm, or matmul then add_): one storage.
      if (const int mm = k == 0 && op.nodes.size() == 1 ? LinearProduct(m_, op.nodes[0]) : -1;
          view < 0 && mm >= 0 && uses[mm] == 1 && held_until[mm] <= static_cast<int>(oi) &&
          TensorBytes(mm) == TensorBytes(id)) {
        view = mm;
      }
      if (view >= 0 && buf[view] >= 0) {
        buf[id] = buf[view];
        Ref(buf[id]);
      } else if (!s_.tensors[id].known) {
        buf[id] = Alloc(0, kTransient);
      } else {
        buf[id] = Alloc(TensorBytes(id), kTransient);
      }
      if (locals_held_until[id] >= 0) {
        const size_t b = static_cast<size_t>(buf[id]);
        if (b >= buffer_held_until.size()) buffer_held_until.resize(b + 1, -1);
        buffer_held_until[b] = std::max(buffer_held_until[b], locals_held_until[id]);
      }
    }
    // Mixed precision: autocast ops keep half copies of fp32 inputs and weights.
    if (IsAmp(o_.precision) && AutocastHalf(op.kind)) {
      std::vector<int> kept;
      for (int id : rule.saved_tensors) {
        if (ElemBytes(id) == 4) {
          rule.saved_extra.push_back({s_.tensors[id].Elements() * 2, "half copy"});
        } else {
          kept.push_back(id);
        }
      }
      rule.saved_tensors = kept;
      for (int id : op.inputs) {
        if (id >= 0 && m_.tensors[id].kind == TensorKind::kParameter) {
          rule.saved_extra.push_back({s_.tensors[id].Elements() * 2, "half weight"});
        }
      }
    }
    if (static_cast<int>(oi) == pooled_op && !op.inputs.empty()) {
      rule.saved_tensors.erase(std::remove(rule.saved_tensors.begin(), rule.saved_tensors.end(), op.inputs[0]),
                               rule.saved_tensors.end());
      rule.saved_extra.push_back({pooled_input_bytes, "pooled input"});
    }
    // Checkpointed segment: hold the segment's inputs, defer everything else to backward.
    if (segment[oi] >= 0 && grad_mode == GradMode::kRecorded) {
      int seg = segment[oi];
      for (int id : op.inputs) {
        if (id < 0 || buf[id] < 0) continue;
        bool before = buf[id] < segment_first_buffer;  // allocated before this segment began
        auto& holds = segment_holds[seg];
        bool held = std::find(holds.begin(), holds.end(), buf[id]) != holds.end();
        if (before && !held && buffers_[buf[id]].category != kInputs &&
            buffers_[buf[id]].category != kWeights) {
          Ref(buf[id]);
          segment_holds[seg].push_back(buf[id]);
          Recategorize(buf[id], kSaved);
          if (counted_saved.insert(buf[id]).second) AddSaved(&layer, buf[id]);
        }
      }
      for (int id : rule.saved_tensors) {
        if (id >= 0 && buf[id] >= 0 && buffers_[buf[id]].category != kInputs &&
            buffers_[buf[id]].category != kWeights) {
          deferred_saved[oi].push_back(id);
        }
      }
      for (const ExtraBuffer& e : rule.saved_extra) deferred_extra[oi].push_back(e.bytes);
      rule.saved_tensors.clear();
      rule.saved_extra.clear();
    }
    // Tensors an earlier op keeps that this op makes (the indices of values, indices = x.max(dim): torch.onnx
    // writes the ArgMax after the ReduceMax), kept from now on for that op.
    for (int id : op.outputs) {
      if (id < 0 || buf[id] < 0) continue;
      for (size_t j : kept_when_made[static_cast<size_t>(id)]) {
        Ref(buf[id]);
        saved_bufs[j].push_back(buf[id]);
        Recategorize(buf[id], kSaved);
        if (OpGradMode(m_, ops[j]) == GradMode::kRecorded && counted_saved.insert(buf[id]).second) AddSaved(&layer, buf[id]);
      }
    }
    // What autograd keeps (in forward only where the result is .detach()ed: not what backward finds).
    // (A dead graph's saved tensors count too: autograd saved them, in forward, though backward never reads them.)
    const bool kept_for_backward = grad_mode == GradMode::kRecorded;
    std::set<int> saved_here;
    for (int id : rule.saved_tensors) {
      if (id >= 0 && buf[id] < 0 && producer[static_cast<size_t>(id)] > static_cast<int>(oi)) {
        kept_when_made[static_cast<size_t>(id)].push_back(oi);
        continue;
      }
      if (id < 0 || buf[id] < 0 || !saved_here.insert(buf[id]).second) continue;
      Ref(buf[id]);
      saved_bufs[oi].push_back(buf[id]);
      Recategorize(buf[id], kSaved);
      Category c = buffers_[buf[id]].category;
      if (kept_for_backward && c != kInputs && c != kWeights && counted_saved.insert(buf[id]).second) {
        AddSaved(&layer, buf[id]);
      }
    }
    for (const ExtraBuffer& e : rule.saved_extra) {
      int b = Alloc(e.bytes, kSaved);
      (e.freed_before_gradients ? unwound_bufs[oi] : saved_bufs[oi]).push_back(b);
      if (!kept_for_backward) continue;
      AddSaved(&layer, b);
      counted_saved.insert(b);
    }
    if (grad_mode == GradMode::kDetached) detached_run.push_back(oi);
    if (dead_graph && graph_held_to[oi] >= 0) {  // a name may hold the graph, and what it saved, longer
      for (const std::vector<int>* bufs : {&saved_bufs[oi], &unwound_bufs[oi]}) {
        for (int b : *bufs) {
          const size_t u = static_cast<size_t>(b);
          if (u >= buffer_held_until.size()) buffer_held_until.resize(u + 1, -1);
          buffer_held_until[u] = std::max(buffer_held_until[u], graph_held_to[oi]);
        }
      }
    }
    // Extras were allocated with one reference, owned by saved_bufs.
    hold_freed(oi);
    forward_peak_with_locals =
        std::max(forward_peak_with_locals, ledger_.total + ledger_.Round(rule.forward_temp_bytes) + locals_bytes);
    Observe("forward", rule.forward_temp_bytes);
    for (int id : op.inputs) {
      if (id < 0 || m_.tensors[id].kind != TensorKind::kActivation || --uses[id] != 0) continue;
      if (held_until[id] > static_cast<int>(oi)) {
        release_after[static_cast<size_t>(held_until[id])].push_back(id);
      } else {
        Unref(buf[id]);
      }
    }
    for (int id : op.outputs) {
      if (id >= 0 && uses[id] == 0 && buf[id] >= 0) Unref(buf[id]);
    }
    for (int id : release_after[oi]) Unref(buf[id]);
    for (size_t j : graphs_die_after[oi]) {  // nothing reads their outputs any more: their graphs die
      for (int b : saved_bufs[j]) Unref(b);
      for (int b : unwound_bufs[j]) Unref(b);
      saved_bufs[j].clear();
      unwound_bufs[j].clear();
    }
    if (!detached_run.empty() && (oi + 1 == ops.size() || OpGradMode(m_, ops[oi + 1]) != GradMode::kDetached)) {
      // The detached module has returned and its result was .detach()ed: the graph it built dies with the
      // result, and what it saved with it.
      for (size_t j : detached_run) {
        for (int b : saved_bufs[j]) Unref(b);
        for (int b : unwound_bufs[j]) Unref(b);
        saved_bufs[j].clear();
        unwound_bufs[j].clear();
      }
      detached_run.clear();
      Observe("forward", 0);
    }
    hold_freed(oi + 1);
    for (int b : locals_release[oi]) locals_bytes -= buffers_[b].bytes;
    if (trace_) op_end_event[oi] = trace_->events.size();
    rules.push_back(std::move(rule));
    plan.layers.push_back(std::move(layer));
  }
  if (share_ && !shared_rules) share_->KeepRules(o_.target, requires_grad_, std::move(new_rules));
  ledger_.freed = nullptr;
  if (trace_) {
    trace_->locals_holds.clear();
    for (const auto& [b, op] : locals_holds) trace_->locals_holds.emplace_back(b, op_end_event[static_cast<size_t>(op)]);
  }
  if (!not_in_place.empty()) {
    plan.warnings.push_back("in-place hint: node " + not_in_place.front() +
                            (not_in_place.size() > 1 ? " and " + std::to_string(not_in_place.size() - 1) + " more" : "") +
                            " cannot have run in place (no in-place form, or its input is kept for backward or read "
                            "later); planned out of place");
  }
  const uint64_t held_by_caller_at_risk = HeldByCallerAtRisk(ops, buf, counted_saved);
  // An upper bound: the forward's peak with every value its frames may hold still held.
  const uint64_t forward_end_with_locals = std::max(ledger_.peak, forward_peak_with_locals);
  if (trace_) trace_->forward_end_event = trace_->events.size();
  uint64_t total_saved = 0;
  for (int b : counted_saved) total_saved += buffers_[b].bytes;
  if (trace_) trace_->total_saved.assign(counted_saved.begin(), counted_saved.end());
  // A hint leaves nothing at stake: the plan follows it.
  std::set<std::string> inplace_kinds;
  const uint64_t inplace_at_risk = inplace_hint.known() ? 0 : InplaceAtRisk(ops, buf, counted_saved, &inplace_kinds);
  if (inplace_at_risk > 0) {
    std::string kinds;
    for (const std::string& k : inplace_kinds) kinds += (kinds.empty() ? "" : "/") + k;
    if (trace_) trace_->inplace_kinds = kinds, trace_->inplace_warning = static_cast<int>(plan.warnings.size());
    plan.warnings.push_back(InplaceWarning(kinds, inplace_at_risk));
  }
  std::string unknown_first;
  const uint64_t unknown_at_risk = ShapeInferenceStoppedAtRisk(&unknown_first);
  AddRisk(&plan, Risk::kShapeInferenceStopped, unknown_at_risk, unknown_first);
  plan.data_dependent = SummarizeDataDependent(m_, s_);
  if (!s_.data_dependent.empty()) {
    const NodeInfo& first = m_.nodes[s_.data_dependent.front().node];
    const size_t more = s_.data_dependent.size() - 1;
    AddRisk(&plan, Risk::kDataDependentShape, DataDependentAtRisk(m_, s_),
            "'" + first.name + "' (" + first.op_type + ")" + (more ? " and " + std::to_string(more) + " more" : ""));
    plan.warnings.push_back(DataDependentWarning(plan.data_dependent));
  }
  AddRisk(&plan, Risk::kMeanCentredOnce, centred_at_risk);
  const uint64_t view_inplace_at_risk = inplace_hint.known() ? 0 : InplaceAfterInstanceNormAtRisk(ops);
  AddRisk(&plan, Risk::kCpuIsaScratch, machine_dependent_at_risk);
  AddRisk(&plan, Risk::kCpuThreadScratch, per_thread_at_risk);
  AddRisk(&plan, Risk::kInplaceAfterInstanceNorm, view_inplace_at_risk);
  AddRisk(&plan, Risk::kReductionMayBeAmax, amax_at_risk);
  AddRisk(&plan, Risk::kProdWithoutZeros, prod_zeros_at_risk);
  AddRisk(&plan, Risk::kMergedByExport, MergedByExportAtRisk(buf, counted_saved));
  AddRisk(&plan, Risk::kConvDataGemmMayPack, data_gemm_pack_at_risk);
  std::string towers;
  const uint64_t detached_at_risk = BranchMayBeDetachedAtRisk(ops, plan.layers, &towers);
  if (detached_at_risk * 100 >= ledger_.peak) AddRisk(&plan, Risk::kBranchMayBeDetached, detached_at_risk, towers);
  std::string maxes;
  const uint64_t max_detached_at_risk = MaxMayBeDetachedAtRisk(ops, plan.layers, &maxes);
  if (max_detached_at_risk * 100 >= ledger_.peak) AddRisk(&plan, Risk::kMaxMayBeDetached, max_detached_at_risk, maxes);
  std::string views;
  const uint64_t views_at_risk = ViewMayBeSeveralAtRisk(ops, &views);
  if (views_at_risk * 100 >= ledger_.peak) AddRisk(&plan, Risk::kViewMayBeSeveral, views_at_risk, views);
  AddRisk(&plan, Risk::kWeightMayBeFrozen, LowRankBaseWeightBytes(m_, s_) * (1 + state_copies) / state_shards);

  // Loss.
  timeline_node_ = TimelineRecorder::kLoss;
  int loss_saved = -1, loss_scalar = -1;
  if (logits >= 0 && o_.loss == Loss::kCrossEntropy) {
    // log_softmax(logits) is saved (fp32); nll_loss keeps the labels.
    loss_saved = Alloc(s_.tensors[logits].Elements() * 4, kSaved);
    total_saved += buffers_[loss_saved].bytes;
    if (trace_) trace_->total_saved.push_back(loss_saved);
  } else if (logits >= 0 && o_.loss == Loss::kMse) {
    Ref(buf[logits]);
    loss_saved = buf[logits];
  }
  loss_scalar = Alloc(4, kTransient);
  Observe("forward", 0);

  // Backward.
  std::vector<int> grad(m_.tensors.size(), -1);
  std::vector<bool> param_has_grad(m_.tensors.size(), false);
  if (logits >= 0 && requires_grad_[logits]) {
    if (o_.loss == Loss::kCrossEntropy) {
      int g1 = Alloc(s_.tensors[logits].Elements() * 4, kTransient);  // d loss / d log_softmax
      int g2 = Alloc(TensorBytes(logits), kTransient);                  // d loss / d logits
      Observe("backward", 0);
      Unref(g1);
      Unref(loss_saved);
      grad[logits] = g2;
    } else if (o_.loss == Loss::kMse) {
      grad[logits] = Alloc(TensorBytes(logits), kTransient);
      Observe("backward", 0);
      Unref(loss_saved);
    } else {
      grad[logits] = Alloc(TensorBytes(logits), kTransient);
      Observe("backward", 0);
    }
  }
  for (size_t oi = ops.size(); oi-- > 0;) {
    const LogicalOp& op = ops[oi];
    const OpRule& rule = rules[oi];
    timeline_node_ = static_cast<int>(oi);
    // Entering a checkpointed segment from its end: recompute its forward.
    if (segment[oi] >= 0 && (oi + 1 == ops.size() || segment[oi + 1] != segment[oi])) {
      std::map<int, int> recomputed;  // tensor id -> new buffer
      std::vector<int> fresh;
      for (size_t j = oi + 1; j-- > 0 && segment[j] == segment[oi];) {
        for (int id : deferred_saved[j]) {
          auto it = recomputed.find(id);
          const auto& holds = segment_holds[segment[oi]];
          if (it == recomputed.end() && user_segments && buf[id] >= 0 &&
              std::find(holds.begin(), holds.end(), buf[id]) != holds.end()) {
            // A value entering the model's segment: torch's recompute reads the one kept (a detached alias).
            it = recomputed.emplace(id, buf[id]).first;
          } else if (it == recomputed.end()) {
            int b = Alloc(TensorBytes(id), kSaved);
            fresh.push_back(b);
            it = recomputed.emplace(id, b).first;
          }
          Ref(it->second);
          saved_bufs[j].push_back(it->second);
        }
        for (uint64_t bytes : deferred_extra[j]) saved_bufs[j].push_back(Alloc(bytes, kSaved));
      }
      for (int b : fresh) Unref(b);
      if (reentrant[static_cast<size_t>(segment[oi])]) {
        auto& holds = segment_holds[static_cast<size_t>(segment[oi])];
        for (int id : op.outputs) {
          if (id < 0 || grad[id] < 0) continue;
          holds.push_back(Alloc(TensorBytes(id), kSaved));  // the recomputed output
          Ref(grad[id]);
          holds.push_back(grad[id]);
        }
      }
      Observe("backward", 0);
    }
    bool has_grad = false;
    for (int id : op.outputs) has_grad = has_grad || (id >= 0 && grad[id] >= 0);
    std::vector<int> extra_grads;  // copies of output gradients released after this op's backward
    std::vector<std::pair<int, int>> source_grads;  // (parameter, gradient buffer) of a recurrent layer
    std::vector<bool> from_sources(op.inputs.size(), false);
    if (has_grad && (op.kind == "LSTM" || op.kind == "GRU" || op.kind == "RNN")) {
      RecurrentSourceGradients(op, master_bytes, grad_shards, &from_sources, &source_grads);
    }
    for (int b : unwound_bufs[oi]) Unref(b);
    if (has_grad && rule.output_gradient_copy_bytes > 0 && !op.outputs.empty() && op.outputs[0] >= 0 &&
        grad[op.outputs[0]] >= 0) {
      // The view's backward copies the gradient, and releases it if it held the last reference.
      int& g = grad[op.outputs[0]];
      const int copy = Alloc(rule.output_gradient_copy_bytes, kTransient);
      Observe("backward", 0);
      if (buffers_[g].refs == 1) {
        Unref(g);
        g = copy;
      } else {
        extra_grads.push_back(copy);
      }
    }
    std::vector<int> new_grads(op.inputs.size(), -1);
    if (has_grad) {
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        int id = op.inputs[i];
        if (id < 0 || !requires_grad_[id] || from_sources[i]) continue;
        if (op.kind == "BatchNormalization" && i >= 3) continue;
        bool is_param = m_.tensors[id].kind == TensorKind::kParameter;
        int alias = rule.grad_alias_output[i];
        const int aliased = alias >= 0 && alias < static_cast<int>(op.outputs.size()) && op.outputs[alias] >= 0
                                ? grad[op.outputs[alias]]
                                : -1;
        // A view of a parameter (a tied LM head's weight.t()) gets its gradient as a view of the
        // output's: TBackward0 allocates nothing, and AccumulateGrad keeps that storage.
        const uint64_t param_grad_bytes = is_param ? Round(param_elems_[id] * master_bytes / grad_shards) : 0;
        const bool param_view = is_param && aliased >= 0 && IsViewOp(op.kind) &&
                                buffers_[aliased].bytes == param_grad_bytes;
        if ((!is_param && aliased >= 0) || param_view) {
          new_grads[i] = aliased;
          Ref(new_grads[i]);
          if (param_view) Recategorize(aliased, kGradients);
        } else if (is_param) {
          new_grads[i] = Alloc(param_elems_[id] * master_bytes / grad_shards, kGradients);
        } else if (rule.gradient_joins_siblings && grad[id] >= 0) {
          new_grads[i] = grad[id];
          Ref(new_grads[i]);
        } else {
          new_grads[i] = Alloc(TensorBytes(id), kTransient);
        }
      }
      Observe("backward", rule.backward_temp_bytes);
    }
    for (int id : op.outputs) {
      if (id >= 0 && grad[id] >= 0) {
        Unref(grad[id]);
        grad[id] = -1;
      }
    }
    for (int b : extra_grads) Unref(b);
    for (int b : saved_bufs[oi]) Unref(b);
    if (segment[oi] >= 0 && (oi == 0 || segment[oi - 1] != segment[oi])) {
      for (int b : segment_holds[segment[oi]]) Unref(b);
    }
    // A parameter used twice (a tied weight): autograd 1.13 adds the two gradients out of place.
    auto accumulate_param = [&](int id, int g) {
      if (param_has_grad[id]) {
        Observe("backward", buffers_[g].bytes);
        Unref(g);
      }
      param_has_grad[id] = true;
    };
    for (const auto& [p, g] : source_grads) accumulate_param(p, g);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      int id = op.inputs[i];
      if (new_grads[i] < 0) continue;
      bool is_param = m_.tensors[id].kind == TensorKind::kParameter;
      if (is_param) {
        accumulate_param(id, new_grads[i]);
        continue;
      }
      if (grad[id] >= 0) {
        if (grad[id] != new_grads[i]) Observe("backward", 0);
        const uint64_t own = Round(TensorBytes(id));
        if (buffers_[grad[id]].bytes > own && buffers_[new_grads[i]].bytes == own) {
          // The gradient there is a slice of a larger storage (torch.cat's narrow()): autograd adds
          // it into the new gradient instead and lets the slice go (InputBuffer::accumulate).
          Unref(grad[id]);
          grad[id] = new_grads[i];
        } else if (grad[id] == new_grads[i]) {
          Unref(new_grads[i]);
        } else {
          // Autograd 1.13's InputBuffer::accumulate adds two gradients of one tensor out of place
          // (old_var + var, also where it holds the last reference to old_var): the sum is a new
          // tensor-sized buffer while both addends are still held, then both are let go - also where
          // they are narrow() slices of torch.cat gradients (DenseNet's features), which then stop
          // holding the whole cat gradient. Measured with the tracker (tools/probe_families.py
          // grad_sum_heads: two Linears reading one tensor, -19 % planned in place; sqerr_aux: an
          // auxiliary loss computed in forward, -9 %; dense_cat: features read by two concatenations).
          const int sum = Alloc(TensorBytes(id), kTransient);
          Observe("backward", 0);
          Unref(grad[id]);
          Unref(new_grads[i]);
          grad[id] = sum;
        }
      } else {
        grad[id] = new_grads[i];
      }
    }
  }
  for (int& g : grad) {
    if (g >= 0) Unref(g);
    g = -1;
  }
  Observe("backward", 0);

  // Optimizer step: its temporaries depend on the implementation.
  OptimizerImpl impl = o_.optimizer_impl;
  if (impl == OptimizerImpl::kDefault) impl = cuda ? OptimizerImpl::kForeach : OptimizerImpl::kLoop;
  int temp_copies = 0;
  switch (o_.optimizer) {
    case Optimizer::kAdam: case Optimizer::kAdamW: temp_copies = impl == OptimizerImpl::kLoop ? 2 : 1; break;
    case Optimizer::kRmsprop: case Optimizer::kAdagrad: temp_copies = 1; break;
    default: temp_copies = 0;
  }
  if (impl == OptimizerImpl::kFused) temp_copies = 0;
  uint64_t step_temp = 0;
  if (impl == OptimizerImpl::kLoop) {
    // The single-tensor loop makes each parameter's temporaries (adam: sqrt(exp_avg_sq), then its
    // quotient; rmsprop/adagrad: the sqrt) while the previous parameter's result is still alive: the
    // loop's local (`denom`, `avg`, `std`) is released only when the next one is assigned
    // (torch/optim/adam.py 1.13; measured in tools/random_nets.py rows with the allocation tracker).
    uint64_t previous = 0;
    for (int id : param_ids) {
      uint64_t bytes = Round(param_elems_[id] * master_bytes / state_shards);
      if (temp_copies > 0) step_temp = std::max(step_temp, temp_copies * bytes + previous);
      previous = bytes;
    }
  } else {
    for (int id : param_ids) step_temp += temp_copies * Round(param_elems_[id] * master_bytes / state_shards);
  }
  timeline_node_ = TimelineRecorder::kOptimizerStep;
  Observe("optimizer", step_temp);
  (void)labels;
  (void)loss_scalar;

  // Results.
  if (o_.record_timeline) plan.timeline = timeline_.Finish([&](int oi) { return m_.nodes[ops[oi].nodes[0]].name; });
  bool has_matmul = false, has_conv = false;
  for (const LogicalOp& op : ops) {
    has_matmul = has_matmul || op.kind == "Gemm" || op.kind == "MatMul";
    has_conv = has_conv || op.kind == "Conv" || op.kind == "ConvTranspose";
  }
  if (trace_) trace_->has_matmul = has_matmul, trace_->has_conv = has_conv;
  FinishStepPlan(ledger_, o_, has_matmul, has_conv, total_saved, &plan,
                 trace_ && trace_->assumed_replay ? &*trace_->assumed_replay : nullptr);
  if (plan.peak_phase == "forward") AddRisk(&plan, Risk::kDropoutInputHeldByCaller, held_by_caller_at_risk);
  for (const std::string& k : unknown_ops) {
    plan.warnings.push_back("no memory rule for operator " + k +
                            "; assumed it keeps all its inputs and outputs for backward");
  }
  plan.warnings.insert(plan.warnings.end(), ambiguities.begin(), ambiguities.end());
  if (plan_guesses_) AddGradModeRisks(&plan);
  AddLocalsRisk(forward_end_with_locals, ledger_.peak, &plan);  // last, as a recording's Replay adds it
  return plan;
}

}  // namespace

int StepLedger::Alloc(uint64_t bytes, Category c) {
  Buffer b;
  b.bytes = Round(bytes);
  b.category = c;
  b.refs = 1;
  buffers.push_back(b);
  Count(b, +1);
  int id = static_cast<int>(buffers.size()) - 1;
  if (cuda_) events.push_back({AllocationEvent::kAlloc, id, b.bytes});
  if (trace_) trace_->events.push_back({StepTrace::kAlloc, static_cast<uint8_t>(c), id, nullptr, bytes});
  return id;
}

void StepLedger::Count(const Buffer& b, int sign) {
  uint64_t v = b.bytes;
  if (sign > 0) {
    live[b.category] += v;
    total += v;
  } else {
    live[b.category] -= v;
    total -= v;
  }
}

void StepLedger::Unref(int b) {
  if (b < 0) return;
  Buffer& buf = buffers[b];
  if (buf.refs <= 0) return;
  if (--buf.refs == 0) Free(b);
}

void StepLedger::Free(int b) {
  Buffer& buf = buffers[b];
  buf.refs = 0;
  Count(buf, -1);
  if (freed) freed->push_back(b);
  if (cuda_) events.push_back({AllocationEvent::kFree, b, buf.bytes});
  if (trace_) trace_->events.push_back({StepTrace::kFree, 0, b, nullptr, 0});
}

void StepLedger::Recategorize(int b, Category c) {
  if (b < 0 || buffers[b].category == c) return;
  Buffer& buf = buffers[b];
  if (buf.category == kInputs || buf.category == kWeights) return;
  if (buf.refs > 0) {
    live[buf.category] -= buf.bytes;
    live[c] += buf.bytes;
  }
  buf.category = c;
  if (trace_) trace_->events.push_back({StepTrace::kRecategorize, static_cast<uint8_t>(c), b, nullptr, 0});
}

uint64_t StepLedger::Observe(const char* phase_name, uint64_t temp) {
  uint64_t t = Round(temp);
  if (cuda_ && temp > 0) events.push_back({AllocationEvent::kTemporary, -1, t});
  if (total + t > peak) {
    peak = total + t;
    at_peak = live;
    at_peak[kTransient] += t;
    phase = phase_name;
  }
  if (trace_) trace_->events.push_back({StepTrace::kObserve, 0, -1, phase_name, temp});
  return t;
}

void StepLedger::MarkStepBegin() {
  step_begin = events.size();
  if (trace_) trace_->events.push_back({StepTrace::kStepBegin, 0, -1, nullptr, 0});
}

CudaStepOverheads CudaOverheads(const PlanOptions& o, bool has_matmul, bool has_conv) {
  const uint64_t cublas = has_matmul || has_conv ? (o.cuda_compute_capability >= 90 ? 32 : 8) * kMiB : 0;
  const uint64_t cudnn = has_conv ? 64 * kMiB : 0;
  return {cublas + cudnn, CudaContextBytes(o.cuda_compute_capability)};
}

CudaPeaks CudaStepPeaks(uint64_t ledger_peak, const ReplayResult& replay) {
  const uint64_t allocated = std::max(ledger_peak, replay.peak_allocated_bytes);
  return {allocated, std::max(replay.peak_reserved_bytes, allocated)};
}

uint64_t CudaRequiredBytes(const CudaPeaks& peaks, const CudaStepOverheads& overheads) {
  return peaks.reserved + overheads.workspace + overheads.context;
}

void FinishStepPlan(const StepLedger& ledger, const PlanOptions& o, bool has_matmul, bool has_conv,
                    uint64_t total_saved, StepPlan* plan, const ReplayResult* replayed) {
  const auto& at_peak = ledger.at_peak;
  plan->peak_allocated_bytes = ledger.peak;
  plan->peak_phase = ledger.phase;
  plan->bytes.weights = at_peak[kWeights];
  plan->bytes.gradients = at_peak[kGradients];
  plan->bytes.optimizer_state = at_peak[kOptimizerState];
  plan->bytes.inputs = at_peak[kInputs];
  plan->bytes.activations_saved = total_saved;
  plan->bytes.transient = at_peak[kTransient] + at_peak[kExtra];
  plan->at_peak = plan->bytes;
  plan->at_peak.activations_saved = at_peak[kSaved];
  if (o.target == Target::kCuda) {
    const CudaPeaks peaks = CudaStepPeaks(
        ledger.peak, replayed ? *replayed
                              : ReplayTrainingStep(ledger.events, ledger.step_begin, ledger.buffers.size(),
                                                   {o.cuda_max_split_size, o.cuda_expandable_segments}));
    plan->peak_allocated_bytes = peaks.allocated;
    plan->peak_reserved_bytes = peaks.reserved;
    const CudaStepOverheads overheads = CudaOverheads(o, has_matmul, has_conv);
    plan->bytes.workspace = overheads.workspace;
    plan->bytes.context = overheads.context;
    plan->bytes.allocator_slack = plan->peak_reserved_bytes - ledger.peak;
    plan->required_bytes = CudaRequiredBytes(peaks, overheads);
  } else {
    plan->peak_reserved_bytes = ledger.peak;
    plan->required_bytes = ledger.peak;
  }
  plan->at_peak.workspace = plan->bytes.workspace;
  plan->at_peak.context = plan->bytes.context;
  plan->at_peak.allocator_slack = plan->bytes.allocator_slack;
  plan->inplace.peak_allocated_low_bytes = plan->inplace.peak_allocated_high_bytes = plan->peak_allocated_bytes;
  plan->inplace.required_low_bytes = plan->inplace.required_high_bytes = plan->required_bytes;
}

std::string InplaceWarning(const std::string& kinds, uint64_t bytes) {
  return kinds + " may have been in-place (inplace=True is not recorded in ONNX); the plan assumes "
                 "out-of-place: if in-place, " + std::to_string(bytes) + " bytes fewer activations are kept for backward";
}

// Tables the file cannot tell from buffers (TablesThatMayBeBuffers): the step is planned with them as weights, and
// again as buffers; the difference in peak is at risk.
Result<StepPlan> SimulateTrainingStep(const Model& model, const ConcreteShapes& shapes, const PlanOptions& options,
                                      StepTrace* trace, SimulationShare* share) {
  Result<StepPlan> plan = Simulator(model, shapes, options, trace, share).Run();
  if (!plan) return plan;
  const std::set<std::string> tables = TablesThatMayBeBuffers(model);
  if (tables.empty()) return plan;
  Model as_buffers = model;
  MarkAsBuffers(tables, &as_buffers);
  const uint64_t bytes = PeakDroppedByGuess(as_buffers, shapes, options, plan->peak_allocated_bytes);
  if (bytes == 0) return plan;
  std::string where = "'" + *tables.begin() + "'";
  if (tables.size() > 1) where += " and " + std::to_string(tables.size() - 1) + " more";
  AddRisk(&*plan, Risk::kTableMayBeBuffer, bytes, where);
  return plan;
}

}  // namespace oomguard::plan
