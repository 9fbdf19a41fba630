// The watch loop with a fake clock, a fake /proc and a fake run: the stop
// decision, the signal escalation and the summary, without real processes.
#include "oomguard/doctor/watcher.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "oomguard/doctor/watch_report.h"

namespace oomguard::doctor {
namespace {

constexpr uint64_t kMiB = 1 << 20;

class FakeClock : public Clock {
 public:
  double NowSeconds() override { return now; }
  // Kept on a microsecond grid so that sample times are exact.
  void SleepSeconds(double s) override { now = std::round((now + s) * 1e6) / 1e6; }
  double now = 1000;  // not zero: the watcher must use differences
};

// A run whose memory is a function of time; it exits on the signals it honours.
class FakeRun : public WatchedProcess {
 public:
  FakeRun(FakeClock* clock, std::set<int> honoured, double exits_at = 1e9, int exit_code = 0)
      : clock_(clock), honoured_(std::move(honoured)), exits_at_(exits_at), exit_code_(exit_code) {}
  int pid() const override { return 100; }
  std::optional<ExitStatus> Poll() override {
    if (killed_by_) return ExitStatus{128 + killed_by_, killed_by_};
    if (clock_->now - 1000 >= exits_at_) return ExitStatus{exit_code_, std::nullopt};
    return std::nullopt;
  }
  void Signal(int sig) override {
    signals.push_back({sig, clock_->now - 1000});
    if (honoured_.count(sig) || sig == SIGKILL) killed_by_ = sig;
  }
  std::vector<std::pair<int, double>> signals;

 private:
  FakeClock* clock_;
  std::set<int> honoured_;
  double exits_at_;
  int exit_code_;
  int killed_by_ = 0;
};

// pid 100 (the run) with child 101 and grandchild 102; 200 is unrelated.
class FakeTable : public ProcessTable {
 public:
  FakeTable(FakeClock* clock, std::function<uint64_t(double)> rss) : clock_(clock), rss_(std::move(rss)) {}
  std::vector<ProcessParent> ListProcesses() override { return {{100, 1}, {101, 100}, {102, 101}, {200, 1}}; }
  std::optional<ProcessMemory> Memory(int pid) override {
    double t = clock_->now - 1000;
    switch (pid) {
      case 100: return ProcessMemory{rss_(t), 0, 0, 0};
      case 101: return ProcessMemory{10 * kMiB, 2 * kMiB, 1 * kMiB, 0};
      case 102: return ProcessMemory{5 * kMiB, 0, 0, 3 * kMiB};
      case 200: return ProcessMemory{999 * kMiB, 0, 0, 0};
    }
    return std::nullopt;
  }
  std::optional<uint64_t> HostAvailableBytes() override { return available; }
  std::optional<uint64_t> available = 8000 * kMiB;

