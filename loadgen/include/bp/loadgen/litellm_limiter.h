// The LiteLLM proxy's per-virtual-key limiter (docs/providers.md, "LiteLLM
// proxy"; LiteLLM proxy source, litellm/proxy/hooks/parallel_request_limiter_v3.py
// and the older parallel_request_limiter.py), as the litellm baseline's gateway
// uses it. Each key (tenant) has rpm_limit and tpm_limit: a static slice of the
// cap, proportional to w_t * omega_k normalized over the tenants, so the slices
// sum to the cap (paper section VI-A: 3600 RPM, 720 000 TPM in total).
//
// kV3 (the current limiter, the default):
//  - a fixed window of window_us (LITELLM_RATE_LIMIT_WINDOW_SIZE, 60 s) that
//    starts at the key's first request after its previous window expired;
//  - the RPM counter is incremented before the check (over when count > limit),
//    so a rejected request still counts;
//  - over a limit -> an immediate proxy-local 429 with `retry-after: 60`
//    (str(window_size)), whatever is left of the window;
//  - TPM is reserved before the call and corrected to the usage afterwards
//    (which tokens count is the caller's choice: LitellmTokenCount).
// kV1 (the older limiter):
//  - windows are clock minutes (one counter key per date-hour-minute); here
//    multiples of window_us on the run clock;
//  - over when the count already reached the limit (count >= limit); a rejected
//    request does not count; tokens are counted after the response (no
//    reservation), also checked as count >= limit;
//  - the 429's retry-after is the time to the next clock minute (a float in
//    seconds, 30 s on average).
// Time is passed in (run-clock microseconds, real), so tests drive it exactly.
// Not thread-safe: used from the engine's io thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bp/status.h"

namespace bp::loadgen {

enum class LitellmLimiterVersion { kV3, kV1 };
// Which tokens the TPM counter counts: v3's default `token_rate_limit_type` is
// "output" (completion tokens only); "total" counts prompt + completion. v1
// counts total tokens.
enum class LitellmTokenCount { kOutput, kTotal };

struct LitellmOptions {
  LitellmLimiterVersion limiter = LitellmLimiterVersion::kV3;
  LitellmTokenCount tokens = LitellmTokenCount::kOutput;  // v3 only
  // A streamed call's usage (its final chunk) corrects TPM as a plain call's
  // does; false: it is corrected to 0, streamed calls never reaching TPM
  // (the fault of BerriAI/litellm#41610).
  bool count_streamed = true;
};

// "v3" | "v1" and "output" | "total"; InvalidArgument otherwise.
Result<LitellmLimiterVersion> ParseLitellmLimiter(const std::string& s);
Result<LitellmTokenCount> ParseLitellmTokenCount(const std::string& s);

struct LitellmKeyLimits {
  double rpm_limit = 0;  // requests per window (window = 60 s paper)
  double tpm_limit = 0;  // tokens per window; 0 = no TPM limit
};

// Slices of the cap per key: share_t = w_t * omega_k / sum over tenants,
// rpm_t = share_t * requests_per_s * 60, tpm_t = share_t * tokens_per_s * 60.
std::vector<LitellmKeyLimits> LitellmSlices(const std::vector<double>& tenant_weights,
                                            const std::vector<double>& tenant_omegas,
                                            double requests_per_s, double tokens_per_s);

class LitellmLimiter {
 public:
  LitellmLimiter(std::vector<LitellmKeyLimits> keys, int64_t window_us,
                 LitellmLimiterVersion version = LitellmLimiterVersion::kV3);

  enum class Verdict { kPass, kOverRpm, kOverTpm };
  // One incoming request of `key` reserving `reserve_tokens` (v1 ignores it:
  // it reserves nothing). v3: on kPass the reservation is debited; on a reject
  // only the RPM counter moves. v1: a reject moves nothing.
  Verdict Check(int key, int64_t reserve_tokens, int64_t now_us);
  // The retry-after of a 429 answered at now_us, in the same (real) us as the
  // clock: v3 the whole window, v1 the rest of the current clock window.
  int64_t RetryAfterUs(int key, int64_t now_us) const;
  // After the call, at now_us: v3 replaces the reservation by the actual usage
  // (may be 0 when the upstream refused) in the window the reservation was in
  // (window_start_us; nothing if that window is gone); v1 adds actual_tokens to
  // the clock window of now_us.
  void Correct(int key, int64_t reserved_tokens, int64_t actual_tokens, int64_t window_start_us,
               int64_t now_us);
  // Start of the key's current window (for Correct); -1 if none.
  int64_t window_start_us(int key) const { return state_[key].window_start_us; }
  double rpm_used(int key) const { return state_[key].requests; }
  double tpm_used(int key) const { return state_[key].tokens; }

 private:
  struct KeyState {
    int64_t window_start_us = -1;
    double requests = 0;
    double tokens = 0;
  };
  std::vector<LitellmKeyLimits> keys_;
  void Roll(KeyState& s, int64_t now_us) const;

  std::vector<KeyState> state_;
  int64_t window_us_;
  LitellmLimiterVersion version_;
};

}  // namespace bp::loadgen
