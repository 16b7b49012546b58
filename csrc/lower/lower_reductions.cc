// Lowering of reductions: products, extrema and their positions, variance, norms, logsumexp,
// any/all. Positions (argmax, max.dim) are a second reduction: the smallest index where the
// value equals the maximum (or is NaN, which wins as in ATen).
#include <ATen/ATen.h>

#include <cmath>

#include "ir/op_table.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// Reduced dims from an int, an int list, or None (every dimension). A 0-dim tensor reduced over
// dim 0 or -1 (which ATen accepts) reduces over nothing.
std::vector<int64_t> Dims(LoweringContext& c, const ir::Node& n, size_t arg, int64_t rank) {
  std::vector<int64_t> dims;
  if (rank == 0) return dims;
  if (arg < n.args().size() && !c.IsNone(n, arg)) {
    const c10::IValue& v = c.ConstArg(n, arg);
    dims = v.isInt() ? std::vector<int64_t>{v.toInt()} : IntList(v);
  }
  if (dims.empty())
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  for (int64_t& d : dims) d = WrapDim(d, rank);
  return dims;
}

bool Keep(LoweringContext& c, const ir::Node& n, size_t arg) {
  return arg < n.args().size() && c.ConstArg(n, arg).toBool();
}

Outs Prod(LoweringContext& c, const ir::Node& n) {  // prod(self, dtype) / prod.dim_int(self, dim, keepdim, dtype)
  Instruction* x = c.Convert(c.Operand(n, 0), OutType(n));
  bool with_dim = n.args().size() == 4;
  auto dims = Dims(c, n, with_dim ? 1 : 99, x->shape().rank());
  return {c.Reduce(x, dims, RK::kProd, with_dim && Keep(c, n, 2))};
}

template <RK kKind>
Outs Extremum(LoweringContext& c, const ir::Node& n) {  // amax(self, dim, keepdim) / max(self)
  Instruction* x = c.Operand(n, 0);
  auto dims = Dims(c, n, n.args().size() > 1 ? 1 : 99, x->shape().rank());
  return {c.Reduce(x, dims, kKind, Keep(c, n, 2))};
}

// aminmax(self, *, dim?, keepdim) -> (min, max).
Outs Aminmax(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  auto dims = Dims(c, n, 1, x->shape().rank());
  bool keepdim = Keep(c, n, 2);
  return {c.Reshape(c.Reduce(x, dims, RK::kMin, keepdim), n.shape(0).sizes),
          c.Reshape(c.Reduce(x, dims, RK::kMax, keepdim), n.shape(1).sizes)};
}

// count_nonzero(self, dim?) / .dim_IntList(self, dim[]): an s64 count of the elements != 0.
Outs CountNonzero(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  ElementType t = x->shape().type;
  Instruction* nonzero = c.Convert(c.Elementwise(Opcode::kCompare, {x, c.Constant(0, t)}, t, Comparison::kNe), ElementType::kS64);
  return {c.Reshape(c.Reduce(nonzero, Dims(c, n, 1, x->shape().rank()), RK::kSum), n.shape().sizes)};
}

// The first index along `dim` where x equals its extremum m (keepdim), or where x is NaN.
Instruction* PositionOf(LoweringContext& c, Instruction* x, Instruction* m, int64_t dim, bool keepdim) {
  ElementType t = x->shape().type;
  Instruction* hit = c.Elementwise(Opcode::kCompare, {x, m}, t, Comparison::kEq);
  if (hlo::IsFloating(t))
    hit = c.Elementwise(Opcode::kOr, {hit, c.Elementwise(Opcode::kCompare, {x, x}, t, Comparison::kNe)},
                        ElementType::kPred);
  hlo::Attributes iota;
  iota.index = dim;
  Instruction* positions = c.Add(Opcode::kIota, hlo::Shape::Array(ElementType::kS64, x->shape().dims), {}, iota);
  Instruction* candidates = c.Elementwise(
      Opcode::kSelect, {hit, positions, c.Constant(static_cast<double>(INT64_MAX), ElementType::kS64)},
      ElementType::kS64);
  return c.Reduce(candidates, {dim}, RK::kMin, keepdim);
}

template <RK kKind>
Outs ExtremumDim(LoweringContext& c, const ir::Node& n) {  // max.dim(self, dim, keepdim)
  Instruction* x = c.Operand(n, 0);
  if (x->shape().rank() == 0) return {x, c.Constant(0, ElementType::kS64)};
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  bool keepdim = Keep(c, n, 2);
  Instruction* m = c.Reduce(x, {dim}, kKind, true);
  return {keepdim ? m : c.Reshape(m, n.shape(0).sizes), PositionOf(c, x, m, dim, keepdim)};
}

