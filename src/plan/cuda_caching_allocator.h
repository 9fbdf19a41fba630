// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp,
// the native backend of torch 1.13 and 2.x) for one device and one stream: the
// planner replays a training step's allocations and frees through it to
// predict torch.cuda.max_memory_allocated() (block sizes, including unsplit
// remainders) and torch.cuda.max_memory_reserved() (segments).
//
// The rules, with PyTorch's names:
//  - every request is rounded up to kMinBlockSize (512 bytes);
//  - requests of at most kSmallSize (1 MiB) come from the small pool, whose
//    segments are kSmallBuffer (2 MiB); the rest from the large pool, whose new
//    segments are kLargeBuffer (20 MiB) for requests below kMinLargeAlloc
//    (10 MiB) and the request rounded up to kRoundLarge (2 MiB) above;
//  - a request takes the smallest cached free block that holds it (lowest
//    address among equals); with max_split_size set, a request below it never
//    takes a block of max_split_size or more, and one at or above it never a
//    block kLargeBuffer larger than itself;
//  - the block is split when the remainder is at least kMinBlockSize (small
//    pool, or expandable segments) or, in the large pool, when the request is
//    below max_split_size and the remainder is above kSmallSize; otherwise the
//    whole block is allocated (and counted as allocated);
//  - a freed block merges with free address neighbours of its segment;
//    segments are never returned (no empty_cache(), no allocation failures: the
//    device is assumed large enough, so the peaks are what the step needs);
//  - expandable_segments:True: one segment per pool that grows at its end in
//    pages of kSmallBuffer (small pool) or kLargeBuffer (large pool) when no
//    free block holds a request; a free block at the end is extended.
//
// Not thread-safe; one instance per simulated step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace oomguard::plan {

inline constexpr uint64_t kMinBlockSize = 512;          // all sizes are rounded to at least 512 bytes
inline constexpr uint64_t kSmallSize = 1048576;         // largest "small" allocation is 1 MiB
inline constexpr uint64_t kSmallBuffer = 2097152;       // "small" allocations are packed in 2 MiB blocks
inline constexpr uint64_t kLargeBuffer = 20971520;      // "large" allocations may be packed in 20 MiB blocks
inline constexpr uint64_t kMinLargeAlloc = 10485760;    // allocations between 1 and 10 MiB may use kLargeBuffer
inline constexpr uint64_t kRoundLarge = 2097152;        // round up large allocations to 2 MiB

struct CudaAllocatorConfig {
  // PYTORCH_CUDA_ALLOC_CONF max_split_size_mb, in bytes; unlimited by default.
  uint64_t max_split_size = std::numeric_limits<uint64_t>::max();
  bool expandable_segments = false;  // PYTORCH_CUDA_ALLOC_CONF expandable_segments:True (torch >= 2.1)
};

struct CudaAllocatorStats {
  uint64_t allocated_bytes = 0;  // sum of allocated block sizes
  uint64_t peak_allocated_bytes = 0;
  uint64_t reserved_bytes = 0;   // sum of segment sizes (mapped bytes with expandable segments)
  uint64_t peak_reserved_bytes = 0;
  uint64_t segments = 0;         // cudaMalloc calls (expandable: page maps)
  uint64_t small_reserved_bytes = 0;  // of reserved_bytes, the small pool's
};

// round_size(): the request rounded up to kMinBlockSize (0 stays 0).
uint64_t CudaRoundSize(uint64_t requested);
// get_allocation_size(): the size of a new segment for a rounded request.
uint64_t CudaAllocationSize(uint64_t rounded);

class CudaCachingAllocator {
 public:
  explicit CudaCachingAllocator(CudaAllocatorConfig config = {});

  // Forgets every block and segment, as a new allocator with `config` would start, keeping the
  // storage it grew (a search replays a step for each batch it asks).
  void Reset(CudaAllocatorConfig config);

  // Allocates `requested` bytes; returns a handle for Free(). A request of 0
  // bytes allocates nothing (PyTorch returns a null pointer) and returns -1.
  int64_t Malloc(uint64_t requested);
  // Frees a handle from Malloc (-1 is ignored).
  void Free(int64_t handle);
  // The size of the block a live handle holds (what allocated_bytes counts).
  uint64_t BlockSize(int64_t handle) const;

  const CudaAllocatorStats& stats() const { return stats_; }

