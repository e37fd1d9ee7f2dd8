// A small asynchronous HTTP/1.1 client on Boost.Beast for one upstream
// (host:port on loopback), with a pool of keep-alive connections: each
// request takes an idle connection or opens a new one, and gives it back when
// the answer allows keep-alive. A reused connection that fails before an answer
// (the server closed it while idle) is retried once on a fresh connection.
//
// Threading: all methods and all callbacks run on the io_context's thread
// (the engine runs one). Never blocks. Errors are answers with status 0.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bp/status.h"

namespace bp::loadgen {

struct HttpResponse {
  int status = 0;                        // HTTP status; 0 = connection error or timeout
  std::string error;                     // status 0: what failed
  std::optional<double> retry_after_ms;  // header retry-after-ms (milliseconds)
  std::optional<double> retry_after_s;   // header retry-after (seconds; dates ignored)
  std::optional<bool> should_retry;      // header x-should-retry: true|false
  std::string body;
};

struct HttpEndpoint {
  std::string host = "127.0.0.1";  // IPv4/IPv6 literal or "localhost"
  int port = 8080;
};
// "http://127.0.0.1:8080" or "127.0.0.1:8080" (a trailing "/" is allowed).
Result<HttpEndpoint> ParseHttpUrl(const std::string& url);

struct HttpClientOptions {
  HttpEndpoint endpoint;
  int timeout_ms = 30000;      // per connect, write and read
  int max_connections = 1024;  // beyond this, requests wait for a free one
};

class HttpClient {
 public:
  using Callback = std::function<void(HttpResponse)>;
  HttpClient(boost::asio::io_context& io, HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `method target` with a JSON body (may be empty) and calls `done`
  // exactly once with the answer, unless Shutdown() came first or the
  // io_context is destroyed with the request pending.
  void Request(std::string method, std::string target, std::shared_ptr<const std::string> body,
               Callback done);

  // Closes every connection; pending callbacks are dropped.
  void Shutdown();

  int64_t connections_opened() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Blocking helper for setup steps outside a run (the runner's PUT of the
// upstream config): runs its own io_context until the answer or the timeout.
HttpResponse HttpRequestBlocking(const HttpEndpoint& endpoint, const std::string& method,
                                 const std::string& target, const std::string& body,
                                 int timeout_ms);

}  // namespace bp::loadgen
