// A reusable barrier for the threads of the devices meeting in a collective.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

namespace txla::runtime {

// A reusable barrier that can be broken: waiting replicas then fail instead of waiting for one
// that will never come (a thread that raised).
class Barrier {
 public:
  explicit Barrier(size_t parties) : parties_(parties) {}

  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!broken_.empty()) throw std::runtime_error(broken_);
    const int64_t generation = generation_;
    if (++arrived_ == parties_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation || !broken_.empty(); });
    if (generation_ == generation) throw std::runtime_error(broken_);
  }

  void Break(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    broken_ = why;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const size_t parties_;
  size_t arrived_ = 0;
  int64_t generation_ = 0;
  std::string broken_;
};

}  // namespace txla::runtime
