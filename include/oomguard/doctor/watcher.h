// `oomguard watch`: sample a run's process tree (host RAM, swap, locked and
// pinned memory, GPU memory per process), detect sustained growth, predict
// when the limit will be reached and, if asked, stop the run before it does:
// SIGINT first (a training script can checkpoint), then SIGTERM after
// WatchOptions::sigint_grace_seconds, then SIGKILL after
// sigterm_grace_seconds. If usage reaches critical_fraction of the limit
// during a grace period the next signal is sent at once.
//
// Every side effect is behind an interface: Clock (time, sleeping),
// WatchedProcess (the run: is it alive, send it a signal), ProcessTable
// (/proc) and MachineGpus (NVML). The Watcher never prints; it reports each
// sample through a callback and returns a WatchSummary.
// Thread safety: a Watcher runs on one thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oomguard/doctor/gpus.h"
#include "oomguard/doctor/growth.h"
#include "oomguard/doctor/process_tree.h"
#include "oomguard/doctor/step_counter.h"
#include "oomguard/result.h"

namespace oomguard::doctor {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual double NowSeconds() = 0;  // monotonic
  virtual void SleepSeconds(double seconds) = 0;
};
std::unique_ptr<Clock> MakeRealClock();

// How a run ended, as a shell reports it.
struct ExitStatus {
  std::optional<int> code;    // exit code, or 128+signal when killed; nullopt when unknown (--pid)
  std::optional<int> signal;  // the signal that killed it
};

class WatchedProcess {
 public:
  virtual ~WatchedProcess() = default;
  virtual int pid() const = 0;
  // nullopt while it runs; how it ended once it has (reaped, for a child).
  virtual std::optional<ExitStatus> Poll() = 0;
  virtual void Signal(int signal) = 0;
  // Output the run wrote since the last call, when it is captured (StartChild
  // with capture_stdout); "" otherwise. At most about 1 MiB a call: the rest
  // stays in the pipe for the next call.
  virtual std::string ReadOutput() { return ""; }
  // The same for the run's stderr (StartChild with capture_stderr).
  virtual std::string ReadErrorOutput() { return ""; }
  // The root of the tree to sample, and whether the root itself counts. A
  // child whose own process has ended but whose descendants still run (they
  // were adopted by this process, a child subreaper) is sampled as this
  // process's tree without this process.
  virtual int tree_root() const { return pid(); }
  virtual bool tree_root_counts() const { return true; }
  // Whether the run's own process is still running (its descendants may outlive it).
  virtual bool root_alive() { return !Poll().has_value(); }
};

// Where a child's stdout and stderr go. By default both are inherited.
struct ChildOutput {
  // stdout to our stderr (so that our stdout can hold only JSON).
  bool stdout_to_stderr = false;
  // stdout to a pipe that ReadOutput() drains (overrides stdout_to_stderr).
  bool capture_stdout = false;
  // stderr to a pipe that ReadErrorOutput() drains; with stdout_to_stderr
  // (and not capture_stdout) stdout goes to that pipe too, in order.
  bool capture_stderr = false;
};

// Starts argv[0] (searched in PATH) as a child of this process, its output
// going where `output` says. Fails with "cannot run 'X': <reason>" when it
// cannot be executed.
//
// This process becomes a child subreaper (PR_SET_CHILD_SUBREAPER): processes
// the run leaves behind when it exits are adopted here, and Poll() reports the
// run's exit status only once every one of them has ended too. The child gets
// PR_SET_PDEATHSIG(SIGTERM): if this process dies without forwarding a signal
// (kill -9), the run is sent SIGTERM instead of running on unobserved.
Result<std::unique_ptr<WatchedProcess>> StartChild(const std::vector<std::string>& argv, ChildOutput output = {});
// An existing process (--pid). Its exit status cannot be known. Signal() is
// called only by the stop decision (--stop-before-oom), never to pass on a
// signal this process received.
Result<std::unique_ptr<WatchedProcess>> AttachToPid(int pid);

inline constexpr size_t kMaxKeptSamples = 20000;

