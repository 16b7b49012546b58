// The core lowering rules: arithmetic, comparisons, products, views, fills, sums, softmax, NLL.
#include <ATen/ATen.h>
#include <ATen/native/TypeProperties.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "lower/lowering.h"

#include "lower/lowering_context.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// The dtype ATen computes a comparison or a mixed op in: promotion over the operands, with
// 0-dim tensors and Python numbers ranking below dimensioned tensors.
ElementType PromotedInputType(const ir::Node& n) {
  at::native::ResultTypeState state{};
  for (const ir::Arg& a : n.args()) {
    if (a.kind == ir::Arg::Kind::kTensor) {
      const ir::Shape& s = n.operands()[a.operand].shape();
      at::Tensor t = at::empty(std::vector<int64_t>(s.sizes.size(), 1),
                               at::TensorOptions().dtype(s.dtype).device(c10::kMeta));
      if (a.wrapped_number) t.unsafeGetTensorImpl()->set_wrapped_number(true);
      state = at::native::update_result_type_state(t, state);
    } else if (a.kind == ir::Arg::Kind::kScalar) {
      const ir::Shape& s = n.operands()[a.operand].shape();
      c10::Scalar scalar = s.dtype == c10::kBool ? c10::Scalar(true)
                           : c10::isFloatingType(s.dtype) ? c10::Scalar(1.0) : c10::Scalar(int64_t{1});
      state = at::native::update_result_type_state(scalar, state);
    } else if (a.kind == ir::Arg::Kind::kConst && a.value.isScalar()) {
      state = at::native::update_result_type_state(a.value.toScalar(), state);
    }
  }
  return ToHlo(at::native::result_type(state));
}

// x (+|-) alpha * y, the shape of add.Tensor and sub.Tensor.
template <Opcode kOp>
Outs AddSub(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  // alpha == 1 (the usual case) leaves a multiply by one, which the simplifier removes.
  Instruction* y = c.Elementwise(Opcode::kMultiply, {c.Operand(n, 1), c.ScalarArg(n, 2, t)}, t);
  return {c.Elementwise(kOp, {c.Operand(n, 0), y}, t)};
}

template <Opcode kOp>
Outs ScalarOverload(LoweringContext& c, const ir::Node& n) {  // add.Scalar(self, other, alpha)
  ElementType t = OutType(n);
  Instruction* y = c.ScalarArg(n, 1, t);
  if (n.args().size() > 2) y = c.Elementwise(Opcode::kMultiply, {y, c.ScalarArg(n, 2, t)}, t);
  return {c.Elementwise(kOp, {c.Operand(n, 0), y}, t)};
}

template <Opcode kOp>
Outs Binary(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  return {c.Elementwise(kOp, {c.Operand(n, 0), c.Operand(n, 1)}, t)};
}

Outs Rsub(LoweringContext& c, const ir::Node& n) {  // other - alpha * self
  ElementType t = OutType(n);
  Instruction* x = c.Elementwise(Opcode::kMultiply, {c.Operand(n, 0), c.ScalarArg(n, 2, t)}, t);
  return {c.Elementwise(Opcode::kSubtract, {c.Operand(n, 1), x}, t)};
}

template <hlo::Comparison kDir, bool kScalarRhs>
Outs Compare(LoweringContext& c, const ir::Node& n) {
  ElementType t = PromotedInputType(n);
  Instruction* rhs = kScalarRhs ? c.ScalarArg(n, 1, t) : c.Operand(n, 1);
  return {c.Elementwise(Opcode::kCompare, {c.Operand(n, 0), rhs}, t, kDir)};
}

template <Opcode kOp>
Outs Unary(LoweringContext& c, const ir::Node& n) {
  return {c.Elementwise(kOp, {c.Operand(n, 0)}, OutType(n))};
}

Outs Relu(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  return {c.Elementwise(Opcode::kMaximum, {c.Operand(n, 0), c.Constant(0, t)}, t)};
}

