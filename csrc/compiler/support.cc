#include "compiler/support.h"

#include <cstring>
#include <mutex>
#include <string>

#include "compiler/library/attention.h"
#include "compiler/library/conv2d.h"
#include "compiler/library/gemm.h"
#include "compiler/library/gemm_bf16.h"
#include "compiler/library/parallel.h"
#include "compiler/library/pool2d.h"
#include "compiler/library/recurrent.h"
#include "compiler/library/sort.h"
#include "metrics/metrics.h"
#include "metrics/trace.h"
#include "runtime/collectives.h"
#include "runtime/shards.h"
#include "runtime/host_activity.h"

namespace txla::compiler {
namespace {

void GemmF32(int64_t batch, int ta, int tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
             int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float* c, int64_t ldc, int64_t stride_c) {
  library::GemmBatched<float>(batch, ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c);
}

void GemmF64(int64_t batch, int ta, int tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
             int64_t stride_a, const double* b, int64_t ldb, int64_t stride_b, double* c, int64_t ldc,
             int64_t stride_c) {
  library::GemmBatched<double>(batch, ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c);
}

void GemmBf16(int64_t batch, int ta, int tb, int64_t m, int64_t n, int64_t k, const unsigned short* a, int64_t lda,
              int64_t stride_a, const unsigned short* b, int64_t ldb, int64_t stride_b, float* c, int64_t ldc,
              int64_t stride_c) {
  library::GemmBatchedBf16(batch, ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c);
}

thread_local RunErrors* t_run_errors = nullptr;

void ParallelFor(void (*fn)(void*, int64_t, int64_t), void* ctx, int64_t count) {
  // The runtime's threads report into the run that called them.
  RunErrors* errors = t_run_errors;
  library::ParallelChunks(count, library::NumThreads(), [&](int, int64_t lo, int64_t hi) {
    ScopedRunErrors scope(errors);
    fn(ctx, lo, hi);
  });
}

int64_t KernelBegin() { return metrics::NowNs(); }

void KernelEnd(const char* kernel, int64_t token) {
  int64_t elapsed_ns = metrics::NowNs() - token;
  metrics::GetMetric(std::string("KernelTime:") + kernel)->AddSample(static_cast<double>(elapsed_ns));
  // On the profiler's timeline too, on the thread that ran it: where a run's time goes between
  // its kernels, and which of them overlapped the host's trace.
  if (metrics::TracingActive()) {
    int64_t end_us = metrics::trace_internal::NowUs();
    metrics::trace_internal::Record("kernel", kernel, end_us - elapsed_ns / 1000, end_us, {});
  }
}

int64_t IndexError(int64_t index, int64_t size, const char* site) {
  if (RunErrors* errors = t_run_errors) {
    std::lock_guard<std::mutex> lock(errors->mu);
    if (errors->first.empty())
      errors->first = "index " + std::to_string(index) + " is out of bounds for a dimension of size " +
                      std::to_string(size) + " (HLO instruction " + site + ")";
  }
  return 0;
}

int64_t DivisionError(const char* site) {
  if (RunErrors* errors = t_run_errors) {
    std::lock_guard<std::mutex> lock(errors->mu);
    if (errors->first.empty()) errors->first = std::string("ZeroDivisionError (HLO instruction ") + site + ")";
  }
  return 1;
}

thread_local const EarlyReadiness* t_early_outputs = nullptr;

void OutputReady(int64_t output) {
  const EarlyReadiness* early = t_early_outputs;
  if (early == nullptr || output < 0 || output >= static_cast<int64_t>(early->size()) || !(*early)[output])
    return;
  if (RunErrors* errors = t_run_errors) {
    // A kernel before it reported an error: the value may have read a clamped index, and the run
    // fails as a whole.
    std::lock_guard<std::mutex> lock(errors->mu);
    if (!errors->first.empty()) return;
  }
  TXLA_COUNTER("OutputsReadyEarly", 1);
  if ((*early)[output]->HasWaiters()) {
    TXLA_COUNTER("HostWokenByEarlyOutput", 1);
    runtime::NoteHostWaking();
  }
  (*early)[output]->MarkReady();
}

}  // namespace

ScopedEarlyOutputs::ScopedEarlyOutputs(const EarlyReadiness* outputs) : previous_(t_early_outputs) {
  t_early_outputs = outputs;
}
ScopedEarlyOutputs::~ScopedEarlyOutputs() { t_early_outputs = previous_; }

ScopedRunErrors::ScopedRunErrors(RunErrors* errors) : previous_(t_run_errors) { t_run_errors = errors; }
ScopedRunErrors::~ScopedRunErrors() { t_run_errors = previous_; }

const TxlaSupport* GetSupportTable() {
  // Each slot bound to the function its row names: a slot cannot take its neighbour's function.
  static const TxlaSupport table = [] {
    TxlaSupport t{};
#define TXLA_SUPPORT_BIND(ret, name, params, host) t.name = &host;
    TXLA_SUPPORT_ABI(TXLA_SUPPORT_BIND)
#undef TXLA_SUPPORT_BIND
    return t;
  }();
  return &table;
}

}  // namespace txla::compiler
