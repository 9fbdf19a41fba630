#include "data_dependent.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace oomguard::plan {
namespace {

// Ops that keep the share of nonzero elements of their (first) input, on average over the positions taken.
bool KeepsShare(const std::string& k) {
  return k == "Cast" || k == "Transpose" || k == "Gather" || k == "Slice" || k == "Squeeze" || k == "Unsqueeze" ||
         k == "Reshape" || k == "Flatten" || k == "Expand" || k == "Identity" || k == "Split";
}

// Ops whose output size may depend on the data.
bool DataDependentOp(const std::string& k) {
  return k == "NonZero" || k == "Compress" || k == "Unique" || k == "NonMaxSuppression" || k == "Loop" ||
         k == "TopK" || k == "StringSplit";
}

std::string Megabytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

}  // namespace

NonzeroShare ExpectedNonzeroShare(const Model& model, const ConcreteShapes& shapes, int tensor) {
  for (int steps = 0; tensor >= 0 && steps < 64; ++steps) {
    const int producer = model.tensors[tensor].producer;
    if (producer < 0) break;
    const NodeInfo& n = model.nodes[producer];
    if (n.op_type == "OneHot" && n.outputs.size() == 1 && shapes.tensors[n.outputs[0]].known) {
      // The depth is the new axis: the output's rank exceeds the indices' by one.
      const ConcreteTensor& out = shapes.tensors[n.outputs[0]];
      const int64_t rank = static_cast<int64_t>(out.dims.size());
      int64_t axis = n.int_attrs.contains("axis") ? n.int_attrs.at("axis") : -1;
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank || out.dims[axis] < 1) break;
      const int64_t depth = out.dims[axis];
      return {1.0 / static_cast<double>(depth), "1/" + std::to_string(depth) + ": a one_hot over " +
                                                   std::to_string(depth) + " has one one per row"};
    }
    if (!KeepsShare(n.op_type) || n.inputs.empty()) break;
    tensor = n.inputs[0];
  }
  return {0.5, "1/2: nothing in the file says how many are selected, the midpoint"};
}

int64_t DataExtentCount(DataExtent extent, double share, int64_t most) {
  if (extent == DataExtent::kLeast) return 0;
  if (extent == DataExtent::kMost) return most;
  return std::clamp<int64_t>(std::llround(share * static_cast<double>(most)), 0, most);
}

bool HasDataDependentOps(const Model& model) {
  return std::any_of(model.nodes.begin(), model.nodes.end(),
                     [](const NodeInfo& n) { return n.op_type == "NonZero" || n.op_type == "Compress"; });
}

void MeasureDataDependent(const Model& model, const ConcreteShapes& least, const ConcreteShapes& most,
                          ConcreteShapes* planned) {
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    if (model.tensors[i].kind != TensorKind::kActivation) continue;
    const ConcreteTensor &lo = least.tensors[i], &hi = most.tensors[i];
    if (lo.known == hi.known && lo.dims == hi.dims) continue;
    planned->data_sized_tensors.push_back(static_cast<int>(i));
    planned->data_sized_least_bytes += lo.Bytes();
    planned->data_sized_planned_bytes += planned->tensors[i].Bytes();
    planned->data_sized_most_bytes += hi.Bytes();
  }
}

void NoteUnplannedDataDependent(const Model& model, ConcreteShapes* shapes) {
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    const NodeInfo& n = model.nodes[i];
    if (!DataDependentOp(n.op_type) || n.outputs.empty() || n.outputs[0] < 0) continue;
    if (shapes->tensors[n.outputs[0]].known) continue;
    const bool inputs_known = std::all_of(n.inputs.begin(), n.inputs.end(),
                                          [&](int in) { return in < 0 || shapes->tensors[in].known; });
    if (!inputs_known) continue;
    shapes->data_dependent.push_back({static_cast<int>(i), -1, -1, 0, ""});
  }
}

uint64_t DataDependentAtRisk(const Model& model, const ConcreteShapes& shapes) {
  uint64_t bytes = std::max(shapes.data_sized_most_bytes - std::min(shapes.data_sized_most_bytes,
                                                                    shapes.data_sized_planned_bytes),
                            shapes.data_sized_planned_bytes - std::min(shapes.data_sized_planned_bytes,
                                                                       shapes.data_sized_least_bytes));
  for (const DataDependentNode& x : shapes.data_dependent) {
    if (x.planned >= 0) continue;
    for (int in : model.nodes[x.node].inputs) {
      if (in >= 0 && model.tensors[in].kind == TensorKind::kActivation) bytes += shapes.tensors[in].Bytes();
    }
  }
  return bytes;
}

DataDependentShapes SummarizeDataDependent(const Model& model, const ConcreteShapes& shapes) {
  DataDependentShapes d;
  for (const DataDependentNode& x : shapes.data_dependent) {
    const NodeInfo& n = model.nodes[x.node];
    std::string text = "'" + n.name + "' (" + n.op_type + ")";
    if (x.planned < 0) {
      d.unplanned.push_back(text);
      continue;
    }
    d.nodes.push_back(text + ": " + std::to_string(x.planned) + " of at most " + std::to_string(x.most) + ", " +
                      x.basis);
  }
  d.tensors = static_cast<int>(shapes.data_sized_tensors.size());
  for (int id : shapes.data_sized_tensors) {
    if (d.tensor_names.size() == 5) break;
    d.tensor_names.push_back(model.tensors[id].name);
  }
  d.least_bytes = shapes.data_sized_least_bytes;
  d.planned_bytes = shapes.data_sized_planned_bytes;
  d.most_bytes = shapes.data_sized_most_bytes;
  return d;
}

std::string DataDependentWarning(const DataDependentShapes& d) {
  std::string text;
  if (!d.nodes.empty()) {
    text = "data-dependent sizes: " + std::to_string(d.nodes.size()) + (d.nodes.size() == 1 ? " node selects" : " nodes select") + " a count the file does not record (" + d.nodes.front() +
           (d.nodes.size() > 1 ? "; " + std::to_string(d.nodes.size() - 1) + " more" : "") +
           "), planned at the share expected; the " + std::to_string(d.tensors) + " tensors computed from them (";
    for (size_t i = 0; i < d.tensor_names.size(); ++i) text += (i ? ", '" : "'") + d.tensor_names[i] + "'";
    text += d.tensors > static_cast<int>(d.tensor_names.size()) ? ", ...)" : ")";
    text += " hold " + Megabytes(d.planned_bytes) + " as planned, " + Megabytes(d.least_bytes) +
            " with nothing selected and " + Megabytes(d.most_bytes) + " with everything selected";
  }
  if (!d.unplanned.empty()) {
    text += (text.empty() ? "data-dependent sizes: " : "; ") + std::to_string(d.unplanned.size()) + " node" +
            (d.unplanned.size() == 1 ? "" : "s") + " of a size the data decides could not be planned at any extent (" +
            d.unplanned.front() + (d.unplanned.size() > 1 ? "; " + std::to_string(d.unplanned.size() - 1) + " more" : "") +
            "): what is computed from them is planned at 0 bytes";
  }
  return text;
}

}  // namespace oomguard::plan
