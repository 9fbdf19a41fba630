// Feed: streams JPEG images from disk into batches under ONE hard byte budget.
//
//   source (files, shuffled per epoch, sharded by rank) -> reader thread
//   (at most readahead_batches ahead of the consumer: reserve file bytes,
//   read, parse header, reserve the decoded batch) -> decoder workers
//   (TurboJPEG, DCT scaling, crop/pad, straight into the batch) -> batches in
//   order -> the consumer (Next()).
//
// The budget (ByteBudget) covers every byte the pipeline holds: file bytes
// being read and waiting to be decoded, scratch images for cropping, batch
// buffers being filled, ready batches and batches the consumer has not
// released. Bytes are reserved before they are allocated; the budget's peak
// never exceeds budget_bytes.
//
// Nothing is lost: each image of the shard is delivered exactly once per
// epoch, or counted as skipped with its reason (OnError::kSkip) or ends the
// stream with an error (OnError::kFail). Batches come in a deterministic order
// for a given seed, whatever the number of workers.
//
// A batch is one contiguous uint8 buffer of images packed back to back, each
// H x W x 3 (RGB). With a fixed size every image has the same shape and the
// buffer is an N x H x W x 3 (NHWC) tensor. The last batch of an epoch (and a
// batch that lost an image to a decode error) may hold fewer than batch_size
// images; batches never span two epochs.
//
// Thread safety: Next() must be called from one thread at a time. Batch
// handles may be released (destroyed) on any thread, also after the Feed is
// gone. stats() may be called from any thread.
// REQUIRES: the consumer releases batches; if it holds so many that the next
// batch cannot fit, Next() fails with an error that says so instead of hanging.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oomguard/feed/file_system.h"
#include "oomguard/feed/jpeg.h"
#include "oomguard/feed/staging.h"
#include "oomguard/result.h"

namespace oomguard::feed {

enum class OnError { kSkip, kFail };

struct SkippedImage {
  std::string path;
  SkipKind kind;
  std::string reason;
};

struct FeedOptions {
  // The hard limit on bytes held by the pipeline and unreleased batches.
  // It must hold at least one batch: its file bytes plus its decoded images.
  uint64_t budget_bytes = 256ull << 20;
  uint32_t batch_size = 32;
  // Decoder threads; 0 = one per hardware thread (at most kMaxWorkers). A
  // separate reader thread does the (cheap) file reads and header parsing.
  uint32_t workers = 0;
  uint32_t epochs = 1;
  ScaleFactor scale;                 // DCT scaling: 1, 1/2, 1/4, 1/8
  std::optional<ImageSize> size;     // centre crop / zero pad to W x H
  OnError on_error = OnError::kSkip;
  uint32_t rank = 0;
  uint32_t world_size = 1;
  uint64_t seed = 0;
  bool shuffle = true;
  // A source image with more pixels than this is skipped (kTooManyPixels):
  // a guard against decompression bombs. 100 Mpx by default.
  uint64_t max_pixels = 100'000'000;
  // Hysteresis: once the reader has had to wait for bytes, it resumes only
  // when this many more bytes than it needs are free. 0 = budget / 16.
  uint64_t resume_slack_bytes = 0;
  // Batches read and decoded ahead of the consumer (made but not yet taken by
  // Next()); the reader waits before reading the files of one more. A few are
  // enough to keep every decoder busy; more only hold memory (and once the
  // budget is full, the batch buffers kept for reuse are freed and mapped
  // afresh). 0 = as many as the budget holds.
  uint32_t readahead_batches = 2;
  // Boundaries; null = the real disk / plain aligned host memory.
  const FileSystem* file_system = nullptr;
  HostStaging* staging = nullptr;
  // Called (from a pipeline thread) for every skipped image (OnError::kSkip;
  // under kFail the first bad image is Next()'s error, not a skip). If it
  // throws, the stream ends: Next() fails with the exception's message.
  std::function<void(const SkippedImage&)> on_skip;
};

// More decoder threads than this is refused: past a few per core they only
// cost memory (a stack each), and thousands exhaust the process's threads.
inline constexpr uint32_t kMaxWorkers = 256;

// Checks option values (budget > 0, batch >= 1, epochs >= 1, rank < world,
// workers <= kMaxWorkers).
Status ValidateOptions(const FeedOptions& options);

// The decoder threads Start runs for `workers` (0 = one per hardware thread).
uint32_t EffectiveWorkers(uint32_t workers);

struct ImageInBatch {
  uint64_t file_index = 0;  // index into the list given to Feed::Start
  uint64_t offset = 0;      // byte offset of the image in Batch::data()
  uint32_t width = 0;
  uint32_t height = 0;
  uint64_t bytes() const { return static_cast<uint64_t>(width) * height * kChannels; }
};

struct FeedStats {
  uint64_t images = 0;          // delivered to the consumer
  uint64_t batches = 0;
  uint64_t skipped = 0;
  uint64_t file_bytes_read = 0;
  uint64_t decoded_bytes = 0;   // delivered pixel bytes
  std::map<std::string, uint64_t> skipped_by_kind;  // "corrupt" -> 3
  uint64_t budget_bytes = 0;
  uint64_t peak_budget_bytes = 0;
  uint64_t budget_in_use_bytes = 0;
  uint64_t budget_waits = 0;    // times the reader had to wait for bytes
};

class Batch;
struct FeedCore;

class Feed {
 public:
  // Starts the pipeline over `files` (e.g. from ListImages). Fails on invalid
  // options, an empty list, or a thread that cannot be started.
  static Result<std::unique_ptr<Feed>> Start(std::vector<std::string> files, FeedOptions options);
  ~Feed();  // stops the threads; batches still held stay valid
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;

