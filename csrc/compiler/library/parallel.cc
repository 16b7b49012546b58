#include "compiler/library/parallel.h"

#include <cblas.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "debug/config.h"
#include "metrics/metrics.h"
#include "metrics/trace.h"
#include "runtime/host_activity.h"

#ifdef TXLA_WITH_ONEDNN
// The OpenMP runtime oneDNN runs on (Debian's libdnnl uses libgomp).
extern "C" int omp_get_max_threads();
extern "C" void omp_set_num_threads(int);
#endif

namespace txla::compiler::library {
namespace {

thread_local bool in_parallel_region = false;

constexpr int kChunksPerThread = 2;
constexpr std::chrono::microseconds kPoll{50};

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Takes the pool's lock, spinning a while first. It is held for a few instructions at a time,
// but a thread that blocks on it sleeps in the kernel, and waking takes tens of microseconds on
// these VMs: longer than a small GEMM's parts. A worker that saw a region open and met the
// caller's lock slept through the region, and the caller ran every part itself (a
// [128,64]x[64,64] product took 17 us on two threads, 7 on one).
constexpr int kSpinTries = 4000;

void LockSpinning(std::unique_lock<std::mutex>& lock) {
  for (int i = 0; i < kSpinTries; ++i) {
    if (lock.try_lock()) return;
    CpuRelax();
  }
  lock.lock();
}

class Pool {
 public:
  explicit Pool(int workers) {
    openblas_set_num_threads(1);  // see parallel.h: one pool, ours
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { Work(/*leaves_host_a_core=*/w == 0); });
  }

  // A graph's kernels begin. A worker asleep is woken to poll for its regions only while a host
  // thread waits for it (see Work): a wake-up is a system call, and a run whose caller is the
  // host itself (a read beside the queue: `generate` runs fifty a call) has nobody waiting.
  void BeginRun() {
    std::lock_guard<std::mutex> lock(mu_);
    runs_.fetch_add(1, std::memory_order_acq_rel);
    WakeToPollLocked();
  }
  void EndRun() { runs_.fetch_sub(1, std::memory_order_acq_rel); }

  // A host thread stopped tracing (a barrier, or a wait): the worker that left it a core joins
  // the open region; one asleep during the run a host now waits for polls for its regions.
  void WakeDeferred() {
    std::lock_guard<std::mutex> lock(mu_);
    if (task_ != nullptr && defer_to_host_ && next_ < chunks_) cv_.notify_all();
    WakeToPollLocked();
  }

