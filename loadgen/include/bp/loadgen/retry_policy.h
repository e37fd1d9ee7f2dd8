// The retry rules of the systems the baselines imitate, as pure functions of
// paper time (docs/providers.md). The engine converts to real time by
// dividing by the speedup. Thread-safe (no state); `jitter_u` is a uniform
// random number in [0, 1) supplied by the caller so tests can fix it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace bp::loadgen {

// Official OpenAI SDKs: max_retries 2 (3 attempts); retried statuses 408, 409,
// 429, >= 500 and connection errors (status 0).
inline constexpr int kSdkMaxRetries = 2;
bool SdkRetryable(int status);

// Server hint of a response, already in paper milliseconds.
struct RetryHint {
  std::optional<double> retry_after_ms;  // from retry-after-ms, else retry-after
};

// Which server hints the SDK honours. docs/providers.md: the official SDKs
// honour 0 < t <= 60 s (the default here); openai-node up to 6.25 honours only
// 0 < t < 60 s, so LiteLLM's `retry-after: 60` falls back to its backoff.
enum class SdkRetryAfterBound { kInclusive60s, kExclusive60s };

// SDK delay before retry number n+1 (n = retries already taken, 0-based):
// the hint if 0 < t <= 60 s (t < 60 s with kExclusive60s), else
// min(0.5 s * 2^n, 8 s) * (1 - 0.25 * jitter_u).
double SdkRetryDelayMs(const RetryHint& hint, int retries_taken, double jitter_u,
                       SdkRetryAfterBound bound = SdkRetryAfterBound::kInclusive60s);

// Temporal's default activity retry policy (server side, the slot is free
// meanwhile): initial 1 s, coefficient 2, maximum 100 x initial, unlimited
// attempts. `attempt` is the attempt that just failed, 1-based:
// 1 -> 1 s, 2 -> 2 s, 3 -> 4 s, ..., capped at 100 s.
double ActivityRetryDelayMs(int attempt);

// LiteLLM router retry of an upstream 429 inside the request (num_retries 2),
// holding the caller's connection: the upstream retry-after when 0 <= t <= 60 s,
// else exponential backoff 0.5 s * 2^n capped at 8 s, with jitter
// (x (1 - 0.25 * jitter_u), the same jitter shape as the SDK's).
inline constexpr int kLitellmRouterRetries = 2;
double LitellmRouterDelayMs(const RetryHint& hint, int retries_taken, double jitter_u);

// LiteLLM's proxy-local 429 carries `retry-after: 60` (seconds).
inline constexpr double kLitellmLocalRetryAfterMs = 60000;

// Parses a retry-after header value in seconds ("1", "0.25", " 2 "): a
// non-negative decimal number (bp/decimal.h) between optional spaces/tabs.
// Anything else gives nullopt, which callers treat as an absent header, as the
// SDKs treat an unparsable one: a sign, an exponent, hex ("0x10"), a suffix,
// and HTTP dates (the simulation runs on paper time, not the wall clock).
// Parses retry-after-ms ("644.5") and x-ratelimit-remaining-* the same way.
std::optional<double> ParseSeconds(std::string_view value);

}  // namespace bp::loadgen
