#include "oomguard/machine_facts.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cctype>
#include <fstream>
#include <sstream>

namespace oomguard {

namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class LocalMachineFacts : public MachineFactsSource {
 public:
  LocalMachineFacts(std::string proc_root, std::string shm_path)
      : proc_root_(std::move(proc_root)), shm_path_(std::move(shm_path)) {}

  MachineFacts Read() const override {
    MachineFacts facts;
    ParseMeminfo(ReadText(proc_root_ + "/meminfo"), &facts);
    struct statvfs vfs;
    if (statvfs(shm_path_.c_str(), &vfs) == 0) {
      facts.shm_total_bytes = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
      facts.shm_free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    }
    struct rlimit limit;
    if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      facts.memlock_limit_bytes = static_cast<uint64_t>(limit.rlim_cur);
    }
    std::string version = ReadText(proc_root_ + "/version");
    facts.wsl = version.find("microsoft") != std::string::npos || version.find("Microsoft") != std::string::npos;
    std::string driver = ReadText(proc_root_ + "/driver/nvidia/version");
    if (!driver.empty()) {
      std::string found = NvidiaDriverVersion(driver);
      facts.nvidia_driver = found.empty() ? "unknown" : found;
      std::string gpus_dir = proc_root_ + "/driver/nvidia/gpus";
      if (DIR* dir = opendir(gpus_dir.c_str())) {
        while (dirent* entry = readdir(dir)) {
          if (entry->d_name[0] == '.') continue;
          std::istringstream info(ReadText(gpus_dir + "/" + entry->d_name + "/information"));
          std::string line;
          while (std::getline(info, line)) {
            if (line.rfind("Model:", 0) == 0) {
              size_t start = line.find_first_not_of(" \t", 6);
              facts.gpus.push_back(start == std::string::npos ? "" : line.substr(start));
            }
          }
        }
        closedir(dir);
      }
    }
    return facts;
  }

 private:
  std::string proc_root_;
  std::string shm_path_;
};

}  // namespace

void ParseMeminfo(const std::string& text, MachineFacts* facts) {
  std::istringstream in(text);
  std::string key, unit;
  uint64_t value = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    if (!(fields >> key >> value)) continue;
    fields >> unit;
    uint64_t bytes = unit == "kB" ? value * 1024 : value;
    if (key == "MemTotal:") facts->ram_total_bytes = bytes;
    if (key == "MemAvailable:") facts->ram_available_bytes = bytes;
    if (key == "SwapTotal:") facts->swap_total_bytes = bytes;
    if (key == "SwapFree:") facts->swap_free_bytes = bytes;
  }
}

std::string NvidiaDriverVersion(const std::string& proc_version_text) {
  std::istringstream words(proc_version_text.substr(0, proc_version_text.find('\n')));
  std::string word;
  while (words >> word) {
    if (std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos) return word;
  }
  return "";
}

std::unique_ptr<MachineFactsSource> NewLocalMachineFacts(std::string proc_root, std::string shm_path) {
  return std::make_unique<LocalMachineFacts>(std::move(proc_root), std::move(shm_path));
}

}  // namespace oomguard
