#include "runtime/execution_queue.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "debug/env.h"

namespace txla::runtime {

void Readiness::MarkReady() {
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  cv_.notify_all();
}

void Readiness::MarkFailed(std::string error) {
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  error_ = error.empty() ? "execution failed" : std::move(error);
  cv_.notify_all();
}

void Readiness::Wait() const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_; });
  if (!error_.empty()) throw std::runtime_error(error_);
}

bool Readiness::IsReady() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

ExecutionQueue::ExecutionQueue()
    : max_waiting_(static_cast<size_t>(std::max<int64_t>(1, debug::EnvInt("XLA_MAX_INFLIGHT_STEPS", 2)))),
      worker_([this] { Loop(); }) {}

ExecutionQueue::~ExecutionQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  worker_.join();
}

void ExecutionQueue::Submit(std::function<void()> work, std::shared_ptr<Readiness> done) {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return work_.size() < max_waiting_; });
  work_.emplace_back(std::move(work), std::move(done));
  cv_.notify_all();
}

void ExecutionQueue::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return work_.empty() && !running_; });
}

void ExecutionQueue::Loop() {
  for (;;) {
    std::pair<std::function<void()>, std::shared_ptr<Readiness>> item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !work_.empty(); });
      if (work_.empty()) return;  // stopping, nothing left
      item = std::move(work_.front());
      work_.pop_front();
      running_ = true;
      idle_cv_.notify_all();  // a submitter may be waiting for room
    }
    try {
      item.first();
      item.second->MarkReady();
    } catch (const std::exception& e) {
      item.second->MarkFailed(e.what());
    } catch (...) {
      item.second->MarkFailed("unknown error during execution");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ = false;
      item = {};
      idle_cv_.notify_all();
    }
  }
}

ExecutionQueue& QueueFor(int device) {
  static std::mutex mu;
  // Never destroyed: worker threads must not be joined during static destruction.
  static auto* queues = new std::map<int, std::unique_ptr<ExecutionQueue>>();
  std::lock_guard<std::mutex> lock(mu);
  auto& q = (*queues)[device];
  if (!q) q = std::make_unique<ExecutionQueue>();
  return *q;
}

bool AsyncExecution() { return !debug::EnvBool("XLA_SYNC_WAIT"); }

}  // namespace txla::runtime
