// Amounts as frameworks print them, normalized to bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace oomguard::explain {

// Parses "20.00 MiB", "1.25TiB", "3.77G", "8589934592", "1,073,741,824 bytes",
// "15836 MB", "31254784kB". Units K/M/G/T with or without "i" and "B" are
// binary (frameworks print binary sizes with decimal labels: nvidia-smi's
// "MB" and TensorFlow's "G" are MiB and GiB). Returns nullopt for text that
// is not an amount or overflows.
std::optional<uint64_t> ParseAmount(std::string_view text);

// Bytes per element of a dtype name ("float", "float32", "half", "bf16",
// "int64", "torch.float16", "DT_FLOAT"); nullopt when unknown.
std::optional<uint64_t> DtypeBytes(std::string_view dtype);

// Bytes of a tensor "shape[256,1024,14,14] and type float" or
// "shape (64, 3, 224, 224) ... dtype float16" found in `line`; nullopt when the
// line has no shape with a known dtype.
std::optional<uint64_t> TensorBytesInLine(std::string_view line);

}  // namespace oomguard::explain
