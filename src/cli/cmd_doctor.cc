// oomguard doctor: checks of the driver stack and host memory settings, each
// ok / warn / fail with the reason and the fix. Exit 1 when any check fails.
#include <unistd.h>

#include <cstdio>

#include "commands.h"
#include "common.h"
#include "oomguard/doctor/checks.h"
#include "oomguard/doctor/sources.h"

namespace oomguard::cli {

int RunDoctor(int argc, char** argv) {
  CLI::App app{"Check the GPU driver stack and the host's memory settings", "oomguard doctor"};
  bool json = false;
  doctor::DoctorOptions options;
  app.add_flag("--json", json, "print JSON on stdout");
  app.add_flag("--require-gpu", options.require_gpu,
               "a machine without any NVIDIA GPU fails (without this flag it is a warning: CPU training still works)");
  if (auto rc = Parse(app, "doctor", argc, argv)) return *rc;

  doctor::Sources sources;
  if (std::string error; !doctor::OpenSources(&sources, &error)) return UsageError("doctor", error);
  Result<doctor::GpuSnapshot> snap = sources.gpus->Read();
  if (!snap) return UsageError("doctor", snap.error());
  options.self_pid = static_cast<uint32_t>(getpid());
  std::vector<doctor::Check> checks = doctor::RunDoctorChecks(*sources.system, *snap, options);

  int failed = 0, warned = 0;
  for (const doctor::Check& c : checks) {
    failed += c.status == doctor::CheckStatus::kFail;
    warned += c.status == doctor::CheckStatus::kWarn;
  }
  if (json) {
    nlohmann::json j;
    j["checks"] = nlohmann::json::array();
    for (const doctor::Check& c : checks) {
      j["checks"].push_back({{"name", c.name},
                             {"status", doctor::CheckStatusName(c.status)},
                             {"detail", c.detail},
                             {"fix", c.fix}});
    }
    j["failed"] = failed;
    j["warnings"] = warned;
    PrintJson(j);
  } else {
    for (const doctor::Check& c : checks) {
      std::printf("%-4s  %-23s %s\n", doctor::CheckStatusName(c.status), c.name.c_str(), c.detail.c_str());
      if (!c.fix.empty()) std::printf("      %-23s fix: %s\n", "", c.fix.c_str());
    }
    std::printf("\n%d failed, %d warning(s), %d ok\n", failed, warned,
                static_cast<int>(checks.size()) - failed - warned);
  }
  return failed > 0 ? kExitNo : kExitOk;
}

}  // namespace oomguard::cli
