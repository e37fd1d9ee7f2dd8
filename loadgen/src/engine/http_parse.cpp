// The HTTP client's parsers of text from outside (http_client.h): the
// upstream URL of a flag and the rate-limit headers of an answer (Go
// durations of x-ratelimit-reset-*, RFC 3339 instants of
// anthropic-ratelimit-*-reset).
#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <ctime>
#include <string>
#include <string_view>
#include <tuple>

#include "bp/decimal.h"
#include "bp/loadgen/http_client.h"
#include "bp/loadgen/retry_policy.h"

namespace bp::loadgen {

namespace asio = boost::asio;

Result<HttpEndpoint> ParseHttpUrl(const std::string& url) {
  std::string rest = url;
  if (rest.rfind("http://", 0) == 0) rest = rest.substr(7);
  if (rest.rfind("https://", 0) == 0)
    return Status::InvalidArgument(url + ": https is not supported");
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return Status::InvalidArgument(url + ": expected http://HOST:PORT");
  }
  HttpEndpoint ep;
  ep.host = rest.substr(0, colon);
  if (ep.host.size() > 2 && ep.host.front() == '[' && ep.host.back() == ']') {
    ep.host = ep.host.substr(1, ep.host.size() - 2);
  }
  // Decimal digits only: "0x1F90" or "8080.0" is not port 8080.
  const auto port = ParseDecimalInt(rest.substr(colon + 1));
  if (!port || *port < 1 || *port > 65535) {
    return Status::InvalidArgument(url + ": bad port '" + rest.substr(colon + 1) +
                                   "' (decimal 1-65535)");
  }
  ep.port = static_cast<int>(*port);
  boost::system::error_code ec;
  if (ep.host != "localhost") {
    asio::ip::make_address(ep.host, ec);
    if (ec) return Status::InvalidArgument(url + ": host must be an IP literal or localhost");
  }
  return ep;
}

std::optional<double> ParseGoDurationMs(std::string_view v) {
  if (auto plain = ParseSeconds(v)) {
    if (*plain < 0) return std::nullopt;
    return *plain * 1000;
  }
  if (v.empty()) return std::nullopt;
  double ms = 0;
  size_t i = 0;
  while (i < v.size()) {
    size_t j = i;
    while (j < v.size() && ((v[j] >= '0' && v[j] <= '9') || v[j] == '.')) ++j;
    if (j == i) return std::nullopt;
    auto number = ParseSeconds(v.substr(i, j - i));
    if (!number) return std::nullopt;
    size_t k = j;
    while (k < v.size() && !((v[k] >= '0' && v[k] <= '9') || v[k] == '.')) ++k;
    const std::string_view unit = v.substr(j, k - j);
    double scale = 0;
    if (unit == "h") scale = 3'600'000;
    if (unit == "m") scale = 60'000;
    if (unit == "s") scale = 1000;
    if (unit == "ms") scale = 1;
    if (unit == "us" || unit == "\xc2\xb5s") scale = 0.001;
    if (unit == "ns") scale = 1e-6;
    if (scale == 0) return std::nullopt;
    ms += *number * scale;
    i = k;
  }
  return ms;
}

namespace {

// digits [at, at + n) of v as a number, or -1.
int Digits(std::string_view v, size_t at, size_t n) {
  if (at + n > v.size()) return -1;
  int out = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (v[i] < '0' || v[i] > '9') return -1;
    out = out * 10 + (v[i] - '0');
  }
  return out;
}

}  // namespace

std::optional<double> ParseRfc3339Ms(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  // YYYY-MM-DDTHH:MM:SS
  if (v.size() < 20 || v[4] != '-' || v[7] != '-' || (v[10] != 'T' && v[10] != 't') ||
      v[13] != ':' || v[16] != ':') {
    return std::nullopt;
  }
  const int year = Digits(v, 0, 4), month = Digits(v, 5, 2), day = Digits(v, 8, 2);
  const int hour = Digits(v, 11, 2), minute = Digits(v, 14, 2), second = Digits(v, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 60) {
    return std::nullopt;
  }
  size_t i = 19;
  double fraction_ms = 0;
  if (v[i] == '.') {
    double scale = 100;
    size_t j = i + 1;
    for (; j < v.size() && v[j] >= '0' && v[j] <= '9'; ++j, scale /= 10) {
      fraction_ms += (v[j] - '0') * scale;
    }
    if (j == i + 1) return std::nullopt;
    i = j;
  }
  int offset_min = 0;
  if (i < v.size() && (v[i] == 'Z' || v[i] == 'z') && i + 1 == v.size()) {
    offset_min = 0;
  } else if (i + 6 == v.size() && (v[i] == '+' || v[i] == '-') && v[i + 3] == ':') {
    const int oh = Digits(v, i + 1, 2), om = Digits(v, i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return std::nullopt;
    offset_min = (v[i] == '-' ? -1 : 1) * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = year - 1900, tm.tm_mon = month - 1, tm.tm_mday = day;
  tm.tm_hour = hour, tm.tm_min = minute, tm.tm_sec = second;
  const std::time_t secs = timegm(&tm);
  return (static_cast<double>(secs) - offset_min * 60.0) * 1000 + fraction_ms;
}

RateLimitHeaders ParseRateLimitHeaders(
    const std::function<std::optional<std::string_view>(const char*)>& header, double unix_now_ms) {
  RateLimitHeaders rl;
  for (auto [name, remaining, reset] :
       {std::tuple{"requests", &rl.remaining_requests, &rl.reset_requests_ms},
        std::tuple{"tokens", &rl.remaining_tokens, &rl.reset_tokens_ms}}) {
    auto count = [](std::optional<std::string_view> v) -> std::optional<int64_t> {
      if (!v) return std::nullopt;
      auto n = ParseSeconds(*v);  // a plain decimal number
      if (!n || *n < 0) return std::nullopt;
      return static_cast<int64_t>(*n);
    };
    const std::string d(name);
    *remaining = count(header(("x-ratelimit-remaining-" + d).c_str()));
    if (auto v = header(("x-ratelimit-reset-" + d).c_str())) *reset = ParseGoDurationMs(*v);
    if (!*remaining)
      *remaining = count(header(("anthropic-ratelimit-" + d + "-remaining").c_str()));
    if (!*reset) {
      if (auto v = header(("anthropic-ratelimit-" + d + "-reset").c_str())) {
        if (auto at = ParseRfc3339Ms(*v)) *reset = std::max(0.0, *at - unix_now_ms);
      }
    }
  }
  return rl;
}

}  // namespace bp::loadgen
