// Lowering of indexing: index_select, embedding, gather, take, advanced indexing (any number of
// integer index tensors, adjacent or not), and the scatters (scatter, scatter_add, index_add,
// index_copy, index_fill, put, index_put, embedding backward). Indices come from data: the
// generated code clamps them into range (memory stays safe), where eager raises for an
// out-of-range index.
#include <ATen/ATen.h>

#include <algorithm>

#include "ir/op_table.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

constexpr int64_t kSelectMode = 0, kAlongMode = 1;

Instruction* Indices(LoweringContext& c, Instruction* index) {
  if (hlo::IsFloating(index->shape().type) || index->shape().type == ElementType::kPred)
    throw NotLowered("indexing with a non-integer index");
  return c.Convert(index, ElementType::kS64);
}

Instruction* Flat(LoweringContext& c, Instruction* x) { return c.Reshape(x, {x->shape().element_count()}); }

// Negative indices count from the end (advanced indexing's rule).
Instruction* WrapNegative(LoweringContext& c, Instruction* index, int64_t size) {
  Instruction* negative = c.Elementwise(Opcode::kCompare, {index, c.Constant(0, ElementType::kS64)}, ElementType::kS64,
                                        Comparison::kLt);
  Instruction* wrapped = c.Elementwise(Opcode::kAdd, {index, c.Constant(static_cast<double>(size), ElementType::kS64)},
                                       ElementType::kS64);
  return c.Elementwise(Opcode::kSelect, {negative, wrapped, index}, ElementType::kS64);
}

Instruction* Gather(LoweringContext& c, Instruction* x, Instruction* index, int64_t dim, int64_t mode,
                    std::vector<int64_t> out_dims) {
  hlo::Attributes a;
  a.dimensions = {dim};
  a.index = mode;
  return c.Add(Opcode::kGather, hlo::Shape::Array(x->shape().type, out_dims), {x, index}, a);
}

// A 0-dim tensor indexes as a one-element vector, as in ATen.
Instruction* AsVector(LoweringContext& c, Instruction* x) { return x->shape().rank() == 0 ? c.Reshape(x, {1}) : x; }

// Rows `index` (1-D) of dimension `dim`.
Instruction* SelectRows(LoweringContext& c, Instruction* x, Instruction* index, int64_t dim) {
  return c.TakeRows(x, index, dim);
}

Outs IndexSelect(LoweringContext& c, const ir::Node& n) {  // (self, dim, index)
  Instruction* x = AsVector(c, c.Operand(n, 0));
  int64_t dim = WrapDim(c.ConstArg(n, 1).toInt(), x->shape().rank());
  return {c.Reshape(SelectRows(c, x, Flat(c, Indices(c, c.Operand(n, 2))), dim), n.shape().sizes)};
}

Outs Embedding(LoweringContext& c, const ir::Node& n) {  // (weight, indices, padding_idx, scale_grad, sparse)
  Instruction* w = c.Operand(n, 0);
  if (w->shape().rank() != 2) throw NotLowered("embedding with a weight that is not 2-D");
  return {c.Reshape(SelectRows(c, w, Flat(c, Indices(c, c.Operand(n, 1))), 0), n.shape().sizes)};
}

// An indexing op's (self, dim, index, ...) as the lowering reads them.
struct Indexed {
  Instruction* self;
  Instruction* index;
  int64_t dim;
};

// gather and scatter's: a 0-dim self or index indexes as a one-element vector, as ATen's kernels
// treat it (cummax's gradient scatters into a 0-dim tensor); the results take the op's own shape
// back.
Indexed AlongOperands(LoweringContext& c, const ir::Node& n, const char* what) {
  Instruction* self = AsVector(c, c.Operand(n, 0));
  Instruction* index = AsVector(c, Indices(c, c.Operand(n, 2)));
  if (index->shape().rank() != self->shape().rank())
    throw NotLowered(std::string(what) + " with an index of another rank than the tensor");
  return {self, index, WrapDim(c.ConstArg(n, 1).toInt(), self->shape().rank())};
}

