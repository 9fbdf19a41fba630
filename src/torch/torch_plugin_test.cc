// liboomguard_torch.so as PyTorch sees it: dlopen, dlsym of the documented C
// functions, allocations through a simulated device (OOMGUARD_ALLOC_CONF).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

namespace {

using MallocFn = void* (*)(ssize_t, int, void*);
using FreeFn = void (*)(void*, ssize_t, int, void*);
using StatsFn = size_t (*)(char*, size_t);

TEST(TorchPlugin, ExportsOnlyTheAllocatorFunctionsAndAllocatesThroughTheConfiguredArena) {
  setenv("OOMGUARD_ALLOC_CONF", "limit=64MiB,simulate=1GiB", 1);
  void* so = dlopen(OOMGUARD_TORCH_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(so, nullptr) << dlerror();
  auto malloc_fn = reinterpret_cast<MallocFn>(dlsym(so, "oomguard_malloc"));
  auto free_fn = reinterpret_cast<FreeFn>(dlsym(so, "oomguard_free"));
  auto stats_fn = reinterpret_cast<StatsFn>(dlsym(so, "oomguard_stats_json"));
  ASSERT_NE(malloc_fn, nullptr);
  ASSERT_NE(free_fn, nullptr);
  ASSERT_NE(stats_fn, nullptr);
  // The library's C++ internals stay hidden (version script).
  EXPECT_EQ(dlsym(so, "_ZN8oomguard2mr14ParseAllocConfESt17basic_string_viewIcSt11char_traitsIcEE"), nullptr);

  void* p = malloc_fn(1000, 0, nullptr);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  EXPECT_EQ(malloc_fn(100 << 20, 0, nullptr), nullptr);  // over the 64 MiB limit
  EXPECT_EQ(malloc_fn(-1, 0, nullptr), nullptr);
  free_fn(p, 1000, 0, nullptr);

  std::string buffer(stats_fn(nullptr, 0) + 1, '\0');
  stats_fn(buffer.data(), buffer.size());
  nlohmann::json stats = nlohmann::json::parse(buffer.c_str());
  EXPECT_EQ(stats["devices"][0]["limit_bytes"].get<uint64_t>(), 64u << 20);
  EXPECT_EQ(stats["devices"][0]["allocated_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(stats["last_report"]["requested_bytes"].get<uint64_t>(), 100u << 20);
  EXPECT_EQ(stats["last_report"]["verdict"], "cap_too_low");
  // Small buffers are truncated, NUL-terminated, and the full length is returned.
  char small[8];
  EXPECT_EQ(stats_fn(small, sizeof small), buffer.find('\0'));
  EXPECT_EQ(std::string(small), std::string(buffer.c_str()).substr(0, 7));
  // No dlclose: the allocator is never destroyed (PyTorch frees tensors at interpreter
  // exit), and unmapping the library would make it look leaked.
}

}  // namespace
