// LoadModel (file or zoo name) and PlanStep (shapes, then the simulation).
#include "oomguard/plan/planner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>

#include "coverage.h"
#include "model.h"
#include "oomguard/edit_distance.h"
#include "shapes.h"
#include "training_step.h"
#include "zoo.h"

namespace oomguard::plan {
Result<std::shared_ptr<const Model>> LoadModelFromBytes(std::string_view bytes, std::string_view name) {
  return ParseModel(bytes, name);
}

namespace {

// Protobuf cannot parse more than 2 GiB; weights belong in external data.
constexpr uint64_t kMaxModelFileBytes = uint64_t{1} << 31;

// Reads a regular file of at most kMaxModelFileBytes. Devices (/dev/zero),
// FIFOs and sockets are refused before a byte is read: they have no size and
// may never end (a FIFO is opened without blocking for a writer).
Result<std::string> ReadModelFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return MakeError(path + ": cannot be read (" + std::strerror(errno) + ")");
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0) return MakeError(path + ": cannot be read (" + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) return MakeError(path + ": is a directory, not an ONNX file");
  if (!S_ISREG(st.st_mode)) {
    return MakeError(path + ": not a regular file (a device, FIFO or socket); give an .onnx file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > kMaxModelFileBytes) return MakeError(path + ": larger than 2 GiB; save it with external data");
  std::string bytes(size, '\0');
  size_t got = 0;
  while (got < size) {  // a file that shrinks meanwhile reads short; one that grows is cut at its size
    ssize_t r = read(fd, bytes.data() + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return MakeError(path + ": cannot be read (" + std::strerror(errno) + ")");
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  bytes.resize(got);
  return bytes;
}

}  // namespace

Result<std::shared_ptr<const Model>> LoadModel(std::string_view path_or_zoo_name) {
  std::string path(path_or_zoo_name);
  if (path.empty()) return MakeError("no model given (an .onnx file or a zoo name, see 'oomguard models')");
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    Result<std::string> bytes = ReadModelFile(path);
    if (!bytes) return MakeError(bytes.error());
    return ParseModel(*bytes, path);
  }
  for (const ZooFile& z : ZooFiles()) {
    if (z.name == path) return ParseModel(z.bytes, path, ShapeSource::kStored);
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

Status CheckShardCounts(const PlanOptions& options) {
  if (options.parameter_shards < 1 || options.gradient_shards < 1 || options.optimizer_state_shards < 1) {
    return MakeError("shard counts must be at least 1");
  }
  return Status::Ok();
}

Result<StepPlan> PlanStep(const Model& model, const PlanOptions& options) {
  if (Status s = CheckShardCounts(options); !s) return MakeError(s.error());
  auto shapes = InferConcreteShapes(model, options);
  if (!shapes) return MakeError(shapes.error());
  return PlanFromShapes(model, *shapes, options, nullptr);
}

Status AddInplaceRange(BatchPlanner& planner, const PlanOptions& options, StepPlan* plan) {
  if (!plan->inplace.Unsure()) return Status::Ok();
  PlanOptions all = options;
  all.inplace = InplaceHint::kAll;
  all.record_timeline = false;
  Result<StepPlan> in_place = planner.Plan(all);
  if (!in_place) return MakeError(in_place.error());
  InplaceSummary& r = plan->inplace;
  r.peak_allocated_low_bytes = std::min(plan->peak_allocated_bytes, in_place->peak_allocated_bytes);
  r.peak_allocated_high_bytes = std::max(plan->peak_allocated_bytes, in_place->peak_allocated_bytes);
  r.required_low_bytes = std::min(plan->required_bytes, in_place->required_bytes);
  r.required_high_bytes = std::max(plan->required_bytes, in_place->required_bytes);
  return Status::Ok();
}

Result<StepPlan> PlanFromShapes(const Model& model, const ConcreteShapes& shapes, const PlanOptions& options,
                                StepTrace* trace, SimulationShare* share) {
  for (int id : model.outputs) {
    if (!shapes.tensors[id].known) {
      return MakeError(model.name + ": cannot infer the shape of output '" + model.tensors[id].name + "'");
    }
  }
  Result<StepPlan> plan = SimulateTrainingStep(model, shapes, options, trace, share);
  if (!plan) return plan;
  plan->warnings.insert(plan->warnings.begin(), model.warnings.begin(), model.warnings.end());
  SortUncovered(&plan->uncovered);
  return plan;
}

}  // namespace oomguard::plan
