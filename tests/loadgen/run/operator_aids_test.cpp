// What loadgen does for the person running it (operator_aids.h): shipped
// workloads by name, a complete bpctl command on the gate-target line (no
// password), and mockapi's configuration put back when the runs end, on
// success, on failure and on SIGINT. The binary runs against a real mockapi
// and a real Valkey/Redis.
#include "bp/loadgen/operator_aids.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "bp/loadgen/http_client.h"
#include "mockapi_process.h"
#include "support/valkey_server.h"

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::path(BP_BINARY_DIR) / "test-output" / "operator_aids" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(ResolveWorkloadArg, ShippedNamesPathsAndHints) {
  const std::string configs = std::string(BP_SOURCE_DIR) + "/configs";
  const std::vector<std::string> dirs = {configs};
  EXPECT_EQ(*ResolveWorkloadArg("cross-priority", dirs),
            configs + "/workloads/cross-priority.json");
  EXPECT_EQ(*ResolveWorkloadArg("join-leave", dirs), configs + "/scenarios/join-leave.json");
  // Paths are taken as they are (LoadWorkload names any problem with them).
  EXPECT_EQ(*ResolveWorkloadArg("some/dir/x.json", dirs), "some/dir/x.json");
  EXPECT_EQ(*ResolveWorkloadArg("x.json", dirs), "x.json");
  auto typo = ResolveWorkloadArg("cross-priorty", dirs);
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(typo.status().message(),
            "cross-priorty: no such file, and no shipped workload or scenario of that name "
            "(searched workloads/ and scenarios/ in " +
                configs + "); did you mean cross-priority?");
  EXPECT_EQ(ResolveWorkloadArg("nothing-like-it", {}).status().message(),
            "nothing-like-it: no such file, and no shipped workload or scenario of that name (no "
            "configs folder found; set BP_CONFIG_DIR)");
  // The first folder that has the name wins.
  const fs::path mine = FreshDir("configs");
  fs::create_directories(mine / "workloads");
  std::ofstream(mine / "workloads" / "overload.json") << "{}";
  EXPECT_EQ(*ResolveWorkloadArg("overload", {mine.string(), configs}),
            (mine / "workloads" / "overload.json").string());
}

TEST(ConfigSearchDirs, EnvironmentFirstThenTheSourceTree) {
  const fs::path mine = FreshDir("env-configs");
  ::setenv("BP_CONFIG_DIR", mine.c_str(), 1);
  const std::vector<std::string> dirs = ConfigSearchDirs();
  ::unsetenv("BP_CONFIG_DIR");
  ASSERT_GE(dirs.size(), 2u);
  EXPECT_EQ(dirs.front(), fs::weakly_canonical(mine).string());
  EXPECT_EQ(dirs.back(), fs::weakly_canonical(std::string(BP_SOURCE_DIR) + "/configs").string());
}

TEST(BpctlStatusCommand, CompleteAndWithoutCredentials) {
  EXPECT_EQ(BpctlStatusCommand("redis://127.0.0.1:6390", "w-bp-r0-1"),
            "bpctl --valkey redis://127.0.0.1:6390 --target w-bp-r0-1 status");
  EXPECT_EQ(BpctlStatusCommand("redis://app:s3cret@10.0.0.5:6379/2", "t"),
            "bpctl --valkey redis://10.0.0.5:6379/2 --target t status (add the user and password "
            "of --valkey to the URL)");
  EXPECT_EQ(BpctlStatusCommand("redis+cluster://:pw@127.0.0.1:7000,127.0.0.1:7001", "t"),
            "bpctl --valkey redis+cluster://127.0.0.1:7000,127.0.0.1:7001 --target t status (add "
            "the user and password of --valkey to the URL)");
  EXPECT_EQ(BpctlStatusCommand("unix:///run/valkey.sock?db=1", "t"),
            "bpctl --valkey unix:///run/valkey.sock?db=1 --target t status");
}

// One tenant, `workflows` one-activity workflows of 100 paper ms each.
fs::path WriteWorkload(const fs::path& dir, int workflows) {
  json w = {{"name", "tiny"},
            {"slots", 2},
            {"run_length_cap_s", 600},
            {"dispatch_latency_ms", 0},
            {"tenants",
             {{{"id", "t"},
               {"priority", 1},
               {"concurrency", 2},
               {"workflows", workflows},
               {"prompt_tokens", 10},
               {"max_tokens", 5}}}},
            {"upstream",
             {{"latency", {{"min_ms", 100}, {"max_ms", 100}, {"per_output_token_ms", 0}}},
              {"limits", {{{"dimension", "requests"}, {"limit", 100}, {"window_s", 1.0}}}}}}};
  const fs::path file = dir / "tiny.json";
  std::ofstream(file) << w.dump(2);
  return file;
}

