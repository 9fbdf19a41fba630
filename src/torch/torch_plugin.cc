// liboomguard_torch.so: PyTorch's pluggable CUDA allocator backed by an
// oomguard arena per device, configured by OOMGUARD_ALLOC_CONF (alloc_conf.h).
//
//   alloc = torch.cuda.memory.CUDAPluggableAllocator(
//       "liboomguard_torch.so", "oomguard_malloc", "oomguard_free")
//   torch.cuda.memory.change_current_allocator(alloc)
//
// The signatures are those PyTorch documents for the .so functions. A bad
// OOMGUARD_ALLOC_CONF makes every allocation fail (nullptr), with the reason in
// oomguard_stats_json()'s "last_error"; the library prints that reason once on
// stderr when it is loaded, since PyTorch would report only an out-of-memory.
// oomguard_check_conf() lets a caller (oomguard.torch) check a text first.
#include <sys/types.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "oomguard/mr/pluggable_allocator.h"

namespace {

using oomguard::mr::AllocConf;
using oomguard::mr::PluggableAllocator;

PluggableAllocator& Instance() {
  static PluggableAllocator* instance = [] {
    const char* text = std::getenv("OOMGUARD_ALLOC_CONF");
    oomguard::Result<AllocConf> conf = oomguard::mr::ParseAllocConf(text ? text : "");
    if (!conf.ok()) {
      std::string error = conf.error();
      // Every request fails with the parse error as the reason.
      return new PluggableAllocator(AllocConf{}, [error](int) -> oomguard::Result<
                                                     std::unique_ptr<oomguard::mr::MemoryResource>> {
        return oomguard::MakeError(error);
      });
    }
    return new PluggableAllocator(*conf, oomguard::mr::MakeDefaultUpstreamFactory(*conf));
  }();
  // Never destroyed: PyTorch may free tensors during interpreter shutdown.
  return *instance;
}

// Runs when the library is loaded: a bad OOMGUARD_ALLOC_CONF is said at once.
__attribute__((constructor)) void ReportBadConfAtLoad() {
  const char* text = std::getenv("OOMGUARD_ALLOC_CONF");
  if (text == nullptr) return;
  oomguard::Result<AllocConf> conf = oomguard::mr::ParseAllocConf(text);
  if (!conf.ok()) {
    std::fprintf(stderr, "liboomguard_torch.so: %s; every CUDA allocation will fail\n", conf.error().c_str());
  }
}

}  // namespace

extern "C" {

// Checks `text` as OOMGUARD_ALLOC_CONF. Returns 0 when it is valid; otherwise
// copies the one-line reason into buffer (NUL-terminated, truncated to
// capacity) and returns its full length.
size_t oomguard_check_conf(const char* text, char* buffer, size_t capacity) noexcept {
  try {
    oomguard::Result<AllocConf> conf = oomguard::mr::ParseAllocConf(text ? text : "");
    if (conf.ok()) return 0;
    const std::string& error = conf.error();
    if (buffer != nullptr && capacity > 0) {
      std::size_t n = error.size() < capacity - 1 ? error.size() : capacity - 1;
      std::memcpy(buffer, error.data(), n);
      buffer[n] = '\0';
    }
    return error.size();
  } catch (...) {  // out of host memory while parsing
    if (buffer != nullptr && capacity > 0) buffer[0] = '\0';
    return 1;
  }
}
// No exception crosses these C functions: PyTorch calls them from C++ that
// does not expect one, and an exception here would terminate the process.

void* oomguard_malloc(ssize_t size, int device, void* stream) noexcept {
  if (size < 0) return nullptr;
  try {
    return Instance().Malloc(static_cast<std::size_t>(size), device, stream);
  } catch (...) {  // the allocator could not be created (out of host memory)
    return nullptr;
  }
}

void oomguard_free(void* ptr, ssize_t size, int device, void* stream) noexcept {
  if (size < 0) return;
  try {
    Instance().Free(ptr, static_cast<std::size_t>(size), device, stream);
  } catch (...) {
  }
}

// Copies the allocator's statistics as JSON (PluggableAllocator::stats_json)
// into buffer (NUL-terminated, truncated to capacity) and returns the full
// length, so a caller can retry with a larger buffer. Bytes that are not
// UTF-8 (a device name) are replaced; returns 0 (buffer "") when the JSON
// cannot be made (out of host memory).
size_t oomguard_stats_json(char* buffer, size_t capacity) noexcept {
  std::string json;
  try {
    json = Instance().stats_json();
  } catch (...) {
    json.clear();
  }
  if (buffer != nullptr && capacity > 0) {
    std::size_t n = json.size() < capacity - 1 ? json.size() : capacity - 1;
    std::memcpy(buffer, json.data(), n);
    buffer[n] = '\0';
  }
  return json.size();
}

}  // extern "C"
