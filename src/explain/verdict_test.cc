// The rules that decide a cause from the numbers, tested through the whole
// explainer with lines in the frameworks' own formats.
#include <gtest/gtest.h>

#include "oomguard/explain/explainer.h"

namespace oomguard::explain {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

const Finding& Only(const Report& r) {
  EXPECT_EQ(r.findings.size(), 1u);
  return r.findings.at(0);
}

bool AdviceMentions(const Finding& f, const std::string& text) {
  for (const std::string& a : f.advice) {
    if (a.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(Verdict, FreeFarBelowTotalMinusReservedMeansAnotherProcess) {
  Report r = ExplainText(
      "RuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 11.17 GiB total capacity; 505.96 MiB "
      "already allocated; 12.50 MiB free; 530.00 MiB reserved in total by PyTorch)\n");
  const Finding& f = Only(r);
  EXPECT_EQ(f.cause, Cause::kOtherProcessHoldsMemory);
  EXPECT_EQ(f.domain, Domain::kGpu);
  EXPECT_EQ(f.framework, "pytorch");
  EXPECT_EQ(f.numbers.at("requested_bytes"), 60 * kMiB);
  EXPECT_EQ(f.numbers.at("free_bytes"), static_cast<uint64_t>(12.5 * kMiB));
  // 11.17 GiB - 12.50 MiB - 530.00 MiB
  EXPECT_EQ(f.numbers.at("other_processes_bytes"),
            static_cast<uint64_t>(11.17 * kGiB + 0.5) - static_cast<uint64_t>(12.5 * kMiB) - 530 * kMiB);
  EXPECT_TRUE(f.alternatives.empty());
  EXPECT_TRUE(AdviceMentions(f, "nvidia-smi --query-compute-apps"));
}

TEST(Verdict, ReservedFarAboveAllocatedMeansFragmentation) {
  Report r = ExplainText(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of "
      "23.65 GiB of which 1.66 GiB is free. Including non-PyTorch memory, this process has 20.81 GiB memory in use. "
      "Of the allocated memory 12.09 GiB is allocated by PyTorch, and 4.84 GiB is reserved by PyTorch but "
      "unallocated.\n");
  const Finding& f = Only(r);
  EXPECT_EQ(f.cause, Cause::kFragmentation);
  EXPECT_EQ(f.numbers.at("reserved_bytes"), f.numbers.at("allocated_bytes") + f.numbers.at("reserved_unallocated_bytes"));
  EXPECT_TRUE(AdviceMentions(f, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
}

TEST(Verdict, ExpandableSegmentsAlreadyOnIsNotSuggestedAgain) {
  const char* log =
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of "
      "23.65 GiB of which 1.66 GiB is free. Including non-PyTorch memory, this process has 20.81 GiB memory in use. "
      "Of the allocated memory 12.09 GiB is allocated by PyTorch, and 4.84 GiB is reserved by PyTorch but "
      "unallocated.\n";
  ExplainOptions options;
  options.pytorch_cuda_alloc_conf = "expandable_segments:True";
  const Finding f = Only(ExplainText(log, options));
  EXPECT_EQ(f.cause, Cause::kFragmentation);
  EXPECT_FALSE(AdviceMentions(f, "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
  EXPECT_TRUE(AdviceMentions(f, "already on"));
  // The same fact stated in the log itself.
  const Finding g = Only(ExplainText(std::string("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n") + log));
  EXPECT_TRUE(AdviceMentions(g, "already on"));
}

TEST(Verdict, FullGpuSaysHowMuchToSaveAndThatTheHintDoesNotApply) {
  const Finding f = Only(ExplainText(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 226.00 MiB. GPU 0 has a total capacity of "
      "15.70 GiB of which 210.38 MiB is free. Including non-PyTorch memory, this process has 15.48 GiB memory in "
      "use. Of the allocated memory 14.81 GiB is allocated by PyTorch, and 336.73 MiB is reserved by PyTorch but "
      "unallocated. If reserved but unallocated memory is large try setting "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n"));
  EXPECT_EQ(f.cause, Cause::kGpuDeviceOom);
  EXPECT_TRUE(f.alternatives.empty());
  EXPECT_TRUE(AdviceMentions(f, "by at least 15.62 MiB"));  // 226.00 MiB - 210.38 MiB
  EXPECT_TRUE(AdviceMentions(f, "hint about expandable_segments does not apply"));
}

TEST(Verdict, FreeMemoryAboveTheRequestMeansItIsNotInOnePiece) {
  const Finding f = Only(ExplainText(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
      "4.00 GiB of which 2.35 GiB is free. Of the allocated memory 825.15 MiB is allocated by PyTorch, and 24.85 MiB "
      "is reserved by PyTorch but unallocated.\n"));
  EXPECT_EQ(f.cause, Cause::kFragmentation);
}

TEST(Verdict, RequestAboveTotalIsImpossible) {
  const Finding f = Only(ExplainText(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 55.57 GiB. GPU 0 has a total capacity of "
      "12.00 GiB of which 9.02 GiB is free.\n"));
  EXPECT_EQ(f.cause, Cause::kImpossibleRequest);
  EXPECT_EQ(f.domain, Domain::kGpu);
  // An XLA limit stated on another line is the capacity too.
  Report r = ExplainText(
      "E external/xla/xla/service/gpu/gpu_hlo_schedule.cc:654] The byte size of input/output arguments "
      "(1374526449600) exceeds the base limit (25554419712). This indicates an error in the calculation!\n"
      "W external/xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_0_bfc) ran out of memory trying to "
      "allocate 1.25TiB (rounded to 1374521760000)requested by op\n");
  ASSERT_EQ(r.findings.size(), 1u);  // the allocator line joins the impossible request
  EXPECT_EQ(r.findings[0].cause, Cause::kImpossibleRequest);
  EXPECT_EQ(r.findings[0].framework, "jax");
  EXPECT_EQ(r.findings[0].numbers.at("limit_bytes"), 25554419712u);
}

TEST(Verdict, MessageWithoutNumbersSaysItCannotDecide) {
  const Finding f = Only(ExplainText("RuntimeError: CUDA error: out of memory\n"));
  EXPECT_EQ(f.cause, Cause::kGpuDeviceOom);
  ASSERT_FALSE(f.alternatives.empty());
  EXPECT_EQ(f.alternatives[0], Cause::kOtherProcessHoldsMemory);
  EXPECT_FALSE(f.undecided_because.empty());
  // Raised while pinning host memory (the traceback goes through pin_memory.py):
  // pinned host memory, with the device OOM its words name as the alternative.
  const Finding g = Only(ExplainText(
      "  File \"/usr/lib/python3/dist-packages/torch/utils/data/_utils/pin_memory.py\", line 31, in _pin_memory_loop\n"
      "RuntimeError: CUDA error: out of memory\n"));
  EXPECT_EQ(g.cause, Cause::kHostPinnedOom);
  ASSERT_FALSE(g.alternatives.empty());
  EXPECT_EQ(g.alternatives[0], Cause::kGpuDeviceOom);
  // pin_memory=True in a config echo only names pinned memory as an alternative.
  const Finding h = Only(ExplainText("DataLoader(batch_size=64, pin_memory=True)\nRuntimeError: CUDA error: out of memory\n"));
  EXPECT_EQ(h.cause, Cause::kGpuDeviceOom);
  ASSERT_FALSE(h.alternatives.empty());
  EXPECT_EQ(h.alternatives[0], Cause::kHostPinnedOom);
}

TEST(Verdict, PinnedBackoffIsOneFindingWithItsSequence) {
  std::string log;
  uint64_t size = 8589934592, last = 0;
  for (int i = 0; i < 6; ++i) {
    last = size;
    log += "E tensorflow/stream_executor/cuda/cuda_driver.cc:924] failed to alloc " + std::to_string(size) +
           " bytes on host: CUDA_ERROR_OUT_OF_MEMORY\n";
    log += "W ./tensorflow/core/common_runtime/gpu/pool_allocator.h:195] could not allocate pinned host memory of "
           "size: " + std::to_string(size) + "\n";
    size = static_cast<uint64_t>(size * 0.9);
  }
  const Finding f = Only(ExplainText(log));
  EXPECT_EQ(f.cause, Cause::kHostPinnedOom);
  EXPECT_EQ(f.domain, Domain::kHost);
  EXPECT_EQ(f.framework, "tensorflow");
  EXPECT_EQ(f.occurrences, 12u);
  EXPECT_EQ(f.numbers.at("attempts"), 6u);
  EXPECT_EQ(f.numbers.at("requested_bytes"), 8589934592u);
  EXPECT_EQ(f.numbers.at("last_attempt_bytes"), last);
  EXPECT_NE(f.summary.find("backed off by 0.9x 5 times"), std::string::npos) << f.summary;
}

TEST(Verdict, RepeatedRanksMergeIntoOneFinding) {
  std::string log;
  for (int rank = 0; rank < 8; ++rank) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      log += "[rank" + std::to_string(rank) +
             "]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU " + std::to_string(rank) +
             " has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this "
             "process has 78.12 GiB memory in use. Of the allocated memory 76.90 GiB is allocated by PyTorch, and "
             "500.00 MiB is reserved by PyTorch but unallocated.\n";
    }
  }
  const Finding f = Only(ExplainText(log));
  EXPECT_EQ(f.cause, Cause::kGpuDeviceOom);
  EXPECT_EQ(f.occurrences, 24u);
  EXPECT_EQ(f.ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_LE(f.evidence.size(), 3u);
}

TEST(Verdict, MostImportantFirst) {
  Report r = ExplainText(
      "W tensorflow/core/common_runtime/bfc_allocator.cc:239] Allocator (GPU_0_bfc) ran out of memory trying to "
      "allocate 45.53MiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that "
      "there could be performance gains if more memory were available.\n"
      "RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.\n"
      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].cause, Cause::kHostRamOom);
  EXPECT_EQ(r.findings[1].cause, Cause::kGpuOomNonfatalWarning);
  EXPECT_EQ(r.findings[2].cause, Cause::kNotMemory);
  EXPECT_EQ(r.findings[2].domain, Domain::kNone);
}

TEST(Verdict, BareKilledIsUsuallyTheOomKillerButSaysSo) {
  const Finding f = Only(ExplainText("step 1200 loss 0.3\nKilled\n"));
  EXPECT_EQ(f.cause, Cause::kHostRamOom);
  EXPECT_EQ(f.alternatives, std::vector<Cause>{Cause::kNotMemory});
  // The kernel's own line decides it.
  const Finding g = Only(ExplainText(
      "Killed\n[2059991.491542] Out of memory: Killed process 25315 (python3) total-vm:53312244kB, "
      "anon-rss:31451456kB, file-rss:74816kB\n"));
  EXPECT_EQ(g.cause, Cause::kHostRamOom);
  EXPECT_TRUE(g.alternatives.empty());
  EXPECT_EQ(g.numbers.at("killed_rss_bytes"), 31451456ull * 1024);
}

TEST(Verdict, HereFactsSharpenTheHostVerdict) {
  ExplainOptions options;
  HereFacts here;
  here.ram_total_bytes = 16 * kGiB;
  here.ram_available_bytes = 4 * kGiB;
  here.swap_total_bytes = 2 * kGiB;
  here.memlock_limit_bytes = 64 * kMiB;
  options.here = here;
  const Finding f = Only(ExplainText(
      "W ./tensorflow/core/common_runtime/gpu/pool_allocator.h:195] could not allocate pinned host memory of size: "
      "8589934592\n",
      options));
  EXPECT_TRUE(AdviceMentions(f, "only 4.00 GiB of RAM is available"));
  EXPECT_TRUE(AdviceMentions(f, "memlock limit is 64.00 MiB"));
  // A host request above RAM + swap cannot be met on this machine.
  const Finding g = Only(ExplainText(
      "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you "
      "tried to allocate 116813856768 bytes. Error code 12 (Cannot allocate memory)\n",
      options));
  EXPECT_EQ(g.cause, Cause::kImpossibleRequest);
  EXPECT_EQ(g.domain, Domain::kHost);
  // Without --here the same line is host RAM running out.
  EXPECT_EQ(Only(ExplainText(
                     "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate "
                     "memory: you tried to allocate 116813856768 bytes. Error code 12 (Cannot allocate memory)\n"))
                .cause,
            Cause::kHostRamOom);
}

TEST(Verdict, GpuStatusRowsShowHeldMemory) {
  const Finding f = Only(ExplainText(
      "[0] Tesla V100-SXM2-16GB | 44'C,   0 % | 15836 / 16130 MB |\n"
      "[1] Tesla V100-SXM2-16GB | 34'C,   0 % |     0 / 16130 MB |\n"));
  EXPECT_EQ(f.cause, Cause::kOtherProcessHoldsMemory);
  EXPECT_EQ(f.numbers.at("used_bytes"), 15836 * kMiB);
  // Busy GPUs that are not full hold nothing worth reporting.
  EXPECT_TRUE(ExplainText("[0] Tesla V100-SXM2-16GB | 44'C,  97 % | 9000 / 16130 MB |\n").findings.empty());
}

TEST(Verdict, EmptyAndIrrelevantLogsHaveNoFindings) {
  EXPECT_TRUE(ExplainText("").findings.empty());
  Report r = ExplainText("Epoch 1/10\nloss: 0.5\n\n");
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.lines_read, 3u);
}

}  // namespace
}  // namespace oomguard::explain
