#include "oomguard/feed/jpeg.h"

#include <turbojpeg.h>

// jpeglib.h needs FILE and size_t declared first.
#include <csetjmp>
#include <cstdio>
#include <jpeglib.h>

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
  // A crop or a CMYK source is decoded row by row through one row of scratch
  // (at most the scaled width); anything else straight into the output.
  const bool fits_inside = p.scaled_width <= p.width && p.scaled_height <= p.height;
  if (p.cmyk || !fits_inside) {
    p.scratch_bytes = static_cast<uint64_t>(p.scaled_width) * (p.cmyk ? kCmykChannels : kChannels);
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
  if (plan.scratch_bytes != 0) return DecodeRows(data, size, scale, plan, out, scratch);
  if (!EnsureHandle()) return NoDecoder();
  tjhandle tj = static_cast<tjhandle>(handle_);
  // The scaled image fits inside the output: decode it there, centred, at the
  // output's pitch (TurboJPEG picks the DCT scale from the requested size).
  const uint64_t out_pitch = static_cast<uint64_t>(plan.width) * kChannels;
  const uint64_t top = (plan.height - plan.scaled_height) / 2;
  const uint64_t left = (plan.width - plan.scaled_width) / 2;
  if (plan.width != plan.scaled_width || plan.height != plan.scaled_height) {
    std::memset(out, 0, plan.output_bytes);
  }
  if (tjDecompress2(tj, data, static_cast<unsigned long>(size), out + top * out_pitch + left * kChannels,
                    static_cast<int>(plan.scaled_width), static_cast<int>(out_pitch),
                    static_cast<int>(plan.scaled_height), TJPF_RGB, TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0) {
    ImageError e{SkipKind::kCorrupt, std::string("corrupt JPEG: ") + tjGetErrorStr2(tj)};
    Reset();
    return e;
  }
  return std::nullopt;
}

namespace {

// libjpeg reports errors by calling error_exit, which must not return: jump
// back to DecodeRows. Warnings (corrupt data libjpeg can paper over) are
// errors too, as TJFLAG_STOPONWARNING makes them for TurboJPEG.
struct RowDecodeError {
  jpeg_error_mgr mgr;
  jpeg_progress_mgr progress;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void JumpOnError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<RowDecodeError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void JumpOnWarning(j_common_ptr cinfo, int level) {
  if (level < 0) JumpOnError(cinfo);  // level -1: a warning; >= 0: trace messages, ignored
}

// TJFLAG_LIMITSCANS: a progressive file of thousands of tiny scans costs
// minutes of CPU for one image.
constexpr int kMaxScans = 500;
void LimitScans(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxScans) {
    auto* err = reinterpret_cast<RowDecodeError*>(cinfo->err);
    std::snprintf(err->message, sizeof(err->message), "progressive JPEG image has more than %d scans", kMaxScans);
    std::longjmp(err->jump, 1);
  }
}

// Columns decoded either side of a crop, so that chroma upsampling at the
// crop's edge sees real neighbours and the pixels equal a full decode's.
constexpr JDIMENSION kCropMargin = 16;

}  // namespace

// Decodes only what the output keeps: the rows above the crop are skipped (no
// inverse DCT, no colour conversion), and each row is decoded only across the
// crop's columns (jpeg_crop_scanline), into one row of scratch and from there
// (converted from CMYK if need be) into the output at its pitch. The rows
// below are skipped too, all but the last, so data cut short or damaged
// anywhere in the file is still an error, as in a full decode.
std::optional<ImageError> JpegDecoder::DecodeRows(const uint8_t* data, uint64_t size, ScaleFactor scale,
                                                  const DecodePlan& plan, uint8_t* out, uint8_t* row) {
  jpeg_decompress_struct cinfo;
  RowDecodeError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = JumpOnError;
  err.mgr.emit_message = JumpOnWarning;
  err.progress = {};
  err.progress.progress_monitor = LimitScans;
  err.message[0] = '\0';
  // Nothing below may need a destructor: longjmp skips them. What libjpeg
  // allocated goes with jpeg_destroy_decompress.
  if (setjmp(err.jump) != 0) {
    jpeg_destroy_decompress(&cinfo);
    return ImageError{SkipKind::kCorrupt, std::string("corrupt JPEG: ") + err.message};
  }
  jpeg_create_decompress(&cinfo);
  cinfo.progress = &err.progress;
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.scale_num = static_cast<unsigned int>(scale.num);
  cinfo.scale_denom = static_cast<unsigned int>(scale.denom);
  cinfo.out_color_space = plan.cmyk ? JCS_CMYK : JCS_EXT_RGB;
  jpeg_start_decompress(&cinfo);
  if (cinfo.output_width != plan.scaled_width || cinfo.output_height != plan.scaled_height ||
      cinfo.output_components != static_cast<int>(plan.cmyk ? kCmykChannels : kChannels)) {
    std::snprintf(err.message, sizeof(err.message), "decodes to %ux%u, not the %ux%u its header promised",
                  cinfo.output_width, cinfo.output_height, plan.scaled_width, plan.scaled_height);
    std::longjmp(err.jump, 1);
  }
  const uint32_t in_channels = plan.cmyk ? kCmykChannels : kChannels;
  const uint64_t out_pitch = static_cast<uint64_t>(plan.width) * kChannels;
  const uint32_t copy_w = std::min(plan.width, plan.scaled_width);
  const uint32_t copy_h = std::min(plan.height, plan.scaled_height);
  const uint32_t src_x = (plan.scaled_width - copy_w) / 2, src_y = (plan.scaled_height - copy_h) / 2;
  const uint32_t dst_x = (plan.width - copy_w) / 2, dst_y = (plan.height - copy_h) / 2;
  JDIMENSION x0 = 0;
  if (copy_w < plan.scaled_width) {
    x0 = src_x > kCropMargin ? src_x - kCropMargin : 0;
    JDIMENSION width = std::min<JDIMENSION>(plan.scaled_width, src_x + copy_w + kCropMargin) - x0;
    jpeg_crop_scanline(&cinfo, &x0, &width);  // widens to whole blocks: x0 <= src_x, end >= src_x + copy_w
  }
  if (copy_w != plan.width || copy_h != plan.height) std::memset(out, 0, plan.output_bytes);
  if (src_y > 0) jpeg_skip_scanlines(&cinfo, src_y);
  const uint8_t* from = row + static_cast<uint64_t>(src_x - x0) * in_channels;
  JSAMPROW rows[1] = {row};
  for (uint32_t y = 0; y < copy_h; ++y) {
    jpeg_read_scanlines(&cinfo, rows, 1);
    uint8_t* to = out + (dst_y + y) * out_pitch + static_cast<uint64_t>(dst_x) * kChannels;
    if (plan.cmyk) {
      for (uint32_t x = 0; x < copy_w; ++x) CmykToRgb(from + x * kCmykChannels, plan.inverted_cmyk, to + x * kChannels);
    } else {
      std::memcpy(to, from, static_cast<uint64_t>(copy_w) * kChannels);
    }
  }
  const JDIMENSION below = cinfo.output_height - cinfo.output_scanline;
  if (below > 1) jpeg_skip_scanlines(&cinfo, below - 1);
  if (below > 0) jpeg_read_scanlines(&cinfo, rows, 1);
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return std::nullopt;
}

}  // namespace oomguard::feed
