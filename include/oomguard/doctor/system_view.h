// What the doctor reads from the operating system: files under /proc, /sys,
// /dev and /etc, directory listings, environment variables, the memlock
// limit, file-system sizes and the version a shared library reports.
//
// RealSystem reads this machine. FakeSystem is rooted in a directory of test
// data (tests/data/doctor/<case>/): "/proc/meminfo" is read from
// <root>/proc/meminfo, device nodes are empty files under <root>/dev, and the
// facts that are not files (environment, memlock limit, /dev/shm size,
// library versions) come from <root>/fake.json (format: docs/doctor.md).
//
// Thread safety: RealSystem is thread-safe except Env (getenv); FakeSystem is
// read-only after construction and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oomguard/result.h"

namespace oomguard::doctor {

enum class LibraryKind {
  kCudaDriver,   // libcuda: cuDriverGetVersion -> 12020
  kCudaRuntime,  // libcudart: cudaRuntimeGetVersion -> 12020
  kCudnn,        // libcudnn: cudnnGetVersion -> 8902 (v8) or 91900 (v9)
};

class SystemView {
 public:
  virtual ~SystemView() = default;
  // Whole contents of a small file; nullopt when it cannot be read.
  virtual std::optional<std::string> ReadFile(const std::string& path) const = 0;
  virtual bool Exists(const std::string& path) const = 0;
  // Entry names (no "." or ".."), unsorted; empty when the directory cannot be read.
  virtual std::vector<std::string> ListDir(const std::string& path) const = 0;
  virtual std::optional<std::string> Env(const std::string& name) const = 0;
  // RLIMIT_MEMLOCK soft limit in bytes; nullopt means unlimited.
  virtual std::optional<uint64_t> MemlockLimitBytes() const = 0;
  // Size in bytes of the file system holding `path`; nullopt when unknown.
  virtual std::optional<uint64_t> FilesystemBytes(const std::string& path) const = 0;
  // Loads the library (a path, or a soname searched the usual way) and asks
  // its version. Error when it cannot be loaded or the call fails.
  virtual Result<int> LibraryVersion(const std::string& library, LibraryKind kind) const = 0;
};

std::unique_ptr<SystemView> MakeRealSystem();
// Fails when <root>/fake.json exists but is not valid.
Result<std::unique_ptr<SystemView>> MakeFakeSystem(const std::string& root);

}  // namespace oomguard::doctor
