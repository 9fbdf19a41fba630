#include "oomguard/feed/jpeg.h"

#include <turbojpeg.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace oomguard::feed {

Result<ScaleFactor> ParseScale(std::string_view text) {
  if (text == "1" || text == "1/1") return ScaleFactor{1, 1};
  if (text == "1/2") return ScaleFactor{1, 2};
  if (text == "1/4") return ScaleFactor{1, 4};
  if (text == "1/8") return ScaleFactor{1, 8};
  return MakeError("bad scale '" + std::string(text) + "': use 1, 1/2, 1/4 or 1/8");
}

std::string ToString(ScaleFactor scale) {
  if (scale.denom == 1) return std::to_string(scale.num);
  return std::to_string(scale.num) + "/" + std::to_string(scale.denom);
}

Result<ImageSize> ParseImageSize(std::string_view text) {
  auto bad = [&] {
    return MakeError("bad size '" + std::string(text) + "': use WxH with 1..65535 pixels each, e.g. 224x224");
  };
  size_t x = text.find_first_of("xX");
  if (x == std::string_view::npos || x == 0 || x + 1 >= text.size()) return bad();
  uint32_t w = 0, h = 0;
  auto parse = [](std::string_view s, uint32_t* v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && p == s.data() + s.size();
  };
  if (!parse(text.substr(0, x), &w) || !parse(text.substr(x + 1), &h)) return bad();
  if (w < 1 || h < 1 || w > 65535 || h > 65535) return bad();
  return ImageSize{w, h};
}

const char* ToString(SkipKind kind) {
  switch (kind) {
    case SkipKind::kEmptyFile: return "empty_file";
    case SkipKind::kReadError: return "read_error";
    case SkipKind::kNotJpeg: return "not_jpeg";
    case SkipKind::kCorrupt: return "corrupt";
    case SkipKind::kTooManyPixels: return "too_many_pixels";
    case SkipKind::kOverBudget: return "over_budget";
  }
  return "unknown";
}

namespace {
constexpr uint32_t kCmykChannels = 4;

uint32_t Scaled(uint32_t dim, ScaleFactor s) {
  return static_cast<uint32_t>((static_cast<uint64_t>(dim) * s.num + s.denom - 1) / s.denom);
}

// Whether the markers before the first scan include Adobe's APP14 segment.
bool HasAdobeMarker(const uint8_t* data, uint64_t size) {
  uint64_t pos = 2;  // after SOI
  while (pos + 4 <= size) {
    if (data[pos] != 0xFF) return false;
    uint8_t marker = data[pos + 1];
    if (marker == 0xFF) {  // fill byte
      ++pos;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) return false;  // start of scan / end of image
    uint64_t length = (static_cast<uint64_t>(data[pos + 2]) << 8) | data[pos + 3];
    if (length < 2) return false;
    if (marker == 0xEE && length >= 7 && pos + 9 <= size && std::memcmp(data + pos + 4, "Adobe", 5) == 0) {
      return true;
    }
    pos += 2 + length;
  }
  return false;
}

uint8_t MulDiv255(uint32_t a, uint32_t b) { return static_cast<uint8_t>((a * b + 127) / 255); }

// One CMYK pixel to RGB: each channel is (1 - ink) * (1 - black).
inline void CmykToRgb(const uint8_t* cmyk, bool inverted, uint8_t* rgb) {
  if (inverted) {  // stored 255 - ink: already the "1 - ink" factors
    rgb[0] = MulDiv255(cmyk[0], cmyk[3]);
    rgb[1] = MulDiv255(cmyk[1], cmyk[3]);
    rgb[2] = MulDiv255(cmyk[2], cmyk[3]);
  } else {
    const uint32_t white = 255u - cmyk[3];
    rgb[0] = MulDiv255(255u - cmyk[0], white);
    rgb[1] = MulDiv255(255u - cmyk[1], white);
    rgb[2] = MulDiv255(255u - cmyk[2], white);
  }
}

}  // namespace

