#include "compiler/library/recurrent.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "compiler/library/gemm.h"
#include "compiler/library/vector_clones.h"
#include "runtime/scalar_ops.h"

namespace txla::compiler::library {
namespace {

// The cells' elementwise steps, one copy a vector width (the library is built for any x86-64;
// these loops are where a layer's transcendental functions are; x86-64-v3 and up have the FMA
// the activations' polynomials are written with). The activations are the kernels' own
// (runtime/scalar_ops.h), so a step rounds as the unrolled graph's would. This file is built with
// -ffp-contract=off: a fused multiply-add the source does not ask for would round differently
// from eager.
//
// Each row's columns are passed as pointers of their own, restrict: written through one pointer
// at offsets h, 2h, ... GCC cannot rule out that they overlap within a vector and leaves the
// loop scalar.
#define TXLA_ROW __attribute__((always_inline)) inline void

// One batch row of an LSTM step: gates (hidden + input) -> h, c and the activated gates.
template <typename T>
TXLA_ROW LstmForwardRow(int64_t h, const T* __restrict__ hg, const T* __restrict__ ig, const T* __restrict__ cp,
                        T* __restrict__ out_h, T* __restrict__ out_c, T* __restrict__ out_i, T* __restrict__ out_f,
                        T* __restrict__ out_g, T* __restrict__ out_o) {
  for (int64_t j = 0; j < h; ++j) {
    const T i = txla_logistic(hg[j] + ig[j]);
    const T f = txla_logistic(hg[h + j] + ig[h + j]);
    const T g = txla_tanh(hg[2 * h + j] + ig[2 * h + j]);
    const T o = txla_logistic(hg[3 * h + j] + ig[3 * h + j]);
    const T c = f * cp[j] + i * g;
    out_h[j] = o * txla_tanh(c);
    out_c[j] = c;
    out_i[j] = i;
    out_f[j] = f;
    out_g[j] = g;
    out_o[j] = o;
  }
}

// dh: the gradient reaching this step's h from later steps; dc likewise for c, replaced by
// c_prev's. `fw` is the step's forward row.
template <typename T>
TXLA_ROW LstmBackwardRow(int64_t h, const T* __restrict__ grad_out, const T* __restrict__ dh, T* __restrict__ dc,
                         const T* __restrict__ fw, const T* __restrict__ cp, T* __restrict__ d_i,
                         T* __restrict__ d_f, T* __restrict__ d_g, T* __restrict__ d_o) {
  for (int64_t j = 0; j < h; ++j) {
    const T c = fw[h + j], i = fw[2 * h + j], f = fw[3 * h + j], g = fw[4 * h + j], o = fw[5 * h + j];
    const T tc = txla_tanh(c);
    const T dh_t = grad_out[j] + dh[j];
    const T dc_t = dc[j] + (dh_t * o) * (1 - tc * tc);
    d_i[j] = (dc_t * g) * (1 - i) * i;
    d_f[j] = (dc_t * cp[j]) * (1 - f) * f;
    d_g[j] = (dc_t * i) * (1 - g * g);
    d_o[j] = (dh_t * tc) * (1 - o) * o;
    dc[j] = dc_t * f;
  }
}

template <typename T>
TXLA_ROW GruForwardRow(int64_t h, const T* __restrict__ hg, const T* __restrict__ ig, const T* __restrict__ hp,
                       T* __restrict__ out_h, T* __restrict__ out_r, T* __restrict__ out_z, T* __restrict__ out_n,
                       T* __restrict__ out_hn) {
  for (int64_t j = 0; j < h; ++j) {
    const T r = txla_logistic(hg[j] + ig[j]);
    const T z = txla_logistic(hg[h + j] + ig[h + j]);
    const T hn = hg[2 * h + j];
    const T n = txla_tanh(ig[2 * h + j] + hn * r);
    out_h[j] = (hp[j] - n) * z + n;
    out_r[j] = r;
    out_z[j] = z;
    out_n[j] = n;
    out_hn[j] = hn;
  }
}

// Writes the gates' gradients (input projection's, then hidden projection's) and h_prev's
// gradient through z to `dh_prev` (the product by the hidden weights is added after).
template <typename T>
TXLA_ROW GruBackwardRow(int64_t h, const T* __restrict__ grad_out, const T* __restrict__ dh,
                        const T* __restrict__ fw, const T* __restrict__ hp, T* __restrict__ d_r,
                        T* __restrict__ d_z, T* __restrict__ d_n, T* __restrict__ d_hr, T* __restrict__ d_hz,
                        T* __restrict__ d_hn, T* __restrict__ dh_prev) {
  for (int64_t j = 0; j < h; ++j) {
    const T r = fw[h + j], z = fw[2 * h + j], n = fw[3 * h + j], hn = fw[4 * h + j];
    const T dh_t = grad_out[j] + dh[j];
    const T dpn = (dh_t * (1 - z)) * (1 - n * n);
    const T dpr = (dpn * hn) * (1 - r) * r;
    const T dpz = (dh_t * (hp[j] - n)) * (1 - z) * z;
    d_r[j] = dpr;
    d_z[j] = dpz;
    d_n[j] = dpn;
    d_hr[j] = dpr;
    d_hz[j] = dpz;
    d_hn[j] = dpn * r;
    dh_prev[j] = dh_t * z;
  }
}

// A whole step over the batch, non-template so that each can be cloned per vector width (GCC
// clones no templates).
#define TXLA_RNN_STEPS(T)                                                                                       \
  TXLA_VECTOR_CLONES void LstmForward(int64_t batch, int64_t h, const T* hidden, const T* input, const T* c_prev, \
                                      int64_t ld_prev, T* row) {                                                \
    for (int64_t b = 0; b < batch; ++b) {                                                                       \
      T* o = row + b * 6 * h;                                                                                   \
      LstmForwardRow<T>(h, hidden + b * 4 * h, input + b * 4 * h, c_prev + b * ld_prev, o, o + h, o + 2 * h,   \
                        o + 3 * h, o + 4 * h, o + 5 * h);                                                       \
    }                                                                                                           \
  }                                                                                                             \
  TXLA_VECTOR_CLONES void LstmBackward(int64_t batch, int64_t h, const T* grad_out, const T* dh, T* dc,         \
                                       const T* row, const T* c_prev, int64_t ld_prev, T* grad_row) {           \
    for (int64_t b = 0; b < batch; ++b) {                                                                       \
      T* d = grad_row + b * 4 * h;                                                                              \
      LstmBackwardRow<T>(h, grad_out + b * h, dh + b * h, dc + b * h, row + b * 6 * h, c_prev + b * ld_prev, d, \
                         d + h, d + 2 * h, d + 3 * h);                                                          \
    }                                                                                                           \
  }                                                                                                             \
  TXLA_VECTOR_CLONES void GruForward(int64_t batch, int64_t h, const T* hidden, const T* input, const T* h_prev,  \
                                     int64_t ld_prev, T* row) {                                                 \
    for (int64_t b = 0; b < batch; ++b) {                                                                       \
      T* o = row + b * 5 * h;                                                                                   \
      GruForwardRow<T>(h, hidden + b * 3 * h, input + b * 3 * h, h_prev + b * ld_prev, o, o + h, o + 2 * h,    \
                       o + 3 * h, o + 4 * h);                                                                   \
    }                                                                                                           \
  }                                                                                                             \
  TXLA_VECTOR_CLONES void GruBackward(int64_t batch, int64_t h, const T* grad_out, const T* dh, const T* row,    \
                                      const T* h_prev, int64_t ld_prev, T* grad_row, T* dh_prev) {              \
    for (int64_t b = 0; b < batch; ++b) {                                                                       \
      T* d = grad_row + b * 6 * h;                                                                              \
      GruBackwardRow<T>(h, grad_out + b * h, dh + b * h, row + b * 5 * h, h_prev + b * ld_prev, d, d + h,       \
                        d + 2 * h, d + 3 * h, d + 4 * h, d + 5 * h, dh_prev + b * h);                           \
    }                                                                                                           \
  }
TXLA_RNN_STEPS(float)
TXLA_RNN_STEPS(double)
#undef TXLA_RNN_STEPS
#undef TXLA_ROW

struct Geometry {
  int64_t steps, batch, hidden;
  RnnCell cell;
  bool reverse;
  explicit Geometry(const int64_t* g)
      : steps(g[0]), batch(g[1]), hidden(g[2]), cell(static_cast<RnnCell>(g[3])), reverse(g[4] != 0) {}
  // The row of the t-th step taken (a reverse layer starts from the last).
  int64_t Row(int64_t t) const { return reverse ? steps - 1 - t : t; }
};

}  // namespace

template <typename T>
void RnnLayer(const T* input_gates, const T* w_hh, const T* b_hh, const T* h0, const T* c0, T* forward,
              const int64_t* geometry) {
  const Geometry g(geometry);
  const int64_t h = g.hidden, gates = RnnGates(g.cell) * h, width = RnnForwardWidth(g.cell, h);
  // The hidden projection of a step, h W_hh^T + b_hh, as ATen's addmm: the bias is C of the GEMM.
  std::vector<T> hidden(static_cast<size_t>(g.batch * gates));
  for (int64_t t = 0; t < g.steps; ++t) {
    const int64_t s = g.Row(t);
    // The previous state: h0 (c0) or the previous step's row, where h is at 0 and LSTM's c at H.
    const T* prev = t == 0 ? h0 : forward + g.Row(t - 1) * g.batch * width;
    const int64_t ld_prev = t == 0 ? h : width;
    for (int64_t b = 0; b < g.batch; ++b) {
      if (b_hh) std::memcpy(hidden.data() + b * gates, b_hh, sizeof(T) * gates);
      else std::fill_n(hidden.data() + b * gates, gates, T(0));
    }
    Gemm<T>(false, true, g.batch, gates, h, prev, ld_prev, w_hh, h, T(1), hidden.data(), gates);
    const T* input = input_gates + s * g.batch * gates;
    T* row = forward + s * g.batch * width;
    if (g.cell == RnnCell::kLstm) {
      const T* c_prev = t == 0 ? c0 : prev + h;
      LstmForward(g.batch, h, hidden.data(), input, c_prev, ld_prev, row);
    } else {
      GruForward(g.batch, h, hidden.data(), input, prev, ld_prev, row);
    }
  }
}

template <typename T>
void RnnLayerBackward(const T* grad_h, const T* grad_hn, const T* grad_cn, const T* w_hh, const T* h0,
                      const T* c0, const T* forward, T* backward, const int64_t* geometry) {
  const Geometry g(geometry);
  const int64_t h = g.hidden, gates = RnnGates(g.cell) * h, width = RnnForwardWidth(g.cell, h);
  const int64_t grad_width = RnnBackwardWidth(g.cell, h), state = g.batch * h;
  const bool lstm = g.cell == RnnCell::kLstm;
  // The gradients reaching the current step's state from the steps after it.
  std::vector<T> dh(grad_hn, grad_hn + state), dc(lstm ? grad_cn : grad_hn, (lstm ? grad_cn : grad_hn) + state);
  std::vector<T> dh_prev(static_cast<size_t>(state));
  for (int64_t t = g.steps - 1; t >= 0; --t) {
    const int64_t s = g.Row(t);
    const T* prev = t == 0 ? h0 : forward + g.Row(t - 1) * g.batch * width;
    const int64_t ld_prev = t == 0 ? h : width;
    const T* row = forward + s * g.batch * width;
    const T* grad_out = grad_h + s * state;
    T* grad_row = backward + s * g.batch * grad_width;
    if (lstm) {
      LstmBackward(g.batch, h, grad_out, dh.data(), dc.data(), row, t == 0 ? c0 : prev + h, ld_prev, grad_row);
      Gemm<T>(false, false, g.batch, h, gates, grad_row, grad_width, w_hh, h, T(0), dh.data(), h);
    } else {
      GruBackward(g.batch, h, grad_out, dh.data(), row, prev, ld_prev, grad_row, dh_prev.data());
      // The hidden projection's gradients are the row's second half.
      Gemm<T>(false, false, g.batch, h, gates, grad_row + gates, grad_width, w_hh, h, T(1), dh_prev.data(), h);
      dh.swap(dh_prev);
    }
  }
  T* last = backward + g.steps * g.batch * grad_width;
  for (int64_t b = 0; b < g.batch; ++b) {
    T* out = last + b * grad_width;
    std::fill_n(out, grad_width, T(0));
    std::copy_n(dh.data() + b * h, h, out);
    if (lstm) std::copy_n(dc.data() + b * h, h, out + h);
  }
}

template void RnnLayer<float>(const float*, const float*, const float*, const float*, const float*, float*,
                              const int64_t*);
template void RnnLayer<double>(const double*, const double*, const double*, const double*, const double*, double*,
                               const int64_t*);
template void RnnLayerBackward<float>(const float*, const float*, const float*, const float*, const float*,
                                      const float*, const float*, float*, const int64_t*);
template void RnnLayerBackward<double>(const double*, const double*, const double*, const double*, const double*,
                                       const double*, const double*, double*, const int64_t*);

}  // namespace txla::compiler::library
