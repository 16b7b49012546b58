// Lowering of slicing, selecting, flipping, padding, triangular masks and joins.
#include <ATen/ATen.h>

#include <algorithm>

#include "ir/op_table.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

int64_t ShapeElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Outs SliceCopy(LoweringContext& c, const ir::Node& n) {  // (self, dim, start?, end?, step)
  Instruction* x = c.Operand(n, 0);
  int64_t rank = x->shape().rank();
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), rank);
  int64_t size = x->shape().dims[dim];
  auto bound = [&](size_t arg, int64_t fallback) {
    if (c.IsNone(n, arg)) return fallback;
    int64_t v = c.ConstArg(n, arg).toInt();
    if (v < 0) v += size;
    return std::clamp<int64_t>(v, 0, size);
  };
  int64_t start = bound(2, 0), end = std::max(start, bound(3, size));
  return {c.Slice(x, dim, start, end, c.ConstArg(n, 4).toInt())};
}

Outs SelectCopy(LoweringContext& c, const ir::Node& n) {  // (self, dim, index)
  Instruction* x = c.Operand(n, 0);
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  int64_t index = c.ConstArg(n, 2).toInt();
  if (index < 0) index += x->shape().dims[dim];
  return {c.Reshape(c.Slice(x, dim, index, index + 1, 1), n.shape().sizes)};
}

Outs Flip(LoweringContext& c, const ir::Node& n) {  // (self, dims)
  Instruction* x = c.Operand(n, 0);
  hlo::Attributes a;
  for (int64_t d : IntList(c.ConstArg(n, 1))) a.dimensions.push_back(WrapDim(d, x->shape().rank()));
  if (a.dimensions.empty() || x->shape().rank() == 0) return {x};
  return {c.Add(Opcode::kReverse, x->shape(), {x}, a)};
}

// rot90(self, k, dims): ATen's composite (a flip, then transpose_ of the result, which below
// functionalization fell back through as_strided_), as one reverse and one transpose.
Outs Rot90(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  std::vector<int64_t> dims = IntList(c.ConstArg(n, 2));
  const int64_t rank = x->shape().rank();
  if (dims.size() != 2 || rank < 2) throw NotLowered("rot90 without two dimensions");  // eager raises
  int64_t d0 = WrapDim(dims[0], rank), d1 = WrapDim(dims[1], rank);
  int64_t k = ((c.ConstArg(n, 1).toInt() % 4) + 4) % 4;
  auto reverse = [&](Instruction* v, std::vector<int64_t> along) {
    hlo::Attributes a;
    a.dimensions = std::move(along);
    return c.Add(Opcode::kReverse, v->shape(), {v}, a);
  };
  auto swap = [&](Instruction* v) {
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) perm[d] = d;
    std::swap(perm[d0], perm[d1]);
    return c.Transpose(v, perm);
  };
  if (k == 0) return {x};
  if (k == 2) return {reverse(x, {d0, d1})};
  return {swap(reverse(x, {k == 1 ? d1 : d0}))};
}

Outs ConstantPadNd(LoweringContext& c, const ir::Node& n) {  // (self, pad, value)
  Instruction* x = c.Operand(n, 0);
  auto pad = IntList(c.ConstArg(n, 1));
  int64_t rank = x->shape().rank();
  // A negative amount crops that side: a slice first, then the pad of what is positive.
  hlo::Attributes a;
  a.padding.resize(rank);
  for (size_t k = 0; k + 1 < pad.size(); k += 2) {
    int64_t d = rank - 1 - static_cast<int64_t>(k / 2);
    int64_t lo = pad[k], hi = pad[k + 1], size = x->shape().dims[d];
    int64_t start = lo < 0 ? -lo : 0, limit = size + (hi < 0 ? hi : 0);
    if (limit < start) throw NotLowered("constant_pad_nd cropping more than the dimension holds");
    if (start != 0 || limit != size) x = c.Slice(x, d, start, limit);
    a.padding[d] = {std::max<int64_t>(lo, 0), std::max<int64_t>(hi, 0), 0};
  }
  ElementType t = x->shape().type;
  std::vector<int64_t> out = x->shape().dims;
  for (int64_t d = 0; d < rank; ++d) out[d] += a.padding[d].lo + a.padding[d].hi;
  return {c.Add(Opcode::kPad, hlo::Shape::Array(t, out), {x, c.ScalarArg(n, 2, t)}, a)};
}

