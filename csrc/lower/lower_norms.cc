// Normalization layers: layer norm and group norm with their backwards. Both normalize over the
// trailing dims of a (reshaped) input, so group norm is layer norm over [N, group, C/group * HxW]
// followed by a per-channel affine.
#include <algorithm>

#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// Layer norm statistics are over the trailing `normalized_shape` dims, per leading position.
struct NormalizedDims {
  std::vector<int64_t> reduced, stats;  // stats: leading dims then 1s
  double count = 1;
};

NormalizedDims NormalizedOf(const Instruction* x, size_t normalized) {
  NormalizedDims d;
  const auto& dims = x->shape().dims;
  size_t axis = dims.size() - normalized;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k >= axis) {
      d.reduced.push_back(static_cast<int64_t>(k));
      d.count *= static_cast<double>(dims[k]);
      d.stats.push_back(1);
    } else {
      d.stats.push_back(dims[k]);
    }
  }
  return d;
}

// Mean over `d.reduced`, kept in the stats shape.
Instruction* MeanOver(LoweringContext& c, Instruction* x, const NormalizedDims& d, ElementType t) {
  return c.Reshape(c.Elementwise(Opcode::kDivide, {c.Reduce(x, d.reduced, RK::kSum), c.Constant(d.count, t)}, t),
                   d.stats);
}

struct Normalized {
  Instruction *xhat, *mean, *rstd;  // mean and rstd in the stats shape
};

// (x - mean) * rsqrt(var + eps), statistics over `d.reduced` (biased variance, two passes).
Normalized Normalize(LoweringContext& c, Instruction* x, const NormalizedDims& d, Instruction* eps, ElementType t) {
  Instruction* mean = MeanOver(c, x, d, t);
  Instruction* centered = c.Elementwise(Opcode::kSubtract, {x, mean}, t);
  Instruction* var = MeanOver(c, c.Elementwise(Opcode::kMultiply, {centered, centered}, t), d, t);
  Instruction* rstd = c.Elementwise(Opcode::kRsqrt, {c.Elementwise(Opcode::kAdd, {var, eps}, t)}, t);
  return {c.Elementwise(Opcode::kMultiply, {centered, rstd}, t), mean, rstd};
}

// The input gradient of a normalization, g being the (weight-scaled) output gradient:
// rstd * (g - mean(g) - xhat * mean(g * xhat)).
Instruction* NormalizedInputGradient(LoweringContext& c, Instruction* g, Instruction* xhat, Instruction* rstd,
                                     const NormalizedDims& d, ElementType t) {
  Instruction* mean_g = MeanOver(c, g, d, t);
  Instruction* mean_gx = MeanOver(c, c.Elementwise(Opcode::kMultiply, {g, xhat}, t), d, t);
  Instruction* inner = c.Elementwise(
      Opcode::kSubtract,
      {c.Elementwise(Opcode::kSubtract, {g, mean_g}, t), c.Elementwise(Opcode::kMultiply, {xhat, mean_gx}, t)}, t);
  return c.Elementwise(Opcode::kMultiply, {inner, rstd}, t);
}

// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd)
Outs LayerNorm(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  ElementType t = OutType(n);
  NormalizedDims d = NormalizedOf(x, IntList(c.ConstArg(n, 1)).size());
  Normalized norm = Normalize(c, x, d, c.ScalarArg(n, 4, t), t);
  Instruction* y = norm.xhat;
  if (!c.IsNone(n, 2)) y = c.Elementwise(Opcode::kMultiply, {y, c.Operand(n, 2)}, t);
  if (!c.IsNone(n, 3)) y = c.Elementwise(Opcode::kAdd, {y, c.Operand(n, 3)}, t);
  return {y, c.Reshape(norm.mean, n.shape(1).sizes), c.Reshape(norm.rstd, n.shape(2).sizes)};
}

// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
// output_mask) -> (grad_input, grad_weight, grad_bias)
Outs LayerNormBackward(LoweringContext& c, const ir::Node& n) {
  Instruction* dy = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  ElementType t = dy->shape().type;
  size_t normalized = IntList(c.ConstArg(n, 2)).size();
  NormalizedDims d = NormalizedOf(x, normalized);
  auto mask = c.ConstArg(n, 7).toBoolList();
  Instruction* mean = c.Reshape(c.Operand(n, 3), d.stats);
  Instruction* rstd = c.Reshape(c.Operand(n, 4), d.stats);
  Instruction* xhat = c.Elementwise(Opcode::kMultiply, {c.Elementwise(Opcode::kSubtract, {x, mean}, t), rstd}, t);
  std::vector<int64_t> outer;  // the leading dims, summed for the weight and bias gradients
  for (size_t k = 0; k + normalized < x->shape().dims.size(); ++k) outer.push_back(static_cast<int64_t>(k));
  Outs outs(3, nullptr);
  if (mask[0]) {
    Instruction* g = c.IsNone(n, 5) ? dy : c.Elementwise(Opcode::kMultiply, {dy, c.Operand(n, 5)}, t);
    outs[0] = NormalizedInputGradient(c, g, xhat, rstd, d, t);
  }
  if (mask[1] && !c.IsNone(n, 5))
    outs[1] = c.Reshape(c.Reduce(c.Elementwise(Opcode::kMultiply, {dy, xhat}, t), outer, RK::kSum), n.shape(1).sizes);
  if (mask[2] && !c.IsNone(n, 6)) outs[2] = c.Reshape(c.Reduce(dy, outer, RK::kSum), n.shape(2).sizes);
  return outs;
}

