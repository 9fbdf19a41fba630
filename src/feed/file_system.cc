#include "oomguard/feed/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
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

namespace {

struct DirectoryId {
  dev_t device;
  ino_t inode;
  bool operator<(const DirectoryId& o) const {
    return device != o.device ? device < o.device : inode < o.inode;
  }
};

// Depth-first over `dir`, following symlinks to directories but entering each
// directory (by device and inode) once: a link back to an ancestor or to a
// folder already listed adds nothing, so the walk ends and lists each file
// through the first path that reaches it (entries in name order).
Status ListInto(const std::string& dir, std::set<DirectoryId>* visited, std::vector<std::string>* files,
                bool top) {
  std::error_code ec;
  fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    if (top) return MakeError("cannot list " + dir + ": " + ec.message());
    return Status::Ok();  // an unreadable sub-folder: its files are not listed
  }
  std::vector<std::string> names;
  for (fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return MakeError("cannot list " + dir + ": " + ec.message());
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::string path = (dir == "/" ? "" : dir) + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) continue;  // dangling link, or gone since listed
    if (S_ISREG(st.st_mode)) {
      files->push_back(std::move(path));
    } else if (S_ISDIR(st.st_mode)) {
      if (!visited->insert(DirectoryId{st.st_dev, st.st_ino}).second) continue;
      if (Status s = ListInto(path, visited, files, false); !s) return s;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> RealFileSystem::ListFilesRecursive(const std::string& dir) const {
  std::string root = dir;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  struct stat st;
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return MakeError("cannot list " + dir + ": " + std::strerror(ENOTDIR));
  }
  std::set<DirectoryId> visited{DirectoryId{st.st_dev, st.st_ino}};
  std::vector<std::string> files;
  if (Status s = ListInto(root, &visited, &files, true); !s) return Error{s.error()};
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
