// FileSystem: the only way the feed pipeline touches the disk, so tests can
// run the pipeline over an in-memory fake and inject read failures.
//
// Paths are plain strings. Errors come back as Result/Status with a message
// that names the path. Thread safety: RealFileSystem may be used from many
// threads at once; a fake must be too (the pipeline reads from several).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oomguard/result.h"

namespace oomguard::feed {

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  virtual bool IsDirectory(const std::string& path) const = 0;
  virtual bool IsRegularFile(const std::string& path) const = 0;
  // Every regular file under `dir`, recursively, as "dir/sub/name", sorted.
  virtual Result<std::vector<std::string>> ListFilesRecursive(const std::string& dir) const = 0;
  virtual Result<uint64_t> FileSize(const std::string& path) const = 0;
  // Reads exactly `size` bytes from the start of the file into dst; fails if
  // the file is shorter (e.g. truncated since FileSize) or unreadable.
  virtual Status ReadFile(const std::string& path, uint8_t* dst, uint64_t size) const = 0;
  virtual Result<std::string> ReadText(const std::string& path) const = 0;
};

// The real disk (POSIX open/read, std::filesystem for listing).
class RealFileSystem : public FileSystem {
 public:
  bool IsDirectory(const std::string& path) const override;
  bool IsRegularFile(const std::string& path) const override;
  Result<std::vector<std::string>> ListFilesRecursive(const std::string& dir) const override;
  Result<uint64_t> FileSize(const std::string& path) const override;
  Status ReadFile(const std::string& path, uint8_t* dst, uint64_t size) const override;
  Result<std::string> ReadText(const std::string& path) const override;
};

// A process-wide RealFileSystem.
FileSystem& DefaultFileSystem();

}  // namespace oomguard::feed