// x [N, C, *] as [N, group, C/group * HxW], the layout group norm's statistics are taken over.
Instruction* Grouped(LoweringContext& c, Instruction* x, int64_t n, int64_t group) {
  return c.Reshape(x, {n, group, x->shape().element_count() / std::max<int64_t>(n * group, 1)});
}

// A per-channel vector [C] broadcast over x [N, C, *].
Instruction* PerChannel(LoweringContext& c, Instruction* v, const std::vector<int64_t>& x_dims) {
  std::vector<int64_t> shape(x_dims.size(), 1);
  shape[1] = x_dims[1];
  return c.Reshape(v, shape);
}

// native_group_norm(input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean, rstd)
Outs GroupNorm(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  ElementType t = OutType(n);
  int64_t batch = c.ConstArg(n, 3).toInt(), group = c.ConstArg(n, 6).toInt();
  Instruction* g = Grouped(c, x, batch, group);
  NormalizedDims d = NormalizedOf(g, 1);
  Normalized norm = Normalize(c, g, d, c.ScalarArg(n, 7, t), t);
  Instruction* y = c.Reshape(norm.xhat, x->shape().dims);
  if (!c.IsNone(n, 1)) y = c.Elementwise(Opcode::kMultiply, {y, PerChannel(c, c.Operand(n, 1), x->shape().dims)}, t);
  if (!c.IsNone(n, 2)) y = c.Elementwise(Opcode::kAdd, {y, PerChannel(c, c.Operand(n, 2), x->shape().dims)}, t);
  return {y, c.Reshape(norm.mean, n.shape(1).sizes), c.Reshape(norm.rstd, n.shape(2).sizes)};
}

// native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C, HxW, group, output_mask)
Outs GroupNormBackward(LoweringContext& c, const ir::Node& n) {
  Instruction* dy = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  ElementType t = dy->shape().type;
  int64_t batch = c.ConstArg(n, 5).toInt(), channels = c.ConstArg(n, 6).toInt(), group = c.ConstArg(n, 8).toInt();
  auto mask = c.ConstArg(n, 9).toBoolList();
  const std::vector<int64_t> dims = x->shape().dims;
  Instruction* gx = Grouped(c, x, batch, group);
  NormalizedDims d = NormalizedOf(gx, 1);
  Instruction* mean = c.Reshape(c.Operand(n, 2), d.stats);
  Instruction* rstd = c.Reshape(c.Operand(n, 3), d.stats);
  Instruction* xhat = c.Elementwise(Opcode::kMultiply, {c.Elementwise(Opcode::kSubtract, {gx, mean}, t), rstd}, t);
  Outs outs(3, nullptr);
  if (mask[0]) {
    Instruction* g = c.IsNone(n, 4) ? dy : c.Elementwise(Opcode::kMultiply, {dy, PerChannel(c, c.Operand(n, 4), dims)}, t);
    g = Grouped(c, g, batch, group);
    outs[0] = c.Reshape(NormalizedInputGradient(c, g, xhat, rstd, d, t), dims);
  }
  // Per channel: sums over the batch and the spatial positions of [N, C, HxW].
  std::vector<int64_t> per_channel = {batch, channels, x->shape().element_count() / std::max<int64_t>(batch * channels, 1)};
  if (mask[1]) {
    Instruction* prod = c.Elementwise(Opcode::kMultiply, {c.Reshape(dy, per_channel), c.Reshape(xhat, per_channel)}, t);
    outs[1] = c.Reduce(prod, {0, 2}, RK::kSum);
  }
  if (mask[2]) outs[2] = c.Reduce(c.Reshape(dy, per_channel), {0, 2}, RK::kSum);
  return outs;
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_native_layer_norm, LayerNorm)
TXLA_LOWER(aten_native_layer_norm_backward, LayerNormBackward)
TXLA_LOWER(aten_native_group_norm, GroupNorm)
TXLA_LOWER(aten_native_group_norm_backward, GroupNormBackward)

}  // namespace txla::lower