 private:
  FakeClock* clock_;
  std::function<uint64_t(double)> rss_;
};

WatchOptions Options() {
  WatchOptions o;
  o.interval_seconds = 1;
  o.host_limit = 1024 * kMiB;
  o.stop_before_oom = true;
  return o;
}

TEST(Watcher, StopsALeakBeforeTheLimitWithSigint) {
  FakeClock clock;
  FakeTable table(&clock, [](double t) { return uint64_t(100 * kMiB + 20 * kMiB * t); });
  FakeRun run(&clock, {SIGINT});
  WatchSummary s = Watcher(Options(), &clock, &table, nullptr).Run(run);
  EXPECT_TRUE(s.stopped);
  EXPECT_EQ(s.verdict, "stopped_before_oom");
  ASSERT_EQ(run.signals.size(), 1u);
  EXPECT_EQ(run.signals[0].first, SIGINT);
  // Ten samples (min_samples) at 1 s: decided at t=9 s, with 117 + 20*9 = 297 MiB in the tree.
  EXPECT_NEAR(*s.stopped_at_seconds, 9, 1e-6);
  EXPECT_NEAR(s.host_growth_bytes_per_second, 20.0 * kMiB, 1);
  EXPECT_NEAR(*s.predicted_seconds_to_limit, (1024.0 - 297) / 20, 0.01);
  EXPECT_LT(s.peak.host_bytes, 1024 * kMiB);
  EXPECT_EQ(s.stop_reason, "host memory grows 20.00 MiB/s and reaches the limit 1.00 GiB in 36.4 s");
  EXPECT_EQ(s.signals_sent, (std::vector<std::string>{"SIGINT at 9.0 s"}));
  EXPECT_EQ(*s.exit.signal, SIGINT);
}

TEST(Watcher, SumsTheWholeTreeOnly) {
  FakeClock clock;
  FakeTable table(&clock, [](double) { return 50 * kMiB; });
  FakeRun run(&clock, {}, /*exits_at=*/3.5);
  WatchSummary s = Watcher(Options(), &clock, &table, nullptr).Run(run);
  ASSERT_FALSE(s.samples.empty());
  const Sample& x = s.samples[0];
  EXPECT_EQ(x.processes, 3);
  EXPECT_EQ(x.host.rss, 65 * kMiB);       // 50 + 10 + 5; pid 200 is not ours
  EXPECT_EQ(x.host.swap, 2 * kMiB);
  EXPECT_EQ(x.host_bytes, 67 * kMiB);
  EXPECT_EQ(x.host.locked, 1 * kMiB);
  EXPECT_EQ(x.host.pinned, 3 * kMiB);
  EXPECT_EQ(s.samples.size(), 4u);        // t = 0, 1, 2, 3
  EXPECT_EQ(s.verdict, "too_few_samples");
  EXPECT_EQ(*s.exit.code, 0);
}

TEST(Watcher, EscalatesWhenTheRunIgnoresSigint) {
  FakeClock clock;
  FakeTable table(&clock, [](double t) { return uint64_t(100 * kMiB + 5 * kMiB * t); });
  WatchOptions o = Options();
  o.stop_seconds = 1000;  // stop as soon as growth is sustained
  o.sigint_grace_seconds = 10;
  o.sigterm_grace_seconds = 5;
  FakeRun run(&clock, {});  // ignores SIGINT and SIGTERM
  WatchSummary s = Watcher(o, &clock, &table, nullptr).Run(run);
  ASSERT_EQ(run.signals.size(), 3u);
  EXPECT_EQ(run.signals[0].first, SIGINT);
  EXPECT_NEAR(run.signals[0].second, 9, 1e-6);
  EXPECT_EQ(run.signals[1].first, SIGTERM);
  EXPECT_NEAR(run.signals[1].second, 19, 1e-6);  // after the 10 s SIGINT grace
  EXPECT_EQ(run.signals[2].first, SIGKILL);
  EXPECT_NEAR(run.signals[2].second, 24, 1e-6);  // after the 5 s SIGTERM grace
  EXPECT_EQ(*s.exit.code, 128 + SIGKILL);
  EXPECT_TRUE(s.stopped);
}

TEST(Watcher, CriticalUsageSkipsTheGracePeriod) {
  FakeClock clock;
  // Leaks 80 MiB/s: 98% of 1 GiB comes 4 s after the SIGINT at t=9.
  FakeTable table(&clock, [](double t) { return uint64_t(80 * kMiB * t); });
  WatchOptions o = Options();
  o.high_water = 1.0;
  o.stop_seconds = 1000;
  FakeRun run(&clock, {});
  Watcher(o, &clock, &table, nullptr).Run(run);
  ASSERT_GE(run.signals.size(), 2u);
  EXPECT_EQ(run.signals[0].first, SIGINT);
  EXPECT_EQ(run.signals[1].first, SIGTERM);
  EXPECT_NEAR(run.signals[1].second, 13, 1e-6);  // 17 + 80*13 MiB >= 98% of 1 GiB
  EXPECT_LT(run.signals[1].second, 9.0 + 10);  // well before the 10 s grace ends
}

TEST(Watcher, HighWaterStopsEvenWithoutGrowth) {
  FakeClock clock;
  FakeTable table(&clock, [](double t) { return t < 2 ? 100 * kMiB : 950 * kMiB; });
  FakeRun run(&clock, {SIGINT});
  WatchSummary s = Watcher(Options(), &clock, &table, nullptr).Run(run);
  EXPECT_TRUE(s.stopped);
  EXPECT_NEAR(*s.stopped_at_seconds, 2, 1e-6);
  EXPECT_EQ(s.stop_reason, "host memory 967.00 MiB crossed 90% of the limit 1.00 GiB");
}

TEST(Watcher, PlateauIsNotStoppedAndKeepsTheExitStatus) {
  FakeClock clock;
  FakeTable table(&clock, [](double t) { return uint64_t(100 * kMiB + 30 * kMiB * std::min(t, 5.0)); });
  FakeRun run(&clock, {SIGINT}, /*exits_at=*/40, /*exit_code=*/3);
  WatchSummary s = Watcher(Options(), &clock, &table, nullptr).Run(run);
  EXPECT_FALSE(s.stopped);
  EXPECT_TRUE(run.signals.empty());
  EXPECT_EQ(s.verdict, "no_sustained_growth");
  EXPECT_EQ(*s.exit.code, 3);
  EXPECT_FALSE(s.predicted_seconds_to_limit.has_value());
}

TEST(Watcher, DefaultHostLimitIsUsePlusAvailable) {
  FakeClock clock;
  FakeTable table(&clock, [](double) { return 50 * kMiB; });
  FakeRun run(&clock, {}, 1.5);
  WatchOptions o = Options();
  o.host_limit.reset();
  WatchSummary s = Watcher(o, &clock, &table, nullptr).Run(run);
  EXPECT_EQ(s.samples[0].host_limit, 67 * kMiB + 8000 * kMiB);
}

TEST(Watcher, ForwardsSignalsItIsAskedTo) {
  FakeClock clock;
  FakeTable table(&clock, [](double) { return 50 * kMiB; });
  FakeRun run(&clock, {SIGTERM});
  int calls = 0;
  WatchSummary s = Watcher(Options(), &clock, &table, nullptr).Run(run, nullptr, [&] {
    return ++calls == 30 ? SIGTERM : 0;
  });
  ASSERT_EQ(run.signals.size(), 1u);
  EXPECT_EQ(run.signals[0].first, SIGTERM);
  EXPECT_FALSE(s.stopped);  // the user stopped it, not oomguard
  EXPECT_EQ(*s.exit.signal, SIGTERM);
  ASSERT_EQ(s.signals_forwarded.size(), 1u);
  EXPECT_EQ(s.signals_forwarded[0].rfind("SIGTERM at ", 0), 0u);
  EXPECT_TRUE(s.signals_sent.empty());
}

// A run of half a day at one sample a second keeps at most kMaxKeptSamples
// samples (every 4th by its end), the last one included: memory stays bounded.
TEST(Watcher, LongRunKeepsABoundedNumberOfSamples) {
  FakeClock clock;
  FakeTable table(&clock, [](double) { return 50 * kMiB; });
  FakeRun run(&clock, {}, 45000.5);
  WatchOptions o = Options();
  o.stop_before_oom = false;
  o.growth.window_seconds = 10;
  WatchSummary s = Watcher(o, &clock, &table, nullptr).Run(run);
  EXPECT_GE(s.samples_taken, 45000u);
  EXPECT_LE(s.samples.size(), kMaxKeptSamples);
  EXPECT_EQ(s.sample_stride, 4u);
  EXPECT_NEAR(s.samples.back().seconds, 45000, 1.0);
  EXPECT_EQ(s.samples[1].seconds - s.samples[0].seconds, 4.0);
  EXPECT_EQ(s.verdict, "no_sustained_growth");
}

// Issue 15.1: a process we only observe (--pid) is never sent a signal we
// received; the signal ends the watch, and its descendants are named as left.
TEST(Watcher, ObservedProcessIsNotSentReceivedSignals) {
  FakeClock clock;
  FakeTable table(&clock, [](double) { return 50 * kMiB; });
  FakeRun run(&clock, {SIGTERM, SIGHUP, SIGINT});
  WatchOptions o = Options();
  o.forward_signals = false;
  int calls = 0;
  WatchSummary s = Watcher(o, &clock, &table, nullptr).Run(run, nullptr, [&] {
    return ++calls == 30 ? SIGHUP : 0;
  });
  EXPECT_TRUE(run.signals.empty());
  ASSERT_TRUE(s.interrupted_by.has_value());
  EXPECT_EQ(*s.interrupted_by, SIGHUP);
  EXPECT_FALSE(s.stopped);
  EXPECT_TRUE(s.signals_forwarded.empty());
  EXPECT_FALSE(s.samples.empty());
  EXPECT_EQ(s.left_unwatched, (std::vector<int>{101, 102}));
}

// A run that prints two training steps per second.
class SteppingRun : public FakeRun {
 public:
  SteppingRun(FakeClock* clock) : FakeRun(clock, {SIGINT}), clock_(clock) {}
  std::string ReadOutput() override {
    std::string out;
    for (long due = static_cast<long>((clock_->now - 1000) * 2); printed_ < due;) {
      out += "step " + std::to_string(++printed_) + " loss 1.0\n";
    }
    return out;
  }

