// How much CPU does `oomguard watch` cost the machine it protects?
//
// Runs a process tree of 9 processes (sh + 8 sleeps) for --seconds, twice in
// the same run:
//   baseline: the Watcher waits for the tree with an interval longer than the
//             run (one sample: the fixed cost of waiting and polling);
//   watched:  the Watcher samples every --interval seconds (default 1 s).
// CPU time is getrusage(RUSAGE_SELF) user+sys around each phase. It also
// times 500 back-to-back samples of the tree to give the cost of one sample.
// Writes JSON (date, machine, command, figures) to --out.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "bench_machine.h"
#include "oomguard/doctor/gpus.h"
#include "oomguard/doctor/watcher.h"

using namespace oomguard::doctor;

namespace {

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

double Wall() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Phase {
  double cpu_seconds, wall_seconds;
  size_t samples;
};

Phase RunPhase(double seconds, double interval) {
  std::string script = "for i in 1 2 3 4 5 6 7 8; do sleep " + std::to_string(seconds) + " & done; wait";
  auto child = StartChild({"sh", "-c", script});
  if (!child) {
    std::fprintf(stderr, "%s\n", child.error().c_str());
    std::exit(2);
  }
  WatchOptions o;
  o.interval_seconds = interval;
  auto clock = MakeRealClock();
  auto table = MakeRealProcessTable();
  auto gpus = MakeRealGpus();
  Watcher watcher(o, clock.get(), table.get(), gpus.get());
  double cpu0 = CpuSeconds(), wall0 = Wall();
  WatchSummary s = watcher.Run(**child);
  return {CpuSeconds() - cpu0, Wall() - wall0, s.samples.size()};
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 20, interval = 1;
  std::string out = "bench/results/watch_overhead.json";
  const char* usage = "usage: watch_overhead [--seconds S] [--interval S] [--out FILE.json]\n";
  for (int i = 1; i < argc; i += 2) {
    // Anything else (a typo, --help, a flag without its value) is refused before
    // the results file is touched.
    const bool known = !std::strcmp(argv[i], "--seconds") || !std::strcmp(argv[i], "--interval") ||
                       !std::strcmp(argv[i], "--out");
    if (!known || i + 1 >= argc) {
      std::fprintf(stderr, "watch_overhead: %s %s\n%s", known ? "a value is missing after" : "unknown option",
                   argv[i], usage);
      return 2;
    }
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--interval")) interval = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--out")) out = argv[i + 1];
  }
  if (!(seconds > 0) || !(interval > 0)) {
    std::fprintf(stderr, "watch_overhead: --seconds and --interval must be positive numbers\n%s", usage);
    return 2;
  }
  Phase baseline = RunPhase(seconds, seconds * 10);
  Phase watched = RunPhase(seconds, interval);

  // The cost of one sample of a 9-process tree (plus the GPU read, a no-op without a driver).
  auto child = StartChild({"sh", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 30 & done; wait"});
  auto table = MakeRealProcessTable();
  usleep(200000);
  const int n = 500;
  double cpu0 = CpuSeconds(), wall0 = Wall();
  size_t procs = 0;
  for (int i = 0; i < n; ++i) procs = SampleTree(*table, (*child)->pid()).pids.size();
  double per_sample_cpu = (CpuSeconds() - cpu0) / n, per_sample_wall = (Wall() - wall0) / n;
  child->reset();  // kills the tree's root; the sleeps end on their own

  double extra = watched.cpu_seconds - baseline.cpu_seconds;
  double core_fraction = watched.cpu_seconds / watched.wall_seconds;
  char date[64];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  nlohmann::json j = {
      {"benchmark", "watch_overhead"},
      {"date", date},
      {"machine",
       {{"uname", oomguard::bench::UnameText()},
        {"nproc", oomguard::bench::Nproc()},
        {"cpu_model", oomguard::bench::CpuModel()},
        {"loadavg_at_end", oomguard::bench::LoadAverage()}}},
      {"command", command},
      {"tree_processes", procs},
      {"interval_seconds", interval},
      {"baseline", {{"cpu_seconds", baseline.cpu_seconds}, {"wall_seconds", baseline.wall_seconds}, {"samples", baseline.samples}}},
      {"watched", {{"cpu_seconds", watched.cpu_seconds}, {"wall_seconds", watched.wall_seconds}, {"samples", watched.samples}}},
      {"watched_over_baseline_cpu_ratio", baseline.cpu_seconds > 0 ? watched.cpu_seconds / baseline.cpu_seconds : 0},
      {"sampling_cpu_seconds", extra},
      {"core_fraction_watched", core_fraction},
      {"core_percent_watched", 100 * core_fraction},
      {"per_sample_cpu_seconds", per_sample_cpu},
      {"per_sample_wall_seconds", per_sample_wall},
      {"budget_core_percent", 1.0},
      {"within_budget", 100 * core_fraction <= 1.0},
  };
  std::ofstream(out) << j.dump(2) << "\n";
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}
