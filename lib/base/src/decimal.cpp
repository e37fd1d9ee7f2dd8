// Strict decimal numbers (decimal.h): the characters are checked here, then
// std::from_chars converts, so no locale and no strtod extensions apply.
#include "bp/decimal.h"

#include <charconv>
#include <cstdio>

namespace bp {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<double> ParseDecimal(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  int digits = 0, dots = 0;
  for (char c : text) {
    if (IsDigit(c)) {
      ++digits;
    } else if (c == '.') {
      ++dots;
    } else {
      return std::nullopt;
    }
  }
  if (digits == 0 || dots > 1) return std::nullopt;
  double v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v, std::chars_format::fixed);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseDecimalInt(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : text) {
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::string FormatShort(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace bp
