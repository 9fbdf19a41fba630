// oomguard watch: sample a run's memory (host and GPU, whole process tree),
// detect sustained growth, predict when it runs out, and optionally stop it
// first (SIGINT, then SIGTERM, then SIGKILL). Exit 1 when it stopped the run,
// 128+N when signal N ended a --pid watch, else the run's own exit status (0
// for --pid); the JSON field exit_reason says which.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <csignal>
#include <cstdio>
#include <fstream>

#include "commands.h"
#include "common.h"
#include "oomguard/doctor/sources.h"
#include "oomguard/doctor/watch_report.h"
#include "oomguard/doctor/watcher.h"
#include "oomguard/units.h"

namespace oomguard::cli {
namespace {

volatile std::sig_atomic_t g_forward_signal = 0;
extern "C" void OnForwardedSignal(int sig) { g_forward_signal = sig; }
extern "C" void OnInterrupt(int) {}  // the run got the same Ctrl-C; keep watching until it ends

// Why oomguard exits with the status it does: the run's own exit status (which
// may be 1 or 2 as well) is told apart from oomguard's own answers.
const char* ExitReason(const doctor::WatchSummary& s, bool attached) {
  if (s.stopped) return "stopped_before_oom";
  if (s.interrupted_by) return "watch_interrupted";
  if (attached) return "pid_ended";
  return "run_exited";
}

int WatchExitCode(const doctor::WatchSummary& s, bool attached) {
  if (s.stopped) return kExitNo;
  if (s.interrupted_by) return 128 + *s.interrupted_by;
  if (attached) return kExitOk;
  return s.exit.code.value_or(kExitOk);
}

std::string Rate(double bytes_per_second) {
  std::string sign = bytes_per_second < 0 ? "-" : "+";
  return sign + FormatBytes(static_cast<uint64_t>(std::fabs(bytes_per_second))) + "/s";
}

nlohmann::json OptionalNumber(const std::optional<double>& v) {
  if (!v) return nullptr;
  return std::round(*v * 10) / 10;
}

nlohmann::json SummaryJson(const doctor::WatchSummary& s, const std::string& what, bool attached) {
  const doctor::Sample* last = s.samples.empty() ? nullptr : &s.samples.back();
  nlohmann::json j;
  j["watched"] = what;
  j["exit_reason"] = ExitReason(s, attached);
  j["stopped"] = s.stopped;
  j["stop_reason"] = s.stopped ? nlohmann::json(s.stop_reason) : nlohmann::json();
  j["signals_sent"] = s.signals_sent;
  j["signals_forwarded"] = s.signals_forwarded;
  j["interrupted_by"] = s.interrupted_by ? nlohmann::json(doctor::SignalName(*s.interrupted_by)) : nlohmann::json();
  j["processes_outlived_run"] = s.outlived_run;
  j["left_unwatched"] = s.left_unwatched;
  j["exit_status"] = s.exit.code ? nlohmann::json(*s.exit.code) : nlohmann::json();
  j["signal"] = s.exit.signal ? nlohmann::json(*s.exit.signal) : nlohmann::json();
  j["samples"] = s.samples_taken;
  j["sample_stride"] = s.sample_stride;
  j["duration_seconds"] = last ? std::round(last->seconds * 10) / 10 : 0.0;
  j["peak_host_bytes"] = s.peak.host_bytes;
  j["peak_rss_bytes"] = s.peak.host.rss;
  j["peak_swap_bytes"] = s.peak.host.swap;
  j["peak_locked_bytes"] = s.peak.host.locked;
  j["peak_pinned_bytes"] = s.peak.host.pinned;
  j["peak_gpu_bytes"] = s.peak.gpu_bytes;
  j["peak_processes"] = s.peak.processes;
  j["host_limit_bytes"] = last && last->host_limit ? nlohmann::json(last->host_limit) : nlohmann::json();
  j["gpu_limit_bytes"] = last && last->gpu_limit ? nlohmann::json(last->gpu_limit) : nlohmann::json();
  j["gpu_available"] = s.gpu_available;
  j["host_growth_bytes_per_second"] = static_cast<int64_t>(std::llround(s.host_growth_bytes_per_second));
  j["gpu_growth_bytes_per_second"] = static_cast<int64_t>(std::llround(s.gpu_growth_bytes_per_second));
  j["predicted_seconds_to_limit"] = OptionalNumber(s.predicted_seconds_to_limit);
  j["stopped_at_seconds"] = OptionalNumber(s.stopped_at_seconds);
  j["last_step"] = s.last_step ? nlohmann::json(*s.last_step) : nlohmann::json();
  j["steps_per_second"] = std::round(s.steps_per_second * 100) / 100;
  j["predicted_step_at_limit"] =
      s.predicted_step_at_limit ? nlohmann::json(std::llround(*s.predicted_step_at_limit)) : nlohmann::json();
  j["verdict"] = s.verdict;
  return j;
}

void PrintSummary(const doctor::WatchSummary& s, const std::string& what) {
  std::string ended = "ended";
  if (s.interrupted_by) {
    ended = "was left running (oomguard got " + doctor::SignalName(*s.interrupted_by) + " and stopped watching)";
  } else if (s.exit.signal) {
    ended = "was killed by signal " + std::to_string(*s.exit.signal);
    if (*s.exit.signal == SIGKILL && !s.stopped) ended += " (the kernel's OOM killer? see 'dmesg')";
  } else if (s.exit.code) {
    ended = "exited with status " + std::to_string(*s.exit.code);
  }
  double seconds = s.samples.empty() ? 0 : s.samples.back().seconds;
  std::fprintf(stderr, "\noomguard watch: %s %s after %.1f s (%zu samples)\n", what.c_str(), ended.c_str(), seconds,
               s.samples_taken);
  std::fprintf(stderr, "  peak host %s (rss %s, swap %s, locked %s, pinned %s), peak GPU %s%s\n",
               FormatBytes(s.peak.host_bytes).c_str(), FormatBytes(s.peak.host.rss).c_str(),
               FormatBytes(s.peak.host.swap).c_str(), FormatBytes(s.peak.host.locked).c_str(),
               FormatBytes(s.peak.host.pinned).c_str(), FormatBytes(s.peak.gpu_bytes).c_str(),
               s.gpu_available ? "" : " (no GPU driver: not measured)");
  std::fprintf(stderr, "  growth host %s, GPU %s\n", Rate(s.host_growth_bytes_per_second).c_str(),
               Rate(s.gpu_growth_bytes_per_second).c_str());
  if (s.last_step) {
    std::fprintf(stderr, "  steps: last %ld, %.2f steps/s", *s.last_step, s.steps_per_second);
    if (s.predicted_step_at_limit) std::fprintf(stderr, ", the limit comes at about step %.0f", *s.predicted_step_at_limit);
    std::fprintf(stderr, "\n");
  }
  if (s.outlived_run > 0) {
    std::fprintf(stderr, "  %d process(es) of the run outlived it and were watched until they ended\n", s.outlived_run);
  }
  if (!s.left_unwatched.empty()) {
    std::string pids;
    for (size_t i = 0; i < s.left_unwatched.size() && i < 20; ++i) pids += " " + std::to_string(s.left_unwatched[i]);
    if (s.left_unwatched.size() > 20) pids += " and " + std::to_string(s.left_unwatched.size() - 20) + " more";
    std::fprintf(stderr, "  still running, no longer watched:%s\n", pids.c_str());
  }
  if (!s.signals_forwarded.empty()) {
    std::string sent;
    for (const std::string& sig : s.signals_forwarded) sent += " " + sig;
    std::fprintf(stderr, "  passed on to the run:%s\n", sent.c_str());
  }
  std::string verdict = s.verdict;
  if (s.stopped) {
    verdict += ": " + s.stop_reason + "; sent";
    for (const std::string& sig : s.signals_sent) verdict += " " + sig;
  } else if (s.predicted_seconds_to_limit) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ": the limit would be reached in %.0f s", *s.predicted_seconds_to_limit);
    verdict += buf;
  }
  std::fprintf(stderr, "  verdict: %s\n", verdict.c_str());
}

