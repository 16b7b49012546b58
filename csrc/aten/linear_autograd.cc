// linear on xla tensors as one recorded op each way, txla::linear forward and
// txla::linear_backward for its gradients, instead of what ATen's composite records for an xla
// input (t, a view to 2-D, mm, a view back and an in-place add of the bias: five ops, five
// autograd nodes, and as many again in the backward; a transformer's step has hundreds).
//
// Values are the composite's: one GEMM of the [N, in] rows by the weight, the bias added after
// (lower/lower_linear.cc); the gradients are those of its mm and add (grad @ weight,
// grad^T @ input, grad summed to the bias). Inputs the lowering does not cover, and any with a
// forward-mode gradient, take ATen's composite. A backward that is differentiated again
// (create_graph) computes the same gradients with differentiable ATen ops.
#include <ATen/ATen.h>
#include <ATen/ops/linear_native.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <array>
#include <optional>

#include "ir/shape_rules.h"

namespace txla::aten {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// grad_output [..., out] and input [..., in] as matrices over every leading dimension.
at::Tensor AsRows(const at::Tensor& t) { return t.reshape({-1, t.size(-1)}); }

// What txla::linear_backward computes, in ATen ops: off the device (CPU and Meta, for
// AOTAutograd's fake tensors), and for a backward that is differentiated again.
std::tuple<at::Tensor, at::Tensor, at::Tensor> LinearBackwardComposite(const at::Tensor& grad_output,
                                                                      const at::Tensor& input, const at::Tensor& weight,
                                                                      std::array<bool, 3> mask) {
  at::Tensor grad_input, grad_weight, grad_bias;
  if (mask[0]) grad_input = at::matmul(grad_output, weight);
  if (mask[1]) grad_weight = AsRows(grad_output).t().mm(AsRows(input));
  if (mask[2]) grad_bias = AsRows(grad_output).sum(0);
  return {grad_input, grad_weight, grad_bias};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> LinearBackwardOp(const at::Tensor& grad_output, const at::Tensor& input,
                                                                const at::Tensor& weight, std::array<bool, 3> mask) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("txla::linear_backward", "")
                       .typed<std::tuple<at::Tensor, at::Tensor, at::Tensor>(
                           const at::Tensor&, const at::Tensor&, const at::Tensor&, std::array<bool, 3>)>();
  return op.call(grad_output, input, weight, mask);
}

// txla::linear below autograd (aten::linear there would be decomposed by functionalization).
at::Tensor LinearBelowAutograd(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("txla::linear", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&)>();
  at::AutoDispatchBelowADInplaceOrView below;
  return op.call(input, weight, bias);
}

class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  // No bias is nullopt: an undefined tensor may not be an autograd Function's input.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias) {
    ctx->save_for_backward({input, weight});
    ctx->saved_data["bias"] = bias.has_value();
    return LinearBelowAutograd(input, weight, bias);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& input = saved[0];
    const at::Tensor& weight = saved[1];
    const std::array<bool, 3> mask = {ctx->needs_input_grad(0), ctx->needs_input_grad(1),
                                      ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2)};
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    auto [grad_input, grad_weight, grad_bias] = at::GradMode::is_enabled()
                                                    ? LinearBackwardComposite(grads[0], input, weight, mask)
                                                    : LinearBackwardOp(grads[0], input, weight, mask);
    return {grad_input, grad_weight, grad_bias};
  }
};

bool HasForwardGrad(const at::Tensor& t) { return t.defined() && t._fw_grad(/*level=*/0).defined(); }

// Symbolic sizes (torch.compile with dynamic shapes) are the composite's: the checks below read sizes.
bool Symbolic(const at::Tensor& t) { return t.unsafeGetTensorImpl()->has_symbolic_sizes_strides(); }

at::Tensor Linear(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias) {
  const at::Tensor* b = bias.has_value() && bias->defined() ? &*bias : nullptr;
  const bool devices_agree = weight.device() == input.device() && (b == nullptr || b->device() == input.device());
  if (Symbolic(input) || Symbolic(weight) || (b != nullptr && Symbolic(*b)) || !devices_agree || !ir::rules::LinearSupports(input, weight, b) || input.numel() == 0 || weight.numel() == 0 ||
      HasForwardGrad(input) || HasForwardGrad(weight) || (b != nullptr && HasForwardGrad(*b)))
    return at::native::linear(input, weight, bias);  // its checks and messages
  const bool needs_grad = at::GradMode::is_enabled() &&
                          (input.requires_grad() || weight.requires_grad() || (b != nullptr && b->requires_grad()));
  if (!needs_grad) return LinearBelowAutograd(input, weight, bias);
  return LinearFunction::apply(input, weight, b != nullptr ? bias : std::nullopt);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, AutogradXLA, m) { m.impl("linear", TORCH_FN(Linear)); }

TORCH_LIBRARY_IMPL(txla, CompositeExplicitAutograd, m) {
  m.impl("linear", TORCH_FN(at::native::linear));
  m.impl("linear_backward", TORCH_FN(LinearBackwardComposite));
}

}  // namespace txla::aten
