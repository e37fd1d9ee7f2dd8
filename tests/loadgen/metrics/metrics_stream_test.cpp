// Streaming metrics (metrics.h StreamMetrics) on exact synthetic timings:
// TTFT from the activity's schedule and from the send, ITL, cut streams, per
// run, class and tenant, and their scalar names.
#include <gtest/gtest.h>

#include <map>

#include "bp/loadgen/metrics.h"
#include "metrics_fixture.h"

namespace bp::loadgen {
namespace {

using testing::StreamRun;

TEST(StreamMetrics, TtftFromScheduleAndSendAndItlPerTenantClassAndRun) {
  const RunMetrics m = ComputeRunMetrics(StreamRun("", 0, 1, true));
  ASSERT_EQ(m.tenants.size(), 2u);
  const StreamMetrics& a = m.tenants[0].stream;
  EXPECT_EQ(a.streamed, 2);
  EXPECT_EQ(a.cut, 1);
  EXPECT_EQ(a.ttft.count, 2);
  EXPECT_DOUBLE_EQ(a.ttft.p50_ms, 390);          // (260 + 520) / 2
  EXPECT_DOUBLE_EQ(a.ttft.p95_ms, 260 + 0.95 * 260);  // type 7
  EXPECT_DOUBLE_EQ(a.http_ttft.p50_ms, 40);      // (60 + 20) / 2
  EXPECT_EQ(a.itl.count, 1);                     // the cut stream had one token event
  EXPECT_DOUBLE_EQ(a.itl.p99_ms, 4);
  const StreamMetrics& b = m.tenants[1].stream;
  EXPECT_EQ(b.streamed, 1);
  EXPECT_DOUBLE_EQ(b.ttft.p95_ms, 10);
  EXPECT_DOUBLE_EQ(b.itl.p50_ms, 2);
  ASSERT_EQ(m.classes.size(), 2u);
  EXPECT_EQ(m.classes[0].stream.streamed, 2);
  EXPECT_DOUBLE_EQ(m.classes[1].stream.ttft.p50_ms, 10);
  EXPECT_EQ(m.stream.streamed, 3);
  EXPECT_EQ(m.stream.cut, 1);
  EXPECT_DOUBLE_EQ(m.stream.ttft.mean_ms, (260.0 + 520 + 10) / 3);
}

TEST(StreamMetrics, ScalarNamesOnlyWhereThereWereSamples) {
  std::map<std::string, double> s;
  for (const auto& [name, v] : ScalarMetrics(ComputeRunMetrics(StreamRun("", 0, 1, true)))) s[name] = v;
  EXPECT_DOUBLE_EQ(s.at("stream.cut"), 1);
  EXPECT_DOUBLE_EQ(s.at("class.P2.ttft_p95_ms"), 10);
  EXPECT_DOUBLE_EQ(s.at("tenant.a.ttft_p50_ms"), 390);
  EXPECT_DOUBLE_EQ(s.at("tenant.b.http_ttft_p95_ms"), 10);
  EXPECT_DOUBLE_EQ(s.at("stream.itl_p50_ms"), 3);  // {4, 2}
  RunRecords plain = StreamRun("", 0, 1, true);
  for (AttemptRecord& a : plain.attempts) a.stream = 0;
  for (const auto& [name, v] : ScalarMetrics(ComputeRunMetrics(plain))) {
    EXPECT_EQ(name.find("ttft"), std::string::npos) << name;
    EXPECT_NE(name, "stream.cut");
  }
}

}  // namespace
}  // namespace bp::loadgen
