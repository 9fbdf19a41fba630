#include "oomguard/doctor/watcher.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "oomguard/units.h"

namespace oomguard::doctor {
namespace {

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

void KeepPeak(const Sample& s, Sample* peak) {
  peak->host.rss = std::max(peak->host.rss, s.host.rss);
  peak->host.swap = std::max(peak->host.swap, s.host.swap);
  peak->host.locked = std::max(peak->host.locked, s.host.locked);
  peak->host.pinned = std::max(peak->host.pinned, s.host.pinned);
  peak->host_bytes = std::max(peak->host_bytes, s.host_bytes);
  peak->gpu_bytes = std::max(peak->gpu_bytes, s.gpu_bytes);
  peak->processes = std::max(peak->processes, s.processes);
  peak->seconds = s.seconds;
}

}  // namespace

std::string SignalName(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGKILL: return "SIGKILL";
    case SIGQUIT: return "SIGQUIT";
  }
  return "signal " + std::to_string(sig);
}

std::string StopReason(const Sample& s, const Assessment& a, const WatchOptions& o) {
  struct Series {
    const char* name;
    uint64_t used, limit;
    const Growth* growth;
    std::optional<double> eta;
  };
  for (const Series& x : {Series{"host memory", s.host_bytes, s.host_limit, &a.host, a.host_seconds_to_limit},
                          Series{"GPU memory", s.gpu_bytes, s.gpu_limit, &a.gpu, a.gpu_seconds_to_limit}}) {
    if (x.limit == 0) continue;
    if (static_cast<double>(x.used) >= o.high_water * static_cast<double>(x.limit)) {
      char pct[16];
      std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * o.high_water);
      return std::string(x.name) + " " + FormatBytes(x.used) + " crossed " + pct + " of the limit " +
             FormatBytes(x.limit);
    }
    if (x.growth->sustained && x.eta && *x.eta < o.stop_seconds) {
      return std::string(x.name) + " grows " + FormatBytes(static_cast<uint64_t>(x.growth->bytes_per_second)) +
             "/s and reaches the limit " + FormatBytes(x.limit) + " in " + Seconds(*x.eta);
    }
  }
  return "";
}

Sample Watcher::TakeSample(const WatchedProcess& process, double seconds, std::vector<int>* pids) {
  Sample s;
  s.seconds = seconds;
  TreeMemory tree = SampleTree(*table_, process.tree_root(), process.tree_root_counts());
  *pids = tree.pids;
  s.host = tree.total;
  s.host_bytes = tree.total.rss + tree.total.swap;
  s.processes = static_cast<int>(tree.pids.size());
  if (options_.host_limit) {
    s.host_limit = *options_.host_limit;
  } else if (std::optional<uint64_t> avail = table_->HostAvailableBytes()) {
    s.host_limit = s.host_bytes + *avail;
  }
  if (gpus_ != nullptr) {
    Result<GpuSnapshot> snap = gpus_->Read();
    if (snap && snap->driver && !snap->gpus.empty()) {
      gpu_ok_ = true;
      std::set<uint32_t> pids(tree.pids.begin(), tree.pids.end());
      const Gpu* busiest = nullptr;
      uint64_t busiest_bytes = 0;
      for (const Gpu& g : snap->gpus) {
        uint64_t mine = 0;
        for (const GpuProcess& p : g.processes) {
          if (pids.count(p.pid)) mine += p.used_bytes;
        }
        if (busiest == nullptr || mine > busiest_bytes) {
          busiest = &g;
          busiest_bytes = mine;
        }
      }
      s.gpu_bytes = busiest_bytes;
      uint64_t others = busiest->used_bytes > busiest_bytes ? busiest->used_bytes - busiest_bytes : 0;
      s.gpu_limit = options_.gpu_limit ? *options_.gpu_limit
                                       : (busiest->total_bytes > others ? busiest->total_bytes - others : 0);
    }
  }
  if (!gpu_ok_ && options_.gpu_limit) s.gpu_limit = *options_.gpu_limit;
  return s;
}

