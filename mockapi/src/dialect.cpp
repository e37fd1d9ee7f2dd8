// Provider dialects: rate-limit headers, 429 bodies and error shapes of
// OpenAI, Anthropic and Azure OpenAI, as collected in docs/providers.md.
#include <cmath>
#include <ctime>

#include "internal.h"

namespace bp::mockapi::internal {
namespace {

// "min" / "sec" / "hour" / "day" or a Go duration, and its abbreviation letter.
void Period(double window_s, std::string* name, char* letter) {
  if (window_s == 60) {
    *name = "min";
    *letter = 'M';
    return;
  }
  if (window_s == 1) {
    *name = "sec";
    *letter = 'S';
    return;
  }
  if (window_s == 3600) {
    *name = "hour";
    *letter = 'H';
    return;
  }
  if (window_s == 86400) {
    *name = "day";
    *letter = 'D';
    return;
  }
  *name = GoDuration(static_cast<int64_t>(std::llround(window_s * 1000)));
  *letter = 'W';
}

// "tokens per min (TPM)", "requests per sec (RPS)", "input tokens per min (ITPM)".
std::string LimitPhrase(const LimiterOptions& o) {
  // A quantized limit is enforced per quantum: name that window.
  const bool quantized = o.algorithm == LimiterAlgorithm::kQuantized;
  std::string period;
  char letter = 'M';
  Period(quantized ? o.quantum_s : o.window_s, &period, &letter);
  switch (o.dimension) {
    case Dimension::kRequests:
      return "requests per " + period + " (RP" + letter + ")";
    case Dimension::kTokens:
      return "tokens per " + period + " (TP" + letter + ")";
    case Dimension::kInputTokens:
      return "input tokens per " + period + " (ITP" + letter + ")";
    case Dimension::kOutputTokens:
      return "output tokens per " + period + " (OTP" + letter + ")";
  }
  return "requests";
}

}  // namespace

std::string RequestId(uint64_t id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "req_mock0000000000000000";
  for (size_t i = out.size() - 1; id != 0; --i, id >>= 4) out[i] = kHex[id & 0xf];
  return out;
}

std::string GoDuration(int64_t ms) {
  if (ms <= 0) return "0s";
  if (ms < 1000) return std::to_string(ms) + "ms";
  std::string out;
  const int64_t h = ms / 3'600'000, m = ms / 60'000 % 60, s = ms / 1000 % 60, frac = ms % 1000;
  if (h > 0) out += std::to_string(h) + "h";
  if (h > 0 || m > 0) out += std::to_string(m) + "m";
  out += std::to_string(s);
  if (frac > 0) {
    char buf[8];
    std::snprintf(buf, sizeof buf, ".%03d", static_cast<int>(frac));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "s";
}

std::string Rfc3339(int64_t unix_us) {
  const int64_t ms = CeilMs(unix_us);
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (ms % 1000 != 0)
    n += std::snprintf(buf + n, sizeof buf - n, ".%03d", static_cast<int>(ms % 1000));
  return std::string(buf, n) + "Z";
}

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(ch);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out->append(buf);
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('"');
}

void SetError(Dialect dialect, int status, ErrorKind kind, std::string_view message,
              std::string_view param, uint64_t request_id, HttpResponse* r) {
  r->status = status;
  r->content_type = "application/json";
  std::string& b = r->body;
  b.clear();
  if (dialect == Dialect::kAnthropic) {
    const char* type = "invalid_request_error";
    if (kind == ErrorKind::kNotFound) type = "not_found_error";
    if (kind == ErrorKind::kTooLarge) type = "request_too_large";
    if (kind == ErrorKind::kInternal) type = "api_error";
    b = "{\"type\":\"error\",\"error\":{\"type\":\"";
    b += type;
    b += "\",\"message\":";
    AppendJsonString(&b, message);
    b += "},\"request_id\":\"" + RequestId(request_id) + "\"}";
    r->headers.emplace_back("request-id", RequestId(request_id));
    return;
  }
  if (dialect == Dialect::kAzure) {
    b = "{\"error\":{\"code\":\"" + std::to_string(status) + "\",\"message\":";
    AppendJsonString(&b, message);
    b += "}}";
    return;
  }
  b = "{\"error\":{\"message\":";
  AppendJsonString(&b, message);
  b += kind == ErrorKind::kInternal ? ",\"type\":\"server_error\""
                                    : ",\"type\":\"invalid_request_error\"";
  b += ",\"param\":";
  if (param.empty()) {
    b += "null";
  } else {
    AppendJsonString(&b, param);
  }
  b += kind == ErrorKind::kNotFound ? ",\"code\":\"unknown_url\"}}" : ",\"code\":null}}";
}

void AddRateLimitHeaders(Dialect path_dialect, Profile profile,
                         const std::vector<LimiterState>& states, int64_t now_us, HttpResponse* r) {
  if (profile == Profile::kBare) return;
  const Dialect dialect = ReportingDialect(path_dialect, profile);
  // OpenAI and Azure name requests and tokens only; Anthropic all four.
  static const char* kOpenAI[2][3] = {
      {"x-ratelimit-limit-requests", "x-ratelimit-remaining-requests",
       "x-ratelimit-reset-requests"},
      {"x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"}};
  static const char* kAnthropic[4][3] = {
      {"anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
       "anthropic-ratelimit-requests-reset"},
      {"anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining",
       "anthropic-ratelimit-tokens-reset"},
      {"anthropic-ratelimit-input-tokens-limit", "anthropic-ratelimit-input-tokens-remaining",
       "anthropic-ratelimit-input-tokens-reset"},
      {"anthropic-ratelimit-output-tokens-limit", "anthropic-ratelimit-output-tokens-remaining",
       "anthropic-ratelimit-output-tokens-reset"}};
  const bool anthropic = dialect == Dialect::kAnthropic;
  const int dims = anthropic ? 4 : 2;
  for (int d = 0; d < dims; ++d) {
    const LimiterState* tightest = nullptr;
    for (const LimiterState& s : states) {
      if (static_cast<int>(s.dimension) != d) continue;
      if (tightest == nullptr || s.remaining < tightest->remaining) tightest = &s;
    }
    if (tightest == nullptr) continue;
    const char* const* names = anthropic ? kAnthropic[d] : kOpenAI[d];
    if (profile == Profile::kAzure) {  // Azure: remaining only, no limit or reset
      r->headers.emplace_back(names[1], std::to_string(tightest->remaining));
      continue;
    }
    r->headers.emplace_back(names[0], std::to_string(tightest->limit));
    r->headers.emplace_back(names[1], std::to_string(tightest->remaining));
    r->headers.emplace_back(names[2], anthropic ? Rfc3339(now_us + tightest->reset_us)
                                                : GoDuration(CeilMs(tightest->reset_us)));
  }
}

void SetRateLimited(Dialect path_dialect, Profile profile, const Rejection& x, HttpResponse* r) {
  const Dialect dialect = ReportingDialect(path_dialect, profile);
  const LimiterDecision& d = *x.decision;
  const LimiterOptions& o = *x.binding;
  const LimiterState& state = d.states[d.binding];
  const int64_t retry_ms = CeilMs(d.retry_after_us);
  const std::string bound = DimensionName(o.dimension);
  r->status = 429;
  if (profile != Profile::kBare) {  // bare: the wait is only in the message
    r->headers.emplace_back("x-mockapi-bound", bound);
    if (d.never_fits) {
      r->headers.emplace_back("x-should-retry", "false");  // it can never pass
    } else {
      r->headers.emplace_back("retry-after", std::to_string((retry_ms + 999) / 1000));
      if (profile != Profile::kAnthropic)  // Anthropic documents retry-after only
        r->headers.emplace_back("retry-after-ms", std::to_string(retry_ms));
    }
  }
  const std::string phrase = LimitPhrase(o);
  const std::string limit = std::to_string(state.capacity);
  const std::string requested = std::to_string(x.requested);
  std::string message;
  std::string& b = r->body;
  if (dialect == Dialect::kAnthropic) {
    message = d.never_fits
                  ? "Request too large: it needs " + requested + " " + bound +
                        ", above your organization's rate limit of " + limit + " " + phrase + "."
                  : "This request would exceed your organization's rate limit of " + limit + " " +
                        phrase + " (used " + std::to_string(d.used) + ", requested " + requested +
                        "). Please try again in " + GoDuration(retry_ms) + ".";
    b = "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":";
    AppendJsonString(&b, message);
    b += ",\"dimension\":\"" + bound + "\"},\"request_id\":\"" + RequestId(x.request_id) + "\"}";
    r->headers.emplace_back("request-id", RequestId(x.request_id));
    return;
  }
  const bool requests = o.dimension == Dimension::kRequests;
  if (dialect == Dialect::kAzure) {
    message = d.never_fits
                  ? "Requests to the ChatCompletions_Create Operation under Azure OpenAI API "
                    "version 2024-10-21 need " +
                        requested + " " + bound + ", above the " + (requests ? "call" : "token") +
                        " rate limit of " + limit + " " + phrase + " of your current pricing tier."
                  : "Requests to the ChatCompletions_Create Operation under Azure OpenAI API "
                    "version 2024-10-21 have exceeded " +
                        std::string(requests ? "call" : "token") +
                        " rate limit of your current pricing tier (" + limit + " " + phrase +
                        "). Please retry after " + std::to_string((retry_ms + 999) / 1000) +
                        " seconds.";
    b = "{\"error\":{\"code\":\"429\",\"message\":";
    AppendJsonString(&b, message);
    b += ",\"dimension\":\"" + bound + "\"}}";
    return;
  }
  message = d.never_fits
                ? "Request too large for " + std::string(x.model) + " in organization " +
                      std::string(x.organization) + " on " + phrase + ": Limit " + limit +
                      ", Requested " + requested +
                      ". The input or output tokens must be reduced in order to run successfully."
                : "Rate limit reached for " + std::string(x.model) + " in organization " +
                      std::string(x.organization) + " on " + phrase + ": Limit " + limit +
                      ", Used " + std::to_string(d.used) + ", Requested " + requested +
                      ". Please try again in " + GoDuration(retry_ms) + ".";
  b = "{\"error\":{\"message\":";
  AppendJsonString(&b, message);
  b += requests ? ",\"type\":\"requests\"" : ",\"type\":\"tokens\"";
  b += ",\"param\":null,\"code\":\"rate_limit_exceeded\",\"dimension\":\"" + bound + "\"}}";
}

}  // namespace bp::mockapi::internal
