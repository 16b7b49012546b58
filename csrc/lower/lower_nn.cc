// Lowering of pooling and batch norm, and their gradients (convolution: lower_conv.cc). Norms are
// plain reductions and elementwise HLO (they fuse); max pooling's indices and gradient are
// library calls.
#include <ATen/ATen.h>

#include <algorithm>

#include "hlo/shape_inference.h"
#include "ir/op_table.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// An int[k] argument of a k-D pooling given as one value or k (empty: `if_empty`).
std::vector<int64_t> PerSpatialDim(LoweringContext& c, const ir::Node& n, size_t arg, int64_t if_empty, size_t k) {
  std::vector<int64_t> v = IntList(c.ConstArg(n, arg));
  if (v.empty()) v = {if_empty};
  if (v.size() == 1) v.resize(k, v[0]);
  return v;
}

// Pooling windows over the last `k` dimensions (k = the kernel's length, 2 when it gives one
// value); the leading ones get a window of 1.
std::vector<hlo::WindowDim> PoolWindow(LoweringContext& c, const ir::Node& n, const hlo::Shape& in,
                                       const std::vector<int64_t>& out_dims, size_t kernel_arg,
                                       bool with_dilation) {
  const size_t k = std::max<size_t>(IntList(c.ConstArg(n, kernel_arg)).size(), 2);
  auto kernel = PerSpatialDim(c, n, kernel_arg, 1, k);
  auto stride = IntList(c.ConstArg(n, kernel_arg + 1));
  if (stride.empty()) stride = kernel;
  if (stride.size() == 1) stride.resize(k, stride[0]);
  auto padding = PerSpatialDim(c, n, kernel_arg + 2, 0, k);
  auto dilation = with_dilation ? PerSpatialDim(c, n, kernel_arg + 3, 1, k) : std::vector<int64_t>(k, 1);
  const int64_t r = in.rank(), first = r - static_cast<int64_t>(k);
  std::vector<hlo::WindowDim> window(r);
  for (size_t s = 0; s < k; ++s) {
    const int64_t d = first + static_cast<int64_t>(s);
    hlo::WindowDim& w = window[d];
    w.size = kernel[s], w.stride = stride[s], w.pad_lo = padding[s], w.rhs_dilation = dilation[s];
    // ceil_mode shows as a longer output: pad the high side just enough for it.
    int64_t needed = (out_dims[d] - 1) * w.stride + (w.size - 1) * w.rhs_dilation + 1 - in.dims[d] - w.pad_lo;
    w.pad_hi = std::max(w.pad_lo, needed);
    if (hlo::WindowedOutputSize(in.dims[d], w) != out_dims[d]) w.pad_hi = needed;
  }
  return window;
}

// The dimensions a pooling window spans (size, stride or padding other than the identity), at
// least the last two.
int64_t FirstPooledDim(const std::vector<hlo::WindowDim>& window) {
  int64_t first = static_cast<int64_t>(window.size()) - 2;
  for (int64_t d = 0; d < first; ++d) {
    const hlo::WindowDim& w = window[d];
    if (w.size != 1 || w.stride != 1 || w.pad_lo != 0 || w.pad_hi != 0) return d;
  }
  return first;
}

// max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)
Outs MaxPool2dWithIndices(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  hlo::Attributes a;
  a.window = PoolWindow(c, n, x->shape(), n.shape(0).sizes, 1, true);
  a.custom_call_target = hlo::CustomCallTarget::kMaxPool2dIndices;
  Instruction* indices = c.Add(Opcode::kCustomCall, hlo::Shape::Array(ElementType::kS64, n.shape(1).sizes), {x}, a);
  const bool padded = std::any_of(a.window.begin(), a.window.end(),
                                  [](const hlo::WindowDim& w) { return w.pad_lo != 0 || w.pad_hi != 0; });
  if (!padded) return {c.ReduceWindow(x, a.window, RK::kMax), indices};
  // Over a padded plane the values are the input at the indices (offsets in each image plane),
  // read where they are used: the library call finds each window's maximum anyway, and the
  // reduce-window's clamped reads (ResNet-18's stem: 3x3 at stride 2, padding 1) vectorized into
  // gathers, 1.3-1.6 ms of a training step on a Zen 4 EPYC; with the values read at the indices
  // the stem's pooling kernels took 1.3-1.5 ms a step instead of 2.7-3.2. Without padding the
  // reduce-window vectorizes and stays: the MNIST CNN's 2x2 pools read at their indices took
  // 2.2-2.7 ms of fused kernels a step instead of 0.8-1.1. The index of a NaN (ATen's rule)
  // reads the NaN, and of a tie the first maximum.
  std::vector<int64_t> lead(x->shape().dims.begin(), x->shape().dims.end() - 2);
  const std::vector<int64_t>& out = n.shape(0).sizes;
  auto plane = [&](int64_t h, int64_t w) {
    std::vector<int64_t> dims = lead;
    dims.push_back(h * w);
    return dims;
  };
  const int64_t rank = x->shape().rank();
  Instruction* values = c.TakeAlong(c.Reshape(x, plane(x->shape().dims[rank - 2], x->shape().dims[rank - 1])),
                                    c.Reshape(indices, plane(out[rank - 2], out[rank - 1])), rank - 2);
  return {c.Reshape(values, out), indices};
}

