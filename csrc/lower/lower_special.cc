// Lowering of special functions (gamma family, inverse hyperbolics, logit, xlogy, logaddexp),
// float classification (isnan, isposinf, nan_to_num), bit shifts, shrinkage activations, glu,
// log-sigmoid, outer-product updates (addr), distances (cdist, pdist) and the affine grid.
// Formulas follow ATen's CPU kernels, including their edge cases (NaN, infinities, zero).
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

Instruction* FloatOperand(LoweringContext& c, const ir::Node& n, size_t arg, ElementType t) {
  return n.args()[arg].kind == ir::Arg::Kind::kTensor ? c.Convert(c.Operand(n, arg), t) : c.ScalarArg(n, arg, t);
}

template <Opcode kOp>
Outs FloatUnary(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  if (!hlo::IsFloating(t)) throw NotLowered(n.OpName() + " with an integer result");
  return {c.Elementwise(kOp, {c.Convert(c.Operand(n, 0), t)}, t)};
}

Instruction* Select(LoweringContext& c, Instruction* p, Instruction* x, Instruction* y, ElementType t) {
  return c.Elementwise(Opcode::kSelect, {p, x, y}, t);
}

Instruction* Cmp(LoweringContext& c, Comparison d, Instruction* x, Instruction* y) {
  return c.Elementwise(Opcode::kCompare, {x, y}, x->shape().type, d);
}

Instruction* AllFalse(LoweringContext& c, const ir::Node& n) {
  return c.BroadcastTo(c.Constant(0, ElementType::kPred), n.shape().sizes);
}

Outs IsNan(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  if (!hlo::IsFloating(x->shape().type)) return {AllFalse(c, n)};
  return {Cmp(c, Comparison::kNe, x, x)};
}

template <int kSign>
Outs IsSignedInf(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  ElementType t = x->shape().type;
  if (!hlo::IsFloating(t)) return {AllFalse(c, n)};
  return {Cmp(c, Comparison::kEq, x, c.Constant(kSign * std::numeric_limits<double>::infinity(), t))};
}

// nan_to_num(self, nan?, posinf?, neginf?): defaults 0 and the type's largest finite values.
Outs NanToNum(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  ElementType t = OutType(n);
  if (!hlo::IsFloating(t)) return {x};
  const double big = t == ElementType::kF64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
  auto value = [&](size_t arg, double fallback) { return c.IsNone(n, arg) ? c.Constant(fallback, t) : c.ScalarArg(n, arg, t); };
  const double inf = std::numeric_limits<double>::infinity();
  Instruction* y = Select(c, Cmp(c, Comparison::kNe, x, x), value(1, 0), x, t);
  y = Select(c, Cmp(c, Comparison::kEq, x, c.Constant(inf, t)), value(2, big), y, t);
  return {Select(c, Cmp(c, Comparison::kEq, x, c.Constant(-inf, t)), value(3, -big), y, t)};
}

// logit(self, eps?): log(z / (1 - z)), z = self clamped to [eps, 1 - eps] when eps is given.
Outs Logit(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* z = c.Convert(c.Operand(n, 0), t);
  if (!c.IsNone(n, 1)) {
    const double eps = c.ConstArg(n, 1).toDouble();
    z = c.Elementwise(Opcode::kClamp, {c.Constant(eps, t), z, c.Constant(1 - eps, t)}, t);
  }
  Instruction* odds = c.Elementwise(Opcode::kDivide, {z, c.Elementwise(Opcode::kSubtract, {c.Constant(1, t), z}, t)}, t);
  return {c.Elementwise(Opcode::kLog, {odds}, t)};
}

