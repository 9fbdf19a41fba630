#include "oomguard/self_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace oomguard {

uint64_t SelfStatusBytes(std::string_view key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ':') {
      std::istringstream fields(line.substr(key.size() + 1));
      uint64_t kb = 0;
      fields >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

}  // namespace oomguard
