// oneDNN scratch of CPU convolutions that the shapes alone do not give (data/conv_scratch.json,
// derived from PyTorch 1.13 probes by tools/probe_scratch.py --fit, embedded in the library).
// Thread safety: the embedded table is parsed once, on first use; reading it is safe from any thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "oomguard/result.h"

namespace oomguard::plan {

// The weight gradient of a 3-D convolution with one group, a kernel wider than 1 and
// min_in_channels..max_in_channels input channels runs oneDNN's gemm implementation, one depth
// slice at a time. Its scratch does not grow with the batch: col_copies x the im2col buffer of one
// slice (in_channels x kernel volume x output height x width elements) + weight_copies x the weight
// bytes + fixed_bytes. From pack_min_out_channels output channels on, sgemm adds its packing buffer
// (see PackBytes). Those numbers follow the sgemm blocking of the CPU's ISA (measured on AVX-512):
// the planner warns with them.
// Whether oneDNN's sgemm (AVX-512, one thread, as PyTorch 1.13 bundles it: gemm_driver's
// nocopy_checker_avx512) runs the weight gradient's gemm without packing its operands. The gemm
// is sgemm("T", "N", m = in_channels x kernel volume, n = out_channels, k = output positions of one
// depth slice) with lda = k, ldb = `leading`, ldc = m. The thresholds are oneDNN's; the committed
// probes (bench/results/conv_scratch_probes.json, 156 layers of 4-15 channels) and dev probes of
// 16-512 channels agree with it everywhere.
inline bool SgemmSkipsPacking(uint64_t m, uint64_t n, uint64_t k, uint64_t leading) {
  if (m == 0 || n == 0) return false;
  constexpr uint64_t kBadLeading = 256;
  const bool lda_bad = k % kBadLeading == 0, ldb_bad = leading % kBadLeading == 0, ldc_bad = m % kBadLeading == 0;
  // Sequential transposed-A gemms with a small n pack; so do those with two bad leading dims.
  if (m > 100 && ((m < 1200 && n < 200 && k < 1200) || (lda_bad && ldb_bad))) return false;
  // Copying costs too much against a thin m or n.
  if (1.0 / static_cast<double>(m) + 1.0 / static_cast<double>(n) >= 0.00196) return true;
  if ((lda_bad || ldb_bad || ldc_bad) && m >= 32 && n >= 16) return false;
  if (m <= 378 && n <= 378 && k >= 378) return false;
  if (m >= 378 && k >= 378) return false;
  return m <= 28 || n <= 28 || k <= 1;
}

// Whether an sgemm call of oneDNN 2.6.3 (f32, neither operand pre-packed) runs as a matrix-vector
// product: gemm_threading_driver tries jump_to_gemv (gemv_driver.cpp) before it allocates anything,
// and that takes every call with n = 1 (transa "T", or "N" unpacked) and every call with m = 1
// (transb "N", or "T" unpacked) - any call of the gemm convolution with a dimension of 1. The
// convolution's data gemms are ("N", "N", m = output positions, n = output channels of a group) in
// forward and ("N", "T", m = output positions, n = input channels of a group x kernel volume) for the
// input gradient (gemm_convolution.cpp execute_forward_ncsp / execute_backward_data_ncsp): a one-position
// map, a one-channel output or a one-column input gradient takes no sgemm buffer.
inline bool SgemmRunsGemv(uint64_t m, uint64_t n) { return m == 1 || n == 1; }

struct GemmWeightGradient3d {
  int64_t min_in_channels = 0;
  int64_t max_in_channels = -1;  // empty range: no rule
  uint64_t col_copies = 0;
  uint64_t weight_copies = 0;
  uint64_t fixed_bytes = 0;
  int64_t pack_min_out_channels = 0;
  uint64_t pack_row_round = 1;
  uint64_t pack_col_round = 1;
  uint64_t pack_min_depth = 0;
  uint64_t pack_max_depth = 1;
  uint64_t pack_fixed_bytes = 0;
  uint64_t pack_beyond_bytes = 0;  // the buffer of a gemm sgemm runs without packing (SgemmSkipsPacking)
  uint64_t pack_worst_abs_error = 0;  // the largest miss of the packing rule over the probes

  // sgemm's own buffer in one of the convolution's data gemms (m x n, see SgemmRunsGemv): the buffer
  // of a gemm it runs without packing, none where the call is a matrix-vector product.
  uint64_t DataGemmBufferBytes(uint64_t m, uint64_t n) const { return SgemmRunsGemv(m, n) ? 0 : pack_beyond_bytes; }

