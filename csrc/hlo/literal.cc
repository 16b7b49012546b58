#include "hlo/literal.h"

#include <cstdint>

#include <cmath>
#include <functional>
#include <sstream>
#include <stdexcept>

namespace txla::hlo {
namespace {
// double -> int64 without undefined behaviour at the ends: +-2^63 (what INT64_MAX/MIN become as
// doubles) saturate; NaN has no integer value (`s64[] constant(nan)` is an error).
int64_t SaturatingInt(double v) {
  if (std::isnan(v)) throw std::invalid_argument("NaN is not a value of an integer type");
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}
}  // namespace

namespace {

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream ss;
  ss.precision(17);
  ss << v;
  return ss.str();
}

}  // namespace

Literal Literal::Scalar(ElementType type, double value) {
  Shape shape = Shape::Scalar(type);
  if (IsFloating(type)) return FromDoubles(shape, {value});
  return FromInts(shape, {SaturatingInt(value)});
}

Literal Literal::FromDoubles(Shape shape, std::vector<double> values) {
  if (static_cast<int64_t>(values.size()) != shape.element_count())
    throw std::invalid_argument("literal of " + shape.ToString() + " needs " +
                                std::to_string(shape.element_count()) + " values");
  Literal l;
  l.shape_ = std::move(shape);
  if (l.is_floating()) {
    l.doubles_ = std::move(values);
  } else {
    for (double v : values) l.ints_.push_back(SaturatingInt(v));
  }
  return l;
}

Literal Literal::FromInts(Shape shape, std::vector<int64_t> values) {
  std::vector<double> as_doubles;
  Literal l;
  if (static_cast<int64_t>(values.size()) != shape.element_count())
    throw std::invalid_argument("literal of " + shape.ToString() + " needs " +
                                std::to_string(shape.element_count()) + " values");
  l.shape_ = std::move(shape);
  if (l.is_floating()) {
    for (int64_t v : values) l.doubles_.push_back(static_cast<double>(v));
  } else {
    l.ints_ = std::move(values);
  }
  return l;
}

bool Literal::IsAll(double value) const {
  for (int64_t i = 0; i < size(); ++i)
    if (GetDouble(i) != value) return false;
  return true;
}

std::string Literal::ToString() const {
  auto element = [&](int64_t i) -> std::string {
    if (shape_.type == ElementType::kPred) return GetInt(i) ? "true" : "false";
    return is_floating() ? FormatDouble(doubles_[i]) : std::to_string(ints_[i]);
  };
  if (shape_.dims.empty()) return element(0);
  std::ostringstream ss;
  int64_t next = 0;
  // Nested braces, one level per dimension.
  std::function<void(size_t)> emit = [&](size_t dim) {
    ss << "{";
    for (int64_t i = 0; i < shape_.dims[dim]; ++i) {
      if (i) ss << ", ";
      if (dim + 1 == shape_.dims.size()) ss << element(next++);
      else emit(dim + 1);
    }
    ss << "}";
  };
  emit(0);
  return ss.str();
}

// The same value to a program: -0.0 is not 0.0 (copysign, 1 / x and atan2 tell them apart; CSE
// merged them, and copysign(x, -0.0)'s gradient took +0.0's sign), every NaN is one NaN, and
// integers compare as integers (as doubles, 2^53 + 1 equalled 2^53).
bool Literal::operator==(const Literal& other) const {
  if (shape_ != other.shape_ || size() != other.size()) return false;
  if (!is_floating()) return ints_ == other.ints_;
  for (int64_t i = 0; i < size(); ++i) {
    double a = doubles_[i], b = other.doubles_[i];
    bool same = std::isnan(a) ? std::isnan(b) : a == b && std::signbit(a) == std::signbit(b);
    if (!same) return false;
  }
  return true;
}

}  // namespace txla::hlo
