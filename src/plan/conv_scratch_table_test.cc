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
  // Measured packing buffers (tools/probe_scratch.py, rows x cols x depth): 324 x 24 x 100 -> 200992
  // bytes; 270 x 16 x 256 -> 327936 (one deeper block); 270 x 16 x 400 -> 259840 (two blocks);
  // 1250 x 24 x 64 -> 73984 (sgemm does not pack). The last argument: every output position.
  EXPECT_NEAR(static_cast<double>(g.PackBytes(324, 24, 100, 1000)), 200992.0, 64.0);
  EXPECT_NEAR(static_cast<double>(g.PackBytes(270, 16, 256, 4096)), 327936.0, 0.02 * 327936);
  EXPECT_NEAR(static_cast<double>(g.PackBytes(270, 16, 400, 8000)), 259840.0, 0.02 * 259840);
  EXPECT_EQ(g.PackBytes(1250, 24, 64, 512), 73984u);
  // Dev probes of 16-512 input channels through oneDNN's gemm (whole steps exact to 4 bytes): a
  // 3x3x3 kernel from 64 to 64 channels over 14x14 (1728 rows, 196 deep) is not packed; from 48 to
  // 32 over 16x16 (1296 rows) it is, both leading dimensions being multiples of 256.
  EXPECT_EQ(g.PackBytes(64 * 27, 64, 196, 196), 73984u);
  EXPECT_GT(g.PackBytes(48 * 27, 32, 256, 256), 1000000u);
  // From twice the block's depth on, sgemm packs one whole block of 384, not equal blocks (oneDNN's
  // get_k_padd): 120 x 24 x 1024 and 270 x 16 x 800 (probes conv1d_s2_only and conv2d_k3x15_mid of
  // tools/probe_families.py, whole steps exact with it) were 28224 and 142240 bytes low with blocks
  // of 342 and 267.
  EXPECT_EQ(g.PackBytes(120, 24, 1024, 1024), 4u * 384 * (144 + 24) + g.pack_fixed_bytes);
  EXPECT_EQ(g.PackBytes(270, 16, 800, 800), 4u * 384 * (288 + 16) + g.pack_fixed_bytes);
  EXPECT_EQ(g.PackBytes(270, 16, 700, 700), 4u * 350 * (288 + 16) + g.pack_fixed_bytes);
}

// Grouped layers: which per-group channel counts oneDNN 2.6.3's direct kernels take (init_conf), and
// the L2 blocking of the gemm forward's columns.
TEST(ConvScratchTable, GroupedDirectKernelsFollowOneDnnsChannelBlocks) {
  const GroupedDirectKernels& k = EmbeddedConvScratchTable().grouped_direct_kernels;
  ASSERT_TRUE(k.Known());
  EXPECT_EQ(k.DataBlock(32, 64), 16);
  EXPECT_EQ(k.DataBlock(40, 64), 8);   // dev seed 102: jit:avx512_core, 8-blocked
  EXPECT_EQ(k.DataBlock(156, 4), 4);   // dev seed 150's forward: 4-blocked
  EXPECT_EQ(k.DataBlock(6, 48), 0);    // dev seed 79: x64:gemm:jit
  EXPECT_EQ(k.DataBlock(1, 2), 0);     // a channel multiplier (dev seeds 89, 96, 154)
  EXPECT_TRUE(k.WeightGradientDirect(40, 64));   // AVX2's 8
  EXPECT_FALSE(k.WeightGradientDirect(156, 4));  // dev seed 150's weight gradient: gemm
  // Dev seed 74 (8 -> 128, 4 groups, 7x7 over 86 x 86 = 7396 positions): 960 positions unfolded,
  // 376448 bytes of columns in its allocation trace (2 x 49 x 960 floats + 128).
  EXPECT_EQ(k.ForwardColumnPositions(2, 32, 49, 1, 7396), 960u);
  EXPECT_EQ(k.ForwardColumnPositions(6, 48, 9, 1, 576), 576u);  // all of a small map
}

