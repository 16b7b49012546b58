// The live-tensor registry: every lazy tensor alive in the process, by device, so that a barrier
// can sync all pending computations together. Thread-safe (data loaders create tensors on
// background threads).
#pragma once

#include <unordered_set>
#include <vector>

#include "tensor/lazy_tensor.h"

namespace txla::registry {

void Add(const LazyTensorPtr& tensor);
void Remove(int64_t id, int device);
// Live tensors of `device` that have a pending IR value, in creation order.
std::vector<LazyTensorPtr> PendingTensors(int device);
size_t LiveCount(int device);
// Live tensors of `device` whose device data is one of `data` (buffer donation).
std::vector<LazyTensorPtr> TensorsHoldingData(int device, const std::unordered_set<const runtime::Buffer*>& data);

}  // namespace txla::registry
