// Re-seeding a target that lost its state (GateOptions::declared_config,
// docs/store-restart.md) and the causes of a fail-open. After admit.lua
// answers that the target has no caps, Gate::Admit asks Reseed for one
// configure.lua "seed" call, which writes the declared configuration only
// while the target is still unconfigured (racing clients write it once) with
// empty L1 buckets, and retries the admission once. A fail-open names its
// cause (FailOpenCause), the breaker's included: the transport failure that
// opened it.
#include <spdlog/spdlog.h>

#include <mutex>
#include <set>

#include "gate_internal.h"

namespace bp {
namespace {

// One warning per process and target on the first re-seed: whatever the
// number of Gates (one per worker thread) that race to seed it.
bool ClaimReseedWarning(const std::string& target) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard lock(mu);
  return warned.insert(target).second;
}

}  // namespace

const char* FailOpenCauseName(FailOpenCause cause) {
  switch (cause) {
    case FailOpenCause::kNone:
      return "none";
    case FailOpenCause::kUnreachable:
      return "unreachable";
    case FailOpenCause::kTimedOut:
      return "timed out";
    case FailOpenCause::kNotConfigured:
      return "target not configured";
    case FailOpenCause::kServerError:
      return "server error";
  }
  return "none";  // not reached: every enumerator is named above
}

bool IsUnconfiguredReply(const Result<ValkeyReply>& r) {
  // admit.lua's error for a target without a cfg record.
  return r.ok() && r->is_error() && r->str.find("bp: target not configured") != std::string::npos;
}

FailOpenCause FailOpenCauseOf(const Result<ValkeyReply>& r) {
  if (!r.ok()) {
    return r.status().code() == StatusCode::kTimeout ? FailOpenCause::kTimedOut
                                                     : FailOpenCause::kUnreachable;
  }
  return IsUnconfiguredReply(r) ? FailOpenCause::kNotConfigured : FailOpenCause::kServerError;
}

std::string Gate::Impl::BreakerOpenReason() const {
  const bool timed_out = transport_cause.load() == FailOpenCause::kTimedOut;
  return std::string("circuit breaker open: a gate call to valkey ") +
         (timed_out ? "timed out" : "found it unreachable") +
         "; calls fail open without waiting for " + std::to_string(breaker.cool_off_ms()) +
         " ms, then one probe";
}

Status Gate::Impl::BreakerOpenStatus() const {
  if (transport_cause.load() == FailOpenCause::kTimedOut) {
    return Status::Timeout(BreakerOpenReason());
  }
  return Status::Unavailable(BreakerOpenReason());
}

void Gate::Impl::PrepareSeed() {
  if (!options.declared_config) return;
  if (Status s = ValidateGateConfig(*options.declared_config); !s.ok()) {
    seed_error = "the declared configuration is invalid (" + s.message() + "), not seeded";
    return;
  }
  seed_json = DeclaredText(GateConfigToJson(*options.declared_config));
}

bool Gate::Impl::Reseed(int64_t now_ms, std::string* failure) {
  if (!options.declared_config) {
    *failure = "target not configured and no declared configuration to re-seed it";
    return false;
  }
  if (!seed_error.empty()) {
    *failure = "target not configured; " + seed_error;
    return false;
  }
  const int64_t now_us = clock.NowUs();
  if (last_reseed_us >= 0 && !IntervalPassed(last_reseed_us, now_us, options.reseed_interval_ms)) {
    *failure = "target not configured; the last re-seed attempt was within " +
               std::to_string(options.reseed_interval_ms) + " ms";
    return false;
  }
  last_reseed_us = now_us;
  Result<ValkeyReply> r =
      GatedEval(lua::kConfigureLua, {"declare_seed", std::to_string(now_ms), seed_json});
  if (!r.ok() || r->is_error() || r->type != ValkeyReply::Type::kInteger) {
    *failure = "target not configured; re-seed failed: " + (!r.ok()         ? r.status().ToString()
                                                            : r->is_error() ? r->str
                                                                            : "unexpected reply");
    return false;
  }
  if (r->integer == 1) {
    ++reseeds;
    if (ClaimReseedWarning(options.target)) {
      spdlog::warn(
          "bp gate '{}': the target was unconfigured (its store lost its state: a restart "
          "without persistence, a failover or a flush); re-seeded it from the declared "
          "configuration, with empty buckets. Hot changes made since that configuration was "
          "written are lost; keep it current with `bpctl export` after each change "
          "(docs/store-restart.md)",
          options.target);
    }
  }
  return true;
}

}  // namespace bp
