#include "runtime/host_activity.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace txla::runtime {
namespace {

// A thread recording IR until told to stop; then it waits on the device or just returns.
class Tracer {
 public:
  explicit Tracer(bool wait_at_end) : thread_([this, wait_at_end] {
      while (!stop_.load()) {
        NoteHostActivity();
        traced_.store(true);
        EXPECT_FALSE(OtherHostThreadBusy());  // the tracing thread itself may use every core
      }
      if (wait_at_end) HostWaitScope waiting;
    }) {
    while (!traced_.load()) std::this_thread::yield();
  }
  void Finish() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false}, traced_{false};
  std::thread thread_;
};

// Whether another thread is seen busy at some check within a second. A single check right after
// the tracer started can miss: on a loaded machine either thread may be descheduled for longer
// than the window (kHostTraceWindow) between the tracer's note and the check.
bool SeenBusy() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < deadline)
    if (OtherHostThreadBusy()) return true;
  return false;
}

TEST(HostActivityTest, ATracingThreadIsBusyForOthersUntilItWaits) {
  Tracer tracer(/*wait_at_end=*/true);
  EXPECT_TRUE(SeenBusy());
  tracer.Finish();
  EXPECT_FALSE(OtherHostThreadBusy());
}

TEST(HostActivityTest, AThreadThatStoppedRecordingIsIdleAfterAPause) {
  // torch.compile's backward is submitted from autograd's device thread, which then idles
  // without waiting on the device: it must not keep the kernels on one core.
  Tracer tracer(/*wait_at_end=*/false);
  EXPECT_TRUE(SeenBusy());
  tracer.Finish();
  std::this_thread::sleep_for(kHostTraceWindow + std::chrono::milliseconds(3));
  EXPECT_FALSE(OtherHostThreadBusy());
}

TEST(HostActivityTest, NodesABarrierRecordsAreNotTracing) {
  // A barrier hands its graph to the device, then takes views of the updated parameters again
  // (recording nodes) while the run starts: the run must get every core. The thread's next node
  // after the barrier is tracing again (the next step's, pipelined).
  std::atomic<int> phase{0};  // 0: tracing, 1: in the barrier, 2: after it, 3: done
  std::atomic<bool> checked{false};
  std::thread host([&] {
    while (phase.load() == 0) NoteHostActivity();
    {
      HostBarrierScope barrier;
      for (int i = 0; i < 64; ++i) NoteHostActivity();
      checked.store(false);
      phase.store(2);
      while (!checked.load()) std::this_thread::yield();
    }
    NoteHostActivity();
    phase.store(3);
    while (phase.load() != 4) NoteHostActivity();
  });
  EXPECT_TRUE(SeenBusy());
  phase.store(1);
  while (phase.load() != 2) std::this_thread::yield();
  EXPECT_FALSE(OtherHostThreadBusy());
  checked.store(true);
  while (phase.load() != 3) std::this_thread::yield();
  EXPECT_TRUE(SeenBusy());
  phase.store(4);
  host.join();
}

TEST(HostActivityTest, ABarrierEndsTheTraceOfTheThreadThatRecordedBeforeIt) {
  // The backward pass records on autograd's device thread; the main thread's barrier right after
  // it hands the graph over: its first kernels must get every core at once, not after the
  // autograd thread's window has passed.
  std::atomic<int> phase{0};  // 0: autograd records, 1: it stopped, 2: the barrier is open, 3: checked
  std::atomic<bool> busy{true};
  std::thread device([&] {
    while (phase.load() != 2) std::this_thread::yield();
    busy.store(OtherHostThreadBusy());
    phase.store(3);
  });
  std::thread autograd([&] {
    while (phase.load() == 0) NoteHostActivity();
    NoteHostActivity();
  });
  while (!SeenBusy()) {
  }
  phase.store(1);
  autograd.join();
  {
    HostBarrierScope barrier;
    phase.store(2);
    while (phase.load() != 3) std::this_thread::yield();
  }
  device.join();
  EXPECT_FALSE(busy.load());
}

TEST(HostActivityTest, AThreadIsWaitingOnlyInsideItsWaitScope) {
  EXPECT_FALSE(SomeHostThreadWaiting());
  std::atomic<bool> inside{false}, leave{false};
  std::thread waiter([&] {
    HostWaitScope waiting;
    inside.store(true);
    while (!leave.load()) std::this_thread::yield();
  });
  while (!inside.load()) std::this_thread::yield();
  EXPECT_TRUE(SomeHostThreadWaiting());
  leave.store(true);
  waiter.join();
  EXPECT_FALSE(SomeHostThreadWaiting());
}

}  // namespace
}  // namespace txla::runtime