// tril / triu(self, diagonal): keep where (column - row) <= diagonal (tril) or >= (triu).
template <Comparison kKeep>
Outs Triangle(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  const auto& dims = x->shape().dims;
  int64_t r = x->shape().rank();
  hlo::Shape s64 = hlo::Shape::Array(ElementType::kS64, dims);
  Instruction* offset = c.Elementwise(Opcode::kSubtract, {c.Iota(s64, r - 1), c.Iota(s64, r - 2)}, ElementType::kS64);
  Instruction* keep = c.Elementwise(Opcode::kCompare, {offset, c.Constant(c.ConstArg(n, 1).toInt(), ElementType::kS64)},
                                    ElementType::kS64, kKeep);
  ElementType t = x->shape().type;
  return {c.Elementwise(Opcode::kSelect, {keep, x, c.Constant(0, t)}, t)};
}

std::vector<Instruction*> TensorList(LoweringContext& c, const ir::Node& n, size_t arg) {
  const ir::Arg& a = n.args().at(arg);
  if (a.kind != ir::Arg::Kind::kTensorList) throw std::invalid_argument("expected a tensor list");
  std::vector<Instruction*> out;
  for (uint32_t k = 0; k < a.count; ++k) out.push_back(c.Get(n.operands().at(a.operand + k)));
  return out;
}

Instruction* Concatenate(LoweringContext& c, std::vector<Instruction*> parts, int64_t dim, ElementType t) {
  std::vector<int64_t> out = parts.at(0)->shape().dims;
  out[dim] = 0;
  std::vector<Instruction*> kept;
  for (Instruction*& p : parts) {
    p = c.Convert(p, t);
    out[dim] += p->shape().dims[dim];
    if (p->shape().dims[dim] > 0) kept.push_back(p);
  }
  if (kept.empty()) return c.BroadcastTo(c.Constant(0, t), out);
  if (kept.size() == 1) return kept[0];
  hlo::Attributes a;
  a.dimensions = {dim};
  return c.Add(Opcode::kConcatenate, hlo::Shape::Array(t, out), kept, a);
}

Outs Cat(LoweringContext& c, const ir::Node& n) {  // (tensors, dim)
  auto parts = TensorList(c, n, 0);
  const auto& out = n.shape().sizes;
  // Legacy: 1-D empty tensors are skipped whatever the other shapes.
  std::vector<Instruction*> kept;
  for (Instruction* p : parts)
    if (!(p->shape().rank() == 1 && p->shape().dims[0] == 0)) kept.push_back(p);
  if (kept.empty()) return {c.BroadcastTo(c.Constant(0, OutType(n)), out)};
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), static_cast<int64_t>(out.size()));
  return {Concatenate(c, kept, dim, OutType(n))};
}

Outs Stack(LoweringContext& c, const ir::Node& n) {  // (tensors, dim)
  auto parts = TensorList(c, n, 0);
  const auto& out = n.shape().sizes;
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), static_cast<int64_t>(out.size()));
  for (Instruction*& p : parts) {
    std::vector<int64_t> dims = p->shape().dims;
    dims.insert(dims.begin() + dim, 1);
    p = c.Reshape(p, dims);
  }
  return {Concatenate(c, parts, dim, OutType(n))};
}

// A slice's start and limit as ATen normalizes them (negative from the end, clamped).
std::pair<int64_t, int64_t> SliceBounds(LoweringContext& c, const ir::Node& n, size_t start_arg, int64_t size) {
  auto bound = [&](size_t arg, int64_t fallback) {
    if (c.IsNone(n, arg)) return fallback;
    int64_t v = c.ConstArg(n, arg).toInt();
    if (v < 0) v += size;
    return std::clamp<int64_t>(v, 0, size);
  };
  int64_t start = bound(start_arg, 0);
  return {start, std::max(start, bound(start_arg + 1, size))};
}

