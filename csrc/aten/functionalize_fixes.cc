// Corrections to PyTorch 1.13's functionalization, for `detach` of a view.
//
// Symptom: g.masked_fill_(...); v = g.t(); d = v.detach() gives d the right sizes, but the next
// sync regenerates d's value from the storage base without the transpose (autograd hits this
// when it accumulates a gradient that went through a view after an in-place op).
// Cause: autograd's ADInplaceOrView kernel for detach makes its result with
// shallow_copy_and_detach, and 1.13's FunctionalTensorWrapper drops the view chain in that copy.
// Fix: below autograd a detach is an alias; record it as one at the Functionalize key (a fresh
// wrapper that keeps the view chain and shares storage, so `g.detach().mul_(c)` still writes
// through), and at ADInplaceOrView hand that wrapper out instead of a shallow copy of it.
#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/Operators.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/library.h>

namespace txla::aten {
namespace {

at::Tensor DetachAsAlias(const at::Tensor& self) { return at::_ops::alias::call(self); }

at::Tensor DetachNonDifferentiableView(c10::DispatchKeySet keys, const at::Tensor& self) {
  at::Tensor out;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    out = at::_ops::detach::redispatch(keys & c10::after_ADInplaceOrView_keyset, self);
  }
  if (at::functionalization::impl::isFunctionalTensor(out) &&
      out.unsafeGetTensorImpl() != self.unsafeGetTensorImpl()) {
    torch::autograd::impl::set_version_counter(out, torch::autograd::impl::version_counter(self));
    out.unsafeGetTensorImpl()->set_allow_tensor_metadata_change(false);
    return out;
  }
  // Everything else exactly as PyTorch's own ADInplaceOrView kernel does it.
  return torch::autograd::make_variable_non_differentiable_view(
      self, out, /*allow_tensor_metadata_change=*/false);
}

// The two registrations below replace PyTorch's kernels on purpose; the dispatcher's "Overriding
// a previously registered kernel" warning for them is swallowed (static initializers in one
// file run in order: silence, register, restore).
class QuietWarnings final : public c10::WarningHandler {
 public:
  void process(const c10::SourceLocation&, const std::string&, const bool) override {}
};

struct WarningScope {
  explicit WarningScope(c10::WarningHandler* handler)
      : previous(c10::Warning::get_warning_handler()) {
    c10::Warning::set_warning_handler(handler);
  }
  c10::WarningHandler* previous;
};

QuietWarnings quiet;
WarningScope silence_overrides(&quiet);

}  // namespace

TORCH_LIBRARY_IMPL(aten, Functionalize, m) { m.impl("detach", TORCH_FN(DetachAsAlias)); }

TORCH_LIBRARY_IMPL(aten, ADInplaceOrView, m) {
  m.impl("detach", TORCH_FN(DetachNonDifferentiableView));
}

}  // namespace txla::aten

namespace txla::aten {
namespace {
struct RestoreWarnings {
  RestoreWarnings() { c10::Warning::set_warning_handler(silence_overrides.previous); }
} restore_warnings;
}  // namespace
}  // namespace txla::aten
