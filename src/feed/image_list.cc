#include "oomguard/feed/image_list.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <set>
#include <sstream>

#include "oomguard/units.h"

namespace oomguard::feed {
namespace {

// SplitMix64: a small, portable generator so the order is the same on every
// platform and standard library (std::shuffle's algorithm is unspecified).
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// How much of a file ListImages reads to tell a JPEG or binary data from a list.
constexpr uint64_t kSniffBytes = 4096;

}  // namespace

bool HasJpegExtension(const std::string& path) {
  size_t dot = path.find_last_of('.');
  size_t slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return false;
  std::string ext = Lower(path.substr(dot + 1));
  return ext == "jpg" || ext == "jpeg" || ext == "jpe" || ext == "jfif";
}

Result<std::vector<std::string>> ListImages(const FileSystem& fs, const std::string& dir_or_list,
                                            uint64_t* duplicates) {
  if (duplicates != nullptr) *duplicates = 0;
  std::vector<std::string> images;
  if (fs.IsDirectory(dir_or_list)) {
    Result<std::vector<std::string>> files = fs.ListFilesRecursive(dir_or_list);
    if (!files) return Error{files.error()};
    for (std::string& f : *files) {
      if (HasJpegExtension(f)) images.push_back(std::move(f));
    }
    if (images.empty()) return MakeError(dir_or_list + " holds no JPEG files (*.jpg, *.jpeg)");
    return images;
  }
  if (!fs.IsRegularFile(dir_or_list)) return MakeError(dir_or_list + ": no such directory or list file");
  // One image is a data set of one; it is not read here.
  if (HasJpegExtension(dir_or_list)) return std::vector<std::string>{dir_or_list};
  // Look at the start before reading the whole file as text: a JPEG without
  // the extension, or binary data (a video, an archive) that is no list.
  Result<uint64_t> size = fs.FileSize(dir_or_list);
  if (!size) return MakeError(dir_or_list + ": " + size.error());
  std::string head(std::min<uint64_t>(*size, kSniffBytes), '\0');
  if (Status s = fs.ReadFile(dir_or_list, reinterpret_cast<uint8_t*>(head.data()), head.size()); !s) {
    return MakeError(dir_or_list + ": " + s.error());
  }
  if (head.size() >= 2 && static_cast<uint8_t>(head[0]) == 0xFF && static_cast<uint8_t>(head[1]) == 0xD8) {
    return std::vector<std::string>{dir_or_list};
  }
  const std::string not_a_list = dir_or_list + " is neither a folder, a JPEG image nor a list file";
  if (head.find('\0') != std::string::npos) return MakeError(not_a_list + " (it holds binary data)");
  if (*size > kMaxListFileBytes) {
    return MakeError(not_a_list + " (" + FormatBytes(*size) + ", more than a list file's limit of " +
                     FormatBytes(kMaxListFileBytes) + ")");
  }
  Result<std::string> text = fs.ReadText(dir_or_list);
  if (!text) return Error{text.error()};
  if (text->find('\0') != std::string::npos) return MakeError(not_a_list + " (it holds binary data)");
  std::string base;
  if (size_t slash = dir_or_list.find_last_of('/'); slash != std::string::npos) {
    base = dir_or_list.substr(0, slash + 1);
  }
  std::set<std::string> seen;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    std::string path = line[0] == '/' ? line : base + line;
    // "a.jpg", "./a.jpg" and "x/../a.jpg" name one file: it is fed once.
    if (!seen.insert(std::filesystem::path(path).lexically_normal().string()).second) {
      if (duplicates != nullptr) ++*duplicates;
      continue;
    }
    images.push_back(std::move(path));
  }
  if (images.empty()) return MakeError("list file " + dir_or_list + " names no images");
  return images;
}

std::vector<uint64_t> EpochOrder(uint64_t count, uint64_t seed, uint64_t epoch, uint32_t rank,
                                 uint32_t world_size, bool shuffle) {
  std::vector<uint64_t> all(count);
  std::iota(all.begin(), all.end(), 0);
  if (shuffle && count > 1) {
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + epoch + 1;
    for (uint64_t i = count - 1; i > 0; --i) {
      uint64_t j = SplitMix64(state) % (i + 1);
      std::swap(all[i], all[j]);
    }
  }
  std::vector<uint64_t> mine;
  mine.reserve(count / world_size + 1);
  for (uint64_t i = rank; i < count; i += world_size) mine.push_back(all[i]);
  return mine;
}

}  // namespace oomguard::feed
