// Cooperating loadgen processes (shard.h) against a real mockapi and a real
// Redis: the loadgen binary itself, run as two processes sharing one gate
// target and one upstream, tenants split between them with 4:1 concurrency
// (process 0 runs two tenants of 8 workflows each, process 1 two of 2).
// Asserted on the merged records: the combined admissions stay within the
// cap (P1 across processes), the upstream saw almost no 429s, and fairness
// holds across the processes (achievement-Jain over all four tenants).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/records_io.h"
#include "bp/loadgen/shard.h"
#include "mockapi_process.h"
#include "support/valkey_server.h"

extern char** environ;

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kCap = 40;      // paper req/s
constexpr double kBurstS = 0.1;  // gate burst, paper s
// A light tenant's two workflows need a call every 200 paper ms each for
// its 10 req/s and spend about 120 on one (dispatch 20, upstream 50-150):
// the 80 ms left are the loaded test box's share of every call cycle, 40
// real ms at speedup 2 (16 at speedup 5, less than such a box can take).
constexpr int kSpeedup = 2;
// Real ms a gate call may take before it fails open: a loaded test box can
// hold a gate thread longer than loadgen's default 100 ms.
constexpr int kGateTimeoutMs = 2000;

std::string LoadgenBinary() { return BP_BINARY_DIR "/apps/loadgen"; }

pid_t Spawn(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0].c_str(), nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

int Wait(pid_t pid) {
  int status = 0;
  if (pid <= 0 || ::waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Four equal-weight tenants in one class, 200 calls each, against 40 req/s.
// Tenants 0 and 2 (process 0 of 2) have 8 workflows at once, 1 and 3
// (process 1) have 2: enough for each to want more than its 10 req/s.
fs::path WriteWorkload(const fs::path& dir) {
  json tenants = json::array();
  for (int i = 0; i < 4; ++i) {
    const bool heavy = i % 2 == 0;
    tenants.push_back({{"id", std::string(heavy ? "heavy-" : "light-") + char('a' + i)},
                       {"priority", 1},
                       {"weight", 1.0},
                       {"concurrency", heavy ? 8 : 2},
                       {"workflows", 40},
                       {"activities_per_workflow", 5},
                       {"prompt_tokens", 100},
                       {"max_tokens", 50}});
  }
  json w = {{"name", "two-processes"},
            {"slots", 20},
            {"run_length_cap_s", 120},
            {"dispatch_latency_ms", 20},
            {"priority_weights", {1.0}},
            {"gate", {{"mode", "reconcile"}, {"burst_s", kBurstS}}},
            {"tenants", tenants},
            {"upstream",
             {{"limits", json::array({{{"dimension", "requests"},
                                       {"algorithm", "fixed_window"},
                                       {"limit", static_cast<int>(kCap)},
                                       {"window_s", 1.0}}})},
              {"completion_tokens", {{"distribution", "fixed"}, {"value", 20}}},
              {"latency", {{"min_ms", 50}, {"max_ms", 150}, {"per_output_token_ms", 0}}}}}};
  fs::create_directories(dir);
  const fs::path file = dir / "two-processes.json";
  std::ofstream(file) << w.dump(2);
  return file;
}

// Most calls sent upstream in any span of one paper second (from each send
// on), over the attempts of both processes on the merged (aligned) clock:
// what the provider sees. (Not the ADMIT decisions: a call admitted ahead
// is debited up to four of its refills before it starts.)
int MostCallsInOneSecond(const RunRecords& r) {
  std::vector<int64_t> t;
  for (const AttemptRecord& a : r.attempts) t.push_back(a.send_us);
  std::sort(t.begin(), t.end());
  const auto span_us = static_cast<int64_t>(1e6 / r.speedup);
  int most = 0;
  for (size_t i = 0, j = 0; i < t.size(); ++i) {
    while (j < t.size() && t[j] < t[i] + span_us) ++j;
    most = std::max(most, static_cast<int>(j - i));
  }
  return most;
}

class ShardProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(LoadgenBinary())) << "build the loadgen target: " << LoadgenBinary();
    const std::string bin = bp::test::MockapiBinary();
    ASSERT_FALSE(bin.empty()) << bp::test::kNoMockapi;
    mockapi_ = std::make_unique<bp::test::MockapiProcess>(bin, std::vector<std::string>{});
    ASSERT_TRUE(mockapi_->running());
    ASSERT_TRUE(valkey_.running()) << valkey_.error();
    dir_ = fs::temp_directory_path() /
           ("bp-shards-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    workload_ = WriteWorkload(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> Common(const std::string& config) const {
    return {LoadgenBinary(),
            "--workload",
            workload_.string(),
            "--config",
            config,
            "--speedup",
            std::to_string(kSpeedup),
            "--gate-timeout-ms",
            std::to_string(kGateTimeoutMs),
            "--upstream",
            mockapi_->url(),
            "--valkey",
            valkey_.url(),
            "--quiet",
            "--no-figures"};
  }

  std::unique_ptr<bp::test::MockapiProcess> mockapi_;
  bp::test::ValkeyServer valkey_;
  fs::path dir_, workload_;
};

