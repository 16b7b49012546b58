// Ops on sorted order: sort positions (a library call), the order statistics read out of them
// (kthvalue, median, nanmedian, mode), and binary search (searchsorted, bucketize).
#include <limits>
#include <string>

#include "lower/formula.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {

Instruction* SortPositions(LoweringContext& c, Instruction* x, int64_t dim, bool descending) {
  // The library sorts f32 and f64 (float normalization widens 16-bit floats), s32 and s64;
  // narrower integers and bool sort in the same order as s32.
  switch (x->shape().type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kU8:
      x = c.Convert(x, ElementType::kS32);
      break;
    default:
      break;
  }
  hlo::Attributes a;
  a.dimensions = {dim};
  a.index = descending ? 1 : 0;
  a.custom_call_target = hlo::CustomCallTarget::kSortIndices;
  return c.Add(Opcode::kCustomCall, hlo::Shape::Array(ElementType::kS64, x->shape().dims), {x}, a);
}

namespace {

Instruction* S64(LoweringContext& c, double v) { return c.Constant(v, ElementType::kS64); }

// A statistic's value and index (x's dims with `dim` of size 1) in the node's own output shapes,
// which drop that dimension unless keepdim.
Outs AsOutputs(LoweringContext& c, const ir::Node& n, Instruction* value, Instruction* index) {
  return {c.Reshape(value, n.shape(0).sizes), c.Reshape(index, n.shape(1).sizes)};
}

// Where along `dim` each row's statistic sits in sorted order, given the row's length n.
enum class Statistic { kKth, kMedian, kNanMedian };

// The value and the index (in x) of the element at sorted position `k(row)` of every row along
// `dim`. median: the lower median, or a row's first NaN when it has one (NaN sorts last, a stable
// sort keeps NaNs in their order). nanmedian: the lower median of the row's numbers (NaN when it
// has none). kthvalue: position k-1, NaN counting as the largest value. A row's index among equal
// values is the stable sort's; eager's selection may pick another of them.
std::pair<Instruction*, Instruction*> OrderStatistic(LoweringContext& c, Instruction* x, int64_t dim, Statistic kind,
                                                     int64_t k) {
  const int64_t n = x->shape().dims[dim];
  std::vector<int64_t> row = x->shape().dims;
  row[dim] = 1;
  Instruction* position;
  if (kind == Statistic::kKth) {
    position = c.BroadcastTo(S64(c, static_cast<double>(k - 1)), row);
  } else if (!hlo::IsFloating(x->shape().type)) {
    position = c.BroadcastTo(S64(c, static_cast<double>((n - 1) / 2)), row);
  } else {
    Builder b{c, ElementType::kS64};
    Instruction* is_nan = c.Elementwise(Opcode::kCompare, {x, x}, x->shape().type, Comparison::kNe);
    Instruction* nans = c.Reduce(c.Convert(is_nan, ElementType::kS64), {dim}, RK::kSum, /*keepdim=*/true);
    Instruction* numbers = b.sub(b.k(static_cast<double>(n)), nans);
    if (kind == Statistic::kMedian) {
      position = b.sel(b.cmp(Comparison::kGt, nans, b.k(0)), numbers, b.k(static_cast<double>((n - 1) / 2)));
    } else {  // a row of NaNs reads its first element, a NaN
      Instruction* lower_median = b.div(b.sub(numbers, b.k(1)), b.k(2));
      position = b.sel(b.cmp(Comparison::kGt, numbers, b.k(0)), lower_median, b.k(0));
    }
  }
  Instruction* order = SortPositions(c, x, dim, /*descending=*/false);
  Instruction* index = c.TakeAlong(order, position, dim);
  return {c.TakeAlong(x, index, dim), index};
}

// kthvalue(self, k, dim, keepdim) -> (values, indices)
Outs Kthvalue(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  if (x->shape().rank() == 0) return {x, S64(c, 0)};  // k == 1 (the Meta kernel checks)
  const int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), x->shape().rank());
  auto [value, index] = OrderStatistic(c, x, dim, Statistic::kKth, c.ConstArg(n, 1).toInt());
  return AsOutputs(c, n, value, index);
}

// median.dim / nanmedian.dim(self, dim, keepdim) -> (values, indices)
template <Statistic kKind>
Outs MedianDim(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  if (x->shape().rank() == 0) return {x, S64(c, 0)};
  const int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  auto [value, index] = OrderStatistic(c, x, dim, kKind, 0);
  return AsOutputs(c, n, value, index);
}

