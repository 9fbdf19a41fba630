// Sizes the data decides: NonZero of a computed mask (torch.where(mask), x[mask], nonzero) and Compress
// (masked_select). The file records no count, only its bound; the shape pass plans each such size at an
// expected extent (ExpectedNonzeroShare) and InferConcreteShapes measures what the tensors computed from it
// span between the least extent (nothing selected) and the most (everything selected). See docs/plan.md
// "Data-dependent shapes".
#pragma once

#include <cstdint>
#include <string>

#include "oomguard/plan/planner.h"
#include "shapes.h"

namespace oomguard::plan {

// The share of nonzero elements expected in `tensor`. A OneHot's output holds exactly one one per row, 1/depth
// of its elements, and so, on average, does what is cast, transposed, sliced, gathered or reshaped from it (a
// top-k router's per-expert mask: k/E of the tokens); of anything else nothing is known, and the share is the
// midpoint, 1/2. `basis` says which, in words.
struct NonzeroShare {
  double share = 0.5;
  std::string basis;
};
NonzeroShare ExpectedNonzeroShare(const Model& model, const ConcreteShapes& shapes, int tensor);

// The count a data-dependent size is planned at: none, all `most`, or round(share * most).
int64_t DataExtentCount(DataExtent extent, double share, int64_t most);

// True when the model has an op whose output size may depend on the data (the passes at the least and the
// most extent are worth running).
bool HasDataDependentOps(const Model& model);

// Fills planned->data_dependent's tensors and bytes from the same pass run at the least and the most extent:
// the activations whose size differs between those two follow the data.
void MeasureDataDependent(const Model& model, const ConcreteShapes& least, const ConcreteShapes& most,
                          ConcreteShapes* planned);

// Nodes whose output size depends on the data and that the pass could not plan at any extent (Unique,
// NonMaxSuppression, a Loop's scan outputs...): every input known, the output unknown.
void NoteUnplannedDataDependent(const Model& model, ConcreteShapes* shapes);

// How far the step may be from the plan: the larger of the data-sized tensors' bytes above and below their
// planned extent, plus the input bytes of each node planned at no extent (at least that much follows it).
uint64_t DataDependentAtRisk(const Model& model, const ConcreteShapes& shapes);

// What the plan shows of it (empty nodes when the model has no data-dependent size).
DataDependentShapes SummarizeDataDependent(const Model& model, const ConcreteShapes& shapes);

// The warning in words: the nodes, the extent assumed, the tensors downstream and their range in MB.
std::string DataDependentWarning(const DataDependentShapes& d);

}  // namespace oomguard::plan
