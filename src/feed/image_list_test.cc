#include "oomguard/feed/image_list.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "feed_test_util.h"

namespace oomguard::feed {
namespace {

using testing::FakeFileSystem;

TEST(ListImages, ScansRecursivelyForJpegExtensionsSorted) {
  FakeFileSystem fs;
  fs.Add("/d/b/2.JPG", "x");
  fs.Add("/d/a.jpeg", "x");
  fs.Add("/d/labels.csv", "x");
  fs.Add("/d/b/c/3.jpg", "x");
  fs.Add("/d/readme.jpg.txt", "x");
  fs.Add("/other/4.jpg", "x");
  Result<std::vector<std::string>> r = ListImages(fs, "/d");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, (std::vector<std::string>{"/d/a.jpeg", "/d/b/2.JPG", "/d/b/c/3.jpg"}));
}

TEST(ListImages, DirectoryWithoutJpegsIsAnError) {
  FakeFileSystem fs;
  fs.Add("/d/notes.txt", "x");
  Result<std::vector<std::string>> r = ListImages(fs, "/d");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "/d holds no JPEG files (*.jpg, *.jpeg)");
}

TEST(ListImages, MissingPathIsAnError) {
  FakeFileSystem fs;
  Result<std::vector<std::string>> r = ListImages(fs, "/nope");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "/nope: no such directory or list file");
}

TEST(ListImages, ListFileResolvesRelativePathsAndSkipsComments) {
  FakeFileSystem fs;
  fs.Add("/data/train.txt", "# training set\nimgs/1.jpg\n\n  /abs/2.png  \r\nimgs/3.jpg");
  Result<std::vector<std::string>> r = ListImages(fs, "/data/train.txt");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, (std::vector<std::string>{"/data/imgs/1.jpg", "/abs/2.png", "/data/imgs/3.jpg"}));
}

TEST(ListImages, EmptyListFileIsAnError) {
  FakeFileSystem fs;
  fs.Add("/data/train.txt", "# nothing\n\n");
  Result<std::vector<std::string>> r = ListImages(fs, "/data/train.txt");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "list file /data/train.txt names no images");
}

TEST(ListImages, APathNamedTwiceIsListedOnce) {
  FakeFileSystem fs;
  fs.Add("/data/train.txt", "imgs/1.jpg\nimgs/2.jpg\n./imgs/1.jpg\nimgs/x/../2.jpg\n/data/imgs/1.jpg\n");
  uint64_t duplicates = 99;
  Result<std::vector<std::string>> r = ListImages(fs, "/data/train.txt", &duplicates);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, (std::vector<std::string>{"/data/imgs/1.jpg", "/data/imgs/2.jpg"}));
  EXPECT_EQ(duplicates, 3u);
}

TEST(ListImages, AJpegFileIsADataSetOfOneNotAList) {
  FakeFileSystem fs;
  std::string jpeg = testing::MakeJpeg(8, 8, 1);
  fs.Add("/data/photo.jpg", jpeg);
  fs.Add("/data/photo_without_extension", jpeg);
  for (const char* path : {"/data/photo.jpg", "/data/photo_without_extension"}) {
    Result<std::vector<std::string>> r = ListImages(fs, path);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(*r, (std::vector<std::string>{path}));
  }
}

// ListImages' error for `path`, or "" when it succeeds.
std::string ListError(const FakeFileSystem& fs, const std::string& path) {
  Result<std::vector<std::string>> r = ListImages(fs, path);
  return r ? "" : r.error();
}

TEST(ListImages, BinaryDataIsNotAListFile) {
  FakeFileSystem fs;
  const char bytes[] = "GIF89a\0\0\x01junk\n";
  fs.Add("/data/model.bin", std::string(bytes, sizeof bytes - 1));
  EXPECT_EQ(ListError(fs, "/data/model.bin"),
            "/data/model.bin is neither a folder, a JPEG image nor a list file (it holds binary data)");
}

