// The shape of a lazy value: dtype and sizes, always dense and row-major on the device.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <string>
#include <vector>

#include "ir/hash.h"
#include "runtime/element_type.h"

namespace txla::ir {

struct Shape {
  c10::ScalarType dtype = c10::ScalarType::Float;
  std::vector<int64_t> sizes;

  Shape() = default;
  Shape(c10::ScalarType dtype, c10::IntArrayRef sizes) : dtype(dtype), sizes(sizes.vec()) {}

  int64_t numel() const;
  hash_t Hash() const;
  std::string ToString() const;  // "f32[2,3]"
  bool operator==(const Shape& other) const {
    return dtype == other.dtype && sizes == other.sizes;
  }
};

// Maps a PyTorch dtype onto the element type the device stores and computes it in; throws a clear
// error for dtypes the device does not hold (complex, quantized, ...), naming the dtype. The
// numeric modes apply here, once, for buffers, transfers and lowering alike: XLA_USE_BF16
// (float32 and float64 -> bf16), XLA_DOWNCAST_BF16 (float32 -> bf16, float64 -> f32),
// XLA_USE_32BIT_LONG (int64 -> s32). Tensors keep reporting their PyTorch dtype.
runtime::ElementType ToElementType(c10::ScalarType dtype);
// The host dtype of the device's storage for `dtype` (ToElementType as a PyTorch dtype).
c10::ScalarType StorageScalarType(c10::ScalarType dtype);
c10::ScalarType ToScalarType(runtime::ElementType type);
// True when the device holds this dtype.
bool IsSupportedDtype(c10::ScalarType dtype);

}  // namespace txla::ir
