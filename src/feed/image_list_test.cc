#include "oomguard/feed/image_list.h"

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace
}  // namespace oomguard::feed
