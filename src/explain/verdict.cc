// From observations to findings: the rules that decide a cause with the
// numbers (free << total - reserved: another process; reserved >> allocated:
// fragmentation; request > total: impossible) and the advice that uses them.
#include <algorithm>
#include <cctype>
#include <string>

#include "observation.h"
#include "oomguard/units.h"

namespace oomguard::explain {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kTiB = uint64_t{1} << 40;
// No single GPU has a terabyte; no host has 64 TiB of RAM.
constexpr uint64_t kAbsurdGpuRequest = kTiB;
constexpr uint64_t kAbsurdHostRequest = 64 * kTiB;

std::string B(uint64_t bytes) { return FormatBytes(bytes); }

std::optional<uint64_t> Get(const std::map<std::string, uint64_t>& m, const char* key) {
  auto it = m.find(key);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

bool IsTfOrJax(const std::string& framework) {
  return framework == "tensorflow" || framework == "keras" || framework == "jax";
}

int Importance(Cause cause) {
  switch (cause) {
    case Cause::kImpossibleRequest: return 0;
    case Cause::kOtherProcessHoldsMemory: return 1;
    case Cause::kFragmentation: return 2;
    case Cause::kLeakGrowth: return 3;
    case Cause::kHostPinnedOom: return 4;
    case Cause::kShmExhausted: return 5;
    case Cause::kHostRamOom: return 6;
    case Cause::kFrameworkPreallocation: return 7;
    case Cause::kWrongDevice: return 8;
    case Cause::kGpuDeviceOom: return 9;
    case Cause::kDriverMismatch: return 10;
    case Cause::kCudaLibraryMismatch: return 11;
    case Cause::kGpuOomNonfatalWarning: return 12;
    case Cause::kNotMemory: return 13;
  }
  return 14;
}

// DESIGN.md's contract: high = a specific message with its numbers; medium =
// a family wording (or a specific one without the numbers that decide);
// low = inferred from context or prose.
Confidence ConfidenceOf(const Observation& o, const Finding& f) {
  switch (o.tier) {
    case Tier::kSpecific:
      return f.alternatives.empty() && (!f.numbers.empty() || f.domain == Domain::kNone) ? Confidence::kHigh
                                                                                       : Confidence::kMedium;
    case Tier::kFamily:
      return o.line_domain != LineDomain::kUnknown ? Confidence::kMedium : Confidence::kLow;
    case Tier::kProse: return Confidence::kLow;
  }
  return Confidence::kLow;
}

// Signals that only hint at memory: a SIGKILL nobody explains, NCCL's unnamed
// CUDA error, a setting or a pinned buffer named in prose. Their findings
// never rank above a finding from an explicit error.
bool IsWeak(Signal signal) {
  switch (signal) {
    case Signal::kProcessKilled:
    case Signal::kLauncherKilled:
    case Signal::kCollectiveCudaError:
    case Signal::kPinnedProse:
    case Signal::kShmProse:
    case Signal::kMemoryProse:
    case Signal::kPreallocationSetting:
    case Signal::kFragmentationSetting:
    case Signal::kGpuStartupMemory:  // only when it reports preallocation (a GPU that was free)
      return true;
    default: return false;
  }
}

struct Decider {
  const LogContext& context;
  const ExplainOptions& options;
  std::string dominant_framework;
  bool expandable_on = false;
  std::optional<uint64_t> gpu_limit;  // a device capacity stated anywhere in the log
  bool gpu_allocator_activity = false;  // GPU OOM lines or allocator warnings beside TF's region allocation

  Finding Base(const Observation& o, Cause cause, Domain domain) const {
    Finding f;
    f.cause = cause;
    f.domain = domain;
    f.framework = !o.framework.empty() ? o.framework
                  : !dominant_framework.empty() ? dominant_framework
                                                : "unknown";
    f.evidence = o.evidence;
    f.occurrences = o.count;
    f.ranks.assign(o.ranks.begin(), o.ranks.end());
    f.numbers = o.numbers;
    return f;
  }

  void Undecided(Finding& f, std::vector<Cause> alternatives, std::string because) const {
    f.alternatives = std::move(alternatives);
    f.undecided_because = std::move(because);
  }

  void ExpandableHintNote(const Observation& o, Finding& f, uint64_t unallocated) const {
    if (!o.has_fragmentation_hint) return;
    f.advice.push_back("PyTorch's hint about expandable_segments does not apply here: only " + B(unallocated) +
                       " is reserved but unallocated, so fragmentation is not what failed.");
  }

  Finding Gpu(const Observation& o) const {
    Finding f = Base(o, Cause::kGpuDeviceOom, Domain::kGpu);
    auto& n = f.numbers;
    std::optional<uint64_t> R = Get(n, "requested_bytes"), T = Get(n, "total_bytes"), F = Get(n, "free_bytes"),
                            A = Get(n, "allocated_bytes"), Rs = Get(n, "reserved_bytes"),
                            RU = Get(n, "reserved_unallocated_bytes"), P = Get(n, "process_in_use_bytes");
    if (!Rs && A && RU) Rs = n["reserved_bytes"] = *A + *RU;
    if (!RU && Rs && A && *Rs >= *A) RU = n["reserved_unallocated_bytes"] = *Rs - *A;
    // Round 31: "this process has 0 bytes memory in use" beside 22.41 GiB "allocated by PyTorch": the process's own
    // figure comes from the driver (NVML), which sees no process inside some containers and on WSL; a figure below
    // what PyTorch itself holds cannot be the process's use, so the allocator's figures stand in for it (the rest of
    // the device is not another process's). corpus-2645 (torchtune on a 24 GB 4090, read as another process).
    if (P && ((Rs && *P < *Rs) || (A && *P < *A))) P.reset();
    std::optional<uint64_t> cap = T ? T : Get(n, "limit_bytes") ? Get(n, "limit_bytes") : gpu_limit;
    if (!R && Get(n, "tensor_bytes")) R = Get(n, "tensor_bytes");

    if (R && ((cap && *R > *cap) || *R >= kAbsurdGpuRequest)) {
      f.cause = Cause::kImpossibleRequest;
      f.summary = "One request of " + B(*R) + " is larger than the whole GPU" +
                  (cap ? " (" + B(*cap) + ")" : std::string()) + ": no setting makes it fit.";
      f.advice.push_back("Find the shape that produces a " + B(*R) +
                         " buffer: a dimension multiplied by mistake, a wrong reshape or broadcast, an "
                         "unbounded sequence length or a batch of the whole dataset.");
      f.advice.push_back("Smaller batches or allocator settings will not help until that size is fixed.");
      return f;
    }
    // The old format counts only what PyTorch reserved: a cache far larger than
    // the request that still cannot serve it is fragmentation, whatever else
    // the device holds.
    bool cache_far_above_request = !P && R && RU && Rs && *RU >= 2 * *R && *RU >= 256 * kMiB && *RU * 10 >= *Rs;
    if (T && F && *F <= *T && !cache_far_above_request) {
      std::optional<uint64_t> ours = P ? P : Rs ? Rs : A;
      if (ours) {
        uint64_t others = *T - *F > *ours ? *T - *F - *ours : 0;
        // The CUDA context and other libraries take a few hundred MiB that PyTorch
        // does not count; only a clear excess is another process. Round 20: without
        // the process's own figure, at least 1.5 GiB: on a small GPU the context, the
        // cuDNN/cuBLAS workspaces and a desktop's display take about 1 GiB (dev rows
        // with 0.9-1.1 GiB unaccounted on 4 GiB GPUs were full GPUs, none another process).
        uint64_t threshold = P ? std::max<uint64_t>(kGiB, *T / 10) : std::max<uint64_t>(kGiB + kGiB / 2, *T / 5);
        if (others >= threshold) {
          f.cause = Cause::kOtherProcessHoldsMemory;
          n["other_processes_bytes"] = others;
          f.summary = "The GPU has " + B(*T) + " but only " + B(*F) + " is free while this process holds " +
                      B(*ours) + ": about " + B(others) + " is held by other processes.";
          f.advice.push_back("See who holds it: nvidia-smi --query-compute-apps=pid,used_memory --format=csv "
                             "(or oomguard devices). Stop them, wait, or pick an idle GPU with "
                             "CUDA_VISIBLE_DEVICES.");
          f.advice.push_back("Inside a container nvidia-smi may list no processes: the holders live in another "
                             "PID namespace (another container, a stuck earlier run, a notebook kernel).");
          if (RU) ExpandableHintNote(o, f, *RU);
          return f;
        }
      }
    }
    if (R && RU && *RU >= *R && Rs && *RU * 10 >= *Rs) {
      f.cause = Cause::kFragmentation;
      f.summary = "PyTorch reserved " + B(*Rs) + " but its tensors use only " + (A ? B(*A) : std::string("part")) +
                  ": " + B(*RU) + " is cached yet no block fits the " + B(*R) + " request (fragmentation).";
      FragmentationAdvice(f);
      return f;
    }
    // Free beyond the request plus the allocator's rounding slack: the memory is
    // there but not in one piece. On a nearly full device the driver and the
    // runtime keep a few percent that no allocation gets, so the slack is at
    // least 5% of the device.
    uint64_t slack = std::max<uint64_t>(256 * kMiB, T ? *T / 20 : 0);
    // The device is (nearly) all free and the allocator holds less than the request, yet the request failed:
    // nothing is there to fragment, so a limit on one allocation or on the process refused the size (Intel
    // XPUs serve at most 4 GiB in one allocation without relaxed limits; a MIG slice; a memory fraction).
    // Round 13, corpus-1828.
    if (R && F && T && *F <= *T && *F + slack >= *T && *F >= *R && (!Rs || *Rs < *R)) {
      f.cause = Cause::kImpossibleRequest;
      f.summary = "The GPU reports " + B(*F) + " of its " + B(*T) + " free, yet one request of " + B(*R) +
                  " failed: nothing is there to fragment, so a limit on one allocation or on the process refused it.";
      f.advice.push_back("Look for a per-allocation or per-process limit: Intel XPUs serve at most 4 GiB in one "
                         "allocation unless relaxed allocation limits are enabled; a MIG slice; "
                         "torch.cuda.set_per_process_memory_fraction or XLA_PYTHON_CLIENT_MEM_FRACTION.");
      f.advice.push_back("Split the " + B(*R) + " buffer (chunk the batch or the sequence) so no single allocation "
                         "reaches the limit.");
      Undecided(f, {Cause::kGpuDeviceOom}, "the limit that refused the request is not in the message");
      return f;
    }
    // Round 31: free beyond the request while PyTorch's own cache holds less than the request unallocated: the
    // cache is not what is fragmented (expandable_segments cannot help), and the free figure was read after the
    // failure or lies outside a limit; the device is treated as full, with the readings named as undecided.
    // corpus-1893 (20.28 GiB free, 2.85 MiB cached, a dataset bug) and corpus-2116 (a 4 GB GPU, 0 bytes cached).
    if (R && F && *F >= *R + slack && RU && *RU < *R) {
      f.summary = "The GPU reports " + B(*F) + " free, more than the " + B(*R) + " requested, yet the allocation " +
                  "failed while PyTorch's cache held only " + B(*RU) + " unallocated: the free figure was read after " +
                  "the failure, or lies outside a limit on this process.";
      f.advice.push_back("Lower the step's peak: a smaller batch or input, mixed precision (AMP), activation "
                         "checkpointing; look for one input far larger than the rest.");
      f.advice.push_back("If a limit is set (torch.cuda.set_per_process_memory_fraction, a MIG slice, "
                         "XLA_PYTHON_CLIENT_MEM_FRACTION), the free memory may lie outside it.");
      Undecided(f, {Cause::kFragmentation, Cause::kImpossibleRequest},
                "the free memory the message reports would serve the request, and PyTorch's cache is too small to "
                "be fragmented");
      return f;
    }
    if (R && F && *F >= *R + slack) {
      f.cause = Cause::kFragmentation;
      f.summary = "The GPU reports " + B(*F) + " free, more than the " + B(*R) +
                  " requested, yet the allocation failed: the free memory is not usable as one block.";
      FragmentationAdvice(f);
      f.advice.push_back("If a limit is set (torch.cuda.set_per_process_memory_fraction, a MIG slice, "
                         "XLA_PYTHON_CLIENT_MEM_FRACTION), the free memory may lie outside it.");
      return f;
    }
    if (R && F) {
      uint64_t held = Rs ? *Rs : A ? *A : 0;
      f.summary = "The GPU is full: the request of " + B(*R) + " did not fit in the " + B(*F) + " free" +
                  (T ? " of " + B(*T) : std::string()) + (held ? ", and this process holds " + B(held) : std::string()) +
                  ".";
      f.advice.push_back("Lower the step's peak by at least " + B(*R - *F) +
                         ": a smaller batch (activations scale with it), mixed precision (AMP), activation "
                         "checkpointing, or smaller inputs; `oomguard fit MODEL` finds the largest batch that fits.");
      if (RU) ExpandableHintNote(o, f, *RU);
      FrameworkAdvice(f);
      return f;
    }
    // Too few numbers to decide.
    if ((context.pinning_call || o.line_domain == LineDomain::kPinned) && !F && !T) {
      // CUDA reports a failed cudaHostAlloc/cudaHostRegister with the same words as a device OOM.
      Finding pinned = HostPinned(o);
      Undecided(pinned, {Cause::kGpuDeviceOom},
                "the error was raised while pinning host memory, but its words are those of a device OOM");
      return pinned;
    }
    f.summary = R ? "A GPU allocation of " + B(*R) + " failed." : "A GPU allocation failed.";
    std::vector<Cause> alternatives = {Cause::kOtherProcessHoldsMemory, Cause::kFragmentation, Cause::kLeakGrowth};
    if (context.pin_memory || context.wsl || (options.here && options.here->wsl)) {
      alternatives.insert(alternatives.begin(), Cause::kHostPinnedOom);
      f.advice.push_back("Pinned host memory is involved (pin_memory / WSL): this same message appears when "
                         "pinning host memory fails; try DataLoader(pin_memory=False).");
    }
    Undecided(f, alternatives,
              "the message does not say how much the GPU has, how much is free and how much this process holds");
    f.advice.push_back(std::string("Get the numbers: run nvidia-smi while the job runs") +
                       (f.framework == "pytorch" ? ", or print torch.cuda.memory_summary() at the failure" : "") +
                       "; then rerun oomguard explain on the fuller log.");
    f.advice.push_back("If the GPU is simply full: a smaller batch, mixed precision or activation checkpointing; "
                       "`oomguard fit MODEL` finds the largest batch that fits.");
    FrameworkAdvice(f);
    return f;
  }

  void FragmentationAdvice(Finding& f) const {
    if (expandable_on) {
      f.advice.push_back("expandable_segments is already on, so PyTorch's hint does not apply: keep tensor "
                         "shapes constant (pad or bucket variable lengths) and call torch.cuda.empty_cache() "
                         "between phases that change shapes.");
    } else {
      f.advice.push_back("Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch >= 2.1; older: "
                         "max_split_size_mb:128) so freed blocks can be reused for larger requests.");
      f.advice.push_back("Keep tensor shapes constant (pad or bucket variable lengths); call "
                         "torch.cuda.empty_cache() between phases that change shapes.");
    }
  }

  void FrameworkAdvice(Finding& f) const {
    if (f.framework == "nccl") {
      f.advice.push_back("NCCL allocates its own buffers on every GPU (NCCL_BUFFSIZE, 4 MiB per channel and peer "
                         "by default): leave room for them (TensorFlow: memory growth; JAX: a lower "
                         "XLA_PYTHON_CLIENT_MEM_FRACTION) or set NCCL_BUFFSIZE=2097152.");
    } else if (IsTfOrJax(f.framework)) {
      f.advice.push_back("TensorFlow and JAX reserve most of the GPU at start-up; other libraries on the same GPU "
                         "get the rest (TF: tf.config.experimental.set_memory_growth; JAX: "
                         "XLA_PYTHON_CLIENT_PREALLOCATE=false).");
    } else if (f.framework == "vllm") {
      f.advice.push_back("vLLM takes gpu_memory_utilization (0.9 by default) of the GPU for the weights, the "
                         "activations and the KV cache: lower max_model_len or max_num_seqs, quantize or shard the "
                         "model (tensor_parallel_size); raise gpu_memory_utilization only if nothing else uses the GPU.");
    } else if (f.framework == "tensorrt") {
      f.advice.push_back("TensorRT: lower the builder's workspace (IBuilderConfig::setMemoryPoolLimit) or the "
                         "optimization profile's largest shapes, and leave room for the framework that shares the GPU.");
    } else if (f.framework == "cupy") {
      f.advice.push_back("CuPy keeps freed blocks in its pool: cupy.get_default_memory_pool().free_all_blocks(), "
                         "or cap it with set_limit(size=...).");
    }
  }

  Finding Preallocation(const Observation& o) const {
    bool tf_or_jax = IsTfOrJax(o.framework) || IsTfOrJax(dominant_framework) || context.preallocation;
    Finding f = Base(o, Cause::kFrameworkPreallocation, Domain::kGpu);
    // Without TensorFlow or JAX in sight nothing reserved the GPU up front: the library found it full.
    if (!tf_or_jax) {
      f.cause = Cause::kGpuDeviceOom;
      f.summary = "A CUDA library (cuBLAS/cuDNN) could not get GPU memory for its handle or workspace.";
      Undecided(f, {Cause::kFrameworkPreallocation, Cause::kOtherProcessHoldsMemory},
                "the library error does not say who holds the memory");
      f.advice.push_back("The GPU is full when the library starts: reduce the batch; with PyTorch set "
                         "torch.backends.cudnn.benchmark = False (benchmarking tries workspace-hungry algorithms).");
      f.advice.push_back("If TensorFlow or JAX runs in the same process or on the same GPU, it has reserved the "
                         "memory: TF set_memory_growth, JAX XLA_PYTHON_CLIENT_PREALLOCATE=false.");
      return f;
    }
    f.summary = "A CUDA library (cuBLAS/cuDNN) found no GPU memory left because the framework reserved the GPU "
                "up front.";
    f.advice.push_back("TensorFlow: tf.config.experimental.set_memory_growth(gpu, True) or "
                       "TF_FORCE_GPU_ALLOW_GROWTH=true (TF 1.x: config.gpu_options.allow_growth = True).");
    f.advice.push_back("JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false or XLA_PYTHON_CLIENT_MEM_FRACTION=.5; when JAX "
                       "or PyTorch shares a process with TensorFlow, hide the GPU from TF: "
                       "tf.config.set_visible_devices([], 'GPU').");
    return f;
  }

  Finding HostPinned(const Observation& o) const {
    Finding f = Base(o, Cause::kHostPinnedOom, Domain::kHost);
    const std::vector<uint64_t>& q = o.requests;
    bool backoff = q.size() >= 2;
    for (size_t i = 1; i < q.size() && backoff; ++i) {
      double ratio = static_cast<double>(q[i]) / static_cast<double>(q[i - 1]);
      backoff = ratio > 0.85 && ratio < 0.95;
    }
    std::string what = o.framework == "tensorflow" ? "TensorFlow's pinned host pool" : "A pinned host allocation";
    if (backoff) {
      f.numbers["requested_bytes"] = q.front();
      f.numbers["last_attempt_bytes"] = q.back();
      f.numbers["attempts"] = q.size();
      f.summary = "Pinned (page-locked) host memory ran out, not the GPU: " + what + " asked for " + B(q.front()) +
                  " and backed off by 0.9x " + std::to_string(q.size() - 1) + " times down to " + B(q.back()) +
                  "; every attempt failed.";
    } else if (!q.empty()) {
      f.summary = "Pinned (page-locked) host memory ran out, not the GPU: " + what + " of " + B(q.front()) +
                  " failed.";
    } else {
      f.summary = "Pinned (page-locked) host memory ran out, not the GPU.";
    }
    uint64_t asked = q.empty() ? 0 : q.front();
    if (!q.empty() && q.back() < kMiB) {
      f.advice.push_back("Even " + B(q.back()) + " could not be pinned: the driver cannot pin host memory at all. "
                         "With TensorFlow this happens when it has grabbed the whole GPU: set "
                         "config.gpu_options.allow_growth = True (TF 2: set_memory_growth).");
    } else {
      f.advice.push_back("Shrink what the input pipeline holds in host memory: keep decoded images as uint8, not "
                         "float32 (4x smaller); lower the queue/prefetch depth and the batch; stream from disk "
                         "under a budget (oomguard feed DIR --budget BYTES).");
    }
    f.advice.push_back("Check the host, not the GPU: free -g (RAM available) and ulimit -l (the locked-memory "
                       "limit; containers and WSL2 cap pinned memory). PyTorch: DataLoader(pin_memory=False).");
    if (options.here) {
      const HereFacts& h = *options.here;
      if (asked && h.ram_available_bytes && asked > h.ram_available_bytes) {
        f.advice.push_back("On this machine only " + B(h.ram_available_bytes) + " of RAM is available, less than the " +
                           B(asked) + " asked.");
      }
      if (h.memlock_limit_bytes && asked > *h.memlock_limit_bytes) {
        f.advice.push_back("This machine's memlock limit is " + B(*h.memlock_limit_bytes) + " (ulimit -l), below the " +
                           B(asked) + " asked.");
      }
    }
    return f;
  }

  Finding HostRam(const Observation& o) const {
    Finding f = Base(o, Cause::kHostRamOom, Domain::kHost);
    std::optional<uint64_t> R = Get(f.numbers, "requested_bytes");
    uint64_t host_max = kAbsurdHostRequest;
    if (options.here && options.here->ram_total_bytes) {
      host_max = options.here->ram_total_bytes + options.here->swap_total_bytes;
    }
    if (R && *R > host_max) {
      f.cause = Cause::kImpossibleRequest;
      f.summary = "One host allocation of " + B(*R) + " is larger than " +
                  (options.here ? "this machine's RAM and swap (" + B(host_max) + ")" : std::string("any host")) +
                  ": no setting makes it fit.";
      f.advice.push_back("Find the size computation that produced " + B(*R) +
                         " (a wrong shape, an overflow, the whole dataset at once).");
      return f;
    }
    if (o.signal == Signal::kKernelOomKiller) {
      f.framework = "os";
      f.summary = "The kernel's OOM killer ended the process: host RAM ran out, not the GPU.";
    } else if (o.signal == Signal::kWorkerKilled) {
      f.summary = "A DataLoader worker was killed (SIGKILL), almost always by the kernel's OOM killer: host RAM "
                  "ran out, not the GPU.";
    } else if (o.signal == Signal::kProcessKilled || o.signal == Signal::kLauncherKilled) {
      f.summary = o.signal == Signal::kProcessKilled
                      ? "The process was killed with SIGKILL; that is usually the kernel's OOM killer (host RAM)."
                      : "The launcher killed its worker processes after one of them died; a worker killed with "
                        "SIGKILL (return code -9) is usually the kernel's OOM killer (host RAM).";
      Undecided(f, {Cause::kNotMemory},
                "the log does not say who sent SIGKILL (the OOM killer, a scheduler's limit or a person)");
      f.advice.push_back("Confirm with dmesg -T | grep -i -E 'killed process|oom' (or journalctl -k).");
    } else {
      f.summary = R ? "A host (CPU) allocation of " + B(*R) + " failed: host RAM ran out, not the GPU."
                    : "A host (CPU) allocation failed: host RAM ran out, not the GPU.";
    }
    f.advice.push_back("Every DataLoader worker is a copy of the process: lower num_workers and prefetch_factor, "
                       "load samples lazily instead of the whole dataset, use memory-mapped arrays.");
    f.advice.push_back("Watch the run's host memory: oomguard watch -- CMD shows the growth and stops it before "
                       "the OOM killer does; add swap or a larger machine if the steady state needs more.");
    if (options.here && options.here->ram_total_bytes) {
      f.advice.push_back("This machine has " + B(options.here->ram_total_bytes) + " RAM (" +
                         B(options.here->ram_available_bytes) + " available) and " +
                         B(options.here->swap_total_bytes) + " swap.");
    }
    return f;
  }

  Finding Shm(const Observation& o) const {
    Finding f = Base(o, Cause::kShmExhausted, Domain::kHost);
    f.summary = "Shared memory (/dev/shm) ran out: DataLoader workers hand batches to the main process through it.";
    f.advice.push_back("Give the container more: docker run --shm-size=8g (or --ipc=host); Docker's default is "
                       "64 MiB. Kubernetes: mount an emptyDir with medium: Memory at /dev/shm.");
    f.advice.push_back("Or need less: fewer DataLoader workers, smaller batches, or num_workers=0.");
    if (options.here && options.here->shm_total_bytes) {
      f.advice.push_back("/dev/shm on this machine is " + B(*options.here->shm_total_bytes) +
                         (options.here->shm_free_bytes ? " (" + B(*options.here->shm_free_bytes) + " free)" : "") +
                         ".");
    }
    return f;
  }

  Finding Leak(const Observation& o, bool dali) const {
    bool host_words = o.mentions_host || o.line_domain == LineDomain::kHost || o.line_domain == LineDomain::kPinned;
    bool gpu_words = o.mentions_gpu || o.line_domain == LineDomain::kGpu;
    // The line's words (GPU words win), else the lines around it, else the log's; the GPU by default.
    // Pinned words on its own line are host memory whatever else the line names ("pinned memory the CUDA
    // driver does not release").
    bool host = o.line_domain != LineDomain::kUnknown ? o.line_domain != LineDomain::kGpu
                : gpu_words                          ? false
                : host_words                         ? true
                                                     : HostByContext(o);
    Domain domain = host ? Domain::kHost : Domain::kGpu;
    Finding f = Base(o, Cause::kLeakGrowth, domain);
    if (dali) {
      f.summary = "DALI's nvJPEG decoder could not allocate: its buffers grow to the largest images seen, so GPU "
                  "memory rises step by step until an allocation fails.";
      Undecided(f, {Cause::kGpuDeviceOom}, "one allocator error does not show the growth");
      f.advice.push_back("Preallocate the decoder's buffers (device_memory_padding, host_memory_padding of "
                         "fn.decoders.image) and lower prefetch_queue_depth; leave GPU memory for DALI.");
      return f;
    }
    f.summary = std::string("Memory grows during the run (") + (domain == Domain::kGpu ? "GPU" : "host") +
                "): something keeps references alive, step after step.";
    f.advice.push_back("Common causes: accumulating loss tensors (use loss.item()), keeping outputs with their "
                       "graph, validation without torch.no_grad(), caches and lists that grow every step.");
    f.advice.push_back("Measure it: oomguard watch -- CMD reports the growth rate and when it will run out.");
    return f;
  }

  Finding WrongDevice(const Observation& o) const {
    bool memory = o.signal == Signal::kWrongDeviceMemory;
    Finding f = Base(o, Cause::kWrongDevice, memory ? Domain::kGpu : Domain::kNone);
    if (memory) {
      f.summary = "Memory lands on the wrong GPU: tensors are created or loaded on GPU 0 instead of each "
                  "process's own device.";
      f.advice.push_back("Load checkpoints to the CPU (torch.load(path, map_location='cpu')) or to this rank's "
                         "device, and call torch.cuda.set_device(local_rank) before creating tensors.");
    } else {
      f.summary = "The process does not see the GPU it expects.";
      f.advice.push_back("Check CUDA_VISIBLE_DEVICES (-1 or an index that does not exist hides GPUs), the "
                         "container's --gpus flag, and the device index in the code; oomguard devices lists "
                         "what is there.");
    }
    return f;
  }

  // Which memory a line that names none speaks of: the lines around it (the
  // context window), else the memory its wording implies ("std::bad_alloc",
  // "exceeded memory limit"), else the whole log (more lines with host words than
  // with GPU words, or the reverse), else the program that wrote it (round 30: a
  // host-only program's log is the host's), else the GPU.
  bool HostByContext(const Observation& o) const {
    if (o.near_host != o.near_gpu) return o.near_host > o.near_gpu;
    if (o.implied != LineDomain::kUnknown) return o.implied != LineDomain::kGpu;
    if (context.host_lines != context.gpu_lines) return context.host_lines > context.gpu_lines;
    return context.program == LineDomain::kHost;
  }

  // How HostByContext chose, in words, when the log's lines did not say: the program, or the default.
  std::string DefaultWords() const {
    return context.program == LineDomain::kHost
               ? "no line names the memory, and the log comes from " + context.program_name +
                     ", which allocates only host memory"
               : "no line names the memory, and most such logs are the GPU's";
  }

  // The last layer: memory named beside trouble in words no pattern knows. Its
  // memory from the line, else the lines around it, else the log; the GPU when
  // nothing says (most memory logs of training jobs are the GPU's).
  Finding Generic(const Observation& o) const {
    bool host = o.line_domain == LineDomain::kHost || (o.line_domain == LineDomain::kUnknown && HostByContext(o));
    Finding f = o.line_domain == LineDomain::kPinned ? HostPinned(o)
                : o.shm_words                        ? Shm(o)
                : host                               ? HostRam(o)
                                                     : Gpu(o);
    f.summary = std::string("Memory is named beside a failure, but in words no known message uses: probably ") +
                (f.domain == Domain::kHost ? "host memory" : "GPU memory") + " ran short.";
    std::string words = o.line_domain != LineDomain::kUnknown || o.shm_words ? "the line's words"
                        : o.near_host != o.near_gpu           ? "the lines around it"
                        : context.host_lines != context.gpu_lines ? "the log's other lines"
                        : context.program == LineDomain::kHost    ? "the program that wrote the log (" +
                                                                     context.program_name + ")"
                                                                  : "nothing (the GPU by default)";
    Undecided(f, {f.domain == Domain::kHost ? Cause::kGpuDeviceOom : Cause::kHostRamOom, Cause::kNotMemory},
              "no recognised error message; the memory was chosen by " + words);
    f.confidence = Confidence::kLow;
    return f;
  }

  // The last layer's growth: memory named with a verb of growth in words no leak wording knows. Its memory as
  // for any growth (the line, the lines around it, the log); low and undecided like the last layer's other
  // findings: growth in prose is often expected (a bigger batch, a cache that fills once).
  Finding GenericGrowth(const Observation& o) const {
    Finding f = Leak(o, false);
    Undecided(f, {f.domain == Domain::kHost ? Cause::kHostRamOom : Cause::kGpuDeviceOom, Cause::kNotMemory},
              "growth is named in prose, in words no known leak report uses");
    f.confidence = Confidence::kLow;
    return f;
  }

  // An out-of-memory wording whose line does not say which memory (or prose that
  // names memory as the problem): the wording's own domain, else the lines
  // around it, else the log's, GPU by default.
  Finding Family(const Observation& o) const {
    bool pinned = o.line_domain == LineDomain::kPinned;
    bool host = pinned || o.line_domain == LineDomain::kHost ||
                (o.line_domain == LineDomain::kUnknown && HostByContext(o));
    Finding f = pinned ? HostPinned(o) : host ? HostRam(o) : Gpu(o);
    if (f.alternatives.empty() && (f.cause == Cause::kGpuDeviceOom || f.cause == Cause::kHostRamOom ||
                                   f.cause == Cause::kHostPinnedOom)) {
      std::string words = o.line_domain != LineDomain::kUnknown || o.shm_words ? "the line's words"
                          : o.near_host != o.near_gpu         ? "the lines around it speak of " +
                                                            std::string(host ? "host memory" : "the GPU")
                          : o.implied != LineDomain::kUnknown ? "its wording is usually " +
                                                                    std::string(host ? "host memory's" : "the GPU's")
                          : context.host_lines != context.gpu_lines
                              ? "the log's other lines speak of " + std::string(host ? "host memory" : "the GPU")
                              : DefaultWords();
      Undecided(f, {host ? Cause::kGpuDeviceOom : Cause::kHostRamOom},
                o.signal == Signal::kMemoryProse ? "memory is named as the problem in prose, not by an error; " + words
                                                 : "the message does not say which memory ran out; " + words);
    }
    return f;
  }

  // oomguard's own report (the guard's OutOfMemory text or the plug-in's report= JSON).
  Finding OomguardReport(const Observation& o) const {
    Domain domain = o.line_domain == LineDomain::kPinned || o.line_domain == LineDomain::kHost ? Domain::kHost
                                                                                               : Domain::kGpu;
    Finding f = Base(o, Cause::kGpuDeviceOom, domain);
    f.framework = "oomguard";
    std::optional<uint64_t> R = Get(f.numbers, "requested_bytes"), L = Get(f.numbers, "limit_bytes");
    std::string request = R ? "the request of " + B(*R) : std::string("the request");
    switch (o.oomguard_verdict) {
      case 1:  // cap_too_low
        f.summary = "oomguard's cap" + (L ? " of " + B(*L) : std::string()) + " is too low for " + request +
                    ": the memory itself may have room, the configured limit does not.";
        f.advice.push_back("Raise the cap: OOMGUARD_ALLOC_CONF fraction= or limit= (docs/guard.md), or lower the "
                           "step's peak (smaller batch, mixed precision, activation checkpointing).");
        break;
      case 2:
        f.cause = Cause::kFragmentation;
        f.summary = "oomguard's pool has enough free memory for " + request + " but no free block is large enough "
                    "(fragmentation).";
        f.advice.push_back("Allocate long-lived buffers first, reuse buffers of one size, or preallocate "
                           "(OOMGUARD_ALLOC_CONF growth=off); keep tensor shapes constant.");
        break;
      case 4:
        f.cause = Cause::kOtherProcessHoldsMemory;
        f.summary = "oomguard's cap has room for " + request + " but the device refused it: other processes hold "
                    "memory, or the cap is larger than the device.";
        f.advice.push_back("See who holds the GPU: nvidia-smi --query-compute-apps=pid,used_memory --format=csv; "
                           "or lower the cap below what is free.");
        break;
      default:
        f.summary = "oomguard's arena is full: its live allocations hold the memory and " + request + " did not fit.";
        f.advice.push_back("Lower the step's peak: a smaller batch, mixed precision, activation checkpointing; "
                           "`oomguard fit MODEL` finds the largest batch that fits.");
    }
    if (domain == Domain::kHost && f.cause != Cause::kOtherProcessHoldsMemory) {
      f.cause = o.line_domain == LineDomain::kPinned ? Cause::kHostPinnedOom : Cause::kHostRamOom;
    }
    return f;
  }

  // A framework's start-up line: the GPU was already mostly taken before training.
  std::optional<Finding> StartupMemory(const Observation& o) const {
    std::optional<uint64_t> T = Get(o.numbers, "total_bytes"), F = Get(o.numbers, "free_bytes");
    if (!T || !F || *F > *T) return std::nullopt;
    if (*F * 2 >= *T || *T - *F < kGiB) {
      // The GPU was free: what follows is the framework taking (nearly) all of it.
      Finding f = PreallocationProse(o);
      f.numbers = {{"total_bytes", *T}, {"free_bytes", *F}};
      f.summary = "TensorFlow found the GPU with " + B(*F) + " free of " + B(*T) + " and reserves nearly all of it "
                  "for itself at start-up (preallocation): other processes and libraries on this GPU get the rest.";
      Undecided(f, {Cause::kGpuDeviceOom}, "a start-up line only shows what the framework will take");
      return f;
    }
    Finding f = Base(o, Cause::kOtherProcessHoldsMemory, Domain::kGpu);
    f.numbers = {{"total_bytes", *T}, {"free_bytes", *F}, {"other_processes_bytes", *T - *F}};
    f.summary = "At start-up the GPU had only " + B(*F) + " free of " + B(*T) + ": about " + B(*T - *F) +
                " was held before this job allocated anything.";
    f.advice.push_back("See who holds it: nvidia-smi --query-compute-apps=pid,used_memory --format=csv (or "
                       "oomguard devices); stop them or pick an idle GPU with CUDA_VISIBLE_DEVICES.");
    return f;
  }

  Finding CollectiveCudaError(const Observation& o) const {
    Finding f = Base(o, Cause::kGpuDeviceOom, Domain::kGpu);
    f.summary = "NCCL hit a CUDA error it does not name; most often a failed GPU allocation for its buffers.";
    Undecided(f, {Cause::kNotMemory}, "NCCL does not say which CUDA error it got");
    f.advice.push_back("Rerun with NCCL_DEBUG=INFO: 'Cuda failure 'out of memory'' confirms memory; leave room "
                       "for NCCL's buffers (smaller batch, TF memory growth, lower XLA_PYTHON_CLIENT_MEM_FRACTION) or "
                       "set NCCL_BUFFSIZE=2097152.");
    return f;
  }

  // A GPU cause read from a description, not from an error message.
  Finding Described(const Observation& o, Cause cause, std::string summary) const {
    Finding f = Base(o, cause, Domain::kGpu);
    f.summary = std::move(summary);
    Undecided(f, {Cause::kGpuDeviceOom}, "read from a description, not from an error message");
    return f;
  }

  Finding PreallocationProse(const Observation& o) const {
    Finding f = Described(o, Cause::kFrameworkPreallocation,
                          "The framework reserves most of the GPU up front, whatever the model needs: that is "
                          "preallocation, not the model's size.");
    f.advice.push_back("TensorFlow: tf.config.experimental.set_memory_growth(gpu, True) or "
                       "TF_FORCE_GPU_ALLOW_GROWTH=true; JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false or "
                       "XLA_PYTHON_CLIENT_MEM_FRACTION=.5.");
    return f;
  }

  Finding OtherProcessProse(const Observation& o) const {
    Finding f = Described(o, Cause::kOtherProcessHoldsMemory,
                          "Another process (or a job that died without freeing it) holds GPU memory that this job "
                          "needs.");
    f.advice.push_back("See who holds it: nvidia-smi --query-compute-apps=pid,used_memory --format=csv (or oomguard "
                       "devices); end stale processes (fuser -v /dev/nvidia*), or pick an idle GPU with "
                       "CUDA_VISIBLE_DEVICES.");
    return f;
  }

  Finding FragmentationProse(const Observation& o) const {
    Finding f = Described(o, Cause::kFragmentation,
                          "The allocator's cache is fragmented: memory is free in total but not in blocks large "
                          "enough.");
    FragmentationAdvice(f);
    return f;
  }

  // TensorFlow could not reserve its region of the GPU: its preallocation met a
  // GPU that was not free.
  Finding TfDeviceAllocFailed(const Observation& o) const {
    Finding f = Gpu(o);
    // The numbers decided (e.g. larger than the GPU), or the allocator was
    // already at work (BFC warnings, OOM lines): the region grew during the run.
    if (f.alternatives.empty() || gpu_allocator_activity) return f;
    f.cause = Cause::kFrameworkPreallocation;
    std::string who = o.framework == "theano" ? std::string("Theano's CNMeM pool (lib.cnmem)")
                      : o.framework.empty() || o.framework == "tensorflow" ? std::string("TensorFlow")
                                                                            : o.framework;
    f.summary = who + " could not reserve " +
                (Get(f.numbers, "requested_bytes") ? B(*Get(f.numbers, "requested_bytes")) : std::string("its region")) +
                " of the GPU for its allocator: it preallocates most of the GPU, and the GPU did not have that much "
                "free.";
    Undecided(f, {Cause::kOtherProcessHoldsMemory, Cause::kGpuDeviceOom},
              "the message does not say what else holds the GPU");
    f.advice.insert(f.advice.begin(),
                    "Let TensorFlow grow instead of reserving: tf.config.experimental.set_memory_growth(gpu, True) "
                    "(TF 1.x: config.gpu_options.allow_growth = True), or lower per_process_gpu_memory_fraction; check "
                    "nvidia-smi for other processes on the same GPU.");
    return f;
  }

  // A printout of the caching allocator: reserved far above allocated is a
  // fragmented cache (or one that is never given back).
  std::optional<Finding> AllocatorStats(const Observation& o) const {
    std::optional<uint64_t> A = Get(o.numbers, "allocated_bytes"), Rs = Get(o.numbers, "reserved_bytes");
    if (!A || !Rs || *Rs < 2 * *A || *Rs - *A < kGiB) return std::nullopt;
    Finding f = Base(o, Cause::kFragmentation, Domain::kGpu);
    f.numbers = {{"allocated_bytes", *A}, {"reserved_bytes", *Rs}, {"reserved_unallocated_bytes", *Rs - *A}};
    f.summary = "The allocator holds " + B(*Rs) + " but its tensors use only " + B(*A) + ": " + B(*Rs - *A) +
                " is cached in blocks it cannot reuse (fragmentation).";
    Undecided(f, {Cause::kLeakGrowth}, "one printout does not show whether the cache keeps growing");
    FragmentationAdvice(f);
    return f;
  }

  Finding HostUsageProse(const Observation& o) const {
    Finding f = HostRam(o);
    f.summary = "Host memory use is named as the problem: RAM (and swap) run out.";
    Undecided(f, {Cause::kLeakGrowth}, "read from a description, not from an error message");
    return f;
  }

  Finding InvalidArgument(const Observation& o) const {
    if (!context.pinning_call) return Simple(o);
    Finding f = HostPinned(o);
    f.summary = "Pinning host memory failed with 'invalid argument': CUDA refuses pinned requests it cannot map "
                "(on some systems anything over 4 GiB), so this is pinned host memory, not a bad kernel argument.";
    Undecided(f, {Cause::kNotMemory}, "CUDA's 'invalid argument' has other causes too");
    return f;
  }

  Finding Simple(const Observation& o) const {
    switch (o.signal) {
      case Signal::kDriverMismatch: {
        Finding f = Base(o, Cause::kDriverMismatch, Domain::kNone);
        f.summary = "The NVIDIA driver does not match the CUDA version the framework was built for: not a "
                    "memory problem.";
        f.advice.push_back("Update the host driver to one that supports the framework's CUDA version, or install "
                           "a framework build for the CUDA your driver supports; oomguard doctor checks the stack.");
        return f;
      }
      case Signal::kCudaLibraryMismatch: {
        Finding f = Base(o, Cause::kCudaLibraryMismatch, Domain::kNone);
        f.summary = "A CUDA library (cuDNN, cuBLAS, the runtime) is missing or built for another version or GPU: "
                    "not a memory problem.";
        f.advice.push_back("Install the libraries the framework was built with (pip nvidia-* wheels or the matching "
                           "CUDA/cuDNN) and make them visible (LD_LIBRARY_PATH); for 'no kernel image' install a "
                           "build that supports this GPU's architecture.");
        return f;
      }
      case Signal::kGpuOomWarning: {
        Finding f = Base(o, Cause::kGpuOomNonfatalWarning, Domain::kGpu);
        std::optional<uint64_t> R = Get(f.numbers, "requested_bytes");
        f.summary = "An allocator could not get " + (R ? B(*R) : std::string("memory")) +
                    " for an optional speed-up and says so itself: this is a warning, not the failure.";
        f.advice.push_back("Nothing to fix unless a real error follows; a smaller batch or memory growth can make "
                           "faster algorithms fit.");
        return f;
      }
      default: {
        Finding f = Base(o, Cause::kNotMemory, Domain::kNone);
        f.summary = "This error is not about running out of memory.";
        f.advice.push_back("Rerun with CUDA_LAUNCH_BLOCKING=1 to see the failing operation; illegal addresses and "
                           "device-side asserts usually come from an index out of range or a wrong shape.");
        return f;
      }
    }
  }
};

void MergeInto(Finding& into, const Finding& from) {
  into.occurrences += from.occurrences;
  for (const Evidence& e : from.evidence) {
    bool known = false;
    for (const Evidence& have : into.evidence) known = known || have.text == e.text;
    if (!known && into.evidence.size() < kMaxEvidence + 2) into.evidence.push_back(e);
  }
  std::sort(into.evidence.begin(), into.evidence.end(),
            [](const Evidence& a, const Evidence& b) { return a.line_number < b.line_number; });
  for (const auto& [k, v] : from.numbers) into.numbers.emplace(k, v);
  for (int r : from.ranks) {
    if (std::find(into.ranks.begin(), into.ranks.end(), r) == into.ranks.end()) into.ranks.push_back(r);
  }
  std::sort(into.ranks.begin(), into.ranks.end());
  if (from.alternatives.empty()) {
    // A decided part makes the merged finding decided.
    if (!into.alternatives.empty()) {
      into.summary = from.summary;
      into.advice = from.advice;
    }
    into.alternatives.clear();
    into.undecided_because.clear();
  }
  if (into.framework == "unknown") into.framework = from.framework;
  into.confidence = std::min(into.confidence, from.confidence);
}

}  // namespace

std::vector<Finding> Decide(const std::vector<Observation>& observations, const LogContext& context,
                            const ExplainOptions& options) {
  Decider d{context, options};
  uint64_t best = 0;
  for (const auto& [name, lines] : context.framework_lines) {
    if (lines > best) {
      best = lines;
      d.dominant_framework = name;
    }
  }
  std::string conf = options.pytorch_cuda_alloc_conf.value_or("");
  std::transform(conf.begin(), conf.end(), conf.begin(), [](unsigned char c) { return std::tolower(c); });
  d.expandable_on = context.expandable_segments_on || conf.find("expandable_segments:true") != std::string::npos;
  for (const Observation& o : observations) {
    if (auto limit = Get(o.numbers, "limit_bytes"); limit && o.signal == Signal::kImpossibleHint) d.gpu_limit = limit;
    d.gpu_allocator_activity = d.gpu_allocator_activity || o.signal == Signal::kGpuOom ||
                               o.signal == Signal::kGpuOomWarning || o.signal == Signal::kTorchOomNumbers;
  }

  std::vector<Finding> findings;
  std::vector<uint64_t> first_line;
  std::vector<bool> weak;
  std::vector<bool> generic;  // the last layer's findings (kMemoryVocabulary, kGrowthVocabulary)
  std::vector<Signal> signal_of;
  const Observation* status_rows = nullptr;
  // A line whose memory came from weak host cues only (Colab, a notebook) takes the GPU when the lines
  // around it name the GPU more than the host (round 30, corpus-2616). The findings below keep pointers
  // into this list, so it lives through the loop.
  std::vector<Observation> decided(observations);
  for (Observation& o : decided) {
    if (o.weak_line_domain && o.near_gpu > o.near_host) o.line_domain = LineDomain::kGpu;
  }
  for (const Observation& o : decided) {
    Finding f;
    switch (o.signal) {
      case Signal::kTorchOomNumbers:
      case Signal::kGpuOom: f = d.Gpu(o); break;
      case Signal::kMemoryFamily:
      case Signal::kMemoryProse: f = d.Family(o); break;
      case Signal::kMemoryVocabulary: f = d.Generic(o); break;
      case Signal::kGrowthVocabulary: f = d.GenericGrowth(o); break;
      case Signal::kOomguardReport:
        if (o.count == 0) continue;  // report fields without a head or verdict line
        f = d.OomguardReport(o);
        break;
      case Signal::kGpuStartupMemory: {
        std::optional<Finding> held = d.StartupMemory(o);
        if (!held) continue;
        f = std::move(*held);
        break;
      }
      case Signal::kCollectiveCudaError: f = d.CollectiveCudaError(o); break;
      // Most of the memory taken, on a line whose own words name the host's (WSL2's Vmmem, RAM, a PC): a process's
      // use of RAM, not a GPU framework's reservation (round 35, corpus-3020: "vmmem use 90% memory").
      case Signal::kPreallocationProse:
        f = o.line_domain == LineDomain::kHost ? d.HostUsageProse(o) : d.PreallocationProse(o);
        break;
      case Signal::kPreallocationSetting: f = d.PreallocationProse(o); break;
      case Signal::kOtherProcessProse: f = d.OtherProcessProse(o); break;
      case Signal::kFragmentationProse:
      case Signal::kFragmentationSetting: f = d.FragmentationProse(o); break;
      case Signal::kTfDeviceAllocFailed: f = d.TfDeviceAllocFailed(o); break;
      case Signal::kHostUsageProse: f = d.HostUsageProse(o); break;
      case Signal::kAllocatorStats: {
        std::optional<Finding> stats = d.AllocatorStats(o);
        if (!stats) continue;
        f = std::move(*stats);
        break;
      }
      case Signal::kPinnedProse: {
        f = d.HostPinned(o);
        f.summary = "Pinned host memory is named as the problem in a description (pin_memory turned off, or a "
                    "limit on page-locked memory).";
        d.Undecided(f, {Cause::kGpuDeviceOom}, "read from a description, not from an error message");
        break;
      }
      case Signal::kCudaInvalidArgument: f = d.InvalidArgument(o); break;
      case Signal::kImpossibleHint: {
        f = d.Gpu(o);
        if (f.cause != Cause::kImpossibleRequest) {
          f.cause = Cause::kImpossibleRequest;
          f.alternatives.clear();
          f.undecided_because.clear();
          f.summary = "The framework reports that a size it computed is wrong (larger than any limit).";
          f.advice = {"Find the shape or size computation that produced it; allocator settings will not help."};
        }
        if (o.mentions_host && !o.mentions_gpu) f.domain = Domain::kHost;
        break;
      }
      case Signal::kLibraryAllocFailure:
      case Signal::kLibraryInitFailure: f = d.Preallocation(o); break;
      case Signal::kDaliAllocFailure: f = d.Leak(o, true); break;
      case Signal::kHostPinnedOom: f = d.HostPinned(o); break;
      case Signal::kShmExhausted: f = d.Shm(o); break;
      case Signal::kShmProse:
        f = d.Shm(o);
        f.summary = "Shared memory (/dev/shm) is named as the problem (its size is raised or asked for).";
        d.Undecided(f, {Cause::kHostRamOom}, "read from a description, not from an error message");
        break;
      case Signal::kHostRamOom:
      case Signal::kKernelOomKiller:
      case Signal::kWorkerKilled:
      case Signal::kLauncherKilled:
      case Signal::kProcessKilled: f = d.HostRam(o); break;
      case Signal::kLeakGrowth: f = d.Leak(o, false); break;
      case Signal::kWrongDevice:
      case Signal::kWrongDeviceMemory: f = d.WrongDevice(o); break;
      case Signal::kGpuStatusRow: status_rows = &o; continue;
      default: f = d.Simple(o); break;
    }
    bool last_layer = o.signal == Signal::kMemoryVocabulary || o.signal == Signal::kGrowthVocabulary;
    if (!last_layer) f.confidence = ConfidenceOf(o, f);
    // A start-up line that shows a free GPU only predicts the framework's reservation.
    if (o.signal == Signal::kGpuStartupMemory && f.cause == Cause::kFrameworkPreallocation) {
      f.confidence = Confidence::kLow;
    }
    weak.push_back(IsWeak(o.signal) && !(o.signal == Signal::kGpuStartupMemory && f.cause != Cause::kFrameworkPreallocation));
    generic.push_back(last_layer);
    signal_of.push_back(o.signal);
    findings.push_back(std::move(f));
    first_line.push_back(o.first_line);
  }

  // A CUDA library that does not match explains its own failure to initialize.
  bool library_mismatch = std::find(signal_of.begin(), signal_of.end(), Signal::kCudaLibraryMismatch) != signal_of.end();
  for (size_t i = 0; library_mismatch && i < findings.size(); ++i) {
    if (signal_of[i] == Signal::kLibraryInitFailure) {
      findings[i].cause = Cause::kCudaLibraryMismatch;
      findings[i].domain = Domain::kNone;
      findings[i].alternatives.clear();
      findings[i].undecided_because.clear();
    }
  }

  // GPU status rows: full GPUs with no OOM message of their own mean memory is held.
  // An undecided GPU OOM does not explain a full GPU in the table; a decided one does,
  // and so does a framework that reserves the GPU up front (preallocation).
  bool gpu_memory_finding = false;
  for (const Finding& f : findings) {
    gpu_memory_finding = gpu_memory_finding || (f.domain == Domain::kGpu && f.cause != Cause::kNotMemory &&
                                                f.alternatives.empty()) ||
                         f.cause == Cause::kFrameworkPreallocation;
  }
  if (status_rows && status_rows->full_rows > 0) {
    if (!gpu_memory_finding) {
      Finding f = d.Base(*status_rows, Cause::kOtherProcessHoldsMemory, Domain::kGpu);
      f.numbers = {{"used_bytes", status_rows->fullest_used}, {"total_bytes", status_rows->fullest_total}};
      f.summary = "A GPU status table shows " + std::to_string(status_rows->full_rows) + " GPU(s) holding memory "
                  "(fullest: " + B(status_rows->fullest_used) + " of " + B(status_rows->fullest_total) +
                  "): that memory is held before your job allocates.";
      d.Undecided(f, {Cause::kGpuDeviceOom}, "the table does not say whether the holder is this job or another");
      f.confidence = Confidence::kLow;
      f.advice.push_back("Use a GPU that is free, or stop what holds it: nvidia-smi --query-compute-apps="
                         "pid,used_memory --format=csv; in containers the holders may be invisible.");
      findings.push_back(std::move(f));
      first_line.push_back(status_rows->first_line);
      weak.push_back(false);
      generic.push_back(false);
    }
  }

  // The last layer speaks only when nothing else names a memory: a generic finding
  // never stands beside (or above) a specific one.
  bool specific_memory = false;
  for (size_t i = 0; i < findings.size(); ++i) {
    specific_memory = specific_memory || (!generic[i] && findings[i].domain != Domain::kNone);
  }
  for (size_t i = findings.size(); specific_memory && i-- > 0;) {
    if (!generic[i]) continue;
    findings.erase(findings.begin() + static_cast<long>(i));
    first_line.erase(first_line.begin() + static_cast<long>(i));
    weak.erase(weak.begin() + static_cast<long>(i));
    generic.erase(generic.begin() + static_cast<long>(i));
  }

  // Merge findings with the same cause and domain, keeping the first.
  std::vector<Finding> merged;
  std::vector<uint64_t> merged_line;
  std::vector<bool> merged_weak;
  std::vector<bool> merged_generic;
  for (size_t i = 0; i < findings.size(); ++i) {
    bool done = false;
    for (size_t j = 0; j < merged.size() && !done; ++j) {
      if (merged[j].cause == findings[i].cause && merged[j].domain == findings[i].domain) {
        if (merged_weak[j] && !weak[i]) {
          // An explicit error speaks for the finding; the hint that came first only adds its lines.
          Finding hint = std::move(merged[j]);
          merged[j] = std::move(findings[i]);
          MergeInto(merged[j], hint);
          merged_line[j] = std::min(merged_line[j], first_line[i]);
        } else {
          MergeInto(merged[j], findings[i]);
        }
        merged_weak[j] = merged_weak[j] && weak[i];
        merged_generic[j] = merged_generic[j] && generic[i];
        done = true;
      }
    }
    if (!done) {
      merged.push_back(std::move(findings[i]));
      merged_line.push_back(first_line[i]);
      merged_weak.push_back(weak[i]);
      merged_generic.push_back(generic[i]);
    }
  }
  // A GPU OOM explained by its numbers (impossible, other process, fragmentation)
  // absorbs the generic GPU OOM lines of the same failure.
  auto specific = std::find_if(merged.begin(), merged.end(), [](const Finding& f) {
    return f.domain == Domain::kGpu && (f.cause == Cause::kImpossibleRequest ||
                                         f.cause == Cause::kOtherProcessHoldsMemory ||
                                         f.cause == Cause::kFragmentation);
  });
  if (specific != merged.end()) {
    for (size_t i = 0; i < merged.size(); ++i) {
      if (merged[i].cause == Cause::kGpuDeviceOom && &merged[i] != &*specific) {
        Finding generic = std::move(merged[i]);
        generic.alternatives.clear();
        MergeInto(*specific, generic);
        merged.erase(merged.begin() + static_cast<long>(i));
        merged_line.erase(merged_line.begin() + static_cast<long>(i));
        merged_weak.erase(merged_weak.begin() + static_cast<long>(i));
        merged_generic.erase(merged_generic.begin() + static_cast<long>(i));
        break;
      }
    }
  }
  std::vector<size_t> order(merged.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    // The last layer's guess comes after everything, even a finding that is not memory.
    bool ga = merged_generic[a], gb = merged_generic[b];
    if (ga != gb) return gb;
    // A weak finding (a kill nobody explains, a hint in prose) never hides an explicit error.
    bool wa = merged_weak[a], wb = merged_weak[b];
    if (wa != wb) return wb;
    int ia = Importance(merged[a].cause), ib = Importance(merged[b].cause);
    if (ia != ib) return ia < ib;
    return merged_line[a] < merged_line[b];
  });
  std::vector<Finding> out;
  for (size_t i : order) out.push_back(std::move(merged[i]));
  return out;
}

}  // namespace oomguard::explain
