#include "oomguard/doctor/cuda_visible_devices.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "oomguard/units.h"

namespace oomguard::doctor {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsUuidBody(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) || c == '-';
  });
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string Shown(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  return std::string(text.substr(0, max_chars)) + "... (" + std::to_string(text.size()) + " characters)";
}

VisibleDevices ParseCudaVisibleDevices(const char* value) {
  VisibleDevices v;
  if (value == nullptr) return v;
  v.set = true;
  std::string_view text(value);
  if (Trim(text).empty()) {
    v.warnings.push_back("CUDA_VISIBLE_DEVICES is set but empty: CUDA sees no GPU at all");
    return v;
  }
  std::set<std::string> seen;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view raw = text.substr(pos, comma - pos);
    std::string entry = Trim(raw);
    pos = comma + 1;
    if (entry.size() != raw.size()) {
      v.warnings.push_back("CUDA_VISIBLE_DEVICES entry '" + Shown(raw) +
                           "' has spaces around it; write the list without spaces");
    }
    VisibleDeviceEntry e;
    e.text = entry;
    bool valid = true;
    std::string why_not;
    if (IsDigits(entry)) {
      e.kind = VisibleDeviceEntry::Kind::kIndex;
      Result<uint64_t> index = ParseUnsigned(entry, 0, kMaxCudaDevices - 1);
      if (index) {
        e.index = static_cast<int>(*index);
      } else {
        valid = false;
        why_not = "'" + Shown(entry) + "' (no machine has more than " + std::to_string(kMaxCudaDevices) + " GPUs)";
      }
    } else if (entry.rfind("GPU-", 0) == 0 && IsUuidBody(entry.substr(4))) {
      e.kind = VisibleDeviceEntry::Kind::kUuid;
    } else if (entry.rfind("MIG-", 0) == 0 && entry.size() > 4) {
      e.kind = VisibleDeviceEntry::Kind::kMig;
    } else {
      valid = false;
    }
    if (!valid) {
      v.hidden_from = entry;
      std::string why = entry.empty() ? "an empty entry" : "'" + Shown(entry) + "'";
      if (!why_not.empty()) why = why_not;
      if (!entry.empty() && entry[0] == '-' && IsDigits(entry.substr(1))) {
        why = "'" + Shown(entry) + "' (a negative index)";
      }
      std::string message = "CUDA_VISIBLE_DEVICES has " + why + ", which is not a device";
      message += v.entries.empty() ? ": CUDA sees no GPU at all"
                                   : ": CUDA ignores it and every entry after it";
      v.warnings.push_back(message);
      return v;
    }
    std::string key = e.kind == VisibleDeviceEntry::Kind::kIndex ? entry : Lower(entry);
    if (!seen.insert(key).second) {
      v.hidden_from = entry;
      v.warnings.push_back("CUDA_VISIBLE_DEVICES lists '" + Shown(entry) +
                           "' twice; oomguard treats the list as ending at the repeat, remove it");
      return v;
    }
    v.entries.push_back(e);
    if (comma == text.size()) break;
  }
  return v;
}

Result<DeviceOrder> ParseCudaDeviceOrder(const char* value) {
  if (value == nullptr || std::string_view(value).empty() ||
      std::string_view(value) == "FASTEST_FIRST") {
    return DeviceOrder::kFastestFirst;
  }
  if (std::string_view(value) == "PCI_BUS_ID") return DeviceOrder::kPciBusId;
  return MakeError("CUDA_DEVICE_ORDER='" + std::string(value) +
                   "' is neither FASTEST_FIRST nor PCI_BUS_ID; CUDA uses FASTEST_FIRST");
}

namespace {

struct PciKey {
  unsigned long domain = 0, bus = 0, device = 0, function = 0;
  bool ok = false;
  auto operator<=>(const PciKey&) const = default;
};

PciKey ParsePci(const std::string& id) {
  PciKey k;
  std::string n = NormalizePciBusId(id);
  if (std::sscanf(n.c_str(), "%lx:%lx:%lx.%lx", &k.domain, &k.bus, &k.device, &k.function) == 4) {
    k.ok = true;
  }
  return k;
}

}  // namespace

