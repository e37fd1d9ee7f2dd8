// Strict decimal numbers for text that comes from outside: command-line flags,
// URLs and HTTP header values. strtod/stod would also take a sign, hex
// ("0x10" is 16), an exponent, "inf"/"nan" and a trailing suffix ("60abc" is
// 60); these take only the digits of a plain decimal number, the whole text.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace bp {

// DIGITS ["." DIGITS] (also "5." and ".5"), at most 64 characters, no sign,
// no spaces -> the value, always finite and >= 0; anything else -> nullopt.
std::optional<double> ParseDecimal(std::string_view text);

// DIGITS only, at most 18 of them (so no overflow) -> the value, >= 0;
// anything else ("1.0", "+1", "0x1F90", " 1") -> nullopt.
std::optional<int64_t> ParseDecimalInt(std::string_view text);

// The one number formatter: printf's "%g" at the fewest significant digits,
// from six (or `max_digits` when below) up to `max_digits` (1..17), that reads
// back as v; when even `max_digits` do not, v rounded to them. Default 17: exact, for
// values a user may type back or a script receives ("60", "0.5",
// "1.6666666666666667", "1e-06", "8.64e+07"; "inf", "nan").
// With Notation::kPlain, the fewest decimals (no exponent, `max_digits`
// unused) that read back as v: what ParseDecimal takes, for the ranges and
// values a user types into a flag ("1000000000", "0.000001", "0.001").
enum class Notation { kShortest, kPlain };
std::string FormatNumber(double v, int max_digits = 17, Notation notation = Notation::kShortest);

// A number for labels and progress lines, rounded to six significant digits
// (printf's "%g"): "20", "0.25", "1e+06", "16.6667".
inline std::string FormatShort(double v) { return FormatNumber(v, 6); }

// A duration in seconds as a short text for messages and tables, one unit
// with one decimal once it is past two of the unit below: "12 s" (below
// 2 min, whole seconds), "3.5 min" (below 2 h), "2.0 h" (below 2 days),
// "4.1 days" (below 2 years), "55.9 years" (a year of 365.25 days). A
// negative or NaN `seconds` is written as "0 s".
std::string FormatDuration(double seconds);

// An interval of accepted numbers; an open end refuses the bound itself, an
// infinite end is no bound.
struct NumberRange {
  double min = 0;
  double max = 0;
  bool min_open = false;  // (min, ...
  bool max_open = false;  // ..., max)
};
// Half-open ranges with no upper bound: >= min, and > min.
constexpr NumberRange AtLeast(double min) {
  return {min, std::numeric_limits<double>::infinity()};
}
constexpr NumberRange Above(double min) {
  return {min, std::numeric_limits<double>::infinity(), true};
}
// "[0.001, 1e+09]", "(0, 1)", "(0, 86400000]"; with an infinite max, "> 0" or
// ">= 0".
std::string RangeText(const NumberRange& range, Notation notation = Notation::kShortest);
// Whether v is finite and inside `range`.
bool InRange(double v, const NumberRange& range);

}  // namespace bp
