// Shape rules of the layers' ops: convolution, batch / layer norm, embedding's gradient, dropout
// (and their backwards), whose Meta kernels are slow or missing.
#include <ATen/WrapDimUtils.h>

#include "ir/shape_rules.h"

namespace txla::ir::rules {

Shapes Convolution(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& input = args[0].toTensor();
  const at::Tensor& weight = args[1].toTensor();
  auto stride = ToInts(args[3]);
  auto padding = ToInts(args[4]);
  auto dilation = ToInts(args[5]);
  bool transposed = args[6].toBool();
  auto output_padding = ToInts(args[7]);
  int64_t groups = args[8].toInt();
  int64_t spatial = input.dim() - 2;
  TORCH_CHECK(input.dim() >= 3 && weight.dim() == input.dim(),
              "Expected ", weight.dim(), "-dimensional input for ", weight.dim(),
              "-dimensional weight ", weight.sizes(), ", but got ", input.dim(),
              "-dimensional input of size ", input.sizes(), " instead");
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "Input type (",
              input.scalar_type(), ") and weight type (", weight.scalar_type(),
              ") should be the same");
  TORCH_CHECK(groups > 0, "non-positive groups is not supported");
  auto at_dim = [](const std::vector<int64_t>& v, int64_t i) { return v.size() == 1 ? v[0] : v[i]; };
  std::vector<int64_t> out{input.size(0)};
  if (!transposed) {
    TORCH_CHECK(input.size(1) == weight.size(1) * groups, "Given groups=", groups,
                ", weight of size ", weight.sizes(), ", expected input", input.sizes(),
                " to have ", weight.size(1) * groups, " channels, but got ", input.size(1),
                " channels instead");
    out.push_back(weight.size(0));
  } else {
    TORCH_CHECK(input.size(1) == weight.size(0), "Given transposed=1, weight of size ",
                weight.sizes(), ", expected input", input.sizes(), " to have ", weight.size(0),
                " channels, but got ", input.size(1), " channels instead");
    out.push_back(weight.size(1) * groups);
  }
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = input.size(i + 2), k = weight.size(i + 2);
    int64_t s = at_dim(stride, i), p = at_dim(padding, i), d = at_dim(dilation, i);
    int64_t size;
    if (!transposed) {
      int64_t padded = in + 2 * p;
      int64_t kernel = d * (k - 1) + 1;
      TORCH_CHECK(padded >= kernel, "Calculated padded input size per channel: (", padded,
                  "). Kernel size: (", kernel, "). Kernel size can't be greater than actual "
                  "input size");
      size = (padded - kernel) / s + 1;
    } else {
      size = (in - 1) * s - 2 * p + d * (k - 1) + at_dim(output_padding, i) + 1;
    }
    out.push_back(size);
  }
  return One(Sized(input.scalar_type(), std::move(out)));
}

Shapes ConvolutionBackward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& input = args[1].toTensor();
  const at::Tensor& weight = args[2].toTensor();
  auto mask = args[10].toBoolList();
  std::vector<Shape> out;
  out.push_back(mask[0] ? ShapeOf(input) : Undefined());
  out.push_back(mask[1] ? ShapeOf(weight) : Undefined());
  if (mask[2] && !args[3].isNone()) {
    out.push_back(Shape(weight.scalar_type(), ToInts(args[3])));
  } else if (mask[2]) {
    bool transposed = args[7].toBool();
    int64_t channels = transposed ? weight.size(1) * args[9].toInt() : weight.size(0);
    out.push_back(Shape(weight.scalar_type(), {channels}));
  } else {
    out.push_back(Undefined());
  }
  return out;
}

Shapes BatchNorm(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& input = args[0].toTensor();
  if (!c10::isFloatingType(input.scalar_type()) || input.dim() < 2) return std::nullopt;
  const at::Tensor* weight = OptionalTensor(args[1]);
  const at::Tensor* running_mean = OptionalTensor(args[3]);
  const at::Tensor* running_var = OptionalTensor(args[4]);
  bool training = args[5].toBool();
  int64_t channels = input.size(1);
  for (const at::Tensor* t : {weight, OptionalTensor(args[2]), running_mean, running_var}) {
    if (t) {
      TORCH_CHECK(t->dim() == 1 && t->size(0) == channels,
                  "running_mean should contain ", channels, " elements not ", t->numel());
      if (t->scalar_type() != input.scalar_type()) return std::nullopt;
    }
  }
  TORCH_CHECK(!training || input.numel() / channels > 1,
              "Expected more than 1 value per channel when training, got input size ",
              input.sizes());
  std::vector<Shape> out{ShapeOf(input)};
  if (training) {
    out.push_back(Shape(input.scalar_type(), {channels}));
    out.push_back(Shape(input.scalar_type(), {channels}));
  } else {
    out.push_back(Shape(input.scalar_type(), {0}));
    out.push_back(Shape(input.scalar_type(), {0}));
  }
  return out;
}

Shapes BatchNormBackward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& input = args[1].toTensor();
  const at::Tensor* weight = OptionalTensor(args[2]);
  auto mask = args[9].toBoolList();
  c10::ScalarType param_type = weight ? weight->scalar_type() : input.scalar_type();
  std::vector<Shape> out;
  out.push_back(mask[0] ? ShapeOf(input) : Undefined());
  out.push_back(mask[1] ? Shape(param_type, {input.size(1)}) : Undefined());
  out.push_back(mask[2] ? Shape(param_type, {input.size(1)}) : Undefined());
  return out;
}

