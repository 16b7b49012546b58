// The profiler's timeline: spans of host tracing, lowering, compilation, execution, transfers and
// CPU fallbacks, recorded while a capture is active (torch_xla.debug.profiler) and written as
// Chrome trace-event JSON, which Perfetto and chrome://tracing open. Every timed metric
// (TXLA_TIMED: CompileTime, ExecuteTime, TransferToDeviceTime, ...) is a span of its own, so the
// timeline and the metrics report never disagree. Inactive, a span costs one atomic load.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace txla::metrics {

namespace trace_internal {
extern std::atomic<bool> active;
int64_t NowUs();  // microseconds on the system clock: traces of several processes line up
void Record(const char* category, std::string name, int64_t start_us, int64_t end_us,
            std::vector<std::pair<std::string, std::string>> args);
}  // namespace trace_internal

inline bool TracingActive() { return trace_internal::active.load(std::memory_order_relaxed); }

// Starts a capture (events of an earlier, unfinished one are dropped).
void StartTracing();
// Ends the capture: its events as a Chrome trace-event JSON document.
std::string StopTracing();
// The name this thread's events are shown under ("xla:0 execution", ...).
void NameThisThread(const std::string& name);

// A span from construction to destruction; nothing is recorded unless a capture was active when
// it began. `name` is copied only then.
class TraceSpan {
 public:
  TraceSpan(const char* category, const char* name) : category_(category) {
    if (TracingActive()) name_ = name, start_ = trace_internal::NowUs();
  }
  TraceSpan(const char* category, const std::string& name) : TraceSpan(category, name.c_str()) {}
  ~TraceSpan() {
    if (start_ >= 0) trace_internal::Record(category_, std::move(name_), start_, trace_internal::NowUs(), std::move(args_));
  }
  // An argument shown with the span (only kept while recording).
  void Arg(const char* key, std::string value) {
    if (start_ >= 0) args_.emplace_back(key, std::move(value));
  }
  bool recording() const { return start_ >= 0; }
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;

 private:
  const char* category_;
  std::string name_;
  int64_t start_ = -1;
  std::vector<std::pair<std::string, std::string>> args_;
};

// Spans the host opens and closes from Python (xp.Trace): a stack per thread.
void PushHostSpan(const std::string& name, std::vector<std::pair<std::string, std::string>> args);
void PopHostSpan();

}  // namespace txla::metrics
