// bp::Gate - the Backpressure admission gate client (paper sections III-V,
// SPEC section 4).
//
// Before each call to a rate-limited API, a worker asks Admit(). The gate runs
// one atomic Lua script on Valkey (lib/gate/lua/admit.lua) that checks and debits
// the L1 global token bucket per dimension (cap C_d, burst) and applies the
// fair-share rule for L2/L3: fair queuing in dominant-share units over the
// backlogged (tenant, priority) queues with weights w_t * omega_k, in the
// manner of WF2Q+ (Bennett and Zhang 1997: eligible by start tag, L1's refill
// to the smallest finish tag through the L1 hold), i.e. weighted DRF (paper
// eq. 1), work-conserving across classes. It answers:
//   ADMIT(ticket)    call the API now, then Release(ticket, actual usage);
//   DEFER(delta_ms)  free the worker slot, sleep delta on a durable timer,
//                    then ask again;
//   REJECT(reason)   the provider itself would refuse the call: its cost is
//                    above GateCaps::max_cost_* (the limit per window; a
//                    cost above the L1 bucket but within it is admitted
//                    into debt, docs/gate.md); or the priority is above
//                    the configured classes 1..K (a class without omega_k
//                    would get weight 1 and outrank P1);
//   FAIL_OPEN        no decision from Valkey: call the API ungated
//                    (invariant I3); counted in fail_open_count() and by
//                    its cause (Decision::cause: unreachable, timed out,
//                    target not configured, server error). After a timeout
//                    or a lost connection the Gate's circuit breaker answers
//                    FAIL_OPEN at once for a cool-off
//                    (GateOptions::breaker_cool_off_ms, bp/circuit_breaker.h).
//                    A target found unconfigured (the store lost its state)
//                    is re-seeded from GateOptions::declared_config when one
//                    is given, and the admission retried
//                    (docs/store-restart.md).
//
// Units: requests and tokens are counts; caps are per second; times in ms.
// Thread-safety: every method is thread-safe (one connection, serialized by an
// internal mutex); a Gate may be shared by all workers of a process. The
// breaker is consulted before that mutex and again under it, so while it is
// open callers fail open without queueing behind a call in flight, and a
// caller that queued behind the call that opened it fails open at once.
// The key schema and script protocol are documented in docs/gate.md.
// Configuration, inspection and resets are bp::GateAdmin (gate_admin.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bp/circuit_breaker.h"
#include "bp/clock.h"
#include "bp/gate_ranges.h"
#include "bp/status.h"

