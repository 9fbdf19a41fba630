#include "oomguard/mr/alloc_conf.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "oomguard/units.h"

namespace oomguard::mr {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Error ConfError(const std::string& message) { return MakeError("OOMGUARD_ALLOC_CONF: " + message); }

}  // namespace

Result<AllocConf> ParseAllocConf(std::string_view text) {
  AllocConf conf;
  if (Trim(text).empty()) return conf;
  std::set<std::string, std::less<>> seen;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = Trim(text.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) return ConfError("empty item (two commas in a row, or a trailing comma)");
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return ConfError("'" + std::string(item) + "' is not key=value");
    }
    std::string key(Trim(item.substr(0, eq)));
    std::string value(Trim(item.substr(eq + 1)));
    if (key != "fraction" && key != "limit" && key != "growth" && key != "initial" && key != "report" &&
        key != "simulate") {
      return ConfError("unknown key '" + key + "' (known: fraction, limit, growth, initial, report, simulate)");
    }
    if (!seen.insert(key).second) return ConfError("'" + key + "' is given twice");
    if (value.empty()) return ConfError("'" + key + "' has no value");
    if (key == "fraction") {
      char* end = nullptr;
      errno = 0;
      double f = std::strtod(value.c_str(), &end);
      if (errno != 0 || end != value.c_str() + value.size() || !std::isfinite(f) || !(f > 0.0 && f <= 1.0)) {
        return ConfError("fraction must be a number in (0, 1], got '" + value + "'");
      }
      conf.fraction = f;
    } else if (key == "growth") {
      if (value == "on" || value == "expandable") {
        conf.growth = Growth::kExpandable;
      } else if (value == "regions") {
        conf.growth = Growth::kOnDemand;
      } else if (value == "off") {
        conf.growth = Growth::kPreallocate;
      } else {
        return ConfError("growth must be on, expandable, regions or off, got '" + value + "'");
      }
    } else if (key == "report") {
      conf.report_path = value;
    } else {
      Result<uint64_t> bytes = ParseBytes(value);
      if (!bytes.ok()) return ConfError(key + ": " + bytes.error());
      if (*bytes == 0) return ConfError(key + " must be more than 0 bytes");
      if (key == "limit") conf.limit_bytes = *bytes;
      if (key == "initial") conf.initial_bytes = *bytes;
      if (key == "simulate") conf.simulate_bytes = *bytes;
    }
    if (comma == text.size()) break;
  }
  if (conf.fraction && conf.limit_bytes) return ConfError("give fraction or limit, not both");
  return conf;
}

}  // namespace oomguard::mr
