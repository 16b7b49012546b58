// The recurrence of one LSTM or GRU layer in one direction over a whole sequence, in one call:
// a GEMM of the previous hidden state by the hidden weights and the cell's elementwise step, T
// times, each step reading the last. Unrolled into the graph instead, T steps of tiny kernels cost
// the host more to trace and the device more to launch than the arithmetic they do.
//
// The input projection (x W_ih^T + b_ih, one GEMM over every step) and the weight gradients
// (one GEMM each) stay ordinary graph ops; only the sequential part is here. Each step rounds as
// eager's decomposition (ATen's RNN.cpp cells) does: gates = (h W_hh^T + b_hh) + input_gates,
// then the cell's formula term by term, no contraction into fused multiply-adds.
//
// Layouts, row-major, with B the batch, H the hidden size and one row per time step in sequence
// order (a reverse layer walks the rows from the last):
//   input_gates [T, B, G*H]  G = 4 (LSTM: i, f, g, o) or 3 (GRU: r, z, n), before activation
//   forward     [T, B, F]    the step's state and what its gradient reads:
//                            LSTM F = 6H: h, c, i, f, g, o (activated);
//                            GRU  F = 5H: h, r, z, n, and the hidden part of n's gate (W_hn h + b_hn)
//   backward    [T + 1, B, D] rows 0..T-1 the gradients of the step's gates before activation:
//                            LSTM D = 4H (the same for the input and the hidden projection);
//                            GRU  D = 6H: the input projection's 3H, then the hidden projection's 3H
//                            (n's differs: r scales it). Row T: the initial state's gradients,
//                            h0's in columns [0, H), LSTM's c0's in [H, 2H), zeros after.
// geometry: {T, B, H, cell (RnnCell), reverse (0 or 1)}.
#pragma once

#include <cstdint>

namespace txla::compiler::library {

enum class RnnCell : int64_t { kLstm = 0, kGru = 1 };

// Gates a step computes (G), and the widths of a forward and a backward row (F and D above).
constexpr int64_t RnnGates(RnnCell cell) { return cell == RnnCell::kLstm ? 4 : 3; }
constexpr int64_t RnnForwardWidth(RnnCell cell, int64_t hidden) {
  return (cell == RnnCell::kLstm ? 6 : 5) * hidden;
}
constexpr int64_t RnnBackwardWidth(RnnCell cell, int64_t hidden) {
  return (cell == RnnCell::kLstm ? 4 : 6) * hidden;
}

// b_hh may be null (a layer without biases). c0 is read by LSTM only.
template <typename T>
void RnnLayer(const T* input_gates, const T* w_hh, const T* b_hh, const T* h0, const T* c0, T* forward,
              const int64_t* geometry);

// grad_h [T, B, H]: the gradient of every step's output; grad_hn, grad_cn [B, H]: of the final
// state (grad_cn read by LSTM only). `forward` is RnnLayer's output for h0 and c0.
template <typename T>
void RnnLayerBackward(const T* grad_h, const T* grad_hn, const T* grad_cn, const T* w_hh, const T* h0,
                      const T* c0, const T* forward, T* backward, const int64_t* geometry);

}  // namespace txla::compiler::library