struct WatchOptions {
  double interval_seconds = 1.0;
  std::optional<uint64_t> host_limit;  // default: the tree's use + MemAvailable + SwapFree
  std::optional<uint64_t> gpu_limit;   // default: the GPU's capacity less other processes' use
  bool stop_before_oom = false;
  double stop_seconds = 60;            // stop when the predicted time to a limit is below this
  double high_water = 0.90;            // ... or usage crosses this fraction of a limit
  double critical_fraction = 0.98;     // escalate at once above this during a grace period
  double sigint_grace_seconds = 10;    // SIGINT -> SIGTERM
  double sigterm_grace_seconds = 5;    // SIGTERM -> SIGKILL
  // What a signal this process receives (Run's `received_signal`) does:
  // true (a run we started): pass it on to the run and keep watching until it
  // ends; false (--pid: a process we only observe): end the watch, leave the
  // process alone.
  bool forward_signals = true;
  GrowthOptions growth;
};

struct Sample {
  double seconds = 0;  // since the watch started
  ProcessMemory host;  // summed over the tree
  uint64_t host_bytes = 0;  // rss + swap
  uint64_t host_limit = 0;
  uint64_t gpu_bytes = 0;   // the tree's use on its busiest GPU
  uint64_t gpu_limit = 0;   // 0 when there is no GPU
  int processes = 0;
};

struct Assessment {
  Growth host, gpu;
  std::optional<double> host_seconds_to_limit, gpu_seconds_to_limit;
  std::optional<double> seconds_to_limit;  // the nearer of the two
  std::optional<long> step;                // the run's last step (with a step counter)
  std::optional<double> step_at_limit;     // the step at which the nearer limit comes
};

// "SIGTERM" for SIGTERM; "signal N" for one without a name here.
std::string SignalName(int sig);

// The pure stop decision for one sample: "" (keep going) or the reason.
std::string StopReason(const Sample& s, const Assessment& a, const WatchOptions& options);

struct WatchSummary {
  bool stopped = false;          // oomguard stopped the run
  std::string stop_reason;       // why (empty when not stopped)
  std::vector<std::string> signals_sent;  // by the stop decision: "SIGINT at 3.2 s", ...
  std::vector<std::string> signals_forwarded;  // received and passed on: "SIGTERM at 1.0 s"
  std::optional<int> interrupted_by;  // the signal that ended the watch (forward_signals false)
  // Processes that outlived the run's own process and were watched until they ended.
  int outlived_run = 0;
  // Processes of the tree still running when the watch ended, no longer watched (--pid).
  std::vector<int> left_unwatched;
  ExitStatus exit;
  // The samples kept for the CSV and the plot: at most kMaxKeptSamples, so a
  // run of weeks does not grow this process's memory. Past that, every
  // sample_stride-th sample is kept (the stride doubles each time the list is
  // full), and the last sample always.
  std::vector<Sample> samples;
  size_t samples_taken = 0;
  size_t sample_stride = 1;
  Sample peak;                   // the maximum of each field
  double host_growth_bytes_per_second = 0;
  double gpu_growth_bytes_per_second = 0;
  std::optional<double> predicted_seconds_to_limit;  // at the last sample, when growing
  std::optional<double> stopped_at_seconds;
  std::optional<long> last_step;           // from the run's output, with a step counter
  double steps_per_second = 0;
  std::optional<double> predicted_step_at_limit;  // with the prediction, when steps are known
  // "stopped_before_oom", "sustained_growth", "no_sustained_growth", "too_few_samples"
  std::string verdict;
  bool gpu_available = false;
};

using SampleCallback = std::function<void(const Sample&, const Assessment&)>;
// Receives the run's captured output (to pass it through), in the order it
// was written on that stream.
using OutputCallback = std::function<void(const std::string&)>;

class Watcher {
 public:
  // gpus may be null (no GPU sampling). All pointers must outlive Run().
  Watcher(WatchOptions options, Clock* clock, ProcessTable* table, MachineGpus* gpus)
      : options_(options), clock_(clock), table_(table), gpus_(gpus) {}

  // Samples until the process (and, for a child, what it left running) ends.
  // `received_signal`, when given, is polled: when it returns a signal number,
  // that signal is forwarded to the run (WatchOptions::forward_signals) or
  // ends the watch. The run's captured output is read at every poll (at
  // least every 50 ms) and handed to on_output (stdout: also read for step
  // counts) and on_error_output (stderr).
  WatchSummary Run(WatchedProcess& process, const SampleCallback& on_sample = nullptr,
                   const std::function<int()>& received_signal = nullptr,
                   const OutputCallback& on_output = nullptr, const OutputCallback& on_error_output = nullptr);

 private:
  Sample TakeSample(const WatchedProcess& process, double seconds, std::vector<int>* pids);
  WatchOptions options_;
  Clock* clock_;
  ProcessTable* table_;
  MachineGpus* gpus_;
  bool gpu_ok_ = false;
};

}  // namespace oomguard::doctor
