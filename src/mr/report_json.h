// The guard's reports as JSON (docs/DESIGN.md): private to the build, so that
// the public headers do not need nlohmann/json.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "oomguard/mr/out_of_memory.h"
#include "oomguard/mr/tracking_resource.h"

namespace oomguard::mr {

nlohmann::json ToJson(const OomReport& report);
nlohmann::json ToJson(const std::vector<TraceEvent>& events);

}  // namespace oomguard::mr