// oneDNN 2.6.3's gemm_threading_driver runs any f32 gemm with m = 1 or n = 1 as gemv (jump_to_gemv),
// before it allocates: the convolution's data gemms then take no sgemm buffer (dev seed 313, a 1 -> 1
// layer onto a 1 x 1 map, planned +859 % with it); any other keeps its 73984 bytes.
TEST(ConvScratchTable, DataGemmsWithADimensionOfOneRunGemvWithoutABuffer) {
  const GemmWeightGradient3d& g = EmbeddedConvScratchTable().gemm_weight_gradient_3d;
  EXPECT_TRUE(SgemmRunsGemv(1, 16));   // one output position
  EXPECT_TRUE(SgemmRunsGemv(64, 1));   // one output channel (forward), one column (input gradient)
  EXPECT_FALSE(SgemmRunsGemv(2, 2));
  EXPECT_EQ(g.DataGemmBufferBytes(1, 16), 0u);
  EXPECT_EQ(g.DataGemmBufferBytes(49, 1), 0u);
  EXPECT_EQ(g.DataGemmBufferBytes(4, 2), 73984u);
  EXPECT_EQ(g.DataGemmBufferBytes(15, 54), g.pack_beyond_bytes);  // dev seed 70's calls hold it
}

TEST(ConvScratchTable, MalformedTablesAreRefusedWithAReason) {
  EXPECT_FALSE(ParseConvScratchTable("").ok());
  EXPECT_FALSE(ParseConvScratchTable("[1, 2]").ok());
  Result<ConvScratchTable> missing = ParseConvScratchTable(R"({"header": {}})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("gemm_weight_gradient_3d"), std::string::npos);
  const char* rule = R"({"gemm_weight_gradient_3d": {"min_in_channels": 4, "max_in_channels": 15, "col_copies": 1,
      "weight_copies": WC, "fixed_bytes": 0, "pack_min_out_channels": 16, "pack_row_round": RR,
      "pack_col_round": 8, "pack_min_depth": 128, "pack_max_depth": 384, "pack_fixed_bytes": 100,
      "pack_beyond_bytes": 7, "pack_worst_abs_error": 0}})";
  auto with = [&](const char* wc, const char* rr) {
    std::string s = rule;
    s.replace(s.find("WC"), 2, wc);
    s.replace(s.find("RR"), 2, rr);
    return ParseConvScratchTable(s);
  };
  EXPECT_FALSE(with("-4", "48").ok());
  EXPECT_FALSE(with("4.5", "48").ok());
  Result<ConvScratchTable> zero = with("4", "0");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().find("pack_row_round"), std::string::npos);
  // The packing rule: rows and columns rounded up to panels, the depth at least 128, split in equal
  // blocks above 384; where sgemm does not pack: the constant.
  Result<ConvScratchTable> ok = with("4", "48");
  ASSERT_TRUE(ok.ok()) << ok.error();
  const GemmWeightGradient3d& g = ok.value().gemm_weight_gradient_3d;
  EXPECT_EQ(g.PackBytes(101, 1, 9, 9), 4u * 128 * (144 + 8) + 100);
  EXPECT_EQ(g.PackBytes(145, 9, 200, 200), 4u * 200 * (192 + 16) + 100);
  EXPECT_EQ(g.PackBytes(144, 8, 400, 400), 4u * 200 * (144 + 8) + 100);
  EXPECT_EQ(g.PackBytes(1250, 8, 128, 1024), 7u);                           // not packed
  EXPECT_EQ(g.PackBytes(1250, 8, 256, 1024), 4u * 256 * (1296 + 8) + 100);  // two leading dims of 256k
  EXPECT_EQ(g.PackBytes(60, 8, 9, 9), 7u);                                  // few rows: not packed
}

}  // namespace
}  // namespace oomguard::plan