std::optional<ImageError> PlanDecode(const JpegHeader& header, ScaleFactor scale,
                                     const std::optional<ImageSize>& size, uint64_t max_pixels,
                                     DecodePlan* plan) {
  uint64_t pixels = static_cast<uint64_t>(header.width) * header.height;
  if (pixels > max_pixels) {
    return ImageError{SkipKind::kTooManyPixels,
                      "too many pixels: " + std::to_string(header.width) + "x" +
                          std::to_string(header.height) + " is over the limit of " +
                          std::to_string(max_pixels) + " pixels"};
  }
  DecodePlan p;
  p.scaled_width = Scaled(header.width, scale);
  p.scaled_height = Scaled(header.height, scale);
  p.width = size ? size->width : p.scaled_width;
  p.height = size ? size->height : p.scaled_height;
  p.output_bytes = static_cast<uint64_t>(p.width) * p.height * kChannels;
  p.cmyk = header.cmyk;
  p.inverted_cmyk = header.inverted_cmyk;
  const uint64_t scaled_pixels = static_cast<uint64_t>(p.scaled_width) * p.scaled_height;
  bool fits_inside = p.scaled_width <= p.width && p.scaled_height <= p.height;
  if (p.cmyk) {
    p.scratch_bytes = scaled_pixels * kCmykChannels;
  } else {
    p.scratch_bytes = fits_inside ? 0 : scaled_pixels * kChannels;
  }
  *plan = p;
  return std::nullopt;
}

namespace {
ImageError NoDecoder() {
  return ImageError{SkipKind::kOverBudget, "cannot make a JPEG decoder (TurboJPEG is out of memory)"};
}
}  // namespace

JpegDecoder::JpegDecoder() : handle_(tjInitDecompress()) {}

JpegDecoder::~JpegDecoder() {
  if (handle_ != nullptr) tjDestroy(static_cast<tjhandle>(handle_));
}

void JpegDecoder::Reset() {
  if (handle_ != nullptr) tjDestroy(static_cast<tjhandle>(handle_));
  handle_ = tjInitDecompress();
}

bool JpegDecoder::EnsureHandle() {
  if (handle_ == nullptr) handle_ = tjInitDecompress();
  return handle_ != nullptr;
}

std::optional<ImageError> JpegDecoder::ReadHeader(const uint8_t* data, uint64_t size,
                                                  JpegHeader* header) {
  if (size == 0) return ImageError{SkipKind::kEmptyFile, "empty file"};
  if (size < 2 || data[0] != 0xFF || data[1] != 0xD8) {
    return ImageError{SkipKind::kNotJpeg, "not a JPEG (no start-of-image marker)"};
  }
  if (!EnsureHandle()) return NoDecoder();
  int w = 0, h = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(static_cast<tjhandle>(handle_), data, static_cast<unsigned long>(size), &w,
                          &h, &subsamp, &colorspace) != 0) {
    ImageError e{SkipKind::kCorrupt,
                 std::string("corrupt JPEG header: ") + tjGetErrorStr2(static_cast<tjhandle>(handle_))};
    Reset();
    return e;
  }
  if (w <= 0 || h <= 0) {
    // A header cut short can "succeed" with no frame; the handle is then left
    // mid-stream and would fail the next file, so start afresh.
    Reset();
    return ImageError{SkipKind::kCorrupt, "corrupt JPEG header: no image size (file cut short?)"};
  }
  header->width = static_cast<uint32_t>(w);
  header->height = static_cast<uint32_t>(h);
  header->cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  header->inverted_cmyk = header->cmyk && HasAdobeMarker(data, size);
  return std::nullopt;
}

