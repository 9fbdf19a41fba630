#include "coverage.h"

#include <algorithm>

namespace oomguard::plan {

void NoteUncovered(const std::string& op, uint64_t bytes_at_risk, std::vector<UncoveredOp>* uncovered) {
  for (UncoveredOp& u : *uncovered) {
    if (u.op == op) {
      ++u.nodes;
      u.bytes_at_risk += bytes_at_risk;
      return;
    }
  }
  uncovered->push_back({op, 1, bytes_at_risk});
}

void SortUncovered(std::vector<UncoveredOp>* uncovered) {
  std::sort(uncovered->begin(), uncovered->end(), [](const UncoveredOp& a, const UncoveredOp& b) {
    return a.bytes_at_risk != b.bytes_at_risk ? a.bytes_at_risk > b.bytes_at_risk : a.op < b.op;
  });
}

uint64_t UncoveredBytes(const std::vector<UncoveredOp>& uncovered) {
  uint64_t sum = 0;
  for (const UncoveredOp& u : uncovered) sum += u.bytes_at_risk;
  return sum;
}

}  // namespace oomguard::plan
