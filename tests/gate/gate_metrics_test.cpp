// GateCountersExposition: exact samples per target and cause, and the text
// through `promtool check metrics` (skipped only without promtool).
#include "bp/gate_metrics.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace bp {
namespace {

TEST(GateCountersExposition, SamplesPerTargetAndCause) {
  GateCounters a;
  a.admits = 7;
  a.release_errors = 2;
  a.fail_opens = 3;
  a.fail_opens_unreachable = 1;
  a.fail_opens_timed_out = 2;
  a.breaker_opens = 1;
  GateCounters b;
  b.defers = 5;
  const std::string text = GateCountersExposition({{"chat", a}, {"embed", b}});
  EXPECT_NE(text.find("bp_gate_client_admits_total{target=\"chat\"} 7\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("bp_gate_client_defers_total{target=\"embed\"} 5\n"), std::string::npos);
  EXPECT_NE(text.find("bp_gate_client_release_errors_total{target=\"chat\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("bp_gate_client_breaker_opens_total{target=\"chat\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("bp_gate_client_fail_opens_total{target=\"chat\",cause=\"timed_out\"} 2\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("bp_gate_client_fail_opens_total{target=\"embed\",cause=\"unreachable\"} 0\n"),
      std::string::npos);
  EXPECT_NE(GateCountersExposition({{"a\"b", a}}).find("target=\"a\\\"b\""), std::string::npos);

  if (std::system("promtool --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  }
  const auto path = std::filesystem::temp_directory_path() / "bp-gate-client-metrics.txt";
  std::ofstream(path) << text;
  const std::string cmd = "promtool check metrics < '" + path.string() + "' > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  std::filesystem::remove(path);
  EXPECT_EQ(status, 0) << text;
}

}  // namespace
}  // namespace bp
