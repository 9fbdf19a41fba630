// Round 5 of explain v2: wording families found among the development rows added
// in round 4's data (corpus-1090 and above), each with the real line it came from
// and a second wording of the same family. Each test fails on commit 371acb0.
#include <gtest/gtest.h>

#include <string>

#include "finding_checks.h"
#include "oomguard/explain/explainer.h"

namespace oomguard::explain {
namespace {

TEST(Families, RapidsMemoryManagerOutOfMemoryIsTheDevicesEvenAsBadAlloc) {
  // corpus-1325 (its status code) and corpus-1326 (rmm::out_of_memory's what(), which starts "std::bad_alloc"
  // and would otherwise read as host RAM).
  ExpectTop("Getting the `rmm.rmm.RMMError: RMM_ERROR_OUT_OF_MEMORY` even with the smallest numpy array when I try "
            "to create a `cudf.DataFrame`.\n",
            Cause::kGpuDeviceOom, Domain::kGpu);
  ExpectTop("[BUG] Always bad_alloc: out_of_memory when fit large numpy array.\n", Cause::kGpuDeviceOom, Domain::kGpu);
  ExpectTop("MemoryError: std::bad_alloc: out_of_memory: CUDA error at: /opt/conda/include/rmm/mr/device/"
            "cuda_memory_resource.hpp:70: cudaErrorMemoryAllocation out of memory\n",
            Cause::kGpuDeviceOom, Domain::kGpu);
  // A plain std::bad_alloc stays host RAM.
  ExpectTop("terminate called after throwing an instance of 'std::bad_alloc'\n", Cause::kHostRamOom, Domain::kHost);
}

TEST(Families, AnyLibrarysOutOfMemoryStatusCodeIsAnOutOfMemory) {
  // Status codes in capitals (NPP, NVML-style, a library's own enum); the line's words give the memory.
  ExpectTop("nppStatus = NPP_OUT_OF_MEMORY_ERROR while resizing the batch\n", Cause::kGpuDeviceOom, Domain::kGpu);
  const Report r = ExplainText("mylib: status MYLIB_STATUS_OUT_OF_MEMORY\n");
  EXPECT_TRUE(HasMemoryFinding(r));
  // Lower case is a name, not a status: no finding from a counter.
  EXPECT_FALSE(HasMemoryFinding(ExplainText("stats: num_out_of_memory_retries 0\n")));
}

TEST(Families, PyTorchsNvmlAssertInTheCachingAllocatorIsAnOom) {
  // corpus-1361: the assert fires while PyTorch words its OutOfMemoryError (pytorch/pytorch#185240).
  const Finding f = Top(ExplainText(
      "RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at\n"
      "\"/opt/pytorch/pytorch/c10/cuda/CUDACachingAllocator.cpp\":838\n"));
  EXPECT_EQ(f.cause, Cause::kGpuDeviceOom);
  EXPECT_EQ(f.domain, Domain::kGpu);
  EXPECT_EQ(f.confidence, Confidence::kMedium);
  EXPECT_FALSE(f.alternatives.empty());
}

TEST(Families, GpuMemoryNotReleasedOrADefunctProcessIsAnotherProcess) {
  // corpus-1239
  ExpectTop("Sometimes (10% of the time), after I killed these 5 processes, the main process remained to be \"python "
            "[defunct]\" that cannot be killed even by sudo kill -s 9. The usage of GPU AND the GPU mem are not "
            "released.\n",
            Cause::kOtherProcessHoldsMemory, Domain::kGpu);
  ExpectTop("The GPU memory was not released after the run.\n", Cause::kOtherProcessHoldsMemory, Domain::kGpu);
  ExpectTop("user  4242  0.0  0.0      0     0 ?  Z    10:01   0:00 [python] <defunct>\n",
            Cause::kOtherProcessHoldsMemory, Domain::kGpu);
}

TEST(Families, ThePageFileIsHostMemory) {
  // corpus-1337: Windows' page file named beside a failure, in no known wording.
  ExpectTop("It's only showing 33 gig commit, but this failed when I had only 40 gigs of page file.  With 60 gigs of "
            "page file it starts.\n",
            Cause::kHostRamOom, Domain::kHost);
  ExpectTop("out of memory, and my pagefile is already 32 GB\n", Cause::kHostRamOom, Domain::kHost);
}

TEST(Families, DasksWorkerMemoryMonitorIsHostRam) {
  // corpus-1393 (the warning names a "memory leak": the monitor's host RAM decides the memory).
  ExpectTop("distributed.worker - WARNING - Unmanaged memory use is high. This may indicate a memory leak or the "
            "memory may not be released to the OS; see https://distributed.dask.org/en/latest/worker.html#memtrim "
            "for more information. -- Unmanaged memory: 130.10 MiB -- Worker memory limit: 180.00 MiB\n",
            Cause::kHostRamOom, Domain::kHost);
  ExpectTop("distributed.worker - WARNING - Worker is at 95% memory. Pausing worker.  Process memory: 7.60 GiB -- "
            "Worker memory limit: 8.00 GiB\n",
            Cause::kHostRamOom, Domain::kHost);
}

TEST(Families, MemoryThatReachesAnAmountIsNamedAsTheProblem) {
  // corpus-1143: an amount and a limit: the job's or the container's limit, host RAM.
  ExpectTop("there are times when memory usage reaches 160GB (which is my current limit).\n", Cause::kHostRamOom,
            Domain::kHost);
  // Without a limit, the line's words decide.
  ExpectTop("VRAM usage hits 23.5 GB during the first validation step\n", Cause::kGpuDeviceOom, Domain::kGpu);
  // A status line that only reports usage is no finding.
  EXPECT_FALSE(HasMemoryFinding(ExplainText("epoch 3: memory usage is 12 GB, loss 0.31\n")));
}

TEST(Families, ASchedulerWithNoFreeGpuIsTheWrongDeviceNotMemory) {
  // corpus-1422: Kubernetes finds no node with a free nvidia.com/gpu.
  const Report r = ExplainText(
      "  Warning  FailedScheduling   10h                  default-scheduler   0/6 nodes are available: 6 Insufficient "
      "nvidia.com/gpu.\n");
  EXPECT_EQ(Top(r).cause, Cause::kWrongDevice);
  EXPECT_FALSE(HasMemoryFinding(r));
  // Insufficient memory on the node stays a memory problem.
  EXPECT_TRUE(HasMemoryFinding(ExplainText("0/6 nodes are available: 6 Insufficient memory.\n")));
}

}  // namespace
}  // namespace oomguard::explain
