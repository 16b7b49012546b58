// Intel MKL's sgemm, loaded at run time from PyPI's `mkl` wheel (TXLA_MKL_LIBRARY names its
// libmkl_rt.so.2; the Python package points it at the installed wheel). No link-time dependency
// and no headers: a build without MKL, or a machine without the wheel, uses oneDNN or OpenBLAS.
//
// MKL runs sequentially (its threading layer is set before any other call): GEMMs are split into
// parts over the library's own threads (parallel.h), one part per thread, like the others.
#pragma once

#include <cstdint>
#include <string>

namespace txla::compiler::library {

using MklSgemm = void (*)(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                          int lda, const float* b, int ldb, float beta, float* c, int ldc);

// MKL's cblas_sgemm, or null when TXLA_MKL_LIBRARY is empty or does not load (MklLoadError()
// says why). Loaded once, at first use; thread-safe.
MklSgemm MklSgemmFunction();
std::string MklLoadError();

}  // namespace txla::compiler::library
