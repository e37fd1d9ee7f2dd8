// Parsing and printing of the mockapi JSON config (docs/mockapi-config.md).
// The fields are read by bp::JsonFields (json_fields.h), whose message shape
// every refusal takes.
#include "bp/mockapi/config.h"

#include <cmath>
#include <initializer_list>

#include "bp/json_fields.h"
#include "bp/limit_json.h"

namespace bp::mockapi {
namespace {

using nlohmann::json;

// Ranges of the durations a PUT's speedup divides (RealTimePatch) that
// ConfigFromJson checks too; limits' window_s and quantum_s take
// bp/limit_json.h's [kMinLimitSeconds, kMaxLimitSeconds].
constexpr double kMaxDurationMs = 3.6e6;  // latency.min_ms / max_ms, overload.retry_after_ms
constexpr double kMaxPerOutputTokenMs = 6e4;

}  // namespace

const char* DialectName(Dialect d) {
  switch (d) {
    case Dialect::kOpenAI:
      return "openai";
    case Dialect::kAnthropic:
      return "anthropic";
    case Dialect::kAzure:
      return "azure";
  }
  return "openai";
}

const char* ProfileName(Profile p) {
  switch (p) {
    case Profile::kOpenAI:
      return "openai";
    case Profile::kAzure:
      return "azure";
    case Profile::kAnthropic:
      return "anthropic";
    case Profile::kBare:
      return "bare";
  }
  return "openai";
}

Result<MockConfig> ConfigFromJson(const json& j, const MockConfig& base) {
  MockConfig c = base;
  std::string error;
  JsonFields r(j, "", &error);
  r.OnlyKeys({"listen", "threads", "dialect", "profile", "overload", "model", "organization",
              "scope", "count_rejected", "token_accounting", "stream_disconnect", "limits",
              "completion_tokens", "latency", "seed", "body_limit_bytes", "read_timeout_ms",
              "idle_timeout_ms", "stream_tick_ms"});
  if (r.Has("listen") && r.ok()) {
    MockConfig d;
    c.host = d.host;
    c.port = d.port;
    JsonFields l(j["listen"], "listen", &error);
    l.OnlyKeys({"host", "port"});
    l.String("host", &c.host, Need::kOptional, /*non_empty=*/true);
    l.Int("port", 0, 65535, &c.port);
  }
  r.Int("threads", 1, 64, &c.threads);
  r.Enum("dialect", &c.dialect, {"openai", "anthropic", "azure"});
  r.Enum("profile", &c.profile, {"openai", "azure", "anthropic", "bare"});
  if (r.Has("overload") && r.ok()) {
    c.overload = OverloadOptions{};
    JsonFields o(j["overload"], "overload", &error);
    o.OnlyKeys({"share", "status", "retry_after_ms"});
    o.NumberIn("share", 0, 1, &c.overload.share);
    o.Int("status", 503, 529, &c.overload.status);
    o.NumberIn("retry_after_ms", 0, kMaxDurationMs, &c.overload.retry_after_ms);
    if (o.ok() && c.overload.status != 503 && c.overload.status != 529) {
      o.Fail("status", "must be 503 or 529, got " + std::to_string(c.overload.status));
    }
  }
  r.String("model", &c.model, Need::kOptional, /*non_empty=*/true);
  r.String("organization", &c.organization, Need::kOptional, /*non_empty=*/true);
  r.Enum("scope", &c.scope, {"global", "api_key"});
  r.Bool("count_rejected", &c.count_rejected);
  r.Enum("token_accounting", &c.token_accounting, {"actual", "max_tokens"});
  r.Enum("stream_disconnect", &c.stream_disconnect, {"generated", "full"});
  if (r.Has("limits") && r.ok()) {
    auto limits = LimitsFromJson(j["limits"], "limits");  // the reader loadgen uses too
    if (!limits.ok()) return limits.status();
    c.limits = std::move(*limits);
  }
  if (r.Has("completion_tokens") && r.ok()) {
    c.completion_tokens = CompletionTokensOptions{};
    JsonFields t(j["completion_tokens"], "completion_tokens", &error);
    t.OnlyKeys({"distribution", "value", "min", "max", "clamp_to_max_tokens"});
    t.Enum("distribution", &c.completion_tokens.uniform, {"fixed", "uniform"});
    t.Int("value", 0, 1'000'000, &c.completion_tokens.value);
    t.Int("min", 0, 1'000'000, &c.completion_tokens.min);
    t.Int("max", 0, 1'000'000, &c.completion_tokens.max);
    t.Bool("clamp_to_max_tokens", &c.completion_tokens.clamp_to_max_tokens);
  }
  if (r.Has("latency") && r.ok()) {
    c.latency = LatencyOptions{};
    JsonFields t(j["latency"], "latency", &error);
    t.OnlyKeys({"min_ms", "max_ms", "per_output_token_ms"});
    t.NumberIn("min_ms", 0, kMaxDurationMs, &c.latency.min_ms);
    t.NumberIn("max_ms", 0, kMaxDurationMs, &c.latency.max_ms);
    t.NumberIn("per_output_token_ms", 0, kMaxPerOutputTokenMs, &c.latency.per_output_token_ms);
  }
  r.Int("seed", 0, INT64_MAX, &c.seed);
  r.Int("body_limit_bytes", 1024, int64_t{1} << 30, &c.body_limit_bytes);
  r.NumberIn("read_timeout_ms", 1, 3.6e6, &c.read_timeout_ms);
  r.NumberIn("idle_timeout_ms", 1, 3.6e6, &c.idle_timeout_ms);
  r.NumberIn("stream_tick_ms", 0.01, 1000, &c.stream_tick_ms);
  if (!r.ok()) return r.status();
  if (Status s = ValidateConfig(c); !s.ok()) return s;
  return c;
}

Status ValidateConfig(const MockConfig& c) {
  if (c.completion_tokens.uniform && c.completion_tokens.min > c.completion_tokens.max) {
    return Status::InvalidArgument("completion_tokens.min must be <= completion_tokens.max");
  }
  if (c.latency.min_ms > c.latency.max_ms) {
    return Status::InvalidArgument("latency.min_ms must be <= latency.max_ms");
  }
  for (size_t i = 0; i < c.limits.size(); ++i) {
    if (Status s = ValidateLimiterOptions(c.limits[i]); !s.ok()) {
      return WithPrefix(s, "limits[" + std::to_string(i) + "]");
    }
  }
  return Status::Ok();
}

Result<json> RealTimePatch(json patch) {
  if (!patch.is_object() || !patch.contains("speedup")) return patch;
  const json& v = patch["speedup"];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0)) {
    return Status::InvalidArgument("speedup: must be a finite number > 0, got " + v.dump());
  }
  const double speedup = v.get<double>();
  patch.erase("speedup");
  // Each duration is checked against ConfigFromJson's range here, where the
  // value as sent is at hand: the message names that value and the speedup
  // (after the division only the quotient would be left to quote).
  struct Duration {
    const char* key;
    double min, max;
  };
  Status error;
  auto scale = [speedup, &error](json* obj, const std::string& path,
                                 std::initializer_list<Duration> keys) {
    if (!obj->is_object()) return;
    for (const Duration& d : keys) {
      if (!error.ok() || !obj->contains(d.key) || !(*obj)[d.key].is_number()) continue;
      const double sent = (*obj)[d.key].get<double>();
      const double real = sent / speedup;
      if (!std::isfinite(real) || real < d.min || real > d.max) {
        error = Status::InvalidArgument(
            path + "." + d.key + ": " + NumberRangeText({d.min, d.max}) +
            " once divided by the speedup " + FormatShort(speedup) + ", i.e. in [" +
            FormatShort(d.min * speedup) + ", " + FormatShort(d.max * speedup) + "] as sent, got " +
            (*obj)[d.key].dump());
        return;
      }
      (*obj)[d.key] = real;
    }
  };
  if (patch.contains("limits") && patch["limits"].is_array()) {
    for (size_t i = 0; i < patch["limits"].size(); ++i) {
      scale(&patch["limits"][i], "limits[" + std::to_string(i) + "]",
            {{"window_s", kMinLimitSeconds, kMaxLimitSeconds},
             {"quantum_s", kMinLimitSeconds, kMaxLimitSeconds}});
    }
  }
  if (patch.contains("latency")) {
    scale(&patch["latency"], "latency",
          {{"min_ms", 0, kMaxDurationMs},
           {"max_ms", 0, kMaxDurationMs},
           {"per_output_token_ms", 0, kMaxPerOutputTokenMs}});
  }
  if (patch.contains("overload")) {
    scale(&patch["overload"], "overload", {{"retry_after_ms", 0, kMaxDurationMs}});
  }
  if (!error.ok()) return error;
  return patch;
}

