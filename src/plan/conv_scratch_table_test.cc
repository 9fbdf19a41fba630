#include "conv_scratch_table.h"

#include <gtest/gtest.h>

namespace oomguard::plan {
namespace {

TEST(ConvScratchTable, EmbeddedTableParsesWithTheFittedRule) {
  Result<ConvScratchTable> t = ParseConvScratchTable(EmbeddedConvScratchJson());
  ASSERT_TRUE(t.ok()) << t.error();
  const GemmWeightGradient3d& g = t.value().gemm_weight_gradient_3d;
  // tools/probe_scratch.py --fit: one im2col slice, four weight copies (oneDNN 2.6, one thread).
  EXPECT_EQ(g.col_copies, 1u);
  EXPECT_EQ(g.weight_copies, 4u);
  EXPECT_EQ(g.min_in_channels, 4);
  EXPECT_EQ(g.max_in_channels, 15);
  EXPECT_EQ(EmbeddedConvScratchTable().gemm_weight_gradient_3d.fixed_bytes, g.fixed_bytes);
  // Measured packing buffers: 12 x 27 rows -> 200992 bytes; 10 x 125 rows -> 73984 (the other path).
  EXPECT_NEAR(static_cast<double>(g.PackBytes(12 * 27)), 200992.0, 1.0);
  EXPECT_EQ(g.PackBytes(10 * 125), 73984u);
}

TEST(ConvScratchTable, MalformedTablesAreRefusedWithAReason) {
  EXPECT_FALSE(ParseConvScratchTable("").ok());
  EXPECT_FALSE(ParseConvScratchTable("[1, 2]").ok());
  Result<ConvScratchTable> missing = ParseConvScratchTable(R"({"header": {}})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("gemm_weight_gradient_3d"), std::string::npos);
  const char* rule = R"({"gemm_weight_gradient_3d": {"min_in_channels": 4, "max_in_channels": 15, "col_copies": 1,
      "weight_copies": WC, "fixed_bytes": 0, "pack_min_out_channels": 16, "pack_row_round": RR,
      "pack_row_bytes": 512, "pack_fixed_bytes": 100, "pack_max_rows": 1000, "pack_beyond_bytes": 7,
      "pack_worst_abs_error": 0}})";
  auto with = [&](const char* wc, const char* rr) {
    std::string s = rule;
    s.replace(s.find("WC"), 2, wc);
    s.replace(s.find("RR"), 2, rr);
    return ParseConvScratchTable(s);
  };
  EXPECT_TRUE(with("4", "48").ok());
  EXPECT_FALSE(with("-4", "48").ok());
  EXPECT_FALSE(with("4.5", "48").ok());
  Result<ConvScratchTable> zero = with("4", "0");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().find("pack_row_round"), std::string::npos);
  // The packing rule: rows rounded up to panels, the constant beyond the largest panel count.
  const GemmWeightGradient3d& g = with("4", "48").value().gemm_weight_gradient_3d;
  EXPECT_EQ(g.PackBytes(1), 48u * 512 + 100);
  EXPECT_EQ(g.PackBytes(49), 96u * 512 + 100);
  EXPECT_EQ(g.PackBytes(1001), 7u);
}

}  // namespace
}  // namespace oomguard::plan
