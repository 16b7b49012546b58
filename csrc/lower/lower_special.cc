// Lowering of special functions (gamma family, inverse hyperbolics, logit, xlogy, logaddexp),
// float classification (isnan, isposinf, nan_to_num), bit shifts, shrinkage activations, glu,
// log-sigmoid, outer-product updates (addr), distances (cdist, pdist) and the affine grid.
// Formulas follow ATen's CPU kernels, including their edge cases (NaN, infinities, zero).
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "lower/formula.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

template <Opcode kOp>
Outs FloatUnary(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  if (!hlo::IsFloating(b.t)) throw NotLowered(n.OpName() + " with an integer result");
  return {b(kOp, c.Operand(n, 0))};
}

constexpr double kInf = std::numeric_limits<double>::infinity();

Instruction* AllFalse(LoweringContext& c, const ir::Node& n) {
  return c.BroadcastTo(c.Constant(0, ElementType::kPred), n.shape().sizes);
}

Outs IsNan(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  Builder b{c, x->shape().type};
  if (!hlo::IsFloating(b.t)) return {AllFalse(c, n)};
  return {b.cmp(Comparison::kNe, x, x)};
}

template <int kSign>
Outs IsSignedInf(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  Builder b{c, x->shape().type};
  if (!hlo::IsFloating(b.t)) return {AllFalse(c, n)};
  return {b.cmp(Comparison::kEq, x, b.k(kSign * kInf))};
}

// nan_to_num(self, nan?, posinf?, neginf?): defaults 0 and the type's largest finite values.
Outs NanToNum(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  if (!hlo::IsFloating(b.t)) return {x};
  const double big = b.t == ElementType::kF64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
  auto value = [&](size_t arg, double fallback) { return c.IsNone(n, arg) ? b.k(fallback) : c.ScalarArg(n, arg, b.t); };
  Instruction* y = b.sel(b.cmp(Comparison::kNe, x, x), value(1, 0), x);
  y = b.sel(b.cmp(Comparison::kEq, x, b.k(kInf)), value(2, big), y);
  return {b.sel(b.cmp(Comparison::kEq, x, b.k(-kInf)), value(3, -big), y)};
}

// logit(self, eps?): log(z / (1 - z)), z = self clamped to [eps, 1 - eps] when eps is given.
Outs Logit(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* z = c.Convert(c.Operand(n, 0), b.t);
  if (!c.IsNone(n, 1)) {
    const double eps = c.ConstArg(n, 1).toDouble();
    z = c.Elementwise(Opcode::kClamp, {b.k(eps), z, b.k(1 - eps)}, b.t);
  }
  return {b(Opcode::kLog, b.div(z, b.sub(b.k(1), z)))};
}

// logit_backward(grad, self, eps?): grad / (x (1 - x)); outside [eps, 1 - eps] zero, or without
// eps NaN outside [0, 1] and grad * inf at the ends.
Outs LogitBackward(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* g = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  Instruction* slope = b.div(g, b.mul(x, b.sub(b.k(1), x)));
  const double eps = c.IsNone(n, 2) ? -1.0 : c.ConstArg(n, 2).toDouble();
  if (eps >= 0) {
    Instruction* outside = b.any(b.cmp(Comparison::kLt, x, b.k(eps)), b.cmp(Comparison::kGt, x, b.k(1 - eps)));
    return {b.sel(outside, b.k(0), slope)};
  }
  Instruction* at_end = b.any(b.cmp(Comparison::kEq, x, b.k(0)), b.cmp(Comparison::kEq, x, b.k(1)));
  Instruction* outside = b.any(b.cmp(Comparison::kLt, x, b.k(0)), b.cmp(Comparison::kGt, x, b.k(1)));
  return {b.sel(outside, b.k(std::nan("")), b.sel(at_end, b.mul(g, b.k(kInf)), slope))};
}

