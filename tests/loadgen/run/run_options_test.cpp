// What loadgen checks before any run starts (runner.h ValidateRunOptions,
// ParseConfigurationList): each bad value is an InvalidArgument naming the
// flag. No server needed (nothing connects).
#include <gtest/gtest.h>

#include "bp/loadgen/runner.h"

namespace bp::loadgen {
namespace {

TEST(RunOptions, DefaultsAreValid) { EXPECT_TRUE(ValidateRunOptions(RunOptions{}).ok()); }

TEST(RunOptions, BadValuesNameTheFlag) {
  struct Case {
    void (*edit)(RunOptions*);
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](RunOptions* o) { o->speedup = 0; }, "--speedup must be in (0, 1000]"},
      {[](RunOptions* o) { o->speedup = 1e6; }, "--speedup must be in (0, 1000]"},
      {[](RunOptions* o) { o->upstream_url = "http://999.1.1.1:80"; },
       "--upstream: http://999.1.1.1:80: host must be an IP literal or localhost"},
      {[](RunOptions* o) { o->upstream_url = "https://127.0.0.1:8080"; },
       "--upstream: https://127.0.0.1:8080: https is not supported"},
      {[](RunOptions* o) { o->upstream_url = "http://127.0.0.1:0"; },
       "--upstream: http://127.0.0.1:0: bad port"},
      {[](RunOptions* o) { o->valkey_url = "http://127.0.0.1:6379"; }, "--valkey: "},
      {[](RunOptions* o) { o->valkey_url = "redis://127.0.0.1:99999"; }, "--valkey: "},
      {[](RunOptions* o) { o->gate_threads = 0; }, "--gate-threads must be in [1, 256], got 0"},
      {[](RunOptions* o) { o->gate_threads = -3; }, "--gate-threads must be in [1, 256], got -3"},
      {[](RunOptions* o) { o->gate_threads = 257; }, "--gate-threads must be in [1, 256], got 257"},
      {[](RunOptions* o) { o->gate_command_timeout_ms = 0; },
       "--gate-timeout-ms must be in [1, 60000] ms, got 0"},
      {[](RunOptions* o) { o->gate_command_timeout_ms = 60001; },
       "--gate-timeout-ms must be in [1, 60000] ms, got 60001"},
      {[](RunOptions* o) { o->gate_breaker_cool_off_ms = -1; },
       "--gate-breaker-ms must be in [0, 60000] ms (0 = no circuit breaker), got -1"},
      // Above the range, INT_MAX would leave the rest of a run ungated after one pause.
      {[](RunOptions* o) { o->gate_breaker_cool_off_ms = 60001; },
       "--gate-breaker-ms must be in [0, 60000] ms (0 = no circuit breaker), got 60001"},
      {[](RunOptions* o) { o->gate_breaker_cool_off_ms = 2147483647; },
       "--gate-breaker-ms must be in [0, 60000] ms (0 = no circuit breaker), got 2147483647"},
  };
  for (const Case& k : cases) {
    RunOptions o;
    k.edit(&o);
    Status s = ValidateRunOptions(o);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << k.message;
    EXPECT_EQ(s.message().rfind(k.message, 0), 0u) << s.message();
  }
}

TEST(RunOptions, ConfigurationLists) {
  EXPECT_EQ(*ParseConfigurationList("naive,tn,litellm,bp"),
            (std::vector<std::string>{"naive", "tn", "litellm", "bp"}));
  EXPECT_EQ(*ParseConfigurationList("bp-no-drf"), (std::vector<std::string>{"bp-no-drf"}));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "--config is empty (one or more of naive, tn, litellm, bp, bp-no-drf, bp-no-priority)"},
      {"naive,,bp", "--config has an empty item in \"naive,,bp\""},
      {",bp", "--config has an empty item in \",bp\""},
      {"bp,", "--config has an empty item in \"bp,\""},
      {"naive, bp",
       "unknown configuration \" bp\" in --config (naive, tn, litellm, bp, "
       "bp-no-drf, bp-no-priority)"},
      {"BP",
       "unknown configuration \"BP\" in --config (naive, tn, litellm, bp, bp-no-drf, "
       "bp-no-priority)"},
      {"bp,naive,bp", "configuration \"bp\" twice in --config"},
  };
  for (const auto& [text, message] : bad) {
    auto r = ParseConfigurationList(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().message(), message) << text;
  }
}

}  // namespace
}  // namespace bp::loadgen