Outs ThresholdBackward(LoweringContext& c, const ir::Node& n) {  // 0 where self <= threshold
  ElementType t = OutType(n);
  Instruction* zero = c.Elementwise(Opcode::kCompare, {c.Operand(n, 1), c.ScalarArg(n, 2, t)}, t,
                                    hlo::Comparison::kLe);
  return {c.Elementwise(Opcode::kSelect, {zero, c.Constant(0, t), c.Operand(n, 0)}, t)};
}

Outs Where(LoweringContext& c, const ir::Node& n) {
  return {c.Elementwise(Opcode::kSelect, {c.Operand(n, 0), c.Operand(n, 1), c.Operand(n, 2)},
                        OutType(n))};
}

// ATen's CPU kernel for floating point (PowKernel.cpp, and pow's 0 and 1 in its out= impl): the
// exponents it computes without pow, computed the same way here, so results match eager's to the
// bit and a square in a norm (T5's RMS norm, GPT-2's GELU cube) costs a multiply, not a powf.
Outs PowTensorScalar(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Convert(c.Operand(n, 0), t);
  const c10::IValue& exponent = c.ConstArg(n, 1);
  if (hlo::IsFloating(t) && (exponent.isDouble() || exponent.isInt())) {
    const double e = exponent.toScalar().toDouble();
    auto mul = [&](Instruction* a, Instruction* b) { return c.Elementwise(Opcode::kMultiply, {a, b}, t); };
    auto one_over = [&](Instruction* a) { return c.Elementwise(Opcode::kDivide, {c.Constant(1, t), a}, t); };
    if (e == 0) return {c.BroadcastTo(c.Constant(1, t), n.shape().sizes)};
    if (e == 1) return {x};
    if (e == 0.5) return {c.Elementwise(Opcode::kSqrt, {x}, t)};
    if (e == -0.5) return {c.Elementwise(Opcode::kRsqrt, {x}, t)};
    if (e == -1) return {one_over(x)};
    if (e == 2) return {mul(x, x)};
    if (e == 3) return {mul(mul(x, x), x)};
    if (e == -2) return {one_over(mul(x, x))};
  }
  return {c.Elementwise(Opcode::kPower, {x, c.ScalarArg(n, 1, t)}, t)};
}

template <Opcode kOp>
Outs AddcOp(LoweringContext& c, const ir::Node& n) {  // self + value * (t1 op t2)
  ElementType t = OutType(n);
  Instruction* prod = c.Elementwise(kOp, {c.Operand(n, 1), c.Operand(n, 2)}, t);
  prod = c.Elementwise(Opcode::kMultiply, {prod, c.ScalarArg(n, 3, t)}, t);
  return {c.Elementwise(Opcode::kAdd, {c.Operand(n, 0), prod}, t)};
}

// Matrix products.
Instruction* MatMul(LoweringContext& c, Instruction* a, Instruction* b) {
  hlo::DotDims d;
  d.lhs_contracting = {a->shape().rank() - 1};
  d.rhs_contracting = {b->shape().rank() == 1 ? 0 : b->shape().rank() - 2};
  if (a->shape().rank() == 3) d.lhs_batch = d.rhs_batch = {0};
  return c.Dot(a, b, d);
}

Outs Mm(LoweringContext& c, const ir::Node& n) { return {MatMul(c, c.Operand(n, 0), c.Operand(n, 1))}; }

Outs FillTensor(LoweringContext& c, const ir::Node& n) {  // fill.Tensor(self, value)
  return {c.BroadcastTo(c.Convert(c.Operand(n, 1), OutType(n)), n.shape().sizes)};
}

// addmm, addmv, baddbmm: beta * self + alpha * (m1 @ m2)
Outs Addmm(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  // beta and alpha are usually 1; the simplifier removes those multiplies.
  Instruction* prod = c.Elementwise(
      Opcode::kMultiply, {MatMul(c, c.Operand(n, 1), c.Operand(n, 2)), c.ScalarArg(n, 4, t)}, t);
  Instruction* bias = c.Elementwise(Opcode::kMultiply, {c.Operand(n, 0), c.ScalarArg(n, 3, t)}, t);
  return {c.Elementwise(Opcode::kAdd, {bias, prod}, t)};
}

