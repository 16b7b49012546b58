#include "compiler/library/conv2d.h"

#include "compiler/library/parallel.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace txla::compiler::library {
namespace {

void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

// Per-group sizes of the GEMMs.
struct Sizes {
  int64_t group_in, group_out, cols_rows, plane_out, plane_in;
  explicit Sizes(const Conv2dGeometry& g)
      : group_in(g.in_channels / g.groups),
        group_out(g.out_channels / g.groups),
        cols_rows(g.in_channels / g.groups * g.kernel_h * g.kernel_w),
        plane_out(g.out_h * g.out_w),
        plane_in(g.in_h * g.in_w) {}
};

// A 1x1 kernel with unit stride and no padding reads the image itself as its column matrix.
bool IsPointwise(const Conv2dGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 &&
         g.pad_h == 0 && g.pad_w == 0;
}

// cols[(c, kh, kw), (oh, ow)] = x[c, oh*s - p + kh*d, ...] (zero outside the image), for the
// `channels` channels starting at x.
template <typename T>
void Im2Col(const Conv2dGeometry& g, int64_t channels, const T* x, T* cols) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        T* row = cols + ((c * g.kernel_h + kh) * g.kernel_w + kw) * g.out_h * g.out_w;
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
void Col2ImAdd(const Conv2dGeometry& g, int64_t channels, const T* cols, T* dx) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const T* row = cols + ((c * g.kernel_h + kh) * g.kernel_w + kw) * g.out_h * g.out_w;
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

// Work small enough that starting threads costs more than it saves stays on one thread.
int ThreadsFor(const Conv2dGeometry& g) {
  double flops = 2.0 * g.batch * g.out_channels * g.out_h * g.out_w * g.in_channels / g.groups *
                 g.kernel_h * g.kernel_w;
  return flops < 2e6 ? 1 : NumThreads();
}

}  // namespace

int NumThreads() {
  static const int threads = [] {
    const char* env = std::getenv("TXLA_NUM_THREADS");
    int n = env ? std::atoi(env) : 0;
    if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, n);
  }();
  return threads;
}

Conv2dGeometry Conv2dGeometryFrom(const int64_t* f) {
  return {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15]};
}

template <typename T>
void Conv2dForward(const T* x, const T* w, T* y, const int64_t* geometry) {
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  const Sizes s(g);
  const bool pointwise = IsPointwise(g);
  ParallelChunks(g.batch, ThreadsFor(g), [&](int, int64_t begin, int64_t end) {
    std::vector<T> cols(pointwise ? 0 : s.cols_rows * s.plane_out);
    for (int64_t n = begin; n < end; ++n)
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const T* xg = x + (n * g.in_channels + grp * s.group_in) * s.plane_in;
        if (!pointwise) Im2Col(g, s.group_in, xg, cols.data());
        Gemm(false, false, s.group_out, s.plane_out, s.cols_rows, w + grp * s.group_out * s.cols_rows,
             s.cols_rows, pointwise ? xg : cols.data(), s.plane_out, T(0),
             y + (n * g.out_channels + grp * s.group_out) * s.plane_out, s.plane_out);
      }
  });
}

template <typename T>
void Conv2dBackwardInput(const T* dy, const T* w, T* dx, const int64_t* geometry) {
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  const Sizes s(g);
  const bool pointwise = IsPointwise(g);
  ParallelChunks(g.batch, ThreadsFor(g), [&](int, int64_t begin, int64_t end) {
    std::vector<T> cols(pointwise ? 0 : s.cols_rows * s.plane_out);
    for (int64_t n = begin; n < end; ++n)
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        T* dxg = dx + (n * g.in_channels + grp * s.group_in) * s.plane_in;
        // cols = w_g^T dy_g: [cols_rows, plane_out]
        Gemm(true, false, s.cols_rows, s.plane_out, s.group_out, w + grp * s.group_out * s.cols_rows,
             s.cols_rows, dy + (n * g.out_channels + grp * s.group_out) * s.plane_out, s.plane_out,
             T(0), pointwise ? dxg : cols.data(), s.plane_out);
        if (!pointwise) {
          std::fill(dxg, dxg + s.group_in * s.plane_in, T(0));
          Col2ImAdd(g, s.group_in, cols.data(), dxg);
        }
      }
  });
}

template <typename T>
void Conv2dBackwardFilter(const T* dy, const T* x, T* dw, const int64_t* geometry) {
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  const Sizes s(g);
  const bool pointwise = IsPointwise(g);
  const int64_t weight_size = g.out_channels * s.cols_rows;
  const int threads = ThreadsFor(g);
  // Each thread sums its images into its own partial gradient; the partials are added at the end.
  std::vector<std::vector<T>> partials(threads > 1 ? threads - 1 : 0, std::vector<T>(weight_size));
  ParallelChunks(g.batch, threads, [&](int t, int64_t begin, int64_t end) {
    T* acc = t == 0 ? dw : partials[t - 1].data();
    std::fill(acc, acc + weight_size, T(0));
    std::vector<T> cols(pointwise ? 0 : s.cols_rows * s.plane_out);
    for (int64_t n = begin; n < end; ++n)
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const T* xg = x + (n * g.in_channels + grp * s.group_in) * s.plane_in;
        if (!pointwise) Im2Col(g, s.group_in, xg, cols.data());
        // dw_g += dy_g [group_out, plane_out] * cols^T [plane_out, cols_rows]
        Gemm(false, true, s.group_out, s.cols_rows, s.plane_out,
             dy + (n * g.out_channels + grp * s.group_out) * s.plane_out, s.plane_out,
             pointwise ? xg : cols.data(), s.plane_out, T(1), acc + grp * s.group_out * s.cols_rows,
             s.cols_rows);
      }
  });
  if (g.batch == 0) std::fill(dw, dw + weight_size, T(0));
  for (const auto& p : partials)
    for (int64_t i = 0; i < weight_size; ++i) dw[i] += p[i];
}

template void Conv2dForward<float>(const float*, const float*, float*, const int64_t*);
template void Conv2dForward<double>(const double*, const double*, double*, const int64_t*);
template void Conv2dBackwardInput<float>(const float*, const float*, float*, const int64_t*);
template void Conv2dBackwardInput<double>(const double*, const double*, double*, const int64_t*);
template void Conv2dBackwardFilter<float>(const float*, const float*, float*, const int64_t*);
template void Conv2dBackwardFilter<double>(const double*, const double*, double*, const int64_t*);

}  // namespace txla::compiler::library
