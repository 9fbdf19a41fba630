// Which images a process reads, and in what order, epoch by epoch.
//
// ListImages finds the JPEG files under a directory (recursively, by the
// extensions .jpg/.jpeg/.jpe/.jfif in any case), or reads a list file (one
// path per line; relative paths are relative to the list file's folder; blank
// lines and lines starting with '#' are ignored). The result is sorted for a
// directory and in file order for a list, so every rank sees the same list.
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

// Fails when the path does not exist, cannot be listed, or holds no JPEG file.
Result<std::vector<std::string>> ListImages(const FileSystem& fs, const std::string& dir_or_list);

// Indices into a list of `count` files for one epoch of one rank.
// REQUIRES: world_size >= 1, rank < world_size.
std::vector<uint64_t> EpochOrder(uint64_t count, uint64_t seed, uint64_t epoch, uint32_t rank,
                                 uint32_t world_size, bool shuffle = true);

bool HasJpegExtension(const std::string& path);

}  // namespace oomguard::feed
