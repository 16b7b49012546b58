#include "compiler/library/pool2d.h"

#include <algorithm>

namespace txla::compiler::library {

Pool2dGeometry Pool2dGeometryFrom(const int64_t* f) {
  return {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12]};
}

template <typename T>
void MaxPool2dIndices(const T* x, int64_t* indices, const int64_t* geometry) {
  const Pool2dGeometry g = Pool2dGeometryFrom(geometry);
  for (int64_t p = 0; p < g.planes; ++p) {
    const T* plane = x + p * g.in_h * g.in_w;
    int64_t* out = indices + p * g.out_h * g.out_w;
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        int64_t best = -1;
        T best_value = T(0);
        for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
          int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
          if (ih < 0 || ih >= g.in_h) continue;
          for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
            int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
            if (iw < 0 || iw >= g.in_w) continue;
            T v = plane[ih * g.in_w + iw];
            // ATen's rule: a larger value or a NaN replaces the maximum.
            if (best < 0 || v > best_value || v != v) {
              best = ih * g.in_w + iw;
              best_value = v;
            }
          }
        }
        out[oh * g.out_w + ow] = best;
      }
  }
}

template <typename T>
void MaxPool2dBackward(const T* dy, const int64_t* indices, T* dx, const int64_t* geometry) {
  const Pool2dGeometry g = Pool2dGeometryFrom(geometry);
  std::fill(dx, dx + g.planes * g.in_h * g.in_w, T(0));
  for (int64_t p = 0; p < g.planes; ++p) {
    T* plane = dx + p * g.in_h * g.in_w;
    const T* grad = dy + p * g.out_h * g.out_w;
    const int64_t* idx = indices + p * g.out_h * g.out_w;
    for (int64_t o = 0; o < g.out_h * g.out_w; ++o)
      if (idx[o] >= 0) plane[idx[o]] += grad[o];
  }
}

template void MaxPool2dIndices<float>(const float*, int64_t*, const int64_t*);
template void MaxPool2dIndices<double>(const double*, int64_t*, const int64_t*);
template void MaxPool2dBackward<float>(const float*, const int64_t*, float*, const int64_t*);
template void MaxPool2dBackward<double>(const double*, const int64_t*, double*, const int64_t*);

}  // namespace txla::compiler::library
