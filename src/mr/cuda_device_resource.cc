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
    : driver_(driver), ordinal_(ordinal), device_(device), context_(context) {}

CudaDeviceResource::~CudaDeviceResource() { driver_.PrimaryCtxRelease(device_); }

std::string CudaDeviceResource::name() const { return "CUDA device " + std::to_string(ordinal_); }

std::optional<DeviceMemory> CudaDeviceResource::device_memory() const {
  driver_.CtxSetCurrent(context_);
  std::size_t free_bytes = 0, total_bytes = 0;
  if (driver_.MemGetInfo(&free_bytes, &total_bytes) != kCudaSuccess) return std::nullopt;
  return DeviceMemory{free_bytes, total_bytes};
}

void* CudaDeviceResource::do_allocate(std::size_t bytes, std::size_t, Stream) {
  driver_.CtxSetCurrent(context_);
  uint64_t ptr = 0;
  CuResult r = driver_.MemAlloc(&ptr, bytes);
  if (r != kCudaSuccess) {
    OomReport report;
    report.resource = name();
    report.requested_bytes = bytes;
    report.upstream_error = "cuMemAlloc_v2: " + driver_.ErrorName(r);
    if (std::optional<DeviceMemory> m = device_memory()) {
      report.device_free_bytes = m->free_bytes;
      report.device_total_bytes = m->total_bytes;
    }
    throw OutOfMemory(std::move(report));
  }
  return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
}

void CudaDeviceResource::do_deallocate(void* p, std::size_t, std::size_t, Stream) {
  driver_.CtxSetCurrent(context_);
  CuResult r = driver_.MemFree(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)));
  if (r != kCudaSuccess) {
    throw InvalidDeallocation(name() + ": cuMemFree_v2 failed: " + driver_.ErrorName(r));
  }
}

}  // namespace oomguard::mr
