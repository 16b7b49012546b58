#include "metrics/metrics.h"

#include <map>
#include <memory>

namespace txla::metrics {
namespace {

struct Registry {
  std::mutex mu;
  // std::map keeps the report sorted by name, as PyTorch/XLA prints it.
  std::map<std::string, std::unique_ptr<Counter>> counters;
  std::map<std::string, std::unique_ptr<Metric>> metrics;
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // never destroyed: counters outlive static teardown
  return *registry;
}

}  // namespace

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Metric::AddSample(double value) { AddSampleAt(value, NowNs()); }

void Metric::AddSampleAt(double value, int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  ++total_samples_;
  accumulator_ += value;
  if (values_.size() < window_) {
    values_.push_back(value);
    stamps_ns_.push_back(now);
  } else {
    values_[next_] = value;
    stamps_ns_[next_] = now;
    next_ = (next_ + 1) % window_;
  }
}

MetricSnapshot Metric::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  MetricSnapshot snap;
  snap.total_samples = total_samples_;
  snap.accumulator = accumulator_;
  size_t n = values_.size();
  snap.recent_values.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    snap.recent_values.push_back(values_[(next_ + i) % n]);
    snap.recent_stamps_ns.push_back(stamps_ns_[(next_ + i) % n]);
  }
  if (n > 1) {
    int64_t first = stamps_ns_[next_ % n];
    int64_t last = stamps_ns_[(next_ + n - 1) % n];
    snap.window_seconds = static_cast<double>(last - first) * 1e-9;
  }
  return snap;
}

void Metric::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  total_samples_ = 0;
  accumulator_ = 0;
  values_.clear();
  stamps_ns_.clear();
  next_ = 0;
}

Counter* GetCounter(const std::string& name) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto& slot = r.counters[name];
  if (!slot) slot = std::make_unique<Counter>(name);
  return slot.get();
}

Metric* GetMetric(const std::string& name, MetricUnit unit) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto& slot = r.metrics[name];
  if (!slot) slot = std::make_unique<Metric>(name, unit);
  return slot.get();
}

std::vector<std::string> CounterNames() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (auto& [name, counter] : r.counters)
    if (counter->Value() != 0) names.push_back(name);
  return names;
}

std::vector<std::string> MetricNames() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (auto& [name, metric] : r.metrics)
    if (metric->Snapshot().total_samples > 0) names.push_back(name);
  return names;
}

Counter* FindCounter(const std::string& name) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.counters.find(name);
  return it == r.counters.end() ? nullptr : it->second.get();
}

Metric* FindMetric(const std::string& name) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.metrics.find(name);
  return it == r.metrics.end() ? nullptr : it->second.get();
}

void ClearCounters() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& [name, counter] : r.counters) counter->Clear();
}

void ClearMetrics() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& [name, metric] : r.metrics) metric->Clear();
}

namespace {
thread_local bool in_eager_op = false;
}  // namespace

EagerOpScope::EagerOpScope(bool eager) : previous_(in_eager_op) { in_eager_op = eager; }
EagerOpScope::~EagerOpScope() { in_eager_op = previous_; }
bool InEagerOp() { return in_eager_op; }

Metric* CompileTimeMetric() {
  static Metric* lazy = GetMetric("CompileTime");
  static Metric* eager = GetMetric("EagerOpCompileTime");
  return in_eager_op ? eager : lazy;
}

Metric* ExecuteTimeMetric() {
  static Metric* lazy = GetMetric("ExecuteTime");
  static Metric* eager = GetMetric("EagerOpExecuteTime");
  return in_eager_op ? eager : lazy;
}

}  // namespace txla::metrics
