// Strict decimal numbers (decimal.h): the characters are checked here, then
// std::from_chars converts, so no locale and no strtod extensions apply.
#include "bp/decimal.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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

std::string FormatNumber(double v, int max_digits, Notation notation) {
  if (notation == Notation::kPlain && std::isfinite(v)) {
    std::string text(400, '\0');  // 1e308 has 309 digits
    for (int decimals = 0; decimals <= 340; ++decimals) {
      text.resize(400);
      text.resize(
          static_cast<size_t>(std::snprintf(text.data(), text.size(), "%.*f", decimals, v)));
      if (std::strtod(text.c_str(), nullptr) == v) break;
    }
    return text;
  }
  if (max_digits < 1) max_digits = 1;
  if (max_digits > 17) max_digits = 17;
  char text[32];
  // From six digits up, as "%g" writes them: fewer would print 60 as "6e+01".
  for (int digits = max_digits < 6 ? max_digits : 6; digits <= max_digits; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v) return text;
  }
  return text;  // rounded to max_digits (or nan, which equals nothing)
}

std::string FormatDuration(double s) {
  if (!(s > 0)) s = 0;
  constexpr double kDay = 86400, kYear = 365.25 * kDay;
  char text[48];
  if (s < 120) {
    std::snprintf(text, sizeof text, "%.0f s", s);
  } else if (s < 2 * 3600) {
    std::snprintf(text, sizeof text, "%.1f min", s / 60);
  } else if (s < 2 * kDay) {
    std::snprintf(text, sizeof text, "%.1f h", s / 3600);
  } else if (s < 2 * kYear) {
    std::snprintf(text, sizeof text, "%.1f days", s / kDay);
  } else {
    std::snprintf(text, sizeof text, "%.1f years", s / kYear);
  }
  return text;
}

std::string RangeText(const NumberRange& r, Notation notation) {
  const std::string min = FormatNumber(r.min, 17, notation);
  if (std::isinf(r.max)) return (r.min_open ? "> " : ">= ") + min;
  std::string text(1, r.min_open ? '(' : '[');
  text.append(min).append(", ").append(FormatNumber(r.max, 17, notation));
  text.push_back(r.max_open ? ')' : ']');
  return text;
}

bool InRange(double v, const NumberRange& r) {
  return std::isfinite(v) && (r.min_open ? v > r.min : v >= r.min) &&
         (r.max_open ? v < r.max : v <= r.max);
}

}  // namespace bp
