#include "op_table.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <stdexcept>

#include "embedded_file.h"

namespace oomguard::plan {
namespace {

using nlohmann::json;

int ToInt(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) throw std::runtime_error("bad number '" + std::string(s) + "'");
  return v;
}

// "x0", "n3.1", "p", "c", "" (omitted); anything else matches any tensor.
TableRef ParseRefOrThrow(std::string_view s) {
  TableRef r;
  if (s.empty()) {
    r.kind = TableRef::kOmitted;
  } else if (s == "p") {
    r.kind = TableRef::kParameter;
  } else if (s == "c") {
    r.kind = TableRef::kConstant;
  } else if (s[0] == 'x' && s.size() > 1) {
    r.kind = TableRef::kInput;
    r.index = ToInt(s.substr(1));
  } else if (s[0] == 'n' && s.find('.') != std::string_view::npos) {
    r.kind = TableRef::kNode;
    r.index = ToInt(s.substr(1, s.find('.') - 1));
    r.output = ToInt(s.substr(s.find('.') + 1));
  }
  return r;
}

TableRef ParseRef(std::string_view s) {
  try {
    return ParseRefOrThrow(s);
  } catch (const std::runtime_error&) {
    throw std::runtime_error("bad input reference '" + std::string(s) + "'");
  }
}

int DtypeBytes(std::string_view dtype) {
  if (dtype == "float64" || dtype == "int64") return 8;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "bool" || dtype == "uint8" || dtype == "int8") return 1;
  return 4;
}

// "x1" / "y0" -> (is output, index).
void ParseTensorName(std::string_view s, bool* output, int* index) {
  if (s.size() < 2 || (s[0] != 'x' && s[0] != 'y')) throw std::runtime_error("bad tensor '" + std::string(s) + "'");
  *output = s[0] == 'y';
  *index = ToInt(s.substr(1));
}

TableSizeFactor ParseFactor(std::string_view v) {
  TableSizeFactor t;
  if (v == "B") {
    t.kind = TableSizeFactor::kBatch;
    return t;
  }
  auto dot = v.find('.');
  if (dot == std::string_view::npos) throw std::runtime_error("bad size factor '" + std::string(v) + "'");
  t.kind = TableSizeFactor::kDim;
  ParseTensorName(v.substr(0, dot), &t.output, &t.index);
  t.dim = ToInt(v.substr(dot + 1));
  return t;
}

// Reads the table straight into OpTable (no JSON tree: the planner loads it on every run). The path
// of the current value is kept as keys and "[]" for array elements; only the fields below are read.
class TableReader : public json::json_sax_t {
 public:
  explicit TableReader(OpTable* t) : t_(*t) {}

  bool null() override { return Leaf(Value{}); }
  bool boolean(bool v) override { return Leaf(Value{.kind = Value::kBool, .b = v}); }
  bool number_integer(number_integer_t v) override { return Leaf(Value{.kind = Value::kInt, .i = v}); }
  bool number_unsigned(number_unsigned_t v) override {
    return Leaf(Value{.kind = Value::kInt, .i = static_cast<int64_t>(v)});
  }
  bool number_float(number_float_t v, const string_t&) override { return Leaf(Value{.kind = Value::kFloat, .f = v}); }
  bool string(string_t& v) override { return Leaf(Value{.kind = Value::kString, .s = std::move(v)}); }
  bool binary(binary_t&) override { return Leaf(Value{}); }