namespace bp {

// Cost of one call in each dimension.
struct Cost {
  int64_t requests = 1;
  int64_t tokens = 0;  // estimate at admission (prompt tokens), actual at release
};

// How the token dimension is debited (paper section IV-C).
enum class GateMode {
  kEstimate,     // debit the estimate; Release changes nothing
  kReconcile,    // debit the estimate; Release debits or refunds the difference
  kReservation,  // debit prompt + max_tokens; Release refunds the unused part
};
// Reservation mode and P1. Let O be the max_tokens that admitted,
// not yet released calls reserved beyond their prompts (GateState::
// reserved_tokens; a ticket that expires unreleased leaves O at the next
// release). The token level refills up to B_t + O (B_t = C_t * burst_s); a
// refund is added up to B_t + O with O still counting its call, which then
// leaves O: a refund that finds the bucket at B_t is kept as credit (up to
// the call's max_tokens), and the level stays within B_t + O + m (m = the
// largest max_tokens). Bound: the
// tokens used by the calls admitted in any span [x, y] stay within
//   C_t * (y - x) + max(B_t, largest reservation) + m + 2 * O(x),
// provided each call uses at least its prompt estimate and at most its
// reservation: the level at x is at most B_t + O(x) + m and at y at least
// -(largest reservation - B_t) (a debt), and the calls in flight at x refund
// at most O(x) within the span. O is at most (calls in flight) * max_tokens.
// With O = m = 0 (estimate, reconcile) it is the plain bucket's
// C_t * span + max(B_t, largest cost).

// The gate's script protocol version (docs/protocol.md): the keys,
// arguments and replies of lib/gate/lua/*.lua. It mirrors PROTOCOL_VERSION in
// lib/gate/lua/prelude.lua (the owner; a test compares them); the Python and
// Node clients refuse scripts whose prelude names another version.
inline constexpr int kGateProtocolVersion = 1;

// The one table of mode names, used by admit.lua's ARGV, workload files
// (gate.mode) and bpctl (--mode): "estimate", "reconcile", "reservation".
const char* GateModeName(GateMode mode);
// The mode named exactly (case-sensitive) by a name above; nullopt otherwise.
std::optional<GateMode> ParseGateMode(std::string_view name);
// The names for error messages.
inline constexpr const char* kGateModeNames = "estimate, reconcile or reservation";

// Ablations of the paper's evaluation.
enum class GateAblation {
  kNone,
  kNoDrf,       // fairness on requests only (the token dimension is L1 only)
  kNoPriority,  // one class: no L2 split, priority weights ignored
};

// The tenant id rule: 1-128 bytes of [A-Za-z0-9_.-]. The rule's owner is
// lib/gate/lua/prelude.lua (valid_tenant), which admit.lua and configure.lua
// enforce; this is a mirror for checks before any call (bpctl flags, workload
// files), compared with the script on every byte value and on the length
// bounds by GateSchema.TenantRuleMirrorsThePrelude.
bool ValidTenantName(std::string_view tenant);

// The ranges tools accept for caps, weights and classes, and the defaults of
// fields never set: bp/gate_ranges.h (included above).

enum class Verdict { kAdmit, kDefer, kReject, kFailOpen };
const char* VerdictName(Verdict v);  // "ADMIT", "DEFER", "REJECT", "FAIL_OPEN"

// Why an admission failed open.
enum class FailOpenCause {
  kNone,           // not a FAIL_OPEN
  kUnreachable,    // refused or reset connection, no slot owner, a reconnect
                   // not yet due, or the breaker open after one of these
  kTimedOut,       // no answer within command_timeout_ms (connect included),
                   // or the breaker open after a timeout
  kNotConfigured,  // the server answered that the target has no caps (a store
                   // that lost its state) and no re-seed could be made
                   // (no GateOptions::declared_config, one tried within
                   // reseed_interval_ms, or the re-seed failed)
  kServerError,    // any other error reply (script error, OOM, READONLY...)
};
// "none", "unreachable", "timed out", "target not configured", "server error".
const char* FailOpenCauseName(FailOpenCause cause);

struct Decision {
  Verdict verdict = Verdict::kFailOpen;
  std::string ticket;    // ADMIT only: pass to Release
  int64_t delta_ms = 0;  // DEFER only: earliest time (ms from now) worth retrying
  std::string reason;    // REJECT / FAIL_OPEN: human-readable cause;
                         // DEFER: the binding rule ("fair", "l1:requests",
                         // "l1:tokens", "strict": a higher class is backlogged)
  FailOpenCause cause = FailOpenCause::kNone;  // FAIL_OPEN only
  // ADMIT only: call the provider this many ms from now, not before. 0
  // unless the request asked to be admitted ahead (AdmitRequest::ahead_ms).
  int64_t start_in_ms = 0;
};

struct AdmitRequest {
  std::string tenant;      // tenant id; [A-Za-z0-9_.-], 1-128 bytes
  int priority = 1;        // class 1..K, 1 = highest; > K is REJECTed once weights are set
  Cost cost;               // requests and estimated prompt tokens
  int64_t max_tokens = 0;  // completion upper bound (reservation mode)
  // Tests only: the script's clock in ms since the epoch, so bucket
  // arithmetic is exact. 0 = the server's TIME, as production must use.
  int64_t now_ms = 0;
  // Admit ahead: the longest wait before calling the provider the caller
  // keeps, ms (0 = never; < 0 REJECTed). A due call short only of the
  // bucket's refill, at the head of the L1 line, whose refill comes within
  // min(ahead_ms, four refills of its own cost) is ADMITted with
  // Decision::start_in_ms, into a debt: calling before then bursts above
  // the cap (docs/gate.md, "Admit ahead").
  int64_t ahead_ms = 0;
};

// Provider caps C_d, per second, and the L1 burst in seconds of cap.
struct GateCaps {
  double requests_per_s = 60;
  double tokens_per_s = 0;  // 0 = no token dimension
  // L1 capacity C_d * burst_s: spendable at once after idleness.
  double burst_s = kDefaultGateBurstS;
  // Largest admissible cost of one call per dimension, in requests / tokens
  // (not per second): the provider's own capacity for one window, e.g. a
  // fixed window's `limit`. A cost above it is REJECTed ("Request too large",
  // which the provider would answer); a cost above the L1 capacity but within
  // it is admitted when the bucket is full and leaves a debt (docs/gate.md,
  // "The rule"). 0 = default: one minute of cap (C_d * 60, i.e. RPM / TPM), and
  // never less than the L1 capacity. Independent of time compression.
  // Else at least 1 (SetCaps refuses a fraction: InvalidArgument).
  double max_cost_requests = 0;
  double max_cost_tokens = 0;
};

struct GateConfig;  // a target's whole configuration (bp/gate_admin.h)

struct GateOptions {
  // redis://[[user]:password@]host[:port][/db] or unix:///path/to/socket, or
  // redis+cluster://host:port[,host:port...] (calls go to {target}'s primary)
  std::string url = "redis://127.0.0.1:6379";
  std::string target = "default";  // keys are bp:{target}:...
  GateMode mode = GateMode::kReconcile;
  GateAblation ablation = GateAblation::kNone;
  int connect_timeout_ms = 100;
  int command_timeout_ms = 20;   // past this, Admit fails open
  int warn_interval_ms = 10000;  // at most one fail-open warning per interval, per
                                 // target and process (shared by all Gates on it)
  // An idle queue is evicted after this.
  int64_t queue_ttl_ms = kDefaultGateQueueTtlMs;
  // While disconnected, at most one reconnect attempt per interval (each
  // bounded by command_timeout_ms); calls in between fail open at once.
  int reconnect_interval_ms = 100;
  // Circuit breaker (bp/circuit_breaker.h), one per Gate: after an Admit or
  // Release that timed out or lost its connection, calls fail at once
  // (Admit: FAIL_OPEN; Release: Unavailable, the ticket left to expire) for
  // this long, then one call probes the server; its success closes the
  // breaker, its failure opens it for another cool-off. Any answer of the
  // server, a tool's (GateAdmin, Ping) included, closes it. A paused server
  // then costs one command timeout per cool-off instead of one per call.
  // 0 = no breaker (every call waits its timeout). Real ms on `clock`.
  int breaker_cool_off_ms = 1000;
  // The target's declared configuration: what the operator wrote (the JSON
  // of `bpctl export` / `bpctl import`, bp/gate_config_json.h). When set and
  // an admission finds the target unconfigured (its store lost its state: a
  // restart without persistence, a failover to an empty replica, a flush),
  // the Gate re-seeds it with one configure.lua call that writes only while
  // the target is still unconfigured (so racing clients write it once), with
  // empty L1 buckets (no burst on top of what the provider counted while the
  // clients failed open) and then retries the admission once. Counted in
  // GateCounters::reseeds; the first re-seed in a process logs one warning
  // per target: hot changes made since this configuration was written are
  // lost. Validated on first use (ValidateGateConfig): an invalid one is
  // never written, and such admissions fail open (kNotConfigured) with the
  // reason. nullptr: they fail open. docs/store-restart.md.
  std::shared_ptr<const GateConfig> declared_config = nullptr;
  // At most one re-seed attempt per interval per Gate (real ms on `clock`);
  // the first is never delayed. Between attempts an unconfigured target
  // fails open (kNotConfigured).
  int reseed_interval_ms = 1000;
  // The clock of the intervals above (warn_interval_ms for the warnings
  // this Gate claims, the breaker's cool-off); nullptr = SteadyClock::Instance(). Must outlive the
  // Gate. The scripts' own time is Valkey's TIME (or AdmitRequest::now_ms).
  const Clock* clock = nullptr;
};

// Tuning of the fairness rule, stored in Valkey next to the caps (docs/gate.md,
// "The rule"). Defaults apply to fields never set; their owner is
// lib/gate/lua/prelude.lua (DEFAULT_*), which the scripts apply. The initializers
// below are bp/gate_ranges.h's mirrors of them, compared with the prelude
// by GateSchema.TuningDefaultsMirrorThePrelude.
struct GateTuning {
  // A queue ahead of the virtual time V is still eligible while it is at
  // most this far ahead in time at the fair rate (X*, paper eq. 1).
  double slack_ms = kDefaultGateSlackMs;
  // Lending: a queue that is not due is admitted anyway when L1, after its
  // debit, still holds this fraction of its capacity in every dimension
  // (capacity that no backlogged queue is coming for).
  double lend_fraction = kDefaultGateLendFraction;
  // A deferred queue stays backlogged until its delta plus this grace.
  double grace_ms = kDefaultGateGraceMs;
  int64_t ticket_ttl_ms = kDefaultGateTicketTtlMs;  // an unreleased ticket expires after this