// logit_backward(grad, self, eps?): grad / (x (1 - x)); outside [eps, 1 - eps] zero, or without
// eps NaN outside [0, 1] and grad * inf at the ends.
Outs LogitBackward(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* g = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  Instruction* slope = c.Elementwise(
      Opcode::kDivide, {g, c.Elementwise(Opcode::kMultiply, {x, c.Elementwise(Opcode::kSubtract, {c.Constant(1, t), x}, t)}, t)}, t);
  const double eps = c.IsNone(n, 2) ? -1.0 : c.ConstArg(n, 2).toDouble();
  if (eps >= 0) {
    Instruction* outside = c.Elementwise(Opcode::kOr, {Cmp(c, Comparison::kLt, x, c.Constant(eps, t)),
                                                       Cmp(c, Comparison::kGt, x, c.Constant(1 - eps, t))}, ElementType::kPred);
    return {Select(c, outside, c.Constant(0, t), slope, t)};
  }
  const double inf = std::numeric_limits<double>::infinity();
  Instruction* at_end = c.Elementwise(Opcode::kOr, {Cmp(c, Comparison::kEq, x, c.Constant(0, t)),
                                                    Cmp(c, Comparison::kEq, x, c.Constant(1, t))}, ElementType::kPred);
  Instruction* outside = c.Elementwise(Opcode::kOr, {Cmp(c, Comparison::kLt, x, c.Constant(0, t)),
                                                     Cmp(c, Comparison::kGt, x, c.Constant(1, t))}, ElementType::kPred);
  Instruction* y = Select(c, at_end, c.Elementwise(Opcode::kMultiply, {g, c.Constant(inf, t)}, t), slope, t);
  return {Select(c, outside, c.Constant(std::nan(""), t), y, t)};
}

// mvlgamma(self, p): sum over j < p of lgamma(self - j/2), plus p (p - 1) / 4 log(pi), summed in
// ATen's order (the most shifted term first). ATen's domain check (self > (p - 1) / 2) needs
// the data; outside it the result is what the formula gives (inf or NaN).
Outs Mvlgamma(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Convert(c.Operand(n, 0), t);
  const int64_t p = c.ConstArg(n, 1).toInt();
  Instruction* sum = nullptr;
  for (int64_t j = p - 1; j >= 0; --j) {
    Instruction* term = c.Elementwise(Opcode::kLgamma, {c.Elementwise(Opcode::kSubtract, {x, c.Constant(0.5 * j, t)}, t)}, t);
    sum = sum ? c.Elementwise(Opcode::kAdd, {sum, term}, t) : term;
  }
  const double log_pi = std::log(3.14159265358979323846);
  return {c.Elementwise(Opcode::kAdd, {sum, c.Constant(p * (p - 1) * log_pi / 4, t)}, t)};
}

// xlogy(self, other): 0 where self is 0 (unless other is NaN), else self * log(other).
Outs Xlogy(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  if (!hlo::IsFloating(t)) throw NotLowered("xlogy with an integer result");
  Instruction* x = FloatOperand(c, n, 0, t);
  Instruction* y = FloatOperand(c, n, 1, t);
  Instruction* v = c.Elementwise(Opcode::kMultiply, {x, c.Elementwise(Opcode::kLog, {y}, t)}, t);
  v = Select(c, Cmp(c, Comparison::kEq, x, c.Constant(0, t)), c.Constant(0, t), v, t);
  return {Select(c, Cmp(c, Comparison::kNe, y, y), y, v, t)};
}

// logaddexp(a, b): max + log1p(exp(-|a - b|)); equal infinities give themselves.
Outs Logaddexp(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* a = c.Convert(c.Operand(n, 0), t);
  Instruction* b = c.Convert(c.Operand(n, 1), t);
  Instruction* m = c.Elementwise(Opcode::kMaximum, {a, b}, t);
  Instruction* d = c.Elementwise(Opcode::kAbs, {c.Elementwise(Opcode::kSubtract, {a, b}, t)}, t);
  Instruction* v = c.Elementwise(
      Opcode::kAdd, {m, c.Elementwise(Opcode::kLog1p, {c.Elementwise(Opcode::kExp, {c.Elementwise(Opcode::kNegate, {d}, t)}, t)}, t)}, t);
  Instruction* same_inf = c.Elementwise(
      Opcode::kAnd, {Cmp(c, Comparison::kEq, a, b), Cmp(c, Comparison::kEq, c.Elementwise(Opcode::kAbs, {a}, t),
                                                         c.Constant(std::numeric_limits<double>::infinity(), t))},
      ElementType::kPred);
  return {Select(c, same_inf, a, v, t)};
}

