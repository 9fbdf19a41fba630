// CudaDriver: the few CUDA driver API calls oomguard's device and pinned
// resources make, behind an interface (the boundary with the GPU).
//
// LoadCudaDriver() is the real implementation: it dlopen()s libcuda.so.1 at
// run time, so oomguard has no link-time CUDA dependency and runs (without a
// GPU) where no driver is installed. Tests use a fake driver instead.
//
// The types mirror cuda.h (CUresult is an int, CUdeviceptr a 64-bit integer,
// CUcontext an opaque pointer); cuda.h itself is not needed.
// Thread safety: the driver API is thread safe; so is the loaded driver.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "oomguard/result.h"

namespace oomguard::mr {

using CuResult = int;
inline constexpr CuResult kCudaSuccess = 0;
inline constexpr CuResult kCudaErrorOutOfMemory = 2;  // CUDA_ERROR_OUT_OF_MEMORY
inline constexpr unsigned kMemHostAllocPortable = 0x01;  // CU_MEMHOSTALLOC_PORTABLE
inline constexpr CuResult kCudaErrorNotSupported = 801;  // CUDA_ERROR_NOT_SUPPORTED

class CudaDriver {
 public:
  virtual ~CudaDriver() = default;
  virtual CuResult Init(unsigned flags) = 0;
  virtual CuResult DeviceGet(int* device, int ordinal) = 0;
  virtual CuResult PrimaryCtxRetain(void** context, int device) = 0;
  virtual CuResult PrimaryCtxRelease(int device) = 0;
  virtual CuResult CtxSetCurrent(void* context) = 0;
  virtual CuResult MemAlloc(uint64_t* device_ptr, std::size_t bytes) = 0;
  virtual CuResult MemFree(uint64_t device_ptr) = 0;
  virtual CuResult MemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) = 0;
  virtual CuResult MemHostAlloc(void** ptr, std::size_t bytes, unsigned flags) = 0;
  virtual CuResult MemFreeHost(void* ptr) = 0;

  // Virtual memory management (cuMemAddressReserve, cuMemCreate, cuMemMap...).
  // False when the library lacks these calls (drivers before CUDA 10.2); the
  // calls below must not be made then.
  virtual bool HasVirtualMemory() const = 0;
  // cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED): 1 or 0.
  virtual CuResult VirtualMemorySupported(int* supported, int device) = 0;
  // The minimum granularity of device memory on `device` (usually 2 MiB).
  virtual CuResult MemGetAllocationGranularity(std::size_t* granularity, int device) = 0;
  virtual CuResult MemAddressReserve(uint64_t* ptr, std::size_t bytes, std::size_t alignment) = 0;
  virtual CuResult MemAddressFree(uint64_t ptr, std::size_t bytes) = 0;
  // Physical memory of `bytes` on `device` (CU_MEM_ALLOCATION_TYPE_PINNED).
  virtual CuResult MemCreate(uint64_t* handle, std::size_t bytes, int device) = 0;
  virtual CuResult MemRelease(uint64_t handle) = 0;
  virtual CuResult MemMap(uint64_t ptr, std::size_t bytes, uint64_t handle) = 0;
  virtual CuResult MemUnmap(uint64_t ptr, std::size_t bytes) = 0;
  // Makes [ptr, ptr + bytes) readable and writable from `device`.
  virtual CuResult MemSetAccess(uint64_t ptr, std::size_t bytes, int device) = 0;
  // "CUDA_ERROR_OUT_OF_MEMORY" (cuGetErrorName), or "CUDA error N".
  virtual std::string ErrorName(CuResult result) = 0;

  // What doctor asks of the driver (its version, the devices in CUDA's
  // order). kCudaErrorNotSupported from a driver that lacks them.
  virtual CuResult DriverGetVersion(int* version) {
    (void)version;
    return kCudaErrorNotSupported;
  }
  virtual CuResult DeviceGetCount(int* count) {
    (void)count;
    return kCudaErrorNotSupported;
  }
  // The PCI bus id ("0000:3b:00.0") of `device`, NUL-terminated in bus[0..len).
  virtual CuResult DeviceGetPCIBusId(char* bus, int len, int device) {
    (void)bus, (void)len, (void)device;
    return kCudaErrorNotSupported;
  }
};

// Loads the driver library (default libcuda.so.1) and resolves its symbols.
// Errors, word for word:
//   "cannot load the CUDA driver (<library>): <dlerror text>; is the NVIDIA driver installed?"
//   "<library> is not a usable CUDA driver: it has no symbol <name>"
Result<std::unique_ptr<CudaDriver>> LoadCudaDriver(const std::string& library = "libcuda.so.1");

// libcuda.so.1, loaded once for the whole process and never unloaded (the
// driver does not support being unloaded after cuInit): the guard's CUDA
// resource, doctor's GPU list and doctor's system view all see this one driver,
// or the same error. Thread-safe.
Result<CudaDriver*> SharedCudaDriver();

}  // namespace oomguard::mr