  // Never destroyed (a static pointer): workers may be parked at exit. Returns how many chunks
  // the calling thread ran itself.
  // defer_to_host: while a host thread traces, one worker leaves it a core, taking no chunks
  // until the host stops (WakeDeferred) and the region's remaining chunks are still open.
  int Run(int chunks, const std::function<void(int)>& task, bool defer_to_host) {
    caller_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
    int ran_here = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      task_ = &task;
      next_ = 0;
      chunks_ = chunks;
      pending_.store(chunks, std::memory_order_relaxed);
      defer_to_host_ = defer_to_host;
      ++generation_;
    }
    // A lone worker is not woken into a region it would leave to a tracing host at once: the
    // wake-up, per region, cost the GPT decoder's host-bound steps 3-5%.
    if (!defer_to_host || threads_.size() > 1 || !runtime::OtherHostThreadBusy()) cv_.notify_all();
    in_parallel_region = true;
    std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
    LockSpinning(lock);
    while (next_ < chunks_) {  // the caller takes chunks too
      int chunk = next_++;
      lock.unlock();
      task(chunk);
      ++ran_here;
      LockSpinning(lock);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
    // A worker's part is as short as the caller's: it is waited for spinning, then asleep.
    if (pending_.load(std::memory_order_acquire) != 0) {
      lock.unlock();
      const auto deadline = std::chrono::steady_clock::now() + kPoll;
      while (pending_.load(std::memory_order_acquire) != 0 && std::chrono::steady_clock::now() < deadline) CpuRelax();
      LockSpinning(lock);
      done_cv_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    task_ = nullptr;
    in_parallel_region = false;
    return ran_here;
  }

 private:
  bool StayAwake() const {
    return runs_.load(std::memory_order_acquire) == 1 && runtime::SomeHostThreadWaiting();
  }

  void WakeToPollLocked() {
    if (sleepers_ > 0 && StayAwake()) {
      ++wake_epoch_;
      cv_.notify_all();
    }
  }

  void Work(bool leaves_host_a_core) {
    in_parallel_region = true;
    uint64_t seen = 0;
    for (;;) {
      // Kernels call the pool back to back (im2col, GEMM, col2im): poll for the next region
      // before sleeping, so waking costs no system call; for a few tens of microseconds, or, while
      // a host thread waits for the one graph running (RunScope), for as long as it runs: its
      // regions come between kernels of tens of microseconds, and a worker that had gone to sleep
      // woke 50-80 us after the next region opened, when the caller had run its parts alone.
      // Only then: a host thread running Python after a barrier, its loss not yet read, is not
      // known to be tracing, and a worker polling through the run kept it off the cores until
      // the run ended (GPT-2's loss, released early, was read after its backward pass). Not at all
      // while a host thread traces, nor while several devices' graphs run (their threads need the
      // cores).
      auto deadline = std::chrono::steady_clock::now() + kPoll;
      while (generation_.load(std::memory_order_acquire) == seen && !runtime::OtherHostThreadBusy() &&
             (StayAwake() || std::chrono::steady_clock::now() < deadline))
        CpuRelax();
      std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
      LockSpinning(lock);
      auto region_open = [&] { return generation_.load() != seen && task_ != nullptr && next_ < chunks_; };
      if (!region_open() && generation_.load() != seen) {
        // A region came and went while this worker polled or slept: poll for the next.
        seen = generation_.load();
        continue;
      }
      // Asleep until a region opens, or a host waits for a run (then it polls for its regions).
      const uint64_t wake_epoch = wake_epoch_;
      ++sleepers_;
      cv_.wait(lock, [&] { return region_open() || wake_epoch_ != wake_epoch; });
      --sleepers_;
      if (!region_open()) continue;
      // A worker woken onto the CPU of the thread that woke it (the kernel places a wakee next
      // to its waker) preempts it, and neither is moved to the idle core soon: both count as
      // cache-hot. Then the worker ran every chunk of each region while the caller waited, run
      // after run (the MLP through 'openxla' shared 10-25% of its regions between the threads;
      // the profiler's timeline shows it as the calling thread running none of the chunks).
      // Moved at once, the threads sit apart: a few moves a process.
      int caller_cpu = caller_cpu_.load(std::memory_order_relaxed);
      if (sched_getcpu() == caller_cpu) {
        lock.unlock();
        if (MoveThisThreadOffCpu(caller_cpu)) TXLA_COUNTER("ParallelWorkerMovedOffCallersCpu", 1);
        LockSpinning(lock);
        if (!region_open()) {
          seen = generation_.load();
          continue;
        }
      }
      while (task_ != nullptr && next_ < chunks_) {
        if (leaves_host_a_core && defer_to_host_ && runtime::OtherHostThreadBusy()) {
          // The host is tracing: its core is left to it until it stops (WakeDeferred), or
          // until the host's trace window has passed without a node (then it checks again).
          cv_.wait_for(lock, runtime::kHostTraceWindow);
          continue;
        }
        int chunk = next_++;
        const std::function<void(int)>* task = task_;
        lock.unlock();
        (*task)(chunk);
        LockSpinning(lock);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_cv_.notify_all();
      }
      seen = generation_.load();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* task_ = nullptr;
  int next_ = 0, chunks_ = 0;
  std::atomic<int> pending_{0};  // chunks not yet run; read unlocked by a caller spinning for it
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> caller_cpu_{-1};  // where the thread that opened the region runs
  std::atomic<int> runs_{0};         // graphs running now (RunScope)
  int sleepers_ = 0;                 // workers blocked in cv_, under mu_
  uint64_t wake_epoch_ = 0;          // bumped to wake sleepers to poll, under mu_
  bool defer_to_host_ = false;        // this region's chunks wait for a tracing host to stop
};

std::mutex& RunMutex() {  // one parallel region at a time (graphs run on one queue per device)
  static std::mutex mu;
  return mu;
}

Pool& ThePool() {
  static Pool* pool = [] {
    Pool* p = new Pool(NumThreads() - 1);
    runtime::SetTraceEndedListener([] { ThePool().WakeDeferred(); });
    return p;
  }();
  return *pool;
}

}  // namespace

int NumThreads() {
  static const int threads = [] {
    int n = static_cast<int>(debug::GetConfig().num_threads);
    if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, n);
  }();
  return threads;
}

void ParallelChunks(int64_t count, int threads,
                    const std::function<void(int, int64_t, int64_t)>& body, Chunking chunking) {
  threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({threads, count, NumThreads()})));
  // A host thread tracing the next step keeps a core (runtime/host_activity.h). A balanced
  // region keeps its chunks open to every thread: one worker leaves them to the others while the
  // host traces and joins when the host stops, so a region that began during a trace does not
  // run on one thread to its end (the MNIST CNN's convolution gradients, 0.5-0.8 ms, ran on one
  // core for 0.4 ms a step after the host had stopped: its steps 4-8% faster read every step).
  // One chunk per thread cannot be shared later (a GEMM's parts): such a region runs on one
  // thread fewer.
  const bool defer = chunking == Chunking::kBalanced;
  bool yielded = threads > 1 && threads >= NumThreads() && runtime::OtherHostThreadBusy();
  if (yielded) {
    if (!defer) --threads;
    TXLA_COUNTER("ParallelYieldedToHost", 1);
  }
  // On the profiler's timeline, around the kernel or library call that split its work: whether
  // it ran on every thread, or began while a host thread was tracing, and how many of its chunks
  // the calling thread ran (all: the threads did not share the work).
  metrics::TraceSpan span("parallel", in_parallel_region ? "nested region"
                                      : yielded          ? "region, a core left to the host"
                                      : threads == 1     ? "region, one thread"
                                                         : "region, every thread");
  if (threads == 1 || in_parallel_region) {
    body(0, 0, count);
    return;
  }
  // More chunks than threads, claimed one at a time: a worker still waking up when the region
  // starts takes what the caller has not reached, where the caller used to run every chunk
  // alone (a 4 ms optimizer update, or a GEMM, ran on one core whenever the worker slept).
  int64_t parts = threads * (chunking == Chunking::kBalanced ? kChunksPerThread : 1);
  int64_t chunk = (count + parts - 1) / parts;
  int chunks = static_cast<int>((count + chunk - 1) / chunk);
  std::lock_guard<std::mutex> lock(RunMutex());
  int ran_here = ThePool().Run(chunks, [&](int t) {
    int64_t begin = t * chunk, end = std::min(count, begin + chunk);
    if (begin < end) body(t, begin, end);
  }, defer);
  if (span.recording())
    span.Arg("chunks run by the calling thread", std::to_string(ran_here) + " of " + std::to_string(chunks));
}

RunScope::RunScope() { ThePool().BeginRun(); }
RunScope::~RunScope() { ThePool().EndRun(); }

bool MoveThisThreadOffCpu(int cpu) {
  cpu_set_t allowed;
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return false;
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0) return false;
  // Leaving the CPU out of the affinity migrates the thread before the call returns; the mask is
  // put back at once, so other processes and other devices' threads find nothing pinned.
  bool moved = sched_setaffinity(0, sizeof(others), &others) == 0;
  sched_setaffinity(0, sizeof(allowed), &allowed);
  return moved;
}

void UseOneOpenMpThread() {
#ifdef TXLA_WITH_ONEDNN
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);
#endif
}

}  // namespace txla::compiler::library
