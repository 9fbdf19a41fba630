// The operator table (data/op_table.json, generated from PyTorch by tools/gen_op_table.py), embedded
// in the library and parsed once: per op, the ONNX pattern it exports to (node types with their
// wiring) and the storages autograd saves for it, by role. The JSON parser stays in op_table.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "oomguard/result.h"

namespace oomguard::plan {

// Where a pattern node's input comes from.
struct TableRef {
  enum Kind { kInput, kNode, kParameter, kConstant, kOmitted, kAny };
  Kind kind = kAny;
  int index = 0;   // kInput: the op's input; kNode: the pattern node
  int output = 0;  // kNode: which output of that node
};

struct TablePatternNode {
  std::string op;
  std::vector<TableRef> inputs;
  int outputs = 1;
  std::map<std::string, std::string> attrs;  // string attributes that must match (Pad's mode)
};

// One factor of a saved intermediate's element count.
struct TableSizeFactor {
  enum Kind { kBatch, kDim, kLiteral };
  Kind kind = kLiteral;
  bool output = false;  // kDim: of an output (y) rather than an input (x)
  int index = 0;        // kDim: which input/output
  int dim = 0;          // kDim: which dim
  int64_t literal = 1;
};

struct TableSaved {
  std::string role;          // input, output, input_output, parameter, other
  bool graph_input = false;  // an integer/bool input kept as given (indices, masks)
  bool of_output = false;    // input/output/input_output: which tensor (x<of_index> or y<of_index>)
  int of_index = -1;
  uint64_t bytes_per_sample = 0;
  uint64_t fixed_bytes = 0;
  int element_bytes = 4;
  std::vector<TableSizeFactor> size;  // other: the shape in terms of the op's dims, when known
  bool scale_output = false;          // other without size: ratio x bytes of x/y<scale_index>
  int scale_index = -1;
  double ratio = 0;
};

struct OpTableRow {
  std::string name;
  std::string call;
  // The in-place variant of another row (inplace=True): exported exactly like it, so it is matched
  // only on nodes the user says ran in place (PlanOptions::inplace, the model's oomguard.inplace).
  bool inplace = false;
  std::vector<bool> input_float;        // per op input: a float tensor (else integer or bool)
  std::vector<std::vector<int64_t>> input_dims;  // per op input: its recorded per-sample dims ("f:4,8,8")
  std::vector<std::string> pattern;    // node types in graph order, Constants included
  std::vector<TablePatternNode> nodes;  // the wiring (empty when the op does not export)
  std::vector<TableRef> outputs;
  std::vector<TableSaved> saved;
};

struct OpTable {
  std::string torch_version;
  std::string backend;
  int64_t opset = 0;
  std::vector<OpTableRow> rows;
};

// Parses a table; refuses a malformed one or one from another backend than `backend`.
Result<OpTable> ParseOpTable(std::string_view json, std::string_view backend = "cpu");

// The table embedded at build time, parsed on first use (thread-safe). An embedded table that does
// not parse is a build defect: the planner then runs on its hand rules alone (empty table) and
// EmbeddedOpTableError() says why.
const OpTable& EmbeddedOpTable();
const std::string& EmbeddedOpTableError();

// The torch version the embedded table was generated with (checked when it is loaded).
inline constexpr std::string_view kOpTableTorchPrefix = "1.13";

// Raw bytes of data/op_table.json (embedded by src/plan/embed_files.cmake).
std::string_view EmbeddedOpTableJson();

}  // namespace oomguard::plan