// A max pool's gradient: grad_output and self (arguments 0 and 1), the window from argument 2 on.
struct PoolGradient {
  Instruction* dy;
  Instruction* x;
  hlo::Attributes attrs;
  hlo::Shape dx;

  PoolGradient(LoweringContext& c, const ir::Node& n)
      : dy(c.Operand(n, 0)), x(c.Operand(n, 1)), dx(hlo::Shape::Array(OutType(n), x->shape().dims)) {
    attrs.window = PoolWindow(c, n, x->shape(), dy->shape().dims, 2, true);
  }
  bool WindowsTile() const { return hlo::WindowsTileExactly(attrs.window, x->shape().dims, dy->shape().dims); }
  Instruction* FromInput(LoweringContext& c) { return Call(c, hlo::CustomCallTarget::kMaxPool2dBackwardFromInput, {dy, x}); }
  Instruction* FromIndices(LoweringContext& c, Instruction* indices) {
    return Call(c, hlo::CustomCallTarget::kMaxPool2dBackward, {dy, indices});
  }
  Instruction* Call(LoweringContext& c, hlo::CustomCallTarget target, std::vector<Instruction*> operands) {
    attrs.custom_call_target = target;
    return c.Add(Opcode::kCustomCall, dx, std::move(operands), attrs);
  }
};

// max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
// ceil_mode, indices)
Outs MaxPool2dWithIndicesBackward(LoweringContext& c, const ir::Node& n) {
  PoolGradient g(c, n);
  // Windows that tile the input, with indices the same graph computed from this input and
  // window: the gradient finds each window's maximum in the input again instead (a loop kernel,
  // codegen's EmitPoolBackwardFromInput), and the int64 indices (8 bytes an output) are neither
  // written nor read: the indices call is then dead unless something else uses them.
  const ir::Value& indices = n.operands().at(n.args().at(7).operand);
  const ir::Node& producer = *indices.node;
  if (g.WindowsTile() && indices.index == 1 && producer.kind() == ir::NodeKind::kOp &&
      producer.op()->name == op::aten_max_pool2d_with_indices && c.Operand(producer, 0) == g.x &&
      PoolWindow(c, producer, g.x->shape(), g.dy->shape().dims, 1, true) == g.attrs.window)
    return {g.FromInput(c)};
  return {g.FromIndices(c, c.Operand(n, 7))};
}

// txla::max_pool2d_backward_from_input(grad_output, self, kernel_size, stride, padding,
// dilation, ceil_mode): what max_pool2d's autograd records for windows that tile the input
// (aten/max_pool_autograd.cc). Other windows (called directly) find the indices first.
Outs MaxPool2dBackwardFromInput(LoweringContext& c, const ir::Node& n) {
  PoolGradient g(c, n);
  if (g.WindowsTile()) return {g.FromInput(c)};
  hlo::Attributes a = g.attrs;
  a.custom_call_target = hlo::CustomCallTarget::kMaxPool2dIndices;
  const hlo::Shape indices = hlo::Shape::Array(ElementType::kS64, g.dy->shape().dims);
  return {g.FromIndices(c, c.Add(Opcode::kCustomCall, indices, {g.x}, a))};
}

