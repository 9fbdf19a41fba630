#include "amounts.h"

#include <re2/re2.h>

#include <cctype>
#include <cmath>
#include <string>

namespace oomguard::explain {

std::optional<uint64_t> ParseAmount(std::string_view text) {
  std::string digits;
  size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  bool seen_dot = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits += c;
    } else if (c == '.' && !seen_dot) {
      seen_dot = true;
      digits += c;
    } else if (c == ',') {
      continue;
    } else {
      break;
    }
  }
  if (digits.empty() || digits == ".") return std::nullopt;
  while (i < text.size() && text[i] == ' ') ++i;
  std::string unit;
  for (; i < text.size() && std::isalpha(static_cast<unsigned char>(text[i])); ++i) {
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  double scale = 1;
  if (unit.empty() || unit == "b" || unit == "bytes" || unit == "byte") {
    scale = 1;
  } else {
    char prefix = unit[0];
    std::string rest = unit.substr(1);
    if (rest != "" && rest != "b" && rest != "ib") return std::nullopt;
    switch (prefix) {
      case 'k': scale = 1024.0; break;
      case 'm': scale = 1024.0 * 1024; break;
      case 'g': scale = 1024.0 * 1024 * 1024; break;
      case 't': scale = 1024.0 * 1024 * 1024 * 1024; break;
      case 'p': scale = 1024.0 * 1024 * 1024 * 1024 * 1024; break;
      case 'e': scale = 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024; break;
      default: return std::nullopt;
    }
  }
  double value = std::strtod(digits.c_str(), nullptr) * scale;
  if (!std::isnan(value) && value >= 1.8e19) return UINT64_MAX;  // an absurd size stays absurd, not unknown
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  if (value >= 9.2e18) return static_cast<uint64_t>(value);  // beyond llround's range
  return static_cast<uint64_t>(std::llround(value));
}

std::optional<uint64_t> DtypeBytes(std::string_view dtype) {
  std::string d;
  for (char c : dtype) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view prefix : {"torch.", "np.", "numpy.", "dt_", "jnp."}) {
    if (d.rfind(prefix, 0) == 0) d = d.substr(prefix.size());
  }
  if (d == "float" || d == "float32" || d == "fp32" || d == "f32" || d == "int32" || d == "int" ||
      d == "uint32" || d == "qint32" || d == "complex32")
    return 4;
  if (d == "half" || d == "float16" || d == "fp16" || d == "f16" || d == "bfloat16" || d == "bf16" ||
      d == "int16" || d == "uint16" || d == "short")
    return 2;
  if (d == "double" || d == "float64" || d == "fp64" || d == "f64" || d == "int64" || d == "long" ||
      d == "uint64" || d == "complex64")
    return 8;
  if (d == "int8" || d == "uint8" || d == "bool" || d == "qint8" || d == "quint8" || d == "byte" ||
      d == "float8_e4m3fn" || d == "float8_e5m2")
    return 1;
  if (d == "complex128") return 16;
  return std::nullopt;
}

std::optional<uint64_t> TensorBytesInLine(std::string_view line) {
  static const RE2* shape_re = new RE2(R"re(shape ?[\[(]([\d, ]+)[\])])re");
  static const RE2* dtype_re = new RE2(R"re((?:and type|data type|dtype[ =:]+) ?([\w.]+))re");
  re2::StringPiece text(line.data(), line.size());
  std::string dims, dtype;
  if (!RE2::PartialMatch(text, *shape_re, &dims)) return std::nullopt;
  if (!RE2::PartialMatch(text, *dtype_re, &dtype)) return std::nullopt;
  std::optional<uint64_t> elem = DtypeBytes(dtype);
  if (!elem) return std::nullopt;
  unsigned __int128 bytes = *elem;
  size_t i = 0;
  bool any = false;
  while (i < dims.size()) {
    while (i < dims.size() && !std::isdigit(static_cast<unsigned char>(dims[i]))) ++i;
    if (i >= dims.size()) break;
    uint64_t d = 0;
    while (i < dims.size() && std::isdigit(static_cast<unsigned char>(dims[i]))) {
      d = d * 10 + static_cast<uint64_t>(dims[i] - '0');
      if (d > (uint64_t{1} << 40)) return std::nullopt;
      ++i;
    }
    bytes *= d;
    any = true;
    if (bytes > static_cast<unsigned __int128>(UINT64_MAX)) return std::nullopt;
  }
  if (!any) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

}  // namespace oomguard::explain
