// Strict decimal numbers for text that comes from outside: command-line flags,
// URLs and HTTP header values. strtod/stod would also take a sign, hex
// ("0x10" is 16), an exponent, "inf"/"nan" and a trailing suffix ("60abc" is
// 60); these take only the digits of a plain decimal number, the whole text.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
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

// The shortest readable form of a number for messages and labels, printf's
// "%g": "20", "0.25", "1e+06", "1e-07".
std::string FormatShort(double v);

}  // namespace bp