Outs GatherOp(LoweringContext& c, const ir::Node& n) {  // gather(self, dim, index, sparse_grad)
  Indexed a = AlongOperands(c, n, "gather");
  return {c.Reshape(Gather(c, a.self, a.index, a.dim, kAlongMode, a.index->shape().dims), n.shape().sizes)};
}

// An advanced index (x[i], x[:, i, j], x[i, :, j]) as rows of one dimension: the indexed
// dimensions moved together and merged into one, and each element of the broadcast index
// tensors turned into a row of it. With the indexed dimensions adjacent, they stay in place;
// otherwise they move to the front, where ATen puts the broadcast dimensions of the result.
struct AdvancedIndex {
  std::vector<int64_t> perm;     // of self's dimensions (identity when adjacent)
  std::vector<int64_t> permuted;  // self's dimensions after perm
  int64_t dim = 0;               // where the indexed block starts in `permuted`
  int64_t count = 0;             // how many dimensions it spans
  std::vector<int64_t> broadcast;  // the index tensors' broadcast shape
  Instruction* rows = nullptr;   // 1-D s64 rows of the merged dimension; -1 where out of range

  // `permuted` with the block merged into one dimension of `merged` elements.
  std::vector<int64_t> Merged(int64_t merged) const {
    std::vector<int64_t> dims(permuted.begin(), permuted.begin() + dim);
    dims.push_back(merged);
    dims.insert(dims.end(), permuted.begin() + dim + count, permuted.end());
    return dims;
  }
};

AdvancedIndex ReadAdvancedIndex(LoweringContext& c, const ir::Node& n, size_t arg, const std::vector<int64_t>& self_dims) {
  const ir::Arg& a = n.args().at(arg);
  if (a.kind != ir::Arg::Kind::kOptionalTensorList && a.kind != ir::Arg::Kind::kTensorList)
    throw std::invalid_argument("expected a list of index tensors");
  std::vector<Instruction*> indices;
  std::vector<int64_t> positions;
  uint32_t next = a.operand;
  const uint32_t listed = static_cast<uint32_t>(a.kind == ir::Arg::Kind::kOptionalTensorList ? a.present.size() : a.count);
  for (uint32_t k = 0; k < listed; ++k) {
    if (a.kind == ir::Arg::Kind::kOptionalTensorList && !a.present[k]) continue;
    Instruction* index = c.Get(n.operands().at(next++));
    if (index->shape().type == ElementType::kPred) throw NotLowered("boolean-mask indexing (a data-dependent shape)");
    indices.push_back(Indices(c, index));
    positions.push_back(k);
  }
  if (indices.empty()) throw NotLowered("advanced indexing without an index tensor");
  const int64_t rank = static_cast<int64_t>(self_dims.size());
  AdvancedIndex r;
  bool adjacent = true;
  for (size_t j = 1; j < positions.size(); ++j) adjacent &= positions[j] == positions[j - 1] + 1;
  r.count = static_cast<int64_t>(positions.size());
  r.dim = adjacent ? positions[0] : 0;
  if (adjacent) {
    for (int64_t d = 0; d < rank; ++d) r.perm.push_back(d);
  } else {
    r.perm = positions;
    for (int64_t d = 0; d < rank; ++d)
      if (std::find(positions.begin(), positions.end(), d) == positions.end()) r.perm.push_back(d);
  }
  for (int64_t d : r.perm) r.permuted.push_back(self_dims.at(d));
  for (Instruction* index : indices) r.broadcast = at::infer_size(r.broadcast, index->shape().dims);
  // row = sum of each index (negatives from the end) times the merged dimension's stride for it.
  // With several indices, one out of its own range makes the row -1, which the gather or scatter
  // reports as eager does (the merged row could otherwise land inside the tensor); a single one
  // is checked there as it is.
  const bool several = indices.size() > 1;
  Instruction* row = nullptr;
  Instruction* in_range = nullptr;
  int64_t stride = 1;
  for (size_t j = indices.size(); j-- > 0;) {
    const int64_t size = self_dims.at(positions[j]);
    Instruction* index = WrapNegative(c, Flat(c, c.BroadcastTo(indices[j], r.broadcast)), size);
    if (several) {
      auto compare = [&](Comparison how, double bound) {
        return c.Elementwise(Opcode::kCompare, {index, c.Constant(bound, ElementType::kS64)}, ElementType::kS64, how);
      };
      Instruction* ok = c.Elementwise(Opcode::kAnd, {compare(Comparison::kGe, 0), compare(Comparison::kLt, size)},
                                      ElementType::kPred);
      in_range = in_range ? c.Elementwise(Opcode::kAnd, {in_range, ok}, ElementType::kPred) : ok;
    }
    Instruction* term = stride == 1 ? index
                                    : c.Elementwise(Opcode::kMultiply,
                                                    {index, c.Constant(static_cast<double>(stride), ElementType::kS64)},
                                                    ElementType::kS64);
    row = row ? c.Elementwise(Opcode::kAdd, {row, term}, ElementType::kS64) : term;
    stride *= size;
  }
  r.rows = several ? c.Elementwise(Opcode::kSelect, {in_range, row, c.Constant(-1, ElementType::kS64)}, ElementType::kS64)
                   : row;
  return r;
}

