// Retry rules of the OpenAI SDK, Temporal and the LiteLLM router
// (retry_policy.h; constants from docs/providers.md).
#include "bp/loadgen/retry_policy.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "bp/decimal.h"

namespace bp::loadgen {

bool SdkRetryable(int status) {
  return status == 0 || status == 408 || status == 409 || status == 429 || status >= 500;
}

double SdkRetryDelayMs(const RetryHint& hint, int retries_taken, double jitter_u,
                       SdkRetryAfterBound bound) {
  if (hint.retry_after_ms && *hint.retry_after_ms > 0) {
    double t = *hint.retry_after_ms;
    bool in_range = bound == SdkRetryAfterBound::kInclusive60s ? t <= 60000 : t < 60000;
    if (in_range) return t;
  }
  int n = std::clamp(retries_taken, 0, 30);
  double base = std::min(500.0 * std::pow(2.0, n), 8000.0);
  return base * (1.0 - 0.25 * jitter_u);
}

double ActivityRetryDelayMs(int attempt) {
  int n = std::clamp(attempt - 1, 0, 30);
  return std::min(1000.0 * std::pow(2.0, n), 100000.0);
}

double LitellmRouterDelayMs(const RetryHint& hint, int retries_taken, double jitter_u) {
  if (hint.retry_after_ms && *hint.retry_after_ms >= 0 && *hint.retry_after_ms <= 60000) {
    return *hint.retry_after_ms;
  }
  int n = std::clamp(retries_taken, 0, 30);
  return std::min(500.0 * std::pow(2.0, n), 8000.0) * (1.0 - 0.25 * jitter_u);
}

std::optional<double> ParseSeconds(std::string_view value) {
  // Optional whitespace around a header value (RFC 9110 section 5.5).
  auto ows = [](char c) { return c == ' ' || c == '\t'; };
  while (!value.empty() && ows(value.front())) value.remove_prefix(1);
  while (!value.empty() && ows(value.back())) value.remove_suffix(1);
  if (value.size() > 32) return std::nullopt;
  return ParseDecimal(value);
}

}  // namespace bp::loadgen
