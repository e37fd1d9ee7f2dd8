// libFuzzer target: the provider answer headers loadgen's HTTP client reads
// and the SDK and LiteLLM retry models act on (http_client.h,
// retry_policy.h): retry-after and retry-after-ms (ParseSeconds; an HTTP date
// must come back as absent), x-ratelimit-remaining-* (ParseSeconds) and
// x-ratelimit-reset-* Go durations such as "6m0s" and "12ms"
// (ParseGoDurationMs). The input is one header value. A parsed value must be
// finite and >= 0, and the retry delays computed from it finite and >= 0.
// Round trip: the input's first 8 bytes as a millisecond count, printed as
// mockapi prints x-ratelimit-reset-* (GoDuration), parse back to the same
// count; and as a Unix time, printed as mockapi prints
// anthropic-ratelimit-*-reset (Rfc3339, ceiled to the ms), ParseRfc3339Ms
// gives back those milliseconds; the value itself as an RFC 3339 instant is
// finite when parsed. Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "bp/loadgen/http_client.h"
#include "bp/loadgen/retry_policy.h"
#include "internal.h"

namespace {

void CheckDelays(double hint_ms) {
  const bp::loadgen::RetryHint hint{hint_ms};
  for (int retries : {0, 1, 2}) {
    for (auto bound : {bp::loadgen::SdkRetryAfterBound::kInclusive60s,
                       bp::loadgen::SdkRetryAfterBound::kExclusive60s}) {
      const double sdk = bp::loadgen::SdkRetryDelayMs(hint, retries, 0.5, bound);
      if (!std::isfinite(sdk) || sdk < 0) __builtin_trap();
    }
    const double router = bp::loadgen::LitellmRouterDelayMs(hint, retries, 0.5);
    if (!std::isfinite(router) || router < 0) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  if (auto s = bp::loadgen::ParseSeconds(value)) {
    if (!std::isfinite(*s) || *s < 0) __builtin_trap();
    CheckDelays(*s * 1000);  // retry-after
    CheckDelays(*s);         // retry-after-ms
  }
  if (auto ms = bp::loadgen::ParseGoDurationMs(value)) {
    if (!std::isfinite(*ms) || *ms < 0) __builtin_trap();
    CheckDelays(*ms);
  }
  if (auto at = bp::loadgen::ParseRfc3339Ms(value)) {
    if (!std::isfinite(*at)) __builtin_trap();
  }
  if (size >= 8) {
    int64_t raw;
    std::memcpy(&raw, data, sizeof raw);
    // Up to about 31 years of milliseconds: every reset a provider sends.
    const int64_t ms = static_cast<int64_t>(static_cast<uint64_t>(raw) % 1'000'000'000'000);
    const std::string printed = bp::mockapi::internal::GoDuration(ms);
    const auto back = bp::loadgen::ParseGoDurationMs(printed);
    // The fractional seconds (".172s") are decimal, so allow the last bit.
    if (!back || std::fabs(*back - static_cast<double>(ms)) > 1e-9 * static_cast<double>(ms) + 1e-9)
      __builtin_trap();
    // Years 1970 to about 2286 (1e16 us), every instant a provider resets at.
    const int64_t us = static_cast<int64_t>(static_cast<uint64_t>(raw) % 10'000'000'000'000'000);
    const auto instant = bp::loadgen::ParseRfc3339Ms(bp::mockapi::internal::Rfc3339(us));
    if (!instant || *instant != static_cast<double>((us + 999) / 1000)) __builtin_trap();
  }
  return 0;
}