// How many input positions each output of a 2-D average pool divides by: the window clipped to
// the padded input (count_include_pad) or to the input itself, per ATen; an iota formula, fused.
Instruction* PoolDivisor(LoweringContext& c, const std::vector<hlo::WindowDim>& window,
                         const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                         bool count_include_pad, ElementType t) {
  using S = ElementType;
  int64_t r = static_cast<int64_t>(out_dims.size());
  Instruction* size = nullptr;
  for (int64_t d = FirstPooledDim(window); d < r; ++d) {
    const hlo::WindowDim& w = window[d];
    hlo::Attributes iota;
    iota.index = d;
    Instruction* o = c.Add(Opcode::kIota, hlo::Shape::Array(S::kS64, out_dims), {}, iota);
    Instruction* start = c.Elementwise(Opcode::kSubtract, {c.Elementwise(Opcode::kMultiply, {o, c.Constant(w.stride, S::kS64)}, S::kS64),
                                                           c.Constant(w.pad_lo, S::kS64)}, S::kS64);
    Instruction* end = c.Elementwise(Opcode::kMinimum, {c.Elementwise(Opcode::kAdd, {start, c.Constant(w.size, S::kS64)}, S::kS64),
                                                        c.Constant(in_dims[d] + w.pad_lo, S::kS64)}, S::kS64);
    if (!count_include_pad) {
      start = c.Elementwise(Opcode::kMaximum, {start, c.Constant(0, S::kS64)}, S::kS64);
      end = c.Elementwise(Opcode::kMinimum, {end, c.Constant(in_dims[d], S::kS64)}, S::kS64);
    }
    Instruction* extent = c.Elementwise(Opcode::kSubtract, {end, start}, S::kS64);
    size = size ? c.Elementwise(Opcode::kMultiply, {size, extent}, S::kS64) : extent;
  }
  return c.Convert(size, t);
}

Instruction* AvgPoolDivisor(LoweringContext& c, const ir::Node& n, size_t first_flag,
                            const std::vector<hlo::WindowDim>& window, const std::vector<int64_t>& in_dims,
                            const std::vector<int64_t>& out_dims, ElementType t) {
  // (count_include_pad, divisor_override) at first_flag, first_flag + 1
  if (!c.IsNone(n, first_flag + 1)) return c.Constant(static_cast<double>(c.ConstArg(n, first_flag + 1).toInt()), t);
  return PoolDivisor(c, window, in_dims, out_dims, c.ConstArg(n, first_flag).toBool(), t);
}

// avg_pool2d / avg_pool3d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
Outs AvgPool(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  ElementType t = OutType(n);
  if (!hlo::IsFloating(t)) throw NotLowered("average pooling of an integer type");
  auto window = PoolWindow(c, n, x->shape(), n.shape().sizes, 1, false);
  Instruction* sum = c.ReduceWindow(x, window, RK::kSum);
  return {c.Elementwise(Opcode::kDivide, {sum, AvgPoolDivisor(c, n, 5, window, x->shape().dims, n.shape().sizes, t)}, t)};
}

// The adjoint of a stride-s, size-k window sum: spread each gradient over its window by padding
// it (s - 1 zeros between elements, k - 1 - pad before) and summing windows of k at stride 1.
Instruction* WindowSumTranspose(LoweringContext& c, Instruction* g, const std::vector<hlo::WindowDim>& window,
                                const std::vector<int64_t>& in_dims) {
  int64_t r = static_cast<int64_t>(in_dims.size());
  hlo::Attributes pad;
  pad.padding.resize(r);
  std::vector<hlo::WindowDim> spread(r);
  std::vector<int64_t> padded = g->shape().dims;
  for (int64_t d = 0; d < FirstPooledDim(window); ++d) spread[d].size = 1;
  for (int64_t d = FirstPooledDim(window); d < r; ++d) {
    const hlo::WindowDim& w = window[d];
    if (w.rhs_dilation != 1) throw NotLowered("pooling gradient with dilation");
    int64_t out = g->shape().dims[d];
    int64_t lo = w.size - 1 - w.pad_lo;
    int64_t hi = in_dims[d] + w.size - 1 - lo - ((out - 1) * w.stride + 1);
    if (lo < 0 || hi < 0 || out == 0) throw NotLowered("pooling gradient whose windows leave the padded input");
    pad.padding[d] = {lo, hi, w.stride - 1};
    padded[d] = lo + hi + (out - 1) * w.stride + 1;
    spread[d].size = w.size;
  }
  ElementType t = g->shape().type;
  Instruction* p = c.Add(Opcode::kPad, hlo::Shape::Array(t, padded), {g, c.Constant(0, t)}, pad);
  return c.ReduceWindow(p, spread, RK::kSum);
}

