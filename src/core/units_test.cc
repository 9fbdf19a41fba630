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

namespace oomguard {
namespace {

// Issue 15.6: one parser for every numeric flag.
TEST(ParseNumber, AcceptsPlainDecimals) {
  EXPECT_EQ(*ParseNumber("0.5", 0, 1), 0.5);
  EXPECT_EQ(*ParseNumber(" 12 ", 0, 100), 12.0);
  EXPECT_EQ(*ParseNumber("-2.5", -10, 10), -2.5);
  EXPECT_EQ(*ParseInteger("32", 1, 100), 32);
  EXPECT_EQ(*ParseInteger("-3", -5, 5), -3);
  EXPECT_EQ(*ParseInteger("-9223372036854775808", INT64_MIN, 0), INT64_MIN);
  EXPECT_EQ(*ParseUnsigned("18446744073709551615", 0, UINT64_MAX), UINT64_MAX);
}

TEST(ParseNumber, RefusesHostileTextWithOneReason) {
  EXPECT_EQ(ParseNumber("", 0, 1).error(), "must not be empty");
  EXPECT_EQ(ParseNumber("   ", 0, 1).error(), "must not be empty");
  EXPECT_EQ(ParseNumber("nan", 0, 1).error(), "must be a number like 12 or 0.5, got 'nan'");
  EXPECT_EQ(ParseNumber("inf", 0, 1).error(), "must be a number like 12 or 0.5, got 'inf'");
  EXPECT_EQ(ParseNumber("1e300", 0, 1e9).error(), "must be a number like 12 or 0.5, got '1e300'");
  EXPECT_EQ(ParseInteger("0x10", 0, 100).error(), "must be a whole number like 12, got '0x10'");
  EXPECT_EQ(ParseInteger("1.5", 0, 100).error(), "must be a whole number, got '1.5'");
  EXPECT_EQ(ParseInteger("12abc", 0, 100).error(), "must be a whole number like 12, got '12abc'");
  EXPECT_EQ(ParseInteger("--5", -9, 9).error(), "must be a whole number like 12, got '--5'");
  EXPECT_EQ(ParseNumber("5.", 0, 9).error(), "must be a number like 12 or 0.5, got '5.'");
}

TEST(ParseNumber, NamesTheBoundCompactly) {
  EXPECT_EQ(ParseInteger("4097", 1, 4096).error(), "must be at most 4096, got 4097");
  EXPECT_EQ(ParseInteger("0", 1, 4096).error(), "must be at least 1, got 0");
  EXPECT_EQ(ParseInteger("-1", 1, 4096).error(), "must be at least 1, got -1");
  EXPECT_EQ(ParseInteger("99999999999999999999999", 1, 4096).error(),
            "must be at most 4096, got 99999999999999999999999");
  EXPECT_EQ(ParseInteger("-99999999999999999999999", 1, 4096).error(),
            "must be at least 1, got -99999999999999999999999");
  EXPECT_EQ(ParseUnsigned("-1", 0, 10).error(), "must be at least 0, got -1");
  EXPECT_EQ(ParseUnsigned("18446744073709551616", 0, UINT64_MAX).error(),
            "must be at most 18446744073709551615, got 18446744073709551616");
  EXPECT_EQ(ParseNumber("2", 0, 1.7976931348623157e308).value(), 2.0);
  EXPECT_EQ(ParseNumber("5", 0, 1).error(), "must be at most 1, got 5");
  EXPECT_EQ(ParseNumber("0.001", 0.01, 1).error(), "must be at least 0.01, got 0.001");
  std::string huge(400, '9');
  std::string err = ParseNumber(huge, 0, 1.7976931348623157e308).error();
  EXPECT_EQ(err, "must be at most 1.797693135e+308, got " + std::string(40, '9') + "...");
  EXPECT_EQ(FormatNumber(1e300), "1e+300");
  EXPECT_EQ(FormatNumber(1.0), "1");
}

TEST(ParseSeconds, RefusesDurationsTooLongToWaitFor) {
  EXPECT_EQ(ParseSeconds("99999999999999999999").error(),
            "duration too long: '99999999999999999999' (at most 2592000 s)");
  EXPECT_EQ(*ParseSeconds("2592000"), 2592000.0);
}

TEST(ParseByteList, HoldsAtMostOneEntryPerPossibleGpu) {
  std::string list = "1GiB";
  for (size_t i = 1; i < kMaxListEntries; ++i) list += ",1GiB";
  EXPECT_EQ(ParseByteList(list)->size(), kMaxListEntries);
  EXPECT_EQ(ParseByteList(list + ",1GiB").error(), "more than 4096 entries in the list");
  EXPECT_EQ(ParseByteList("1GiB,,2GiB").error(), "empty byte count");
}

}  // namespace
}  // namespace oomguard
