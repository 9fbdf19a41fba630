#include "op_table.h"

#include <nlohmann/json.hpp>

namespace oomguard::plan {
namespace {

using nlohmann::json;

// "x0", "n3.1", "p", "c", "" (omitted); anything else matches any tensor.
TableRef ParseRef(const std::string& s) {
  TableRef r;
  if (s.empty()) {
    r.kind = TableRef::kOmitted;
  } else if (s == "p") {
    r.kind = TableRef::kParameter;
  } else if (s == "c") {
    r.kind = TableRef::kConstant;
  } else if (s[0] == 'x' && s.size() > 1) {
    r.kind = TableRef::kInput;
    r.index = std::stoi(s.substr(1));
  } else if (s[0] == 'n' && s.find('.') != std::string::npos) {
    r.kind = TableRef::kNode;
    r.index = std::stoi(s.substr(1, s.find('.') - 1));
    r.output = std::stoi(s.substr(s.find('.') + 1));
  }
  return r;
}

int DtypeBytes(const std::string& dtype) {
  if (dtype == "float64" || dtype == "int64") return 8;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "bool" || dtype == "uint8" || dtype == "int8") return 1;
  return 4;
}

// "x1" / "y0" -> (is output, index).
bool ParseTensorName(const std::string& s, bool* output, int* index) {
  if (s.size() < 2 || (s[0] != 'x' && s[0] != 'y')) return false;
  *output = s[0] == 'y';
  *index = std::stoi(s.substr(1));
  return true;
}

TableSaved ParseSaved(const json& e) {
  TableSaved s;
  s.role = e.at("role").get<std::string>();
  s.graph_input = e.value("graph_input", false);
  int64_t per = e.value("bytes_per_sample", int64_t{0});
  int64_t fixed = e.value("fixed_bytes", int64_t{0});
  s.bytes_per_sample = per > 0 ? static_cast<uint64_t>(per) : 0;
  s.fixed_bytes = fixed > 0 ? static_cast<uint64_t>(fixed) : 0;
  s.element_bytes = DtypeBytes(e.value("dtype", std::string("float32")));
  if (e.contains("of")) ParseTensorName(e["of"].get<std::string>(), &s.of_output, &s.of_index);
  if (e.contains("size")) {
    for (const json& f : e["size"]) {
      TableSizeFactor t;
      if (f.is_number_integer()) {
        t.kind = TableSizeFactor::kLiteral;
        t.literal = f.get<int64_t>();
      } else {
        std::string v = f.get<std::string>();
        if (v == "B") {
          t.kind = TableSizeFactor::kBatch;
        } else {
          auto dot = v.find('.');
          if (dot == std::string::npos || !ParseTensorName(v.substr(0, dot), &t.output, &t.index)) {
            throw std::runtime_error("bad size factor '" + v + "'");
          }
          t.kind = TableSizeFactor::kDim;
          t.dim = std::stoi(v.substr(dot + 1));
        }
      }
      s.size.push_back(t);
    }
  }
  if (e.contains("scale")) {
    ParseTensorName(e["scale"].get<std::string>(), &s.scale_output, &s.scale_index);
    s.ratio = e.value("ratio", 0.0);
  }
  return s;
}

}  // namespace

Result<OpTable> ParseOpTable(std::string_view text, std::string_view backend) {
  try {
    json doc = json::parse(text);
    OpTable t;
    const json& h = doc.at("header");
    t.torch_version = h.at("torch_version").get<std::string>();
    t.backend = h.at("backend").get<std::string>();
    t.opset = h.value("opset", int64_t{0});
    if (t.backend != backend) {
      return MakeError("the operator table is for backend '" + t.backend + "', not '" + std::string(backend) + "'");
    }
    if (t.torch_version.rfind(kOpTableTorchPrefix, 0) != 0) {
      return MakeError("the operator table was generated with torch " + t.torch_version + ", the planner expects " +
                       std::string(kOpTableTorchPrefix));
    }
    for (const json& r : doc.at("rows")) {
      OpTableRow row;
      row.name = r.at("name").get<std::string>();
      row.call = r.value("call", std::string());
      if (r.contains("inputs")) {
        for (const json& spec : r["inputs"]) row.input_float.push_back(spec.get<std::string>().rfind("f:", 0) == 0);
      }
      if (r.contains("pattern") && r["pattern"].is_array()) row.pattern = r["pattern"].get<std::vector<std::string>>();
      if (r.contains("graph")) {
        for (const json& n : r["graph"].at("nodes")) {
          TablePatternNode node;
          node.op = n.at("op").get<std::string>();
          for (const json& in : n.at("in")) node.inputs.push_back(ParseRef(in.get<std::string>()));
          node.outputs = n.value("out", 1);
          if (n.contains("attrs")) node.attrs = n["attrs"].get<std::map<std::string, std::string>>();
          row.nodes.push_back(std::move(node));
        }
        for (const json& o : r["graph"].at("outputs")) row.outputs.push_back(ParseRef(o.get<std::string>()));
      }
      for (const json& e : r.at("saved")) row.saved.push_back(ParseSaved(e));
      t.rows.push_back(std::move(row));
    }
    return t;
  } catch (const std::exception& e) {
    return MakeError(std::string("malformed operator table: ") + e.what());
  }
}

namespace {
struct Loaded {
  OpTable table;
  std::string error;
};
const Loaded& Load() {
  static const Loaded loaded = [] {
    Loaded l;
    Result<OpTable> t = ParseOpTable(EmbeddedOpTableJson());
    if (t.ok()) {
      l.table = std::move(t).value();
    } else {
      l.error = t.error();
    }
    return l;
  }();
  return loaded;
}
}  // namespace

const OpTable& EmbeddedOpTable() { return Load().table; }
const std::string& EmbeddedOpTableError() { return Load().error; }

}  // namespace oomguard::plan
