// A tiny scripted HTTP upstream for engine tests (a fault injector, not a
// mock provider): each request gets the next scripted answer (status,
// headers, body, service delay); when the script is exhausted every request
// gets `fallback`. Keep-alive, loopback only, one io thread of its own.
// Thread-safe: the script may be read while the server runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace bp::test {

struct ScriptedAnswer {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // empty: an OpenAI-shaped body (usage for 200, error for 429)
  int delay_ms = 0;  // service time before answering (timer, not a sleep)

  static ScriptedAnswer Ok(int delay_ms = 0) { return {200, {}, "", delay_ms}; }
  // A 429 with retry-after-ms (if >= 0) and error.type = bound.
  static ScriptedAnswer Throttle(double retry_after_ms, const std::string& bound = "requests");
};

class ScriptedUpstream {
 public:
  explicit ScriptedUpstream(std::vector<ScriptedAnswer> script,
                            ScriptedAnswer fallback = ScriptedAnswer::Ok());
  ~ScriptedUpstream();
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Arrival times of the requests, ms since the server started.
  std::vector<double> arrivals_ms() const;
  int64_t requests() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace bp::test
