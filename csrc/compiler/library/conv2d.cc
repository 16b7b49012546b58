#include "compiler/library/conv2d.h"

#include "compiler/library/conv2d_onednn.h"
#include "compiler/library/gemm.h"
#include "compiler/library/gemm_bf16.h"
#include "compiler/library/parallel.h"
#include "metrics/metrics.h"
#include "runtime/buffer.h"
#include "runtime/scalar_ops.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <type_traits>

namespace txla::compiler::library {
namespace {

using library::Gemm;

// A filter gradient whose weights outweigh its images this many times over is one GEMM of small
// depth over im2col columns, written straight into the plain OIHW gradient. Measured on a 2-core
// Zen 4 EPYC (interleaved, both threads): ResNet-18's last stage, 512x512x3x3 at 2x2 (a ratio of
// 36), 2.47 ms against oneDNN 2.6's 3.64 (it computes a blocked gradient and reorders 9 MB back),
// and 256->512 at stride 2 (12) 1.22 against 1.72; at 4.5 (256x256x3x3 at 4x4) oneDNN was
// faster, 1.80 against 2.17, and more so below.
constexpr double kFilterGradientByGemmRatio = 8;

// Scratch for the column matrices, from the device's block pool: a fresh 1 MB vector was zeroed
// and faulted in on every call.
template <typename T>
struct Scratch {
  explicit Scratch(int64_t elements)
      : block(std::max<size_t>(static_cast<size_t>(elements) * sizeof(T), 64)) {}
  T* data() const { return static_cast<T*>(block.data()); }
  runtime::PooledBlock block;
};

// Per-group sizes of the GEMMs.
struct Sizes {
  int64_t group_in, group_out, cols_rows, plane_out, plane_in;
  int64_t images_in, images_out, weights;  // element counts of x (and dx), y (and dy), w (and dw)
  explicit Sizes(const Conv2dGeometry& g)
      : group_in(g.in_channels / g.groups),
        group_out(g.out_channels / g.groups),
        cols_rows(g.in_channels / g.groups * g.kernel_h * g.kernel_w),
        plane_out(g.out_h * g.out_w),
        plane_in(g.in_h * g.in_w),
        images_in(g.batch * g.in_channels * plane_in),
        images_out(g.batch * g.out_channels * plane_out),
        weights(g.out_channels * cols_rows) {}
};

// cols[(c, kh, kw), (oh, ow)] = x[c, oh*s - p + kh*d, ...] (zero outside the image), for the
// `channels` channels starting at x.
template <typename T>
void Im2Col(const Conv2dGeometry& g, int64_t channels, const T* x, T* cols, int64_t ld) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        T* row = cols + ((c * g.kernel_h + kh) * g.kernel_w + kw) * ld;
        const T* plane = x + c * g.in_h * g.in_w;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
          T* out = row + oh * g.out_w;
          if (ih < 0 || ih >= g.in_h) {
            std::fill(out, out + g.out_w, T(0));
            continue;
          }
          const T* in = plane + ih * g.in_w;
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
            out[ow] = iw >= 0 && iw < g.in_w ? in[iw] : T(0);
          }
        }
      }
}

// The adjoint of Im2Col: dx[c, ih, iw] += cols[...] for every column entry that read it.
template <typename T>
void Col2ImAdd(const Conv2dGeometry& g, int64_t channels, const T* cols, int64_t ld, T* dx) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const T* row = cols + ((c * g.kernel_h + kh) * g.kernel_w + kw) * ld;
        T* plane = dx + c * g.in_h * g.in_w;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
          if (ih < 0 || ih >= g.in_h) continue;
          T* out = plane + ih * g.in_w;
          const T* in = row + oh * g.out_w;
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
            if (iw >= 0 && iw < g.in_w) out[iw] += in[ow];
          }
        }
      }
}

}  // namespace

Conv2dGeometry Conv2dGeometryFrom(const int64_t* f) {
  return {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15], f[16]};
}

Conv2dFootprint FootprintOf(const Conv2dGeometry& g) {
  return {static_cast<double>(g.out_channels) * g.in_channels / g.groups * g.kernel_h * g.kernel_w,
          static_cast<double>(g.batch) * (g.in_channels * g.in_h * g.in_w + g.out_channels * g.out_h * g.out_w)};
}

