#include "oomguard/feed/memory_resource_staging.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <new>

#include "feed_test_util.h"
#include "oomguard/feed/feed.h"

namespace oomguard::feed {
namespace {

// A resource that counts live bytes and refuses beyond a cap, like a bounded pool.
class CappedResource : public mr::MemoryResource {
 public:
  explicit CappedResource(uint64_t cap) : cap_(cap) {}
  std::string name() const override { return "capped test resource"; }
  uint64_t live = 0, peak = 0;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment, mr::Stream) override {
    if (live + bytes > cap_) throw std::bad_alloc();
    live += bytes;
    peak = std::max(peak, live);
    return std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t, mr::Stream) override {
    live -= bytes;
    std::free(p);
  }
  uint64_t cap_;
};

TEST(MemoryResourceStaging, BatchesComeFromTheResourceAndSayPinned) {
  testing::FakeFileSystem fs;
  std::vector<std::string> files;
  for (uint32_t i = 0; i < 8; ++i) {
    files.push_back("/d/" + std::to_string(i) + ".jpg");
    fs.Add(files.back(), testing::MakeJpeg(16, 16, i));
  }
  CappedResource resource(1 << 20);
  MemoryResourceStaging staging(resource, /*pinned=*/true);
  FeedOptions o;
  o.budget_bytes = 64 << 10;
  o.batch_size = 4;
  o.workers = 1;
  o.file_system = &fs;
  o.staging = &staging;
  auto feed = Feed::Start(files, o);
  ASSERT_TRUE(feed);
  Result<Batch> b = (*feed)->Next();
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->pinned());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % MemoryResourceStaging::kAlignment, 0u);
  EXPECT_GE(resource.live, b->bytes());
  b->Release();
  feed->reset();
  EXPECT_EQ(resource.live, 0u);
  EXPECT_GT(resource.peak, 0u);
  EXPECT_LE(resource.peak, o.budget_bytes);
}

}  // namespace
}  // namespace oomguard::feed
