// Kernels at the edges of the lazy world: creating device tensors, copying between host and
// device, reading scalars. These are where functional wrappers are added for the user (see
// MakeEntryXlaTensor) and where host data crosses over.
#include "aten/copy_kernels.h"

#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/Functions.h>

#include "aten/lazy_kernel.h"
#include "graph/graph_executor.h"
#include "ir/op_names.h"
#include "ir/op_table.h"
#include "ir/shape_rules.h"
#include "runtime/device.h"
#include "tensor/bridge.h"
#include "tensor/tensor_impl.h"

namespace txla::aten {
namespace {

void RecordTableOp(const char* name, torch::jit::Stack* stack) {
  const ir::OpInfo* info = ir::FindOp(name);
  TORCH_INTERNAL_ASSERT(info != nullptr, name, " is not in the op table");
  RecordOp(*info, info->handle(), stack);
}

}  // namespace

// empty / empty_strided: the device has no uninitialized memory to hand out; an empty tensor is
// recorded as zeros (cheap, deterministic, and no host transfer).
void EmptyKernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const bool strided = op.schema().name() == "aten::empty_strided";
  const size_t num_args = op.schema().arguments().size();
  auto args = torch::jit::last(*stack, num_args);
  // zeros(SymInt[] size, *, ScalarType? dtype, Layout? layout, Device? device, bool? pin_memory)
  torch::jit::Stack zeros{args[0], args[strided ? 2 : 1], c10::IValue(), args[strided ? 4 : 3],
                          c10::IValue()};
  if (zeros[1].isNone())
    zeros[1] = c10::IValue(c10::typeMetaToScalarType(c10::get_default_dtype()));
  torch::jit::drop(*stack, num_args);
  RecordTableOp(ir::op::aten_zeros, &zeros);
  stack->push_back(std::move(zeros.back()));
}

// _efficientzerotensor: autograd's symbolic zeros. The device has no zero-tensor kind, so these
// are plain zeros (as in PyTorch/XLA); same arguments as zeros.
void EfficientZeroTensorKernel(const c10::OperatorHandle& op, c10::DispatchKeySet,
                               torch::jit::Stack* stack) {
  RecordTableOp(ir::op::aten_zeros, stack);
}

// _to_copy: host -> device, device -> host, device -> other device, or a cast on the device.
void ToCopyKernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const metrics::ElapsedSample traced(LazyTracingMetric());
  auto args = torch::jit::last(*stack, 7);
  at::Tensor self = args[0].toTensor();
  c10::optional<c10::ScalarType> dtype = args[1].toOptional<c10::ScalarType>();
  c10::optional<c10::Device> device = args[3].toOptional<c10::Device>();
  c10::ScalarType target_dtype = dtype.value_or(self.scalar_type());
  LazyTensorPtr lt = TryGetLazyTensor(self);
  at::Tensor result;
  if (!lt) {
    TORCH_INTERNAL_ASSERT(device && device->type() == c10::DeviceType::XLA);
    at::Tensor host = self.to(at::TensorOptions().dtype(target_dtype).device(c10::kCPU));
    if (runtime::SpmdEnabled())  // the virtual device: uploaded when sharded or used
      result = MakeEntryXlaTensor(LazyTensor::FromHost(host.contiguous().clone(), target_dtype, DeviceOrdinal(*device)));
    else
      result = MakeEntryXlaTensor(LazyTensor::FromData(TransferToDevice(host, DeviceOrdinal(*device)),
                                                       target_dtype, DeviceOrdinal(*device)));
  } else if (device && device->type() != c10::DeviceType::XLA) {
    at::Tensor host = graph::ToHost(lt);
    result = host.to(at::TensorOptions().dtype(target_dtype).device(*device),
                     args[5].toBool(), /*copy=*/false);
  } else if (device && DeviceOrdinal(*device) != lt->device()) {
    at::Tensor host = graph::ToHost(lt).to(target_dtype);
    int ordinal = DeviceOrdinal(*device);
    result = MakeEntryXlaTensor(
        LazyTensor::FromData(TransferToDevice(host, ordinal), target_dtype, ordinal));
  } else if (target_dtype == lt->dtype()) {
    result = ShareValue(lt);  // values are immutable: a copy can share
  } else {
    torch::jit::Stack cast(args.begin(), args.end());
    cast[3] = c10::IValue();
    RecordTableOp(ir::op::aten__to_copy, &cast);
    result = cast.back().toTensor();
  }
  torch::jit::drop(*stack, 7);
  stack->emplace_back(std::move(result));
}

