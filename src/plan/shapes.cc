#include "shapes.h"

#include "data_dependent.h"
#include "shape_pass.h"

namespace oomguard::plan {

using Dims = std::vector<int64_t>;

uint64_t ConcreteTensor::Elements() const {
  if (!known) return 0;
  uint64_t n = 1;
  for (int64_t d : dims) n *= static_cast<uint64_t>(d);
  return n;
}
uint64_t ConcreteTensor::Bytes() const { return Elements() * static_cast<uint64_t>(ElementBytes(dtype)); }

Result<ConcreteShapes> InferConcreteShapes(const Model& model, const PlanOptions& options) {
  ConcreteShapes s;
  s.tensors.resize(model.tensors.size());
  for (const auto& [name, dims] : options.input_overrides) {
    bool found = false;
    for (int id : model.inputs) found = found || model.tensors[id].name == name;
    if (!found) {
      std::string names;
      for (int id : model.inputs) names += (names.empty() ? "" : ", ") + model.tensors[id].name;
      return MakeError("--input: the model has no input '" + name + "' (inputs: " + names + ")");
    }
  }
  // Batch: the first dimension of every input.
  std::string symbol;
  for (int id : model.inputs) {
    const TensorInfo& t = model.tensors[id];
    if (t.has_shape && !t.dims.empty() && t.dims[0] < 0) symbol = t.dim_symbols[0].empty() ? "?" : t.dim_symbols[0];
  }
  if (options.batch) {
    if (*options.batch <= 0) return MakeError("the batch must be at least 1, got " + std::to_string(*options.batch));
    s.batch = *options.batch;
  } else if (!symbol.empty()) {
    return MakeError(model.name + ": the batch dimension is symbolic ('" + symbol + "'); give --batch N");
  } else {
    return MakeError(model.name + ": the model has no symbolic batch dimension; give --batch N "
                     "(the first dimension of each input is the batch)");
  }

  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const TensorInfo& t = model.tensors[i];
    ConcreteTensor& c = s.tensors[i];
    c.dtype = t.dtype == kUndefined ? kFloat : t.dtype;
    if (t.kind == TensorKind::kGraphInput) {
      auto it = options.input_overrides.find(t.name);
      if (it != options.input_overrides.end()) {
        c.dims = {s.batch};
        c.dims.insert(c.dims.end(), it->second.begin(), it->second.end());
        if (t.has_shape && t.dims.size() != c.dims.size()) {
          return MakeError("--input " + t.name + ": the model's input has " + std::to_string(t.dims.size() - 1) +
                           " dimensions after the batch, got " + std::to_string(it->second.size()));
        }
      } else {
        if (!t.has_shape || t.dims.empty()) {
          return MakeError(model.name + ": input '" + t.name + "' has no shape; give --input " + t.name + "=DIMS");
        }
        c.dims = t.dims;
        c.dims[0] = s.batch;
        for (size_t k = 1; k < c.dims.size(); ++k) {
          if (c.dims[k] < 0) {
            return MakeError(model.name + ": input '" + t.name + "' has a symbolic dimension " + std::to_string(k) +
                             "; give --input " + t.name + "=DIMS");
          }
        }
      }
      if (!SaneDims(c.dims)) return MakeError(model.name + ": input '" + t.name + "' is absurdly large");
      c.known = true;
    } else if (t.kind != TensorKind::kActivation && t.has_shape) {
      c.dims = t.dims;
      c.known = SaneDims(c.dims);
      for (int64_t d : t.dims) c.known = c.known && d >= 0;
      c.has_value = c.known && t.has_value && t.value.size() == c.Elements();
      if (c.has_value) c.value = t.value;
    }
  }
  if (HasDataDependentOps(model)) {
    // The same pass with nothing and with everything selected: what follows the data, and its range.
    ConcreteShapes least = s, most = s;
    least.extent = DataExtent::kLeast;
    most.extent = DataExtent::kMost;
    RunShapePass(model, &least);
    RunShapePass(model, &most);
    RunShapePass(model, &s);
    MeasureDataDependent(model, least, most, &s);
  } else {
    RunShapePass(model, &s);
  }
  NoteUnplannedDataDependent(model, &s);
  auto overflow_error = [&](const std::string& what) {
    return MakeError(model.name + ": " + what +
                     ": a dimension above 2^40 or more than 1e17 elements, too large to plan");
  };
  if (!s.overflow.empty()) return overflow_error(s.overflow);

  // Whatever the pass could not resolve: ONNX's symbolic shape with the batch
  // substituted, when every other dimension is concrete.
  bool overrides = !options.input_overrides.empty();
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    ConcreteTensor& c = s.tensors[i];
    const TensorInfo& t = model.tensors[i];
    if (c.known || t.kind != TensorKind::kActivation) continue;
    if (t.has_shape && !overrides) {
      Dims d = t.dims;
      bool ok = true;
      for (size_t k = 0; k < d.size(); ++k) {
        if (d[k] < 0) {
          if (!symbol.empty() && t.dim_symbols[k] == symbol) d[k] = s.batch;
          else ok = false;
        }
      }
      if (ok && !SaneDims(d)) {
        std::string shape;
        for (int64_t x : d) shape += (shape.empty() ? "" : ", ") + std::to_string(x);
        return overflow_error("tensor '" + t.name + "' would be [" + shape + "]");
      }
      if (ok && SaneDims(d)) {
        c.dims = d;
        c.known = true;
        if (t.dtype != kUndefined) c.dtype = t.dtype;
      }
    }
  }
  return s;
}

}  // namespace oomguard::plan