// Shapes and copies.
Outs ReshapeToNode(LoweringContext& c, const ir::Node& n) {
  return {c.Reshape(c.Operand(n, 0), n.shape().sizes)};
}

Outs TCopy(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  if (x->shape().rank() < 2) return {x};
  return {c.Transpose(x, {1, 0})};
}

Outs TransposeCopy(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  int64_t rank = x->shape().rank();
  if (rank < 2) return {x};
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[WrapDim(c.ConstArg(n, 1).toInt(), rank)], perm[WrapDim(c.ConstArg(n, 2).toInt(), rank)]);
  return {c.Transpose(x, perm)};
}

Outs PermuteCopy(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  std::vector<int64_t> perm = IntList(c.ConstArg(n, 1));
  for (int64_t& p : perm) p = WrapDim(p, x->shape().rank());
  return {c.Transpose(x, perm)};
}

Outs ExpandCopy(LoweringContext& c, const ir::Node& n) {
  return {c.BroadcastTo(c.Operand(n, 0), n.shape().sizes)};
}

Outs FillLike(LoweringContext& c, const ir::Node& n, Instruction* value) {
  return {c.BroadcastTo(c.Convert(value, OutType(n)), n.shape().sizes)};
}

Outs Zero(LoweringContext& c, const ir::Node& n) { return FillLike(c, n, c.Constant(0, OutType(n))); }
Outs One(LoweringContext& c, const ir::Node& n) { return FillLike(c, n, c.Constant(1, OutType(n))); }
Outs FillScalar(LoweringContext& c, const ir::Node& n) {
  return FillLike(c, n, c.ScalarArg(n, 1, OutType(n)));
}
Outs Full(LoweringContext& c, const ir::Node& n) { return FillLike(c, n, c.ScalarArg(n, 1, OutType(n))); }
// start + i * step, computed in double (or int64 for integer results) as ATen's accumulate type.
Outs Arange(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  ElementType acc = hlo::IsFloating(t) ? ElementType::kF64 : ElementType::kS64;
  Instruction* i = c.Iota(hlo::Shape::Array(acc, n.shape().sizes), 0);
  Instruction* v = c.Elementwise(Opcode::kAdd, {c.ScalarArg(n, 0, acc),
                                                c.Elementwise(Opcode::kMultiply, {i, c.ScalarArg(n, 2, acc)}, acc)},
                                 acc);
  return {c.Convert(v, t)};
}
Outs Eye(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  hlo::Shape s64 = hlo::Shape::Array(ElementType::kS64, n.shape().sizes);
  Instruction* diagonal =
      c.Elementwise(Opcode::kCompare, {c.Iota(s64, 0), c.Iota(s64, 1)}, ElementType::kS64, hlo::Comparison::kEq);
  return {c.Convert(diagonal, t)};
}
Outs Copy(LoweringContext& c, const ir::Node& n) { return FillLike(c, n, c.Operand(n, 1)); }
Outs ToCopy(LoweringContext& c, const ir::Node& n) { return {c.Convert(c.Operand(n, 0), OutType(n))}; }

// Reductions.
std::vector<int64_t> ReduceDims(LoweringContext& c, const ir::Node& n, size_t arg, int64_t rank) {
  std::vector<int64_t> dims;
  if (arg < n.args().size() && !c.IsNone(n, arg)) dims = IntList(c.ConstArg(n, arg));
  if (dims.empty()) {  // all dimensions
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  }
  for (int64_t& d : dims) d = WrapDim(d, rank);
  return dims;
}

Outs Sum(LoweringContext& c, const ir::Node& n) {  // sum(self, dtype) / sum.dim_IntList(self, dim, keepdim, dtype)
  Instruction* x = c.Convert(c.Operand(n, 0), OutType(n));
  bool with_dims = n.args().size() == 4;
  auto dims = ReduceDims(c, n, with_dims ? 1 : 99, x->shape().rank());
  bool keepdim = with_dims && c.ConstArg(n, 2).toBool();
  return {c.Reduce(x, dims, RK::kSum, keepdim)};
}

