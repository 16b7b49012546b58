#include "metrics/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace txla::metrics {
namespace {

std::string FormatTimeNs(double ns) {
  // 06m09s401ms746.001us: zero-padded units from the largest present one down to microseconds.
  char buf[96];
  std::string out;
  double us_total = ns / 1000.0;
  int64_t whole_ms = static_cast<int64_t>(us_total / 1000.0);
  double us = us_total - static_cast<double>(whole_ms) * 1000.0;
  int64_t hours = whole_ms / 3600000;
  int64_t minutes = (whole_ms / 60000) % 60;
  int64_t seconds = (whole_ms / 1000) % 60;
  int64_t ms = whole_ms % 1000;
  if (hours > 0) {
    std::snprintf(buf, sizeof(buf), "%02lldh", static_cast<long long>(hours));
    out += buf;
  }
  if (hours > 0 || minutes > 0) {
    std::snprintf(buf, sizeof(buf), "%02lldm", static_cast<long long>(minutes));
    out += buf;
  }
  if (hours > 0 || minutes > 0 || seconds > 0) {
    std::snprintf(buf, sizeof(buf), "%02llds", static_cast<long long>(seconds));
    out += buf;
  }
  if (whole_ms > 0) {
    std::snprintf(buf, sizeof(buf), "%03lldms", static_cast<long long>(ms));
    out += buf;
  }
  std::snprintf(buf, sizeof(buf), "%.3fus", us);
  out += buf;
  return out;
}

std::string FormatBytes(double bytes) {
  static const char* kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f%s", bytes, kUnits[unit]);
  return buf;
}

}  // namespace

std::string FormatValue(double value, MetricUnit unit) {
  switch (unit) {
    case MetricUnit::kTimeNs:
      return FormatTimeNs(value);
    case MetricUnit::kBytes:
      return FormatBytes(value);
    case MetricUnit::kNumber: {
      std::ostringstream ss;
      ss << value;
      return ss.str();
    }
  }
  return "";
}

std::string MetricReport(const Metric& metric) {
  MetricSnapshot snap = metric.Snapshot();
  std::ostringstream ss;
  ss << "Metric: " << metric.name() << "\n";
  ss << "  TotalSamples: " << snap.total_samples << "\n";
  ss << "  Accumulator: " << FormatValue(snap.accumulator, metric.unit()) << "\n";
  if (snap.window_seconds > 0) {
    double window_sum = 0;
    for (double v : snap.recent_values) window_sum += v;
    ss << "  ValueRate: " << FormatValue(window_sum / snap.window_seconds, metric.unit())
       << " / second\n";
    ss << "  Rate: " << static_cast<double>(snap.recent_values.size()) / snap.window_seconds
       << " / second\n";
  }
  std::vector<double> sorted = snap.recent_values;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) {
    static const int kPercentiles[] = {1, 5, 10, 20, 50, 80, 90, 95, 99};
    ss << "  Percentiles: ";
    for (size_t i = 0; i < sizeof(kPercentiles) / sizeof(int); ++i) {
      size_t index = std::min(sorted.size() - 1,
                              static_cast<size_t>(kPercentiles[i] / 100.0 * sorted.size()));
      ss << (i ? "; " : "") << kPercentiles[i] << "%="
         << FormatValue(sorted[index], metric.unit());
    }
    ss << "\n";
  }
  return ss.str();
}

std::string CounterReport(const Counter& counter) {
  std::ostringstream ss;
  ss << "Counter: " << counter.name() << "\n  Value: " << counter.Value() << "\n";
  return ss.str();
}

std::string Report() {
  std::string out;
  for (const std::string& name : MetricNames()) out += MetricReport(*FindMetric(name));
  for (const std::string& name : CounterNames()) out += CounterReport(*FindCounter(name));
  return out;
}

std::string ShortReport(const std::vector<std::string>& counter_names,
                        const std::vector<std::string>& metric_names) {
  std::string out;
  for (const std::string& name : metric_names) {
    Metric* metric = FindMetric(name);
    if (metric && metric->Snapshot().total_samples > 0) out += MetricReport(*metric);
  }
  for (const std::string& name : counter_names) {
    Counter* counter = FindCounter(name);
    if (counter && counter->Value() != 0) out += CounterReport(*counter);
  }
  // As PyTorch/XLA's: the ops that ran on the CPU (counted as aten::<op>, .item()'s reads
  // included) are always in the short report.
  for (const std::string& name : CounterNames()) {
    if (name.rfind("aten::", 0) != 0 ||
        std::find(counter_names.begin(), counter_names.end(), name) != counter_names.end())
      continue;
    out += CounterReport(*FindCounter(name));
  }
  return out;
}

}  // namespace txla::metrics
