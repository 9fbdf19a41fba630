// The machine a benchmark ran on, for the header of its results file:
// every program under bench/ describes it the same way.
#pragma once

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace oomguard::bench {

// "Linux vm 6.18.44 #1 SMP ... x86_64" (uname(2): sysname, nodename, release, version, machine).
inline std::string UnameText() {
  utsname u{};
  uname(&u);
  return std::string(u.sysname) + " " + u.nodename + " " + u.release + " " + u.version + " " + u.machine;
}

// The first "model name" of /proc/cpuinfo, or "unknown".
inline std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

inline long Nproc() { return sysconf(_SC_NPROCESSORS_ONLN); }

// /proc/loadavg as it reads ("0.88 1.02 1.26 1/80 15126"): how busy the machine was.
inline std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace oomguard::bench
