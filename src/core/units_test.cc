#include "oomguard/units.h"

#include <gtest/gtest.h>

namespace oomguard {
namespace {

TEST(ParseBytes, AcceptsDesignExamples) {
  EXPECT_EQ(*ParseBytes("512MiB"), 512ull << 20);
  EXPECT_EQ(*ParseBytes("1.5GiB"), 3ull << 29);
  EXPECT_EQ(*ParseBytes("24GB"), 24000000000ull);
  EXPECT_EQ(*ParseBytes("4096"), 4096ull);
  EXPECT_EQ(*ParseBytes(" 11 GiB "), 11ull << 30);
  EXPECT_EQ(*ParseBytes("2kb"), 2000ull);
  EXPECT_EQ(*ParseBytes("18446744073709551615"), 18446744073709551615ull);
}

TEST(ParseBytes, RejectsBadInputWithReason) {
  EXPECT_EQ(ParseBytes("").error(), "empty byte count");
  EXPECT_EQ(ParseBytes("-5").error(), "byte count must not be negative: '-5'");
  EXPECT_EQ(ParseBytes("12XB").error(),
            "unknown unit 'XB' in '12XB' (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)");
  EXPECT_FALSE(ParseBytes("abc").ok());
  EXPECT_FALSE(ParseBytes("1.5").ok());
  EXPECT_EQ(ParseBytes("18446744073709551616").error(), "byte count too large: '18446744073709551616'");
  EXPECT_FALSE(ParseBytes("99999999999TiB").ok());
}

TEST(FormatBytes, BinaryUnits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(11ull << 30), "11.00 GiB");
}

TEST(ParseSeconds, FractionsAndUnits) {
  EXPECT_DOUBLE_EQ(*ParseSeconds("0.1"), 0.1);
  EXPECT_DOUBLE_EQ(*ParseSeconds("250ms"), 0.25);
  EXPECT_FALSE(ParseSeconds("0").ok());
  EXPECT_FALSE(ParseSeconds("-1").ok());
  EXPECT_FALSE(ParseSeconds("1h").ok());
}

TEST(ParseByteList, SplitsOnCommas) {
  auto r = ParseByteList("11GiB,11GiB,24GiB");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[2], 24ull << 30);
  EXPECT_FALSE(ParseByteList("11GiB,,24GiB").ok());
  EXPECT_FALSE(ParseByteList("").ok());
}

}  // namespace
}  // namespace oomguard

#include "oomguard/edit_distance.h"

namespace oomguard {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("plan", "plan"), 0u);
  EXPECT_EQ(EditDistance("pland", "plan"), 1u);
  EXPECT_EQ(EditDistance("doctr", "doctor"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}

}  // namespace
}  // namespace oomguard
