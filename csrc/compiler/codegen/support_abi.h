// The ABI between generated code and the runtime, declared once: each entry of the support table
// the runtime hands to the graph's steps, and the host function behind it. The C++ side
// (cpp_emitter.h) expands it into struct TxlaSupport, support.cc binds each slot to its function
// by name, and the emitter prints the same entries, as text, into every generated source's
// prelude. A library routine's slots are `<routine>_<type>`, the routine a custom call's row
// names (hlo/custom_call.h).
#pragma once

// V(return type, name, (parameters), host function (named in compiler/support.cc))
#define TXLA_SUPPORT_ABI(V)                                                                                       \
  /* batch products C_i = op(A_i) op(B_i), row-major, the i-th at a + i*stride_a (and so on) */                   \
  V(void, gemm_f32, (int64_t batch, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, const float* a,    \
                     int64_t lda, int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float* c,      \
                     int64_t ldc, int64_t stride_c), GemmF32)                                                     \
  V(void, gemm_f64, (int64_t batch, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, const double* a,   \
                     int64_t lda, int64_t stride_a, const double* b, int64_t ldb, int64_t stride_b, double* c,    \
                     int64_t ldc, int64_t stride_c), GemmF64)                                                     \
  /* the same with bf16 operands (bit patterns) and an f32 result: torch.autocast's products */                   \
  V(void, gemm_bf16, (int64_t batch, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,                   \
                      const unsigned short* a, int64_t lda, int64_t stride_a, const unsigned short* b,            \
                      int64_t ldb, int64_t stride_b, float* c, int64_t ldc, int64_t stride_c), GemmBf16)          \
  /* Library routines; `geometry` is the routine's int64 array (compiler/library/ *.h). */                        \
  /* bias: one per output channel, added in the call's output pass, or null */                                    \
  V(void, conv2d_f32, (const float* x, const float* w, const float* bias, float* y, const int64_t* geometry),     \
                       library::Conv2dForward<float>)                                                             \
  V(void, conv2d_f64, (const double* x, const double* w, const double* bias, double* y, const int64_t* geometry), \
                       library::Conv2dForward<double>)                                                            \
  V(void, conv2d_backward_input_f32, (const float* dy, const float* w, float* dx, const int64_t* geometry),       \
                                      library::Conv2dBackwardInput<float>)                                        \
  V(void, conv2d_backward_input_f64, (const double* dy, const double* w, double* dx, const int64_t* geometry),    \
                                      library::Conv2dBackwardInput<double>)                                       \
  V(void, conv2d_backward_filter_f32, (const float* dy, const float* x, float* dw, const int64_t* geometry),      \
                                       library::Conv2dBackwardFilter<float>)                                      \
  V(void, conv2d_backward_filter_f64, (const double* dy, const double* x, double* dw, const int64_t* geometry),   \
                                       library::Conv2dBackwardFilter<double>)                                     \
  /* bf16 operands (bit patterns), f32 results: torch.autocast's convolutions */                                   \
  V(void, conv2d_bf16, (const unsigned short* x, const unsigned short* w, const float* bias, float* y,             \
                        const int64_t* geometry), library::Conv2dForwardBf16)                                     \
  V(void, conv2d_backward_input_bf16, (const unsigned short* dy, const unsigned short* w, float* dx,               \
                                       const int64_t* geometry), library::Conv2dBackwardInputBf16)                \
  V(void, conv2d_backward_filter_bf16, (const unsigned short* dy, const unsigned short* x, float* dw,             \
                                        const int64_t* geometry), library::Conv2dBackwardFilterBf16)              \
  V(void, max_pool2d_indices_f32, (const float* x, int64_t* indices, const int64_t* geometry),                    \
                                   library::MaxPool2dIndices<float>)                                              \
  V(void, max_pool2d_indices_f64, (const double* x, int64_t* indices, const int64_t* geometry),                   \
                                   library::MaxPool2dIndices<double>)                                             \
  V(void, max_pool2d_backward_f32, (const float* dy, const int64_t* indices, float* dx, const int64_t* geometry), \
                                    library::MaxPool2dBackward<float>)                                            \
  V(void, max_pool2d_backward_f64, (const double* dy, const int64_t* indices, double* dx,                         \
                                    const int64_t* geometry), library::MaxPool2dBackward<double>)                 \
  V(void, max_pool2d_backward_from_input_f32, (const float* dy, const float* x, float* dx,                        \
                                               const int64_t* geometry),                                          \
                                               library::MaxPool2dBackwardFromInput<float>)                        \
  V(void, max_pool2d_backward_from_input_f64, (const double* dy, const double* x, double* dx,                     \
                                               const int64_t* geometry),                                          \
                                               library::MaxPool2dBackwardFromInput<double>)                       \
  V(void, sort_indices_f32, (const float* x, int64_t* indices, const int64_t* geometry),                          \
                             library::SortIndices<float>)                                                         \
  V(void, sort_indices_f64, (const double* x, int64_t* indices, const int64_t* geometry),                         \
                             library::SortIndices<double>)                                                        \
  V(void, sort_indices_s32, (const int32_t* x, int64_t* indices, const int64_t* geometry),                        \
                             library::SortIndices<int32_t>)                                                       \
  V(void, sort_indices_s64, (const int64_t* x, int64_t* indices, const int64_t* geometry),                        \
                             library::SortIndices<int64_t>)                                                       \
  /* one LSTM or GRU layer's recurrence over its sequence, and its gradient (library/recurrent.h) */              \
  V(void, rnn_layer_f32, (const float* input_gates, const float* w_hh, const float* b_hh, const float* h0,        \
                          const float* c0, float* forward, const int64_t* geometry), library::RnnLayer<float>)    \
  V(void, rnn_layer_f64, (const double* input_gates, const double* w_hh, const double* b_hh, const double* h0,    \
                          const double* c0, double* forward, const int64_t* geometry),                            \
                          library::RnnLayer<double>)                                                              \
  V(void, rnn_layer_backward_f32, (const float* grad_h, const float* grad_hn, const float* grad_cn,               \
                                   const float* w_hh, const float* h0, const float* c0, const float* forward,     \
                                   float* backward, const int64_t* geometry), library::RnnLayerBackward<float>)   \
  V(void, rnn_layer_backward_f64, (const double* grad_h, const double* grad_hn, const double* grad_cn,            \
                                   const double* w_hh, const double* h0, const double* c0, const double* forward, \
                                   double* backward, const int64_t* geometry),                                    \
                                   library::RnnLayerBackward<double>)                                             \
  /* scaled dot-product attention's forward, one pass over the keys (library/attention.h) */                     \
  V(void, attention_f32, (const float* q, const float* k, const float* v, float* out, const int64_t* geometry),   \
                          library::AttentionForward<float>)                                                       \
  V(void, attention_f64, (const double* q, const double* k, const double* v, double* out,                         \
                          const int64_t* geometry), library::AttentionForward<double>)                            \
  /* Runs fn(ctx, lo, hi) over [0, count) split across the runtime's threads. */                                  \
  V(void, parallel_for, (void (*fn)(void* ctx, int64_t lo, int64_t hi), void* ctx, int64_t count), ParallelFor)   \
  /* Kernel profiling (TXLA_PROFILE_KERNELS=1): a token from begin is handed back to end. */                      \
  V(int64_t, kernel_begin, (), KernelBegin)                                                                       \
  V(void, kernel_end, (const char* kernel, int64_t token), KernelEnd)                                             \
  /* all-reduce / all-gather / reduce-scatter through the runtime's transport */                                  \
  /* (runtime::RunCollective; `spec` from runtime::EncodeCollective). */                                          \
  V(void, collective, (const int64_t* spec, const void* in, void* out), runtime::RunCollective)                   \
  /* SPMD resharding: a tiled value gathered whole, or this device's tile cut from a whole one */                 \
  /* (runtime::RunReshard; `spec` from runtime::EncodeReshard). */                                                \
  V(void, reshard, (const int64_t* spec, const void* in, void* out), runtime::RunReshard)                         \
  /* An index read from data is outside [0, size) at instruction `site`: the run reports it as */                 \
  /* eager would, once it returns; the kernel goes on with the index it gets back (0). */                         \
  V(int64_t, index_error, (int64_t index, int64_t size, const char* site), IndexError)                            \
  /* Output `output` is written (a scalar result, passes/early_outputs.h): readers may take it */                 \
  /* while the rest of the run goes on, unless an error was reported before. */                                   \
  V(void, output_ready, (int64_t output), OutputReady)                                                            \
  /* An integer division or remainder by zero at instruction `site`: the run fails with eager's */                \
  /* ZeroDivisionError once it returns; the kernel goes on dividing by the 1 it gets back. */                     \
  V(int64_t, division_error, (const char* site), DivisionError)
