#include "oomguard/feed/feed.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include "feed_test_util.h"
#include "oomguard/feed/image_list.h"
#include "oomguard/units.h"

namespace oomguard::feed {
namespace {

using testing::CountingStaging;
using testing::FakeFileSystem;
using testing::Fnv1a;
using testing::MakeJpeg;

constexpr int kW = 32, kH = 24;
constexpr uint64_t kImageBytes = kW * kH * 3;

// A data set in a fake file system, with the hash of every image as decoded
// on its own (the reference the pipeline's output is checked against).
struct DataSet {
  FakeFileSystem fs;
  std::vector<std::string> files;
  std::map<std::string, uint64_t> hash_of;  // readable images only

  void AddGood(const std::string& path, uint32_t id, int w = kW, int h = kH,
               ScaleFactor scale = {1, 1}, std::optional<ImageSize> size = std::nullopt) {
    std::string jpeg = MakeJpeg(w, h, id);
    fs.Add(path, jpeg);
    files.push_back(path);
    JpegDecoder d;
    JpegHeader header;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(jpeg.data());
    EXPECT_FALSE(d.ReadHeader(p, jpeg.size(), &header));
    DecodePlan plan;
    EXPECT_FALSE(PlanDecode(header, scale, size, 1u << 30, &plan));
    std::vector<uint8_t> out(plan.output_bytes), scratch(plan.scratch_bytes);
    EXPECT_FALSE(d.Decode(p, jpeg.size(), scale, plan, out.data(), scratch.data()));
    hash_of[path] = Fnv1a(out.data(), out.size());
  }
  void AddBad(const std::string& path, std::string bytes) {
    fs.Add(path, std::move(bytes));
    files.push_back(path);
  }
};

struct Delivered {
  std::vector<std::map<uint64_t, int>> count_by_hash_per_epoch;  // hash -> times seen
  std::vector<uint64_t> file_order;
  uint64_t images = 0;
  std::string error;
};

// Runs a feed to the end, hashing every delivered image.
Delivered Drain(Feed& feed, uint32_t epochs) {
  Delivered d;
  d.count_by_hash_per_epoch.resize(epochs);
  while (true) {
    Result<Batch> b = feed.Next();
    if (!b) {
      d.error = b.error();
      return d;
    }
    if (b->empty()) return d;
    for (const ImageInBatch& img : b->images()) {
      EXPECT_LE(img.offset + img.bytes(), b->bytes());
      ++d.count_by_hash_per_epoch[b->epoch()][Fnv1a(b->data() + img.offset, img.bytes())];
      d.file_order.push_back(img.file_index);
      ++d.images;
    }
  }
}

// Collects skips reported from the pipeline's threads.
class SkipRecorder {
 public:
  void Add(const SkippedImage& s) {
    MutexLock lock(mu_);
    skipped_.push_back(s);
  }
  std::vector<SkippedImage> Get() {
    MutexLock lock(mu_);
    return skipped_;
  }

