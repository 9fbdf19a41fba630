// OutOfMemory: the exception every oomguard resource throws when it cannot
// satisfy a request, carrying a structured report of why.
//
// OomReport is a plain value (copyable, no references to the resource).
// what() is the human text (FormatOomReport); ToJson() the machine form.
// The verdict is computed from the numbers (ClassifyOom), so a report built
// by hand in a test gets the same verdict as one built by an arena.
#pragma once

#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <vector>


namespace oomguard::mr {

struct LiveAllocation {
  uint64_t bytes = 0;
  uintptr_t address = 0;
  std::string tag;  // empty when the allocation was not tagged
};

enum class OomVerdict {
  kCapTooLow,      // the limit is below what is needed while the device has room
  kFragmentation,  // enough bytes are free under the limit, but not in one block
  kTrulyFull,      // live allocations fill the limit (or the device)
  kUpstreamFailed, // the upstream (driver, OS) refused although the limit had room
};

const char* ToString(OomVerdict verdict);

struct OomReport {
  std::string resource;          // MemoryResource::name() of the resource that failed
  uint64_t requested_bytes = 0;
  uint64_t limit_bytes = 0;      // the cap; 0 = no cap
  uint64_t allocated_bytes = 0;  // live allocations (as rounded by the resource)
  uint64_t reserved_bytes = 0;   // held from the upstream
  uint64_t free_in_pool_bytes = 0;     // reserved - allocated
  uint64_t largest_free_block_bytes = 0;
  std::optional<uint64_t> device_free_bytes;   // cuMemGetInfo, when there is a device
  std::optional<uint64_t> device_total_bytes;
  std::vector<LiveAllocation> largest_live;    // largest first, at most kMaxLiveInReport
  std::string upstream_error;    // e.g. "CUDA_ERROR_OUT_OF_MEMORY"; empty if none

  static constexpr std::size_t kMaxLiveInReport = 5;

  // 1 - largest free block / total free in the pool; 0 when nothing is free.
  double fragmentation() const;
  OomVerdict verdict() const;
  // One line: "fragmentation: ..." / "truly full: ..." / "cap too low: ..."
  std::string verdict_line() const;
};

// The text of OutOfMemory::what(). Exact format (tested word for word):
//   out of memory: cannot allocate 3.00 GiB (3221225472 bytes) from arena over ...
//     limit                8.00 GiB (8589934592 bytes)
//     ...
//     verdict: ...
std::string FormatOomReport(const OomReport& report);

class OutOfMemory : public std::bad_alloc {
 public:
  explicit OutOfMemory(OomReport report);
  const char* what() const noexcept override { return text_.c_str(); }
  const OomReport& report() const { return report_; }

 private:
  OomReport report_;
  std::string text_;
};

}  // namespace oomguard::mr
