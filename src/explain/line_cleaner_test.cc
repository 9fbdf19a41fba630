#include "line_cleaner.h"

#include <gtest/gtest.h>

namespace oomguard::explain {
namespace {

TEST(StripAnsi, RemovesColourCodes) {
  EXPECT_EQ(StripAnsi("\x1b[31mRuntimeError\x1b[0m: CUDA error"), "RuntimeError: CUDA error");
  EXPECT_EQ(StripAnsi("\x1b]0;title\aafter"), "after");
  EXPECT_EQ(StripAnsi("no codes"), "no codes");
  EXPECT_EQ(StripAnsi("dangling \x1b"), "dangling ");
}

TEST(CleanLine, DropsTimestampsAndRankPrefixes) {
  EXPECT_EQ(CleanLine("2017-03-28 23:38:19.485396: E tensorflow/x.cc:924] failed"), "E tensorflow/x.cc:924] failed");
  EXPECT_EQ(CleanLine("[rank3]: torch.OutOfMemoryError: CUDA out of memory."),
            "torch.OutOfMemoryError: CUDA out of memory.");
  EXPECT_EQ(CleanLine("[default0]:RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(CleanLine("[1,2]<stderr>:MemoryError"), "MemoryError");
  EXPECT_EQ(CleanLine("(RayWorker pid=1234) Killed"), "Killed");
  EXPECT_EQ(CleanLine("I0328 23:38:19.485396 12345 x.cc:1] msg"), "x.cc:1] msg");
  EXPECT_EQ(CleanLine("[2024-01-01 10:00:00,123] ERROR boom"), "ERROR boom");
}

TEST(CleanLine, MakesValidUtf8WithoutControlBytes) {
  EXPECT_EQ(CleanLine("a\tb\x01\x7f" "c"), "a bc");
  EXPECT_EQ(CleanLine("bad \xff\xfe end"), "bad ?? end");
  EXPECT_EQ(CleanLine("\xe6\x98\xbe\xe5\xad\x98 ok"), "\xe6\x98\xbe\xe5\xad\x98 ok");  // Chinese kept
  EXPECT_EQ(CleanLine("truncated \xe6\x98"), "truncated ??");
  // Sequences a lax decoder takes but JSON writers reject: overlong, surrogate, above U+10FFFF.
  EXPECT_EQ(CleanLine("a\xe0\x80\x80" "b"), "a???b");
  EXPECT_EQ(CleanLine("a\xed\xa0\x80" "b"), "a???b");
  EXPECT_EQ(CleanLine("a\xf4\x90\x80\x80" "b"), "a????b");
  EXPECT_EQ(CleanLine("a\xf7\xbf\xbf\xbf" "b"), "a????b");
  EXPECT_EQ(CleanLine("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");  // an emoji is fine
}

TEST(CleanLine, CutsOnACharacterBoundary) {
  std::string line = std::string(9, 'a') + "\xe6\x98\xbe" + "tail";
  EXPECT_EQ(CleanLine(line, 10), std::string(9, 'a') + "...");
  EXPECT_EQ(CleanLine(std::string(500, 'x')).size(), 403u);
}

TEST(RankOf, ReadsTheCommonPrefixes) {
  EXPECT_EQ(RankOf("[rank12]: boom"), 12);
  EXPECT_EQ(RankOf("[default3]:boom"), 3);
  EXPECT_EQ(RankOf("[1,7]<stderr>:boom"), 7);
  EXPECT_FALSE(RankOf("[rank]: boom"));
  EXPECT_FALSE(RankOf("rank 3 boom"));
}

}  // namespace
}  // namespace oomguard::explain