 private:
  // A pool: the free blocks by size, and per size a min-heap of (address,
  // block) — best fit, lowest address first. A block leaves its heap lazily:
  // Erase only marks it, and stale entries are dropped when they reach the
  // top or when they outnumber the live ones. (A step frees and inserts blocks
  // hundreds of thousands of times; a tree of (size, address) nodes spent
  // most of a replay allocating and rebalancing.)
  struct HeapEntry {
    uint64_t addr;
    int block;
    uint32_t stamp;  // the block's stamp when it was inserted
    bool operator>(const HeapEntry& o) const { return addr > o.addr; }
  };
  struct Bucket {
    std::vector<HeapEntry> heap;  // std::push_heap with greater: lowest address on top
    int live = 0;                 // entries whose block is still pooled with that stamp
  };
  using Pool = std::pmr::map<uint64_t, Bucket>;  // by block size; no bucket without a live entry
  struct Block {
    uint64_t addr = 0;
    uint64_t size = 0;
    bool small = false;
    bool allocated = false;
    bool pooled = false;  // free and in its pool
    uint32_t stamp = 0;   // set by Insert; identifies the block's current heap entry
    int prev = -1, next = -1;  // address neighbours within the segment
    Pool::iterator bucket{};   // set by Insert: the bucket of its size while pooled (it has a live entry then)
  };

  int NewBlock(const Block& b);
  Pool& PoolOf(bool small) { return small ? small_pool_ : large_pool_; }
  void Insert(int b);
  void Erase(int b);
  bool Live(const HeapEntry& e) const { return blocks_[e.block].pooled && blocks_[e.block].stamp == e.stamp; }
  // The bucket's lowest-address live entry, after dropping stale ones above it.
  const HeapEntry& Top(Bucket& bucket);
  int GetFreeBlock(uint64_t size, bool small);
  int AllocSegment(uint64_t size, bool small);
  int ExpandSegment(uint64_t size, bool small);
  bool IsExpandableTail(int b) const;
  bool ShouldSplit(const Block& b, uint64_t size) const;
  void Merge(int dst, int src);

  CudaAllocatorConfig config_;
  CudaAllocatorStats stats_;
  std::vector<Block> blocks_;
  std::vector<int> free_ids_;
  uint32_t next_stamp_ = 0;
  std::vector<std::vector<HeapEntry>> spare_heaps_;  // storage of buckets that emptied
  // The pools' tree nodes: one size, recycled through a free list (a replay creates and drops a
  // bucket for most of its allocations and frees; a general pool allocator was a fifth of a replay).
  class NodeRecycler final : public std::pmr::memory_resource {
   private:
    void* do_allocate(size_t bytes, size_t align) override;
    void do_deallocate(void* p, size_t bytes, size_t align) override;
    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
    std::pmr::monotonic_buffer_resource upstream_;
    std::vector<void*> free_;  // nodes of size_ bytes and align_ alignment
    size_t size_ = 0, align_ = 0;
  };
  NodeRecycler nodes_;
  Pool small_pool_{&nodes_}, large_pool_{&nodes_};
  uint64_t next_addr_ = 0;
  // Expandable segments, per pool (0 large, 1 small): the last block, and whether the segment exists.
  int last_[2] = {-1, -1};
  bool has_segment_[2] = {false, false};
  uint64_t segment_end_[2] = {0, 0};  // the end of what is mapped
};

}  // namespace oomguard::plan

namespace oomguard::plan {

// One event of a simulated step, in program order: a tensor's allocation or
// release (by the simulator's buffer id), or a temporary that is allocated and
// released at once (scratch of one operator).
struct AllocationEvent {
  enum Kind : uint8_t { kAlloc, kFree, kTemporary } kind = kAlloc;
  int buffer = -1;
  uint64_t bytes = 0;
};

struct ReplayResult {
  uint64_t peak_allocated_bytes = 0;  // torch.cuda.max_memory_allocated()
  uint64_t peak_reserved_bytes = 0;   // torch.cuda.max_memory_reserved()
  // Of peak_reserved_bytes, the small pool's segments. (Segments are never returned, so the peak is
  // the reserved bytes at the end; the two pools share no block, so each pool's part depends on its
  // own requests alone, in their order.)
  uint64_t small_reserved_bytes = 0;
};

// A step's events by index, for a caller that computes them rather than stores them. (A recording's
// replay writes its events at the batch asked into reused storage instead: the stored overload reads
// them without a virtual call per event.)
class AllocationEvents {
 public:
  virtual ~AllocationEvents() = default;
  virtual size_t size() const = 0;
  virtual AllocationEvent operator[](size_t i) const = 0;
};

// Replays events[0, step_begin) once (parameters, optimizer state: what lives
// across steps), then events[step_begin, end) twice: a warm-up step and the
// steady-state step that finds the first one's segments cached. What the first
// step leaves allocated (gradients, the loss) is freed before the second, as
// zero_grad(set_to_none=True) and rebinding the loss do.
// REQUIRES: buffer ids are below `buffers`; step_begin <= events.size().
ReplayResult ReplayTrainingStep(const std::vector<AllocationEvent>& events, size_t step_begin, size_t buffers,
                                CudaAllocatorConfig config = {});
ReplayResult ReplayTrainingStep(const AllocationEvents& events, size_t step_begin, size_t buffers,
                                CudaAllocatorConfig config = {});

}  // namespace oomguard::plan
