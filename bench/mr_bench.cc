// Allocator benchmarks (not tests): replay real PyTorch training-step
// allocation traces (bench/traces/*.trace.gz, format in tools/capture_trace.py)
// and rmm-style random allocations through
//   arena      ArenaResource over a simulated device with its default growth:
//              expandable (one address range, mapped in 2 MiB steps),
//   arena_regions, arena_regions_growth_0.125
//              the same arena growing by separate regions (kOnDemand; the total
//              doubles, or grows by 1/8),
//   upstream   the simulated device itself, one upstream call per request (baseline),
//   first_fit  a simple first-fit free list in address order (linear scan, coalescing).
//
//   oomguard_mr_bench                      Google Benchmark runs (medians of 5)
//   oomguard_mr_bench --summary=FILE.json  one JSON with date, machine, command, the
//                                          median ns per alloc+free, peak reserved / peak live,
//                                          and ratios against the baselines of the same run
// When no trace file is present, a synthetic training-step trace stands in.
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <list>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_machine.h"
#include "oomguard/mr/arena_resource.h"
#include "oomguard/mr/simulated_device_resource.h"

namespace {

using namespace oomguard::mr;

struct Op {
  bool alloc;
  uint32_t id;
  uint64_t bytes;
};

struct Trace {
  std::string name;
  std::vector<Op> ops;
  uint32_t max_id = 0;
  uint64_t allocs = 0;
  uint64_t peak_live = 0;
};

void Finish(Trace& t) {
  std::vector<uint64_t> size(t.max_id + 1, 0);
  uint64_t live = 0;
  for (const Op& op : t.ops) {
    if (op.alloc) {
      size[op.id] = op.bytes;
      live += op.bytes;
      t.peak_live = std::max(t.peak_live, live);
      ++t.allocs;
    } else {
      live -= size[op.id];
    }
  }
}

// Reads "a <id> <size> <alignment>" and "f <id>" lines; '#' lines are comments.
std::optional<Trace> ReadTrace(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  Trace t;
  t.name = std::filesystem::path(path).filename().string();
  t.name = t.name.substr(0, t.name.find(".trace"));
  std::vector<uint64_t> size;
  char line[256];
  while (gzgets(f, line, sizeof line) != nullptr) {
    unsigned long long id = 0, bytes = 0, align = 0;
    if (line[0] == 'a' && std::sscanf(line, "a %llu %llu %llu", &id, &bytes, &align) >= 2) {
      if (bytes == 0) continue;  // zero-byte requests never reach a resource
      if (id >= size.size()) size.resize(id + 1, 0);
      size[id] = bytes;
      t.ops.push_back({true, static_cast<uint32_t>(id), bytes});
      t.max_id = std::max<uint32_t>(t.max_id, id);
    } else if (line[0] == 'f' && std::sscanf(line, "f %llu", &id) == 1) {
      if (id < size.size() && size[id] > 0) t.ops.push_back({false, static_cast<uint32_t>(id), size[id]});
    }
  }
  gzclose(f);
  Finish(t);
  return t;
}

// A training-step-like sequence: parameters and optimizer state stay live;
// each step allocates activations layer by layer in forward, frees them in
// reverse during backward while gradients and temporaries come and go.
Trace SyntheticTrace() {
  Trace t;
  t.name = "synthetic";
  std::mt19937_64 rng(5);
  uint32_t next = 1;
  auto alloc = [&](uint64_t bytes) {
    t.ops.push_back({true, next, bytes});
    return next++;
  };
  auto free_ = [&](uint32_t id, uint64_t bytes) { t.ops.push_back({false, id, bytes}); };
  std::vector<uint64_t> layer(60);
  for (uint64_t& b : layer) b = (1 + rng() % 64) * 4096 * (1 + rng() % 16);
  for (uint64_t b : layer) alloc(b / 8), alloc(b / 8), alloc(b / 8);  // weights, grads, state
  for (int step = 0; step < 4; ++step) {
    std::vector<std::pair<uint32_t, uint64_t>> saved;
    for (uint64_t b : layer) {
      uint64_t tmp_bytes = b / 2 + 512;
      uint32_t tmp = alloc(tmp_bytes);
      saved.push_back({alloc(b), b});
      free_(tmp, tmp_bytes);
    }
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      uint64_t g = it->second + 256;
      uint32_t grad = alloc(g);
      free_(it->first, it->second);
      free_(grad, g);
      for (int k = 0; k < 3; ++k) {
        uint64_t small = 64 + rng() % 4096;
        free_(alloc(small), small);
      }
    }
  }
  t.max_id = next;
  Finish(t);
  return t;
}