// The live status line's text. Until the growth detector has `min_samples`
// samples a rate would be noise, so it says how many it is still collecting instead.
std::string StatusLine(const doctor::Sample& s, const doctor::Assessment& a, size_t min_samples) {
  std::string line = "watch " + std::to_string(static_cast<int>(s.seconds)) + "s  " + std::to_string(s.processes) +
                     " proc  host " + FormatBytes(s.host_bytes);
  if (s.host_limit) line += "/" + FormatBytes(s.host_limit);
  const bool collecting = a.host.samples < min_samples;
  if (!collecting) line += " " + Rate(a.host.bytes_per_second);
  if (s.gpu_limit || s.gpu_bytes) {
    line += "  gpu " + FormatBytes(s.gpu_bytes) + "/" + FormatBytes(s.gpu_limit);
    if (!collecting) line += " " + Rate(a.gpu.bytes_per_second);
  }
  if (collecting) {
    return line + "  collecting (" + std::to_string(a.host.samples) + " of " + std::to_string(min_samples) +
           " samples)";
  }
  if (a.step) line += "  step " + std::to_string(*a.step);
  if (a.seconds_to_limit) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "  limit in %.0f s", *a.seconds_to_limit);
    line += buf;
    if (a.step_at_limit) {
      std::snprintf(buf, sizeof buf, " (step %.0f)", *a.step_at_limit);
      line += buf;
    }
  } else {
    line += (a.host.sustained || a.gpu.sustained) ? "  growing" : "  steady";
  }
  return line;
}

