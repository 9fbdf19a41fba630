#include "oomguard/feed/feed.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <thread>

#include "buffer_cache.h"
#include "oomguard/feed/byte_budget.h"
#include "oomguard/feed/image_list.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::feed {
namespace {
constexpr size_t kMaxSkippedKept = 1000;
}  // namespace

struct Item {
  uint64_t file_index = 0;
  uint8_t* file_data = nullptr;
  uint64_t file_bytes = 0;
  DecodePlan plan;
  uint64_t offset = 0;
  bool failed = false;
};

struct Job {
  uint64_t seq = 0;
  uint32_t epoch = 0;
  std::vector<Item> items;
  uint8_t* buffer = nullptr;
  uint64_t buffer_bytes = 0;  // allocated and charged (>= the images' bytes)
  std::atomic<size_t> pending{0};
  bool done = false;  // guarded by FeedCore::mu (clang cannot name another class's lock here)
};

struct FeedCore : std::enable_shared_from_this<FeedCore> {
  FeedCore(std::vector<std::string> f, FeedOptions o)
      : options(std::move(o)),
        files(std::move(f)),
        fs(options.file_system != nullptr ? *options.file_system : DefaultFileSystem()),
        staging(options.staging != nullptr ? *options.staging : DefaultHostStaging()),
        budget(options.budget_bytes, options.resume_slack_bytes != 0 ? options.resume_slack_bytes
                                                                     : options.budget_bytes / 16),
        cache(budget, staging) {}

  const FeedOptions options;
  const std::vector<std::string> files;
  const FileSystem& fs;
  HostStaging& staging;
  ByteBudget budget;
  BufferCache cache;  // after budget: returns its bytes to it on destruction

  Mutex mu;
  std::condition_variable ready_cv;  // consumer waits for a finished job
  std::condition_variable work_cv;   // workers wait for items
  std::condition_variable ahead_cv;  // the reader waits while readahead_batches are undelivered
  std::deque<std::pair<Job*, size_t>> work GUARDED_BY(mu);
  std::map<uint64_t, std::unique_ptr<Job>> jobs GUARDED_BY(mu);  // made but not yet delivered
  uint64_t next_seq GUARDED_BY(mu) = 0;
  uint64_t jobs_made GUARDED_BY(mu) = 0;
  bool reader_done GUARDED_BY(mu) = false;
  bool stop GUARDED_BY(mu) = false;
  std::optional<std::string> error GUARDED_BY(mu);
  FeedStats stats GUARDED_BY(mu);
  std::vector<SkippedImage> skipped GUARDED_BY(mu);
  std::atomic<uint64_t> consumer_held_bytes{0};
  std::atomic<uint64_t> consumer_held_batches{0};
  std::atomic<uint64_t> file_bytes_read{0};

  std::thread reader;
  std::vector<std::thread> workers;

  void ReaderLoop();
  void WorkerLoop();
  // Runs a thread's loop; an exception it does not handle (out of memory in
  // a container, a throwing on_skip) ends the stream with an error instead of
  // leaving the thread (std::terminate).
  void RunThread(void (FeedCore::*loop)()) noexcept;
  // Records a skipped image; returns false when the run must stop (kFail).
  bool Skip(uint64_t file_index, const ImageError& err);
  void Fail(std::string message);
  // A reservation failed: fine while shutting down, an error otherwise.
  void StopUnlessStopping(const Status& s) {
    if (!Stopping()) Fail(s.error());
  }
  void FinishJob(Job* job);
  void FreeItemFile(Item& item);
  void Shutdown();
  Result<Batch> Next();
  Batch MakeBatchFromJob(Job* job) REQUIRES(mu);
  void ReleaseBatch(uint8_t* data, uint64_t alloc_bytes, uint64_t charged);
  bool Stopping() {
    MutexLock lock(mu);
    return stop;
  }
};