WatchSummary Watcher::Run(WatchedProcess& process, const SampleCallback& on_sample,
                          const std::function<int()>& received_signal, const OutputCallback& on_output,
                          const OutputCallback& on_error_output) {
  WatchSummary summary;
  StepCounter steps;
  auto pass_output = [&](double seconds) {  // seconds since the start
    std::string out = process.ReadOutput();
    if (!out.empty()) {
      steps.Feed(out, seconds);
      if (on_output) on_output(out);
    }
    std::string err = process.ReadErrorOutput();
    if (!err.empty() && on_error_output) on_error_output(err);
  };
  GrowthDetector host_growth(options_.growth), gpu_growth(options_.growth);
  const double start = clock_->NowSeconds();
  Assessment last, at_stop;
  int signals_sent = 0;  // 0 none, 1 SIGINT, 2 SIGTERM, 3 SIGKILL
  double last_signal_at = 0;
  double next_sample = start;
  const double poll = std::min(options_.interval_seconds, 0.05);

  auto send = [&](int sig, const char* name, double now) {
    process.Signal(sig);
    summary.signals_sent.push_back(std::string(name) + " at " + Seconds(now - start));
    last_signal_at = now;
  };

  std::vector<int> last_pids;
  std::optional<Sample> last_sample;
  bool root_ended = false;
  while (true) {
    if (std::optional<ExitStatus> done = process.Poll()) {
      summary.exit = *done;
      pass_output(clock_->NowSeconds() - start);
      break;
    }
    pass_output(clock_->NowSeconds() - start);
    if (received_signal) {
      if (int sig = received_signal(); sig != 0) {
        if (!options_.forward_signals) {
          summary.interrupted_by = sig;
          break;
        }
        process.Signal(sig);
        summary.signals_forwarded.push_back(SignalName(sig) + " at " + Seconds(clock_->NowSeconds() - start));
      }
    }
    if (!root_ended && !process.root_alive()) root_ended = true;
    double now = clock_->NowSeconds();
    if (now + 1e-9 < next_sample) {
      clock_->SleepSeconds(std::min(poll, next_sample - now));
      continue;
    }
    next_sample += options_.interval_seconds;
    if (next_sample < now) next_sample = now + options_.interval_seconds;

    std::vector<int> pids;
    Sample s = TakeSample(process, now - start, &pids);
    if (root_ended) summary.outlived_run = std::max(summary.outlived_run, s.processes);
    if (s.processes == 0) {  // gone between Poll() and the sample: let Poll() reap it
      clock_->SleepSeconds(poll);
      continue;
    }
    host_growth.Add(s.seconds, static_cast<double>(s.host_bytes));
    if (s.gpu_limit > 0 || s.gpu_bytes > 0) gpu_growth.Add(s.seconds, static_cast<double>(s.gpu_bytes));
    Assessment a;
    a.host = host_growth.Assess();
    a.gpu = gpu_growth.Assess();
    if (a.host.sustained && s.host_limit > 0) {
      a.host_seconds_to_limit = SecondsToLimit(s.host_bytes, s.host_limit, a.host.bytes_per_second);
    }
    if (a.gpu.sustained && s.gpu_limit > 0) {
      a.gpu_seconds_to_limit = SecondsToLimit(s.gpu_bytes, s.gpu_limit, a.gpu.bytes_per_second);
    }
    for (const std::optional<double>& eta : {a.host_seconds_to_limit, a.gpu_seconds_to_limit}) {
      if (eta && (!a.seconds_to_limit || *eta < *a.seconds_to_limit)) a.seconds_to_limit = eta;
    }
    a.step = steps.last_step();
    if (a.step && a.seconds_to_limit && steps.steps_per_second() > 0) {
      a.step_at_limit = *a.step + *a.seconds_to_limit * steps.steps_per_second();
    }
    last_pids = std::move(pids);
    if (summary.samples_taken++ % summary.sample_stride == 0) {
      summary.samples.push_back(s);
      if (summary.samples.size() >= kMaxKeptSamples) {  // keep every other one, and half as many from now on
        size_t kept = 0;
        for (size_t i = 0; i < summary.samples.size(); i += 2) summary.samples[kept++] = summary.samples[i];
        summary.samples.resize(kept);
        summary.sample_stride *= 2;
      }
    }
    last_sample = s;
    KeepPeak(s, &summary.peak);
    last = a;
    if (on_sample) on_sample(s, a);

    if (options_.stop_before_oom) {
      if (signals_sent == 0) {
        std::string reason = StopReason(s, a, options_);
        if (!reason.empty()) {
          summary.stopped = true;
          summary.stop_reason = reason;
          summary.stopped_at_seconds = s.seconds;
          at_stop = a;
          send(SIGINT, "SIGINT", now);
          signals_sent = 1;
        }
      } else if (signals_sent < 3) {
        bool critical =
            (s.host_limit > 0 && s.host_bytes >= options_.critical_fraction * static_cast<double>(s.host_limit)) ||
            (s.gpu_limit > 0 && s.gpu_bytes >= options_.critical_fraction * static_cast<double>(s.gpu_limit));
        double grace = signals_sent == 1 ? options_.sigint_grace_seconds : options_.sigterm_grace_seconds;
        if (critical || now - last_signal_at >= grace) {
          if (signals_sent == 1) {
            send(SIGTERM, "SIGTERM", now);
          } else {
            send(SIGKILL, "SIGKILL", now);
          }
          ++signals_sent;
        }
      }
    }
  }

  if (last_sample && (summary.samples.empty() || summary.samples.back().seconds != last_sample->seconds)) {
    summary.samples.push_back(*last_sample);
  }
  // Descendants of a process we only observe outlive it under another parent:
  // say which ones were still running when the watch ended.
  for (int pid : last_pids) {
    if (pid != process.pid() && table_->Memory(pid)) summary.left_unwatched.push_back(pid);
  }
  summary.gpu_available = gpu_ok_;
  summary.last_step = steps.last_step();
  summary.steps_per_second = steps.steps_per_second();
  summary.host_growth_bytes_per_second = last.host.bytes_per_second;
  summary.gpu_growth_bytes_per_second = last.gpu.bytes_per_second;
  if (summary.stopped) {
    // The rate and prediction that made the decision, not the last sample's
    // (after SIGINT the run shrinks as it exits).
    summary.host_growth_bytes_per_second = at_stop.host.bytes_per_second;
    summary.gpu_growth_bytes_per_second = at_stop.gpu.bytes_per_second;
    summary.predicted_seconds_to_limit = at_stop.seconds_to_limit;
    summary.predicted_step_at_limit = at_stop.step_at_limit;
    summary.verdict = "stopped_before_oom";
  } else if (last.host.sustained || last.gpu.sustained) {
    summary.verdict = "sustained_growth";
    summary.predicted_seconds_to_limit = last.seconds_to_limit;
    summary.predicted_step_at_limit = last.step_at_limit;
  } else if (summary.samples_taken < options_.growth.min_samples) {
    summary.verdict = "too_few_samples";
  } else {
    summary.verdict = "no_sustained_growth";
  }
  return summary;
}

}  // namespace oomguard::doctor
