// bp::mockapi::Service - the mock rate-limited upstream as a pure request ->
// response function, with no sockets (the Beast server in server.h feeds it),
// so tests drive it directly on a FakeClock.
//
// Routes (SPEC section 3):
//   POST /v1/chat/completions  OpenAI chat completion, plain or SSE (stream,
//                              stream_options.include_usage); rate limited
//   POST /v1/messages          Anthropic Messages dialect; rate limited
//   GET  /v1/models            the configured model
//   GET  /healthz              "ok"
//   GET  /metrics              Prometheus text format (stats.h lists the counters)
//   GET  /stats                the same counters as JSON
//   GET  /admin/config         the current config (docs/mockapi-config.md)
//   PUT  /admin/config         replace the fields present; 400 and no change on error;
//                              a `limits` field resets the limiter state
// Every /v1/ response carries the rate-limit headers of the configured
// profile (config.h Profile; with the default, the dialect's); a 429 adds, by
// profile, retry-after (s, ceil), retry-after-ms (ms, ceil, exact for the
// limiter state) and x-mockapi-bound (the dimension that bound); the body
// names it too. A share of valid chat calls may be answered 503 / 529 first
// (config.h OverloadOptions). docs/provider-profiles.md has the details.
//
// Thread-safety: Handle() and the rest may be called from any number of
// threads. Config snapshots are immutable and swapped atomically.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bp/clock.h"
#include "bp/mockapi/config.h"
#include "bp/mockapi/http.h"
#include "bp/status.h"

namespace bp::mockapi {

// Connection settings the server reads per request (they follow PUT /admin/config).
struct ConnectionLimits {
  int64_t body_limit_bytes = 0;
  int64_t read_timeout_ms = 0;
  int64_t idle_timeout_ms = 0;
  int64_t stream_tick_us = 0;  // MockConfig::stream_tick_ms
};

class Service {
 public:
  // InvalidArgument if the config does not validate. `clock` must outlive it.
  static Result<std::unique_ptr<Service>> Create(const MockConfig& config, const Clock& clock);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  HttpResponse Handle(const HttpRequest& request);
  // The same answer written into `*response`, which is reset first; its
  // strings and header list keep their capacity, so a server that reuses one
  // HttpResponse per connection allocates less per request.
  void Handle(const HttpRequest& request, HttpResponse* response);

  // A provider-shaped error for failures the server detects before routing
  // (413 body too large, 400 unparseable HTTP). The connection is closed after.
  HttpResponse TransportError(int status, std::string_view target);

  MockConfig config() const;
  // PUT /admin/config semantics; InvalidArgument and no change on error.
  Status UpdateConfig(const nlohmann::json& patch);
  ConnectionLimits connection_limits() const;

 private:
  struct Impl;
  explicit Service(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace bp::mockapi