// The status line on our stderr (a terminal), and the run's own output passed
// through around it: the line is cleared before the run's bytes are written
// and drawn again after them. While the run has left an unfinished line on the
// terminal (a prompt, a progress bar of its own) the status waits, so that it
// never overwrites the run's text. Disabled, it only passes the output on.
class LiveStatus {
 public:
  explicit LiveStatus(bool enabled) : enabled_(enabled) {}

  void Show(std::string line) {
    if (!enabled_) return;
    line_ = std::move(line);
    if (!run_mid_line_) Draw();
  }

  // `to_terminal`: whether `to` is the terminal the status is drawn on.
  void PassThrough(const std::string& bytes, FILE* to, bool to_terminal) {
    Clear();
    std::fwrite(bytes.data(), 1, bytes.size(), to);
    std::fflush(to);
    if (!enabled_) return;
    if (to_terminal && !bytes.empty()) run_mid_line_ = bytes.back() != '\n';
    if (!run_mid_line_ && !line_.empty()) Draw();
  }

  void Clear() {
    if (!shown_) return;
    std::fputs(kClearLine, stderr);
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  static constexpr const char* kClearLine = "\r\033[2K";
  void Draw() {
    std::fputs((kClearLine + line_).c_str(), stderr);
    std::fflush(stderr);
    shown_ = true;
  }

  const bool enabled_;
  std::string line_;
  bool shown_ = false;
  bool run_mid_line_ = false;
};

}  // namespace

