#include "oomguard/explain/finding.h"

namespace oomguard::explain {

namespace {
constexpr std::pair<Cause, std::string_view> kCauseNames[] = {
    {Cause::kGpuDeviceOom, "gpu_device_oom"},
    {Cause::kGpuOomNonfatalWarning, "gpu_oom_nonfatal_warning"},
    {Cause::kFragmentation, "fragmentation"},
    {Cause::kOtherProcessHoldsMemory, "other_process_holds_memory"},
    {Cause::kFrameworkPreallocation, "framework_preallocation"},
    {Cause::kHostPinnedOom, "host_pinned_oom"},
    {Cause::kHostRamOom, "host_ram_oom"},
    {Cause::kShmExhausted, "shm_exhausted"},
    {Cause::kLeakGrowth, "leak_growth"},
    {Cause::kWrongDevice, "wrong_device"},
    {Cause::kDriverMismatch, "driver_mismatch"},
    {Cause::kCudaLibraryMismatch, "cuda_library_mismatch"},
    {Cause::kImpossibleRequest, "impossible_request"},
    {Cause::kNotMemory, "not_memory"},
};
}  // namespace

std::string_view CauseName(Cause cause) {
  for (const auto& [c, name] : kCauseNames) {
    if (c == cause) return name;
  }
  return "not_memory";
}

std::optional<Cause> CauseFromName(std::string_view name) {
  for (const auto& [c, n] : kCauseNames) {
    if (n == name) return c;
  }
  return std::nullopt;
}

std::string_view DomainName(Domain domain) {
  switch (domain) {
    case Domain::kGpu: return "gpu";
    case Domain::kHost: return "host";
    case Domain::kNone: return "none";
  }
  return "none";
}

std::string_view ConfidenceName(Confidence confidence) {
  switch (confidence) {
    case Confidence::kHigh: return "high";
    case Confidence::kMedium: return "medium";
    case Confidence::kLow: return "low";
  }
  return "low";
}

}  // namespace oomguard::explain
