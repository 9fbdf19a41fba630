#include "oomguard/self_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace oomguard {
namespace {

TEST(SelfStatusBytes, ResidentMemoryGrowsWhenPagesAreTouched) {
  const uint64_t before = SelfStatusBytes("VmRSS");
  ASSERT_GT(before, 0u);
  constexpr std::size_t kBytes = 64u << 20;
  auto block = std::make_unique<char[]>(kBytes);
  std::memset(block.get(), 1, kBytes);
  const uint64_t after = SelfStatusBytes("VmRSS");
  EXPECT_GT(after, before + kBytes / 2);
  EXPECT_GE(SelfStatusBytes("VmHWM"), after);
  EXPECT_EQ(block[kBytes - 1], 1);
}

TEST(SelfStatusBytes, UnknownOrPartialKeysAreZero) {
  EXPECT_EQ(SelfStatusBytes("NoSuchKey"), 0u);
  EXPECT_EQ(SelfStatusBytes("VmRS"), 0u);  // a prefix of VmRSS is not VmRSS
  EXPECT_EQ(SelfStatusBytes(""), 0u);
}

}  // namespace
}  // namespace oomguard