template <RK kKind>
Outs ArgExtremum(LoweringContext& c, const ir::Node& n) {  // argmax(self, dim?, keepdim)
  Instruction* x = c.Operand(n, 0);
  bool keepdim = Keep(c, n, 2);
  if (c.IsNone(n, 1)) {  // over the flattened tensor
    Instruction* flat = c.Reshape(x, {x->shape().element_count()});
    Instruction* m = c.Reduce(flat, {0}, kKind, true);
    return {c.Reshape(PositionOf(c, flat, m, 0, false), n.shape().sizes)};
  }
  if (x->shape().rank() == 0) return {c.Reshape(c.Constant(0, ElementType::kS64), n.shape().sizes)};
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  return {PositionOf(c, x, c.Reduce(x, {dim}, kKind, true), dim, keepdim)};
}

// var.correction(self, dim?, correction?, keepdim), and the mean it subtracts (kept at size 1
// along the reduced dimensions).
struct Moments {
  Instruction* variance;
  Instruction* mean;
};

Moments VarianceAndMean(LoweringContext& c, const ir::Node& n, ElementType t) {
  Instruction* x = c.Convert(c.Operand(n, 0), t);
  auto dims = Dims(c, n, 1, x->shape().rank());
  double count = 1;
  for (int64_t d : dims) count *= static_cast<double>(x->shape().rank() ? x->shape().dims[d] : 1);
  double correction = c.IsNone(n, 2) ? 1.0 : c.ConstArg(n, 2).toScalar().toDouble();
  Instruction* mean = c.Elementwise(Opcode::kDivide, {c.Reduce(x, dims, RK::kSum, true), c.Constant(count, t)}, t);
  Instruction* centered = c.Elementwise(Opcode::kSubtract, {x, mean}, t);
  Instruction* sq = c.Reduce(c.Elementwise(Opcode::kMultiply, {centered, centered}, t), dims, RK::kSum, Keep(c, n, 3));
  return {c.Elementwise(Opcode::kDivide, {sq, c.Constant(std::max(count - correction, 0.0), t)}, t), mean};
}

// var / std.correction, and var_mean / std_mean.correction (the same arguments, the mean as a
// second result).
template <bool kStd, bool kWithMean>
Outs Spread(LoweringContext& c, const ir::Node& n) {
  Moments m = VarianceAndMean(c, n, OutType(n));
  Instruction* spread = kStd ? c.Elementwise(Opcode::kSqrt, {m.variance}, OutType(n)) : m.variance;
  if (!kWithMean) return {spread};
  return {spread, c.Reshape(m.mean, n.shape(1).sizes)};
}

// p-norm for a p known when the graph is built (None means 2).
Instruction* PNorm(LoweringContext& c, Instruction* x, double p, const std::vector<int64_t>& dims,
                   bool keepdim, ElementType t) {
  x = c.Convert(x, t);
  Instruction* a = c.Elementwise(Opcode::kAbs, {x}, t);
  if (std::isinf(p)) return c.Reduce(a, dims, p > 0 ? RK::kMax : RK::kMin, keepdim);
  if (p == 0) {
    Instruction* nz = c.Convert(c.Elementwise(Opcode::kCompare, {x, c.Constant(0, t)}, t, Comparison::kNe), t);
    return c.Reduce(nz, dims, RK::kSum, keepdim);
  }
  if (p == 1) return c.Reduce(a, dims, RK::kSum, keepdim);
  if (p == 2)
    return c.Elementwise(Opcode::kSqrt, {c.Reduce(c.Elementwise(Opcode::kMultiply, {x, x}, t), dims, RK::kSum, keepdim)}, t);
  Instruction* s = c.Reduce(c.Elementwise(Opcode::kPower, {a, c.Constant(p, t)}, t), dims, RK::kSum, keepdim);
  return c.Elementwise(Opcode::kPower, {s, c.Constant(1 / p, t)}, t);
}

double ConstP(LoweringContext& c, const ir::Node& n, size_t arg) {
  const ir::Arg& a = n.args().at(arg);
  if (a.kind != ir::Arg::Kind::kConst)
    throw NotLowered(n.op()->name + " with an order known only when the graph runs");
  return a.value.isNone() ? 2.0 : a.value.toScalar().toDouble();
}

Outs LinalgVectorNorm(LoweringContext& c, const ir::Node& n) {  // (self, ord, dim?, keepdim, dtype?)
  Instruction* x = c.Operand(n, 0);
  return {PNorm(c, x, ConstP(c, n, 1), Dims(c, n, 2, x->shape().rank()), Keep(c, n, 3), OutType(n))};
}

