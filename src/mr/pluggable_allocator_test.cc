#include "oomguard/mr/pluggable_allocator.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <sstream>
#include <thread>

#include "oomguard/mr/simulated_device_resource.h"
#include "report_json.h"

namespace oomguard::mr {
namespace {

constexpr uint64_t MiB = 1ull << 20;

AllocConf Conf(const char* text) { return ParseAllocConf(text).value(); }

TEST(PluggableAllocator, OneArenaPerDeviceUnderTheConfiguredFraction) {
  AllocConf conf = Conf("fraction=0.5,simulate=256MiB");
  PluggableAllocator alloc(conf, MakeDefaultUpstreamFactory(conf));
  void* a = alloc.Malloc(10 * MiB, 0, nullptr);
  void* b = alloc.Malloc(10 * MiB, 1, nullptr);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  nlohmann::json stats = nlohmann::json::parse(alloc.stats_json());
  ASSERT_EQ(stats["devices"].size(), 2u);
  EXPECT_EQ(stats["devices"][0]["limit_bytes"].get<uint64_t>(), 128 * MiB);
  EXPECT_EQ(stats["devices"][1]["allocated_bytes"].get<uint64_t>(), 10 * MiB);
  EXPECT_EQ(stats["devices"][0]["growth"], "expandable");  // the simulated device has virtual memory
  EXPECT_EQ(stats["devices"][0]["regions"], 1);
  EXPECT_EQ(alloc.Malloc(200 * MiB, 0, nullptr), nullptr);  // over the 128 MiB cap
  ASSERT_TRUE(alloc.last_report().has_value());
  EXPECT_EQ(alloc.last_report()->verdict(), OomVerdict::kCapTooLow);
  alloc.Free(a, 10 * MiB, 0, nullptr);
  alloc.Free(b, 10 * MiB, 1, nullptr);
  EXPECT_FALSE(alloc.last_error().has_value());
}

TEST(PluggableAllocator, GrowthOffPreallocatesTheCap) {
  AllocConf conf = Conf("limit=64MiB,growth=off");
  SimulatedDeviceResource* seen = nullptr;
  PluggableAllocator alloc(conf, [&seen](int) -> Result<std::unique_ptr<MemoryResource>> {
    auto d = std::make_unique<SimulatedDeviceResource>(SimulatedDeviceOptions{.capacity_bytes = 1ull << 30});
    seen = d.get();
    return std::unique_ptr<MemoryResource>(std::move(d));
  });
  void* p = alloc.Malloc(1 * MiB, 0, nullptr);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->used_bytes(), 64 * MiB);
  EXPECT_EQ(nlohmann::json::parse(alloc.stats_json())["devices"][0]["growth"], "preallocated");
  alloc.Free(p, 1 * MiB, 0, nullptr);
}

TEST(PluggableAllocator, GrowthRegionsAddsRegions) {
  AllocConf conf = Conf("growth=regions,initial=4MiB,simulate=1GiB");
  PluggableAllocator alloc(conf, MakeDefaultUpstreamFactory(conf));
  void* a = alloc.Malloc(3 * MiB, 0, nullptr);
  void* b = alloc.Malloc(3 * MiB, 0, nullptr);  // does not fit in the first 4 MiB region
  nlohmann::json device = nlohmann::json::parse(alloc.stats_json())["devices"][0];
  EXPECT_EQ(device["growth"], "regions");
  EXPECT_EQ(device["regions"], 2);
  alloc.Free(a, 3 * MiB, 0, nullptr);
  alloc.Free(b, 3 * MiB, 0, nullptr);
}

TEST(PluggableAllocator, WritesTheReportFileOnOutOfMemory) {
  std::string path = ::testing::TempDir() + "/oomguard_report_test.json";
  std::remove(path.c_str());
  std::string text = "limit=8MiB,simulate=1GiB,report=" + path;
  AllocConf conf = Conf(text.c_str());
  PluggableAllocator alloc(conf, MakeDefaultUpstreamFactory(conf));
  void* p = alloc.Malloc(6 * MiB, 0, nullptr);
  EXPECT_EQ(alloc.Malloc(4 * MiB, 0, nullptr), nullptr);
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  nlohmann::json report = nlohmann::json::parse(in);
  EXPECT_EQ(report["requested_bytes"].get<uint64_t>(), 4 * MiB);
  EXPECT_EQ(report["limit_bytes"].get<uint64_t>(), 8 * MiB);
  EXPECT_EQ(report["verdict"], "cap_too_low");
  alloc.Free(p, 6 * MiB, 0, nullptr);
}

TEST(PluggableAllocator, FailuresAreRecordedNotThrown) {
  AllocConf conf = Conf("simulate=64MiB");
  PluggableAllocator alloc(conf, MakeDefaultUpstreamFactory(conf));
  EXPECT_EQ(alloc.Malloc(1024, 64, nullptr), nullptr);
  EXPECT_EQ(*alloc.last_error(), "device 64 is out of range (0..63)");
  int local;
  alloc.Free(&local, 4, 3, nullptr);
  EXPECT_EQ(*alloc.last_error(), "free on device 3 which has no allocations");
  void* p = alloc.Malloc(1024, 0, nullptr);
  alloc.Free(p, 1024, 0, nullptr);
  alloc.Free(p, 1024, 0, nullptr);
  EXPECT_EQ(*alloc.last_error(), "arena: deallocate of a pointer that is not live in this arena (double free?)");
}

TEST(PluggableAllocator, WithoutADriverEveryMallocFailsWithTheReason) {
  AllocConf conf = Conf("fraction=0.5");
  PluggableAllocator alloc(conf, [](int) -> Result<std::unique_ptr<MemoryResource>> {
    return MakeError("cannot load the CUDA driver (libcuda.so.1): gone; is the NVIDIA driver installed?");
  });
  EXPECT_EQ(alloc.Malloc(1024, 0, nullptr), nullptr);
  EXPECT_EQ(*alloc.last_error(), "cannot load the CUDA driver (libcuda.so.1): gone; is the NVIDIA driver installed?");
}

// A device whose name is not UTF-8 (as a driver may report it), so its OOM
// report cannot be serialised as strict JSON.
class OddlyNamedDevice : public MemoryResource {
 public:
  std::string name() const override { return "device \xff\xfe"; }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) override {
    return device_.allocate(bytes, alignment, stream);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) override {
    device_.deallocate(p, bytes, alignment, stream);
  }
  SimulatedDeviceResource device_{SimulatedDeviceOptions{.capacity_bytes = 256 * MiB}};
};

