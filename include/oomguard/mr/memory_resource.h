// MemoryResource: the one interface every oomguard allocator implements.
//
// allocate()/deallocate() are non-virtual: they check arguments in one place
// (alignment a power of two; zero bytes gives nullptr and deallocating nullptr
// is a no-op) and call the private virtual do_allocate()/do_deallocate().
// A resource that cannot satisfy a request throws oomguard::OutOfMemory
// (out_of_memory.h), never returns nullptr for a non-zero size.
//
// Stream: device resources take the CUDA stream the memory is used on
// (an opaque handle; nullptr is the default stream). Host resources ignore it.
//
// Ownership: a resource owns what it obtained from its upstream; an adaptor
// holds a reference to its upstream, which must outlive it.
// Thread safety: stated by each resource (all oomguard resources are safe to
// call from many threads unless their header says otherwise).
// REQUIRES: deallocate() gets the pointer, size and alignment of a live
// allocation from the same resource.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace oomguard::mr {

// An opaque CUDA stream handle (cudaStream_t / CUstream); nullptr = default stream.
using Stream = void*;

// Device alignment: cudaMalloc returns 256-byte aligned memory; so do the arenas.
inline constexpr std::size_t kDefaultAlignment = 256;

// What a device says about itself (cuMemGetInfo): bytes free and in total.
struct DeviceMemory {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};

// Thrown by deallocate() for a pointer the resource does not own, a second
// free of the same pointer, or a size that does not match the allocation.
// Pools always detect these; plain upstreams only in debug builds.
class InvalidDeallocation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Virtual memory management of a device (CUDA's cuMemAddressReserve,
// cuMemCreate + cuMemMap, cuMemUnmap): reserve an address range once, then back
// parts of it with physical memory on demand. An arena over an upstream that
// offers it grows one contiguous range instead of adding separate regions, so
// blocks never straddle a region boundary and freed ends go back to the device.
// Sizes and addresses passed to map/unmap are multiples of granularity().
// Thread safety: as the resource that offers it.
class VirtualMemory {
 public:
  virtual ~VirtualMemory() = default;
  virtual uint64_t granularity() const = 0;
  // An address range of `bytes` with nothing behind it. Throws OutOfMemory.
  virtual void* reserve(uint64_t bytes) = 0;
  // Returns a range from reserve(). REQUIRES: nothing in it is mapped.
  virtual void release(void* base, uint64_t bytes) = 0;
  // Backs [at, at + bytes) with memory. Throws OutOfMemory (device full).
  virtual void map(void* at, uint64_t bytes) = 0;
  // Takes back exactly what one map() call with the same arguments backed.
  virtual void unmap(void* at, uint64_t bytes) = 0;
};

class MemoryResource {
 public:
  virtual ~MemoryResource() = default;

  // Returns `bytes` bytes aligned to `alignment`, or nullptr when bytes == 0.
  // Throws OutOfMemory on failure, std::invalid_argument for an alignment that
  // is not a power of two or is larger than max_alignment().
  void* allocate(std::size_t bytes, std::size_t alignment = kDefaultAlignment,
                 Stream stream = nullptr) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > max_alignment()) {
      throw std::invalid_argument("alignment " + std::to_string(alignment) +
                                  " is not a power of two up to " +
                                  std::to_string(max_alignment()));
    }
    if (bytes == 0) return nullptr;
    return do_allocate(bytes, alignment, stream);
  }

  void deallocate(void* p, std::size_t bytes, std::size_t alignment = kDefaultAlignment,
                  Stream stream = nullptr) {
    if (p == nullptr) return;
    do_deallocate(p, bytes, alignment, stream);
  }

  // A short name for reports: "arena over simulated device (8.00 GiB)".
  virtual std::string name() const = 0;

  // The largest alignment allocate() accepts.
  virtual std::size_t max_alignment() const { return kDefaultAlignment; }

  // Free/total memory of the device behind this resource, if it is a device.
  virtual std::optional<DeviceMemory> device_memory() const { return std::nullopt; }

  // The device's virtual memory management, or nullptr when it has none.
  virtual VirtualMemory* virtual_memory() { return nullptr; }

 private:
  virtual void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) = 0;
  virtual void do_deallocate(void* p, std::size_t bytes, std::size_t alignment,
                             Stream stream) = 0;
};

}  // namespace oomguard::mr
