// The mockapi JSON config: the documented example, the shipped configs, flag
// overrides and bad values failing with their message.
#include "bp/mockapi/config.h"

#include <gtest/gtest.h>

#include <tuple>

#include "bp/mockapi/cli.h"

namespace bp::mockapi {
namespace {

using nlohmann::json;

TEST(Config, DocumentedExampleParses) {
  const json doc = json::parse(R"({
    "listen": {"host": "127.0.0.1", "port": 8080}, "threads": 2, "dialect": "openai",
    "model": "gpt-4o-mini", "organization": "org-mock", "scope": "global",
    "count_rejected": false, "token_accounting": "actual",
    "limits": [
      {"dimension": "requests", "algorithm": "fixed_window", "limit": 60, "window_s": 1.0},
      {"dimension": "tokens",   "algorithm": "fixed_window", "limit": 12000, "window_s": 1.0}],
    "completion_tokens": {"distribution": "fixed", "value": 20, "clamp_to_max_tokens": true},
    "latency": {"min_ms": 50, "max_ms": 150, "per_output_token_ms": 0},
    "seed": 1, "body_limit_bytes": 1048576, "read_timeout_ms": 10000, "idle_timeout_ms": 30000,
    "stream_tick_ms": 2})");
  auto c = ConfigFromJson(doc, MockConfig{});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->limits.size(), 2u);
  EXPECT_EQ(c->limits[1].dimension, Dimension::kTokens);
  EXPECT_EQ(c->limits[1].limit, 12000);
  EXPECT_EQ(c->limits[1].window_s, 1.0);
  EXPECT_EQ(c->stream_tick_ms, 2.0);
  EXPECT_EQ(ConfigToJson(*c),
            ConfigToJson(*ConfigFromJson(ConfigToJson(*c), MockConfig{})));  // round trip
}

TEST(Config, ShippedConfigsLoad) {
  for (const char* name : {"openai-60rpm", "paper-single", "paper-multi", "anthropic"}) {
    auto c = LoadConfigFile(std::string(BP_SOURCE_DIR) + "/configs/mockapi/" + name + ".json");
    EXPECT_TRUE(c.ok()) << name << ": " << c.status().ToString();
  }
  auto multi = LoadConfigFile(std::string(BP_SOURCE_DIR) + "/configs/mockapi/paper-multi.json");
  ASSERT_EQ(multi->limits.size(), 2u);
  EXPECT_EQ(multi->limits[0].limit, 60);
  EXPECT_EQ(multi->limits[1].limit, 12000);
  EXPECT_EQ(multi->limits[1].algorithm, LimiterAlgorithm::kFixedWindow);
  EXPECT_EQ(LoadConfigFile("/nonexistent.json").status().code(), StatusCode::kNotFound);
  // A directory is named as such (it read as "not valid JSON").
  EXPECT_EQ(LoadConfigFile(BP_SOURCE_DIR).status().message(),
            std::string(BP_SOURCE_DIR) + ": is a directory, not a config file");
}

TEST(Config, BadValuesFailWithTheirMessage) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"dialect":"gemini"})", "dialect: must be openai | anthropic | azure, got \"gemini\""},
      {R"({"threads":0})", "threads: must be an integer in [1, 64], got 0"},
      {R"({"listen":{"port":70000}})", "listen.port: must be an integer in [0, 65535], got 70000"},
      {R"({"latency":{"min_ms":200,"max_ms":100}})", "latency.min_ms must be <= latency.max_ms"},
      {R"({"completion_tokens":{"distribution":"uniform","min":9,"max":3}})",
       "completion_tokens.min must be <= completion_tokens.max"},
      {R"({"limits":[{"dimension":"tokens","algorithm":"leaky","limit":1,"window_s":1}]})",
       "limits[0]: algorithm must be fixed_window, sliding_window, token_bucket or quantized, got "
       "\"leaky\""},
      {R"({"limits":[{"limit":0}]})",
       "limits[0].limit: must be an integer in [1, 1125899906842624], got 0"},
      {R"({"count_rejected":1})", "count_rejected: must be true or false, got 1"},
      {R"({"stream_tick_ms":0})", "stream_tick_ms: must be a number in [0.01, 1000], got 0"},
      {R"({"stream_tick_ms":"2"})", "stream_tick_ms: must be a number in [0.01, 1000], got \"2\""},
      {R"([])", "document: must be a JSON object"},
  };
  for (const auto& [text, message] : cases) {
    auto c = ConfigFromJson(json::parse(text), MockConfig{});
    EXPECT_EQ(c.status().message(), message) << text;
  }
}