Outs Mean(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Convert(c.Operand(n, 0), OutType(n));
  bool with_dims = n.args().size() == 4;
  auto dims = ReduceDims(c, n, with_dims ? 1 : 99, x->shape().rank());
  int64_t count = 1;
  for (int64_t d : dims) count *= x->shape().dims[d];
  Instruction* sum = c.Reduce(x, dims, RK::kSum, with_dims && c.ConstArg(n, 2).toBool());
  return {c.Elementwise(Opcode::kDivide, {sum, c.Constant(static_cast<double>(count), OutType(n))},
                        OutType(n))};
}

// log_softmax(x) = x - max - log(sum(exp(x - max))), along one dimension.
Outs LogSoftmax(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Convert(c.Operand(n, 0), t);
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  if (x->shape().rank() == 0) return {c.Elementwise(Opcode::kSubtract, {x, x}, t)};
  Instruction* shifted = c.Elementwise(Opcode::kSubtract, {x, c.Reduce(x, {dim}, RK::kMax, true)}, t);
  Instruction* sum = c.Reduce(c.Elementwise(Opcode::kExp, {shifted}, t), {dim}, RK::kSum, true);
  return {c.Elementwise(Opcode::kSubtract, {shifted, c.Elementwise(Opcode::kLog, {sum}, t)}, t)};
}

Outs Softmax(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Convert(c.Operand(n, 0), t);
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  // A 0-dim tensor's softmax is exp(x - x): 1, or NaN for an infinity or NaN (x / x made 0's NaN).
  if (x->shape().rank() == 0) return {c.Elementwise(Opcode::kExp, {c.Elementwise(Opcode::kSubtract, {x, x}, t)}, t)};
  Instruction* e = c.Elementwise(
      Opcode::kExp, {c.Elementwise(Opcode::kSubtract, {x, c.Reduce(x, {dim}, RK::kMax, true)}, t)}, t);
  return {c.Elementwise(Opcode::kDivide, {e, c.Reduce(e, {dim}, RK::kSum, true)}, t)};
}

}  // namespace

// _safe_softmax: softmax, but 0 across a row whose every entry is -inf (a fully masked row of
// attention scores), where softmax gives NaN. Those are the rows whose maximum is -inf: a NaN
// in a row makes neither that nor ATen's test (all entries == -inf) hold.
SoftmaxParts SafeSoftmaxAlong(LoweringContext& c, Instruction* x, int64_t dim, ElementType t) {
  Instruction* neg_inf = c.Constant(-std::numeric_limits<double>::infinity(), t);
  Instruction* max = c.Reduce(x, {dim}, RK::kMax, true);
  Instruction* e = c.Elementwise(Opcode::kExp, {c.Elementwise(Opcode::kSubtract, {x, max}, t)}, t);
  Instruction* sum = c.Reduce(e, {dim}, RK::kSum, true);
  Instruction* softmax = c.Elementwise(Opcode::kDivide, {e, sum}, t);
  Instruction* masked = c.Elementwise(Opcode::kCompare, {max, neg_inf}, t, hlo::Comparison::kEq);
  return {c.Elementwise(Opcode::kSelect, {masked, c.Constant(0, t), softmax}, t), max, sum};
}

namespace {

Outs SafeSoftmax(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Convert(c.Operand(n, 0), t);
  if (x->shape().rank() == 0) {  // as Softmax's, and 0 for -inf
    Instruction* neg_inf = c.Constant(-std::numeric_limits<double>::infinity(), t);
    Instruction* e = c.Elementwise(Opcode::kExp, {c.Elementwise(Opcode::kSubtract, {x, x}, t)}, t);
    Instruction* masked = c.Elementwise(Opcode::kCompare, {x, neg_inf}, t, hlo::Comparison::kEq);
    return {c.Elementwise(Opcode::kSelect, {masked, c.Constant(0, t), e}, t)};
  }
  return {SafeSoftmaxAlong(c, x, WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank()), t).result};
}

