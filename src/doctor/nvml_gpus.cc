// The real MachineGpus: NVML and the CUDA driver API loaded with dlopen.
// Only the few functions and types used here are declared; their layouts
// follow nvml.h and cuda.h of driver R450 and later.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "oomguard/doctor/gpus.h"
#include "oomguard/mr/cuda_driver.h"

namespace oomguard::doctor {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;
constexpr unsigned long long kNvmlValueNotAvailable = ~0ull;

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
// nvmlProcessInfo_t as _v2 and _v3 fill it (nvidia-ml-py uses the same
// layout for both). A short-lived header once added a 5th field; the buffer
// below is over-allocated so that such a driver cannot write past it.
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};


template <typename F>
F Sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

struct Nvml {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*cc)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*procs_v3)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*procs_v2)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*cuda_version)(int*) = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
};

std::string NvmlError(const Nvml& n, nvmlReturn_t r) {
  if (n.error_string != nullptr) return n.error_string(r);
  return "NVML error " + std::to_string(r);
}

// Reads the CUDA driver's FASTEST_FIRST order with every device visible.
// cuInit reads CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER once, so they are
// overridden around it and restored afterwards.
std::vector<std::string> CudaFastestFirst(std::string* reason) {
  Result<mr::CudaDriver*> loaded = mr::SharedCudaDriver();  // the process's one driver
  if (!loaded) {
    *reason = loaded.error();
    return {};
  }
  mr::CudaDriver& cu = **loaded;
  const char* old_visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const char* old_order = std::getenv("CUDA_DEVICE_ORDER");
  std::string saved_visible = old_visible ? old_visible : "";
  std::string saved_order = old_order ? old_order : "";
  unsetenv("CUDA_VISIBLE_DEVICES");
  setenv("CUDA_DEVICE_ORDER", "FASTEST_FIRST", 1);
  mr::CuResult r = cu.Init(0);
  if (old_visible) setenv("CUDA_VISIBLE_DEVICES", saved_visible.c_str(), 1);
  if (old_order) setenv("CUDA_DEVICE_ORDER", saved_order.c_str(), 1);
  else unsetenv("CUDA_DEVICE_ORDER");
  std::vector<std::string> order;
  int count = 0;
  if (r != 0 || cu.DeviceGetCount(&count) != 0) {
    *reason = "cuInit failed with " + cu.ErrorName(r);
    return {};
  }
  for (int i = 0; i < count; ++i) {
    int dev = 0;
    char bus[64] = {0};
    if (cu.DeviceGet(&dev, i) != 0 || cu.DeviceGetPCIBusId(bus, sizeof bus, dev) != 0) {
      *reason = "cuDeviceGetPCIBusId failed for CUDA device " + std::to_string(i);
      return {};
    }
    order.push_back(NormalizePciBusId(bus));
  }
  return order;  // the library stays loaded: unloading libcuda after cuInit is unsafe
}

class RealGpus final : public MachineGpus {
 public:
  ~RealGpus() override {
    if (initialised_ && nvml_.shutdown) nvml_.shutdown();
  }

