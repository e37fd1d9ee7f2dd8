// Shared between gate.cpp (admission path), gate_reseed.cpp (re-seeds, fail-open
// causes), gate_config.cpp and gate_admin.cpp (hot updates, state snapshot):
// the client's private state. Not a public header.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bp/circuit_breaker.h"
#include "bp/decimal.h"
#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/gate_config_json.h"
#include "bp/valkey.h"

namespace bp::lua {
extern const std::string_view kAdmitLua;
extern const std::string_view kReleaseLua;
extern const std::string_view kConfigureLua;
extern const std::string_view kDryRunLua;
extern const std::string_view kResetBucketsLua;
extern const std::string_view kStateLua;
}  // namespace bp::lua

namespace bp {

struct Gate::Impl {
  explicit Impl(GateOptions o)
      : options(std::move(o)),
        prefix("bp:{" + options.target + "}"),
        state_key(prefix + ":state"),
        clock(options.clock != nullptr ? *options.clock : SteadyClock::Instance()),
        breaker(options.breaker_cool_off_ms, clock),
        conn(ValkeyOptions{options.url, options.connect_timeout_ms, options.command_timeout_ms},
             prefix) {  // route key: a cluster sends every call to {target}'s slot
    PrepareSeed();
  }

  // Connected, or one reconnect attempt if the interval has passed; sets
  // *attempted (if given) to whether a connect was tried or the connection
  // was already open. Caller holds mu.
  Status EnsureConnected(int connect_timeout_ms, bool* attempted = nullptr);
  // One admission-path call (admit.lua, release.lua) that the breaker has
  // allowed: connects (EnsureConnected), runs `script` with KEYS[1] =
  // state_key, and reports the outcome to the breaker and the transport
  // counters (Observe; Abandon when no connect was due). If the breaker
  // opened while the caller waited for mu, fails at once (a breaker skip).
  // Caller holds mu. `script` is one of the embedded bp::lua::k*Lua (sent as
  // ScriptText::kStatic).
  Result<ValkeyReply> GatedEval(std::string_view script, const std::vector<std::string>& args);
  // Reports a call's outcome: a kTimeout or kUnavailable status counts in
  // timeouts / connection_errors and is a breaker failure; anything else (a
  // reply, an error reply too) is a success.
  void Observe(const Status& status);
  // The FAIL_OPEN reason while the breaker refuses calls.
  std::string BreakerOpenReason() const;
  // The status of a call the breaker refused: kTimeout or kUnavailable as
  // the transport failure that opened it, with BreakerOpenReason().
  Status BreakerOpenStatus() const;
  // Validates options.declared_config and builds seed_json, or sets
  // seed_error (constructor).
  void PrepareSeed();
  // After admit.lua answered that the target is unconfigured: one seed call
  // (configure.lua "seed") if a declared configuration is given and no
  // attempt was made within reseed_interval_ms. True when the target is
  // configured now (by this call or a racing one): retry the admission.
  // Else false with *failure saying why. Caller holds mu.
  bool Reseed(int64_t now_ms, std::string* failure);
  // Tools and hot updates: connects now if disconnected, ignoring the
  // reconnect interval, with the connect timeout. Caller holds mu.
  Status ConnectForTool();
  // Runs one command under mu, connecting first (ConnectForTool). Tools
  // are never refused by the breaker; their outcome is reported to it
  // (Observe), so a tool's success closes it.
  Result<ValkeyReply> Run(const std::vector<std::string>& args);
  // Runs a script with KEYS[1] = state_key under mu, connecting first; the
  // breaker as for Run. `body` is one of the embedded bp::lua::k*Lua.
  Result<ValkeyReply> Eval(std::string_view body, const std::vector<std::string>& args);
  // Runs configure.lua in a structured mode ("declare": a whole declared
  // configuration; "update": the sections of `declared` present) with the
  // declared configuration's JSON (gate_config_json.h), so no field name of
  // the state hash is written here.
  Status Configure(const char* mode, const nlohmann::ordered_json& declared);
  // Runs state.lua with `args` ("config", or "state" and the ablation) and
  // returns its named fields.
  Result<std::map<std::string, ValkeyReply>> ReadState(const std::vector<std::string>& args);