// Places `x` at positions start, start + step, ... of dimension `dim` (length `size`), `fill`
// elsewhere: the adjoint of a slice.
Instruction* Spread(LoweringContext& c, Instruction* x, int64_t dim, int64_t start, int64_t step, int64_t size,
                    Instruction* fill) {
  hlo::Attributes a;
  a.padding.resize(x->shape().rank());
  int64_t count = x->shape().dims[dim];
  int64_t used = count == 0 ? 0 : (count - 1) * step + 1;
  if (count == 0) return c.BroadcastTo(fill, [&] { auto d = x->shape().dims; d[dim] = size; return d; }());
  a.padding[dim] = {start, size - start - used, step - 1};
  std::vector<int64_t> dims = x->shape().dims;
  dims[dim] = size;
  return c.Add(Opcode::kPad, hlo::Shape::Array(x->shape().type, dims), {x, fill}, a);
}

Outs SliceBackward(LoweringContext& c, const ir::Node& n) {  // (grad, input_sizes, dim, start, end, step)
  Instruction* g = c.Operand(n, 0);
  auto sizes = IntList(c.ConstArg(n, 1));
  int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), static_cast<int64_t>(sizes.size()));
  auto [start, end] = SliceBounds(c, n, 3, sizes[dim]);
  (void)end;
  return {Spread(c, g, dim, start, c.ConstArg(n, 5).toInt(), sizes[dim], c.Constant(0, g->shape().type))};
}

Instruction* WithDim(LoweringContext& c, Instruction* x, int64_t dim) {
  std::vector<int64_t> dims = x->shape().dims;
  dims.insert(dims.begin() + dim, 1);
  return c.Reshape(x, dims);
}

Outs SelectBackward(LoweringContext& c, const ir::Node& n) {  // (grad, input_sizes, dim, index)
  Instruction* g = c.Operand(n, 0);
  auto sizes = IntList(c.ConstArg(n, 1));
  int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), static_cast<int64_t>(sizes.size()));
  int64_t index = c.ConstArg(n, 3).toInt();
  if (index < 0) index += sizes[dim];
  return {Spread(c, WithDim(c, g, dim), dim, index, 1, sizes[dim], c.Constant(0, g->shape().type))};
}

// self with `src` written over the spread positions.
Instruction* Overwrite(LoweringContext& c, Instruction* self, Instruction* src, int64_t dim, int64_t start, int64_t step) {
  ElementType t = self->shape().type;
  int64_t size = self->shape().dims[dim];
  Instruction* values = Spread(c, c.Convert(src, t), dim, start, step, size, c.Constant(0, t));
  Instruction* ones = c.BroadcastTo(c.Constant(1, ElementType::kPred), src->shape().dims);
  Instruction* mask = Spread(c, ones, dim, start, step, size, c.Constant(0, ElementType::kPred));
  return c.Elementwise(Opcode::kSelect, {mask, values, self}, t);
}

Outs SliceScatter(LoweringContext& c, const ir::Node& n) {  // (self, src, dim, start, end, step)
  Instruction* self = c.Operand(n, 0);
  int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), self->shape().rank());
  auto [start, end] = SliceBounds(c, n, 3, self->shape().dims[dim]);
  (void)end;
  return {Overwrite(c, self, c.Operand(n, 1), dim, start, c.ConstArg(n, 5).toInt())};
}

Outs SelectScatter(LoweringContext& c, const ir::Node& n) {  // (self, src, dim, index)
  Instruction* self = c.Operand(n, 0);
  int64_t dim = WrapDim(c.ConstArg(n, 2).toInt(), self->shape().rank());
  int64_t index = c.ConstArg(n, 3).toInt();
  if (index < 0) index += self->shape().dims[dim];
  return {Overwrite(c, self, WithDim(c, c.Operand(n, 1), dim), dim, index, 1)};
}

// split / split_with_sizes / unbind: consecutive slices, one per output.
Outs Pieces(LoweringContext& c, const ir::Node& n, int64_t dim, bool squeeze) {
  Instruction* x = c.Operand(n, 0);
  Outs outs;
  int64_t offset = 0;
  for (const ir::Shape& s : n.shapes()) {
    int64_t len = squeeze ? 1 : s.sizes[dim];
    outs.push_back(c.Reshape(c.Slice(x, dim, offset, offset + len, 1), s.sizes));
    offset += len;
  }
  return outs;
}

Outs SplitCopy(LoweringContext& c, const ir::Node& n) {  // split_copy.Tensor / split_with_sizes_copy (self, _, dim)
  int64_t rank = c.Operand(n, 0)->shape().rank();
  return Pieces(c, n, WrapDim(c.ConstArg(n, 2).toInt(), rank), false);
}

