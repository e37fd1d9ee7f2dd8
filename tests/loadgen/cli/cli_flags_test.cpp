// loadgen's command line read into a plan (bp/loadgen/cli.h) without
// running anything: each flag's range message, the checks between flags,
// and the plan a good command line gives. tests/cli checks the exit codes
// on the binary itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bp/loadgen/cli.h"

namespace bp::loadgen {
namespace {

using Kind = CliParse::Kind;
constexpr int64_t kNow = 1'800'000'000'000;
const std::string kCross = BP_SOURCE_DIR "/configs/workloads/cross-priority.json";
const std::string kJoinLeave = BP_SOURCE_DIR "/configs/scenarios/join-leave.json";

std::string OutDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return (std::filesystem::temp_directory_path() / "bp-cli-flags" / info->name()).string();
}

CliParse Parse(std::vector<std::string> args) {
  args.push_back("--out");
  args.push_back(OutDir());
  return ParseLoadgenArgs(args, kNow);
}

TEST(LoadgenCli, GoodCommandLineGivesThePlan) {
  CliParse p = Parse({"-w", kCross, "-c", "naive,bp", "-r", "3", "-s", "10", "--seed", "7",
                      "--gate-threads", "8", "--gate-timeout-ms", "2000", "--no-figures", "-q"});
  ASSERT_EQ(p.kind, Kind::kRun) << p.text;
  ASSERT_EQ(p.plan.workloads.size(), 1u);
  EXPECT_EQ(p.plan.workloads[0].name, "cross-priority");
  EXPECT_EQ(p.plan.configurations, (std::vector<std::string>{"naive", "bp"}));
  EXPECT_EQ(p.plan.repeats, 3);
  EXPECT_EQ(p.plan.run.speedup, 10.0);
  EXPECT_EQ(p.plan.run.seed, 7u);
  EXPECT_EQ(p.plan.run.gate_threads, 8);
  EXPECT_EQ(p.plan.run.gate_command_timeout_ms, 2000);
  EXPECT_FALSE(p.plan.figures);
  EXPECT_FALSE(p.plan.run.progress);
  EXPECT_FALSE(p.plan.shard.has_value());
  EXPECT_TRUE(std::filesystem::is_directory(OutDir()));
}

TEST(LoadgenCli, HelpListsFlagsAndExitCodes) {
  CliParse p = ParseLoadgenArgs({"--help"}, kNow);
  ASSERT_EQ(p.kind, Kind::kHelp);
  EXPECT_NE(p.text.find("--gate-config"), std::string::npos);
  EXPECT_NE(p.text.find("Exit codes:"), std::string::npos);
}

TEST(LoadgenCli, IntegerFlagsNameTheirRange) {
  EXPECT_EQ(Parse({"-w", kCross, "-r", "0"}).text, "--repeats must be in [1, 1000], got 0");
  EXPECT_EQ(Parse({"-w", kCross, "-r", "2.5"}).text,
            "--repeats must be an integer in [1, 1000], got '2.5'");
  EXPECT_EQ(Parse({"-w", kCross, "--gate-breaker-ms", "60001"}).text,
            "--gate-breaker-ms must be in [0, 60000] ms (0 = no circuit breaker), got 60001");
  EXPECT_EQ(Parse({"-w", kCross, "--gate-timeout-ms", "0"}).text,
            "--gate-timeout-ms must be in [1, 60000] ms, got 0");
  EXPECT_EQ(Parse({"-w", kCross, "--gate-timeout-ms", "1.5"}).text,
            "--gate-timeout-ms must be an integer in [1, 60000] ms, got '1.5'");
  EXPECT_EQ(Parse({"-w", kCross, "--processes", "-1"}).text,
            "--processes must be in [1, 256], got -1");
}

TEST(LoadgenCli, BadFlagsAreUsageErrors) {
  EXPECT_EQ(Parse({}).kind, Kind::kUsage);
  EXPECT_EQ(Parse({}).text, "--workload FILE is required");
  EXPECT_EQ(Parse({"-w", kCross, "-s", "fast"}).text,
            "--speedup must be a number in (0, 1000], got 'fast'");
  EXPECT_EQ(Parse({"-w", kCross, "--tn-rps-limit", "-2"}).kind, Kind::kUsage);
  EXPECT_EQ(Parse({"-w", kCross, "--sdk-retry-after-bound", "maybe"}).text,
            "--sdk-retry-after-bound must be inclusive or exclusive");
  EXPECT_EQ(Parse({"-w", kCross, "stray"}).kind, Kind::kUsage);
  EXPECT_EQ(Parse({"-w", kCross, "--gate-target", "t1"}).text,
            "--start-at and --gate-target go with --shard");
}

TEST(LoadgenCli, ShardNeedsOneRunAStartAndATarget) {
  const std::string at = std::to_string(kNow + 5000);
  EXPECT_EQ(Parse({"-w", kCross, "-c", "bp", "--shard", "0/2", "--start-at", at}).text,
            "--shard with bp needs --gate-target NAME");
  EXPECT_EQ(Parse({"-w", kCross, "-c", "naive,bp", "--shard", "0/2", "--start-at", at}).text,
            "--shard runs one run: one --workload, one --config, --repeats 1");
  EXPECT_EQ(Parse({"-w", kCross, "-c", "naive", "--shard", "0/2"}).text,
            "--shard needs --start-at UNIX_MS");
  CliParse ok = Parse({"-w", kCross, "-c", "bp", "--shard", "1/2", "--start-at", at,
                       "--gate-target", "fleet1"});
  ASSERT_EQ(ok.kind, Kind::kRun) << ok.text;
  ASSERT_TRUE(ok.plan.shard.has_value());
  EXPECT_EQ(ok.plan.shard->index, 1);
  EXPECT_EQ(ok.plan.shard->count, 2);
  EXPECT_EQ(ok.plan.run.gate_target, "fleet1");
}

TEST(LoadgenCli, FilesAreCheckedAgainstTheFlags) {
  EXPECT_EQ(Parse({"-w", kCross, "-w", kCross}).kind, Kind::kBadFile);
  EXPECT_NE(Parse({"-w", kCross, "-w", kCross}).text.find("workload name \"cross-priority\" twice"),
            std::string::npos);
  CliParse scenario = Parse({"-w", kJoinLeave, "--processes", "2"});
  EXPECT_EQ(scenario.kind, Kind::kUsage);
  EXPECT_NE(scenario.text.find("a scenario (events) cannot run over processes"),
            std::string::npos);
  EXPECT_EQ(Parse({"-w", "/nonexistent/w.json"}).kind, Kind::kBadFile);
  EXPECT_EQ(Parse({"-w", kCross, "--gate-config", "/nonexistent/g.json"}).kind, Kind::kBadFile);
}

TEST(LoadgenCli, UnwritableOutDirIsRefusedBeforeAnyRun) {
  CliParse p = ParseLoadgenArgs({"-w", kCross, "--out", "/proc/bp-no-such-dir"}, kNow);
  EXPECT_EQ(p.kind, Kind::kUsage);
  EXPECT_EQ(p.text.rfind("--out /proc/bp-no-such-dir: cannot create or write", 0), 0u) << p.text;
}

}  // namespace
}  // namespace bp::loadgen
