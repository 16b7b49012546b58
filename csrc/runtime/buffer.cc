#include "runtime/buffer.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include <mutex>
#include <unordered_map>

#include "debug/config.h"
#include "metrics/metrics.h"
#include "runtime/shards.h"

namespace txla::runtime {
namespace {
constexpr size_t kAlignment = 64;  // a cache line, and enough for AVX-512 loads

// Freed blocks by exact size, reused before asking malloc: a training loop allocates the same
// sizes every step, and fresh large blocks come from mmap and page-fault on first touch (a few
// milliseconds a step for an MLP). Bounded by XLA_BUFFER_POOL_BYTES (default 1 GiB).
class BlockPool {
 public:
  void* Take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(bytes);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        pooled_ -= bytes;
        return p;
      }
    }
    void* p = std::aligned_alloc(kAlignment, bytes);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }

  void Give(void* p, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (pooled_ + bytes <= capacity_) {
        free_[bytes].push_back(p);
        pooled_ += bytes;
        return;
      }
    }
    std::free(p);
  }

 private:
  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t pooled_ = 0;
  size_t capacity_ = static_cast<size_t>(debug::GetConfig().buffer_pool_bytes);
};

BlockPool& Pool() {
  static BlockPool* pool = new BlockPool();  // never destroyed: buffers may die at exit
  return *pool;
}

size_t RoundedBytes(size_t bytes) {
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  return rounded == 0 ? kAlignment : rounded;
}

// Bytes handed out and not yet given back (buffers, arenas, library scratch), and their peak.
struct Usage {
  std::atomic<int64_t> used{0};
  std::atomic<int64_t> peak{0};
};
Usage& CurrentUsage() {
  static Usage usage;
  return usage;
}

}  // namespace

void* AllocateBlock(size_t bytes) {
  size_t rounded = RoundedBytes(bytes);
  void* p = Pool().Take(rounded);
  Usage& usage = CurrentUsage();
  int64_t now = usage.used.fetch_add(static_cast<int64_t>(rounded)) + static_cast<int64_t>(rounded);
  int64_t peak = usage.peak.load();
  while (now > peak && !usage.peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void FreeBlock(void* p, size_t bytes) {
  size_t rounded = RoundedBytes(bytes);
  CurrentUsage().used.fetch_sub(static_cast<int64_t>(rounded));
  Pool().Give(p, rounded);
}

MemoryUsage GetMemoryUsage() {
  Usage& usage = CurrentUsage();
  return {usage.used.load(), usage.peak.load()};
}

Buffer::Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal)
    : Buffer(type, std::move(dims), device_ordinal, Deferred{}) {
  Materialize();
}

Buffer::Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal, Deferred)
    : type_(type), dims_(std::move(dims)), device_ordinal_(device_ordinal), owns_(true) {
  TXLA_COUNTER("CreateDataHandles", 1);
}

void Buffer::Materialize() {
  if (owns_ && data_ == nullptr) data_ = AllocateBlock(size_bytes());
}

Buffer::Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal, void* data,
               std::shared_ptr<void> owner)
    : type_(type),
      dims_(std::move(dims)),
      device_ordinal_(device_ordinal),
      data_(data),
      owner_(std::move(owner)) {
  TXLA_COUNTER("CreateDataHandles", 1);
}

bool Buffer::AdoptStorage(Buffer& donor) {
  if (!owns_ || !donor.owns_ || donor.data_ == nullptr || donor.size_bytes() != size_bytes() ||
      donor.data_ == data_)
    return false;
  if (data_ != nullptr) FreeBlock(data_, size_bytes());
  data_ = donor.data_;
  donor.owns_ = false;
  return true;
}

Buffer::Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal, Shards shards)
    : type_(type),
      dims_(std::move(dims)),
      device_ordinal_(device_ordinal),
      shards_(std::make_unique<const Shards>(std::move(shards))) {
  TXLA_COUNTER("CreateDataHandles", 1);
}

Buffer::Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal, Placeholder)
    : type_(type), dims_(std::move(dims)), device_ordinal_(device_ordinal), placeholder_(true) {}

void Buffer::ThrowPlaceholder() const {
  throw std::runtime_error("the placeholder tensor " + ToString() + " (create_placeholder_tensor) has no value: it "
                           "stands for an input while a graph is traced, and cannot be read or run");
}

void Buffer::Assemble(void* dst) const {
  if (!shards_) throw std::logic_error("Buffer::Assemble: " + ToString() + " is not split over devices");
  if (shards_->sharding == "{manual}")
    throw std::runtime_error("a value of a manual-sharding region is each device's own piece, with no whole value "
                             "to read: end the region with disable_manual_sharding first");
  const int64_t bytes = ByteWidth(type_);
  const std::vector<int64_t> origin(dims_.size(), 0);
  // Each piece once, from a device of this process that holds it (under SPMD over processes
  // the other processes' pieces are not here).
  std::vector<const std::vector<int64_t>*> copied;
  for (size_t d = 0; d < shards_->pieces.size(); ++d) {
    const std::vector<int64_t>& at = shards_->offsets[d];
    if (std::any_of(copied.begin(), copied.end(), [&](const auto* c) { return *c == at; })) continue;
    const Buffer* piece = shards_->pieces[d].get();
    for (size_t e = d + 1; piece == nullptr && e < shards_->pieces.size(); ++e)
      if (shards_->offsets[e] == at) piece = shards_->pieces[e].get();
    if (piece == nullptr)
      throw std::runtime_error("the value " + ToString() + " is split as " + shards_->sharding +
                               " over the devices of several processes, and the piece of device " + std::to_string(d) +
                               " is in another process: give it a layout this process holds whole (mark_sharding "
                               "with a replicated partition spec) before reading it here");
    piece->WaitReady();
    CopyBlock(bytes, piece->data(), piece->dims(), origin, dst, dims_, at, ValidExtent(dims_, piece->dims(), at));
    copied.push_back(&at);
  }
}

Buffer::~Buffer() {
  if (owns_ && data_ != nullptr) FreeBlock(data_, size_bytes());
  TXLA_COUNTER("DestroyDataHandles", 1);
}

int64_t Buffer::element_count() const {
  return std::accumulate(dims_.begin(), dims_.end(), int64_t{1}, std::multiplies<int64_t>());
}

std::string Buffer::ToString() const {
  std::ostringstream ss;
  ss << ElementTypeName(type_) << "[";
  for (size_t i = 0; i < dims_.size(); ++i) ss << (i ? "," : "") << dims_[i];
  ss << "] on xla:" << device_ordinal_;
  return ss.str();
}

}  // namespace txla::runtime
