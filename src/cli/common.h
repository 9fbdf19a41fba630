// Shared pieces of the command-line front end: exit codes, CLI11 parsing with
// one-line errors, byte-count options, JSON output and a terminal progress bar.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "oomguard/units.h"

namespace oomguard::cli {

enum ExitCode : int { kExitOk = 0, kExitNo = 1, kExitUsage = 2 };

// Prints "oomguard COMMAND: MESSAGE" on stderr and returns kExitUsage.
int UsageError(std::string_view command, std::string_view message);

// Prints "oomguard COMMAND: MESSAGE" on stderr (for non-usage failures).
void PrintError(std::string_view command, std::string_view message);

// Parses argv with CLI11. Returns an exit code when the caller should return
// at once (--help printed: 0, as JSON on stdout when --json is given too; a
// parse error: 2 with one line on stderr), or nullopt when parsing succeeded.
std::optional<int> Parse(CLI::App& app, std::string_view command, int argc, char** argv);

// The example shown under the running command's --help (text and JSON); set
// by main before it runs a command. Not thread-safe: call before any threads.
void SetHelpExample(const char* example);

// True when argv holds --json before any "--".
bool WantsJson(int argc, char** argv);

// An app's help as JSON: {"command", "description", "options": [{"name", "help", "value", "default"}]}
// ("value" and "default" null when the option takes no value or has no default).
nlohmann::json HelpJson(const CLI::App& app);

// Every default is shown one way: "[default: TEXT]" at the end of the option's
// --help line, "default": "TEXT" in --help --json and the man page. It is the
// option's CLI11 default string, set by capture_default_str() (an option bound
// to a variable), by AddNumberOption (a plain number: its initial value), or
// here (a default that is not a value: "one per core").
CLI::Option* ShowDefault(CLI::Option* option, const std::string& text);

// Adds an option that takes a byte count ("512MiB", "1.5GiB", "24GB", 4096);
// *out is set only when the option was given and parses.
CLI::Option* AddBytesOption(CLI::App& app, const std::string& name, std::optional<uint64_t>* out,
                            const std::string& help);

// A bad option value whose message is complete ("--gpus must be at most
// 4096, got 5000"): Parse prints it without the --help hint.
class OptionValueError : public CLI::ValidationError {
 public:
  explicit OptionValueError(std::string message) : CLI::ValidationError(std::move(message)) {}
};

namespace detail {
template <typename T>
struct NumberOf {
  using type = T;
};
template <typename T>
struct NumberOf<std::optional<T>> {
  using type = T;
};
}  // namespace detail

// "--batch" for "--batch,-b".
std::string LongestName(const std::string& names);

// Adds an option that takes a number in [min, max] (*out: an integer, a
// floating-point number or an optional of one), parsed by the one parser of
// units.h: no exponent, hex, nan or empty text, and a one-line message naming
// the range otherwise. *out is set only when the option was given and parses.
// A plain number's initial value is shown as its default; an optional has none.
template <typename T, typename V = typename detail::NumberOf<T>::type>
CLI::Option* AddNumberOption(CLI::App& app, const std::string& name, T* out, std::type_identity_t<V> min,
                             std::type_identity_t<V> max, const std::string& help) {
  static_assert(std::is_arithmetic_v<V>);
  auto parse = [out, name, min, max](const std::string& text) {
    auto set = [&](const auto& r) {
      if (!r) throw OptionValueError(LongestName(name) + " " + r.error());
      *out = static_cast<V>(*r);
    };
    if constexpr (std::is_floating_point_v<V>) {
      set(ParseNumber(text, min, max));
    } else if constexpr (std::is_signed_v<V>) {
      set(ParseInteger(text, min, max));
    } else {
      set(ParseUnsigned(text, min, max));
    }
  };
  CLI::Option* option = app.add_option_function<std::string>(name, parse, help)
                            ->type_name(std::is_floating_point_v<V> ? "NUMBER" : "INT");
  if constexpr (std::is_same_v<T, V>) ShowDefault(option, FormatNumber(static_cast<double>(*out)));
  return option;
}

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