// median / nanmedian(self): of all elements, a 0-dim result; NaN for an empty float tensor (an
// empty integer tensor takes the CPU fallback: eager returns the type's NaN conversion).
template <Statistic kKind>
Outs MedianAll(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  const int64_t count = x->shape().element_count();
  if (count == 0) {
    if (!hlo::IsFloating(x->shape().type)) throw NotLowered("the median of an empty integer tensor");
    return {c.Constant(std::numeric_limits<double>::quiet_NaN(), x->shape().type)};
  }
  auto [value, index] = OrderStatistic(c, c.Reshape(x, {count}), 0, kKind, 0);
  return {c.Reshape(value, {})};
}

// mode(self, dim, keepdim) -> (values, indices): the most frequent value of each row, the
// smallest of equally frequent ones, found as ATen does over the sorted row (runs of equal
// values; NaN equals nothing, so each NaN is a run of its own). Its index is that of the value's
// last occurrence (the stable sort's run end); eager's unstable sort may end the run with
// another occurrence in rows longer than its insertion-sort cutoff.
Outs Mode(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  if (x->shape().rank() == 0) return {x, S64(c, 0)};
  const int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  const std::vector<int64_t>& dims = x->shape().dims;
  const int64_t len = dims[dim];
  std::vector<int64_t> row = dims;
  row[dim] = 1;
  if (x->shape().element_count() == 0)
    return AsOutputs(c, n, c.BroadcastTo(c.Constant(0, x->shape().type), row), c.BroadcastTo(S64(c, 0), row));
  Instruction* order = SortPositions(c, x, dim, /*descending=*/false);
  Instruction* sorted = c.TakeAlong(x, order, dim);
  Builder i64{c, ElementType::kS64};
  hlo::Attributes along;
  along.dimensions = {dim};
  const hlo::Shape flags = hlo::Shape::Array(ElementType::kPred, dims);
  Instruction* no = c.BroadcastTo(c.Constant(0, ElementType::kPred), row);
  // Whether each sorted element equals the one before it (the first: no), and the one after it.
  Instruction* same = no;
  Instruction* next_same = no;
  if (len > 1) {
    Instruction* equal = c.Elementwise(Opcode::kCompare, {c.Slice(sorted, dim, 1, len), c.Slice(sorted, dim, 0, len - 1)},
                                       x->shape().type, Comparison::kEq);
    same = c.Add(Opcode::kConcatenate, flags, {no, equal}, along);
    next_same = c.Add(Opcode::kConcatenate, flags, {equal, no}, along);
  }
  Instruction* k = c.Iota(hlo::Shape::Array(ElementType::kS64, dims), dim);
  // Each run's start, carried along it: where the running maximum of the run starts (counted
  // from 1, others 0) was last taken.
  hlo::Attributes scan = along;
  scan.custom_call_target = hlo::CustomCallTarget::kCummaxIndices;
  Instruction* start = c.Add(Opcode::kCustomCall, hlo::Shape::Array(ElementType::kS64, dims),
                             {i64.sel(same, i64.k(0), i64.add(k, i64.k(1)))}, scan);
  // A run's length, read at its last element.
  Instruction* run = i64.sel(next_same, i64.k(0), i64.add(i64.sub(k, start), i64.k(1)));
  Instruction* longest = c.Reduce(run, {dim}, RK::kMax, /*keepdim=*/true);
  Instruction* first = c.Reduce(i64.sel(i64.cmp(Comparison::kEq, run, longest), k, i64.k(static_cast<double>(len))), {dim},
                                RK::kMin, /*keepdim=*/true);
  return AsOutputs(c, n, c.TakeAlong(sorted, first, dim), c.TakeAlong(order, first, dim));
}

