// The `oomguard feed` command, run as a real process on a real folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "feed_test_util.h"
#include "run_cli_for_test.h"

namespace oomguard::feed {
namespace {

namespace fs = std::filesystem;
using oomguard::testing::RunCli;
using testing::MakeJpeg;

class FeedCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/oomguard_feed_cli_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& bytes) {
    fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
  }
  void WriteGood(int n) {
    for (int i = 0; i < n; ++i) Write("sub" + std::to_string(i % 3) + "/img" + std::to_string(i) + ".jpg", MakeJpeg(32, 24, i));
  }
  std::string dir_;
};

TEST_F(FeedCli, JsonReportsImagesSkipsAndTheBudget) {
  WriteGood(10);
  Write("bad/notjpeg.jpg", "hello");
  Write("bad/empty.jpg", "");
  Write("labels.csv", "ignored: not a .jpg");
  auto r = RunCli(OOMGUARD_EXE, {"feed", dir_, "--budget", "64KiB", "--batch", "3", "--epochs", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);  // stdout is JSON only
  EXPECT_EQ(j["images"], 20);
  EXPECT_EQ(j["skipped"], 4);
  EXPECT_EQ(j["budget_bytes"], 65536);
  EXPECT_TRUE(j["peak_budget_bytes"].is_number_integer());
  EXPECT_GT(j["peak_budget_bytes"].get<uint64_t>(), 0u);
  EXPECT_LE(j["peak_budget_bytes"].get<uint64_t>(), 65536u);
  EXPECT_TRUE(j["peak_rss_bytes"].is_number_integer());
  EXPECT_GT(j["peak_rss_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(j["images_per_second"].get<double>(), 0.0);
  EXPECT_GT(j["seconds"].get<double>(), 0.0);
  EXPECT_EQ(j["batches"], 8);  // ceil(10 / 3) per epoch
  EXPECT_EQ(j["decoded_bytes"], 20 * 32 * 24 * 3);
  EXPECT_EQ(j["skip_reasons"], nlohmann::json({{"empty_file", 2}, {"not_jpeg", 2}}));
  EXPECT_EQ(j["skipped_files"].size(), 4u);
  // Every skip is logged on stderr, one line each.
  EXPECT_NE(r.err.find("oomguard feed: skipped " + dir_ + "/bad/notjpeg.jpg: not a JPEG (no start-of-image marker)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("oomguard feed: skipped " + dir_ + "/bad/empty.jpg: empty file\n"), std::string::npos);
}

TEST_F(FeedCli, ShardsSplitTheImages) {
  WriteGood(11);
  uint64_t total = 0;
  for (const char* rank : {"0", "1", "2"}) {
    auto r = RunCli(OOMGUARD_EXE, {"feed", dir_, "--budget", "1MiB", "--rank", rank, "--world-size", "3", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    total += nlohmann::json::parse(r.out)["images"].get<uint64_t>();
  }
  EXPECT_EQ(total, 11u);
}

TEST_F(FeedCli, HumanSummary) {
  WriteGood(4);
  auto r = RunCli(OOMGUARD_EXE, {"feed", dir_, "--budget", "1MiB", "--batch", "2", "--scale", "1/2", "--size", "8x8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("fed 4 images in 2 batches (1 epoch) in ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("budget 1.00 MiB, peak in use "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peak RSS "), std::string::npos);
  EXPECT_EQ(r.err, "");
}

TEST_F(FeedCli, OnErrorFailStopsAtTheFirstBadFile) {
  WriteGood(3);
  Write("zz.jpg", "GIF89a....");
  auto r = RunCli(OOMGUARD_EXE, {"feed", dir_, "--budget", "1MiB", "--on-error", "fail", "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  // One line: the failing file is not also logged as skipped.
  EXPECT_EQ(r.err, "oomguard feed: " + dir_ + "/zz.jpg: not a JPEG (no start-of-image marker)\n");
}

TEST_F(FeedCli, OnErrorFailIsOneLineWhateverFailsAfterIt) {
  WriteGood(12);
  // Bad headers (found by the reader) and bad data (found by the decoders).
  const std::string truncated = MakeJpeg(64, 48, 5).substr(0, 400);
  for (int i = 0; i < 8; ++i) {
    Write("bad/h" + std::to_string(i) + ".jpg", "GIF89a....");
    Write("bad/d" + std::to_string(i) + ".jpg", truncated);
  }
  auto r = RunCli(OOMGUARD_EXE, {"feed", dir_, "--budget", "1MiB", "--batch", "4", "--workers", "4",
                                 "--on-error", "fail"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("oomguard feed: " + dir_ + "/bad/", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("skipped"), std::string::npos) << r.err;
}

TEST_F(FeedCli, AJpegFileIsFedAsOneImage) {
  Write("one.jpg", MakeJpeg(32, 24, 1));
  auto r = RunCli(OOMGUARD_EXE, {"feed", dir_ + "/one.jpg", "--budget", "1MiB", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["images"], 1);
  EXPECT_EQ(j["skipped"], 0);
  EXPECT_EQ(r.err, "");
}

TEST_F(FeedCli, AListNamingAPathTwiceFeedsItOnceAndSaysSo) {
  WriteGood(2);
  Write("train.txt", "sub0/img0.jpg\nsub1/img1.jpg\n./sub0/img0.jpg\n");
  auto r = RunCli(OOMGUARD_EXE, {"feed", dir_ + "/train.txt", "--budget", "1MiB", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["images"], 2);
  EXPECT_EQ(j["files_listed"], 2);
  EXPECT_EQ(r.err, "oomguard feed: warning: " + dir_ + "/train.txt names 1 path more than once; each is fed once\n");
}

TEST_F(FeedCli, NothingReadableAnswersNo) {
  Write("a.jpg", "x");
  auto r = RunCli(OOMGUARD_EXE, {"feed", dir_, "--budget", "1MiB"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("oomguard feed: no image could be read (1 skipped)\n"), std::string::npos) << r.err;
}

TEST_F(FeedCli, BadInputIsOneLineAndExit2) {
  WriteGood(2);
  Write("sub0/img0.jpg.gz", std::string("\x1f\x8b\x08\0\0\0\0\0", 8));
  fs::create_directories(dir_ + "/empty");
  Write("empty/notes.txt", "x");
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  std::vector<Case> cases = {
      {{"feed", dir_ + "/nope", "--budget", "1MiB"},
       "oomguard feed: " + dir_ + "/nope: no such directory or list file\n"},
      {{"feed", dir_ + "/empty", "--budget", "1MiB"},
       "oomguard feed: " + dir_ + "/empty holds no JPEG files (*.jpg, *.jpeg)\n"},
      {{"feed", dir_, "--budget", "0"}, "oomguard feed: --budget must be more than 0 bytes\n"},
      {{"feed", dir_, "--budget", "1MiB", "--size", "224"},
       "oomguard feed: bad size '224': use WxH with 1..65535 pixels each, e.g. 224x224\n"},
      {{"feed", dir_, "--budget", "1MiB", "--scale", "1/3"},
       "oomguard feed: bad scale '1/3': use 1, 1/2, 1/4 or 1/8\n"},
      {{"feed", dir_, "--budget", "1MiB", "--rank", "2", "--world-size", "2"},
       "oomguard feed: rank 2 must be less than world size 2\n"},
      {{"feed", dir_, "--budget", "1MiB", "--batch", "0"}, "oomguard feed: the batch size must be at least 1\n"},
      {{"feed", dir_ + "/sub0/img0.jpg.gz", "--budget", "1MiB"},
       "oomguard feed: " + dir_ + "/sub0/img0.jpg.gz is neither a folder, a JPEG image nor a list file (it holds "
       "binary data)\n"},
      {{"feed", dir_, "--budget", "1MiB", "--workers", "100000"},
       "oomguard feed: --workers must be at most 256, got 100000\n"},
      // One 32x24 image (~0.8 KB file + 2.3 KB pixels) fits 3500 bytes; a batch of two does not.
      {{"feed", dir_, "--budget", "3500", "--batch", "2"},
       "oomguard feed: a batch of 2 images does not fit the budget of 3.42 KiB (3500 bytes) (its files and "
       "decoded images need more); raise --budget or lower --batch\n"},
  };
  for (const Case& c : cases) {
    auto r = RunCli(OOMGUARD_EXE, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.err;
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.out, "");
  }
  // Parse errors from the option parser: one line, exit 2.
  for (std::vector<std::string> args : {std::vector<std::string>{"feed", dir_, "--budget", "lots"},
                                        std::vector<std::string>{"feed", dir_},
                                        std::vector<std::string>{"feed", dir_, "--budget", "1MiB", "--on-error", "ignore"}}) {
    auto r = RunCli(OOMGUARD_EXE, args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err.rfind("oomguard feed: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace oomguard::feed
