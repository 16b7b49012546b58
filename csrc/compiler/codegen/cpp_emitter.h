// Emits the entry computation of a fused, buffer-assigned HLO module as one self-contained C++
// translation unit with no #includes at all, so the system compiler builds it in a
// fraction of a second:
//
//   extern "C" void txla_run(const TxlaSupport* support, const void* const* params,
//                            void* const* outputs, char* arena);
//
// Each fusion is one loop nest over its output; the values inside it are expressions at the loop
// index (broadcast, transpose, reshape and slice only remap the index). A reduce-rooted fusion
// adds an inner loop over the reduced dimensions. Dots call the GEMM in the support table the
// runtime passes in (OpenBLAS), so generated code links against nothing.
#pragma once

#include <string>
#include <vector>

#include "compiler/buffer_assignment.h"
#include "hlo/instruction.h"

namespace txla::compiler {

// The ABI between generated code and the runtime; the emitter prints the same declaration.
struct TxlaSupport {
  void (*gemm_f32)(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);
  void (*gemm_f64)(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, const double* a,
                   int64_t lda, const double* b, int64_t ldb, double* c, int64_t ldc);
  // Library routines; `geometry` is the routine's int64 array (compiler/library/*.h).
  void (*conv2d_f32)(const float* x, const float* w, float* y, const int64_t* geometry);
  void (*conv2d_f64)(const double* x, const double* w, double* y, const int64_t* geometry);
  void (*conv2d_backward_input_f32)(const float* dy, const float* w, float* dx, const int64_t* geometry);
  void (*conv2d_backward_input_f64)(const double* dy, const double* w, double* dx, const int64_t* geometry);
  void (*conv2d_backward_filter_f32)(const float* dy, const float* x, float* dw, const int64_t* geometry);
  void (*conv2d_backward_filter_f64)(const double* dy, const double* x, double* dw, const int64_t* geometry);
  void (*max_pool2d_indices_f32)(const float* x, int64_t* indices, const int64_t* geometry);
  void (*max_pool2d_indices_f64)(const double* x, int64_t* indices, const int64_t* geometry);
  void (*max_pool2d_backward_f32)(const float* dy, const int64_t* indices, float* dx, const int64_t* geometry);
  void (*max_pool2d_backward_f64)(const double* dy, const int64_t* indices, double* dx, const int64_t* geometry);
  void (*sort_indices_f32)(const float* x, int64_t* indices, const int64_t* geometry);
  void (*sort_indices_f64)(const double* x, int64_t* indices, const int64_t* geometry);
  // Runs fn(ctx, lo, hi) over [0, count) split across the runtime's threads.
  void (*parallel_for)(void (*fn)(void* ctx, int64_t lo, int64_t hi), void* ctx, int64_t count);
  // Kernel profiling (TXLA_PROFILE_KERNELS=1): a token from begin is handed back to end.
  int64_t (*kernel_begin)();
  void (*kernel_end)(const char* kernel, int64_t token);
  // all-reduce / all-gather / reduce-scatter through the runtime's transport
  // (runtime::RunCollective; `spec` from runtime::EncodeCollective).
  void (*collective)(const int64_t* spec, const void* in, void* out);
};

// Marker lines in the emitted source: after the prelude, after each kernel function, and before
// txla_run. SplitSource cuts a source there into translation units that build in parallel.
extern const char* const kKernelsBegin;
extern const char* const kKernelEnd;
extern const char* const kRunBegin;
// `units` translation units (fewer for small sources), each prelude + some kernels; the last
// also holds txla_run. Joined by a link they make the same library as the whole source.
std::vector<std::string> SplitSource(const std::string& source, int units);

// Throws std::invalid_argument for what it cannot emit (an opcode or element type); callers run
// such graphs on the interpreter instead.
// With `profile`, every kernel is bracketed by support->kernel_begin/kernel_end.
std::string EmitCpp(const hlo::Module& module, const BufferPlan& plan, bool profile = false);
// Number of kernels (loop nests and library calls) the emitted code runs.
int CountKernels(const hlo::Module& module);

}  // namespace txla::compiler
