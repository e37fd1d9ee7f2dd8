// Parsing and printing of the mockapi JSON config (docs/mockapi-config.md).
// No exceptions: every value is type-checked before it is read.
#include "bp/mockapi/config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include "bp/json_text.h"
#include "bp/limit_json.h"

namespace bp::mockapi {
namespace {

using nlohmann::json;

// Ranges of the durations a PUT's speedup divides (RealTimePatch) that
// ConfigFromJson checks too; limits' window_s and quantum_s take
// bp/limit_json.h's [kMinLimitSeconds, kMaxLimitSeconds].
constexpr double kMaxDurationMs = 3.6e6;  // latency.min_ms / max_ms, overload.retry_after_ms
constexpr double kMaxPerOutputTokenMs = 6e4;

std::string Fmt(double x) {
  std::ostringstream o;
  o << x;
  return o.str();
}

// Reads typed members of one JSON object, keeping the first error.
class Reader {
 public:
  Reader(const json& obj, std::string path) : obj_(obj), path_(std::move(path)) {
    if (!obj_.is_object())
      Fail(path_.empty() ? "config must be a JSON object" : path_ + " must be an object");
  }
  bool Has(const char* key) const { return status_.ok() && obj_.contains(key); }
  std::string Path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  void Fail(std::string message) {
    if (status_.ok()) status_ = Status::InvalidArgument(std::move(message));
  }

  void Number(const char* key, double* out, double min, double max) {
    if (!Has(key)) return;
    const json& v = obj_[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < min ||
        v.get<double>() > max) {
      Fail(Path(key) + " must be a number in [" + Fmt(min) + ", " + Fmt(max) + "], got " +
           v.dump());
      return;
    }
    *out = v.get<double>();
  }
  template <typename T>
  void Int(const char* key, T* out, int64_t min, int64_t max) {
    if (!Has(key)) return;
    const json& v = obj_[key];
    if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max) {
      Fail(Path(key) + " must be an integer in [" + std::to_string(min) + ", " +
           std::to_string(max) + "], got " + v.dump());
      return;
    }
    *out = static_cast<T>(v.get<int64_t>());
  }
  void String(const char* key, std::string* out) {
    if (!Has(key)) return;
    const json& v = obj_[key];
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
      Fail(Path(key) + " must be a non-empty string, got " + v.dump());
      return;
    }
    *out = v.get<std::string>();
  }
  void Bool(const char* key, bool* out) {
    if (!Has(key)) return;
    if (!obj_[key].is_boolean())
      return Fail(Path(key) + " must be true or false, got " + obj_[key].dump());
    *out = obj_[key].get<bool>();
  }
  // One of `names`; *out is its index.
  template <typename E>
  void Enum(const char* key, E* out, std::initializer_list<const char*> names) {
    std::string s;
    String(key, &s);
    if (!Has(key)) return;
    int i = 0;
    std::string list;
    for (const char* n : names) {
      if (s == n) {
        *out = static_cast<E>(i);
        return;
      }
      list += (i++ ? " | " : "") + std::string(n);
    }
    Fail(Path(key) + " must be " + list + ", got \"" + s + "\"");
  }
  Status Finish(std::initializer_list<const char*> known) {
    if (!status_.ok()) return status_;
    for (const auto& item : obj_.items()) {
      bool ok = false;
      for (const char* k : known) ok = ok || item.key() == k;
      if (!ok) Fail("unknown field " + Path(item.key().c_str()));
    }
    return status_;
  }

