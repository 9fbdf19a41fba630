#include "oomguard/mr/cuda_device_resource.h"

#include "oomguard/mr/out_of_memory.h"

namespace oomguard::mr {

Result<std::pair<int, void*>> RetainPrimaryContext(CudaDriver& driver, int ordinal, const std::string& what) {
  auto fail = [&](const char* call, CuResult r) {
    return MakeError(what + ": " + call + " failed: " + driver.ErrorName(r));
  };
  if (CuResult r = driver.Init(0); r != kCudaSuccess) return fail("cuInit", r);
  int device = 0;
  if (CuResult r = driver.DeviceGet(&device, ordinal); r != kCudaSuccess) return fail("cuDeviceGet", r);
  void* context = nullptr;
  if (CuResult r = driver.PrimaryCtxRetain(&context, device); r != kCudaSuccess) {
    return fail("cuDevicePrimaryCtxRetain", r);
  }
  return std::pair<int, void*>(device, context);
}

Result<std::unique_ptr<CudaDeviceResource>> CudaDeviceResource::Open(CudaDriver& driver, int ordinal) {
  auto ctx = RetainPrimaryContext(driver, ordinal, "CUDA device " + std::to_string(ordinal));
  if (!ctx.ok()) return MakeError(ctx.error());
  return std::unique_ptr<CudaDeviceResource>(new CudaDeviceResource(driver, ordinal, ctx->first, ctx->second));
}

CudaDeviceResource::CudaDeviceResource(CudaDriver& driver, int ordinal, int device, void* context)
    : driver_(driver), ordinal_(ordinal), device_(device), context_(context) {
  int supported = 0;
  std::size_t granularity = 0;
  if (driver_.HasVirtualMemory() && driver_.VirtualMemorySupported(&supported, device_) == kCudaSuccess &&
      supported != 0 && driver_.MemGetAllocationGranularity(&granularity, device_) == kCudaSuccess &&
      granularity > 0) {
    // Probe the whole sequence once on one granule, with the same calls the
    // arena will make, so a driver that lists them but refuses them leaves
    // this device without virtual memory (arenas then use regions) instead
    // of failing every allocation.
    granularity_ = granularity;
    void* probe = nullptr;
    try {
      probe = reserve(granularity);
      map(probe, granularity);
      unmap(probe, granularity);
    } catch (const std::exception&) {
      granularity_ = 0;
    }
    if (probe != nullptr) driver_.MemAddressFree(reinterpret_cast<uintptr_t>(probe), granularity);
  }
}

CudaDeviceResource::~CudaDeviceResource() { driver_.PrimaryCtxRelease(device_); }

std::string CudaDeviceResource::name() const { return "CUDA device " + std::to_string(ordinal_); }

std::optional<DeviceMemory> CudaDeviceResource::device_memory() const {
  driver_.CtxSetCurrent(context_);
  std::size_t free_bytes = 0, total_bytes = 0;
  if (driver_.MemGetInfo(&free_bytes, &total_bytes) != kCudaSuccess) return std::nullopt;
  return DeviceMemory{free_bytes, total_bytes};
}

void CudaDeviceResource::throw_oom(const char* call, CuResult r, uint64_t bytes) const {
  OomReport report;
  report.resource = name();
  report.requested_bytes = bytes;
  report.upstream_error = std::string(call) + ": " + driver_.ErrorName(r);
  if (std::optional<DeviceMemory> m = device_memory()) {
    report.device_free_bytes = m->free_bytes;
    report.device_total_bytes = m->total_bytes;
  }
  throw OutOfMemory(std::move(report));
}

void* CudaDeviceResource::do_allocate(std::size_t bytes, std::size_t, Stream) {
  driver_.CtxSetCurrent(context_);
  uint64_t ptr = 0;
  if (CuResult r = driver_.MemAlloc(&ptr, bytes); r != kCudaSuccess) throw_oom("cuMemAlloc_v2", r, bytes);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
}

void* CudaDeviceResource::reserve(uint64_t bytes) {
  driver_.CtxSetCurrent(context_);
  uint64_t ptr = 0;
  if (CuResult r = driver_.MemAddressReserve(&ptr, bytes, granularity_); r != kCudaSuccess) {
    throw_oom("cuMemAddressReserve", r, bytes);
  }
  return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
}

void CudaDeviceResource::release(void* base, uint64_t bytes) {
  driver_.CtxSetCurrent(context_);
  if (CuResult r = driver_.MemAddressFree(reinterpret_cast<uintptr_t>(base), bytes); r != kCudaSuccess) {
    throw InvalidDeallocation(name() + ": cuMemAddressFree failed: " + driver_.ErrorName(r));
  }
}

void CudaDeviceResource::map(void* at, uint64_t bytes) {
  driver_.CtxSetCurrent(context_);
  const uint64_t ptr = reinterpret_cast<uintptr_t>(at);
  uint64_t handle = 0;
  if (CuResult r = driver_.MemCreate(&handle, bytes, device_); r != kCudaSuccess) throw_oom("cuMemCreate", r, bytes);
  if (CuResult r = driver_.MemMap(ptr, bytes, handle); r != kCudaSuccess) {
    driver_.MemRelease(handle);
    throw_oom("cuMemMap", r, bytes);
  }
  if (CuResult r = driver_.MemSetAccess(ptr, bytes, device_); r != kCudaSuccess) {
    driver_.MemUnmap(ptr, bytes);
    driver_.MemRelease(handle);
    throw_oom("cuMemSetAccess", r, bytes);
  }
  MutexLock lock(mu_);
  handles_[ptr] = handle;
}

void CudaDeviceResource::unmap(void* at, uint64_t bytes) {
  driver_.CtxSetCurrent(context_);
  const uint64_t ptr = reinterpret_cast<uintptr_t>(at);
  uint64_t handle = 0;
  {
    MutexLock lock(mu_);
    auto it = handles_.find(ptr);
    if (it == handles_.end()) throw InvalidDeallocation(name() + ": unmap of an address that map() did not map");
    handle = it->second;
    handles_.erase(it);
  }
  CuResult r = driver_.MemUnmap(ptr, bytes);
  CuResult released = driver_.MemRelease(handle);
  if (r != kCudaSuccess || released != kCudaSuccess) {
    throw InvalidDeallocation(name() + ": cuMemUnmap/cuMemRelease failed: " +
                              driver_.ErrorName(r != kCudaSuccess ? r : released));
  }
}

void CudaDeviceResource::do_deallocate(void* p, std::size_t, std::size_t, Stream) {
  driver_.CtxSetCurrent(context_);
  CuResult r = driver_.MemFree(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)));
  if (r != kCudaSuccess) {
    throw InvalidDeallocation(name() + ": cuMemFree_v2 failed: " + driver_.ErrorName(r));
  }
}

}  // namespace oomguard::mr
