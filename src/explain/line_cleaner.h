// Turning a raw log line into evidence a person can read: no ANSI colour
// codes, no CR or control bytes, valid UTF-8, without the timestamp and
// rank prefixes that make repeated lines look distinct.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace oomguard::explain {

// Removes ANSI escape sequences (ESC [ ... letter, ESC ] ... BEL).
std::string StripAnsi(std::string_view line);

// The cleaned line: ANSI codes removed, control bytes dropped (tab -> space),
// invalid UTF-8 replaced by '?', leading timestamps ("2017-03-28 23:38:19.485396: ",
// "[2024-01-01 10:00:00,123] ", glog "I0328 23:38:19.485396 1234 ") and rank
// prefixes ("[rank3]:", "[default0]:", "[1,0]<stderr>:") removed, trimmed,
// cut to at most `max_bytes` on a character boundary ("..." appended).
std::string CleanLine(std::string_view line, size_t max_bytes = 400);

// The distributed rank named by a prefix such as "[rank3]:", "[default3]:" or
// "[1,3]<stderr>:"; nullopt when there is none.
std::optional<int> RankOf(std::string_view line);

}  // namespace oomguard::explain