  bool start_object(std::size_t) override {
    if (path_ == "rows/[]") {
      t_.rows.emplace_back();
      saw_name_ = false;
    } else if (path_ == "rows/[]/graph/nodes/[]") {
      Row().nodes.emplace_back();
    } else if (path_ == "rows/[]/saved/[]") {
      Row().saved.emplace_back();
    }
    Push("{}");
    return true;
  }
  bool key(string_t& k) override {
    path_.resize(starts_.back());
    path_ += k;
    return true;
  }
  bool end_object() override {
    Pop();
    if (path_ == "rows/[]" && !saw_name_) throw std::runtime_error("a row without a name");
    return true;
  }
  bool start_array(std::size_t) override {
    Push("[]");
    return true;
  }
  bool end_array() override {
    Pop();
    return true;
  }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& e) override {
    throw std::runtime_error("at byte " + std::to_string(pos) + ": " + e.what());
  }

  bool saw_header = false;

 private:
  struct Value {
    enum Kind { kNull, kBool, kInt, kFloat, kString } kind = kNull;
    bool b = false;
    int64_t i = 0;
    double f = 0;
    std::string s{};
    const std::string& Str() const {
      if (kind != kString) throw std::runtime_error("a string was expected");
      return s;
    }
    int64_t Int() const {
      if (kind != kInt) throw std::runtime_error("an integer was expected");
      return i;
    }
  };

  // path_ is "rows/[]/saved/[]/role"; starts_ holds where each segment begins.
  void Push(std::string_view segment) {
    if (!starts_.empty()) path_ += '/';
    starts_.push_back(path_.size());
    path_ += segment;
  }
  void Pop() {
    size_t start = starts_.back();
    starts_.pop_back();
    path_.resize(start > 0 ? start - 1 : 0);
  }
  OpTableRow& Row() {
    if (t_.rows.empty()) throw std::runtime_error("a value outside a row");
    return t_.rows.back();
  }
  TableSaved& Saved() {
    if (Row().saved.empty()) throw std::runtime_error("a value outside a saved entry");
    return Row().saved.back();
  }
  TablePatternNode& Node() {
    if (Row().nodes.empty()) throw std::runtime_error("a value outside a pattern node");
    return Row().nodes.back();
  }

  bool Leaf(const Value& v) {
    const std::string& p = path_;
    if (p.rfind("header/", 0) == 0) {
      saw_header = true;
      if (p == "header/torch_version") t_.torch_version = v.Str();
      else if (p == "header/backend") t_.backend = v.Str();
      else if (p == "header/opset") t_.opset = v.Int();
      return true;
    }
    if (p.rfind("rows/[]/", 0) != 0) return true;
    const std::string_view f = std::string_view(p).substr(8);
    if (f == "name") {
      Row().name = v.Str();
      saw_name_ = true;
    } else if (f == "call") {
      Row().call = v.Str();
    } else if (f == "inplace") {
      Row().inplace = v.kind == Value::kBool && v.b;
    } else if (f == "inputs/[]") {
      Row().input_float.push_back(v.Str().rfind("f:", 0) == 0);
      std::vector<int64_t> dims;  // "f:4,8,8" -> {4, 8, 8}; only float inputs say their dims so
      if (Row().input_float.back()) {
        std::string_view rest = std::string_view(v.Str()).substr(2);
        while (!rest.empty()) {
          size_t comma = rest.find(',');
          std::string_view part = rest.substr(0, comma);
          int64_t d = 0;
          std::from_chars(part.data(), part.data() + part.size(), d);
          dims.push_back(d);
          rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        }
      }
      Row().input_dims.push_back(std::move(dims));
    } else if (f == "pattern/[]") {
      Row().pattern.push_back(v.Str());
    } else if (f == "graph/nodes/[]/op") {
      Node().op = v.Str();
    } else if (f == "graph/nodes/[]/in/[]") {
      Node().inputs.push_back(ParseRef(v.Str()));
    } else if (f == "graph/nodes/[]/out") {
      Node().outputs = static_cast<int>(v.Int());
    } else if (f.rfind("graph/nodes/[]/attrs/", 0) == 0) {
      Node().attrs[std::string(f.substr(21))] = v.Str();
    } else if (f == "graph/outputs/[]") {
      Row().outputs.push_back(ParseRef(v.Str()));
    } else if (f.rfind("saved/[]/", 0) == 0) {
      SavedField(f.substr(9), v);
    }
    return true;
  }

  void SavedField(std::string_view f, const Value& v) {
    TableSaved& s = Saved();
    if (f == "role") s.role = v.Str();
    else if (f == "graph_input") s.graph_input = v.kind == Value::kBool && v.b;
    else if (f == "bytes_per_sample") s.bytes_per_sample = static_cast<uint64_t>(std::max<int64_t>(v.Int(), 0));
    else if (f == "fixed_bytes") s.fixed_bytes = static_cast<uint64_t>(std::max<int64_t>(v.Int(), 0));
    else if (f == "dtype") s.element_bytes = DtypeBytes(v.Str());
    else if (f == "of") ParseTensorName(v.Str(), &s.of_output, &s.of_index);
    else if (f == "scale") ParseTensorName(v.Str(), &s.scale_output, &s.scale_index);
    else if (f == "ratio") s.ratio = v.kind == Value::kFloat ? v.f : static_cast<double>(v.Int());
    else if (f == "size/[]") {
      if (v.kind == Value::kInt) {
        TableSizeFactor t;
        t.literal = v.i;
        s.size.push_back(t);
      } else {
        s.size.push_back(ParseFactor(v.Str()));
      }
    }
  }

  OpTable& t_;
  std::string path_;
  std::vector<size_t> starts_;
  bool saw_name_ = false;
};

}  // namespace

Result<OpTable> ParseOpTable(std::string_view text, std::string_view backend) {
  OpTable t;
  try {
    TableReader reader(&t);
    if (!json::sax_parse(text, &reader) || !reader.saw_header) return MakeError("malformed operator table: no header");
  } catch (const std::exception& e) {
    return MakeError(std::string("malformed operator table: ") + e.what());
  }
  if (t.backend != backend) {
    return MakeError("the operator table is for backend '" + t.backend + "', not '" + std::string(backend) + "'");
  }
  if (t.torch_version.rfind(kOpTableTorchPrefix, 0) != 0) {
    return MakeError("the operator table was generated with torch " + t.torch_version + ", the planner expects " +
                     std::string(kOpTableTorchPrefix));
  }
  return t;
}

// Generated by src/plan/embed_files.cmake (op_table_data.cc): the one file data/op_table.json.
std::span<const EmbeddedFile> OpTableFiles();

std::string_view EmbeddedOpTableJson() {
  auto files = OpTableFiles();
  return files.empty() ? std::string_view() : files[0].bytes;
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
