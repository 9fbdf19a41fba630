#include "buffer_cache.h"

#include <chrono>
#include <new>

namespace oomguard::feed {

BufferCache::BufferCache(ByteBudget& budget, HostStaging& staging, size_t max_buffers)
    : budget_(budget), staging_(staging), max_buffers_(max_buffers) {}

BufferCache::~BufferCache() { Close(); }

bool BufferCache::EvictOne() {
  uint8_t* p;
  uint64_t n;
  {
    MutexLock lock(mu_);
    if (free_.empty()) return false;
    auto it = std::prev(free_.end());  // the largest frees the most
    n = it->first;
    p = it->second;
    free_.erase(it);
    cached_bytes_ -= n;
  }
  staging_.Free(p, n);
  budget_.Release(n);
  return true;
}

Status BufferCache::Reserve(uint64_t bytes) {
  bool waited = false;
  while (true) {
    if (budget_.TryReserve(bytes)) return Status::Ok();
    if (EvictOne()) continue;
    if (!waited) {
      waited = true;
      MutexLock lock(mu_);
      ++waits_;
    }
    // Wait a little, then look at the cache again: a released buffer lands in
    // the cache (still charged), not back in the budget.
    Result<bool> got = budget_.ReserveWithin(bytes, std::chrono::milliseconds(2));
    if (!got) return MakeError(got.error());
    if (*got) return Status::Ok();
  }
}

Status BufferCache::Acquire(uint64_t bytes, uint8_t** p) {
  {
    MutexLock lock(mu_);
    if (auto it = free_.find(bytes); it != free_.end()) {
      *p = it->second;
      cached_bytes_ -= bytes;
      free_.erase(it);
      return Status::Ok();
    }
  }
  if (Status s = Reserve(bytes); !s) return s;
  try {
    *p = staging_.Allocate(bytes);
  } catch (const std::bad_alloc&) {
    budget_.Release(bytes);
    throw;
  }
  return Status::Ok();
}

void BufferCache::Return(uint8_t* p, uint64_t bytes) {
  if (p != nullptr) {
    MutexLock lock(mu_);
    if (!closed_ && free_.size() < max_buffers_) {
      free_.emplace(bytes, p);
      cached_bytes_ += bytes;
      return;
    }
  }
  staging_.Free(p, bytes);
  budget_.Release(bytes);
}

void BufferCache::Close() {
  {
    MutexLock lock(mu_);
    closed_ = true;
  }
  while (EvictOne()) {
  }
}

uint64_t BufferCache::cached_bytes() const {
  MutexLock lock(mu_);
  return cached_bytes_;
}

uint64_t BufferCache::waits() const {
  MutexLock lock(mu_);
  return waits_;
}

}  // namespace oomguard::feed
