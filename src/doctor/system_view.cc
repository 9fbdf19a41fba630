#include "oomguard/doctor/system_view.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "oomguard/bounded_json.h"
#include "oomguard/bounded_read.h"
#include "oomguard/mr/cuda_driver.h"

namespace oomguard::doctor {
namespace {

std::optional<std::string> ReadWhole(const std::string& path) {
  Result<std::string> text = ReadFileBounded(path);
  if (!text) return std::nullopt;
  return std::move(*text);
}

std::vector<std::string> List(const std::string& path) {
  std::vector<std::string> names;
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  return names;
}

class RealSystem final : public SystemView {
 public:
  std::optional<std::string> ReadFile(const std::string& path) const override { return ReadWhole(path); }
  bool Exists(const std::string& path) const override {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
  }
  std::vector<std::string> ListDir(const std::string& path) const override { return List(path); }
  std::optional<std::string> Env(const std::string& name) const override {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  }
  std::optional<uint64_t> MemlockLimitBytes() const override {
    rlimit rl{};
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return std::nullopt;
    return static_cast<uint64_t>(rl.rlim_cur);
  }
  std::optional<uint64_t> FilesystemBytes(const std::string& path) const override {
    struct statvfs st{};
    if (statvfs(path.c_str(), &st) != 0) return std::nullopt;
    return static_cast<uint64_t>(st.f_blocks) * st.f_frsize;
  }
  Result<int> LibraryVersion(const std::string& library, LibraryKind kind) const override {
    if (kind == LibraryKind::kCudaDriver && library == "libcuda.so.1") {
      // The process's one driver: the same library and error as the GPU list and the guard.
      Result<mr::CudaDriver*> driver = mr::SharedCudaDriver();
      if (!driver) return MakeError(driver.error());
      int version = 0;
      if (mr::CuResult r = (*driver)->DriverGetVersion(&version); r != mr::kCudaSuccess) {
        return MakeError("cuDriverGetVersion failed with " + (*driver)->ErrorName(r));
      }
      return version;
    }
    // RTLD_LOCAL and never closed: these libraries do not support being unloaded.
    void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = dlerror();
      return MakeError(e ? e : "cannot load " + library);
    }
    if (kind == LibraryKind::kCudnn) {
      auto fn = reinterpret_cast<size_t (*)()>(dlsym(lib, "cudnnGetVersion"));
      if (fn == nullptr) return MakeError(library + " has no cudnnGetVersion");
      return static_cast<int>(fn());
    }
    const char* symbol = kind == LibraryKind::kCudaDriver ? "cuDriverGetVersion" : "cudaRuntimeGetVersion";
    auto fn = reinterpret_cast<int (*)(int*)>(dlsym(lib, symbol));
    if (fn == nullptr) return MakeError(library + " has no " + symbol);
    int version = 0;
    if (int r = fn(&version); r != 0) return MakeError(std::string(symbol) + " failed with error " + std::to_string(r));
    return version;
  }
};

class FakeSystem final : public SystemView {
 public:
  explicit FakeSystem(std::string root) : root_(std::move(root)) {}

  Status Load() {
    struct stat st;
    if (stat((root_ + "/fake.json").c_str(), &st) != 0) return Status::Ok();  // no overrides
    Result<std::string> text = ReadFileBounded(root_ + "/fake.json");
    if (!text) return MakeError(text.error());
    Result<nlohmann::json> parsed = ParseJsonBounded(*text, 1 << 16);
    if (!parsed) return MakeError(root_ + "/fake.json: " + parsed.error());
    nlohmann::json j = std::move(*parsed);
    if (!j.is_object()) return MakeError(root_ + "/fake.json is not a JSON object");
    try {
      if (j.contains("env")) {
        for (auto& [k, v] : j["env"].items()) env_[k] = v.get<std::string>();
      }
      if (j.contains("memlock_bytes") && !j["memlock_bytes"].is_null()) {
        memlock_ = j["memlock_bytes"].get<uint64_t>();
      }
      if (j.contains("filesystem_bytes")) {
        for (auto& [k, v] : j["filesystem_bytes"].items()) fs_[k] = v.get<uint64_t>();
      }
      if (j.contains("library_versions")) {
        for (auto& [k, v] : j["library_versions"].items()) libs_[k] = v.get<int>();
      }
    } catch (const std::exception& e) {
      return MakeError(root_ + "/fake.json: " + e.what());
    }
    return Status::Ok();
  }

  std::optional<std::string> ReadFile(const std::string& path) const override { return ReadWhole(root_ + path); }
  bool Exists(const std::string& path) const override {
    struct stat st;
    return stat((root_ + path).c_str(), &st) == 0;
  }
  std::vector<std::string> ListDir(const std::string& path) const override { return List(root_ + path); }
  std::optional<std::string> Env(const std::string& name) const override {
    auto it = env_.find(name);
    if (it == env_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<uint64_t> MemlockLimitBytes() const override { return memlock_; }
  std::optional<uint64_t> FilesystemBytes(const std::string& path) const override {
    auto it = fs_.find(path);
    if (it == fs_.end()) return std::nullopt;
    return it->second;
  }
  // A library "loads" when its path exists under the root (or, for a bare
  // soname, when fake.json lists it); the version is fake.json's.
  Result<int> LibraryVersion(const std::string& library, LibraryKind kind) const override {
    auto it = libs_.find(library);
    if (it == libs_.end()) return MakeError(library + ": cannot open shared object file: No such file or directory");
    return it->second;
  }

 private:
  std::string root_;
  std::map<std::string, std::string> env_;
  std::optional<uint64_t> memlock_;
  std::map<std::string, uint64_t> fs_;
  std::map<std::string, int> libs_;
};

}  // namespace

std::unique_ptr<SystemView> MakeRealSystem() { return std::make_unique<RealSystem>(); }

Result<std::unique_ptr<SystemView>> MakeFakeSystem(const std::string& root) {
  auto fake = std::make_unique<FakeSystem>(root);
  if (Status s = fake->Load(); !s) return MakeError(s.error());
  return std::unique_ptr<SystemView>(std::move(fake));
}

}  // namespace oomguard::doctor

#include "oomguard/doctor/sources.h"

namespace oomguard::doctor {

bool OpenSources(Sources* out, std::string* error) {
  const char* fake_gpus = std::getenv("OOMGUARD_FAKE_GPUS");
  const char* fake_root = std::getenv("OOMGUARD_FAKE_ROOT");
  out->fake = (fake_gpus && *fake_gpus) || (fake_root && *fake_root);
  out->gpus = (fake_gpus && *fake_gpus) ? MakeFakeGpus(fake_gpus) : MakeRealGpus();
  if (fake_root && *fake_root) {
    Result<std::unique_ptr<SystemView>> s = MakeFakeSystem(fake_root);
    if (!s) {
      *error = s.error();
      return false;
    }
    out->system = std::move(s.value());
  } else {
    out->system = MakeRealSystem();
  }
  return true;
}

}  // namespace oomguard::doctor
