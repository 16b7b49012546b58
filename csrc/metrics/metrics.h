// Counters and sampled metrics, in the shape PyTorch/XLA reports them.
//
// A Counter is a named integer (CachedCompile, aten::nonzero); a Metric is a stream of samples
// (CompileTime in nanoseconds, TransferToDeviceTime) summarized as total, rate and percentiles.
// Both are registered once by name and live for the process; hot paths keep a pointer obtained
// through the TXLA_COUNTER / TXLA_METRIC macros so that counting costs one atomic add.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "metrics/trace.h"

namespace txla::metrics {

class Counter {
 public:
  explicit Counter(std::string name) : name_(std::move(name)) {}
  void Add(int64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t Value() const { return value_.load(std::memory_order_relaxed); }
  void Clear() { value_.store(0, std::memory_order_relaxed); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::atomic<int64_t> value_{0};
};

// How a metric's values are printed: durations in nanoseconds, byte counts, or plain numbers.
enum class MetricUnit { kTimeNs, kBytes, kNumber };

struct MetricSnapshot {
  int64_t total_samples = 0;
  double accumulator = 0;
  std::vector<double> recent_values;  // the kept window, oldest first
  std::vector<int64_t> recent_stamps_ns;
  double window_seconds = 0;          // time between the first and last kept sample
};

class Metric {
 public:
  Metric(std::string name, MetricUnit unit, size_t window = 1024)
      : name_(std::move(name)), unit_(unit), window_(window) {}
  void AddSample(double value);
  // A sample taken at `now_ns` (NowNs()): a timer that has just read the clock passes its reading.
  void AddSampleAt(double value, int64_t now_ns);
  MetricSnapshot Snapshot() const;
  void Clear();
  const std::string& name() const { return name_; }
  MetricUnit unit() const { return unit_; }

 private:
  std::string name_;
  MetricUnit unit_;
  size_t window_;
  mutable std::mutex mu_;
  int64_t total_samples_ = 0;
  double accumulator_ = 0;
  std::vector<double> values_;  // ring buffer of at most window_ samples
  std::vector<int64_t> stamps_ns_;
  size_t next_ = 0;
};

// Registry lookups create on first use; the returned pointer is stable for the process.
Counter* GetCounter(const std::string& name);
Metric* GetMetric(const std::string& name, MetricUnit unit = MetricUnit::kTimeNs);

std::vector<std::string> CounterNames();  // only counters with a non-zero value
std::vector<std::string> MetricNames();   // only metrics with samples
// nullptr when the name is unknown.
Counter* FindCounter(const std::string& name);
Metric* FindMetric(const std::string& name);
void ClearCounters();
void ClearMetrics();

int64_t NowNs();

// While one lives on a thread, the graphs that thread compiles and runs are single eager ops:
// their times go to EagerOpCompileTime / EagerOpExecuteTime (PyTorch/XLA's names) instead of
// CompileTime / ExecuteTime. Work queued for another thread carries the flag along (InEagerOp()).
class EagerOpScope {
 public:
  explicit EagerOpScope(bool eager = true);
  ~EagerOpScope();
  EagerOpScope(const EagerOpScope&) = delete;
  EagerOpScope& operator=(const EagerOpScope&) = delete;

 private:
  bool previous_;
};
bool InEagerOp();
// The compile / execute time metric for the current thread's kind of graph.
Metric* CompileTimeMetric();
Metric* ExecuteTimeMetric();

// Adds the elapsed wall time to a metric when it leaves scope.
class ElapsedSample {
 public:
  explicit ElapsedSample(Metric* metric) : metric_(metric), start_(NowNs()) {}
  ~ElapsedSample() {
    const int64_t now = NowNs();  // one clock read stamps and ends the sample (once per traced op)
    metric_->AddSampleAt(static_cast<double>(now - start_), now);
  }
  ElapsedSample(const ElapsedSample&) = delete;
  ElapsedSample& operator=(const ElapsedSample&) = delete;

 private:
  Metric* metric_;
  int64_t start_;
};

// An ElapsedSample that, while a profiler capture is active, is also a span of the timeline
// named after the metric.
class ScopedTimer {
 public:
  explicit ScopedTimer(Metric* metric) : elapsed_(metric), span_("xla", metric->name()) {}
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  ElapsedSample elapsed_;
  TraceSpan span_;
};

}  // namespace txla::metrics

#define TXLA_CONCAT_IMPL(a, b) a##b
#define TXLA_CONCAT(a, b) TXLA_CONCAT_IMPL(a, b)
// Counts one event under a fixed name; the registry lookup happens once per call site.
#define TXLA_COUNTER(name, n)                                                        \
  do {                                                                               \
    static ::txla::metrics::Counter* TXLA_CONCAT(counter_, __LINE__) =               \
        ::txla::metrics::GetCounter(name);                                           \
    TXLA_CONCAT(counter_, __LINE__)->Add(n);                                         \
  } while (0)
// Times the rest of the enclosing scope into a fixed-name time metric.
#define TXLA_TIMED(name)                                                             \
  static ::txla::metrics::Metric* TXLA_CONCAT(metric_, __LINE__) =                   \
      ::txla::metrics::GetMetric(name);                                              \
  ::txla::metrics::ScopedTimer TXLA_CONCAT(timer_, __LINE__)(TXLA_CONCAT(metric_, __LINE__))
