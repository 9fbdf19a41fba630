// Test helpers for the feed part: small JPEGs made with TurboJPEG, an
// in-memory FileSystem, and a staging allocator that checks the budget.
#pragma once

#include <turbojpeg.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "oomguard/feed/file_system.h"
#include "oomguard/feed/staging.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::feed::testing {

// A w x h JPEG whose pixels depend on `id` everywhere (distinct ids give
// distinct decoded images).
inline std::string MakeJpeg(int w, int h, uint32_t id, int quality = 90) {
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>((x * 7 + id * 37) & 0xFF);
      p[1] = static_cast<uint8_t>((y * 5 + id * 91) & 0xFF);
      p[2] = static_cast<uint8_t>(((x + y) * 3 + (id >> 8) * 53 + id) & 0xFF);
    }
  }
  tjhandle tj = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  tjCompress2(tj, rgb.data(), w, 0, h, TJPF_RGB, &jpeg, &size, TJSAMP_444, quality, 0);
  std::string out(reinterpret_cast<char*>(jpeg), size);
  tjFree(jpeg);
  tjDestroy(tj);
  return out;
}

inline uint64_t Fnv1a(const uint8_t* p, uint64_t n) {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// An in-memory disk. Files and folders are set up before use; reads are safe
// from many threads. A path in `fail_reads` fails every ReadFile.
class FakeFileSystem : public FileSystem {
 public:
  void Add(const std::string& path, std::string bytes) { files_[path] = std::move(bytes); }
  void FailReads(const std::string& path) { fail_reads_.insert(path); }
  // FileSize reports `size` but the file holds fewer bytes (shrank on disk).
  void LieAboutSize(const std::string& path, uint64_t size) { size_lies_[path] = size; }

  bool IsDirectory(const std::string& path) const override {
    std::string prefix = path + "/";
    for (const auto& [p, b] : files_) {
      if (p.rfind(prefix, 0) == 0) return true;
    }
    return false;
  }
  bool IsRegularFile(const std::string& path) const override { return files_.count(path) > 0; }
  Result<std::vector<std::string>> ListFilesRecursive(const std::string& dir) const override {
    std::vector<std::string> out;
    for (const auto& [p, b] : files_) {
      if (p.rfind(dir + "/", 0) == 0) out.push_back(p);
    }
    return out;
  }
  Result<uint64_t> FileSize(const std::string& path) const override {
    if (auto it = size_lies_.find(path); it != size_lies_.end()) return it->second;
    auto it = files_.find(path);
    if (it == files_.end()) return MakeError("cannot stat: No such file or directory");
    return static_cast<uint64_t>(it->second.size());
  }
  Status ReadFile(const std::string& path, uint8_t* dst, uint64_t size) const override {
    reads_.fetch_add(1);
    if (fail_reads_.count(path)) return MakeError("read failed: Input/output error");
    auto it = files_.find(path);
    if (it == files_.end()) return MakeError("cannot open: No such file or directory");
    if (it->second.size() < size) {
      return MakeError("file shrank while reading (" + std::to_string(it->second.size()) + " of " +
                       std::to_string(size) + " bytes)");
    }
    std::copy(it->second.begin(), it->second.begin() + static_cast<long>(size), dst);
    return Status::Ok();
  }
  Result<std::string> ReadText(const std::string& path) const override {
    auto it = files_.find(path);
    if (it == files_.end()) return MakeError("cannot read " + path);
    return it->second;
  }
  uint64_t reads() const { return reads_.load(); }

 private:
  std::map<std::string, std::string> files_;
  std::set<std::string> fail_reads_;
  std::map<std::string, uint64_t> size_lies_;
  mutable std::atomic<uint64_t> reads_{0};
};

// Plain heap memory that tracks the bytes live at once, so a test can check
// that the pipeline never holds more memory than its budget allows.
class CountingStaging : public HostStaging {
 public:
  uint8_t* Allocate(uint64_t bytes) override {
    if (bytes == 0) return nullptr;
    MutexLock lock(mu_);
    live_ += bytes;
    peak_ = std::max(peak_, live_);
    ++allocations_;
    return static_cast<uint8_t*>(std::malloc(bytes));
  }
  void Free(uint8_t* p, uint64_t bytes) override {
    if (p == nullptr) return;
    MutexLock lock(mu_);
    live_ -= bytes;
    std::free(p);
  }
  std::string name() const override { return "counting test memory"; }
  uint64_t live() const {
    MutexLock lock(mu_);
    return live_;
  }
  uint64_t peak() const {
    MutexLock lock(mu_);
    return peak_;
  }

 private:
  mutable Mutex mu_;
  uint64_t live_ GUARDED_BY(mu_) = 0, peak_ GUARDED_BY(mu_) = 0, allocations_ GUARDED_BY(mu_) = 0;
};

}  // namespace oomguard::feed::testing
