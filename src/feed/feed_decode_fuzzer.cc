// libFuzzer target for the decode path: hostile bytes as a .jpg file in the
// pipeline must not crash, must never make the pipeline hold more memory than
// its budget, and must be either delivered or counted as skipped.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "feed_test_util.h"
#include "oomguard/feed/feed.h"

namespace {

using oomguard::feed::testing::CountingStaging;
using oomguard::feed::testing::FakeFileSystem;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "feed_decode_fuzzer: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oomguard::feed;
  static const std::string good = testing::MakeJpeg(16, 8, 1);
  FakeFileSystem fs;
  fs.Add("/d/fuzz.jpg", std::string(reinterpret_cast<const char*>(data), size));
  fs.Add("/d/good.jpg", good);
  CountingStaging staging;
  FeedOptions o;
  o.budget_bytes = 4u << 20;
  o.batch_size = 2;
  o.workers = 1;
  o.epochs = 1;
  o.file_system = &fs;
  o.staging = &staging;
  // Vary the decode settings with the input so every path gets hostile bytes.
  const uint8_t knob = size > 0 ? data[size - 1] : 0;
  const ScaleFactor scales[] = {{1, 1}, {1, 2}, {1, 4}, {1, 8}};
  o.scale = scales[knob & 3];
  if (knob & 4) o.size = ImageSize{12, 10};
  uint64_t delivered = 0;
  {
    auto feed = Feed::Start({"/d/fuzz.jpg", "/d/good.jpg"}, o);
    Check(feed.ok(), "Start failed");
    while (true) {
      oomguard::Result<Batch> b = (*feed)->Next();
      if (!b.ok()) {
        // The one error allowed under kSkip: two images that each fit the
        // budget but not together in one batch.
        Check(b.error().rfind("a batch of ", 0) == 0, "Next failed under --on-error skip");
        return 0;
      }
      if (b->empty()) break;
      for (const ImageInBatch& img : b->images()) Check(img.offset + img.bytes() <= b->bytes(), "image outside its batch");
      delivered += b->size();
    }
    FeedStats s = (*feed)->stats();
    Check(s.peak_budget_bytes <= o.budget_bytes, "budget exceeded");
    Check(delivered + s.skipped == 2, "an image was lost or duplicated");
    Check(delivered >= 1, "the good image was not delivered");
  }
  Check(staging.peak() <= o.budget_bytes, "more memory allocated than the budget allows");
  Check(staging.live() == 0, "memory left allocated");
  return 0;
}
