// Ops without a lazy lowering run on CPU: inputs are materialized, the op runs with ATen's CPU
// kernel, results come back as xla tensors, and the counter aten::<name> counts the trip.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace txla::aten {

void CpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// Whether the op returns an alias of an input (a view), as its schema says.
bool IsViewOp(const c10::FunctionSchema& schema);

}  // namespace txla::aten
