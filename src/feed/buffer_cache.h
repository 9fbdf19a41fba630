// BufferCache: keeps released batch buffers for reuse, still charged to the budget.
//
// Mapping fresh memory for every batch costs a page fault per 4 KiB and a TLB
// shootdown on unmap; on a 640x480 batch of 32 that is ~7200 faults, as much
// CPU as the decoding. So released batch buffers stay mapped here,
// and stay counted in the ByteBudget: the budget still covers every byte the
// process holds for the pipeline. When the budget is full, Acquire/Reserve
// free cached buffers before waiting, so cached bytes never block progress.
//
// Thread safety: all methods may be called from any thread; Acquire() and
// Reserve() are meant for one producer thread (they may wait).
// REQUIRES: Return(p, n) gets a pointer and size from Acquire() on this cache.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "oomguard/feed/byte_budget.h"
#include "oomguard/feed/staging.h"
#include "oomguard/result.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::feed {

class BufferCache {
 public:
  BufferCache(ByteBudget& budget, HostStaging& staging, size_t max_buffers = 64);
  ~BufferCache();  // Close()
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  // A buffer of exactly `bytes`, charged to the budget: a cached one of that
  // size, or reserved (evicting cached buffers when the budget is full,
  // waiting when nothing is cached) and allocated. Only exact sizes are
  // reused, so the bytes charged are always the bytes asked for. Fails if the
  // budget is closed or bytes exceed it; throws std::bad_alloc if allocation
  // fails (after releasing the reservation).
  Status Acquire(uint64_t bytes, uint8_t** p);

  // Reserves bytes with no buffer (e.g. scratch), evicting cached buffers first.
  Status Reserve(uint64_t bytes);

  // Keeps the buffer (still charged) or, when the cache is full or closed,
  // frees it and releases its bytes.
  void Return(uint8_t* p, uint64_t bytes);

  // Frees every cached buffer and releases its bytes; later Returns free at once.
  void Close();

  uint64_t cached_bytes() const;
  // Requests that had to wait for bytes (back-pressure), counted once each.
  uint64_t waits() const;

 private:
  bool EvictOne() EXCLUDES(mu_);

  ByteBudget& budget_;
  HostStaging& staging_;
  const size_t max_buffers_;
  mutable Mutex mu_;
  std::multimap<uint64_t, uint8_t*> free_ GUARDED_BY(mu_);  // size -> buffer
  uint64_t cached_bytes_ GUARDED_BY(mu_) = 0;
  uint64_t waits_ GUARDED_BY(mu_) = 0;
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace oomguard::feed
