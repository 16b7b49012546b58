// Adaptive max pooling (2-D) and its gradient. Output cell i of a dimension of size n pooled
// to m covers [floor(i*n/m), ceil((i+1)*n/m)): windows of unequal sizes, read as the largest one
// with the positions past a window's end masked out.
#include <limits>

#include "lower/formula.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// The windows of one pooled dimension: `in` -> `out` cells, the largest window `most`.
struct Windows {
  int64_t in, out, most = 0;
  Windows(int64_t in_size, int64_t out_size) : in(in_size), out(out_size) {
    for (int64_t i = 0; i < out; ++i) most = std::max(most, End(i) - Start(i));
  }
  int64_t Start(int64_t i) const { return i * in / out; }
  int64_t End(int64_t i) const { return ((i + 1) * in + out - 1) / out; }
  // As HLO, from cell indices `cell` (s64): each window's start and length.
  Instruction* Start(LoweringContext& c, Instruction* cell) const {
    Builder b{c, ElementType::kS64};
    return b.div(b.mul(cell, b.k(static_cast<double>(in))), b.k(static_cast<double>(out)));
  }
  Instruction* Length(LoweringContext& c, Instruction* cell) const {
    Builder b{c, ElementType::kS64};
    Instruction* end = b.div(b.add(b.mul(b.add(cell, b.k(1)), b.k(static_cast<double>(in))), b.k(static_cast<double>(out - 1))),
                             b.k(static_cast<double>(out)));
    return b.sub(end, Start(c, cell));
  }
};

// adaptive_max_pool2d(self, output_size) -> (values, indices): indices are offsets in each
// image plane (h * W + w). ATen's rule: the first strict maximum, and a NaN once seen (the last
// one in the window).
Outs AdaptiveMaxPool2d(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  const ElementType t = x->shape().type;
  const std::vector<int64_t>& in_dims = x->shape().dims;
  const int64_t r = x->shape().rank();
  const std::vector<int64_t>& out_dims = n.shape(0).sizes;
  Builder i64{c, ElementType::kS64};
  if (n.shape(0).numel() == 0) return {c.BroadcastTo(c.Constant(0, t), out_dims), c.BroadcastTo(i64.k(0), out_dims)};
  const Windows rows(in_dims[r - 2], out_dims[r - 2]), cols(in_dims[r - 1], out_dims[r - 1]);
  const int64_t window = rows.most * cols.most;
  std::vector<int64_t> lead(in_dims.begin(), in_dims.end() - 2);
  auto with_lead = [&](std::vector<int64_t> tail) {
    std::vector<int64_t> dims = lead;
    dims.insert(dims.end(), tail.begin(), tail.end());
    return dims;
  };
  // Every (cell row, cell column, window row, window column): where it reads, and whether it is
  // inside its window.
  const hlo::Shape grid = hlo::Shape::Array(ElementType::kS64, {rows.out, cols.out, rows.most, cols.most});
  Instruction* oh = c.Iota(grid, 0);
  Instruction* ow = c.Iota(grid, 1);
  Instruction* kh = c.Iota(grid, 2);
  Instruction* kw = c.Iota(grid, 3);
  Instruction* height = rows.Length(c, oh);
  Instruction* width = cols.Length(c, ow);
  Instruction* inside = i64.all(i64.cmp(Comparison::kLt, kh, height), i64.cmp(Comparison::kLt, kw, width));
  auto last_in = [&](Instruction* k, Instruction* length) {  // masked positions read the window's last
    return c.Elementwise(Opcode::kMinimum, {k, i64.sub(length, i64.k(1))}, ElementType::kS64);
  };
  Instruction* row = i64.add(rows.Start(c, oh), last_in(kh, height));
  Instruction* col = i64.add(cols.Start(c, ow), last_in(kw, width));
  Instruction* at = c.Reshape(i64.add(i64.mul(row, i64.k(static_cast<double>(cols.in))), col), {rows.out * cols.out * window});
  Instruction* plane = c.Reshape(x, with_lead({rows.in * cols.in}));
  const std::vector<int64_t> cells = with_lead({rows.out, cols.out, window});
  Instruction* read = c.Reshape(c.TakeRows(plane, at, r - 2), cells);
  Builder b{c, t};
  Instruction* v = b.sel(c.BroadcastTo(c.Reshape(inside, {rows.out, cols.out, window}), cells), read,
                         b.k(-std::numeric_limits<double>::infinity()));
  const int64_t last = r;  // the window dimension of `cells`
  Instruction* k = c.Iota(hlo::Shape::Array(ElementType::kS64, cells), last);
  Instruction* is_nan = b.cmp(Comparison::kNe, v, v);
  Instruction* nan_at = c.Reduce(i64.sel(is_nan, k, i64.k(-1)), {last}, RK::kMax);
  Instruction* any_nan = i64.cmp(Comparison::kGe, nan_at, i64.k(0));
  Instruction* most = c.Reduce(v, {last}, RK::kMax);
  Instruction* first_at = c.Reduce(i64.sel(b.cmp(Comparison::kEq, v, c.BroadcastTo(c.Reshape(most, with_lead({rows.out, cols.out, 1})), cells)), k,
                                           i64.k(static_cast<double>(window))),
                                   {last}, RK::kMin);
  Instruction* pick = i64.sel(any_nan, nan_at, first_at);
  // The pick's offset in the plane, from its cell's window start.
  const hlo::Shape out_grid = hlo::Shape::Array(ElementType::kS64, out_dims);
  Instruction* window_width = i64.k(static_cast<double>(cols.most));
  Instruction* pick_row = i64.add(rows.Start(c, c.Iota(out_grid, r - 2)), i64.div(pick, window_width));
  Instruction* pick_col = i64.add(cols.Start(c, c.Iota(out_grid, r - 1)), i64(Opcode::kRemainder, pick, window_width));
  Instruction* index = i64.add(i64.mul(pick_row, i64.k(static_cast<double>(cols.in))), pick_col);
  Instruction* value = b.sel(any_nan, b.k(std::numeric_limits<double>::quiet_NaN()), most);
  return {c.Reshape(value, out_dims), c.Reshape(index, out_dims)};
}

// adaptive_max_pool2d_backward(grad_output, self, indices): each gradient added at its index.
Outs AdaptiveMaxPool2dBackward(LoweringContext& c, const ir::Node& n) {
  Instruction* dy = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  Instruction* index = c.Operand(n, 2);
  const ElementType t = OutType(n);
  const std::vector<int64_t>& in_dims = x->shape().dims;
  const int64_t r = x->shape().rank();
  std::vector<int64_t> plane(in_dims.begin(), in_dims.end() - 2), cells = plane;
  plane.push_back(in_dims[r - 2] * in_dims[r - 1]);
  cells.push_back(dy->shape().dims[r - 2] * dy->shape().dims[r - 1]);
  if (x->shape().element_count() == 0 || dy->shape().element_count() == 0) return {c.BroadcastTo(c.Constant(0, t), in_dims)};
  Instruction* sums = c.AddAlong(c.BroadcastTo(c.Constant(0, t), plane), c.Reshape(index, cells), c.Reshape(dy, cells), r - 2);
  return {c.Reshape(sums, in_dims)};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_adaptive_max_pool2d, AdaptiveMaxPool2d)
TXLA_LOWER(aten_adaptive_max_pool2d_backward, AdaptiveMaxPool2dBackward)

}  // namespace txla::lower