 private:
  FakeClock* clock_;
  long printed_ = 0;
};

TEST(Watcher, PredictsTheStepAtTheLimit) {
  FakeClock clock;
  FakeTable table(&clock, [](double t) { return uint64_t(100 * kMiB + 20 * kMiB * t); });
  SteppingRun run(&clock);
  std::string passed_through;
  WatchSummary s = Watcher(Options(), &clock, &table, nullptr)
                       .Run(run, nullptr, nullptr, [&](const std::string& out) { passed_through += out; });
  EXPECT_TRUE(s.stopped);
  EXPECT_NEAR(s.steps_per_second, 2.0, 0.05);
  ASSERT_TRUE(s.predicted_step_at_limit.has_value());
  // Stopped at t=9 (step 18) with 36.35 s to the limit: step 18 + 2 * 36.35.
  EXPECT_NEAR(*s.predicted_step_at_limit, 18 + 2 * 36.35, 0.5);
  EXPECT_EQ(passed_through.rfind("step 1 loss 1.0\nstep 2 loss 1.0\n", 0), 0u);
}

// A run that writes a line on stderr every second and, on stdout, a step
// every two seconds.
class ErrorWritingRun : public FakeRun {
 public:
  ErrorWritingRun(FakeClock* clock) : FakeRun(clock, {}, /*exits_at=*/6.5), clock_(clock) {}
  std::string ReadOutput() override { return Due(2, &steps_, "step "); }
  std::string ReadErrorOutput() override { return Due(1, &warnings_, "warning step 999 "); }

