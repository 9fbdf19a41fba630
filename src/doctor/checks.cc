#include "oomguard/doctor/checks.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "oomguard/doctor/cuda_visible_devices.h"
#include "oomguard/doctor/devices.h"
#include "oomguard/machine_facts.h"
#include "oomguard/units.h"

namespace oomguard::doctor {

const char* CheckStatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kOk: return "ok";
    case CheckStatus::kWarn: return "warn";
    case CheckStatus::kFail: return "fail";
  }
  return "?";
}

namespace {

bool StartsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
  return s.substr(b);
}


// Fields of /proc/meminfo in bytes.
std::map<std::string, uint64_t> ParseMeminfo(const std::string& text) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    unsigned long long kb = 0;
    if (std::sscanf(line.c_str() + colon + 1, "%llu", &kb) == 1) out[line.substr(0, colon)] = kb * 1024ull;
  }
  return out;
}

struct Library {
  std::string path;
  int version = 0;  // 0 when unknown
};

// Directories the dynamic loader searches, then the CUDA toolkit's own.
std::vector<std::string> LibraryDirs(const SystemView& sys) {
  std::vector<std::string> dirs;
  if (std::optional<std::string> ld = sys.Env("LD_LIBRARY_PATH")) {
    std::stringstream ss(*ld);
    std::string d;
    while (std::getline(ss, d, ':')) if (!d.empty()) dirs.push_back(d);
  }
  std::vector<std::string> conf_files = {"/etc/ld.so.conf"};
  for (size_t i = 0; i < conf_files.size() && i < 64; ++i) {
    std::optional<std::string> text = sys.ReadFile(conf_files[i]);
    if (!text) continue;
    std::istringstream in(*text);
    std::string line;
    while (std::getline(in, line)) {
      line = Trim(line.substr(0, line.find('#')));
      if (line.empty()) continue;
      if (StartsWith(line, "include")) {
        std::string pattern = Trim(line.substr(7));
        size_t slash = pattern.rfind('/');
        if (slash == std::string::npos) continue;
        std::string dir = pattern.substr(0, slash), glob = pattern.substr(slash + 1);
        std::string suffix = StartsWith(glob, "*") ? glob.substr(1) : glob;
        std::vector<std::string> names = sys.ListDir(dir);
        std::sort(names.begin(), names.end());
        for (const std::string& n : names) {
          if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
            conf_files.push_back(dir + "/" + n);
          }
        }
      } else {
        dirs.push_back(line);
      }
    }
  }
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
                        "/usr/lib"}) {
    dirs.push_back(d);
  }
  std::vector<std::string> local = sys.ListDir("/usr/local");
  std::sort(local.begin(), local.end());
  for (const std::string& n : local) {
    if (!StartsWith(n, "cuda")) continue;
    for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib"}) dirs.push_back("/usr/local/" + n + sub);
  }
  std::vector<std::string> unique;
  for (const std::string& d : dirs) {
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
  }
  return unique;
}

// Version from a file name: "libcudart.so.12.2.140" -> 12020, "libcudnn.so.8.9.2" -> 8902 (cuDNN style).
int VersionFromName(const std::string& name, const std::string& stem, LibraryKind kind) {
  int major = 0, minor = 0, patch = 0;
  int n = std::sscanf(name.c_str() + stem.size(), ".%d.%d.%d", &major, &minor, &patch);
  if (n < 1) return 0;
  if (kind == LibraryKind::kCudnn) return major >= 9 ? major * 10000 + minor * 100 + patch : major * 1000 + minor * 100 + patch;
  return major * 1000 + minor * 10;
}

// Every `stem`.so.N[.M...] in the library directories, one per version.
std::vector<Library> FindLibraries(const SystemView& sys, const std::string& stem, LibraryKind kind) {
  std::vector<Library> found;
  std::set<int> versions;
  for (const std::string& dir : LibraryDirs(sys)) {
    std::vector<std::string> names = sys.ListDir(dir);
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
      if (!StartsWith(n, stem + ".")) continue;  // the versioned names only: what programs load
      Library lib{dir + "/" + n, 0};
      Result<int> v = sys.LibraryVersion(lib.path, kind);
      lib.version = v ? *v : VersionFromName(n, stem, kind);
      if (versions.insert(lib.version).second) found.push_back(lib);
    }
  }
  return found;
}