  const GateOptions options;
  const std::string prefix;     // "bp:{target}"
  const std::string state_key;  // "bp:{target}:state", the scripts' KEYS[1]
  const Clock& clock;           // the reconnect and warning intervals, the breaker
  CircuitBreaker breaker;       // thread-safe on its own; consulted before mu
  std::mutex mu;
  ValkeyConnection conn;         // guarded by mu
  int64_t last_attempt_us = -1;  // clock time of the last connect; -1 = none; guarded by mu
  int64_t last_reseed_us = -1;   // clock time of the last seed call; -1 = none; guarded by mu
  std::string seed_json;         // configure.lua "declare_seed"'s JSON; const
  std::string seed_error;        // why declared_config cannot be seeded; const
  // The cause of the last transport failure (the breaker's reason to be open).
  std::atomic<FailOpenCause> transport_cause{FailOpenCause::kUnreachable};
  std::atomic<uint64_t> fail_open_causes[5] = {};  // by FailOpenCause
  std::atomic<uint64_t> reseeds{0};
  std::atomic<uint64_t> admits{0}, defers{0}, rejects{0}, fail_opens{0};
  std::atomic<uint64_t> releases{0}, release_errors{0};
  std::atomic<uint64_t> timeouts{0}, connection_errors{0}, breaker_skips{0};
};

// Whether interval_ms has passed from last_us to now_us; a clock that went
// back (an injected wall clock stepped) counts as passed, so nothing waits.
bool IntervalPassed(int64_t last_us, int64_t now_us, int interval_ms);

// Admission helpers shared by Admit and DryRunAdmit (gate.cpp):
// a REJECT decision for a malformed request, or nullopt if it is well formed;
std::optional<Decision> InvalidAdmitRequest(const AdmitRequest& request);
// admit.lua's ARGV for a request;
std::vector<std::string> AdmitArgs(const GateOptions& options, const AdmitRequest& request);
// fills *d from admit.lua's reply; returns "" or the failure (then *d is unset);
std::string ParseAdmitReply(const Result<ValkeyReply>& reply, Decision* d);
// the cause of a failed admit.lua reply (a transport status: kTimeout is
// kTimedOut, any other kUnreachable);
FailOpenCause FailOpenCauseOf(const Result<ValkeyReply>& reply);
// whether the reply is admit.lua's error for a target without caps.
bool IsUnconfiguredReply(const Result<ValkeyReply>& reply);

// Reply helpers (gate_config.cpp): a number reply or its fallback; a
// failure or error reply as Status; the named field `name` of state.lua's
// reply as a number, or `fallback` when absent.
double ReplyToDouble(const ValkeyReply& reply, double fallback = 0);
Status CheckReply(const Result<ValkeyReply>& reply, const char* what);
double FieldNumber(const std::map<std::string, ValkeyReply>& fields, const std::string& name,
                   double fallback = 0);
// Whether state.lua's reply says the target is configured, and its caps
// (left at their defaults when not configured): Config() and State().
bool CapsOfFields(const std::map<std::string, ValkeyReply>& fields, GateCaps* caps);
// The tuning and tenant weights of state.lua's reply (its "config" fields).
void TuningOfFields(const std::map<std::string, ValkeyReply>& fields, GateTuning* tuning,
                    std::map<std::string, double>* tenant_weights);

// The declared configuration's JSON text (one line; invalid UTF-8 replaced)
// as configure.lua's structured modes take it.
std::string DeclaredText(const nlohmann::ordered_json& declared);

// Validation shared by the Set* methods and ValidateGateConfig (gate_config.cpp).
Status ValidateCaps(const GateCaps& caps);
Status ValidateOmega(const std::vector<double>& omega);
Status ValidateTenantWeight(const std::string& tenant, double weight);
Status ValidateTuning(const GateTuning& tuning);

}  // namespace bp
