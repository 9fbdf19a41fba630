#include "oomguard/doctor/cuda_visible_devices.h"

#include <gtest/gtest.h>

namespace oomguard::doctor {
namespace {

using Kind = VisibleDeviceEntry::Kind;

std::vector<std::string> Texts(const VisibleDevices& v) {
  std::vector<std::string> out;
  for (const auto& e : v.entries) out.push_back(e.text);
  return out;
}

TEST(ParseCudaVisibleDevices, UnsetMeansEveryDevice) {
  VisibleDevices v = ParseCudaVisibleDevices(nullptr);
  EXPECT_FALSE(v.set);
  EXPECT_TRUE(v.entries.empty());
  EXPECT_TRUE(v.warnings.empty());
}

TEST(ParseCudaVisibleDevices, IndicesInOrder) {
  VisibleDevices v = ParseCudaVisibleDevices("2,0");
  ASSERT_EQ(v.entries.size(), 2u);
  EXPECT_EQ(v.entries[0].kind, Kind::kIndex);
  EXPECT_EQ(v.entries[0].index, 2);
  EXPECT_EQ(v.entries[1].index, 0);
  EXPECT_TRUE(v.warnings.empty());
  EXPECT_EQ(v.hidden_from, "");
}

TEST(ParseCudaVisibleDevices, EmptyHidesEverything) {
  for (const char* text : {"", "  "}) {
    VisibleDevices v = ParseCudaVisibleDevices(text);
    EXPECT_TRUE(v.set);
    EXPECT_TRUE(v.entries.empty());
    ASSERT_EQ(v.warnings.size(), 1u);
    EXPECT_EQ(v.warnings[0], "CUDA_VISIBLE_DEVICES is set but empty: CUDA sees no GPU at all");
  }
}

TEST(ParseCudaVisibleDevices, MinusOneHidesEverything) {
  VisibleDevices v = ParseCudaVisibleDevices("-1");
  EXPECT_TRUE(v.entries.empty());
  EXPECT_EQ(v.hidden_from, "-1");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_EQ(v.warnings[0],
            "CUDA_VISIBLE_DEVICES has '-1' (a negative index), which is not a device: CUDA sees no GPU at all");
}

TEST(ParseCudaVisibleDevices, InvalidEntryHidesTheRest) {
  VisibleDevices v = ParseCudaVisibleDevices("0,2,gpu1,1");
  EXPECT_EQ(Texts(v), (std::vector<std::string>{"0", "2"}));
  EXPECT_EQ(v.hidden_from, "gpu1");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_EQ(v.warnings[0],
            "CUDA_VISIBLE_DEVICES has 'gpu1', which is not a device: CUDA ignores it and every entry after it");
  v = ParseCudaVisibleDevices("1,,2");
  EXPECT_EQ(Texts(v), (std::vector<std::string>{"1"}));
  EXPECT_EQ(v.warnings[0],
            "CUDA_VISIBLE_DEVICES has an empty entry, which is not a device: CUDA ignores it and every entry after it");
  v = ParseCudaVisibleDevices("1,-1,0");
  EXPECT_EQ(Texts(v), (std::vector<std::string>{"1"}));
  EXPECT_EQ(v.hidden_from, "-1");
}

TEST(ParseCudaVisibleDevices, UuidAndMigForms) {
  VisibleDevices v = ParseCudaVisibleDevices(
      "GPU-8a5c0f2e,MIG-GPU-8a5c0f2e-1111-2222-3333-444444444444/1/0,MIG-0b7a1f3c-5d6e-7f80-9a1b-2c3d4e5f6a7b");
  ASSERT_EQ(v.entries.size(), 3u);
  EXPECT_EQ(v.entries[0].kind, Kind::kUuid);
  EXPECT_EQ(v.entries[1].kind, Kind::kMig);
  EXPECT_EQ(v.entries[2].kind, Kind::kMig);
  EXPECT_TRUE(v.warnings.empty());
  // "GPU-" followed by something that is not hex is not a UUID.
  v = ParseCudaVisibleDevices("GPU-xyz,0");
  EXPECT_TRUE(v.entries.empty());
  EXPECT_EQ(v.hidden_from, "GPU-xyz");
}

TEST(ParseCudaVisibleDevices, SpacesAreToleratedWithAWarning) {
  VisibleDevices v = ParseCudaVisibleDevices("0, 1");
  EXPECT_EQ(Texts(v), (std::vector<std::string>{"0", "1"}));
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_EQ(v.warnings[0],
            "CUDA_VISIBLE_DEVICES entry ' 1' has spaces around it; write the list without spaces");
}

TEST(ParseCudaVisibleDevices, RepeatEndsTheList) {
  VisibleDevices v = ParseCudaVisibleDevices("0,1,0,2");
  EXPECT_EQ(Texts(v), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(v.hidden_from, "0");
}

TEST(ParseCudaDeviceOrder, KnownValuesAndError) {
  EXPECT_EQ(*ParseCudaDeviceOrder(nullptr), DeviceOrder::kFastestFirst);
  EXPECT_EQ(*ParseCudaDeviceOrder("FASTEST_FIRST"), DeviceOrder::kFastestFirst);
  EXPECT_EQ(*ParseCudaDeviceOrder("PCI_BUS_ID"), DeviceOrder::kPciBusId);
  EXPECT_EQ(ParseCudaDeviceOrder("pci").error(),
            "CUDA_DEVICE_ORDER='pci' is neither FASTEST_FIRST nor PCI_BUS_ID; CUDA uses FASTEST_FIRST");
}

// Three GPUs: nvidia-smi order (PCI) is 1080 Ti, 3090 (02:00), 3090 (81:00);
// CUDA's fastest-first order puts both 3090s first.
GpuSnapshot MixedMachine() {
  GpuSnapshot s;
  s.driver = DriverVersions{"535.104.05", 12020};
  auto gpu = [](unsigned index, const char* uuid, const char* bus, const char* name) {
    Gpu g;
    g.nvml_index = index;
    g.uuid = uuid;
    g.pci_bus_id = bus;
    g.name = name;
    return g;
  };
  s.gpus = {gpu(0, "GPU-11111111-aaaa", "00000000:01:00.0", "GTX 1080 Ti"),
            gpu(1, "GPU-22222222-aaaa", "00000000:02:00.0", "RTX 3090"),
            gpu(2, "GPU-23333333-aaaa", "00000000:81:00.0", "RTX 3090")};
  // Deliberately in another spelling than NVML's: matching is by normalised bus id.
  s.cuda_fastest_first = {"0000:02:00.0", "0000:81:00.0", "0000:01:00.0"};
  return s;
}

std::vector<std::optional<int>> Ordinals(const char* visible, DeviceOrder order,
                                         std::vector<std::string>* warnings = nullptr) {
  OrdinalMap m = MapCudaOrdinals(MixedMachine(), ParseCudaVisibleDevices(visible), order);
  if (warnings) *warnings = m.warnings;
  return m.cuda_ordinal;
}

using O = std::vector<std::optional<int>>;
constexpr auto kNone = std::nullopt;

TEST(MapCudaOrdinals, FastestFirstDiffersFromNvidiaSmi) {
  std::vector<std::string> w;
  EXPECT_EQ(Ordinals(nullptr, DeviceOrder::kFastestFirst, &w), (O{2, 0, 1}));
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0], "CUDA ordinal 2 is nvidia-smi GPU 0 (GTX 1080 Ti, 00000000:01:00.0): the numbers differ");
}

TEST(MapCudaOrdinals, PciBusIdMatchesNvidiaSmi) {
  std::vector<std::string> w;
  EXPECT_EQ(Ordinals(nullptr, DeviceOrder::kPciBusId, &w), (O{0, 1, 2}));
  EXPECT_TRUE(w.empty());
}

TEST(MapCudaOrdinals, IndicesReferToTheChosenOrder) {
  // "0" is the fastest GPU under FASTEST_FIRST but nvidia-smi's GPU 0 under PCI_BUS_ID.
  EXPECT_EQ(Ordinals("0", DeviceOrder::kFastestFirst), (O{kNone, 0, kNone}));
  EXPECT_EQ(Ordinals("0", DeviceOrder::kPciBusId), (O{0, kNone, kNone}));
  EXPECT_EQ(Ordinals("2,0", DeviceOrder::kPciBusId), (O{1, kNone, 0}));
}

TEST(MapCudaOrdinals, UuidPrefixSelectsOneGpu) {
  EXPECT_EQ(Ordinals("GPU-2333,GPU-1111", DeviceOrder::kFastestFirst), (O{1, kNone, 0}));
  // "GPU-2" matches two GPUs: CUDA rejects it and what follows.
  std::vector<std::string> w;
  EXPECT_EQ(Ordinals("GPU-1,GPU-2,0", DeviceOrder::kPciBusId, &w), (O{0, kNone, kNone}));
  ASSERT_FALSE(w.empty());
  EXPECT_EQ(w[0], "CUDA_VISIBLE_DEVICES entry 'GPU-2' matches 2 GPUs: CUDA ignores it and every entry after it");
}

TEST(MapCudaOrdinals, OutOfRangeIndexHidesTheRest) {
  std::vector<std::string> w;
  EXPECT_EQ(Ordinals("1,7,0", DeviceOrder::kPciBusId, &w), (O{kNone, 0, kNone}));
  ASSERT_FALSE(w.empty());
  EXPECT_EQ(w[0], "CUDA_VISIBLE_DEVICES entry '7' is past the last GPU (3 found): CUDA ignores it and every entry after it");
}

TEST(MapCudaOrdinals, EmptyAndMinusOneHideAll) {
  EXPECT_EQ(Ordinals("", DeviceOrder::kFastestFirst), (O{kNone, kNone, kNone}));
  EXPECT_EQ(Ordinals("-1", DeviceOrder::kFastestFirst), (O{kNone, kNone, kNone}));
}

TEST(MapCudaOrdinals, SameGpuByIndexAndUuidCountsOnce) {
  EXPECT_EQ(Ordinals("0,GPU-1111,1", DeviceOrder::kPciBusId), (O{0, kNone, kNone}));
}

TEST(MapCudaOrdinals, MigEntriesTakeOrdinalsButNoRow) {
  OrdinalMap m = MapCudaOrdinals(MixedMachine(), ParseCudaVisibleDevices("MIG-abc,1"), DeviceOrder::kPciBusId);
  EXPECT_EQ(m.cuda_ordinal, (O{kNone, 1, kNone}));
  EXPECT_EQ(m.mig_entries, 1);
}

TEST(MapCudaOrdinals, WithoutLibcudaFastestFirstIsAGuess) {
  GpuSnapshot s = MixedMachine();
  s.cuda_fastest_first.clear();
  OrdinalMap m = MapCudaOrdinals(s, ParseCudaVisibleDevices(nullptr), DeviceOrder::kFastestFirst);
  EXPECT_FALSE(m.order_known);
  EXPECT_EQ(m.cuda_ordinal, (O{0, 1, 2}));
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("libcuda gave no FASTEST_FIRST order"), std::string::npos);
}

TEST(NormalizePciBusId, SpellingsAgree) {
  EXPECT_EQ(NormalizePciBusId("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("0000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("not-a-bus"), "not-a-bus");
}

TEST(FormatCudaVersion, MajorMinor) {
  EXPECT_EQ(FormatCudaVersion(12020), "12.2");
  EXPECT_EQ(FormatCudaVersion(13000), "13.0");
  EXPECT_EQ(FormatCudaVersion(11080), "11.8");
  EXPECT_EQ(FormatCudaVersion(0), "unknown");
}

}  // namespace
}  // namespace oomguard::doctor
