// Row-major GEMM, C = A' B' + beta C (A' = A or its transpose), split over the library's threads
// by columns of C (or rows, when C is tall), each part a single-threaded OpenBLAS call.
#pragma once

#include <cstdint>

namespace txla::compiler::library {

template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

}  // namespace txla::compiler::library
