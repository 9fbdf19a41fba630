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
// built, before iterating: its resident file pages (torch's libraries, 115 MiB)
// plus its anonymous pages (116 MiB); 230.8-231.0 MiB over the streamed
// development configurations.
constexpr uint64_t kProcessBaselineBytes = 231 * kMiB;

// measured: what a forked DataLoader worker writes of its own when it only
// indexes items already in memory (the parent's pages it touches: Python
// reference counts, malloc arenas; its own Python objects): 5.0-7.0 MiB per
// worker in the preloaded development configurations.
constexpr uint64_t kWorkerPrivateBytes = 6'815'744;  // 6.5 MiB

// measured: the batch a worker assembles from items it decodes, in units of
// the batch's item bytes: the per-item tensors listed until collate stacks
// them, plus what decoding and conversion leave in the worker's heap (glibc
// keeps freed pages below the top of the heap). float32 items 1.6-2.2, uint8
// items 1.0-1.6 in the development configurations; one factor for both.
constexpr double kWorkerAssemblyStreamed = 1.6;

// measured: the same for the main process when it loads with 0 workers (it also
// keeps the previous batch's items until the loop lets go): 2.4 (float32),
// 3.2 (uint8); and 0.56 when the items are preloaded (no decoding).
constexpr double kMainAssemblyStreamed = 2.8;
constexpr double kMainAssemblyPreloaded = 0.5;

// measured: collated batches alive at once besides the W x prefetch_factor
// outstanding ones: the batch the training loop holds (still mapped shared
// memory when it comes from a worker).
constexpr int64_t kLoopHeldBatches = 1;

// measured: with 0 workers the main process holds the previous batch (the loop
// variable) while it collates the next one.
constexpr int64_t kMainProcessBatches = 2;

// measured: preloading float items converted from decoded images (uint8 ->
// float -> / 255) leaves the conversions' freed temporaries in the heap, in a
// varying amount: 0.04x to 1.0x of the preloaded set over otherwise identical
// runs (glibc's heap layout changes with Python's hash seed and ASLR). The
// plan counts the middle and reports the other half as bytes at risk.
constexpr double kPreloadRetention = 0.5;

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