 private:
  Mutex mu_;
  std::vector<SkippedImage> skipped_ GUARDED_BY(mu_);
};

FeedOptions Options(const DataSet& ds, uint64_t budget, uint32_t batch, uint32_t workers = 2) {
  FeedOptions o;
  o.budget_bytes = budget;
  o.batch_size = batch;
  o.workers = workers;
  o.file_system = &ds.fs;
  return o;
}

TEST(Feed, EveryImageExactlyOncePerEpochByContentHash) {
  DataSet ds;
  for (uint32_t i = 0; i < 37; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  CountingStaging staging;
  FeedOptions o = Options(ds, 64 * kImageBytes, 5);
  o.epochs = 3;
  o.staging = &staging;
  auto feed = Feed::Start(ds.files, o);
  ASSERT_TRUE(feed) << feed.error();
  Delivered d = Drain(**feed, 3);
  ASSERT_EQ(d.error, "");
  EXPECT_EQ(d.images, 37u * 3);
  for (uint32_t e = 0; e < 3; ++e) {
    ASSERT_EQ(d.count_by_hash_per_epoch[e].size(), 37u) << "epoch " << e;
    for (const auto& [path, hash] : ds.hash_of) {
      EXPECT_EQ(d.count_by_hash_per_epoch[e][hash], 1) << path << " epoch " << e;
    }
  }
  FeedStats s = (*feed)->stats();
  EXPECT_EQ(s.images, 111u);
  EXPECT_EQ(s.batches, 3u * 8);  // ceil(37 / 5) per epoch, never spanning epochs
  EXPECT_EQ(s.skipped, 0u);
  EXPECT_LE(s.peak_budget_bytes, s.budget_bytes);
  EXPECT_LE(staging.peak(), o.budget_bytes);  // reserve before allocate, for real
  EXPECT_EQ(staging.live(), 0u);
  EXPECT_EQ(s.budget_in_use_bytes, 0u);
}

TEST(Feed, ShardsTogetherDeliverEveryImageExactlyOnce) {
  DataSet ds;
  for (uint32_t i = 0; i < 50; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  for (uint32_t epoch_count : {2u}) {
    std::vector<std::map<uint64_t, int>> total(epoch_count);
    std::vector<uint64_t> per_rank;
    for (uint32_t rank = 0; rank < 3; ++rank) {
      FeedOptions o = Options(ds, 32 * kImageBytes, 4);
      o.rank = rank;
      o.world_size = 3;
      o.epochs = epoch_count;
      o.seed = 11;
      auto feed = Feed::Start(ds.files, o);
      ASSERT_TRUE(feed);
      Delivered d = Drain(**feed, epoch_count);
      ASSERT_EQ(d.error, "");
      per_rank.push_back(d.images);
      for (uint32_t e = 0; e < epoch_count; ++e) {
        for (auto [h, n] : d.count_by_hash_per_epoch[e]) total[e][h] += n;
      }
    }
    EXPECT_EQ(per_rank, (std::vector<uint64_t>{34, 34, 32}));  // 17, 17, 16 per epoch
    for (uint32_t e = 0; e < epoch_count; ++e) {
      ASSERT_EQ(total[e].size(), 50u);
      for (const auto& [path, hash] : ds.hash_of) EXPECT_EQ(total[e][hash], 1) << path;
    }
  }
}

TEST(Feed, OrderIsTheSameWhateverTheWorkerCount) {
  DataSet ds;
  for (uint32_t i = 0; i < 30; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  std::vector<uint64_t> expected;
  for (uint32_t i : EpochOrder(30, 5, 0, 0, 1)) expected.push_back(i);
  for (uint32_t workers : {1u, 3u}) {
    FeedOptions o = Options(ds, 16 * kImageBytes, 4, workers);
    o.seed = 5;
    auto feed = Feed::Start(ds.files, o);
    ASSERT_TRUE(feed);
    Delivered d = Drain(**feed, 1);
    EXPECT_EQ(d.file_order, expected) << workers << " workers";
  }
}

// A directory of good files mixed with every kind of bad one.
void FillMixed(DataSet& ds) {
  std::string good = MakeJpeg(kW, kH, 1000);
  for (uint32_t i = 0; i < 12; ++i) ds.AddGood("/d/good" + std::to_string(i) + ".jpg", i);
  ds.AddBad("/d/empty.jpg", "");
  ds.AddBad("/d/text.jpg", "this is not a picture\n");
  ds.AddBad("/d/header_cut.jpg", good.substr(0, 30));
  std::string big = MakeJpeg(128, 96, 2000);  // cut in the entropy-coded data, past the header
  ds.AddBad("/d/data_cut.jpg", big.substr(0, big.size() * 2 / 3));
  std::string garbled = good;
  for (size_t i = garbled.size() / 2; i < garbled.size() - 2; ++i) garbled[i] = static_cast<char>(0xFF);
  ds.AddBad("/d/garbled.jpg", garbled);
  ds.AddBad("/d/unreadable.jpg", good);
  ds.fs.FailReads("/d/unreadable.jpg");
  ds.AddBad("/d/shrunk.jpg", good);
  ds.fs.LieAboutSize("/d/shrunk.jpg", good.size() + 100);
  // A header that claims 50000 x 50000 pixels: a decompression bomb.
  std::string bomb = MakeJpeg(16, 16, 5);
  for (size_t i = 0; i + 8 < bomb.size(); ++i) {
    if (static_cast<uint8_t>(bomb[i]) == 0xFF && static_cast<uint8_t>(bomb[i + 1]) == 0xC0) {
      bomb[i + 5] = static_cast<char>(50000 >> 8);
      bomb[i + 6] = static_cast<char>(50000 & 0xFF);
      bomb[i + 7] = static_cast<char>(50000 >> 8);
      bomb[i + 8] = static_cast<char>(50000 & 0xFF);
      break;
    }
  }
  ds.AddBad("/d/bomb.jpg", bomb);
}

TEST(Feed, MixedGoodAndBadFilesSkipsTheBadWithReasons) {
  DataSet ds;
  FillMixed(ds);
  SkipRecorder recorder;
  FeedOptions o = Options(ds, 64 * kImageBytes, 4);
  o.epochs = 2;
  o.max_pixels = 10'000'000;
  o.on_skip = [&recorder](const SkippedImage& s) { recorder.Add(s); };
  CountingStaging staging;
  o.staging = &staging;
  auto feed = Feed::Start(ds.files, o);
  ASSERT_TRUE(feed);
  Delivered d = Drain(**feed, 2);
  ASSERT_EQ(d.error, "");
  for (uint32_t e = 0; e < 2; ++e) {
    ASSERT_EQ(d.count_by_hash_per_epoch[e].size(), 12u);
    for (const auto& [path, hash] : ds.hash_of) EXPECT_EQ(d.count_by_hash_per_epoch[e][hash], 1) << path;
  }
  FeedStats s = (*feed)->stats();
  EXPECT_EQ(s.images, 24u);
  EXPECT_EQ(s.skipped, 16u);  // 8 bad files, 2 epochs
  EXPECT_EQ(s.skipped_by_kind, (std::map<std::string, uint64_t>{{"corrupt", 6},
                                                                 {"empty_file", 2},
                                                                 {"not_jpeg", 2},
                                                                 {"read_error", 4},
                                                                 {"too_many_pixels", 2}}));
  std::vector<SkippedImage> logged = recorder.Get();
  ASSERT_EQ(logged.size(), 16u);
  std::map<std::string, std::string> reason;
  for (const SkippedImage& sk : logged) reason[sk.path] = sk.reason;
  EXPECT_EQ(reason["/d/empty.jpg"], "empty file");
  EXPECT_EQ(reason["/d/text.jpg"], "not a JPEG (no start-of-image marker)");
  EXPECT_EQ(reason["/d/unreadable.jpg"], "read failed: Input/output error");
  EXPECT_EQ(reason["/d/bomb.jpg"], "too many pixels: 50000x50000 is over the limit of 10000000 pixels");
  EXPECT_EQ(reason["/d/shrunk.jpg"].rfind("file shrank while reading", 0), 0u);
  EXPECT_EQ(reason["/d/data_cut.jpg"].rfind("corrupt JPEG: ", 0), 0u) << reason["/d/data_cut.jpg"];
  EXPECT_EQ(reason["/d/header_cut.jpg"], "corrupt JPEG header: no image size (file cut short?)");
  EXPECT_EQ((*feed)->skipped_images().size(), 16u);
  EXPECT_LE(staging.peak(), o.budget_bytes);
  EXPECT_EQ(staging.live(), 0u);
}

TEST(Feed, OnErrorFailStopsWithThePathAndReason) {
  DataSet ds;
  for (uint32_t i = 0; i < 6; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  ds.AddBad("/d/z.jpg", "not a jpeg");
  FeedOptions o = Options(ds, 16 * kImageBytes, 2);
  o.on_error = OnError::kFail;
  CountingStaging staging;
  o.staging = &staging;
  {
    auto feed = Feed::Start(ds.files, o);
    ASSERT_TRUE(feed);
    Delivered d = Drain(**feed, 1);
    EXPECT_EQ(d.error, "/d/z.jpg: not a JPEG (no start-of-image marker)");
    EXPECT_LE(d.images, 6u);
  }
  EXPECT_EQ(staging.live(), 0u);  // everything in flight was freed
}

TEST(Feed, TinyBudgetOfOneImageStillMakesProgress) {
  DataSet ds;
  for (uint32_t i = 0; i < 20; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  uint64_t largest_file = 0;
  for (const std::string& f : ds.files) largest_file = std::max(largest_file, *ds.fs.FileSize(f));
  FeedOptions o = Options(ds, largest_file + kImageBytes, 1, 2);  // one image: its file + pixels
  CountingStaging staging;
  o.staging = &staging;
  auto feed = Feed::Start(ds.files, o);
  ASSERT_TRUE(feed);
  Delivered d = Drain(**feed, 1);
  ASSERT_EQ(d.error, "");
  EXPECT_EQ(d.images, 20u);
  EXPECT_EQ(d.count_by_hash_per_epoch[0].size(), 20u);
  FeedStats s = (*feed)->stats();
  EXPECT_LE(s.peak_budget_bytes, o.budget_bytes);
  EXPECT_LE(staging.peak(), o.budget_bytes);
  EXPECT_GT(s.budget_waits, 0u);  // it really was throttled
}

TEST(Feed, ImageLargerThanTheWholeBudgetIsSkippedNotADeadlock) {
  DataSet ds;
  for (uint32_t i = 0; i < 6; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  ds.AddBad("/d/huge_file.jpg", MakeJpeg(400, 300, 99));         // the file alone is too big
  ds.AddBad("/d/huge_pixels.jpg", MakeJpeg(200, 150, 98, 5));   // small file, big image
  FeedOptions o = Options(ds, 4 * kImageBytes, 1);
  auto feed = Feed::Start(ds.files, o);
  ASSERT_TRUE(feed);
  Delivered d = Drain(**feed, 1);
  ASSERT_EQ(d.error, "");
  EXPECT_EQ(d.images, 6u);
  std::vector<SkippedImage> sk = (*feed)->skipped_images();
  ASSERT_EQ(sk.size(), 2u);
  std::map<std::string, std::string> reason;
  for (const SkippedImage& s : sk) {
    EXPECT_EQ(s.kind, SkipKind::kOverBudget);
    reason[s.path] = s.reason;
  }
  uint64_t file_bytes = *ds.fs.FileSize("/d/huge_file.jpg");
  EXPECT_EQ(reason["/d/huge_file.jpg"], "the file (" + FormatBytes(file_bytes) + " (" +
                                            std::to_string(file_bytes) +
                                            " bytes)) is larger than the whole budget of 9.00 KiB (9216 bytes)");
  uint64_t need = *ds.fs.FileSize("/d/huge_pixels.jpg") + 200 * 150 * 3;
  EXPECT_EQ(reason["/d/huge_pixels.jpg"], "needs " + FormatBytes(need) + " (" + std::to_string(need) +
                                              " bytes) (file + decoded), more than the whole "
                                              "budget of 9.00 KiB (9216 bytes)");
}

TEST(Feed, BatchLargerThanTheBudgetIsAClearError) {
  DataSet ds;
  for (uint32_t i = 0; i < 10; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  FeedOptions o = Options(ds, 3 * kImageBytes, 8);
  auto feed = Feed::Start(ds.files, o);
  ASSERT_TRUE(feed);
  Delivered d = Drain(**feed, 1);
  EXPECT_EQ(d.error,
            "a batch of 8 images does not fit the budget of 6.75 KiB (6912 bytes) (its files and "
            "decoded images need more); raise --budget or lower --batch");
}

TEST(Feed, ConsumerHoldingTheWholeBudgetGetsAnErrorNotAHang) {
  DataSet ds;
  for (uint32_t i = 0; i < 10; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  FeedOptions o = Options(ds, 5 * kImageBytes, 2);
  auto feed = Feed::Start(ds.files, o);
  ASSERT_TRUE(feed);
  std::vector<Batch> held;
  std::string error;
  for (int i = 0; i < 10; ++i) {
    Result<Batch> b = (*feed)->Next();
    if (!b) {
      error = b.error();
      break;
    }
    ASSERT_FALSE(b->empty());
    held.push_back(std::move(*b));
  }
  EXPECT_EQ(held.size(), 2u);  // two batches of 2 fit; the third cannot
  EXPECT_NE(error.find("unreleased batch(es) hold"), std::string::npos) << error;
  EXPECT_NE(error.find("release batches before asking for the next"), std::string::npos) << error;
}

TEST(Feed, FixedSizeBatchesAreNhwcTensors) {
  DataSet ds;
  ScaleFactor half{1, 2};
  ImageSize size{12, 12};
  for (uint32_t i = 0; i < 9; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i, kW, kH, half, size);
  ds.AddGood("/d/odd.jpg", 77, 10, 30, half, size);  // 5 x 15 after scaling: pad and crop
  FeedOptions o = Options(ds, 64 * kImageBytes, 4);
  o.scale = half;
  o.size = size;
  auto feed = Feed::Start(ds.files, o);
  ASSERT_TRUE(feed);
  uint64_t n = 0;
  std::set<uint64_t> hashes;
  while (true) {
    Result<Batch> b = (*feed)->Next();
    ASSERT_TRUE(b);
    if (b->empty()) break;
    EXPECT_EQ(b->bytes(), b->size() * 12 * 12 * 3);
    for (size_t i = 0; i < b->size(); ++i) {
      EXPECT_EQ(b->image(i).width, 12u);
      EXPECT_EQ(b->image(i).offset, i * 12 * 12 * 3);
      hashes.insert(Fnv1a(b->data() + b->image(i).offset, b->image(i).bytes()));
    }
    n += b->size();
  }
  EXPECT_EQ(n, 10u);
  std::set<uint64_t> want;
  for (auto& [p, h] : ds.hash_of) want.insert(h);
  EXPECT_EQ(hashes, want);
}

TEST(Feed, DestroyingTheFeedMidStreamFreesEverythingAndHeldBatchesStayValid) {
  DataSet ds;
  for (uint32_t i = 0; i < 40; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  CountingStaging staging;
  FeedOptions o = Options(ds, 10 * kImageBytes, 2);
  o.staging = &staging;
  Batch kept;
  {
    auto feed = Feed::Start(ds.files, o);
    ASSERT_TRUE(feed);
    Result<Batch> b = (*feed)->Next();
    ASSERT_TRUE(b);
    kept = std::move(*b);
  }
  ASSERT_EQ(kept.size(), 2u);
  uint64_t h = Fnv1a(kept.data(), kept.image(0).bytes());
  bool known = false;
  for (auto& [p, hh] : ds.hash_of) known |= hh == h;
  EXPECT_TRUE(known);
  EXPECT_GT(staging.live(), 0u);
  kept.Release();
  EXPECT_EQ(staging.live(), 0u);
}

// A slow consumer: the pipeline reads and decodes readahead_batches ahead and
// then waits, however large the budget, so it holds a few batches, not the
// budget's worth (and reuses their buffers instead of mapping fresh ones).
TEST(Feed, ReadsOnlyReadaheadBatchesAheadOfASlowConsumer) {
  DataSet ds;
  for (uint32_t i = 0; i < 40; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  auto reads_settle = [&](uint64_t want) {
    for (int i = 0; i < 400 && ds.fs.reads() < want; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // and no more come
    return ds.fs.reads();
  };
  for (uint32_t readahead : {1u, 2u}) {
    const uint64_t before = ds.fs.reads();
    FeedOptions o = Options(ds, 1000 * kImageBytes, 4);
    o.readahead_batches = readahead;
    auto feed = Feed::Start(ds.files, o);
    ASSERT_TRUE(feed) << feed.error();
    EXPECT_EQ(reads_settle(before + 4 * readahead) - before, 4u * readahead);
    EXPECT_LE((*feed)->stats().budget_in_use_bytes, readahead * 4 * kImageBytes);  // the files are freed
    {
      Result<Batch> b = (*feed)->Next();  // held: the pipeline goes on with the next
      ASSERT_TRUE(b);
      EXPECT_EQ(reads_settle(before + 4 * (readahead + 1)) - before, 4u * (readahead + 1));
    }
    Delivered d = Drain(**feed, 1);
    EXPECT_EQ(d.error, "");
    EXPECT_EQ(d.images, 40u - 4);
  }
  // 0: as far ahead as the budget allows (here: everything).
  const uint64_t before = ds.fs.reads();
  FeedOptions o = Options(ds, 1000 * kImageBytes, 4);
  o.readahead_batches = 0;
  auto feed = Feed::Start(ds.files, o);
  ASSERT_TRUE(feed);
  EXPECT_EQ(reads_settle(before + 40) - before, 40u);
}

TEST(Feed, InvalidOptionsAreRejected) {
  DataSet ds;
  ds.AddGood("/d/a.jpg", 1);
  FeedOptions o = Options(ds, 0, 1);
  auto f = Feed::Start(ds.files, o);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error(), "the budget must be more than 0 bytes");
  o = Options(ds, 1000, 1);
  o.rank = 2;
  o.world_size = 2;
  f = Feed::Start(ds.files, o);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error(), "rank 2 must be less than world size 2");
  o = Options(ds, 1000, 0);
  EXPECT_FALSE(Feed::Start(ds.files, o));
  f = Feed::Start({}, Options(ds, 1000, 1));
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error(), "no images to feed");
}

TEST(Feed, CmykImagesAreDeliveredAsRgbNotSkipped) {
  std::ifstream in(std::string(OOMGUARD_FEED_TESTDATA) + "/cmyk_adobe_32x24.jpg", std::ios::binary);
  std::string cmyk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(cmyk.empty());
  DataSet ds;
  ds.AddGood("/d/rgb.jpg", 1);
  ds.AddBad("/d/cmyk.jpg", cmyk);  // "bad" only in that DataSet has no reference hash for it
  FeedOptions o = Options(ds, 1 << 20, 2);
  o.size = ImageSize{16, 16};
  auto feed = Feed::Start(ds.files, o);
  ASSERT_TRUE(feed) << feed.error();
  Delivered d = Drain(**feed, 1);
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.images, 2u);
  EXPECT_EQ((*feed)->stats().skipped, 0u);
}

// An exception in a pipeline thread (here a throwing on_skip) ends the stream
// with an error; it used to leave the thread and terminate the process.
TEST(FeedThreads, AnExceptionInAPipelineThreadIsAnErrorNotACrash) {
  DataSet ds;
  for (uint32_t i = 0; i < 6; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  ds.AddBad("/d/bad_header.jpg", "GIF89a....");                      // found by the reader
  ds.AddBad("/d/bad_data.jpg", MakeJpeg(64, 48, 9).substr(0, 700));  // found by a decoder
  for (const char* only : {"/d/bad_header.jpg", "/d/bad_data.jpg"}) {
    FeedOptions o = Options(ds, 1 << 20, 2);
    o.on_skip = [only](const SkippedImage& s) {
      if (s.path == only) throw std::runtime_error("the callback failed on " + s.path);
    };
    auto feed = Feed::Start(ds.files, o);
    ASSERT_TRUE(feed) << feed.error();
    Delivered d = Drain(**feed, 1);
    EXPECT_EQ(d.error, std::string("the feed pipeline stopped: the callback failed on ") + only);
  }
}

TEST(FeedThreads, TooManyWorkersIsRefusedBeforeAnyThreadStarts) {
  DataSet ds;
  ds.AddGood("/d/a.jpg", 1);
  FeedOptions o = Options(ds, 1 << 20, 1, 100000);
  auto f = Feed::Start(ds.files, o);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error(), "--workers 100000 is more than the limit of 256 decoder threads");
  EXPECT_EQ(EffectiveWorkers(kMaxWorkers), kMaxWorkers);
  EXPECT_GE(EffectiveWorkers(0), 1u);
  EXPECT_LE(EffectiveWorkers(0), kMaxWorkers);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// In a child process whose address space has room for only a few thread
// stacks, starting 200 workers fails part way: Start must stop and join the
// threads it started and return an error, not destroy a running std::thread
// (std::terminate, exit 134).
TEST(FeedThreads, AThreadThatCannotStartIsAnErrorNotACrash) {
  if (kSanitized) GTEST_SKIP() << "sanitizers reserve address space; RLIMIT_AS cannot be lowered";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  DataSet ds;
  for (uint32_t i = 0; i < 8; ++i) ds.AddGood("/d/" + std::to_string(i) + ".jpg", i);
  EXPECT_EXIT(
      {
        uint64_t vm_kib = 0;
        std::ifstream status("/proc/self/status");
        for (std::string line; std::getline(status, line);) {
          if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stoull(line.substr(7));
        }
        rlimit limit{};
        limit.rlim_cur = limit.rlim_max = (vm_kib << 10) + (48ull << 20);  // ~5 thread stacks
        if (vm_kib == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
        auto f = Feed::Start(ds.files, Options(ds, 1 << 20, 2, 200));
        if (f) _exit(4);  // every thread started: the limit did not bite
        const bool named = f.error().rfind("cannot start decoder thread ", 0) == 0 &&
                           f.error().find(" of 200: ") != std::string::npos;
        _exit(named ? 0 : 5);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace oomguard::feed
