#include "ir/shape_rules.h"

#include <cmath>

#include <ATen/ExpandUtils.h>
#include <ATen/InferSize.h>
#include <ATen/WrapDimUtils.h>
#include <c10/util/Exception.h>

#include "compiler/library/recurrent.h"

namespace txla::ir::rules {

std::vector<int64_t> ToInts(const c10::IValue& value) {
  std::vector<int64_t> out;
  out.reserve(value.toListRef().size());
  for (const c10::IValue& e : value.toListRef())
    out.push_back(e.isInt() ? e.toInt() : e.toSymInt().expect_int());
  return out;
}

Shapes SameAsFirst(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& first = args[0].toTensor();
  if (!c10::isFloatingType(first.scalar_type())) return std::nullopt;
  for (const c10::IValue& a : args.slice(1)) {
    if (!a.isTensor()) continue;
    const at::Tensor& t = a.toTensor();
    if (t.sizes() != first.sizes() || t.scalar_type() != first.scalar_type())
      return std::nullopt;
  }
  return One(ShapeOf(first));
}

Shapes SameDtypeBroadcast(c10::ArrayRef<c10::IValue> args) {
  CheckBinaryOperands(args);
  const at::Tensor& first = args[0].toTensor();
  if (!c10::isFloatingType(first.scalar_type())) return std::nullopt;
  std::vector<int64_t> sizes;
  for (const c10::IValue& a : args) {
    // A bool or complex alpha/value/weight: eager's checks and promotion decide (the Meta kernel).
    if (a.isScalar() && (a.toScalar().isBoolean() || a.toScalar().isComplex())) return std::nullopt;
    if (!a.isTensor()) continue;
    const at::Tensor& t = a.toTensor();
    // A wrapped Python number (`p.mul_(0.9)`: an optimizer's every op) is 0-dim and, unless
    // complex, keeps a floating tensor's dtype.
    if (t.defined() && t.unsafeGetTensorImpl()->is_wrapped_number() && &t != &first) {
      if (c10::isComplexType(t.scalar_type())) return std::nullopt;
      continue;
    }
    // A CPU tensor or another dtype takes part in type promotion differently.
    if (!t.defined() || t.scalar_type() != first.scalar_type() || t.unsafeGetTensorImpl()->is_wrapped_number() ||
        t.device().type() != first.device().type())
      return std::nullopt;
    // A mismatch of later operands raises eager's own message (TensorIterator's). Operands of
    // one shape (most of them) skip the broadcast's new vector.
    if (&t == &first) sizes.assign(t.sizes().begin(), t.sizes().end());
    else if (t.sizes() != c10::IntArrayRef(sizes)) sizes = at::infer_size(sizes, t.sizes());
  }
  return One(Sized(first.scalar_type(), std::move(sizes)));
}

Shapes AddSubTensor(c10::ArrayRef<c10::IValue> args) {
  // Eager's alpha check, which torch 2.9's Meta kernel leaves out (it added alpha=True as 1).
  // (add.Scalar's `other` is a Scalar.)
  const bool boolean_other = args[1].isTensor() ? args[1].toTensor().scalar_type() == c10::kBool
                                                : args[1].isScalar() && args[1].toScalar().isBoolean();
  const bool boolean_result = args[0].toTensor().scalar_type() == c10::kBool && boolean_other;
  TORCH_CHECK(!(args[2].isScalar() && args[2].toScalar().isBoolean()) || boolean_result,
              "Boolean alpha only supported for Boolean results.");
  return SameDtypeBroadcast(args);
}

Shapes MatrixProduct(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& a = args[0].toTensor();
  const at::Tensor& b = args[1].toTensor();
  const int64_t rank = a.dim();
  if (!c10::isFloatingType(a.scalar_type()) || b.scalar_type() != a.scalar_type() || (rank != 2 && rank != 3) ||
      b.dim() != rank || a.size(rank - 1) != b.size(rank - 2) || (rank == 3 && a.size(0) != b.size(0)))
    return std::nullopt;  // the Meta kernel raises eager's error
  std::vector<int64_t> sizes = a.sizes().vec();
  sizes.back() = b.size(rank - 1);
  return One(Sized(a.scalar_type(), std::move(sizes)));
}

// The first argument's dtype with the sizes argument 2 gives (SPMD's manual-region ops).
Shapes FirstWithSizesOfArg2(c10::ArrayRef<c10::IValue> args) {
  return One(Sized(args[0].toTensor().scalar_type(), args[2].toIntVector()));
}

Shapes LikeFirst(c10::ArrayRef<c10::IValue> args) {
  return One(ShapeOf(args[0].toTensor()));
}

Shapes WhereSelf(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& cond = args[0].toTensor();
  const at::Tensor& self = args[1].toTensor();
  const at::Tensor& other = args[2].toTensor();
  if (cond.scalar_type() != c10::kBool || self.scalar_type() != other.scalar_type())
    return std::nullopt;
  auto sizes = at::infer_size(at::infer_size(cond.sizes(), self.sizes()), other.sizes());
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

Shapes LikeSelfOfBackward(c10::ArrayRef<c10::IValue> args) {
  return One(ShapeOf(args[1].toTensor()));
}

// nll_loss on [C] or [N, C]. Class indices may come as floating-point values (truncated), as
// PyTorch/XLA takes them: its users' training loops pass float targets (`torch.zeros(N)`).
Shapes NllLossForward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  const at::Tensor& target = args[1].toTensor();
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  TORCH_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  TORCH_CHECK(at::isIntegralType(target.scalar_type(), /*includeBool=*/false) ||
                  at::isFloatingType(target.scalar_type()),
              "nll_loss: expected class indices (an integer or floating-point target), but found ",
              target.scalar_type());
  const bool no_batch = self.dim() == 1 && target.dim() == 0;
  TORCH_CHECK(no_batch || self.size(0) == target.size(0), "size mismatch (got input: ", self.sizes(),
              ", target: ", target.sizes(), ")");
  if (args.size() > 2 && args[2].isTensor() && args[2].toTensor().defined()) {
    const int64_t classes = self.size(-1);
    TORCH_CHECK(args[2].toTensor().numel() == classes, "weight tensor should be defined either for all ", classes,
                " classes or no classes but got weight tensor of shape: ", args[2].toTensor().sizes());
  }
  std::vector<int64_t> out_sizes;
  if (args[3].toInt() == 0 && self.dim() == 2) out_sizes = {self.size(0)};  // Reduction::None
  return std::vector<Shape>{Shape(self.scalar_type(), out_sizes), Shape(self.scalar_type(), {})};
}

Shapes NllLoss2dForward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  const at::Tensor& target = args[1].toTensor();
  TORCH_CHECK(self.dim() == 4, "only batches of spatial inputs supported (4D tensors), but got input of dimension: ", self.dim());
  TORCH_CHECK(target.dim() == 3, "only batches of spatial targets supported (3D tensors) but got targets of dimension: ", target.dim());
  TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) &&
                  self.size(3) == target.size(2),
              "input and target batch or spatial sizes don't match: target ", target.sizes(),
              ", input ", self.sizes());
  int64_t reduction = args[3].toInt();
  std::vector<int64_t> out_sizes;
  if (reduction == 0) out_sizes = target.sizes().vec();  // Reduction::None
  return std::vector<Shape>{Shape(self.scalar_type(), out_sizes), Shape(self.scalar_type(), {})};
}