 private:
  std::string Due(double every, long* written, const std::string& text) {
    std::string out;
    while (*written < static_cast<long>((clock_->now - 1000) / every)) out += text + std::to_string(++*written) + "\n";
    return out;
  }
  FakeClock* clock_;
  long steps_ = 0, warnings_ = 0;
};

// The run's stderr is handed on as it comes, in order, apart from its stdout,
// and is not read for steps.
TEST(Watcher, PassesTheRunsStderrOnItsOwn) {
  FakeClock clock;
  FakeTable table(&clock, [](double) { return 100 * kMiB; });
  ErrorWritingRun run(&clock);
  std::string out, err;
  int err_calls = 0;
  WatchSummary s = Watcher(Options(), &clock, &table, nullptr)
                       .Run(run, nullptr, nullptr, [&](const std::string& o) { out += o; },
                            [&](const std::string& e) {
                              err += e;
                              ++err_calls;
                            });
  EXPECT_EQ(out, "step 1\nstep 2\nstep 3\n");
  EXPECT_EQ(err, "warning step 999 1\nwarning step 999 2\nwarning step 999 3\nwarning step 999 4\n"
                 "warning step 999 5\nwarning step 999 6\n");
  EXPECT_EQ(err_calls, 6);  // each line as soon as it was written, not all at the end
  ASSERT_TRUE(s.last_step.has_value());
  EXPECT_EQ(*s.last_step, 3);
}

// A GPU whose memory the run's child (pid 101) fills up.
class FakeGpuLeak : public MachineGpus {
 public:
  explicit FakeGpuLeak(FakeClock* clock) : clock_(clock) {}
  Result<GpuSnapshot> Read() override {
    GpuSnapshot s;
    s.driver = DriverVersions{"550.54.14", 12040};
    Gpu g;
    g.total_bytes = 24576 * kMiB;
    uint64_t mine = uint64_t(2048 * kMiB + 512 * kMiB * (clock_->now - 1000));
    g.processes = {{101, mine}, {777, 4096 * kMiB}};  // 777: someone else's job
    g.used_bytes = mine + 4096 * kMiB;
    s.gpus = {g};
    return s;
  }