// avg_pool{2,3}d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
// count_include_pad, divisor_override)
Outs AvgPoolBackward(LoweringContext& c, const ir::Node& n) {
  Instruction* dy = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  ElementType t = OutType(n);
  auto window = PoolWindow(c, n, x->shape(), dy->shape().dims, 2, false);
  Instruction* scaled = c.Elementwise(
      Opcode::kDivide, {dy, AvgPoolDivisor(c, n, 6, window, x->shape().dims, dy->shape().dims, t)}, t);
  return {WindowSumTranspose(c, scaled, window, x->shape().dims)};
}

// Adaptive average pooling where the output divides the input: a plain average pool.
std::vector<hlo::WindowDim> AdaptiveWindow(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                                           int64_t spatial) {
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<hlo::WindowDim> window(r);
  for (int64_t d = 0; d < r; ++d) window[d].size = window[d].stride = 1;
  for (int64_t d = r - spatial; d < r; ++d) {
    if (out[d] == 0 || in[d] % out[d] != 0)
      throw NotLowered("adaptive average pooling whose output size does not divide the input");
    window[d].size = window[d].stride = in[d] / out[d];
  }
  return window;
}

double WindowCount(const std::vector<hlo::WindowDim>& window) {
  double count = 1;
  for (const hlo::WindowDim& w : window) count *= static_cast<double>(w.size);
  return count;
}

bool Divides(const std::vector<int64_t>& in, const std::vector<int64_t>& out, int64_t spatial) {
  for (size_t d = in.size() - spatial; d < in.size(); ++d)
    if (out[d] == 0 || in[d] % out[d] != 0) return false;
  return true;
}

// Where the output divides the input: a plain average pool (one reduce-window); otherwise
// windows of varying length, one gather per dimension and tap.
template <int kSpatial>
Outs AdaptiveAvgPool(LoweringContext& c, const ir::Node& n) {  // (self, output_size)
  Instruction* x = c.Operand(n, 0);
  ElementType t = OutType(n);
  if (!hlo::IsFloating(t)) throw NotLowered("adaptive average pooling of an integer type");
  if (!Divides(x->shape().dims, n.shape().sizes, kSpatial)) return {AdaptiveAverage(c, x, n.shape().sizes, kSpatial)};
  auto window = AdaptiveWindow(x->shape().dims, n.shape().sizes, kSpatial);
  return {c.Elementwise(Opcode::kDivide, {c.ReduceWindow(x, window, RK::kSum), c.Constant(WindowCount(window), t)}, t)};
}

template <int kSpatial>
Outs AdaptiveAvgPoolBackward(LoweringContext& c, const ir::Node& n) {  // (grad_output, self)
  Instruction* dy = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  ElementType t = OutType(n);
  if (!Divides(x->shape().dims, dy->shape().dims, kSpatial)) return {AdaptiveAverageAdjoint(c, dy, x->shape().dims, kSpatial)};
  auto window = AdaptiveWindow(x->shape().dims, dy->shape().dims, kSpatial);
  Instruction* scaled = c.Elementwise(Opcode::kDivide, {dy, c.Constant(WindowCount(window), t)}, t);
  return {WindowSumTranspose(c, scaled, window, x->shape().dims)};
}

// Batch norm statistics are per channel (dim 1): reduce every other dim, broadcast back as
// [C, 1, ...] against [N, C, ...].
struct ChannelDims {
  std::vector<int64_t> reduced;  // 0, 2, 3, ...
  std::vector<int64_t> column;   // [C, 1, 1]
  double count = 1;
};

ChannelDims ChannelsOf(const Instruction* x) {
  ChannelDims d;
  const auto& dims = x->shape().dims;
  for (int64_t k = 0; k < static_cast<int64_t>(dims.size()); ++k) {
    if (k == 1) continue;
    d.reduced.push_back(k);
    d.count *= static_cast<double>(dims[k]);
  }
  d.column.push_back(dims.size() > 1 ? dims[1] : 1);
  for (size_t k = 2; k < dims.size(); ++k) d.column.push_back(1);
  return d;
}