TEST(CommandLine, FlagsOverrideTheFile) {
  const std::string file = std::string(BP_SOURCE_DIR) + "/configs/mockapi/paper-multi.json";
  const char* argv[] = {"mockapi",
                        "--config",
                        file.c_str(),
                        "--port",
                        "0",
                        "--zero-latency",
                        "--limit",
                        "requests:quantized:600:60:1",
                        "--count-rejected"};
  auto cl = ParseCommandLine(9, argv);
  ASSERT_TRUE(cl.ok()) << cl.status().ToString();
  EXPECT_EQ(cl->config.port, 0);
  EXPECT_EQ(cl->config.latency.max_ms, 0);
  EXPECT_TRUE(cl->config.count_rejected);
  ASSERT_EQ(cl->config.limits.size(), 1u);
  EXPECT_EQ(cl->config.limits[0].algorithm, LimiterAlgorithm::kQuantized);
  EXPECT_EQ(cl->config.completion_tokens.value, 20);  // from the file
  const char* bad[] = {"mockapi", "--limit", "requests:fixed_window:x:1"};
  EXPECT_EQ(ParseCommandLine(3, bad).status().message(),
            "--limit has a non-numeric value: requests:fixed_window:x:1: LIMIT must be decimal "
            "digits, got 'x'");
  // stoll/stod read a number prefix: "60abc" was 60, "0x10" 0. Now the bad part is named.
  const std::vector<std::pair<std::string, std::string>> strict = {
      {"requests:fixed_window:60abc:1", "LIMIT must be decimal digits, got '60abc'"},
      {"requests:fixed_window:+60:1", "LIMIT must be decimal digits, got '+60'"},
      {"requests:fixed_window:60:0x10", "WINDOW_S must be a decimal number, got '0x10'"},
      {"requests:fixed_window:60:1e1", "WINDOW_S must be a decimal number, got '1e1'"},
      {"requests:fixed_window:60: 1", "WINDOW_S must be a decimal number, got ' 1'"},
      {"requests:quantized:60:60:1s", "QUANTUM_S must be a decimal number, got '1s'"},
  };
  for (const auto& [flag, part] : strict) {
    const char* argv_bad[] = {"mockapi", "--limit", flag.c_str()};
    EXPECT_EQ(ParseCommandLine(3, argv_bad).status().message(),
              "--limit has a non-numeric value: " + flag + ": " + part);
  }
  const char* fractional[] = {"mockapi", "--limit", "requests:quantized:600:60.5:.5"};
  auto ok = ParseCommandLine(3, fractional);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->config.limits[0].limit, 600);
  EXPECT_EQ(ok->config.limits[0].window_s, 60.5);
  EXPECT_EQ(ok->config.limits[0].quantum_s, 0.5);
  // Bad flags: each a usage error naming the flag or field.
  const std::vector<std::pair<std::vector<const char*>, std::string>> usage = {
      {{"mockapi", "--host", "999.1.1.1"},
       "--host must be an IPv4 or IPv6 address (e.g. 127.0.0.1), got \"999.1.1.1\""},
      {{"mockapi", "--host", "localhost"},
       "--host must be an IPv4 or IPv6 address (e.g. 127.0.0.1), got \"localhost\""},
      {{"mockapi", "--port", "70000"}, "listen.port: must be an integer in [0, 65535], got 70000"},
      // Not a number at all: the flag's range, not Boost's bare "is invalid".
      {{"mockapi", "--port", "x"},
       "--port must be an integer in [0, 65535] (0: ephemeral), got 'x'"},
      {{"mockapi", "--threads", "0"}, "threads: must be an integer in [1, 64], got 0"},
      // Beyond int: the range, not "the argument is invalid".
      {{"mockapi", "--threads", "99999999999"},
       "threads: must be an integer in [1, 64], got 99999999999"},
      {{"mockapi", "--port", "4294967297"},
       "listen.port: must be an integer in [0, 65535], got 4294967297"},
      {{"mockapi", "--overload-status", "99999999999"},
       "overload.status: must be an integer in [503, 529], got 99999999999"},
      {{"mockapi", "--colour"}, "unrecognised option '--colour'"},
      {{"mockapi", "stray"}, "too many positional options have been specified on the command line"},
      {{"mockapi", "--dialect", "gemini"},
       "dialect: must be openai | anthropic | azure, got \"gemini\""},
      {{"mockapi", "--latency-min-ms", "-1"},
       "latency.min_ms: must be a number in [0, 3.6e+06], got -1.0"},
      // Read as a signed number, so a negative seed is named as typed (it
      // was read as uint64_t and reported as 18446744073709551615).
      {{"mockapi", "--seed", "-1"}, "seed: must be an integer in [0, 9223372036854775807], got -1"},
  };
  for (const auto& [args, message] : usage) {
    auto r = ParseCommandLine(static_cast<int>(args.size()), args.data());
    EXPECT_EQ(r.status().message(), message) << args[1];
    EXPECT_EQ(MockApiMain(static_cast<int>(args.size()), args.data()), 2) << args[1];
  }
  const char* help[] = {"mockapi", "--help"};
  EXPECT_TRUE(ParseCommandLine(2, help)->help);
}

