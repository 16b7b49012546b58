// HLO shapes: an element type and dimensions (always dense row-major, printed with XLA's default
// layout {n-1,...,0}), or a tuple of shapes. Printed and parsed in XLA's syntax: f32[2,3]{1,0},
// pred[], (f32[4]{0}, s32[]).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/element_type.h"

namespace txla::hlo {

using runtime::ElementType;

struct Shape {
  ElementType type = ElementType::kF32;
  std::vector<int64_t> dims;
  bool is_tuple = false;
  std::vector<Shape> tuple_shapes;

  static Shape Array(ElementType type, std::vector<int64_t> dims);
  static Shape Scalar(ElementType type) { return Array(type, {}); }
  static Shape Tuple(std::vector<Shape> shapes);

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t element_count() const;
  bool IsScalar() const { return !is_tuple && dims.empty(); }
  // "f32[2,3]{1,0}"; without the layout: "f32[2,3]".
  std::string ToString(bool with_layout = true) const;
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
  // Same dimensions, any element type.
  bool SameDims(const Shape& other) const { return !is_tuple && !other.is_tuple && dims == other.dims; }
};

bool IsFloating(ElementType type);
// bf16 and f16: stored in 16 bits, computed in float (compiler/passes/float_normalization.h).
bool Is16BitFloat(ElementType type);
bool IsSignedInteger(ElementType type);
bool IsUnsignedInteger(ElementType type);
// Signed or unsigned (not pred).
bool IsInteger(ElementType type);
// "f32" -> kF32; throws std::invalid_argument for an unknown name.
ElementType ParseElementType(std::string_view name);

}  // namespace txla::hlo