TEST_F(ShardProcesses, TwoShardProcessesShareTheCapAndAreFair) {
  const int64_t start = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count() +
                        2000;
  std::vector<pid_t> pids;
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> args = Common("bp");
    const std::vector<std::string> more = {"--shard",       std::to_string(i) + "/2",
                                           "--start-at",    std::to_string(start),
                                           "--gate-target", "fleet-test",
                                           "--out",         (dir_ / "shards").string()};
    args.insert(args.end(), more.begin(), more.end());
    pids.push_back(Spawn(args));
  }
  std::vector<int> codes;
  for (pid_t p : pids) codes.push_back(Wait(p));  // all of them, also when one failed
  ASSERT_EQ(codes, (std::vector<int>{0, 0})) << "a loadgen --shard process failed (stderr above)";

  // Both parts' records, read as `loadgen merge` reads them.
  std::vector<ShardRecords> parts;
  for (int i = 0; i < 2; ++i) {
    auto p = ReadRecordsFile(dir_ / "shards" / "two-processes" / "bp" / "r0" /
                             ("shard-" + std::to_string(i) + ".records.json"));
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->records.gate_target, "fleet-test");
    EXPECT_EQ(p->records.slots, 10);
    // Started together: within 100 ms of the shared start on the wall clock.
    EXPECT_NEAR(static_cast<double>(p->records.start_unix_us) / 1000, static_cast<double>(start),
                100);
    parts.push_back(std::move(*p));
  }
  EXPECT_EQ(parts[1].shard.tenant_indices, (std::vector<int>{1, 3}));
  auto merged = MergeShards(parts);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const RunRecords& r = *merged;
  EXPECT_EQ(r.gate_fail_opens, 0u);
  const RunMetrics m = ComputeRunMetrics(r);
  EXPECT_EQ(m.ok_calls, 800);
  // P1 across processes: at most C * 1 s + C * burst sent in any second (+2
  // for the client-side send times), and the upstream, the ground truth,
  // refused almost nothing.
  const int most = MostCallsInOneSecond(r);
  std::printf("most sent in 1 paper s: %d (cap %g + burst %g); 429 share %.2f %%\n", most, kCap,
              kCap * kBurstS, 100 * m.share_429);
  EXPECT_LE(most, static_cast<int>(kCap + kCap * kBurstS) + 2);
  EXPECT_LT(m.share_429, 0.03);
  EXPECT_LE(m.ok_rps_window, kCap * 1.03);
  EXPECT_GE(m.ok_rps_window, kCap * 0.8);
  // Fair across the processes: the 2-workflow tenants of process 1 get their
  // share although process 0 has four times their concurrency.
  std::printf("achievement-Jain %.3f; OK req/s", m.achievement_jain);
  for (const TenantMetrics& t : m.tenants) std::printf(" %s %.1f", t.id.c_str(), t.ok_rps);
  std::printf("\n");
  EXPECT_GE(m.achievement_jain, 0.95);
  for (const TenantMetrics& t : m.tenants) EXPECT_GE(t.achievement, 0.8) << t.id;

  // The merge command writes the single-process report from the same files.
  const pid_t merge = Spawn({LoadgenBinary(), "merge", "--no-figures", "--out",
                             (dir_ / "merged").string(), (dir_ / "shards").string()});
  ASSERT_EQ(Wait(merge), 0);
  std::ifstream in(dir_ / "merged" / "two-processes" / "bp" / "r0" / "summary.json");
  ASSERT_TRUE(in.good());
  const json summary = json::parse(in);
  EXPECT_EQ(summary["tenants"].size(), 4u);
  EXPECT_TRUE(fs::exists(dir_ / "merged" / "two-processes" / "bp" / "r0" / "table.md"));
  EXPECT_TRUE(fs::exists(dir_ / "merged" / "comparison.md"));
}