Shapes LayerNorm(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& input = args[0].toTensor();
  auto normalized = ToInts(args[1]);
  int64_t axis = input.dim() - static_cast<int64_t>(normalized.size());
  if (axis < 0 || !c10::isFloatingType(input.scalar_type())) return std::nullopt;
  for (size_t i = 0; i < normalized.size(); ++i)
    if (input.size(axis + i) != normalized[i]) return std::nullopt;  // Meta raises the error
  std::vector<int64_t> stat_sizes(input.sizes().begin(), input.sizes().begin() + axis);
  stat_sizes.resize(input.dim(), 1);
  return std::vector<Shape>{ShapeOf(input), Shape(input.scalar_type(), stat_sizes),
                            Shape(input.scalar_type(), stat_sizes)};
}

Shapes LayerNormBackward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& input = args[1].toTensor();
  const at::Tensor* weight = OptionalTensor(args[5]);
  const at::Tensor* bias = OptionalTensor(args[6]);
  auto mask = args[7].toBoolList();
  std::vector<Shape> out;
  out.push_back(mask[0] ? ShapeOf(input) : Undefined());
  out.push_back(mask[1] && weight ? ShapeOf(*weight) : Undefined());
  out.push_back(mask[2] && bias ? ShapeOf(*bias) : Undefined());
  return out;
}

bool LinearSupports(const at::Tensor& input, const at::Tensor& weight, const at::Tensor* bias) {
  const c10::ScalarType dtype = input.scalar_type();
  if (!c10::isFloatingType(dtype) || input.dim() < 1 || weight.dim() != 2 || weight.scalar_type() != dtype ||
      weight.size(1) != input.size(-1))
    return false;
  return bias == nullptr || (bias->dim() == 1 && bias->size(0) == weight.size(0) && bias->scalar_type() == dtype);
}

// Both after LinearSupports (the rows' fallback predicates, op_table.cc).
Shapes Linear(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& input = args[0].toTensor();
  std::vector<int64_t> sizes = input.sizes().vec();
  sizes.back() = args[1].toTensor().size(0);
  return One(Sized(input.scalar_type(), std::move(sizes)));
}

Shapes LinearBackward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& grad = args[0].toTensor();
  const at::Tensor& input = args[1].toTensor();
  const at::Tensor& weight = args[2].toTensor();
  if (grad.scalar_type() != input.scalar_type() || grad.dim() != input.dim() ||
      grad.sizes().slice(0, grad.dim() - 1) != input.sizes().slice(0, input.dim() - 1) ||
      grad.size(-1) != weight.size(0))
    return std::nullopt;  // the composite's error
  const auto mask = args[3].toBoolList();
  return std::vector<Shape>{mask[0] ? ShapeOf(input) : Undefined(), mask[1] ? ShapeOf(weight) : Undefined(),
                            mask[2] ? Shape(weight.scalar_type(), {weight.size(0)}) : Undefined()};
}

bool FusedAttentionSupports(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor* mask,
                            double dropout_p, bool is_causal) {
  const c10::ScalarType dtype = q.scalar_type();
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || k.scalar_type() != dtype || v.scalar_type() != dtype) return false;
  if (dtype != c10::kFloat && dtype != c10::kDouble && dtype != c10::kBFloat16 && dtype != c10::kHalf) return false;
  const int64_t batch = q.size(0), heads = q.size(1), target = q.size(2), head_size = q.size(3), source = k.size(2);
  if (k.size(0) != batch || v.size(0) != batch || k.size(1) != heads || v.size(1) != heads) return false;
  if (k.size(3) != head_size || v.size(3) != head_size || v.size(2) != source) return false;
  if (target == 0 || source == 0 || head_size == 0 || dropout_p != 0.0) return false;
  if (mask == nullptr) return true;
  if (is_causal || mask->scalar_type() != dtype || mask->dim() > 4) return false;
  const int64_t full[4] = {batch, heads, target, source};
  for (int64_t d = 0; d < mask->dim(); ++d) {
    const int64_t size = mask->size(mask->dim() - 1 - d), want = full[3 - d];
    if (size != want && size != 1) return false;
  }
  return true;
}

// The op's fallback predicates (op_table.cc) have checked the arguments.
Shapes FusedAttention(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& q = args[0].toTensor();
  const c10::ScalarType lse = q.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;  // as ATen's CPU kernel
  return std::vector<Shape>{ShapeOf(q), Shape(lse, {q.size(0), q.size(1), q.size(2)})};
}

Shapes FusedAttentionBackward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& grad = args[0].toTensor();
  const at::Tensor& q = args[1].toTensor();
  if (grad.sizes() != q.sizes() || grad.scalar_type() != q.scalar_type()) return std::nullopt;  // Meta's error
  return std::vector<Shape>{ShapeOf(q), ShapeOf(args[2].toTensor()), ShapeOf(args[3].toTensor())};
}

Shapes EmbeddingDenseBackward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& grad = args[0].toTensor();
  int64_t num_weights = args[2].isInt() ? args[2].toInt() : args[2].toSymInt().expect_int();
  return One(Shape(grad.scalar_type(), {num_weights, grad.size(-1)}));
}

Shapes NativeDropout(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& input = args[0].toTensor();
  if (!c10::isFloatingType(input.scalar_type())) return std::nullopt;
  return std::vector<Shape>{ShapeOf(input), Shape(c10::kBool, input.sizes())};
}

}  // namespace txla::ir::rules
