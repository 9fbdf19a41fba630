#include "oomguard/feed/jpeg.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "feed_test_util.h"

namespace oomguard::feed {
namespace {

using testing::MakeJpeg;

// Decodes with TurboJPEG directly, as the reference.
std::vector<uint8_t> ReferenceDecode(const std::string& jpeg, int w, int h) {
  std::vector<uint8_t> out(static_cast<size_t>(w) * h * 3);
  tjhandle tj = tjInitDecompress();
  EXPECT_EQ(tjDecompress2(tj, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(),
                          out.data(), w, 0, h, TJPF_RGB, 0),
            0);
  tjDestroy(tj);
  return out;
}

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(ParseScale, AcceptsTheFourDctScales) {
  EXPECT_EQ(*ParseScale("1"), (ScaleFactor{1, 1}));
  EXPECT_EQ(*ParseScale("1/2"), (ScaleFactor{1, 2}));
  EXPECT_EQ(*ParseScale("1/4"), (ScaleFactor{1, 4}));
  EXPECT_EQ(*ParseScale("1/8"), (ScaleFactor{1, 8}));
  Result<ScaleFactor> bad = ParseScale("1/3");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "bad scale '1/3': use 1, 1/2, 1/4 or 1/8");
  EXPECT_FALSE(ParseScale("0.5"));
  EXPECT_FALSE(ParseScale(""));
}

TEST(ParseImageSize, AcceptsWxH) {
  EXPECT_EQ(*ParseImageSize("224x224"), (ImageSize{224, 224}));
  EXPECT_EQ(*ParseImageSize("640X480"), (ImageSize{640, 480}));
  for (const char* bad : {"224", "x224", "224x", "0x10", "10x0", "-1x5", "10x10x3", "70000x10", "ax b"}) {
    Result<ImageSize> r = ParseImageSize(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error(), std::string("bad size '") + bad +
                             "': use WxH with 1..65535 pixels each, e.g. 224x224");
  }
}

TEST(PlanDecode, ScalesRoundUpLikeLibjpeg) {
  DecodePlan p;
  ASSERT_FALSE(PlanDecode({640, 480}, {1, 8}, std::nullopt, 1u << 30, &p));
  EXPECT_EQ(p.width, 80u);
  EXPECT_EQ(p.height, 60u);
  EXPECT_EQ(p.output_bytes, 80u * 60 * 3);
  EXPECT_EQ(p.scratch_bytes, 0u);
  ASSERT_FALSE(PlanDecode({33, 17}, {1, 2}, std::nullopt, 1u << 30, &p));
  EXPECT_EQ(p.width, 17u);
  EXPECT_EQ(p.height, 9u);
}

TEST(PlanDecode, FixedSizeNeedsScratchOnlyToCrop) {
  DecodePlan p;
  ASSERT_FALSE(PlanDecode({640, 480}, {1, 2}, ImageSize{400, 300}, 1u << 30, &p));
  EXPECT_EQ(p.scaled_width, 320u);
  EXPECT_EQ(p.output_bytes, 400u * 300 * 3);
  EXPECT_EQ(p.scratch_bytes, 0u);  // pad only: decoded in place
  ASSERT_FALSE(PlanDecode({640, 480}, {1, 1}, ImageSize{224, 224}, 1u << 30, &p));
  // A crop decodes row by row: the scratch is one row of the scaled image, not the image.
  EXPECT_EQ(p.output_bytes, 224u * 224 * 3);
  EXPECT_EQ(p.scratch_bytes, 640u * 3);
  ASSERT_FALSE(PlanDecode({640, 480}, {1, 2}, ImageSize{224, 224}, 1u << 30, &p));
  EXPECT_EQ(p.scratch_bytes, 320u * 3);
}

TEST(PlanDecode, PixelLimitStopsDecompressionBombs) {
  DecodePlan p;
  std::optional<ImageError> e = PlanDecode({60000, 60000}, {1, 8}, std::nullopt, 100'000'000, &p);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, SkipKind::kTooManyPixels);
  EXPECT_EQ(e->message, "too many pixels: 60000x60000 is over the limit of 100000000 pixels");
}