// mvlgamma(self, p): sum over j < p of lgamma(self - j/2), plus p (p - 1) / 4 log(pi), summed in
// ATen's order (the most shifted term first). ATen's domain check (self > (p - 1) / 2) needs
// the data; outside it the result is what the formula gives (inf or NaN).
Outs Mvlgamma(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Convert(c.Operand(n, 0), b.t);
  const int64_t p = c.ConstArg(n, 1).toInt();
  Instruction* sum = nullptr;
  for (int64_t j = p - 1; j >= 0; --j) {
    Instruction* term = b(Opcode::kLgamma, b.sub(x, b.k(0.5 * j)));
    sum = sum ? b.add(sum, term) : term;
  }
  return {b.add(sum, b.k(p * (p - 1) * std::log(3.14159265358979323846) / 4))};
}

// xlogy(self, other): 0 where self is 0 (unless other is NaN), else self * log(other).
Outs Xlogy(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  if (!hlo::IsFloating(b.t)) throw NotLowered("xlogy with an integer result");
  Instruction* x = c.TensorOrScalar(n, 0, b.t);
  Instruction* y = c.TensorOrScalar(n, 1, b.t);
  Instruction* v = b.sel(b.cmp(Comparison::kEq, x, b.k(0)), b.k(0), b.mul(x, b(Opcode::kLog, y)));
  return {b.sel(b.cmp(Comparison::kNe, y, y), y, v)};
}

// logaddexp(a, b): max + log1p(exp(-|a - b|)); equal infinities give themselves.
Outs Logaddexp(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Convert(c.Operand(n, 0), b.t);
  Instruction* y = c.Convert(c.Operand(n, 1), b.t);
  Instruction* gap = b(Opcode::kNegate, b(Opcode::kAbs, b.sub(x, y)));
  Instruction* v = b.add(b(Opcode::kMaximum, x, y), b(Opcode::kLog1p, b(Opcode::kExp, gap)));
  Instruction* same_inf = b.all(b.cmp(Comparison::kEq, x, y), b.cmp(Comparison::kEq, b(Opcode::kAbs, x), b.k(kInf)));
  return {b.sel(same_inf, x, v)};
}

// hypot(a, b) = sqrt(a^2 + b^2) without overflow or underflow on the way: the larger magnitude
// times sqrt(1 + r^2), r the ratio of the smaller to it; an infinite side wins over a NaN (C).
Outs Hypot(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  if (!hlo::IsFloating(b.t)) throw NotLowered("hypot with an integer result");
  Instruction* x = b(Opcode::kAbs, c.Convert(c.Operand(n, 0), b.t));
  Instruction* y = b(Opcode::kAbs, c.Convert(c.Operand(n, 1), b.t));
  Instruction* hi = b(Opcode::kMaximum, x, y);
  Instruction* lo = b(Opcode::kMinimum, x, y);
  Instruction* r = b.div(lo, hi);
  Instruction* v = b.mul(hi, b(Opcode::kSqrt, b.add(b.k(1), b.mul(r, r))));
  v = b.sel(b.cmp(Comparison::kEq, hi, b.k(0)), b.k(0), v);
  Instruction* infinite = b.any(b.cmp(Comparison::kEq, x, b.k(kInf)), b.cmp(Comparison::kEq, y, b.k(kInf)));
  return {b.sel(infinite, b.k(kInf), v)};
}

// gcd (integers): Euclid on the absolute values, as ATen's calc_gcd.
Outs Gcd(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  if (hlo::IsFloating(b.t) || b.t == ElementType::kPred) throw NotLowered("gcd of a floating-point or bool tensor");
  return {b(Opcode::kGcd, c.Convert(c.Operand(n, 0), b.t), c.Convert(c.Operand(n, 1), b.t))};
}

