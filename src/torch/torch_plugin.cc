// liboomguard_torch.so: PyTorch's pluggable CUDA allocator backed by an
// oomguard arena per device, configured by OOMGUARD_ALLOC_CONF (alloc_conf.h).
//
//   alloc = torch.cuda.memory.CUDAPluggableAllocator(
//       "liboomguard_torch.so", "oomguard_malloc", "oomguard_free")
//   torch.cuda.memory.change_current_allocator(alloc)
//
// The signatures are those PyTorch documents for the .so functions. A bad
// OOMGUARD_ALLOC_CONF makes every allocation fail (nullptr) and the reason is
// in oomguard_stats_json()'s "last_error": the library does not print.
#include <sys/types.h>

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

}  // namespace

extern "C" {

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
    json = Instance().stats_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
