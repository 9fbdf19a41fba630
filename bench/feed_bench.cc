// Baselines for the feed benchmark (tools/bench_feed.sh runs each mode in its
// own process so its peak RSS is its own):
//   decode-only  the bare decode ceiling: every file read into memory first
//             (not timed), then decoded with --threads into a buffer each
//             thread reuses: no reading, no pipeline, no budget
//   ceiling   read and decode every file with all cores, no pipeline, no budget
//   preload   the article's original design: decode everything into memory,
//             then iterate over it in batches (one --step-ms per batch)
//   per-step  the article's fix: when a step asks, read and decode its batch
//             (with all cores), then run the step
// The fourth configuration is `oomguard feed` itself.
//
//   oomguard_feed_bench --mode decode-only|ceiling|preload|per-step DIR_OR_LIST
//                       [--batch 32] [--threads N] [--step-ms MS]
// Prints one JSON object: images, seconds, images_per_second, cpu_seconds
// (user + system of the timed part), peak_rss_bytes (VmHWM), idle_rss_bytes
// (VmRSS before any image is read).
#include <sys/resource.h>
#include <turbojpeg.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "oomguard/feed/file_system.h"
#include "oomguard/feed/image_list.h"
#include "oomguard/self_memory.h"

namespace {

using Clock = std::chrono::steady_clock;

// Reads and decodes one file to RGB into *out (resized as needed).
bool ReadAndDecode(tjhandle tj, const std::string& path, std::vector<uint8_t>* file,
                   std::vector<uint8_t>* out) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  file->resize(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(file->data()), static_cast<std::streamsize>(file->size()));
  int w = 0, h = 0, ss = 0, cs = 0;
  if (tjDecompressHeader3(tj, file->data(), file->size(), &w, &h, &ss, &cs) != 0) return false;
  out->resize(static_cast<size_t>(w) * h * 3);
  return tjDecompress2(tj, file->data(), file->size(), out->data(), w, 0, h, TJPF_RGB,
                       TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) == 0;
}

// Runs fn(i) for i in [begin, end) on `threads` threads, each with its own handle.
template <typename Fn>
void Parallel(size_t begin, size_t end, unsigned threads, Fn fn) {
  std::atomic<size_t> next{begin};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      tjhandle tj = tjInitDecompress();
      std::vector<uint8_t> file;
      for (size_t i = next++; i < end; i = next++) fn(tj, &file, i);
      tjDestroy(tj);
    });
  }
  for (auto& th : pool) th.join();
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int Usage() {
  std::fprintf(stderr,
               "usage: oomguard_feed_bench --mode decode-only|ceiling|preload|per-step DIR_OR_LIST [--batch 32] "
               "[--threads N] [--step-ms MS]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode, source;
  size_t batch = 32;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  double step_ms = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--mode") mode = value();
    else if (a == "--batch") batch = std::strtoul(value().c_str(), nullptr, 10);
    else if (a == "--threads") threads = static_cast<unsigned>(std::strtoul(value().c_str(), nullptr, 10));
    else if (a == "--step-ms") step_ms = std::strtod(value().c_str(), nullptr);
    else if (source.empty() && a[0] != '-') source = a;
    else return Usage();
  }
  if (source.empty() || batch == 0 || threads == 0 ||
      (mode != "decode-only" && mode != "ceiling" && mode != "preload" && mode != "per-step")) {
    return Usage();
  }
  auto listed = oomguard::feed::ListImages(oomguard::feed::DefaultFileSystem(), source);
  if (!listed) {
    std::fprintf(stderr, "oomguard_feed_bench: %s\n", listed.error().c_str());
    return 2;
  }
  const std::vector<std::string>& files = *listed;
  const size_t n = files.size();
  const uint64_t idle_rss = oomguard::SelfStatusBytes("VmRSS");
  std::atomic<uint64_t> decoded{0}, failed{0};
  auto step = [&] {
    if (step_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(step_ms));
  };
  std::vector<std::vector<uint8_t>> preread;
  if (mode == "decode-only") {  // read before the clock starts
    preread.resize(n);
    for (size_t i = 0; i < n; ++i) {
      std::ifstream in(files[i], std::ios::binary);
      preread[i].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  const double cpu_start = CpuSeconds();
  auto start = Clock::now();
  if (mode == "decode-only") {
    Parallel(0, n, threads, [&](tjhandle tj, std::vector<uint8_t>*, size_t i) {
      thread_local std::vector<uint8_t> out;
      const std::vector<uint8_t>& file = preread[i];
      int w = 0, h = 0, ss = 0, cs = 0;
      bool ok = !file.empty() && tjDecompressHeader3(tj, file.data(), file.size(), &w, &h, &ss, &cs) == 0;
      if (ok) {
        out.resize(static_cast<size_t>(w) * h * 3);
        ok = tjDecompress2(tj, file.data(), file.size(), out.data(), w, 0, h, TJPF_RGB,
                           TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) == 0;
      }
      if (ok) ++decoded; else ++failed;
    });
  } else if (mode == "ceiling") {
    Parallel(0, n, threads, [&](tjhandle tj, std::vector<uint8_t>* file, size_t i) {
      thread_local std::vector<uint8_t> out;  // reused: the cheapest possible decode
      if (ReadAndDecode(tj, files[i], file, &out)) ++decoded; else ++failed;
    });
  } else if (mode == "preload") {
    std::vector<std::vector<uint8_t>> images(n);
    Parallel(0, n, threads, [&](tjhandle tj, std::vector<uint8_t>* file, size_t i) {
      if (ReadAndDecode(tj, files[i], file, &images[i])) ++decoded; else ++failed;
    });
    // Then the training loop iterates over the decoded images.
    uint64_t checksum = 0;
    for (size_t b = 0; b < n; b += batch) {
      for (size_t i = b; i < std::min(n, b + batch); ++i) checksum += images[i].empty() ? 0 : images[i][0];
      step();
    }
    if (checksum == 42) std::fprintf(stderr, " ");
  } else {  // per-step
    std::vector<std::vector<uint8_t>> batch_images(batch);
    for (size_t b = 0; b < n; b += batch) {
      size_t end = std::min(n, b + batch);
      Parallel(b, end, threads, [&](tjhandle tj, std::vector<uint8_t>* file, size_t i) {
        if (ReadAndDecode(tj, files[i], file, &batch_images[i - b])) ++decoded; else ++failed;
      });
      step();
    }
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu_seconds = CpuSeconds() - cpu_start;
  std::printf(
      "{\"mode\": \"%s\", \"images\": %llu, \"failed\": %llu, \"seconds\": %.4f, \"images_per_second\": %.1f, "
      "\"cpu_seconds\": %.4f, \"peak_rss_bytes\": %llu, \"idle_rss_bytes\": %llu, \"threads\": %u, \"batch\": %zu, "
      "\"step_ms\": %g}\n",
      mode.c_str(), static_cast<unsigned long long>(decoded.load()),
      static_cast<unsigned long long>(failed.load()), seconds, decoded.load() / seconds, cpu_seconds,
      static_cast<unsigned long long>(oomguard::SelfStatusBytes("VmHWM")), static_cast<unsigned long long>(idle_rss),
      threads, batch, step_ms);
  return 0;
}
