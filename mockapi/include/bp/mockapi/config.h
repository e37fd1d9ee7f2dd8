// mockapi configuration: the JSON contract of docs/mockapi-config.md.
//
// One MockConfig is parsed once at start (file, then flag overrides) and
// replaced as a whole by PUT /admin/config; the service keeps it const and
// swaps snapshots, so a reader never sees a half-applied update.
//
// JSON: every top-level field is optional; a field present replaces the
// current one, and a nested object (latency, completion_tokens, listen) is
// replaced as a whole, its missing members taking the defaults below.
// Unknown fields and out-of-range values are InvalidArgument naming the field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bp/limiter.h"
#include "bp/status.h"

namespace bp::mockapi {

// Which provider the answers imitate (docs/providers.md). POST /v1/messages
// always speaks Anthropic; every other path speaks the configured dialect.
enum class Dialect { kOpenAI, kAnthropic, kAzure };
const char* DialectName(Dialect d);  // "openai", "anthropic", "azure"

// How rate limits are reported (docs/provider-profiles.md): which rate-limit
// headers every /v1/ answer carries, which retry headers a 429 carries and
// whose 429 body it is. kOpenAI is the behaviour before profiles existed (the
// answer's dialect's full header set, retry-after and retry-after-ms); kAzure
// x-ratelimit-remaining-* only, retry-after-ms + retry-after, Azure bodies;
// kAnthropic anthropic-ratelimit-* (RFC 3339 resets), retry-after only,
// Anthropic bodies; kBare no rate-limit or retry header at all, the wait only
// in the 429 message of the answer's dialect. Success bodies and the other
// errors always follow the dialect.
enum class Profile { kOpenAI, kAzure, kAnthropic, kBare };
const char* ProfileName(Profile p);  // "openai", "azure", "anthropic", "bare"

// A share of valid chat calls answered "overloaded" before the limits are
// asked (they consume nothing): 503, or 529 (Anthropic's overloaded_error).
// Deterministic: with n the chat calls since `overload` was last set (0-based)
// and u = a fraction drawn from `seed`, call n is overloaded iff
// floor((n + 1) * share + u) > floor(n * share + u), i.e. exactly one call in
// every 1 / share consecutive calls when 1 / share is an integer.
struct OverloadOptions {
  double share = 0;           // [0, 1]; 0 = never
  int status = 503;           // 503 | 529
  double retry_after_ms = 0;  // > 0: retry-after (s, ceil) and, except under the
                              // anthropic profile, retry-after-ms; 0: no hint
};

enum class Scope { kGlobal, kApiKey };  // "global", "api_key"
// kActual: tokens = prompt + completion; kMaxTokens: prompt + max_tokens
// (Azure/OpenAI-style reservation; prompt + completion when max_tokens absent).
enum class TokenAccounting { kActual, kMaxTokens };  // "actual", "max_tokens"

struct CompletionTokensOptions {
  bool uniform = false;  // "distribution": "fixed" | "uniform"
  int64_t value = 20;    // fixed: completion tokens per call
  int64_t min = 10;      // uniform: inclusive range
  int64_t max = 30;
  bool clamp_to_max_tokens = true;  // min(draw, request max_tokens); finish_reason "length"
};

struct LatencyOptions {
  double min_ms = 50;  // service time drawn uniformly from [min_ms, max_ms]
  double max_ms = 150;
  double per_output_token_ms = 0;  // plus this per completion token
};

struct MockConfig {
  std::string host = "127.0.0.1";  // "listen": {"host", "port"}; port 0 = ephemeral
  int port = 8080;
  int threads = 2;  // io threads, 1..64
  Dialect dialect = Dialect::kOpenAI;
  Profile profile = Profile::kOpenAI;
  OverloadOptions overload;
  std::string model = "gpt-4o-mini";  // answered in /v1/models and when a request names none
  std::string organization = "org-mock";
  Scope scope = Scope::kGlobal;
  bool count_rejected = false;  // a 429 still costs 1 in every `requests` limit
  TokenAccounting token_accounting = TokenAccounting::kActual;
  std::vector<LimiterOptions> limits;  // empty: nothing is limited
  CompletionTokensOptions completion_tokens;
  LatencyOptions latency;
  uint64_t seed = 1;
  int64_t body_limit_bytes = 1 << 20;  // larger bodies get 413
  double read_timeout_ms = 10000;      // from a request's first byte to its end
  double idle_timeout_ms = 30000;      // keep-alive wait for the next request
};

// Fields of `json` present replace those of `base`; the result is validated.
Result<MockConfig> ConfigFromJson(const nlohmann::json& json, const MockConfig& base);
// A PUT /admin/config body may carry "speedup": F, a finite number > 0
// (loadgen's time compression, SPEC section 5): the patch's durations are
// then in paper units and each is divided by F (limits[].window_s,
// limits[].quantum_s, latency.min_ms/max_ms/per_output_token_ms,
// overload.retry_after_ms); a limit per window is unchanged, so its rate is
// F times the paper rate. Returns the patch in real units without "speedup"
// (unchanged when absent); values of the wrong type are left for
// ConfigFromJson to report. InvalidArgument for a bad speedup, or for a
// duration outside ConfigFromJson's range once divided; that message quotes
// the value as sent, the speedup and the range as sent, e.g.
// "limits[0].window_s must be a number in [1e-06, 1e+07] once divided by the
// speedup 1000, i.e. in [0.001, 1e+10] as sent, got 0.0001".
Result<nlohmann::json> RealTimePatch(nlohmann::json patch);
// The full config in the contract's shape (GET /admin/config).
nlohmann::json ConfigToJson(const MockConfig& config);
// Reads and parses a JSON file over the defaults; NotFound if unreadable.
Result<MockConfig> LoadConfigFile(const std::string& path);
// Cross-field checks (ranges, uniform min <= max, latency min <= max).
Status ValidateConfig(const MockConfig& config);

}  // namespace bp::mockapi