// copy(self, src): src broadcast and cast into self's shape and dtype. A host src is moved over.
void CopyKernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const metrics::ElapsedSample traced(LazyTracingMetric());
  auto args = torch::jit::last(*stack, 3);
  at::Tensor self = args[0].toTensor();
  at::Tensor src = args[1].toTensor();
  LazyTensorPtr self_lt = GetLazyTensor(self, "aten::copy");
  LazyTensorPtr src_lt = TryGetLazyTensor(src);
  if (!src_lt && src.dim() > 0) {
    at::Tensor host = src.to(at::TensorOptions().dtype(src.scalar_type()).device(c10::kCPU));
    src_lt = LazyTensor::FromData(TransferToDevice(host, self_lt->device()), host.scalar_type(),
                                  self_lt->device());
    src = MakeXlaTensor(src_lt);
  }
  at::Tensor result;
  if (src_lt && src_lt->shape() == self_lt->shape()) {
    result = ShareValue(src_lt);
  } else {
    torch::jit::Stack copy{self, src, args[2]};
    RecordTableOp(ir::op::aten_copy, &copy);
    result = copy.back().toTensor();
  }
  torch::jit::drop(*stack, 3);
  stack->emplace_back(std::move(result));
}

// _copy_from(self, dst): the in-place copy_ below functionalization (CPU fallback write-backs,
// composite kernels). dst changes in place.
at::Tensor CopyFrom(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  const metrics::ElapsedSample traced(LazyTracingMetric());
  LazyTensorPtr dst_lt = TryGetLazyTensor(dst);
  LazyTensorPtr self_lt = TryGetLazyTensor(self);
  if (!dst_lt) {
    at::Tensor host = graph::ToHost(self_lt);
    const_cast<at::Tensor&>(dst).copy_(host);
    return dst;
  }
  at::Tensor value = at::_ops::copy::call(MakeXlaTensor(dst_lt), self, non_blocking);
  dst_lt->SetIrValue(GetLazyTensor(value, "aten::_copy_from")->GetIrValue());
  return dst;
}

// _copy_from_and_resize(self, dst): as _copy_from, but dst takes self's shape.
at::Tensor CopyFromAndResize(const at::Tensor& self, const at::Tensor& dst) {
  const metrics::ElapsedSample traced(LazyTracingMetric());
  LazyTensorPtr dst_lt = TryGetLazyTensor(dst);
  LazyTensorPtr self_lt = TryGetLazyTensor(self);
  if (!dst_lt) {
    at::Tensor host = graph::ToHost(self_lt);
    const_cast<at::Tensor&>(dst).resize_as_(host).copy_(host);
    return dst;
  }
  if (self_lt) {
    dst_lt->SetIrValue(self_lt->GetIrValue());
  } else {
    // The destination may be resized (an out= op's fallback into an empty tensor): its new
    // value carries the host result's shape.
    at::Tensor host = self.to(dst.scalar_type());
    runtime::BufferPtr data = TransferToDevice(host, dst_lt->device());
    dst_lt->SetIrValue(ir::Value{ir::Node::DeviceData(std::move(data), ir::Shape(host.scalar_type(), host.sizes())), 0});
  }
  if (auto* impl = dynamic_cast<XlaTensorImpl*>(dst.unsafeGetTensorImpl())) impl->RefreshMetadata();
  return dst;
}

at::Tensor Clone(const at::Tensor& self, c10::optional<c10::MemoryFormat>) {
  const metrics::ElapsedSample traced(LazyTracingMetric());
  return ShareValue(GetLazyTensor(self, "aten::clone"));
}

at::Scalar LocalScalarDense(const at::Tensor& self) {
  // PyTorch/XLA counts a value read into Python (.item(), bool(t)) with its CPU fallbacks.
  TXLA_COUNTER("aten::_local_scalar_dense", 1);
  LazyTensorPtr lt = GetLazyTensor(self, "aten::_local_scalar_dense");
  TORCH_CHECK(lt->shape().numel() == 1, "a Tensor with ", lt->shape().numel(),
              " elements cannot be converted to Scalar");
  return graph::ToHost(lt, ".item()").item();
}

at::Tensor Lift(const at::Tensor& self) {
  if (at::functionalization::impl::isFunctionalTensor(self)) return self;
  return at::functionalization::impl::to_functional_tensor(self);
}

}  // namespace txla::aten