// loadgen with stderr to `err_file`; its pid.
pid_t SpawnLoadgen(std::vector<std::string> args, const fs::path& err_file) {
  args.insert(args.begin(), BP_BINARY_DIR "/apps/loadgen");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

int WaitExit(pid_t pid) {
  int status = 0;
  if (pid <= 0 || ::waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string AdminConfig(const test::MockapiProcess& m) {
  auto endpoint = ParseHttpUrl(m.url());
  return HttpRequestBlocking(*endpoint, "GET", "/admin/config", "", 2000).body;
}

class LoadgenBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(test::MockapiBinary().empty()) << test::kNoMockapi;
    // The user's own mockapi: 5 req/s in 10 s windows, not the workload's.
    mockapi_ = std::make_unique<test::MockapiProcess>(
        test::MockapiBinary(), std::vector<std::string>{"--limit", "requests:fixed_window:5:10"});
    ASSERT_TRUE(mockapi_->running());
    before_ = AdminConfig(*mockapi_);
    ASSERT_NE(before_.find("\"window_s\""), std::string::npos) << before_;
  }
  std::unique_ptr<test::MockapiProcess> mockapi_;
  std::string before_;
};

TEST_F(LoadgenBinary, RestoresTheUpstreamAndPrintsACompleteBpctlCommand) {
  test::ValkeyServer valkey;
  ASSERT_TRUE(valkey.running()) << valkey.error();
  const fs::path dir = FreshDir("ok");
  const pid_t pid = SpawnLoadgen(
      {"-w", WriteWorkload(dir, 4).string(), "-c", "naive,bp", "-s", "20", "-u", mockapi_->url(),
       "-v", valkey.url(), "-o", (dir / "out").string(), "--no-figures"},
      dir / "stderr.txt");
  EXPECT_EQ(WaitExit(pid), 0) << Slurp(dir / "stderr.txt");
  const std::string err = Slurp(dir / "stderr.txt");
  EXPECT_NE(err.find("(bpctl --valkey " + valkey.url() + " --target tiny-bp-r0-"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("loadgen: restored mockapi's configuration at " + mockapi_->url()),
            std::string::npos)
      << err;
  EXPECT_EQ(AdminConfig(*mockapi_), before_);
}

TEST_F(LoadgenBinary, RestoresTheUpstreamWhenARunFails) {
  const fs::path dir = FreshDir("fail");
  // bp against a Valkey that is not there: the run fails after naive's run
  // configured the upstream.
  const pid_t pid = SpawnLoadgen(
      {"-w", WriteWorkload(dir, 2).string(), "-c", "naive,bp", "-s", "20", "-u", mockapi_->url(),
       "-v", "redis://127.0.0.1:" + std::to_string(test::FreeLoopbackPort()), "-o",
       (dir / "out").string(), "--no-figures", "--gate-breaker-ms", "0"},
      dir / "stderr.txt");
  EXPECT_EQ(WaitExit(pid), 1);  // bp's gate cannot connect: the run fails
  const std::string err = Slurp(dir / "stderr.txt");
  EXPECT_NE(err.find("loadgen: tiny bp #0: valkey "), std::string::npos) << err;
  EXPECT_NE(err.find("loadgen: restored mockapi's configuration at " + mockapi_->url()),
            std::string::npos)
      << err;
  EXPECT_EQ(AdminConfig(*mockapi_), before_);
}

TEST_F(LoadgenBinary, RestoresTheUpstreamOnSigint) {
  const fs::path dir = FreshDir("sigint");
  // 2000 workflows of 100 paper ms over 2 slots at speedup 1: minutes.
  const pid_t pid = SpawnLoadgen({"-w", WriteWorkload(dir, 2000).string(), "-c", "naive", "-u",
                                  mockapi_->url(), "-o", (dir / "out").string(), "--no-figures"},
                                 dir / "stderr.txt");
  ASSERT_GT(pid, 0);
  // Wait until loadgen has put the workload's configuration on mockapi.
  for (int i = 0; i < 500 && AdminConfig(*mockapi_) == before_; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(AdminConfig(*mockapi_), before_) << Slurp(dir / "stderr.txt");
  ::kill(pid, SIGINT);
  EXPECT_EQ(WaitExit(pid), 130);
  const std::string err = Slurp(dir / "stderr.txt");
  EXPECT_NE(err.find("loadgen: stopped by signal 2; restored mockapi's configuration at " +
                     mockapi_->url()),
            std::string::npos)
      << err;
  EXPECT_EQ(AdminConfig(*mockapi_), before_);
}

}  // namespace
}  // namespace bp::loadgen
