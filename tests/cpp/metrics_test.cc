#include <gtest/gtest.h>

#include "metrics/metrics.h"
#include "metrics/report.h"

namespace txla::metrics {
namespace {

TEST(MetricsTest, CounterCountsAndClears) {
  Counter* c = GetCounter("TestCounterA");
  c->Clear();
  c->Add(2);
  c->Add();
  EXPECT_EQ(c->Value(), 3);
  EXPECT_EQ(GetCounter("TestCounterA"), c);  // one counter per name
  EXPECT_NE(CounterReport(*c).find("Counter: TestCounterA\n  Value: 3\n"), std::string::npos);
  c->Clear();
  EXPECT_EQ(c->Value(), 0);
}

TEST(MetricsTest, ZeroCountersAndEmptyMetricsAreLeftOutOfTheReport) {
  GetCounter("TestZero")->Clear();
  GetMetric("TestEmptyMetric")->Clear();
  std::string report = Report();
  EXPECT_EQ(report.find("TestZero"), std::string::npos);
  EXPECT_EQ(report.find("TestEmptyMetric"), std::string::npos);
  GetCounter("TestZero")->Add(1);
  EXPECT_NE(Report().find("Counter: TestZero"), std::string::npos);
  GetCounter("TestZero")->Clear();
}

TEST(MetricsTest, TimeFormatMatchesPyTorchXla) {
  // 6 min 9 s 401 ms 746.001 us, as in the seeds' example report.
  EXPECT_EQ(FormatValue(369401746001.0, MetricUnit::kTimeNs), "06m09s401ms746.001us");
  EXPECT_EQ(FormatValue(1032778.0, MetricUnit::kTimeNs), "001ms32.778us");
  EXPECT_EQ(FormatValue(500.0, MetricUnit::kTimeNs), "0.500us");
}

TEST(MetricsTest, MetricReportHasTotalsAndPercentiles) {
  Metric* m = GetMetric("TestTime");
  m->Clear();
  for (int i = 1; i <= 100; ++i) m->AddSample(i * 1000.0);  // 1..100 us
  MetricSnapshot snap = m->Snapshot();
  EXPECT_EQ(snap.total_samples, 100);
  EXPECT_DOUBLE_EQ(snap.accumulator, 5050 * 1000.0);
  std::string text = MetricReport(*m);
  EXPECT_NE(text.find("Metric: TestTime\n  TotalSamples: 100\n  Accumulator: 005ms50.000us"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Percentiles: 1%=2.000us; 5%=6.000us"), std::string::npos) << text;
  EXPECT_NE(text.find("99%=100.000us"), std::string::npos) << text;
  m->Clear();
  EXPECT_EQ(m->Snapshot().total_samples, 0);
}

TEST(MetricsTest, WindowKeepsTheNewestSamples) {
  Metric m("Windowed", MetricUnit::kNumber, /*window=*/4);
  for (int i = 0; i < 10; ++i) m.AddSample(i);
  MetricSnapshot snap = m.Snapshot();
  EXPECT_EQ(snap.total_samples, 10);
  EXPECT_EQ(snap.recent_values, (std::vector<double>{6, 7, 8, 9}));
}

}  // namespace
}  // namespace txla::metrics