// linalg_cross(self, other, dim): the two broadcast to one shape, 3 along `dim`.
Outs LinalgCross(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  const std::vector<int64_t>& dims = n.shape().sizes;
  Instruction* x = c.BroadcastTo(c.Convert(c.Operand(n, 0), b.t), dims);
  Instruction* y = c.BroadcastTo(c.Convert(c.Operand(n, 1), b.t), dims);
  int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), static_cast<int64_t>(dims.size()));
  auto at = [&](Instruction* v, int64_t k) { return c.Slice(v, dim, k, k + 1); };
  auto term = [&](int64_t i, int64_t j) { return b.sub(b.mul(at(x, i), at(y, j)), b.mul(at(x, j), at(y, i))); };
  hlo::Attributes a;
  a.dimensions = {dim};
  return {c.Add(Opcode::kConcatenate, hlo::Shape::Array(b.t, dims), {term(1, 2), term(2, 0), term(0, 1)}, a)};
}

// isin(elements, test_elements, assume_unique, invert): each element compared with every test
// element (a reduction over the test elements; the comparisons are never materialized).
Outs Isin(LoweringContext& c, const ir::Node& n) {
  ElementType common = PromotedWithNumber(c, n, 0, 1);
  Instruction* e = c.Convert(c.Operand(n, 0), common);
  Instruction* t = c.TensorOrScalar(n, 1, common);
  const bool invert = c.ConstArg(n, 3).toBool();
  if (t->shape().element_count() == 0)  // nothing to be in
    return {c.BroadcastTo(c.Constant(invert ? 1 : 0, ElementType::kPred), e->shape().dims)};
  std::vector<int64_t> column = e->shape().dims, dims = e->shape().dims;
  column.push_back(1);
  dims.push_back(t->shape().element_count());
  Instruction* elements = c.BroadcastTo(c.Reshape(e, column), dims);
  Instruction* tests = c.BroadcastTo(c.Reshape(t, {t->shape().element_count()}), dims);
  Instruction* hit = c.Elementwise(Opcode::kCompare, {elements, tests}, common, Comparison::kEq);
  Instruction* any = c.Reduce(hit, {static_cast<int64_t>(dims.size()) - 1}, RK::kOr);
  if (invert) any = c.Elementwise(Opcode::kNot, {any}, ElementType::kPred);
  return {any};
}

// Shifts (integer types): __lshift__/__rshift__ and bitwise_{left,right}_shift, tensor or scalar.
template <Opcode kOp>
Outs Shift(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  if (hlo::IsFloating(b.t) || b.t == ElementType::kPred) throw NotLowered("a shift of a floating-point or bool tensor");
  return {b(kOp, c.TensorOrScalar(n, 0, b.t), c.TensorOrScalar(n, 1, b.t))};
}

// Where x lies in [-l, l] (the shrinkage functions zero it there).
Instruction* WithinLambda(Builder& b, Instruction* x, Instruction* l) {
  return b.all(b.cmp(Comparison::kGe, x, b(Opcode::kNegate, l)), b.cmp(Comparison::kLe, x, l));
}

// softshrink(self, lambd): x - l above l, x + l below -l, else 0.
Outs Softshrink(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  Instruction* l = c.ScalarArg(n, 1, b.t);
  Instruction* v = b.sel(b.cmp(Comparison::kLt, x, b(Opcode::kNegate, l)), b.add(x, l), b.k(0));
  return {b.sel(b.cmp(Comparison::kGt, x, l), b.sub(x, l), v)};
}

// hardshrink(self, lambd): x outside [-l, l], else 0.
Outs Hardshrink(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  return {b.sel(WithinLambda(b, x, c.ScalarArg(n, 1, b.t)), b.k(0), x)};
}

// softshrink_backward / hardshrink_backward(grad, self, lambd): grad outside [-lambd, lambd].
Outs ShrinkBackward(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  return {b.sel(WithinLambda(b, c.Operand(n, 1), c.ScalarArg(n, 2, b.t)), b.k(0), c.Operand(n, 0))};
}

