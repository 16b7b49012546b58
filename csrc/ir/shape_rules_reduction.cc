#include <ATen/WrapDimUtils.h>

#include "ir/shape_rules.h"

namespace txla::ir::rules {

std::optional<std::vector<Shape>> Sum(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  const bool with_dims = args.size() == 4;
  // An explicit dtype (the input is cast first) and complex sums: the Meta kernel decides.
  if (!args[with_dims ? 3 : 1].isNone() || c10::isComplexType(self.scalar_type())) return std::nullopt;
  const c10::ScalarType dtype =
      c10::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? c10::kLong : self.scalar_type();
  if (!with_dims) return One(Shape(dtype, {}));
  const int64_t rank = self.dim();
  // No dims (all of them) or a 0-dim input: the Meta kernel decides.
  if (args[1].isNone() || rank == 0) return std::nullopt;
  const std::vector<int64_t> dims = ToInts(args[1]);
  if (dims.empty()) return std::nullopt;
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t d : dims) {
    const int64_t wrapped = at::maybe_wrap_dim(d, rank);  // eager's IndexError when out of range
    TORCH_CHECK(!reduced[wrapped], "dim ", wrapped, " appears multiple times in the list of dims");
    reduced[wrapped] = true;
  }
  const bool keepdim = args[2].toBool();
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i]) sizes.push_back(self.size(i));
    else if (keepdim) sizes.push_back(1);
  }
  return One(Sized(dtype, std::move(sizes)));
}

std::optional<std::vector<Shape>> Softmax(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  if (args[2].toBool() || !c10::isFloatingType(self.scalar_type())) return std::nullopt;
  at::maybe_wrap_dim(args[1].toInt(), self.dim());
  return One(Shape(self.scalar_type(), self.sizes()));
}

// _safe_softmax(self, dim, dtype?): in `dtype` when given (self is converted first).
std::optional<std::vector<Shape>> SafeSoftmax(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  const c10::ScalarType dtype = args[2].isNone() ? self.scalar_type() : args[2].toScalarType();
  if (!c10::isFloatingType(dtype)) return std::nullopt;  // the meta kernel raises eager's error
  at::maybe_wrap_dim(args[1].toInt(), self.dim());
  return One(Shape(dtype, self.sizes()));
}

std::optional<std::vector<Shape>> SoftmaxBackward(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& grad = args[0].toTensor();
  const at::Tensor& output = args[1].toTensor();
  if (!c10::isFloatingType(grad.scalar_type()) || args[3].toScalarType() != grad.scalar_type() ||
      output.scalar_type() != grad.scalar_type() || output.sizes() != grad.sizes())
    return std::nullopt;
  at::maybe_wrap_dim(args[2].toInt(), grad.dim());
  return One(Shape(grad.scalar_type(), grad.sizes()));
}

}  // namespace txla::ir::rules
