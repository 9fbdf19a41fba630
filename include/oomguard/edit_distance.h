// Edit distance for "did you mean" suggestions (commands, GPU names, zoo models).
#pragma once

#include <cstddef>
#include <string_view>

namespace oomguard {

// The Levenshtein distance: insertions, deletions and substitutions, each 1.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace oomguard
