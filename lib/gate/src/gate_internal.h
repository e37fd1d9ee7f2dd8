// Shared between gate.cpp (admission path) and gate_config.cpp (hot updates,
// state snapshot): the client's private state. Not a public header.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bp/gate.h"
#include "bp/valkey.h"

namespace bp::lua {
extern const std::string_view kAdmitLua;
extern const std::string_view kReleaseLua;
extern const std::string_view kConfigureLua;
extern const std::string_view kResetBucketsLua;
extern const std::string_view kStateLua;
}  // namespace bp::lua

namespace bp {

struct Gate::Impl {
  explicit Impl(GateOptions o)
      : options(std::move(o)),
        prefix("bp:{" + options.target + "}"),
        state_key(prefix + ":state"),
        conn(ValkeyOptions{options.url, options.connect_timeout_ms, options.command_timeout_ms},
             prefix) {}  // route key: a cluster sends every call to {target}'s slot

  // Connected, or one reconnect attempt if the interval has passed.
  // Caller holds mu.
  Status EnsureConnected(int connect_timeout_ms);
  // Tools and hot updates: connects now if disconnected, ignoring the
  // reconnect interval, with the connect timeout. Caller holds mu.
  Status ConnectForTool();
  // Runs one command under mu, connecting first (ConnectForTool).
  Result<ValkeyReply> Run(const std::vector<std::string>& args);
  // Runs a script with KEYS[1] = state_key under mu, connecting first.
  Result<ValkeyReply> Eval(std::string_view body, const std::vector<std::string>& args);
  // Runs configure.lua in mode "set" or "replace" with field/value pairs
  // ("" deletes a field).
  Status Configure(const char* mode, const std::vector<std::string>& pairs);
  // Runs state.lua with `args` ("config", or "state" and the ablation) and
  // returns its named fields.
  Result<std::map<std::string, ValkeyReply>> ReadState(const std::vector<std::string>& args);
  // SCAN-deletes the target's keys "<prefix>:<suffix_glob>" (the prefix is
  // glob-escaped) for which `drop(key)` is true.
  Status DeleteMatching(const std::string& suffix_glob,
                        const std::function<bool(const std::string&)>& drop);

  const GateOptions options;
  const std::string prefix;     // "bp:{target}"
  const std::string state_key;  // "bp:{target}:state", the scripts' KEYS[1]
  std::mutex mu;
  ValkeyConnection conn;                                 // guarded by mu
  std::chrono::steady_clock::time_point last_attempt{};  // guarded by mu
  std::atomic<uint64_t> admits{0}, defers{0}, rejects{0}, fail_opens{0};
  std::atomic<uint64_t> releases{0}, release_errors{0};
};

// "%.17g": round-trips a double through Valkey's string storage.
std::string FormatDouble(double v);

// Admission helpers shared by Admit and DryRunAdmit (gate.cpp):
// a REJECT decision for a malformed request, or nullopt if it is well formed;
std::optional<Decision> InvalidAdmitRequest(const AdmitRequest& request);
// admit.lua's ARGV for a request;
std::vector<std::string> AdmitArgs(const GateOptions& options, const AdmitRequest& request);
// fills *d from admit.lua's reply; returns "" or the failure (then *d is unset).
std::string ParseAdmitReply(const Result<ValkeyReply>& reply, Decision* d);

// Reply helpers (gate_config.cpp): a number reply or its fallback; a
// failure or error reply as Status; the named field `name` of state.lua's
// reply as a number, or `fallback` when absent.
double ReplyToDouble(const ValkeyReply& reply, double fallback = 0);
Status CheckReply(const Result<ValkeyReply>& reply, const char* what);
double FieldNumber(const std::map<std::string, ValkeyReply>& fields, const std::string& name,
                   double fallback = 0);

// configure.lua field/value pairs (gate_config.cpp): caps; omega_1..K with
// omega_sum and classes (all deleted when omega is empty; configure.lua
// deletes the classes above K); tuning.
std::vector<std::string> CapsPairs(const GateCaps& caps);
std::vector<std::string> OmegaPairs(const std::vector<double>& omega);
std::vector<std::string> TuningPairs(const GateTuning& tuning);

// Validation shared by the Set* methods and ValidateGateConfig (gate_config.cpp).
Status ValidateCaps(const GateCaps& caps);
Status ValidateOmega(const std::vector<double>& omega);
Status ValidateTenantWeight(const std::string& tenant, double weight);
Status ValidateTuning(const GateTuning& tuning);

}  // namespace bp
