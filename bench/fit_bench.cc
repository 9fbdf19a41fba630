// Speed of `oomguard fit` on resnet50: the largest-batch search (library call,
// model loaded once) against one plan of the same model, the baseline the
// ratio is taken against. Also the whole search including the model import.
// And a hostile size: a chain of 100 000 nodes (25 000 MatMul + Add + Relu +
// residual Add blocks), where `plan` (import + one plan) is the baseline and
// `fit` (import + search + the what-if advice) and `split --maximize` are
// measured against it.
//
//   build-bench/src/fit/oomguard_fit_bench --benchmark_out=bench/results/fit_bench.json \
//       --benchmark_out_format=json --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <onnx/onnx_pb.h>

#include <string>

#include "bench_machine.h"
#include "oomguard/fit/advice.h"
#include "oomguard/fit/fit.h"
#include "oomguard/fit/split.h"
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

// The search on an RTX 3090 with the default margin (model already loaded),
// planning every batch in full (PlanStep): the baseline for the BatchPlanner.
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

// The same search through a BatchPlanner (what `oomguard fit` does): the step
// recorded once, replayed per batch. A fresh planner per iteration.
void BM_FitResnet50BatchPlanner(benchmark::State& state) {
  auto model = Resnet50();
  plan::PlanOptions o;
  o.cuda_compute_capability = 86;
  fit::FitOptions fo;
  fo.budget_bytes = Budget();
  int64_t max_batch = 0, full = 0;
  for (auto _ : state) {
    plan::BatchPlanner batch_planner(*model);
    auto r = fit::FindMaxBatch(fit::PlanWith(batch_planner), o, fo);
    max_batch = r->max_batch;
    full = batch_planner.stats().full_plans;
  }
  state.counters["max_batch"] = static_cast<double>(max_batch);
  state.counters["full_plans"] = static_cast<double>(full);
}
BENCHMARK(BM_FitResnet50BatchPlanner)->Unit(benchmark::kMillisecond);

// What `oomguard fit resnet50 --gpu rtx-3090` does: import the model, then search (BatchPlanner).
void BM_FitResnet50WithImport(benchmark::State& state) {
  for (auto _ : state) {
    auto m = plan::LoadModel("resnet50");
    plan::PlanOptions o;
    o.cuda_compute_capability = 86;
    plan::BatchPlanner batch_planner(**m);
    fit::PlanFunction planner = fit::PlanWith(batch_planner);
    fit::FitOptions fo;
    fo.budget_bytes = Budget();
    auto r = fit::FindMaxBatch(planner, o, fo);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_FitResnet50WithImport)->Unit(benchmark::kMillisecond);

// input[B,64] -> 25 000 x (MatMul 64x64 -> Add bias -> Relu -> Add residual): 100 000 nodes,
// weights as external data (never read).
const std::string& Chain100k() {
  static const std::string bytes = [] {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(14);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name("chain100k");
    auto* in = g->add_input();
    in->set_name("input");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(1);
    tt->mutable_shape()->add_dim()->set_dim_param("batch");
    tt->mutable_shape()->add_dim()->set_dim_value(64);
    auto weight = [&](const std::string& name, std::vector<int64_t> dims) {
      onnx::TensorProto* t = g->add_initializer();
      t->set_name(name);
      t->set_data_type(1);
      for (int64_t d : dims) t->add_dims(d);
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      auto* e = t->add_external_data();
      e->set_key("location");
      e->set_value("weights.bin");
    };
    auto node = [&](const char* op, std::vector<std::string> ins, const std::string& out) {
      onnx::NodeProto* n = g->add_node();
      n->set_op_type(op);
      n->set_name(out);
      for (auto& i : ins) n->add_input(i);
      n->add_output(out);
    };
    std::string x = "input";
    for (int b = 0; b < 25000; ++b) {
      const std::string k = std::to_string(b);
      weight("w" + k, {64, 64});
      weight("b" + k, {64});
      node("MatMul", {x, "w" + k}, "m" + k);
      node("Add", {"m" + k, "b" + k}, "a" + k);
      node("Relu", {"a" + k}, "r" + k);
      node("Add", {"r" + k, x}, "s" + k);
      x = "s" + k;
    }
    g->add_output()->set_name(x);
    g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(1);
    return m.SerializeAsString();
  }();
  return bytes;
}

plan::PlanOptions ChainOptions() {
  plan::PlanOptions o;
  o.cuda_compute_capability = 80;
  return o;
}

// Baseline: what `oomguard plan chain.onnx --batch 64` does (import + one plan).
void BM_PlanChain100k(benchmark::State& state) {
  for (auto _ : state) {
    auto m = plan::LoadModelFromBytes(Chain100k(), "chain100k");
    plan::PlanOptions o = ChainOptions();
    o.batch = 64;
    auto p = plan::PlanStep(**m, o);
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_PlanChain100k)->Unit(benchmark::kMillisecond)->Iterations(1);

// What `oomguard fit chain.onnx --memory 16GiB` does: import, search, what-if advice.
void BM_FitChain100k(benchmark::State& state) {
  int64_t max_batch = 0, plans = 0;
  for (auto _ : state) {
    auto m = plan::LoadModelFromBytes(Chain100k(), "chain100k");
    plan::BatchPlanner batch_planner(**m);
    fit::PlanFunction planner = fit::PlanWith(batch_planner);
    fit::FitOptions fo;
    fo.budget_bytes = 16ull << 30;
    auto r = fit::FindMaxBatch(planner, ChainOptions(), fo);
    fit::AdviceRequest request;
    request.base = ChainOptions();
    request.base.batch = std::max<int64_t>(1, r->max_batch);
    request.budget_bytes = fo.budget_bytes;
    auto advice = fit::Advise(planner, request, r->plan);
    benchmark::DoNotOptimize(advice);
    max_batch = r->max_batch;
    plans = r->plans_evaluated;
  }
  state.counters["max_batch"] = static_cast<double>(max_batch);
  state.counters["plans"] = static_cast<double>(plans);
}
BENCHMARK(BM_FitChain100k)->Unit(benchmark::kMillisecond)->Iterations(1);

// What `oomguard split chain.onnx --maximize --gpus 2 --memory 16GiB` does (without its advice).
void BM_SplitMaximizeChain100k(benchmark::State& state) {
  for (auto _ : state) {
    auto m = plan::LoadModelFromBytes(Chain100k(), "chain100k");
    plan::BatchPlanner batch_planner(**m);
    fit::PlanFunction planner = fit::PlanWith(batch_planner);
    fit::SplitRequest request;
    request.base = ChainOptions();
    request.budget_bytes = {16ull << 30, 16ull << 30};
    auto s = fit::PlanSplit(planner, request);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_SplitMaximizeChain100k)->Unit(benchmark::kMillisecond)->Iterations(1);

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
