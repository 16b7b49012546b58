#include "aten/cpu_fallback.h"

#include <ATen/native/CPUFallback.h>

#include "metrics/metrics.h"

namespace txla::aten {

namespace {

// PyTorch's cpu_fallback moves Tensor and Tensor[] arguments to the CPU, but not Tensor?[] (the
// indices of index/index_put); those are moved here. They are inputs, never written.
void MoveOptionalTensorListsToCpu(const c10::FunctionSchema& schema, torch::jit::Stack* stack) {
  const size_t num_args = schema.arguments().size();
  for (size_t i = 0; i < num_args; ++i) {
    c10::IValue& v = (*stack)[stack->size() - num_args + i];
    if (!v.isList() || v.isTensorList()) continue;
    auto list = v.toList();
    if (list.empty() || !list.elementType()->cast<c10::OptionalType>()) continue;
    c10::List<c10::optional<at::Tensor>> moved;
    for (const c10::IValue& e : list) {
      moved.push_back(e.isTensor() ? c10::optional<at::Tensor>(e.toTensor().cpu()) : c10::nullopt);
    }
    v = c10::IValue(std::move(moved));
  }
}

// A tensor the op writes must be on the device: an in-place op on a CPU tensor reaches the xla
// kernels when another argument is an xla tensor (`cpu.index_copy_(0, xla_index, xla_values)`),
// and the fallback could not copy its result back into a CPU tensor anyway. Eager raises this
// for tensors on two devices.
void CheckWrittenArgumentsOnTheDevice(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  const size_t num_args = schema.arguments().size();
  for (size_t i = 0; i < num_args; ++i) {
    const c10::Argument& arg = schema.arguments()[i];
    if (arg.alias_info() == nullptr || !arg.alias_info()->isWrite()) continue;
    const c10::IValue& v = stack[stack.size() - num_args + i];
    if (!v.isTensor() || !v.toTensor().defined()) continue;
    const c10::Device device = v.toTensor().device();
    TORCH_CHECK(device.type() == c10::DeviceType::XLA,
                "Expected all tensors to be on the same device, but found at least two devices, xla and ",
                device, "! (", schema.name(), " writes its argument '", arg.name(), "', a ", device,
                " tensor, with xla operands: move it to the xla device first)");
  }
}

}  // namespace

// A view op returns an alias of its input; run on CPU it would return a copy, and a later write
// through it would be lost. On the device views are functionalized before they reach a kernel, so
// one arriving here comes from an ATen composite running below functionalization: the composite
// has to be recorded whole (listed in the op table) instead.
bool IsViewOp(const c10::FunctionSchema& schema) {
  for (const c10::Argument& ret : schema.returns()) {
    if (ret.alias_info() != nullptr && !ret.alias_info()->isWrite()) return true;
  }
  return false;
}

void CpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  TORCH_CHECK(!IsViewOp(op.schema()), "the view op ", op.schema().name(),
              " reached the xla device on unwrapped tensors (from an ATen composite kernel "
              "running below functionalization); it cannot run through the CPU fallback without "
              "losing writes. Record the calling op whole: add it to csrc/ir/op_table.cc");
  CheckWrittenArgumentsOnTheDevice(op.schema(), *stack);
  // PyTorch/XLA names these counters by op name without overload: aten::nonzero.
  metrics::GetCounter(op.schema().name())->Add(1);
  metrics::TraceSpan span("fallback", op.schema().name() + " (CPU fallback)");
  MoveOptionalTensorListsToCpu(op.schema(), stack);
  at::native::cpu_fallback(op, stack);
}

}  // namespace txla::aten
