// GpuSnapshot helpers, the JSON-driven fake and DetectLocalGpu.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "oomguard/bounded_json.h"
#include "oomguard/bounded_read.h"
#include "oomguard/doctor/cuda_visible_devices.h"
#include "oomguard/doctor/gpus.h"

namespace oomguard::doctor {

std::string FormatCudaVersion(int version) {
  if (version <= 0) return "unknown";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string NormalizePciBusId(const std::string& bus_id) {
  unsigned long domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  std::string lower;
  for (char c : bus_id) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (std::sscanf(lower.c_str(), "%lx:%lx:%lx.%lx%c", &domain, &bus, &device, &function, &tail) == 4 ||
      (domain = 0, std::sscanf(lower.c_str(), "%lx:%lx.%lx%c", &bus, &device, &function, &tail) == 3)) {
    char out[64];
    std::snprintf(out, sizeof out, "%04lx:%02lx:%02lx.%lx", domain, bus, device, function);
    return out;
  }
  return lower;
}

namespace {

using nlohmann::json;

// A snapshot is a few hundred values (sixteen GPUs, their processes); the bound keeps a hostile file's document
// small (ParseJsonBounded).
constexpr size_t kMaxSnapshotValues = 1 << 16;

uint64_t Bytes(const json& j, const char* key) {
  if (!j.contains(key)) return 0;
  const json& v = j.at(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    throw std::runtime_error(std::string("'") + key + "' must be a byte count (a non-negative integer)");
  }
  return v.get<uint64_t>();
}

std::string Text(const json& j, const char* key) {
  if (!j.contains(key)) return "";
  if (!j.at(key).is_string()) throw std::runtime_error(std::string("'") + key + "' must be a string");
  return j.at(key).get<std::string>();
}

class FakeGpus final : public MachineGpus {
 public:
  explicit FakeGpus(std::string path) : path_(std::move(path)) {}
  Result<GpuSnapshot> Read() override {
    Result<std::string> text = ReadFileBounded(path_);
    if (!text) return MakeError("cannot read fake GPU file " + text.error());
    Result<GpuSnapshot> r = ParseGpuSnapshotJson(*text);
    if (!r) return MakeError(path_ + ": " + r.error());
    return r;
  }

 private:
  std::string path_;
};

}  // namespace

Result<GpuSnapshot> ParseGpuSnapshotJson(const std::string& text) {
  Result<json> parsed = ParseJsonBounded(text, kMaxSnapshotValues);
  if (!parsed) return MakeError(parsed.error());
  json j = std::move(*parsed);
  if (!j.is_object()) return MakeError("not a JSON object");
  GpuSnapshot s;
  try {
    if (j.contains("driver") && !j["driver"].is_null()) {
      const json& d = j["driver"];
      if (!d.is_object()) throw std::runtime_error("'driver' must be an object or null");
      DriverVersions v;
      v.driver_version = Text(d, "version");
      v.cuda_version = static_cast<int>(Bytes(d, "cuda_version"));
      s.driver = v;
    } else {
      s.no_driver_reason = Text(j, "no_driver_reason");
      if (s.no_driver_reason.empty()) s.no_driver_reason = "libnvidia-ml.so.1 not found";
    }
    if (j.contains("gpus")) {
      if (!j["gpus"].is_array()) throw std::runtime_error("'gpus' must be an array");
      for (const json& g : j["gpus"]) {
        if (!g.is_object()) throw std::runtime_error("each GPU must be an object");
        Gpu gpu;
        gpu.nvml_index = static_cast<unsigned>(Bytes(g, "nvml_index"));
        gpu.uuid = Text(g, "uuid");
        gpu.pci_bus_id = Text(g, "pci_bus_id");
        gpu.name = Text(g, "name");
        std::string cc = Text(g, "compute_capability");
        if (!cc.empty() && std::sscanf(cc.c_str(), "%d.%d", &gpu.cc_major, &gpu.cc_minor) != 2) {
          throw std::runtime_error("'compute_capability' must look like \"8.6\"");
        }
        gpu.total_bytes = Bytes(g, "total_bytes");
        gpu.used_bytes = Bytes(g, "used_bytes");
        gpu.free_bytes = g.contains("free_bytes") ? Bytes(g, "free_bytes")
                                                  : (gpu.total_bytes > gpu.used_bytes ? gpu.total_bytes - gpu.used_bytes : 0);
        if (g.contains("processes")) {
          if (!g["processes"].is_array()) throw std::runtime_error("'processes' must be an array");
          for (const json& p : g["processes"]) {
            if (!p.is_object()) throw std::runtime_error("each process must be an object");
            gpu.processes.push_back({static_cast<uint32_t>(Bytes(p, "pid")), Bytes(p, "used_bytes")});
          }
        }
        s.gpus.push_back(std::move(gpu));
      }
    }
    if (j.contains("cuda_fastest_first")) {
      if (!j["cuda_fastest_first"].is_array()) throw std::runtime_error("'cuda_fastest_first' must be an array");
      for (const json& b : j["cuda_fastest_first"]) {
        if (!b.is_string()) throw std::runtime_error("'cuda_fastest_first' holds PCI bus id strings");
        s.cuda_fastest_first.push_back(NormalizePciBusId(b.get<std::string>()));
      }
    }
    s.cuda_order_reason = Text(j, "cuda_order_reason");
  } catch (const std::exception& e) {
    return MakeError(e.what());
  }
  return s;
}

std::unique_ptr<MachineGpus> MakeFakeGpus(std::string path) {
  return std::make_unique<FakeGpus>(std::move(path));
}

Result<LocalGpu> DetectLocalGpu(MachineGpus& gpus, const char* cuda_visible_devices,
                                const char* cuda_device_order) {
  Result<GpuSnapshot> snap = gpus.Read();
  if (!snap) return MakeError(snap.error());
  if (!snap->driver) return MakeError("no NVIDIA driver: " + snap->no_driver_reason);
  if (snap->gpus.empty()) return MakeError("the NVIDIA driver reports no GPU");
  Result<DeviceOrder> order = ParseCudaDeviceOrder(cuda_device_order);
  OrdinalMap map = MapCudaOrdinals(*snap, ParseCudaVisibleDevices(cuda_visible_devices),
                                   order ? *order : DeviceOrder::kFastestFirst);
  for (size_t i = 0; i < snap->gpus.size(); ++i) {
    if (map.cuda_ordinal[i] == 0) return LocalGpu{snap->gpus[i].name, snap->gpus[i].total_bytes};
  }
  return MakeError("CUDA_VISIBLE_DEVICES hides every GPU");
}

Result<LocalGpu> DetectLocalGpu() {
  std::unique_ptr<MachineGpus> gpus = MakeRealGpus();
  return DetectLocalGpu(*gpus, std::getenv("CUDA_VISIBLE_DEVICES"), std::getenv("CUDA_DEVICE_ORDER"));
}

}  // namespace oomguard::doctor