// The whole batch is one GEMM per group: the column matrix holds every image side by side
// ([rows, batch * plane_out]), so OpenBLAS sees one large product (and threads it) instead of
// a small one per image. Gathering into and scattering out of that layout is split over images.

// y[n, grp*Og + o, p] <-> yt[o, n * plane_out + p], in the direction `to_columns` says.
template <typename T>
void BatchColumns(const Conv2dGeometry& g, const Sizes& s, int64_t grp, bool to_columns, const T* from, T* to) {
  const int64_t ld = g.batch * s.plane_out;
  ParallelChunks(g.batch, NumThreads(), [&](int, int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n)
      for (int64_t o = 0; o < s.group_out; ++o) {
        int64_t image = (n * g.out_channels + grp * s.group_out + o) * s.plane_out;
        int64_t column = o * ld + n * s.plane_out;
        const T* src = from + (to_columns ? image : column);
        std::copy(src, src + s.plane_out, to + (to_columns ? column : image));
      }
  });
}

template <typename T>
void BatchIm2Col(const Conv2dGeometry& g, const Sizes& s, int64_t grp, const T* x, T* cols) {
  const int64_t ld = g.batch * s.plane_out;
  ParallelChunks(g.batch, NumThreads(), [&](int, int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n)
      Im2Col(g, s.group_in, x + (n * g.in_channels + grp * s.group_in) * s.plane_in, cols + n * s.plane_out, ld);
  });
}

template <typename T>
void Conv2dForward(const T* x, const T* w, const T* bias, T* y, const int64_t* geometry) {
  if (bias != nullptr) TXLA_COUNTER("ConvBiasInLibraryCall", 1);
  if constexpr (std::is_same_v<T, float>)
    if (OneDnnConv2dForward(x, w, bias, y, geometry)) return;
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  const Sizes s(g);
  if (g.batch == 0 || s.plane_out == 0) return;
  const int64_t ld = g.batch * s.plane_out;
  Scratch<T> cols(s.cols_rows * ld), yt(s.group_out * ld);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    BatchIm2Col(g, s, grp, x, cols.data());
    // With a bias, the GEMM adds to rows that start as the group's biases.
    for (int64_t o = 0; bias != nullptr && o < s.group_out; ++o)
      std::fill(yt.data() + o * ld, yt.data() + (o + 1) * ld, bias[grp * s.group_out + o]);
    Gemm(false, false, s.group_out, ld, s.cols_rows, w + grp * s.group_out * s.cols_rows, s.cols_rows,
         cols.data(), ld, bias != nullptr ? T(1) : T(0), yt.data(), ld);
    BatchColumns(g, s, grp, false, yt.data(), y);
  }
}

template <typename T>
void Conv2dBackwardInput(const T* dy, const T* w, T* dx, const int64_t* geometry) {
  if constexpr (std::is_same_v<T, float>)
    if (OneDnnConv2dBackwardInput(dy, w, dx, geometry)) return;
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  const Sizes s(g);
  std::fill(dx, dx + s.images_in, T(0));
  if (g.batch == 0 || s.plane_out == 0) return;
  const int64_t ld = g.batch * s.plane_out;
  Scratch<T> cols(s.cols_rows * ld), dyt(s.group_out * ld);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    BatchColumns(g, s, grp, true, dy, dyt.data());
    // cols = w_g^T dy_g: [cols_rows, batch * plane_out]
    Gemm(true, false, s.cols_rows, ld, s.group_out, w + grp * s.group_out * s.cols_rows, s.cols_rows,
         dyt.data(), ld, T(0), cols.data(), ld);
    ParallelChunks(g.batch, NumThreads(), [&](int, int64_t begin, int64_t end) {
      for (int64_t n = begin; n < end; ++n)
        Col2ImAdd(g, s.group_in, cols.data() + n * s.plane_out, ld,
                  dx + (n * g.in_channels + grp * s.group_in) * s.plane_in);
    });
  }
}