// Shifts (integer types): __lshift__/__rshift__ and bitwise_{left,right}_shift, tensor or scalar.
template <Opcode kOp>
Outs Shift(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  if (hlo::IsFloating(t) || t == ElementType::kPred) throw NotLowered("a shift of a floating-point or bool tensor");
  return {c.Elementwise(kOp, {FloatOperand(c, n, 0, t), FloatOperand(c, n, 1, t)}, t)};
}

// softshrink(self, lambd): x - l above l, x + l below -l, else 0. hardshrink: x outside [-l, l].
Outs Softshrink(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Operand(n, 0);
  Instruction* l = c.ScalarArg(n, 1, t);
  Instruction* neg_l = c.Elementwise(Opcode::kNegate, {l}, t);
  Instruction* v = Select(c, Cmp(c, Comparison::kLt, x, neg_l), c.Elementwise(Opcode::kAdd, {x, l}, t), c.Constant(0, t), t);
  return {Select(c, Cmp(c, Comparison::kGt, x, l), c.Elementwise(Opcode::kSubtract, {x, l}, t), v, t)};
}

Outs Hardshrink(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Operand(n, 0);
  Instruction* l = c.ScalarArg(n, 1, t);
  Instruction* inside = c.Elementwise(Opcode::kAnd, {Cmp(c, Comparison::kGe, x, c.Elementwise(Opcode::kNegate, {l}, t)),
                                                     Cmp(c, Comparison::kLe, x, l)}, ElementType::kPred);
  return {Select(c, inside, c.Constant(0, t), x, t)};
}

// softshrink_backward / hardshrink_backward(grad, self, lambd): grad where |self| > lambd
// (hardshrink: outside [-lambd, lambd]; the same test for the values that matter).
template <bool kSoft>
Outs ShrinkBackward(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Operand(n, 1);
  Instruction* l = c.ScalarArg(n, 2, t);
  Instruction* inside = c.Elementwise(Opcode::kAnd, {Cmp(c, Comparison::kGe, x, c.Elementwise(Opcode::kNegate, {l}, t)),
                                                     Cmp(c, Comparison::kLe, x, l)}, ElementType::kPred);
  return {Select(c, inside, c.Constant(0, t), c.Operand(n, 0), t)};
}

// glu(self, dim): a * sigmoid(b) of self's two halves along dim.
std::pair<Instruction*, Instruction*> Halves(LoweringContext& c, Instruction* x, int64_t dim) {
  const auto& dims = x->shape().dims;
  if (dims[dim] % 2) throw NotLowered("glu of an odd-sized dimension");
  auto half = [&](int64_t start) {
    hlo::Attributes a;
    std::vector<int64_t> out = dims;
    out[dim] = dims[dim] / 2;
    for (size_t d = 0; d < dims.size(); ++d)
      a.slice.push_back({static_cast<int64_t>(d) == dim ? start : 0, static_cast<int64_t>(d) == dim ? start + out[dim] : dims[d], 1});
    return c.Add(Opcode::kSlice, hlo::Shape::Array(x->shape().type, out), {x}, a);
  };
  return {half(0), half(dims[dim] / 2)};
}

Outs Glu(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Operand(n, 0);
  auto [a, b] = Halves(c, x, WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank()));
  return {c.Elementwise(Opcode::kMultiply, {a, c.Elementwise(Opcode::kLogistic, {b}, t)}, t)};
}

Outs GluBackward(LoweringContext& c, const ir::Node& n) {  // (grad_output, self, dim)
  ElementType t = OutType(n);
  Instruction* g = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  const int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), x->shape().rank());
  auto [a, b] = Halves(c, x, dim);
  Instruction* s = c.Elementwise(Opcode::kLogistic, {b}, t);
  Instruction* ga = c.Elementwise(Opcode::kMultiply, {g, s}, t);
  Instruction* gb = c.Elementwise(
      Opcode::kMultiply, {c.Elementwise(Opcode::kMultiply, {ga, a}, t), c.Elementwise(Opcode::kSubtract, {c.Constant(1, t), s}, t)}, t);
  hlo::Attributes cat;
  cat.dimensions = {dim};
  return {c.Add(Opcode::kConcatenate, hlo::Shape::Array(t, x->shape().dims), {ga, gb}, cat)};
}

