// Shape rules of functionalization's view copies (view, slice, select, transpose, permute,
// expand, unsqueeze): every traced step makes hundreds of them.
#include <ATen/InferSize.h>
#include <ATen/WrapDimUtils.h>

#include "ir/shape_rules.h"

namespace txla::ir::rules {

Shapes ViewCopy(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  auto sizes = at::infer_size(ToInts(args[1]), self.numel());
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

Shapes SliceCopy(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  TORCH_CHECK(self.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  int64_t dim = c10::maybe_wrap_dim(args[1].toInt(), self.dim());
  int64_t size = self.size(dim);
  auto as_int = [](const c10::IValue& v, int64_t dflt) {
    if (v.isNone()) return dflt;
    return v.isInt() ? v.toInt() : v.toSymInt().expect_int();
  };
  int64_t start = as_int(args[2], 0);
  int64_t end = as_int(args[3], INT64_MAX);
  int64_t step = as_int(args[4], 1);
  TORCH_CHECK(step > 0, "slice step must be positive");
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::min(std::max<int64_t>(start, 0), size);
  end = std::min(std::max(end, start), size);
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes[dim] = (end - start + step - 1) / step;
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

Shapes SelectCopy(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  TORCH_CHECK_INDEX(self.dim() != 0, "select() cannot be applied to a 0-dim tensor.");
  int64_t dim = c10::maybe_wrap_dim(args[1].toInt(), self.dim());
  int64_t index = args[2].isInt() ? args[2].toInt() : args[2].toSymInt().expect_int();
  int64_t size = self.size(dim);
  TORCH_CHECK_INDEX(index >= -size && index < size, "select(): index ", index,
                    " out of range for tensor of size ", self.sizes(), " at dimension ", dim);
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes.erase(sizes.begin() + dim);
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

Shapes TransposeCopy(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  int64_t d0 = c10::maybe_wrap_dim(args[1].toInt(), self.dim());
  int64_t d1 = c10::maybe_wrap_dim(args[2].toInt(), self.dim());
  std::vector<int64_t> sizes = self.sizes().vec();
  if (!sizes.empty()) std::swap(sizes[d0], sizes[d1]);
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

Shapes TCopy(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  TORCH_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ",
              self.dim(), "D");
  std::vector<int64_t> sizes(self.sizes().rbegin(), self.sizes().rend());
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

Shapes PermuteCopy(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  auto dims = ToInts(args[1]);
  TORCH_CHECK(static_cast<int64_t>(dims.size()) == self.dim(),
              "permute(sparse_coo): number of dimensions in the tensor input does not match "
              "the length of the desired ordering of dimensions i.e. input.dim() = ",
              self.dim(), " is not equal to len(dims) = ", dims.size());
  std::vector<bool> seen(dims.size(), false);
  std::vector<int64_t> sizes;
  for (int64_t d : dims) {
    int64_t w = c10::maybe_wrap_dim(d, self.dim());
    TORCH_CHECK(!seen[w], "permute(): duplicate dims are not allowed.");
    seen[w] = true;
    sizes.push_back(self.size(w));
  }
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

Shapes ExpandCopy(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  auto target = ToInts(args[1]);
  CheckExpandSizes(self, target);
  auto geometry = at::inferExpandGeometry_dimvector(self.sizes(), self.strides(), target);
  return One(Shape(self.scalar_type(), geometry.sizes));
}

Shapes UnsqueezeCopy(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  int64_t dim = c10::maybe_wrap_dim(args[1].toInt(), self.dim() + 1);
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes.insert(sizes.begin() + dim, 1);
  return One(Sized(self.scalar_type(), std::move(sizes)));
}

}  // namespace txla::ir::rules
