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
// The full config in the contract's shape (GET /admin/config).
nlohmann::json ConfigToJson(const MockConfig& config);
// Reads and parses a JSON file over the defaults; NotFound if unreadable.
Result<MockConfig> LoadConfigFile(const std::string& path);
// Cross-field checks (ranges, uniform min <= max, latency min <= max).
Status ValidateConfig(const MockConfig& config);

}  // namespace bp::mockapi
