// float32 (and bf16 x bf16 -> f32) 2-D convolutions through oneDNN (when the build found it):
// the library picks its blocked layouts and kernels for this CPU (AVX2, AVX-512, AMX); plain
// NCHW/OIHW buffers are reordered in and out. Primitives are built once per geometry and kept.
#pragma once

#include <cstdint>

namespace txla::compiler::library {

// Whether this build has oneDNN.
bool OneDnnAvailable();

// Each returns false, having done nothing, when oneDNN is unavailable, turned off
// (TXLA_CONV_LIBRARY=im2col) or cannot express the geometry; the caller then uses im2col.
// bias (one per output channel, or null) is added by the convolution's own kernel.
bool OneDnnConv2dForward(const float* x, const float* w, const float* bias, float* y, const int64_t* geometry);
bool OneDnnConv2dBackwardInput(const float* dy, const float* w, float* dx, const int64_t* geometry);
bool OneDnnConv2dBackwardFilter(const float* dy, const float* x, float* dw, const int64_t* geometry);
// The same with bf16 operands (bit patterns) and an f32 result; false as well where oneDNN has
// only its reference kernels for bf16 on this CPU.
bool OneDnnConv2dForwardBf16(const uint16_t* x, const uint16_t* w, const float* bias, float* y,
                             const int64_t* geometry);
bool OneDnnConv2dBackwardInputBf16(const uint16_t* dy, const uint16_t* w, float* dx, const int64_t* geometry);
bool OneDnnConv2dBackwardFilterBf16(const uint16_t* dy, const uint16_t* x, float* dw, const int64_t* geometry);

}  // namespace txla::compiler::library