// log_sigmoid_forward(self) -> (min(x, 0) - log1p(exp(-|x|)), buffer exp(-|x|)).
Outs LogSigmoidForward(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Operand(n, 0);
  Instruction* z = c.Elementwise(Opcode::kExp, {c.Elementwise(Opcode::kNegate, {c.Elementwise(Opcode::kAbs, {x}, t)}, t)}, t);
  Instruction* out = c.Elementwise(Opcode::kSubtract, {c.Elementwise(Opcode::kMinimum, {x, c.Constant(0, t)}, t),
                                                       c.Elementwise(Opcode::kLog1p, {z}, t)}, t);
  return {out, z};
}

// log_sigmoid_backward(grad, self, buffer): grad * (x < 0 ? 1 - z/(1+z) : z/(1+z)), z = exp(-|x|).
Outs LogSigmoidBackward(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Operand(n, 1);
  Instruction* z = c.Elementwise(Opcode::kExp, {c.Elementwise(Opcode::kNegate, {c.Elementwise(Opcode::kAbs, {x}, t)}, t)}, t);
  Instruction* ratio = c.Elementwise(Opcode::kDivide, {z, c.Elementwise(Opcode::kAdd, {c.Constant(1, t), z}, t)}, t);
  Instruction* negative = Cmp(c, Comparison::kLt, x, c.Constant(0, t));
  Instruction* d = Select(c, negative, c.Elementwise(Opcode::kSubtract, {c.Constant(1, t), ratio}, t), ratio, t);
  return {c.Elementwise(Opcode::kMultiply, {c.Operand(n, 0), d}, t)};
}

// addr(self, vec1, vec2, beta, alpha): beta * self + alpha * outer(vec1, vec2); self is ignored
// (NaN included) when beta is 0, as in ATen. Its scalars are graph constants (op table).
Outs Addr(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  if (t == ElementType::kPred) throw NotLowered("addr of bool tensors");
  const auto& dims = n.shape().sizes;
  Instruction* v1 = c.BroadcastTo(c.Reshape(c.Convert(c.Operand(n, 1), t), {dims[0], 1}), dims);
  Instruction* v2 = c.BroadcastTo(c.Convert(c.Operand(n, 2), t), dims);
  Instruction* outer = c.Elementwise(Opcode::kMultiply, {c.Elementwise(Opcode::kMultiply, {v1, v2}, t), c.ScalarArg(n, 4, t)}, t);
  if (c.ConstArg(n, 3).toScalar().toDouble() == 0) return {outer};
  Instruction* scaled = c.Elementwise(Opcode::kMultiply, {c.BroadcastTo(c.Convert(c.Operand(n, 0), t), dims), c.ScalarArg(n, 3, t)}, t);
  return {c.Elementwise(Opcode::kAdd, {scaled, outer}, t)};
}

// Pairwise differences of rows: x1 [*, P, M], x2 [*, R, M] -> [*, P, R, M].
Instruction* RowDifferences(LoweringContext& c, Instruction* x1, Instruction* x2) {
  auto d1 = x1->shape().dims, d2 = x2->shape().dims;
  const size_t r = d1.size();
  if (d2.size() != r || !std::equal(d1.begin(), d1.end() - 2, d2.begin()))
    throw NotLowered("cdist of inputs with different batch dimensions");
  std::vector<int64_t> out(d1.begin(), d1.end() - 2);
  for (int64_t v : {d1[r - 2], d2[r - 2], d1[r - 1]}) out.push_back(v);
  std::vector<int64_t> a = d1, b = d2;
  a.insert(a.end() - 1, 1);
  b.insert(b.end() - 2, 1);
  ElementType t = x1->shape().type;
  return c.Elementwise(Opcode::kSubtract, {c.BroadcastTo(c.Reshape(x1, a), out), c.BroadcastTo(c.Reshape(x2, b), out)}, t);
}