std::vector<Trace> LoadTraces() {
  std::vector<Trace> traces;
  std::string dir = std::string(OOMGUARD_SOURCE_DIR) + "/bench/traces";
  std::vector<std::string> files;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().string().ends_with(".trace.gz")) files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    if (std::optional<Trace> t = ReadTrace(f)) traces.push_back(std::move(*t));
  }
  traces.push_back(SyntheticTrace());
  return traces;
}

// First fit over regions from the upstream: free blocks in one address-ordered
// list, scanned from the front; merge with neighbours on free. The simple
// allocator the arena is measured against.
class FirstFitResource final : public MemoryResource {
 public:
  FirstFitResource(MemoryResource& upstream, uint64_t region_bytes) : upstream_(upstream), region_(region_bytes) {}
  ~FirstFitResource() override {
    for (auto [p, n] : regions_) upstream_.deallocate(p, n);
  }
  std::string name() const override { return "first fit"; }
  uint64_t reserved() const { return reserved_; }

 private:
  struct Free {
    uintptr_t addr;
    uint64_t bytes;
    uintptr_t region;
  };
  void* do_allocate(std::size_t bytes, std::size_t, Stream) override {
    uint64_t need = (bytes + 255) / 256 * 256;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->bytes >= need) {
        uintptr_t p = it->addr;
        it->addr += need;
        it->bytes -= need;
        if (it->bytes == 0) free_.erase(it);
        used_[p] = {need, region_of(p)};
        return reinterpret_cast<void*>(p);
      }
    }
    uint64_t size = std::max(need, region_);
    void* r = upstream_.allocate(size);
    regions_.push_back({r, size});
    reserved_ += size;
    uintptr_t base = reinterpret_cast<uintptr_t>(r);
    region_base_[base] = size;
    auto pos = std::find_if(free_.begin(), free_.end(), [&](const Free& f) { return f.addr > base; });
    if (size > need) free_.insert(pos, {base + need, size - need, base});
    used_[base] = {need, base};
    return r;
  }
  void do_deallocate(void* p, std::size_t, std::size_t, Stream) override {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto u = used_.find(a);
    auto [bytes, region] = u->second;
    used_.erase(u);
    auto pos = std::find_if(free_.begin(), free_.end(), [&](const Free& f) { return f.addr > a; });
    auto it = free_.insert(pos, {a, bytes, region});
    auto next = std::next(it);
    if (next != free_.end() && next->region == region && a + bytes == next->addr) {
      it->bytes += next->bytes;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->region == region && prev->addr + prev->bytes == a) {
        prev->bytes += it->bytes;
        free_.erase(it);
      }
    }
  }
  uintptr_t region_of(uintptr_t p) const { return std::prev(region_base_.upper_bound(p))->first; }

  MemoryResource& upstream_;
  uint64_t region_;
  std::list<Free> free_;
  std::map<uintptr_t, std::pair<uint64_t, uintptr_t>> used_;
  std::map<uintptr_t, uint64_t> region_base_;
  std::vector<std::pair<void*, uint64_t>> regions_;
  uint64_t reserved_ = 0;
};

// Replays the whole trace once; frees what is left so the next run starts equal.
void Replay(const Trace& t, MemoryResource& mr, std::vector<void*>& ptrs) {
  ptrs.assign(t.max_id + 1, nullptr);
  for (const Op& op : t.ops) {
    if (op.alloc) {
      ptrs[op.id] = mr.allocate(op.bytes);
    } else {
      mr.deallocate(ptrs[op.id], op.bytes);
      ptrs[op.id] = nullptr;
    }
  }
  for (const Op& op : t.ops) {
    if (op.alloc && ptrs[op.id] != nullptr) {
      mr.deallocate(ptrs[op.id], op.bytes);
      ptrs[op.id] = nullptr;
    }
  }
}

