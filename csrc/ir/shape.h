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

// Maps a PyTorch dtype onto a device element type; throws a clear error for dtypes the device
// does not hold (complex, quantized, ...), naming the dtype.
runtime::ElementType ToElementType(c10::ScalarType dtype);
c10::ScalarType ToScalarType(runtime::ElementType type);
// True when the device holds this dtype.
bool IsSupportedDtype(c10::ScalarType dtype);

}  // namespace txla::ir
