// Which images a process reads, and in what order, epoch by epoch.
//
// ListImages finds the JPEG files under a directory (recursively, by the
// extensions .jpg/.jpeg/.jpe/.jfif in any case), or reads a list file (one
// path per line; relative paths are relative to the list file's folder; blank
// lines and lines starting with '#' are ignored; a path named twice, also as
// "./a.jpg" or "x/../a.jpg", is kept once, at its first line), or takes a
// single JPEG file (by extension or by its start-of-image marker) as a list of
// one. A file holding binary data that is not a JPEG is an error. Symlinks to
// folders are followed, each folder entered once (no loops). The result is
// sorted for a directory and in file order for a list, so every rank sees the
// same list.
//
// EpochOrder shuffles the whole list with (seed, epoch) — the same on every
// rank — and keeps the positions i with i % world_size == rank: the shards of
// one epoch are disjoint and together hold every file exactly once.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oomguard/feed/file_system.h"
#include "oomguard/result.h"

namespace oomguard::feed {

// A list file larger than this is refused (binary data, not a list): 256 MiB
// holds about four million paths.
inline constexpr uint64_t kMaxListFileBytes = 256ull << 20;

// Fails when the path does not exist, cannot be listed, or holds no JPEG file.
// `duplicates`, if given, receives the number of list lines dropped as repeats.
Result<std::vector<std::string>> ListImages(const FileSystem& fs, const std::string& dir_or_list,
                                            uint64_t* duplicates = nullptr);

// Indices into a list of `count` files for one epoch of one rank.
// REQUIRES: world_size >= 1, rank < world_size.
std::vector<uint64_t> EpochOrder(uint64_t count, uint64_t seed, uint64_t epoch, uint32_t rank,
                                 uint32_t world_size, bool shuffle = true);

bool HasJpegExtension(const std::string& path);

}  // namespace oomguard::feed
