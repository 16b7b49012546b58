// Splitting library work over threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace txla::compiler::library {

// Threads the library uses: TXLA_NUM_THREADS, default every core.
int NumThreads();

// Runs body(thread, begin, end) over [0, count) in contiguous chunks, one per thread; the calling
// thread takes the first chunk.
template <typename Body>
void ParallelChunks(int64_t count, int threads, Body body) {
  threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, count)));
  if (threads == 1) {
    body(0, int64_t{0}, count);
    return;
  }
  std::vector<std::thread> workers;
  int64_t chunk = (count + threads - 1) / threads;
  for (int t = 1; t < threads; ++t) {
    int64_t begin = t * chunk, end = std::min(count, begin + chunk);
    if (begin < end) workers.emplace_back(body, t, begin, end);
  }
  body(0, int64_t{0}, std::min(count, chunk));
  for (std::thread& w : workers) w.join();
}

}  // namespace txla::compiler::library
