#include "oomguard/host/host_plan.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>

#include "oomguard/doctor/system_view.h"
#include "pipeline_constants.h"

namespace oomguard::host {
namespace {

namespace k = constants;

PipelineOptions Options(const std::string& sample, int64_t batch, int64_t workers, int64_t prefetch = 2) {
  PipelineOptions o;
  o.sample = *ParseSample(sample);
  o.batch = batch;
  o.loader_workers = workers;
  o.prefetch_factor = prefetch;
  o.cuda = false;
  return o;
}

TEST(Sample, ParsesDimsAndDtype) {
  Result<Sample> s = ParseSample("3x480x640:float32");
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s->dims, (std::vector<int64_t>{3, 480, 640}));
  EXPECT_EQ(s->Bytes(), 3686400u);
  EXPECT_EQ(ParseSample("3,480,640:uint8")->Bytes(), 921600u);
  EXPECT_EQ(ParseSample("480x640x3:float")->dtype, DType::kFloat32);
  EXPECT_EQ(ParseSample("128:bfloat16")->Bytes(), 256u);
  EXPECT_EQ(s->ToString(), "3x480x640:float32");
}

TEST(Sample, RejectsMalformedTextInOneLine) {
  EXPECT_EQ(ParseSample("3x480x640").error(), "--sample '3x480x640': expected DIMS:DTYPE like 3x480x640:uint8");
  EXPECT_EQ(ParseSample("3x480x640:").error(), "--sample '3x480x640:': expected DIMS:DTYPE like 3x480x640:uint8");
  EXPECT_EQ(ParseSample("3x-1:uint8").error(), "--sample '3x-1:uint8': DIMS must be positive integers like 3x480x640");
  EXPECT_EQ(ParseSample("3xx4:uint8").error(), "--sample '3xx4:uint8': DIMS must be positive integers like 3x480x640");
  EXPECT_EQ(ParseSample("0:uint8").error(), "--sample '0:uint8': DIMS must be positive integers like 3x480x640");
  EXPECT_EQ(ParseSample("99999999999999999999:uint8").error(),
            "--sample '99999999999999999999:uint8': DIMS must be positive integers like 3x480x640");
  EXPECT_EQ(ParseSample("3x4:floaty").error(),
            "--sample '3x4:floaty': unknown dtype 'floaty' (choose from uint8, int8, int16, int32, int64, float16, "
            "bfloat16, float32, float64)");
  EXPECT_EQ(ParseSample("100000x100000x1000:float32").error(),
            "--sample '100000x100000x1000:float32': one item would be more than 1.00 TiB; is a dimension mistyped?");
}

TEST(Pipeline, ValidationNamesTheFlag) {
  PipelineOptions o = Options("3x8x8:uint8", 4, 2);
  EXPECT_TRUE(ValidatePipeline(o).ok());
  o.loader_workers = -1;
  EXPECT_EQ(ValidatePipeline(o).error(), "--loader-workers must be at least 0, got -1");
  o = Options("3x8x8:uint8", 4, 2, 0);
  EXPECT_EQ(ValidatePipeline(o).error(), "--prefetch-factor must be at least 1, got 0");
  o = Options("3x8x8:uint8", 4, 2);
  o.queue_items = -5;
  EXPECT_EQ(ValidatePipeline(o).error(), "--queue must be at least 0, got -5");
  o = Options("3x480x640:float64", 1 << 30, 8, 1 << 20);
  EXPECT_NE(ValidatePipeline(o).error().find("more than 1 EiB"), std::string::npos);
}

TEST(Pipeline, ZeroWorkersTheMainProcessAssembles) {
  PipelineOptions o = Options("3x240x320:float32", 16, 0);
  HostPlan p = PlanHost(o);
  const uint64_t item = 3 * 240 * 320 * 4;
  EXPECT_EQ(p.item_bytes, item);
  EXPECT_EQ(p.batch_bytes, 16 * (item + 8));
  EXPECT_EQ(p.per_worker_bytes, 0u);
  EXPECT_EQ(p.in_flight_batches, k::kMainProcessBatches);
  EXPECT_EQ(p.cuda_runtime_bytes, 0u);
  EXPECT_EQ(p.peak_bytes, p.baseline_bytes + p.workers_bytes + p.in_flight_bytes);
}

TEST(Pipeline, WorkersTimesPrefetchBatchesInFlight) {
  HostPlan p = PlanHost(Options("3x240x320:float32", 16, 4, 3));
  EXPECT_EQ(p.in_flight_batches, 4 * 3 + k::kLoopHeldBatches);
  EXPECT_EQ(p.in_flight_bytes, static_cast<uint64_t>(p.in_flight_batches) * p.batch_bytes);
  EXPECT_EQ(p.workers_bytes, 4 * p.per_worker_bytes);
  EXPECT_GT(p.per_worker_bytes, 16 * p.item_bytes);  // at least the items it collates
  // More workers or a deeper prefetch never need less.
  EXPECT_LT(PlanHost(Options("3x240x320:float32", 16, 3, 3)).peak_bytes, p.peak_bytes);
  EXPECT_LT(PlanHost(Options("3x240x320:float32", 16, 4, 2)).peak_bytes, p.peak_bytes);
  // uint8 items: the batches are 4x smaller.
  EXPECT_EQ(PlanHost(Options("3x240x320:uint8", 16, 4, 3)).item_bytes * 4, p.item_bytes);
}

TEST(Pipeline, CudaAddsTheRuntimeAndCpuTargetAddsTheStep) {
  PipelineOptions o = Options("3x32x32:uint8", 8, 1);
  uint64_t cpu = PlanHost(o).peak_bytes;
  o.cuda = true;
  EXPECT_EQ(PlanHost(o).peak_bytes, cpu + k::kCudaRuntimeHostBytes);
  o.cuda = false;
  o.step_bytes = 123456789;
  EXPECT_EQ(PlanHost(o).peak_bytes, cpu + 123456789);
}

// The article: 5100 photos of 480x640 held as float32 on a 16 GB machine.
TEST(Pipeline, TheArticlesPreloadedFloatPhotosDoNotFitIn16GB) {
  PipelineOptions o = Options("3x480x640:float32", 32, 0);
  o.dataset_in_memory = 5100;
  o.cuda = true;
  HostPlan p = PlanHost(o);
  EXPECT_EQ(p.held_bytes, 5100ull * 3686400);  // 18.8 GB
  HostVerdict v = JudgeHost(p, {.memory_bytes = 16'000'000'000ull, .memlock_bytes = {}, .shm_bytes = {}});
  ASSERT_TRUE(v.fits.has_value());
  EXPECT_FALSE(*v.fits);
  EXPECT_LT(v.headroom_bytes, -int64_t{2'800'000'000});

  std::vector<HostAdvice> advice = AdviseHost(o, 16'000'000'000ull);
  ASSERT_FALSE(advice.empty());
  // oomguard feed (stream, uint8, under a budget) saves the most; streaming alone saves the preloaded set.
  EXPECT_EQ(advice[0].action.rfind("oomguard feed DIR --budget ", 0), 0u) << advice[0].action;
  bool saw_stream = false;
  for (const HostAdvice& a : advice) {
    if (a.action.rfind("stream the dataset", 0) != 0) continue;
    saw_stream = true;
    PipelineOptions streamed = o;
    streamed.dataset_in_memory = 0;
    EXPECT_EQ(a.peak_bytes, PlanHost(streamed).peak_bytes);
    EXPECT_GE(a.saves_bytes, p.held_bytes);
    EXPECT_TRUE(a.fits);
  }
  EXPECT_TRUE(saw_stream);
  bool saw_uint8 = false;
  for (const HostAdvice& a : advice) {
    if (a.action.find("uint8") != std::string::npos && a.action.find("keep items") != std::string::npos) {
      saw_uint8 = true;
      PipelineOptions c = o;
      c.sample.dtype = DType::kUint8;
      EXPECT_EQ(a.peak_bytes, PlanHost(c).peak_bytes);  // re-planned, not estimated
      EXPECT_TRUE(a.fits);
    }
    EXPECT_EQ(a.saves_bytes, p.peak_bytes - a.peak_bytes) << a.action;
  }
  EXPECT_TRUE(saw_uint8);
  bool saw_preload_limit = false;
  for (const HostAdvice& a : advice) {
    if (a.action.rfind("--dataset-in-memory ", 0) == 0) {
      saw_preload_limit = true;
      EXPECT_TRUE(a.fits);
      EXPECT_LE(a.peak_bytes, 16'000'000'000ull);
      PipelineOptions one_more = o;
      one_more.dataset_in_memory = std::stoll(a.action.substr(20)) + 1;
      EXPECT_GT(PlanHost(one_more).peak_bytes, 16'000'000'000ull);  // the largest: one more does not fit
    }
  }
  EXPECT_TRUE(saw_preload_limit);
}

// A public report: a 20.4 GiB request pinned 32 GiB.
TEST(Pinned, PyTorchRoundsEachBlockToAPowerOfTwo) {
  PipelineOptions o = Options("3x480x640:float32", 1, 1, 1);
  o.cuda = true;
  o.pin_memory = true;
  o.sample = *ParseSample("5476083302:float32");  // 20.4 GiB of float32 per batch of 1
  HostPlan p = PlanHost(o);
  const int64_t batches = 1 * 1 + k::kPinnedExtraBatches;
  EXPECT_EQ(p.pinned_bytes, static_cast<uint64_t>(batches) * ((32ull << 30) + 8));
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes[0].find("power of two"), std::string::npos);

  // A bounded pool: exact sizes, never more than the limit, the rest pageable.
  o.pinned_limit_bytes = 24ull << 30;
  HostPlan bounded = PlanHost(o);
  EXPECT_EQ(bounded.pinned_bytes, 24ull << 30);
  EXPECT_LT(bounded.peak_bytes, p.peak_bytes);
}

TEST(Pinned, AdviceOffersPinMemoryOffAndABoundedPool) {
  PipelineOptions o = Options("3x224x224:float32", 64, 4, 2);
  o.cuda = true;
  o.pin_memory = true;
  HostPlan p = PlanHost(o);
  EXPECT_GT(p.pinned_bytes, 0u);
  bool off = false, bounded = false;
  for (const HostAdvice& a : AdviseHost(o, 64ull << 30)) {
    if (a.action.rfind("pin_memory=False", 0) == 0) {
      off = true;
      EXPECT_EQ(a.pinned_bytes, 0u);
    }
    if (a.action.rfind("OOMGUARD_PINNED_LIMIT=", 0) == 0) {
      bounded = true;
      EXPECT_LT(a.pinned_bytes, p.pinned_bytes);
    }
  }
  EXPECT_TRUE(off);
  EXPECT_TRUE(bounded);
}

TEST(Advice, FewerWorkersIsTheMostThatFit) {
  PipelineOptions o = Options("3x480x640:float32", 64, 8, 4);
  HostPlan p = PlanHost(o);
  const uint64_t capacity = p.peak_bytes / 2;
  for (const HostAdvice& a : AdviseHost(o, capacity)) {
    if (a.action.rfind("--loader-workers ", 0) != 0) continue;
    int workers = std::stoi(a.action.substr(17));
    PipelineOptions more = o;
    more.loader_workers = workers + 1;
    EXPECT_GT(PlanHost(more).peak_bytes, capacity);
    EXPECT_EQ(a.fits, a.peak_bytes <= capacity);
    return;
  }
  FAIL() << "no worker advice";
}

class FakeSystem final : public doctor::SystemView {
 public:
  std::map<std::string, std::string> files;
  std::optional<uint64_t> memlock;
  std::optional<uint64_t> shm;
  std::optional<std::string> ReadFile(const std::string& path) const override {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  }
  bool Exists(const std::string& path) const override { return files.count(path) > 0; }
  std::vector<std::string> ListDir(const std::string&) const override { return {}; }
  std::optional<std::string> Env(const std::string&) const override { return std::nullopt; }
  std::optional<uint64_t> MemlockLimitBytes() const override { return memlock; }
  std::optional<uint64_t> FilesystemBytes(const std::string& path) const override {
    return path == "/dev/shm" ? shm : std::nullopt;
  }
  Result<int> LibraryVersion(const std::string&, doctor::LibraryKind) const override {
    return MakeError("no libraries");
  }
};

TEST(Limits, ReadsMemTotalMemlockAndShm) {
  FakeSystem sys;
  sys.files["/proc/meminfo"] = "MemTotal:       16384000 kB\nMemFree:         1000 kB\n";
  sys.memlock = 8ull << 20;
  sys.shm = 64ull << 20;
  HostLimits l = HostLimitsFromSystem(sys);
  EXPECT_EQ(l.memory_bytes, 16384000ull * 1024);
  EXPECT_EQ(l.memlock_bytes, 8ull << 20);
  EXPECT_EQ(l.shm_bytes, 64ull << 20);

  FakeSystem empty;
  HostLimits none = HostLimitsFromSystem(empty);
  EXPECT_FALSE(none.memory_bytes.has_value());
  EXPECT_FALSE(JudgeHost(PlanHost(Options("3x8x8:uint8", 1, 0)), none).fits.has_value());
}

TEST(Limits, WarnsAboutMemlockAndASmallDevShm) {
  PipelineOptions o = Options("3x224x224:float32", 64, 4, 2);
  o.cuda = true;
  o.pin_memory = true;
  HostPlan p = PlanHost(o);
  HostVerdict v = JudgeHost(p, {.memory_bytes = 1ull << 40, .memlock_bytes = 8ull << 20, .shm_bytes = 64ull << 20});
  ASSERT_EQ(v.warnings.size(), 2u);
  EXPECT_EQ(v.warnings[0].rfind("pinned ", 0), 0u);
  EXPECT_NE(v.warnings[1].find("/dev/shm"), std::string::npos);
  EXPECT_TRUE(*v.fits);
  // No workers: nothing goes through /dev/shm.
  HostVerdict w = JudgeHost(PlanHost(Options("3x224x224:float32", 64, 0)), {.memory_bytes = {}, .memlock_bytes = {}, .shm_bytes = 1});
  EXPECT_TRUE(w.warnings.empty());
}

}  // namespace
}  // namespace oomguard::host

namespace oomguard::host {
namespace {

// The host section must not slow plan down (plan's budget is 20 ms in all): plan plus every what-if.
TEST(Speed, PlanAndAdviceTakeWellUnderAMillisecond) {
  PipelineOptions o = Options("3x480x640:float32", 32, 8, 4);
  o.cuda = true;
  o.pin_memory = true;
  o.queue_items = 5100;
  o.dataset_in_memory = 5100;
  const int runs = 200;
  uint64_t sink = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) sink += PlanHost(o).peak_bytes + AdviseHost(o, 16'000'000'000ull).size();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / runs;
  std::printf("PlanHost + AdviseHost: %.3f ms\n", ms);
  EXPECT_GT(sink, 0u);
  EXPECT_LT(ms, 5.0);  // generous for a loaded shared machine; 0.2 ms measured here
}

}  // namespace
}  // namespace oomguard::host
