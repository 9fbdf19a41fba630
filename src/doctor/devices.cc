#include "oomguard/doctor/devices.h"

#include "oomguard/doctor/cuda_visible_devices.h"

namespace oomguard::doctor {

std::string ProcessCommand(const SystemView& system, uint32_t pid) {
  std::string base = "/proc/" + std::to_string(pid);
  std::optional<std::string> cmdline = system.ReadFile(base + "/cmdline");
  std::string out;
  if (cmdline && !cmdline->empty()) {
    for (char c : *cmdline) out += (c == '\0' ? ' ' : c);
    while (!out.empty() && out.back() == ' ') out.pop_back();
  } else if (std::optional<std::string> comm = system.ReadFile(base + "/comm")) {
    out = *comm;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    if (!out.empty()) out = "[" + out + "]";
  }
  if (out.size() > 200) out = out.substr(0, 197) + "...";
  return out;
}

DeviceReport BuildDeviceReport(const GpuSnapshot& snapshot, const SystemView& system) {
  DeviceReport report;
  report.driver = snapshot.driver;
  if (!snapshot.driver) {
    report.warnings.push_back("no NVIDIA driver: " + snapshot.no_driver_reason);
  }
  report.cuda_visible_devices = system.Env("CUDA_VISIBLE_DEVICES");
  std::optional<std::string> order_env = system.Env("CUDA_DEVICE_ORDER");
  Result<DeviceOrder> order = ParseCudaDeviceOrder(order_env ? order_env->c_str() : nullptr);
  if (!order) report.warnings.push_back(order.error());
  DeviceOrder o = order ? *order : DeviceOrder::kFastestFirst;
  report.device_order = o == DeviceOrder::kPciBusId ? "PCI_BUS_ID" : "FASTEST_FIRST";

  VisibleDevices visible =
      ParseCudaVisibleDevices(report.cuda_visible_devices ? report.cuda_visible_devices->c_str() : nullptr);
  for (const std::string& w : visible.warnings) report.warnings.push_back(w);
  OrdinalMap map = MapCudaOrdinals(snapshot, visible, o);
  if (snapshot.driver && !snapshot.gpus.empty() && snapshot.cuda_fastest_first.empty() &&
      !snapshot.cuda_order_reason.empty() && o == DeviceOrder::kFastestFirst) {
    report.warnings.push_back("CUDA device order unknown: " + snapshot.cuda_order_reason);
  }
  for (const std::string& w : map.warnings) report.warnings.push_back(w);

  uint32_t any_unnamed = 0;
  for (size_t i = 0; i < snapshot.gpus.size(); ++i) {
    DeviceRow row;
    row.gpu = snapshot.gpus[i];
    row.cuda_ordinal = map.cuda_ordinal[i];
    if (row.cuda_ordinal && *row.cuda_ordinal != static_cast<int>(row.gpu.nvml_index)) {
      report.ordinals_differ = true;
    }
    for (const GpuProcess& p : row.gpu.processes) {
      DeviceProcess dp{p.pid, ProcessCommand(system, p.pid), p.used_bytes};
      if (dp.command.empty()) ++any_unnamed;
      row.processes.push_back(std::move(dp));
    }
    report.devices.push_back(std::move(row));
  }
  if (any_unnamed > 0) {
    report.warnings.push_back(std::to_string(any_unnamed) +
                              " GPU process(es) are not in this PID namespace (a container?): "
                              "their pids are the host's and their commands cannot be shown");
  }
  return report;
}

}  // namespace oomguard::doctor