Outs UnbindCopy(LoweringContext& c, const ir::Node& n) {  // (self, dim)
  int64_t rank = c.Operand(n, 0)->shape().rank();
  return Pieces(c, n, WrapDim(c.ConstArg(n, 1).toInt(), rank), true);
}

Outs Repeat(LoweringContext& c, const ir::Node& n) {  // (self, repeats)
  Instruction* x = c.Operand(n, 0);
  auto repeats = IntList(c.ConstArg(n, 1));
  std::vector<int64_t> dims(repeats.size() - x->shape().rank(), 1);
  for (int64_t d : x->shape().dims) dims.push_back(d);
  x = c.Reshape(x, dims);
  // [d0, d1] -> broadcast to [r0, d0, r1, d1] -> reshape to [r0 * d0, r1 * d1]
  hlo::Attributes a;
  std::vector<int64_t> wide;
  for (size_t k = 0; k < dims.size(); ++k) {
    wide.push_back(repeats[k]);
    wide.push_back(dims[k]);
    a.dimensions.push_back(static_cast<int64_t>(2 * k + 1));
  }
  Instruction* b = c.Add(Opcode::kBroadcast, hlo::Shape::Array(x->shape().type, wide), {x}, a);
  return {c.Reshape(b, n.shape().sizes)};
}

Outs Roll(LoweringContext& c, const ir::Node& n) {  // (self, shifts, dims)
  Instruction* x = c.Operand(n, 0);
  auto shifts = IntList(c.ConstArg(n, 1));
  auto dims = IntList(c.ConstArg(n, 2));
  std::vector<int64_t> shape = x->shape().dims;
  if (dims.empty()) {  // over the flattened tensor
    x = c.Reshape(x, {x->shape().element_count()});
    dims = {0};
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    int64_t dim = WrapDim(dims[k], x->shape().rank());
    int64_t size = x->shape().dims[dim];
    if (size == 0) continue;
    int64_t s = ((shifts.at(k) % size) + size) % size;
    if (s == 0) continue;
    x = Concatenate(c, {c.Slice(x, dim, size - s, size, 1), c.Slice(x, dim, 0, size - s, 1)}, dim, x->shape().type);
  }
  return {c.Reshape(x, shape)};
}

// Reads of x's row-major storage at offset + sum(i_k * stride_k) over an output of `sizes`:
// as_strided, diagonal and unfold are all this one gather.
Instruction* StridedPositions(LoweringContext& c, const std::vector<int64_t>& sizes,
                              const std::vector<int64_t>& strides, int64_t offset) {
  using E = ElementType;
  Instruction* pos = c.BroadcastTo(c.Constant(static_cast<double>(offset), E::kS64), sizes);
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (strides[k] == 0 || sizes[k] == 1) continue;
    hlo::Attributes a;
    a.index = static_cast<int64_t>(k);
    Instruction* iota = c.Add(Opcode::kIota, hlo::Shape::Array(E::kS64, sizes), {}, a);
    pos = c.Elementwise(Opcode::kAdd, {pos, c.Elementwise(Opcode::kMultiply, {iota, c.Constant(static_cast<double>(strides[k]), E::kS64)}, E::kS64)}, E::kS64);
  }
  return c.Reshape(pos, {ShapeElements(sizes)});
}

Instruction* StridedRead(LoweringContext& c, Instruction* x, const std::vector<int64_t>& sizes,
                         const std::vector<int64_t>& strides, int64_t offset) {
  Instruction* flat = c.Reshape(x, {x->shape().element_count()});
  if (x->shape().element_count() == 0 || ShapeElements(sizes) == 0)
    return c.BroadcastTo(c.Constant(0, x->shape().type), sizes);
  Instruction* pos = StridedPositions(c, sizes, strides, offset);
  hlo::Attributes a;
  a.dimensions = {0};
  a.index = 0;  // select rows of the flat storage
  Instruction* g = c.Add(Opcode::kGather, hlo::Shape::Array(x->shape().type, pos->shape().dims), {flat, pos}, a);
  return c.Reshape(g, sizes);
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) strides[k - 1] = strides[k] * dims[k];
  return strides;
}

Outs AsStridedCopy(LoweringContext& c, const ir::Node& n) {  // (self, size, stride, storage_offset?)
  int64_t offset = c.IsNone(n, 3) ? 0 : c.ConstArg(n, 3).toInt();
  return {StridedRead(c, c.Operand(n, 0), IntList(c.ConstArg(n, 1)), IntList(c.ConstArg(n, 2)), offset)};
}

