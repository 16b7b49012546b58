#include "tensor/registry.h"

#include <map>
#include <mutex>

namespace txla::registry {
namespace {

struct DeviceTensors {
  std::mutex mu;
  // Ordered by id so that a sync visits tensors in creation order: graphs come out the same
  // every step, which keeps the graph hash stable.
  std::map<int64_t, std::weak_ptr<LazyTensor>> tensors;
};

DeviceTensors& ForDevice(int device) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<DeviceTensors>>* all =
      new std::map<int, std::unique_ptr<DeviceTensors>>();
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = (*all)[device];
  if (!slot) slot = std::make_unique<DeviceTensors>();
  return *slot;
}

}  // namespace

void Add(const LazyTensorPtr& tensor) {
  DeviceTensors& d = ForDevice(tensor->device());
  std::lock_guard<std::mutex> lock(d.mu);
  d.tensors.emplace(tensor->id(), tensor);
}

void Remove(int64_t id, int device) {
  DeviceTensors& d = ForDevice(device);
  std::lock_guard<std::mutex> lock(d.mu);
  d.tensors.erase(id);
}

std::vector<LazyTensorPtr> PendingTensors(int device) {
  DeviceTensors& d = ForDevice(device);
  // A tensor locked here may lose its last other owner meanwhile: its destructor then runs
  // Remove, which takes d.mu. Such references are released here, after the lock (declared
  // before the guard, destroyed after it).
  std::vector<LazyTensorPtr> released;
  std::vector<LazyTensorPtr> out;
  std::lock_guard<std::mutex> lock(d.mu);
  released.reserve(d.tensors.size());
  out.reserve(d.tensors.size());
  for (auto& [id, weak] : d.tensors) {
    LazyTensorPtr t = weak.lock();
    if (!t) continue;
    if (t->pending()) out.push_back(std::move(t));
    else released.push_back(std::move(t));
  }
  return out;
}

size_t LiveCount(int device) {
  DeviceTensors& d = ForDevice(device);
  std::lock_guard<std::mutex> lock(d.mu);
  return d.tensors.size();
}

}  // namespace txla::registry
