// Registration with the dispatcher: every op-table entry gets the recording kernel, a few ops get
// the edge kernels of copy_kernels.h, and everything else falls back to CPU.
#include <torch/library.h>

#include <string>

#include "aten/copy_kernels.h"
#include "aten/cpu_fallback.h"
#include "aten/lazy_kernel.h"
#include "aten/out_kernel.h"
#include "ir/op_table.h"
#include "tensor/bridge.h"

namespace txla::aten {
namespace {

// `name`'s op under another base name, same overload ("select.int" -> "select_copy.int").
const ir::OpInfo* Twin(const c10::OperatorName& name, const std::string& base) {
  return ir::FindOp(base + (name.overload_name.empty() ? "" : "." + name.overload_name));
}

// An in-place op on a raw xla tensor as its functional twin (same arguments): the twin is
// recorded and its result becomes `self`'s new value. False, the stack as it was, when the
// result does not keep self's shape and dtype (the CPU fallback then gives eager's answer or
// error).
bool RecordInplace(const ir::OpInfo& twin, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t num_args = op.schema().arguments().size();
  const size_t first = stack->size() - num_args;
  at::Tensor self = (*stack)[first].toTensor();
  torch::jit::Stack functional(stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end());
  RecordOp(twin, twin.handle(), &functional);
  const at::Tensor result = functional.back().toTensor();
  if (result.sizes() != self.sizes() || result.scalar_type() != self.scalar_type()) return false;
  GetLazyTensor(self, op.schema().name().c_str())->SetIrValue(GetLazyTensor(result, "inplace")->GetIrValue());
  torch::jit::drop(*stack, num_args);
  stack->emplace_back(std::move(self));
  return true;
}

// A view op on raw xla tensors (an ATen composite, or a custom op's body, running below
// functionalization) is recorded as its `_copy` twin, which takes the same arguments: reads of
// the view are right, and its results are marked so that a write through them, which would have
// to reach the viewed tensor, raises instead of being lost.
bool RecordViewAsCopy(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (!IsViewOp(op.schema())) return false;
  const c10::OperatorName& name = op.schema().operator_name();
  const ir::OpInfo* twin = Twin(name, name.name + "_copy");
  if (twin == nullptr) return false;
  RecordOp(*twin, twin->handle(), stack);
  const size_t results = op.schema().returns().size();
  for (size_t k = stack->size() - results; k < stack->size(); ++k) {
    const c10::IValue& v = (*stack)[k];
    if (v.isTensor()) GetLazyTensor(v.toTensor(), "view")->MarkCopyOfView();
    if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorList().vec()) GetLazyTensor(t, "view")->MarkCopyOfView();
  }
  return true;
}

// Any in-place op on a raw xla tensor that InplaceKernel is not registered for (`bitwise_and_` in
// isclose, under allclose) whose functional twin (the name without its trailing underscore) is
// in the op table.
bool RecordInplaceAsFunctional(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const c10::OperatorName& name = schema.operator_name();
  const auto& arguments = schema.arguments();
  if (name.name.size() < 2 || name.name.back() != '_' || arguments.empty() || schema.returns().size() != 1 ||
      arguments[0].alias_info() == nullptr || !arguments[0].alias_info()->isWrite())
    return false;
  const ir::OpInfo* twin = Twin(name, name.name.substr(0, name.name.size() - 1));
  if (twin == nullptr || twin->schema().arguments().size() != arguments.size()) return false;
  // (A host tensor written with xla operands is the CPU fallback's to refuse, with eager's message.)
  const c10::IValue& self = (*stack)[stack->size() - arguments.size()];
  if (!self.isTensor() || !IsXlaTensor(self.toTensor())) return false;
  return RecordInplace(*twin, op, stack);
}

void FallbackKernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (RecordOutVariant(op, stack)) return;
  if (RecordViewAsCopy(op, stack)) return;
  if (RecordInplaceAsFunctional(op, stack)) return;
  CpuFallback(op, stack);
}

// In-place ops on raw xla tensors: ATen's composite kernels (ones_like, zeros_like, ...) run
// below functionalization and write into the tensors they create. Each records its functional
// twin from the op table (RecordInplace).
class InplaceKernel final : public c10::OperatorKernel {
 public:
  explicit InplaceKernel(const ir::OpInfo* functional) : functional_(functional) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
    if (!RecordInplace(*functional_, op, stack)) CpuFallback(op, stack);
  }

 private:
  const ir::OpInfo* functional_;
};

// alias_copy / detach_copy (what functionalization turns alias and detach into): the result is
// the argument's value, shared; nothing is recorded, so `model.to(xla)` leaves no alias_copy per
// parameter for the next barrier and `p.detach().cpu()` reads the buffer without a graph.
at::Tensor IdentityKernel(const at::Tensor& self) { return ShareValue(GetLazyTensor(self, "aten::alias_copy")); }

// Every op-table entry of `ns` ("aten" or our own "txla") records through the lazy kernel.
void RegisterTableOps(torch::Library& m, const std::string& ns) {
  const std::string prefix = ns + "::";
  for (const ir::OpInfo& info : ir::OpTable()) {
    if (info.Has(ir::kEdgeKernel) || info.name.rfind(prefix, 0) != 0) continue;
    m.impl(info.name.substr(prefix.size()).c_str(),
           torch::CppFunction::makeFromBoxedFunctor(std::make_unique<LazyKernel>(&info)));
  }
}

}  // namespace

TORCH_LIBRARY_IMPL(txla, XLA, m) { RegisterTableOps(m, "txla"); }

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  RegisterTableOps(m, "aten");
  m.impl("empty.memory_format", torch::CppFunction::makeFromBoxedFunction<&EmptyKernel>());
  m.impl("empty_strided", torch::CppFunction::makeFromBoxedFunction<&EmptyKernel>());
  m.impl("_efficientzerotensor",
         torch::CppFunction::makeFromBoxedFunction<&EfficientZeroTensorKernel>());
  m.impl("_to_copy", torch::CppFunction::makeFromBoxedFunction<&ToCopyKernel>());
  m.impl("copy", torch::CppFunction::makeFromBoxedFunction<&CopyKernel>());
  m.impl("_copy_from", TORCH_FN(CopyFrom));
  m.impl("_copy_from_and_resize", TORCH_FN(CopyFromAndResize));
  m.impl("clone", TORCH_FN(Clone));
  m.impl("_local_scalar_dense", TORCH_FN(LocalScalarDense));
  m.impl("lift", TORCH_FN(Lift));
  // torch.tensor(data, device='xla') copies through ATen's composite _to_copy (dispatched on the
  // host tensor) and hands the raw result to lift_fresh: wrap it there like every xla tensor,
  // or ops on it would run below functionalization.
  m.impl("lift_fresh", TORCH_FN(Lift));
  m.impl("alias_copy", TORCH_FN(IdentityKernel));
  m.impl("detach_copy", TORCH_FN(IdentityKernel));
  for (const ir::OpInfo& info : ir::OpTable()) {
    if (info.inplace.empty()) continue;
    m.impl(info.inplace.c_str(), torch::CppFunction::makeFromBoxedFunctor(std::make_unique<InplaceKernel>(&info)));
  }
}

TORCH_LIBRARY_IMPL(_, XLA, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&FallbackKernel>());
}

}  // namespace txla::aten