Shapes Factory(c10::ArrayRef<c10::IValue> args) {
  auto sizes = ToInts(args[0]);
  for (int64_t s : sizes) TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
  c10::ScalarType dtype = args[1].isNone() ? c10::typeMetaToScalarType(c10::get_default_dtype())
                                           : args[1].toScalarType();
  return One(Sized(dtype, std::move(sizes)));
}

Shapes GroupNorm(c10::ArrayRef<c10::IValue> args) {
  // native_group_norm(input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean, rstd)
  const at::Tensor& x = args[0].toTensor();
  int64_t n = args[3].toInt(), c = args[4].toInt(), hw = args[5].toInt(), group = args[6].toInt();
  TORCH_CHECK(group > 0 && c % group == 0, "Expected number of channels in input to be divisible by ",
              "num_groups, but got input of shape ", x.sizes(), " and num_groups=", group);
  TORCH_CHECK(x.numel() == n * c * hw, "Expected the input to have ", n * c * hw, " elements, got ", x.numel());
  for (int k : {1, 2}) {
    if (args[k].isTensor() && args[k].toTensor().defined())
      TORCH_CHECK(args[k].toTensor().numel() == c, "Expected ", k == 1 ? "weight" : "bias",
                  " to be a vector of size equal to the number of channels in input, but got ",
                  args[k].toTensor().sizes(), " and input of shape ", x.sizes());
  }
  return std::vector<Shape>{ShapeOf(x), Shape(x.scalar_type(), {n, group}), Shape(x.scalar_type(), {n, group})};
}

