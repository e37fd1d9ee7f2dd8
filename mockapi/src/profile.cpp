// Provider profiles (docs/provider-profiles.md): which dialect reports the
// limits, and the overload answers (503, or Anthropic's 529 overloaded_error).
#include <cmath>

#include "internal.h"

namespace bp::mockapi::internal {
namespace {

// splitmix64 finalizer, as the service's per-call draws.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Dialect ReportingDialect(Dialect dialect, Profile profile) {
  if (profile == Profile::kAzure) return Dialect::kAzure;
  if (profile == Profile::kAnthropic) return Dialect::kAnthropic;
  return dialect;
}

bool Overloaded(const OverloadOptions& o, uint64_t seed, uint64_t n) {
  if (o.share <= 0) return false;
  if (o.share >= 1) return true;
  // u in [0, 1) from the seed (a salt keeps it apart from the per-call draws).
  const double u = static_cast<double>(Mix(seed ^ 0x6f7665726c6f6164ULL) >> 11) * 0x1.0p-53;
  const double x = static_cast<double>(n);
  return std::floor((x + 1) * o.share + u) > std::floor(x * o.share + u);
}

void SetOverloaded(Dialect path_dialect, Profile profile, const OverloadOptions& o,
                   uint64_t request_id, HttpResponse* r) {
  const Dialect dialect = ReportingDialect(path_dialect, profile);
  r->status = o.status;
  r->content_type = "application/json";
  if (o.retry_after_ms > 0) {
    const auto ms = static_cast<int64_t>(std::ceil(o.retry_after_ms));
    r->headers.emplace_back("retry-after", std::to_string((ms + 999) / 1000));
    if (profile != Profile::kAnthropic)
      r->headers.emplace_back("retry-after-ms", std::to_string(ms));
  }
  std::string& b = r->body;
  if (dialect == Dialect::kAnthropic) {
    // docs.claude.com/en/api/errors: 529 overloaded_error; "Overloaded" as the API sends it.
    b = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},"
        "\"request_id\":\"" +
        RequestId(request_id) + "\"}";
    r->headers.emplace_back("request-id", RequestId(request_id));
    return;
  }
  if (dialect == Dialect::kAzure) {
    b = "{\"error\":{\"code\":\"" + std::to_string(o.status) +
        "\",\"message\":\"The service is temporarily overloaded. Please try again later.\"}}";
    return;
  }
  // OpenAI's error-code guide: "503 - The engine is currently overloaded, please try again later".
  b = "{\"error\":{\"message\":\"The engine is currently overloaded, please try again later.\","
      "\"type\":\"server_error\",\"param\":null,\"code\":null}}";
}

}  // namespace bp::mockapi::internal
