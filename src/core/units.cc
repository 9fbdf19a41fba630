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
  if (v > kMaxSeconds) {
    return MakeError("duration too long: " + quoted + " (at most " + FormatNumber(kMaxSeconds) + " s)");
  }
  return v;
}

Result<std::vector<uint64_t>> ParseByteList(std::string_view text) {
  std::vector<uint64_t> out;
  if (Trim(text).empty()) return MakeError("empty list of byte counts");
  size_t start = 0;
  while (true) {
    if (out.size() == kMaxListEntries) {
      return MakeError("more than " + std::to_string(kMaxListEntries) + " entries in the list");
    }
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

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

namespace {

// The text as a message quotes it: trimmed, and cut short when long.
std::string Shown(std::string_view input) {
  std::string_view t = Trim(input);
  if (t.size() > 40) return std::string(t.substr(0, 40)) + "...";
  return std::string(t);
}

// Digits with an optional fraction and an optional leading '-': the common
// syntax of ParseNumber, ParseInteger and ParseUnsigned.
Result<std::string_view> NumberText(std::string_view input, bool whole) {
  std::string_view text = Trim(input);
  if (text.empty()) return MakeError("must not be empty");
  std::string_view digits = text.front() == '-' ? text.substr(1) : text;
  std::string_view number, rest;
  bool ok = SplitNumber(digits, &number, &rest) && rest.empty() && number.back() != '.';
  if (ok && whole && number.find('.') != std::string_view::npos) {
    return MakeError("must be a whole number, got '" + Shown(input) + "'");
  }
  if (!ok) {
    return MakeError(std::string("must be a ") + (whole ? "whole number like 12" : "number like 12 or 0.5") +
                     ", got '" + Shown(input) + "'");
  }
  return text;
}

Error Below(std::string_view input, const std::string& min) {
  return MakeError("must be at least " + min + ", got " + Shown(input));
}
Error Above(std::string_view input, const std::string& max) {
  return MakeError("must be at most " + max + ", got " + Shown(input));
}

}  // namespace

Result<double> ParseNumber(std::string_view input, double min, double max) {
  Result<std::string_view> text = NumberText(input, false);
  if (!text) return MakeError(text.error());
  double v = std::strtod(std::string(*text).c_str(), nullptr);
  if (v < min) return Below(input, FormatNumber(min));
  if (!std::isfinite(v) || v > max) return Above(input, FormatNumber(max));
  return v;
}

Result<uint64_t> ParseUnsigned(std::string_view input, uint64_t min, uint64_t max) {
  Result<std::string_view> text = NumberText(input, true);
  if (!text) return MakeError(text.error());
  if (text->front() == '-') {
    if (text->find_first_not_of("-0") == std::string_view::npos && min == 0) return uint64_t{0};
    return Below(input, std::to_string(min));
  }
  uint64_t v = 0;
  for (char c : *text) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return Above(input, std::to_string(max));
    v = v * 10 + d;
  }
  if (v < min) return Below(input, std::to_string(min));
  if (v > max) return Above(input, std::to_string(max));
  return v;
}

Result<int64_t> ParseInteger(std::string_view input, int64_t min, int64_t max) {
  Result<std::string_view> text = NumberText(input, true);
  if (!text) return MakeError(text.error());
  const bool negative = text->front() == '-';
  Result<uint64_t> magnitude = ParseUnsigned(negative ? text->substr(1) : *text, 0, uint64_t{1} << 63);
  if (!magnitude) return negative ? Below(input, std::to_string(min)) : Above(input, std::to_string(max));
  if (!negative && *magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Above(input, std::to_string(max));
  }
  int64_t v = negative ? static_cast<int64_t>(0 - *magnitude) : static_cast<int64_t>(*magnitude);
  if (v < min) return Below(input, std::to_string(min));
  if (v > max) return Above(input, std::to_string(max));
  return v;
}

}  // namespace oomguard