SimulatedDeviceOptions BigDevice() {
  SimulatedDeviceOptions o;
  o.capacity_bytes = 64ull << 30;
  return o;
}

ArenaOptions BenchArena(Growth growth, double growth_factor = 1.0) {
  ArenaOptions o;
  o.growth = growth;
  o.initial_region_bytes = 2ull << 20;
  o.growth_factor = growth_factor;
  return o;
}

// ---- Random allocations (rmm's random_allocations): sizes uniform in [1 KiB, 256 MiB],
// at most 4 GiB live; when a request would pass that, a random live block is freed first.
struct RandomOps {
  std::vector<Op> ops;
  uint32_t max_id;
};

RandomOps MakeRandomOps(int allocations) {
  RandomOps r;
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<uint64_t> size(1ull << 10, 256ull << 20);
  std::vector<std::pair<uint32_t, uint64_t>> live;
  uint64_t live_bytes = 0;
  for (int i = 1; i <= allocations; ++i) {
    uint64_t b = size(rng);
    while (live_bytes + b > (4ull << 30) || (!live.empty() && rng() % 2 == 0)) {
      std::size_t k = rng() % live.size();
      r.ops.push_back({false, live[k].first, live[k].second});
      live_bytes -= live[k].second;
      live[k] = live.back();
      live.pop_back();
    }
    r.ops.push_back({true, static_cast<uint32_t>(i), b});
    live.push_back({static_cast<uint32_t>(i), b});
    live_bytes += b;
  }
  r.max_id = allocations;
  return r;
}

const std::vector<Trace>& Traces() {
  static std::vector<Trace> traces = LoadTraces();
  return traces;
}

enum Kind { kArena, kArenaRegions, kArenaGentle, kUpstream, kFirstFit };
const char* kKindNames[] = {"arena", "arena_regions", "arena_regions_growth_0.125", "upstream_every_request",
                            "first_fit"};

void BM_Trace(benchmark::State& state, std::size_t trace_index, Kind kind) {
  const Trace& t = Traces()[trace_index];
  SimulatedDeviceResource device(BigDevice());
  std::unique_ptr<MemoryResource> mr;
  if (kind == kArena) mr = std::make_unique<ArenaResource>(device, BenchArena(Growth::kExpandable));
  if (kind == kArenaRegions) mr = std::make_unique<ArenaResource>(device, BenchArena(Growth::kOnDemand));
  if (kind == kArenaGentle) mr = std::make_unique<ArenaResource>(device, BenchArena(Growth::kOnDemand, 0.125));
  if (kind == kFirstFit) mr = std::make_unique<FirstFitResource>(device, 64ull << 20);
  MemoryResource& r = mr ? *mr : static_cast<MemoryResource&>(device);
  std::vector<void*> ptrs;
  Replay(t, r, ptrs);  // warm: regions exist
  for (auto _ : state) Replay(t, r, ptrs);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * t.allocs));
  state.counters["ns_per_alloc_free"] = benchmark::Counter(
      static_cast<double>(t.allocs), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  if (auto* arena = dynamic_cast<ArenaResource*>(mr.get())) {
    state.counters["peak_reserved_over_peak_live"] =
        static_cast<double>(arena->stats().peak_reserved_bytes) / static_cast<double>(t.peak_live);
  }
}

void BM_Random(benchmark::State& state, Kind kind) {
  RandomOps ops = MakeRandomOps(static_cast<int>(state.range(0)));
  Trace t{"random", ops.ops, ops.max_id, static_cast<uint64_t>(state.range(0)), 0};
  SimulatedDeviceResource device(BigDevice());
  std::unique_ptr<MemoryResource> mr;
  if (kind == kArena) mr = std::make_unique<ArenaResource>(device, BenchArena(Growth::kExpandable));
  if (kind == kArenaRegions) mr = std::make_unique<ArenaResource>(device, BenchArena(Growth::kOnDemand));
  MemoryResource& r = mr ? *mr : static_cast<MemoryResource&>(device);
  std::vector<void*> ptrs;
  for (auto _ : state) Replay(t, r, ptrs);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * t.allocs));
}

