// Throughput of `oomguard explain` on a generated, realistic training log
// (mostly ordinary lines, some tracebacks and warnings, a few OOM messages),
// against a baseline that only splits the same bytes into lines.
//
//   build-bench/src/explain/explain_bench --benchmark_out=bench/results/explain_bench.json
//       --benchmark_out_format=json   (one command line)
//
// Besides Google Benchmark's JSON it writes bench/results/explain_bench_summary.json
// (or $EXPLAIN_BENCH_SUMMARY) with the date, machine, command and the ratio of
// explain throughput to the line-splitting baseline measured in the same run.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "bench_machine.h"
#include "oomguard/explain/explainer.h"

namespace {

using oomguard::explain::ExplainFile;
using oomguard::explain::Explainer;
using oomguard::explain::Report;

// About `bytes` of log: Keras/PyTorch-style progress lines, tracebacks,
// library chatter, and one OOM message per ~20k lines.
std::string MakeLog(size_t bytes) {
  std::mt19937 rng(7);
  std::string log;
  log.reserve(bytes + 4096);
  uint64_t step = 0;
  while (log.size() < bytes) {
    ++step;
    switch (rng() % 10) {
      case 0:
        log += "2024-05-01 12:" + std::to_string(step % 60) + ":07.123456: I tensorflow/core/common_runtime/gpu/"
               "gpu_device.cc:1525] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 22302 MB memory\n";
        break;
      case 1:
        log += "  File \"/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py\", line 1501, in "
               "_call_impl\n";
        break;
      case 2:
        log += "[rank" + std::to_string(step % 8) + "]: step " + std::to_string(step) +
               " | loss 2.3412 | grad_norm 0.812 | lr 3.0e-04 | 812.3 samples/s | mem 71.2 GiB\n";
        break;
      default:
        log += "Epoch 3/100 " + std::to_string(step % 1000) + "/1000 [=====>........] - ETA: 3:59 - loss: 1.8528e-05 "
               "- binary_accuracy: 0.0661\n";
    }
    if (step % 20000 == 0) {
      log += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 226.00 MiB. GPU 0 has a total capacity "
             "of 15.70 GiB of which 210.38 MiB is free. Including non-PyTorch memory, this process has 15.48 GiB "
             "memory in use. Of the allocated memory 14.81 GiB is allocated by PyTorch, and 336.73 MiB is reserved "
             "by PyTorch but unallocated.\n";
    }
  }
  return log;
}

// About `bytes` of a log dense with out-of-memory lines: a run that prints its
// OOM every step on every rank, TensorFlow BFC allocator dumps (chunk, bin and
// summary lines) and TF2 eager "failed to allocate memory" errors.
std::string MakeDenseLog(size_t bytes) {
  std::mt19937 rng(11);
  std::string log;
  log.reserve(bytes + 4096);
  uint64_t step = 0;
  char buf[512];
  while (log.size() < bytes) {
    ++step;
    unsigned rank = static_cast<unsigned>(step % 8);
    switch (rng() % 6) {
      case 0:
        std::snprintf(buf, sizeof buf,
                      "[rank%u]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %u.00 MiB. GPU %u has "
                      "a total capacity of 79.15 GiB of which %u.38 MiB is free. Including non-PyTorch memory, this "
                      "process has 78.48 GiB memory in use. Of the allocated memory 74.81 GiB is allocated by "
                      "PyTorch, and 3.%02u GiB is reserved by PyTorch but unallocated.\n",
                      rank, 200 + static_cast<unsigned>(step % 97), rank, static_cast<unsigned>(step % 500),
                      static_cast<unsigned>(step % 100));
        break;
      case 1:
        std::snprintf(buf, sizeof buf,
                      "2024-05-01 12:%02u:07.%06u: I tensorflow/core/common_runtime/bfc_allocator.cc:1066] InUse at "
                      "7f1c%08llx of size %u next %llu\n",
                      static_cast<unsigned>(step % 60), static_cast<unsigned>(step % 1000000),
                      static_cast<unsigned long long>(step * 256), 256u << (step % 12),
                      static_cast<unsigned long long>(step));
        break;
      case 2:
        std::snprintf(buf, sizeof buf,
                      "2024-05-01 12:%02u:07.%06u: I tensorflow/core/common_runtime/bfc_allocator.cc:1010] Bin (%u): "
                      "Total Chunks: %u, Chunks in use: %u. %u.2KiB allocated for chunks. %u.2KiB in use in bin. "
                      "10.5KiB client-requested in use in bin.\n",
                      static_cast<unsigned>(step % 60), static_cast<unsigned>(step % 1000000), 256u << (step % 20),
                      static_cast<unsigned>(step % 90), static_cast<unsigned>(step % 45),
                      static_cast<unsigned>(step % 400), static_cast<unsigned>(step % 300));
        break;
      case 3:
        std::snprintf(buf, sizeof buf,
                      "2024-05-01 12:%02u:07.%06u: W tensorflow/core/common_runtime/bfc_allocator.cc:424] Allocator "
                      "(GPU_0_bfc) ran out of memory trying to allocate %u.00MiB (rounded to %llu)requested by op "
                      "Conv2D\n",
                      static_cast<unsigned>(step % 60), static_cast<unsigned>(step % 1000000),
                      static_cast<unsigned>(step % 900 + 1),
                      static_cast<unsigned long long>((step % 900 + 1) << 20));
        break;
      case 4:
        std::snprintf(buf, sizeof buf,
                      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate memory "
                      "[Op:Mul] name: step_%llu/\n",
                      static_cast<unsigned long long>(step));
        break;
      default:
        std::snprintf(buf, sizeof buf,
                      "2024-05-01 12:%02u:07.%06u: I tensorflow/core/common_runtime/bfc_allocator.cc:1081] Sum Total "
                      "of in-use chunks: %u.75GiB\n",
                      static_cast<unsigned>(step % 60), static_cast<unsigned>(step % 1000000),
                      static_cast<unsigned>(step % 80));
    }
    log += buf;
  }
  return log;
}

const std::string& Log() {
  static const std::string log = MakeLog(128u << 20);
  return log;
}

const std::string& DenseLog() {
  static const std::string log = MakeDenseLog(128u << 20);
  return log;
}

// Baseline: find every line of the log (what any line reader must do).
void ReadLines(benchmark::State& state, const std::string& log) {
  for (auto _ : state) {
    size_t lines = 0, longest = 0;
    const char* p = log.data();
    const char* end = p + log.size();
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      if (!nl) nl = end;
      longest = std::max(longest, static_cast<size_t>(nl - p));
      ++lines;
      p = nl + 1;
    }
    benchmark::DoNotOptimize(lines);
    benchmark::DoNotOptimize(longest);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
}
void BM_ReadLinesBaseline(benchmark::State& state) { ReadLines(state, Log()); }
BENCHMARK(BM_ReadLinesBaseline)->Unit(benchmark::kMillisecond);
void BM_ReadLinesBaselineDense(benchmark::State& state) { ReadLines(state, DenseLog()); }
BENCHMARK(BM_ReadLinesBaselineDense)->Unit(benchmark::kMillisecond);

size_t ExplainBlocks(const std::string& log) {
  Explainer explainer;
  for (size_t at = 0; at < log.size(); at += 1 << 20) explainer.AddText(std::string_view(log).substr(at, 1 << 20));
  return explainer.Finish().findings.size();
}

// The explainer over the same bytes, fed in 1 MiB blocks as ExplainFd does.
void BM_Explain(benchmark::State& state) {
  const std::string& log = Log();
  size_t findings = 0;
  for (auto _ : state) {
    findings = ExplainBlocks(log);
    benchmark::DoNotOptimize(findings);
  }
  if (findings != 1) state.SkipWithError("expected exactly one finding");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
}
BENCHMARK(BM_Explain)->Unit(benchmark::kMillisecond);

// The dense log: most lines reach the full pattern set, a third are OOM messages.
void BM_ExplainDense(benchmark::State& state) {
  const std::string& log = DenseLog();
  size_t findings = 0;
  for (auto _ : state) {
    findings = ExplainBlocks(log);
    benchmark::DoNotOptimize(findings);
  }
  if (findings == 0) state.SkipWithError("expected findings");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
}
BENCHMARK(BM_ExplainDense)->Unit(benchmark::kMillisecond);

// A 1 GB log file end to end (read(2) + explain), once.
void ExplainFile1GB(benchmark::State& state, const std::string& log) {
  std::string path = "/tmp/oomguard_explain_bench_" + std::to_string(getpid()) + ".log";
  {
    std::ofstream out(path, std::ios::binary);
    for (size_t written = 0; written < (1000u << 20); written += log.size()) out << log;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    auto r = ExplainFile(path);
    if (!r.ok()) state.SkipWithError(r.error().c_str());
    bytes = r.ok() ? r->bytes_read : 0;
  }
  std::remove(path.c_str());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
void BM_ExplainFile1GB(benchmark::State& state) { ExplainFile1GB(state, Log()); }
BENCHMARK(BM_ExplainFile1GB)->Unit(benchmark::kMillisecond)->Iterations(1);
void BM_ExplainDenseFile1GB(benchmark::State& state) { ExplainFile1GB(state, DenseLog()); }
BENCHMARK(BM_ExplainDenseFile1GB)->Unit(benchmark::kMillisecond)->Iterations(1);

// Captures bytes/second per benchmark while printing the usual console table.
class CapturingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      auto it = run.counters.find("bytes_per_second");
      if (it != run.counters.end()) {
        bytes_per_second[run.benchmark_name()] = it->second.value;
        // Bytes per wall-clock second: bytes per CPU second scaled by CPU time / real time.
        const double real = run.GetAdjustedRealTime(), cpu = run.GetAdjustedCPUTime();
        if (real > 0) wall_bytes_per_second[run.benchmark_name()] = it->second.value * cpu / real;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> bytes_per_second;       // per CPU second
  std::map<std::string, double> wall_bytes_per_second;  // per wall-clock second
};

}  // namespace

int main(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  std::string uname = oomguard::bench::UnameText();
  std::string cpu = oomguard::bench::CpuModel();
  std::string nproc = std::to_string(oomguard::bench::Nproc());
  benchmark::AddCustomContext("uname", uname);
  benchmark::AddCustomContext("cpu_model", cpu);
  benchmark::AddCustomContext("nproc", nproc);
  benchmark::AddCustomContext("command", command);
  benchmark::Initialize(&argc, argv);
  CapturingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  double base = reporter.bytes_per_second["BM_ReadLinesBaseline"];
  double explain = reporter.bytes_per_second["BM_Explain"];
  double file = reporter.bytes_per_second["BM_ExplainFile1GB/iterations:1"];
  double dense_base = reporter.bytes_per_second["BM_ReadLinesBaselineDense"];
  double dense = reporter.bytes_per_second["BM_ExplainDense"];
  double dense_file = reporter.bytes_per_second["BM_ExplainDenseFile1GB/iterations:1"];
  char date[64];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  nlohmann::json summary = {
      {"date", date},
      {"machine", {{"uname", uname}, {"nproc", nproc}, {"cpu_model", cpu}}},
      {"command", command},
      {"log", "generated: progress lines, tracebacks, TF device lines, one PyTorch OOM per ~20k lines"},
      {"baseline_read_lines_mb_per_s", base / 1e6},
      {"explain_mb_per_s", explain / 1e6},
      {"explain_file_1gb_mb_per_s", file / 1e6},
      {"explain_wall_mb_per_s", reporter.wall_bytes_per_second["BM_Explain"] / 1e6},
      {"explain_file_1gb_wall_mb_per_s", reporter.wall_bytes_per_second["BM_ExplainFile1GB/iterations:1"] / 1e6},
      {"load_average", oomguard::bench::LoadAverage()},
      {"explain_over_baseline_ratio", base > 0 ? explain / base : 0.0},
      {"dense_log", "generated: a PyTorch OOM per step on 8 ranks, TF BFC dump lines, TF2 'failed to allocate "
                    "memory' and BFC 'ran out of memory' lines (every line reaches the full pattern set)"},
      {"dense_baseline_read_lines_mb_per_s", dense_base / 1e6},
      {"dense_explain_mb_per_s", dense / 1e6},
      {"dense_explain_wall_mb_per_s", reporter.wall_bytes_per_second["BM_ExplainDense"] / 1e6},
      {"dense_explain_file_1gb_mb_per_s", dense_file / 1e6},
      {"dense_explain_file_1gb_wall_mb_per_s",
       reporter.wall_bytes_per_second["BM_ExplainDenseFile1GB/iterations:1"] / 1e6},
      {"dense_explain_over_baseline_ratio", dense_base > 0 ? dense / dense_base : 0.0},
  };
  const char* out = std::getenv("EXPLAIN_BENCH_SUMMARY");
  std::string path = out ? out : std::string(OOMGUARD_SOURCE_DIR) + "/bench/results/explain_bench_summary.json";
  std::ofstream(path) << summary.dump(2) << "\n";
  std::printf("explain %.0f MB/s, baseline %.0f MB/s, ratio %.3f, 1 GB file %.0f MB/s\n", explain / 1e6, base / 1e6,
              base > 0 ? explain / base : 0.0, file / 1e6);
  std::printf("dense: explain %.0f MB/s, baseline %.0f MB/s, ratio %.3f, 1 GB file %.0f MB/s -> %s\n", dense / 1e6,
              dense_base / 1e6, dense_base > 0 ? dense / dense_base : 0.0, dense_file / 1e6, path.c_str());
  return 0;
}
