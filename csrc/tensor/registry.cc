#include "tensor/registry.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

namespace txla::registry {
namespace {

// Every tensor is added once and removed once, thousands of times a step: an entry is appended
// (ids grow, so the list stays sorted by id) and, when removed, marked dead and dropped in bulk
// later, with no allocation of its own either way.
struct DeviceTensors {
  struct Entry {
    int64_t id;
    std::weak_ptr<LazyTensor> tensor;  // empty once removed
  };
  std::mutex mu;
  // Ordered by id so that a sync visits tensors in creation order: graphs come out the same
  // every step, which keeps the graph hash stable.
  std::vector<Entry> entries;
  size_t dead = 0;
  std::atomic<size_t> last_pending{0};  // how many the last barrier found: the next list is reserved that long

  void DropDeadEntries() {
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const Entry& e) { return e.id < 0; }),
                  entries.end());
    dead = 0;
  }
};

constexpr int kDirectDevices = 256;

DeviceTensors& ForDevice(int device) {
  // Looked up on every add and remove: ordinals below kDirectDevices without a lock.
  static std::array<std::atomic<DeviceTensors*>, kDirectDevices> direct{};
  if (device >= 0 && device < kDirectDevices) {
    if (DeviceTensors* d = direct[device].load(std::memory_order_acquire)) return *d;
  }
  static std::mutex mu;
  // Never destroyed: tensors may be released during static destruction.
  static auto* all = new std::map<int, std::unique_ptr<DeviceTensors>>();
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = (*all)[device];
  if (!slot) slot = std::make_unique<DeviceTensors>();
  if (device >= 0 && device < kDirectDevices) direct[device].store(slot.get(), std::memory_order_release);
  return *slot;
}

}  // namespace

void Add(const LazyTensorPtr& tensor) {
  DeviceTensors& d = ForDevice(tensor->device());
  std::lock_guard<std::mutex> lock(d.mu);
  const int64_t id = tensor->id();
  if (d.entries.empty() || d.entries.back().id < id) {
    d.entries.push_back({id, tensor});
    return;
  }
  // Created on another thread after a later id was taken: kept in id order.
  auto at = std::upper_bound(d.entries.begin(), d.entries.end(), id,
                             [](int64_t value, const DeviceTensors::Entry& e) { return value < std::abs(e.id); });
  d.entries.insert(at, {id, tensor});
}

void Remove(int64_t id, int device) {
  DeviceTensors& d = ForDevice(device);
  std::lock_guard<std::mutex> lock(d.mu);
  // Dead entries keep their place in the order as -id.
  auto at = std::lower_bound(d.entries.begin(), d.entries.end(), id,
                             [](const DeviceTensors::Entry& e, int64_t value) { return std::abs(e.id) < value; });
  if (at == d.entries.end() || at->id != id) return;
  at->id = -id;
  at->tensor.reset();
  if (++d.dead > 1024 && d.dead * 2 > d.entries.size()) d.DropDeadEntries();
}

// The live tensors of `d` that `keep` accepts, in creation order. A tensor locked here may lose its
// last other owner meanwhile: its destructor then runs Remove, which takes d.mu. Such references
// are released after the lock, from `released` (the caller's, kept between calls: a fresh one of
// every live tensor's size was a large allocation per barrier).
template <typename Keep>
std::vector<LazyTensorPtr> Select(DeviceTensors& d, size_t reserve, Keep keep, std::vector<LazyTensorPtr>* released) {
  std::vector<LazyTensorPtr> out;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    out.reserve(reserve);
    for (const DeviceTensors::Entry& e : d.entries) {
      if (e.id < 0) continue;
      LazyTensorPtr t = e.tensor.lock();
      if (!t) continue;
      if (keep(*t)) out.push_back(std::move(t));
      else released->push_back(std::move(t));
    }
  }
  released->clear();
  return out;
}

std::vector<LazyTensorPtr> PendingTensors(int device) {
  DeviceTensors& d = ForDevice(device);
  thread_local std::vector<LazyTensorPtr> released;
  const size_t last = d.last_pending.load(std::memory_order_relaxed);
  std::vector<LazyTensorPtr> out =
      Select(d, last + last / 8, [](const LazyTensor& t) { return bool(t.pending()); }, &released);
  d.last_pending.store(out.size(), std::memory_order_relaxed);
  return out;
}

std::vector<LazyTensorPtr> TensorsHoldingData(int device, const std::unordered_set<const runtime::Buffer*>& data) {
  std::vector<LazyTensorPtr> released;
  return Select(ForDevice(device), 0,
                [&](const LazyTensor& t) { return t.on_device() && data.count(t.data().get()) > 0; }, &released);
}

size_t LiveCount(int device) {
  DeviceTensors& d = ForDevice(device);
  std::lock_guard<std::mutex> lock(d.mu);
  return d.entries.size() - d.dead;
}

}  // namespace txla::registry