void RegisterAll() {
  for (std::size_t i = 0; i < Traces().size(); ++i) {
    for (int k = 0; k < 5; ++k) {
      std::string name = "trace/" + Traces()[i].name + "/" + kKindNames[k];
      benchmark::RegisterBenchmark(name.c_str(), BM_Trace, i, static_cast<Kind>(k))
          ->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);
    }
  }
  for (Kind k : {kArena, kArenaRegions, kUpstream}) {
    std::string name = std::string("random/") + kKindNames[k];
    benchmark::RegisterBenchmark(name.c_str(), BM_Random, k)
        ->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->Repetitions(3)->ReportAggregatesOnly(true);
  }
}

// ---- --summary: our own medians, ratios and machine description in one JSON.
nlohmann::json Machine() {
  return {{"uname", oomguard::bench::UnameText()}, {"nproc", oomguard::bench::Nproc()},
          {"cpu", oomguard::bench::CpuModel()}};
}

struct Timing {
  double cpu_ns;      // thread CPU time per alloc+free, median of the runs (robust to a busy machine)
  double wall_ns;     // wall-clock time per alloc+free, median
  double cpu_min_ns;  // the fastest run: what the code costs when nothing else interferes
};

double ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

Timing MedianNsPerAllocFree(const Trace& t, MemoryResource& r, int runs) {
  std::vector<void*> ptrs;
  Replay(t, r, ptrs);
  std::vector<double> cpu, wall;
  for (int i = 0; i < runs; ++i) {
    double c0 = ThreadCpuNs();
    auto start = std::chrono::steady_clock::now();
    Replay(t, r, ptrs);
    auto end = std::chrono::steady_clock::now();
    double c1 = ThreadCpuNs();
    wall.push_back(std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(t.allocs));
    cpu.push_back((c1 - c0) / static_cast<double>(t.allocs));
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  return {cpu[cpu.size() / 2], wall[wall.size() / 2], cpu.front()};
}

int Summary(const std::string& path, const std::string& command) {
  constexpr int kRuns = 21;
  nlohmann::json traces = nlohmann::json::array();
  for (const Trace& t : Traces()) {
    SimulatedDeviceResource d1(BigDevice()), d2(BigDevice()), d3(BigDevice()), d4(BigDevice()), d5(BigDevice());
    ArenaResource arena(d1, BenchArena(Growth::kExpandable));
    ArenaResource regions(d5, BenchArena(Growth::kOnDemand));
    ArenaResource gentle(d2, BenchArena(Growth::kOnDemand, 0.125));
    FirstFitResource first_fit(d4, 64ull << 20);
    Timing arena_t = MedianNsPerAllocFree(t, arena, kRuns);
    Timing regions_t = MedianNsPerAllocFree(t, regions, kRuns);
    Timing gentle_t = MedianNsPerAllocFree(t, gentle, kRuns);
    Timing upstream_t = MedianNsPerAllocFree(t, d3, kRuns);
    Timing first_fit_t = MedianNsPerAllocFree(t, first_fit, kRuns);
    auto ratio = [&](uint64_t reserved) { return static_cast<double>(reserved) / static_cast<double>(t.peak_live); };
    auto both = [](const Timing& x) {
      return nlohmann::json{{"cpu", x.cpu_ns}, {"wall", x.wall_ns}, {"cpu_min", x.cpu_min_ns}};
    };
    traces.push_back({{"trace", t.name},
                      {"allocations", t.allocs},
                      {"peak_live_bytes", t.peak_live},
                      {"ns_per_alloc_free_median",
                       {{"arena", both(arena_t)}, {"arena_regions", both(regions_t)},
                        {"arena_regions_growth_0.125", both(gentle_t)},
                        {"upstream_every_request", both(upstream_t)}, {"first_fit", both(first_fit_t)}}},
                      {"arena_speedup_vs_upstream_cpu", upstream_t.cpu_ns / arena_t.cpu_ns},
                      {"arena_speedup_vs_first_fit_cpu", first_fit_t.cpu_ns / arena_t.cpu_ns},
                      {"peak_reserved_bytes",
                       {{"arena", arena.stats().peak_reserved_bytes},
                        {"arena_regions", regions.stats().peak_reserved_bytes},
                        {"arena_regions_growth_0.125", gentle.stats().peak_reserved_bytes},
                        {"upstream_every_request", d3.peak_used_bytes()},
                        {"first_fit", first_fit.reserved()}}},
                      {"arena_peak_allocated_rounded_over_peak_live", ratio(arena.stats().peak_allocated_bytes)},
                      {"peak_reserved_over_peak_live",
                       {{"arena", ratio(arena.stats().peak_reserved_bytes)},
                        {"arena_regions", ratio(regions.stats().peak_reserved_bytes)},
                        {"arena_regions_growth_0.125", ratio(gentle.stats().peak_reserved_bytes)},
                        {"upstream_every_request", ratio(d3.peak_used_bytes())},
                        {"first_fit", ratio(first_fit.reserved())}}}});
    std::cerr << "summary: " << t.name << " done\n";
  }
  nlohmann::json random = nlohmann::json::array();
  for (int n : {1000, 10000, 100000}) {
    RandomOps ops = MakeRandomOps(n);
    Trace t{"random", ops.ops, ops.max_id, static_cast<uint64_t>(n), 0};
    Finish(t);
    SimulatedDeviceResource d1(BigDevice()), d2(BigDevice()), d3(BigDevice());
    ArenaResource arena(d1, BenchArena(Growth::kExpandable));
    ArenaResource regions(d3, BenchArena(Growth::kOnDemand));
    Timing arena_t = MedianNsPerAllocFree(t, arena, 3);
    Timing regions_t = MedianNsPerAllocFree(t, regions, 3);
    Timing upstream_t = MedianNsPerAllocFree(t, d2, 3);
    auto ratio = [&](uint64_t reserved) { return static_cast<double>(reserved) / static_cast<double>(t.peak_live); };
    random.push_back({{"allocations", n},
                      {"ns_per_alloc_free_median",
                       {{"arena", {{"cpu", arena_t.cpu_ns}, {"wall", arena_t.wall_ns}}},
                        {"arena_regions", {{"cpu", regions_t.cpu_ns}, {"wall", regions_t.wall_ns}}},
                        {"upstream_every_request", {{"cpu", upstream_t.cpu_ns}, {"wall", upstream_t.wall_ns}}}}},
                      {"arena_speedup_vs_upstream_cpu", upstream_t.cpu_ns / arena_t.cpu_ns},
                      {"peak_reserved_over_peak_live",
                       {{"arena", ratio(arena.stats().peak_reserved_bytes)},
                        {"arena_regions", ratio(regions.stats().peak_reserved_bytes)}}}});
    std::cerr << "summary: random " << n << " done\n";
  }
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  nlohmann::json out = {{"date", date},
                        {"machine", Machine()},
                        {"command", command},
                        {"load_average", oomguard::bench::LoadAverage()},
                        {"note", "simulated device = host memory with capacity accounting; upstream_every_request "
                                 "is a mutex + hash map + aligned_alloc per request (mmap/munmap for large "
                                 "blocks), far cheaper than cudaMalloc. ns are per alloc+free pair; cpu = "
                                 "thread CPU time, median of the runs (robust when the machine is shared), "
                                 "cpu_min = fastest run, wall = steady_clock. arena = default growth "
                                 "(expandable: one address range mapped in 2 MiB steps); arena_regions = "
                                 "separate regions, the total doubling"},
                        {"runs", kRuns},
                        {"traces", traces},
                        {"random", random}};
  std::ofstream(path) << out.dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--summary=", 10) == 0) return Summary(argv[i] + 10, command);
  }
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
