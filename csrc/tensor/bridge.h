// Between at::Tensor and the lazy world: finding the lazy tensor of an xla tensor (through a
// functional wrapper if there is one), making xla tensors, and moving data between host tensors
// and device buffers.
#pragma once

#include <ATen/core/Tensor.h>

#include "tensor/lazy_tensor.h"

namespace txla {

bool IsXlaTensor(const at::Tensor& tensor);
// The lazy tensor behind an xla tensor, raw or functional-wrapped (a wrapper is synced first so
// that pending view updates are applied); nullptr for other tensors.
LazyTensorPtr TryGetLazyTensor(const at::Tensor& tensor);
// As TryGetLazyTensor, raising a clear error naming `op` for anything that is not an xla tensor.
LazyTensorPtr GetLazyTensor(const at::Tensor& tensor, const char* op);

// A raw xla tensor over `tensor`.
at::Tensor MakeXlaTensor(LazyTensorPtr tensor);
// An xla tensor as the entry points hand them out: wrapped for functionalization, unless the
// caller runs below the Functionalize key (then the wrapper is added by the caller).
at::Tensor MakeEntryXlaTensor(LazyTensorPtr tensor);

// Counts `bytes` sent to the devices (PyTorch/XLA's OutboundData metric); every way data
// reaches a device calls it once.
void CountTransferToDevice(size_t bytes);
// Copies a host tensor into a new device buffer (counts TransferToDeviceTime).
runtime::BufferPtr TransferToDevice(const at::Tensor& host, int device);
// Copies a device buffer into a new host tensor (counts TransferFromDeviceTime).
at::Tensor TransferFromDevice(const runtime::BufferPtr& buffer);
// A host tensor viewing the buffer without a copy; the tensor keeps the buffer alive.
at::Tensor BufferAsTensor(const runtime::BufferPtr& buffer);
// A device buffer taking over a (made contiguous) host tensor's memory without a copy.
// `logical`: the PyTorch dtype the buffer holds (its storage follows the numeric modes); the
// interpreter computes some values in their storage type and hands them back as their own.
runtime::BufferPtr TensorAsBuffer(const at::Tensor& host, int device, c10::ScalarType logical);
runtime::BufferPtr TensorAsBuffer(const at::Tensor& host, int device);

// "torch.FloatTensor", "torch.cuda.LongTensor": how PyTorch users name tensor types.
std::string TensorTypeName(const at::Tensor& tensor);
int DeviceOrdinal(const c10::Device& device);

}  // namespace txla
