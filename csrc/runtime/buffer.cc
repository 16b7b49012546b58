#include "runtime/buffer.h"

#include <cstdlib>
#include <functional>
#include <numeric>
#include <sstream>

#include "metrics/metrics.h"

namespace txla::runtime {
namespace {
constexpr size_t kAlignment = 64;  // a cache line, and enough for AVX-512 loads
}

Buffer::Buffer(ElementType type, std::vector<int64_t> dims, int device_ordinal)
    : type_(type), dims_(std::move(dims)), device_ordinal_(device_ordinal), owns_(true) {
  size_t bytes = size_bytes();
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  data_ = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (data_ == nullptr) throw std::bad_alloc();
  TXLA_COUNTER("CreateDataHandles", 1);
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

Buffer::~Buffer() {
  if (owns_) std::free(data_);
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
