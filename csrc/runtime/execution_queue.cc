#include "runtime/execution_queue.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <stdexcept>
#include <utility>

#include "debug/config.h"
#include "metrics/trace.h"
#include "runtime/device.h"
#include "runtime/host_activity.h"

namespace txla::runtime {

void Readiness::MarkReady() { Mark(false, "", ""); }

void Readiness::MarkFailed(std::string error, std::string root) { Mark(true, std::move(error), std::move(root)); }

void Readiness::Mark(bool failed, std::string error, std::string root) {
  std::vector<std::shared_ptr<Readiness>> followers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    if (failed) {
      error_ = error.empty() ? "execution failed" : std::move(error);
      root_ = root.empty() ? error_ : std::move(root);
    } else {
      ready_.store(true, std::memory_order_release);
    }
    followers.swap(followers_);
    cv_.notify_all();
  }
  for (const auto& f : followers) f->Mark(failed, error_, root_);
}

void Readiness::AddFollower(std::shared_ptr<Readiness> follower) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!done_) {
      followers_.push_back(std::move(follower));
      return;
    }
  }
  follower->Mark(!error_.empty(), error_, root_);  // done: error_ no longer changes
}

namespace {
std::atomic<void (*)()> wait_interrupt_check{nullptr};
}  // namespace

void SetWaitInterruptCheck(void (*check)()) { wait_interrupt_check.store(check); }

void Readiness::Wait() const {
  if (ready_.load(std::memory_order_acquire)) return;
  HostWaitScope waiting;
  std::unique_lock<std::mutex> lock(mu_);
  struct Waiter {  // counted while blocked, also when the interrupt check throws
    int& waiters;
    explicit Waiter(int& w) : waiters(w) { ++waiters; }
    ~Waiter() { --waiters; }
  } waiter(waiters_);
  while (!cv_.wait_for(lock, kWaitInterruptPoll, [&] { return done_; })) {
    if (void (*check)() = wait_interrupt_check.load()) {
      lock.unlock();
      check();
      lock.lock();
    }
  }
  if (!error_.empty()) throw ExecutionFailed(error_, root_);
}

bool Readiness::HasWaiters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiters_ > 0;
}

bool Readiness::IsReady() const {
  if (ready_.load(std::memory_order_acquire)) return true;
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

ExecutionQueue::ExecutionQueue(std::string name)
    : name_(std::move(name)),
      max_waiting_(static_cast<size_t>(std::max<int64_t>(1, debug::GetConfig().max_inflight_steps))),
      worker_([this] { Loop(); }) {}

ExecutionQueue::~ExecutionQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  worker_.join();
}

void ExecutionQueue::Submit(std::function<void()> work, std::shared_ptr<Readiness> done,
                            bool ends_step) {
  HostWaitScope waiting;  // for room in the queue
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] {
    return ends_step ? steps_waiting_ < max_waiting_ : work_.size() < kGraphsPerStepCap * max_waiting_;
  });
  work_.push_back(Item{std::move(work), std::move(done), ends_step});
  if (ends_step) ++steps_waiting_;
  cv_.notify_all();
}

void ExecutionQueue::Drain() {
  HostWaitScope waiting;
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return work_.empty() && !running_; });
}

std::string ExecutionQueue::TakeUnreportedFailure() {
  std::lock_guard<std::mutex> lock(mu_);
  unreported_root_.clear();
  return std::exchange(unreported_failure_, std::string());
}

void ExecutionQueue::ForgetFailure(const std::string& root) {
  std::lock_guard<std::mutex> lock(mu_);
  if (unreported_root_ != root) return;
  unreported_failure_.clear();
  unreported_root_.clear();
}

void ExecutionQueue::Loop() {
  metrics::NameThisThread(name_);
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !work_.empty(); });
      if (work_.empty()) return;  // stopping, nothing left
      item = std::move(work_.front());
      work_.pop_front();
      if (item.ends_step) --steps_waiting_;
      running_ = true;
      idle_cv_.notify_all();  // a submitter may be waiting for room
    }
    std::string failure, root;
    bool from_earlier_failure = false;
    try {
      item.work();
    } catch (const ExecutionFailed& e) {
      // Only a failed input's readiness throws this: the run failed because an earlier one did.
      failure = e.what(), root = e.root(), from_earlier_failure = true;
    } catch (const std::exception& e) {
      failure = root = e.what();
    } catch (...) {
      failure = root = "unknown error during execution";
    }
    if (!failure.empty() && !from_earlier_failure) {
      // Recorded before the outputs are marked failed: a read they wake may forget it at once.
      // A failure inherited from an earlier run is not news: that run's own failure was recorded
      // (and may have been raised already), so a barrier raises each root error once.
      std::lock_guard<std::mutex> lock(mu_);
      if (unreported_failure_.empty()) unreported_failure_ = failure, unreported_root_ = root;
    }
    if (failure.empty()) item.done->MarkReady();
    else item.done->MarkFailed(failure, root);
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
  if (!q) q = std::make_unique<ExecutionQueue>("xla:" + std::to_string(device) + " execution");
  return *q;
}

std::vector<ExecutionQueue*> QueuesOf(int device) {
  if (!SpmdEnabled()) return {&QueueFor(device)};
  std::vector<ExecutionQueue*> queues;
  for (int d : LocalSpmdDevices()) queues.push_back(&QueueFor(d));
  return queues;
}

void DrainQueuesOf(int device) {
  for (ExecutionQueue* q : QueuesOf(device)) q->Drain();
}

bool AsyncExecution() { return !debug::GetConfig().sync_wait; }

}  // namespace txla::runtime
