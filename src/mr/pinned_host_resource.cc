#include "oomguard/mr/pinned_host_resource.h"

#include "oomguard/mr/cuda_device_resource.h"
#include "oomguard/mr/out_of_memory.h"

namespace oomguard::mr {

Result<std::unique_ptr<PinnedHostResource>> PinnedHostResource::Open(CudaDriver& driver, int ordinal) {
  auto ctx = RetainPrimaryContext(driver, ordinal, "pinned host memory (device " + std::to_string(ordinal) + ")");
  if (!ctx.ok()) return MakeError(ctx.error());
  return std::unique_ptr<PinnedHostResource>(new PinnedHostResource(driver, ctx->first, ctx->second));
}

PinnedHostResource::PinnedHostResource(CudaDriver& driver, int device, void* context)
    : driver_(driver), device_(device), context_(context) {}

PinnedHostResource::~PinnedHostResource() { driver_.PrimaryCtxRelease(device_); }

void* PinnedHostResource::do_allocate(std::size_t bytes, std::size_t, Stream) {
  driver_.CtxSetCurrent(context_);
  void* p = nullptr;
  CuResult r = driver_.MemHostAlloc(&p, bytes, kMemHostAllocPortable);
  if (r != kCudaSuccess) {
    OomReport report;
    report.resource = name();
    report.requested_bytes = bytes;
    report.upstream_error = "cuMemHostAlloc: " + driver_.ErrorName(r);
    throw OutOfMemory(std::move(report));
  }
  return p;
}

void PinnedHostResource::do_deallocate(void* p, std::size_t, std::size_t, Stream) {
  driver_.CtxSetCurrent(context_);
  CuResult r = driver_.MemFreeHost(p);
  if (r != kCudaSuccess) throw InvalidDeallocation(name() + ": cuMemFreeHost failed: " + driver_.ErrorName(r));
}

}  // namespace oomguard::mr