// self transposed as the index asks and its indexed block merged into one dimension.
Instruction* MergedSelf(LoweringContext& c, Instruction* self, const AdvancedIndex& r) {
  int64_t merged = 1;
  for (int64_t k = 0; k < r.count; ++k) merged *= r.permuted[r.dim + k];
  return c.Reshape(c.Transpose(self, r.perm), r.Merged(merged));
}

Outs IndexTensor(LoweringContext& c, const ir::Node& n) {  // index.Tensor(self, indices)
  Instruction* x = c.Operand(n, 0);
  AdvancedIndex r = ReadAdvancedIndex(c, n, 1, x->shape().dims);
  return {c.Reshape(SelectRows(c, MergedSelf(c, x, r), r.rows, r.dim), n.shape().sizes)};
}

Instruction* Scatter(LoweringContext& c, Instruction* self, Instruction* index, Instruction* updates, int64_t dim,
                     int64_t mode, hlo::Computation* combiner) {
  hlo::Attributes a;
  a.dimensions = {dim};
  a.index = mode;
  a.called = {combiner};
  ElementType t = self->shape().type;
  return c.Add(Opcode::kScatter, self->shape(), {self, index, c.Convert(updates, t)}, a);
}

// torch.scatter family: the updates are the part of src the index covers.
Instruction* Covered(LoweringContext& c, Instruction* src, const std::vector<int64_t>& dims) {
  if (src->shape().dims == dims) return src;
  hlo::Attributes a;
  for (size_t d = 0; d < dims.size(); ++d) a.slice.push_back({0, dims[d], 1});
  return c.Add(Opcode::kSlice, hlo::Shape::Array(src->shape().type, dims), {src}, a);
}

template <bool kAdd>
Outs ScatterSrc(LoweringContext& c, const ir::Node& n) {  // scatter.src / scatter_add (self, dim, index, src)
  Indexed a = AlongOperands(c, n, "scatter");
  ElementType t = a.self->shape().type;
  Instruction* updates = Covered(c, AsVector(c, c.Operand(n, 3)), a.index->shape().dims);
  return {c.Reshape(Scatter(c, a.self, a.index, updates, a.dim, kAlongMode,
                            kAdd ? c.ReducerComputation(RK::kSum, t) : c.AssignComputation(t)),
                    n.shape().sizes)};
}

Outs ScatterValue(LoweringContext& c, const ir::Node& n) {  // scatter.value(self, dim, index, value)
  Indexed a = AlongOperands(c, n, "scatter");
  ElementType t = a.self->shape().type;
  Instruction* updates = c.BroadcastTo(c.ScalarArg(n, 3, t), a.index->shape().dims);
  return {c.Reshape(Scatter(c, a.self, a.index, updates, a.dim, kAlongMode, c.AssignComputation(t)), n.shape().sizes)};
}

