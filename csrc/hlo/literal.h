// A constant's value: a dense array of one element type, stored as doubles for floating types
// and as int64 for integers and pred (every element type the device has fits one of the two
// exactly, except f64 NaN payloads, which HLO text does not carry either).
#pragma once

#include <string>
#include <vector>

#include "hlo/shape.h"

namespace txla::hlo {

class Literal {
 public:
  Literal() = default;
  static Literal Scalar(ElementType type, double value);
  static Literal FromDoubles(Shape shape, std::vector<double> values);
  static Literal FromInts(Shape shape, std::vector<int64_t> values);

  const Shape& shape() const { return shape_; }
  bool is_floating() const { return IsFloating(shape_.type); }
  // Number of stored elements (0 for a default-constructed literal).
  int64_t size() const { return static_cast<int64_t>(is_floating() ? doubles_.size() : ints_.size()); }
  double GetDouble(int64_t i) const { return is_floating() ? doubles_[i] : static_cast<double>(ints_[i]); }
  int64_t GetInt(int64_t i) const { return is_floating() ? static_cast<int64_t>(doubles_[i]) : ints_[i]; }
  // True when every element equals `value` (0 and 1 drive algebraic simplification).
  bool IsAll(double value) const;
  // The value part of `constant(...)`: "1", "{1, 2, 3}", "{ {1, 2}, {3, 4} }", "true", "inf".
  std::string ToString() const;
  bool operator==(const Literal& other) const;

 private:
  Shape shape_;
  std::vector<double> doubles_;
  std::vector<int64_t> ints_;
};

}  // namespace txla::hlo
