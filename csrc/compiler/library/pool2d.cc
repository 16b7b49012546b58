#include "compiler/library/pool2d.h"

#include <algorithm>
#include <vector>

#include "compiler/library/parallel.h"
#include "runtime/scalar_ops.h"

namespace txla::compiler::library {

Pool2dGeometry Pool2dGeometryFrom(const int64_t* f) {
  return {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12]};
}

namespace {

// Windows inside the image (no padding reached): no bounds checks in the inner loop.
bool WindowsInside(const Pool2dGeometry& g) {
  return g.pad_h == 0 && g.pad_w == 0 &&
         (g.out_h - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h < g.in_h &&
         (g.out_w - 1) * g.stride_w + (g.kernel_w - 1) * g.dilation_w < g.in_w;
}

// The position in its plane of window (oh, ow)'s maximum: the first position in the image seeds
// it, txla_max_takes says which later one replaces it; -1 for a window wholly in padding.
// `g` by value: callers keep it in locals, which the stores they make cannot alias.
template <typename T>
inline int64_t WindowArgmax(const T* plane, const Pool2dGeometry g, bool inside, int64_t oh, int64_t ow) {
  if (inside) {
    // Offsets from the window's corner; the first position seeds the maximum.
    const int64_t corner = oh * g.stride_h * g.in_w + ow * g.stride_w;
    const T* base = plane + corner;
    int64_t best = 0;
    T best_value = base[0];
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = kh == 0 ? 1 : 0; kw < g.kernel_w; ++kw) {
        const int64_t offset = kh * g.dilation_h * g.in_w + kw * g.dilation_w;
        const T v = base[offset];
        const bool take = txla_max_takes(v, best_value);
        best = take ? offset : best;
        best_value = take ? v : best_value;
      }
    return corner + best;
  }
  int64_t best = -1;
  T best_value = T(0);
  for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
    const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
    if (ih < 0 || ih >= g.in_h) continue;
    for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
      const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
      if (iw < 0 || iw >= g.in_w) continue;
      const T v = plane[ih * g.in_w + iw];
      const bool take = (best < 0) | txla_max_takes(v, best_value);
      best = take ? ih * g.in_w + iw : best;
      best_value = take ? v : best_value;
    }
  }
  return best;
}

}  // namespace

template <typename T>
void MaxPool2dIndices(const T* x, int64_t* indices, const int64_t* geometry) {
  const Pool2dGeometry g = Pool2dGeometryFrom(geometry);
  const bool inside = WindowsInside(g);
  const int threads = g.planes * g.out_h * g.out_w < 16384 ? 1 : NumThreads();
  ParallelChunks(g.planes, threads, [x, indices, g, inside](int, int64_t begin, int64_t end) {
    const Pool2dGeometry geo = g;  // a local: the int64 stores below cannot alias it
    std::vector<int64_t> row(geo.out_w);
    for (int64_t p = begin; p < end; ++p) {
      const T* plane = x + p * geo.in_h * geo.in_w;
      for (int64_t oh = 0; oh < geo.out_h; ++oh) {
        for (int64_t ow = 0; ow < geo.out_w; ++ow) row[ow] = WindowArgmax(plane, geo, inside, oh, ow);
        std::copy(row.begin(), row.end(), indices + (p * geo.out_h + oh) * geo.out_w);
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

template <typename T>
void MaxPool2dBackwardFromInput(const T* dy, const T* x, T* dx, const int64_t* geometry) {
  const Pool2dGeometry g = Pool2dGeometryFrom(geometry);
  const bool inside = WindowsInside(g);
  const int threads = g.planes * g.in_h * g.in_w < 16384 ? 1 : NumThreads();
  ParallelChunks(g.planes, threads, [=](int, int64_t begin, int64_t end) {
    const Pool2dGeometry geo = g;
    const int64_t plane_in = geo.in_h * geo.in_w, plane_out = geo.out_h * geo.out_w;
    std::fill(dx + begin * plane_in, dx + end * plane_in, T(0));
    for (int64_t p = begin; p < end; ++p) {
      const T* plane = x + p * plane_in;
      const T* grad = dy + p * plane_out;
      T* out = dx + p * plane_in;
      for (int64_t oh = 0; oh < geo.out_h; ++oh)
        for (int64_t ow = 0; ow < geo.out_w; ++ow) {
          const int64_t best = WindowArgmax(plane, geo, inside, oh, ow);
          if (best >= 0) out[best] += grad[oh * geo.out_w + ow];
        }
    }
  });
}

template void MaxPool2dIndices<float>(const float*, int64_t*, const int64_t*);
template void MaxPool2dIndices<double>(const double*, int64_t*, const int64_t*);
template void MaxPool2dBackward<float>(const float*, const int64_t*, float*, const int64_t*);
template void MaxPool2dBackward<double>(const double*, const int64_t*, double*, const int64_t*);
template void MaxPool2dBackwardFromInput<float>(const float*, const float*, float*, const int64_t*);
template void MaxPool2dBackwardFromInput<double>(const double*, const double*, double*, const int64_t*);

}  // namespace txla::compiler::library
