#include "cuda_caching_allocator.h"

#include <algorithm>

namespace oomguard::plan {

uint64_t CudaRoundSize(uint64_t requested) {
  if (requested == 0) return 0;
  if (requested < kMinBlockSize) return kMinBlockSize;
  return kMinBlockSize * ((requested + kMinBlockSize - 1) / kMinBlockSize);
}

uint64_t CudaAllocationSize(uint64_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
}

void* CudaCachingAllocator::NodeRecycler::do_allocate(size_t bytes, size_t align) {
  if (size_ == 0) {
    size_ = bytes;
    align_ = align;
  }
  if (bytes == size_ && align == align_ && !free_.empty()) {
    void* p = free_.back();
    free_.pop_back();
    return p;
  }
  return upstream_.allocate(bytes, align);
}

void CudaCachingAllocator::NodeRecycler::do_deallocate(void* p, size_t bytes, size_t align) {
  if (bytes == size_ && align == align_) free_.push_back(p);  // (anything else goes with the allocator)
}

CudaCachingAllocator::CudaCachingAllocator(CudaAllocatorConfig config) : config_(config) {}

void CudaCachingAllocator::Reset(CudaAllocatorConfig config) {
  config_ = config;
  stats_ = {};
  blocks_.clear();
  free_ids_.clear();
  next_stamp_ = 0;
  for (Pool* pool : {&small_pool_, &large_pool_}) {
    for (auto& [size, bucket] : *pool) {
      bucket.heap.clear();
      spare_heaps_.push_back(std::move(bucket.heap));
    }
    pool->clear();
  }
  next_addr_ = 0;
  last_[0] = last_[1] = -1;
  has_segment_[0] = has_segment_[1] = false;
  segment_end_[0] = segment_end_[1] = 0;
}

int CudaCachingAllocator::NewBlock(const Block& b) {
  Block fresh = b;
  fresh.pooled = false;
  fresh.stamp = 0;  // Insert gives every entry a stamp from 1 up: 0 matches none
  if (!free_ids_.empty()) {
    int id = free_ids_.back();
    free_ids_.pop_back();
    blocks_[id] = fresh;
    return id;
  }
  blocks_.push_back(fresh);
  return static_cast<int>(blocks_.size()) - 1;
}

void CudaCachingAllocator::Insert(int b) {
  Block& block = blocks_[b];
  block.pooled = true;
  block.stamp = ++next_stamp_;
  auto [it, created] = PoolOf(block.small).try_emplace(block.size);
  block.bucket = it;
  Bucket& bucket = it->second;
  if (created && !spare_heaps_.empty()) {  // reuse an emptied bucket's storage
    bucket.heap = std::move(spare_heaps_.back());
    spare_heaps_.pop_back();
  }
  if (bucket.heap.size() > 2 * static_cast<size_t>(bucket.live) + 16) {  // mostly stale: keep the live
    std::erase_if(bucket.heap, [&](const HeapEntry& e) { return !Live(e); });
    std::make_heap(bucket.heap.begin(), bucket.heap.end(), std::greater<>());
  }
  bucket.heap.push_back({block.addr, b, block.stamp});
  std::push_heap(bucket.heap.begin(), bucket.heap.end(), std::greater<>());
  ++bucket.live;
}

void CudaCachingAllocator::Erase(int b) {
  Block& block = blocks_[b];
  block.pooled = false;
  const Pool::iterator it = block.bucket;
  if (--it->second.live > 0) return;
  it->second.heap.clear();
  spare_heaps_.push_back(std::move(it->second.heap));
  PoolOf(block.small).erase(it);
}

const CudaCachingAllocator::HeapEntry& CudaCachingAllocator::Top(Bucket& bucket) {
  while (!Live(bucket.heap.front())) {
    std::pop_heap(bucket.heap.begin(), bucket.heap.end(), std::greater<>());
    bucket.heap.pop_back();
  }
  return bucket.heap.front();
}

bool CudaCachingAllocator::IsExpandableTail(int b) const {
  return config_.expandable_segments && last_[blocks_[b].small ? 1 : 0] == b;
}

int CudaCachingAllocator::GetFreeBlock(uint64_t size, bool small) {
  Pool& pool = PoolOf(small);
  auto it = pool.lower_bound(size);
  if (it == pool.end()) return -1;
  int b = Top(it->second).block;
  uint64_t found = it->first;
  // Best fit counts the free end of an expandable segment as the size it can
  // grow to, so any other block that holds the request comes first: the next
  // block in (size, address) order, in this bucket or the next.
  if (IsExpandableTail(b)) {
    Bucket& bucket = it->second;
    if (bucket.live > 1) {
      const HeapEntry tail = bucket.heap.front();
      std::pop_heap(bucket.heap.begin(), bucket.heap.end(), std::greater<>());
      bucket.heap.pop_back();
      b = Top(bucket).block;
      bucket.heap.push_back(tail);
      std::push_heap(bucket.heap.begin(), bucket.heap.end(), std::greater<>());
    } else if (auto next = std::next(it); next != pool.end()) {
      b = Top(next->second).block;
      found = next->first;
    }
  }
  // Do not return an oversized block for a small request, nor a block much
  // larger than an oversized request.
  if (size < config_.max_split_size && found >= config_.max_split_size) return -1;
  if (size >= config_.max_split_size && found >= size + kLargeBuffer) return -1;
  Erase(b);
  return b;
}

int CudaCachingAllocator::AllocSegment(uint64_t size, bool small) {
  Block b;
  b.addr = next_addr_;
  b.size = size;
  b.small = small;
  next_addr_ += size;
  stats_.reserved_bytes += size;
  if (small) stats_.small_reserved_bytes += size;
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  ++stats_.segments;
  return NewBlock(b);
}

int CudaCachingAllocator::ExpandSegment(uint64_t size, bool small) {
  const int p = small ? 1 : 0;
  const uint64_t page = small ? kSmallBuffer : kLargeBuffer;
  if (!has_segment_[p]) {  // reserve an address range no step can exhaust
    has_segment_[p] = true;
    next_addr_ = (next_addr_ + (uint64_t{1} << 50)) & ~((uint64_t{1} << 50) - 1);
    segment_end_[p] = next_addr_;
    next_addr_ += uint64_t{1} << 50;
  }
  int last = last_[p];
  uint64_t have = 0;
  if (last >= 0 && !blocks_[last].allocated) {
    have = blocks_[last].size;
    Erase(last);
  }
  const uint64_t map = have >= size ? 0 : (size - have + page - 1) / page * page;
  stats_.reserved_bytes += map;
  if (small) stats_.small_reserved_bytes += map;
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  if (map > 0) ++stats_.segments;
  if (have > 0) {
    blocks_[last].size += map;
    segment_end_[p] += map;
    return last;
  }
  Block b;
  b.addr = segment_end_[p];
  b.size = map;
  b.small = small;
  b.prev = last;
  segment_end_[p] += map;
  int id = NewBlock(b);
  if (last >= 0) blocks_[last].next = id;
  last_[p] = id;
  return id;
}

bool CudaCachingAllocator::ShouldSplit(const Block& b, uint64_t size) const {
  const uint64_t remaining = b.size - size;
  if (b.small || config_.expandable_segments) return remaining >= kMinBlockSize;
  return size < config_.max_split_size && remaining > kSmallSize;
}

int64_t CudaCachingAllocator::Malloc(uint64_t requested) {
  if (requested == 0) return -1;
  const uint64_t size = CudaRoundSize(requested);
  const bool small = size <= kSmallSize;
  int b = GetFreeBlock(size, small);
  if (b < 0) {
    b = config_.expandable_segments ? ExpandSegment(size, small) : AllocSegment(CudaAllocationSize(size), small);
  }
  if (ShouldSplit(blocks_[b], size)) {
    Block rest = blocks_[b];
    rest.addr += size;
    rest.size -= size;
    rest.prev = b;
    int r = NewBlock(rest);  // may reallocate blocks_: index, do not hold references
    if (blocks_[r].next >= 0) blocks_[blocks_[r].next].prev = r;
    blocks_[b].next = r;
    blocks_[b].size = size;
    const int p = blocks_[b].small ? 1 : 0;
    if (last_[p] == b) last_[p] = r;
    Insert(r);
  }
  blocks_[b].allocated = true;
  stats_.allocated_bytes += blocks_[b].size;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  return b;
}

uint64_t CudaCachingAllocator::BlockSize(int64_t handle) const {
  return handle < 0 ? 0 : blocks_[static_cast<size_t>(handle)].size;
}

void CudaCachingAllocator::Merge(int dst, int src) {
  if (src < 0 || blocks_[src].allocated) return;
  Erase(src);
  Block& d = blocks_[dst];
  const Block& s = blocks_[src];
  if (d.prev == src) {
    d.addr = s.addr;
    d.prev = s.prev;
    if (d.prev >= 0) blocks_[d.prev].next = dst;
  } else {
    d.next = s.next;
    if (d.next >= 0) blocks_[d.next].prev = dst;
  }
  d.size += s.size;
  const int p = d.small ? 1 : 0;
  if (last_[p] == src) last_[p] = dst;
  free_ids_.push_back(src);
}

void CudaCachingAllocator::Free(int64_t handle) {
  if (handle < 0) return;
  const int b = static_cast<int>(handle);
  if (!blocks_[b].allocated) return;
  blocks_[b].allocated = false;
  stats_.allocated_bytes -= blocks_[b].size;
  Merge(b, blocks_[b].prev);
  Merge(b, blocks_[b].next);
  Insert(b);
}

}  // namespace oomguard::plan