Instruction* OptionalOr(LoweringContext& c, const ir::Node& n, size_t arg, double fallback, ElementType t) {
  return c.IsNone(n, arg) ? c.Constant(fallback, t) : c.Convert(c.Operand(n, arg), t);
}

// The type batch norm computes in: its parameters' and statistics' (the first of `args` given),
// which under autocast is f32 for a bf16 input, as eager's mixed-type batch norm; else `input`.
ElementType ParameterType(LoweringContext& c, const ir::Node& n, std::initializer_list<size_t> args,
                          ElementType input) {
  for (size_t arg : args)
    if (!c.IsNone(n, arg)) return c.Operand(n, arg)->shape().type;
  return input;
}

// native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
//   -> (out, save_mean, save_invstd[, new running_mean, new running_var])
Outs BatchNorm(LoweringContext& c, const ir::Node& n) {
  // Mixed types (autocast: a bf16 input, f32 parameters and statistics) compute in the
  // statistics' type, as eager does; the output is in the input's type.
  ElementType out_type = OutType(n);
  ElementType t = ParameterType(c, n, {1, 3}, out_type);
  Instruction* x = c.Convert(c.Operand(n, 0), t);
  ChannelDims d = ChannelsOf(x);
  bool training = c.ConstArg(n, 5).toBool();
  Instruction* eps = c.ScalarArg(n, 7, t);
  Instruction* w = c.Reshape(OptionalOr(c, n, 1, 1, t), c.IsNone(n, 1) ? std::vector<int64_t>{} : d.column);
  Instruction* b = c.Reshape(OptionalOr(c, n, 2, 0, t), c.IsNone(n, 2) ? std::vector<int64_t>{} : d.column);
  Instruction *mean, *var;
  if (training) {
    Instruction* count = c.Constant(d.count, t);
    mean = c.Elementwise(Opcode::kDivide, {c.Reduce(x, d.reduced, RK::kSum), count}, t);
    Instruction* centered = c.Elementwise(Opcode::kSubtract, {x, c.Reshape(mean, d.column)}, t);
    Instruction* sq = c.Elementwise(Opcode::kMultiply, {centered, centered}, t);
    var = c.Elementwise(Opcode::kDivide, {c.Reduce(sq, d.reduced, RK::kSum), count}, t);
  } else {
    mean = c.Operand(n, 3);
    var = c.Operand(n, 4);
  }
  Instruction* invstd = c.Elementwise(Opcode::kRsqrt, {c.Elementwise(Opcode::kAdd, {var, eps}, t)}, t);
  Instruction* scale = c.Elementwise(Opcode::kMultiply, {c.Reshape(invstd, d.column), w}, t);
  Instruction* centered = c.Elementwise(Opcode::kSubtract, {x, c.Reshape(mean, d.column)}, t);
  Outs outs = {c.Convert(c.Elementwise(Opcode::kAdd, {c.Elementwise(Opcode::kMultiply, {centered, scale}, t), b}, t),
                        out_type)};
  if (training) {
    outs.push_back(mean);
    outs.push_back(invstd);
  } else {  // eval returns empty statistics
    outs.push_back(c.BroadcastTo(c.Constant(0, t), n.shape(1).sizes));
    outs.push_back(c.BroadcastTo(c.Constant(0, t), n.shape(2).sizes));
  }
  if (n.shapes().size() > 3) {  // training with running statistics: their updated values
    Instruction* m = c.ScalarArg(n, 6, t);
    Instruction* keep = c.Elementwise(Opcode::kSubtract, {c.Constant(1, t), m}, t);
    auto update = [&](Instruction* running, Instruction* batch) {
      ElementType rt = running->shape().type;
      Instruction* v = c.Elementwise(Opcode::kAdd, {c.Elementwise(Opcode::kMultiply, {running, keep}, t),
                                                    c.Elementwise(Opcode::kMultiply, {batch, m}, t)}, t);
      return c.Convert(v, rt);
    };
    Instruction* unbiased = c.Elementwise(
        Opcode::kMultiply, {var, c.Constant(d.count / std::max(d.count - 1, 1.0), t)}, t);
    outs.push_back(update(c.Operand(n, 3), mean));
    outs.push_back(update(c.Operand(n, 4), unbiased));
  }
  return outs;
}

