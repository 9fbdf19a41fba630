// Tallying what the planner has no rule for (StepPlan::uncovered).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oomguard/plan/planner.h"

namespace oomguard::plan {

// Counts one node of type `op` whose conservative rule kept `bytes_at_risk`.
void NoteUncovered(const std::string& op, uint64_t bytes_at_risk, std::vector<UncoveredOp>* uncovered);

// Largest bytes at risk first (ties: by name), so the first entry is the one to fix.
void SortUncovered(std::vector<UncoveredOp>* uncovered);

// Sum of bytes at risk.
uint64_t UncoveredBytes(const std::vector<UncoveredOp>& uncovered);

}  // namespace oomguard::plan