// A number too large for --limit was "non-numeric" (the 18-digit reader gave
// up); now every number outside bp/limit_json.h's ranges is "out-of-range"
// with the range the JSON reader states for the same field.
TEST(CommandLine, LimitFlagOutOfRangeGivesTheRange) {
  const std::string limit_range = "an integer in [1, 1125899906842624]";
  const std::string seconds_range = "a number in [1e-06, 1e+07]";
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> cases = {
      {"requests:fixed_window:99999999999999999999:60", "LIMIT", limit_range,
       "99999999999999999999"},
      {"requests:fixed_window:1125899906842625:60", "LIMIT", limit_range, "1125899906842625"},
      {"requests:fixed_window:0:60", "LIMIT", limit_range, "0"},
      {"requests:fixed_window:000:60", "LIMIT", limit_range, "000"},
      {"requests:fixed_window:60:99999999999", "WINDOW_S", seconds_range, "99999999999"},
      {"requests:fixed_window:60:0.0000001", "WINDOW_S", seconds_range, "0.0000001"},
      {"requests:fixed_window:60:0", "WINDOW_S", seconds_range, "0"},
      {"requests:quantized:60:60:0", "QUANTUM_S", seconds_range, "0"},
  };
  for (const auto& [flag, part, range, value] : cases) {
    const char* argv[] = {"mockapi", "--limit", flag.c_str()};
    EXPECT_EQ(ParseCommandLine(3, argv).status().message(),
              "--limit has an out-of-range value: " + flag + ": " + part + " must be " + range +
                  ", got '" + value + "'");
    EXPECT_EQ(MockApiMain(3, argv), 2) << flag;
  }
  // The JSON reader states the same range for the same field.
  auto file = ConfigFromJson(json::parse(R"({"limits":[{"limit":1125899906842625}]})"), {});
  EXPECT_EQ(file.status().message(),
            "limits[0].limit: must be " + limit_range + ", got 1125899906842625");
  // Leading zeros are not out of range; a 65-digit window is too long a number.
  const char* padded[] = {"mockapi", "--limit", "requests:fixed_window:0000000000000000000060:60"};
  auto ok = ParseCommandLine(3, padded);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->config.limits[0].limit, 60);
  const std::string long_window = "requests:fixed_window:60:" + std::string(65, '1');
  const char* too_long[] = {"mockapi", "--limit", long_window.c_str()};
  EXPECT_EQ(ParseCommandLine(3, too_long).status().message(),
            "--limit has a non-numeric value: " + long_window +
                ": WINDOW_S must be a decimal number of at most 64 characters, got '" +
                std::string(65, '1') + "'");
}

}  // namespace
}  // namespace bp::mockapi
