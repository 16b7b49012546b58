// Stable sorting along one dimension, as positions (the values are then a gather): the layout
// is [outer, n, inner] with the sorted dimension in the middle.
#pragma once

#include <cstdint>

namespace txla::compiler::library {

// geometry: {outer, n, inner, descending}. NaN sorts above every number, as in ATen. T: float,
// double, int32_t, int64_t (narrower integers and bool are widened to int32 by the lowering).
template <typename T>
void SortIndices(const T* x, int64_t* indices, const int64_t* geometry);

}  // namespace txla::compiler::library
