// Shared between gate.cpp (admission path) and gate_config.cpp (hot updates,
// state snapshot): the client's private state. Not a public header.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "bp/gate.h"
#include "bp/valkey.h"

namespace bp::lua {
extern const std::string_view kAdmitLua;
extern const std::string_view kReleaseLua;
extern const std::string_view kConfigureLua;
}  // namespace bp::lua

namespace bp {

struct Gate::Impl {
  explicit Impl(GateOptions o)
      : options(std::move(o)),
        prefix("bp:{" + options.target + "}"),
        conn(ValkeyOptions{options.url, options.connect_timeout_ms, options.command_timeout_ms}) {}

  // Connected, or one reconnect attempt if the interval has passed.
  // Caller holds mu.
  Status EnsureConnected(int connect_timeout_ms);
  // Runs one command under mu, connecting first with the connect timeout.
  Result<ValkeyReply> Run(const std::vector<std::string>& args);
  // Runs configure.lua with field/value pairs ("" deletes a field).
  Status Configure(const std::vector<std::string>& pairs);

  const GateOptions options;
  const std::string prefix;  // "bp:{target}"
  std::mutex mu;
  ValkeyConnection conn;                                    // guarded by mu
  std::chrono::steady_clock::time_point last_attempt{};     // guarded by mu
  std::chrono::steady_clock::time_point last_warn{};        // guarded by mu
  bool warned = false;                                      // guarded by mu
  std::atomic<uint64_t> admits{0}, defers{0}, rejects{0}, fail_opens{0};
  std::atomic<uint64_t> releases{0}, release_errors{0};
};

// "%.17g": round-trips a double through Valkey's string storage.
std::string FormatDouble(double v);

}  // namespace bp
