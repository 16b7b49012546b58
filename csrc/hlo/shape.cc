#include "hlo/shape.h"

#include <sstream>
#include <stdexcept>

namespace txla::hlo {

Shape Shape::Array(ElementType type, std::vector<int64_t> dims) {
  Shape s;
  s.type = type;
  s.dims = std::move(dims);
  return s;
}

Shape Shape::Tuple(std::vector<Shape> shapes) {
  Shape s;
  s.is_tuple = true;
  s.tuple_shapes = std::move(shapes);
  return s;
}

int64_t Shape::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string Shape::ToString(bool with_layout) const {
  std::ostringstream ss;
  if (is_tuple) {
    ss << "(";
    for (size_t i = 0; i < tuple_shapes.size(); ++i)
      ss << (i ? ", " : "") << tuple_shapes[i].ToString(with_layout);
    ss << ")";
    return ss.str();
  }
  ss << runtime::ElementTypeName(type) << "[";
  for (size_t i = 0; i < dims.size(); ++i) ss << (i ? "," : "") << dims[i];
  ss << "]";
  if (with_layout && !dims.empty()) {
    ss << "{";
    for (int64_t i = rank() - 1; i >= 0; --i) ss << i << (i ? "," : "");
    ss << "}";
  }
  return ss.str();
}

bool Shape::operator==(const Shape& other) const {
  if (is_tuple != other.is_tuple) return false;
  if (is_tuple) return tuple_shapes == other.tuple_shapes;
  return type == other.type && dims == other.dims;
}

bool Is16BitFloat(ElementType type) { return type == ElementType::kBF16 || type == ElementType::kF16; }

bool IsFloating(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16 || type == ElementType::kF32 ||
         type == ElementType::kF64;
}

bool IsSignedInteger(ElementType type) {
  return type == ElementType::kS8 || type == ElementType::kS16 || type == ElementType::kS32 ||
         type == ElementType::kS64;
}

bool IsUnsignedInteger(ElementType type) { return type == ElementType::kU8; }

bool IsInteger(ElementType type) { return IsSignedInteger(type) || IsUnsignedInteger(type); }

ElementType ParseElementType(std::string_view name) {
  static const ElementType kAll[] = {ElementType::kPred, ElementType::kS8,  ElementType::kS16,
                                     ElementType::kS32,  ElementType::kS64, ElementType::kU8,
                                     ElementType::kF16,  ElementType::kBF16, ElementType::kF32,
                                     ElementType::kF64};
  for (ElementType t : kAll)
    if (name == runtime::ElementTypeName(t)) return t;
  throw std::invalid_argument("unknown element type '" + std::string(name) + "'");
}

}  // namespace txla::hlo
