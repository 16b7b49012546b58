// nn.LSTM and nn.GRU on xla tensors: each layer and direction one recurrence op over the whole
// sequence (txla::rnn_layer, a library call; compiler/library/recurrent.h), with a gradient that is
// one op too (txla::rnn_layer_backward).
//
// ATen's lstm and gru are composite: on a lazy device they unroll into a handful of ops per step
// and layer, forward and backward, which the host traces every training step (2 layers of 32
// steps: ~2000 ops) and the compiler turns into as many tiny kernels. Here the input projection
// of every step is one GEMM (at::linear over the sequence, as ATen does it), the recurrence one
// call, and the weights' gradients one GEMM each after the backward recurrence.
//
// What this path does not cover keeps ATen's decomposition: projections (proj_size), dtypes other
// than float32 and float64, an empty sequence, and inputs that are not [steps, batch, features]
// after batch_first. A double backward (create_graph) through a fused layer raises.
#include <ATen/ATen.h>
#include <ATen/ops/gru_native.h>
#include <ATen/ops/lstm_native.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include "compiler/library/recurrent.h"

#include <optional>
#include <tuple>
#include <vector>

namespace txla::aten {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

using compiler::library::RnnCell;

// The cells, as txla::rnn_layer's `cell` argument numbers them.
constexpr int64_t kLstm = static_cast<int64_t>(RnnCell::kLstm), kGru = static_cast<int64_t>(RnnCell::kGru);


// The forward layout's state columns: h at [0, H), LSTM's c at [H, 2H).
at::Tensor StateColumns(const at::Tensor& forward, int64_t which, int64_t hidden) {
  return forward.narrow(-1, which * hidden, hidden);
}

// ---- The ops' definitions off the device (CPU, and Meta for shapes): ATen's cell formulas step
// by step. The device's library call computes the same, in one call.

at::Tensor RnnLayerReference(const at::Tensor& input_gates, const at::Tensor& w_hh, const at::Tensor& b_hh,
                             const at::Tensor& h0, const at::Tensor& c0, int64_t cell, bool reverse) {
  const int64_t steps = input_gates.size(0), hidden = w_hh.size(1);
  const int64_t width = compiler::library::RnnForwardWidth(static_cast<RnnCell>(cell), hidden);
  if (steps == 0) return at::empty({0, h0.size(0), width}, input_gates.options());
  std::vector<at::Tensor> rows(steps);
  at::Tensor h = h0, c = c0;
  for (int64_t t = 0; t < steps; ++t) {
    const int64_t s = reverse ? steps - 1 - t : t;
    const at::Tensor hidden_gates = at::addmm(b_hh, h, w_hh.t());
    if (cell == kLstm) {
      const auto g = (hidden_gates + input_gates[s]).chunk(4, 1);
      const at::Tensor i = g[0].sigmoid(), f = g[1].sigmoid(), cg = g[2].tanh(), o = g[3].sigmoid();
      c = f * c + i * cg;
      h = o * c.tanh();
      rows[s] = at::cat({h, c, i, f, cg, o}, 1);
    } else {
      const auto hg = hidden_gates.chunk(3, 1), ig = input_gates[s].chunk(3, 1);
      const at::Tensor r = (hg[0] + ig[0]).sigmoid(), z = (hg[1] + ig[1]).sigmoid();
      const at::Tensor n = (ig[2] + hg[2] * r).tanh();
      h = (h - n) * z + n;
      rows[s] = at::cat({h, r, z, n, hg[2]}, 1);
    }
  }
  return at::stack(rows, 0);
}

at::Tensor RnnLayerBackwardReference(const at::Tensor& grad_h, const at::Tensor& grad_hn, const at::Tensor& grad_cn,
                                     const at::Tensor& w_hh, const at::Tensor& h0, const at::Tensor& c0,
                                     const at::Tensor& forward, int64_t cell, bool reverse) {
  const int64_t steps = grad_h.size(0), hidden = w_hh.size(1);
  const int64_t width = compiler::library::RnnBackwardWidth(static_cast<RnnCell>(cell), hidden);
  std::vector<at::Tensor> rows(steps + 1);
  at::Tensor dh = grad_hn, dc = grad_cn;
  for (int64_t t = steps - 1; t >= 0; --t) {
    const int64_t s = reverse ? steps - 1 - t : t, p = reverse ? s + 1 : s - 1;
    const at::Tensor row = forward[s];
    const at::Tensor h_prev = t == 0 ? h0 : StateColumns(forward[p], 0, hidden);
    const at::Tensor dh_t = grad_h[s] + dh;
    auto col = [&](int64_t k) { return row.narrow(1, k * hidden, hidden); };
    if (cell == kLstm) {
      const at::Tensor c_prev = t == 0 ? c0 : StateColumns(forward[p], 1, hidden);
      const at::Tensor c = col(1), i = col(2), f = col(3), g = col(4), o = col(5), tc = c.tanh();
      const at::Tensor dc_t = dc + (dh_t * o) * (1 - tc * tc);
      rows[s] = at::cat({(dc_t * g) * (1 - i) * i, (dc_t * c_prev) * (1 - f) * f, (dc_t * i) * (1 - g * g),
                         (dh_t * tc) * (1 - o) * o},
                        1);
      dc = dc_t * f;
      dh = rows[s].mm(w_hh);
    } else {
      const at::Tensor r = col(1), z = col(2), n = col(3), hn = col(4);
      const at::Tensor dpn = (dh_t * (1 - z)) * (1 - n * n);
      const at::Tensor dpr = (dpn * hn) * (1 - r) * r, dpz = (dh_t * (h_prev - n)) * (1 - z) * z;
      const at::Tensor d_hidden = at::cat({dpr, dpz, dpn * r}, 1);
      rows[s] = at::cat({dpr, dpz, dpn, d_hidden}, 1);
      dh = at::addmm(dh_t * z, d_hidden, w_hh);
    }
  }
  at::Tensor last = at::zeros({grad_hn.size(0), width}, grad_h.options());
  last.narrow(1, 0, hidden).copy_(dh);
  if (cell == kLstm) last.narrow(1, hidden, hidden).copy_(dc);
  rows[steps] = last;
  return at::stack(rows, 0);
}

// ---- The device's path.

at::Tensor RnnLayerOp(const at::Tensor& input_gates, const at::Tensor& w_hh, const at::Tensor& b_hh,
                      const at::Tensor& h0, const at::Tensor& c0, int64_t cell, bool reverse) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("txla::rnn_layer", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                         const at::Tensor&, int64_t, bool)>();
  return op.call(input_gates, w_hh, b_hh, h0, c0, cell, reverse);
}

