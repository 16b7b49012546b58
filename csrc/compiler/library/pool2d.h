// Max pooling's argmax and its gradient over the last two dimensions of a tensor (the leading
// dimensions are independent planes). The pooled values themselves are an HLO reduce-window,
// which fuses; these two need the position of each window's maximum.
#pragma once

#include <cstdint>

namespace txla::compiler::library {

struct Pool2dGeometry {
  int64_t planes, in_h, in_w, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};
constexpr int kPool2dGeometryFields = 13;
Pool2dGeometry Pool2dGeometryFrom(const int64_t* fields);

// indices[p, oh, ow] = ih * in_w + iw of the window's maximum (first one; NaN wins, as ATen).
template <typename T>
void MaxPool2dIndices(const T* x, int64_t* indices, const int64_t* geometry);
// dx[p, i] = sum of dy[p, o] over the outputs o whose index is i.
template <typename T>
void MaxPool2dBackward(const T* dy, const int64_t* indices, T* dx, const int64_t* geometry);
// The same gradient with each window's maximum found again in x (MaxPool2dIndices' rule), for a
// graph that has the pooled input at hand: no int64 index tensor is written and read back.
// (Generated code runs windows that tile the input as a loop kernel instead.)
template <typename T>
void MaxPool2dBackwardFromInput(const T* dy, const T* x, T* dx, const int64_t* geometry);

}  // namespace txla::compiler::library
