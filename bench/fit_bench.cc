// Speed of `oomguard fit` on resnet50: the largest-batch search (library call,
// model loaded once) against one plan of the same model, the baseline the
// ratio is taken against. Also the whole search including the model import.
//
//   build-bench/src/fit/oomguard_fit_bench --benchmark_out=bench/results/fit_bench.json \
//       --benchmark_out_format=json --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <string>

#include "bench_machine.h"
#include "oomguard/fit/fit.h"
#include "oomguard/plan/gpu_catalog.h"
#include "oomguard/plan/planner.h"

namespace {

using namespace oomguard;

std::shared_ptr<const plan::Model> Resnet50() {
  static std::shared_ptr<const plan::Model> model = [] {
    auto m = plan::LoadModel("resnet50");
    if (!m) {
      fprintf(stderr, "%s\n", m.error().c_str());
      std::abort();
    }
    return *m;
  }();
  return model;
}

uint64_t Budget() {
  const plan::Gpu gpu = *plan::FindGpu("rtx-3090");
  return *fit::UsableBytes({.capacity_bytes = gpu.total_bytes, .reserve_bytes = 0,
                            .margin_percent = fit::kDefaultMarginPercent});
}

// Baseline: one plan of resnet50 at batch 64 (model already loaded).
void BM_PlanResnet50(benchmark::State& state) {
  auto model = Resnet50();
  plan::PlanOptions o;
  o.batch = 64;
  o.cuda_compute_capability = 86;
  for (auto _ : state) {
    auto p = plan::PlanStep(*model, o);
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_PlanResnet50)->Unit(benchmark::kMillisecond);

// The search on an RTX 3090 with the default margin (model already loaded).
void BM_FitResnet50(benchmark::State& state) {
  auto model = Resnet50();
  plan::PlanOptions o;
  o.cuda_compute_capability = 86;
  fit::PlanFunction planner = [&](const plan::PlanOptions& x) { return plan::PlanStep(*model, x); };
  fit::FitOptions fo;
  fo.budget_bytes = Budget();
  int64_t max_batch = 0, plans = 0;
  for (auto _ : state) {
    auto r = fit::FindMaxBatch(planner, o, fo);
    max_batch = r->max_batch;
    plans = r->plans_evaluated;
  }
  state.counters["max_batch"] = static_cast<double>(max_batch);
  state.counters["plans"] = static_cast<double>(plans);
}
BENCHMARK(BM_FitResnet50)->Unit(benchmark::kMillisecond);

// What `oomguard fit resnet50 --gpu rtx-3090` does: import the model, then search.
void BM_FitResnet50WithImport(benchmark::State& state) {
  for (auto _ : state) {
    auto m = plan::LoadModel("resnet50");
    plan::PlanOptions o;
    o.cuda_compute_capability = 86;
    fit::PlanFunction planner = [&](const plan::PlanOptions& x) { return plan::PlanStep(**m, x); };
    fit::FitOptions fo;
    fo.budget_bytes = Budget();
    auto r = fit::FindMaxBatch(planner, o, fo);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_FitResnet50WithImport)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  benchmark::AddCustomContext("uname", oomguard::bench::UnameText());
  benchmark::AddCustomContext("nproc", std::to_string(oomguard::bench::Nproc()));
  benchmark::AddCustomContext("cpu_model", oomguard::bench::CpuModel());
  benchmark::AddCustomContext("command", command);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
