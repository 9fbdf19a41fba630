// oomguard version (and --version): the version, the git revision it was built from, and the versions of
// the libraries it was built against.
#include <iostream>

#include "build_info.h"
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunVersion(int argc, char** argv) {
  CLI::App app("Print the version, the git revision and the versions of the libraries oomguard was built with.",
               "oomguard version");
  bool json = false;
  app.add_flag("--json", json, "machine-readable output");
  if (auto code = Parse(app, "version", argc, argv)) return *code;
  if (json) {
    nlohmann::json deps = nlohmann::json::object();
    for (const build_info::Dependency& d : build_info::kDependencies) deps[d.name] = d.version;
    PrintJson({{"version", build_info::kVersion},
               {"git_revision", build_info::kGitRevision},
               {"compiler", build_info::kCompiler},
               {"build_type", build_info::kBuildType},
               {"dependencies", deps}});
    return kExitOk;
  }
  std::cout << "oomguard " << build_info::kVersion << " (" << build_info::kGitRevision << ", "
            << build_info::kCompiler << ", " << build_info::kBuildType << ")\n";
  for (const build_info::Dependency& d : build_info::kDependencies) {
    std::cout << "  " << d.name << " " << d.version << "\n";
  }
  return kExitOk;
}

}  // namespace oomguard::cli
