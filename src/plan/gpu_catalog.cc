#include "oomguard/plan/gpu_catalog.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <vector>

#include "oomguard/edit_distance.h"
#include "oomguard/units.h"

namespace oomguard::plan {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

// Totals as nvidia-smi reports them (MiB), not the marketing "GB".
constexpr std::array<Gpu, 14> kCatalog = {{
    {"gtx-1080-ti", "NVIDIA GeForce GTX 1080 Ti", 11264 * kMiB, 61},
    {"v100-16gb", "NVIDIA Tesla V100 16GB", 16160 * kMiB, 70},
    {"v100-32gb", "NVIDIA Tesla V100 32GB", 32510 * kMiB, 70},
    {"rtx-2080-ti", "NVIDIA GeForce RTX 2080 Ti", 11264 * kMiB, 75},
    {"t4", "NVIDIA T4", 15360 * kMiB, 75},
    {"a100-40gb", "NVIDIA A100 40GB", 40960 * kMiB, 80},
    {"a100-80gb", "NVIDIA A100 80GB", 81920 * kMiB, 80},
    {"rtx-3090", "NVIDIA GeForce RTX 3090", 24576 * kMiB, 86},
    {"a10", "NVIDIA A10", 23028 * kMiB, 86},
    {"rtx-4090", "NVIDIA GeForce RTX 4090", 24564 * kMiB, 89},
    {"l4", "NVIDIA L4", 23034 * kMiB, 89},
    {"l40s", "NVIDIA L40S", 46068 * kMiB, 89},
    {"h100-80gb", "NVIDIA H100 80GB", 81559 * kMiB, 90},
    {"h200", "NVIDIA H200", 143771 * kMiB, 90},
}};

std::string Canonical(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::span<const Gpu> GpuCatalog() { return kCatalog; }

Result<Gpu> FindGpu(std::string_view name) {
  std::string wanted = Canonical(name);
  for (const Gpu& g : kCatalog) {
    if (Canonical(g.key) == wanted) return g;
  }
  // Suggest the nearest key; a prefix ("a100" -> "a100-40gb") counts as near.
  const Gpu* best = &kCatalog[0];
  size_t best_distance = SIZE_MAX;
  for (const Gpu& g : kCatalog) {
    std::string key = Canonical(g.key);
    size_t d = EditDistance(wanted, key);
    if (!wanted.empty() && key.rfind(wanted, 0) == 0) d = std::min<size_t>(d, 1);
    if (d < best_distance) {
      best_distance = d;
      best = &g;
    }
  }
  return MakeError("unknown GPU '" + std::string(name) + "', did you mean '" + std::string(best->key) +
                   "'? (see 'oomguard gpus')");
}

Result<std::optional<uint64_t>> CapacityBytes(const std::optional<Gpu>& gpu,
                                              std::optional<uint64_t> memory,
                                              std::optional<double> fraction) {
  if (fraction && !(*fraction > 0.0 && *fraction <= 1.0)) {
    return MakeError("--fraction must be in (0, 1], got " + FormatNumber(*fraction));
  }
  if (memory && *memory == 0) return MakeError("--memory must be more than 0 bytes");
  std::optional<uint64_t> base;
  if (memory) {
    base = *memory;
  } else if (gpu) {
    base = gpu->total_bytes;
  }
  if (!base) {
    if (fraction) return MakeError("--fraction needs --gpu or --memory");
    return std::optional<uint64_t>();
  }
  double f = fraction.value_or(1.0);
  if (f == 1.0) return base;
  return std::optional<uint64_t>(static_cast<uint64_t>(std::floor(static_cast<double>(*base) * f)));
}

uint64_t CudaContextBytes(int compute_capability) {
  // Measured orders of magnitude for PyTorch with CUDA 11/12 (lazy module
  // loading): the context grows with the generation's kernel images.
  if (compute_capability < 70) return 300 * kMiB;
  if (compute_capability < 80) return 350 * kMiB;
  if (compute_capability < 90) return 420 * kMiB;
  return 520 * kMiB;
}

}  // namespace oomguard::plan
