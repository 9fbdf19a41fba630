// Backward scratch of elementwise ops (data/elementwise_scratch.json, measured from PyTorch 1.13 by
// tools/probe_elementwise.py, embedded in the library): the temporaries of ATen's derivative
// formulas, which live until the formula's C++ expression ends (pow_backward's x.pow(e - 1) and
// e * x.pow(e - 1) beside its result), in multiples of the op's output bytes.
// Thread safety: the embedded table is parsed once, on first use; reading it is safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oomguard/result.h"

namespace oomguard::plan {

struct ElementwiseScratch {
  std::string op;               // ONNX op type, e.g. "Pow"
  std::vector<int> grad_inputs;  // exactly the inputs that need a gradient, ascending
  // The inputs smaller than the output (broadcast), ascending; empty: all of the output's size. A
  // broadcast input's gradient is computed at the output's size and summed down, so that full-size
  // gradient is scratch where a same-size input would have returned it.
  std::vector<int> broadcast_inputs;
  double scratch_outputs = 0;   // backward scratch / output bytes
  // Reductions (amax, logsumexp): their backward also builds temporaries of the input's size, in
  // multiples of input 0's bytes, on top of scratch_outputs x the output's.
  double scratch_inputs = 0;
};

struct ElementwiseScratchTable {
  std::vector<ElementwiseScratch> rows;
  // The scratch of `op` whose inputs needing a gradient are exactly `grad_inputs` and whose broadcast
  // inputs are exactly `broadcast_inputs` (both ascending), in output sizes: the largest of the
  // matching rows; where no row was measured with those broadcast inputs, the rows without any (a
  // scalar exponent or divisor); 0 when none matches.
  double ScratchOutputs(std::string_view op, const std::vector<int>& grad_inputs,
                        const std::vector<int>& broadcast_inputs = {}) const;
  // The same rows' scratch in multiples of input 0's bytes (a reduction's), 0 when none matches.
  double ScratchInputs(std::string_view op, const std::vector<int>& grad_inputs,
                       const std::vector<int>& broadcast_inputs = {}) const;

 private:
  // The rows of `op` for exactly `grad_inputs` and `broadcast_inputs`, else for no broadcast input.
  std::vector<const ElementwiseScratch*> Matching(std::string_view op, const std::vector<int>& grad_inputs,
                                                  const std::vector<int>& broadcast_inputs) const;
};

// Parses a table; refuses a malformed one.
Result<ElementwiseScratchTable> ParseElementwiseScratchTable(std::string_view json);

// The embedded table (empty when it does not parse: a build defect the tests catch).
const ElementwiseScratchTable& EmbeddedElementwiseScratchTable();

// Raw bytes of data/elementwise_scratch.json.
std::string_view EmbeddedElementwiseScratchJson();

}  // namespace oomguard::plan