Status ValidateOptions(const FeedOptions& o) {
  if (o.budget_bytes == 0) return MakeError("the budget must be more than 0 bytes");
  if (o.batch_size == 0) return MakeError("the batch size must be at least 1");
  if (o.epochs == 0) return MakeError("epochs must be at least 1");
  if (o.world_size == 0) return MakeError("world size must be at least 1");
  if (o.rank >= o.world_size) {
    return MakeError("rank " + std::to_string(o.rank) + " must be less than world size " +
                     std::to_string(o.world_size));
  }
  if (o.max_pixels == 0) return MakeError("the pixel limit must be more than 0");
  if (o.workers > kMaxWorkers) {
    return MakeError("--workers " + std::to_string(o.workers) + " is more than the limit of " +
                     std::to_string(kMaxWorkers) + " decoder threads");
  }
  return Status::Ok();
}

uint32_t EffectiveWorkers(uint32_t workers) {
  if (workers != 0) return std::min(workers, kMaxWorkers);
  return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxWorkers);
}

void FeedCore::Fail(std::string message) {
  {
    MutexLock lock(mu);
    if (!error) error = std::move(message);
    stop = true;
  }
  ready_cv.notify_all();
  work_cv.notify_all();
  ahead_cv.notify_all();
  budget.Close();
}

bool FeedCore::Skip(uint64_t file_index, const ImageError& err) {
  // Under kFail the first bad image ends the stream with its one error; it is
  // not a skip, and images that fail after it (in other workers) are not news.
  if (options.on_error == OnError::kFail) {
    Fail(files[file_index] + ": " + err.message);
    return false;
  }
  SkippedImage s{files[file_index], err.kind, err.message};
  {
    MutexLock lock(mu);
    if (stop) return false;
    ++stats.skipped;
    ++stats.skipped_by_kind[ToString(err.kind)];
    if (skipped.size() < kMaxSkippedKept) skipped.push_back(s);
  }
  if (options.on_skip) {
    // The caller's callback may throw: the stream ends with its message, and
    // the caller of Skip frees what it holds as for any failure.
    try {
      options.on_skip(s);
    } catch (const std::exception& e) {
      Fail(std::string("the feed pipeline stopped: ") + e.what());
      return false;
    } catch (...) {
      Fail("the feed pipeline stopped: on_skip threw");
      return false;
    }
  }
  return true;
}

void FeedCore::RunThread(void (FeedCore::*loop)()) noexcept {
  try {
    (this->*loop)();
    return;
  } catch (const std::exception& e) {
    try {
      Fail(std::string("the feed pipeline stopped: ") + e.what());
      return;
    } catch (...) {
    }
  } catch (...) {
  }
  {
    MutexLock lock(mu);
    if (!error) error = "out of memory";  // short: no allocation
    stop = true;
  }
  ready_cv.notify_all();
  work_cv.notify_all();
  ahead_cv.notify_all();
  budget.Close();
}

void FeedCore::FreeItemFile(Item& item) {
  if (item.file_data == nullptr) return;
  staging.Free(item.file_data, item.file_bytes);
  budget.Release(item.file_bytes);
  item.file_data = nullptr;
}

