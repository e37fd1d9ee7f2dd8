// The comparison table reads metrics by name (report_comparison.cpp): every
// name it uses must be one ScalarMetrics produces, or its cell silently shows
// "-" beside the paper's number.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "bp/loadgen/report.h"
#include "metrics_fixture.h"

namespace bp::loadgen {
namespace {

// The hand-made run plus tenant c in class P3 (one OK call, one finished
// workflow), so every class P1-P3 has OK calls, HTTP answers and workflows.
RunRecords ThreeClassRun() {
  RunRecords r = testing::HandMadeRun();
  r.tenants.push_back({"c", 3, 1.0, 0.2, 1, 0, 800'000});
  r.activities.push_back(testing::Activity(7, 4, 2, 0, 40'000, 90'000, 100'000, true, 10, 2));
  r.attempts.push_back(testing::Attempt(7, 2, 40'000, 200));
  r.slots_held.push_back({7, 2, 40'000, 90'000});
  r.workflows.push_back({4, 2, 0, 100'000});
  return r;
}

TEST(ReportComparison, EveryMetricNameItReadsIsProduced) {
  std::set<std::string> produced;
  RunRecords run = ThreeClassRun();
  // TTFT from schedule reads the activity row of an attempt's activity_id;
  // the fixture's ids count from 1, so its last attempt needs a row 7.
  run.activities.push_back(run.activities.back());
  for (AttemptRecord& a : run.attempts) {  // streamed answers, for the streaming rows' names
    if (a.status != 200) continue;
    a.stream = 1;
    a.ttft_us = 1000;
    a.itl_us = 100;
  }
  for (const auto& [name, value] : ScalarMetrics(ComputeRunMetrics(run))) {
    produced.insert(name);
  }
  ASSERT_TRUE(produced.count("class.P3.workflow_end_mean_s"));  // the fixture covers P3
  const std::vector<std::string> names = ComparisonMetricNames();
  for (const char* known :
       {"share_429", "drf_jain", "achievement_jain", "class.P1.ok_rps", "class.P1.http_p95_ms",
        "class.P3.workflow_end_mean_s", "http.p50_ms", "failed_calls", "max_first_ok_wait_s"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), known), names.end()) << known;
  }
  for (const std::string& name : names) {
    EXPECT_TRUE(produced.count(name))
        << "report_comparison.cpp reads \"" << name << "\", which ScalarMetrics does not produce";
  }
  // Each name once.
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  // The paper's workflow completion (57.0/104.7 s) counts from the run's
  // start: a workflow's own duration is never set beside it.
  EXPECT_EQ(std::find(names.begin(), names.end(), "class.P1.workflow_mean_s"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "class.P3.workflow_mean_s"), names.end());
}

TEST(ReportComparison, WorkflowCompletionRowIsTimeSinceRunStart) {
  RunRecords r = ThreeClassRun();
  r.workload = "token-bound";
  r.configuration = "bp";
  const std::string md = ComparisonMarkdown({SummarizeWorkload({ComputeRunMetrics(r)})});
  // P1 (tenant a): its workflow ends at 1 s real = 2 s paper; P3 (c): 0.2 s
  // paper (one repeat: no interval).
  EXPECT_NE(md.find("| token-bound | workflow completion since run start P1/P3 (s) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 2.0 / 0.2 (paper 57.0/104.7) |"), std::string::npos) << md;
}

}  // namespace
}  // namespace bp::loadgen
