// /metrics of mockapi passes `promtool check metrics` (Prometheus' own linter:
// exposition syntax, HELP/TYPE, counter names ending in _total, units). The
// body comes from Service::Handle after traffic of every kind, so every
// series is present. Skipped only when promtool is not installed
// (scripts/setup.sh installs Debian's prometheus package, which has it).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bp/mockapi/service.h"
#include "bp/token_estimate.h"

namespace bp::mockapi {
namespace {

bool HavePromtool() { return std::system("promtool --version > /dev/null 2>&1") == 0; }

// Runs `promtool check metrics` on `text`; returns its exit code, output in *out.
int Promtool(const std::string& text, std::string* out) {
  const auto path = std::filesystem::path(BP_BINARY_DIR) / "test-output" / "promtool-metrics.txt";
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
  const std::string cmd = "promtool check metrics < '" + path.string() + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out->append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(MetricsPromtool, MetricsPassPromtoolCheck) {
  if (!HavePromtool()) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  MockConfig c;
  c.latency = {0, 0, 0};
  LimiterOptions rpm, tpm;
  rpm.dimension = Dimension::kRequests;
  rpm.algorithm = LimiterAlgorithm::kFixedWindow;
  rpm.limit = 2;
  rpm.window_s = 60;
  tpm.dimension = Dimension::kTokens;
  tpm.algorithm = LimiterAlgorithm::kTokenBucket;
  tpm.limit = 100;
  tpm.window_s = 60;
  c.limits = {rpm, tpm};
  FakeClock clock(1'000'000'000);
  auto service = Service::Create(c, clock);
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  auto post = [&](const std::string& body) {
    return (*service)->Handle(HttpRequest{"POST", "/v1/chat/completions", "", "", body});
  };
  const std::string small =
      R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]})";
  const std::string huge =
      R"({"model":"m","messages":[{"role":"user","content":")" + TextOfTokens(500) + "\"}]}";
  EXPECT_EQ(post(small).status, 200);
  EXPECT_EQ(post(huge).status, 429);  // request too large (tokens)
  EXPECT_EQ(post(small).status, 200);
  EXPECT_EQ(post(small).status, 429);  // rate limited (requests)
  EXPECT_EQ(post("{").status, 400);
  const std::string metrics = (*service)->Handle(HttpRequest{"GET", "/metrics", "", "", ""}).body;
  ASSERT_NE(metrics.find("mockapi_responses_total{status=\"429\"} 2"), std::string::npos)
      << metrics;
  std::string out;
  EXPECT_EQ(Promtool(metrics, &out), 0) << out << "\n" << metrics;
  EXPECT_EQ(out, "") << metrics;  // no lint complaint either
}

}  // namespace
}  // namespace bp::mockapi
