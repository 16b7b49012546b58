// Entry-point and copy kernels of the xla device (see copy_kernels.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace txla::aten {

void EmptyKernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);
void EfficientZeroTensorKernel(const c10::OperatorHandle& op, c10::DispatchKeySet,
                               torch::jit::Stack* stack);
void ToCopyKernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);
void CopyKernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);
at::Tensor CopyFrom(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);
at::Tensor CopyFromAndResize(const at::Tensor& self, const at::Tensor& dst);
at::Tensor Clone(const at::Tensor& self, c10::optional<c10::MemoryFormat> memory_format);
at::Scalar LocalScalarDense(const at::Tensor& self);
at::Tensor Lift(const at::Tensor& self);

}  // namespace txla::aten
