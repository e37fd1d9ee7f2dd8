// bpctl value parsers: whole-text numbers by the strict decimal parser
// (bp/decimal.h), the gate's name rule.
#include "bp/bpctl/values.h"

#include <algorithm>
#include <optional>

#include "bp/decimal.h"
#include "bp/gate.h"
#include "bp/json_fields.h"

namespace bp::bpctl {
namespace {

Status Bad(const std::string& what, const std::string& rule, const std::string& text) {
  return Status::InvalidArgument(what + ": must be " + rule + ", got '" + text + "'");
}

}  // namespace

Result<double> ParsePositive(const std::string& text, const std::string& what) {
  const auto v = ParseDecimal(text);
  if (!v || *v <= 0) return Bad(what, "a positive finite number", text);
  return *v;
}

Result<double> ParseNonNegative(const std::string& text, const std::string& what) {
  const auto v = ParseDecimal(text);
  if (!v || *v < 0) return Bad(what, "a finite number >= 0", text);
  return *v;
}

Result<double> ParseNumberIn(const std::string& text, const std::string& what, const Range& r) {
  const auto v = ParseDecimal(text);
  if (!v || !InRange(*v, r))
    return Bad(what, "a number in " + RangeText(r, Notation::kPlain), text);
  return *v;
}

Result<double> ParseInRange(const std::string& text, const std::string& what, double min,
                            double max) {
  return ParseNumberIn(text, what, Range{min, max});
}

Result<int64_t> ParseInteger(const std::string& text, const std::string& what, int64_t min,
                             int64_t max) {
  const auto v = ParseDecimalInt(text);
  if (!v || *v < min || *v > max) {
    return Bad(what, IntRangeText(min, max).substr(sizeof "must be " - 1), text);
  }
  return *v;
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
      const size_t given = static_cast<size_t>(std::count(text.begin(), text.end(), ',')) + 1;
      return Status::InvalidArgument("priority weights: at most " +
                                     std::to_string(kMaxGateClasses) + " classes, got " +
                                     std::to_string(given));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace bp::bpctl