// glu(self, dim): a * sigmoid(b) of self's two halves along dim.
std::pair<Instruction*, Instruction*> Halves(LoweringContext& c, Instruction* x, int64_t dim) {
  const int64_t size = x->shape().dims[dim];
  if (size % 2) throw NotLowered("glu of an odd-sized dimension");
  return {c.Slice(x, dim, 0, size / 2), c.Slice(x, dim, size / 2, size)};
}

Outs Glu(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  auto [first, second] = Halves(c, x, WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank()));
  return {b.mul(first, b(Opcode::kLogistic, second))};
}

Outs GluBackward(LoweringContext& c, const ir::Node& n) {  // (grad_output, self, dim)
  Builder b = For(c, n);
  Instruction* g = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  const int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), x->shape().rank());
  auto [first, second] = Halves(c, x, dim);
  Instruction* s = b(Opcode::kLogistic, second);
  Instruction* g_first = b.mul(g, s);
  Instruction* g_second = b.mul(b.mul(g_first, first), b.sub(b.k(1), s));
  hlo::Attributes cat;
  cat.dimensions = {dim};
  return {c.Add(Opcode::kConcatenate, hlo::Shape::Array(b.t, x->shape().dims), {g_first, g_second}, cat)};
}

// exp(-|x|), the buffer log-sigmoid keeps for its backward.
Instruction* ExpNegAbs(Builder& b, Instruction* x) { return b(Opcode::kExp, b(Opcode::kNegate, b(Opcode::kAbs, x))); }

// log_sigmoid_forward(self) -> (min(x, 0) - log1p(exp(-|x|)), buffer exp(-|x|)).
Outs LogSigmoidForward(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  Instruction* z = ExpNegAbs(b, x);
  return {b.sub(b(Opcode::kMinimum, x, b.k(0)), b(Opcode::kLog1p, z)), z};
}

// log_sigmoid_backward(grad, self, buffer): grad * (x < 0 ? 1 - z/(1+z) : z/(1+z)), z = exp(-|x|).
Outs LogSigmoidBackward(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 1);
  Instruction* z = ExpNegAbs(b, x);
  Instruction* ratio = b.div(z, b.add(b.k(1), z));
  return {b.mul(c.Operand(n, 0), b.sel(b.cmp(Comparison::kLt, x, b.k(0)), b.sub(b.k(1), ratio), ratio))};
}

// addr(self, vec1, vec2, beta, alpha): beta * self + alpha * outer(vec1, vec2); self is ignored
// (NaN included) when beta is 0, as in ATen. Its scalars are graph constants (op table).
Outs Addr(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  if (b.t == ElementType::kPred) throw NotLowered("addr of bool tensors");
  const auto& dims = n.shape().sizes;
  Instruction* column = c.BroadcastTo(c.Reshape(c.Operand(n, 1), {dims[0], 1}), dims);
  Instruction* outer = b.mul(b.mul(column, c.Operand(n, 2)), c.ScalarArg(n, 4, b.t));
  if (c.ConstArg(n, 3).toScalar().toDouble() == 0) return {outer};
  return {b.add(b.mul(c.Operand(n, 0), c.ScalarArg(n, 3, b.t)), outer)};
}

// Pairwise differences of rows: x1 [*, P, M], x2 [*, R, M] -> [*, P, R, M].
Instruction* RowDifferences(LoweringContext& c, Instruction* x1, Instruction* x2) {
  auto d1 = x1->shape().dims, d2 = x2->shape().dims;
  const size_t r = d1.size();
  if (d2.size() != r || !std::equal(d1.begin(), d1.end() - 2, d2.begin()))
    throw NotLowered("cdist of inputs with different batch dimensions");
  d1.insert(d1.end() - 1, 1);  // [*, P, 1, M] - [*, 1, R, M], broadcast
  d2.insert(d2.end() - 2, 1);
  return c.Elementwise(Opcode::kSubtract, {c.Reshape(x1, d1), c.Reshape(x2, d2)}, x1->shape().type);
}