 private:
  const json& obj_;
  std::string path_;
  Status status_;
};

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
  Reader r(j, "");
  if (r.Has("listen")) {
    MockConfig d;
    c.host = d.host;
    c.port = d.port;
    Reader l(j["listen"], "listen");
    l.String("host", &c.host);
    l.Int("port", &c.port, 0, 65535);
    if (Status s = l.Finish({"host", "port"}); !s.ok()) return s;
  }
  r.Int("threads", &c.threads, 1, 64);
  r.Enum("dialect", &c.dialect, {"openai", "anthropic", "azure"});
  r.Enum("profile", &c.profile, {"openai", "azure", "anthropic", "bare"});
  if (r.Has("overload")) {
    c.overload = OverloadOptions{};
    Reader o(j["overload"], "overload");
    o.Number("share", &c.overload.share, 0, 1);
    o.Int("status", &c.overload.status, 503, 529);
    o.Number("retry_after_ms", &c.overload.retry_after_ms, 0, kMaxDurationMs);
    if (Status s = o.Finish({"share", "status", "retry_after_ms"}); !s.ok()) return s;
    if (c.overload.status != 503 && c.overload.status != 529) {
      return Status::InvalidArgument("overload.status must be 503 or 529, got " +
                                     std::to_string(c.overload.status));
    }
  }
  r.String("model", &c.model);
  r.String("organization", &c.organization);
  r.Enum("scope", &c.scope, {"global", "api_key"});
  r.Bool("count_rejected", &c.count_rejected);
  r.Enum("token_accounting", &c.token_accounting, {"actual", "max_tokens"});
  r.Enum("stream_disconnect", &c.stream_disconnect, {"generated", "full"});
  if (r.Has("limits")) {
    auto limits = LimitsFromJson(j["limits"], "limits");  // the reader loadgen uses too
    if (!limits.ok()) return limits.status();
    c.limits = std::move(*limits);
  }
  if (r.Has("completion_tokens")) {
    c.completion_tokens = CompletionTokensOptions{};
    Reader t(j["completion_tokens"], "completion_tokens");
    t.Enum("distribution", &c.completion_tokens.uniform, {"fixed", "uniform"});
    t.Int("value", &c.completion_tokens.value, 0, 1'000'000);
    t.Int("min", &c.completion_tokens.min, 0, 1'000'000);
    t.Int("max", &c.completion_tokens.max, 0, 1'000'000);
    t.Bool("clamp_to_max_tokens", &c.completion_tokens.clamp_to_max_tokens);
    if (Status s = t.Finish({"distribution", "value", "min", "max", "clamp_to_max_tokens"});
        !s.ok())
      return s;
  }
  if (r.Has("latency")) {
    c.latency = LatencyOptions{};
    Reader t(j["latency"], "latency");
    t.Number("min_ms", &c.latency.min_ms, 0, kMaxDurationMs);
    t.Number("max_ms", &c.latency.max_ms, 0, kMaxDurationMs);
    t.Number("per_output_token_ms", &c.latency.per_output_token_ms, 0, kMaxPerOutputTokenMs);
    if (Status s = t.Finish({"min_ms", "max_ms", "per_output_token_ms"}); !s.ok()) return s;
  }
  r.Int("seed", &c.seed, 0, INT64_MAX);
  r.Int("body_limit_bytes", &c.body_limit_bytes, 1024, int64_t{1} << 30);
  r.Number("read_timeout_ms", &c.read_timeout_ms, 1, 3.6e6);
  r.Number("idle_timeout_ms", &c.idle_timeout_ms, 1, 3.6e6);
  r.Number("stream_tick_ms", &c.stream_tick_ms, 0.01, 1000);
  if (Status s =
          r.Finish({"listen", "threads", "dialect", "profile", "overload", "model", "organization",
                    "scope", "count_rejected", "token_accounting", "stream_disconnect", "limits",
                    "completion_tokens", "latency", "seed", "body_limit_bytes", "read_timeout_ms", "idle_timeout_ms",
                    "stream_tick_ms"});
      !s.ok()) {
    return s;
  }
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
      return Status::InvalidArgument("limits[" + std::to_string(i) + "]: " + s.message());
    }
  }
  return Status::Ok();
}

Result<json> RealTimePatch(json patch) {
  if (!patch.is_object() || !patch.contains("speedup")) return patch;
  const json& v = patch["speedup"];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0)) {
    return Status::InvalidArgument("speedup must be a finite number > 0, got " + v.dump());
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
            path + "." + d.key + " must be a number in [" + Fmt(d.min) + ", " + Fmt(d.max) +
            "] once divided by the speedup " + Fmt(speedup) + ", i.e. in [" + Fmt(d.min * speedup) +
            ", " + Fmt(d.max * speedup) + "] as sent, got " + (*obj)[d.key].dump());
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
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::NotFound(path + ": is a directory, not a config file");
  }
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read config file " + path);
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(path + ": " + JsonSyntaxError(text.str()));
  auto c = ConfigFromJson(j, MockConfig{});
  if (!c.ok()) return Status::InvalidArgument(path + ": " + c.status().message());
  return c;
}

}  // namespace bp::mockapi