// The p-norm over the last dimension of d: p = 0 counts non-zeros, p = inf takes the largest.
Instruction* NormOverLast(LoweringContext& c, Instruction* d, double p) {
  ElementType t = d->shape().type;
  const int64_t last = d->shape().rank() - 1;
  Instruction* a = c.Elementwise(Opcode::kAbs, {d}, t);
  if (p == 0) return c.Reduce(c.Convert(Cmp(c, Comparison::kNe, a, c.Constant(0, t)), t), {last}, RK::kSum);
  if (std::isinf(p)) return c.Reduce(a, {last}, RK::kMax);
  if (p == 1) return c.Reduce(a, {last}, RK::kSum);
  if (p == 2) return c.Elementwise(Opcode::kSqrt, {c.Reduce(c.Elementwise(Opcode::kMultiply, {a, a}, t), {last}, RK::kSum)}, t);
  Instruction* s = c.Reduce(c.Elementwise(Opcode::kPower, {a, c.Constant(p, t)}, t), {last}, RK::kSum);
  return c.Elementwise(Opcode::kPower, {s, c.Constant(1 / p, t)}, t);
}

// _cdist_forward(x1, x2, p, compute_mode): computed directly (ATen's matrix-product shortcut for
// p = 2 on large inputs trades accuracy for speed; this keeps the accurate form).
Outs CdistForward(LoweringContext& c, const ir::Node& n) {
  if (!hlo::IsFloating(OutType(n))) throw NotLowered("cdist of integers");
  return {NormOverLast(c, RowDifferences(c, c.Operand(n, 0), c.Operand(n, 1)), c.ConstArg(n, 2).toDouble())};
}

// d dist / d x1 summed over x2's rows, weighted by grad [*, P, R]; dist [*, P, R] is the forward.
Instruction* CdistGrad(LoweringContext& c, Instruction* grad, Instruction* x1, Instruction* x2, Instruction* dist, double p) {
  ElementType t = x1->shape().type;
  Instruction* d = RowDifferences(c, x1, x2);
  const auto& dims = d->shape().dims;
  auto column = [&](Instruction* v) {  // [*, P, R] -> [*, P, R, M]
    auto shape = v->shape().dims;
    shape.push_back(1);
    return c.BroadcastTo(c.Reshape(v, shape), dims);
  };
  Instruction* g = column(grad);
  Instruction* zero = c.Constant(0, t);
  Instruction* sign = c.Elementwise(Opcode::kSign, {d}, t);
  Instruction* term;
  if (p == 0) {
    term = c.BroadcastTo(zero, dims);
  } else if (p == 1) {
    term = c.Elementwise(Opcode::kMultiply, {g, sign}, t);
  } else if (std::isinf(p)) {
    throw NotLowered("cdist backward with p = inf");
  } else {
    Instruction* dd = column(dist);
    Instruction* a = c.Elementwise(Opcode::kAbs, {d}, t);
    Instruction* num = p == 2 ? d : c.Elementwise(Opcode::kMultiply, {sign, c.Elementwise(Opcode::kPower, {a, c.Constant(p - 1, t)}, t)}, t);
    Instruction* den = p == 2 ? dd : c.Elementwise(Opcode::kPower, {dd, c.Constant(p - 1, t)}, t);
    Instruction* v = c.Elementwise(Opcode::kMultiply, {g, c.Elementwise(Opcode::kDivide, {num, den}, t)}, t);
    term = Select(c, Cmp(c, Comparison::kEq, dd, zero), c.BroadcastTo(zero, dims), v, t);
  }
  return c.Reduce(term, {static_cast<int64_t>(dims.size()) - 2}, RK::kSum);
}

Outs CdistBackward(LoweringContext& c, const ir::Node& n) {  // (grad, x1, x2, p, cdist)
  return {CdistGrad(c, c.Operand(n, 0), c.Operand(n, 1), c.Operand(n, 2), c.Operand(n, 4), c.ConstArg(n, 3).toDouble())};
}