TEST(JpegDecoder, ReadHeaderNamesWhatIsWrong) {
  JpegDecoder d;
  JpegHeader h;
  std::string good = MakeJpeg(40, 24, 1);
  ASSERT_FALSE(d.ReadHeader(Bytes(good), good.size(), &h));
  EXPECT_EQ(h.width, 40u);
  EXPECT_EQ(h.height, 24u);

  std::optional<ImageError> e = d.ReadHeader(Bytes(good), 0, &h);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, SkipKind::kEmptyFile);
  std::string png = "\x89PNG\r\n\x1a\n0000000000";
  e = d.ReadHeader(Bytes(png), png.size(), &h);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, SkipKind::kNotJpeg);
  EXPECT_EQ(e->message, "not a JPEG (no start-of-image marker)");
  e = d.ReadHeader(Bytes(good), 20, &h);  // cut inside the header
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, SkipKind::kCorrupt);
  EXPECT_EQ(e->message.rfind("corrupt JPEG header: ", 0), 0u) << e->message;
}

TEST(JpegDecoder, DecodesLikeTurboJpegAtEveryScale) {
  std::string jpeg = MakeJpeg(64, 48, 7);
  JpegDecoder d;
  JpegHeader h;
  ASSERT_FALSE(d.ReadHeader(Bytes(jpeg), jpeg.size(), &h));
  for (ScaleFactor s : {ScaleFactor{1, 1}, ScaleFactor{1, 2}, ScaleFactor{1, 4}, ScaleFactor{1, 8}}) {
    DecodePlan p;
    ASSERT_FALSE(PlanDecode(h, s, std::nullopt, 1u << 30, &p));
    std::vector<uint8_t> out(p.output_bytes);
    ASSERT_FALSE(d.Decode(Bytes(jpeg), jpeg.size(), s, p, out.data(), nullptr));
    EXPECT_EQ(out, ReferenceDecode(jpeg, static_cast<int>(p.width), static_cast<int>(p.height)))
        << ToString(s);
  }
}

TEST(JpegDecoder, CentreCropAndPad) {
  std::string jpeg = MakeJpeg(64, 48, 9);
  std::vector<uint8_t> full = ReferenceDecode(jpeg, 64, 48);
  JpegDecoder d;
  JpegHeader h{64, 48};
  // Wider than the output, shorter than it: crop 8 columns each side, pad 4 rows top and bottom.
  DecodePlan p;
  ASSERT_FALSE(PlanDecode(h, {1, 1}, ImageSize{48, 56}, 1u << 30, &p));
  ASSERT_GT(p.scratch_bytes, 0u);
  std::vector<uint8_t> out(p.output_bytes, 0xAB), scratch(p.scratch_bytes);
  ASSERT_FALSE(d.Decode(Bytes(jpeg), jpeg.size(), {1, 1}, p, out.data(), scratch.data()));
  for (uint32_t y = 0; y < 56; ++y) {
    for (uint32_t x = 0; x < 48; ++x) {
      for (int c = 0; c < 3; ++c) {
        uint8_t got = out[(y * 48 + x) * 3 + c];
        uint8_t want = (y < 4 || y >= 52) ? 0 : full[((y - 4) * 64 + (x + 8)) * 3 + c];
        ASSERT_EQ(got, want) << "x=" << x << " y=" << y;
      }
    }
  }
  // Pad only: decoded in place, no scratch, zero border.
  ASSERT_FALSE(PlanDecode(h, {1, 1}, ImageSize{70, 50}, 1u << 30, &p));
  ASSERT_EQ(p.scratch_bytes, 0u);
  out.assign(p.output_bytes, 0xAB);
  ASSERT_FALSE(d.Decode(Bytes(jpeg), jpeg.size(), {1, 1}, p, out.data(), nullptr));
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[(1 * 70 + 3) * 3], full[0]);                           // (3,1) is the old (0,0)
  EXPECT_EQ(out[(48 * 70 + 66) * 3 + 2], full[(47 * 64 + 63) * 3 + 2]);  // last pixel
  EXPECT_EQ(out[(49 * 70 + 69) * 3], 0);
}

TEST(JpegDecoder, TruncatedDataIsCorruptNotHalfGrey) {
  std::string jpeg = MakeJpeg(64, 48, 3);
  JpegDecoder d;
  JpegHeader h;
  std::string cut = jpeg.substr(0, jpeg.size() * 2 / 3);
  ASSERT_FALSE(d.ReadHeader(Bytes(cut), cut.size(), &h));  // the header is intact
  DecodePlan p;
  ASSERT_FALSE(PlanDecode(h, {1, 1}, std::nullopt, 1u << 30, &p));
  std::vector<uint8_t> out(p.output_bytes);
  std::optional<ImageError> e = d.Decode(Bytes(cut), cut.size(), {1, 1}, p, out.data(), nullptr);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, SkipKind::kCorrupt);
  EXPECT_EQ(e->message.rfind("corrupt JPEG: ", 0), 0u) << e->message;
}

