// A wait for a run leaves with what the interrupt check throws (the Python layer's pending
// signal), keeps its waiter count right, and a later wait still sees the run finish.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "runtime/execution_queue.h"

namespace txla::runtime {
namespace {

std::atomic<int> checks{0};
std::atomic<bool> interrupt{false};

void CheckThatThrowsWhenAsked() {
  checks.fetch_add(1);
  if (interrupt.load()) throw std::runtime_error("interrupted");
}

struct HookScope {
  HookScope() { SetWaitInterruptCheck(&CheckThatThrowsWhenAsked); }
  ~HookScope() { SetWaitInterruptCheck(nullptr); }
};

TEST(WaitInterruptTest, AWaitLeavesWithTheChecksExceptionAndTheRunStaysPending) {
  HookScope hook;
  Readiness never;  // a run that does not finish while the test waits
  interrupt = true;
  EXPECT_THROW(never.Wait(), std::runtime_error);
  EXPECT_FALSE(never.HasWaiters());
  EXPECT_FALSE(never.IsReady());
  // The run finishes later; a second wait (no interrupt) returns.
  interrupt = false;
  std::thread finisher([&] { never.MarkReady(); });
  never.Wait();
  finisher.join();
  EXPECT_TRUE(never.IsReady());
}

TEST(WaitInterruptTest, TheCheckRunsWhileAWaitIsBlockedAndAFailureStillRaises) {
  HookScope hook;
  interrupt = false;
  checks = 0;
  Readiness run;
  // Marked failed only once the wait has polled twice: the check ran while it was blocked.
  std::thread failer([&] {
    while (checks.load() < 2) std::this_thread::yield();
    run.MarkFailed("boom");
  });
  EXPECT_THROW(run.Wait(), ExecutionFailed);
  failer.join();
  EXPECT_GE(checks.load(), 2);
}

TEST(WaitInterruptTest, AReadyRunIsNeverChecked) {
  HookScope hook;
  interrupt = true;
  checks = 0;
  Readiness done;
  done.MarkReady();
  done.Wait();
  EXPECT_EQ(checks.load(), 0);
}

}  // namespace
}  // namespace txla::runtime