std::optional<ImageError> JpegDecoder::Decode(const uint8_t* data, uint64_t size, ScaleFactor scale,
                                              const DecodePlan& plan, uint8_t* out, uint8_t* scratch) {
  if (!EnsureHandle()) return NoDecoder();
  tjhandle tj = static_cast<tjhandle>(handle_);
  const int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
  const uint64_t out_pitch = static_cast<uint64_t>(plan.width) * kChannels;
  if (plan.cmyk) return DecodeCmyk(data, size, plan, out, scratch);
  // Decoding at the scaled size: TurboJPEG picks the DCT scale from the
  // requested width/height.
  uint8_t* dst;
  uint64_t dst_pitch;
  if (plan.scratch_bytes == 0) {
    // The scaled image fits inside the output: decode in place, centred.
    uint64_t top = (plan.height - plan.scaled_height) / 2;
    uint64_t left = (plan.width - plan.scaled_width) / 2;
    if (plan.width != plan.scaled_width || plan.height != plan.scaled_height) {
      std::memset(out, 0, plan.output_bytes);
    }
    dst = out + top * out_pitch + left * kChannels;
    dst_pitch = out_pitch;
  } else {
    dst = scratch;
    dst_pitch = static_cast<uint64_t>(plan.scaled_width) * kChannels;
  }
  int rc = tjDecompress2(tj, data, static_cast<unsigned long>(size), dst,
                         static_cast<int>(plan.scaled_width), static_cast<int>(dst_pitch),
                         static_cast<int>(plan.scaled_height), TJPF_RGB, flags);
  if (rc != 0) {
    ImageError e{SkipKind::kCorrupt, std::string("corrupt JPEG: ") + tjGetErrorStr2(tj)};
    Reset();
    return e;
  }
  (void)scale;
  if (plan.scratch_bytes == 0) return std::nullopt;
  // Centre crop (and pad the dimension that is smaller, if any).
  std::memset(out, 0, plan.output_bytes);
  uint32_t copy_w = std::min(plan.width, plan.scaled_width);
  uint32_t copy_h = std::min(plan.height, plan.scaled_height);
  uint32_t src_x = (plan.scaled_width - copy_w) / 2, src_y = (plan.scaled_height - copy_h) / 2;
  uint32_t dst_x = (plan.width - copy_w) / 2, dst_y = (plan.height - copy_h) / 2;
  for (uint32_t row = 0; row < copy_h; ++row) {
    std::memcpy(out + (dst_y + row) * out_pitch + static_cast<uint64_t>(dst_x) * kChannels,
                scratch + (src_y + row) * dst_pitch + static_cast<uint64_t>(src_x) * kChannels,
                static_cast<uint64_t>(copy_w) * kChannels);
  }
  return std::nullopt;
}

std::optional<ImageError> JpegDecoder::DecodeCmyk(const uint8_t* data, uint64_t size, const DecodePlan& plan,
                                                  uint8_t* out, uint8_t* scratch) {
  tjhandle tj = static_cast<tjhandle>(handle_);
  const uint64_t src_pitch = static_cast<uint64_t>(plan.scaled_width) * kCmykChannels;
  if (tjDecompress2(tj, data, static_cast<unsigned long>(size), scratch, static_cast<int>(plan.scaled_width),
                    static_cast<int>(src_pitch), static_cast<int>(plan.scaled_height), TJPF_CMYK,
                    TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0) {
    ImageError e{SkipKind::kCorrupt, std::string("corrupt JPEG: ") + tjGetErrorStr2(tj)};
    Reset();
    return e;
  }
  // Convert the centre (cropped and/or padded like an RGB image) to RGB.
  if (plan.width != plan.scaled_width || plan.height != plan.scaled_height) {
    std::memset(out, 0, plan.output_bytes);
  }
  const uint64_t out_pitch = static_cast<uint64_t>(plan.width) * kChannels;
  uint32_t copy_w = std::min(plan.width, plan.scaled_width);
  uint32_t copy_h = std::min(plan.height, plan.scaled_height);
  uint32_t src_x = (plan.scaled_width - copy_w) / 2, src_y = (plan.scaled_height - copy_h) / 2;
  uint32_t dst_x = (plan.width - copy_w) / 2, dst_y = (plan.height - copy_h) / 2;
  for (uint32_t row = 0; row < copy_h; ++row) {
    const uint8_t* src = scratch + (src_y + row) * src_pitch + static_cast<uint64_t>(src_x) * kCmykChannels;
    uint8_t* dst = out + (dst_y + row) * out_pitch + static_cast<uint64_t>(dst_x) * kChannels;
    for (uint32_t x = 0; x < copy_w; ++x) CmykToRgb(src + x * kCmykChannels, plan.inverted_cmyk, dst + x * kChannels);
  }
  return std::nullopt;
}

}  // namespace oomguard::feed
