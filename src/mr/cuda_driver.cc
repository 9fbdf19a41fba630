#include "oomguard/mr/cuda_driver.h"

#include <dlfcn.h>

namespace oomguard::mr {
namespace {

using CuInit = CuResult (*)(unsigned);
using CuDeviceGet = CuResult (*)(int*, int);
using CuPrimaryCtxRetain = CuResult (*)(void**, int);
using CuPrimaryCtxRelease = CuResult (*)(int);
using CuCtxSetCurrent = CuResult (*)(void*);
using CuMemAlloc = CuResult (*)(uint64_t*, std::size_t);
using CuMemFree = CuResult (*)(uint64_t);
using CuMemGetInfo = CuResult (*)(std::size_t*, std::size_t*);
using CuMemHostAlloc = CuResult (*)(void**, std::size_t, unsigned);
using CuMemFreeHost = CuResult (*)(void*);
using CuGetErrorName = CuResult (*)(CuResult, const char**);
using CuDriverGetVersion = CuResult (*)(int*);
using CuDeviceGetCount = CuResult (*)(int*);
using CuDeviceGetPCIBusId = CuResult (*)(char*, int, int);

// The virtual memory structs, laid out as in cuda.h (CUDA 10.2 to 12.x).
struct CuMemLocation {
  int type;  // CU_MEM_LOCATION_TYPE_DEVICE = 1
  int id;
};
struct CuMemAllocationProp {
  int type;                  // CU_MEM_ALLOCATION_TYPE_PINNED = 1
  int requested_handle_types;  // CU_MEM_HANDLE_TYPE_NONE = 0
  CuMemLocation location;
  void* win32_handle_meta_data;
  struct {
    unsigned char compression_type;
    unsigned char gpu_direct_rdma_capable;
    unsigned short usage;
    unsigned char reserved[4];
  } alloc_flags;
};
static_assert(sizeof(CuMemAllocationProp) == 32, "CUmemAllocationProp is 32 bytes in cuda.h");
struct CuMemAccessDesc {
  CuMemLocation location;
  int flags;  // CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
};
constexpr int kAttributeVirtualMemorySupported = 102;  // CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED

CuMemAllocationProp DeviceProp(int device) {
  CuMemAllocationProp prop{};
  prop.type = 1;
  prop.location = {1, device};
  return prop;
}

using CuDeviceGetAttribute = CuResult (*)(int*, int, int);
using CuMemGetAllocationGranularity = CuResult (*)(std::size_t*, const CuMemAllocationProp*, int);
using CuMemAddressReserve = CuResult (*)(uint64_t*, std::size_t, std::size_t, uint64_t, unsigned long long);
using CuMemAddressFree = CuResult (*)(uint64_t, std::size_t);
using CuMemCreate = CuResult (*)(uint64_t*, std::size_t, const CuMemAllocationProp*, unsigned long long);
using CuMemRelease = CuResult (*)(uint64_t);
using CuMemMap = CuResult (*)(uint64_t, std::size_t, std::size_t, uint64_t, unsigned long long);
using CuMemUnmap = CuResult (*)(uint64_t, std::size_t);
using CuMemSetAccess = CuResult (*)(uint64_t, std::size_t, const CuMemAccessDesc*, std::size_t);

class DlopenCudaDriver final : public CudaDriver {
 public:
  explicit DlopenCudaDriver(void* handle) : handle_(handle) {}
  ~DlopenCudaDriver() override { dlclose(handle_); }

  // Returns the name of the first missing symbol, or empty.
  std::string Resolve() {
    std::string missing;
    auto get = [&](auto& fn, const char* name, const char* alt = nullptr) {
      void* sym = dlsym(handle_, name);
      if (sym == nullptr && alt != nullptr) sym = dlsym(handle_, alt);
      if (sym == nullptr && missing.empty()) missing = name;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
    };
    get(init_, "cuInit");
    get(device_get_, "cuDeviceGet");
    get(ctx_retain_, "cuDevicePrimaryCtxRetain");
    get(ctx_release_, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
    get(ctx_set_current_, "cuCtxSetCurrent");
    get(mem_alloc_, "cuMemAlloc_v2");
    get(mem_free_, "cuMemFree_v2");
    get(mem_get_info_, "cuMemGetInfo_v2");
    get(mem_host_alloc_, "cuMemHostAlloc");
    get(mem_free_host_, "cuMemFreeHost");
    get(get_error_name_, "cuGetErrorName");
    // Optional: without all of them the device has no virtual memory.
    auto optional = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle_, name));
    };
    optional(get_attribute_, "cuDeviceGetAttribute");
    optional(granularity_, "cuMemGetAllocationGranularity");
    optional(address_reserve_, "cuMemAddressReserve");
    optional(address_free_, "cuMemAddressFree");
    optional(create_, "cuMemCreate");
    optional(release_, "cuMemRelease");
    optional(map_, "cuMemMap");
    optional(unmap_, "cuMemUnmap");
    optional(set_access_, "cuMemSetAccess");
    optional(driver_version_, "cuDriverGetVersion");
    optional(device_count_, "cuDeviceGetCount");
    optional(pci_bus_id_, "cuDeviceGetPCIBusId");
    return missing;
  }