// Malloc is noexcept: an exception while writing the report (here from the
// JSON serialiser) used to escape it and terminate the process.
TEST(PluggableAllocator, AReportThatCannotBeSerialisedStrictlyDoesNotTerminate) {
  std::string path = ::testing::TempDir() + "/oomguard_odd_report_test.json";
  std::remove(path.c_str());
  std::string text = "limit=8MiB,growth=regions,report=" + path;
  AllocConf conf = Conf(text.c_str());
  PluggableAllocator alloc(conf, [](int) -> Result<std::unique_ptr<MemoryResource>> {
    return std::unique_ptr<MemoryResource>(std::make_unique<OddlyNamedDevice>());
  });
  EXPECT_EQ(alloc.Malloc(64 * MiB, 0, nullptr), nullptr);
  ASSERT_TRUE(alloc.last_report().has_value());
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  nlohmann::json report = nlohmann::json::parse(in);  // valid JSON, bad bytes replaced
  EXPECT_EQ(report["requested_bytes"].get<uint64_t>(), 64 * MiB);
  EXPECT_NE(report["resource"].get<std::string>().find("device \xEF\xBF\xBD"), std::string::npos);
}

// The report file is written without the lock every device needs: while one
// device's OOM report waits on a report file that blocks (a FIFO nobody
// reads yet), other devices still allocate and the statistics still answer.
TEST(PluggableAllocator, ASlowReportFileDoesNotStallOtherDevices) {
  std::string path = ::testing::TempDir() + "/oomguard_report_fifo_" + std::to_string(getpid());
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::string text = "limit=8MiB,simulate=1GiB,report=" + path;
  AllocConf conf = Conf(text.c_str());
  PluggableAllocator alloc(conf, MakeDefaultUpstreamFactory(conf));
  void* warm = alloc.Malloc(1 * MiB, 1, nullptr);  // device 1's arena exists before the stall
  ASSERT_NE(warm, nullptr);
  std::thread failing([&] { EXPECT_EQ(alloc.Malloc(64 * MiB, 0, nullptr), nullptr); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // it is now blocked opening the FIFO
  auto other = std::async(std::launch::async, [&] {
    void* p = alloc.Malloc(1 * MiB, 1, nullptr);
    alloc.Free(p, 1 * MiB, 1, nullptr);
    return p != nullptr && nlohmann::json::parse(alloc.stats_json())["devices"].size() == 2;
  });
  const bool answered = other.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  // Read the FIFO to unblock the writer whatever happened, then check.
  std::string written;
  {
    std::ifstream fifo(path);
    written.assign(std::istreambuf_iterator<char>(fifo), std::istreambuf_iterator<char>());
  }
  failing.join();
  EXPECT_TRUE(answered) << "device 1 waited for device 0's report file";
  EXPECT_TRUE(other.get());
  EXPECT_NE(written.find("\"requested_bytes\": 67108864"), std::string::npos) << written;
  alloc.Free(warm, 1 * MiB, 1, nullptr);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace oomguard::mr
