#include "oomguard/feed/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace oomguard::feed {

namespace fs = std::filesystem;

bool RealFileSystem::IsDirectory(const std::string& path) const {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool RealFileSystem::IsRegularFile(const std::string& path) const {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

Result<std::vector<std::string>> RealFileSystem::ListFilesRecursive(const std::string& dir) const {
  std::vector<std::string> files;
  std::error_code ec;
  auto it = fs::recursive_directory_iterator(
      dir, fs::directory_options::follow_directory_symlink | fs::directory_options::skip_permission_denied,
      ec);
  if (ec) return MakeError("cannot list " + dir + ": " + ec.message());
  for (auto end = fs::recursive_directory_iterator(); it != end; it.increment(ec)) {
    if (ec) return MakeError("cannot list " + dir + ": " + ec.message());
    std::error_code ec2;
    if (it->is_regular_file(ec2)) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<uint64_t> RealFileSystem::FileSize(const std::string& path) const {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return MakeError("cannot stat: " + std::string(std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return MakeError("not a regular file");
  return static_cast<uint64_t>(st.st_size);
}

Status RealFileSystem::ReadFile(const std::string& path, uint8_t* dst, uint64_t size) const {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError("cannot open: " + std::string(std::strerror(errno)));
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, dst + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return MakeError("read failed: " + std::string(std::strerror(err)));
    }
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  if (done < size) {
    return MakeError("file shrank while reading (" + std::to_string(done) + " of " +
                     std::to_string(size) + " bytes)");
  }
  return Status::Ok();
}

Result<std::string> RealFileSystem::ReadText(const std::string& path) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

FileSystem& DefaultFileSystem() {
  static RealFileSystem* fs = new RealFileSystem();
  return *fs;
}

}  // namespace oomguard::feed