OrdinalMap MapCudaOrdinals(const GpuSnapshot& snapshot, const VisibleDevices& visible,
                           DeviceOrder order) {
  OrdinalMap map;
  const size_t n = snapshot.gpus.size();
  map.cuda_ordinal.assign(n, std::nullopt);

  // The devices in CUDA's order (positions into snapshot.gpus).
  std::vector<size_t> ordered;
  if (order == DeviceOrder::kFastestFirst && !snapshot.cuda_fastest_first.empty()) {
    for (const std::string& bus : snapshot.cuda_fastest_first) {
      std::string want = NormalizePciBusId(bus);
      for (size_t i = 0; i < n; ++i) {
        if (NormalizePciBusId(snapshot.gpus[i].pci_bus_id) == want) ordered.push_back(i);
      }
    }
    if (ordered.size() != n) {
      map.warnings.push_back("the CUDA driver and NVML list different GPUs; ordinals may be wrong");
      for (size_t i = 0; i < n; ++i) {
        if (std::find(ordered.begin(), ordered.end(), i) == ordered.end()) ordered.push_back(i);
      }
    }
  } else {
    for (size_t i = 0; i < n; ++i) ordered.push_back(i);
    std::stable_sort(ordered.begin(), ordered.end(), [&](size_t a, size_t b) {
      return ParsePci(snapshot.gpus[a].pci_bus_id) < ParsePci(snapshot.gpus[b].pci_bus_id);
    });
    if (order == DeviceOrder::kFastestFirst && n > 1) {
      map.order_known = false;
      map.warnings.push_back(
          "libcuda gave no FASTEST_FIRST order; ordinals assume PCI bus order, which CUDA uses "
          "only with CUDA_DEVICE_ORDER=PCI_BUS_ID");
    }
  }

  if (!visible.set) {
    for (size_t k = 0; k < ordered.size(); ++k) map.cuda_ordinal[ordered[k]] = static_cast<int>(k);
  } else {
    int next = 0;
    std::vector<bool> taken(n, false);
    for (size_t at = 0; at < visible.entries.size(); ++at) {
      const VisibleDeviceEntry& e = visible.entries[at];
      std::optional<size_t> pick;
      if (e.kind == VisibleDeviceEntry::Kind::kIndex) {
        if (e.index >= 0 && static_cast<size_t>(e.index) < ordered.size()) {
          pick = ordered[e.index];
        } else {
          map.warnings.push_back("CUDA_VISIBLE_DEVICES entry '" + Shown(e.text) + "' is past the last GPU (" +
                                 std::to_string(n) + " found): CUDA ignores it and every entry after it");
          map.cut_at = at;
          break;
        }
      } else if (e.kind == VisibleDeviceEntry::Kind::kUuid) {
        std::string prefix = Lower(e.text);
        int matches = 0;
        for (size_t i = 0; i < n; ++i) {
          if (Lower(snapshot.gpus[i].uuid).rfind(prefix, 0) == 0) {
            ++matches;
            pick = i;
          }
        }
        if (matches != 1) {
          map.warnings.push_back("CUDA_VISIBLE_DEVICES entry '" + Shown(e.text) + "' matches " +
                                 (matches == 0 ? std::string("no GPU") : std::to_string(matches) + " GPUs") +
                                 ": CUDA ignores it and every entry after it");
          map.cut_at = at;
          break;
        }
      } else {
        ++map.mig_entries;
        ++next;
        continue;
      }
      if (taken[*pick]) {
        map.warnings.push_back("CUDA_VISIBLE_DEVICES selects the GPU of '" + Shown(e.text) +
                               "' twice; oomguard treats the list as ending there");
        map.cut_at = at;
        break;
      }
      taken[*pick] = true;
      map.cuda_ordinal[*pick] = next++;
    }
    if (map.mig_entries > 0) {
      map.warnings.push_back("CUDA_VISIBLE_DEVICES selects MIG instances; oomguard shows whole GPUs "
                             "and cannot say which GPU holds each MIG instance");
    }
  }

  for (size_t i = 0; i < n; ++i) {
    const std::optional<int>& o = map.cuda_ordinal[i];
    if (o && *o != static_cast<int>(snapshot.gpus[i].nvml_index)) {
      map.warnings.push_back("CUDA ordinal " + std::to_string(*o) + " is nvidia-smi GPU " +
                             std::to_string(snapshot.gpus[i].nvml_index) + " (" + snapshot.gpus[i].name +
                             ", " + snapshot.gpus[i].pci_bus_id + "): the numbers differ");
    }
  }
  return map;
}

}  // namespace oomguard::doctor
