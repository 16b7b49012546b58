// Lowering of the elementwise losses and their gradients: mse, smooth L1, Huber, binary cross
// entropy; and the multi-class margin loss.
// The reduction argument follows ATen: 0 none, 1 mean, 2 sum.
#include <ATen/ATen.h>

#include "ir/op_table.h"
#include "lower/formula.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

std::vector<int64_t> AllDims(const Instruction* x) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x->shape().rank(); ++d) dims.push_back(d);
  return dims;
}

Instruction* Reduced(LoweringContext& c, Instruction* loss, int64_t reduction, ElementType t) {
  if (reduction == 0) return loss;
  Instruction* sum = c.Reduce(loss, AllDims(loss), RK::kSum);
  if (reduction == 2) return sum;
  return c.Elementwise(Opcode::kDivide, {sum, c.Constant(static_cast<double>(loss->shape().element_count()), t)}, t);
}

// The gradient's scale for a reduction: grad_output, divided by the element count for a mean.
Instruction* GradScale(LoweringContext& c, const ir::Node& n, int64_t reduction, ElementType t) {
  Instruction* g = c.Operand(n, 0);
  if (reduction != 1) return g;
  double count = static_cast<double>(c.Operand(n, 1)->shape().element_count());
  return c.Elementwise(Opcode::kDivide, {g, c.Constant(count, t)}, t);
}

Outs MseLoss(LoweringContext& c, const ir::Node& n) {  // (self, target, reduction)
  ElementType t = OutType(n);
  Instruction* d = c.Elementwise(Opcode::kSubtract, {c.Operand(n, 0), c.Operand(n, 1)}, t);
  return {Reduced(c, c.Elementwise(Opcode::kMultiply, {d, d}, t), c.ConstArg(n, 2).toInt(), t)};
}

Outs MseLossBackward(LoweringContext& c, const ir::Node& n) {  // (grad_output, self, target, reduction)
  ElementType t = OutType(n);
  Instruction* d = c.Elementwise(Opcode::kSubtract, {c.Operand(n, 1), c.Operand(n, 2)}, t);
  Instruction* g = GradScale(c, n, c.ConstArg(n, 3).toInt(), t);
  return {c.Elementwise(Opcode::kMultiply, {c.Elementwise(Opcode::kMultiply, {d, c.Constant(2, t)}, t), g}, t)};
}

Outs SmoothL1Loss(LoweringContext& c, const ir::Node& n) {  // (self, target, reduction, beta)
  ElementType t = OutType(n);
  Instruction* beta = c.ScalarArg(n, 3, t);
  Instruction* d = c.Elementwise(Opcode::kAbs, {c.Elementwise(Opcode::kSubtract, {c.Operand(n, 0), c.Operand(n, 1)}, t)}, t);
  Instruction* quadratic = c.Elementwise(
      Opcode::kDivide, {c.Elementwise(Opcode::kMultiply, {c.Constant(0.5, t), c.Elementwise(Opcode::kMultiply, {d, d}, t)}, t), beta}, t);
  Instruction* linear = c.Elementwise(Opcode::kSubtract, {d, c.Elementwise(Opcode::kMultiply, {c.Constant(0.5, t), beta}, t)}, t);
  Instruction* loss = c.Elementwise(Opcode::kSelect, {c.Elementwise(Opcode::kCompare, {d, beta}, t, Comparison::kLt), quadratic, linear}, t);
  return {Reduced(c, loss, c.ConstArg(n, 2).toInt(), t)};
}

Outs SmoothL1LossBackward(LoweringContext& c, const ir::Node& n) {  // (grad_output, self, target, reduction, beta)
  ElementType t = OutType(n);
  Instruction* beta = c.ScalarArg(n, 4, t);
  Instruction* d = c.Elementwise(Opcode::kSubtract, {c.Operand(n, 1), c.Operand(n, 2)}, t);
  Instruction* inner = c.Elementwise(Opcode::kCompare, {c.Elementwise(Opcode::kAbs, {d}, t), beta}, t, Comparison::kLt);
  Instruction* slope = c.Elementwise(Opcode::kSelect, {inner, c.Elementwise(Opcode::kDivide, {d, beta}, t),
                                                       c.Elementwise(Opcode::kSign, {d}, t)}, t);
  return {c.Elementwise(Opcode::kMultiply, {slope, GradScale(c, n, c.ConstArg(n, 3).toInt(), t)}, t)};
}

