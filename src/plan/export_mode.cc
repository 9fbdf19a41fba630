#include "export_mode.h"

#include <vector>

namespace oomguard::plan {
std::optional<std::string> DetectInferenceExport(const Model& m) {
  int bn_inference = 0, dropout_inference = 0, folded = 0;
  std::string folded_example;
  for (const NodeInfo& n : m.nodes) {
    if (n.op_type == "BatchNormalization") {
      // Training form: training_mode=1 (opset >= 14) or the running statistics as extra outputs (opset < 14).
      auto it = n.int_attrs.find("training_mode");
      bool training = m.opset >= 14 ? (it != n.int_attrs.end() && it->second != 0) : n.outputs.size() > 1;
      if (!training) ++bn_inference;
    } else if (n.op_type == "Dropout" && m.opset >= 12) {
      // Training form: a training_mode input that is true (or not a constant).
      int mode = n.inputs.size() > 2 ? n.inputs[2] : -1;
      bool training = mode >= 0 && !(m.tensors[mode].has_value && !m.tensors[mode].value.empty() &&
                                     m.tensors[mode].value[0] == 0);
      if (!training) ++dropout_inference;
    } else if (n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "Gemm" || n.op_type == "MatMul") {
      // A weight torch renamed: the result of constant folding (e.g. a BatchNorm folded into the Conv).
      for (size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
        int id = n.inputs[i];
        if (id < 0 || m.tensors[id].producer >= 0 || !IsFloat(m.tensors[id].dtype)) continue;
        const TensorInfo& t = m.tensors[id];
        uint64_t elements = 1;
        for (int64_t d : t.dims) elements *= static_cast<uint64_t>(d < 0 ? 0 : d);
        if (t.kind == TensorKind::kGraphInput || elements <= 1 || t.name.rfind("onnx::", 0) != 0) continue;
        if (folded++ == 0) folded_example = t.name;
        break;
      }
    }
  }
  if (bn_inference == 0 && dropout_inference == 0 && folded == 0) return std::nullopt;
  std::vector<std::string> evidence;
  if (bn_inference) evidence.push_back(std::to_string(bn_inference) + " BatchNormalization in inference form");
  if (dropout_inference) evidence.push_back(std::to_string(dropout_inference) + " Dropout in inference form");
  if (folded) {
    evidence.push_back(std::to_string(folded) + " layers with constant-folded weights ('" + folded_example +
                       "'; a BatchNorm folded into its Conv)");
  }
  std::string list;
  for (size_t i = 0; i < evidence.size(); ++i) list += (i ? ", " : "") + evidence[i];
  std::string input = m.inputs.empty() ? "input" : m.tensors[m.inputs[0]].name;
  return "this is an eval-mode or constant-folded export (" + list +
         "): a training step keeps more (batch-norm statistics, dropout masks, the folded layers' activations) "
         "than this graph shows, so the plan is too low. Re-export with " + std::string(kTrainingExportCall) +
         "{'" + input + "': {0: 'batch'}})";
}

}  // namespace oomguard::plan
