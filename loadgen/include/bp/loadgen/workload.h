// A workload: who calls the rate-limited API, how much, through how many
// worker slots, against which upstream limits (SPEC section 5, paper Table II).
//
// Workloads are JSON files under configs/workloads/ (fields documented in
// configs/workloads/README.md). Every number in a Workload is in paper units:
// the run applies `speedup` when it turns durations into real timers (divide)
// and rates into real rates (multiply), and reports results in paper units.
//
// Parsing is strict: unknown fields, missing required fields, wrong types and
// out-of-range values are errors whose message names the file and the field
// ("configs/workloads/x.json: tenants[2].concurrency: must be an integer >= 1").
// Workload values are plain data, safe to share read-only between threads.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bp/gate.h"
#include "bp/gate_ranges.h"
#include "bp/loadgen/scenario.h"
#include "bp/status.h"

namespace bp::loadgen {

// Tenant weights w_t and class weights omega_k in a workload (tenants[].weight,
// priority_weights, tenant_weight and class_omega events) lie in the gate's
// range, [kMinGateWeight, kMaxGateWeight] (bp/gate_ranges.h, which says why).

struct TenantSpec {
  std::string id;                   // [A-Za-z0-9_.-]{1,128} (the gate's tenant id rule)
  int priority = 1;                 // class k, 1 = highest (Temporal priority key)
  double weight = 1.0;              // w_t, in [kMinGateWeight, kMaxGateWeight]
  int concurrency = 1;              // workflows running at once
  int workflows = 1;                // workflows to run in total
  int activities_per_workflow = 1;  // LLM calls per workflow, in sequence
  int64_t prompt_tokens = 100;      // prompt size, bp::TextOfTokens(prompt_tokens)
  int64_t max_tokens = 50;          // the request's max_tokens
  // Streaming (docs/loadgen.md "Streaming"): this share of the tenant's
  // activities, in [0, 1], calls with stream: true and
  // stream_options.include_usage (`"stream": true` is a share of 1); of those,
  // cancel_share in [0, 1] disconnect after cancel_after_events token events.
  // Shares are spread exactly per tenant: activity n (the tenant's n-th
  // first send, from 0) streams when floor((n+1) s) > floor(n s).
  double stream_share = 0;
  double cancel_share = 0;
  int64_t cancel_after_events = 8;
};

// Ranges of workload fields the parser checks (paper units).
inline constexpr double kMaxDispatchLatencyMs = 3.6e6;  // dispatch_latency_ms: one hour
inline constexpr double kMinQueueTtlS = 1e-3;           // gate.queue_ttl_s
inline constexpr double kMaxQueueTtlS = 86400;          // gate.queue_ttl_s: one day

struct Workload {
  std::string name;
  std::string description;
  std::string source;  // the file it was read from (for messages)
  std::vector<TenantSpec> tenants;
  int slots = 32;                   // worker slots S of the one worker
  double run_length_cap_s = 300;    // the run stops here even if work is left
  double dispatch_latency_ms = 20;  // task queue -> worker (schedule-to-start), [0, 3.6e6]
  std::vector<double> priority_weights = {0.5, 0.3, 0.2};  // omega_1..omega_K, each in
                                                           // [kMinGateWeight, kMaxGateWeight]
  GateMode gate_mode = GateMode::kReconcile;
  double gate_burst_s = kDefaultGateBurstS;  // L1 burst, seconds of cap
  // A queue idle this long (paper s) is evicted from the gate (GateOptions::
  // queue_ttl_ms = this * 1000 / speedup); it must exceed the longest fair
  // wait of a backlogged tenant, or its tag is dropped while it waits.
  // In [kMinQueueTtlS, kMaxQueueTtlS].
  double gate_queue_ttl_s = 10;
  // The gate's caps are the upstream caps times this (> 0): 2 models a
  // provider that halved its limits without telling the operator.
  double gate_cap_factor = 1.0;
  // Adaptive caps (bp::GateTuning adapt*): off keeps the paper's gate; times
  // in paper seconds (scaled by the speedup like every duration).
  bool gate_adapt = false;
  double gate_adapt_beta = kDefaultGateAdaptBeta;
  double gate_adapt_recover_s = kDefaultGateAdaptRecoverMs / 1000;
  double gate_adapt_window_s = kDefaultGateAdaptWindowMs / 1000;
  int gate_adapt_min_429 = static_cast<int>(kDefaultGateAdaptMin429);
  // With adapt: the workers feed every served call's rate-limit headers
  // (remaining, reset) to the gate (the header rule); false feeds only the
  // 429s (AIMD alone), for comparison.
  bool gate_adapt_headers = true;
  // The gate's share rule and class policy (bp::GateTuning share_rule,
  // class_policy; docs/gate.md "The rule"). The metrics' ideal follows
  // share_rule: hierarchical unless gate.share_rule is "flat".
  bool gate_flat_share = false;
  bool gate_strict_classes = false;
  // The mockapi section (docs/mockapi-config.md): limits, completion_tokens,
  // latency, count_rejected, token_accounting, dialect, scope, model, profile,
  // overload (docs/provider-profiles.md). Paper units: it is PUT to
  // /admin/config with "speedup" and mockapi scales its durations.
  nlohmann::json upstream;
  // Caps of the upstream in paper units, derived from upstream.limits
  // (CapsOfLimits: the rate C_d the gate, the tn throttle and litellm use).
  UpstreamCaps caps;
  // Timed events of a scenario (scenario.h), file order; empty for the
  // paper's static workloads. Validated against tenants and run length cap.
  std::vector<ScenarioEvent> events;

  int priority_classes() const { return static_cast<int>(priority_weights.size()); }
  int64_t total_activities() const;
  // True when an event makes tenant `index` join later than the run start.
  bool JoinsLater(int index) const;
  // True when no call of tenant `index` can ever be served: 1 request or
  // prompt_tokens + max_tokens tokens is above the largest call the upstream
  // serves (UpstreamCaps::max_*_per_call) under `caps` and under every
  // upstream_limits event's caps (TenantInfo::unservable). False for a bad index.
  bool Unservable(int index) const;
};

// Parses and validates a workload document. `source` names it in messages.
Result<Workload> ParseWorkload(const nlohmann::json& doc, const std::string& source);
// Reads and parses a file; NotFound if unreadable, InvalidArgument if bad.
Result<Workload> LoadWorkload(const std::string& path);

// The gate caps a bp run writes for `workload` at `speedup` (real time:
// ConfigureGateTarget): rates = caps * gate_cap_factor * speedup, burst_s =
// gate_burst_s / speedup, max costs = the largest call the upstream limits
// admit (UpstreamCaps::max_*_per_call, not scaled).
GateCaps GateCapsOf(const Workload& workload, double speedup);
// InvalidArgument when GateCapsOf(workload, speedup) falls outside the gate
// configuration ranges of bp/gate_ranges.h (kMinGateRpm.., the ranges bpctl
// enforces), naming the file, the workload field it comes from, the value
// and the range, e.g. "w.json: gate.burst_s: 1e+300 gives the gate a burst_s
// of 1e+300, must be in [0.001, 3600]". A speedup other than 1 is named too.
// Run once per workload, by loadgen's plan before any bp run (cli_run.cpp),
// at the run's speedup; ParseWorkload and ConfigureGateTarget leave it to
// that one check (a caller that skips the plan calls it itself).
Status CheckGateRanges(const Workload& workload, double speedup);

}  // namespace bp::loadgen
