// bp::GateAdmin - configuration, inspection and resets of a gate target
// (SPEC section 4, hot updates I2), for tools (bpctl), experiment setup and
// tests; never the admission path, which is bp::Gate (gate.h).
//
// A GateAdmin either owns its own Gate (its own connection) or borrows an
// existing Gate's connection, so a test or a run can admit and configure
// through one connection. Units as in gate.h: counts, per-second caps, ms.
// Thread-safety: every method is thread-safe (the Gate's mutex serializes
// them with its Admit and Release calls).
// Key schema and script protocol: docs/gate.md.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bp/gate.h"
#include "bp/status.h"

namespace bp {

// A target's whole configuration, and nothing of its bucket or queue state:
// what bpctl exports and imports (docs/gate.md, key schema).
struct GateConfig {
  bool configured = false;                       // caps are set (else the gate fails open)
  GateCaps caps;                                 // meaningful only when configured
  std::vector<double> omega;                     // omega_1..omega_K; empty: not set (omega 1)
  std::map<std::string, double> tenant_weights;  // explicit w_t; others are 1
  GateTuning tuning;                             // defaults for fields never set
};

// Checks what ReplaceConfig would write: configured, caps as SetCaps, omega as
// SetPriorityWeights (or empty), tenant names and weights as SetTenantWeight
// plus ValidTenantName, tuning as SetTuning. InvalidArgument names the field.
Status ValidateGateConfig(const GateConfig& config);

// What the gate stores for one (tenant, priority) queue (bpctl, tests).
struct GateQueueState {
  std::string tenant;
  int priority = 0;
  double weight = 0;  // w_t * omega_k, with w_t the tenant's weight now (state.lua)
  double tag = 0;     // virtual finish tag F_q (dominant-share units / weight)
  double lag = 0;     // tag - V: how far ahead of the virtual time it is
  bool backlogged = false;
  // Backlogged only: its share of the binding cap among the backlogged
  // queues under the share rule (docs/gate.md "The rule"), as state.lua
  // computes it; 0 otherwise.
  double fair_share = 0;
  int64_t admits = 0, defers = 0, lent = 0;
};

// Running totals of one priority class (state.lua's class_counters; kept
// by admit.lua and release.lua on the class record they already write, and
// dropped with it by ResetBuckets): monotone between resets, so Prometheus
// counters. Counts of calls, or requests / tokens as the name says. They are
// outside the admission decision: no rule reads them.
struct GateClassCounters {
  double admits = 0;              // ADMIT verdicts
  double admitted_requests = 0;   // requests of the admitted calls
  double admitted_tokens = 0;     // tokens debited on L1 by the admissions
  double lent = 0;                // admissions that were lent idle capacity
  double defers_fair = 0;         // DEFER bound by the fair rule ("fair")
  double defers_l1_requests = 0;  // DEFER bound by L1 requests ("l1:requests")
  double defers_l1_tokens = 0;    // DEFER bound by L1 tokens ("l1:tokens")
  double defers_strict = 0;       // DEFER under class_policy strict ("strict")
  double releases = 0;            // tickets released (each once)
  double released_tokens = 0;     // actual tokens reported by served releases
  double refunded_tokens = 0;     // sum of (debited - actual) where positive
  double surcharged_tokens = 0;   // sum of (actual - debited) where positive
  double refused = 0;             // releases with outcome "429" or "refused"
};

// A snapshot of a target's state, read in one state.lua call (buckets are
// not refilled by reading: the *_now fields are what admit.lua would refill
// them to). Values in requests / tokens / dominant-share units. Every value
// is the script's; nothing is re-derived in C++.
struct GateState {
  bool configured = false;
  GateCaps caps;
  std::vector<double> omega;  // omega_1..omega_K as configured
  // State() only (not StateSummary()): the rest of the configuration, and
  // the server as INFO server names it ("valkey 9.1.2").
  GateTuning tuning;
  std::map<std::string, double> tenant_weights;
  std::string server;
  // Configured only: what admit.lua would use at server_time_ms. The refill
  // rates (the caps times the learned fractions while adapt is on), the L1
  // capacities C_d * burst_s, the levels refilled to server_time_ms, and the
  // largest admissible cost per dimension (max_cost_*, else one minute of
  // cap, never below the capacity).
  double learned_requests_per_s = 0, learned_tokens_per_s = 0;
  double l1_requests_capacity = 0, l1_tokens_capacity = 0;
  double l1_requests_now = 0, l1_tokens_now = 0;
  double effective_max_cost_requests = 0, effective_max_cost_tokens = 0;
  // Per class 1..max(K, 1): omega_k / sum(omega), and its
  // share of the binding cap among the backlogged queues now under the share
  // rule (0 without backlog; docs/gate.md "The rule").
  std::vector<double> class_nominal_share, class_current_share;
  double l1_requests = 0;  // L1 level at l1_at_ms
  double l1_tokens = 0;
  double l1_at_ms = 0;  // script time of the last refill
  // The target has bucket state: admitted to at least once (kept, at time 0,
  // by ResetBuckets once a ticket was issued). Else the L1 levels above are
  // the full cold bucket (0 when not configured).
  bool has_bucket_state = false;
  // The script time (ms) of the last admission since the target was made or
  // last reset; nullopt when there was none: no bucket state, or the state
  // ResetBuckets keeps at time 0, which is no admission (read as one, a reset
  // target would look idle since 1970 and `bpctl gc` would delete its
  // configuration).
  std::optional<double> last_admission_ms() const {
    if (!has_bucket_state || l1_at_ms <= 0) return std::nullopt;
    return l1_at_ms;
  }
  // Reservation mode: O, the max_tokens that admitted, unreleased calls
  // reserved beyond their prompts. The token level may refill up to
  // C_t * burst_s + O (docs/gate.md, reservation mode); 0 otherwise.
  double reserved_tokens = 0;
  double server_time_ms = 0;  // the server's TIME when State() read it
  double virtual_time = 0;    // V: admitted work per weight, >= least backlogged tag
  // Adaptive caps, as of server_time_ms: the tuning switch, and each learned
  // cap as a fraction of the configured one (1 = none learned; the learned
  // cap is fraction * caps) with the script time of its last decrease
  // (0 = never).
  bool adapt = false;
  double learned_requests_fraction = 1, learned_tokens_fraction = 1;
  double learned_requests_decreased_ms = 0, learned_tokens_decreased_ms = 0;
  // Admitted totals per class 1..K (release-corrected): the L2 view, to set
  // against each class's nominal share omega_k / sum(omega) * C_d.
  std::vector<double> class_requests, class_tokens;
  // Running totals per class 1..max(K, 1) (GateClassCounters), and the
  // target's: REJECTs (a priority above the configured classes; a cost
  // above max_cost_*), and decreases of each learned cap.
  std::vector<GateClassCounters> class_counters;
  // Per class 1..max(K, 1): its backlogged tenants (the class record's n);
  // and the active queues (the seen set), also without the queue list.
  std::vector<double> class_backlogged;
  double active_queues = 0;
  double rejects_priority = 0, rejects_too_large = 0;
  double learned_requests_drops = 0, learned_tokens_drops = 0;
  std::vector<GateQueueState> queues;  // active queues, by priority then tenant
};

class GateAdmin {
 public:
  // Owns a Gate on `options` (connects lazily, as Gate does).
  explicit GateAdmin(GateOptions options);
  // Borrows `gate`'s connection; `gate` must outlive this.
  explicit GateAdmin(Gate& gate);
  ~GateAdmin();
  GateAdmin(const GateAdmin&) = delete;
  GateAdmin& operator=(const GateAdmin&) = delete;

