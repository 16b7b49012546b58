#include "compiler/library/parallel.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "metrics/metrics.h"
#include "runtime/host_activity.h"

namespace txla::compiler::library {
namespace {

cpu_set_t Affinity() {
  cpu_set_t set;
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return set;
}

// The pool's worker leaves the CPU of the thread that woke it this way: it must land on another
// CPU and keep every CPU it was allowed (nothing stays pinned).
TEST(ParallelTest, AThreadMovedOffItsCpuRunsElsewhereAndKeepsItsAffinity) {
  std::thread([] {
    cpu_set_t allowed = Affinity();
    if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "one CPU: nowhere to move";
    int before = sched_getcpu();
    ASSERT_TRUE(MoveThisThreadOffCpu(before));
    EXPECT_NE(sched_getcpu(), before);
    cpu_set_t after = Affinity();
    EXPECT_TRUE(CPU_EQUAL(&after, &allowed));
  }).join();
}

TEST(ParallelTest, AThreadAllowedOneCpuStaysThere) {
  std::thread([] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    int before = sched_getcpu();
    EXPECT_FALSE(MoveThisThreadOffCpu(before));
    EXPECT_EQ(sched_getcpu(), before);
    cpu_set_t after = Affinity();
    EXPECT_TRUE(CPU_EQUAL(&after, &one));
  }).join();
}

// A thread recording IR (a host tracing the next step) until it is told to wait on the device.
class Tracer {
 public:
  Tracer() : thread_([this] {
      while (!stop_.load()) {
        runtime::NoteHostActivity();
        started_.store(true);
      }
      runtime::HostWaitScope waiting;
    }) {
    while (!started_.load()) std::this_thread::yield();
  }
  ~Tracer() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false}, started_{false};
  std::thread thread_;
};

// Which threads ran a region's chunks; the calling thread's first chunk runs `first` before its
// own work.
struct ChunkThreads {
  std::mutex mu;
  std::set<std::thread::id> others;
  bool WaitForOther(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!others.empty()) return true;
      }
      std::this_thread::yield();
    }
    return false;
  }
};

TEST(ParallelTest, ABalancedRegionBegunDuringATraceIsJoinedWhenTheHostStops) {
  if (NumThreads() < 2) GTEST_SKIP() << "one thread: nothing to leave the host";
  ParallelChunks(64, NumThreads(), [](int, int64_t, int64_t) {});  // the pool is up
  Tracer tracer;
  ChunkThreads seen;
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> first{true};
  bool joined_during_trace = true, joined_after = false;
  ParallelChunks(64, NumThreads(), [&](int, int64_t, int64_t) {
    if (std::this_thread::get_id() != caller) {
      std::lock_guard<std::mutex> lock(seen.mu);
      seen.others.insert(std::this_thread::get_id());
      return;
    }
    if (!first.exchange(false)) return;
    // While the host traces, the other core stays its own: no worker takes a chunk (on two
    // cores; with more, the other workers do). A tracer descheduled for longer than the trace
    // window (a loaded machine) counts as idle, and the worker may join: then nothing is known.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    bool host_seen_idle = NumThreads() > 2;
    joined_during_trace = false;
    while (std::chrono::steady_clock::now() < until) {
      host_seen_idle |= !runtime::OtherHostThreadBusy();
      std::lock_guard<std::mutex> lock(seen.mu);
      joined_during_trace |= !seen.others.empty();
    }
    if (host_seen_idle) joined_during_trace = false;
    tracer.Stop();  // the host waits on the device: the worker joins the open region
    joined_after = seen.WaitForOther(std::chrono::seconds(2));
  }, Chunking::kBalanced);
  EXPECT_FALSE(joined_during_trace);
  EXPECT_TRUE(joined_after);
}

// Whether a region sees the host tracing depends on the scheduler (a tracer descheduled for
// longer than the trace window counts as idle), so each attempt reads the region's own decision
// (ParallelYieldedToHost) and checks what it must imply: yielded, one part on the calling
// thread; not yielded, a part per thread. Only "some attempt saw the tracer" needs the tracer to
// run, and it has many attempts to.
TEST(ParallelTest, APerThreadRegionBegunDuringATraceRunsOnOneThreadFewer) {
  if (NumThreads() != 2) GTEST_SKIP() << "checked on two threads";
  ParallelChunks(64, NumThreads(), [](int, int64_t, int64_t) {});
  Tracer tracer;
  const std::thread::id caller = std::this_thread::get_id();
  metrics::Counter* yields = metrics::GetCounter("ParallelYieldedToHost");
  int yielded_attempts = 0;
  for (int attempt = 0; attempt < 2000 && yielded_attempts < 20; ++attempt) {
    const int64_t yields_before = yields->Value();
    std::atomic<int> elsewhere{0}, calls{0};
    std::atomic<int64_t> largest{0};
    ParallelChunks(64, NumThreads(), [&](int, int64_t begin, int64_t end) {
      calls.fetch_add(1);
      if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
      if (end - begin > largest.load()) largest.store(end - begin);
    }, Chunking::kOnePerThread);
    const bool yielded = yields->Value() > yields_before;
    yielded_attempts += yielded ? 1 : 0;
    if (yielded) {
      ASSERT_EQ(calls.load(), 1) << "attempt " << attempt;
      ASSERT_EQ(elsewhere.load(), 0) << "attempt " << attempt;
      ASSERT_EQ(largest.load(), 64) << "one part, the whole range";
    } else {
      ASSERT_EQ(calls.load(), 2) << "attempt " << attempt;
    }
  }
  EXPECT_GT(yielded_attempts, 0) << "no region saw the tracer in 2000 attempts";
}

}  // namespace
}  // namespace txla::compiler::library
