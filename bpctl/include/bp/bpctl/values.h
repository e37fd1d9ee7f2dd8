// Validation of bpctl's command-line values. Each parser takes the text of one
// value and the name to put in the message, and returns the value or
// InvalidArgument ("--rpm: must be a positive finite number, got '-5'").
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bp/status.h"

namespace bp::bpctl {

// A decimal number (strtod syntax, the whole text) that is finite and > 0.
Result<double> ParsePositive(const std::string& text, const std::string& what);
// The same, >= 0.
Result<double> ParseNonNegative(const std::string& text, const std::string& what);
// A decimal integer in [min, max].
Result<int64_t> ParseInteger(const std::string& text, const std::string& what, int64_t min,
                             int64_t max);
// A tenant id: [A-Za-z0-9_.-], 1-128 bytes (bp::ValidTenantName).
Result<std::string> ParseTenant(const std::string& text, const std::string& what);
// A gate target: the same rule as tenant ids (keys are bp:{target}:...).
Result<std::string> ParseTarget(const std::string& text);
// "0.5,0.3,0.2": omega_1..omega_K, each positive and finite, 1..kMaxClasses.
inline constexpr size_t kMaxClasses = 100;
Result<std::vector<double>> ParsePriorityWeights(const std::string& text);

// "60", "0.5", "1.6666666666666667": the shortest text that reads back as v.
std::string FormatNumber(double v);

}  // namespace bp::bpctl
