// The `oomguard devices` report: every GPU with its CUDA ordinal under the
// current CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER, its memory and the
// processes holding memory on it. Pure: reads only what it is given.
// Thread-safe (no state).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oomguard/doctor/gpus.h"
#include "oomguard/doctor/system_view.h"

namespace oomguard::doctor {

struct DeviceProcess {
  uint32_t pid = 0;
  std::string command;  // from /proc/<pid>/cmdline; "" when not visible (another PID namespace)
  uint64_t used_bytes = 0;
};

struct DeviceRow {
  Gpu gpu;
  std::optional<int> cuda_ordinal;  // nullopt: hidden by CUDA_VISIBLE_DEVICES
  std::vector<DeviceProcess> processes;
};

struct DeviceReport {
  std::optional<DriverVersions> driver;
  std::vector<DeviceRow> devices;
  std::optional<std::string> cuda_visible_devices;  // the variable as set, nullopt when unset
  std::string device_order;                          // "FASTEST_FIRST" or "PCI_BUS_ID"
  bool ordinals_differ = false;  // some visible GPU's CUDA ordinal != its nvidia-smi index
  std::vector<std::string> warnings;
};

// The process's command line as `ps` would show it (arguments joined by
// spaces, at most 200 characters), "" when /proc/<pid> cannot be read.
std::string ProcessCommand(const SystemView& system, uint32_t pid);

DeviceReport BuildDeviceReport(const GpuSnapshot& snapshot, const SystemView& system);

}  // namespace oomguard::doctor