Outs ScatterReduce(LoweringContext& c, const ir::Node& n) {  // (self, dim, index, src, reduce, include_self)
  Indexed a = AlongOperands(c, n, "scatter_reduce");
  std::string reduce = c.ConstArg(n, 4).toStringRef();
  if (!c.ConstArg(n, 5).toBool()) throw NotLowered("scatter_reduce without include_self");
  RK kind = reduce == "sum" ? RK::kSum : reduce == "prod" ? RK::kProd : reduce == "amax" ? RK::kMax
            : reduce == "amin" ? RK::kMin : throw NotLowered("scatter_reduce '" + reduce + "'");
  ElementType t = a.self->shape().type;
  return {c.Reshape(Scatter(c, a.self, a.index, Covered(c, AsVector(c, c.Operand(n, 3)), a.index->shape().dims), a.dim,
                            kAlongMode, c.ReducerComputation(kind, t)),
                    n.shape().sizes)};
}

// The index family's: rows `index` (flattened) of dimension `dim`; a 0-dim self is a one-element
// vector, as in ATen.
Indexed RowsOperands(LoweringContext& c, const ir::Node& n) {
  Instruction* self = AsVector(c, c.Operand(n, 0));
  return {self, Flat(c, Indices(c, c.Operand(n, 2))), WrapDim(c.ConstArg(n, 1).toInt(), self->shape().rank())};
}

Outs IndexAdd(LoweringContext& c, const ir::Node& n) {  // (self, dim, index, source, alpha)
  Indexed r = RowsOperands(c, n);
  ElementType t = r.self->shape().type;
  Instruction* source = c.Elementwise(Opcode::kMultiply, {AsVector(c, c.Operand(n, 3)), c.ScalarArg(n, 4, t)}, t);
  return {c.Reshape(Scatter(c, r.self, r.index, source, r.dim, kSelectMode, c.ReducerComputation(RK::kSum, t)),
                    n.shape().sizes)};
}

// index_copy(self, dim, index, source): rows replaced (an index outside [0, size) is an error,
// as in eager, where index_fill counts negatives from the end).
Outs IndexCopy(LoweringContext& c, const ir::Node& n) {
  Indexed r = RowsOperands(c, n);
  ElementType t = r.self->shape().type;
  Instruction* source = c.Convert(AsVector(c, c.Operand(n, 3)), t);
  return {c.Reshape(Scatter(c, r.self, r.index, source, r.dim, kSelectMode, c.AssignComputation(t)), n.shape().sizes)};
}

// index_fill.int_Scalar / int_Tensor(self, dim, index, value): rows set to one value.
Outs IndexFill(LoweringContext& c, const ir::Node& n) {
  Indexed r = RowsOperands(c, n);
  ElementType t = r.self->shape().type;
  Instruction* rows = WrapNegative(c, r.index, r.self->shape().dims[r.dim]);
  std::vector<int64_t> dims = r.self->shape().dims;
  dims[r.dim] = rows->shape().dims[0];
  Instruction* value = c.BroadcastTo(c.Convert(c.TensorOrScalar(n, 3, t), t), dims);
  return {c.Reshape(Scatter(c, r.self, rows, value, r.dim, kSelectMode, c.AssignComputation(t)), n.shape().sizes)};
}

// take(self, index): the flattened tensor read at `index` (negatives from the end), shaped like it.
Outs Take(LoweringContext& c, const ir::Node& n) {
  Instruction* flat = Flat(c, c.Operand(n, 0));
  Instruction* index = Flat(c, Indices(c, c.Operand(n, 1)));
  Instruction* at = WrapNegative(c, index, flat->shape().dims[0]);
  return {c.Reshape(SelectRows(c, flat, at, 0), n.shape().sizes)};
}

// put(self, index, source, accumulate): the flattened tensor written (or added to) at `index`
// (negatives from the end), as take reads it.
Outs Put(LoweringContext& c, const ir::Node& n) {
  Instruction* self = c.Operand(n, 0);
  ElementType t = self->shape().type;
  Instruction* flat = Flat(c, self);
  Instruction* at = WrapNegative(c, Flat(c, Indices(c, c.Operand(n, 1))), flat->shape().dims[0]);
  Instruction* source = Flat(c, c.Convert(c.Operand(n, 2), t));
  bool accumulate = c.ConstArg(n, 3).toBool();
  return {c.Reshape(Scatter(c, flat, at, source, 0, kSelectMode,
                            accumulate ? c.ReducerComputation(RK::kSum, t) : c.AssignComputation(t)),
                    n.shape().sizes)};
}