  Result<GpuSnapshot> Read() override {
    GpuSnapshot s;
    if (!Load(&s.no_driver_reason)) return s;
    unsigned count = 0;
    if (nvmlReturn_t r = nvml_.count(&count); r != kNvmlSuccess) {
      s.no_driver_reason = "nvmlDeviceGetCount failed: " + NvmlError(nvml_, r);
      return s;
    }
    DriverVersions v;
    char buf[96] = {0};
    if (nvml_.driver_version && nvml_.driver_version(buf, sizeof buf) == kNvmlSuccess) v.driver_version = buf;
    if (nvml_.cuda_version) nvml_.cuda_version(&v.cuda_version);
    s.driver = v;
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t dev = nullptr;
      if (nvml_.handle(i, &dev) != kNvmlSuccess) continue;
      Gpu g;
      g.nvml_index = i;
      char text[128] = {0};
      if (nvml_.name(dev, text, sizeof text) == kNvmlSuccess) g.name = text;
      std::memset(text, 0, sizeof text);
      if (nvml_.uuid(dev, text, sizeof text) == kNvmlSuccess) g.uuid = text;
      nvmlPciInfo_t pci{};
      if (nvml_.pci(dev, &pci) == kNvmlSuccess) g.pci_bus_id = pci.busId;
      nvmlMemory_t mem{};
      if (nvml_.memory(dev, &mem) == kNvmlSuccess) {
        g.total_bytes = mem.total;
        g.used_bytes = mem.used;
        g.free_bytes = mem.free;
      }
      if (nvml_.cc) nvml_.cc(dev, &g.cc_major, &g.cc_minor);
      ReadProcesses(dev, &g.processes);
      s.gpus.push_back(std::move(g));
    }
    if (!cuda_order_read_) {  // cuInit once: the order cannot change while we run
      cuda_order_ = CudaFastestFirst(&cuda_order_reason_);
      cuda_order_read_ = true;
    }
    s.cuda_fastest_first = cuda_order_;
    s.cuda_order_reason = cuda_order_reason_;
    return s;
  }

 private:
  bool Load(std::string* reason) {
    if (initialised_) return true;
    if (!load_error_.empty()) {
      *reason = load_error_;
      return false;
    }
    nvml_.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (nvml_.lib == nullptr) {
      load_error_ = "libnvidia-ml.so.1 not found (no NVIDIA driver installed, or not mounted into this container)";
      *reason = load_error_;
      return false;
    }
    void* l = nvml_.lib;
    nvml_.init = Sym<decltype(nvml_.init)>(l, "nvmlInit_v2");
    nvml_.shutdown = Sym<decltype(nvml_.shutdown)>(l, "nvmlShutdown");
    nvml_.count = Sym<decltype(nvml_.count)>(l, "nvmlDeviceGetCount_v2");
    nvml_.handle = Sym<decltype(nvml_.handle)>(l, "nvmlDeviceGetHandleByIndex_v2");
    nvml_.name = Sym<decltype(nvml_.name)>(l, "nvmlDeviceGetName");
    nvml_.uuid = Sym<decltype(nvml_.uuid)>(l, "nvmlDeviceGetUUID");
    nvml_.pci = Sym<decltype(nvml_.pci)>(l, "nvmlDeviceGetPciInfo_v3");
    nvml_.memory = Sym<decltype(nvml_.memory)>(l, "nvmlDeviceGetMemoryInfo");
    nvml_.cc = Sym<decltype(nvml_.cc)>(l, "nvmlDeviceGetCudaComputeCapability");
    nvml_.procs_v3 = Sym<decltype(nvml_.procs_v3)>(l, "nvmlDeviceGetComputeRunningProcesses_v3");
    nvml_.procs_v2 = Sym<decltype(nvml_.procs_v2)>(l, "nvmlDeviceGetComputeRunningProcesses_v2");
    nvml_.driver_version = Sym<decltype(nvml_.driver_version)>(l, "nvmlSystemGetDriverVersion");
    nvml_.cuda_version = Sym<decltype(nvml_.cuda_version)>(l, "nvmlSystemGetCudaDriverVersion_v2");
    nvml_.error_string = Sym<decltype(nvml_.error_string)>(l, "nvmlErrorString");
    if (!nvml_.init || !nvml_.count || !nvml_.handle || !nvml_.name || !nvml_.uuid || !nvml_.pci ||
        !nvml_.memory) {
      load_error_ = "libnvidia-ml.so.1 is too old (driver before R450?): functions missing";
      *reason = load_error_;
      return false;
    }
    if (nvmlReturn_t r = nvml_.init(); r != kNvmlSuccess) {
      load_error_ = "nvmlInit failed: " + NvmlError(nvml_, r) +
                    " (is the NVIDIA kernel module loaded? see 'oomguard doctor')";
      *reason = load_error_;
      return false;
    }
    initialised_ = true;
    return true;
  }

  void ReadProcesses(nvmlDevice_t dev, std::vector<GpuProcess>* out) {
    for (auto fn : {nvml_.procs_v3, nvml_.procs_v2}) {
      if (fn == nullptr) continue;
      unsigned n = 0;
      nvmlReturn_t r = fn(dev, &n, nullptr);
      if (r != kNvmlSuccess && r != kNvmlInsufficientSize) continue;
      for (int attempt = 0; attempt < 3; ++attempt) {
        unsigned capacity = n + 8;
        std::vector<nvmlProcessInfo_t> buf(2 * capacity);  // see the struct's comment
        n = capacity;
        r = fn(dev, &n, buf.data());
        if (r == kNvmlInsufficientSize) continue;
        if (r != kNvmlSuccess) break;
        for (unsigned i = 0; i < n && i < capacity; ++i) {
          uint64_t bytes = buf[i].usedGpuMemory == kNvmlValueNotAvailable ? 0 : buf[i].usedGpuMemory;
          out->push_back({buf[i].pid, bytes});
        }
        return;
      }
    }
  }

  Nvml nvml_;
  bool initialised_ = false;
  bool cuda_order_read_ = false;
  std::vector<std::string> cuda_order_;
  std::string cuda_order_reason_;
  std::string load_error_;
};

}  // namespace

std::unique_ptr<MachineGpus> MakeRealGpus() { return std::make_unique<RealGpus>(); }

}  // namespace oomguard::doctor
