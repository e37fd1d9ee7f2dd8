// What the loadgen binary writes where: log lines (warnings,
// the wait for a shared start) on stderr at every --quiet setting, the
// progress line of a part of a run labelled as that part, and a warning when
// a run replaces a comparison.md that covered other workloads. Against a
// real mockapi (naive only: no Valkey needed).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "mockapi_process.h"

extern char** environ;

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A run here takes a few seconds (1 s of paper time); a bound far above it.
constexpr std::chrono::seconds kRunLimit{120};

struct Output {
  int code = -1;
  std::string out, err;
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class LoadgenOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(BP_BINARY_DIR "/apps/loadgen")) << "build the loadgen target";
    const std::string bin = bp::test::MockapiBinary();
    ASSERT_FALSE(bin.empty()) << bp::test::kNoMockapi;
    mockapi_ = std::make_unique<bp::test::MockapiProcess>(bin, std::vector<std::string>{});
    ASSERT_TRUE(mockapi_->running());
    dir_ = fs::temp_directory_path() /
           ("bp-cli-output-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Two tenants of 10 concurrent workflows against 60 req/s, cut off by a
  // 1 s cap with calls in flight: "N never completed" is certain.
  fs::path Workload(const std::string& name) const {
    json tenants = json::array();
    for (const char* id : {"a", "b"}) {
      tenants.push_back({{"id", id},
                         {"priority", 1},
                         {"weight", 1.0},
                         {"concurrency", 10},
                         {"workflows", 50},
                         {"activities_per_workflow", 5},
                         {"prompt_tokens", 100},
                         {"max_tokens", 50}});
    }
    json w = {{"name", name},
              {"slots", 20},
              {"run_length_cap_s", 1},
              {"dispatch_latency_ms", 20},
              {"priority_weights", {1.0}},
              {"tenants", tenants},
              {"upstream",
               {{"limits", json::array({{{"dimension", "requests"},
                                         {"algorithm", "fixed_window"},
                                         {"limit", 60},
                                         {"window_s", 1.0}}})},
                {"completion_tokens", {{"distribution", "fixed"}, {"value", 20}}},
                {"latency", {{"min_ms", 100}, {"max_ms", 200}, {"per_output_token_ms", 0}}}}}};
    const fs::path file = dir_ / (name + ".json");
    std::ofstream(file) << w.dump(2);
    return file;
  }

  // Runs loadgen with stdout and stderr into separate files.
  Output Run(std::vector<std::string> extra) const {
    std::vector<std::string> args = {BP_BINARY_DIR "/apps/loadgen",
                                     "--config",
                                     "naive",
                                     "--upstream",
                                     mockapi_->url(),
                                     "--no-figures"};
    args.insert(args.end(), extra.begin(), extra.end());
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    posix_spawn_file_actions_t io;
    posix_spawn_file_actions_init(&io);
    posix_spawn_file_actions_addopen(&io, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&io, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Its own process group, so a run that hangs is killed with the
    // processes it started (--processes) and the test fails with its output
    // instead of waiting for ctest's timeout.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = -1;
    Output o;
    bool killed = false;
    if (posix_spawn(&pid, argv[0], &io, &attr, argv.data(), environ) == 0) {
      int status = 0;
      const auto deadline = std::chrono::steady_clock::now() + kRunLimit;
      pid_t done = 0;
      while ((done = ::waitpid(pid, &status, WNOHANG)) == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
          ::kill(-pid, SIGKILL);
          done = ::waitpid(pid, &status, 0);
          killed = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (done == pid && WIFEXITED(status)) o.code = WEXITSTATUS(status);
    }
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&io);
    o.out = Slurp(out);
    o.err = Slurp(err);
    if (killed) {
      o.err += "\n(killed: still running after " + std::to_string(kRunLimit.count()) + " s)\n";
    }
    return o;
  }

  std::unique_ptr<bp::test::MockapiProcess> mockapi_;
  fs::path dir_;
};

// --quiet turns off the progress line only: the warning about unfinished
// activities stays, on stderr (it went to stdout, among the tables, so
// `loadgen -q > table.txt` showed nothing).
TEST_F(LoadgenOutput, QuietKeepsWarningsOnStderr) {
  const Output o =
      Run({"--workload", Workload("w").string(), "--out", (dir_ / "r").string(), "-q"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("never completed"), std::string::npos) << "stderr:\n" << o.err;
  EXPECT_EQ(o.out.find("never completed"), std::string::npos) << "stdout:\n" << o.out;
  EXPECT_EQ(o.err.find(" done "), std::string::npos) << "no progress line with -q:\n" << o.err;
  EXPECT_NE(o.out.find("| w | naive |"), std::string::npos) << "the table on stdout:\n" << o.out;
}

// --processes 2: the progress line shows the first process's counts, and
// says so; the wait for the shared start is a log line on stderr (not a
// terminal here).
TEST_F(LoadgenOutput, ProgressOfOneProcessIsLabelledAsItsPart) {
  const Output o = Run(
      {"--workload", Workload("w").string(), "--out", (dir_ / "r").string(), "--processes", "2"});
  ASSERT_EQ(o.code, 0) << o.err;
  int progress_lines = 0;
  std::istringstream lines(o.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" done ") == std::string::npos) continue;
    ++progress_lines;
    EXPECT_EQ(line.rfind("w naive #0 part 0/2 ", 0), 0u) << line;
  }
  EXPECT_GE(progress_lines, 1) << "stderr:\n" << o.err;
  // The warnings of each process name their part.
  EXPECT_NE(o.err.find("w naive #0 part 1/2: "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("s for the shared start"), std::string::npos) << "stderr:\n" << o.err;
  EXPECT_EQ(o.out.find("s for the shared start"), std::string::npos) << "stdout:\n" << o.out;
}

// A second run into the same --out with another workload replaces
// comparison.md: loadgen says which workloads drop out of it, before the run.
TEST_F(LoadgenOutput, ReplacingAComparisonOfOtherWorkloadsIsAnnounced) {
  const std::string out = (dir_ / "r").string();
  const Output first = Run({"--workload", Workload("first").string(), "--out", out, "-q"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(first.err.find("replaces"), std::string::npos) << first.err;
  const Output second = Run({"--workload", Workload("second").string(), "--out", out, "-q"});
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.err.find("loadgen: " + out +
                            "/comparison.md covers first; this run replaces it (their runs "
                            "stay in their folders)"),
            std::string::npos)
      << second.err;
  EXPECT_EQ(Slurp(fs::path(out) / "comparison.md").find("| first |"), std::string::npos);
  EXPECT_TRUE(fs::exists(fs::path(out) / "first" / "summary.json"));
}

}  // namespace
}  // namespace bp::loadgen