at::Tensor RnnLayerBackwardOp(const at::Tensor& grad_h, const at::Tensor& grad_hn, const at::Tensor& grad_cn,
                              const at::Tensor& w_hh, const at::Tensor& h0, const at::Tensor& c0,
                              const at::Tensor& forward, int64_t cell, bool reverse) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("txla::rnn_layer_backward", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                         const at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t, bool)>();
  return op.call(grad_h, grad_hn, grad_cn, w_hh, h0, c0, forward, cell, reverse);
}

// One layer in one direction: (input_gates, w_hh, b_hh, h0, c0) -> (output [T, B, H], h_n, and
// LSTM's c_n). Every input defined (autograd records none undefined): a layer without biases
// passes zeros with has_bias false, GRU passes h0 as c0, and neither gets a gradient there.
class RnnLayerFunction : public torch::autograd::Function<RnnLayerFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& input_gates, const at::Tensor& w_hh,
                               const at::Tensor& b_hh, const at::Tensor& h0, const at::Tensor& c0, int64_t cell,
                               bool reverse, bool has_bias) {
    const int64_t steps = input_gates.size(0), hidden = w_hh.size(1);
    const at::Tensor forward = RnnLayerOp(input_gates, w_hh, b_hh, h0, c0, cell, reverse);
    ctx->save_for_backward({w_hh, h0, c0, forward});
    ctx->saved_data["cell"] = cell;
    ctx->saved_data["reverse"] = reverse;
    ctx->saved_data["has_bias"] = has_bias;
    const at::Tensor last = forward[reverse ? 0 : steps - 1];
    variable_list outputs{StateColumns(forward, 0, hidden).clone(), StateColumns(last, 0, hidden).clone()};
    if (cell == kLstm) outputs.push_back(StateColumns(last, 1, hidden).clone());
    return outputs;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    TORCH_CHECK(!at::GradMode::is_enabled(),
                "a double backward (create_graph=True) through nn.LSTM or nn.GRU on an xla device is not "
                "supported: their layers are fused ops whose gradient is not differentiable again");
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &w_hh = saved[0], &h0 = saved[1], &c0 = saved[2], &forward = saved[3];
    const int64_t cell = ctx->saved_data["cell"].toInt();
    const bool reverse = ctx->saved_data["reverse"].toBool();
    const int64_t steps = forward.size(0), batch = forward.size(1), hidden = w_hh.size(1), gates = w_hh.size(0);
    auto or_zeros = [&](const at::Tensor& g, at::IntArrayRef sizes) {
      return g.defined() ? g : at::zeros(sizes, forward.options());
    };
    const at::Tensor grad_h = or_zeros(grads[0], {steps, batch, hidden});
    const at::Tensor grad_hn = or_zeros(grads[1], {batch, hidden});
    const at::Tensor grad_cn = cell == kLstm ? or_zeros(grads[2], {batch, hidden}) : grad_hn;
    const at::Tensor back = RnnLayerBackwardOp(grad_h, grad_hn, grad_cn, w_hh, h0, c0, forward, cell, reverse);
    const at::Tensor per_step = back.narrow(0, 0, steps);
    const at::Tensor grad_input = cell == kLstm ? per_step : per_step.narrow(2, 0, gates);
    const at::Tensor grad_hidden = cell == kLstm ? per_step : per_step.narrow(2, gates, gates);
    // The state each step read: h0, then the steps' outputs in the order the layer ran.
    const at::Tensor outputs = StateColumns(forward, 0, hidden);
    const at::Tensor first = h0.unsqueeze(0);
    const at::Tensor h_prev = steps == 1 ? first
                              : reverse  ? at::cat({outputs.narrow(0, 1, steps - 1), first}, 0)
                                         : at::cat({first, outputs.narrow(0, 0, steps - 1)}, 0);
    const at::Tensor grad_w_hh = grad_hidden.reshape({steps * batch, gates}).t().mm(h_prev.reshape({steps * batch, hidden}));
    const at::Tensor grad_b_hh = ctx->saved_data["has_bias"].toBool() ? grad_hidden.sum(at::IntArrayRef{0, 1}) : at::Tensor();
    const at::Tensor initial = back[steps];
    const at::Tensor grad_h0 = StateColumns(initial, 0, hidden);
    const at::Tensor grad_c0 = cell == kLstm ? StateColumns(initial, 1, hidden) : at::Tensor();
    return {grad_input, grad_w_hh, grad_b_hh, grad_h0, grad_c0, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// What the fused path takes: a [T, B, F] sequence (after batch_first) of at least one step in
// float32 or float64, every parameter of its dtype, states of one hidden size (no projection).
bool Fusable(const at::Tensor& input, at::TensorList states, at::TensorList params, bool has_biases,
             int64_t layers, bool bidirectional) {
  if (input.dim() != 3 || input.numel() == 0) return false;
  if (input.scalar_type() != at::kFloat && input.scalar_type() != at::kDouble) return false;
  const int64_t per_layer = has_biases ? 4 : 2;
  if (static_cast<int64_t>(params.size()) != layers * (bidirectional ? 2 : 1) * per_layer) return false;
  for (const at::Tensor& t : params)
    if (t.scalar_type() != input.scalar_type() || t.device() != input.device()) return false;
  for (const at::Tensor& s : states)
    if (s.dim() != 3 || s.scalar_type() != input.scalar_type() || s.size(2) != states[0].size(2) ||
        s.device() != input.device())
      return false;
  return true;
}

// ATen's layer stack (RNN.cpp's apply_layer_stack): each layer's directions side by side, dropout
// between layers while training. Returns the last layer's output and every final state.
std::tuple<at::Tensor, at::Tensor, at::Tensor> RunStack(int64_t cell, const at::Tensor& input, const at::Tensor& h0,
                                                        const at::Tensor& c0, at::TensorList params, bool has_biases,
                                                        int64_t layers, double dropout, bool train, bool bidirectional,
                                                        bool batch_first) {
  const int64_t directions = bidirectional ? 2 : 1, per_layer = has_biases ? 4 : 2;
  at::Tensor x = batch_first ? input.transpose(0, 1) : input;
  std::vector<at::Tensor> h_n, c_n;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<at::Tensor> outputs;
    for (int64_t d = 0; d < directions; ++d) {
      const int64_t k = l * directions + d;
      const at::TensorList p = params.slice(k * per_layer, per_layer);
      const std::optional<at::Tensor> b_ih = has_biases ? std::optional<at::Tensor>(p[2]) : std::nullopt;
      const at::Tensor b_hh = has_biases ? p[3] : at::zeros({p[1].size(0)}, p[1].options());
      const at::Tensor input_gates = at::linear(x, p[0], b_ih);
      const variable_list out = RnnLayerFunction::apply(input_gates, p[1], b_hh, h0[k], cell == kLstm ? c0[k] : h0[k],
                                                        cell, d == 1, has_biases);
      outputs.push_back(out[0]);
      h_n.push_back(out[1]);
      if (cell == kLstm) c_n.push_back(out[2]);
    }
    x = directions == 1 ? outputs[0] : at::cat(outputs, 2);
    if (dropout != 0 && train && l < layers - 1) x = at::dropout(x, dropout, /*train=*/true);
  }
  return {batch_first ? x.transpose(0, 1) : x, at::stack(h_n, 0), cell == kLstm ? at::stack(c_n, 0) : at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> Lstm(const at::Tensor& input, at::TensorList hx, at::TensorList params,
                                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                                    bool bidirectional, bool batch_first) {
  if (hx.size() != 2 || !Fusable(input, hx, params, has_biases, num_layers, bidirectional))
    return at::native::lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  return RunStack(kLstm, input, hx[0], hx[1], params, has_biases, num_layers, dropout, train, bidirectional,
                  batch_first);
}

std::tuple<at::Tensor, at::Tensor> Gru(const at::Tensor& input, const at::Tensor& hx, at::TensorList params,
                                       bool has_biases, int64_t num_layers, double dropout, bool train,
                                       bool bidirectional, bool batch_first) {
  if (!Fusable(input, {hx}, params, has_biases, num_layers, bidirectional))
    return at::native::gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  auto [output, h_n, unused] = RunStack(kGru, input, hx, at::Tensor(), params, has_biases, num_layers, dropout,
                                        train, bidirectional, batch_first);
  return {output, h_n};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, AutogradXLA, m) {
  m.impl("lstm.input", TORCH_FN(Lstm));
  m.impl("gru.input", TORCH_FN(Gru));
}

TORCH_LIBRARY_IMPL(txla, CompositeExplicitAutograd, m) {
  m.impl("rnn_layer", TORCH_FN(RnnLayerReference));
  m.impl("rnn_layer_backward", TORCH_FN(RnnLayerBackwardReference));
}

}  // namespace txla::aten
