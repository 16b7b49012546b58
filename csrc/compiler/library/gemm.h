// Row-major GEMM, C = A' B' + beta C (A' = A or its transpose), split over the library's threads
// by columns of C (or rows, when C is tall), each part a single-threaded call: for float, MKL's,
// oneDNN's or OpenBLAS's sgemm (TXLA_GEMM_LIBRARY; gemm.cc says which wins where), OpenBLAS for
// double.
#pragma once

#include <cstdint>

namespace txla::compiler::library {

template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// `batch` products C_i = A_i' B_i' (beta 0), the i-th operands `stride` elements after the last.
// Products too small to split are shared out whole among the threads.
template <typename T>
void GemmBatched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
                 int64_t lda, int64_t stride_a, const T* b, int64_t ldb, int64_t stride_b, T* c, int64_t ldc,
                 int64_t stride_c);

// Starts the GEMM library's one-time setup on a background thread (joined at exit): loading MKL,
// or oneDNN's first sgemm of a process detecting the CPU and generating its kernels (20 ms), which
// a warm-cache first step would otherwise wait for. Called at import.
void WarmUpGemm();

}  // namespace txla::compiler::library
