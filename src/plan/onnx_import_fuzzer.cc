// libFuzzer target: any bytes given to the ONNX importer must yield a model or
// an error, never a crash; a model that loads must also plan without crashing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "oomguard/plan/planner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto model = oomguard::plan::LoadModelFromBytes(bytes, "fuzz.onnx");
  if (!model) return 0;
  oomguard::plan::PlanOptions options;
  options.batch = 2;
  options.target = oomguard::plan::Target::kCpu;
  (void)oomguard::plan::PlanStep(**model, options);
  options.target = oomguard::plan::Target::kCuda;
  options.precision = oomguard::plan::Precision::kAmpFp16;
  (void)oomguard::plan::PlanStep(**model, options);
  return 0;
}
