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

// A view op on raw xla tensors (an ATen composite, or a custom op's body, running below
// functionalization) is recorded as its `_copy` twin, which takes the same arguments: reads of
// the view are right, and its results are marked so that a write through them, which would have
// to reach the viewed tensor, raises instead of being lost.
bool RecordViewAsCopy(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (!IsViewOp(op.schema())) return false;
  const c10::OperatorName& name = op.schema().operator_name();
  const ir::OpInfo* twin =
      ir::FindOp(name.name + "_copy" + (name.overload_name.empty() ? "" : "." + name.overload_name));
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

// Any other in-place op on a raw xla tensor (`bitwise_and_` in isclose, under allclose): as
// InplaceKernel does for the listed ones, its functional twin (same name without the trailing
// underscore, same arguments) is recorded and becomes `self`'s new value, when the result keeps
// self's shape and dtype (otherwise the CPU fallback gives eager's answer or error).
bool RecordInplaceAsFunctional(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const c10::OperatorName& name = schema.operator_name();
  const auto& arguments = schema.arguments();
  if (name.name.size() < 2 || name.name.back() != '_' || arguments.empty() || schema.returns().size() != 1 ||
      arguments[0].alias_info() == nullptr || !arguments[0].alias_info()->isWrite())
    return false;
  const ir::OpInfo* twin = ir::FindOp(name.name.substr(0, name.name.size() - 1) +
                                      (name.overload_name.empty() ? "" : "." + name.overload_name));
  if (twin == nullptr || twin->schema().arguments().size() != arguments.size()) return false;
  const size_t first = stack->size() - arguments.size();
  // (A host tensor written with xla operands is the CPU fallback's to refuse, with eager's message.)
  if (!(*stack)[first].isTensor() || !IsXlaTensor((*stack)[first].toTensor())) return false;
  at::Tensor self = (*stack)[first].toTensor();
  torch::jit::Stack functional(stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end());
  RecordOp(*twin, twin->handle(), &functional);
  const at::Tensor result = functional.back().toTensor();
  if (result.sizes() != self.sizes() || result.scalar_type() != self.scalar_type()) return false;
  GetLazyTensor(self, schema.name().c_str())->SetIrValue(GetLazyTensor(result, "inplace")->GetIrValue());
  torch::jit::drop(*stack, arguments.size());
  stack->emplace_back(std::move(self));
  return true;
}

void FallbackKernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (RecordOutVariant(op, stack)) return;
  if (RecordViewAsCopy(op, stack)) return;
  if (RecordInplaceAsFunctional(op, stack)) return;
  CpuFallback(op, stack);
}

// In-place ops on raw xla tensors: ATen's composite kernels (ones_like, zeros_like, ...) run
// below functionalization and write into the tensors they create. Each records its functional
// twin from the op table and makes the result the tensor's new value. Both schemas have the
// same arguments, so the stack is handed over as it is.
class InplaceKernel final : public c10::OperatorKernel {
 public:
  explicit InplaceKernel(const ir::OpInfo* functional) : functional_(functional) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
    const size_t num_args = op.schema().arguments().size();
    at::Tensor self = (*stack)[stack->size() - num_args].toTensor();
    RecordOp(*functional_, functional_->handle(), stack);
    at::Tensor result = stack->back().toTensor();
    stack->pop_back();
    GetLazyTensor(self, op.schema().name().c_str())
        ->SetIrValue(GetLazyTensor(result, "inplace")->GetIrValue());
    stack->emplace_back(std::move(self));
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
