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
  std::string ErrorName(CuResult result) override {
    const char* name = nullptr;
    if (get_error_name_(result, &name) == kCudaSuccess && name != nullptr) return name;
    return "CUDA error " + std::to_string(result);
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

}  // namespace oomguard::mr