  CuResult Init(unsigned flags) override { return init_(flags); }
  CuResult DeviceGet(int* device, int ordinal) override { return device_get_(device, ordinal); }
  CuResult PrimaryCtxRetain(void** context, int device) override { return ctx_retain_(context, device); }
  CuResult PrimaryCtxRelease(int device) override { return ctx_release_(device); }
  CuResult CtxSetCurrent(void* context) override { return ctx_set_current_(context); }
  CuResult MemAlloc(uint64_t* ptr, std::size_t bytes) override { return mem_alloc_(ptr, bytes); }
  CuResult MemFree(uint64_t ptr) override { return mem_free_(ptr); }
  CuResult MemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) override {
    return mem_get_info_(free_bytes, total_bytes);
  }
  CuResult MemHostAlloc(void** ptr, std::size_t bytes, unsigned flags) override {
    return mem_host_alloc_(ptr, bytes, flags);
  }
  CuResult MemFreeHost(void* ptr) override { return mem_free_host_(ptr); }

  bool HasVirtualMemory() const override {
    return get_attribute_ && granularity_ && address_reserve_ && address_free_ && create_ && release_ && map_ &&
           unmap_ && set_access_;
  }
  CuResult VirtualMemorySupported(int* supported, int device) override {
    return get_attribute_(supported, kAttributeVirtualMemorySupported, device);
  }
  CuResult MemGetAllocationGranularity(std::size_t* granularity, int device) override {
    CuMemAllocationProp prop = DeviceProp(device);
    return granularity_(granularity, &prop, /*CU_MEM_ALLOC_GRANULARITY_MINIMUM*/ 0);
  }
  CuResult MemAddressReserve(uint64_t* ptr, std::size_t bytes, std::size_t alignment) override {
    return address_reserve_(ptr, bytes, alignment, 0, 0);
  }
  CuResult MemAddressFree(uint64_t ptr, std::size_t bytes) override { return address_free_(ptr, bytes); }
  CuResult MemCreate(uint64_t* handle, std::size_t bytes, int device) override {
    CuMemAllocationProp prop = DeviceProp(device);
    return create_(handle, bytes, &prop, 0);
  }
  CuResult MemRelease(uint64_t handle) override { return release_(handle); }
  CuResult MemMap(uint64_t ptr, std::size_t bytes, uint64_t handle) override { return map_(ptr, bytes, 0, handle, 0); }
  CuResult MemUnmap(uint64_t ptr, std::size_t bytes) override { return unmap_(ptr, bytes); }
  CuResult MemSetAccess(uint64_t ptr, std::size_t bytes, int device) override {
    CuMemAccessDesc desc{{1, device}, 3};
    return set_access_(ptr, bytes, &desc, 1);
  }
  std::string ErrorName(CuResult result) override {
    const char* name = nullptr;
    if (get_error_name_(result, &name) == kCudaSuccess && name != nullptr) return name;
    return "CUDA error " + std::to_string(result);
  }
  CuResult DriverGetVersion(int* version) override {
    return driver_version_ ? driver_version_(version) : kCudaErrorNotSupported;
  }
  CuResult DeviceGetCount(int* count) override { return device_count_ ? device_count_(count) : kCudaErrorNotSupported; }
  CuResult DeviceGetPCIBusId(char* bus, int len, int device) override {
    return pci_bus_id_ ? pci_bus_id_(bus, len, device) : kCudaErrorNotSupported;
  }

 private:
  void* handle_;
  CuInit init_ = nullptr;
  CuDeviceGet device_get_ = nullptr;
  CuPrimaryCtxRetain ctx_retain_ = nullptr;
  CuPrimaryCtxRelease ctx_release_ = nullptr;
  CuCtxSetCurrent ctx_set_current_ = nullptr;
  CuMemAlloc mem_alloc_ = nullptr;
  CuMemFree mem_free_ = nullptr;
  CuMemGetInfo mem_get_info_ = nullptr;
  CuMemHostAlloc mem_host_alloc_ = nullptr;
  CuMemFreeHost mem_free_host_ = nullptr;
  CuGetErrorName get_error_name_ = nullptr;
  CuDeviceGetAttribute get_attribute_ = nullptr;
  CuMemGetAllocationGranularity granularity_ = nullptr;
  CuMemAddressReserve address_reserve_ = nullptr;
  CuMemAddressFree address_free_ = nullptr;
  CuMemCreate create_ = nullptr;
  CuMemRelease release_ = nullptr;
  CuMemMap map_ = nullptr;
  CuMemUnmap unmap_ = nullptr;
  CuMemSetAccess set_access_ = nullptr;
  CuDriverGetVersion driver_version_ = nullptr;
  CuDeviceGetCount device_count_ = nullptr;
  CuDeviceGetPCIBusId pci_bus_id_ = nullptr;
};

}  // namespace

Result<std::unique_ptr<CudaDriver>> LoadCudaDriver(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return MakeError("cannot load the CUDA driver (" + library + "): " + (why ? why : "unknown error") +
                     "; is the NVIDIA driver installed?");
  }
  auto driver = std::make_unique<DlopenCudaDriver>(handle);
  std::string missing = driver->Resolve();
  if (!missing.empty()) {
    return MakeError(library + " is not a usable CUDA driver: it has no symbol " + missing);
  }
  return std::unique_ptr<CudaDriver>(std::move(driver));
}

Result<CudaDriver*> SharedCudaDriver() {
  // Loaded on first use (a C++ static: once, thread-safe) and deliberately
  // never destroyed: unloading libcuda after cuInit is unsafe.
  static Result<std::unique_ptr<CudaDriver>>* const loaded =
      new Result<std::unique_ptr<CudaDriver>>(LoadCudaDriver());
  if (!*loaded) return MakeError(loaded->error());
  return loaded->value().get();
}

}  // namespace oomguard::mr
