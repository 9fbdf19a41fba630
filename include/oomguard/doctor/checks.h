// `oomguard doctor`: checks of the GPU driver stack and of the host settings
// that decide out-of-memory failures, each ok / warn / fail with the reason
// and the fix. Pure logic over a SystemView and a GpuSnapshot (both fakeable),
// so every verdict is tested without a GPU. Thread-safe (no state).
//
// Verdict policy (docs/doctor.md): a machine with no NVIDIA GPU hardware at
// all (no device nodes, no /proc/driver/nvidia, no NVIDIA device on the PCI
// bus) gets "warn", not "fail": it can still train on the CPU, and nothing is
// broken. It becomes "fail" with DoctorOptions::require_gpu. A GPU that is
// present but unusable (driver missing, driver too old for the runtime,
// container asked for GPUs but got none) is "fail".
#pragma once

#include <string>
#include <vector>

#include "oomguard/doctor/gpus.h"
#include "oomguard/doctor/system_view.h"

namespace oomguard::doctor {

enum class CheckStatus { kOk, kWarn, kFail };
const char* CheckStatusName(CheckStatus s);  // "ok", "warn", "fail"

struct Check {
  std::string name;    // stable id: "nvidia_driver", "shm", ...
  CheckStatus status = CheckStatus::kOk;
  std::string detail;  // what was found
  std::string fix;     // what to do; "" when ok
};

struct DoctorOptions {
  bool require_gpu = false;  // no GPU at all is a failure, not a warning
  uint32_t self_pid = 0;     // processes of this pid are not "other processes" on a GPU
};

std::vector<Check> RunDoctorChecks(const SystemView& system, const GpuSnapshot& gpus,
                                   const DoctorOptions& options);

// The minimum Linux driver for a CUDA release, from NVIDIA's release notes
// ("CUDA Toolkit and Corresponding Driver Versions"). `cuda_version` is
// 1000*major + 10*minor. `ga` is the minimum for full support of that release;
// `minor_compat` is the minimum that runs it through CUDA minor version
// compatibility (same major, PTX JIT unsupported); empty when unknown.
struct DriverRequirement {
  std::string ga;
  std::string minor_compat;
};
DriverRequirement MinimumDriverFor(int cuda_version);

// Compares "535.104.05"-style versions numerically: <0, 0, >0.
int CompareDriverVersions(const std::string& a, const std::string& b);

}  // namespace oomguard::doctor
