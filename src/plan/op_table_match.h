// Matching the operator table's patterns on a user's graph, and the rule a matched row gives:
// which of the op's tensors autograd saves (by role), the intermediates it keeps (sized from the
// row), and which outputs share an input's storage.
#pragma once

#include <vector>

#include "model.h"
#include "op_table.h"
#include "shapes.h"
#include "saved_tensor_rules.h"

namespace oomguard::plan {

struct TableMatch {
  int row = -1;                // index into OpTable::rows
  std::vector<int> nodes;      // graph node per pattern node
  std::vector<int> inputs;     // tensor id per op input x<i> (-1 when the pattern does not use it)
  std::vector<int> outputs;    // tensor id per op output y<j>
};

// Rows the planner takes from the table instead of its hand rules (see op_table_match.cc).
bool TableDrivesRow(const OpTableRow& row);

// Matches the rows TableDrivesRow accepts whose pattern has at least `min_nodes` nodes, longest
// first, on nodes not yet `taken`; marks the matched nodes taken. A row whose wiring another row
// shares with a different saved set is ambiguous and never matched. Matches whose intermediates
// escape the pattern are refused, and so are float inputs of the row bound to integer tensors
// (shape arithmetic).
std::vector<TableMatch> MatchTableRows(const Model& model, const ConcreteShapes& shapes, const OpTable& table, std::vector<bool>* taken,
                                       size_t min_nodes = 1);

// A driving single-node row for node `node`, or false.
bool MatchDrivingNode(const Model& model, const ConcreteShapes& shapes, const OpTable& table, int node, TableMatch* match);

// The unambiguous single-node row for node `node` (any row, not only the driving ones), or false.
bool MatchSingleNode(const Model& model, const ConcreteShapes& shapes, const OpTable& table, int node, TableMatch* match);

// The logical operator of a match: kind = the row's name for a pattern of several nodes, the node's
// op type for one node; inputs/outputs the bound tensors; table_row and bindings set.
LogicalOp TableOp(const Model& model, const OpTable& table, const TableMatch& match);

// The saved set of op.table_row (op.table_inputs/table_outputs bound): saved_tensors, saved_extra and,
// for an output that shares its input's storage, output_view_of. The rest of `base` is kept (a hand
// rule's scratch, views and gradient aliases).
OpRule TableRule(const OpTable& table, const LogicalOp& op, const RuleContext& ctx, OpRule base);

// The in-place row (OpTableRow::inplace: relu_, leaky_relu_, silu_, ...) whose pattern covers exactly
// op's nodes, with op's one output; false when the op has no in-place form in the table.
bool MatchInplaceRow(const Model& model, const ConcreteShapes& shapes, const OpTable& table, const LogicalOp& op,
                     TableMatch* match);

// The rule of op run in place (match from MatchInplaceRow): the row's saved set, and op's output on
// the storage of its input x0. The rest of `base` is kept, as TableRule does.
OpRule InplaceRule(const OpTable& table, const LogicalOp& op, const TableMatch& match, const RuleContext& ctx,
                   OpRule base);

}  // namespace oomguard::plan
