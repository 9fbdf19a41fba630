#include "amounts.h"

#include <gtest/gtest.h>

namespace oomguard::explain {
namespace {

TEST(ParseAmount, FrameworkSpellings) {
  EXPECT_EQ(ParseAmount("20.00 MiB"), 20ull << 20);
  EXPECT_EQ(ParseAmount("1.25TiB"), 1374389534720ull);
  EXPECT_EQ(ParseAmount("3.77G"), 4048006676ull);  // TensorFlow prints GiB as "G"
  EXPECT_EQ(ParseAmount("8589934592"), 8589934592ull);
  EXPECT_EQ(ParseAmount("1,073,741,824 bytes"), 1073741824ull);
  EXPECT_EQ(ParseAmount("16130 MB"), 16130ull << 20);  // nvidia-smi/gpustat "MB" are MiB
  EXPECT_EQ(ParseAmount("31254784kB"), 31254784ull * 1024);  // kernel kB are KiB
  EXPECT_EQ(ParseAmount("0 bytes"), 0u);
  EXPECT_EQ(ParseAmount("1EB"), 1ull << 60);
  EXPECT_EQ(ParseAmount("32768.00 Gib"), 32768ull << 30);
}

TEST(ParseAmount, RejectsWhatIsNotAnAmount) {
  EXPECT_FALSE(ParseAmount(""));
  EXPECT_FALSE(ParseAmount("GiB"));
  EXPECT_FALSE(ParseAmount("."));
  EXPECT_FALSE(ParseAmount("12 apples"));
}

TEST(ParseAmount, SaturatesWhatOverflows64Bits) {
  // An absurd size stays absurd (impossible_request), not unknown.
  EXPECT_EQ(ParseAmount("99999999999 EiB"), UINT64_MAX);
  EXPECT_EQ(ParseAmount("17179869183.95 GiB"), UINT64_MAX);
}

TEST(DtypeBytes, KnownNames) {
  EXPECT_EQ(DtypeBytes("float"), 4u);
  EXPECT_EQ(DtypeBytes("torch.float16"), 2u);
  EXPECT_EQ(DtypeBytes("DT_FLOAT"), 4u);
  EXPECT_EQ(DtypeBytes("bfloat16"), 2u);
  EXPECT_EQ(DtypeBytes("float64"), 8u);
  EXPECT_EQ(DtypeBytes("uint8"), 1u);
  EXPECT_FALSE(DtypeBytes("quaternion"));
}

TEST(TensorBytesInLine, ShapeTimesDtype) {
  EXPECT_EQ(TensorBytesInLine("OOM when allocating tensor with shape[256,1024,14,14] and type float on "
                              "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"),
            256ull * 1024 * 14 * 14 * 4);
  EXPECT_EQ(TensorBytesInLine("Unable to allocate 7.45 GiB for an array with shape (1000000000,) and data type "
                              "float64"),
            8000000000ull);
  // A shape without a dtype says nothing about bytes.
  EXPECT_FALSE(TensorBytesInLine("OOM when allocating tensor with shape[100,4096,32]"));
  // Absurd dimensions do not overflow.
  EXPECT_FALSE(TensorBytesInLine("shape[99999999999,99999999999,99999999999] and type float"));
}

}  // namespace
}  // namespace oomguard::explain