// native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
// save_invstd, train, eps, output_mask)
Outs BatchNormBackward(LoweringContext& c, const ir::Node& n) {
  // Computed in the parameter gradients' type (f32 under autocast); the input's gradient is in
  // the input's type.
  ElementType in_type = OutType(n, 0);
  ElementType t = ParameterType(c, n, {2, 3, 5}, in_type);
  Instruction* dy = c.Convert(c.Operand(n, 0), t);
  Instruction* x = c.Convert(c.Operand(n, 1), t);
  ChannelDims d = ChannelsOf(x);
  bool train = c.ConstArg(n, 7).toBool();
  auto mask = c.ConstArg(n, 9).toBoolList();
  Instruction *mean, *invstd;
  if (train) {
    mean = c.Operand(n, 5);
    invstd = c.Operand(n, 6);
  } else {
    mean = c.Operand(n, 3);
    invstd = c.Elementwise(Opcode::kRsqrt, {c.Elementwise(Opcode::kAdd, {c.Operand(n, 4), c.ScalarArg(n, 8, t)}, t)}, t);
  }
  Instruction* w = c.Reshape(OptionalOr(c, n, 2, 1, t), c.IsNone(n, 2) ? std::vector<int64_t>{} : d.column);
  Instruction* xhat = c.Elementwise(
      Opcode::kMultiply,
      {c.Elementwise(Opcode::kSubtract, {x, c.Reshape(mean, d.column)}, t), c.Reshape(invstd, d.column)}, t);
  Instruction* sum_dy = c.Reduce(dy, d.reduced, RK::kSum);
  Instruction* sum_dy_xhat = c.Reduce(c.Elementwise(Opcode::kMultiply, {dy, xhat}, t), d.reduced, RK::kSum);
  Outs outs(3, nullptr);
  if (mask[0]) {
    Instruction* scale = c.Elementwise(Opcode::kMultiply, {c.Reshape(invstd, d.column), w}, t);
    if (train) {
      Instruction* count = c.Constant(d.count, t);
      Instruction* mean_dy = c.Reshape(c.Elementwise(Opcode::kDivide, {sum_dy, count}, t), d.column);
      Instruction* mean_dy_xhat = c.Reshape(c.Elementwise(Opcode::kDivide, {sum_dy_xhat, count}, t), d.column);
      Instruction* centered = c.Elementwise(
          Opcode::kSubtract,
          {c.Elementwise(Opcode::kSubtract, {dy, mean_dy}, t),
           c.Elementwise(Opcode::kMultiply, {xhat, mean_dy_xhat}, t)}, t);
      outs[0] = c.Convert(c.Elementwise(Opcode::kMultiply, {centered, scale}, t), in_type);
    } else {
      outs[0] = c.Convert(c.Elementwise(Opcode::kMultiply, {dy, scale}, t), in_type);
    }
  }
  if (mask[1]) outs[1] = sum_dy_xhat;
  if (mask[2]) outs[2] = sum_dy;
  return outs;
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_max_pool2d_with_indices, MaxPool2dWithIndices)
TXLA_LOWER(aten_max_pool2d_with_indices_backward, MaxPool2dWithIndicesBackward)
TXLA_LOWER(txla_max_pool2d_backward_from_input, MaxPool2dBackwardFromInput)
TXLA_LOWER(aten_avg_pool2d, AvgPool)
TXLA_LOWER(aten_avg_pool2d_backward, AvgPoolBackward)
TXLA_LOWER(aten_avg_pool3d, AvgPool)
TXLA_LOWER(aten_avg_pool3d_backward, AvgPoolBackward)
TXLA_LOWER(aten__adaptive_avg_pool2d, AdaptiveAvgPool<2>)
TXLA_LOWER(aten__adaptive_avg_pool2d_backward, AdaptiveAvgPoolBackward<2>)
TXLA_LOWER(aten__adaptive_avg_pool3d, AdaptiveAvgPool<3>)
TXLA_LOWER(aten__adaptive_avg_pool3d_backward, AdaptiveAvgPoolBackward<3>)
TXLA_LOWER(aten_native_batch_norm, BatchNorm)
TXLA_LOWER(aten__native_batch_norm_legit, BatchNorm)
TXLA_LOWER(aten_native_batch_norm_backward, BatchNormBackward)

}  // namespace txla::lower
