#include "oomguard/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace oomguard {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

// Splits "1.5GiB" into the number "1.5" and the unit "GiB". Digits only: no sign, no exponent.
bool SplitNumber(std::string_view text, std::string_view* number, std::string_view* unit) {
  size_t i = 0;
  bool digits = false, dot = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digits) return false;
  *number = text.substr(0, i);
  *unit = Trim(text.substr(i));
  return true;
}

}  // namespace

Result<uint64_t> ParseBytes(std::string_view input) {
  std::string_view text = Trim(input);
  const std::string quoted = "'" + std::string(input) + "'";
  if (text.empty()) return MakeError("empty byte count");
  if (text.front() == '-') return MakeError("byte count must not be negative: " + quoted);
  std::string_view number, unit;
  if (!SplitNumber(text, &number, &unit)) {
    return MakeError("not a byte count: " + quoted + " (try 512MiB, 1.5GiB, 24GB or a plain integer)");
  }
  struct Unit {
    const char* name;
    double factor;
  };
  static constexpr Unit kUnits[] = {
      {"", 1.0},          {"b", 1.0},          {"kb", 1e3},         {"mb", 1e6},
      {"gb", 1e9},        {"tb", 1e12},        {"kib", 1024.0},     {"mib", 1048576.0},
      {"gib", 1073741824.0}, {"tib", 1099511627776.0}, {"k", 1024.0}, {"m", 1048576.0},
      {"g", 1073741824.0}, {"t", 1099511627776.0},
  };
  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (EqualsNoCase(unit, u.name)) {
      found = &u;
      break;
    }
  }
  if (found == nullptr) {
    return MakeError("unknown unit '" + std::string(unit) + "' in " + quoted +
                     " (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)");
  }
  if (found->factor == 1.0 && number.find('.') != std::string_view::npos) {
    return MakeError("a byte count in bytes must be a whole number: " + quoted);
  }
  if (found->factor == 1.0) {
    uint64_t v = 0;
    for (char c : number) {
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) {
        return MakeError("byte count too large: " + quoted);
      }
      v = v * 10 + d;
    }
    return v;
  }
  double value = std::strtod(std::string(number).c_str(), nullptr);
  double bytes = value * found->factor;
  if (!std::isfinite(bytes) || bytes >= 18446744073709551615.0) {
    return MakeError("byte count too large: " + quoted);
  }
  return static_cast<uint64_t>(std::llround(bytes));
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int i = 0;
  while (v >= 1024.0 && i < 6) {
    v /= 1024.0;
    ++i;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, kNames[i]);
  return buf;
}

Result<double> ParseSeconds(std::string_view input) {
  std::string_view text = Trim(input);
  const std::string quoted = "'" + std::string(input) + "'";
  std::string_view number, unit;
  if (text.empty() || !SplitNumber(text, &number, &unit)) {
    return MakeError("not a duration in seconds: " + quoted);
  }
  double scale = 1.0;
  if (unit.empty() || unit == "s") {
    scale = 1.0;
  } else if (unit == "ms") {
    scale = 1e-3;
  } else {
    return MakeError("unknown time unit '" + std::string(unit) + "' in " + quoted + " (use s or ms)");
  }
  double v = std::strtod(std::string(number).c_str(), nullptr) * scale;
  if (!std::isfinite(v) || v <= 0) return MakeError("duration must be positive: " + quoted);
  return v;
}

Result<std::vector<uint64_t>> ParseByteList(std::string_view text) {
  std::vector<uint64_t> out;
  if (Trim(text).empty()) return MakeError("empty list of byte counts");
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    Result<uint64_t> r = ParseBytes(item);
    if (!r) return MakeError(r.error());
    out.push_back(*r);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace oomguard
