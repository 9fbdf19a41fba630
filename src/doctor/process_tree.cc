#include "oomguard/doctor/process_tree.h"

#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "oomguard/bounded_read.h"

namespace oomguard::doctor {

ProcessMemory ParseProcStatus(const std::string& text) {
  ProcessMemory m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long kb = 0;
    auto field = [&](const char* name, uint64_t* out) {
      size_t n = std::strlen(name);
      if (line.compare(0, n, name) == 0 && std::sscanf(line.c_str() + n, "%llu", &kb) == 1) *out = kb * 1024ull;
    };
    field("VmRSS:", &m.rss);
    field("VmSwap:", &m.swap);
    field("VmLck:", &m.locked);
    field("VmPin:", &m.pinned);
  }
  return m;
}

std::optional<uint64_t> ParseHostAvailable(const std::string& meminfo) {
  std::optional<uint64_t> available;
  uint64_t swap_free = 0;
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long kb = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %llu", &kb) == 1) available = kb * 1024ull;
    if (std::sscanf(line.c_str(), "SwapFree: %llu", &kb) == 1) swap_free = kb * 1024ull;
  }
  if (!available) return std::nullopt;
  return *available + swap_free;
}

std::optional<int> ParseStatParent(const std::string& stat) {
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  char state = 0;
  int ppid = 0;
  if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2) return std::nullopt;
  return ppid;
}

TreeMemory SampleTree(ProcessTable& table, int root, bool count_root) {
  TreeMemory tree;
  std::multimap<int, int> children;
  for (const ProcessParent& p : table.ListProcesses()) children.emplace(p.ppid, p.pid);
  std::vector<int> queue = {root};
  for (size_t i = 0; i < queue.size() && i < 100000; ++i) {
    int pid = queue[i];
    std::optional<ProcessMemory> m = (i == 0 && !count_root) ? std::nullopt : table.Memory(pid);
    if (m) {
      tree.pids.push_back(pid);
      tree.total.rss += m->rss;
      tree.total.swap += m->swap;
      tree.total.locked += m->locked;
      tree.total.pinned += m->pinned;
    }
    auto [b, e] = children.equal_range(pid);
    for (auto it = b; it != e; ++it) {
      if (it->second != pid) queue.push_back(it->second);
    }
  }
  return tree;
}

namespace {

std::optional<std::string> Slurp(const std::string& path) {
  Result<std::string> text = ReadFileBounded(path);
  if (!text) return std::nullopt;
  return std::move(*text);
}

class RealProcessTable final : public ProcessTable {
 public:
  std::vector<ProcessParent> ListProcesses() override {
    std::vector<ProcessParent> out;
    DIR* d = opendir("/proc");
    if (d == nullptr) return out;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
      int pid = std::atoi(e->d_name);
      std::optional<std::string> stat = Slurp(std::string("/proc/") + e->d_name + "/stat");
      if (!stat) continue;
      if (std::optional<int> ppid = ParseStatParent(*stat)) out.push_back({pid, *ppid});
    }
    closedir(d);
    return out;
  }
  std::optional<ProcessMemory> Memory(int pid) override {
    std::optional<std::string> status = Slurp("/proc/" + std::to_string(pid) + "/status");
    // A zombie or a kernel thread has no VmRSS line: no memory to count.
    if (!status || status->find("VmRSS:") == std::string::npos) return std::nullopt;
    return ParseProcStatus(*status);
  }
  std::optional<uint64_t> HostAvailableBytes() override {
    std::optional<std::string> meminfo = Slurp("/proc/meminfo");
    if (!meminfo) return std::nullopt;
    return ParseHostAvailable(*meminfo);
  }
};

}  // namespace

std::unique_ptr<ProcessTable> MakeRealProcessTable() { return std::make_unique<RealProcessTable>(); }

}  // namespace oomguard::doctor
