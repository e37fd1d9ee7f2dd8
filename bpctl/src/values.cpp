// bpctl value parsers: whole-text numbers via strtod/strtoll, the gate's name
// rule, and the shortest round-trip formatting of doubles.
#include "bp/bpctl/values.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <tuple>

#include "bp/gate.h"

namespace bp::bpctl {
namespace {

Status Bad(const std::string& what, const std::string& rule, const std::string& text) {
  return Status::InvalidArgument(what + ": must be " + rule + ", got '" + text + "'");
}

// The whole text as a finite double; nullopt on syntax, inf or nan.
std::optional<double> ReadFinite(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  // Decimal only: strtod would also take hex ("0x10") and "infinity".
  if (text.find_first_not_of("0123456789+-.eE") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool InRange(double v, const Range& r) {
  return std::isfinite(v) && (r.min_open ? v > r.min : v >= r.min) &&
         (r.max_open ? v < r.max : v <= r.max);
}

}  // namespace

Result<double> ParsePositive(const std::string& text, const std::string& what) {
  const auto v = ReadFinite(text);
  if (!v || *v <= 0) return Bad(what, "a positive finite number", text);
  return *v;
}

Result<double> ParseNonNegative(const std::string& text, const std::string& what) {
  const auto v = ReadFinite(text);
  if (!v || *v < 0) return Bad(what, "a finite number >= 0", text);
  return *v;
}

std::string RangeText(const Range& r) {
  std::string text(1, r.min_open ? '(' : '[');
  text.append(FormatNumber(r.min)).append(", ").append(FormatNumber(r.max));
  text.push_back(r.max_open ? ')' : ']');
  return text;
}

Result<double> ParseNumberIn(const std::string& text, const std::string& what, const Range& r) {
  const auto v = ReadFinite(text);
  if (!v || !InRange(*v, r)) return Bad(what, "a number in " + RangeText(r), text);
  return *v;
}

Result<double> ParseInRange(const std::string& text, const std::string& what, double min,
                            double max) {
  return ParseNumberIn(text, what, Range{min, max});
}

Status CheckRanges(const GateConfig& c) {
  auto check = [](const std::string& field, double v, double min, double max,
                  const std::string& note = "") {
    if (v >= min && v <= max) return Status::Ok();
    return Status::InvalidArgument(field + ": must be in [" + FormatNumber(min) + ", " +
                                   FormatNumber(max) + "]" + note + ", got " + FormatNumber(v));
  };
  if (c.configured) {
    for (Status s :
         {check("caps.requests_per_s", c.caps.requests_per_s, kMinRpm / 60, kMaxRpm / 60,
                " (0.001 to 1e9 rpm)"),
          check("caps.tokens_per_s", c.caps.tokens_per_s, 0, kMaxTpm / 60, " (0 to 1e12 tpm)"),
          check("caps.burst_s", c.caps.burst_s, kMinBurstS, kMaxBurstS),
          // The ranges of `set cap --max-cost-requests / --max-cost-tokens`.
          check("caps.max_cost_requests", c.caps.max_cost_requests, 0, kMaxCostRequests),
          check("caps.max_cost_tokens", c.caps.max_cost_tokens, 0, kMaxCostTokens)}) {
      if (!s.ok()) return s;
    }
  }
  if (c.omega.size() > kMaxClasses) {
    return Status::InvalidArgument("priority_weights: at most " + std::to_string(kMaxClasses) +
                                   " classes, got " + std::to_string(c.omega.size()));
  }
  for (size_t k = 0; k < c.omega.size(); ++k) {
    Status s =
        check("priority_weights[" + std::to_string(k) + "]", c.omega[k], kMinWeight, kMaxWeight);
    if (!s.ok()) return s;
  }
  for (const auto& [tenant, w] : c.tenant_weights) {
    if (Status s = check("tenant_weights." + tenant, w, kMinWeight, kMaxWeight); !s.ok()) return s;
  }
  const GateTuning& t = c.tuning;
  for (auto [field, v, range] :
       {std::tuple{"tuning.adapt_beta", t.adapt_beta, kAdaptBetaRange},
        std::tuple{"tuning.adapt_recover_ms", t.adapt_recover_ms, kAdaptRecoverMsRange},
        std::tuple{"tuning.adapt_window_ms", t.adapt_window_ms, kAdaptWindowMsRange}}) {
    if (!InRange(v, range)) {
      return Status::InvalidArgument(std::string(field) + ": must be in " + RangeText(range) +
                                     ", got " + FormatNumber(v));
    }
  }
  if (t.adapt_min_429 < 1 || t.adapt_min_429 > kMaxAdaptMin429) {
    return Status::InvalidArgument("tuning.adapt_min_429: must be an integer in [1, " +
                                   std::to_string(kMaxAdaptMin429) + "], got " +
                                   std::to_string(t.adapt_min_429));
  }
  return Status::Ok();
}

Result<int64_t> ParseInteger(const std::string& text, const std::string& what, int64_t min,
                             int64_t max) {
  const std::string rule =
      "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) {
    return Bad(what, rule, text);
  }
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE || v < min || v > max) return Bad(what, rule, text);
  return static_cast<int64_t>(v);
}

Result<std::string> ParseTenant(const std::string& text, const std::string& what) {
  if (!ValidTenantName(text)) return Bad(what, "1-128 bytes of [A-Za-z0-9_.-]", text);
  return text;
}

Result<std::string> ParseTarget(const std::string& text) { return ParseTenant(text, "--target"); }

Result<std::vector<double>> ParsePriorityWeights(const std::string& text) {
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma - start);
    const std::string what = "priority weight omega_" + std::to_string(out.size() + 1);
    auto v = ParseInRange(item, what, kMinWeight, kMaxWeight);
    if (!v.ok()) return v.status();
    out.push_back(*v);
    if (out.size() > kMaxClasses) {
      return Status::InvalidArgument("priority weights: at most " + std::to_string(kMaxClasses) +
                                     " classes");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string FormatNumber(double v) {
  char buf[32];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace bp::bpctl