template <typename T>
void Conv2dBackwardFilter(const T* dy, const T* x, T* dw, const int64_t* geometry) {
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  if constexpr (std::is_same_v<T, float>) {
    const Conv2dFootprint f = FootprintOf(g);
    if (f.weights >= kFilterGradientByGemmRatio * f.images) TXLA_COUNTER("ConvFilterGradientsByGemm", 1);
    else if (OneDnnConv2dBackwardFilter(dy, x, dw, geometry)) return;
  }
  const Sizes s(g);
  std::fill(dw, dw + s.weights, T(0));
  if (g.batch == 0 || s.plane_out == 0) return;
  const int64_t ld = g.batch * s.plane_out;
  Scratch<T> cols(s.cols_rows * ld), dyt(s.group_out * ld);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    BatchIm2Col(g, s, grp, x, cols.data());
    BatchColumns(g, s, grp, true, dy, dyt.data());
    // dw_g = dy_g [group_out, batch * plane_out] * cols^T [batch * plane_out, cols_rows]
    Gemm(false, true, s.group_out, s.cols_rows, ld, dyt.data(), ld, cols.data(), ld, T(0),
         dw + grp * s.group_out * s.cols_rows, s.cols_rows);
  }
}

namespace {

// A bf16 operand of `elements` values widened (exactly) into pooled scratch.
Scratch<float> Widened(const uint16_t* x, int64_t elements) {
  Scratch<float> out(elements);
  float* to = out.data();
  ParallelChunks(elements, NumThreads(), [&](int, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) to[i] = txla_bf16_to_float(x[i]);
  });
  return out;
}

// A convolution whose weights outweigh its images (ResNet's last stages at small images): its
// passes as single bf16 GEMMs over im2col columns of bf16 values. oneDNN's kernels reorder the
// weights, or a blocked filter gradient, on every call, and their parts per thread are narrow.
//
// The GEMMs take every operand untransposed: oneDNN 2.6's AMX matmul does not read a transposed
// operand in place (it falls back to its AVX-512 kernels, several times slower), so the
// image-side matrices, small here, are transposed instead.
bool WeightsOutweighImages(const Conv2dGeometry& g) {
  const Conv2dFootprint f = FootprintOf(g);
  return f.weights >= kFilterGradientByGemmRatio * f.images;
}

// to[c, r] = from[r, c] for a rows x cols matrix, split over rows of the result.
template <typename T>
void Transpose(const T* from, int64_t rows, int64_t cols, T* to) {
  ParallelChunks(cols, NumThreads(), [&](int, int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c)
      for (int64_t r = 0; r < rows; ++r) to[c * rows + r] = from[r * cols + c];
  });
}

void Conv2dForwardBf16ByGemm(const uint16_t* x, const uint16_t* w, const float* bias, float* y,
                             const Conv2dGeometry& g) {
  const Sizes s(g);
  if (g.batch == 0 || s.plane_out == 0) return;
  const int64_t ld = g.batch * s.plane_out;
  Scratch<uint16_t> cols(s.cols_rows * ld);
  Scratch<float> yt(s.group_out * ld);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    BatchIm2Col(g, s, grp, x, cols.data());
    GemmBatchedBf16(1, false, false, s.group_out, ld, s.cols_rows, w + grp * s.group_out * s.cols_rows, s.cols_rows, 0,
                    cols.data(), ld, 0, yt.data(), ld, 0);
    for (int64_t o = 0; bias != nullptr && o < s.group_out; ++o) {
      float* row = yt.data() + o * ld;
      const float b = bias[grp * s.group_out + o];
      for (int64_t k = 0; k < ld; ++k) row[k] += b;
    }
    BatchColumns(g, s, grp, false, yt.data(), y);
  }
}

void Conv2dBackwardInputBf16ByGemm(const uint16_t* dy, const uint16_t* w, float* dx, const Conv2dGeometry& g) {
  const Sizes s(g);
  std::fill(dx, dx + s.images_in, 0.0f);
  if (g.batch == 0 || s.plane_out == 0) return;
  const int64_t ld = g.batch * s.plane_out;
  Scratch<uint16_t> dyt(s.group_out * ld), dyt_t(s.group_out * ld);
  Scratch<float> cols(s.cols_rows * ld), cols_t(s.cols_rows * ld);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    BatchColumns(g, s, grp, true, dy, dyt.data());
    // cols^T [ld, cols_rows] = dy_g^T [ld, group_out] w_g [group_out, cols_rows]
    Transpose(dyt.data(), s.group_out, ld, dyt_t.data());
    GemmBatchedBf16(1, false, false, ld, s.cols_rows, s.group_out, dyt_t.data(), s.group_out, 0,
                    w + grp * s.group_out * s.cols_rows, s.cols_rows, 0, cols_t.data(), s.cols_rows, 0);
    Transpose(cols_t.data(), ld, s.cols_rows, cols.data());
    ParallelChunks(g.batch, NumThreads(), [&](int, int64_t begin, int64_t end) {
      for (int64_t n = begin; n < end; ++n)
        Col2ImAdd(g, s.group_in, cols.data() + n * s.plane_out, ld,
                  dx + (n * g.in_channels + grp * s.group_in) * s.plane_in);
    });
  }
}

