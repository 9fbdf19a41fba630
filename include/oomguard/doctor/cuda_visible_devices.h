// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER: which GPU is CUDA ordinal N?
//
// CUDA numbers devices FASTEST_FIRST by default while nvidia-smi numbers them
// in PCI bus order, and CUDA_VISIBLE_DEVICES selects and renumbers them. These
// pure functions reproduce that mapping, matching devices by UUID or PCI bus
// id, never by position. Thread-safe (no state).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomguard/doctor/gpus.h"

namespace oomguard::doctor {

// One entry of CUDA_VISIBLE_DEVICES.
struct VisibleDeviceEntry {
  enum class Kind { kIndex, kUuid, kMig };
  Kind kind = Kind::kIndex;
  int index = -1;     // kIndex: position in CUDA_DEVICE_ORDER
  std::string text;   // the entry as written (trimmed): "1", "GPU-8a5c", "MIG-..."
};

struct VisibleDevices {
  bool set = false;  // false: the variable is unset, every device is visible
  // The entries CUDA will use, in order. CUDA stops at the first invalid
  // entry: everything from there on is hidden.
  std::vector<VisibleDeviceEntry> entries;
  std::string hidden_from;  // the first invalid entry ("" when none)
  std::vector<std::string> warnings;  // one sentence each, user's words
};

// The most GPUs one machine can have: the NVIDIA kernel driver handles at most
// 32 (NV_MAX_DEVICES). An index at or above it selects no GPU on any machine.
inline constexpr int kMaxCudaDevices = 32;

// Parses the value of CUDA_VISIBLE_DEVICES (nullptr = unset). Syntax only:
// an index below kMaxCudaDevices, "GPU-<hex uuid prefix>", "MIG-..." ids. A
// negative or larger number, a repeat or any other text is invalid and hides
// the entries after it.
//
// The one rule (doctor's cuda_visible_devices check): an entry CUDA cannot use
// ends the list there. When entries before it were kept, GPUs the user listed
// are silently dropped: a failure. When it is the first entry, CUDA sees no GPU
// (as with the CPU idiom "-1"): a warning. Whether a GPU is present only adds
// what needs one to judge (an index past the last GPU, a UUID matching none).
VisibleDevices ParseCudaVisibleDevices(const char* value);

// `text` for a message: cut after max_chars, saying how long it was.
std::string Shown(std::string_view text, size_t max_chars = 40);

enum class DeviceOrder { kFastestFirst, kPciBusId };
// nullptr, "" and "FASTEST_FIRST" -> kFastestFirst; "PCI_BUS_ID" -> kPciBusId;
// anything else is an error (CUDA itself falls back to FASTEST_FIRST).
Result<DeviceOrder> ParseCudaDeviceOrder(const char* value);

// The CUDA ordinal of every GPU in `snapshot` (by position in snapshot.gpus),
// nullopt for a GPU that CUDA_VISIBLE_DEVICES hides.
struct OrdinalMap {
  std::vector<std::optional<int>> cuda_ordinal;  // parallel to snapshot.gpus
  std::vector<std::string> warnings;             // mismatches, unresolved entries, guesses
  bool order_known = true;  // false when FASTEST_FIRST was needed but libcuda gave no order
  int mig_entries = 0;      // MIG instances selected (they get ordinals but are not GPU rows)
  // Where CUDA stops using the list (an index into VisibleDevices::entries): an
  // index past the last GPU, a UUID matching none, a GPU selected twice.
  std::optional<size_t> cut_at;
};
OrdinalMap MapCudaOrdinals(const GpuSnapshot& snapshot, const VisibleDevices& visible,
                           DeviceOrder order);

}  // namespace oomguard::doctor
