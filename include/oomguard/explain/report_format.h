// Turns a Report into what `oomguard explain` prints: a human text. The JSON
// form (DESIGN.md: {"findings":[{"cause","domain","framework","evidence","numbers","advice"}]})
// is ReportToJson in src/explain/report_json.h, private to the build.
// Pure functions; they never print.
#pragma once

#include <string>

#include "oomguard/explain/finding.h"

namespace oomguard::explain {

// The human report; `source` names the log ("seed_log.txt", "stdin").
std::string FormatReport(const Report& report, const std::string& source);

}  // namespace oomguard::explain
