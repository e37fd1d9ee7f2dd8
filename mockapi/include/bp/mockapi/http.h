// bp::mockapi::HttpRequest / HttpResponse - what the Beast server
// (server.h) hands to Service::Handle (service.h) and writes back: the
// parts of an HTTP exchange the mock upstream reads and sets, with no
// sockets, so tests and fuzz targets build requests directly.
//
// Lifetimes: a request's views point into the server's buffer and live for
// one Handle call. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bp::mockapi {

struct HttpRequest {
  std::string_view method;         // "GET", "POST", ...
  std::string_view target;         // path and optional query
  std::string_view authorization;  // Authorization header ("Bearer KEY") or empty
  std::string_view api_key;        // x-api-key header (Anthropic) or empty
  std::string_view body;
};

struct HttpResponse {
  int status = 200;
  const char* content_type = "application/json";
  // Names are static strings; values are owned.
  std::vector<std::pair<const char*, std::string>> headers;
  std::string body;
  int64_t delay_us = 0;  // simulated service time: answer after this long
  // > 0 for a paced event stream: after delay_us the body's first server-sent
  // event (each ends in a blank line) is written, and event k is due k times
  // this many microseconds later (chunked transfer encoding). Events are
  // written at the server's stream ticks (MockConfig::stream_tick_ms): one
  // chunk per write, holding every event due by then.
  int64_t stream_interval_us = 0;
  // A paced stream's client went away: called once, on the connection's
  // thread, with the events written before the write that failed (the
  // first event counted as 1). Empty: nothing to do.
  std::function<void(int64_t events_written)> on_stream_cut;
  bool close = false;  // close the connection after answering
};

}  // namespace bp::mockapi
