#include "tensor/lazy_tensor.h"

#include <atomic>

#include "ir/op_table.h"
#include "metrics/metrics.h"
#include "tensor/bridge.h"
#include "tensor/registry.h"

namespace txla {
namespace {
std::atomic<int64_t> next_id{1};
}

LazyTensor::LazyTensor(int device, ir::Shape shape)
    : id_(next_id.fetch_add(1)), device_(device), shape_(std::move(shape)) {
  TXLA_COUNTER("CreateXlaTensor", 1);
}

LazyTensor::~LazyTensor() {
  registry::Remove(id_, device_);
  TXLA_COUNTER("DestroyXlaTensor", 1);
}

LazyTensorPtr LazyTensor::FromData(runtime::BufferPtr data, c10::ScalarType dtype, int device) {
  auto t = std::make_shared<LazyTensor>(device, ir::Shape(dtype, data->dims()));
  t->data_ = std::move(data);
  registry::Add(t);
  return t;
}

LazyTensorPtr LazyTensor::FromValue(ir::Value value, int device) {
  auto t = std::make_shared<LazyTensor>(device, value.shape());
  t->pending_ = std::move(value);
  registry::Add(t);
  return t;
}

LazyTensorPtr LazyTensor::FromHost(at::Tensor host, c10::ScalarType dtype, int device) {
  auto t = std::make_shared<LazyTensor>(device, ir::Shape(dtype, host.sizes()));
  t->host_ = std::move(host);
  registry::Add(t);
  TXLA_COUNTER("VirtualDeviceUsage", 1);
  return t;
}

void LazyTensor::Upload() const {
  TXLA_TIMED("TransferToDeviceTime");
  data_ = TensorAsBuffer(host_, device_, shape_.dtype);  // adopts the host copy: no second copy
  CountTransferToDevice(data_->size_bytes());
  host_ = at::Tensor();
}

ir::Value LazyTensor::GetIrValue() {
  if (pending_) return pending_;
  if (!data_node_) {
    CheckHasValue();  // a placeholder has no node (DonateData dropped it)
    data_node_ = ir::Value{ir::Node::DeviceData(data(), shape_), 0};
  }
  return data_node_;
}

void LazyTensor::SetData(runtime::BufferPtr data) {
  data_ = std::move(data);
  host_ = at::Tensor();
  data_node_ = ir::Value{};
  pending_ = ir::Value{};
  spmd_result_ = false;
}

std::string LazyTensor::EffectiveSharding() const {
  if (!sharding_.empty()) return sharding_;
  if (data_ && data_->shards()) return data_->shards()->sharding;
  // A value annotated by the user (mark_sharding's IR form), seen through a fresh alias of it.
  if (pending_)
    if (const std::string* annotated = ir::ShardingAnnotation(pending_)) return *annotated;
  return spmd_result_ && data_ ? "{replicated}" : "";
}

void LazyTensor::CheckHasValue() const {
  TORCH_CHECK(!donated(), "this xla tensor's buffer was donated to a graph's run "
              "(torch_xla._XLAC._set_buffer_donation): it has no value any more");
}

void LazyTensor::DonateData() {
  data_ = nullptr;
  data_node_ = ir::Value{};
}

void LazyTensor::SetIrValue(ir::Value value) {
  TORCH_CHECK(!copy_of_view_, "an in-place write to a view of an xla tensor taken below functionalization (in an "
              "ATen composite or a custom op's body, whose tensors are unwrapped): the view is a copy there, and "
              "the write would not reach the viewed tensor. Write to the tensor itself, or make the custom op "
              "declare what it mutates (mutates_args)");
  shape_ = value.shape();
  pending_ = std::move(value);
  data_ = nullptr;
  host_ = at::Tensor();
  spmd_result_ = false;
  data_node_ = ir::Value{};
}

}  // namespace txla