// d log_softmax: grad - exp(output) * sum(grad, dim).
Outs LogSoftmaxBackward(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* grad = c.Operand(n, 0);
  Instruction* out = c.Operand(n, 1);
  if (grad->shape().rank() == 0) return {c.Elementwise(Opcode::kSubtract, {grad, grad}, t)};
  int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), grad->shape().rank());
  Instruction* sum = c.Reduce(grad, {dim}, RK::kSum, true);
  Instruction* scaled = c.Elementwise(Opcode::kMultiply, {c.Elementwise(Opcode::kExp, {out}, t), sum}, t);
  return {c.Elementwise(Opcode::kSubtract, {grad, scaled}, t)};
}

// d softmax: output * (grad - sum(grad * output, dim)).
Outs SoftmaxBackward(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* grad = c.Operand(n, 0);
  Instruction* out = c.Operand(n, 1);
  if (grad->shape().rank() == 0) return {c.Elementwise(Opcode::kSubtract, {grad, grad}, t)};
  int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), grad->shape().rank());
  Instruction* dot = c.Reduce(c.Elementwise(Opcode::kMultiply, {grad, out}, t), {dim}, RK::kSum, true);
  return {c.Elementwise(Opcode::kMultiply, {out, c.Elementwise(Opcode::kSubtract, {grad, dot}, t)}, t)};
}

// nll_loss on [N, C] (or [C]) log-probabilities: the target class's entry is picked with a
// one-hot mask (iota == target), so the whole loss is elementwise work and reductions.
struct NllParts {
  Instruction* picked_weight;  // [N, C]: w[c] where c == target[n] and target[n] != ignore, else 0
  Instruction* hit;            // [N, C]: where picked_weight is w[c] (pred)
  int64_t rank;
};

NllParts NllWeights(LoweringContext& c, const ir::Node& n, size_t self_arg, size_t target_arg,
                    size_t weight_arg, size_t ignore_arg, ElementType t) {
  Instruction* self = c.Operand(n, self_arg);
  Instruction* target = c.Convert(c.Operand(n, target_arg), ElementType::kS64);
  const auto& dims = self->shape().dims;
  int64_t rank = self->shape().rank();
  int64_t class_dim = rank == 1 ? 0 : 1;
  hlo::Attributes iota_attrs;
  iota_attrs.index = class_dim;
  Instruction* classes = c.Add(Opcode::kIota, hlo::Shape::Array(ElementType::kS64, dims), {}, iota_attrs);
  // target [N, d1, ...] against [N, C, d1, ...]: a size-1 class dimension inserted
  std::vector<int64_t> target_dims = target->shape().dims;
  if (rank > 1) target_dims.insert(target_dims.begin() + 1, 1);
  Instruction* target_b = c.Reshape(target, target_dims);
  Instruction* hit = c.Elementwise(Opcode::kCompare, {classes, target_b}, ElementType::kS64, hlo::Comparison::kEq);
  Instruction* keep = c.Elementwise(Opcode::kCompare, {target_b, c.Constant(c.ConstArg(n, ignore_arg).toInt(), ElementType::kS64)},
                                    ElementType::kS64, hlo::Comparison::kNe);
  hit = c.Elementwise(Opcode::kAnd, {hit, keep}, ElementType::kPred);
  Instruction* w = c.IsNone(n, weight_arg) ? c.Constant(1, t) : c.Operand(n, weight_arg);
  if (!c.IsNone(n, weight_arg) && rank > 2) {  // [C] -> [C, 1, ...] to meet the class dimension
    std::vector<int64_t> column(rank - 1, 1);
    column[0] = dims[1];
    w = c.Reshape(w, column);
  }
  return {c.Elementwise(Opcode::kSelect, {hit, w, c.Constant(0, t)}, t), hit, rank};
}

