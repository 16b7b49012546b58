// max_pool2d on xla tensors, with a gradient that finds each window's maximum in the input again
// rather than reading int64 indices the forward saved (PyTorch/XLA registers max_pool2d's
// autograd for XLA too: its gradient is XLA's select-and-scatter over the input).
//
// ATen's max_pool2d decomposes into max_pool2d_with_indices, whose backward reads the indices.
// Lazily the lowering already drops them when both ops sit in one graph (lower_nn.cc). Through
// torch.compile they do not: AOTAutograd saves the indices as an output of the forward graph
// for the backward graph, so the forward wrote 8 bytes an output and the backward scattered by
// them. Here, for windows that tile the input exactly (stride = size, no padding, dilation or
// margin: a CNN's 2x2 pools), the backward is txla::max_pool2d_backward_from_input(grad, self)
// and nothing saves the indices: AOTAutograd's partition keeps only the input.
//
// Other windows keep ATen's decomposition (the indices are what their gradient reads anyway:
// the padded forward computes them to read its values). A double backward (create_graph) takes
// ATen's differentiable formula, with the indices found again.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <vector>

namespace txla::aten {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// ATen's defaults: one value for both dimensions, an empty stride meaning the kernel's.
std::vector<int64_t> PerDim(c10::IntArrayRef v, c10::IntArrayRef fallback) {
  if (v.empty()) return fallback.vec();
  return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v.vec();
}

struct Window {
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode;

  Window(c10::IntArrayRef k, c10::IntArrayRef s, c10::IntArrayRef p, c10::IntArrayRef d, bool ceil)
      : kernel(PerDim(k, k)), stride(PerDim(s, kernel)), padding(PerDim(p, {0, 0})), dilation(PerDim(d, {1, 1})),
        ceil_mode(ceil) {}

  // Every input position in exactly one window (the gradient then has one writer per position).
  bool TilesExactly(const at::Tensor& self) const {
    if (kernel.size() != 2 || stride.size() != 2 || padding.size() != 2 || dilation.size() != 2 || self.dim() < 3)
      return false;
    for (int d = 0; d < 2; ++d) {
      const int64_t in = self.size(self.dim() - 2 + d);
      if (kernel[d] <= 0 || stride[d] != kernel[d] || padding[d] != 0 || dilation[d] != 1 || in % kernel[d] != 0)
        return false;
    }
    return true;
  }
};

// ATen's gradient, with the indices found again from `self` (the composite kernel below, and a
// gradient that is differentiated again: ATen's formula has a derivative).
at::Tensor BackwardThroughIndices(const at::Tensor& grad, const at::Tensor& self, c10::IntArrayRef kernel_size,
                                  c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation,
                                  bool ceil_mode) {
  const at::Tensor indices =
      std::get<1>(at::max_pool2d_with_indices(self.detach(), kernel_size, stride, padding, dilation, ceil_mode));
  return at::max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
}

at::Tensor MaxPool2dBackwardFromInputOp(const at::Tensor& grad, const at::Tensor& self, const Window& w) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("txla::max_pool2d_backward_from_input", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, c10::IntArrayRef, c10::IntArrayRef,
                                         c10::IntArrayRef, c10::IntArrayRef, bool)>();
  return op.call(grad, self, w.kernel, w.stride, w.padding, w.dilation, w.ceil_mode);
}

class MaxPool2dFromInput : public torch::autograd::Function<MaxPool2dFromInput> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& self, const Window& w) {
    ctx->save_for_backward({self});
    ctx->saved_data["kernel"] = w.kernel;
    ctx->saved_data["stride"] = w.stride;
    ctx->saved_data["ceil_mode"] = w.ceil_mode;
    return std::get<0>(at::max_pool2d_with_indices(self, w.kernel, w.stride, w.padding, w.dilation, w.ceil_mode));
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor self = ctx->get_saved_variables()[0];
    const Window w(ctx->saved_data["kernel"].toIntVector(), ctx->saved_data["stride"].toIntVector(), {0, 0}, {1, 1},
                   ctx->saved_data["ceil_mode"].toBool());
    at::Tensor grad_input =
        at::GradMode::is_enabled()  // differentiated again
            ? BackwardThroughIndices(grads[0], self, w.kernel, w.stride, w.padding, w.dilation, w.ceil_mode)
            : MaxPool2dBackwardFromInputOp(grads[0], self, w);
    return {grad_input, at::Tensor()};
  }
};

at::Tensor MaxPool2d(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                     c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode) {
  const Window w(kernel_size, stride, padding, dilation, ceil_mode);
  if (!w.TilesExactly(self) || !c10::isFloatingType(self.scalar_type()))  // ATen's decomposition, its checks
    return std::get<0>(at::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
  return MaxPool2dFromInput::apply(self, w);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, AutogradXLA, m) { m.impl("max_pool2d", TORCH_FN(MaxPool2d)); }

TORCH_LIBRARY_IMPL(txla, CompositeExplicitAutograd, m) {
  // Off the device (CPU, and Meta for AOTAutograd's fake tensors); its checks are eager's.
  m.impl("max_pool2d_backward_from_input", TORCH_FN(BackwardThroughIndices));
}

}  // namespace txla::aten