Outs HuberLoss(LoweringContext& c, const ir::Node& n) {  // (self, target, reduction, delta)
  ElementType t = OutType(n);
  Instruction* delta = c.ScalarArg(n, 3, t);
  Instruction* d = c.Elementwise(Opcode::kAbs, {c.Elementwise(Opcode::kSubtract, {c.Operand(n, 0), c.Operand(n, 1)}, t)}, t);
  Instruction* quadratic = c.Elementwise(Opcode::kMultiply, {c.Constant(0.5, t), c.Elementwise(Opcode::kMultiply, {d, d}, t)}, t);
  Instruction* linear = c.Elementwise(
      Opcode::kMultiply,
      {delta, c.Elementwise(Opcode::kSubtract, {d, c.Elementwise(Opcode::kMultiply, {c.Constant(0.5, t), delta}, t)}, t)}, t);
  Instruction* loss = c.Elementwise(Opcode::kSelect, {c.Elementwise(Opcode::kCompare, {d, delta}, t, Comparison::kLt), quadratic, linear}, t);
  return {Reduced(c, loss, c.ConstArg(n, 2).toInt(), t)};
}

// (grad_output, self, target, reduction, delta): the difference, clamped to [-delta, delta].
Outs HuberLossBackward(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* delta = c.ScalarArg(n, 4, t);
  Instruction* d = c.Elementwise(Opcode::kSubtract, {c.Operand(n, 1), c.Operand(n, 2)}, t);
  Instruction* below = c.Elementwise(Opcode::kCompare, {d, c.Elementwise(Opcode::kNegate, {delta}, t)}, t, Comparison::kLt);
  Instruction* above = c.Elementwise(Opcode::kCompare, {d, delta}, t, Comparison::kGt);
  Instruction* slope = c.Elementwise(
      Opcode::kSelect, {below, c.Elementwise(Opcode::kNegate, {delta}, t), c.Elementwise(Opcode::kSelect, {above, delta, d}, t)}, t);
  return {c.Elementwise(Opcode::kMultiply, {slope, GradScale(c, n, c.ConstArg(n, 3).toInt(), t)}, t)};
}

Outs BinaryCrossEntropy(LoweringContext& c, const ir::Node& n) {  // (self, target, weight?, reduction)
  ElementType t = OutType(n);
  Instruction* x = c.Operand(n, 0);
  Instruction* y = c.Operand(n, 1);
  Instruction* floor = c.Constant(-100, t);  // ATen clamps the logs at -100
  Instruction* log_x = c.Elementwise(Opcode::kMaximum, {c.Elementwise(Opcode::kLog, {x}, t), floor}, t);
  Instruction* log_1mx = c.Elementwise(
      Opcode::kMaximum, {c.Elementwise(Opcode::kLog, {c.Elementwise(Opcode::kSubtract, {c.Constant(1, t), x}, t)}, t), floor}, t);
  Instruction* loss = c.Elementwise(
      Opcode::kAdd, {c.Elementwise(Opcode::kMultiply, {y, log_x}, t),
                     c.Elementwise(Opcode::kMultiply, {c.Elementwise(Opcode::kSubtract, {c.Constant(1, t), y}, t), log_1mx}, t)}, t);
  loss = c.Elementwise(Opcode::kNegate, {loss}, t);
  if (!c.IsNone(n, 2)) loss = c.Elementwise(Opcode::kMultiply, {loss, c.Operand(n, 2)}, t);
  return {Reduced(c, loss, c.ConstArg(n, 3).toInt(), t)};
}

Outs BinaryCrossEntropyBackward(LoweringContext& c, const ir::Node& n) {
  // (grad_output, self, target, weight?, reduction)
  ElementType t = OutType(n);
  Instruction* x = c.Operand(n, 1);
  Instruction* y = c.Operand(n, 2);
  Instruction* denom = c.Elementwise(
      Opcode::kMaximum,
      {c.Elementwise(Opcode::kMultiply, {c.Elementwise(Opcode::kSubtract, {c.Constant(1, t), x}, t), x}, t), c.Constant(1e-12, t)}, t);
  Instruction* grad = c.Elementwise(Opcode::kDivide, {c.Elementwise(Opcode::kSubtract, {x, y}, t), denom}, t);
  grad = c.Elementwise(Opcode::kMultiply, {grad, GradScale(c, n, c.ConstArg(n, 4).toInt(), t)}, t);
  if (!c.IsNone(n, 3)) grad = c.Elementwise(Opcode::kMultiply, {grad, c.Operand(n, 3)}, t);
  return {grad};
}

Outs DropoutBackward(LoweringContext& c, const ir::Node& n) {  // (grad_output, mask, scale)
  ElementType t = OutType(n);
  Instruction* kept = c.Elementwise(Opcode::kMultiply, {c.Operand(n, 0), c.Convert(c.Operand(n, 1), t)}, t);
  return {c.Elementwise(Opcode::kMultiply, {kept, c.ScalarArg(n, 2, t)}, t)};
}

// multi_margin_loss's pieces over [N, C] scores x and targets y (an [N, 1] column):
// z = margin - x[y] + x, the classes that count (every one but y, where z > 0: a NaN z counts
// nothing, as in ATen's loop), and each row's weight[y] / C.
struct Margins {
  Instruction *z, *counts, *scale, *target;
};

