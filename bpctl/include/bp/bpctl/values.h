// Validation of bpctl's command-line values. Each parser takes the text of one
// value and the name to put in the message, and returns the value or
// InvalidArgument ("--rpm: must be a positive finite number, got '-5'").
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bp/gate_admin.h"
#include "bp/status.h"

namespace bp::bpctl {

// A decimal number (strtod syntax, the whole text) that is finite and > 0.
Result<double> ParsePositive(const std::string& text, const std::string& what);
// The same, >= 0.
Result<double> ParseNonNegative(const std::string& text, const std::string& what);
// A number as above (positive, or >= 0 when min == 0) that also lies in
// [min, max]; out of range: "--rpm: must be in [0, 1e+09], got '1e300'".
Result<double> ParseInRange(const std::string& text, const std::string& what, double min,
                            double max);

// The ranges bpctl accepts, on the command line and in an import. Beyond
// them the gate's double arithmetic loses its meaning (a weight of 1e300
// makes the quantum sigma / (w_t * omega_k) underflow to 0, a cap of 1e300
// overflows the bucket refill); every real provider limit is far inside.
inline constexpr double kMinRpm = 1e-3;  // requests per minute
inline constexpr double kMaxRpm = 1e9;
inline constexpr double kMaxTpm = 1e12;     // tokens per minute (0 = no token cap)
inline constexpr double kMinBurstS = 1e-3;  // bucket depth, seconds of the cap
inline constexpr double kMaxBurstS = 3600;
inline constexpr double kMinWeight = 1e-6;  // tenant weights and omega_k
inline constexpr double kMaxWeight = 1e6;
// InvalidArgument naming the field ("tenant_weights.acme: must be in
// [1e-06, 1e+06], got 1e+300") when a value of `config` is outside the ranges.
Status CheckRanges(const GateConfig& config);
// A decimal integer in [min, max].
Result<int64_t> ParseInteger(const std::string& text, const std::string& what, int64_t min,
                             int64_t max);
// A tenant id: [A-Za-z0-9_.-], 1-128 bytes (bp::ValidTenantName).
Result<std::string> ParseTenant(const std::string& text, const std::string& what);
// A gate target: the same rule as tenant ids (keys are bp:{target}:...).
Result<std::string> ParseTarget(const std::string& text);
// "0.5,0.3,0.2": omega_1..omega_K, each in [kMinWeight, kMaxWeight], 1..kMaxClasses.
inline constexpr size_t kMaxClasses = 100;
Result<std::vector<double>> ParsePriorityWeights(const std::string& text);

// "60", "0.5", "1.6666666666666667": the shortest text that reads back as v.
std::string FormatNumber(double v);

}  // namespace bp::bpctl