Shapes GroupNormBackward(c10::ArrayRef<c10::IValue> args) {
  // native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C, HxW, group, output_mask)
  const at::Tensor& x = args[1].toTensor();
  int64_t c = args[6].toInt();
  auto mask = args[9].toBoolList();
  auto undefined = Shape(c10::ScalarType::Undefined, {});
  return std::vector<Shape>{mask[0] ? ShapeOf(x) : undefined, mask[1] ? Shape(x.scalar_type(), {c}) : undefined,
                            mask[2] ? Shape(x.scalar_type(), {c}) : undefined};
}

Shapes Arange(c10::ArrayRef<c10::IValue> args) {
  // arange.start_step(start, end, step, dtype, ...): ATen's size rule and checks.
  const c10::Scalar start = args[0].toScalar(), end = args[1].toScalar(), step = args[2].toScalar();
  const bool floating = start.isFloatingPoint() || end.isFloatingPoint() || step.isFloatingPoint();
  c10::ScalarType dtype = !args[3].isNone() ? args[3].toScalarType()
                          : floating        ? c10::typeMetaToScalarType(c10::get_default_dtype())
                                            : c10::kLong;
  double xstart = start.toDouble(), xend = end.toDouble(), xstep = step.toDouble();
  TORCH_CHECK(xstep > 0 || xstep < 0, "step must be nonzero");
  TORCH_CHECK(std::isfinite(xstart) && std::isfinite(xend), "unsupported range: ", xstart, " -> ", xend);
  TORCH_CHECK(((xstep > 0) && (xend >= xstart)) || ((xstep < 0) && (xend <= xstart)),
              "upper bound and larger bound inconsistent with step sign");
  int64_t size;
  if (at::isIntegralType(dtype, /*includeBool=*/false) && !floating) {
    int64_t s = start.toLong(), e = end.toLong(), st = step.toLong();
    size = st > 0 ? (e - s + st - 1) / st : (s - e - st - 1) / -st;
  } else {
    size = static_cast<int64_t>(std::ceil((xend - xstart) / xstep));
  }
  TORCH_CHECK(size >= 0, "invalid size, possible overflow?");
  return One(Shape(dtype, {size}));
}

Shapes Eye(c10::ArrayRef<c10::IValue> args) {
  // eye(n, dtype, layout, device, pin_memory) or eye.m(n, m, dtype, ...). (A dtype is an int
  // IValue too: the overload is told by the argument count.)
  const bool square = args.size() == 5;
  int64_t n = args[0].toInt(), m = square ? n : args[1].toInt();
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  const c10::IValue& dt = args[square ? 1 : 2];
  c10::ScalarType dtype = dt.isNone() ? c10::typeMetaToScalarType(c10::get_default_dtype()) : dt.toScalarType();
  return One(Shape(dtype, {n, m}));
}

Shapes MultiMarginLoss(c10::ArrayRef<c10::IValue> args) {
  // multi_margin_loss(self, target, p, margin, weight, reduction). torch's Meta kernel gives a
  // 1-D input's unreduced loss the shape [1]; eager's is 0-dim. The usual forms only: the Meta
  // kernel checks the rest (and raises eager's errors).
  const at::Tensor& self = args[0].toTensor();
  const at::Tensor& target = args[1].toTensor();
  const double p = args[2].toScalar().toDouble();
  const bool rows = self.dim() == 2 && target.dim() == 1 && target.size(0) == self.size(0);
  const bool single = self.dim() == 1 && self.numel() > 0 && target.numel() == 1 && target.dim() <= 1;
  if (!(rows || single) || (p != 1 && p != 2) || !c10::isFloatingType(self.scalar_type())) return std::nullopt;
  if (args[5].toInt() != 0 || single) return One(Shape(self.scalar_type(), {}));
  return One(Shape(self.scalar_type(), {self.size(0)}));
}

