#include "oomguard/mr/cuda_driver.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "oomguard/mr/arena_resource.h"
#include "oomguard/mr/cuda_device_resource.h"
#include "oomguard/mr/pinned_host_resource.h"

namespace oomguard::mr {
namespace {

TEST(LoadCudaDriver, SaysClearlyWhenThereIsNoDriver) {
  Result<std::unique_ptr<CudaDriver>> d = LoadCudaDriver("liboomguard-no-such-driver.so.1");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(),
            "cannot load the CUDA driver (liboomguard-no-such-driver.so.1): liboomguard-no-such-driver.so.1: "
            "cannot open shared object file: No such file or directory; is the NVIDIA driver installed?");
}

TEST(LoadCudaDriver, TheRealDriverIsAbsentOnThisMachineOrLoads) {
  // On a machine without the NVIDIA driver this is the message users see; with one, it loads.
  Result<std::unique_ptr<CudaDriver>> d = LoadCudaDriver();
  if (!d.ok()) {
    EXPECT_EQ(d.error().rfind("cannot load the CUDA driver (libcuda.so.1): ", 0), 0u) << d.error();
  }
}

TEST(LoadCudaDriver, RejectsALibraryThatIsNotADriver) {
  Result<std::unique_ptr<CudaDriver>> d = LoadCudaDriver("libm.so.6");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(), "libm.so.6 is not a usable CUDA driver: it has no symbol cuInit");
}

TEST(CudaDeviceResource, OutOfMemoryCarriesTheDriverErrorAndDeviceNumbers) {
  std::unique_ptr<CudaDriver> driver = LoadCudaDriver(OOMGUARD_FAKE_LIBCUDA).value();
  EXPECT_EQ(driver->ErrorName(2), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(driver->ErrorName(999), "CUDA error 999");
  auto device = CudaDeviceResource::Open(*driver, 0).value();
  EXPECT_EQ(device->device_memory()->total_bytes, 1ull << 30);  // the stand-in's capacity
  try {
    device->allocate(2ull << 30);
    FAIL();
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.report().upstream_error, "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY");
    EXPECT_EQ(e.report().device_total_bytes, 1ull << 30);
    EXPECT_EQ(e.report().resource, "CUDA device 0");
  }
}

TEST(CudaDeviceResource, OpenNamesTheFailingCall) {
  std::unique_ptr<CudaDriver> driver = LoadCudaDriver(OOMGUARD_FAKE_LIBCUDA).value();
  auto r = CudaDeviceResource::Open(*driver, 3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "CUDA device 3: cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE");
}

TEST(CudaDeviceResource, ArenaWithAFractionOfTheDriversTotal) {
  std::unique_ptr<CudaDriver> driver = LoadCudaDriver(OOMGUARD_FAKE_LIBCUDA).value();
  auto device = CudaDeviceResource::Open(*driver, 0).value();
  ArenaResource arena(*device, ArenaOptions{.limit_fraction = 0.25});
  EXPECT_EQ(arena.limit_bytes(), 256ull << 20);
  void* p = arena.allocate(100 << 20);
  EXPECT_EQ(device->device_memory()->free_bytes, (1ull << 30) - arena.stats().reserved_bytes);
  arena.deallocate(p, 100 << 20);
  arena.release_unused();
  EXPECT_EQ(device->device_memory()->free_bytes, 1ull << 30);
}

// Sets an environment variable for one scope (the stand-in driver reads it per call).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(CudaDeviceResource, ArenaGrowsByMappingPagesThroughTheDriversVirtualMemory) {
  std::unique_ptr<CudaDriver> driver = LoadCudaDriver(OOMGUARD_FAKE_LIBCUDA).value();
  ASSERT_TRUE(driver->HasVirtualMemory());
  auto device = CudaDeviceResource::Open(*driver, 0).value();
  ASSERT_NE(device->virtual_memory(), nullptr);
  EXPECT_EQ(device->virtual_memory()->granularity(), 2ull << 20);
  {
    ArenaResource arena(*device);
    EXPECT_TRUE(arena.stats().expandable);
    void* a = arena.allocate(3 << 20);
    void* b = arena.allocate(1 << 20);
    EXPECT_EQ(static_cast<char*>(b) - static_cast<char*>(a), 3 << 20);
    EXPECT_EQ(arena.stats().reserved_bytes, 4ull << 20);  // 2 MiB pages, as the request needed
    EXPECT_EQ(device->device_memory()->free_bytes, (1ull << 30) - (4ull << 20));
    arena.deallocate(b, 1 << 20);
    arena.deallocate(a, 3 << 20);
    EXPECT_EQ(arena.release_unused(), 4ull << 20);
    EXPECT_EQ(device->device_memory()->free_bytes, 1ull << 30);
  }
}

TEST(CudaDeviceResource, MapFailureIsOutOfMemoryNamingTheCall) {
  std::unique_ptr<CudaDriver> driver = LoadCudaDriver(OOMGUARD_FAKE_LIBCUDA).value();
  auto device = CudaDeviceResource::Open(*driver, 0).value();
  void* other = device->allocate(900ull << 20);  // plain cuMemAlloc: someone else's memory
  ArenaResource arena(*device);
  try {
    arena.allocate(200ull << 20);
    FAIL();
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.report().upstream_error, "cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY");
    EXPECT_EQ(e.report().verdict(), OomVerdict::kUpstreamFailed);
  }
  device->deallocate(other, 900ull << 20);
}

TEST(CudaDeviceResource, DeviceWithoutVirtualMemoryGetsRegions) {
  std::unique_ptr<CudaDriver> driver = LoadCudaDriver(OOMGUARD_FAKE_LIBCUDA).value();
  for (const char* env : {"FAKECUDA_NO_VMM", "FAKECUDA_BROKEN_VMM"}) {
    ScopedEnv no_vmm(env, "1");
    auto device = CudaDeviceResource::Open(*driver, 0).value();
    EXPECT_EQ(device->virtual_memory(), nullptr) << env;
    ArenaResource arena(*device);
    EXPECT_FALSE(arena.stats().expandable) << env;
    void* p = arena.allocate(1 << 20);  // served from a cuMemAlloc region
    EXPECT_EQ(arena.stats().regions, 1u);
    arena.deallocate(p, 1 << 20);
  }
}

// Issue 15.13: libcuda.so.1 is loaded once; every caller gets the same driver or the same error.
TEST(SharedCudaDriver, OneDriverOrOneErrorForTheWholeProcess) {
  Result<CudaDriver*> a = SharedCudaDriver();
  Result<CudaDriver*> b = SharedCudaDriver();
  ASSERT_EQ(a.ok(), b.ok());
  if (a.ok()) {
    EXPECT_EQ(*a, *b);
  } else {
    EXPECT_EQ(a.error(), b.error());
    EXPECT_EQ(a.error().rfind("cannot load the CUDA driver (libcuda.so.1): ", 0), 0u) << a.error();
  }
}

// A driver without the calls doctor makes says so instead of crashing.
TEST(SharedCudaDriver, DoctorCallsAreOptional) {
  std::unique_ptr<CudaDriver> driver = LoadCudaDriver(OOMGUARD_FAKE_LIBCUDA).value();
  int version = -1;
  CuResult r = driver->DriverGetVersion(&version);
  EXPECT_TRUE(r == kCudaSuccess || r == kCudaErrorNotSupported) << r;
}

}  // namespace
}  // namespace oomguard::mr
