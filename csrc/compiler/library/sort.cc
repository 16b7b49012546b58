#include "compiler/library/sort.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace txla::compiler::library {

template <typename T>
void SortIndices(const T* x, int64_t* indices, const int64_t* geometry) {
  const int64_t outer = geometry[0], n = geometry[1], inner = geometry[2];
  const bool descending = geometry[3] != 0;
  std::vector<int64_t> order(n);
  std::vector<T> keys(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* base = x + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) keys[k] = base[k * inner];
      std::iota(order.begin(), order.end(), 0);
      // NaN is the largest value: last ascending, first descending (integers have none).
      auto less = [&](int64_t a, int64_t b) {
        T va = keys[a], vb = keys[b];
        if (va != va) return false;
        if (vb != vb) return true;
        return va < vb;
      };
      if (descending)
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return less(b, a); });
      else
        std::stable_sort(order.begin(), order.end(), less);
      int64_t* out = indices + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) out[k * inner] = order[k];
    }
}

template void SortIndices<float>(const float*, int64_t*, const int64_t*);
template void SortIndices<double>(const double*, int64_t*, const int64_t*);
template void SortIndices<int32_t>(const int32_t*, int64_t*, const int64_t*);
template void SortIndices<int64_t>(const int64_t*, int64_t*, const int64_t*);

}  // namespace txla::compiler::library
