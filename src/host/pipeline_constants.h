// Every constant of the host model, with where it comes from. "measured":
// tools/validate_host.py on this machine (Debian python3-torch 1.13, CPU,
// Python 3.11, glibc malloc), development configurations only (never the
// held-out ones); "documented": read from PyTorch's source or public reports,
// not measurable here (no GPU). docs/host.md explains each.
#pragma once

#include <cstdint>

namespace oomguard::host::constants {

constexpr uint64_t kMiB = 1ull << 20;

// measured: a python3 process with torch, numpy and PIL imported and a Dataset
// built, before iterating: its resident file pages (torch's libraries) plus its
// anonymous pages.
constexpr uint64_t kProcessBaselineBytes = 230 * kMiB;

// measured: what a forked DataLoader worker adds of its own, apart from the
// batch it assembles: the parent's pages it writes (Python reference counts,
// the allocator's arenas) and its Python objects.
constexpr uint64_t kWorkerPrivateBytes = 12 * kMiB;

// measured: a worker (or the main process, with 0 workers) holds the items of
// the batch it assembles (a list of per-item tensors until collate stacks
// them) and keeps the high-water of that work: glibc returns freed heap pages
// only from the top. In items of `item_bytes`, on top of the batch's items.
constexpr double kAssemblyScratchItems = 2.0;

// measured: collated batches alive at once besides the W x prefetch_factor
// outstanding ones: the batch the training loop holds (still mapped shared
// memory when it comes from a worker).
constexpr int64_t kLoopHeldBatches = 1;

// measured: with 0 workers the main process holds the previous batch (the loop
// variable) while it collates the next one.
constexpr int64_t kMainProcessBatches = 2;

// documented: a collated batch carries one int64 label per item
// (default_collate turns Python ints into an int64 tensor).
constexpr uint64_t kLabelBytesPerItem = 8;

// documented (estimate, not measured here: no GPU): host memory of a process
// once CUDA is initialised by PyTorch (driver and runtime state, the resident
// part of libtorch_cuda, cuBLAS and cuDNN). Public reports put it between 1
// and 3 GiB depending on versions and lazy loading; the low end is used.
constexpr uint64_t kCudaRuntimeHostBytes = 1024 * kMiB;

// documented: PyTorch's CachingHostAllocator (ATen/core/CachingHostAllocator.h)
// rounds every pinned block up to a power of two and keeps freed blocks cached
// until torch.cuda.empty_cache()/host cache is emptied; the pin-memory thread
// pins each tensor of a batch separately. Pinned batches alive at once: the
// outstanding ones, the loop's, and the one being copied.
constexpr int64_t kPinnedExtraBatches = 2;

// documented: oomguard's PinnedHostPool rounds to 256 bytes, never to a power of two.
constexpr uint64_t kPinnedPoolAlignment = 256;

// Bounds on input: an item above 1 TiB, or more than 2^31 of anything, is a typo.
constexpr uint64_t kMaxItemBytes = 1ull << 40;
constexpr int64_t kMaxCount = int64_t{1} << 31;

}  // namespace oomguard::host::constants
