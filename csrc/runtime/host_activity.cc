#include "runtime/host_activity.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>

namespace txla::runtime {
namespace {

constexpr int64_t kRecentNs = std::chrono::duration_cast<std::chrono::nanoseconds>(kHostTraceWindow).count();
constexpr int64_t kNever = std::numeric_limits<int64_t>::min() / 2;
constexpr unsigned kNotesPerClockRead = 8;

std::atomic<int64_t> last_activity_ns{kNever};
std::atomic<const void*> last_active_thread{nullptr};
thread_local char thread_tag;  // its address names the thread
thread_local int barriers_open = 0;

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Whichever thread recorded last: the backward pass records on autograd's device thread, and a
// barrier right after it (gradient accumulation's `loss.backward(); xm.mark_step()`) left that
// thread "busy" for the window, so the graph's first kernels ran on one core (a convolution
// of the MNIST CNN's second layer every step). A thread that is in fact still tracing is
// noticed again at its next node.
std::atomic<void (*)()> trace_ended_listener{nullptr};

void TraceEnded() {
  last_activity_ns.store(kNever, std::memory_order_relaxed);
  if (auto* listener = trace_ended_listener.load(std::memory_order_acquire)) listener();
}

}  // namespace

void NoteHostActivity() {
  // Called for every recorded node: the clock is read on every 8th only (nodes come a few
  // microseconds apart, well inside the window), and at once when this thread resumes after a
  // wait or takes over from another.
  thread_local unsigned notes = 0;
  if (barriers_open > 0) return;
  if (last_active_thread.load(std::memory_order_relaxed) == &thread_tag &&
      last_activity_ns.load(std::memory_order_relaxed) != kNever && ++notes % kNotesPerClockRead != 0)
    return;
  last_activity_ns.store(Now(), std::memory_order_relaxed);
  last_active_thread.store(&thread_tag, std::memory_order_relaxed);
}

void NoteHostWaking() {
  static const char waking_tag = 0;  // no thread's: busy for every caller of OtherHostThreadBusy
  last_activity_ns.store(Now(), std::memory_order_relaxed);
  last_active_thread.store(&waking_tag, std::memory_order_relaxed);
}

HostBarrierScope::HostBarrierScope() {
  ++barriers_open;
  TraceEnded();
}

HostBarrierScope::~HostBarrierScope() { --barriers_open; }

std::atomic<int> host_threads_waiting{0};

HostWaitScope::HostWaitScope() {
  host_threads_waiting.fetch_add(1, std::memory_order_relaxed);  // before the listener asks
  TraceEnded();
}

HostWaitScope::~HostWaitScope() { host_threads_waiting.fetch_sub(1, std::memory_order_relaxed); }

bool SomeHostThreadWaiting() { return host_threads_waiting.load(std::memory_order_relaxed) > 0; }

void SetTraceEndedListener(void (*listener)()) { trace_ended_listener.store(listener, std::memory_order_release); }

bool OtherHostThreadBusy() {
  if (last_active_thread.load(std::memory_order_relaxed) == &thread_tag) return false;  // the caller
  return Now() - last_activity_ns.load(std::memory_order_relaxed) < kRecentNs;
}

}  // namespace txla::runtime
