// Streaming: constant memory on a 100 MB log, a 10 MB single line, binary
// garbage, and the same answer however the bytes are chunked.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "oomguard/explain/explainer.h"

namespace oomguard::explain {
namespace {

// Peak resident set size of this process so far (VmHWM), in bytes.
uint64_t PeakRss() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

std::string TempPath(const char* name) {
  return std::string("/tmp/oomguard_explain_") + std::to_string(getpid()) + "_" + name;
}

TEST(Stream, HundredMegabyteLogInConstantMemory) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's allocator keeps freed memory in quarantine, so peak RSS says nothing here";
#endif
  const std::string path = TempPath("100mb.log");
  uint64_t oom_lines = 0;
  {
    // Written in 1 MiB pieces so that making the log does not raise the peak.
    std::FILE* out = std::fopen(path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    std::string chunk;
    uint64_t written = 0;
    for (uint64_t i = 0; written < 100'000'000; ++i) {
      chunk += "2024-05-01 12:00:" + std::to_string(i % 60) + ",123 INFO step " + std::to_string(i) +
               " loss=0.4123 lr=1e-4 throughput=812.3 samples/s\n";
      if (i % 5000 == 0) {
        // Distinct OOM lines on many ranks: merged, not kept.
        chunk += "[rank" + std::to_string((i / 5000) % 64) + "]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " +
                 std::to_string(1 + i % 900) + ".00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 10.00 MiB "
                 "is free. Including non-PyTorch memory, this process has 79.10 GiB memory in use. Of the allocated "
                 "memory 78.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.\n";
        ++oom_lines;
      }
      if (chunk.size() > (1 << 20)) {
        std::fwrite(chunk.data(), 1, chunk.size(), out);
        written += chunk.size();
        chunk.clear();
      }
    }
    std::fclose(out);
  }
  uint64_t before = PeakRss();
  Result<Report> report = ExplainFile(path);
  uint64_t growth = PeakRss() - before;
  std::remove(path.c_str());
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_GE(report->bytes_read, 100'000'000u);
  ASSERT_EQ(report->findings.size(), 1u);
  EXPECT_EQ(report->findings[0].cause, Cause::kGpuDeviceOom);
  EXPECT_EQ(report->findings[0].occurrences, oom_lines);
  EXPECT_EQ(report->findings[0].ranks.size(), 64u);
  EXPECT_LE(report->findings[0].evidence.size(), 3u);
  // The read buffer is 1 MiB; allow the allocator some slack, far below the log's size.
  EXPECT_LT(growth, 16u << 20) << "peak RSS grew by " << growth << " bytes";
}

TEST(Stream, TenMegabyteSingleLineIsCutNotKept) {
  std::string line = "RuntimeError: CUDA error: out of memory " + std::string(10'000'000, 'x');
  Explainer explainer;
  // Fed in pieces, as a pipe would deliver it.
  for (size_t at = 0; at < line.size(); at += 65536) explainer.AddText(std::string_view(line).substr(at, 65536));
  explainer.AddText("\nKilled\n");
  Report r = explainer.Finish();
  EXPECT_EQ(r.lines_read, 2u);
  EXPECT_EQ(r.lines_truncated, 1u);
  ASSERT_EQ(r.findings.size(), 2u);
  // A bare "Killed" never ranks above an explicit error.
  EXPECT_EQ(r.findings[0].cause, Cause::kGpuDeviceOom);
  EXPECT_EQ(r.findings[1].cause, Cause::kHostRamOom);
  EXPECT_LE(r.findings[0].evidence[0].text.size(), 403u);
}

TEST(Stream, BinaryGarbageDoesNotCrashAndFindsNothingSpurious) {
  std::mt19937 rng(42);
  std::string garbage(4'000'000, '\0');
  for (char& c : garbage) c = static_cast<char>(rng());
  Report r = ExplainText(garbage);
  EXPECT_GT(r.lines_read, 0u);
  for (const Finding& f : r.findings) {
    for (const Evidence& e : f.evidence) EXPECT_LE(e.text.size(), 403u);
  }
  // Garbage around a real line does not hide it.
  Report with_line = ExplainText(garbage.substr(0, 1000) + "\nRuntimeError: DataLoader worker (pid 19597) is killed "
                                 "by signal: Bus error.\n" + garbage.substr(1000, 1000));
  bool found = false;
  for (const Finding& f : with_line.findings) found = found || f.cause == Cause::kShmExhausted;
  EXPECT_TRUE(found);
}

TEST(Stream, CrlfAnsiAndProgressBarsAreHandled) {
  Report r = ExplainText(
      "\x1b[31mERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
      "(shm).\x1b[0m\r\n"
      " 10%|#         | 1/10\r 20%|##        | 2/10\rRuntimeError: DataLoader worker (pid 12847) is killed by signal: "
      "Killed\r\n");
  EXPECT_EQ(r.lines_read, 2u);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].cause, Cause::kShmExhausted);
  EXPECT_EQ(r.findings[0].evidence[0].text,
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
            "(shm).");
  EXPECT_EQ(r.findings[1].cause, Cause::kHostRamOom);
  EXPECT_EQ(r.findings[1].evidence[0].line_number, 2u);
}

TEST(Stream, ChunkingDoesNotChangeTheAnswer) {
  std::ifstream in(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/explain/seed_log.txt", std::ios::binary);
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(log.empty());
  Report whole = ExplainText(log);
  for (size_t piece : {1u, 7u, 100u}) {
    Explainer e;
    for (size_t at = 0; at < log.size(); at += piece) e.AddText(std::string_view(log).substr(at, piece));
    Report r = e.Finish();
    ASSERT_EQ(r.findings.size(), whole.findings.size());
    EXPECT_EQ(r.findings[0].numbers, whole.findings[0].numbers);
    EXPECT_EQ(r.findings[0].occurrences, whole.findings[0].occurrences);
    EXPECT_EQ(r.lines_read, whole.lines_read);
  }
}

TEST(Stream, FileErrorsAreReported) {
  Result<Report> missing = ExplainFile("/nonexistent/oomguard.log");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), "cannot open '/nonexistent/oomguard.log': No such file or directory");
  Result<Report> dir = ExplainFile("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error(), "'/tmp' is a directory, not a log file");
}

}  // namespace
}  // namespace oomguard::explain