// Row pairs (i < j) of an n-row matrix in pdist's order, as flat indices into [n, n].
std::vector<int64_t> UpperPairs(int64_t rows) {
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = i + 1; j < rows; ++j) flat.push_back(i * rows + j);
  return flat;
}

Instruction* PairTable(LoweringContext& c, int64_t rows) {
  std::vector<int64_t> pairs = UpperPairs(rows);
  const int64_t count = static_cast<int64_t>(pairs.size());
  return c.computation()->AddConstant(hlo::Literal::FromInts(hlo::Shape::Array(ElementType::kS64, {count}), std::move(pairs)));
}

Outs PdistForward(LoweringContext& c, const ir::Node& n) {  // (self, p)
  Instruction* x = c.Operand(n, 0);
  if (!hlo::IsFloating(x->shape().type)) throw NotLowered("pdist of integers");
  const int64_t rows = x->shape().dims[0];
  Instruction* all = NormOverLast(c, RowDifferences(c, x, x), c.ConstArg(n, 1).toDouble());
  return {c.TakeRows(c.Reshape(all, {rows * rows}), PairTable(c, rows), 0)};
}

Outs PdistBackward(LoweringContext& c, const ir::Node& n) {  // (grad, self, p, pdist)
  Instruction* x = c.Operand(n, 1);
  ElementType t = x->shape().type;
  const int64_t rows = x->shape().dims[0];
  const double p = c.ConstArg(n, 2).toDouble();
  Instruction* upper = c.Reshape(c.AddRows(c.BroadcastTo(c.Constant(0, t), {rows * rows}), PairTable(c, rows), c.Operand(n, 0), 0),
                                 {rows, rows});
  Instruction* grad = c.Elementwise(Opcode::kAdd, {upper, c.Transpose(upper, {1, 0})}, t);
  Instruction* dist = NormOverLast(c, RowDifferences(c, x, x), p);
  return {CdistGrad(c, grad, x, x, dist, p)};
}

// ATen's linspace(-1, 1, steps)[s] (from both ends, in the element type), then scaled by
// (steps - 1) / steps without align_corners; a single step is 0.
template <typename T>
T LinspaceFromNegOneOf(int64_t steps, int64_t s, bool align_corners) {
  if (steps <= 1) return T(0);
  const T step = T(2) / static_cast<T>(steps - 1);
  T v = s < steps / 2 ? T(-1) + step * static_cast<T>(s) : T(1) - step * static_cast<T>(steps - s - 1);
  if (!align_corners) v = v * static_cast<T>(steps - 1) / static_cast<T>(steps);
  return v;
}

double LinspaceFromNegOne(int64_t steps, int64_t s, bool align_corners, ElementType t) {
  return t == ElementType::kF64 ? LinspaceFromNegOneOf<double>(steps, s, align_corners)
                                : static_cast<double>(LinspaceFromNegOneOf<float>(steps, s, align_corners));
}

// The base grid of affine_grid: for [N, C, H, W] (or D, H, W) a [.., 3] (or 4) tensor of the
// normalized x, y(, z) coordinates of each output position and a 1, as ATen's linspace makes them.
Instruction* BaseGrid(LoweringContext& c, const std::vector<int64_t>& size, bool align_corners, ElementType t) {
  const size_t spatial = size.size() - 2;
  std::vector<int64_t> dims(size.begin() + 2, size.end());
  dims.push_back(static_cast<int64_t>(spatial) + 1);
  Instruction* grid = c.BroadcastTo(c.Constant(1, t), dims);
  Instruction* channel = c.Iota(hlo::Shape::Array(ElementType::kS64, dims), static_cast<int64_t>(spatial));
  for (size_t k = 0; k < spatial; ++k) {
    // Coordinate k (x first) runs along spatial dimension spatial - 1 - k.
    const int64_t dim = static_cast<int64_t>(spatial - 1 - k);
    const int64_t steps = size[2 + dim];
    std::vector<double> values(steps);
    for (int64_t s = 0; s < steps; ++s) values[s] = LinspaceFromNegOne(steps, s, align_corners, t);
    Instruction* table = c.computation()->AddConstant(hlo::Literal::FromDoubles(hlo::Shape::Array(t, {steps}), values));
    std::vector<int64_t> shape(dims.size(), 1);
    shape[dim] = steps;
    Instruction* coord = c.BroadcastTo(c.Reshape(table, shape), dims);
    grid = Select(c, Cmp(c, Comparison::kEq, channel, c.Constant(static_cast<double>(k), ElementType::kS64)), coord, grid, t);
  }
  return grid;
}

