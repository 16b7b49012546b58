#include "tensor/bridge.h"

#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/Functions.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <cstring>

#include "ir/shape.h"
#include "metrics/metrics.h"
#include "runtime/scalar_cache.h"
#include "tensor/tensor_impl.h"

namespace txla {

bool IsXlaTensor(const at::Tensor& tensor) {
  return tensor.defined() && tensor.device().type() == c10::DeviceType::XLA;
}

LazyTensorPtr TryGetLazyTensor(const at::Tensor& tensor) {
  if (!IsXlaTensor(tensor)) return nullptr;
  if (at::functionalization::impl::isFunctionalTensor(tensor)) {
    at::functionalization::impl::sync(tensor);
    return TryGetLazyTensor(at::functionalization::impl::from_functional_tensor(tensor));
  }
  auto* impl = dynamic_cast<XlaTensorImpl*>(tensor.unsafeGetTensorImpl());
  return impl ? impl->tensor() : nullptr;
}

std::string TensorTypeName(const at::Tensor& tensor) {
  std::string device;
  if (tensor.device().type() != c10::DeviceType::CPU)
    device = c10::DeviceTypeName(tensor.device().type(), /*lower_case=*/true) + ".";
  return "torch." + device + c10::toString(tensor.scalar_type()) + "Tensor";
}

LazyTensorPtr GetLazyTensor(const at::Tensor& tensor, const char* op) {
  LazyTensorPtr lt = TryGetLazyTensor(tensor);
  TORCH_CHECK(lt != nullptr, op, ": Input tensor is not an XLA tensor: ", TensorTypeName(tensor));
  return lt;
}

at::Tensor MakeXlaTensor(LazyTensorPtr tensor) {
  return at::Tensor(c10::make_intrusive<XlaTensorImpl>(std::move(tensor)));
}

at::Tensor MakeEntryXlaTensor(LazyTensorPtr tensor) {
  at::Tensor raw = MakeXlaTensor(std::move(tensor));
  // Below the Functionalize key the caller wraps (or means to keep) a raw tensor; above it, the
  // tensor a user receives is a functional wrapper, as for every other xla tensor.
  if (c10::impl::tls_local_dispatch_key_set().excluded_.has(c10::DispatchKey::Functionalize))
    return raw;
  return at::functionalization::impl::to_functional_tensor(raw);
}

void CountTransferToDevice(size_t bytes) {
  static metrics::Metric* outbound = metrics::GetMetric("OutboundData", metrics::MetricUnit::kBytes);
  outbound->AddSample(static_cast<double>(bytes));
}

runtime::BufferPtr TransferToDevice(const at::Tensor& host, int device) {
  TXLA_TIMED("TransferToDeviceTime");
  TXLA_TIMED("TensorToData");  // PyTorch/XLA's name for a host tensor made device data
  // In the device's storage type (the numeric modes: float as bf16, int64 as int32, ...).
  runtime::ElementType type = ir::ToElementType(host.scalar_type());
  at::Tensor src = host.to(ir::ToScalarType(type)).contiguous();
  if (src.dim() == 0) {  // a number: the device's shared buffer of that value (as PyTorch/XLA's)
    uint64_t bits = 0;
    std::memcpy(&bits, src.data_ptr(), runtime::ByteWidth(type));
    runtime::BufferPtr buffer = runtime::ScalarBuffer(type, bits, device);
    CountTransferToDevice(buffer->size_bytes());
    return buffer;
  }
  auto buffer = std::make_shared<runtime::Buffer>(type, src.sizes().vec(), device);
  if (buffer->size_bytes() > 0) std::memcpy(buffer->data(), src.data_ptr(), buffer->size_bytes());
  CountTransferToDevice(buffer->size_bytes());
  return buffer;
}

at::Tensor TransferFromDevice(const runtime::BufferPtr& buffer) {
  try {
    buffer->WaitReady();  // an asynchronous execution may still be writing it
  } catch (const runtime::ExecutionFailed& e) {
    // Raised to the user here: the device's next barrier does not raise it again.
    for (runtime::ExecutionQueue* q : runtime::QueuesOf(buffer->device_ordinal())) q->ForgetFailure(e.root());
    throw;
  }
  TXLA_TIMED("TransferFromDeviceTime");
  at::Tensor out = at::empty(buffer->dims(), at::TensorOptions().dtype(
                                                 ir::ToScalarType(buffer->type())));
  static metrics::Metric* inbound = metrics::GetMetric("InboundData", metrics::MetricUnit::kBytes);
  inbound->AddSample(static_cast<double>(buffer->size_bytes()));
  if (buffer->size_bytes() == 0) return out;
  if (buffer->shards()) buffer->Assemble(out.data_ptr());  // split over SPMD devices
  else std::memcpy(out.data_ptr(), buffer->data(), buffer->size_bytes());
  return out;
}

at::Tensor BufferAsTensor(const runtime::BufferPtr& buffer) {
  runtime::BufferPtr keep = buffer;
  return at::from_blob(
      buffer->data(), buffer->dims(), [keep](void*) mutable { keep.reset(); },
      at::TensorOptions().dtype(ir::ToScalarType(buffer->type())));
}

runtime::BufferPtr TensorAsBuffer(const at::Tensor& host, int device, c10::ScalarType logical) {
  runtime::ElementType type = ir::ToElementType(logical);
  at::Tensor dense = host.to(ir::ToScalarType(type)).contiguous();
  void* data = dense.data_ptr();
  auto owner = std::make_shared<at::Tensor>(std::move(dense));
  return std::make_shared<runtime::Buffer>(type, owner->sizes().vec(), device, data, owner);
}

runtime::BufferPtr TensorAsBuffer(const at::Tensor& host, int device) {
  return TensorAsBuffer(host, device, host.scalar_type());
}

int DeviceOrdinal(const c10::Device& device) { return device.has_index() ? device.index() : 0; }

}  // namespace txla
