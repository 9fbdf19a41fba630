// explain's report as JSON: private to the build (public headers do not need nlohmann/json).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "oomguard/explain/finding.h"

namespace oomguard::explain {

// The JSON report. Byte counts are integers; all strings are valid UTF-8.
nlohmann::json ReportToJson(const Report& report, const std::string& source);

}  // namespace oomguard::explain
