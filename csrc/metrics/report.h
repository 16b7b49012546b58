// The metrics report text, in PyTorch/XLA's format:
//
//   Metric: CompileTime
//     TotalSamples: 3
//     Accumulator: 012ms345.678us
//     ValueRate: 001ms234.000us / second
//     Rate: 0.5 / second
//     Percentiles: 1%=...; 5%=...; ...
//   Counter: CachedCompile
//     Value: 3
//
// Metrics with no samples and counters at zero are left out.
#pragma once

#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace txla::metrics {

std::string FormatValue(double value, MetricUnit unit);
std::string MetricReport(const Metric& metric);
std::string CounterReport(const Counter& counter);
// The full report: every metric with samples, then every non-zero counter.
std::string Report();
// Only the named metrics and counters (those that have data).
std::string ShortReport(const std::vector<std::string>& counter_names,
                        const std::vector<std::string>& metric_names);

}  // namespace txla::metrics