  // Adaptive caps (docs/gate.md, "Adaptive caps"; beyond the paper, its future work):
  // AIMD (Chiu & Jain 1989; RFC 5681 3.1 halves, RFC 9438 CUBIC uses 0.7) on
  // a learned fraction f_d in [0.05, 1] of each cap, fed by the 429s that
  // Release reports. Off by default (the paper's gate). Turning it off drops
  // the learned state.
  bool adapt = false;
  // Multiplicative decrease: f_d = max(0.05, adapt_beta * f_d), in (0, 1).
  double adapt_beta = kDefaultGateAdaptBeta;
  // Additive recovery: f_d grows by elapsed / adapt_recover_ms up to 1 (from
  // 0 to the configured cap in this time); > 0.
  double adapt_recover_ms = kDefaultGateAdaptRecoverMs;
  // A decrease needs adapt_min_429 429s bound on d within one window of
  // adapt_window_ms (a rare 429 of the gate's own burst does not count);
  // after it d is held for max(window, retry-after, reset header): at most
  // one decrease per overload episode. window >= 0, min_429 >= 1.
  double adapt_window_ms = kDefaultGateAdaptWindowMs;
  int64_t adapt_min_429 = kDefaultGateAdaptMin429;

  // How classes share the binding cap (docs/gate.md "The rule"). kHier: a
  // backlogged class k gets omega_k / sum(omega of backlogged classes), and
  // its backlogged tenants split that by w_t, whatever their number. kFlat:
  // every queue gets omega_k * w_t / sum(omega_k * w_t), so a class's share
  // grows with its summed tenant weights (omega_k as a per-tenant tier
  // multiplier).
  enum class ShareRule { kHier, kFlat } share_rule = ShareRule::kHier;
  // kFair: classes share by the rule above. kStrict: a call of class k is
  // served only while no configured class j < k is eligibly backlogged (it
  // has backlogged queues and the latest wake-up plus grace_ms promised to
  // them is ahead); a blocked call is deferred until that promise ends
  // (binding "strict") unless lending admits it from an idle L1. A lower
  // class starves while a higher one keeps a backlog (docs/gate.md
  // "Strict priority").
  enum class ClassPolicy { kFair, kStrict } class_policy = ClassPolicy::kFair;
};

// What the upstream answered to an admitted call (Release input for the
// adaptive caps), on every answer: a 429 feeds AIMD, a served call's
// remaining and reset feed the header rule. Numbers < 0 mean absent; times
// in real ms; a reset is the time until the budget is fully restored
// (OpenAI's Go durations, Anthropic's RFC 3339 time minus now).
struct UpstreamReport {
  enum class Outcome { kOk, kThrottled } outcome = Outcome::kOk;  // 200-class or 429
  // 429: the limit the provider named (mockapi's error.dimension / error
  // type); kUnknown: inferred from remaining_* == 0, else every dimension.
  enum class Bound { kUnknown, kRequests, kTokens } bound = Bound::kUnknown;
  double retry_after_ms = -1;       // retry-after-ms, or retry-after * 1000
  int64_t remaining_requests = -1;  // x-ratelimit-remaining-requests
  int64_t remaining_tokens = -1;    // x-ratelimit-remaining-tokens
  double reset_requests_ms = -1;    // x-ratelimit-reset-requests
  double reset_tokens_ms = -1;      // x-ratelimit-reset-tokens
};

// Client-side counters (monotonic since construction).
struct GateCounters {
  uint64_t admits = 0, defers = 0, rejects = 0, fail_opens = 0;
  uint64_t releases = 0, release_errors = 0;
  // Admission-path calls (Admit, Release, ReleaseRefused) and tool calls
  // that reached for the server and failed in transport: no answer within
  // command_timeout_ms, or a refused/reset connection (also: no slot owner
  // in a cluster, a connect that timed out). Each opens a closed breaker.
  uint64_t timeouts = 0, connection_errors = 0;
  // Times the breaker opened (bp/circuit_breaker.h), and calls it answered
  // without contacting the server: Admits (also counted in fail_opens) and
  // releases (also in release_errors).
  uint64_t breaker_opens = 0, breaker_skips = 0;
  // fail_opens by cause (FailOpenCause; they sum to fail_opens).
  uint64_t fail_opens_unreachable = 0, fail_opens_timed_out = 0;
  uint64_t fail_opens_unconfigured = 0, fail_opens_server_error = 0;
  // Re-seeds this Gate wrote (GateOptions::declared_config): the target was
  // found unconfigured and this Gate's call configured it. A call that found
  // it configured by another client (a race) does not count.
  uint64_t reseeds = 0;
};

// What a worker needs of a gate: the admission path and its counters, as
// bp::Gate implements them below. Callers that only admit and release
// (loadgen's BpConfiguration) take this, so their tests can pass a fake.
// Thread-safety is the implementation's; Gate's is documented on Gate.
class Admission {
 public:
  virtual ~Admission() = default;
  virtual Decision Admit(const AdmitRequest& request) = 0;
  // As Gate::Release with a report. now_ms = 0: the server's clock (every
  // override keeps this default).
  virtual Status Release(const std::string& ticket, const Cost& actual,
                         const UpstreamReport& report, int64_t now_ms = 0) = 0;
  // As Gate::ReleaseRefused; now_ms as above.
  virtual Status ReleaseRefused(const std::string& ticket, int64_t now_ms = 0) = 0;
  virtual GateCounters counters() const = 0;
};

class GateAdmin;

class Gate final : public Admission {
 public:
  // Never fails: connects lazily and reconnects on error, so a gate created
  // while Valkey is down fails open until it comes back.
  explicit Gate(GateOptions options);
  ~Gate() override;
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  // Connects now and loads the scripts; an error if the server is unreachable.
  Status Ping();