Outs NormScalarOptDim(LoweringContext& c, const ir::Node& n) {  // (self, p?, dim[], keepdim)
  Instruction* x = c.Operand(n, 0);
  return {PNorm(c, x, ConstP(c, n, 1), Dims(c, n, 2, x->shape().rank()), Keep(c, n, 3), OutType(n))};
}

// renorm(self, p, dim, maxnorm): each slice along `dim` whose p-norm exceeds maxnorm is scaled
// to maxnorm / (norm + 1e-7), as ATen's kernel computes the factor.
Outs Renorm(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  if (!hlo::IsFloating(t)) throw NotLowered("renorm of an integer tensor");
  Instruction* x = c.Convert(c.Operand(n, 0), t);
  if (x->shape().rank() == 0) throw NotLowered("renorm of a 0-dim tensor");
  int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), x->shape().rank());
  std::vector<int64_t> others;
  for (int64_t d = 0; d < x->shape().rank(); ++d)
    if (d != dim) others.push_back(d);
  Instruction* norm = PNorm(c, x, ConstP(c, n, 1), others, /*keepdim=*/true, t);
  Instruction* maxnorm = c.Constant(c.ConstArg(n, 3).toScalar().toDouble(), t);
  Instruction* factor = c.Elementwise(
      Opcode::kSelect,
      {c.Elementwise(Opcode::kCompare, {norm, maxnorm}, t, Comparison::kGt),
       c.Elementwise(Opcode::kDivide, {maxnorm, c.Elementwise(Opcode::kAdd, {norm, c.Constant(1e-7, t)}, t)}, t),
       c.Constant(1, t)},
      t);
  return {c.Elementwise(Opcode::kMultiply, {x, factor}, t)};
}

Outs Logsumexp(LoweringContext& c, const ir::Node& n) {  // (self, dim[], keepdim)
  ElementType t = OutType(n);
  Instruction* x = c.Convert(c.Operand(n, 0), t);
  auto dims = Dims(c, n, 1, x->shape().rank());
  Instruction* m = c.Reduce(x, dims, RK::kMax, true);
  // An infinite maximum would give inf - inf: shift by 0 there instead, as ATen does.
  Instruction* finite = c.Elementwise(Opcode::kIsFinite, {m}, t);
  m = c.Elementwise(Opcode::kSelect, {finite, m, c.Constant(0, t)}, t);
  Instruction* s = c.Reduce(c.Elementwise(Opcode::kExp, {c.Elementwise(Opcode::kSubtract, {x, m}, t)}, t), dims,
                            RK::kSum, Keep(c, n, 2));
  Instruction* shift = Keep(c, n, 2) ? m : c.Reshape(m, n.shape().sizes);
  return {c.Elementwise(Opcode::kAdd, {c.Elementwise(Opcode::kLog, {s}, t), shift}, t)};
}

template <RK kKind>
Outs AnyAll(LoweringContext& c, const ir::Node& n) {  // any(self) / any.dim(self, dim, keepdim)
  Instruction* x = c.Operand(n, 0);
  if (x->shape().type != ElementType::kPred)
    x = c.Elementwise(Opcode::kCompare, {x, c.Constant(0, x->shape().type)}, x->shape().type, Comparison::kNe);
  bool with_dim = n.args().size() > 1;
  auto dims = Dims(c, n, with_dim ? 1 : 99, x->shape().rank());
  return {c.Convert(c.Reduce(x, dims, kKind, with_dim && Keep(c, n, 2)), OutType(n))};
}

// cumsum / cumprod(self, dim, dtype?): a running total along the dimension.
Outs Cumulative(LoweringContext& c, const ir::Node& n, hlo::CustomCallTarget target) {
  ElementType t = OutType(n);
  Instruction* x = c.Convert(c.Operand(n, 0), t);
  if (x->shape().rank() == 0) return {x};
  hlo::Attributes a;
  a.dimensions = {WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank())};
  a.custom_call_target = target;
  return {c.Add(Opcode::kCustomCall, x->shape(), {x}, a)};
}
Outs Cumsum(LoweringContext& c, const ir::Node& n) { return Cumulative(c, n, hlo::CustomCallTarget::kCumsum); }
Outs Cumprod(LoweringContext& c, const ir::Node& n) { return Cumulative(c, n, hlo::CustomCallTarget::kCumprod); }

// _logcumsumexp(self, dim): what logcumsumexp runs; a running log-sum-exp (shifting by the line's
// maximum would lose the early terms far below it).
Outs Logcumsumexp(LoweringContext& c, const ir::Node& n) {
  if (hlo::Is16BitFloat(OutType(n))) throw NotLowered("logcumsumexp in a 16-bit float type");
  return Cumulative(c, n, hlo::CustomCallTarget::kCumlogsumexp);
}

