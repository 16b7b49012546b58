// Splitting library work over the device's threads.
//
// One small pool of persistent workers serves every library routine (GEMM, convolution,
// pooling), so threads are neither created per call nor left spinning by another library's pool:
// on a machine with few cores a second, busy-waiting thread pool (OpenBLAS's own) halves the
// speed of everything else. OpenBLAS is therefore set to one thread when the pool starts, and
// oneDNN's OpenMP to one thread per call (its team of two, sleeping or spinning between
// convolutions, cost ResNet-18 10-20 ms a step against this pool); GEMMs and convolutions are
// split into parts here instead.
#pragma once

#include <cstdint>
#include <functional>

namespace txla::compiler::library {

// Threads the library uses: TXLA_NUM_THREADS, default every core.
int NumThreads();

// How finely ParallelChunks cuts its range.
enum class Chunking {
  // A few chunks per thread, claimed one at a time: a worker that wakes late still takes a
  // share, and one that left a tracing host its core joins when the host stops. For loops
  // whose speed does not depend on the size of their parts.
  kBalanced,
  // One chunk per thread: for library calls that slow down when cut finer (each part of a GEMM
  // packs its shared operand again; 4 parts ran 3-20% slower than 2 on a Milan's two cores).
  kOnePerThread,
};

// Runs body(chunk, begin, end) over [0, count) on at most `threads` threads, in contiguous
// chunks that the calling thread and the pool's workers claim one at a time; returns when all
// are done. Nested calls (from inside a body) run serially.
void ParallelChunks(int64_t count, int threads,
                    const std::function<void(int chunk, int64_t begin, int64_t end)>& body,
                    Chunking chunking = Chunking::kBalanced);

// Around a graph's kernels: the pool's workers are woken as it begins (while its first kernels
// run) and poll for its parallel regions until it ends, instead of sleeping between them.
class RunScope {
 public:
  RunScope();
  ~RunScope();
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;
};

// Moves the calling thread off `cpu` to another CPU it may run on, leaving its affinity as it was
// (nothing stays pinned). False when it may run on no other CPU or the system refused. The pool's
// worker calls it when woken onto the CPU of the thread that opened a region (parallel.cc).
bool MoveThisThreadOffCpu(int cpu);

// Holds oneDNN's OpenMP to the calling thread (its own setting only), before a library call
// that runs one part of a split product or convolution. No effect in a build without oneDNN.
void UseOneOpenMpThread();

}  // namespace txla::compiler::library