  // The next batch, in order; an empty() batch at the end of the last epoch.
  // Blocks while the batch is being decoded. Fails under OnError::kFail with
  // "PATH: reason", or when the budget cannot hold the next batch.
  Result<Batch> Next();

  FeedStats stats() const;
  const std::vector<std::string>& files() const;
  // Up to the first 1000 skipped images, in the order they were found.
  std::vector<SkippedImage> skipped_images() const;

 private:
  explicit Feed(std::shared_ptr<FeedCore> core);
  std::shared_ptr<FeedCore> core_;
};

// A batch handle: owns its buffer and its share of the budget until it is
// released (Release() or destruction). Move-only.
class Batch {
 public:
  Batch() = default;
  ~Batch() { Release(); }
  Batch(Batch&& other) noexcept;
  Batch& operator=(Batch&& other) noexcept;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  bool empty() const { return images_.empty(); }
  size_t size() const { return images_.size(); }
  const uint8_t* data() const { return data_; }
  uint8_t* data() { return data_; }
  uint64_t bytes() const { return used_bytes_; }  // packed image bytes
  const ImageInBatch& image(size_t i) const { return images_[i]; }
  const std::vector<ImageInBatch>& images() const { return images_; }
  uint32_t epoch() const { return epoch_; }
  uint64_t sequence() const { return sequence_; }  // 0, 1, 2, ... over all epochs
  uint64_t charged_bytes() const { return charged_bytes_; }  // held in the budget
  bool pinned() const;

  // Returns the buffer and its bytes to the budget. Idempotent.
  void Release();

 private:
  friend struct FeedCore;
  std::shared_ptr<FeedCore> core_;
  uint8_t* data_ = nullptr;
  uint64_t alloc_bytes_ = 0;
  uint64_t used_bytes_ = 0;
  uint64_t charged_bytes_ = 0;
  uint32_t epoch_ = 0;
  uint64_t sequence_ = 0;
  std::vector<ImageInBatch> images_;
};

}  // namespace oomguard::feed