// cummax / cummin(self, dim) -> (values, indices): where the running extremum was last taken (a
// library-style scan), and the values read there.
template <bool kMax>
Outs CumulativeExtremum(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  ElementType t = x->shape().type;
  if (hlo::Is16BitFloat(t)) throw NotLowered("cummax / cummin in a 16-bit float type");
  if (x->shape().rank() == 0) return {x, c.Constant(0, ElementType::kS64)};
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  hlo::Attributes a;
  a.dimensions = {dim};
  a.custom_call_target = kMax ? hlo::CustomCallTarget::kCummaxIndices : hlo::CustomCallTarget::kCumminIndices;
  Instruction* where = c.Add(Opcode::kCustomCall, hlo::Shape::Array(ElementType::kS64, x->shape().dims), {x}, a);
  return {c.TakeAlong(x, where, dim), where};
}

// sort(self, dim, descending) and sort.stable(self, stable, dim, descending): the device's sort
// is always stable, which an unstable sort may be too.
template <size_t kDimArg>
Outs Sort(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  if (x->shape().rank() == 0) return {x, c.Constant(0, ElementType::kS64)};
  int64_t dim = WrapDim(c.ConstArg(n, kDimArg).toInt(), x->shape().rank());
  Instruction* order = SortPositions(c, x, dim, c.ConstArg(n, kDimArg + 1).toBool());
  return {c.TakeAlong(x, order, dim), order};
}

Outs Topk(LoweringContext& c, const ir::Node& n) {  // topk(self, k, dim, largest, sorted)
  Instruction* x = c.Operand(n, 0);
  if (x->shape().rank() == 0) throw NotLowered("topk of a 0-dim tensor");
  int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), x->shape().rank());
  int64_t k = c.ConstArg(n, 1).toInt();
  Instruction* order = SortPositions(c, x, dim, c.ConstArg(n, 3).toBool());
  hlo::Attributes a;
  for (int64_t d = 0; d < x->shape().rank(); ++d) a.slice.push_back({0, d == dim ? k : x->shape().dims[d], 1});
  std::vector<int64_t> dims = x->shape().dims;
  dims[dim] = k;
  Instruction* top = c.Add(Opcode::kSlice, hlo::Shape::Array(ElementType::kS64, dims), {order}, a);
  return {c.TakeAlong(x, top, dim), top};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_prod, Prod)
TXLA_LOWER(aten_prod_dim_int, Prod)
TXLA_LOWER(aten_amax, Extremum<RK::kMax>)
TXLA_LOWER(aten_amin, Extremum<RK::kMin>)
TXLA_LOWER(aten_max, Extremum<RK::kMax>)
TXLA_LOWER(aten_min, Extremum<RK::kMin>)
TXLA_LOWER(aten_max_dim, ExtremumDim<RK::kMax>)
TXLA_LOWER(aten_min_dim, ExtremumDim<RK::kMin>)
TXLA_LOWER(aten_argmax, ArgExtremum<RK::kMax>)
TXLA_LOWER(aten_argmin, ArgExtremum<RK::kMin>)
TXLA_LOWER(aten_var_correction, Spread<false, false>)
TXLA_LOWER(aten_std_correction, Spread<true, false>)
TXLA_LOWER(aten_var_mean_correction, Spread<false, true>)
TXLA_LOWER(aten_std_mean_correction, Spread<true, true>)
TXLA_LOWER(aten_linalg_vector_norm, LinalgVectorNorm)
TXLA_LOWER(aten_norm_ScalarOpt_dim, NormScalarOptDim)
TXLA_LOWER(aten_logsumexp, Logsumexp)
TXLA_LOWER(aten_renorm, Renorm)
TXLA_LOWER(aten_aminmax, Aminmax)
TXLA_LOWER(aten_count_nonzero, CountNonzero)
TXLA_LOWER(aten_count_nonzero_dim_IntList, CountNonzero)
TXLA_LOWER(aten_any, AnyAll<RK::kOr>)
TXLA_LOWER(aten_any_dim, AnyAll<RK::kOr>)
TXLA_LOWER(aten_all, AnyAll<RK::kAnd>)
TXLA_LOWER(aten_all_dim, AnyAll<RK::kAnd>)
TXLA_LOWER(aten_cumsum, Cumsum)
TXLA_LOWER(aten_cumprod, Cumprod)
TXLA_LOWER(aten__logcumsumexp, Logcumsumexp)
TXLA_LOWER(aten_cummax, CumulativeExtremum<true>)
TXLA_LOWER(aten_cummin, CumulativeExtremum<false>)
TXLA_LOWER(aten_sort, Sort<1>)
TXLA_LOWER(aten_sort_stable, Sort<2>)
TXLA_LOWER(aten_topk, Topk)

}  // namespace txla::lower
