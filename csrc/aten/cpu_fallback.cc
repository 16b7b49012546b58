#include "aten/cpu_fallback.h"

#include <ATen/native/CPUFallback.h>

#include "metrics/metrics.h"

namespace txla::aten {

namespace {

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

}  // namespace

void CpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  TORCH_CHECK(!IsViewOp(op.schema()), "the view op ", op.schema().name(),
              " reached the xla device on unwrapped tensors (from an ATen composite kernel "
              "running below functionalization); it cannot run through the CPU fallback without "
              "losing writes. Record the calling op whole: add it to csrc/ir/op_table.cc");
  // PyTorch/XLA names these counters by op name without overload: aten::nonzero.
  metrics::GetCounter(op.schema().name())->Add(1);
  at::native::cpu_fallback(op, stack);
}

}  // namespace txla::aten
