// The HTTP client's parsers of text from outside (http_client.h): the
// upstream URL of a flag and the Go durations of x-ratelimit-reset headers.
#include <boost/asio/ip/address.hpp>
#include <string>
#include <string_view>

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

}  // namespace bp::loadgen