// A noisy picture (every 8x8 block has detail, so a block decoded wrongly
// shows) compressed with the given chroma subsampling and flags.
std::string MakeNoisyJpeg(int w, int h, int subsamp, int flags, uint32_t seed) {
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < rgb.size(); ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    const size_t pixel = i / 3;
    const int px = static_cast<int>(pixel % w), py = static_cast<int>(pixel / w);
    rgb[i] = static_cast<uint8_t>((px * 3 + py * 2 + (i % 3) * 80 + (x & 63)) & 0xFF);
  }
  tjhandle tj = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(tj, rgb.data(), w, 0, h, TJPF_RGB, &buf, &size, subsamp, 85, flags), 0);
  std::string out(reinterpret_cast<char*>(buf), size);
  tjFree(buf);
  tjDestroy(tj);
  return out;
}

// The crop path decodes only the kept rows and columns (skipping the others
// inside libjpeg); its pixels must equal a full decode at the same scale,
// cropped, for every subsampling (chroma upsampling reaches across the crop's
// edges), scale, offset and progressive files.
TEST(JpegDecoder, CropDecodesOnlyTheCropAndEqualsAFullDecodeCropped) {
  struct Case {
    int w, h, subsamp, flags;
  };
  int checked = 0;
  for (const Case& c : {Case{640, 480, TJSAMP_420, 0}, Case{640, 480, TJSAMP_422, 0}, Case{333, 251, TJSAMP_420, 0},
                        Case{333, 251, TJSAMP_444, 0}, Case{300, 200, TJSAMP_GRAY, 0},
                        Case{320, 240, TJSAMP_440, 0}, Case{401, 307, TJSAMP_420, TJFLAG_PROGRESSIVE}}) {
    std::string jpeg = MakeNoisyJpeg(c.w, c.h, c.subsamp, c.flags, static_cast<uint32_t>(c.w + c.subsamp));
    JpegDecoder d;
    JpegHeader h;
    ASSERT_FALSE(d.ReadHeader(Bytes(jpeg), jpeg.size(), &h));
    for (ScaleFactor s : {ScaleFactor{1, 1}, ScaleFactor{1, 2}, ScaleFactor{1, 4}}) {
      for (ImageSize size : {ImageSize{224, 224}, ImageSize{97, 61}, ImageSize{16, 400}, ImageSize{1, 1}}) {
        DecodePlan p;
        ASSERT_FALSE(PlanDecode(h, s, size, 1u << 30, &p));
        if (p.scratch_bytes == 0) continue;  // fits inside: the in-place path
        const std::vector<uint8_t> full =
            ReferenceDecode(jpeg, static_cast<int>(p.scaled_width), static_cast<int>(p.scaled_height));
        std::vector<uint8_t> out(p.output_bytes, 0xAB), row(p.scratch_bytes);
        std::optional<ImageError> e = d.Decode(Bytes(jpeg), jpeg.size(), s, p, out.data(), row.data());
        ASSERT_FALSE(e) << e->message;
        const uint32_t cw = std::min(p.width, p.scaled_width), ch = std::min(p.height, p.scaled_height);
        const uint32_t sx = (p.scaled_width - cw) / 2, sy = (p.scaled_height - ch) / 2;
        const uint32_t dx = (p.width - cw) / 2, dy = (p.height - ch) / 2;
        size_t wrong = 0;
        for (uint32_t y = 0; y < p.height; ++y) {
          for (uint32_t x = 0; x < p.width; ++x) {
            const bool inside = x >= dx && x < dx + cw && y >= dy && y < dy + ch;
            for (uint32_t k = 0; k < 3; ++k) {
              const uint8_t want =
                  inside ? full[((static_cast<size_t>(y - dy + sy)) * p.scaled_width + (x - dx + sx)) * 3 + k] : 0;
              wrong += out[(static_cast<size_t>(y) * p.width + x) * 3 + k] != want;
            }
          }
        }
        EXPECT_EQ(wrong, 0u) << c.w << "x" << c.h << " subsamp " << c.subsamp << " flags " << c.flags << " scale "
                             << ToString(s) << " size " << size.width << "x" << size.height;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 50);
}

// Only the crop's rows are decoded to pixels, but the rest of the file is
// still read: data cut short below the crop (or above it) is an error.
TEST(JpegDecoder, CropStillFindsDataCutShortOutsideTheCrop) {
  std::string jpeg = MakeNoisyJpeg(640, 480, TJSAMP_420, 0, 5);
  for (size_t keep : {jpeg.size() * 9 / 10, jpeg.size() / 5}) {
    std::string cut = jpeg.substr(0, keep);
    JpegDecoder d;
    JpegHeader h;
    ASSERT_FALSE(d.ReadHeader(Bytes(cut), cut.size(), &h));
    DecodePlan p;
    ASSERT_FALSE(PlanDecode(h, {1, 1}, ImageSize{224, 224}, 1u << 30, &p));
    ASSERT_GT(p.scratch_bytes, 0u);
    std::vector<uint8_t> out(p.output_bytes), row(p.scratch_bytes);
    std::optional<ImageError> e = d.Decode(Bytes(cut), cut.size(), {1, 1}, p, out.data(), row.data());
    ASSERT_TRUE(e) << keep;
    EXPECT_EQ(e->kind, SkipKind::kCorrupt);
    EXPECT_EQ(e->message.rfind("corrupt JPEG: ", 0), 0u) << e->message;
    // The decoder is usable again afterwards.
    ASSERT_FALSE(d.Decode(Bytes(jpeg), jpeg.size(), {1, 1}, p, out.data(), row.data()));
  }
}

// CMYK takes the same row path; its crop (both directions, 4:2:0) equals
// its own whole decode, cropped.
TEST(JpegDecoder, CmykCropEqualsItsWholeDecodeCropped) {
  const int w = 96, h = 64;
  std::vector<uint8_t> cmyk(static_cast<size_t>(w) * h * 4);
  for (size_t i = 0; i < cmyk.size(); ++i) cmyk[i] = static_cast<uint8_t>((i * 37 + (i / 4 / w) * 11) & 0xFF);
  tjhandle tj = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  ASSERT_EQ(tjCompress2(tj, cmyk.data(), w, 0, h, TJPF_CMYK, &buf, &size, TJSAMP_420, 90, 0), 0);
  std::string jpeg(reinterpret_cast<char*>(buf), size);
  tjFree(buf);
  tjDestroy(tj);
  JpegDecoder d;
  JpegHeader header;
  ASSERT_FALSE(d.ReadHeader(Bytes(jpeg), jpeg.size(), &header));
  ASSERT_TRUE(header.cmyk);
  DecodePlan whole, crop;
  ASSERT_FALSE(PlanDecode(header, {1, 1}, std::nullopt, 1u << 30, &whole));
  ASSERT_FALSE(PlanDecode(header, {1, 1}, ImageSize{37, 21}, 1u << 30, &crop));
  std::vector<uint8_t> full(whole.output_bytes), row(whole.scratch_bytes), out(crop.output_bytes);
  ASSERT_FALSE(d.Decode(Bytes(jpeg), jpeg.size(), {1, 1}, whole, full.data(), row.data()));
  ASSERT_FALSE(d.Decode(Bytes(jpeg), jpeg.size(), {1, 1}, crop, out.data(), row.data()));
  const uint32_t sx = (w - 37) / 2, sy = (h - 21) / 2;
  size_t wrong = 0;
  for (uint32_t y = 0; y < 21; ++y) {
    for (uint32_t x = 0; x < 37 * 3; ++x) wrong += out[y * 37 * 3 + x] != full[(sy + y) * w * 3 + sx * 3 + x];
  }
  EXPECT_EQ(wrong, 0u);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Decodes a whole file at full size with JpegDecoder.
std::vector<uint8_t> DecodeWhole(const std::string& jpeg, JpegHeader* header,
                                 std::optional<ImageSize> size = std::nullopt) {
  JpegDecoder d;
  EXPECT_FALSE(d.ReadHeader(Bytes(jpeg), jpeg.size(), header));
  DecodePlan plan;
  EXPECT_FALSE(PlanDecode(*header, {1, 1}, size, 1u << 30, &plan));
  std::vector<uint8_t> out(plan.output_bytes), scratch(plan.scratch_bytes);
  std::optional<ImageError> e = d.Decode(Bytes(jpeg), jpeg.size(), {1, 1}, plan, out.data(), scratch.data());
  EXPECT_FALSE(e) << e->message;
  return out;
}

// A real CMYK file from a print tool (tools/make_cmyk_jpeg.py, Debian's
// python3-pil: Adobe marker, inverted inks) decodes to the colours its inks
// mean, instead of being skipped as corrupt.
TEST(JpegDecoder, DecodesAdobeCmykFromAPrintToolToRgb) {
  std::string jpeg = ReadFile(std::string(OOMGUARD_FEED_TESTDATA) + "/cmyk_adobe_32x24.jpg");
  ASSERT_GT(jpeg.size(), 100u);
  JpegHeader header;
  std::vector<uint8_t> rgb = DecodeWhole(jpeg, &header);
  EXPECT_TRUE(header.cmyk);
  EXPECT_TRUE(header.inverted_cmyk);
  ASSERT_EQ(rgb.size(), 32u * 24 * 3);
  struct Expected {
    int x, y;
    int r, g, b;
  };
  // The centre of each quadrant: red, green, blue, 50% grey.
  for (const Expected& e : {Expected{8, 6, 255, 0, 0}, Expected{24, 6, 0, 255, 0}, Expected{8, 18, 0, 0, 255},
                            Expected{24, 18, 127, 127, 127}}) {
    const uint8_t* p = &rgb[(static_cast<size_t>(e.y) * 32 + e.x) * 3];
    EXPECT_NEAR(p[0], e.r, 6) << e.x << "," << e.y;
    EXPECT_NEAR(p[1], e.g, 6) << e.x << "," << e.y;
    EXPECT_NEAR(p[2], e.b, 6) << e.x << "," << e.y;
  }
}

// CMYK without the Adobe marker stores the inks as they are (0 = no ink).
// TurboJPEG writes CMYK with the marker, so the test removes it to check both
// conventions with one picture: the same stored bytes mean opposite colours.
TEST(JpegDecoder, CmykWithoutAnAdobeMarkerIsNotInverted) {
  const int w = 16, h = 8;
  std::vector<uint8_t> cmyk(static_cast<size_t>(w) * h * 4);
  for (size_t i = 0; i < cmyk.size(); i += 4) {  // stored (200, 60, 60, 255)
    cmyk[i] = 200;
    cmyk[i + 1] = 60;
    cmyk[i + 2] = 60;
    cmyk[i + 3] = 255;
  }
  tjhandle tj = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  ASSERT_EQ(tjCompress2(tj, cmyk.data(), w, 0, h, TJPF_CMYK, &buf, &size, TJSAMP_444, 100, 0), 0);
  std::string with_marker(reinterpret_cast<char*>(buf), size);
  tjFree(buf);
  tjDestroy(tj);
  JpegHeader header;
  std::vector<uint8_t> inverted = DecodeWhole(with_marker, &header);
  ASSERT_TRUE(header.cmyk);
  ASSERT_TRUE(header.inverted_cmyk);
  // Inverted: stored 200 = little cyan ink, K 255 = no black: a light red (200, 60, 60).
  EXPECT_NEAR(inverted[0], 200, 4);
  EXPECT_NEAR(inverted[1], 60, 4);
  EXPECT_NEAR(inverted[2], 60, 4);

  // Rename APP14 "Adobe" so it is no longer the Adobe marker (same length).
  std::string plain = with_marker;
  size_t adobe = plain.find("Adobe");
  ASSERT_NE(adobe, std::string::npos);
  plain[adobe] = 'X';
  std::vector<uint8_t> direct = DecodeWhole(plain, &header);
  ASSERT_TRUE(header.cmyk);
  EXPECT_FALSE(header.inverted_cmyk);
  // Not inverted: K 255 is full black.
  EXPECT_LE(direct[0], 4);
  EXPECT_LE(direct[1], 4);
  EXPECT_LE(direct[2], 4);
}

TEST(JpegDecoder, CmykIsCroppedAndPaddedLikeRgb) {
  std::string jpeg = ReadFile(std::string(OOMGUARD_FEED_TESTDATA) + "/cmyk_adobe_32x24.jpg");
  JpegHeader header;
  // 40x12: pad 4 columns each side, crop the middle 12 rows (6 of red/green, 6 of blue/grey).
  std::vector<uint8_t> rgb = DecodeWhole(jpeg, &header, ImageSize{40, 12});
  ASSERT_EQ(rgb.size(), 40u * 12 * 3);
  auto at = [&](int x, int y) { return &rgb[(static_cast<size_t>(y) * 40 + x) * 3]; };
  EXPECT_EQ(at(1, 1)[0], 0);  // padding
  EXPECT_NEAR(at(8, 2)[0], 255, 6);   // red, top-left
  EXPECT_NEAR(at(8, 10)[2], 255, 6);  // blue, bottom-left
  DecodePlan plan;
  ASSERT_FALSE(PlanDecode(header, {1, 1}, ImageSize{40, 12}, 1u << 30, &plan));
  EXPECT_EQ(plan.scratch_bytes, 32u * 4);  // one CMYK row, 4 bytes a pixel
}

}  // namespace
}  // namespace oomguard::feed