  // The Gate this works through (owned or borrowed), e.g. to Admit.
  Gate& gate() { return *gate_; }
  const GateOptions& options() const { return gate_->options(); }
  // Connects now and loads the scripts (Gate::Ping).
  Status Ping() { return gate_->Ping(); }
  // The server holding the target's keys (in a cluster, the node of its
  // slot), named by INFO server as ServerFromInfo does: "valkey 9.1.2".
  // Unavailable when unreachable; Internal when INFO names no version.
  Result<std::string> Server();

  // Hot updates (I2), validated (positive finite numbers; a tenant weight's
  // name as ValidTenantName); effective on the next Admit of any worker.
  // Each is one configure.lua call (mode "update") with the changed part of
  // the declared configuration's JSON (gate_config_json.h).
  Status SetCaps(const GateCaps& caps);
  Status SetPriorityWeights(const std::vector<double>& omega);  // omega_1..omega_K
  Status SetTenantWeight(const std::string& tenant, double weight);
  Status UnsetTenantWeight(const std::string& tenant);
  Status SetTuning(const GateTuning& tuning);

  // Reads the target's configuration and state in one atomic script call
  // (lib/gate/lua/state.lua; O(active queues) work on the server), for tools
  // and tests, not for the admission path.
  Result<GateState> State();
  // The same without the per-queue list (GateState::queues empty): O(classes)
  // on the server, whatever the number of queues (bpctl metrics' scrapes).
  Result<GateState> StateSummary();
  // Deletes every key of the target (configuration included) in one atomic
  // reset_buckets.lua call ("all"; it SCANs the keyspace: O(keys) on the
  // server). For tests and between experiment runs; never while workers admit.
  Status Reset();

  // The target's configuration in one script call (state.lua; O(fields of
  // the state hash) on the server); defaults for tuning fields never set.
  Result<GateConfig> Config();
  // Replaces the whole configuration in one atomic configure.lua call (mode
  // "declare", given GateConfigToJson(config)): caps, priority weights and
  // tuning are written, and priority classes and tenant weights absent from
  // `config` are deleted. Validated first (ValidateGateConfig): on
  // InvalidArgument nothing is written.
  Status ReplaceConfig(const GateConfig& config);
  // Drops the bucket and queue state (L1 levels, tags, backlog, per-queue and
  // per-class counters, outstanding tickets) and keeps the configuration,
  // in one atomic call (lib/gate/lua/reset_buckets.lua "buckets"; it SCANs
  // for the tickets: O(keys) on the server): State() then reads empty
  // buckets at time 0, which the next admission refills to full, as a cold
  // start does. Tickets issued later are never touched; releases of dropped
  // tickets are no-ops.
  Status ResetBuckets();
  // Drops the learned caps of the adaptive rule ('ad', and the header rule's
  // window anchor, outside rate and margin 'ah'; the configured caps apply
  // from the next admission); configuration and bucket state stay. One
  // reset_buckets.lua call ("learned").
  Status ResetLearned();
  // What Admit would answer now, changing nothing of the target: admit.lua
  // runs on a scratch copy of the target's keys (lib/gate/lua/dry_run.lua:
  // same hash slot, copied in one call, expiring after 60 s), which is
  // deleted afterwards (another call). Three script calls in all. Counts in
  // no counter; the ticket of an ADMIT is cleared. Errors give FAIL_OPEN with
  // the reason, as Admit does.
  Decision DryRunAdmit(const AdmitRequest& request);

 private:
  Result<GateState> ReadGateState(bool summary);  // State, StateSummary

  std::unique_ptr<Gate> owned_;  // null when borrowed
  Gate* gate_;
  Gate::Impl* impl_;  // gate_'s
};

}  // namespace bp