  // The packing buffer of a gemm of `rows` = in_channels x kernel volume, `cols` = out_channels and
  // `depth` = output height x width: both operands packed for one depth block, 4 bytes x block x
  // (rows rounded up to pack_row_round + cols rounded up to pack_col_round) + pack_fixed_bytes; the
  // block is the depth, at least pack_min_depth; above pack_max_depth half of it, and from twice
  // pack_max_depth on pack_max_depth (oneDNN's get_k_padd). More
  // `leading` is the output gradient's leading dimension (output positions of every depth slice).
  // Where sgemm does not pack at all (SgemmSkipsPacking): pack_beyond_bytes.
  uint64_t PackBytes(uint64_t rows, uint64_t cols, uint64_t depth, uint64_t leading) const {
    if (SgemmSkipsPacking(rows, cols, depth, leading)) return pack_beyond_bytes;
    // gemm_driver's get_k_padd (oneDNN 2.6.3, f32 on AVX-512: bk = bk_traditional = 384): the depth
    // itself up to one block (at least pack_min_depth), half of it below two blocks, else one block -
    // not equal blocks (probes conv1d_s2_only, 1024 positions, and conv2d_k3x15_mid, 800: planned
    // 28224 and 142240 bytes low with blocks of 342 and 267).
    const uint64_t block = depth <= pack_max_depth       ? std::max(pack_min_depth, depth)
                           : depth < 2 * pack_max_depth ? (depth + 1) / 2
                                                         : pack_max_depth;
    const uint64_t rows_padded = (rows + pack_row_round - 1) / pack_row_round * pack_row_round;
    const uint64_t cols_padded = (cols + pack_col_round - 1) / pack_col_round * pack_col_round;
    return 4 * block * (rows_padded + cols_padded) + pack_fixed_bytes;
  }
};

// Which per-group channel counts oneDNN's direct (jit) f32 kernels take for a grouped convolution
// that is not depthwise (data/conv_scratch.json grouped_direct_kernels, read from oneDNN 2.6.3's
// init_conf checks): a group whose input and output channels both divide by one of the blocks runs
// a direct kernel; any other runs x64:gemm:jit on plain buffers. Empty lists: no rule.
struct GroupedDirectKernels {
  std::vector<int64_t> data_channel_blocks;            // forward and input gradient
  std::vector<int64_t> weight_gradient_channel_blocks;  // weight gradient
  uint64_t gemm_forward_l2_bytes = 0;                   // 0: forward unfolds all output positions