int RunWatch(int argc, char** argv) {
  CLI::App app{"Watch a run's memory (host RAM, swap, locked/pinned, GPU) over its whole process tree; predict "
               "when it runs out and optionally stop it first",
               "oomguard watch"};
  doctor::WatchOptions options;
  bool json = false;
  std::string interval_text = "1", stop_seconds_text = "60", window_text = "60", int_grace_text = "10",
              term_grace_text = "5";
  std::optional<uint64_t> host_limit, gpu_limit;
  std::string csv_path, plot_path;
  std::optional<int> pid_given;
  std::vector<std::string> command;
  app.add_option("--interval", interval_text, "seconds between samples, at least 0.01")->capture_default_str();
  ShowDefault(AddBytesOption(app, "--host-limit", &host_limit, "host memory limit for the tree"),
              "its use + MemAvailable + SwapFree");
  ShowDefault(AddBytesOption(app, "--gpu-limit", &gpu_limit, "GPU memory limit"),
              "the GPU's capacity less other processes' use");
  app.add_flag("--stop-before-oom", options.stop_before_oom,
               "stop the run (SIGINT, then SIGTERM, then SIGKILL) before it reaches a limit");
  app.add_option("--stop-seconds", stop_seconds_text, "stop when the predicted time to a limit is below this")
      ->capture_default_str();
  AddNumberOption(app, "--high-water", &options.high_water, 0.01, 1.0,
                  "stop when usage crosses this fraction of a limit");
  app.add_option("--window", window_text, "seconds of samples the growth estimate looks at")->capture_default_str();
  app.add_option("--sigint-grace", int_grace_text, "seconds from SIGINT to SIGTERM")->capture_default_str();
  app.add_option("--sigterm-grace", term_grace_text, "seconds from SIGTERM to SIGKILL")->capture_default_str();
  app.add_option("--csv", csv_path, "write every sample to this CSV file");
  app.add_option("--plot", plot_path, "write an SVG timeline to this file");
  AddNumberOption(app, "--pid", &pid_given, 1, 4194304, "watch a running process (and its children) instead of starting one");
  bool steps = false;
  app.add_flag("--steps", steps,
               "read a step counter from the run's stdout ('step 120', 'iter: 5', '[120/500]') to predict the "
               "step at which it runs out; the output passes through oomguard (use python -u)");
  app.add_flag("--json", json, "print the summary as JSON on stdout (the run's stdout goes to stderr)");
  app.add_option("command", command, "the command to run, after --");
  if (auto rc = Parse(app, "watch", argc, argv)) return *rc;
  const int pid = pid_given.value_or(0);

  for (auto [text, out, name] : {std::tuple{&interval_text, &options.interval_seconds, "--interval"},
                                 std::tuple{&stop_seconds_text, &options.stop_seconds, "--stop-seconds"},
                                 std::tuple{&window_text, &options.growth.window_seconds, "--window"},
                                 std::tuple{&int_grace_text, &options.sigint_grace_seconds, "--sigint-grace"},
                                 std::tuple{&term_grace_text, &options.sigterm_grace_seconds, "--sigterm-grace"}}) {
    Result<double> v = ParseSeconds(*text);
    if (!v) return UsageError("watch", std::string(name) + ": " + v.error());
    *out = *v;
  }
  if (options.interval_seconds < 0.01) {  // sampling /proc faster than this only burns the CPU
    return UsageError("watch", "--interval must be at least 0.01 s, got '" + interval_text + "'");
  }
  options.host_limit = host_limit;
  options.gpu_limit = gpu_limit;
  if (host_limit && *host_limit == 0) return UsageError("watch", "--host-limit must be more than 0 bytes");
  if (gpu_limit && *gpu_limit == 0) return UsageError("watch", "--gpu-limit must be more than 0 bytes");
  if (pid != 0 && !command.empty()) return UsageError("watch", "give either --pid or a command after --, not both");
  if (pid != 0 && steps) return UsageError("watch", "--steps needs a command to start: oomguard cannot read the output of --pid");
  if (pid == 0 && command.empty()) {
    return UsageError("watch", "nothing to watch: give a command after -- (oomguard watch -- python train.py) or --pid");
  }

  if (app.count("--csv") > 0 && csv_path.empty()) return UsageError("watch", "--csv needs a file name");
  if (app.count("--plot") > 0 && plot_path.empty()) return UsageError("watch", "--plot needs a file name");
  std::ofstream csv_file, plot_file;
  for (auto [path, file] : {std::pair{&csv_path, &csv_file}, std::pair{&plot_path, &plot_file}}) {
    if (path->empty()) continue;
    // Opened without blocking first: a FIFO nobody reads would otherwise hang here.
    int fd = open(path->c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd < 0) return UsageError("watch", "cannot write " + *path + ": " + std::strerror(errno));
    close(fd);
    file->open(*path);
    if (!*file) return UsageError("watch", "cannot write " + *path);
  }

  doctor::Sources sources;
  if (std::string error; !doctor::OpenSources(&sources, &error)) return UsageError("watch", error);

  // The live status is drawn only on a terminal. There the run's stderr
  // passes through a pipe, so the status line is cleared before its text.
  const bool live = StderrIsTerminal();
  std::string what;
  Result<std::unique_ptr<doctor::WatchedProcess>> process = MakeError("");
  if (pid != 0) {
    process = doctor::AttachToPid(pid);
    what = "pid " + std::to_string(pid);
  } else {
    process = doctor::StartChild(command, {.stdout_to_stderr = json, .capture_stdout = steps, .capture_stderr = live});
    what = "'" + command[0] + "'";
  }
  if (!process) return UsageError("watch", process.error());

  // A run we started gets SIGTERM and SIGHUP passed on (and Ctrl-C itself,
  // from the terminal). A --pid process is only observed: any of the three
  // ends the watch and the process is left alone.
  const bool attached = pid != 0;
  options.forward_signals = !attached;
  struct sigaction forward {}, interrupt {};
  forward.sa_handler = OnForwardedSignal;
  interrupt.sa_handler = attached ? OnForwardedSignal : OnInterrupt;
  sigaction(SIGTERM, &forward, nullptr);
  sigaction(SIGHUP, &forward, nullptr);
  sigaction(SIGINT, &interrupt, nullptr);

  std::unique_ptr<doctor::Clock> clock = doctor::MakeRealClock();
  std::unique_ptr<doctor::ProcessTable> table = doctor::MakeRealProcessTable();
  doctor::Watcher watcher(options, clock.get(), table.get(), sources.gpus.get());
  LiveStatus status(live);
  FILE* pass_to = json ? stderr : stdout;
  const bool pass_to_terminal = json || StdoutIsTerminal();
  doctor::WatchSummary summary = watcher.Run(
      **process,
      live ? doctor::SampleCallback([&status, min = options.growth.min_samples](const doctor::Sample& s,
                                                                               const doctor::Assessment& a) {
        status.Show(StatusLine(s, a, min));
      })
           : doctor::SampleCallback(),
      [] {
        int sig = g_forward_signal;
        g_forward_signal = 0;
        return sig;
      },
      [&](const std::string& out) { status.PassThrough(out, pass_to, pass_to_terminal); },
      [&](const std::string& err) { status.PassThrough(err, stderr, true); });
  status.Clear();

  if (csv_file.is_open() && !(csv_file << doctor::SamplesCsv(summary) << std::flush)) {
    PrintError("watch", "cannot write " + csv_path);
  }
  if (plot_file.is_open() && !(plot_file << doctor::TimelineSvg(summary) << std::flush)) {
    PrintError("watch", "cannot write " + plot_path);
  }
  if (json) {
    PrintJson(SummaryJson(summary, what, attached));
  } else {
    PrintSummary(summary, what);
  }
  return WatchExitCode(summary, attached);
}

}  // namespace oomguard::cli