// The insertion points of `values` in the last dimension of `sequence`, by ATen's own binary
// search step for step (left: the first position whose element is not below the value; right:
// not at or below it), so that NaNs, which break the order, land where eager puts them. A 1-D
// sequence serves every value; otherwise sequence and values share their leading dimensions.
Instruction* BinarySearch(LoweringContext& c, Instruction* sequence, Instruction* values, bool right) {
  const std::vector<int64_t> out_dims = values->shape().dims;
  const int64_t m = sequence->shape().dims.back();
  const int64_t rows = sequence->shape().rank() == 1 ? 1 : sequence->shape().element_count() / std::max<int64_t>(m, 1);
  const int64_t count = values->shape().element_count();
  const int64_t per_row = sequence->shape().rank() == 1 ? count : out_dims.back();
  Builder i64{c, ElementType::kS64};
  if (m == 0 || count == 0) return c.BroadcastTo(i64.k(0), out_dims);
  Instruction* seq = c.Reshape(sequence, {rows, m});
  Instruction* val = c.Reshape(values, {rows, per_row});
  const ElementType t = val->shape().type;
  Instruction* lo = c.BroadcastTo(i64.k(0), {rows, per_row});
  Instruction* hi = c.BroadcastTo(i64.k(static_cast<double>(m)), {rows, per_row});
  // Each step at least halves hi - lo: bit_length(m) steps empty every range.
  for (int64_t left = m; left > 0; left >>= 1) {
    Instruction* active = i64.cmp(Comparison::kLt, lo, hi);
    Instruction* mid = i64.add(lo, i64.div(i64.sub(hi, lo), i64.k(2)));
    Instruction* at = c.Elementwise(Opcode::kMinimum, {mid, i64.k(static_cast<double>(m - 1))}, ElementType::kS64);
    Instruction* element = c.TakeAlong(seq, at, 1);
    Instruction* stops = c.Elementwise(Opcode::kCompare, {element, val}, t, right ? Comparison::kGt : Comparison::kGe);
    Instruction* go_up = c.Elementwise(Opcode::kNot, {stops}, ElementType::kPred);
    lo = i64.sel(i64.all(active, go_up), i64.add(at, i64.k(1)), lo);
    hi = i64.sel(i64.all(active, stops), at, hi);
  }
  return c.Reshape(lo, out_dims);
}

Instruction* SearchResult(LoweringContext& c, Instruction* positions, bool out_int32) {
  return out_int32 ? c.Convert(positions, ElementType::kS32) : positions;
}

// searchsorted.Tensor / .Scalar(sorted_sequence, self, *, out_int32, right, side, sorter)
Outs Searchsorted(LoweringContext& c, const ir::Node& n) {
  const ElementType t = PromotedWithNumber(c, n, 0, 1);
  Instruction* sequence = c.Convert(c.Operand(n, 0), t);
  Instruction* values = c.TensorOrScalar(n, 1, t);
  const c10::IValue& side = c.ConstArg(n, 4);
  const bool right = c.ConstArg(n, 3).toBool() || (side.isString() && side.toStringRef() == "right");
  if (!c.IsNone(n, 5)) {  // sorter: the sequence read in that order
    const int64_t last = sequence->shape().rank() - 1;
    sequence = c.TakeAlong(sequence, c.Convert(c.Operand(n, 5), ElementType::kS64), last);
  }
  return {SearchResult(c, BinarySearch(c, sequence, values, right), c.ConstArg(n, 2).toBool())};
}

// bucketize.Tensor / .Scalar(self, boundaries, *, out_int32, right): searchsorted of self in the
// 1-D boundaries.
Outs Bucketize(LoweringContext& c, const ir::Node& n) {
  const ElementType t = PromotedWithNumber(c, n, 1, 0);
  Instruction* boundaries = c.Convert(c.Operand(n, 1), t);
  Instruction* values = c.TensorOrScalar(n, 0, t);
  return {SearchResult(c, BinarySearch(c, boundaries, values, c.ConstArg(n, 3).toBool()), c.ConstArg(n, 2).toBool())};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_kthvalue, Kthvalue)
TXLA_LOWER(aten_mode, Mode)
TXLA_LOWER(aten_median, MedianAll<Statistic::kMedian>)
TXLA_LOWER(aten_nanmedian, MedianAll<Statistic::kNanMedian>)
TXLA_LOWER(aten_median_dim, MedianDim<Statistic::kMedian>)
TXLA_LOWER(aten_nanmedian_dim, MedianDim<Statistic::kNanMedian>)
TXLA_LOWER(aten_searchsorted_Tensor, Searchsorted)
TXLA_LOWER(aten_searchsorted_Scalar, Searchsorted)
TXLA_LOWER(aten_bucketize_Tensor, Bucketize)
TXLA_LOWER(aten_bucketize_Scalar, Bucketize)

}  // namespace txla::lower