Outs NllLossForward(LoweringContext& c, const ir::Node& n) {  // (self, target, weight, reduction, ignore_index)
  ElementType t = OutType(n);
  NllParts p = NllWeights(c, n, 0, 1, 2, 4, t);
  // The picked log-probabilities selected, not the others multiplied by 0: an infinite or NaN
  // entry of another class made the loss NaN (0 * inf), where eager's is what the target picks.
  Instruction* weighted =
      c.Elementwise(Opcode::kSelect,
                    {p.hit, c.Elementwise(Opcode::kMultiply, {c.Operand(n, 0), p.picked_weight}, t), c.Constant(0, t)}, t);
  int64_t reduction = c.ConstArg(n, 3).toInt();  // 0 none, 1 mean, 2 sum
  std::vector<int64_t> all;
  for (int64_t d = 0; d < p.rank; ++d) all.push_back(d);
  Instruction* total_weight = c.Reduce(p.picked_weight, all, RK::kSum);
  Instruction* loss;
  if (reduction == 0) {
    loss = c.Elementwise(Opcode::kNegate, {c.Reduce(weighted, {p.rank == 1 ? 0 : 1}, RK::kSum)}, t);
    if (p.rank == 1) loss = c.Reshape(loss, {});
  } else {
    loss = c.Elementwise(Opcode::kNegate, {c.Reduce(weighted, all, RK::kSum)}, t);
    if (reduction == 1) loss = c.Elementwise(Opcode::kDivide, {loss, total_weight}, t);
  }
  return {loss, total_weight};
}

Outs NllLossBackward(LoweringContext& c, const ir::Node& n) {
  // (grad_output, self, target, weight, reduction, ignore_index, total_weight)
  ElementType t = OutType(n);
  NllParts p = NllWeights(c, n, 1, 2, 3, 5, t);
  int64_t reduction = c.ConstArg(n, 4).toInt();
  Instruction* grad = c.Operand(n, 0);
  if (reduction == 0 && p.rank >= 2) {  // per-position gradients, broadcast over the classes
    std::vector<int64_t> dims = grad->shape().dims;
    dims.insert(dims.begin() + 1, 1);
    grad = c.Reshape(grad, dims);
  }
  Instruction* scale = c.Elementwise(Opcode::kNegate, {grad}, t);
  if (reduction == 1) scale = c.Elementwise(Opcode::kDivide, {scale, c.Operand(n, 6)}, t);
  return {c.Elementwise(Opcode::kMultiply, {p.picked_weight, scale}, t)};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_add_Tensor, AddSub<Opcode::kAdd>)
