#include "feed_progress.h"

#include <gtest/gtest.h>

#include <cmath>

namespace oomguard::cli {
namespace {

TEST(FeedProgress, EtaReadsLikeAClock) {
  EXPECT_EQ(FormatEta(0), "0 s");
  EXPECT_EQ(FormatEta(42.4), "42 s");
  EXPECT_EQ(FormatEta(65), "1:05");
  EXPECT_EQ(FormatEta(3723), "1:02:03");
  EXPECT_EQ(FormatEta(-1), "--");
  EXPECT_EQ(FormatEta(INFINITY), "--");
  EXPECT_EQ(FormatEta(NAN), "--");
}

TEST(FeedProgress, StatusHasEpochEtaSpeedAndBytesInFlight) {
  FeedProgress p;
  p.done = 1000;  // of 3000 in 10 s: 100 a second, 2000 left -> 20 s
  p.total = 3000;
  p.epoch = 1;
  p.epochs = 3;
  p.seconds = 10;
  p.images = 990;
  p.file_bytes_read = 50'000'000;
  p.in_flight_bytes = 384ull << 20;
  p.budget_bytes = 512ull << 20;
  EXPECT_EQ(FeedStatus(p), "epoch 1 of 3 · ETA 20 s · 99 img/s, 5.0 MB/s · in flight 384.00 MiB of 512.00 MiB (75 %)");
}

TEST(FeedProgress, NoEtaBeforeTheFirstImageAndZeroAtTheEnd) {
  FeedProgress p;
  p.total = 100;
  p.budget_bytes = 1 << 20;
  EXPECT_NE(FeedStatus(p).find("ETA --"), std::string::npos);
  p.done = 100;
  p.seconds = 3;
  EXPECT_NE(FeedStatus(p).find("ETA 0 s"), std::string::npos);
  p.total = 0;  // unknown total: no guess
  p.done = 5;
  EXPECT_NE(FeedStatus(p).find("ETA --"), std::string::npos);
}

}  // namespace
}  // namespace oomguard::cli