// affine_grid_generator(theta [N, k, k+1], size, align_corners) -> [N, *spatial, k]. Its
// backward is a composite ATen decomposes above functionalization.
Outs AffineGrid(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  const auto size = IntList(c.ConstArg(n, 1));
  if (size.size() != 4 && size.size() != 5) throw NotLowered("affine_grid of rank other than 4 or 5");
  const int64_t k = static_cast<int64_t>(size.size()) - 2, batch = size[0];
  Instruction* base = BaseGrid(c, size, c.ConstArg(n, 2).toBool(), t);
  int64_t points = 1;
  for (size_t d = 2; d < size.size(); ++d) points *= size[d];
  Instruction* flat = c.BroadcastTo(c.Reshape(base, {1, points, k + 1}), {batch, points, k + 1});
  hlo::DotDims dd;
  dd.lhs_batch = {0}, dd.rhs_batch = {0}, dd.lhs_contracting = {2}, dd.rhs_contracting = {2};
  Instruction* out = c.Dot(flat, c.Operand(n, 0), dd);  // [N, points, k]
  return {c.Reshape(out, n.shape().sizes)};
}

}  // namespace

std::vector<LoweringEntry> SpecialLowerings() {
  return {
      {"aten::isnan", IsNan},
      {"aten::isposinf", IsSignedInf<1>},
      {"aten::isneginf", IsSignedInf<-1>},
      {"aten::nan_to_num", NanToNum},
      {"aten::lgamma", FloatUnary<Opcode::kLgamma>},
      {"aten::digamma", FloatUnary<Opcode::kDigamma>},
      {"aten::acosh", FloatUnary<Opcode::kAcosh>},
      {"aten::asinh", FloatUnary<Opcode::kAsinh>},
      {"aten::atanh", FloatUnary<Opcode::kAtanh>},
      {"aten::logit", Logit},
      {"aten::logit_backward", LogitBackward},
      {"aten::mvlgamma", Mvlgamma},
      {"aten::xlogy.Tensor", Xlogy},
      {"aten::xlogy.Scalar_Self", Xlogy},
      {"aten::xlogy.Scalar_Other", Xlogy},
      {"aten::logaddexp", Logaddexp},
      {"aten::__lshift__.Scalar", Shift<Opcode::kShiftLeft>},
      {"aten::__lshift__.Tensor", Shift<Opcode::kShiftLeft>},
      {"aten::__rshift__.Scalar", Shift<Opcode::kShiftRightArithmetic>},
      {"aten::__rshift__.Tensor", Shift<Opcode::kShiftRightArithmetic>},
      {"aten::bitwise_left_shift.Tensor", Shift<Opcode::kShiftLeft>},
      {"aten::bitwise_right_shift.Tensor", Shift<Opcode::kShiftRightArithmetic>},
      {"aten::softshrink", Softshrink},
      {"aten::softshrink_backward", ShrinkBackward<true>},
      {"aten::hardshrink", Hardshrink},
      {"aten::hardshrink_backward", ShrinkBackward<false>},
      {"aten::glu", Glu},
      {"aten::glu_backward", GluBackward},
      {"aten::log_sigmoid_forward", LogSigmoidForward},
      {"aten::log_sigmoid_backward", LogSigmoidBackward},
      {"aten::addr", Addr},
      {"aten::_cdist_forward", CdistForward},
      {"aten::_cdist_backward", CdistBackward},
      {"aten::_pdist_forward", PdistForward},
      {"aten::_pdist_backward", PdistBackward},
      {"aten::affine_grid_generator", AffineGrid},
  };
}

}  // namespace txla::lower
