// Benchmarks of the planner on resnet50 (the zoo model): import (protobuf parse,
// checks, ONNX shape inference), planning (concrete shapes + the training-step
// simulation), and both together, against a baseline measured in the same run:
// the bare protobuf parse of the same bytes.
//
//   build-bench/src/plan/plan_bench --out bench/results/plan_bench.json
//
// The JSON (Google Benchmark's, plus date, machine, command and the ratios) is
// written to --out. Target: import + plan of resnet50 <= 20 ms.
#include <benchmark/benchmark.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "bench_machine.h"
#include "oomguard/plan/planner.h"

namespace {

std::string ZooBytes(const std::string& name) {
  std::ifstream in(std::string(OOMGUARD_SOURCE_DIR) + "/data/zoo/" + name + ".onnx", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

oomguard::plan::PlanOptions Options(int64_t batch) {
  oomguard::plan::PlanOptions o;
  o.batch = batch;
  o.target = oomguard::plan::Target::kCuda;
  return o;
}

void BM_ProtobufParseBaseline(benchmark::State& state) {
  std::string bytes = ZooBytes("resnet50");
  for (auto _ : state) {
    onnx::ModelProto m;
    benchmark::DoNotOptimize(m.ParseFromString(bytes));
  }
}
BENCHMARK(BM_ProtobufParseBaseline)->Unit(benchmark::kMillisecond);

void BM_ImportResnet50(benchmark::State& state) {
  std::string bytes = ZooBytes("resnet50");
  for (auto _ : state) {
    auto model = oomguard::plan::LoadModelFromBytes(bytes, "resnet50");
    if (!model.ok()) state.SkipWithError(model.error().c_str());
    benchmark::DoNotOptimize(model);
  }
}
BENCHMARK(BM_ImportResnet50)->Unit(benchmark::kMillisecond);

void BM_PlanResnet50(benchmark::State& state) {
  auto model = oomguard::plan::LoadModel("resnet50");
  if (!model.ok()) {
    state.SkipWithError(model.error().c_str());
    return;
  }
  for (auto _ : state) {
    auto plan = oomguard::plan::PlanStep(**model, Options(64));
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_PlanResnet50)->Unit(benchmark::kMillisecond);

void BM_ImportAndPlanResnet50(benchmark::State& state) {
  std::string bytes = ZooBytes("resnet50");
  for (auto _ : state) {
    auto model = oomguard::plan::LoadModelFromBytes(bytes, "resnet50");
    auto plan = oomguard::plan::PlanStep(**model, Options(64));
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_ImportAndPlanResnet50)->Unit(benchmark::kMillisecond);

void BM_ImportAndPlanBertBase(benchmark::State& state) {
  std::string bytes = ZooBytes("bert_base");
  for (auto _ : state) {
    auto model = oomguard::plan::LoadModelFromBytes(bytes, "bert_base");
    auto plan = oomguard::plan::PlanStep(**model, Options(32));
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_ImportAndPlanBertBase)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  std::string command;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    command += (i ? " " : "") + std::string(argv[i]);
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out = argv[++i];
      command += " " + out;
      continue;
    }
    args.push_back(argv[i]);
  }
  std::string raw = out.empty() ? "" : out + ".raw";
  std::string out_flag = "--benchmark_out=" + raw;
  std::string fmt_flag = "--benchmark_out_format=json";
  if (!out.empty()) {
    args.push_back(out_flag.data());
    args.push_back(fmt_flag.data());
  }
  int n = static_cast<int>(args.size());
  benchmark::AddCustomContext("uname", oomguard::bench::UnameText());
  benchmark::AddCustomContext("cpu_model", oomguard::bench::CpuModel());
  benchmark::AddCustomContext("command", command);
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (out.empty()) return 0;
  // Ratios against the baseline of the same run, and the 20 ms target.
  std::ifstream in(raw);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return 1;
  std::map<std::string, double> ms;
  for (const auto& b : j["benchmarks"]) ms[b["name"].get<std::string>()] = b["real_time"].get<double>();
  double base = ms["BM_ProtobufParseBaseline"];
  nlohmann::json summary;
  for (const auto& [name, t] : ms) summary[name + "_ms"] = t;
  if (base > 0) {
    summary["import_and_plan_resnet50_over_protobuf_parse"] = ms["BM_ImportAndPlanResnet50"] / base;
    summary["plan_resnet50_over_protobuf_parse"] = ms["BM_PlanResnet50"] / base;
  }
  summary["target_ms"] = 20;
  summary["meets_target"] = ms["BM_ImportAndPlanResnet50"] <= 20;
  j["summary"] = summary;
  std::ofstream(out) << j.dump(2) << "\n";
  std::remove(raw.c_str());
  std::cout << "wrote " << out << "\n";
  return 0;
}
