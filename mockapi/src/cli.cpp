// Command line of the mockapi binary: Boost.Program_options over the JSON
// config. Flags become a JSON patch applied with ConfigFromJson, so flag and
// file values are validated by the same code.
#include "bp/mockapi/cli.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/program_options.hpp>
#include <iostream>
#include <sstream>

#include "bp/clock.h"
#include "bp/decimal.h"
#include "bp/limit_json.h"
#include "bp/mockapi/server.h"
#include "bp/mockapi/service.h"

namespace bp::mockapi {
namespace {

namespace po = boost::program_options;
using nlohmann::json;

std::string Fmt(double x) {  // as limit_json.cpp prints its ranges
  std::ostringstream o;
  o << x;
  return o.str();
}

bool AllDigits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// "DIM:ALGO:LIMIT:WINDOW_S[:QUANTUM_S]" -> a limits[] entry. LIMIT is decimal
// digits, WINDOW_S and QUANTUM_S decimal numbers (bp/decimal.h): "60abc" or
// "0x3C" is an error naming the part, not 60. A number outside the ranges of
// bp/limit_json.h (the JSON reader's, so the flag and the file agree) is
// "out-of-range" with the range, never "non-numeric"; ConfigFromJson then
// checks the combination (e.g. QUANTUM_S <= WINDOW_S).
Result<json> ParseLimitFlag(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string p; std::getline(in, p, ':');) parts.push_back(p);
  if (parts.size() < 4 || parts.size() > 5) {
    return Status::InvalidArgument("--limit must be DIM:ALGO:LIMIT:WINDOW_S[:QUANTUM_S], got " +
                                   text);
  }
  auto bad = [&text](const char* part, const std::string& value, const std::string& rule) {
    return Status::InvalidArgument("--limit has a non-numeric value: " + text + ": " + part +
                                   " must be " + rule + ", got '" + value + "'");
  };
  auto out_of_range = [&text](const char* part, const std::string& value,
                              const std::string& range) {
    return Status::InvalidArgument("--limit has an out-of-range value: " + text + ": " + part +
                                   " must be " + range + ", got '" + value + "'");
  };
  json limit = {{"dimension", parts[0]}, {"algorithm", parts[1]}};
  const std::string& count_text = parts[2];
  if (!AllDigits(count_text)) return bad("LIMIT", count_text, "decimal digits");
  const std::string count_range = "an integer in [1, " + std::to_string(kMaxLimitPerWindow) + "]";
  // Leading zeros do not count; more than 18 digits is beyond any int64_t.
  const size_t first = count_text.find_first_not_of('0');
  const std::string significant = first == std::string::npos ? "0" : count_text.substr(first);
  const auto count = ParseDecimalInt(significant);
  if (!count || *count < 1 || *count > kMaxLimitPerWindow) {
    return out_of_range("LIMIT", count_text, count_range);
  }
  limit["limit"] = *count;
  const std::string seconds_range =
      "a number in [" + Fmt(kMinLimitSeconds) + ", " + Fmt(kMaxLimitSeconds) + "]";
  for (size_t i = 3; i < parts.size(); ++i) {
    const char* part = i == 3 ? "WINDOW_S" : "QUANTUM_S";
    const auto seconds = ParseDecimal(parts[i]);
    if (!seconds) {
      // ParseDecimal takes at most 64 characters: a longer plain number is
      // still a number, so say what is wrong with it.
      const std::string& t = parts[i];
      const bool plain = t.size() > 64 && t.find_first_not_of("0123456789.") == std::string::npos &&
                         std::count(t.begin(), t.end(), '.') <= 1;
      return bad(part, t, plain ? "a decimal number of at most 64 characters" : "a decimal number");
    }
    if (*seconds < kMinLimitSeconds || *seconds > kMaxLimitSeconds) {
      return out_of_range(part, parts[i], seconds_range);
    }
    limit[i == 3 ? "window_s" : "quantum_s"] = *seconds;
  }
  return limit;
}

// The range of each numeric flag, as the config field it sets checks it
// (config.cpp), for a value Boost cannot read as a number at all ("--port
// x"): its own message, "the argument ('x') for option '--port' is invalid",
// names no range.
constexpr std::pair<const char*, const char*> kFlagRanges[] = {
    {"--port", "an integer in [0, 65535] (0: ephemeral)"},
    {"--threads", "an integer in [1, 64]"},
    {"--overload-share", "a number in [0, 1]"},
    {"--overload-status", "503 or 529"},
    {"--overload-retry-after-ms", "a number of ms in [0, 3.6e+06]"},
    {"--count-rejected", "true or false"},
    {"--completion-tokens", "an integer in [0, 1000000]"},
    {"--latency-min-ms", "a number of ms in [0, 3.6e+06]"},
    {"--latency-max-ms", "a number of ms in [0, 3.6e+06]"},
    {"--per-output-token-ms", "a number of ms in [0, 60000]"},
    {"--seed", "an integer in [0, 9223372036854775807]"},
    {"--body-limit-bytes", "an integer in [1024, 1073741824]"},
    {"--read-timeout-ms", "a number of ms in [1, 3.6e+06]"},
    {"--idle-timeout-ms", "a number of ms in [1, 3.6e+06]"},
    {"--stream-tick-ms", "a number of ms in [0.01, 1000]"},
};

// "--F must be RANGE, got 'X'" for Boost's refusal of a value it cannot
// convert; Boost's own message for any other error.
std::string FlagError(const po::error& e) {
  const auto* invalid = dynamic_cast<const po::invalid_option_value*>(&e);
  if (!invalid) return e.what();
  const std::string what = e.what(), name = invalid->get_option_name();
  // Boost puts the value in its message only: "the argument ('X') for option ...".
  const size_t from = what.find("('"), to = what.find("')");
  const std::string value = from != std::string::npos && to != std::string::npos && to > from
                                ? what.substr(from + 2, to - from - 2)
                                : "";
  for (const auto& [flag, range] : kFlagRanges) {
    if (name == flag) return name + " must be " + range + ", got '" + value + "'";
  }
  return what;
}

}  // namespace

