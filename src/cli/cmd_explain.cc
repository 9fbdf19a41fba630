// oomguard explain [FILE|-] [--json] [--here]: read an error log and say which
// memory ran out, why, and what to do. Exit 0 when the log was read (with or
// without findings), 2 on bad input.
#include <sys/stat.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "commands.h"
#include "common.h"
#include "oomguard/explain/explainer.h"
#include "oomguard/explain/machine_facts.h"
#include "oomguard/explain/report_format.h"
#include "explain/report_json.h"

namespace oomguard::cli {

int RunExplain(int argc, char** argv) {
  CLI::App app{"Read an error log (a file, or - for stdin) and say which memory ran out, why, and what to do."};
  std::string path = "-";
  bool json = false;
  bool here = false;
  app.add_option("log", path, "log file to read; - or nothing reads standard input")->type_name("FILE|-");
  app.add_flag("--json", json, "print JSON on stdout");
  app.add_flag("--here", here, "add facts from this machine (RAM, swap, /dev/shm, memlock, GPUs)");
  if (std::optional<int> code = Parse(app, "explain", argc, argv)) return *code;

  // A log is a file or a stream (stdin, a FIFO); a device such as /dev/zero never ends.
  if (struct stat st; path != "-" && stat(path.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
    return UsageError("explain", "'" + path + "' is a device, not a log file");
  }
  explain::ExplainOptions options;
  if (here) options.here = explain::NewLocalMachineFacts()->Read();
  if (const char* conf = std::getenv("PYTORCH_CUDA_ALLOC_CONF")) options.pytorch_cuda_alloc_conf = conf;
  Result<explain::Report> report = explain::ExplainFile(path, options);
  if (!report) return UsageError("explain", report.error());
  std::string source = path == "-" ? "stdin" : path;
  if (json) {
    PrintJson(explain::ReportToJson(*report, source));
  } else {
    std::cout << explain::FormatReport(*report, source) << std::flush;
  }
  return kExitOk;
}

}  // namespace oomguard::cli
