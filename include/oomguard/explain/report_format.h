// Turns a Report into what `oomguard explain` prints: a human text or JSON
// (DESIGN.md: {"findings":[{"cause","domain","framework","evidence","numbers","advice"}]}).
// Pure functions; they never print.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "oomguard/explain/finding.h"

namespace oomguard::explain {

// The human report; `source` names the log ("seed_log.txt", "stdin").
std::string FormatReport(const Report& report, const std::string& source);

// The JSON report. Byte counts are integers; all strings are valid UTF-8.
nlohmann::json ReportToJson(const Report& report, const std::string& source);

}  // namespace oomguard::explain
