#include "common.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "oomguard/units.h"

namespace oomguard::cli {

int UsageError(std::string_view command, std::string_view message) {
  PrintError(command, message);
  return kExitUsage;
}

void PrintError(std::string_view command, std::string_view message) {
  std::string line = "oomguard";
  if (!command.empty()) line += " " + std::string(command);
  line += ": ";
  // One line: fold any newline in the message.
  for (char c : message) line += (c == '\n' ? ' ' : c);
  std::fprintf(stderr, "%s\n", line.c_str());
}

std::string LongestName(const std::string& names) {
  std::string best;
  size_t start = 0;
  while (start <= names.size()) {
    size_t comma = names.find(',', start);
    if (comma == std::string::npos) comma = names.size();
    std::string n = names.substr(start, comma - start);
    if (n.size() > best.size()) best = n;
    start = comma + 1;
  }
  return best;
}

bool WantsJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "--json") return true;
  }
  return false;
}

namespace {
const char* g_help_example = nullptr;

// CLI11's help with each default moved from the value column ("TEXT=adam") to
// the end of the description ("[default: adam]").
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string opts = CLI::Formatter::make_option_opts(opt);
    const std::string& value = opt->get_default_str();
    if (!value.empty()) {
      if (size_t at = opts.find("=" + value); at != std::string::npos) opts.erase(at, value.size() + 1);
    }
    return opts;
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    if (!opt->get_default_str().empty()) desc += " [default: " + opt->get_default_str() + "]";
    return desc;
  }
};
}  // namespace

CLI::Option* ShowDefault(CLI::Option* option, const std::string& text) { return option->default_str(text); }

void SetHelpExample(const char* example) { g_help_example = example; }

nlohmann::json HelpJson(const CLI::App& app) {
  nlohmann::json options = nlohmann::json::array();
  for (const CLI::Option* opt : app.get_options()) {
    nlohmann::json o;
    o["name"] = opt->get_name();
    o["help"] = opt->get_description();
    o["value"] = opt->get_type_size() == 0 ? nlohmann::json() : nlohmann::json(opt->get_type_name());
    o["default"] = opt->get_default_str().empty() ? nlohmann::json() : nlohmann::json(opt->get_default_str());
    options.push_back(o);
  }
  nlohmann::json j = {{"command", app.get_name()}, {"description", app.get_description()}, {"options", options}};
  if (g_help_example != nullptr) j["example"] = g_help_example;
  return j;
}

std::optional<int> Parse(CLI::App& app, std::string_view command, int argc, char** argv) {
  if (g_help_example != nullptr) app.footer(std::string("\nExample:\n  ") + g_help_example);
  app.formatter(std::make_shared<HelpFormatter>());
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    if (WantsJson(argc, argv)) {
      PrintJson(HelpJson(app));
    } else {
      std::cout << app.help();
    }
    return kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const OptionValueError& e) {
    return UsageError(command, e.what());
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    return UsageError(command, what + " (see 'oomguard " + std::string(command) + " --help')");
  }
  return std::nullopt;
}

CLI::Option* AddBytesOption(CLI::App& app, const std::string& name, std::optional<uint64_t>* out,
                            const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [out, name](const std::string& text) {
            Result<uint64_t> r = ParseBytes(text);
            if (!r) throw CLI::ValidationError(name, r.error());
            *out = *r;
          },
          help)
      ->type_name("BYTES");
}

void PrintJson(const nlohmann::json& j) {
  // Text from logs and files may hold invalid UTF-8: replace it rather than throw.
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
}

bool StdoutIsTerminal() { return isatty(STDOUT_FILENO) == 1; }
bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

namespace {
long long NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

ProgressBar::ProgressBar(std::string label, uint64_t total)
    : label_(std::move(label)), total_(total), enabled_(StderrIsTerminal()) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Update(uint64_t done, std::string_view status) {
  if (!enabled_ || finished_) return;
  long long now = NowNs();
  if (now - last_draw_ns_ < 100'000'000 && !(total_ > 0 && done >= total_)) return;
  last_draw_ns_ = now;
  std::string line = "\r\033[2K" + label_ + " ";
  if (total_ > 0) {
    constexpr int kWidth = 30;
    double frac = done >= total_ ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
    int filled = static_cast<int>(frac * kWidth);
    line += "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] ";
    line += std::to_string(done) + "/" + std::to_string(total_);
  } else {
    line += std::to_string(done);
  }
  if (!status.empty()) line += "  " + std::string(status);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (last_draw_ns_ != 0) {
    std::fputs("\r\033[2K", stderr);
    std::fflush(stderr);
  }
}

}  // namespace oomguard::cli
