// Initializers that may be registered buffers rather than trained weights. torch.onnx stores both alike, and a
// buffer multiplied with activations (a rotary cos / sin table, a sinusoid position table, Performer's random
// features) reads in the file exactly as a learned table would; planned as a weight, its gradient keeps the
// other operand of each product for backward. See docs/plan.md "Tables that may be buffers".
#pragma once

#include <set>
#include <string>

#include "model.h"

namespace oomguard::plan {

// Marks as buffers the float parameters whose name's last part is one that code gives registered tables
// (kFixedTableNames in fixed_tables.cc: "cos", "sin_cached", "inv_freq", "freqs_cis", "pe", ...). Nothing when
// the model's metadata lists its buffers (Model::has_buffers_hint): that list is the answer.
void MarkNamedTablesAsBuffers(Model* model);

// The float parameters that may be buffers all the same: not named as a weight or a bias (no last part ending in
// "weight" or "bias"), a table (two or more dims over 1), read only through views by Muls with an activation.
// Empty when the metadata lists the buffers.
std::set<std::string> TablesThatMayBeBuffers(const Model& model);

}  // namespace oomguard::plan