// The p-norm over the last dimension of d: p = 0 counts non-zeros, p = inf takes the largest.
Instruction* NormOverLast(LoweringContext& c, Instruction* d, double p) {
  Builder b{c, d->shape().type};
  const int64_t last = d->shape().rank() - 1;
  Instruction* a = b(Opcode::kAbs, d);
  if (p == 0) return c.Reduce(c.Convert(b.cmp(Comparison::kNe, a, b.k(0)), b.t), {last}, RK::kSum);
  if (std::isinf(p)) return c.Reduce(a, {last}, RK::kMax);
  if (p == 1) return c.Reduce(a, {last}, RK::kSum);
  if (p == 2) return b(Opcode::kSqrt, c.Reduce(b.mul(a, a), {last}, RK::kSum));
  return b(Opcode::kPower, c.Reduce(b(Opcode::kPower, a, b.k(p)), {last}, RK::kSum), b.k(1 / p));
}

// _cdist_forward(x1, x2, p, compute_mode): computed directly (ATen's matrix-product shortcut for
// p = 2 on large inputs trades accuracy for speed; this keeps the accurate form).
Outs CdistForward(LoweringContext& c, const ir::Node& n) {
  if (!hlo::IsFloating(OutType(n))) throw NotLowered("cdist of integers");
  return {NormOverLast(c, RowDifferences(c, c.Operand(n, 0), c.Operand(n, 1)), c.ConstArg(n, 2).toDouble())};
}

