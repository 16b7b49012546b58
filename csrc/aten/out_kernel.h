// out= overloads on raw xla tensors: ATen composite kernels that run below functionalization
// (and code holding unwrapped tensors) reach the device with an out= overload that
// functionalization would otherwise have rewritten (where.self_out, ...).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace txla::aten {

// Records the out= op's functional twin from the op table (where.self_out -> where.self) and makes
// its results the out tensors' new values, as functionalization does above the device. False,
// with the stack untouched, when the op has no such twin or an out tensor's shape or dtype differs
// from its result's (the caller then runs the op on the CPU).
bool RecordOutVariant(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace txla::aten
