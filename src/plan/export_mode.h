// Recognising an ONNX file exported for inference rather than for training:
// torch.onnx.export's default (TrainingMode.EVAL) writes BatchNormalization in
// inference form or folds it into the preceding convolution (its weights then
// lose their names and become "onnx::Conv_15"), and drops Dropout. Planned as a
// training step, such a graph under-predicts: batch-norm statistics, dropout
// masks and the folded layers' activations are missing.
#pragma once

#include <optional>
#include <string>

#include "model.h"

namespace oomguard::plan {

// The export call that produces a graph the planner can trust.
inline constexpr const char* kTrainingExportCall =
    "torch.onnx.export(model, args, f, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False, "
    "dynamic_axes=";

// A warning naming the evidence and the export call to use instead, or nullopt
// when the graph looks like a training export. REQUIRES: model.opset is set.
std::optional<std::string> DetectInferenceExport(const Model& model);

}  // namespace oomguard::plan