// d dist / d x1 summed over x2's rows, weighted by grad [*, P, R]; dist [*, P, R] is the forward.
Instruction* CdistGrad(LoweringContext& c, Instruction* grad, Instruction* x1, Instruction* x2, Instruction* dist, double p) {
  if (std::isinf(p)) throw NotLowered("cdist backward with p = inf");
  Builder b{c, x1->shape().type};
  Instruction* d = RowDifferences(c, x1, x2);
  const auto& dims = d->shape().dims;
  auto column = [&](Instruction* v) {  // [*, P, R] -> [*, P, R, M]
    auto shape = v->shape().dims;
    shape.push_back(1);
    return c.BroadcastTo(c.Reshape(v, shape), dims);
  };
  Instruction* g = column(grad);
  Instruction* sign = b(Opcode::kSign, d);
  Instruction* term;
  if (p == 0) {
    term = c.BroadcastTo(b.k(0), dims);
  } else if (p == 1) {
    term = b.mul(g, sign);
  } else {
    Instruction* dd = column(dist);
    Instruction* num = p == 2 ? d : b.mul(sign, b(Opcode::kPower, b(Opcode::kAbs, d), b.k(p - 1)));
    Instruction* den = p == 2 ? dd : b(Opcode::kPower, dd, b.k(p - 1));
    term = b.sel(b.cmp(Comparison::kEq, dd, b.k(0)), b.k(0), b.mul(g, b.div(num, den)));
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

Outs PdistForward(LoweringContext& c, const ir::Node& n) {  // (self, p)
  Instruction* x = c.Operand(n, 0);
  if (!hlo::IsFloating(x->shape().type)) throw NotLowered("pdist of integers");
  const int64_t rows = x->shape().dims[0];
  Instruction* all = NormOverLast(c, RowDifferences(c, x, x), c.ConstArg(n, 1).toDouble());
  return {c.TakeRows(c.Reshape(all, {rows * rows}), c.IndexConstant(UpperPairs(rows)), 0)};
}

Outs PdistBackward(LoweringContext& c, const ir::Node& n) {  // (grad, self, p, pdist)
  Instruction* x = c.Operand(n, 1);
  ElementType t = x->shape().type;
  const int64_t rows = x->shape().dims[0];
  const double p = c.ConstArg(n, 2).toDouble();
  Instruction* upper = c.Reshape(c.AddRows(c.BroadcastTo(c.Constant(0, t), {rows * rows}), c.IndexConstant(UpperPairs(rows)), c.Operand(n, 0), 0),
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
    Instruction* is_k = c.Elementwise(Opcode::kCompare, {channel, c.Constant(static_cast<double>(k), ElementType::kS64)},
                                      ElementType::kS64, Comparison::kEq);
    grid = c.Elementwise(Opcode::kSelect, {is_k, coord, grid}, t);
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

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_isnan, IsNan)
TXLA_LOWER(aten_isposinf, IsSignedInf<1>)
TXLA_LOWER(aten_isneginf, IsSignedInf<-1>)
TXLA_LOWER(aten_nan_to_num, NanToNum)
TXLA_LOWER(aten_lgamma, FloatUnary<Opcode::kLgamma>)
TXLA_LOWER(aten_digamma, FloatUnary<Opcode::kDigamma>)
TXLA_LOWER(aten_acosh, FloatUnary<Opcode::kAcosh>)
TXLA_LOWER(aten_asinh, FloatUnary<Opcode::kAsinh>)
TXLA_LOWER(aten_atanh, FloatUnary<Opcode::kAtanh>)
TXLA_LOWER(aten_erfinv, FloatUnary<Opcode::kErfInv>)
TXLA_LOWER(aten_hypot, Hypot)
TXLA_LOWER(aten_gcd, Gcd)
TXLA_LOWER(aten_linalg_cross, LinalgCross)
TXLA_LOWER(aten_isin_Tensor_Tensor, Isin)
TXLA_LOWER(aten_isin_Tensor_Scalar, Isin)
TXLA_LOWER(aten_logit, Logit)
TXLA_LOWER(aten_logit_backward, LogitBackward)
TXLA_LOWER(aten_mvlgamma, Mvlgamma)
TXLA_LOWER(aten_xlogy_Tensor, Xlogy)
TXLA_LOWER(aten_xlogy_Scalar_Self, Xlogy)
TXLA_LOWER(aten_xlogy_Scalar_Other, Xlogy)
TXLA_LOWER(aten_logaddexp, Logaddexp)
TXLA_LOWER(aten___lshift___Scalar, Shift<Opcode::kShiftLeft>)
TXLA_LOWER(aten___lshift___Tensor, Shift<Opcode::kShiftLeft>)
TXLA_LOWER(aten___rshift___Scalar, Shift<Opcode::kShiftRightArithmetic>)
TXLA_LOWER(aten___rshift___Tensor, Shift<Opcode::kShiftRightArithmetic>)
TXLA_LOWER(aten_bitwise_left_shift_Tensor, Shift<Opcode::kShiftLeft>)
TXLA_LOWER(aten_bitwise_right_shift_Tensor, Shift<Opcode::kShiftRightArithmetic>)
TXLA_LOWER(aten_softshrink, Softshrink)
TXLA_LOWER(aten_softshrink_backward, ShrinkBackward)
TXLA_LOWER(aten_hardshrink, Hardshrink)
TXLA_LOWER(aten_hardshrink_backward, ShrinkBackward)
TXLA_LOWER(aten_glu, Glu)
TXLA_LOWER(aten_glu_backward, GluBackward)
TXLA_LOWER(aten_log_sigmoid_forward, LogSigmoidForward)
TXLA_LOWER(aten_log_sigmoid_backward, LogSigmoidBackward)
TXLA_LOWER(aten_addr, Addr)
TXLA_LOWER(aten__cdist_forward, CdistForward)
TXLA_LOWER(aten__cdist_backward, CdistBackward)
TXLA_LOWER(aten__pdist_forward, PdistForward)
TXLA_LOWER(aten__pdist_backward, PdistBackward)
TXLA_LOWER(aten_affine_grid_generator, AffineGrid)

}  // namespace txla::lower
