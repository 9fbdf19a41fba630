// oomguard models: the model zoo built into the binary.
#include <cstdio>

#include "commands.h"
#include "common.h"
#include "oomguard/plan/planner.h"

namespace oomguard::cli {
namespace {

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + (dims[i] < 0 ? std::string("B") : std::to_string(dims[i]));
  return s;
}

}  // namespace

int RunModels(int argc, char** argv) {
  CLI::App app("List the model zoo built into oomguard (use a name as MODEL in plan, fit, split).",
               "oomguard models");
  bool json = false;
  app.add_flag("--json", json, "print JSON on stdout");
  if (auto code = Parse(app, "models", argc, argv)) return *code;

  nlohmann::json list = nlohmann::json::array();
  if (!json) std::printf("%-20s %12s  %-22s %s\n", "NAME", "PARAMETERS", "INPUT", "DESCRIPTION");
  for (const std::string& name : plan::ZooModelNames()) {
    auto model = plan::LoadModel(name);
    if (!model) {
      PrintError("models", model.error());
      continue;
    }
    plan::ModelSummary s = plan::Summarize(**model);
    if (json) {
      nlohmann::json inputs = nlohmann::json::array();
      for (const auto& [in, dims] : s.inputs) inputs.push_back({{"name", in}, {"shape", dims}});
      list.push_back({{"name", name},
                      {"description", s.description},
                      {"parameter_count", s.parameter_count},
                      {"parameter_bytes", s.parameter_bytes},
                      {"inputs", inputs}});
      continue;
    }
    std::string input;
    for (const auto& [in, dims] : s.inputs) input += (input.empty() ? "" : ", ") + in + " " + ShapeText(dims);
    char params[32];
    if (s.parameter_count >= 1000000) {
      std::snprintf(params, sizeof params, "%.1fM", static_cast<double>(s.parameter_count) / 1e6);
    } else {
      std::snprintf(params, sizeof params, "%.1fK", static_cast<double>(s.parameter_count) / 1e3);
    }
    std::printf("%-20s %12s  %-22s %s\n", name.c_str(), params, input.c_str(), s.description.c_str());
  }
  if (json) PrintJson({{"models", list}});
  return kExitOk;
}

}  // namespace oomguard::cli
