// Byte counts and durations as people write them.
//
// The library counts bytes as uint64_t everywhere. Human input accepts a plain
// integer (bytes), decimal units (KB, MB, GB, TB = powers of 1000) and binary
// units (KiB, MiB, GiB, TiB = powers of 1024), with an optional fraction:
// "512MiB", "1.5GiB", "24GB", "4096". Human output uses binary units.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oomguard/result.h"

namespace oomguard {

// Parses a byte count. Fails (with a message naming the text) on empty input,
// negative numbers, unknown units, trailing garbage and values above 2^64-1.
Result<uint64_t> ParseBytes(std::string_view text);

// Formats bytes with a binary unit and two decimals: "1.50 GiB", "512 B".
std::string FormatBytes(uint64_t bytes);

// Parses a duration in seconds ("0.1", "2", "1.5s", "250ms"). Must be > 0 and finite.
Result<double> ParseSeconds(std::string_view text);

// Parses a comma-separated list of byte counts ("11GiB,11GiB,24GiB").
Result<std::vector<uint64_t>> ParseByteList(std::string_view text);

}  // namespace oomguard
