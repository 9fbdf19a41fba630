#include "oomguard/bounded_read.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace oomguard {
namespace {

std::string TempPath(const std::string& name) {
  return "/tmp/oomguard_bounded_read_" + std::to_string(getpid()) + "_" + name;
}

TEST(ReadFileBounded, ReadsARegularFileAndProc) {
  std::string path = TempPath("small");
  { std::ofstream(path) << "hello\nworld\n"; }
  EXPECT_EQ(*ReadFileBounded(path), "hello\nworld\n");
  std::remove(path.c_str());
  Result<std::string> meminfo = ReadFileBounded("/proc/meminfo");  // size 0 in stat, read to the end
  ASSERT_TRUE(meminfo.ok()) << meminfo.error();
  EXPECT_NE(meminfo->find("MemTotal:"), std::string::npos);
}

// Issue 15.10: /dev/zero, a FIFO without a writer and a huge file end at once with a reason.
TEST(ReadFileBounded, RefusesSpecialFilesAndStopsAtTheBound) {
  EXPECT_EQ(ReadFileBounded("/dev/zero").error(), "/dev/zero: not a regular file");
  EXPECT_EQ(ReadFileBounded("/tmp").error(), "/tmp: not a regular file");
  std::string fifo = TempPath("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ReadFileBounded(fifo).error(), fifo + ": not a regular file");
  std::remove(fifo.c_str());
  std::string big = TempPath("big");
  { std::ofstream(big) << std::string(5000, 'x'); }
  EXPECT_EQ(ReadFileBounded(big, 4096).error(), big + ": larger than 4.00 KiB");
  EXPECT_EQ(ReadFileBounded(big, 5000)->size(), 5000u);
  std::remove(big.c_str());
  EXPECT_EQ(ReadFileBounded("/no/such/file").error(), "/no/such/file: No such file or directory");
}

}  // namespace
}  // namespace oomguard
