// Fast shape rules for ops whose Meta kernel is slow or missing in PyTorch 1.13. Each returns
// nullopt for the cases it does not cover, and the Meta kernel decides those.
#pragma once

#include <utility>

#include "ir/op_table.h"

namespace txla::ir::rules {

// For the rule files (shape_rules*.cc).
using Shapes = std::optional<std::vector<Shape>>;
inline Shape ShapeOf(const at::Tensor& t) { return Shape(t.scalar_type(), t.sizes()); }
inline Shape Undefined() { return Shape(c10::ScalarType::Undefined, {}); }
// A shape that takes `sizes` over instead of copying it.
inline Shape Sized(c10::ScalarType dtype, std::vector<int64_t>&& sizes) {
  Shape shape;
  shape.dtype = dtype;
  shape.sizes = std::move(sizes);
  return shape;
}
// The one result of most ops. Tracing runs a rule per recorded op, so the result is moved in:
// `std::vector<Shape>{shape}` copies its element (and its sizes) out of the initializer list.
inline std::vector<Shape> One(Shape shape) {
  std::vector<Shape> shapes;
  shapes.reserve(1);
  shapes.push_back(std::move(shape));
  return shapes;
}
inline const at::Tensor* OptionalTensor(const c10::IValue& v) {
  return (v.isTensor() && v.toTensor().defined()) ? &v.toTensor() : nullptr;
}

// PyTorch/XLA's argument checks, with its messages (shape_rules_checks.cc). A tensor's type and
// sizes as its messages print them ("f32[2,2]"); two operands of a binary op that do not
// broadcast; then rules that check an op's arguments and leave its shape to the Meta kernel (or,
// Mm and RandomFrom, to MatrixProduct and SameAsFirst).
std::string XlaShapeText(const at::Tensor& t);
void CheckBroadcastable(const at::Tensor& a, const at::Tensor& b);
// The first two arguments, when both are tensors (not wrapped Python numbers).
void CheckBinaryOperands(c10::ArrayRef<c10::IValue> args);
// expand's `sizes` against its input: as many or more, each -1, the input's or from a 1.
void CheckExpandSizes(const at::Tensor& self, const std::vector<int64_t>& sizes);
Shapes Cat(c10::ArrayRef<c10::IValue> args);
Shapes DivTensorMode(c10::ArrayRef<c10::IValue> args);
Shapes Flip(c10::ArrayRef<c10::IValue> args);
Shapes Full(c10::ArrayRef<c10::IValue> args);
// max/min and max.dim/min.dim: elements to reduce over.
Shapes Max(c10::ArrayRef<c10::IValue> args);
Shapes Min(c10::ArrayRef<c10::IValue> args);
Shapes Gather(c10::ArrayRef<c10::IValue> args);
Shapes Mm(c10::ArrayRef<c10::IValue> args);
Shapes RandomFrom(c10::ArrayRef<c10::IValue> args);
Shapes Roll(c10::ArrayRef<c10::IValue> args);
Shapes Trace(c10::ArrayRef<c10::IValue> args);
// Output has the input's shape and dtype (activations and their backwards, fills, rng ops).
// Only when every tensor argument has the first one's shape and dtype, and it is floating.
std::optional<std::vector<Shape>> SameAsFirst(c10::ArrayRef<c10::IValue> args);
// Pointwise ops of floating tensors of one dtype (add, mul, div, lerp, addcmul, ...), with any
// real Scalars or wrapped Python numbers: that dtype, at the tensors' broadcast shape. Not for
// mixed dtypes or CPU tensors (type promotion decides those).
std::optional<std::vector<Shape>> SameDtypeBroadcast(c10::ArrayRef<c10::IValue> args);
// add and sub (.Tensor, .Scalar): SameDtypeBroadcast, after eager's check of a boolean alpha.
std::optional<std::vector<Shape>> AddSubTensor(c10::ArrayRef<c10::IValue> args);
// mm and bmm of floating matrices of one dtype whose inner dimensions (and batches) agree.
std::optional<std::vector<Shape>> MatrixProduct(c10::ArrayRef<c10::IValue> args);
// Output has the first argument's shape and dtype, whatever it is (the *_scatter ops).
std::optional<std::vector<Shape>> LikeFirst(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> FirstWithSizesOfArg2(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> WhereSelf(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> Convolution(c10::ArrayRef<c10::IValue> args);
// Outputs whose output_mask entry is false have the Undefined dtype (an undefined tensor).
std::optional<std::vector<Shape>> ConvolutionBackward(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> BatchNorm(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> BatchNormBackward(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> LayerNorm(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> LayerNormBackward(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> GroupNorm(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> GroupNormBackward(c10::ArrayRef<c10::IValue> args);
// linear(input [..., in], weight [out, in], bias [out]?) -> [..., out], and txla::linear_backward's
// gradients (Undefined where output_mask is false), for what LinearSupports covers.
std::optional<std::vector<Shape>> Linear(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> LinearBackward(c10::ArrayRef<c10::IValue> args);
// A floating input of rank >= 1 and a 2-D weight of its dtype whose rows are input's last
// dimension; no bias, or a 1-D one of the weight's row count and dtype.
bool LinearSupports(const at::Tensor& input, const at::Tensor& weight, const at::Tensor* bias);
// _scaled_dot_product_flash_attention_for_cpu: 4-D q, k, v of one floating dtype, one batch and
// head count, one head size; a mask of q's dtype that broadcasts to [B, H, L, S]; no dropout.
// Output like q, logsumexp [B, H, L] in the dtype ATen's CPU kernel computes it in.
std::optional<std::vector<Shape>> FusedAttention(c10::ArrayRef<c10::IValue> args);
// Whether those arguments are the ones FusedAttention covers (also what decides, for
// scaled_dot_product_attention on the device, whether it takes that op or its math path).
bool FusedAttentionSupports(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor* mask,
                            double dropout_p, bool is_causal);
// Its backward: gradients like q, k and v.
std::optional<std::vector<Shape>> FusedAttentionBackward(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> EmbeddingDenseBackward(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> NativeDropout(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> ViewCopy(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> SliceCopy(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> SelectCopy(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> TransposeCopy(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> TCopy(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> PermuteCopy(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> ExpandCopy(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> UnsqueezeCopy(c10::ArrayRef<c10::IValue> args);
// Backward ops whose gradient has the shape of their `self` argument (argument 1).
std::optional<std::vector<Shape>> LikeSelfOfBackward(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> NllLossForward(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> NllLoss2dForward(c10::ArrayRef<c10::IValue> args);
// zeros/ones(size, dtype, ...): the default dtype when none is given.
std::optional<std::vector<Shape>> Factory(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> ToCopy(c10::ArrayRef<c10::IValue> args);
// multi_margin_loss: eager's output shape (a 1-D input's unreduced loss is 0-dim).
std::optional<std::vector<Shape>> MultiMarginLoss(c10::ArrayRef<c10::IValue> args);
// randperm / randperm.generator: [n] of the dtype (int64 by default), with eager's checks of n.
std::optional<std::vector<Shape>> Randperm(c10::ArrayRef<c10::IValue> args);
// bucketize.Scalar: a 0-dim index (int32 with out_int32), boundaries checked 1-D as eager does.
std::optional<std::vector<Shape>> BucketizeScalar(c10::ArrayRef<c10::IValue> args);
// arange.start_step and eye / eye.m: sizes from the arguments, with eager's checks.
std::optional<std::vector<Shape>> Arange(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> Eye(c10::ArrayRef<c10::IValue> args);

// txla::rnn_layer(input_gates, w_hh, b_hh, h0, c0, cell, reverse) and
// txla::rnn_layer_backward(grad_h, grad_hn, grad_cn, w_hh, h0, c0, forward, cell, reverse): the
// layouts of compiler/library/recurrent.h, with the arguments checked against each other.
std::optional<std::vector<Shape>> RnnLayer(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> RnnLayerBackward(c10::ArrayRef<c10::IValue> args);

// txla::all_gather(self, dim, groups, group_size) / txla::reduce_scatter(self, reduce_type, dim,
// groups, group_size): `dim` grows / shrinks by the group size.
std::optional<std::vector<Shape>> AllGather(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> ReduceScatter(c10::ArrayRef<c10::IValue> args);

// Broadcast binary elementwise op (self, other Tensor or Scalar) with ATen's type promotion.
std::optional<std::vector<Shape>> BinaryElementwise(c10::ArrayRef<c10::IValue> args);
// pow.Tensor_Scalar: BinaryElementwise, and eager's refusal of negative integer powers of integers.
std::optional<std::vector<Shape>> PowTensorScalar(c10::ArrayRef<c10::IValue> args);
// upsample_*(self, output_size, ...) and upsample_*_backward(grad, output_size, input_size, ...).
std::optional<std::vector<Shape>> Upsample(c10::ArrayRef<c10::IValue> args);
// new_empty_strided(self, size, stride, dtype?, ...): its values are unspecified (zeros here).
std::optional<std::vector<Shape>> NewEmptyStrided(c10::ArrayRef<c10::IValue> args);
// upsample_*.vec(input, output_size?, scale_factors?).
std::optional<std::vector<Shape>> UpsampleVec(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> UpsampleBackward(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> CdistForward(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> PdistForward(c10::ArrayRef<c10::IValue> args);

// sum(self, dtype?) and sum.dim_IntList(self, dim?, keepdim, dtype?) without a dtype, over a
// non-empty list of dims (shape_rules_reduction.cc), with eager's errors for bad or repeated ones.
std::optional<std::vector<Shape>> Sum(c10::ArrayRef<c10::IValue> args);
// _softmax / _log_softmax(self, dim, half_to_float=False) of a floating tensor, and their
// backwards (grad_output, output, dim, input_dtype) when input_dtype is grad_output's.
std::optional<std::vector<Shape>> Softmax(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> SoftmaxBackward(c10::ArrayRef<c10::IValue> args);
std::optional<std::vector<Shape>> SafeSoftmax(c10::ArrayRef<c10::IValue> args);

// Reads an int[] or SymInt[] argument.
std::vector<int64_t> ToInts(const c10::IValue& value);

}  // namespace txla::ir::rules
