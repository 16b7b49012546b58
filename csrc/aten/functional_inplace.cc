// In-place ops through functionalization without its Python meta reference.
//
// PyTorch's functionalization kernel for an in-place op (`p.addcmul_(g, g, value=v)`) first runs
// the op on meta copies of its arguments, to raise the errors an in-place op has and its
// functional variant lacks (`a.add_(b)` may not broadcast `a`; `ints.mul_(2.5)` may not store a
// float). For many ops (lerp_, addcmul_, addcdiv_, the binary arithmetic through PrimTorch refs)
// that meta kernel is Python: 20-100 us per call, ~15 ms of host time per step of an AdamW
// optimizer over a small GPT, more than the step's kernels. (PyTorch/XLA's users switch the
// reference off with TORCH_DISABLE_FUNCTIONALIZATION_META_REFERENCE=1 and lose the errors.)
//
// The in-place foreach ops (`torch._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)`, what
// optimizers run with foreach=True) had it worse: their meta reference runs the single-tensor
// Python meta kernel per tensor, so AdamW's foreach step took 4-5x its single-tensor one.
//
// For the in-place ops below, this kernel does what the generated one does (sync and unwrap the
// arguments, call the functional variant, replace/commit/sync `self`) and checks the result
// instead: the same shape as `self` and a dtype `self` can hold (the checks the meta reference
// exists for, with eager's messages), plus `self`'s own overlap. It replaces PyTorch's kernel for
// every functional tensor, not only xla ones (a Functionalize kernel cannot be per backend); the
// steps are those of PyTorch's generated code, so other users of functionalization (AOTAutograd)
// see the same results.
#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Operators.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "metrics/metrics.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>

