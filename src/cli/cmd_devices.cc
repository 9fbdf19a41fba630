// oomguard devices: every GPU, its CUDA ordinal vs its nvidia-smi index, its
// memory and the processes on it. No driver is not an error: exit 0, a warning.
#include <cstdio>
#include <cstdlib>

#include "commands.h"
#include "common.h"
#include "oomguard/doctor/sources.h"
#include "oomguard/doctor/devices.h"
#include "oomguard/units.h"

namespace oomguard::cli {

namespace {

nlohmann::json DevicesJson(const doctor::DeviceReport& r) {
  nlohmann::json j;
  if (r.driver) {
    j["driver"] = {{"version", r.driver->driver_version},
                   {"cuda_version", doctor::FormatCudaVersion(r.driver->cuda_version)}};
  } else {
    j["driver"] = nullptr;
  }
  j["cuda_visible_devices"] = r.cuda_visible_devices ? nlohmann::json(*r.cuda_visible_devices) : nlohmann::json();
  j["cuda_device_order"] = r.device_order;
  j["devices"] = nlohmann::json::array();
  for (const doctor::DeviceRow& d : r.devices) {
    nlohmann::json procs = nlohmann::json::array();
    for (const doctor::DeviceProcess& p : d.processes) {
      procs.push_back({{"pid", p.pid}, {"command", p.command}, {"used_bytes", p.used_bytes}});
    }
    j["devices"].push_back({
        {"nvml_index", d.gpu.nvml_index},
        {"cuda_ordinal", d.cuda_ordinal ? nlohmann::json(*d.cuda_ordinal) : nlohmann::json()},
        {"uuid", d.gpu.uuid},
        {"pci_bus_id", d.gpu.pci_bus_id},
        {"name", d.gpu.name},
        {"compute_capability", std::to_string(d.gpu.cc_major) + "." + std::to_string(d.gpu.cc_minor)},
        {"total_bytes", d.gpu.total_bytes},
        {"used_bytes", d.gpu.used_bytes},
        {"free_bytes", d.gpu.free_bytes},
        {"processes", procs},
    });
  }
  j["ordinals_differ"] = r.ordinals_differ;
  j["warnings"] = r.warnings;
  return j;
}

void PrintDevices(const doctor::DeviceReport& r) {
  if (r.driver) {
    std::printf("NVIDIA driver %s, supports CUDA %s\n", r.driver->driver_version.c_str(),
                doctor::FormatCudaVersion(r.driver->cuda_version).c_str());
  } else {
    std::printf("No NVIDIA driver: no GPU can be used on this machine.\n");
  }
  std::printf("CUDA_VISIBLE_DEVICES=%s  CUDA_DEVICE_ORDER=%s\n",
              r.cuda_visible_devices ? ("'" + *r.cuda_visible_devices + "'").c_str() : "(unset)",
              r.device_order.c_str());
  if (!r.devices.empty()) {
    std::printf("\n%-6s %-11s %-32s %-17s %-4s %-23s %s\n", "CUDA", "nvidia-smi", "name", "PCI bus id", "cc",
                "memory used / total", "uuid");
    for (const doctor::DeviceRow& d : r.devices) {
      std::string ordinal = d.cuda_ordinal ? std::to_string(*d.cuda_ordinal) : "-";
      std::string mem = FormatBytes(d.gpu.used_bytes) + " / " + FormatBytes(d.gpu.total_bytes);
      std::printf("%-6s %-11u %-32s %-17s %d.%-2d %-23s %s\n", ordinal.c_str(), d.gpu.nvml_index,
                  d.gpu.name.c_str(), d.gpu.pci_bus_id.c_str(), d.gpu.cc_major, d.gpu.cc_minor, mem.c_str(),
                  d.gpu.uuid.c_str());
      for (const doctor::DeviceProcess& p : d.processes) {
        std::printf("         pid %-8u %10s  %s\n", p.pid, FormatBytes(p.used_bytes).c_str(),
                    p.command.empty() ? "(not visible from here)" : p.command.c_str());
      }
    }
    std::printf("\n%s\n", r.ordinals_differ ? "CUDA ordinals and nvidia-smi indices DIFFER: use the table above."
                                            : "CUDA ordinals match nvidia-smi indices.");
  }
  for (const std::string& w : r.warnings) std::printf("warning: %s\n", w.c_str());
}

}  // namespace

int RunDevices(int argc, char** argv) {
  CLI::App app{"List GPUs: CUDA ordinal vs nvidia-smi index, memory and processes", "oomguard devices"};
  bool json = false;
  app.add_flag("--json", json, "print JSON on stdout");
  if (auto rc = Parse(app, "devices", argc, argv)) return *rc;

  doctor::Sources sources;
  if (std::string error; !doctor::OpenSources(&sources, &error)) return UsageError("devices", error);
  Result<doctor::GpuSnapshot> snap = sources.gpus->Read();
  if (!snap) return UsageError("devices", snap.error());
  doctor::DeviceReport report = doctor::BuildDeviceReport(*snap, *sources.system);
  if (json) {
    PrintJson(DevicesJson(report));
  } else {
    PrintDevices(report);
  }
  return kExitOk;
}

}  // namespace oomguard::cli
