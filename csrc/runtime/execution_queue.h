// Asynchronous execution: one worker thread per device runs submitted work in submission order.
//
// mark_step submits a compiled graph and returns; tensors already hold their output buffers,
// which become ready when the work ran. Work submitted later may use those buffers as inputs
// (the queue is in order); only a host read waits (Buffer::WaitReady). A failure is recorded in
// the outputs' readiness and raised where they are read.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace txla::runtime {

// A run that failed, or that read the output of one that did: `root()` is the original error, so
// a chain of dependent runs reports it once instead of nesting a message per run.
class ExecutionFailed : public std::runtime_error {
 public:
  ExecutionFailed(const std::string& what, std::string root)
      : std::runtime_error(what), root_(std::move(root)) {}
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// A host thread waiting for a run (Readiness::Wait) calls `check` this often; `check` may throw
// to abandon the wait, and the exception leaves Wait. The Python layer raises a pending signal's
// exception there (Ctrl-C, a test runner's timeout), which a blocked wait would otherwise hold
// off until the run ends. The run goes on, and its outputs stay pending. One hook; null: none.
constexpr std::chrono::milliseconds kWaitInterruptPoll{100};
void SetWaitInterruptCheck(void (*check)());

// Ready, or not yet, or failed with a message; shared by the outputs of one submission.
class Readiness {
 public:
  // Marking is once: a later mark (ready or failed) changes nothing.
  void MarkReady();
  // `root`: the original error when this failure comes from another ("" when it is its own).
  void MarkFailed(std::string error, std::string root = "");
  // Blocks until ready; throws ExecutionFailed if it failed, or what the interrupt check throws.
  void Wait() const;
  bool IsReady() const;
  // Whether a thread is blocked in Wait now.
  bool HasWaiters() const;
  // `follower` is marked as this one is, when this one is, unless it was marked before: an
  // output a run releases before it ends (passes/early_outputs.h) fails with its run only if it
  // was not released yet.
  void AddFollower(std::shared_ptr<Readiness> follower);

 private:
  // Marks this readiness (ready when `error` is empty and `failed` false) and its followers.
  void Mark(bool failed, std::string error, std::string root);

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool done_ = false;
  // Set once marked ready without failure: a run waits on every one of its inputs, nearly all
  // ready long before, and asks this without the lock.
  std::atomic<bool> ready_{false};
  mutable int waiters_ = 0;
  std::string error_, root_;
  std::vector<std::shared_ptr<Readiness>> followers_;
};

class ExecutionQueue {
 public:
  // `name`: what its worker thread is called on the profiler's timeline.
  explicit ExecutionQueue(std::string name = "xla execution");
  ~ExecutionQueue();
  ExecutionQueue(const ExecutionQueue&) = delete;
  ExecutionQueue& operator=(const ExecutionQueue&) = delete;

  // Runs `work` after everything submitted before it; `done` is marked ready (or failed with
  // the exception's message) afterwards. A graph that ends a step (a barrier's) blocks while
  // XLA_MAX_INFLIGHT_STEPS (default 2) step-ending graphs are already waiting: tracing may run
  // one step ahead, not unboundedly (each step in flight holds its buffers). Other graphs of a
  // step (torch.compile's, syncs of single tensors) do not wait for earlier steps; they block
  // only when kGraphsPerStepCap times that many graphs wait.
  void Submit(std::function<void()> work, std::shared_ptr<Readiness> done, bool ends_step);
  // Blocks until everything submitted so far has run.
  void Drain();
  // The first failure of a run since the last call ("" if none): barriers raise it, so a loop
  // that never reads a value still stops. Runs are asynchronous, so which barrier sees it
  // depends on when the failed run ends: at the latest, the one after XLA_MAX_INFLIGHT_STEPS
  // further step-ending submissions (their room in the queue is made by the failed run ending).
  std::string TakeUnreportedFailure();
  // A failure with this root error has reached the user (a read raised it): not raised again.
  void ForgetFailure(const std::string& root);

 private:
  void Loop();

  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  struct Item {
    std::function<void()> work;
    std::shared_ptr<Readiness> done;
    bool ends_step = false;
  };
  static constexpr size_t kGraphsPerStepCap = 8;
  std::deque<Item> work_;
  size_t steps_waiting_ = 0;
  bool running_ = false;  // an item is executing
  size_t max_waiting_;
  bool stop_ = false;
  std::string unreported_failure_, unreported_root_;
  std::thread worker_;
};

// The queue of a device (created on first use).
ExecutionQueue& QueueFor(int device);
// The queues the graphs traced on `device` run on: under SPMD, those of every SPMD device of
// this process (a partitioned program runs on each), else the device's own.
std::vector<ExecutionQueue*> QueuesOf(int device);
// Blocks until everything submitted to QueuesOf(device) so far has run.
void DrainQueuesOf(int device);
// Whether graphs run asynchronously (XLA_SYNC_WAIT=1 makes every barrier wait).
bool AsyncExecution();

}  // namespace txla::runtime
