#include "tensor/tensor_impl.h"

namespace txla {

XlaTensorImpl::XlaTensorImpl(LazyTensorPtr tensor)
    : c10::TensorImpl(c10::DispatchKeySet(c10::DispatchKey::XLA),
                      caffe2::TypeMeta::fromScalarType(tensor->dtype()),
                      c10::Device(c10::DeviceType::XLA,
                                  static_cast<c10::DeviceIndex>(tensor->device()))),
      tensor_(std::move(tensor)) {
  // A storage of no bytes of its own: PyTorch asks raw tensors for their storage to tell which
  // alias which (a custom op's aliasing check, below functionalization), and a shallow copy
  // shares it. Nothing reads memory through it: the data lives in the LazyTensor's buffers.
  storage_ = c10::Storage(c10::Storage::use_byte_size_t(), 0, c10::DataPtr(nullptr, device()),
                          /*allocator=*/nullptr, /*resizable=*/false);
  RefreshMetadata();
}

void XlaTensorImpl::set_tensor(LazyTensorPtr tensor) {
  tensor_ = std::move(tensor);
  RefreshMetadata();
}

void XlaTensorImpl::RefreshMetadata() {
  data_type_ = caffe2::TypeMeta::fromScalarType(tensor_->dtype());
  set_sizes_contiguous(tensor_->shape().sizes);
}

c10::intrusive_ptr<c10::TensorImpl> XlaTensorImpl::shallow_copy_and_detach(
    const c10::VariableVersion& version_counter, bool allow_tensor_metadata_change) const {
  auto impl = c10::make_intrusive<XlaTensorImpl>(tensor_);
  copy_tensor_metadata(this, impl.get(), version_counter, allow_tensor_metadata_change);
  return impl;
}

c10::intrusive_ptr<c10::TensorImpl> XlaTensorImpl::shallow_copy_and_detach(
    c10::VariableVersion&& version_counter, bool allow_tensor_metadata_change) const {
  auto impl = c10::make_intrusive<XlaTensorImpl>(tensor_);
  copy_tensor_metadata(this, impl.get(), std::move(version_counter),
                       allow_tensor_metadata_change);
  return impl;
}

void XlaTensorImpl::shallow_copy_from(const c10::intrusive_ptr<c10::TensorImpl>& impl) {
  auto* other = dynamic_cast<XlaTensorImpl*>(impl.get());
  TORCH_INTERNAL_ASSERT(other != nullptr, "shallow_copy_from: not an xla tensor");
  copy_tensor_metadata(other, this, version_counter(), allow_tensor_metadata_change());
  tensor_ = other->tensor_;
}

}  // namespace txla
