#include "oomguard/mr/out_of_memory.h"

#include <gtest/gtest.h>

#include "report_json.h"

namespace oomguard::mr {
namespace {

constexpr uint64_t MiB = 1ull << 20, GiB = 1ull << 30;

OomReport FragmentedReport() {
  OomReport r;
  r.resource = "arena over simulated device (8.00 GiB), limit 4.00 GiB";
  r.requested_bytes = 768 * MiB;
  r.limit_bytes = 4 * GiB;
  r.allocated_bytes = 3 * GiB;
  r.reserved_bytes = 4 * GiB;
  r.free_in_pool_bytes = 1 * GiB;
  r.largest_free_block_bytes = 512 * MiB;
  r.device_free_bytes = 4 * GiB;
  r.device_total_bytes = 8 * GiB;
  r.largest_live = {{2 * GiB, 0x1000, "activations"}, {1 * GiB, 0x2000, "weights"}};
  return r;
}

TEST(OutOfMemory, WhatGivesTheWholeReportWordForWord) {
  OutOfMemory e(FragmentedReport());
  EXPECT_EQ(std::string(e.what()),
            "out of memory: cannot allocate 768.00 MiB (805306368 bytes) from arena over simulated device "
            "(8.00 GiB), limit 4.00 GiB\n"
            "  limit               4.00 GiB (4294967296 bytes)\n"
            "  allocated           3.00 GiB (3221225472 bytes)\n"
            "  reserved            4.00 GiB (4294967296 bytes)\n"
            "  free in pool        1.00 GiB (1073741824 bytes)\n"
            "  largest free block  512.00 MiB (536870912 bytes)\n"
            "  fragmentation       50.0%\n"
            "  device free         4.00 GiB of 8.00 GiB\n"
            "  largest live allocations:\n"
            "    2.00 GiB (2147483648 bytes) activations\n"
            "    1.00 GiB (1073741824 bytes) weights\n"
            "  verdict: fragmentation: 1.00 GiB is free in the pool but the largest free block is "
            "512.00 MiB; allocate long-lived buffers first, reuse buffers of one size, or preallocate");
}

TEST(OutOfMemory, IsABadAllocSoExistingHandlersCatchIt) {
  try {
    throw OutOfMemory(FragmentedReport());
  } catch (const std::bad_alloc& e) {
    EXPECT_NE(std::string(e.what()).find("cannot allocate 768.00 MiB"), std::string::npos);
  }
}

TEST(OomVerdict, RequestLargerThanTheCap) {
  OomReport r = FragmentedReport();
  r.requested_bytes = 5 * GiB;
  EXPECT_EQ(r.verdict(), OomVerdict::kCapTooLow);
  EXPECT_EQ(r.verdict_line(),
            "cap too low: the request alone is larger than the limit of 4.00 GiB; raise the limit or split "
            "the allocation");
}

TEST(OomVerdict, LiveAllocationsFillTheCapWhileTheDeviceHasRoom) {
  OomReport r = FragmentedReport();
  r.allocated_bytes = 4 * GiB;
  r.free_in_pool_bytes = 0;
  r.largest_free_block_bytes = 0;
  EXPECT_EQ(r.verdict(), OomVerdict::kCapTooLow);
  EXPECT_EQ(r.verdict_line(),
            "cap too low: live allocations fill the limit (4.00 GiB of 4.00 GiB) while the device still "
            "has 4.00 GiB free; raise the limit");
}

TEST(OomVerdict, TrulyFullWhenTheDeviceIsFullToo) {
  OomReport r = FragmentedReport();
  r.allocated_bytes = 4 * GiB;
  r.free_in_pool_bytes = 0;
  r.largest_free_block_bytes = 0;
  r.device_free_bytes = 100 * MiB;
  EXPECT_EQ(r.verdict(), OomVerdict::kTrulyFull);
  EXPECT_EQ(r.verdict_line(),
            "truly full: live allocations hold 4.00 GiB of the 4.00 GiB limit; free tensors you no longer "
            "need, lower the batch size or checkpoint activations");
}

TEST(OomVerdict, UpstreamRefusedAlthoughTheCapHadRoom) {
  OomReport r = FragmentedReport();
  r.allocated_bytes = 1 * GiB;
  r.reserved_bytes = 1 * GiB;
  r.free_in_pool_bytes = 0;
  r.largest_free_block_bytes = 0;
  r.device_free_bytes = 200 * MiB;
  EXPECT_EQ(r.verdict(), OomVerdict::kUpstreamFailed);
  EXPECT_EQ(r.verdict_line(),
            "upstream refused: the limit has room for the request but the device has only 200.00 MiB "
            "free; other processes hold memory, or the limit is larger than the device");
}

TEST(OomReport, FragmentationIsOneMinusLargestOverFree) {
  OomReport r = FragmentedReport();
  EXPECT_DOUBLE_EQ(r.fragmentation(), 0.5);
  r.free_in_pool_bytes = 0;
  EXPECT_DOUBLE_EQ(r.fragmentation(), 0.0);
}

TEST(OomReport, JsonHasIntegerBytesAndTheVerdict) {
  nlohmann::json j = ToJson(FragmentedReport());
  EXPECT_TRUE(j["requested_bytes"].is_number_unsigned());
  EXPECT_EQ(j["requested_bytes"].get<uint64_t>(), 805306368u);
  EXPECT_EQ(j["verdict"], "fragmentation");
  EXPECT_EQ(j["largest_live"][0]["tag"], "activations");
  EXPECT_EQ(j["device_free_bytes"].get<uint64_t>(), 4 * GiB);
  OomReport no_device = FragmentedReport();
  no_device.device_free_bytes.reset();
  EXPECT_TRUE(ToJson(no_device)["device_free_bytes"].is_null());
}

}  // namespace
}  // namespace oomguard::mr