Outs IndexPut(LoweringContext& c, const ir::Node& n) {  // index_put(self, indices, values, accumulate)
  Instruction* self = c.Operand(n, 0);
  ElementType t = self->shape().type;
  AdvancedIndex r = ReadAdvancedIndex(c, n, 1, self->shape().dims);
  // The values broadcast to what self[indices] would be, with its broadcast block as one row
  // dimension.
  std::vector<int64_t> indexed(r.permuted.begin(), r.permuted.begin() + r.dim);
  indexed.insert(indexed.end(), r.broadcast.begin(), r.broadcast.end());
  indexed.insert(indexed.end(), r.permuted.begin() + r.dim + r.count, r.permuted.end());
  Instruction* values = c.Reshape(c.BroadcastTo(c.Convert(c.Operand(n, 2), t), indexed),
                                  r.Merged(r.rows->shape().dims[0]));
  bool accumulate = c.ConstArg(n, 3).toBool();
  Instruction* merged = MergedSelf(c, self, r);
  Instruction* updated = Scatter(c, merged, r.rows, values, r.dim, kSelectMode,
                                 accumulate ? c.ReducerComputation(RK::kSum, t) : c.AssignComputation(t));
  std::vector<int64_t> inverse(r.perm.size());
  for (size_t k = 0; k < r.perm.size(); ++k) inverse[r.perm[k]] = static_cast<int64_t>(k);
  return {c.Transpose(c.Reshape(updated, r.permuted), inverse)};
}

// embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
Outs EmbeddingDenseBackward(LoweringContext& c, const ir::Node& n) {
  if (c.ConstArg(n, 4).toBool()) throw NotLowered("embedding backward with scale_grad_by_freq");
  Instruction* g = c.Operand(n, 0);
  ElementType t = g->shape().type;
  Instruction* index = Flat(c, Indices(c, c.Operand(n, 1)));
  int64_t rows = index->shape().dims[0];
  int64_t width = g->shape().dims.back();
  g = c.Reshape(g, {rows, width});
  int64_t padding_idx = c.ConstArg(n, 3).toInt();
  if (padding_idx >= 0) {  // the padding row gets no gradient
    Instruction* skip = c.Reshape(c.Elementwise(Opcode::kCompare, {index, c.Constant(static_cast<double>(padding_idx), ElementType::kS64)},
                                                ElementType::kS64, Comparison::kEq), {rows, 1});
    g = c.Elementwise(Opcode::kSelect, {skip, c.Constant(0, t), g}, t);
  }
  Instruction* zeros = c.BroadcastTo(c.Constant(0, t), n.shape().sizes);
  return {Scatter(c, zeros, index, g, 0, kSelectMode, c.ReducerComputation(RK::kSum, t))};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_index_select, IndexSelect)
TXLA_LOWER(aten_embedding, Embedding)
TXLA_LOWER(aten_gather, GatherOp)
TXLA_LOWER(aten_index_Tensor, IndexTensor)
TXLA_LOWER(aten_scatter_src, ScatterSrc<false>)
TXLA_LOWER(aten_scatter_add, ScatterSrc<true>)
TXLA_LOWER(aten_scatter_value, ScatterValue)
TXLA_LOWER(aten_scatter_reduce_two, ScatterReduce)
TXLA_LOWER(aten_index_add, IndexAdd)
TXLA_LOWER(aten_index_copy, IndexCopy)
TXLA_LOWER(aten_index_fill_int_Scalar, IndexFill)
TXLA_LOWER(aten_index_fill_int_Tensor, IndexFill)
TXLA_LOWER(aten_take, Take)
TXLA_LOWER(aten_put, Put)
TXLA_LOWER(aten_index_put, IndexPut)
TXLA_LOWER(aten_embedding_dense_backward, EmbeddingDenseBackward)

}  // namespace txla::lower
