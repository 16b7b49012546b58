// scaled_dot_product_attention on xla tensors: one fused op each way where eager's CPU would take
// its fused kernel, instead of the math path's composite.
//
// ATen picks a backend for sdpa per device type, and for xla it always picks the math path: a
// CompositeImplicitAutograd kernel that traces ~20 ops forward and ~35 backward (matmuls through
// expand/view/transpose, the scaling, the mask, _safe_softmax) and as many autograd nodes, for an
// attention that is a few large kernels. Here it traces one
// _scaled_dot_product_flash_attention_for_cpu node (ATen's own op, with ATen's derivative: one
// ..._backward node), lowered as the math path computes (lower/lower_attention.cc), so values
// and gradients are the math path's.
//
// The fused op is taken for the arguments eager's CPU would give its fused kernel (4-D, one
// batch and head count, one head size, no dropout, a mask that broadcasts and needs no gradient)
// unless the user turned that kernel off (torch.nn.attention.sdpa_kernel, or
// torch.backends.cuda.enable_flash_sdp(False)); everything else takes ATen's composite, with its
// checks and messages. As with eager's fused kernel, the gradient is not differentiable again.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/ops/scaled_dot_product_attention_native.h>
#include <torch/library.h>

#include <limits>
#include <optional>

#include "ir/shape_rules.h"

namespace txla::aten {
namespace {

bool TakesFusedOp(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::optional<at::Tensor>& mask,
                  double dropout_p, bool is_causal) {
  if (!at::globalContext().userEnabledFlashSDP()) return false;
  // Symbolic sizes (torch.compile with dynamic shapes) are the composite's: the checks read sizes.
  for (const at::Tensor* t : {&q, &k, &v})
    if (t->unsafeGetTensorImpl()->has_symbolic_sizes_strides()) return false;
  if (mask.has_value() && mask->defined() && mask->unsafeGetTensorImpl()->has_symbolic_sizes_strides()) return false;
  if (k.device() != q.device() || v.device() != q.device()) return false;
  const at::Tensor* m = mask.has_value() && mask->defined() ? &*mask : nullptr;
  if (m != nullptr && (m->device() != q.device() || (at::GradMode::is_enabled() && m->requires_grad()))) return false;
  return ir::rules::FusedAttentionSupports(q, k, v, m, dropout_p, is_causal);
}

at::Tensor ScaledDotProductAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                     const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                                     std::optional<double> scale, bool enable_gqa) {
  // A boolean mask becomes its float form (0 where attended, -inf where not), as ATen converts
  // it before either path; the fused op, like ATen's CPU kernel, takes q's dtype.
  std::optional<at::Tensor> mask = attn_mask;
  if (mask.has_value() && mask->defined() && mask->scalar_type() == at::kBool)
    mask = at::where(mask->logical_not(), -std::numeric_limits<double>::infinity(),
                     at::scalar_tensor(0.0, mask->options().dtype(query.scalar_type())));
  if (!TakesFusedOp(query, key, value, mask, dropout_p, is_causal))
    return at::native::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                                    enable_gqa);
  return std::get<0>(
      at::_scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal, mask, scale));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, AutogradXLA, m) {
  m.impl("scaled_dot_product_attention", TORCH_FN(ScaledDotProductAttention));
}

}  // namespace txla::aten