constexpr const char* kMockApiExitCodes =
    "Exit codes: 0 stopped by SIGINT or SIGTERM; 1 cannot listen (address in use, no\n"
    "permission); 2 bad usage or configuration (unknown flag, a value out of its range,\n"
    "an unreadable or invalid --config file; nothing was started).\n";

Result<CommandLine> ParseCommandLine(int argc, const char* const* argv) {
  po::options_description desc(
      "mockapi: a mock rate-limited OpenAI-compatible upstream.\n"
      "Usage: mockapi [--config FILE] [flags]\nFlags override the config file "
      "(docs/mockapi-config.md)");
  desc.add_options()("help,h", "print this help")("config,c", po::value<std::string>(),
                                                  "JSON config file")(
      "host", po::value<std::string>(), "listen address (IP)")("port,p", po::value<int64_t>(),
                                                               "listen port (0: ephemeral)")(
      "threads", po::value<int64_t>(), "io threads")("dialect", po::value<std::string>(),
                                                     "openai | anthropic | azure")(
      "profile", po::value<std::string>(),
      "how limits are reported: openai | azure | anthropic | bare (docs/provider-profiles.md)")(
      "overload-share", po::value<double>(), "share of chat calls answered overloaded, [0, 1]")(
      "overload-status", po::value<int64_t>(), "503 | 529 (default 503)")(
      "overload-retry-after-ms", po::value<double>(), "retry hint on overload answers (0: none)")(
      "model", po::value<std::string>(), "model name")("organization", po::value<std::string>(),
                                                       "organization named in 429 messages")(
      "scope", po::value<std::string>(), "global | api_key")(
      "count-rejected", po::value<bool>()->implicit_value(true), "429s cost 1 request")(
      "token-accounting", po::value<std::string>(), "actual | max_tokens")(
      "limit", po::value<std::vector<std::string>>(),
      "DIM:ALGO:LIMIT:WINDOW_S[:QUANTUM_S], repeatable; replaces the file's limits")(
      "no-limits", "serve without any limit")("completion-tokens", po::value<int64_t>(),
                                              "fixed completion tokens per call")(
      "latency-min-ms", po::value<double>(), "service time lower bound, ms")(
      "latency-max-ms", po::value<double>(), "service time upper bound, ms")(
      "per-output-token-ms", po::value<double>(), "extra service time per completion token, ms")(
      "zero-latency", "answer at once (benchmarks)")("seed", po::value<int64_t>(), "random seed")(
      "body-limit-bytes", po::value<int64_t>(), "request body limit (413 above)")(
      "read-timeout-ms", po::value<double>(), "time to read one request")(
      "idle-timeout-ms", po::value<double>(), "keep-alive wait for the next request")(
      "stream-tick-ms", po::value<double>(), "paced streams' timing resolution, ms (default 2)");
  // Integer flags are read as int64_t, not int: a value beyond int (e.g.
  // --threads 99999999999) then reaches ConfigFromJson and is refused with
  // the field's range instead of Boost's "the argument ... is invalid".
  po::variables_map vm;
  try {
    // No positional arguments: an empty description makes a stray word an error.
    po::store(po::command_line_parser(argc, argv)
                  .options(desc)
                  .positional(po::positional_options_description())
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Status::InvalidArgument(FlagError(e));
  } catch (const std::exception& e) {
    return Status::InvalidArgument(e.what());
  }
  CommandLine out;
  if (vm.count("help")) {
    std::ostringstream text;
    text << desc << "\n" << kMockApiExitCodes;
    out.help = true;
    out.help_text = text.str();
    return out;
  }
  if (vm.count("config")) {
    auto file = LoadConfigFile(vm["config"].as<std::string>());
    if (!file.ok()) return file.status();
    out.config = *file;
  }
  const MockConfig& base = out.config;
  json patch = json::object();
  if (vm.count("host") || vm.count("port")) {
    patch["listen"] = {{"host", vm.count("host") ? vm["host"].as<std::string>() : base.host},
                       {"port", vm.count("port") ? vm["port"].as<int64_t>() : base.port}};
  }
  if (vm.count("threads")) patch["threads"] = vm["threads"].as<int64_t>();
  for (const char* key : {"dialect", "profile", "model", "organization", "scope"}) {
    if (vm.count(key)) patch[key] = vm[key].as<std::string>();
  }
  if (vm.count("overload-share") || vm.count("overload-status") ||
      vm.count("overload-retry-after-ms")) {
    const OverloadOptions& o = base.overload;
    patch["overload"] = {
        {"share", vm.count("overload-share") ? vm["overload-share"].as<double>() : o.share},
        {"status",
         vm.count("overload-status") ? vm["overload-status"].as<int64_t>() : int64_t{o.status}},
        {"retry_after_ms", vm.count("overload-retry-after-ms")
                               ? vm["overload-retry-after-ms"].as<double>()
                               : o.retry_after_ms}};
  }
  if (vm.count("count-rejected")) patch["count_rejected"] = vm["count-rejected"].as<bool>();
  if (vm.count("token-accounting"))
    patch["token_accounting"] = vm["token-accounting"].as<std::string>();
  if (vm.count("no-limits")) patch["limits"] = json::array();
  if (vm.count("limit")) {
    patch["limits"] = json::array();
    for (const std::string& text : vm["limit"].as<std::vector<std::string>>()) {
      auto limit = ParseLimitFlag(text);
      if (!limit.ok()) return limit.status();
      patch["limits"].push_back(*limit);
    }
  }
  if (vm.count("completion-tokens")) {
    patch["completion_tokens"] = {
        {"distribution", "fixed"},
        {"value", vm["completion-tokens"].as<int64_t>()},
        {"clamp_to_max_tokens", base.completion_tokens.clamp_to_max_tokens}};
  }
  LatencyOptions latency = base.latency;
  if (vm.count("zero-latency")) latency = {0, 0, 0};
  if (vm.count("latency-min-ms")) latency.min_ms = vm["latency-min-ms"].as<double>();
  if (vm.count("latency-max-ms")) latency.max_ms = vm["latency-max-ms"].as<double>();
  if (vm.count("per-output-token-ms"))
    latency.per_output_token_ms = vm["per-output-token-ms"].as<double>();
  patch["latency"] = {{"min_ms", latency.min_ms},
                      {"max_ms", latency.max_ms},
                      {"per_output_token_ms", latency.per_output_token_ms}};
  if (vm.count("seed")) patch["seed"] = vm["seed"].as<int64_t>();
  if (vm.count("body-limit-bytes"))
    patch["body_limit_bytes"] = vm["body-limit-bytes"].as<int64_t>();
  if (vm.count("read-timeout-ms")) patch["read_timeout_ms"] = vm["read-timeout-ms"].as<double>();
  if (vm.count("idle-timeout-ms")) patch["idle_timeout_ms"] = vm["idle-timeout-ms"].as<double>();
  if (vm.count("stream-tick-ms")) patch["stream_tick_ms"] = vm["stream-tick-ms"].as<double>();
  auto config = ConfigFromJson(patch, base);
  if (!config.ok()) return config.status();
  out.config = *config;
  // Checked here, not at bind time, so a bad address is a usage error (exit 2).
  boost::system::error_code ec;
  boost::asio::ip::make_address(out.config.host, ec);
  if (ec) {
    return Status::InvalidArgument(std::string(vm.count("host") ? "--host" : "listen.host") +
                                   " must be an IPv4 or IPv6 address (e.g. 127.0.0.1), got \"" +
                                   out.config.host + "\"");
  }
  return out;
}

int MockApiMain(int argc, const char* const* argv) {
  auto cli = ParseCommandLine(argc, argv);
  if (!cli.ok()) {
    std::cerr << "mockapi: " << cli.status().message() << " (see --help)\n";
    return 2;
  }
  if (cli->help) {
    std::cout << cli->help_text;
    return 0;
  }
  const MockConfig& c = cli->config;
  auto service = Service::Create(c, SystemClock::Instance());
  if (!service.ok()) {
    std::cerr << "mockapi: " << service.status().message() << "\n";
    return 2;
  }
  Server server(**service, {c.host, c.port, c.threads, /*handle_signals=*/true});
  if (Status s = server.Start(); !s.ok()) {
    std::cerr << "mockapi: " << s.message() << "\n";
    return 1;
  }
  spdlog::info(
      "mockapi listening on http://{}:{} (dialect {}, profile {}, overload {}, {} limits, {} "
      "threads)",
      c.host, server.port(), DialectName(c.dialect), ProfileName(c.profile), c.overload.share,
      c.limits.size(), c.threads);
  server.Wait();
  spdlog::info("mockapi stopped");
  return 0;
}

}  // namespace bp::mockapi