 private:
  FakeClock* clock_;
};

TEST(Watcher, GpuLeakStopsTheRun) {
  FakeClock clock;
  FakeTable table(&clock, [](double) { return 500 * kMiB; });
  FakeGpuLeak gpus(&clock);
  WatchOptions o = Options();
  o.host_limit.reset();
  FakeRun run(&clock, {SIGINT});
  WatchSummary s = Watcher(o, &clock, &table, &gpus).Run(run);
  EXPECT_TRUE(s.gpu_available);
  EXPECT_TRUE(s.stopped);
  EXPECT_EQ(s.samples[0].gpu_limit, 20480 * kMiB);  // capacity less the other job
  EXPECT_EQ(s.samples[0].gpu_bytes, 2048 * kMiB);
  EXPECT_NEAR(s.gpu_growth_bytes_per_second, 512.0 * kMiB, 1);
  EXPECT_EQ(s.stop_reason.rfind("GPU memory grows 512.00 MiB/s", 0), 0u) << s.stop_reason;
}

TEST(WatchReport, CsvHasOneLinePerSample) {
  FakeClock clock;
  FakeTable table(&clock, [](double t) { return uint64_t(100 * kMiB + 20 * kMiB * t); });
  FakeRun run(&clock, {SIGINT});
  WatchSummary s = Watcher(Options(), &clock, &table, nullptr).Run(run);
  std::string csv = SamplesCsv(s);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "seconds,rss_bytes,swap_bytes,locked_bytes,pinned_bytes,host_bytes,host_limit_bytes,gpu_bytes,"
            "gpu_limit_bytes,processes");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<long>(s.samples.size()) + 1);
  EXPECT_NE(csv.find("\n1.000,141557760,2097152,1048576,3145728,143654912,1073741824,0,0,3\n"), std::string::npos);
  std::string svg = TimelineSvg(s);
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("class=\"limit\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"prediction\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"stop\""), std::string::npos);
  EXPECT_NE(svg.find("host limit 1.00 GiB"), std::string::npos);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '<') , std::count(svg.begin(), svg.end(), '>'));
}


TEST(WatchReport, PredictionIsDrawnAtTrueScaleAndZeroSeriesAreHidden) {
  FakeClock clock;
  FakeTable table(&clock, [](double t) { return uint64_t(100 * kMiB + 20 * kMiB * t); });
  FakeRun run(&clock, {SIGINT});
  WatchSummary s = Watcher(Options(), &clock, &table, nullptr).Run(run);
  ASSERT_TRUE(s.predicted_seconds_to_limit);
  std::string svg = TimelineSvg(s);
  // The projection panel's time axis reaches the predicted time: its last tick is at or past it.
  size_t panel = svg.find("prediction at true scale");
  ASSERT_NE(panel, std::string::npos);
  double last_tick = 0;
  for (size_t at = svg.find("class=\"xtick\"", panel); at != std::string::npos; at = svg.find("class=\"xtick\"", at + 1)) {
    size_t gt = svg.find('>', at);
    last_tick = std::stod(svg.substr(gt + 1));
  }
  double predicted = *s.stopped_at_seconds + *s.predicted_seconds_to_limit;
  EXPECT_GE(last_tick, predicted);
  // The predicted point lies inside the plot box (x in [80, 880]), not at the edge of a shorter axis.
  const std::string dot_attr = "class=\"prediction-end\" cx=\"";
  size_t dot = svg.find(dot_attr);
  ASSERT_NE(dot, std::string::npos);
  double cx = std::stod(svg.substr(dot + dot_attr.size()));
  EXPECT_GT(cx, 80);
  EXPECT_LT(cx, 880);
  EXPECT_NE(svg.find("memory reaches its limit at "), std::string::npos);
  // No GPU was sampled: the all-zero GPU series is not drawn.
  EXPECT_EQ(svg.find("<title>gpu</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>host (rss+swap)</title>"), std::string::npos);
}

}  // namespace
}  // namespace oomguard::doctor
