// The experiment loop (experiment.h) against the real mockapi binary: every
// configuration x repeat run writes its folder, the workload report and the
// comparison, and prints each run's table; a failing run stops the loop with
// "<workload> <configuration> #<repeat>: ..." and writes no comparison; a
// shard's failure names the part.
#include "bp/loadgen/experiment.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "bp/loadgen/shard.h"
#include "mockapi_process.h"
#include "support/valkey_server.h"
#include "workload_builder.h"

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;

// One tenant, 2 one-activity workflows, no service time: a run of a few
// real milliseconds at speedup 20.
Workload Tiny() {
  nlohmann::json doc = testing::OneTenantWorkloadDoc("tiny");
  doc["slots"] = 2;
  doc["run_length_cap_s"] = 30;
  doc["tenants"][0]["concurrency"] = 2;
  doc["tenants"][0]["workflows"] = 2;
  doc["upstream"] = {
      {"latency", {{"min_ms", 0}, {"max_ms", 0}, {"per_output_token_ms", 0}}},
      {"limits", {{{"dimension", "requests"}, {"limit", 100}, {"window_s", 1.0}}}}};
  return testing::BuildWorkload(doc);
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("experiment_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(Experiment, EveryConfigurationAndRepeatWritesItsRunAndTheReports) {
  const std::string bin = test::MockapiBinary();
  ASSERT_FALSE(bin.empty()) << test::kNoMockapi;
  test::MockapiProcess mockapi(bin, {});
  ASSERT_TRUE(mockapi.running());
  RunOptions run;
  run.speedup = 20;
  run.upstream_url = mockapi.url();
  run.progress = false;
  ExperimentOptions options;
  options.configurations = {"naive", "tn"};
  options.repeats = 2;
  options.out_dir = FreshDir("ok").string();
  options.report.figures = false;
  std::ostringstream out;
  ASSERT_TRUE(RunExperiment({Tiny()}, run, options, out).ok()) << out.str();
  for (const char* c : {"naive", "tn"}) {
    for (const char* r : {"r0", "r1"}) {
      EXPECT_TRUE(fs::exists(fs::path(options.out_dir) / "tiny" / c / r / "summary.json"))
          << c << "/" << r;
    }
    EXPECT_FALSE(fs::exists(fs::path(options.out_dir) / "tiny" / c / "r2"));
  }
  EXPECT_TRUE(fs::exists(fs::path(options.out_dir) / "tiny" / "report.md"));
  EXPECT_TRUE(fs::exists(fs::path(options.out_dir) / "comparison.md"));
  // Four run tables, then the comparison and where the results are.
  const std::string text = out.str();
  for (const char* row :
       {"| tiny | naive | 0 |", "| tiny | naive | 1 |", "| tiny | tn | 0 |", "| tiny | tn | 1 |"}) {
    EXPECT_NE(text.find(row), std::string::npos) << row << "\n" << text;
  }
  EXPECT_LT(text.find("| tiny | naive | 1 |"), text.find("| tiny | tn | 0 |"));
  EXPECT_NE(text.find("results in " + options.out_dir + "\n"), std::string::npos) << text;
}

TEST(Experiment, AFailingRunStopsWithItsNameAndWritesNoComparison) {
  RunOptions run;
  run.upstream_url = "http://127.0.0.1:" + std::to_string(test::FreeLoopbackPort());
  run.progress = false;
  ExperimentOptions options;
  options.configurations = {"naive"};
  options.out_dir = FreshDir("fail").string();
  options.report.figures = false;
  std::ostringstream out;
  const Status s = RunExperiment({Tiny()}, run, options, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message().rfind("tiny naive #0: ", 0), 0u) << s.message();
  EXPECT_FALSE(fs::exists(fs::path(options.out_dir) / "comparison.md"));
  EXPECT_EQ(out.str(), "");
}

TEST(Experiment, AFailingShardNamesItsPart) {
  RunOptions run;
  run.configuration = "naive";
  run.upstream_url = "http://127.0.0.1:" + std::to_string(test::FreeLoopbackPort());
  run.progress = false;  // start_at_unix_ms left 0: RunShard refuses
  auto shard = ParseShard("1/2");
  ASSERT_TRUE(shard.ok());
  std::ostringstream out;
  const Status s = RunShardToFile(Tiny(), run, *shard, FreshDir("shard").string(), out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("tiny naive shard 1/2: ", 0), 0u) << s.message();
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace bp::loadgen