// diagonal(self, offset, dim1, dim2): the other dims in order, then the diagonal.
struct DiagonalView {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

DiagonalView Diagonal(const std::vector<int64_t>& dims, int64_t diag_offset, int64_t d1, int64_t d2) {
  auto strides = RowMajorStrides(dims);
  DiagonalView v;
  for (size_t k = 0; k < dims.size(); ++k)
    if (static_cast<int64_t>(k) != d1 && static_cast<int64_t>(k) != d2) {
      v.sizes.push_back(dims[k]);
      v.strides.push_back(strides[k]);
    }
  int64_t len = diag_offset >= 0 ? std::max<int64_t>(std::min(dims[d1], dims[d2] - diag_offset), 0)
                                 : std::max<int64_t>(std::min(dims[d1] + diag_offset, dims[d2]), 0);
  if (len > 0) v.offset = diag_offset >= 0 ? diag_offset * strides[d2] : -diag_offset * strides[d1];
  v.sizes.push_back(len);
  v.strides.push_back(strides[d1] + strides[d2]);
  return v;
}

// The diagonal of a tensor shaped `dims` that the node's arguments (offset, dim1, dim2), from
// `first`, name.
DiagonalView DiagonalArgs(LoweringContext& c, const ir::Node& n, size_t first, const std::vector<int64_t>& dims) {
  int64_t r = static_cast<int64_t>(dims.size());
  return Diagonal(dims, c.ConstArg(n, first).toInt(), WrapDim(c.ConstArg(n, first + 1).toInt(), r),
                  WrapDim(c.ConstArg(n, first + 2).toInt(), r));
}

Outs DiagonalCopy(LoweringContext& c, const ir::Node& n) {  // (self, offset, dim1, dim2)
  Instruction* x = c.Operand(n, 0);
  DiagonalView v = DiagonalArgs(c, n, 1, x->shape().dims);
  return {StridedRead(c, x, v.sizes, v.strides, v.offset)};
}

// trace(self): the sum of a matrix's main diagonal, in the sum's type (integers sum as int64).
Outs Trace(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  DiagonalView v = Diagonal(x->shape().dims, 0, 0, 1);
  Instruction* diagonal = c.Convert(StridedRead(c, x, v.sizes, v.strides, v.offset), OutType(n));
  return {c.Reduce(diagonal, {0}, RK::kSum, false)};
}

// Writes src at the strided positions of a tensor shaped `dims` (zeros or `base` elsewhere).
Instruction* StridedWrite(LoweringContext& c, Instruction* base, Instruction* src, const std::vector<int64_t>& sizes,
                          const std::vector<int64_t>& strides, int64_t offset) {
  ElementType t = base->shape().type;
  if (ShapeElements(sizes) == 0) return base;
  Instruction* flat = c.Reshape(base, {base->shape().element_count()});
  Instruction* pos = StridedPositions(c, sizes, strides, offset);
  hlo::Attributes a;
  a.dimensions = {0};
  a.index = 0;
  a.called = {c.AssignComputation(t)};
  Instruction* s = c.Add(Opcode::kScatter, flat->shape(), {flat, pos, c.Reshape(c.Convert(src, t), {ShapeElements(sizes)})}, a);
  return c.Reshape(s, base->shape().dims);
}

// Zeros shaped `dims` with `src` on the diagonal the node's arguments from `first` name.
Instruction* OnZerosDiagonal(LoweringContext& c, const ir::Node& n, size_t first, Instruction* src,
                             const std::vector<int64_t>& dims) {
  DiagonalView v = DiagonalArgs(c, n, first, dims);
  Instruction* zeros = c.BroadcastTo(c.Constant(0, src->shape().type), dims);
  return StridedWrite(c, zeros, src, v.sizes, v.strides, v.offset);
}

Outs DiagonalBackward(LoweringContext& c, const ir::Node& n) {  // (grad, input_sizes, offset, dim1, dim2)
  return {OnZerosDiagonal(c, n, 2, c.Operand(n, 0), IntList(c.ConstArg(n, 1)))};
}

Outs DiagonalScatter(LoweringContext& c, const ir::Node& n) {  // (self, src, offset, dim1, dim2)
  Instruction* x = c.Operand(n, 0);
  DiagonalView v = DiagonalArgs(c, n, 2, x->shape().dims);
  return {StridedWrite(c, x, c.Operand(n, 1), v.sizes, v.strides, v.offset)};
}

// diag_embed(self, offset, dim1, dim2): zeros whose diagonal(offset, dim1, dim2) is self (what
// torch.diag of a vector reaches); its gradient is that diagonal of the gradient.
Outs DiagEmbed(LoweringContext& c, const ir::Node& n) {
  return {OnZerosDiagonal(c, n, 1, c.Operand(n, 0), n.shape().sizes)};
}

Outs AsStridedScatter(LoweringContext& c, const ir::Node& n) {  // (self, src, size, stride, storage_offset?)
  int64_t offset = c.IsNone(n, 4) ? 0 : c.ConstArg(n, 4).toInt();
  return {StridedWrite(c, c.Operand(n, 0), c.Operand(n, 1), IntList(c.ConstArg(n, 2)), IntList(c.ConstArg(n, 3)), offset)};
}

Outs UnfoldCopy(LoweringContext& c, const ir::Node& n) {  // (self, dimension, size, step)
  Instruction* x = c.Operand(n, 0);
  auto strides = RowMajorStrides(x->shape().dims);
  if (x->shape().rank() == 0) strides = {1};
  int64_t d = x->shape().rank() == 0 ? 0 : WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  std::vector<int64_t> out_strides = x->shape().rank() == 0 ? std::vector<int64_t>{} : strides;
  if (!out_strides.empty()) out_strides[d] *= c.ConstArg(n, 3).toInt();
  out_strides.push_back(x->shape().rank() == 0 ? 1 : strides[d]);
  return {StridedRead(c, x, n.shape().sizes, out_strides, 0)};
}

Outs ViewCopyDtype(LoweringContext& c, const ir::Node& n) {  // view_copy.dtype(self, dtype)
  Instruction* x = c.Operand(n, 0);
  ElementType to = OutType(n);
  if (runtime::ByteWidth(to) != runtime::ByteWidth(x->shape().type))
    throw NotLowered("a dtype view between types of different widths");
  if (to == x->shape().type) return {x};
  return {c.Add(Opcode::kBitcastConvert, hlo::Shape::Array(to, x->shape().dims), {x})};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_slice_copy_Tensor, SliceCopy)
TXLA_LOWER(aten_select_copy_int, SelectCopy)
TXLA_LOWER(aten_flip, Flip)
TXLA_LOWER(aten_rot90, Rot90)
TXLA_LOWER(aten_constant_pad_nd, ConstantPadNd)
TXLA_LOWER(aten_tril, Triangle<Comparison::kLe>)
TXLA_LOWER(aten_triu, Triangle<Comparison::kGe>)
TXLA_LOWER(aten_cat, Cat)
TXLA_LOWER(aten_stack, Stack)
TXLA_LOWER(aten_slice_backward, SliceBackward)
TXLA_LOWER(aten_select_backward, SelectBackward)
TXLA_LOWER(aten_slice_scatter, SliceScatter)
TXLA_LOWER(aten_select_scatter, SelectScatter)
TXLA_LOWER(aten_split_copy_Tensor, SplitCopy)
TXLA_LOWER(aten_split_with_sizes_copy, SplitCopy)
TXLA_LOWER(aten_unsafe_split_Tensor, SplitCopy)
TXLA_LOWER(aten_unsafe_split_with_sizes, SplitCopy)
TXLA_LOWER(aten_unbind_copy_int, UnbindCopy)
TXLA_LOWER(aten_repeat, Repeat)
TXLA_LOWER(aten_roll, Roll)
TXLA_LOWER(aten_as_strided_copy, AsStridedCopy)
TXLA_LOWER(aten_as_strided_scatter, AsStridedScatter)
TXLA_LOWER(aten_diagonal_copy, DiagonalCopy)
TXLA_LOWER(aten_diagonal_backward, DiagonalBackward)
TXLA_LOWER(aten_diagonal_scatter, DiagonalScatter)
TXLA_LOWER(aten_diag_embed, DiagEmbed)
TXLA_LOWER(aten_trace, Trace)
TXLA_LOWER(aten_unfold_copy, UnfoldCopy)
TXLA_LOWER(aten_view_copy_dtype, ViewCopyDtype)

}  // namespace txla::lower
