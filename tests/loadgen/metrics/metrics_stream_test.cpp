// Streaming metrics (metrics.h StreamMetrics) on exact synthetic timings:
// TTFT from the activity's schedule and from the send, ITL, cut streams, per
// run, class and tenant, and their scalar names.
#include <gtest/gtest.h>

#include <map>

#include "bp/loadgen/metrics.h"

namespace bp::loadgen {
namespace {

AttemptRecord Streamed(int64_t activity, int tenant, int64_t send, int stream, int64_t ttft,
                       int64_t itl, int status = 200) {
  AttemptRecord a;
  a.activity_id = activity;
  a.tenant_index = tenant;
  a.send_us = send;
  a.done_us = send + 100'000;
  a.status = status;
  a.stream = stream;
  a.ttft_us = ttft;
  a.itl_us = itl;
  return a;
}

// Speedup 2: paper ms = 2 x real ms.
RunRecords StreamRun() {
  RunRecords r;
  r.speedup = 2;
  r.cap_requests_per_s = 60;
  r.slots = 2;
  r.end_us = 1'000'000;
  r.tenants = {{"a", 1, 1.0, 0.6, 2, 0, 500'000}, {"b", 2, 1.0, 0.4, 1, 0, 500'000}};
  r.workflows = {{0, 0}, {1, 1}};
  for (int64_t id = 0; id < 3; ++id) {
    ActivityRecord a;
    a.id = id;
    a.workflow_id = id < 2 ? 0 : 1;
    a.tenant_index = id < 2 ? 0 : 1;
    a.scheduled_us = id == 1 ? 50'000 : 0;
    a.ok = true;
    a.completed_us = 400'000;
    r.activities.push_back(a);
  }
  r.attempts = {
      // a: scheduled 0, sent 100 ms, first token 30 ms later: TTFT 130 real = 260 paper ms.
      Streamed(0, 0, 100'000, 1, 30'000, 2'000),
      // a: a 429 first (not a stream answer), then a stream cut short:
      // scheduled 50 ms, first token at 310 ms: TTFT 260 real = 520 paper ms.
      Streamed(1, 0, 60'000, 1, -1, -1, 429),
      Streamed(1, 0, 300'000, 2, 10'000, -1),
      // b: TTFT 5 real = 10 paper ms; a plain answer is no stream sample.
      Streamed(2, 1, 0, 1, 5'000, 1'000),
      Streamed(2, 1, 0, 0, -1, -1),
  };
  return r;
}

TEST(StreamMetrics, TtftFromScheduleAndSendAndItlPerTenantClassAndRun) {
  const RunMetrics m = ComputeRunMetrics(StreamRun());
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
  for (const auto& [name, v] : ScalarMetrics(ComputeRunMetrics(StreamRun()))) s[name] = v;
  EXPECT_DOUBLE_EQ(s.at("stream.cut"), 1);
  EXPECT_DOUBLE_EQ(s.at("class.P2.ttft_p95_ms"), 10);
  EXPECT_DOUBLE_EQ(s.at("tenant.a.ttft_p50_ms"), 390);
  EXPECT_DOUBLE_EQ(s.at("tenant.b.http_ttft_p95_ms"), 10);
  EXPECT_DOUBLE_EQ(s.at("stream.itl_p50_ms"), 3);  // {4, 2}
  RunRecords plain = StreamRun();
  for (AttemptRecord& a : plain.attempts) a.stream = 0;
  for (const auto& [name, v] : ScalarMetrics(ComputeRunMetrics(plain))) {
    EXPECT_EQ(name.find("ttft"), std::string::npos) << name;
    EXPECT_NE(name, "stream.cut");
  }
}

}  // namespace
}  // namespace bp::loadgen
