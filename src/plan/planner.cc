// LoadModel (file or zoo name) and PlanStep (shapes, then the simulation).
#include "oomguard/plan/planner.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "model.h"
#include "oomguard/edit_distance.h"
#include "shapes.h"
#include "training_step.h"
#include "zoo.h"

namespace oomguard::plan {
Result<std::shared_ptr<const Model>> LoadModelFromBytes(std::string_view bytes, std::string_view name) {
  return ParseModel(bytes, name);
}

Result<std::shared_ptr<const Model>> LoadModel(std::string_view path_or_zoo_name) {
  std::string path(path_or_zoo_name);
  if (path.empty()) return MakeError("no model given (an .onnx file or a zoo name, see 'oomguard models')");
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return MakeError(path + ": is a directory, not an ONNX file");
    std::ifstream in(path, std::ios::binary);
    if (!in) return MakeError(path + ": cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string bytes = ss.str();
    if (bytes.size() > (1ull << 31)) return MakeError(path + ": larger than 2 GiB; save it with external data");
    return ParseModel(bytes, path);
  }
  for (const ZooFile& z : ZooFiles()) {
    if (z.name == path) return ParseModel(z.bytes, path);
  }
  bool looks_like_path = path.find('/') != std::string::npos || path.find('.') != std::string::npos;
  if (looks_like_path) return MakeError(path + ": no such file");
  std::string best;
  size_t best_d = 4;
  for (const ZooFile& z : ZooFiles()) {
    size_t d = EditDistance(path, z.name);
    if (d < best_d) best_d = d, best = z.name;
  }
  std::string message = "'" + path + "' is neither a file nor a zoo model";
  if (!best.empty()) message += ", did you mean '" + best + "'?";
  return MakeError(message + " (see 'oomguard models')");
}

std::vector<std::string> ZooModelNames() {
  std::vector<std::string> names;
  for (const ZooFile& z : ZooFiles()) names.emplace_back(z.name);
  std::sort(names.begin(), names.end());
  return names;
}

ModelSummary Summarize(const Model& model) {
  ModelSummary s;
  s.name = model.name;
  s.description = model.description;
  s.parameter_count = model.parameter_count;
  s.parameter_bytes = model.parameter_bytes;
  for (int id : model.inputs) s.inputs.emplace_back(model.tensors[id].name, model.tensors[id].dims);
  return s;
}

Result<StepPlan> PlanStep(const Model& model, const PlanOptions& options) {
  if (options.parameter_shards < 1 || options.gradient_shards < 1 || options.optimizer_state_shards < 1) {
    return MakeError("shard counts must be at least 1");
  }
  auto shapes = InferConcreteShapes(model, options);
  if (!shapes) return MakeError(shapes.error());
  for (int id : model.outputs) {
    if (!shapes->tensors[id].known) {
      return MakeError(model.name + ": cannot infer the shape of output '" + model.tensors[id].name + "'");
    }
  }
  return SimulateTrainingStep(model, *shapes, options);
}

}  // namespace oomguard::plan