std::string CudnnVersionText(int v) {
  if (v <= 0) return "unknown version";
  int major = v >= 90000 ? v / 10000 : v / 1000;
  int minor = v >= 90000 ? (v % 10000) / 100 : (v % 1000) / 100;
  int patch = v % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

struct Machine {
  bool nvml_ok = false;
  std::vector<std::string> device_nodes;  // "/dev/nvidia0", ...
  bool ctl_node = false;
  std::string kernel_module;              // from /proc/driver/nvidia/version
  std::vector<std::string> nvidia_pci;    // NVIDIA display/3D controllers on the PCI bus
  bool in_container = false;
  std::string container_evidence;
  std::optional<std::string> nvidia_visible_devices;
  bool gpus_requested = false;
  bool no_gpu_hardware = false;
};

Machine Inspect(const SystemView& sys, const GpuSnapshot& gpus) {
  Machine m;
  m.nvml_ok = gpus.driver.has_value();
  std::vector<std::string> dev = sys.ListDir("/dev");
  std::sort(dev.begin(), dev.end());
  for (const std::string& n : dev) {
    if (n == "nvidiactl") m.ctl_node = true;
    if (StartsWith(n, "nvidia") && n.size() > 6 && std::isdigit(static_cast<unsigned char>(n[6]))) {
      m.device_nodes.push_back("/dev/" + n);
    }
  }
  if (std::optional<std::string> v = sys.ReadFile("/proc/driver/nvidia/version")) {
    m.kernel_module = NvidiaDriverVersion(*v);  // the shared machine-facts parser (open modules too)
    if (m.kernel_module.empty()) m.kernel_module = "unknown";
  }
  std::vector<std::string> pci = sys.ListDir("/sys/bus/pci/devices");
  std::sort(pci.begin(), pci.end());
  for (const std::string& d : pci) {
    std::optional<std::string> vendor = sys.ReadFile("/sys/bus/pci/devices/" + d + "/vendor");
    std::optional<std::string> cls = sys.ReadFile("/sys/bus/pci/devices/" + d + "/class");
    if (vendor && Trim(*vendor) == "0x10de" && cls && StartsWith(Trim(*cls), "0x03")) m.nvidia_pci.push_back(d);
  }
  if (sys.Exists("/.dockerenv")) {
    m.in_container = true;
    m.container_evidence = "/.dockerenv exists";
  } else if (sys.Exists("/run/.containerenv")) {
    m.in_container = true;
    m.container_evidence = "/run/.containerenv exists";
  } else if (std::optional<std::string> cg = sys.ReadFile("/proc/1/cgroup")) {
    for (const char* word : {"docker", "kubepods", "containerd", "libpod", "lxc"}) {
      if (cg->find(word) != std::string::npos) {
        m.in_container = true;
        m.container_evidence = std::string("/proc/1/cgroup mentions ") + word;
        break;
      }
    }
  }
  m.nvidia_visible_devices = sys.Env("NVIDIA_VISIBLE_DEVICES");
  m.gpus_requested = m.nvidia_visible_devices && !m.nvidia_visible_devices->empty() &&
                     *m.nvidia_visible_devices != "void" && *m.nvidia_visible_devices != "none";
  m.no_gpu_hardware = !m.nvml_ok && m.device_nodes.empty() && !m.ctl_node && m.kernel_module.empty() &&
                      m.nvidia_pci.empty();
  return m;
}

constexpr const char* kNoGpuFix =
    "if this machine should have a GPU: in a container pass it through (docker run --gpus all, which needs the "
    "NVIDIA Container Toolkit on the host); on a VM attach one; otherwise train on the CPU "
    "(oomguard plan --target cpu)";

Check DriverCheck(const Machine& m, const GpuSnapshot& gpus, CheckStatus absent) {
  Check c{"nvidia_driver", CheckStatus::kOk, "", ""};
  std::string nodes = std::to_string(m.device_nodes.size()) + " GPU device node(s)";
  if (m.nvml_ok) {
    c.detail = "NVIDIA driver " + gpus.driver->driver_version + ", " + nodes + ", NVML sees " +
               std::to_string(gpus.gpus.size()) + " GPU(s)";
    if (!m.kernel_module.empty() && m.kernel_module != "unknown" &&
        CompareDriverVersions(m.kernel_module, gpus.driver->driver_version) != 0) {
      c.status = CheckStatus::kFail;
      c.detail = "kernel module " + m.kernel_module + " but user-space driver " + gpus.driver->driver_version +
                 ": 'Driver/library version mismatch'";
      c.fix = "reboot (or reload the nvidia kernel modules) after a driver upgrade";
    } else if (gpus.gpus.empty()) {
      c.status = CheckStatus::kFail;
      c.detail += "; the driver is loaded but reports no GPU";
      c.fix = "check 'nvidia-smi' and 'dmesg | grep -i nvrm' (GPU fallen off the bus, or not passed through)";
    }
    return c;
  }
  if (!m.kernel_module.empty()) {
    c.status = CheckStatus::kFail;
    c.detail = "NVIDIA kernel module " + m.kernel_module + " is loaded (" + nodes +
               ") but NVML cannot be used: " + gpus.no_driver_reason;
    c.fix = "install the user-space driver of the same version (libnvidia-ml.so.1, libcuda.so.1); in a container "
            "run with the NVIDIA Container Toolkit (--gpus all) so it mounts them";
  } else if (!m.device_nodes.empty() || m.ctl_node) {
    c.status = CheckStatus::kFail;
    c.detail = "NVIDIA device nodes exist (" + nodes + ") but the driver cannot be used: " + gpus.no_driver_reason;
    c.fix = "run with the NVIDIA Container Toolkit (--gpus all) so the driver libraries are mounted, or install "
            "the NVIDIA driver";
  } else if (!m.nvidia_pci.empty()) {
    c.status = CheckStatus::kFail;
    c.detail = "an NVIDIA GPU is on the PCI bus (" + m.nvidia_pci[0] + ") but no NVIDIA driver is loaded";
    c.fix = "install the NVIDIA driver (e.g. 'apt install nvidia-driver-580' or NVIDIA's .run installer), then "
            "reboot or 'modprobe nvidia'";
  } else if (m.in_container && m.gpus_requested) {
    c.status = CheckStatus::kFail;
    c.detail = "NVIDIA_VISIBLE_DEVICES=" + *m.nvidia_visible_devices +
               " asks for GPUs but none were passed into this container (no /dev/nvidia*)";
    c.fix = "start the container with --gpus all (or --runtime=nvidia) and install the NVIDIA Container Toolkit on "
            "the host";
  } else {
    c.status = absent;
    c.detail = "no NVIDIA GPU and no NVIDIA driver on this machine (no /dev/nvidia*, no "
               "/proc/driver/nvidia/version, no NVIDIA device on the PCI bus): GPU training is impossible here, "
               "CPU training works";
    c.fix = kNoGpuFix;
  }
  return c;
}

Check LibcudaCheck(const SystemView& sys, const Machine& m, CheckStatus absent, int* cuda_driver_version) {
  Check c{"libcuda", CheckStatus::kOk, "", ""};
  Result<int> v = sys.LibraryVersion("libcuda.so.1", LibraryKind::kCudaDriver);
  if (v) {
    *cuda_driver_version = *v;
    c.detail = "libcuda.so.1 loads and supports CUDA up to " + FormatCudaVersion(*v);
    return c;
  }
  c.detail = "libcuda.so.1 cannot be loaded (" + v.error() + ")";
  if (m.no_gpu_hardware) {
    c.status = absent;
    c.detail += "; it comes with the NVIDIA driver, which this machine does not have";
    c.fix = kNoGpuFix;
  } else {
    c.status = CheckStatus::kFail;
    c.fix = "install the NVIDIA driver's CUDA library (libcuda.so.1, same version as the kernel module); in a "
            "container use --gpus all so the NVIDIA Container Toolkit mounts it";
  }
  return c;
}

std::string ListVersions(const std::vector<Library>& libs, bool cudnn) {
  std::string out;
  for (const Library& l : libs) {
    if (!out.empty()) out += ", ";
    std::string v = cudnn ? CudnnVersionText(l.version) : (l.version ? FormatCudaVersion(l.version) : "unknown version");
    out += v + " (" + l.path + ")";
  }
  return out;
}

}  // namespace