  // One atomic admission (Algorithm 1). Never blocks longer than about
  // command_timeout_ms (times the cluster hops); errors become FAIL_OPEN,
  // at once while the breaker is open (GateOptions::breaker_cool_off_ms).
  Decision Admit(const AdmitRequest& request) override;

  // Signed correction of the token buckets the admission debited (P4):
  // actual.tokens is prompt + completion as the provider reported it.
  // Idempotent: a second release of the same ticket changes nothing.
  Status Release(const std::string& ticket, const Cost& actual);
  // Tests only: the same with an explicit script clock (see AdmitRequest).
  Status Release(const std::string& ticket, const Cost& actual, int64_t now_ms);
  // The same, reporting what the upstream answered. A 429 (kThrottled) is a
  // refused call, as ReleaseRefused below (actual is then ignored), and also
  // feeds the learned caps when the tuning switch adapt is on (adaptive caps);
  // an OK with a remaining and a reset (> 0) of a dimension feeds the header
  // rule (docs/gate.md "Adaptive caps"), else changes nothing beyond the
  // above. The overloads without a report mean kOk without headers.
  // InvalidArgument on a report with a non-finite number.
  Status Release(const std::string& ticket, const Cost& actual, const UpstreamReport& report,
                 int64_t now_ms = 0) override;
  // The provider refused the admitted call (503/529, or a 429 when no report
  // is at hand; without feeding adaptive caps) and the caller will ask
  // again for the same call: L1 keeps the debit (the provider's window was
  // full), the queue's virtual tag gives back the call's dominant share
  // sigma / w, so a queue is charged once per call served (DRFQ, docs/gate.md,
  // "The rule"). Idempotent like Release; a no-op in estimate mode. now_ms: tests.
  Status ReleaseRefused(const std::string& ticket, int64_t now_ms = 0) override;

  uint64_t fail_open_count() const;
  GateCounters counters() const override;
  // The circuit breaker's state now (closed when breaker_cool_off_ms = 0).
  BreakerState breaker_state() const;
  const GateOptions& options() const;

 private:
  friend class GateAdmin;                                   // shares the connection (gate_admin.h)
  Status RunRelease(const std::vector<std::string>& args);  // release.lua
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bp