// A huge file is refused before it is read into memory as text.
TEST(ListImages, AHugeFileIsNotReadAsAList) {
  FakeFileSystem fs;
  fs.Add("/data/huge.txt", "a.jpg\n");
  fs.LieAboutSize("/data/huge.txt", 1ull << 40);
  EXPECT_EQ(ListError(fs, "/data/huge.txt"), "/data/huge.txt: file shrank while reading (6 of 4096 bytes)");
  fs.Add("/data/huge.txt", std::string(8192, 'x'));
  EXPECT_EQ(ListError(fs, "/data/huge.txt"),
            "/data/huge.txt is neither a folder, a JPEG image nor a list file (1.00 TiB, more than a list file's limit "
            "of 256.00 MiB)");
}

TEST(EpochOrder, IsAPermutationThatChangesPerEpochAndRepeatsPerSeed) {
  std::vector<uint64_t> e0 = EpochOrder(100, 7, 0, 0, 1);
  std::vector<uint64_t> e1 = EpochOrder(100, 7, 1, 0, 1);
  std::vector<uint64_t> sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t i = 0; i < 100; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_NE(e0, e1);
  EXPECT_EQ(e0, EpochOrder(100, 7, 0, 0, 1));
  EXPECT_NE(e0, EpochOrder(100, 8, 0, 0, 1));
  std::vector<uint64_t> identity(100);
  for (uint64_t i = 0; i < 100; ++i) identity[i] = i;
  EXPECT_NE(e0, identity);
  EXPECT_EQ(EpochOrder(100, 7, 0, 0, 1, /*shuffle=*/false), identity);
}

TEST(EpochOrder, ShardsAreDisjointAndTogetherComplete) {
  for (uint32_t world : {1u, 2u, 3u, 7u}) {
    for (uint64_t epoch : {0u, 1u}) {
      std::multiset<uint64_t> seen;
      size_t smallest = 1000, largest = 0;
      for (uint32_t rank = 0; rank < world; ++rank) {
        std::vector<uint64_t> mine = EpochOrder(103, 42, epoch, rank, world);
        seen.insert(mine.begin(), mine.end());
        smallest = std::min(smallest, mine.size());
        largest = std::max(largest, mine.size());
      }
      ASSERT_EQ(seen.size(), 103u) << "world " << world;
      for (uint64_t i = 0; i < 103; ++i) EXPECT_EQ(seen.count(i), 1u) << i;
      EXPECT_LE(largest - smallest, 1u);  // balanced
    }
  }
}

// The real disk, with symlinks that loop back to an ancestor.
class RealTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/oomguard_list_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& rel) {
    std::filesystem::path p = std::filesystem::path(dir_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << "x";
  }
  void Link(const std::string& target, const std::string& rel) {
    std::filesystem::create_directory_symlink(target, std::filesystem::path(dir_) / rel);
  }
  std::string dir_;
};

TEST_F(RealTree, ABackLinkListsEachFileOnce) {
  Write("a/img.jpg");
  Link("..", "a/up");  // a/up/a/up/a/... is the same folder again
  Result<std::vector<std::string>> r = ListImages(RealFileSystem(), dir_);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, (std::vector<std::string>{dir_ + "/a/img.jpg"}));
}

TEST_F(RealTree, TwoBackLinksEndWithEachFileOnce) {
  Write("a/img.jpg");
  Write("b/other.jpg");
  Link("..", "a/up");
  Link("../a", "b/to_a");
  Link("..", "b/up");
  // Before loop detection this walk branched at every level and did not end;
  // the alarm turns a hang into a failure.
  EXPECT_EXIT(
      {
        alarm(20);
        Result<std::vector<std::string>> r = ListImages(RealFileSystem(), dir_);
        _exit(r && *r == std::vector<std::string>{dir_ + "/a/img.jpg", dir_ + "/b/other.jpg"} ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(RealTree, ALinkToAFolderOutsideIsFollowed) {
  Write("data/real/img.jpg");
  Write("data/list/readme.txt");
  Link(dir_ + "/data/real", "data/list/linked");
  Result<std::vector<std::string>> r = ListImages(RealFileSystem(), dir_ + "/data/list");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, (std::vector<std::string>{dir_ + "/data/list/linked/img.jpg"}));
}

}  // namespace
}  // namespace oomguard::feed