void Conv2dBackwardFilterBf16ByGemm(const uint16_t* dy, const uint16_t* x, float* dw, const Conv2dGeometry& g) {
  const Sizes s(g);
  std::fill(dw, dw + s.weights, 0.0f);
  if (g.batch == 0 || s.plane_out == 0) return;
  const int64_t ld = g.batch * s.plane_out;
  Scratch<uint16_t> cols(s.cols_rows * ld), cols_t(s.cols_rows * ld), dyt(s.group_out * ld);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    BatchIm2Col(g, s, grp, x, cols.data());
    BatchColumns(g, s, grp, true, dy, dyt.data());
    // dw_g [group_out, cols_rows] = dy_g [group_out, ld] cols^T [ld, cols_rows]
    Transpose(cols.data(), s.cols_rows, ld, cols_t.data());
    GemmBatchedBf16(1, false, false, s.group_out, s.cols_rows, ld, dyt.data(), ld, 0, cols_t.data(), s.cols_rows, 0,
                    dw + grp * s.group_out * s.cols_rows, s.cols_rows, 0);
  }
}

// A bf16 pass's path: bf16 GEMMs where the weights outweigh the images, else oneDNN's bf16
// kernels, else the operands widened for the f32 routine.
template <typename ByGemm, typename OneDnn, typename WidenedRoutine>
void RunBf16Pass(const Conv2dGeometry& g, ByGemm by_gemm, OneDnn one_dnn, WidenedRoutine widened) {
  if (WeightsOutweighImages(g)) {
    TXLA_COUNTER("ConvolutionBf16ByGemm", 1);
    by_gemm();
  } else if (!one_dnn()) {
    TXLA_COUNTER("ConvolutionBf16Widened", 1);
    widened();
  }
}

}  // namespace

void Conv2dForwardBf16(const uint16_t* x, const uint16_t* w, const float* bias, float* y, const int64_t* geometry) {
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  const Sizes s(g);
  RunBf16Pass(
      g, [&] { Conv2dForwardBf16ByGemm(x, w, bias, y, g); },
      [&] { return OneDnnConv2dForwardBf16(x, w, bias, y, geometry); },
      [&] {
        Conv2dForward<float>(Widened(x, s.images_in).data(), Widened(w, s.weights).data(), bias, y, geometry);
      });
}

void Conv2dBackwardInputBf16(const uint16_t* dy, const uint16_t* w, float* dx, const int64_t* geometry) {
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  const Sizes s(g);
  RunBf16Pass(
      g, [&] { Conv2dBackwardInputBf16ByGemm(dy, w, dx, g); },
      [&] { return OneDnnConv2dBackwardInputBf16(dy, w, dx, geometry); },
      [&] {
        Conv2dBackwardInput<float>(Widened(dy, s.images_out).data(), Widened(w, s.weights).data(), dx, geometry);
      });
}

void Conv2dBackwardFilterBf16(const uint16_t* dy, const uint16_t* x, float* dw, const int64_t* geometry) {
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  const Sizes s(g);
  RunBf16Pass(
      g, [&] { Conv2dBackwardFilterBf16ByGemm(dy, x, dw, g); },
      [&] { return OneDnnConv2dBackwardFilterBf16(dy, x, dw, geometry); },
      [&] {
        Conv2dBackwardFilter<float>(Widened(dy, s.images_out).data(), Widened(x, s.images_in).data(), dw, geometry);
      });
}

template void Conv2dForward<float>(const float*, const float*, const float*, float*, const int64_t*);
template void Conv2dForward<double>(const double*, const double*, const double*, double*, const int64_t*);
template void Conv2dBackwardInput<float>(const float*, const float*, float*, const int64_t*);
template void Conv2dBackwardInput<double>(const double*, const double*, double*, const int64_t*);
template void Conv2dBackwardFilter<float>(const float*, const float*, float*, const int64_t*);
template void Conv2dBackwardFilter<double>(const double*, const double*, double*, const int64_t*);

}  // namespace txla::compiler::library
