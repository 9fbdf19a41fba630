// Shared pieces of the command-line front end: exit codes, CLI11 parsing with
// one-line errors, byte-count options, JSON output and a terminal progress bar.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace oomguard::cli {

enum ExitCode : int { kExitOk = 0, kExitNo = 1, kExitUsage = 2 };

// Prints "oomguard COMMAND: MESSAGE" on stderr and returns kExitUsage.
int UsageError(std::string_view command, std::string_view message);

// Prints "oomguard COMMAND: MESSAGE" on stderr (for non-usage failures).
void PrintError(std::string_view command, std::string_view message);

// Parses argv with CLI11. Returns an exit code when the caller should return
// at once (--help printed: 0; a parse error: 2 with one line on stderr), or
// nullopt when parsing succeeded.
std::optional<int> Parse(CLI::App& app, std::string_view command, int argc, char** argv);

// Adds an option that takes a byte count ("512MiB", "1.5GiB", "24GB", 4096);
// *out is set only when the option was given and parses.
CLI::Option* AddBytesOption(CLI::App& app, const std::string& name, std::optional<uint64_t>* out,
                            const std::string& help);

// Writes JSON to stdout, two-space indented, with a trailing newline.
void PrintJson(const nlohmann::json& j);

// True when stdout / stderr is a terminal.
bool StdoutIsTerminal();
bool StderrIsTerminal();

// A one-line progress bar on stderr, drawn only when stderr is a terminal and
// at most every 100 ms. Finish() clears the line.
class ProgressBar {
 public:
  explicit ProgressBar(std::string label, uint64_t total = 0);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Updates the count done and an optional free-text status ("512 img/s, budget 40%").
  void Update(uint64_t done, std::string_view status = {});
  void Finish();

 private:
  std::string label_;
  uint64_t total_;
  bool enabled_;
  bool finished_ = false;
  long long last_draw_ns_ = 0;
};

}  // namespace oomguard::cli
