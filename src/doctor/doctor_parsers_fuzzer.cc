// libFuzzer target: the doctor's parsers of outside text never crash, hang
// or read out of bounds: CUDA_VISIBLE_DEVICES (+ the ordinal mapping), the
// fake GPU JSON, /proc/<pid>/status, /proc/<pid>/stat, /proc/meminfo and PCI
// bus ids. The first byte picks the parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "oomguard/doctor/cuda_visible_devices.h"
#include "oomguard/doctor/gpus.h"
#include "oomguard/doctor/process_tree.h"

using namespace oomguard::doctor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0: {
      VisibleDevices v = ParseCudaVisibleDevices(text.c_str());
      GpuSnapshot s;
      for (int i = 0; i < 3; ++i) {
        Gpu g;
        g.nvml_index = i;
        g.uuid = "GPU-" + std::to_string(i) + "abc";
        g.pci_bus_id = "0000:0" + std::to_string(i) + ":00.0";
        s.gpus.push_back(g);
      }
      s.cuda_fastest_first = {"0000:02:00.0", "0000:00:00.0", "0000:01:00.0"};
      OrdinalMap m = MapCudaOrdinals(s, v, data[0] & 8 ? DeviceOrder::kPciBusId : DeviceOrder::kFastestFirst);
      if (m.cuda_ordinal.size() != 3) __builtin_trap();
      break;
    }
    case 1: {
      auto r = ParseGpuSnapshotJson(text);
      (void)r;
      break;
    }
    case 2: ParseProcStatus(text); break;
    case 3: ParseStatParent(text); ParseHostAvailable(text); break;
    case 4: NormalizePciBusId(text); break;
  }
  return 0;
}