namespace txla::aten {
namespace {

namespace fimpl = at::functionalization::impl;

// Every op here is `name_(Tensor(a!) self, <args>) -> Tensor(a!)` with a functional variant
// `name(Tensor self, <args>) -> Tensor` taking the same arguments (checked on first use).
const char* const kInplaceOps[] = {
    "add_.Tensor",    "add_.Scalar",     "sub_.Tensor",       "sub_.Scalar",    "mul_.Tensor",
    "mul_.Scalar",    "div_.Tensor",     "div_.Scalar",       "div_.Tensor_mode", "addcmul_",
    "addcdiv_",       "lerp_.Scalar",    "lerp_.Tensor",      "sqrt_",          "rsqrt_",
    "neg_",           "exp_",            "log_",              "abs_",           "reciprocal_",
    "relu_",          "sigmoid_",        "tanh_",             "clamp_",         "clamp_.Tensor",
    "clamp_min_",     "clamp_max_",      "masked_fill_.Scalar", "masked_fill_.Tensor",
    "hardtanh_",      "leaky_relu_",     "threshold_",        "fill_.Scalar",   "fill_.Tensor",
    "zero_",          "silu_",           "floor_",            "round_",         "sign_",
    // Activations written in place (MobileNet's hardswish_ and hardsigmoid_: ~40 us each through
    // the Python reference, a third of the model's host time) and more elementwise math.
    "hardswish_",     "hardsigmoid_",    "elu_",              "celu_",          "selu_",
    "mish_",          "gelu_",           "sin_",              "cos_",           "tan_",
    "atan_",          "sinh_",           "cosh_",             "erf_",           "erfinv_",
    "log1p_",         "log2_",           "exp2_",             "expm1_",         "trunc_",
    "ceil_",          "frac_",           "remainder_.Scalar", "remainder_.Tensor",
    "fmod_.Scalar",   "fmod_.Tensor",    "clamp_min_.Tensor", "clamp_max_.Tensor", "copysign_.Tensor",
    "hypot_",         "nan_to_num_",     "digamma_",          "lgamma_",        "logit_",
    "xlogy_.Tensor",  "addmm_",          "baddbmm_",          "tril_",          "triu_",
};

// Every op here is `_foreach_name_(Tensor(a!)[] self, <args>) -> ()` with a functional variant
// `_foreach_name(Tensor[] self, <args>) -> Tensor[]` taking the same arguments.
const char* const kForeachInplaceOps[] = {
    "_foreach_add_.Scalar",       "_foreach_add_.List",         "_foreach_add_.ScalarList",
    "_foreach_add_.Tensor",       "_foreach_sub_.Scalar",       "_foreach_sub_.List",
    "_foreach_sub_.ScalarList",   "_foreach_mul_.Scalar",       "_foreach_mul_.List",
    "_foreach_mul_.ScalarList",   "_foreach_mul_.Tensor",       "_foreach_div_.Scalar",
    "_foreach_div_.List",         "_foreach_div_.ScalarList",   "_foreach_div_.Tensor",
    "_foreach_addcmul_.Scalar",   "_foreach_addcmul_.ScalarList", "_foreach_addcmul_.Tensor",
    "_foreach_addcdiv_.Scalar",   "_foreach_addcdiv_.ScalarList", "_foreach_addcdiv_.Tensor",
    "_foreach_lerp_.Scalar",      "_foreach_lerp_.List",        "_foreach_lerp_.ScalarList",
    "_foreach_sqrt_",             "_foreach_neg_",              "_foreach_zero_",
    "_foreach_maximum_.List",     "_foreach_maximum_.Scalar",   "_foreach_clamp_max_.Scalar",
    "_foreach_clamp_min_.Scalar", "_foreach_pow_.Scalar",       "_foreach_pow_.List",
    "_foreach_reciprocal_",       "_foreach_exp_",              "_foreach_sign_",
    "_foreach_abs_",
};

// The functional variant of an in-place op, looked up once per op (keyed by the op's schema,
// which the dispatcher keeps in place for the process's life).
const c10::OperatorHandle& FunctionalVariant(const c10::OperatorHandle& inplace) {
  static std::mutex mutex;
  static std::unordered_map<const c10::FunctionSchema*, c10::OperatorHandle> variants;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = variants.find(&inplace.schema());
  if (found != variants.end()) return found->second;
  const c10::OperatorName& name = inplace.operator_name();
  std::string base = name.name.substr(0, name.name.size() - 1);  // aten::add_ -> aten::add
  auto functional = c10::Dispatcher::singleton().findSchema({base, name.overload_name});
  TORCH_INTERNAL_ASSERT(functional.has_value(), "no functional variant of ", name);
  const auto& in_args = inplace.schema().arguments();
  const auto& out_args = functional->schema().arguments();
  bool same = in_args.size() == out_args.size() && functional->schema().returns().size() == 1 &&
              inplace.schema().returns().size() <= 1;
  for (size_t i = 0; same && i < in_args.size(); ++i)
    same = *in_args[i].type() == *out_args[i].type() && in_args[i].kwarg_only() == out_args[i].kwarg_only();
  TORCH_INTERNAL_ASSERT(same, name, " and its functional variant take different arguments");
  return variants.emplace(&inplace.schema(), *functional).first->second;
}

// What running the in-place op on meta tensors would have raised, checked on the result of its
// functional variant.
void CheckInplaceResult(const at::Tensor& self, const at::Tensor& result) {
  if (!self.unsafeGetTensorImpl()->has_symbolic_sizes_strides() &&
      !result.unsafeGetTensorImpl()->has_symbolic_sizes_strides()) {
    TORCH_CHECK(self.sizes() == result.sizes(), "output with shape ", self.sizes(),
                " doesn't match the broadcast shape ", result.sizes());
  }
  TORCH_CHECK(c10::canCast(result.scalar_type(), self.scalar_type()), "result type ",
              result.scalar_type(), " can't be cast to the desired output type ",
              self.scalar_type());
}

// Whether a list holds functional tensors: all of them or none, as PyTorch requires.
bool AreFunctionalTensors(const c10::List<at::Tensor>& list) {
  size_t functional = 0;
  for (const at::Tensor& t : list) functional += fimpl::isFunctionalTensor(t) ? 1 : 0;
  TORCH_INTERNAL_ASSERT(functional == 0 || functional == list.size(),
                        "Functionalization encountered a list of tensors where some are functional "
                        "and some are not, which is not currently supported.");
  return functional > 0;
}

// Arguments handed below functionalization: each functional tensor (alone or in a list) synced
// and unwrapped.
void UnwrapArguments(torch::jit::Stack* stack, size_t first) {
  for (size_t i = first; i < stack->size(); ++i) {
    c10::IValue& v = (*stack)[i];
    if (v.isTensor() && fimpl::isFunctionalTensor(v.toTensor())) {
      fimpl::sync(v.toTensor());
      v = fimpl::from_functional_tensor(v.toTensor());
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> list = v.toTensorList();
      if (!AreFunctionalTensors(list)) continue;
      c10::List<at::Tensor> inner;
      inner.reserve(list.size());
      for (const at::Tensor& t : list) {
        fimpl::sync(t);
        inner.push_back(fimpl::from_functional_tensor(t));
      }
      v = std::move(inner);
    }
  }
}

// What the meta reference raised for a written-to tensor whose elements share memory.
void CheckNoInternalOverlap(const at::Tensor& self) {
  TORCH_CHECK(at::has_internal_overlap(self) != at::MemOverlap::Yes,
              "unsupported operation: more than one element of the written-to tensor refers to a "
              "single memory location. Please clone() the tensor before performing the operation.");
}

// Makes `result` the new value of the functional tensor `self` (and of the views of its base).
void CommitResult(const at::Tensor& self, const at::Tensor& result) {
  at::Tensor inner = fimpl::from_functional_tensor(self);
  fimpl::replace_(self, result);
  fimpl::commit_update(self);
  fimpl::sync(self);
  fimpl::propagate_xla_data_direct(inner, fimpl::from_functional_tensor(self));
}

void FunctionalizeInplace(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                          torch::jit::Stack* stack) {
  const size_t num_args = op.schema().arguments().size();
  const size_t first = stack->size() - num_args;
  const at::Tensor self = (*stack)[first].toTensor();
  if (!fimpl::isFunctionalTensor(self)) {
    // As PyTorch's kernel: a plain tensor mutated by a functional one is an error (unless an xla
    // tensor is involved: cpu_tensor.copy_(xla_tensor) is valid); otherwise run below.
    bool other_functional = false, other_xla = false;
    for (size_t i = first + 1; i < stack->size(); ++i) {
      const c10::IValue& v = (*stack)[i];
      if (!v.isTensor()) continue;
      other_functional |= fimpl::isFunctionalTensor(v.toTensor());
      other_xla |= v.toTensor().device().type() == c10::DeviceType::XLA;
    }
    TORCH_INTERNAL_ASSERT(other_xla || !other_functional,
                          "mutating a non-functional tensor with a functional tensor is not "
                          "allowed. Please ensure that all of your inputs are wrapped inside of a "
                          "functionalize() call.");
    for (size_t i = first + 1; i < stack->size(); ++i) {
      c10::IValue& v = (*stack)[i];
      if (v.isTensor() && fimpl::isFunctionalTensor(v.toTensor()))
        v = fimpl::from_functional_tensor(v.toTensor());
    }
    at::AutoDispatchSkipFunctionalize guard;
    op.callBoxed(stack);
    return;
  }
  CheckNoInternalOverlap(self);
  UnwrapArguments(stack, first);
  at::Tensor result;
  {
    at::AutoDispatchSkipFunctionalize guard;
    FunctionalVariant(op).callBoxed(stack);
    result = stack->back().toTensor();
    stack->pop_back();
  }
  CheckInplaceResult(self, result);
  TXLA_COUNTER("FunctionalizedInplace", 1);
  CommitResult(self, result);
  stack->push_back(self);
}

// Whether eager's tensor-by-tensor order matters: two tensors of `self` share memory (views of
// one base), or an operand reads what another position of `self` writes. One functional call
// computes every result from the values before the op, as eager's loop does not.
// (A sorted array, one allocation a call: a hash map's node per tensor was a tenth of an
// optimizer step's allocations.)
bool ListsAlias(c10::ArrayRef<c10::IValue> args) {
  using Entry = std::pair<const void*, size_t>;  // storage, position in self
  auto storage = [](const at::Tensor& t) -> const void* { return t.unsafeGetTensorImpl()->storage().unsafeGetStorageImpl(); };
  const c10::ArrayRef<c10::IValue> self = args[0].toListRef();
  std::vector<Entry> positions;
  positions.reserve(self.size());
  for (size_t i = 0; i < self.size(); ++i) positions.emplace_back(storage(self[i].toTensor()), i);
  std::sort(positions.begin(), positions.end());
  for (size_t i = 1; i < positions.size(); ++i)
    if (positions[i].first == positions[i - 1].first) return true;
  for (size_t a = 1; a < args.size(); ++a) {
    if (!args[a].isTensorList()) continue;
    const c10::ArrayRef<c10::IValue> list = args[a].toListRef();
    for (size_t j = 0; j < list.size(); ++j) {
      const at::Tensor& t = list[j].toTensor();
      if (!t.defined()) continue;
      auto found = std::lower_bound(positions.begin(), positions.end(), Entry{storage(t), 0});
      if (found != positions.end() && found->first == storage(t) && found->second != j) return true;
    }
  }
  return false;
}

// Whether every list argument is as long as `self` (otherwise the functional op raises eager's
// error).
bool ListsMatch(c10::ArrayRef<c10::IValue> args) {
  const size_t n = args[0].toTensorList().size();
  for (const c10::IValue& v : args)
    if (v.isList() && v.toListRef().size() != n) return false;
  return true;
}

void FunctionalizeForeachInplace(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                                 torch::jit::Stack* stack);

// Eager's order, for aliasing lists: the op on one position at a time.
void FunctionalizeForeachInplaceInOrder(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                                        torch::jit::Stack* stack, size_t first) {
  const std::vector<c10::IValue> args(stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end());
  stack->resize(first);
  const size_t n = args[0].toTensorList().size();
  for (size_t i = 0; i < n; ++i) {
    torch::jit::Stack one;
    for (const c10::IValue& v : args) {
      if (!v.isList()) {
        one.push_back(v);
        continue;
      }
      c10::impl::GenericList list = v.toList();
      c10::impl::GenericList element(list.elementType());
      element.push_back(list.get(i));
      one.emplace_back(std::move(element));
    }
    FunctionalizeForeachInplace(op, keys, &one);
  }
}

// The foreach form of FunctionalizeInplace: one functional call for the whole list, then each
// tensor of `self` checked and replaced as the single-tensor kernel does.
void FunctionalizeForeachInplace(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                                 torch::jit::Stack* stack) {
  const size_t num_args = op.schema().arguments().size();
  const size_t first = stack->size() - num_args;
  const c10::List<at::Tensor> self = (*stack)[first].toTensorList();
  const c10::ArrayRef<c10::IValue> args(stack->data() + first, num_args);
  if (self.size() > 1 && ListsMatch(args) && ListsAlias(args)) {
    FunctionalizeForeachInplaceInOrder(op, keys, stack, first);
    return;
  }
  if (!AreFunctionalTensors(self)) {
    // Plain tensors (Adam's step counts on the CPU): run below, functional arguments unwrapped.
    UnwrapArguments(stack, first + 1);
    at::AutoDispatchSkipFunctionalize guard;
    op.callBoxed(stack);
    return;
  }
  for (const at::Tensor& t : self) CheckNoInternalOverlap(t);
  UnwrapArguments(stack, first);
  std::vector<at::Tensor> results;
  {
    at::AutoDispatchSkipFunctionalize guard;
    FunctionalVariant(op).callBoxed(stack);
    results = stack->back().toTensorVector();
    stack->pop_back();
  }
  TORCH_CHECK(results.size() == self.size(), op.schema().name(), " returned ", results.size(),
              " tensors for ", self.size());
  for (size_t i = 0; i < self.size(); ++i) CheckInplaceResult(self[i], results[i]);
  TXLA_COUNTER("FunctionalizedForeachInplace", 1);
  for (size_t i = 0; i < self.size(); ++i) CommitResult(self[i], results[i]);
}

// These registrations replace PyTorch's kernels on purpose; the dispatcher's "Overriding a
// previously registered kernel" warning for them is swallowed (static initializers in one file
// run in order: silence, register, restore).
class QuietWarnings final : public c10::WarningHandler {
 public:
  void process(const c10::Warning&) override {}
};

struct WarningScope {
  explicit WarningScope(c10::WarningHandler* handler)
      : previous(c10::WarningUtils::get_warning_handler()) {
    c10::WarningUtils::set_warning_handler(handler);
  }
  c10::WarningHandler* previous;
};

QuietWarnings quiet;
WarningScope silence_overrides(&quiet);

}  // namespace

TORCH_LIBRARY_IMPL(aten, Functionalize, m) {
  for (const char* name : kInplaceOps)
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&FunctionalizeInplace>());
  for (const char* name : kForeachInplaceOps)
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&FunctionalizeForeachInplace>());
}

namespace {
struct RestoreWarnings {
  RestoreWarnings() { c10::WarningUtils::set_warning_handler(silence_overrides.previous); }
} restore_warnings;
}  // namespace

}  // namespace txla::aten
