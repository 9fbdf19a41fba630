// torch.einsum as PyTorch 1.13 runs it on the CPU without opt_einsum (aten/src/ATen/native/Linear.cpp,
// einsum and sumproduct_pair), played on shapes: which tensors its autograd graph keeps and which it
// makes and drops while it runs.
//
// The operands are aligned to one label order (the output's labels, then an ellipsis not in the output,
// then the summed labels in A-Z, a-z order), then contracted left to right: the running product with the
// next operand. A summed label that only one of the pair holds and no later operand does is summed out
// first (sum(keepdim)); a summed label both hold and no later operand does is the pair's contraction.
// With none, the pair is multiplied (mul, broadcast); otherwise each side is permuted to
// [batch, own, summed] and reshaped to 3-D (a copy where the permuted dims do not merge in memory) for
// bmm, whose output is viewed back. Autograd keeps what mul and bmm are given: for bmm the 3-D operands
// (the copies where reshape copied, else views of what they view), each where the other side needs a
// gradient; sum, permute, reshape and view keep nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oomguard::plan {

struct EinsumOperand {
  std::vector<int64_t> dims;
  // Element strides; nullopt where the layout is not known but not contiguous (reshape is then taken to
  // copy wherever it merges dims).
  std::optional<std::vector<int64_t>> strides;
  bool requires_grad = true;
};

// One tensor einsum makes (not an operand, not its result).
struct EinsumBuffer {
  uint64_t elements = 0;
  std::string what;  // "sum", "operand copy", "product", "product copy"
  int operand = -1;  // the operand it copies or sums, or -1 (made from a product)
};

struct EinsumRun {
  bool known = false;                 // false: an equation this model does not cover (repeated labels)
  std::vector<bool> operand_saved;    // per operand: autograd keeps it, or a view of it, as given
  std::vector<EinsumBuffer> saved;    // tensors it makes that autograd keeps
  uint64_t forward_temp_elements = 0;  // peak of those it makes and drops while it runs (not kept, not the result)
  uint64_t result_elements = 0;       // the result's storage (a view of the last product)
  bool result_contiguous = true;      // the result as returned (a permuted view of bmm's output is not)
};

// REQUIRES: equation without spaces checked by torch (letters, ",", "->", "..."), one operand per term.
EinsumRun RunEinsum(const std::string& equation, const std::vector<EinsumOperand>& operands);

}  // namespace oomguard::plan
