// THE pattern table of `oomguard explain`. One entry per message family: a
// name, the signal it gives, the framework that prints it, an RE2 pattern and
// a real example line (from the framework's source or a public issue thread).
// Order matters: for each line the first matching signal wins, so specific
// patterns come before generic ones (pinned host before any CUDA OOM).
#include "patterns.h"

#include <cstdint>
#include <cstdlib>
#include <algorithm>

namespace oomguard::explain {

namespace {

using S = Signal;

constexpr Pattern kPatterns[] = {
    // ---------------------------------------------------------------- GPU, with numbers
    {"torch_cuda_oom_numbers", S::kTorchOomNumbers, "pytorch",
     R"re((?:CUDA|HIP|XPU) out of memory\. Tried to allocate|Tried to allocate [\d.]+ ?[KMGT]?i?B \(GPU \d+; )re",
     "RuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 11.17 GiB total capacity; "
     "505.96 MiB already allocated; 12.50 MiB free; 530.00 MiB reserved in total by PyTorch)"},
    {"torch_mps_oom", S::kGpuOom, "pytorch", R"re(MPS backend out of memory)re",
     "RuntimeError: MPS backend out of memory (MPS allocated: 17.80 GB, other allocations: 356.56 MB, "
     "max allowed: 18.13 GB). Tried to allocate 256 bytes on shared pool."},

    // ---------------------------------------------------------------- pinned host memory
    {"tf_pinned_pool", S::kHostPinnedOom, "tensorflow",
     R"re((?i)could not allocate pinned host memory|\((?:cuda|gpu)_host_bfc\) ran out of memory)re",
     "W ./tensorflow/core/common_runtime/gpu/pool_allocator.h:195] could not allocate pinned host memory "
     "of size: 8589934592"},
    {"cuda_alloc_on_host", S::kHostPinnedOom, "",
     R"re((?i)failed to alloc(?:ate)? [\d.,]+ ?\w* ?(?:\([\d,]+ bytes\) )?on host)re",
     "E tensorflow/stream_executor/cuda/cuda_driver.cc:924] failed to alloc 8589934592 bytes on host: "
     "CUDA_ERROR_OUT_OF_MEMORY"},
    {"cuda_host_alloc_failed", S::kHostPinnedOom, "",
     R"re((?i)(?:cudaHostAlloc|cuMemHostAlloc|cudaMallocHost|cuMemAllocHost|cudaHostRegister)\w*.{0,80}(?:fail|out of memory|error))re",
     "RuntimeError: cudaHostRegister failed: out of memory"},
    {"torch_pin_memory_thread", S::kHostPinnedOom, "pytorch",
     R"re((?i)in pin memory thread)re",
     "RuntimeError: Caught RuntimeError in pin memory thread for device 0."},

    // host RAM, said by an allocator that usually speaks of the GPU (before the GPU patterns)
    {"tf_oom_on_cpu", S::kHostRamOom, "tensorflow",
     R"re((?i)(?:OOM when allocating|ran out of memory trying to allocate).{0,300}(?:device:CPU|\(cpu\)|cpu_bfc|mklcpu))re",
     "ResourceExhaustedError: OOM when allocating tensor with shape[100000,100000] and type float on "
     "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu"},
    // ---------------------------------------------------------------- the size itself is wrong
    {"xla_exceeds_base_limit", S::kImpossibleHint, "jax",
     R"re((?i)exceeds the base limit|indicates an error in the calculation)re",
     "E external/xla/xla/service/gpu/gpu_hlo_schedule.cc:654] The byte size of input/output arguments "
     "(1374526449600) exceeds the base limit (25554419712). This indicates an error in the calculation!"},

    // ---------------------------------------------------------------- GPU OOM that is only a warning
    {"tf_bfc_not_a_failure", S::kGpuOomWarning, "tensorflow",
     R"re((?i)the caller indicates that this is not a failure)re",
     "W tensorflow/core/common_runtime/bfc_allocator.cc:239] Allocator (GPU_0_bfc) ran out of memory "
     "trying to allocate 2.20GiB with freed_by_count=0. The caller indicates that this is not a failure, "
     "but may mean that there could be performance gains if more memory were available."},
    {"tf_redzone_benign", S::kGpuOomWarning, "tensorflow",
     R"re((?i)this is benign and only means)re",
     "W tensorflow/core/kernels/gpu_utils.cc:50] Failed to allocate memory for convolution redzone "
     "checking; skipping this check. This is benign and only means that we won't check cudnn for "
     "out-of-bounds reads and writes."},

    // ---------------------------------------------------------------- GPU OOM, generic
    {"tf_bfc_ran_out", S::kGpuOom, "",
     R"re((?i)Allocator \(\w*(?:GPU|gpu)\w*\) ran out of memory trying to allocate)re",
     "W external/xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_0_bfc) ran out of memory "
     "trying to allocate 1.25TiB (rounded to 1374521760000)requested by op "},
    {"tf_oom_allocating_tensor", S::kGpuOom, "tensorflow",
     R"re((?i)OOM when allocating tensor)re",
     "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
     "shape[256,1024,14,14] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator "
     "GPU_0_bfc"},
    {"tf_failed_to_allocate_from_device", S::kGpuOom, "tensorflow",
     R"re((?i)failed to allocate [\d.]+\w* \(\d+ bytes\) from device)re",
     "E tensorflow/stream_executor/cuda/cuda_driver.cc:936] failed to allocate 3.77G (4046333952 bytes) "
     "from device: CUDA_ERROR_OUT_OF_MEMORY"},
    {"xla_resource_exhausted", S::kGpuOom, "",
     R"re((?i)RESOURCE[_ ]EXHAUSTED:.{0,40}(?:out of memory|failed to allocate|allocat))re",
     "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
     "17179869184 bytes."},
    {"cupy_oom", S::kGpuOom, "cupy",
     R"re((?i)cupy\w*\.(?:cuda\.memory\.)?OutOfMemoryError|out of memory to allocate \d+ bytes \(total|Out of memory allocating [\d,]+ bytes \(allocated so far)re",
     "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: "
     "8,589,934,592 bytes)."},
    {"nccl_cuda_oom", S::kGpuOom, "nccl", R"re((?i)NCCL WARN.{0,80}(?:out of memory|Failed to CUDA [cm]alloc))re",
     "NCCL WARN Cuda failure 'out of memory'"},
    {"torch_outofmemoryerror", S::kGpuOom, "pytorch",
     R"re(torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory|CUDA OOM\b)re",
     "torch.cuda.OutOfMemoryError: CUDA out of memory."},
    {"dali_cannot_allocate", S::kGpuOom, "dali", R"re(Can't allocate \d+ bytes on device)re",
     "Can't allocate 129499136 bytes on device 0."},
    {"cuda_error_oom", S::kGpuOom, "",
     R"re((?i)CUDA(?: error|Error|_ERROR)?[:_ ]+out[ _]of[ _]memory|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|cudaMalloc\w*.{0,40}(?:fail|out of memory)|hipErrorOutOfMemory)re",
     "RuntimeError: CUDA error: out of memory"},
    {"gpu_oom_prose", S::kGpuOom, "",
     R"re((?i)\b(?:GPU|VRAM|cuda) (?:ran )?out of memory|out of (?:GPU|video) memory|\bGPU OOM\b|OOM on (?:the )?GPU)re",
     "The model runs out of GPU memory after the first epoch."},

    // ---------------------------------------------------------------- CUDA libraries without memory
    {"library_alloc_failed", S::kLibraryAllocFailure, "",
     R"re((?:CUBLAS|CUDNN|CUFFT|CUSOLVER|CUSPARSE|CURAND)_STATUS_ALLOC_FAIL\w*|CUFFT_ALLOC_FAILED)re",
     "RuntimeError: CUDNN_STATUS_ALLOC_FAILED"},
    {"library_not_initialized", S::kLibraryInitFailure, "",
     R"re(CUBLAS_STATUS_NOT_INITIALIZED|CUDNN_STATUS_NOT_INITIALIZED|(?i:could not create cudnn handle|cuDNN failed to initialize|Failed to initialize BLAS support|failed to create cublas handle|DNN library initialization failed))re",
     "E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas handle: "
     "CUBLAS_STATUS_NOT_INITIALIZED"},
    {"dali_nvjpeg_allocator", S::kDaliAllocFailure, "dali",
     R"re((?i)NVJPEG_STATUS_ALLOCATOR_FAILURE|Critical error in pipeline.{0,200}(?:out of memory|alloc))re",
     "RuntimeError: Critical error in pipeline: Error in thread 4: [/opt/dali/dali/pipeline/operators/"
     "decoder/nvjpeg/decoupled_api/nvjpeg_decoder_decoupled_api.h:351] NVJPEG error \"5\" : "
     "NVJPEG_STATUS_ALLOCATOR_FAILURE n04418357/n04418357_26036.JPEG"},

    // ---------------------------------------------------------------- /dev/shm
    {"dataloader_bus_error", S::kShmExhausted, "pytorch",
     R"re((?i)bus error.{0,80}(?:shared memory|shm)|insufficient shared memory|killed by signal: Bus error|Signal 7 \(SIGBUS\)|out of shared memory|raise your shared memory limit)re",
     "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
     "memory (shm)."},
    {"shm_no_space", S::kShmExhausted, "",
     R"re((?i)/dev/shm.{0,120}(?:no space left|not enough|too small|full|insufficient)|(?:no space left on device|not enough space).{0,120}/dev/shm)re",
     "OSError: [Errno 28] No space left on device: '/dev/shm/psm_5a2f1c'"},
    {"torch_shm_object", S::kShmExhausted, "pytorch",
     R"re((?i)unable to (?:write to file|open shared memory object|allocate shared memory|mmap \d+ bytes from file) ?</torch_|unable to allocate shared memory)re",
     "RuntimeError: unable to write to file </torch_18692_1954506624>"},
    {"nccl_shm", S::kShmExhausted, "nccl",
     R"re((?i)NCCL WARN.{0,40}(?:shared memory|shm)|(?:Error while creating|unable to allocate) shared memory segment)re",
     "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-PGBY7V (size 9637888)"},

    // ---------------------------------------------------------------- host RAM
    {"kernel_oom_killer", S::kHostRamOom, "os",
     R"re((?i)Out of memory: Kill(?:ed)? process|^\[[\d. ]+\] Killed process \d+ \(|oom-kill:|invoked oom-killer|Memory cgroup out of memory|oom_reaper: reaped|OOMKilled)re",
     "[1234567.890] Out of memory: Killed process 41279 (python) total-vm:62811840kB, anon-rss:31254784kB, "
     "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:63020kB oom_score_adj:0"},
    {"torch_cpu_allocator", S::kHostRamOom, "pytorch",
     R"re((?i)DefaultCPUAllocator: (?:can't|not enough memory)|CPUAllocator\.cpp.{0,80}posix_memalign|can't allocate memory: you tried to allocate)re",
     "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate "
     "memory: you tried to allocate 1000000000000000 bytes. Error code 12 (Cannot allocate memory)"},
    {"numpy_unable_to_allocate", S::kHostRamOom, "numpy",
     R"re((?i)Unable to allocate [\d.]+ ?\w+ for an array)re",
     "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 7.45 GiB for an array with shape "
     "(1000000000,) and data type float64"},
    {"python_memory_error", S::kHostRamOom, "python",
     R"re(^\s*(?:\w+\.)*MemoryError\b|^\s*std::bad_alloc\s*$|what\(\):\s+std::bad_alloc|Cannot allocate memory|\bENOMEM\b)re",
     "MemoryError"},
    {"dataloader_killed", S::kHostRamOom, "pytorch",
     R"re((?i)DataLoader worker \(pid.{0,40}\) is killed by signal: Killed|DataLoader worker.{0,60}exited unexpectedly.{0,80}(?:Killed|SIGKILL|-9))re",
     "RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed."},
    {"process_killed", S::kProcessKilled, "os",
     R"re((?:^|[\]>:]\s*|\d+ )Killed(?:\s+\S.*)?\s*$|^\s*\xe5\xb7\xb2\xe6\x9d\x80\xe6\xad\xbb|(?i:Signal 9 \(SIGKILL\)|exit(?:ed with)? (?:code|status) 137\b|exitcode\s*:\s*-9\b|died with <Signals\.SIGKILL: 9>))re",
     "Killed"},

    // ---------------------------------------------------------------- growth over time
    {"memory_growth_prose", S::kLeakGrowth, "",
     R"re((?i)memory leak|leak(?:s|ing)? (?:GPU |host |CPU |RAM )?memory|memory (?:usage |consumption |use )?(?:keeps |is |was |kept |continues to |continuously |constantly |gradually |slowly |steadily )*(?:increas|grow|ris|go(?:es|ing)? up|climb)|(?:continuous|constant|steady|gradual|slow)(?: and \w+)? (?:rising|increase|growth|rise)\b|memory (?:grows|increases|rises|creeps)|(?:increas|grow|ris)ing (?:gpu |cpu |host )?memory|\xe6\x98\xbe\xe5\xad\x98.{0,30}(?:\xe5\xa2\x9e\xe5\x8a\xa0|\xe5\xa2\x9e\xe9\x95\xbf|\xe4\xb8\x8a\xe5\x8d\x87))re",
     "The way of updating training and validation loss results in the continuous rising of gpu memory"},

    // ---------------------------------------------------------------- the wrong device
    {"no_cuda_device", S::kWrongDevice, "",
     R"re(CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|(?i:no CUDA-capable device is detected|invalid device ordinal|CUDA_ERROR_INVALID_DEVICE|all CUDA-capable devices are busy or unavailable|Attempting to deserialize object on (?:a )?CUDA device|Expected all tensors to be on the same device|CUDA_VISIBLE_DEVICES\W{0,4}=\W{0,4}-1|No (?:GPU|CUDA) devices? (?:found|available|detected)|device_count\(\) (?:is|returned) 0))re",
     "Call to cuInit results in CUDA_ERROR_NO_DEVICE:"},
    {"memory_on_main_gpu", S::kWrongDevice, "",
     R"re((?i)(?:memory on|memory of|uses?|occup\w+|taking up) (?:the )?(?:(?:main|first|same) GPU|GPU ?0|cuda:0).{0,80}(?:resum|checkpoint|load|rank|process)|(?:resum|checkpoint|torch\.load).{0,80}(?:main|first|extra) GPU|map_location)re",
     "I'm wondering what is taking up memory on the main GPU when I am resuming training from a checkpoint."},

    // ---------------------------------------------------------------- driver and libraries
    {"driver_too_old", S::kDriverMismatch, "",
     R"re((?i)driver on your system is too old|CUDA driver version is insufficient|cudaErrorInsufficientDriver|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH|forward compatibility was attempted|Driver/library version mismatch|couldn't communicate with the NVIDIA driver|Found no NVIDIA driver|unsupported display driver|PTX was compiled with an unsupported toolchain|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|kernel module .{0,40}does not match|NVIDIA kernel module.{0,60}not (?:loaded|found)|Error (?:803|804)\b)re",
     "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11000)."},
    {"cuda_library_missing", S::kCudaLibraryMismatch, "",
     R"re((?i)Could not load dynamic library '?lib(?:cu|nccl|nvrtc|nvjpeg|nvToolsExt)|lib(?:cu\w*|nvrtc\w*|nccl\w*|nvjpeg\w*)\.so[.\d]*: cannot open shared object file|Cannot dlopen some GPU libraries|no kernel image is available for execution|Loaded runtime Cu\w* library: [\d.]+ but source was compiled with|CUDNN_STATUS_VERSION_MISMATCH|DNN library is not found|Torch not compiled with CUDA enabled|is not compatible with the current PyTorch installation|undefined symbol: \w*(?:cuda|cudnn|nccl|cublas)\w*|CUDA_ERROR_NO_BINARY_FOR_GPU|cudaErrorNoKernelImageForDevice|version mismatch between (?:cuDNN|CUDA)|cuDNN version incompatibility)re",
     "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
     "'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory"},

    // ---------------------------------------------------------------- errors that are not memory
    {"not_memory_cuda_error", S::kNotMemory, "",
     R"re((?i)illegal memory access|device-side assert|misaligned address|unspecified launch failure|an illegal instruction|CUDNN_STATUS_(?:NOT_SUPPORTED|EXECUTION_FAILED|BAD_PARAM|MAPPING_ERROR|INTERNAL_ERROR)|CUBLAS_STATUS_(?:EXECUTION_FAILED|INVALID_VALUE|ARCH_MISMATCH|MAPPING_ERROR|INTERNAL_ERROR|NOT_SUPPORTED)|CUDA error: invalid (?:argument|configuration|resource handle|value)|cudaErrorLaunchFailure|CUDA_ERROR_ILLEGAL_ADDRESS|Watchdog caught collective operation timeout|NCCL (?:error|WARN).{0,80}(?:unhandled system error|remote process exited|Connection (?:closed|reset|refused))|Segmentation fault|SIGSEGV|Floating point exception)re",
     "RuntimeError: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input."},

    // ---------------------------------------------------------------- GPU status tables
    {"gpu_status_row", S::kGpuStatusRow, "",
     R"re(\d+\s*(?:MiB|MB)?\s*/\s*\d+\s*(?:MiB|MB)\b)re",
     "[0] Tesla V100-SXM2-16GB | 44'C,   0 % | 15836 / 16130 MB |"},

    // ---------------------------------------------------------------- contexts
    {"framework_tensorflow", S::kContextFramework, "tensorflow",
     R"re(tensorflow[/\\]|tensorflow\.python|\bimport tensorflow|\btf\.config)re",
     "File \"/usr/lib/python3/dist-packages/tensorflow/python/client/session.py\", line 1323"},
    {"framework_keras", S::kContextFramework, "keras", R"re(\bkeras[/.]|\bimport keras)re",
     "File \"/usr/local/lib/python3.8/dist-packages/keras/engine/training.py\", line 1184, in fit"},
    {"framework_jax", S::kContextFramework, "jax", R"re(\bjax(?:lib)?[/.]|external/xla/|\bimport jax|\bflax\b)re",
     "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable"},
    {"framework_pytorch", S::kContextFramework, "pytorch",
     R"re(\btorch[/.]|\bimport torch|PyTorch|c10/cuda|site-packages/torch)re",
     "File \"/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py\", line 1501, in _call_impl"},
    {"framework_nccl", S::kContextFramework, "nccl", R"re(NCCL (?:WARN|INFO|error|version))re",
     "NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>"},
    {"framework_dali", S::kContextFramework, "dali", R"re(nvidia\.dali|/dali/)re",
     "File \"/usr/local/lib/python3.8/dist-packages/nvidia/dali/pipeline.py\", line 1012, in _run_once"},
    {"framework_cupy", S::kContextFramework, "cupy", R"re(\bcupy[/.]|cupy_backends)re",
     "File \"cupy/cuda/memory.pyx\", line 1396, in cupy.cuda.memory.SingleDeviceMemoryPool._malloc"},
    {"framework_xgboost", S::kContextFramework, "xgboost", R"re(\bxgboost[/.]|XGBoostError)re",
     "xgboost.core.XGBoostError: [10:41:28] ../src/c_api/c_api.cc:1021: Memory allocation error"},
    {"framework_numba", S::kContextFramework, "numba", R"re(\bnumba[/.]|CudaSupportError)re",
     "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init:"},
    {"expandable_segments_on", S::kContextExpandableOn, "",
     R"re((?i)expandable_segments:\s*True.{0,80}(?:already|set|enabled|export|environ)|(?:export |environ\[\W?|setenv\W+)PYTORCH_CUDA_ALLOC_CONF\W+.{0,40}expandable_segments:True|expandable_segments.{0,20}(?:is )?already (?:enabled|on|set))re",
     "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"},
    {"pin_memory_mentioned", S::kContextPinMemory, "",
     R"re((?i)pin_memory\s*=\s*True|pin_memory\.py|pinned memory|_pin_memory_loop)re",
     "File \"/usr/lib/python3/dist-packages/torch/utils/data/_utils/pin_memory.py\", line 31, in _pin_memory_loop"},
    {"wsl_mentioned", S::kContextWsl, "", R"re((?i)\bWSL2?\b|microsoft-standard|/usr/lib/wsl/)re",
     "Linux version 5.15.90.1-microsoft-standard-WSL2"},
    {"preallocation_mentioned", S::kContextPreallocation, "",
     R"re((?i)XLA_PYTHON_CLIENT_(?:PREALLOCATE|MEM_FRACTION|ALLOCATOR)|allow_growth|per_process_gpu_memory_fraction|set_memory_growth|TF_FORCE_GPU_ALLOW_GROWTH|preallocat)re",
     "config.gpu_options.allow_growth = True"},
};

// The prefilter: words at least one of which every pattern above needs (each
// pattern's regex requires one of them). A line without any of them cannot
// match the table, so the explainer skips it after one fast DFA scan.
// patterns_test.cc checks it against every example and every labelled excerpt.
constexpr const char* kPrefilter =
    R"re((?i)alloc|memory|out of|oom|pinned|pin memory|host_bfc|hostregister|base limit|error in the calculation|)re"
    R"re(not a failure|benign|exhausted|nccl|cudnn|blas|not_initialized|dnn library|bus error|sigbus|/dev/shm|)re"
    R"re(</torch_|killed|\xe5\xb7\xb2\xe6\x9d\x80\xe6\xad\xbb|sigkill|exit|enomem|leak|continuous|constant|)re"
    R"re(steady|gradual|slow|\xe6\x98\xbe\xe5\xad\x98|device|gpu|cuda:0|map_location|driver|forward compat|ptx|)re"
    R"re(kernel module|error 80|library|shared object|dlopen|kernel image|version|compiled with|compatible|)re"
    R"re(undefined symbol|no_binary|nokernelimage|illegal|assert|misaligned|launch|_status_|invalid|watchdog|)re"
    R"re(segmentation|sigsegv|floating point|(?-i:\d ?Mi?B)|tensorflow|tf\.config|keras|jax|external/xla|flax|torch|)re"
    R"re(c10/cuda|dali|cupy|xgboost|numba|cudasupporterror|expandable_segments|pin_memory|wsl|microsoft|)re"
    R"re(xla_python_client|allow_growth|memory_fraction|memory_growth|preallocat|\x1b)re";

// Each extractor captures an amount in group 1. Phrases are the frameworks' own.
constexpr NumberPattern kNumberPatterns[] = {
    // requested
    {"requested_bytes", R"re(rounded to (\d+)\))re"},
    {"requested_bytes", R"re(Tried to allocate (?:more than )?([\d.,]+ ?(?:[KMGTPE]i?B|bytes|B)))re"},
    {"requested_bytes", R"re((?i)failed to alloc(?:ate)? [\d.]+\w* \((\d+) bytes\))re"},
    {"requested_bytes", R"re((?i)failed to alloc(?:ate)? (\d+) bytes)re"},
    {"requested_bytes", R"re((?i)pinned host memory of size:? (\d+))re"},
    {"requested_bytes", R"re((?i)request for [\d.]+\w* \((\d+)B\))re"},
    {"requested_bytes", R"re((?i)(?:trying|tried) to allocate ([\d.,]+ ?(?:[KMGTP]i?B|[KMGTP]|bytes|B)))re"},
    {"requested_bytes", R"re((?i)out of memory (?:allocating|to allocate) ([\d,]+) bytes)re"},
    {"requested_bytes", R"re((?i)Unable to allocate ([\d.]+ ?[KMGTP]?i?B))re"},
    {"requested_bytes", R"re((?i)arguments \((\d+)\) exceeds)re"},
    // capacity / limits
    {"total_bytes", R"re(([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)) total capacity)re"},
    {"total_bytes", R"re((?i)total capac\w* of ([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)))re"},
    {"total_bytes", R"re((?i)max allowed: ([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)))re"},
    {"limit_bytes", R"re((?i)base limit \((\d+)\))re"},
    {"limit_bytes", R"re(\bLimit:\s+(\d+))re"},
    // free
    {"free_bytes", R"re(([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)) free\b)re"},
    {"free_bytes", R"re((?i)of which ([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)) (?:is )?free)re"},
    // in use
    {"allocated_bytes", R"re(([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)) already allocated)re"},
    {"allocated_bytes", R"re((?i)([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)) is allocated by PyTorch)re"},
    {"allocated_bytes", R"re((?i)allocated so far: ([\d,]+) bytes)re"},
    {"allocated_bytes", R"re((?i)\(total ([\d,]+) bytes\))re"},
    {"allocated_bytes", R"re((?i)MPS allocated: ([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)))re"},
    {"allocated_bytes", R"re(\bInUse:\s+(\d+))re"},
    {"reserved_bytes", R"re(([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)) reserved in total by PyTorch)re"},
    {"reserved_unallocated_bytes", R"re((?i)([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)) is reserved by PyTorch but unallocated)re"},
    {"reserved_unallocated_bytes", R"re(([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)) cached\))re"},
    {"process_in_use_bytes", R"re((?i)this process has ([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)) memory in use)re"},
    {"other_allocations_bytes", R"re((?i)other allocations: ([\d.]+ ?(?:[KMGTPE]i?B|bytes|B)))re"},
    {"killed_rss_bytes", R"re(anon-rss:(\d+kB))re"},
};

}  // namespace

bool IsContext(Signal signal) { return signal >= Signal::kContextFramework; }

std::span<const Pattern> Patterns() { return kPatterns; }
std::span<const NumberPattern> NumberPatterns() { return kNumberPatterns; }

const CompiledPatterns& Compiled() {
  static const CompiledPatterns* compiled = [] {
    auto* c = new CompiledPatterns;
    RE2::Options options;
    options.set_encoding(RE2::Options::EncodingLatin1);
    options.set_log_errors(false);
    options.set_max_mem(64 << 20);
    c->set = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
    for (const Pattern& p : kPatterns) {
      std::string error;
      if (c->set->Add(p.regex, &error) < 0) std::abort();  // a bad table is a programming error
      c->each.push_back(std::make_unique<RE2>(p.regex, options));
    }
    if (!c->set->Compile()) std::abort();
    for (const NumberPattern& n : kNumberPatterns) c->numbers.push_back(std::make_unique<RE2>(n.regex, options));
    c->prefilter = std::make_unique<RE2>(kPrefilter, options);
    if (!c->prefilter->ok()) std::abort();
    return c;
  }();
  return *compiled;
}

bool ParseGpuRow(std::string_view line, uint64_t* used_bytes, uint64_t* total_bytes, int* utilization) {
  static const RE2* row = new RE2(R"re((\d+)\s*(?:MiB|MB)?\s*/\s*(\d+)\s*(?:MiB|MB)\b)re");
  static const RE2* smi_util = new RE2(R"re(MiB\s*\|\s*(\d+)%)re");      // nvidia-smi: "| 15000MiB / 16160MiB |  0% "
  static const RE2* gpustat_util = new RE2(R"re((\d+) %\s*\|\s*\d+ / \d+ MB)re");  // gpustat: "0 % | 15836 / 16130 MB"
  re2::StringPiece text(line.data(), line.size());
  uint64_t used = 0, total = 0;
  if (!RE2::PartialMatch(text, *row, &used, &total)) return false;
  if (used > (uint64_t{1} << 30) || total > (uint64_t{1} << 30)) return false;
  *used_bytes = used << 20;
  *total_bytes = total << 20;
  int util = -1;
  if (!RE2::PartialMatch(text, *smi_util, &util) && !RE2::PartialMatch(text, *gpustat_util, &util)) util = -1;
  *utilization = util;
  return true;
}

void MatchLine(std::string_view line, std::vector<int>* matches) {
  matches->clear();
  const CompiledPatterns& c = Compiled();
  if (!c.set->Match(re2::StringPiece(line.data(), line.size()), matches)) return;
  std::sort(matches->begin(), matches->end());
}

}  // namespace oomguard::explain