Shapes Randperm(c10::ArrayRef<c10::IValue> args) {
  // randperm(n, dtype, layout, device, pin_memory) or randperm.generator(n, generator, dtype, ...),
  // with ATen's checks of n against the dtype (check_supported_max_int_with_precision).
  const int64_t n = args[0].toInt();
  const c10::IValue& dt = args[args.size() == 5 ? 1 : 2];
  const c10::ScalarType dtype = dt.isNone() ? c10::kLong : dt.toScalarType();
  TORCH_CHECK(n >= 0, "Trying to create tensor with negative dimension ", n, ": [", n, "]");
  TORCH_CHECK(dtype != c10::kBool, "\"randperm\" not implemented for 'Bool'");
  const int64_t top = n > 0 ? n - 1 : 0;
  switch (dtype) {
    case c10::kByte: TORCH_CHECK(top <= 255, "value cannot be converted to type uint8_t without overflow"); break;
    case c10::kChar: TORCH_CHECK(top <= 127, "value cannot be converted to type int8_t without overflow"); break;
    case c10::kShort: TORCH_CHECK(top <= 32767, "value cannot be converted to type int16_t without overflow"); break;
    case c10::kInt: TORCH_CHECK(top <= 2147483647, "value cannot be converted to type int32_t without overflow"); break;
    case c10::kHalf: TORCH_CHECK(n <= (int64_t{1} << 11) + 1, "n cannot be greater than 2049 for Half type."); break;
    case c10::kFloat: TORCH_CHECK(n <= (int64_t{1} << 24) + 1, "n cannot be greater than 2^24+1 for Float type."); break;
    case c10::kDouble: TORCH_CHECK(n <= (int64_t{1} << 53) + 1, "n cannot be greater than 2^53+1 for Double type."); break;
    default: break;
  }
  return One(Shape(dtype, {n}));
}

Shapes BucketizeScalar(c10::ArrayRef<c10::IValue> args) {
  // bucketize.Scalar(self, boundaries, out_int32, right): torch's Meta path for it reads the
  // boundaries' values, which a meta tensor has none of.
  const at::Tensor& boundaries = args[1].toTensor();
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return One(Shape(args[2].toBool() ? c10::kInt : c10::kLong, {}));
}

Shapes ToCopy(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  c10::ScalarType dtype = args[1].isNone() ? self.scalar_type() : args[1].toScalarType();
  return One(Shape(dtype, self.sizes()));
}

