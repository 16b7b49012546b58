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

TEST(HostActivityTest, ATracingThreadIsBusyForOthersUntilItWaits) {
  Tracer tracer(/*wait_at_end=*/true);
  EXPECT_TRUE(OtherHostThreadBusy());
  tracer.Finish();
  EXPECT_FALSE(OtherHostThreadBusy());
}

TEST(HostActivityTest, AThreadThatStoppedRecordingIsIdleAfterAPause) {
  // torch.compile's backward is submitted from autograd's device thread, which then idles
  // without waiting on the device: it must not keep the kernels on one core.
  Tracer tracer(/*wait_at_end=*/false);
  EXPECT_TRUE(OtherHostThreadBusy());
  tracer.Finish();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_FALSE(OtherHostThreadBusy());
}

}  // namespace
}  // namespace txla::runtime
