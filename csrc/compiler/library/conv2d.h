// 2-D convolution (NCHW input, OIHW kernel) and its two gradients: float32 through oneDNN
// (conv2d_onednn.h) where it is faster, otherwise as im2col + GEMM (gemm.h), images spread over
// threads. Generated code reaches these through the support table; the
// geometry comes as an int64 array laid out as Conv2dGeometry.
#pragma once

#include <cstdint>

namespace txla::compiler::library {

struct Conv2dGeometry {
  int64_t batch, in_channels, in_h, in_w;
  int64_t out_channels, kernel_h, kernel_w, out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;
  // 1: the user allowed algorithms that round differently from eager's direct sums (the HLO's
  // operand_precision is not `highest`), so oneDNN's Winograd kernels may run; 0: exact.
  int64_t fast_algorithms;
};
constexpr int kConv2dGeometryFields = 17;
Conv2dGeometry Conv2dGeometryFrom(const int64_t* fields);

// Elements of the weights and of the images (input and output) a convolution touches: which
// outweighs the other decides how its library call is split over threads and which library
// computes its filter gradient.
struct Conv2dFootprint {
  double weights, images;
};
Conv2dFootprint FootprintOf(const Conv2dGeometry& g);

// y[n, o, oh, ow] = sum over (c, kh, kw) of x[n, c, ih, iw] * w[o, c, kh, kw] (+ bias[o] when
// bias is not null: the layer's bias added in the library call's output pass, not in a pass of
// its own over y)
template <typename T>
void Conv2dForward(const T* x, const T* w, const T* bias, T* y, const int64_t* geometry);
// dx = the transposed convolution of dy with w
template <typename T>
void Conv2dBackwardInput(const T* dy, const T* w, T* dx, const int64_t* geometry);
// dw[o, c, kh, kw] = sum over (n, oh, ow) of dy[n, o, oh, ow] * x[n, c, ih, iw]
template <typename T>
void Conv2dBackwardFilter(const T* dy, const T* x, T* dw, const int64_t* geometry);

// The three with bf16 operands (bit patterns) and an f32 result, torch.autocast's convolutions:
// bf16 products accumulated in f32, through oneDNN's bf16 kernels where the CPU has bf16
// instructions (AMX tiles, AVX512-BF16); elsewhere the operands are widened (exactly) and the
// f32 routine runs, the same sums in another order.
void Conv2dForwardBf16(const uint16_t* x, const uint16_t* w, const float* bias, float* y, const int64_t* geometry);
void Conv2dBackwardInputBf16(const uint16_t* dy, const uint16_t* w, float* dx, const int64_t* geometry);
void Conv2dBackwardFilterBf16(const uint16_t* dy, const uint16_t* x, float* dw, const int64_t* geometry);

}  // namespace txla::compiler::library