namespace {

Shapes Resized(const at::Tensor& self, int64_t dim, int64_t group_size, bool gather) {
  TORCH_CHECK(group_size >= 1, "a replica group needs at least one member");
  std::vector<int64_t> sizes = self.sizes().vec();
  TORCH_CHECK(!sizes.empty(), (gather ? "all_gather" : "reduce_scatter"), " of a 0-dim tensor");
  int64_t d = at::maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  TORCH_CHECK(gather || sizes[d] % group_size == 0, "reduce_scatter: dimension ", dim, " (size ",
              sizes[d], ") does not divide into ", group_size, " shards");
  sizes[d] = gather ? sizes[d] * group_size : sizes[d] / group_size;
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

}  // namespace

namespace {

// The sizes of a recurrent layer's call: steps, batch, hidden, its cell; every tensor checked.
struct RnnSizes {
  int64_t steps, batch, hidden, gates;
  compiler::library::RnnCell cell;
  c10::ScalarType dtype;
};

// `t` is `sizes`, of `dtype`; `name` says which argument (or arguments) it is.
void CheckRnnArgument(const char* op, const char* name, const at::Tensor& t, std::vector<int64_t> sizes,
                      c10::ScalarType dtype) {
  TORCH_CHECK(t.sizes() == c10::IntArrayRef(sizes), op, ": ", name, " must be ", c10::IntArrayRef(sizes), ", got ",
              t.sizes());
  TORCH_CHECK(t.scalar_type() == dtype, op, ": every tensor must be ", dtype, ", got ", t.scalar_type());
}

// What both calls share: the cell, the hidden weights, the states, and steps, batch and dtype
// from `sequence` ([steps, batch, ...]: the forward's input gates, the backward's grad_h).
RnnSizes CheckRnnCall(const char* op, const at::Tensor& sequence, const at::Tensor& w_hh, const at::Tensor& h0,
                      const at::Tensor& c0, int64_t cell_arg) {
  using compiler::library::RnnCell;
  TORCH_CHECK(cell_arg == 0 || cell_arg == 1, op, ": cell must be 0 (LSTM) or 1 (GRU), got ", cell_arg);
  TORCH_CHECK(sequence.dim() == 3, op, ": expected a [steps, batch, ...] sequence, got ", sequence.sizes());
  const c10::ScalarType dtype = sequence.scalar_type();
  TORCH_CHECK(dtype == c10::kFloat || dtype == c10::kDouble, op, ": float32 or float64 only, got ", dtype);
  TORCH_CHECK(w_hh.dim() == 2, op, ": w_hh must be 2-D, got ", w_hh.sizes());
  const auto cell = static_cast<RnnCell>(cell_arg);
  const int64_t batch = sequence.size(1), hidden = w_hh.size(1), gates = compiler::library::RnnGates(cell) * hidden;
  CheckRnnArgument(op, "w_hh", w_hh, {gates, hidden}, dtype);
  CheckRnnArgument(op, "h0 and c0", h0, {batch, hidden}, dtype);
  CheckRnnArgument(op, "h0 and c0", c0, {batch, hidden}, dtype);
  return {sequence.size(0), batch, hidden, gates, cell, dtype};
}

}  // namespace

Shapes RnnLayer(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& input_gates = args[0].toTensor();
  const RnnSizes s =
      CheckRnnCall("rnn_layer", input_gates, args[1].toTensor(), args[3].toTensor(), args[4].toTensor(), args[5].toInt());
  CheckRnnArgument("rnn_layer", "input_gates", input_gates, {s.steps, s.batch, s.gates}, s.dtype);
  CheckRnnArgument("rnn_layer", "b_hh", args[2].toTensor(), {s.gates}, s.dtype);
  return std::vector<Shape>{
      Shape(s.dtype, {s.steps, s.batch, compiler::library::RnnForwardWidth(s.cell, s.hidden)})};
}

Shapes RnnLayerBackward(c10::ArrayRef<c10::IValue> args) {
  const char* op = "rnn_layer_backward";
  const at::Tensor& grad_h = args[0].toTensor();
  const RnnSizes s = CheckRnnCall(op, grad_h, args[3].toTensor(), args[4].toTensor(), args[5].toTensor(), args[7].toInt());
  CheckRnnArgument(op, "grad_h", grad_h, {s.steps, s.batch, s.hidden}, s.dtype);
  CheckRnnArgument(op, "grad_hn and grad_cn", args[1].toTensor(), {s.batch, s.hidden}, s.dtype);
  CheckRnnArgument(op, "grad_hn and grad_cn", args[2].toTensor(), {s.batch, s.hidden}, s.dtype);
  CheckRnnArgument(op, "forward", args[6].toTensor(),
                   {s.steps, s.batch, compiler::library::RnnForwardWidth(s.cell, s.hidden)}, s.dtype);
  return std::vector<Shape>{
      Shape(s.dtype, {s.steps + 1, s.batch, compiler::library::RnnBackwardWidth(s.cell, s.hidden)})};
}

Shapes AllGather(c10::ArrayRef<c10::IValue> args) {
  return Resized(args[0].toTensor(), args[1].toInt(), args[3].toInt(), /*gather=*/true);
}

Shapes ReduceScatter(c10::ArrayRef<c10::IValue> args) {
  return Resized(args[0].toTensor(), args[2].toInt(), args[4].toInt(), /*gather=*/false);
}

Shapes BinaryElementwise(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  if (args[1].isTensor()) {
    const at::Tensor& other = args[1].toTensor();
    return One(Shape(at::result_type(self, other), at::infer_size(self.sizes(), other.sizes())));
  }
  return One(Shape(at::result_type(self, args[1].toScalar()), self.sizes()));
}

Shapes PowTensorScalar(c10::ArrayRef<c10::IValue> args) {
  Shapes shapes = BinaryElementwise(args);
  const c10::Scalar exponent = args[1].toScalar();
  TORCH_CHECK(!(c10::isIntegralType((*shapes)[0].dtype, /*includeBool=*/true) && exponent.isIntegral(true) &&
                exponent.toLong() < 0),
              "Integers to negative integer powers are not allowed.");
  return shapes;
}

Shapes Upsample(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  std::vector<int64_t> out = ToInts(args[1]);
  TORCH_CHECK(self.dim() == static_cast<int64_t>(out.size()) + 2, "upsampling ", out.size(), "-D expects a ",
              out.size() + 2, "-D input, got ", self.dim(), "-D");
  for (int64_t v : out) TORCH_CHECK(v > 0, "upsampling: output sizes must be positive, got ", out);
  std::vector<int64_t> sizes = {self.size(0), self.size(1)};
  sizes.insert(sizes.end(), out.begin(), out.end());
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

Shapes UpsampleVec(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  TORCH_CHECK(self.dim() >= 3, "upsampling expects a batched input, got ", self.dim(), "-D");
  const size_t spatial = static_cast<size_t>(self.dim() - 2);
  std::vector<int64_t> sizes = {self.size(0), self.size(1)};
  if (!args[1].isNone()) {
    TORCH_CHECK(args[2].isNone(), "Must specify exactly one of output_size and scale_factors");
    std::vector<int64_t> out = ToInts(args[1]);
    TORCH_CHECK(out.size() == spatial, "upsampling: expected ", spatial, " output sizes, got ", out.size());
    sizes.insert(sizes.end(), out.begin(), out.end());
  } else {
    TORCH_CHECK(!args[2].isNone(), "Must specify exactly one of output_size and scale_factors");
    std::vector<double> scales = args[2].toDoubleVector();
    TORCH_CHECK(scales.size() == spatial, "upsampling: expected ", spatial, " scale factors, got ", scales.size());
    for (size_t k = 0; k < spatial; ++k)
      sizes.push_back(static_cast<int64_t>(static_cast<double>(self.size(2 + k)) * scales[k]));
  }
  for (size_t k = 2; k < sizes.size(); ++k) TORCH_CHECK(sizes[k] > 0, "upsampling: output sizes must be positive");
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

Shapes NewEmptyStrided(c10::ArrayRef<c10::IValue> args) {
  // new_empty_strided(self, size, stride, dtype?, layout?, device?, pin_memory?)
  const at::Tensor& self = args[0].toTensor();
  std::vector<int64_t> sizes = ToInts(args[1]);
  for (int64_t v : sizes) TORCH_CHECK(v >= 0, "Trying to create tensor with negative dimension ", v, ": ", sizes);
  c10::ScalarType dtype = args[3].isNone() ? self.scalar_type() : static_cast<c10::ScalarType>(args[3].toInt());
  return One(Sized(dtype, std::move(sizes)));
}

Shapes UpsampleBackward(c10::ArrayRef<c10::IValue> args) {
  return One(Sized(args[0].toTensor().scalar_type(), ToInts(args[2])));
}

Shapes CdistForward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& x1 = args[0].toTensor();
  const at::Tensor& x2 = args[1].toTensor();
  TORCH_CHECK(x1.dim() >= 2 && x2.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(),
              "D, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1), "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  TORCH_CHECK(args[2].toDouble() >= 0, "cdist only supports non-negative p values");
  auto batch = at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
  batch.push_back(x1.size(-2));
  batch.push_back(x2.size(-2));
  return One(Sized(x1.scalar_type(), std::move(batch)));
}

Shapes PdistForward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(args[1].toDouble() >= 0, "pdist only supports non-negative p values");
  const int64_t n = self.size(0);
  return One(Shape(self.scalar_type(), {n > 1 ? n * (n - 1) / 2 : 0}));
}

}  // namespace txla::ir::rules
