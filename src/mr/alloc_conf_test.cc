#include "oomguard/mr/alloc_conf.h"

#include <gtest/gtest.h>

namespace oomguard::mr {
namespace {

TEST(ParseAllocConf, ReadsTheDocumentedExample) {
  Result<AllocConf> c = ParseAllocConf("fraction=0.5,growth=on,report=/tmp/oom.json");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_DOUBLE_EQ(*c->fraction, 0.5);
  EXPECT_EQ(c->growth, Growth::kExpandable);
  EXPECT_EQ(c->report_path, "/tmp/oom.json");
  EXPECT_FALSE(c->limit_bytes.has_value());
}

TEST(ParseAllocConf, EmptyGivesDefaults) {
  Result<AllocConf> c = ParseAllocConf("");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->fraction);
  EXPECT_EQ(c->growth, Growth::kExpandable);
  EXPECT_EQ(c->initial_bytes, 2u << 20);
  EXPECT_TRUE(c->report_path.empty());
}

TEST(ParseAllocConf, ReadsBytesAndIgnoresSpacesAroundItems) {
  Result<AllocConf> c = ParseAllocConf(" limit=10GiB , growth=off, initial=64MiB,simulate=1GB ");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(*c->limit_bytes, 10ull << 30);
  EXPECT_EQ(c->growth, Growth::kPreallocate);
  EXPECT_EQ(c->initial_bytes, 64u << 20);
  EXPECT_EQ(*c->simulate_bytes, 1000000000u);
}

TEST(ParseAllocConf, RejectsWithAReasonWordForWord) {
  auto error = [](const char* text) {
    Result<AllocConf> c = ParseAllocConf(text);
    return c.ok() ? std::string("(accepted)") : c.error();
  };
  EXPECT_EQ(error("fraction=0.5,grwoth=on"),
            "OOMGUARD_ALLOC_CONF: unknown key 'grwoth' (known: fraction, limit, growth, initial, report, simulate)");
  EXPECT_EQ(error("fraction=0.5,fraction=0.6"), "OOMGUARD_ALLOC_CONF: 'fraction' is given twice");
  EXPECT_EQ(error("fraction"), "OOMGUARD_ALLOC_CONF: 'fraction' is not key=value");
  EXPECT_EQ(error("fraction="), "OOMGUARD_ALLOC_CONF: 'fraction' has no value");
  EXPECT_EQ(error("fraction=0"), "OOMGUARD_ALLOC_CONF: fraction must be a number in (0, 1], got '0'");
  EXPECT_EQ(error("fraction=1.5"), "OOMGUARD_ALLOC_CONF: fraction must be a number in (0, 1], got '1.5'");
  EXPECT_EQ(error("fraction=0.5x"), "OOMGUARD_ALLOC_CONF: fraction must be a number in (0, 1], got '0.5x'");
  EXPECT_EQ(error("fraction=nan"), "OOMGUARD_ALLOC_CONF: fraction must be a number in (0, 1], got 'nan'");
  EXPECT_EQ(error("growth=yes"), "OOMGUARD_ALLOC_CONF: growth must be on, expandable, regions or off, got 'yes'");
  EXPECT_EQ(ParseAllocConf("growth=regions")->growth, Growth::kOnDemand);
  EXPECT_EQ(ParseAllocConf("growth=expandable")->growth, Growth::kExpandable);
  EXPECT_EQ(error("limit=0"), "OOMGUARD_ALLOC_CONF: limit must be more than 0 bytes");
  EXPECT_EQ(error("fraction=0.5,limit=1GiB"), "OOMGUARD_ALLOC_CONF: give fraction or limit, not both");
  EXPECT_EQ(error("fraction=0.5,"),
            "OOMGUARD_ALLOC_CONF: empty item (two commas in a row, or a trailing comma)");
  EXPECT_EQ(error("growth=on,,report=x"),
            "OOMGUARD_ALLOC_CONF: empty item (two commas in a row, or a trailing comma)");
  EXPECT_EQ(error("limit=lots").rfind("OOMGUARD_ALLOC_CONF: limit: ", 0), 0u);
}

}  // namespace
}  // namespace oomguard::mr