TEST_F(ShardProcesses, ProcessesFlagForksTheFleetNaiveIsUnfairBpFair) {
  std::vector<std::string> args = Common("naive,bp");
  for (const std::string& a :
       std::vector<std::string>{"--processes", "2", "--out", (dir_ / "out").string()}) {
    args.push_back(a);
  }
  ASSERT_EQ(Wait(Spawn(args)), 0);
  std::map<std::string, json> s;
  for (std::string c : {"naive", "bp"}) {
    std::ifstream in(dir_ / "out" / "two-processes" / c / "r0" / "summary.json");
    ASSERT_TRUE(in.good()) << c;
    s[c] = json::parse(in);
    EXPECT_TRUE(
        fs::exists(dir_ / "out" / "two-processes" / c / "r0" / "shards" / "shard-1.records.json"));
  }
  const double naive = s["naive"]["achievement_jain"].get<double>();
  const double bp = s["bp"]["achievement_jain"].get<double>();
  std::printf("achievement-Jain naive %.3f, bp %.3f\n", naive, bp);
  EXPECT_GE(bp, 0.95);
  EXPECT_LT(naive, 0.92);  // FIFO over 10 + 10 slots follows concurrency
  EXPECT_EQ(s["bp"]["gate_fail_opens"].get<int>(), 0);
}

// A start ahead must not wait silently. One naive part of one
// (a tenant cut to 2 calls), its start 1.5 s ahead, without --quiet: one
// line says how long it waits.
TEST_F(ShardProcesses, AStartAheadSaysHowLongItWaits) {
  std::ifstream in(workload_);
  json w = json::parse(in);
  w["tenants"] = {w["tenants"][0]};
  w["tenants"][0]["workflows"] = 1;
  w["tenants"][0]["activities_per_workflow"] = 2;
  std::ofstream(workload_) << w.dump();
  const int64_t start = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count() +
                        1500;
  std::vector<std::string> args = Common("naive");
  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  for (const std::string& a :
       {std::string("--shard"), std::string("0/1"), std::string("--start-at"),
        std::to_string(start), std::string("--out"), (dir_ / "shards").string()}) {
    args.push_back(a);
  }
  const fs::path log = dir_ / "shard.log";
  posix_spawn_file_actions_t io;
  posix_spawn_file_actions_init(&io);
  posix_spawn_file_actions_addopen(&io, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&io, 1, 2);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, args[0].c_str(), &io, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&io);
  ASSERT_EQ(Wait(pid), 0);
  std::ifstream text(log);
  const std::string out((std::istreambuf_iterator<char>(text)), std::istreambuf_iterator<char>());
  const std::string line = "s for the shared start (unix ms " + std::to_string(start) + ")";
  const size_t at = out.find(line);
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_EQ(out.find(line, at + 1), std::string::npos) << "one line only:\n" << out;
  // "waiting 1.4 s": the setup before it took the rest of the 1.5 s.
  const size_t w_at = out.rfind("waiting ", at);
  ASSERT_NE(w_at, std::string::npos) << out;
  const double waited = std::stod(out.substr(w_at + 8, at - w_at - 8));
  EXPECT_GT(waited, 0.0);
  EXPECT_LE(waited, 1.5);
}

}  // namespace
}  // namespace bp::loadgen
