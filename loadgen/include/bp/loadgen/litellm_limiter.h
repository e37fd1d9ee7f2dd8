// The LiteLLM proxy's per-virtual-key limiter (docs/providers.md, "LiteLLM
// proxy"), as the litellm baseline's gateway uses it:
//  - each key (tenant) has rpm_limit and tpm_limit: a static slice of the cap,
//    proportional to w_t * omega_k normalized over the tenants, so the slices
//    sum to the cap (paper section VI-A: 3600 RPM, 720 000 TPM in total);
//  - a fixed window of window_us that starts at the key's first request after
//    its previous window expired (not clock-aligned);
//  - over a limit -> an immediate proxy-local 429 (retry-after: 60 s); the
//    rejected request still increments the RPM counter;
//  - TPM is reserved before the call (characters/4 + max_tokens) and corrected
//    to the actual usage afterwards.
// Time is passed in (run-clock microseconds, real), so tests drive it exactly.
// Not thread-safe: used from the engine's io thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bp::loadgen {

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
  LitellmLimiter(std::vector<LitellmKeyLimits> keys, int64_t window_us);

  enum class Verdict { kPass, kOverRpm, kOverTpm };
  // One incoming request of `key` reserving `reserve_tokens`. On kPass the
  // reservation is debited; on a reject only the RPM counter moves.
  Verdict Check(int key, int64_t reserve_tokens, int64_t now_us);
  // After the call: replaces the reservation by the actual usage (may be 0
  // when the upstream refused). Applies to the window the reservation was in.
  void Correct(int key, int64_t reserved_tokens, int64_t actual_tokens, int64_t window_start_us);
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
  std::vector<KeyState> state_;
  int64_t window_us_;
};

}  // namespace bp::loadgen
