#include "oomguard/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "oomguard/units.h"

namespace oomguard {

Result<std::string> ReadFileBounded(const std::string& path, uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO without a writer must not wait for one.
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return MakeError(path + ": " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return MakeError(path + ": not a regular file");
  }
  std::string text;
  char buf[1 << 16];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return MakeError(path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    if (text.size() + static_cast<uint64_t>(n) > max_bytes) {
      close(fd);
      return MakeError(path + ": larger than " + FormatBytes(max_bytes));
    }
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

}  // namespace oomguard