std::vector<Check> RunDoctorChecks(const SystemView& sys, const GpuSnapshot& gpus, const DoctorOptions& options) {
  std::vector<Check> checks;
  const CheckStatus absent = options.require_gpu ? CheckStatus::kFail : CheckStatus::kWarn;
  Machine m = Inspect(sys, gpus);

  checks.push_back(DriverCheck(m, gpus, absent));
  int cuda_driver_version = gpus.driver ? gpus.driver->cuda_version : 0;
  checks.push_back(LibcudaCheck(sys, m, absent, &cuda_driver_version));

  // CUDA runtime.
  std::vector<Library> runtimes = FindLibraries(sys, "libcudart.so", LibraryKind::kCudaRuntime);
  Check rt{"cuda_runtime", CheckStatus::kOk, "", ""};
  if (runtimes.empty()) {
    rt.status = CheckStatus::kWarn;
    rt.detail = "no libcudart.so.* on the library path or under /usr/local/cuda*";
    rt.fix = "nothing to do for PyTorch/TensorFlow pip wheels (they bring their own runtime); to build CUDA code "
             "install the CUDA toolkit or add its lib64 to LD_LIBRARY_PATH";
  } else {
    rt.detail = "CUDA runtime " + ListVersions(runtimes, false);
  }
  checks.push_back(rt);

  // cuDNN.
  std::vector<Library> cudnns = FindLibraries(sys, "libcudnn.so", LibraryKind::kCudnn);
  Check dnn{"cudnn", CheckStatus::kOk, "", ""};
  if (cudnns.empty()) {
    dnn.status = CheckStatus::kWarn;
    dnn.detail = "no libcudnn.so.* on the library path or under /usr/local/cuda*";
    dnn.fix = "nothing to do for PyTorch pip wheels (they bring cuDNN); otherwise install cuDNN for your CUDA major";
  } else {
    dnn.detail = "cuDNN " + ListVersions(cudnns, true);
  }
  checks.push_back(dnn);

  // Does the driver support the newest runtime found?
  Check sup{"driver_supports_runtime", CheckStatus::kOk, "", ""};
  int newest = 0;
  for (const Library& l : runtimes) newest = std::max(newest, l.version);
  std::string driver_version = gpus.driver ? gpus.driver->driver_version : "";
  if (driver_version.empty() && !m.kernel_module.empty() && m.kernel_module != "unknown") driver_version = m.kernel_module;
  DriverRequirement need = MinimumDriverFor(newest);
  if (newest == 0) {
    sup.detail = "no CUDA runtime with a known version to check";
    if (cuda_driver_version > 0) sup.detail += "; the driver supports CUDA up to " + FormatCudaVersion(cuda_driver_version);
  } else if (cuda_driver_version == 0 && driver_version.empty()) {
    sup.status = CheckStatus::kWarn;
    sup.detail = "cannot check without a driver: the CUDA " + FormatCudaVersion(newest) + " runtime needs driver >= " +
                 (need.ga.empty() ? "?" : need.ga);
    if (!need.minor_compat.empty() && need.minor_compat != need.ga) {
      sup.detail += " (>= " + need.minor_compat + " through minor version compatibility)";
    }
    sup.fix = "use a driver >= " + (need.ga.empty() ? std::string("?") : need.ga) + " on the machine that runs it";
  } else {
    bool full = cuda_driver_version > 0 ? cuda_driver_version >= newest
                                        : (!need.ga.empty() && CompareDriverVersions(driver_version, need.ga) >= 0);
    bool compat = !full && cuda_driver_version / 1000 == newest / 1000 && !need.minor_compat.empty() &&
                  !driver_version.empty() && CompareDriverVersions(driver_version, need.minor_compat) >= 0;
    std::string have = "driver " + (driver_version.empty() ? std::string("?") : driver_version) +
                       " supports CUDA up to " + FormatCudaVersion(cuda_driver_version);
    if (full) {
      sup.detail = have + ", the newest runtime found is CUDA " + FormatCudaVersion(newest);
    } else if (compat) {
      sup.status = CheckStatus::kWarn;
      sup.detail = have + "; the CUDA " + FormatCudaVersion(newest) +
                   " runtime runs only through minor version compatibility (no PTX JIT: kernels must be built for "
                   "this GPU's architecture)";
      sup.fix = "upgrade the driver to >= " + need.ga;
    } else {
      sup.status = CheckStatus::kFail;
      sup.detail = have + "; the CUDA " + FormatCudaVersion(newest) + " runtime needs driver >= " +
                   (need.ga.empty() ? "?" : need.ga) +
                   ": CUDA calls fail with 'CUDA driver version is insufficient for CUDA runtime version'";
      sup.fix = "upgrade the driver to >= " + need.ga + ", or use a build of your framework for CUDA " +
                FormatCudaVersion(cuda_driver_version) + " or older";
    }
  }
  checks.push_back(sup);

  // CUDA_VISIBLE_DEVICES.
  Check cvd{"cuda_visible_devices", CheckStatus::kOk, "", ""};
  std::optional<std::string> cvd_env = sys.Env("CUDA_VISIBLE_DEVICES");
  std::optional<std::string> order_env = sys.Env("CUDA_DEVICE_ORDER");
  VisibleDevices visible = ParseCudaVisibleDevices(cvd_env ? cvd_env->c_str() : nullptr);
  Result<DeviceOrder> order = ParseCudaDeviceOrder(order_env ? order_env->c_str() : nullptr);
  std::vector<std::string> problems = visible.warnings;
  if (!order) problems.push_back(order.error());
  // The one rule (cuda_visible_devices.h): where CUDA stops using the list.
  std::optional<size_t> kept;
  if (!visible.hidden_from.empty()) kept = visible.entries.size();
  if (gpus.driver && !gpus.gpus.empty()) {
    OrdinalMap map = MapCudaOrdinals(gpus, visible, order ? *order : DeviceOrder::kFastestFirst);
    for (const std::string& w : map.warnings) problems.push_back(w);
    if (map.cut_at && (!kept || *map.cut_at < *kept)) kept = map.cut_at;
  }
  const bool stopped_early = kept && *kept > 0;
  const bool sees_none = visible.set && (visible.entries.empty() || (kept && *kept == 0));
  if (!cvd_env) {
    cvd.detail = "unset: CUDA sees every GPU";
  } else {
    cvd.detail = "CUDA_VISIBLE_DEVICES='" + Shown(*cvd_env, 100) + "'";
  }
  if (!problems.empty()) {
    for (const std::string& p : problems) cvd.detail += "; " + p;
  }
  if (stopped_early) {
    cvd.status = CheckStatus::kFail;
    cvd.fix = "list only valid entries (indices, GPU-<uuid>, MIG-<uuid>), comma-separated without spaces; see "
              "'oomguard devices'";
  } else if (sees_none) {
    cvd.status = CheckStatus::kWarn;
    cvd.fix = "unset CUDA_VISIBLE_DEVICES (or list GPUs) unless you mean to train on the CPU";
  } else if (!problems.empty()) {  // includes CUDA ordinals that differ from nvidia-smi's numbers
    cvd.status = CheckStatus::kWarn;
    cvd.fix = "see 'oomguard devices' for which GPU is which; CUDA_DEVICE_ORDER=PCI_BUS_ID makes CUDA ordinals "
              "match nvidia-smi";
  }
  checks.push_back(cvd);

  // GPUs busy with other processes.
  Check busy{"gpus_busy", CheckStatus::kOk, "", ""};
  if (!gpus.driver || gpus.gpus.empty()) {
    busy.detail = "no GPU to check";
  } else {
    std::vector<std::string> busy_lines;
    for (const Gpu& g : gpus.gpus) {
      uint64_t others = 0;
      std::vector<std::string> who;
      for (const GpuProcess& p : g.processes) {
        if (p.pid == options.self_pid) continue;
        others += p.used_bytes;
        std::string cmd = ProcessCommand(sys, p.pid);
        who.push_back("pid " + std::to_string(p.pid) + (cmd.empty() ? "" : " " + cmd.substr(0, 40)));
      }
      uint64_t used = std::max(others, g.used_bytes);
      if (g.total_bytes > 0 && used * 10 > g.total_bytes) {
        std::string line = "GPU " + std::to_string(g.nvml_index) + " (" + g.name + ") has " + FormatBytes(used) +
                           " of " + FormatBytes(g.total_bytes) + " in use";
        if (!who.empty()) {
          line += " by " + std::to_string(who.size()) + " process(es): " + who[0];
          if (who.size() > 1) line += ", ...";
        } else {
          line += " by processes not visible from here";
        }
        busy_lines.push_back(line);
      }
    }
    if (busy_lines.empty()) {
      busy.detail = std::to_string(gpus.gpus.size()) + " GPU(s), each more than 90% free";
    } else {
      busy.status = CheckStatus::kWarn;
      for (const std::string& l : busy_lines) busy.detail += (busy.detail.empty() ? "" : "; ") + l;
      busy.fix = "choose a free GPU with CUDA_VISIBLE_DEVICES (see 'oomguard devices'), or stop the other processes";
    }
  }
  checks.push_back(busy);

  // Host RAM and swap.
  std::optional<std::string> meminfo_text = sys.ReadFile("/proc/meminfo");
  std::map<std::string, uint64_t> mem = meminfo_text ? ParseMeminfo(*meminfo_text) : std::map<std::string, uint64_t>{};
  Check ram{"host_memory", CheckStatus::kOk, "", ""};
  Check swap{"swap", CheckStatus::kOk, "", ""};
  if (!mem.count("MemTotal")) {
    ram.status = swap.status = CheckStatus::kWarn;
    ram.detail = swap.detail = "cannot read /proc/meminfo";
  } else {
    uint64_t total = mem["MemTotal"];
    uint64_t avail = mem.count("MemAvailable") ? mem["MemAvailable"] : mem["MemFree"];
    ram.detail = FormatBytes(avail) + " available of " + FormatBytes(total);
    if (avail * 10 < total) {
      ram.status = CheckStatus::kWarn;
      ram.detail += " (less than 10%)";
      ram.fix = "stop other programs before training; DataLoader workers and pinned buffers need host RAM";
    }
    uint64_t swap_total = mem["SwapTotal"], swap_used = swap_total - std::min(swap_total, mem["SwapFree"]);
    if (swap_total == 0) {
      swap.detail = "no swap: when RAM runs out the kernel's OOM killer ends the largest process at once "
                    "('oomguard watch --stop-before-oom' can stop a growing run first)";
    } else if (swap_used > (1ull << 30)) {
      swap.status = CheckStatus::kWarn;
      swap.detail = FormatBytes(swap_used) + " of " + FormatBytes(swap_total) +
                    " swap in use: a training run that swaps slows down many times over";
      swap.fix = "free host RAM (fewer DataLoader workers, smaller prefetch) before training";
    } else {
      swap.detail = FormatBytes(swap_total) + " swap, " + FormatBytes(swap_used) + " in use";
    }
  }
  checks.push_back(ram);
  checks.push_back(swap);

  // /dev/shm.
  Check shm{"shm", CheckStatus::kOk, "", ""};
  std::optional<uint64_t> shm_bytes = sys.FilesystemBytes("/dev/shm");
  if (!shm_bytes) {
    shm.status = CheckStatus::kWarn;
    shm.detail = "no /dev/shm: PyTorch DataLoader workers and NCCL cannot share memory";
    shm.fix = "mount a tmpfs on /dev/shm (docker: --shm-size=8g or --ipc=host)";
  } else if (*shm_bytes < (1ull << 30)) {
    shm.status = CheckStatus::kWarn;
    shm.detail = "/dev/shm is " + FormatBytes(*shm_bytes) +
                 ": DataLoader workers fail with 'bus error' or 'No space left on device' once batches outgrow it";
    shm.fix = "docker run --shm-size=8g (or --ipc=host); Kubernetes: an emptyDir with medium: Memory on /dev/shm";
  } else {
    shm.detail = "/dev/shm is " + FormatBytes(*shm_bytes);
  }
  checks.push_back(shm);

  // memlock.
  Check lock{"memlock", CheckStatus::kOk, "", ""};
  std::optional<uint64_t> memlock = sys.MemlockLimitBytes();
  if (!memlock) {
    lock.detail = "unlimited";
  } else if (*memlock < (64ull << 20)) {
    lock.status = CheckStatus::kWarn;
    lock.detail = "memlock limit " + FormatBytes(*memlock) +
                  ": registering existing host buffers as pinned (cudaHostRegister) and RDMA/InfiniBand transfers "
                  "(NCCL, GPUDirect) fail beyond it";
    lock.fix = "ulimit -l unlimited (limits.conf: '* - memlock unlimited'; docker: --ulimit memlock=-1)";
  } else {
    lock.detail = "memlock limit " + FormatBytes(*memlock);
  }
  checks.push_back(lock);

  // Overcommit.
  Check over{"overcommit", CheckStatus::kOk, "", ""};
  std::optional<std::string> oc = sys.ReadFile("/proc/sys/vm/overcommit_memory");
  std::string mode = oc ? Trim(*oc) : "";
  if (mode == "0") {
    over.detail = "vm.overcommit_memory=0 (heuristic, the default)";
  } else if (mode == "1") {
    over.detail = "vm.overcommit_memory=1 (always): allocations never fail, the OOM killer acts instead";
  } else if (mode == "2") {
    over.status = CheckStatus::kWarn;
    over.detail = "vm.overcommit_memory=2 (strict): CUDA's large virtual reservations and forked DataLoader "
                  "workers fail with 'Cannot allocate memory' while RAM is still free";
    over.fix = "sysctl -w vm.overcommit_memory=0";
  } else {
    over.status = CheckStatus::kWarn;
    over.detail = "cannot read /proc/sys/vm/overcommit_memory";
  }
  checks.push_back(over);

  // Container without GPUs.
  Check ctr{"container", CheckStatus::kOk, "", ""};
  bool gpu_nodes = !m.device_nodes.empty();
  if (!m.in_container) {
    ctr.detail = "not in a container";
  } else if (gpu_nodes) {
    ctr.detail = "in a container (" + m.container_evidence + ") with " + std::to_string(m.device_nodes.size()) +
                 " GPU device node(s) passed through";
  } else {
    ctr.status = m.gpus_requested ? CheckStatus::kFail : absent;
    ctr.detail = "in a container (" + m.container_evidence + ") with no GPU passed through (no /dev/nvidia*)";
    if (m.gpus_requested) ctr.detail += " although NVIDIA_VISIBLE_DEVICES=" + *m.nvidia_visible_devices;
    ctr.fix = "docker run --gpus all (needs the NVIDIA Container Toolkit on the host); Kubernetes: request "
              "nvidia.com/gpu";
  }
  checks.push_back(ctr);
  return checks;
}

}  // namespace oomguard::doctor
