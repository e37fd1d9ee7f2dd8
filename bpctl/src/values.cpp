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

Result<double> ParseNumberIn(const std::string& text, const std::string& what, const Range& r) {
  const auto v = ReadFinite(text);
  if (!v || !InGateRange(*v, r)) return Bad(what, "a number in " + RangeText(r), text);
  return *v;
}

Result<double> ParseInRange(const std::string& text, const std::string& what, double min,
                            double max) {
  return ParseNumberIn(text, what, Range{min, max});
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
    auto v = ParseInRange(item, what, kMinGateWeight, kMaxGateWeight);
    if (!v.ok()) return v.status();
    out.push_back(*v);
    if (out.size() > kMaxGateClasses) {
      return Status::InvalidArgument("priority weights: at most " +
                                     std::to_string(kMaxGateClasses) + " classes");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace bp::bpctl
