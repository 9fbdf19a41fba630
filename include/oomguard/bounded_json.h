// Parsing a JSON text without trusting it: a 16 MiB file of "[0,0,0,...]" is
// eight million values, a document of well over 100 MiB once parsed, and a
// document that runs out of memory half built cannot even be freed (its
// destructor allocates). ParseJsonBounded counts the values as the parser
// meets them and keeps none past `max_values`, so the document it builds stays
// small whatever the text holds.
// Thread safety: stateless and thread-safe.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "oomguard/result.h"

namespace oomguard {

// The document of `text`, or "not valid JSON" / "more than N values".
inline Result<nlohmann::json> ParseJsonBounded(const std::string& text, size_t max_values) {
  size_t values = 0;
  bool over = false;
  nlohmann::json j = nlohmann::json::parse(
      text,
      [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& /*parsed*/) {
        if (event == nlohmann::json::parse_event_t::value || event == nlohmann::json::parse_event_t::object_start ||
            event == nlohmann::json::parse_event_t::array_start) {
          if (++values > max_values) over = true;
        }
        return !over;  // past the bound, nothing more is kept
      },
      /*allow_exceptions=*/false);
  if (over) return MakeError("more than " + std::to_string(max_values) + " JSON values");
  if (j.is_discarded()) return MakeError("not valid JSON");
  return j;
}

}  // namespace oomguard
