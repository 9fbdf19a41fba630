// oomguard feed DIR --budget BYTES: streams JPEG images through the budgeted
// pipeline (oomguard/feed/feed.h) as fast as possible, or at --step-ms per
// batch to simulate a training step, and reports throughput, the budget's
// high-water mark and the process's peak resident memory.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "commands.h"
#include "common.h"
#include "feed_progress.h"
#include "oomguard/feed/feed.h"
#include "oomguard/feed/image_list.h"
#include "oomguard/self_memory.h"
#include "oomguard/thread_annotations.h"
#include "oomguard/units.h"

namespace oomguard::cli {
namespace {

constexpr const char* kCmd = "feed";
constexpr int kMaxSkipsLogged = 20;

// Logs the first kMaxSkipsLogged skips (from any pipeline thread).
class SkipLog {
 public:
  void Log(const feed::SkippedImage& s) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (logged_ < kMaxSkipsLogged) {
      PrintError(kCmd, "skipped " + s.path + ": " + s.reason);
    } else if (logged_ == kMaxSkipsLogged) {
      PrintError(kCmd, "more files skipped; the summary counts them");
    }
    ++logged_;
  }

 private:
  Mutex mu_;
  int logged_ GUARDED_BY(mu_) = 0;
};

}  // namespace

int RunFeed(int argc, char** argv) {
  CLI::App app{"Stream JPEG images from disk under a hard host-memory byte budget"};
  std::string dir;
  std::optional<uint64_t> budget;
  uint32_t batch = 32, workers = 0, epochs = 1, rank = 0, world_size = 1;
  uint64_t seed = 0, max_pixels = 100'000'000;
  double step_ms = 0;
  std::string scale_text = "1", size_text, on_error = "skip";
  bool json = false;
  app.add_option("DIR", dir, "folder scanned recursively for *.jpg/*.jpeg, or a list file")->required();
  AddBytesOption(app, "--budget", &budget,
                 "hard limit on bytes in flight: files read, decoded images, unreleased batches")
      ->required();
  AddNumberOption(app, "--batch", &batch, 0, 1 << 20, "images per batch");
  ShowDefault(AddNumberOption(app, "--workers", &workers, 0, 256, "decoder threads, at most 256"), "one per core");
  AddNumberOption(app, "--epochs", &epochs, 0, 1 << 20, "passes over the data");
  app.add_option("--scale", scale_text, "decode at 1, 1/2, 1/4 or 1/8 of the size (DCT scaling)")
      ->capture_default_str();
  app.add_option("--size", size_text, "centre-crop / zero-pad every image to WxH, e.g. 224x224");
  app.add_option("--on-error", on_error, "skip (count and log bad files) or fail (stop at the first)")
      ->capture_default_str()
      ->check(CLI::IsMember({"skip", "fail"}));
  AddNumberOption(app, "--rank", &rank, 0, 1 << 20, "this process's shard (0-based)");
  AddNumberOption(app, "--world-size", &world_size, 0, 1 << 20, "number of shards (processes)");
  AddNumberOption(app, "--step-ms", &step_ms, 0, 3'600'000, "hold each batch this long, like a training step");
  AddNumberOption(app, "--seed", &seed, 0, UINT64_MAX, "shuffle seed (same on every rank)");
  AddNumberOption(app, "--max-pixels", &max_pixels, 0, UINT64_MAX, "skip source images with more pixels");
  app.add_flag("--json", json, "machine output on stdout");
  if (std::optional<int> rc = Parse(app, kCmd, argc, argv)) return *rc;

  feed::FeedOptions options;
  if (*budget == 0) return UsageError(kCmd, "--budget must be more than 0 bytes");
  options.budget_bytes = *budget;
  options.batch_size = batch;
  options.workers = workers;
  options.epochs = epochs;
  options.rank = rank;
  options.world_size = world_size;
  options.seed = seed;
  options.max_pixels = max_pixels;
  options.on_error = on_error == "fail" ? feed::OnError::kFail : feed::OnError::kSkip;
  Result<feed::ScaleFactor> scale = feed::ParseScale(scale_text);
  if (!scale) return UsageError(kCmd, scale.error());
  options.scale = *scale;
  if (app.count("--size") > 0) {  // given, even empty: "" is a bad size, not no size
    Result<feed::ImageSize> size = feed::ParseImageSize(size_text);
    if (!size) return UsageError(kCmd, size.error());
    options.size = *size;
  }
  if (Status s = feed::ValidateOptions(options); !s) return UsageError(kCmd, s.error());

  uint64_t duplicates = 0;
  Result<std::vector<std::string>> files = feed::ListImages(feed::DefaultFileSystem(), dir, &duplicates);
  if (!files) return UsageError(kCmd, files.error());
  if (duplicates > 0) {
    PrintError(kCmd, "warning: " + dir + " names " + std::to_string(duplicates) +
                         (duplicates == 1 ? " path" : " paths") + " more than once; each is fed once");
  }
  const uint64_t listed = files->size();
  const uint64_t per_epoch = listed / world_size + (rank < listed % world_size ? 1 : 0);

  SkipLog skip_log;
  options.on_skip = [&skip_log](const feed::SkippedImage& s) { skip_log.Log(s); };

  const uint64_t idle_rss = SelfStatusBytes("VmRSS");
  auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<feed::Feed>> started = feed::Feed::Start(std::move(*files), options);
  if (!started) return UsageError(kCmd, started.error());
  feed::Feed& stream = **started;

  ProgressBar bar("feed", per_epoch * epochs);
  auto seconds_since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::string error;
  while (true) {
    Result<feed::Batch> b = stream.Next();
    if (!b) {
      error = b.error();
      break;
    }
    if (b->empty()) break;
    if (step_ms > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(step_ms));
    }
    const uint32_t epoch = b->epoch() + 1;
    b->Release();
    feed::FeedStats s = stream.stats();
    bar.Update(s.images + s.skipped, FeedStatus({.done = s.images + s.skipped,
                                                 .total = per_epoch * epochs,
                                                 .epoch = epoch,
                                                 .epochs = epochs,
                                                 .seconds = seconds_since_start(),
                                                 .images = s.images,
                                                 .file_bytes_read = s.file_bytes_read,
                                                 .in_flight_bytes = s.budget_in_use_bytes,
                                                 .budget_bytes = s.budget_bytes}));
  }
  const double seconds = seconds_since_start();
  bar.Finish();
  feed::FeedStats stats = stream.stats();
  std::vector<feed::SkippedImage> skipped = stream.skipped_images();
  started->reset();  // stop the threads before reading the peak
  const uint64_t peak_rss = SelfStatusBytes("VmHWM");
  if (!error.empty()) return UsageError(kCmd, error);

  const double ips = stats.images / std::max(seconds, 1e-9);
  if (json) {
    nlohmann::json j;
    j["images"] = stats.images;
    j["skipped"] = stats.skipped;
    j["seconds"] = seconds;
    j["images_per_second"] = ips;
    j["budget_bytes"] = stats.budget_bytes;
    j["peak_budget_bytes"] = stats.peak_budget_bytes;
    j["peak_rss_bytes"] = peak_rss;
    j["idle_rss_bytes"] = idle_rss;
    j["batches"] = stats.batches;
    j["batch"] = batch;
    j["epochs"] = epochs;
    j["workers"] = feed::EffectiveWorkers(workers);
    j["rank"] = rank;
    j["world_size"] = world_size;
    j["scale"] = feed::ToString(options.scale);
    j["size"] = options.size ? nlohmann::json(size_text) : nlohmann::json(nullptr);
    j["step_ms"] = step_ms;
    j["files_listed"] = listed;
    j["file_bytes_read"] = stats.file_bytes_read;
    j["decoded_bytes"] = stats.decoded_bytes;
    j["budget_waits"] = stats.budget_waits;
    j["skip_reasons"] = nlohmann::json::object();
    for (const auto& [kind, n] : stats.skipped_by_kind) j["skip_reasons"][kind] = n;
    j["skipped_files"] = nlohmann::json::array();
    for (const feed::SkippedImage& s : skipped) {
      j["skipped_files"].push_back({{"path", s.path}, {"reason", feed::ToString(s.kind)}, {"detail", s.reason}});
    }
    PrintJson(j);
  } else {
    std::printf("fed %llu images in %llu batches (%u epoch%s) in %.2f s: %.0f images/s, %.1f MB/s read\n",
                static_cast<unsigned long long>(stats.images), static_cast<unsigned long long>(stats.batches),
                epochs, epochs == 1 ? "" : "s", seconds, ips, stats.file_bytes_read / 1e6 / std::max(seconds, 1e-9));
    if (stats.skipped > 0) {
      std::string reasons;
      for (const auto& [kind, n] : stats.skipped_by_kind) {
        reasons += (reasons.empty() ? "" : ", ") + kind + " " + std::to_string(n);
      }
      std::printf("skipped %llu: %s\n", static_cast<unsigned long long>(stats.skipped), reasons.c_str());
    }
    std::printf("budget %s, peak in use %s (%.1f%%), reader waited for bytes %llu times\n",
                FormatBytes(stats.budget_bytes).c_str(), FormatBytes(stats.peak_budget_bytes).c_str(),
                100.0 * stats.peak_budget_bytes / stats.budget_bytes,
                static_cast<unsigned long long>(stats.budget_waits));
    std::printf("peak RSS %s (idle %s)\n", FormatBytes(peak_rss).c_str(), FormatBytes(idle_rss).c_str());
  }
  if (stats.images == 0) {
    PrintError(kCmd, "no image could be read (" + std::to_string(stats.skipped) + " skipped)");
    return kExitNo;
  }
  return kExitOk;
}

}  // namespace oomguard::cli
