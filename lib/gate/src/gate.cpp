// bp::Gate admission path: Admit and Release call lib/gate/lua/admit.lua and
// release.lua with EVALSHA over one connection held behind a mutex. Any
// transport error, timeout or server error turns into FAIL_OPEN (I3) with a
// counter and at most one warning per warn_interval_ms per target and process
// (not per Gate, of which a worker pool has one per thread); the connection is
// re-established lazily, at most once per reconnect_interval_ms. A circuit
// breaker per Gate (bp/circuit_breaker.h) fails calls at once for
// breaker_cool_off_ms after a timeout or connection error.
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "gate_internal.h"

namespace bp {

const char* GateModeName(GateMode mode) {
  switch (mode) {
    case GateMode::kEstimate:
      return "estimate";
    case GateMode::kReconcile:
      return "reconcile";
    case GateMode::kReservation:
      return "reservation";
  }
  return "reconcile";  // not reached: every enumerator is named above
}

std::optional<GateMode> ParseGateMode(std::string_view name) {
  for (GateMode m : {GateMode::kEstimate, GateMode::kReconcile, GateMode::kReservation}) {
    if (name == GateModeName(m)) return m;
  }
  return std::nullopt;
}

namespace {

const char* AblationName(GateAblation a) {
  switch (a) {
    case GateAblation::kNoDrf:
      return "nodrf";
    case GateAblation::kNoPriority:
      return "nopriority";
    default:
      return "none";
  }
}

// Fail-open warnings are limited per process and target, not per Gate: a
// worker pool holds one Gate per thread (each its own connection), and when
// Valkey goes away they all fail open together. Returns whether to warn now
// and the process-wide count of fail-opens for the target.
std::pair<bool, uint64_t> ClaimFailOpenWarning(const std::string& target, int interval_ms,
                                               const Clock& clock) {
  struct Entry {
    int64_t last_us = 0;
    bool warned = false;
    uint64_t count = 0;
  };
  static std::mutex mu;
  static std::unordered_map<std::string, Entry> by_target;  // one entry per target used
  std::lock_guard lock(mu);
  Entry& e = by_target[target];
  ++e.count;
  const int64_t now_us = clock.NowUs();
  if (e.warned && !IntervalPassed(e.last_us, now_us, interval_ms)) return {false, e.count};
  e.warned = true;
  e.last_us = now_us;
  return {true, e.count};
}

}  // namespace

bool IntervalPassed(int64_t last_us, int64_t now_us, int interval_ms) {
  return now_us < last_us || now_us - last_us >= int64_t{interval_ms} * 1000;
}

bool ValidTenantName(std::string_view t) {
  if (t.empty() || t.size() > 128) return false;
  for (char c : t) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::optional<Decision> InvalidAdmitRequest(const AdmitRequest& request) {
  if (ValidTenantName(request.tenant) && request.priority >= 1 && request.cost.requests >= 0 &&
      request.cost.tokens >= 0 && request.max_tokens >= 0 && request.ahead_ms >= 0) {
    return std::nullopt;
  }
  Decision d;
  d.verdict = Verdict::kReject;
  d.reason =
      "invalid request: tenant must match [A-Za-z0-9_.-]{1,128}, priority >= 1, costs >= 0, "
      "ahead_ms >= 0";
  return d;
}

std::vector<std::string> AdmitArgs(const GateOptions& o, const AdmitRequest& request) {
  std::vector<std::string> args = {request.tenant,
                                   std::to_string(request.priority),
                                   std::to_string(request.cost.requests),
                                   std::to_string(request.cost.tokens),
                                   std::to_string(request.max_tokens),
                                   GateModeName(o.mode),
                                   AblationName(o.ablation),
                                   std::to_string(o.queue_ttl_ms),
                                   std::to_string(request.now_ms)};
  if (request.ahead_ms > 0) args.push_back(std::to_string(request.ahead_ms));
  return args;
}

std::string ParseAdmitReply(const Result<ValkeyReply>& r, Decision* d) {
  if (!r.ok()) return r.status().ToString();
  if (r->is_error()) return "admit script: " + r->str;
  if (r->type != ValkeyReply::Type::kArray || r->elements.size() < 2) {
    return "admit script: unexpected reply shape";
  }
  const std::string verdict = r->elements[0].AsString();
  if (verdict == "ADMIT") {
    d->verdict = Verdict::kAdmit;
    d->ticket = r->elements[1].AsString();
    if (r->elements.size() > 2) d->start_in_ms = r->elements[2].integer;
  } else if (verdict == "DEFER") {
    d->verdict = Verdict::kDefer;
    d->delta_ms = r->elements[1].integer;
    if (r->elements.size() > 2) d->reason = r->elements[2].AsString();
  } else if (verdict == "REJECT") {
    d->verdict = Verdict::kReject;
    d->reason = r->elements[1].AsString();
  } else {
    return "admit script: unknown verdict " + verdict;
  }
  return "";
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kAdmit:
      return "ADMIT";
    case Verdict::kDefer:
      return "DEFER";
    case Verdict::kReject:
      return "REJECT";
    default:
      return "FAIL_OPEN";
  }
}

Status Gate::Impl::EnsureConnected(int connect_timeout_ms, bool* attempted) {
  if (attempted) *attempted = true;
  if (conn.connected()) return Status::Ok();
  const int64_t now_us = clock.NowUs();
  if (last_attempt_us >= 0 &&
      !IntervalPassed(last_attempt_us, now_us, options.reconnect_interval_ms)) {
    if (attempted) *attempted = false;
    return Status::Unavailable("valkey unreachable (next reconnect attempt pending)");
  }
  last_attempt_us = now_us;
  return conn.Connect(connect_timeout_ms);
}

void Gate::Impl::Observe(const Status& status) {
  if (status.code() == StatusCode::kTimeout) {
    ++timeouts;
    transport_cause = FailOpenCause::kTimedOut;
  } else if (status.code() == StatusCode::kUnavailable) {
    ++connection_errors;
    transport_cause = FailOpenCause::kUnreachable;
  } else {
    breaker.OnSuccess();  // an answer, or a failure that no wait would fix
    return;
  }
  breaker.OnFailure();
}

Result<ValkeyReply> Gate::Impl::GatedEval(std::string_view script,
                                          const std::vector<std::string>& args) {
  if (breaker.state() == BreakerState::kOpen) {
    // Opened by the call this one queued behind (a Gate shared by threads):
    // fail now rather than wait for a timeout of its own.
    ++breaker_skips;
    return BreakerOpenStatus();
  }
  bool attempted = false;
  if (Status s = EnsureConnected(options.command_timeout_ms, &attempted); !s.ok()) {
    if (attempted) {
      Observe(s);
    } else {
      breaker.Abandon();  // no connect was due: not a new failure
    }
    return s;
  }
  Result<ValkeyReply> r =
      conn.EvalScript(script, {state_key}, args, ValkeyConnection::ScriptText::kStatic);
  Observe(r.status());
  return r;
}

Status Gate::Impl::ConnectForTool() {
  if (conn.connected()) return Status::Ok();
  last_attempt_us = -1;  // tools and hot updates may always try
  return EnsureConnected(options.connect_timeout_ms);
}

Result<ValkeyReply> Gate::Impl::Run(const std::vector<std::string>& args) {
  std::lock_guard lock(mu);
  Status s = ConnectForTool();
  Result<ValkeyReply> r = s.ok() ? conn.Command(args) : Result<ValkeyReply>(s);
  Observe(r.status());
  return r;
}

Result<ValkeyReply> Gate::Impl::Eval(std::string_view body, const std::vector<std::string>& args) {
  std::lock_guard lock(mu);
  Status s = ConnectForTool();
  Result<ValkeyReply> r =
      s.ok() ? conn.EvalScript(body, {state_key}, args, ValkeyConnection::ScriptText::kStatic)
             : Result<ValkeyReply>(s);
  Observe(r.status());
  return r;
}

Gate::Gate(GateOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Gate::~Gate() = default;

const GateOptions& Gate::options() const { return impl_->options; }
uint64_t Gate::fail_open_count() const { return impl_->fail_opens.load(); }

GateCounters Gate::counters() const {
  GateCounters c;
  c.admits = impl_->admits.load();
  c.defers = impl_->defers.load();
  c.rejects = impl_->rejects.load();
  c.fail_opens = impl_->fail_opens.load();
  c.releases = impl_->releases.load();
  c.release_errors = impl_->release_errors.load();
  c.timeouts = impl_->timeouts.load();
  c.connection_errors = impl_->connection_errors.load();
  c.breaker_opens = impl_->breaker.opens();
  c.breaker_skips = impl_->breaker_skips.load();
  const auto& by = impl_->fail_open_causes;
  c.fail_opens_unreachable = by[static_cast<int>(FailOpenCause::kUnreachable)].load();
  c.fail_opens_timed_out = by[static_cast<int>(FailOpenCause::kTimedOut)].load();
  c.fail_opens_unconfigured = by[static_cast<int>(FailOpenCause::kNotConfigured)].load();
  c.fail_opens_server_error = by[static_cast<int>(FailOpenCause::kServerError)].load();
  c.reseeds = impl_->reseeds.load();
  return c;
}

BreakerState Gate::breaker_state() const { return impl_->breaker.state(); }

Status Gate::Ping() {
  std::lock_guard lock(impl_->mu);
  impl_->last_attempt_us = -1;
  Status s = impl_->EnsureConnected(impl_->options.connect_timeout_ms);
  auto r = s.ok() ? impl_->conn.Command({"PING"}) : Result<ValkeyReply>(s);
  impl_->Observe(r.status());  // as a tool call: a PONG closes the breaker
  if (!r.ok()) return r.status();
  // Load the admit, release and configure scripts now, so the first call of
  // each is a plain EVALSHA (reset_buckets.lua, an admin command, loads on use).
  for (std::string_view body : {lua::kAdmitLua, lua::kReleaseLua, lua::kConfigureLua}) {
    auto l = impl_->conn.Command({"SCRIPT", "LOAD", std::string(body)});
    if (!l.ok()) return l.status();
    if (l->is_error()) return Status::Internal("SCRIPT LOAD: " + l->str);
  }
  return Status::Ok();
}

Decision Gate::Admit(const AdmitRequest& request) {
  if (auto invalid = InvalidAdmitRequest(request)) {
    impl_->rejects++;
    return *invalid;
  }
  const GateOptions& o = impl_->options;
  const std::vector<std::string> args = AdmitArgs(o, request);
  Decision d;
  std::string failure;
  FailOpenCause cause = FailOpenCause::kNone;
  if (!impl_->breaker.Allow()) {
    // Open breaker: fail open now rather than wait for another timeout.
    ++impl_->breaker_skips;
    failure = impl_->BreakerOpenReason();
    cause = impl_->transport_cause.load();
  } else {
    std::lock_guard lock(impl_->mu);
    Result<ValkeyReply> r = impl_->GatedEval(lua::kAdmitLua, args);
    std::string seed_failure;
    if (IsUnconfiguredReply(r)) {
      // The store lost the target's state: re-seed it from the declared
      // configuration (GateOptions::declared_config) and ask once more.
      if (impl_->Reseed(request.now_ms, &seed_failure)) {
        r = impl_->GatedEval(lua::kAdmitLua, args);
      }
    }
    failure = ParseAdmitReply(r, &d);
    if (failure.empty()) {
      if (d.verdict == Verdict::kAdmit) impl_->admits++;
      if (d.verdict == Verdict::kDefer) impl_->defers++;
      if (d.verdict == Verdict::kReject) impl_->rejects++;
      return d;
    }
    cause = FailOpenCauseOf(r);
    if (cause == FailOpenCause::kNotConfigured && !seed_failure.empty()) failure = seed_failure;
  }
  // Fail open (I3): count every one, by cause; warn at most once per
  // interval per target in this process, whatever the number of Gate objects.
  ++impl_->fail_opens;
  ++impl_->fail_open_causes[static_cast<int>(cause)];
  if (auto [warn, n] = ClaimFailOpenWarning(o.target, o.warn_interval_ms, impl_->clock); warn) {
    spdlog::warn("bp gate '{}': failing open ({} so far in this process), {}: {}", o.target, n,
                 FailOpenCauseName(cause), failure);
  }
  d = Decision{};
  d.verdict = Verdict::kFailOpen;
  d.reason = failure;
  d.cause = cause;
  return d;
}

Status Gate::Release(const std::string& ticket, const Cost& actual) {
  return Release(ticket, actual, 0);
}

Status Gate::Release(const std::string& ticket, const Cost& actual, int64_t now_ms) {
  return Release(ticket, actual, UpstreamReport{}, now_ms);
}

Status Gate::Release(const std::string& ticket, const Cost& actual, const UpstreamReport& report,
                     int64_t now_ms) {
  if (ticket.empty()) return Status::InvalidArgument("release: empty ticket");
  for (double v : {report.retry_after_ms, report.reset_requests_ms, report.reset_tokens_ms}) {
    if (!std::isfinite(v)) return Status::InvalidArgument("release: report times must be finite");
  }
  if (actual.requests < 0 || actual.tokens < 0) {
    return Status::InvalidArgument("release: actual costs must be >= 0");
  }
  if (impl_->options.mode == GateMode::kEstimate || ticket == "0") return Status::Ok();
  const bool throttled = report.outcome == UpstreamReport::Outcome::kThrottled;
  std::vector<std::string> args = {ticket, std::to_string(actual.requests),
                                   std::to_string(actual.tokens), std::to_string(now_ms)};
  if (throttled) {  // release.lua's report arguments (docs/gate.md, "Script protocol")
    const char* bound = report.bound == UpstreamReport::Bound::kRequests ? "requests"
                        : report.bound == UpstreamReport::Bound::kTokens ? "tokens"
                                                                         : "";
    args.insert(args.end(),
                {"429", bound, FormatNumber(report.retry_after_ms),
                 std::to_string(report.remaining_requests), FormatNumber(report.reset_requests_ms),
                 std::to_string(report.remaining_tokens), FormatNumber(report.reset_tokens_ms)});
  } else if (report.reset_requests_ms > 0 || report.reset_tokens_ms > 0) {
    // A served call's rate-limit headers feed the adaptive caps' header rule.
    args.insert(args.end(),
                {"ok", "", "-1", std::to_string(report.remaining_requests),
                 FormatNumber(report.reset_requests_ms), std::to_string(report.remaining_tokens),
                 FormatNumber(report.reset_tokens_ms)});
  }
  return RunRelease(args);
}

Status Gate::ReleaseRefused(const std::string& ticket, int64_t now_ms) {
  if (ticket.empty()) return Status::InvalidArgument("release: empty ticket");
  if (impl_->options.mode == GateMode::kEstimate || ticket == "0") return Status::Ok();
  return RunRelease({ticket, "0", "0", std::to_string(now_ms), "refused"});
}

Status Gate::RunRelease(const std::vector<std::string>& args) {
  if (!impl_->breaker.Allow()) {
    // Open breaker: the ticket stays (its correction is lost, as when it
    // expires) rather than the caller waiting for another timeout.
    impl_->breaker_skips++;
    impl_->release_errors++;
    return Status::Unavailable("release: " + impl_->BreakerOpenReason());
  }
  std::lock_guard lock(impl_->mu);
  auto r = impl_->GatedEval(lua::kReleaseLua, args);
  if (!r.ok() || r->is_error()) {
    impl_->release_errors++;
    return r.ok() ? Status::Internal("release script: " + r->str) : r.status();
  }
  impl_->releases++;
  return Status::Ok();
}

}  // namespace bp