void FeedCore::ReaderLoop() {
  JpegDecoder header_reader;
  const uint64_t capacity = budget.capacity();
  uint64_t seq = 0;
  for (uint32_t epoch = 0; epoch < options.epochs; ++epoch) {
    std::vector<uint64_t> order =
        EpochOrder(files.size(), options.seed, epoch, options.rank, options.world_size, options.shuffle);
    size_t pos = 0;
    while (pos < order.size()) {
      if (options.readahead_batches != 0) {
        MutexLock lock(mu);
        while (!stop && seq - next_seq >= options.readahead_batches) lock.Wait(ahead_cv);
        if (stop) return;
      }
      auto job = std::make_unique<Job>();
      job->seq = seq;
      job->epoch = epoch;
      uint64_t held_file_bytes = 0, out_bytes = 0, scratch_bytes = 0;
      auto abandon = [&] {
        for (Item& it : job->items) FreeItemFile(it);
      };
      while (job->items.size() < options.batch_size && pos < order.size()) {
        if (Stopping()) return abandon();
        uint64_t index = order[pos++];
        const std::string& path = files[index];
        Result<uint64_t> size = fs.FileSize(path);
        std::optional<ImageError> err;
        if (!size) {
          err = ImageError{SkipKind::kReadError, size.error()};
        } else if (*size == 0) {
          err = ImageError{SkipKind::kEmptyFile, "empty file"};
        } else if (*size > capacity) {
          err = ImageError{SkipKind::kOverBudget, "the file (" + DescribeBytes(*size) +
                                                      ") is larger than the whole budget of " +
                                                      DescribeBytes(capacity)};
        }
        if (err) {
          if (!Skip(index, *err)) return abandon();
          continue;
        }
        if (held_file_bytes + out_bytes + scratch_bytes + *size > capacity) {
          abandon();
          return Fail("a batch of " + std::to_string(options.batch_size) +
                      " images does not fit the budget of " + DescribeBytes(capacity) +
                      " (its files and decoded images need more); raise --budget or lower --batch");
        }
        Item item;
        item.file_index = index;
        item.file_bytes = *size;
        try {
          // The cache's Reserve frees cached batch buffers before it waits.
          if (Status s = cache.Reserve(*size); !s) {
            abandon();
            return StopUnlessStopping(s);
          }
          item.file_data = staging.Allocate(*size);
        } catch (const std::bad_alloc&) {
          budget.Release(*size);
          abandon();
          return Fail("cannot allocate " + DescribeBytes(*size) + " of " + staging.name() +
                      " for " + path);
        }
        Status read = fs.ReadFile(path, item.file_data, *size);
        JpegHeader header;
        if (!read) {
          err = ImageError{SkipKind::kReadError, read.error()};
        } else {
          err = header_reader.ReadHeader(item.file_data, item.file_bytes, &header);
          if (!err) err = PlanDecode(header, options.scale, options.size, options.max_pixels, &item.plan);
          const uint64_t need = item.file_bytes + item.plan.output_bytes + item.plan.scratch_bytes;
          if (!err && need > capacity) {
            err = ImageError{SkipKind::kOverBudget, "needs " + DescribeBytes(need) +
                                                        " (file + decoded), more than the whole "
                                                        "budget of " +
                                                        DescribeBytes(capacity)};
          }
        }
        if (err) {
          FreeItemFile(item);
          if (!Skip(index, *err)) return abandon();
          continue;
        }
        file_bytes_read.fetch_add(item.file_bytes);
        held_file_bytes += item.file_bytes;
        out_bytes += item.plan.output_bytes;
        scratch_bytes += item.plan.scratch_bytes;
        job->items.push_back(item);
      }
      if (job->items.empty()) continue;
      if (held_file_bytes + out_bytes + scratch_bytes > capacity) {
        abandon();
        return Fail("a batch of " + std::to_string(job->items.size()) + " images needs " +
                    DescribeBytes(held_file_bytes + out_bytes + scratch_bytes) +
                    " (files + decoded), more than the budget of " + DescribeBytes(capacity) +
                    "; raise --budget or lower --batch");
      }
      // Reserve the decoded batch (and crop scratch) before allocating it.
      try {
        if (Status s = cache.Acquire(out_bytes, &job->buffer); !s) {
          abandon();
          return StopUnlessStopping(s);
        }
      } catch (const std::bad_alloc&) {
        abandon();
        return Fail("cannot allocate " + DescribeBytes(out_bytes) + " of " + staging.name());
      }
      job->buffer_bytes = out_bytes;
      if (Status s = cache.Reserve(scratch_bytes); !s) {
        cache.Return(job->buffer, job->buffer_bytes);
        abandon();
        return StopUnlessStopping(s);
      }
      uint64_t offset = 0;
      for (Item& it : job->items) {
        it.offset = offset;
        offset += it.plan.output_bytes;
      }
      job->pending = job->items.size();
      {
        MutexLock lock(mu);
        if (stop) {
          cache.Return(job->buffer, job->buffer_bytes);
          budget.Release(scratch_bytes);
          for (Item& it : job->items) FreeItemFile(it);  // takes no lock
          return;
        }
        Job* raw = job.get();
        for (size_t i = 0; i < raw->items.size(); ++i) work.emplace_back(raw, i);
        jobs.emplace(seq, std::move(job));
        ++seq;
        jobs_made = seq;
      }
      work_cv.notify_all();
    }
  }
  {
    MutexLock lock(mu);
    reader_done = true;
  }
  ready_cv.notify_all();
}

