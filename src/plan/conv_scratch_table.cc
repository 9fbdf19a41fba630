#include "conv_scratch_table.h"

#include <nlohmann/json.hpp>

#include <type_traits>

namespace oomguard::plan {

Result<ConvScratchTable> ParseConvScratchTable(std::string_view text) {
  using nlohmann::json;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return MakeError("malformed convolution scratch table: not a JSON object");
  auto it = j.find("gemm_weight_gradient_3d");
  if (it == j.end() || !it->is_object()) {
    return MakeError("malformed convolution scratch table: no gemm_weight_gradient_3d");
  }
  const json& g = *it;
  auto count = [&](const char* key, auto* out) -> bool {
    auto f = g.find(key);
    if (f == g.end() || !f->is_number_integer() || f->get<int64_t>() < 0) return false;
    *out = f->get<std::remove_pointer_t<decltype(out)>>();
    return true;
  };
  ConvScratchTable t;
  GemmWeightGradient3d& r = t.gemm_weight_gradient_3d;
  if (!count("min_in_channels", &r.min_in_channels) || !count("max_in_channels", &r.max_in_channels) ||
      !count("col_copies", &r.col_copies) || !count("weight_copies", &r.weight_copies) ||
      !count("fixed_bytes", &r.fixed_bytes) || !count("pack_min_out_channels", &r.pack_min_out_channels) ||
      !count("pack_row_round", &r.pack_row_round) || !count("pack_col_round", &r.pack_col_round) ||
      !count("pack_min_depth", &r.pack_min_depth) || !count("pack_max_depth", &r.pack_max_depth) ||
      !count("pack_fixed_bytes", &r.pack_fixed_bytes) || !count("pack_max_shallow_rows", &r.pack_max_shallow_rows) ||
      !count("pack_beyond_bytes", &r.pack_beyond_bytes) || !count("pack_worst_abs_error", &r.pack_worst_abs_error)) {
    return MakeError("malformed convolution scratch table: gemm_weight_gradient_3d needs non-negative integers "
                     "min_in_channels, max_in_channels, col_copies, weight_copies, fixed_bytes, pack_min_out_channels, "
                     "pack_row_round, pack_col_round, pack_min_depth, pack_max_depth, pack_fixed_bytes, "
                     "pack_max_shallow_rows, pack_beyond_bytes, pack_worst_abs_error");
  }
  if (r.pack_row_round == 0 || r.pack_col_round == 0 || r.pack_max_depth == 0) {
    return MakeError("malformed convolution scratch table: pack_row_round, pack_col_round and pack_max_depth must be "
                     "positive");
  }
  return t;
}

const ConvScratchTable& EmbeddedConvScratchTable() {
  static const ConvScratchTable table = [] {
    Result<ConvScratchTable> t = ParseConvScratchTable(EmbeddedConvScratchJson());
    return t.ok() ? std::move(t).value() : ConvScratchTable{};
  }();
  return table;
}

}  // namespace oomguard::plan
