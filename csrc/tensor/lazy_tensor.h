// A lazy tensor: the device-side state behind one xla at::Tensor.
//
// It holds either device data (a buffer) or a pending IR value that will produce it. Ops never
// change a buffer; an in-place update replaces the pending value. Every live lazy tensor is in
// the registry, so a barrier can find all pending work of a device.
#pragma once

#include <memory>
#include <string>

#include "ir/node.h"
#include "runtime/buffer.h"

namespace txla {

class LazyTensor;
using LazyTensorPtr = std::shared_ptr<LazyTensor>;

class LazyTensor {
 public:
  static LazyTensorPtr FromData(runtime::BufferPtr data, c10::ScalarType dtype, int device);
  static LazyTensorPtr FromValue(ir::Value value, int device);
  // SPMD's virtual device: data sent from the host stays a host tensor until it is sharded
  // (split straight from it) or used, as PyTorch/XLA defers the upload (counter
  // VirtualDeviceUsage). `host` must not be shared with the caller.
  static LazyTensorPtr FromHost(at::Tensor host, c10::ScalarType dtype, int device);
  ~LazyTensor();

  int64_t id() const { return id_; }
  int device() const { return device_; }
  const ir::Shape& shape() const { return shape_; }
  c10::ScalarType dtype() const { return shape_.dtype; }

  // The value to use as an operand: the pending computation, or a device-data node standing for
  // the data (one per tensor, so x + x is one parameter).
  ir::Value GetIrValue();
  // The pending computation; empty once the tensor holds data.
  const ir::Value& pending() const { return pending_; }
  // The device data (uploading data held on the host first).
  const runtime::BufferPtr& data() const {
    if (!data_ && host_.defined()) Upload();
    return data_;
  }
  // Data still on the host (SPMD's deferred upload); undefined once uploaded or replaced.
  const at::Tensor& host() const { return host_; }
  // Whether the tensor has device data now (without uploading).
  bool on_device() const { return data_ != nullptr; }

  // SPMD: the sharding the user gave the tensor (XLA syntax; "" for none). It stays with the
  // tensor across in-place updates, and each graph that computes the tensor produces it so.
  const std::string& sharding() const { return sharding_; }
  void set_sharding(std::string sharding) { sharding_ = std::move(sharding); }
  // The sharding the tensor has: the user's, or else its data's when split over devices, or
  // "{replicated}" when an SPMD program computed it whole (data sent from the host has none).
  std::string EffectiveSharding() const;
  // An SPMD program computed the tensor's data (until its next update).
  void MarkSpmdResult() { spmd_result_ = true; }

  // The graph that computed this tensor ran: it now holds `data` and nothing is pending.
  void SetData(runtime::BufferPtr data);
  // An in-place update: from now on the tensor is `value` (its shape may change with it).
  void SetIrValue(ir::Value value);
  // Buffer donation (torch_xla._XLAC._set_buffer_donation): the tensor's data went to a graph's
  // run, which may write an output over it. The tensor is then a placeholder, with neither data
  // nor a pending value, and using it raises.
  void DonateData();
  bool donated() const { return !data_ && !pending_.node && !host_.defined(); }
  // Donated, or made as one (create_placeholder_tensor: its data is a placeholder buffer, which
  // graphs may read while traced).
  bool placeholder() const { return donated() || (data_ && data_->placeholder()); }
  // Raises, saying why, when the tensor was donated.
  void CheckHasValue() const;
  // A view op's result on raw (unwrapped) xla tensors is computed as a copy
  // (aten/register.cc): nothing aliases it, so an in-place write to it (SetIrValue) raises.
  void MarkCopyOfView() { copy_of_view_ = true; }

  LazyTensor(int device, ir::Shape shape);

 private:
  int64_t id_;
  int device_;
  ir::Shape shape_;
  void Upload() const;

  mutable runtime::BufferPtr data_;
  mutable at::Tensor host_;
  ir::Value pending_;
  ir::Value data_node_;  // cached device-data node for data_
  std::string sharding_;
  bool spmd_result_ = false;
  bool copy_of_view_ = false;
};

}  // namespace txla
