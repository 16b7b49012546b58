// SPMD at the operator level: txla::custom_sharding computed on the host (the interpreter's
// identity), and the sharding a tensor keeps when functionalization replaces its value
// (aten::_propagate_xla_data, which PyTorch calls for backends that keep data beside a tensor).
#include <ATen/ATen.h>
#include <torch/library.h>

#include "tensor/bridge.h"

namespace txla::aten {
namespace {

at::Tensor CustomSharding(const at::Tensor& self, c10::string_view) { return self.clone(); }

// A manual region exists only in a program partitioned over the devices.
at::Tensor ManualRegionBoundary(const at::Tensor&, c10::string_view, at::IntArrayRef) {
  TORCH_CHECK(false, "a manual-sharding region (enable_manual_sharding / disable_manual_sharding) runs only in a "
              "program partitioned over the devices, not on the host");
}

void PropagateXlaData(const at::Tensor& input, const at::Tensor& output) {
  LazyTensorPtr from = TryGetLazyTensor(input);
  LazyTensorPtr to = TryGetLazyTensor(output);
  if (from && to && to->sharding().empty() && !from->sharding().empty()) to->set_sharding(from->sharding());
}

}  // namespace

TORCH_LIBRARY_IMPL(txla, CPU, m) {
  m.impl("custom_sharding", TORCH_FN(CustomSharding));
  m.impl("spmd_full_to_shard_shape", TORCH_FN(ManualRegionBoundary));
  m.impl("spmd_shard_to_full_shape", TORCH_FN(ManualRegionBoundary));
}
TORCH_LIBRARY_IMPL(aten, XLA, m) { m.impl("_propagate_xla_data", TORCH_FN(PropagateXlaData)); }

}  // namespace txla::aten
