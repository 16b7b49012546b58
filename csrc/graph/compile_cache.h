// The in-memory compile cache: graph hash -> executable, least recently used evicted first.
// Capacity from XLA_COMPILATION_CACHE_SIZE (default 1024), as in PyTorch/XLA.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "ir/hash.h"
#include "runtime/executable.h"

namespace txla::graph {

class CompileCache {
 public:
  explicit CompileCache(size_t capacity) : capacity_(capacity) {}

  std::shared_ptr<runtime::Executable> Get(ir::hash_t key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  void Put(ir::hash_t key, std::shared_ptr<runtime::Executable> executable) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) order_.erase(it->second);
    order_.emplace_front(key, std::move(executable));
    index_[key] = order_.begin();
    while (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return order_.size();
  }

 private:
  using Entry = std::pair<ir::hash_t, std::shared_ptr<runtime::Executable>>;
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> order_;
  std::unordered_map<ir::hash_t, std::list<Entry>::iterator> index_;
};

}  // namespace txla::graph
