// Lowering of slicing, selecting, flipping, padding, triangular masks and joins.
#include <ATen/ATen.h>

#include <algorithm>

#include "ir/op_table.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

using hlo::Comparison;
using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;
using Outs = std::vector<Instruction*>;

Instruction* Slice(LoweringContext& c, Instruction* x, int64_t dim, int64_t start, int64_t limit, int64_t stride) {
  hlo::Attributes a;
  const auto& dims = x->shape().dims;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d)
    a.slice.push_back(d == dim ? hlo::SliceDim{start, limit, stride} : hlo::SliceDim{0, dims[d], 1});
  std::vector<int64_t> out = dims;
  out[dim] = limit > start ? (limit - start + stride - 1) / stride : 0;
  return c.Add(Opcode::kSlice, hlo::Shape::Array(x->shape().type, out), {x}, a);
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
  return {Slice(c, x, dim, start, end, c.ConstArg(n, 4).toInt())};
}

Outs SelectCopy(LoweringContext& c, const ir::Node& n) {  // (self, dim, index)
  Instruction* x = c.Operand(n, 0);
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  int64_t index = c.ConstArg(n, 2).toInt();
  if (index < 0) index += x->shape().dims[dim];
  return {c.Reshape(Slice(c, x, dim, index, index + 1, 1), n.shape().sizes)};
}

Outs Flip(LoweringContext& c, const ir::Node& n) {  // (self, dims)
  Instruction* x = c.Operand(n, 0);
  hlo::Attributes a;
  for (int64_t d : IntList(c.ConstArg(n, 1))) a.dimensions.push_back(WrapDim(d, x->shape().rank()));
  if (a.dimensions.empty() || x->shape().rank() == 0) return {x};
  return {c.Add(Opcode::kReverse, x->shape(), {x}, a)};
}

Outs ConstantPadNd(LoweringContext& c, const ir::Node& n) {  // (self, pad, value)
  Instruction* x = c.Operand(n, 0);
  auto pad = IntList(c.ConstArg(n, 1));
  int64_t rank = x->shape().rank();
  hlo::Attributes a;
  a.padding.resize(rank);
  std::vector<int64_t> out = x->shape().dims;
  for (size_t k = 0; k + 1 < pad.size(); k += 2) {
    int64_t d = rank - 1 - static_cast<int64_t>(k / 2);
    if (pad[k] < 0 || pad[k + 1] < 0) throw NotLowered("constant_pad_nd with negative padding");
    a.padding[d] = {pad[k], pad[k + 1], 0};
    out[d] += pad[k] + pad[k + 1];
  }
  ElementType t = x->shape().type;
  return {c.Add(Opcode::kPad, hlo::Shape::Array(t, out), {x, c.ScalarArg(n, 2, t)}, a)};
}

// tril / triu(self, diagonal): keep where (column - row) <= diagonal (tril) or >= (triu).
template <Comparison kKeep>
Outs Triangle(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  const auto& dims = x->shape().dims;
  int64_t r = x->shape().rank();
  hlo::Attributes rows, cols;
  rows.index = r - 2, cols.index = r - 1;
  hlo::Shape s64 = hlo::Shape::Array(ElementType::kS64, dims);
  Instruction* offset = c.Elementwise(Opcode::kSubtract, {c.Add(Opcode::kIota, s64, {}, cols), c.Add(Opcode::kIota, s64, {}, rows)},
                                      ElementType::kS64);
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

}  // namespace

std::vector<LoweringEntry> ShapeLowerings() {
  return {
      {"aten::slice_copy.Tensor", SliceCopy}, {"aten::select_copy.int", SelectCopy},
      {"aten::flip", Flip}, {"aten::constant_pad_nd", ConstantPadNd},
      {"aten::tril", Triangle<Comparison::kLe>}, {"aten::triu", Triangle<Comparison::kGe>},
      {"aten::cat", Cat}, {"aten::stack", Stack},
  };
}

}  // namespace txla::lower
