// Explain v2: the layers below the specific patterns (family wordings of any
// framework, the domain from the line or the log, prose cues), the confidence
// of each finding, and the number relations that older formats need.
#include <gtest/gtest.h>

#include "oomguard/explain/explainer.h"

namespace oomguard::explain {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

Finding Top(const Report& r) {
  EXPECT_FALSE(r.findings.empty());
  return r.findings.empty() ? Finding{} : r.findings[0];
}

TEST(Layers, LegacyCudaErrorTwoIsAGpuOomEvenBeforeASegfault) {
  for (const char* log : {
           "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510\n"
           "Segmentation fault (core dumped)\n",
           "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=2 : out of memory\n",
           "F0903 14:31:26.106397 92421 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n",
           "Check failed: cudaSuccess == cudaStat (0 vs. 2) Cuda Error: out of memory\n"}) {
    const Finding f = Top(ExplainText(log));
    EXPECT_EQ(f.cause, Cause::kGpuDeviceOom) << log;
    EXPECT_EQ(f.domain, Domain::kGpu) << log;
    EXPECT_EQ(f.confidence, Confidence::kMedium) << log;
  }
}

TEST(Layers, FamilyWordingTakesItsDomainFromTheLine) {
  const Finding gpu = Top(ExplainText("out of memory in /home/u/gpuNUFFT/CUDA/inc/cuda_utils.hpp at line 40\n"));
  EXPECT_EQ(gpu.cause, Cause::kGpuDeviceOom);
  EXPECT_EQ(gpu.confidence, Confidence::kMedium);
  const Finding host = Top(ExplainText("mxnet.base.MXNetError: Failed to allocate CPU Memory\n"));
  EXPECT_EQ(host.cause, Cause::kHostRamOom);
  EXPECT_EQ(host.domain, Domain::kHost);
  const Finding eager = Top(ExplainText(
      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate memory [Op:Mul]\n"));
  EXPECT_EQ(eager.domain, Domain::kGpu);  // no words on the line, a TF log: the GPU, with low confidence
  EXPECT_EQ(eager.confidence, Confidence::kLow);
}

TEST(Layers, FamilyWordingWithoutWordsTakesTheLogsDomain) {
  const char* line =
      "onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, "
      "onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 285081600\n";
  EXPECT_EQ(Top(ExplainText(line)).domain, Domain::kGpu);
  const Finding host = Top(ExplainText(std::string("Using CPUExecutionProvider\n") + line));
  EXPECT_EQ(host.cause, Cause::kHostRamOom);
  EXPECT_EQ(host.domain, Domain::kHost);
  EXPECT_EQ(host.numbers.at("requested_bytes"), 285081600u);
  // ~4.6e18 bytes: no device and no host has that.
  EXPECT_EQ(Top(ExplainText("Failed to allocate memory for requested buffer of size 4585490524328388608\n")).cause,
            Cause::kImpossibleRequest);
}

TEST(Layers, OtherFrameworksOwnMessages) {
  const Finding paddle = Top(ExplainText(
      "Out of memory error on GPU 0. Cannot allocate 3.621826GB memory on GPU 0, 21.184814GB memory has been "
      "allocated and available memory is only 2.814575GB.\n"));
  EXPECT_EQ(paddle.cause, Cause::kGpuDeviceOom);
  EXPECT_EQ(paddle.framework, "paddlepaddle");
  EXPECT_EQ(paddle.confidence, Confidence::kHigh);
  EXPECT_EQ(paddle.numbers.at("free_bytes"), static_cast<uint64_t>(2.814575 * kGiB + 0.5));
  EXPECT_EQ(Top(ExplainText("ValueError: No available memory for the cache blocks. Try increasing "
                            "`gpu_memory_utilization` when initializing the engine.\n"))
                .framework,
            "vllm");
  const Finding tactic = Top(ExplainText(
      "[10/18/2023-20:27:00] [TRT] [W] Skipping tactic 3 due to insuficient memory on requested size of 449 "
      "detected for tactic 4.\n[TRT] [W] Tactic Device request: 448MB Available: 425MB. Device memory is "
      "insufficient to use tactic.\n"));
  EXPECT_EQ(tactic.cause, Cause::kGpuOomNonfatalWarning);
  const Finding nccl = Top(ExplainText("what():  NCCL Error 1: unhandled cuda error\nAborted (core dumped)\n"));
  EXPECT_EQ(nccl.cause, Cause::kGpuDeviceOom);
  EXPECT_EQ(nccl.confidence, Confidence::kMedium);
  ASSERT_EQ(nccl.alternatives.size(), 1u);
  EXPECT_EQ(nccl.alternatives[0], Cause::kNotMemory);
}

TEST(Layers, LauncherKillsAreHostRamButNeverHideAnExplicitError) {
  const Finding ds = Top(ExplainText("[ERROR] [launch.py:321:sigkill_handler] exits with return code = -9\n"));
  EXPECT_EQ(ds.cause, Cause::kHostRamOom);
  EXPECT_EQ(ds.domain, Domain::kHost);
  EXPECT_EQ(Top(ExplainText("**Killed**\n")).cause, Cause::kHostRamOom);
  EXPECT_EQ(Top(ExplainText("[INFO] [launch.py:428:sigkill_handler] Killing subprocess 13266\n")).cause,
            Cause::kHostRamOom);
  Report both = ExplainText(
      "torch.cuda.OutOfMemoryError: CUDA out of memory.\n"
      "[INFO] [launch.py:428:sigkill_handler] Killing subprocess 13266\n");
  ASSERT_EQ(both.findings.size(), 2u);
  EXPECT_EQ(both.findings[0].cause, Cause::kGpuDeviceOom);
}

TEST(Layers, PinningFailuresAreHostPinnedMemory) {
  EXPECT_EQ(Top(ExplainText("RuntimeError: cuda runtime error (2) : out of memory at "
                            "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:296\n"))
                .cause,
            Cause::kHostPinnedOom);
  const char* traceback =
      "  File \"/usr/lib/python3/dist-packages/torch/utils/data/_utils/pin_memory.py\", line 55, in pin_memory\n"
      "    return data.pin_memory()\n";
  const Finding oom = Top(ExplainText(std::string(traceback) + "RuntimeError: CUDA error: out of memory\n"));
  EXPECT_EQ(oom.cause, Cause::kHostPinnedOom);
  EXPECT_EQ(oom.domain, Domain::kHost);
  const Finding invalid = Top(ExplainText(std::string(traceback) + "RuntimeError: CUDA error: invalid argument\n"));
  EXPECT_EQ(invalid.cause, Cause::kHostPinnedOom);
  // Without the pinning traceback, "invalid argument" is not memory.
  EXPECT_EQ(Top(ExplainText("RuntimeError: CUDA error: invalid argument\n")).cause, Cause::kNotMemory);
}

TEST(Layers, ProseCuesGiveLowConfidenceFindings) {
  const Finding leak = Top(ExplainText("RAM usage keeps growing every epoch until the process is killed.\n"));
  EXPECT_EQ(leak.cause, Cause::kLeakGrowth);
  EXPECT_EQ(leak.confidence, Confidence::kLow);
  const Finding pre = Top(ExplainText("TensorFlow uses 70% of the GPU memory whatever the model I load.\n"));
  EXPECT_EQ(pre.cause, Cause::kFrameworkPreallocation);
  EXPECT_EQ(pre.domain, Domain::kGpu);
  EXPECT_EQ(pre.confidence, Confidence::kLow);
  EXPECT_EQ(Top(ExplainText("After resuming, GPU 0 uses far more memory than the others.\n")).cause,
            Cause::kWrongDevice);
}

TEST(Layers, EnvironmentMessagesAreNotMemory) {
  EXPECT_EQ(Top(ExplainText("RuntimeError: No CUDA GPUs are available\n")).cause, Cause::kWrongDevice);
  EXPECT_EQ(Top(ExplainText("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
                            "functions before calling NumCudaDevices() that might have already set an error? Error "
                            "802: system not yet initialized\n"))
                .cause,
            Cause::kDriverMismatch);
  const Finding cudnn = Top(ExplainText(
      "RuntimeError: jaxlib/cuda/versions_helpers.cc:113: operation cudnnGetVersion() failed: Found cuDNN version "
      "8600, but JAX was built against version 8902, which is newer.\n"));
  EXPECT_EQ(cudnn.cause, Cause::kCudaLibraryMismatch);
  EXPECT_EQ(cudnn.confidence, Confidence::kHigh);
}

TEST(Layers, OldPytorchCacheFarAboveTheRequestIsFragmentation) {
  const Finding f = Top(ExplainText(
      "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 2.50 GiB "
      "already allocated; 1.94 MiB free; 5.90 GiB reserved in total by PyTorch)\n"));
  EXPECT_EQ(f.cause, Cause::kFragmentation);
  EXPECT_EQ(f.confidence, Confidence::kHigh);
}

TEST(Layers, TensorflowStartupFreeMemoryShowsAnotherProcess) {
  Report r = ExplainText(
      "I tensorflow/core/common_runtime/gpu/gpu_device.cc:885] Found device 0 with properties:\n"
      "name: GeForce GTX 1080\n"
      "Total memory: 7.92GiB\n"
      "Free memory: 190.12MiB\n"
      "E tensorflow/stream_executor/cuda/cuda_driver.cc:936] failed to allocate 3.77G (4046333952 bytes) from "
      "device: CUDA_ERROR_OUT_OF_MEMORY\n");
  const Finding f = Top(r);
  EXPECT_EQ(f.cause, Cause::kOtherProcessHoldsMemory);
  EXPECT_EQ(f.numbers.at("free_bytes"), static_cast<uint64_t>(190.12 * kMiB + 0.5));
  // A GPU that was free at start-up: the framework is about to take it (low confidence, never above an error).
  Report free = ExplainText("Total memory: 7.92GiB\nFree memory: 7.81GiB\n");
  ASSERT_EQ(free.findings.size(), 1u);
  EXPECT_EQ(free.findings[0].cause, Cause::kFrameworkPreallocation);
  EXPECT_EQ(free.findings[0].confidence, Confidence::kLow);
  Report with_error = ExplainText("Total memory: 7.92GiB\nFree memory: 7.81GiB\nRuntimeError: CUDA error: out of memory\n");
  ASSERT_EQ(with_error.findings.size(), 2u);
  EXPECT_EQ(with_error.findings[0].cause, Cause::kGpuDeviceOom);
}

TEST(Layers, OomguardsOwnReportTextAndJson) {
  const Finding text = Top(ExplainText(
      "out of memory: cannot allocate 3.00 GiB (3221225472 bytes) from arena over CUDA device 0, limit 8.00 GiB\n"
      "  limit               8.00 GiB (8589934592 bytes)\n"
      "  allocated           7.00 GiB (7516192768 bytes)\n"
      "  free in pool        1.00 GiB (1073741824 bytes)\n"
      "  verdict: truly full: live allocations hold 7.00 GiB of the 8.00 GiB limit; free tensors you no longer "
      "need, lower the batch size or checkpoint activations\n"));
  EXPECT_EQ(text.cause, Cause::kGpuDeviceOom);
  EXPECT_EQ(text.framework, "oomguard");
  EXPECT_EQ(text.numbers.at("requested_bytes"), 3 * kGiB);
  EXPECT_EQ(text.numbers.at("limit_bytes"), 8 * kGiB);
  EXPECT_EQ(text.confidence, Confidence::kHigh);
  const Finding json = Top(ExplainText(
      "{\n  \"allocated_bytes\": 1048576,\n  \"limit_bytes\": 4294967296,\n  \"requested_bytes\": 104857600,\n"
      "  \"resource\": \"arena over CUDA device 0, limit 4.00 GiB, expandable\",\n"
      "  \"verdict\": \"fragmentation\",\n  \"verdict_line\": \"fragmentation: 3.90 GiB is free in the pool\"\n}\n"));
  EXPECT_EQ(json.cause, Cause::kFragmentation);
  EXPECT_EQ(json.domain, Domain::kGpu);
  EXPECT_EQ(json.numbers.at("requested_bytes"), 104857600u);
  const Finding pinned = Top(ExplainText(
      "{\n  \"requested_bytes\": 104857600,\n  \"resource\": \"pinned host pool (cap 64.00 MiB)\",\n"
      "  \"verdict\": \"cap_too_low\"\n}\n"));
  EXPECT_EQ(pinned.cause, Cause::kHostPinnedOom);
  EXPECT_EQ(pinned.domain, Domain::kHost);
  // Fields alone (any JSON with such keys) are no finding.
  EXPECT_TRUE(ExplainText("{\n  \"requested_bytes\": 104857600\n}\n").findings.empty());
}

TEST(Layers, ConfidenceFollowsTheContract) {
  EXPECT_EQ(Top(ExplainText("RuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 11.17 GiB total "
                            "capacity; 505.96 MiB already allocated; 12.50 MiB free; 530.00 MiB reserved in total by "
                            "PyTorch)\n"))
                .confidence,
            Confidence::kHigh);
  EXPECT_EQ(Top(ExplainText("torch.cuda.OutOfMemoryError: CUDA out of memory.\n")).confidence, Confidence::kMedium);
  EXPECT_EQ(Top(ExplainText("My GPU memory keeps increasing after each epoch.\n")).confidence, Confidence::kLow);
}

}  // namespace
}  // namespace oomguard::explain