TXLA_LOWER(aten_sub_Tensor, AddSub<Opcode::kSubtract>)
TXLA_LOWER(aten_add_Scalar, ScalarOverload<Opcode::kAdd>)
TXLA_LOWER(aten_sub_Scalar, ScalarOverload<Opcode::kSubtract>)
TXLA_LOWER(aten_mul_Scalar, ScalarOverload<Opcode::kMultiply>)
TXLA_LOWER(aten_div_Scalar, ScalarOverload<Opcode::kDivide>)
TXLA_LOWER(aten_mul_Tensor, Binary<Opcode::kMultiply>)
TXLA_LOWER(aten_div_Tensor, Binary<Opcode::kDivide>)
TXLA_LOWER(aten_maximum, Binary<Opcode::kMaximum>)
TXLA_LOWER(aten_minimum, Binary<Opcode::kMinimum>)
TXLA_LOWER(aten_rsub_Tensor, Rsub)
TXLA_LOWER(aten_eq_Tensor, Compare<hlo::Comparison::kEq, false>)
TXLA_LOWER(aten_ne_Tensor, Compare<hlo::Comparison::kNe, false>)
TXLA_LOWER(aten_lt_Tensor, Compare<hlo::Comparison::kLt, false>)
TXLA_LOWER(aten_le_Tensor, Compare<hlo::Comparison::kLe, false>)
TXLA_LOWER(aten_gt_Tensor, Compare<hlo::Comparison::kGt, false>)
TXLA_LOWER(aten_ge_Tensor, Compare<hlo::Comparison::kGe, false>)
TXLA_LOWER(aten_eq_Scalar, Compare<hlo::Comparison::kEq, true>)
TXLA_LOWER(aten_ne_Scalar, Compare<hlo::Comparison::kNe, true>)
TXLA_LOWER(aten_lt_Scalar, Compare<hlo::Comparison::kLt, true>)
TXLA_LOWER(aten_le_Scalar, Compare<hlo::Comparison::kLe, true>)
TXLA_LOWER(aten_gt_Scalar, Compare<hlo::Comparison::kGt, true>)
TXLA_LOWER(aten_ge_Scalar, Compare<hlo::Comparison::kGe, true>)
TXLA_LOWER(aten_where_self, Where)
TXLA_LOWER(aten_neg, Unary<Opcode::kNegate>)
TXLA_LOWER(aten_abs, Unary<Opcode::kAbs>)
TXLA_LOWER(aten_exp, Unary<Opcode::kExp>)
TXLA_LOWER(aten_log, Unary<Opcode::kLog>)
TXLA_LOWER(aten_sqrt, Unary<Opcode::kSqrt>)
TXLA_LOWER(aten_rsqrt, Unary<Opcode::kRsqrt>)
TXLA_LOWER(aten_tanh, Unary<Opcode::kTanh>)
TXLA_LOWER(aten_sigmoid, Unary<Opcode::kLogistic>)
TXLA_LOWER(aten_sin, Unary<Opcode::kSin>)
TXLA_LOWER(aten_cos, Unary<Opcode::kCos>)
TXLA_LOWER(aten_relu, Relu)
TXLA_LOWER(aten_threshold_backward, ThresholdBackward)
TXLA_LOWER(aten_pow_Tensor_Scalar, PowTensorScalar)
TXLA_LOWER(aten_addcmul, AddcOp<Opcode::kMultiply>)
TXLA_LOWER(aten_addcdiv, AddcOp<Opcode::kDivide>)
TXLA_LOWER(aten_mm, Mm)
TXLA_LOWER(aten_bmm, Mm)
TXLA_LOWER(aten_addmm, Addmm)
TXLA_LOWER(aten_addmv, Addmm)
TXLA_LOWER(aten_baddbmm, Addmm)
TXLA_LOWER(aten_mv, Mm)
TXLA_LOWER(aten_dot, Mm)
TXLA_LOWER(aten_fill_Tensor, FillTensor)
TXLA_LOWER(aten_t_copy, TCopy)
TXLA_LOWER(aten_transpose_copy_int, TransposeCopy)
TXLA_LOWER(aten_permute_copy, PermuteCopy)
TXLA_LOWER(aten_view_copy, ReshapeToNode)
TXLA_LOWER(aten__unsafe_view, ReshapeToNode)
TXLA_LOWER(aten__reshape_alias_copy, ReshapeToNode)
TXLA_LOWER(aten_unsqueeze_copy, ReshapeToNode)
TXLA_LOWER(aten_squeeze_copy, ReshapeToNode)
TXLA_LOWER(aten_squeeze_copy_dim, ReshapeToNode)
TXLA_LOWER(aten_expand_copy, ExpandCopy)
TXLA_LOWER(aten_zero, Zero)
TXLA_LOWER(aten_zeros, Zero)
TXLA_LOWER(aten_new_empty_strided, Zero)
TXLA_LOWER(aten_ones, One)
TXLA_LOWER(aten_fill_Scalar, FillScalar)
TXLA_LOWER(aten_full, Full)
TXLA_LOWER(aten_arange_start_step, Arange)
TXLA_LOWER(aten_eye, Eye)
TXLA_LOWER(aten_eye_m, Eye)
TXLA_LOWER(aten_copy, Copy)
TXLA_LOWER(aten__to_copy, ToCopy)
TXLA_LOWER(aten_sum, Sum)
TXLA_LOWER(aten_sum_dim_IntList, Sum)
TXLA_LOWER(aten_mean, Mean)
TXLA_LOWER(aten_mean_dim, Mean)
TXLA_LOWER(aten__log_softmax, LogSoftmax)
TXLA_LOWER(aten__log_softmax_backward_data, LogSoftmaxBackward)
TXLA_LOWER(aten__softmax, Softmax)
TXLA_LOWER(aten__softmax_backward_data, SoftmaxBackward)
TXLA_LOWER(aten__safe_softmax, SafeSoftmax)
TXLA_LOWER(aten_nll_loss_forward, NllLossForward)
TXLA_LOWER(aten_nll_loss_backward, NllLossBackward)
TXLA_LOWER(aten_nll_loss2d_forward, NllLossForward)
TXLA_LOWER(aten_nll_loss2d_backward, NllLossBackward)

}  // namespace txla::lower
