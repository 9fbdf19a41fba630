// What-if advice as JSON: private to the build (public headers do not need nlohmann/json).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "oomguard/fit/advice.h"

namespace oomguard::fit {

// [{"action":…, "description":…, "saves_bytes":…, "required_bytes":…, "fits":…,
//   "max_batch":…|null, ...}] as in docs/DESIGN.md.
nlohmann::json ToJson(const std::vector<AdviceItem>& items);

}  // namespace oomguard::fit