Margins MarginsOf(LoweringContext& c, const ir::Node& n, Instruction* x, size_t target_arg, size_t margin_arg,
                  size_t weight_arg, ElementType t) {
  Builder b{c, t};
  const int64_t rows = x->shape().dims[0], classes = x->shape().dims[1];
  Instruction* y = c.Reshape(c.Convert(c.Operand(n, target_arg), ElementType::kS64), {rows, 1});
  Instruction* z = b.add(b.sub(c.ScalarArg(n, margin_arg, t), c.TakeAlong(x, y, 1)), x);
  Instruction* other = c.Elementwise(Opcode::kCompare, {c.Iota(hlo::Shape::Array(ElementType::kS64, {rows, classes}), 1), y},
                                     ElementType::kS64, Comparison::kNe);
  Instruction* counts = b.all(other, b.cmp(Comparison::kGt, z, b.k(0)));
  Instruction* scale = b.k(1.0 / static_cast<double>(classes));
  if (!c.IsNone(n, weight_arg))
    scale = b.mul(scale, c.Reshape(c.TakeRows(c.Operand(n, weight_arg), c.Reshape(y, {rows}), 0), {rows, 1}));
  return {z, counts, scale, y};
}

Instruction* AsRows(LoweringContext& c, Instruction* x) {
  return x->shape().rank() == 2 ? x : c.Reshape(x, {1, x->shape().element_count()});
}

// multi_margin_loss(self, target, p, margin, weight, reduction): per sample, the sum over the
// other classes of max(0, margin - x[y] + x[j])^p, times weight[y], over C.
Outs MultiMarginLoss(LoweringContext& c, const ir::Node& n) {
  const ElementType t = OutType(n);
  Builder b{c, t};
  Instruction* x = AsRows(c, c.Operand(n, 0));
  const bool squared = c.ConstArg(n, 2).toScalar().toDouble() == 2;
  Margins m = MarginsOf(c, n, x, 1, 3, 4, t);
  Instruction* hinge = squared ? b.mul(m.z, m.z) : m.z;
  Instruction* per_row = c.Reduce(b.mul(b.sel(m.counts, hinge, b.k(0)), m.scale), {1}, RK::kSum);
  const int64_t reduction = c.ConstArg(n, 5).toInt();
  if (reduction == 0) return {c.Reshape(per_row, n.shape().sizes)};
  if (reduction == 1 && x->shape().dims[0] == 0) return {b.k(0)};  // ATen's mean of no samples
  return {c.Reshape(Reduced(c, per_row, reduction, t), {})};
}

// multi_margin_loss_backward(grad_output, self, target, p, margin, weight, reduction): each
// counted class gets (p == 1 ? 1 : 2z) * weight[y] / C, and the target class minus their sum.
Outs MultiMarginLossBackward(LoweringContext& c, const ir::Node& n) {
  const ElementType t = OutType(n);
  Builder b{c, t};
  Instruction* self = c.Operand(n, 1);
  Instruction* x = AsRows(c, self);
  const int64_t rows = x->shape().dims[0];
  const bool squared = c.ConstArg(n, 3).toScalar().toDouble() == 2;
  Margins m = MarginsOf(c, n, x, 2, 4, 5, t);
  const int64_t reduction = c.ConstArg(n, 6).toInt();
  Instruction* g = c.Operand(n, 0);
  g = reduction == 0 ? c.Reshape(g, {rows, 1}) : reduction == 1 ? b.div(g, b.k(static_cast<double>(rows))) : g;
  Instruction* slope = squared ? b.mul(b.k(2), m.z) : b.k(1);
  Instruction* others = b.mul(b.mul(b.sel(m.counts, slope, b.k(0)), m.scale), g);
  Instruction* total = c.Reshape(c.Reduce(others, {1}, RK::kSum), {rows, 1});
  Instruction* is_target = c.Elementwise(Opcode::kCompare, {c.Iota(hlo::Shape::Array(ElementType::kS64, x->shape().dims), 1), m.target},
                                         ElementType::kS64, Comparison::kEq);
  return {c.Reshape(b.sub(others, b.sel(is_target, total, b.k(0))), self->shape().dims)};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_mse_loss, MseLoss)
TXLA_LOWER(aten_mse_loss_backward, MseLossBackward)
TXLA_LOWER(aten_smooth_l1_loss, SmoothL1Loss)
TXLA_LOWER(aten_smooth_l1_loss_backward, SmoothL1LossBackward)
TXLA_LOWER(aten_huber_loss, HuberLoss)
TXLA_LOWER(aten_huber_loss_backward, HuberLossBackward)
TXLA_LOWER(aten_binary_cross_entropy, BinaryCrossEntropy)
TXLA_LOWER(aten_binary_cross_entropy_backward, BinaryCrossEntropyBackward)
TXLA_LOWER(aten_native_dropout_backward, DropoutBackward)
TXLA_LOWER(aten_multi_margin_loss, MultiMarginLoss)
TXLA_LOWER(aten_multi_margin_loss_backward, MultiMarginLossBackward)

}  // namespace txla::lower
