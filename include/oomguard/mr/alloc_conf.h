// AllocConf: the settings of liboomguard_torch.so, read from OOMGUARD_ALLOC_CONF.
//
// Format: comma-separated key=value pairs, spaces around items ignored:
//   fraction=0.5,growth=on,report=/tmp/oom.json
// Keys:
//   fraction=F   cap at F (0 < F <= 1) of the device's total memory
//   limit=BYTES  cap in bytes ("10GiB"); give fraction or limit, not both
//   growth=on|expandable|regions|off
//                on, expandable: take memory as needed, one mapped address range
//                  (default; regions where the device has no virtual memory);
//                regions: take memory as needed in separate regions;
//                off: preallocate the cap
//   initial=BYTES  first region (growth=regions) or mapping step (expandable);
//                default 2MiB
//   report=PATH  write the OOM report there as JSON when an allocation fails
//   simulate=BYTES  use a simulated device of this capacity instead of CUDA
//                   (for tests and dry runs on machines without a GPU)
// Parsing is strict: an unknown key, a key given twice, an item without '='
// or a bad value is an error naming it; nothing is silently ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "oomguard/mr/arena_resource.h"
#include "oomguard/result.h"

namespace oomguard::mr {

struct AllocConf {
  std::optional<double> fraction;
  std::optional<uint64_t> limit_bytes;
  Growth growth = Growth::kExpandable;
  uint64_t initial_bytes = 2ull << 20;
  std::string report_path;
  std::optional<uint64_t> simulate_bytes;
};

// Errors start with "OOMGUARD_ALLOC_CONF: ". An empty text gives the defaults.
Result<AllocConf> ParseAllocConf(std::string_view text);

}  // namespace oomguard::mr
