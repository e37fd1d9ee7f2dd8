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
#include <string_view>

#include "bp/loadgen/sse_reader.h"
#include "bp/status.h"

namespace bp::loadgen {

// The rate-limit headers of an answer (docs/providers.md, docs/mockapi.md),
// what the adaptive caps' header rule reads: per dimension the remaining
// budget (a count) and the time until it is fully restored, real
// milliseconds. OpenAI: x-ratelimit-remaining-{requests,tokens} and
// x-ratelimit-reset-{requests,tokens} (a Go duration such as "19.75s",
// "750ms", "6m0s"); Anthropic: anthropic-ratelimit-{requests,tokens}-remaining
// and -reset (an RFC 3339 instant of full replenishment, minus the wall clock
// when the request was sent; one in the past reads 0). Where both dialects
// name a dimension, OpenAI's wins.
//
// Both resets are taken as of the moment the provider counted the call,
// which is when the remaining count was read too: OpenAI's duration is
// computed there, and HttpClient reads an instant against the request's
// send (the nearest moment the client knows before that count). Read
// against the answer's arrival instead, an instant would pair the budget
// left at the count with the time left after the call's service time, and
// R / T would overstate the rate left (at a 1 s window with 50-150 ms
// calls, by 10-30 % in the middle of the window and more near its end).
struct RateLimitHeaders {
  std::optional<int64_t> remaining_requests, remaining_tokens;
  std::optional<double> reset_requests_ms, reset_tokens_ms;
};

// A Go duration ("1h2m3.5s", "750ms", "20us", "0s") or a plain number of
// seconds, in milliseconds; nullopt if malformed or negative.
std::optional<double> ParseGoDurationMs(std::string_view value);

// An RFC 3339 instant ("2026-12-03T08:30:00.250Z", "...+01:00"; fraction
// and offset optional only as the RFC allows: 'Z' or +-HH:MM required) in
// Unix milliseconds; nullopt if malformed.
std::optional<double> ParseRfc3339Ms(std::string_view value);

// The rate-limit headers of an answer, read through `header` (a name in
// lower case -> its value, nullopt when absent), with `unix_now_ms` the
// wall clock Anthropic's reset instants are read against (HttpClient passes
// the request's send time, above). A malformed or negative value reads as
// absent. Pure: the conformance cases tests/conformance/headers.json hold
// it and the Python and Node clients' parsers to the same answers.
RateLimitHeaders ParseRateLimitHeaders(
    const std::function<std::optional<std::string_view>(const char*)>& header, double unix_now_ms);

struct HttpResponse {
  int status = 0;                        // HTTP status; 0 = connection error or timeout
  std::string error;                     // status 0: what failed
  std::optional<double> retry_after_ms;  // header retry-after-ms (milliseconds)
  std::optional<double> retry_after_s;   // header retry-after (seconds; dates ignored)
  std::optional<bool> should_retry;      // header x-should-retry: true|false
  RateLimitHeaders ratelimit;            // x-ratelimit-remaining-* / reset-*
  std::string body;  // a chunked event stream's events are not kept here
  // A streamed request (RequestStream::stream) answered 200 with
  // text/event-stream: what its events delivered, times from
  // HttpClientOptions::now_us. `cancelled`: the client disconnected after
  // RequestStream::cancel_after_events token events (status stays 200).
  bool streamed = false;
  bool cancelled = false;
  StreamStats stream;
};

// How a request reads its answer. A streamed answer's chunked body goes
// through a StreamReader as it arrives (Beast's parser with an on_chunk_body
// callback: the body is never buffered whole); reading stops at the end of
// the chunked body, which follows "data: [DONE]".
struct RequestStream {
  bool stream = false;
  // > 0: disconnect once this many token events arrived (a stream cut short
  // by its caller); the connection is closed, not reused.
  int64_t cancel_after_events = 0;
};

struct HttpEndpoint {
  std::string host = "127.0.0.1";  // IPv4/IPv6 literal or "localhost"
  int port = 8080;
};
// "http://127.0.0.1:8080" or "127.0.0.1:8080" (a trailing "/" is allowed).
// The port is decimal digits in [1, 65535] ("0x1F90" is an error, not 8080);
// kInvalidArgument "URL: bad port '...'" otherwise.
Result<HttpEndpoint> ParseHttpUrl(const std::string& url);

struct HttpClientOptions {
  HttpEndpoint endpoint;
  int timeout_ms = 30000;      // per connect, write and read
  int max_connections = 1024;  // beyond this, requests wait for a free one
  // The clock of a stream's event times (StreamStats), microseconds;
  // empty: the steady clock. Called on the io thread.
  std::function<int64_t()> now_us;
  // The wall clock, Unix milliseconds, read as each request is written
  // (Anthropic's reset instants are read against it, RateLimitHeaders);
  // empty: std::chrono::system_clock. Called on the io thread.
  std::function<double()> unix_now_ms;
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
  // `stream`: read a text/event-stream answer incrementally (RequestStream).
  void Request(std::string method, std::string target, std::shared_ptr<const std::string> body,
               Callback done, RequestStream stream = {});

  // Closes every connection; pending callbacks are dropped.
  void Shutdown();

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
