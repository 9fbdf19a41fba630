#include "oomguard/mr/out_of_memory.h"

#include <cstdio>

#include "oomguard/units.h"
#include "report_json.h"

namespace oomguard::mr {
namespace {

std::string Bytes(uint64_t b) { return FormatBytes(b) + " (" + std::to_string(b) + " bytes)"; }

std::string Line(const char* label, const std::string& value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "  %-20s", label);
  return std::string(buf) + value + "\n";
}

}  // namespace

const char* ToString(OomVerdict verdict) {
  switch (verdict) {
    case OomVerdict::kCapTooLow: return "cap_too_low";
    case OomVerdict::kFragmentation: return "fragmentation";
    case OomVerdict::kTrulyFull: return "truly_full";
    case OomVerdict::kUpstreamFailed: return "upstream_failed";
  }
  return "unknown";
}

double OomReport::fragmentation() const {
  if (free_in_pool_bytes == 0) return 0.0;
  return 1.0 - static_cast<double>(largest_free_block_bytes) / static_cast<double>(free_in_pool_bytes);
}

OomVerdict OomReport::verdict() const {
  if (limit_bytes > 0 && requested_bytes > limit_bytes) return OomVerdict::kCapTooLow;
  if (free_in_pool_bytes >= requested_bytes) return OomVerdict::kFragmentation;
  if (limit_bytes > 0 && limit_bytes >= allocated_bytes &&
      limit_bytes - allocated_bytes >= requested_bytes) {
    return OomVerdict::kUpstreamFailed;
  }
  if (limit_bytes > 0 && device_free_bytes && *device_free_bytes + free_in_pool_bytes >= requested_bytes) {
    return OomVerdict::kCapTooLow;
  }
  return OomVerdict::kTrulyFull;
}

std::string OomReport::verdict_line() const {
  switch (verdict()) {
    case OomVerdict::kCapTooLow:
      if (requested_bytes > limit_bytes) {
        return "cap too low: the request alone is larger than the limit of " + FormatBytes(limit_bytes) +
               "; raise the limit or split the allocation";
      }
      return "cap too low: live allocations fill the limit (" + FormatBytes(allocated_bytes) + " of " +
             FormatBytes(limit_bytes) + ") while the device still has " + FormatBytes(*device_free_bytes) +
             " free; raise the limit";
    case OomVerdict::kFragmentation:
      return "fragmentation: " + FormatBytes(free_in_pool_bytes) +
             " is free in the pool but the largest free block is " + FormatBytes(largest_free_block_bytes) +
             "; allocate long-lived buffers first, reuse buffers of one size, or preallocate";
    case OomVerdict::kUpstreamFailed:
      return "upstream refused: the limit has room for the request but the " +
             std::string(device_free_bytes ? "device has only " + FormatBytes(*device_free_bytes) + " free"
                                           : "upstream gave no more memory") +
             "; other processes hold memory, or the limit is larger than the device";
    case OomVerdict::kTrulyFull:
      return "truly full: live allocations hold " + FormatBytes(allocated_bytes) +
             (limit_bytes > 0 ? " of the " + FormatBytes(limit_bytes) + " limit" : std::string()) +
             "; free tensors you no longer need, lower the batch size or checkpoint activations";
  }
  return "";
}

std::string FormatOomReport(const OomReport& r) {
  std::string s = "out of memory: cannot allocate " + Bytes(r.requested_bytes) + " from " + r.resource + "\n";
  s += Line("limit", r.limit_bytes > 0 ? Bytes(r.limit_bytes) : "none");
  s += Line("allocated", Bytes(r.allocated_bytes));
  s += Line("reserved", Bytes(r.reserved_bytes));
  s += Line("free in pool", Bytes(r.free_in_pool_bytes));
  s += Line("largest free block", Bytes(r.largest_free_block_bytes));
  char frag[32];
  std::snprintf(frag, sizeof frag, "%.1f%%", 100.0 * r.fragmentation());
  s += Line("fragmentation", frag);
  if (r.device_free_bytes && r.device_total_bytes) {
    s += Line("device free", FormatBytes(*r.device_free_bytes) + " of " + FormatBytes(*r.device_total_bytes));
  } else {
    s += Line("device free", "unknown");
  }
  if (!r.upstream_error.empty()) s += Line("upstream error", r.upstream_error);
  if (!r.largest_live.empty()) {
    s += "  largest live allocations:\n";
    for (const LiveAllocation& a : r.largest_live) {
      s += "    " + Bytes(a.bytes) + (a.tag.empty() ? "" : " " + a.tag) + "\n";
    }
  }
  s += "  verdict: " + r.verdict_line();
  return s;
}

nlohmann::json ToJson(const OomReport& r) {
  nlohmann::json live = nlohmann::json::array();
  for (const LiveAllocation& a : r.largest_live) {
    live.push_back({{"bytes", a.bytes}, {"address", a.address}, {"tag", a.tag}});
  }
  auto optional = [](const std::optional<uint64_t>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"resource", r.resource},
          {"requested_bytes", r.requested_bytes},
          {"limit_bytes", r.limit_bytes},
          {"allocated_bytes", r.allocated_bytes},
          {"reserved_bytes", r.reserved_bytes},
          {"free_in_pool_bytes", r.free_in_pool_bytes},
          {"largest_free_block_bytes", r.largest_free_block_bytes},
          {"fragmentation", r.fragmentation()},
          {"device_free_bytes", optional(r.device_free_bytes)},
          {"device_total_bytes", optional(r.device_total_bytes)},
          {"upstream_error", r.upstream_error},
          {"largest_live", live},
          {"verdict", ToString(r.verdict())},
          {"verdict_line", r.verdict_line()}};
}

OutOfMemory::OutOfMemory(OomReport report) : report_(std::move(report)), text_(FormatOomReport(report_)) {}

}  // namespace oomguard::mr