  bool Known() const { return !data_channel_blocks.empty() && !weight_gradient_channel_blocks.empty(); }
  // The first block that divides both channel counts of a group (0: none does).
  static int64_t FirstBlock(const std::vector<int64_t>& blocks, int64_t in_per_group, int64_t out_per_group) {
    for (int64_t b : blocks) {
      if (b > 0 && in_per_group % b == 0 && out_per_group % b == 0) return b;
    }
    return 0;
  }
  // The block the direct forward / input-gradient kernel uses (0: it refuses, gemm runs).
  int64_t DataBlock(int64_t in_per_group, int64_t out_per_group) const {
    return FirstBlock(data_channel_blocks, in_per_group, out_per_group);
  }
  bool WeightGradientDirect(int64_t in_per_group, int64_t out_per_group) const {
    return FirstBlock(weight_gradient_channel_blocks, in_per_group, out_per_group) != 0;
  }
  // The block the direct weight-gradient kernel would use (0: none): 16 is the AVX-512 kernel's
  // (which falls back to the AVX2 one), a smaller block the AVX2 kernel's alone.
  int64_t WeightGradientBlock(int64_t in_per_group, int64_t out_per_group) const {
    return FirstBlock(weight_gradient_channel_blocks, in_per_group, out_per_group);
  }
  // How many output positions (of `positions`) the gemm forward of a 1-D/2-D group unfolds at once:
  // oneDNN's (gemm_convolution_utils init_conf, one thread) blocking that keeps a group's columns,
  // input rows and weights in the per-core L2: (L2 - kernel x out x in) / ((strides + kernel) x in +
  // out) floats, rounded down to 16, at least 16. 3-D layers are not blocked.
  uint64_t ForwardColumnPositions(int64_t in_per_group, int64_t out_per_group, int64_t kernel, int64_t stride_area,
                                  uint64_t positions) const {
    if (gemm_forward_l2_bytes == 0) return positions;
    const int64_t l2 = static_cast<int64_t>(gemm_forward_l2_bytes / 4);
    const int64_t fit = (l2 - kernel * out_per_group * in_per_group) / ((stride_area + kernel) * in_per_group + out_per_group);
    const uint64_t block = static_cast<uint64_t>(std::max<int64_t>(16, fit / 16 * 16));
    return std::min(block, positions);
  }
};

// One spatial axis of a convolution as oneDNN's init_conf reads it: input and output size, kernel,
// stride, begin padding and dilation (ONNX's: 1 is none).
struct ConvAxis {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, pad = 0, dilation = 1;
};

// The f32 input-gradient kernel oneDNN 2.6.3 (as PyTorch 1.13 bundles it, one thread, plain
// tensors handed over with format "any") picks for a convolution that is neither depthwise nor
// 1x1: the first of its list whose init_conf takes the layer.
enum class InputGradientKernel {
  kAvx512,  // jit_avx512_common_conv_bwd_data_kernel_f32: blocks of 16 (or 8 / 4 channels a group)
  kAvx2,    // jit_avx2_conv_bwd_data_kernel_f32: blocks of 8
  kGemm,    // gemm_convolution_bwd_data: im2col columns of one sample on plain buffers
};

// Which one it is, from the refusals of both direct kernels' init_conf (written from oneDNN
// 2.6.3's jit_avx512_common_conv_kernel.cpp and jit_avx2_conv_kernel_f32.cpp): a dilated, strided
// axis; a kernel the padding puts outside the input; channels that do not fill the blocks of a
// group; and the width blocking (ur_w: the AVX-512 kernel picks it from whether the kernel's rows,
// 2 input-channel blocks and the weights fit in `l1_bytes`, then refuses an unroll that is no
// multiple of the stride, left or right overflow past one unroll, and code above 256 KiB; the AVX2
// kernel needs equal height and width strides, no depth stride, and a blocking of at most 15
// registers). `axes` are depth, height and width (unit axes for 1-D and 2-D: PyTorch runs conv1d
// as 2-D over a unit height).
InputGradientKernel DirectInputGradientKernel(const ConvAxis (&axes)[3], int64_t in_per_group, int64_t out_per_group,
                                              int64_t groups, uint64_t l1_bytes);

// The f32 forward kernel oneDNN 2.6.3 picks for a dense (one group) convolution that is neither
// 1x1 (oneDNN's 1x1 kernel) nor one the padding puts outside the input, with one thread as PyTorch
// runs it: the first of its list whose init_conf takes the layer.
enum class ForwardKernel {
  kAvx512,  // jit_avx512_common_conv_fwd_kernel: output blocked by 16
  kAvx2,    // jit_avx2_conv_fwd_kernel_f32: output blocked by 8
  kGemm,    // gemm_convolution_fwd: im2col columns of one sample on plain buffers
};

// Which one it is, from jit_avx512_common_conv_fwd_kernel::init_conf (oneDNN 2.6.3,
// jit_avx512_common_conv_kernel.cpp): the width unroll ur_w = min(ow, 28), or 31 / (nb_oc_blocking + 1)
// where it takes the explicit-broadcast kernel (kernels at most 3 wide: nb_oc_blocking from the
// thread efficiency of its ow blocks, sized by `l2_bytes`; the embedded-broadcast test reads
// `l1_bytes`), then refuses a left padding or a right padding without the tail wider than one unroll,
// and code above 256 KiB (padding on both sides x kernel width x 16 input channels x unroll x 15
// bytes: a 'same'-padded 1-D kernel of 25 or more refuses it). Then jit_avx2_conv_fwd_kernel_f32
// (unroll 3: a left padding past 3 refuses it). `axes` are depth, height and width (unit axes for
// 1-D and 2-D); `spatial` the layer's own number of axes (ow blocking applies to 1-D and 2-D only).
ForwardKernel DenseForwardKernel(const ConvAxis (&axes)[3], int64_t in_channels, int64_t out_channels, int64_t batch,
                                 size_t spatial, uint64_t l1_bytes, uint64_t l2_bytes);

// The per-core L1 data cache oneDNN's init_conf sizes its blocking by (data/conv_scratch.json
// direct_input_gradient.l1_bytes: oneDNN 2.6.3's guess of 32 KiB where xbyak reads no cache
// hierarchy, as on AMD CPUs; an Intel CPU reports its own). 0: no rule, the planner keeps the
// direct kernel.
// other_l1_bytes: the per-core L1 sizes of other AVX-512 CPUs oneDNN reads (Intel's own cpuid: 48 KiB
// on Ice Lake and Sapphire Rapids), where the same layer may be refused or taken the other way: the
// plan lists the gemm's columns and sgemm's buffer as machine-dependent bytes then.
struct DirectInputGradient {
  uint64_t l1_bytes = 0;
  std::vector<uint64_t> other_l1_bytes;
  bool Known() const { return l1_bytes > 0; }
};

struct ConvScratchTable {
  GemmWeightGradient3d gemm_weight_gradient_3d;
  GroupedDirectKernels grouped_direct_kernels;
  DirectInputGradient direct_input_gradient;
};

// Parses a table; refuses a malformed one.
Result<ConvScratchTable> ParseConvScratchTable(std::string_view json);

// The embedded table (an empty rule when it does not parse: a build defect the tests catch).
const ConvScratchTable& EmbeddedConvScratchTable();

// Raw bytes of data/conv_scratch.json (embedded by src/plan/embed_files.cmake).
std::string_view EmbeddedConvScratchJson();

}  // namespace oomguard::plan
