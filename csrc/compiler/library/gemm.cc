#include "compiler/library/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#ifdef TXLA_WITH_ONEDNN
#include <dnnl.h>
#endif

#include "compiler/background_thread.h"
#include "compiler/library/conv2d_onednn.h"
#include "compiler/library/mkl_blas.h"
#include "compiler/library/parallel.h"
#include "debug/config.h"
#include "metrics/metrics.h"

namespace txla::compiler::library {
namespace {

enum class FloatGemmLibrary { kMkl, kOneDnn, kOpenBlas };

// TXLA_GEMM_LIBRARY, resolved against what this build and machine have. By measurement, one part
// per thread, on the shapes of this project's models: MKL's sequential sgemm ran 7-9% faster in
// all than oneDNN's on an EPYC Milan (AVX2, interleaved in one process), up to 30% on the weight gradients' transposed
// operands, where oneDNN's copy-free AVX2 kernels also slowed down by a third whenever an operand
// was 32-byte aligned; on a Sapphire Rapids core oneDNN's AVX-512 kernels beat OpenBLAS by
// 15-25% (MKL not measured there).
FloatGemmLibrary ResolveFloatGemmLibrary(const std::string& want) {
  bool mkl = MklSgemmFunction() != nullptr;
  bool onednn = OneDnnAvailable();
  if (want == "mkl" && !mkl) {
    static std::once_flag told;
    std::call_once(told, [] {
      std::fprintf(stderr, "torch_xla: TXLA_GEMM_LIBRARY=mkl, but MKL did not load (%s); using %s\n",
                   MklLoadError().c_str(), OneDnnAvailable() ? "oneDNN" : "OpenBLAS");
    });
  }
  if (want == "mkl" && mkl) return FloatGemmLibrary::kMkl;
  if (want == "openblas") return FloatGemmLibrary::kOpenBlas;
  if (want == "auto" && mkl && !__builtin_cpu_supports("avx512f")) return FloatGemmLibrary::kMkl;
  return onednn ? FloatGemmLibrary::kOneDnn : mkl ? FloatGemmLibrary::kMkl : FloatGemmLibrary::kOpenBlas;
}

// Resolved once per configuration (ReloadConfig makes a new one), not at each of the thousands
// of small products a step's graph runs.
FloatGemmLibrary ChosenFloatGemmLibrary() {
  struct Choice {
    const debug::Config* config;
    FloatGemmLibrary library;
  };
  static std::atomic<const Choice*> cached{nullptr};
  static std::mutex mu;
  static std::vector<std::unique_ptr<Choice>> choices;  // every one handed out stays valid
  const debug::Config* config = &debug::GetConfig();
  const Choice* choice = cached.load(std::memory_order_acquire);
  if (choice != nullptr && choice->config == config) return choice->library;
  FloatGemmLibrary library = ResolveFloatGemmLibrary(config->gemm_library);
  std::lock_guard<std::mutex> lock(mu);
  choices.push_back(std::make_unique<Choice>(Choice{config, library}));
  cached.store(choices.back().get(), std::memory_order_release);
  return library;
}

// float: one part of a split product, held to the calling thread.
void Blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  switch (ChosenFloatGemmLibrary()) {
    case FloatGemmLibrary::kMkl:
      // MKL's 32-bit interface: a dimension past 2^31 takes another library. MKL's CBLAS
      // enumerators are OpenBLAS's (cblas.h), as ints.
      if (std::max({m, n, k, lda, ldb, ldc}) <= std::numeric_limits<int>::max()) {
        TXLA_COUNTER("MklGemmCalls", 1);
        MklSgemmFunction()(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                           static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda),
                           b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
        return;
      }
      break;
    case FloatGemmLibrary::kOneDnn:
#ifdef TXLA_WITH_ONEDNN
      UseOneOpenMpThread();
      if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc) == dnnl_success)
        return;
#endif
      break;
    case FloatGemmLibrary::kOpenBlas:
      break;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

void Blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

// Below this many multiply-adds a second thread costs more than it saves.
constexpr double kParallelWork = 2e5;

// Products with at least this many rows are split by rows (see Gemm).
constexpr int64_t kMinRowsToSplitByRows = 256;

}  // namespace

template <typename T>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  int threads = static_cast<double>(m) * n * k < kParallelWork ? 1 : NumThreads();
  // One part per thread, by rows when there are enough of them: measured with MKL's sequential
  // sgemm on a Milan, row parts ran 5-45% faster than column parts on every product of 256 rows
  // or more (a weight gradient's transposed A most of all), column parts 0-15% faster below.
  if (m >= kMinRowsToSplitByRows || m > n) {
    ParallelChunks(m, threads, [&](int, int64_t i0, int64_t i1) {
      const T* ai = ta ? a + i0 : a + i0 * lda;
      Blas(ta, tb, i1 - i0, n, k, ai, lda, b, ldb, beta, c + i0 * ldc, ldc);
    }, Chunking::kOnePerThread);
  } else {
    // Columns [j0, j1) of C need columns [j0, j1) of B' only; parts are whole vector widths.
    constexpr int64_t kWidth = 16;
    ParallelChunks((n + kWidth - 1) / kWidth, threads, [&](int, int64_t begin, int64_t end) {
      int64_t j0 = begin * kWidth, j1 = std::min<int64_t>(n, end * kWidth);
      const T* bj = tb ? b + j0 * ldb : b + j0;
      Blas(ta, tb, m, j1 - j0, k, a, lda, bj, ldb, beta, c + j0, ldc);
    }, Chunking::kOnePerThread);
  }
}

template <typename T>
void GemmBatched(int64_t batch, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                 int64_t stride_a, const T* b, int64_t ldb, int64_t stride_b, T* c, int64_t ldc,
                 int64_t stride_c) {
  bool small = static_cast<double>(m) * n * k < kParallelWork;
  if (batch == 1 || !small || m == 0 || n == 0 || k == 0) {
    for (int64_t i = 0; i < batch; ++i)
      Gemm<T>(ta, tb, m, n, k, a + i * stride_a, lda, b + i * stride_b, ldb, T(0), c + i * stride_c, ldc);
    return;
  }
  int threads = static_cast<double>(m) * n * k * batch < kParallelWork ? 1 : NumThreads();
  if (threads > 1) TXLA_COUNTER("GemmBatchSplitAcrossThreads", 1);
  ParallelChunks(batch, threads, [&](int, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      Blas(ta, tb, m, n, k, a + i * stride_a, lda, b + i * stride_b, ldb, T(0), c + i * stride_c, ldc);
  });
}

void WarmUpGemm() {
  static BackgroundThread warm_up([] {
    float a[16 * 16] = {}, c[16 * 16];
    Blas(false, false, 16, 16, 16, a, 16, a, 16, 0.0f, c, 16);
  });
}

template void Gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*,
                          int64_t, float, float*, int64_t);
template void Gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t,
                           const double*, int64_t, double, double*, int64_t);
template void GemmBatched<float>(int64_t, bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, int64_t,
                                 const float*, int64_t, int64_t, float*, int64_t, int64_t);
template void GemmBatched<double>(int64_t, bool, bool, int64_t, int64_t, int64_t, const double*, int64_t, int64_t,
                                  const double*, int64_t, int64_t, double*, int64_t, int64_t);
}  // namespace txla::compiler::library
