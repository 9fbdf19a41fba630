// The GPUs of this machine, as the NVIDIA driver reports them.
//
// MachineGpus is the one boundary with the driver: the real implementation
// loads libnvidia-ml.so.1 and libcuda.so.1 with dlopen (no build dependency on
// either); FakeGpus reads the same facts from a JSON file (tests/data/doctor/).
// Everything above this interface (ordinal mapping, checks, watch) is tested
// with the fake.
//
// Thread safety: a MachineGpus is not thread-safe; use one per thread.
// Ownership: Read() returns values; nothing refers back into the object.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oomguard/result.h"

namespace oomguard::doctor {

// A process holding memory on a GPU (from NVML).
struct GpuProcess {
  uint32_t pid = 0;
  uint64_t used_bytes = 0;  // 0 when the driver does not say (NVML_VALUE_NOT_AVAILABLE)
};

struct Gpu {
  unsigned nvml_index = 0;   // the index nvidia-smi shows (PCI bus order)
  std::string uuid;          // "GPU-8a5c0f2e-...."
  std::string pci_bus_id;    // "00000000:3B:00.0" as NVML writes it
  std::string name;          // "NVIDIA A100-SXM4-40GB"
  int cc_major = 0, cc_minor = 0;  // compute capability; 0.0 when unknown
  uint64_t total_bytes = 0, used_bytes = 0, free_bytes = 0;
  std::vector<GpuProcess> processes;
};

struct DriverVersions {
  std::string driver_version;  // "535.104.05"
  int cuda_version = 0;        // the newest CUDA the driver supports, 1000*major + 10*minor (12020)
};

// What the driver told us, or why it could not.
struct GpuSnapshot {
  // nullopt when NVML could not be loaded or initialised; no_driver_reason says why.
  std::optional<DriverVersions> driver;
  std::string no_driver_reason;
  std::vector<Gpu> gpus;  // by NVML index
  // The CUDA driver's own enumeration with every device visible and
  // CUDA_DEVICE_ORDER=FASTEST_FIRST, as PCI bus ids (normalised, see
  // NormalizePciBusId). Empty when libcuda could not be loaded; cuda_order_reason says why.
  std::vector<std::string> cuda_fastest_first;
  std::string cuda_order_reason;
};

class MachineGpus {
 public:
  virtual ~MachineGpus() = default;
  // Never fails because there is no driver: that is a GpuSnapshot with driver == nullopt.
  // Fails only when the source itself is broken (a fake's unreadable JSON).
  virtual Result<GpuSnapshot> Read() = 0;
};

// The real driver via dlopen. Loads the libraries on the first Read().
std::unique_ptr<MachineGpus> MakeRealGpus();

// A fake that returns what the JSON file at `path` says (format: docs/doctor.md).
// The file is read on every Read().
std::unique_ptr<MachineGpus> MakeFakeGpus(std::string path);

// Parses the fake's JSON text (exposed for tests and fuzzing).
Result<GpuSnapshot> ParseGpuSnapshotJson(const std::string& text);

// 12020 -> "12.2", 13000 -> "13.0"; 0 -> "unknown".
std::string FormatCudaVersion(int version);

// "0000:3b:00.0", "00000000:3B:00.0" and "3b:00.0" all become "0000:3b:00.0".
// Returns the input lower-cased when it does not look like a PCI bus id.
std::string NormalizePciBusId(const std::string& bus_id);

// For the planner's `--gpu auto`: the name and total memory of the first GPU
// (NVML index 0, or the first device CUDA_VISIBLE_DEVICES selects when it is set),
// or an error that says why there is none ("no NVIDIA driver: libnvidia-ml.so.1 ...").
struct LocalGpu {
  std::string name;
  uint64_t total_bytes = 0;
};
Result<LocalGpu> DetectLocalGpu(MachineGpus& gpus, const char* cuda_visible_devices,
                                const char* cuda_device_order);
Result<LocalGpu> DetectLocalGpu();  // the real driver and this process's environment

}  // namespace oomguard::doctor