namespace oomguard::plan {

namespace {

// ReplayTrainingStep over any indexable events (stored ones are read without a virtual call).
template <typename Events>
ReplayResult Replay(const Events& events, size_t step_begin, size_t buffers, CudaAllocatorConfig config) {
  // (Kept per thread, storage and all: a fit replays a large step for every batch it asks.)
  thread_local CudaCachingAllocator a;
  thread_local std::vector<int64_t> handle;
  a.Reset(config);
  handle.assign(buffers, -1);
  auto apply = [&](const AllocationEvent& e) {
    switch (e.kind) {
      case AllocationEvent::kAlloc: handle[e.buffer] = a.Malloc(e.bytes); break;
      case AllocationEvent::kFree:
        a.Free(handle[e.buffer]);
        handle[e.buffer] = -1;
        break;
      case AllocationEvent::kTemporary: a.Free(a.Malloc(e.bytes)); break;
    }
  };
  const size_t n = events.size();
  for (size_t i = 0; i < step_begin; ++i) apply(events[i]);
  for (int step = 0; step < 2; ++step) {
    for (size_t i = step_begin; i < n; ++i) apply(events[i]);
    if (step == 0) {
      for (size_t i = step_begin; i < n; ++i) {
        const AllocationEvent e = events[i];
        if (e.kind == AllocationEvent::kAlloc && handle[e.buffer] >= 0) {
          a.Free(handle[e.buffer]);
          handle[e.buffer] = -1;
        }
      }
    }
  }
  return {a.stats().peak_allocated_bytes, a.stats().peak_reserved_bytes, a.stats().small_reserved_bytes};
}

}  // namespace

ReplayResult ReplayTrainingStep(const AllocationEvents& events, size_t step_begin, size_t buffers,
                                CudaAllocatorConfig config) {
  return Replay(events, step_begin, buffers, config);
}

ReplayResult ReplayTrainingStep(const std::vector<AllocationEvent>& events, size_t step_begin, size_t buffers,
                                CudaAllocatorConfig config) {
  return Replay(events, step_begin, buffers, config);
}

}  // namespace oomguard::plan
