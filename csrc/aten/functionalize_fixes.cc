// Corrections to PyTorch's functionalization. 1 and 2 are 1.13's bugs, fixed in torch 2.x (the
// tests that found them stay: test_lazy's view/detach and in-place leak tests); 3 applies to both.
//
// 1. detach of a view.
//
// Symptom: g.masked_fill_(...); v = g.t(); d = v.detach() gives d the right sizes, but the next
// sync regenerates d's value from the storage base without the transpose (autograd hits this
// when it accumulates a gradient that went through a view after an in-place op).
// Cause: autograd's ADInplaceOrView kernel for detach makes its result with
// shallow_copy_and_detach, and 1.13's FunctionalTensorWrapper drops the view chain in that copy.
// Fix: below autograd a detach is an alias; record it as one at the Functionalize key (a fresh
// wrapper that keeps the view chain and shares storage, so `g.detach().mul_(c)` still writes
// through), and at ADInplaceOrView hand that wrapper out instead of a shallow copy of it.
//
// 2. In-place ops on functional tensors leak. 1.13's commit_update() records each in-place
// result in the storage's update list and marks the tensor up to date, so the list is never
// applied or cleared while no view needs regenerating: every optimizer step kept every old
// parameter, gradient and optimizer-state value (and its device buffer) alive, ~10 MB a step for
// an MLP, until the buffer pool overflowed and steps slowed down twice over. For the in-place
// ops training loops use, the kernel below runs the op in place on the unwrapped lazy tensor,
// records the update for any aliases (views of the same storage) and folds it into the storage
// at once, which empties the list.
//
// 3. Collectives. torch.distributed's ops (c10d::allreduce_, broadcast_, ...) carry no alias
// annotations, so functionalization's fallback treats them as functional: it hands the process
// group unwrapped tensors, the group writes its results into those behind the wrappers' back
// (views of them, such as DDP's gradient-bucket views, never see the update), and the work's
// result holds raw tensors that DDP then takes views of (as_strided below functionalization).
// These ops pass through functionalization untouched instead: the process group receives the
// user's (wrapped) tensors, and its in-place writes are functionalized like any other.
#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/Operators.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/library.h>
#include <torch/version.h>

namespace txla::aten {
namespace {

void PassThrough(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                 torch::jit::Stack* stack) {
  op.redispatchBoxed(keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER,
                                                c10::DispatchKey::Functionalize),
                     stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(c10d, Functionalize, m) {
  for (const char* name : {"broadcast_", "allreduce_", "allgather_", "reduce_scatter_", "reduce_",
                           "gather_", "scatter_", "alltoall_", "send", "recv_"})
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&PassThrough>());
}

#if TORCH_VERSION_MAJOR < 2
namespace {

void FunctionalInplace(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                       torch::jit::Stack* stack) {
  const size_t num_args = op.schema().arguments().size();
  const size_t first = stack->size() - num_args;
  at::Tensor self = (*stack)[first].toTensor();
  if (!at::functionalization::impl::isFunctionalTensor(self)) {
    op.redispatchBoxed(keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER,
                                                  c10::DispatchKey::Functionalize),
                       stack);
    return;
  }
  for (size_t i = first; i < stack->size(); ++i) {
    c10::IValue& v = (*stack)[i];
    if (v.isTensor() && at::functionalization::impl::isFunctionalTensor(v.toTensor())) {
      at::functionalization::impl::sync(v.toTensor());
      v = at::functionalization::impl::from_functional_tensor(v.toTensor());
    }
  }
  {
    c10::impl::ExcludeDispatchKeyGuard below(c10::DispatchKey::Functionalize);
    op.callBoxed(stack);  // the xla in-place kernel updates the unwrapped lazy tensor
  }
  auto* wrapper = at::functionalization::impl::unsafeGetFunctionalWrapper(self);
  wrapper->commit_update();
  wrapper->apply_updates();
  stack->back() = self;
}

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

// The in-place ops of optimizers and gradient accumulation; each has an xla in-place kernel
// (register.cc) that the functional path above calls.
const char* const kLeakFixedInplaceOps[] = {
    "add_.Tensor", "sub_.Tensor", "mul_.Tensor", "div_.Tensor", "add_.Scalar", "mul_.Scalar",
    "div_.Scalar", "addcmul_", "addcdiv_", "zero_", "fill_.Scalar", "lerp_.Scalar", "sqrt_",
    "copy_",
};

TORCH_LIBRARY_IMPL(aten, Functionalize, m) {
  m.impl("detach", TORCH_FN(DetachAsAlias));
  for (const char* name : kLeakFixedInplaceOps)
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&FunctionalInplace>());
}

TORCH_LIBRARY_IMPL(aten, ADInplaceOrView, m) {
  m.impl("detach", TORCH_FN(DetachNonDifferentiableView));
}

namespace {
struct RestoreWarnings {
  RestoreWarnings() { c10::Warning::set_warning_handler(silence_overrides.previous); }
} restore_warnings;
}  // namespace
#endif  // TORCH_VERSION_MAJOR < 2
}  // namespace txla::aten
