// LiteLLM per-key RPM/TPM limiter (litellm_limiter.h).
#include "bp/loadgen/litellm_limiter.h"

namespace bp::loadgen {

std::vector<LitellmKeyLimits> LitellmSlices(const std::vector<double>& tenant_weights,
                                            const std::vector<double>& tenant_omegas,
                                            double requests_per_s, double tokens_per_s) {
  double total = 0;
  for (size_t i = 0; i < tenant_weights.size(); ++i) total += tenant_weights[i] * tenant_omegas[i];
  std::vector<LitellmKeyLimits> out(tenant_weights.size());
  if (total <= 0) return out;
  for (size_t i = 0; i < out.size(); ++i) {
    double share = tenant_weights[i] * tenant_omegas[i] / total;
    out[i].rpm_limit = share * requests_per_s * 60.0;
    out[i].tpm_limit = share * tokens_per_s * 60.0;
  }
  return out;
}

Result<LitellmLimiterVersion> ParseLitellmLimiter(const std::string& s) {
  if (s == "v3") return LitellmLimiterVersion::kV3;
  if (s == "v1") return LitellmLimiterVersion::kV1;
  return Status::InvalidArgument("litellm limiter must be v3 or v1, got \"" + s + "\"");
}

Result<LitellmTokenCount> ParseLitellmTokenCount(const std::string& s) {
  if (s == "output") return LitellmTokenCount::kOutput;
  if (s == "total") return LitellmTokenCount::kTotal;
  return Status::InvalidArgument("litellm token count must be output or total, got \"" + s + "\"");
}

LitellmLimiter::LitellmLimiter(std::vector<LitellmKeyLimits> keys, int64_t window_us,
                               LitellmLimiterVersion version)
    : keys_(std::move(keys)), state_(keys_.size()), window_us_(window_us), version_(version) {}

void LitellmLimiter::Roll(KeyState& s, int64_t now_us) const {
  if (version_ == LitellmLimiterVersion::kV1) {
    int64_t start = now_us - (now_us % window_us_);  // the clock window of now
    if (s.window_start_us != start) s = KeyState{start, 0, 0};
    return;
  }
  if (s.window_start_us < 0 || now_us >= s.window_start_us + window_us_) {
    s = KeyState{now_us, 0, 0};  // first request after expiry opens a window
  }
}

LitellmLimiter::Verdict LitellmLimiter::Check(int key, int64_t reserve_tokens, int64_t now_us) {
  KeyState& s = state_[key];
  const LitellmKeyLimits& lim = keys_[key];
  Roll(s, now_us);
  if (version_ == LitellmLimiterVersion::kV1) {
    // Checked before counting; usage is counted after the response.
    if (s.requests >= lim.rpm_limit) return Verdict::kOverRpm;
    if (lim.tpm_limit > 0 && s.tokens >= lim.tpm_limit) return Verdict::kOverTpm;
    s.requests += 1;
    return Verdict::kPass;
  }
  // The request is counted whether or not it passes (rejected requests burn RPM).
  s.requests += 1;
  if (s.requests > lim.rpm_limit) return Verdict::kOverRpm;
  if (lim.tpm_limit > 0 && s.tokens + static_cast<double>(reserve_tokens) > lim.tpm_limit) {
    return Verdict::kOverTpm;
  }
  s.tokens += static_cast<double>(reserve_tokens);
  return Verdict::kPass;
}

int64_t LitellmLimiter::RetryAfterUs(int key, int64_t now_us) const {
  if (version_ == LitellmLimiterVersion::kV3) return window_us_;  // str(window_size)
  (void)key;
  return window_us_ - (now_us % window_us_);  // to the next clock window
}

void LitellmLimiter::Correct(int key, int64_t reserved_tokens, int64_t actual_tokens,
                             int64_t window_start_us, int64_t now_us) {
  KeyState& s = state_[key];
  if (version_ == LitellmLimiterVersion::kV1) {
    Roll(s, now_us);
    s.tokens += static_cast<double>(actual_tokens);
    return;
  }
  if (s.window_start_us != window_start_us) return;  // that window is gone
  s.tokens += static_cast<double>(actual_tokens - reserved_tokens);
  if (s.tokens < 0) s.tokens = 0;
}

}  // namespace bp::loadgen