void FeedCore::WorkerLoop() {
  JpegDecoder decoder;
  while (true) {
    Job* job;
    size_t index;
    {
      MutexLock lock(mu);
      while (!stop && work.empty()) lock.Wait(work_cv);
      if (stop) return;
      std::tie(job, index) = work.front();
      work.pop_front();
    }
    Item& item = job->items[index];
    uint8_t* scratch = nullptr;
    std::optional<ImageError> err;
    try {
      scratch = staging.Allocate(item.plan.scratch_bytes);
      err = decoder.Decode(item.file_data, item.file_bytes, options.scale, item.plan,
                           job->buffer + item.offset, scratch);
    } catch (const std::bad_alloc&) {
      err = ImageError{SkipKind::kOverBudget, "cannot allocate scratch memory"};
    }
    staging.Free(scratch, item.plan.scratch_bytes);
    budget.Release(item.plan.scratch_bytes);
    FreeItemFile(item);
    if (err) {
      item.failed = true;
      Skip(item.file_index, *err);
    }
    if (job->pending.fetch_sub(1) == 1) FinishJob(job);
  }
}

void FeedCore::FinishJob(Job* job) {
  // Close the gaps left by images that failed to decode, so the batch is packed.
  uint64_t write = 0;
  std::vector<Item> kept;
  kept.reserve(job->items.size());
  for (Item& it : job->items) {
    if (it.failed) continue;
    if (it.offset != write) std::memmove(job->buffer + write, job->buffer + it.offset, it.plan.output_bytes);
    it.offset = write;
    write += it.plan.output_bytes;
    kept.push_back(it);
  }
  {
    MutexLock lock(mu);
    job->items = std::move(kept);
    job->done = true;
  }
  ready_cv.notify_all();
}

Result<Batch> FeedCore::Next() {
  MutexLock lock(mu);
  while (true) {
    if (error) return MakeError(*error);
    auto it = jobs.find(next_seq);
    if (it != jobs.end() && it->second->done) {
      std::unique_ptr<Job> job = std::move(it->second);
      jobs.erase(it);
      ++next_seq;
      ahead_cv.notify_one();
      if (job->items.empty()) {  // every image of the batch failed to decode
        cache.Return(job->buffer, job->buffer_bytes);
        continue;
      }
      return MakeBatchFromJob(job.get());
    }
    if (reader_done && next_seq >= jobs_made) {
      cache.Close();  // the stream is over: nothing left to reuse buffers for
      return Batch();
    }
    if (jobs.empty() && !reader_done) {
      // Nothing is being decoded: the reader is reading or waiting for bytes.
      // If it waits and the only other bytes in use are batches the consumer
      // holds, no release is coming: resume without hysteresis, or report.
      budget.ResumeWaiters();
      uint64_t needed = 0;
      if (consumer_held_bytes.load() > 0 && cache.cached_bytes() == 0 && budget.Stalled(&needed)) {
        std::string msg = "the budget of " + DescribeBytes(budget.capacity()) + " is full: " +
                          std::to_string(consumer_held_batches.load()) + " unreleased batch(es) hold " +
                          DescribeBytes(consumer_held_bytes.load()) + " and the next batch needs " +
                          DescribeBytes(needed) + " more; release batches before asking for the next";
        lock.Unlock();
        Fail(msg);
        return MakeError(msg);
      }
    }
    lock.WaitFor(ready_cv, std::chrono::milliseconds(10));
  }
}

Batch FeedCore::MakeBatchFromJob(Job* job) {
  Batch b;
  b.core_ = shared_from_this();
  b.data_ = job->buffer;
  b.alloc_bytes_ = job->buffer_bytes;
  b.charged_bytes_ = job->buffer_bytes;
  b.epoch_ = job->epoch;
  b.sequence_ = job->seq;
  b.images_.reserve(job->items.size());
  for (const Item& it : job->items) {
    b.images_.push_back(ImageInBatch{it.file_index, it.offset, it.plan.width, it.plan.height});
    b.used_bytes_ += it.plan.output_bytes;
  }
  job->buffer = nullptr;
  job->buffer_bytes = 0;
  consumer_held_bytes.fetch_add(b.charged_bytes_);
  consumer_held_batches.fetch_add(1);
  ++stats.batches;
  stats.images += b.images_.size();
  stats.decoded_bytes += b.used_bytes_;
  return b;
}

