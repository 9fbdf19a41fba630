// Byte counts, durations, plain numbers and lists as people write them: the
// one parser for every numeric and list flag of every command.
//
// A number is decimal digits with an optional fraction ("32", "0.5"), a
// leading '-' only where the range allows negatives. Exponents ("1e300"),
// hex ("0x10"), "nan", "inf", empty text and trailing text are refused, and so
// is a value outside the flag's range; the message names the text and the
// bound, the bound written compactly ("1e+300", never 309 digits).
//
// The library counts bytes as uint64_t everywhere. Human input accepts a plain
// integer (bytes), decimal units (KB, MB, GB, TB = powers of 1000) and binary
// units (KiB, MiB, GiB, TiB = powers of 1024), with an optional fraction:
// "512MiB", "1.5GiB", "24GB", "4096". Human output uses binary units.
#pragma once

#include <cstddef>
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

// The longest duration any option takes: 30 days.
inline constexpr double kMaxSeconds = 30 * 24 * 3600.0;

// Parses a duration in seconds ("0.1", "2", "1.5s", "250ms"). Must be > 0 and
// at most kMaxSeconds.
Result<double> ParseSeconds(std::string_view text);

// The most entries a list may hold (and the most GPUs a command plans for).
inline constexpr size_t kMaxListEntries = 4096;

// Parses a comma-separated list of byte counts ("11GiB,11GiB,24GiB"), at most
// kMaxListEntries entries, none empty.
Result<std::vector<uint64_t>> ParseByteList(std::string_view text);

// Parses a number in [min, max] (see the top of this file).
Result<double> ParseNumber(std::string_view text, double min, double max);
// Parses a whole number in [min, max].
Result<int64_t> ParseInteger(std::string_view text, int64_t min, int64_t max);
// Parses a whole non-negative number in [min, max], up to 2^64-1.
Result<uint64_t> ParseUnsigned(std::string_view text, uint64_t min, uint64_t max);

// A number for a message: up to ten significant digits, "1e+300" for huge ones.
std::string FormatNumber(double v);

}  // namespace oomguard
