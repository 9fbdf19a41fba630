// oomguard gpus: the built-in GPU catalog.
#include <cstdio>

#include "commands.h"
#include "common.h"
#include "oomguard/plan/gpu_catalog.h"
#include "oomguard/units.h"

namespace oomguard::cli {

int RunGpus(int argc, char** argv) {
  CLI::App app("List the built-in GPU catalog (use a key with --gpu).", "oomguard gpus");
  bool json = false;
  app.add_flag("--json", json, "print JSON on stdout");
  if (auto code = Parse(app, "gpus", argc, argv)) return *code;

  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const plan::Gpu& g : plan::GpuCatalog()) {
      list.push_back({{"key", g.key},
                      {"name", g.name},
                      {"total_bytes", g.total_bytes},
                      {"compute_capability", g.compute_capability},
                      {"cuda_context_bytes", plan::CudaContextBytes(g.compute_capability)}});
    }
    PrintJson({{"gpus", list}});
    return kExitOk;
  }
  std::printf("%-12s %-28s %12s  %s\n", "KEY", "NAME", "MEMORY", "COMPUTE");
  for (const plan::Gpu& g : plan::GpuCatalog()) {
    std::printf("%-12s %-28s %12s  sm_%d\n", std::string(g.key).c_str(), std::string(g.name).c_str(),
                FormatBytes(g.total_bytes).c_str(), g.compute_capability);
  }
  return kExitOk;
}

}  // namespace oomguard::cli
