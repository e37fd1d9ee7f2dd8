// Validation of bpctl's command-line values. Each parser takes the text of one
// value and the name to put in the message, and returns the value or
// InvalidArgument ("--rpm: must be a positive finite number, got '-5'").
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/gate_config_json.h"
#include "bp/gate_ranges.h"
#include "bp/status.h"

namespace bp::bpctl {

// A plain decimal number (bp::ParseDecimal, decimal.h: digits and one dot, the
// whole text; no sign, exponent, hex, "inf" or "nan") that is > 0.
Result<double> ParsePositive(const std::string& text, const std::string& what);
// The same, >= 0.
Result<double> ParseNonNegative(const std::string& text, const std::string& what);
// An interval of accepted numbers (bp::NumberRange, decimal.h; bp::RangeText
// writes it: "[0.001, 1e+09]", "(0, 1)", "(0, 86400000]").
using Range = NumberRange;
// A number (the syntax above) inside `range`. Every failure names the range:
// "--rpm: must be a number in [0.001, 1e+09], got '1e300'" for 1e300, 0,
// -60, nan, inf or 60x alike.
Result<double> ParseNumberIn(const std::string& text, const std::string& what, const Range& range);
// ParseNumberIn on the closed range [min, max].
Result<double> ParseInRange(const std::string& text, const std::string& what, double min,
                            double max);

// The ranges bpctl accepts, on the command line and in an import, are the
// gate's (bp/gate_ranges.h: kMinGateRpm .. kMaxGateClasses, the one
// definition, shared with loadgen).

// `watch --interval`, seconds: at least one frame per day, at most 20 per
// second (beyond 1e9 s the conversion to a duration would overflow and
// `watch` would flood Valkey).
inline constexpr Range kWatchIntervalRange{0.05, 86400};
// A decimal integer in [min, max].
Result<int64_t> ParseInteger(const std::string& text, const std::string& what, int64_t min,
                             int64_t max);
// A tenant id: [A-Za-z0-9_.-], 1-128 bytes (bp::ValidTenantName).
Result<std::string> ParseTenant(const std::string& text, const std::string& what);
// A gate target: the same rule as tenant ids (keys are bp:{target}:...).
Result<std::string> ParseTarget(const std::string& text);
// "0.5,0.3,0.2": omega_1..omega_K, each in [kMinGateWeight, kMaxGateWeight];
// 1..kMaxGateClasses of them.
Result<std::vector<double>> ParsePriorityWeights(const std::string& text);

}  // namespace bp::bpctl