json ConfigToJson(const MockConfig& c) {
  json limits = json::array();
  for (const LimiterOptions& o : c.limits) {
    json l = {{"dimension", DimensionName(o.dimension)},
              {"algorithm", LimiterAlgorithmName(o.algorithm)},
              {"limit", o.limit},
              {"window_s", o.window_s}};
    if (o.algorithm == LimiterAlgorithm::kQuantized) l["quantum_s"] = o.quantum_s;
    limits.push_back(std::move(l));
  }
  json tokens = {{"distribution", c.completion_tokens.uniform ? "uniform" : "fixed"},
                 {"clamp_to_max_tokens", c.completion_tokens.clamp_to_max_tokens}};
  if (c.completion_tokens.uniform) {
    tokens["min"] = c.completion_tokens.min;
    tokens["max"] = c.completion_tokens.max;
  } else {
    tokens["value"] = c.completion_tokens.value;
  }
  return {{"listen", {{"host", c.host}, {"port", c.port}}},
          {"threads", c.threads},
          {"dialect", DialectName(c.dialect)},
          {"profile", ProfileName(c.profile)},
          {"overload",
           {{"share", c.overload.share},
            {"status", c.overload.status},
            {"retry_after_ms", c.overload.retry_after_ms}}},
          {"model", c.model},
          {"organization", c.organization},
          {"scope", c.scope == Scope::kGlobal ? "global" : "api_key"},
          {"count_rejected", c.count_rejected},
          {"token_accounting",
           c.token_accounting == TokenAccounting::kActual ? "actual" : "max_tokens"},
          {"stream_disconnect",
           c.stream_disconnect == StreamDisconnect::kGenerated ? "generated" : "full"},
          {"limits", std::move(limits)},
          {"completion_tokens", std::move(tokens)},
          {"latency",
           {{"min_ms", c.latency.min_ms},
            {"max_ms", c.latency.max_ms},
            {"per_output_token_ms", c.latency.per_output_token_ms}}},
          {"seed", c.seed},
          {"body_limit_bytes", c.body_limit_bytes},
          {"read_timeout_ms", c.read_timeout_ms},
          {"idle_timeout_ms", c.idle_timeout_ms},
          {"stream_tick_ms", c.stream_tick_ms}};
}

Result<MockConfig> LoadConfigFile(const std::string& path) {
  auto j = ReadJsonFile(path, "config");
  if (!j.ok()) return j.status();
  auto c = ConfigFromJson(*j, MockConfig{});
  if (!c.ok()) return WithPrefix(c.status(), path);
  return c;
}

}  // namespace bp::mockapi
