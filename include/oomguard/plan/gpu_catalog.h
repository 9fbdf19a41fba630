// The built-in GPU catalog: the memory and compute capability of common
// training GPUs, so a plan can be checked against a card the user does not
// have at hand ("--gpu rtx-3090").
//
// The catalog is a constant table; every function here is pure and thread-safe.
// Memory sizes are the totals a driver reports for the card (nvidia-smi's
// "Total"), in bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "oomguard/result.h"

namespace oomguard::plan {

struct Gpu {
  std::string_view key;   // what the user types: "rtx-3090", "a100-80gb", "h200"
  std::string_view name;  // marketing name: "NVIDIA GeForce RTX 3090"
  uint64_t total_bytes = 0;
  int compute_capability = 0;  // 86 for sm_86
};

// Every GPU in the catalog, oldest architecture first.
std::span<const Gpu> GpuCatalog();

// Finds a GPU by key. Matching ignores case, spaces, '-' and '_' ("RTX 3090",
// "rtx3090" and "rtx-3090" are the same card). An unknown name fails with
// "unknown GPU 'X', did you mean 'Y'? (see 'oomguard gpus')".
Result<Gpu> FindGpu(std::string_view name);

// The bytes a plan may use: `memory` if given, else the GPU's total, times
// `fraction` (default 1; must be in (0, 1]). Returns nullopt when neither a
// GPU nor a memory size is given (there is nothing to compare against).
// Fails on a fraction outside (0, 1] or a zero memory size.
Result<std::optional<uint64_t>> CapacityBytes(const std::optional<Gpu>& gpu,
                                              std::optional<uint64_t> memory,
                                              std::optional<double> fraction);

// Bytes the CUDA context (driver, kernels, cuBLAS/cuDNN handles) takes on a GPU
// of this compute capability before the first tensor is allocated.
uint64_t CudaContextBytes(int compute_capability);

}  // namespace oomguard::plan
