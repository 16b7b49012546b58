#include "aten/cpu_fallback.h"

#include <ATen/native/CPUFallback.h>

#include "metrics/metrics.h"

namespace txla::aten {

void CpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  // PyTorch/XLA names these counters by op name without overload: aten::nonzero.
  metrics::GetCounter(op.schema().name())->Add(1);
  at::native::cpu_fallback(op, stack);
}

}  // namespace txla::aten
