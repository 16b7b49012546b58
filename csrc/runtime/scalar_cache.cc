#include "runtime/scalar_cache.h"

#include <algorithm>
#include <cstring>
#include <list>
#include <mutex>
#include <unordered_map>

#include "debug/config.h"
#include "metrics/metrics.h"

namespace txla::runtime {
namespace {

struct Key {
  ElementType type;
  int device;
  uint64_t bits;
  bool operator==(const Key& o) const { return type == o.type && device == o.device && bits == o.bits; }
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = k.bits * 0x9e3779b97f4a7c15ULL;
    h ^= (static_cast<uint64_t>(k.type) << 32) ^ static_cast<uint64_t>(k.device);
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

class ScalarCache {
 public:
  BufferPtr Get(ElementType type, uint64_t bits, int device, ScalarWrite* write) {
    const Key key{type, device, bits};
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);  // most recently used first
        return it->second->second;
      }
    }
    TXLA_COUNTER("DeviceDataCacheMiss", 1);
    const int64_t start = write != nullptr ? metrics::NowNs() : 0;
    BufferPtr buffer = OwnScalarBuffer(type, bits, device);
    if (write != nullptr) *write = ScalarWrite{true, metrics::NowNs() - start};
    const size_t capacity = static_cast<size_t>(std::max<int64_t>(0, debug::GetConfig().device_data_cache_size));
    if (capacity == 0) return buffer;
    buffer->mark_read_only();
    std::lock_guard<std::mutex> lock(mu_);
    if (index_.count(key)) return buffer;  // another thread made it meanwhile: either serves
    order_.emplace_front(key, buffer);
    index_.emplace(key, order_.begin());
    while (order_.size() > capacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return buffer;
  }

 private:
  using Entry = std::pair<Key, BufferPtr>;
  std::mutex mu_;
  std::list<Entry> order_;
  std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> index_;
};

ScalarCache& Cache() {
  static ScalarCache* cache = new ScalarCache();  // never destroyed: buffers may die at exit
  return *cache;
}

}  // namespace

BufferPtr ScalarBuffer(ElementType type, uint64_t bits, int device, ScalarWrite* write) {
  return Cache().Get(type, bits, device, write);
}

BufferPtr OwnScalarBuffer(ElementType type, uint64_t bits, int device) {
  auto buffer = std::make_shared<Buffer>(type, std::vector<int64_t>{}, device);
  std::memcpy(buffer->data(), &bits, ByteWidth(type));
  return buffer;
}

}  // namespace txla::runtime
