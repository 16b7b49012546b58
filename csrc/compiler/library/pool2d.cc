#include "compiler/library/pool2d.h"

#include <algorithm>
#include <vector>

#include "compiler/library/parallel.h"

namespace txla::compiler::library {

Pool2dGeometry Pool2dGeometryFrom(const int64_t* f) {
  return {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12]};
}

template <typename T>
void MaxPool2dIndices(const T* x, int64_t* indices, const int64_t* geometry) {
  const Pool2dGeometry g = Pool2dGeometryFrom(geometry);
  // Windows inside the image (no padding reached): no bounds checks in the inner loop.
  const bool inside = g.pad_h == 0 && g.pad_w == 0 &&
                      (g.out_h - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h < g.in_h &&
                      (g.out_w - 1) * g.stride_w + (g.kernel_w - 1) * g.dilation_w < g.in_w;
  const int threads = g.planes * g.out_h * g.out_w < 16384 ? 1 : NumThreads();
  ParallelChunks(g.planes, threads, [x, indices, g, inside](int, int64_t begin, int64_t end) {
    // Locals, not captured references: the int64 stores below could otherwise alias them.
    const int64_t in_h = g.in_h, in_w = g.in_w, out_h = g.out_h, out_w = g.out_w;
    const int64_t kernel_h = g.kernel_h, kernel_w = g.kernel_w, stride_h = g.stride_h,
                  stride_w = g.stride_w, pad_h = g.pad_h, pad_w = g.pad_w,
                  dilation_h = g.dilation_h, dilation_w = g.dilation_w;
    std::vector<int64_t> row(out_w);
    for (int64_t p = begin; p < end; ++p) {
      const T* plane = x + p * in_h * in_w;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        if (inside) {
          // Offsets from the window's corner; the first position seeds the maximum.
          for (int64_t ow = 0; ow < out_w; ++ow) {
            const int64_t corner = oh * stride_h * in_w + ow * stride_w;
            const T* base = plane + corner;
            int64_t best = 0;
            T best_value = base[0];
            for (int64_t kh = 0; kh < kernel_h; ++kh)
              for (int64_t kw = kh == 0 ? 1 : 0; kw < kernel_w; ++kw) {
                const int64_t offset = kh * dilation_h * in_w + kw * dilation_w;
                const T v = base[offset];
                // ATen's rule: a larger value or a NaN replaces the maximum.
                const bool take = (v > best_value) | (v != v);
                best = take ? offset : best;
                best_value = take ? v : best_value;
              }
            row[ow] = corner + best;
          }
          std::copy(row.begin(), row.end(), indices + (p * out_h + oh) * out_w);
          continue;
        }
        for (int64_t ow = 0; ow < out_w; ++ow) {
          int64_t best = -1;
          T best_value = T(0);
          for (int64_t kh = 0; kh < kernel_h; ++kh) {
            const int64_t ih = oh * stride_h - pad_h + kh * dilation_h;
            if (ih < 0 || ih >= in_h) continue;
            for (int64_t kw = 0; kw < kernel_w; ++kw) {
              const int64_t iw = ow * stride_w - pad_w + kw * dilation_w;
              if (iw < 0 || iw >= in_w) continue;
              const T v = plane[ih * in_w + iw];
              const bool take = (best < 0) | (v > best_value) | (v != v);
              best = take ? ih * in_w + iw : best;
              best_value = take ? v : best_value;
            }
          }
          row[ow] = best;
        }
        std::copy(row.begin(), row.end(), indices + (p * out_h + oh) * out_w);
      }
    }
  });
}

template <typename T>
void MaxPool2dBackward(const T* dy, const int64_t* indices, T* dx, const int64_t* geometry) {
  const Pool2dGeometry g = Pool2dGeometryFrom(geometry);
  // Planes are independent: each thread scatters into its own.
  const int threads = g.planes * g.in_h * g.in_w < 16384 ? 1 : NumThreads();
  ParallelChunks(g.planes, threads, [&](int, int64_t begin, int64_t end) {
    std::fill(dx + begin * g.in_h * g.in_w, dx + end * g.in_h * g.in_w, T(0));
    for (int64_t p = begin; p < end; ++p) {
      T* plane = dx + p * g.in_h * g.in_w;
      const T* grad = dy + p * g.out_h * g.out_w;
      const int64_t* idx = indices + p * g.out_h * g.out_w;
      for (int64_t o = 0; o < g.out_h * g.out_w; ++o)
        if (idx[o] >= 0) plane[idx[o]] += grad[o];
    }
  });
}

template void MaxPool2dIndices<float>(const float*, int64_t*, const int64_t*);
template void MaxPool2dIndices<double>(const double*, int64_t*, const int64_t*);
template void MaxPool2dBackward<float>(const float*, const int64_t*, float*, const int64_t*);
template void MaxPool2dBackward<double>(const double*, const int64_t*, double*, const int64_t*);

}  // namespace txla::compiler::library
