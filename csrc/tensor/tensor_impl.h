// The TensorImpl of a raw xla tensor. Its storage holds no bytes (the data lives in device buffers
// behind the LazyTensor; the storage only tells aliases apart) and it always reports contiguous
// strides.
//
// User-visible xla tensors are FunctionalTensorWrappers around these: PyTorch's functionalization
// turns views and in-place ops into functional ops before they reach our kernels, so kernels below
// the Functionalize key see raw impls (see bridge.h for the unwrapping).
#pragma once

#include <c10/core/TensorImpl.h>

#include "tensor/lazy_tensor.h"

namespace txla {

class XlaTensorImpl final : public c10::TensorImpl {
 public:
  explicit XlaTensorImpl(LazyTensorPtr tensor);

  const LazyTensorPtr& tensor() const { return tensor_; }
  void set_tensor(LazyTensorPtr tensor);
  // Re-reads sizes and dtype after the lazy tensor changed in place.
  void RefreshMetadata();

  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(
      const c10::VariableVersion& version_counter,
      bool allow_tensor_metadata_change) const override;
  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(
      c10::VariableVersion&& version_counter, bool allow_tensor_metadata_change) const override;
  void shallow_copy_from(const c10::intrusive_ptr<c10::TensorImpl>& impl) override;

 private:
  LazyTensorPtr tensor_;
};

}  // namespace txla
