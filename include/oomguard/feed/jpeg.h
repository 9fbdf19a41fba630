// JPEG decoding for the feed pipeline (TurboJPEG), in two steps so memory can
// be reserved before it is allocated:
//   1. ReadHeader() parses only the header (dimensions);
//   2. PlanDecode() computes the exact bytes the output (and any scratch) needs
//      at the chosen DCT scale and fixed size;
//   3. the caller reserves and allocates those bytes, then Decode() fills them.
// Output is 8-bit RGB, rows packed (HWC). With a fixed size (--size WxH) the
// scaled image is centre-cropped and/or zero-padded to exactly W x H. The
// decoder writes straight into the output: an image that fits is decoded at
// the output's pitch; a crop decodes only the kept rows and columns, row by
// row through one row of scratch. CMYK and YCCK JPEGs (print workflows,
// Photoshop) are decoded the same way to CMYK rows and converted to RGB; a
// file with an Adobe APP14 marker stores its inks inverted (0 = full ink), as
// Photoshop writes them.
//
// Thread safety: a JpegDecoder holds one TurboJPEG handle and is NOT safe to
// share between threads; make one per thread. The free functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "oomguard/result.h"

namespace oomguard::feed {

// libjpeg-turbo decodes at 1/1, 1/2, 1/4 or 1/8 of the size in the DCT itself,
// at almost no extra cost.
struct ScaleFactor {
  int num = 1;
  int denom = 1;
  bool operator==(const ScaleFactor&) const = default;
};
// Accepts "1", "1/1", "1/2", "1/4", "1/8".
Result<ScaleFactor> ParseScale(std::string_view text);
std::string ToString(ScaleFactor scale);

struct ImageSize {
  uint32_t width = 0;
  uint32_t height = 0;
  bool operator==(const ImageSize&) const = default;
};
// Accepts "WxH" with 1 <= W, H <= 65535 (e.g. "224x224").
Result<ImageSize> ParseImageSize(std::string_view text);

inline constexpr uint32_t kChannels = 3;  // RGB

struct JpegHeader {
  uint32_t width = 0;
  uint32_t height = 0;
  bool cmyk = false;           // four-channel CMYK or YCCK
  bool inverted_cmyk = false;  // CMYK with an Adobe marker: stored as 255 - ink
};

// Why an image cannot be used; the pipeline counts skips by kind.
enum class SkipKind { kEmptyFile, kReadError, kNotJpeg, kCorrupt, kTooManyPixels, kOverBudget };
const char* ToString(SkipKind kind);  // "empty_file", "read_error", ...

struct ImageError {
  SkipKind kind;
  std::string message;  // "corrupt JPEG: Premature end of JPEG file"
};

struct DecodePlan {
  uint32_t scaled_width = 0;   // after DCT scaling
  uint32_t scaled_height = 0;
  uint32_t width = 0;          // delivered (== fixed size when one is set)
  uint32_t height = 0;
  uint64_t output_bytes = 0;   // width * height * 3
  // One decoded row (scaled width; RGB, or CMYK at 4 bytes a pixel) when
  // cropping or for every CMYK source; 0 when decoding straight into the output.
  uint64_t scratch_bytes = 0;
  bool cmyk = false;
  bool inverted_cmyk = false;
};

// Computes the decode at `scale`, then crop/pad to `size` if given. Fails
// with kTooManyPixels when the source has more than max_pixels pixels.
std::optional<ImageError> PlanDecode(const JpegHeader& header, ScaleFactor scale,
                                     const std::optional<ImageSize>& size, uint64_t max_pixels,
                                     DecodePlan* plan);

// Never throws: a TurboJPEG handle that cannot be made (out of memory) is
// reported by ReadHeader/Decode as an error value, so pipeline threads carry
// on or stop cleanly.
class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // Fails with kEmptyFile, kNotJpeg or kCorrupt (kOverBudget: no handle).
  std::optional<ImageError> ReadHeader(const uint8_t* data, uint64_t size, JpegHeader* header);

  // Decodes into out (plan.output_bytes). scratch must hold plan.scratch_bytes
  // (may be null when that is 0). A warning from libjpeg (truncated data, bad
  // Huffman code) is an error: the image is not delivered half grey.
  std::optional<ImageError> Decode(const uint8_t* data, uint64_t size, ScaleFactor scale,
                                   const DecodePlan& plan, uint8_t* out, uint8_t* scratch);

 private:
  // After an error TurboJPEG's handle can be left mid-stream; a new one is cheap.
  void Reset();
  // Makes the handle if there is none; false when TurboJPEG cannot.
  bool EnsureHandle();
  // The crop and CMYK path (libjpeg's scanline API): see jpeg.cc.
  std::optional<ImageError> DecodeRows(const uint8_t* data, uint64_t size, ScaleFactor scale, const DecodePlan& plan,
                                       uint8_t* out, uint8_t* row);
  void* handle_;
};

}  // namespace oomguard::feed