void FeedCore::ReleaseBatch(uint8_t* data, uint64_t alloc_bytes, uint64_t charged) {
  consumer_held_bytes.fetch_sub(charged);
  consumer_held_batches.fetch_sub(1);
  cache.Return(data, alloc_bytes);
  ready_cv.notify_all();
}

void FeedCore::Shutdown() {
  {
    MutexLock lock(mu);
    stop = true;
  }
  budget.Close();
  work_cv.notify_all();
  ready_cv.notify_all();
  ahead_cv.notify_all();
  if (reader.joinable()) reader.join();
  for (std::thread& t : workers) {
    if (t.joinable()) t.join();
  }
  MutexLock lock(mu);  // no thread is left to contend; the lock keeps the analysis exact
  for (auto& [seq, job] : jobs) {
    for (Item& it : job->items) FreeItemFile(it);
    if (job->buffer != nullptr) cache.Return(job->buffer, job->buffer_bytes);
  }
  jobs.clear();
  work.clear();
  cache.Close();  // batches still held are freed when released
}

Result<std::unique_ptr<Feed>> Feed::Start(std::vector<std::string> files, FeedOptions options) {
  if (Status s = ValidateOptions(options); !s) return MakeError(s.error());
  if (files.empty()) return MakeError("no images to feed");
  const uint32_t workers = EffectiveWorkers(options.workers);
  auto core = std::make_shared<FeedCore>(std::move(files), std::move(options));
  // A thread that cannot start (the process is out of threads or address
  // space) is an error; the threads already running are stopped and joined,
  // never destroyed while joinable.
  try {
    core->workers.reserve(workers);
    core->reader = std::thread([c = core.get()] { c->RunThread(&FeedCore::ReaderLoop); });
    for (uint32_t i = 0; i < workers; ++i) {
      core->workers.emplace_back([c = core.get()] { c->RunThread(&FeedCore::WorkerLoop); });
    }
  } catch (const std::exception& e) {
    const size_t started = core->workers.size();
    core->Shutdown();
    return MakeError("cannot start decoder thread " + std::to_string(started + 1) + " of " +
                     std::to_string(workers) + ": " + e.what() + "; lower --workers");
  }
  return std::unique_ptr<Feed>(new Feed(std::move(core)));
}

Feed::Feed(std::shared_ptr<FeedCore> core) : core_(std::move(core)) {}

Feed::~Feed() { core_->Shutdown(); }

Result<Batch> Feed::Next() { return core_->Next(); }

FeedStats Feed::stats() const {
  MutexLock lock(core_->mu);
  FeedStats s = core_->stats;
  s.file_bytes_read = core_->file_bytes_read.load();
  s.budget_bytes = core_->budget.capacity();
  s.peak_budget_bytes = core_->budget.peak();
  s.budget_in_use_bytes = core_->budget.in_use();
  s.budget_waits = core_->cache.waits();
  return s;
}

const std::vector<std::string>& Feed::files() const { return core_->files; }

std::vector<SkippedImage> Feed::skipped_images() const {
  MutexLock lock(core_->mu);
  return core_->skipped;
}

Batch::Batch(Batch&& other) noexcept { *this = std::move(other); }

Batch& Batch::operator=(Batch&& other) noexcept {
  if (this != &other) {
    Release();
    core_ = std::move(other.core_);
    data_ = std::exchange(other.data_, nullptr);
    alloc_bytes_ = std::exchange(other.alloc_bytes_, 0);
    used_bytes_ = std::exchange(other.used_bytes_, 0);
    charged_bytes_ = std::exchange(other.charged_bytes_, 0);
    epoch_ = other.epoch_;
    sequence_ = other.sequence_;
    images_ = std::move(other.images_);
    other.images_.clear();
  }
  return *this;
}

bool Batch::pinned() const { return core_ != nullptr && core_->staging.pinned(); }

void Batch::Release() {
  if (core_ == nullptr) return;
  core_->ReleaseBatch(data_, alloc_bytes_, charged_bytes_);
  core_.reset();
  data_ = nullptr;
  alloc_bytes_ = used_bytes_ = charged_bytes_ = 0;
  images_.clear();
}

}  // namespace oomguard::feed
