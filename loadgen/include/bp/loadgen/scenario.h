// Scenarios: timed events in a workload. A workload may
// carry an `events` list; each event happens at a paper-time offset from the
// run start (`at_s`, divided by --speedup like every other duration) and
// changes the world the configurations run in:
//   join            a tenant starts its workflows at at_s instead of at 0;
//   leave           a tenant starts nothing new from at_s on; its activities
//                   not yet on a worker slot are cancelled (not failures);
//   upstream_limits loadgen PUTs new `limits` (mockapi's shape, paper units,
//                   scaled like the workload's) to mockapi's /admin/config;
//                   the gate is NOT told (the paper's assumption A1 broken);
//   tenant_weight   w_t changes through the gate's admin API (bp runs only;
//   class_omega     omega_k likewise); the same calls bpctl makes;
//   outside_traffic an ungated client sends `share` of the request cap in
//                   force straight to the upstream (A2 broken); share 0 stops
//                   it; its calls are recorded apart and excluded from fairness;
//   state_outage    the Valkey server loadgen was given (--valkey-pid or
//                   --valkey-pidfile) goes away for duration_s: `pause`
//                   (SIGSTOP, then SIGCONT) or `stop` (SIGTERM, then the same
//                   command line is started again, empty without
//                   persistence; the gate threads re-seed the target from
//                   their declared configuration, docs/store-restart.md).
// Every event may also carry `label` (figure and report text), `window_s`
// (default 20) and `settle_s` (default 0): the report measures the window
// [event + settle_s, event + settle_s + window_s] (for state_outage counted
// from the restore) against the same length before the event.
//
// Parsing is strict, with messages "events[i].field: what is wrong" (the
// workload prefixes its file name). Values are plain data, safe to share
// read-only between threads.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bp/loadgen/time_scale.h"
#include "bp/status.h"

namespace bp::loadgen {

struct TenantSpec;

enum class EventType {
  kJoin,
  kLeave,
  kUpstreamLimits,
  kTenantWeight,
  kClassOmega,
  kOutsideTraffic,
  kStateOutage,
};
// "join" | "leave" | "upstream_limits" | "tenant_weight" | "class_omega" |
// "outside_traffic" | "state_outage"
const char* EventTypeName(EventType type);

enum class OutageMode { kPause, kStop };

// The request rates of an upstream's limits, paper units: per dimension the
// sum of limit / window_s (what the gate, tn and litellm use as C_d).
struct UpstreamCaps {
  double requests_per_s = 0;
  double tokens_per_s = 0;  // 0: no token limit (single-resource workload)
  // The largest call the upstream serves, per dimension (a count, unchanged
  // by the speedup): the least capacity among that dimension's limits
  // (`limit`; quantized: limit * quantum_s / window_s, its per-quantum
  // share). A larger call gets "Request too large". The gate's max_cost_*.
  double max_requests_per_call = 0;
  double max_tokens_per_call = 0;  // 0: no token limit
};

// Derives the caps of a mockapi `limits` array, read by mockapi's own reader
// (bp/limit_json.h, with dimension, limit and window_s required), so a limit
// mockapi refuses is refused here with mockapi's reason. `path` prefixes
// messages ("upstream.limits"). InvalidArgument when empty, malformed or
// without a requests limit.
Result<UpstreamCaps> CapsOfLimits(const nlohmann::json& limits, const std::string& path);

struct ScenarioEvent {
  EventType type = EventType::kJoin;
  double at_s = 0;       // paper seconds since run start, >= 0, < run length cap
  std::string label;     // for humans; defaults to a text made from the fields
  double window_s = 20;  // report window length, paper s (> 0)
  double settle_s = 0;   // report window starts this long after the event (>= 0)

  std::string tenant;                    // join, leave, tenant_weight: an id of tenants[]
  int tenant_index = -1;                 // its index in tenants[]
  double weight = 0;                     // tenant_weight: new w_t (> 0)
  int priority = 0;                      // class_omega: class k (1..K)
  double omega = 0;                      // class_omega: new omega_k (> 0)
  nlohmann::json limits;                 // upstream_limits: mockapi limits array, paper units
  UpstreamCaps caps;                     // upstream_limits: derived from limits
  double share = 0;                      // outside_traffic: fraction of the request cap, [0, 1)
  int64_t prompt_tokens = 100;           // outside_traffic: its requests' prompt size
  int64_t max_tokens = 50;               // outside_traffic: its requests' max_tokens
  double duration_s = 0;                 // state_outage: paper s until the restore (> 0)
  OutageMode mode = OutageMode::kPause;  // state_outage
};

// Parses `events` (a JSON array) against the workload's tenants, its number of
// priority classes K and its run length cap (paper s). Checks: known type and
// fields only; at_s in [0, run_length_cap_s); tenants exist; a tenant joins at
// most once and leaves at most once, and not before it joined; state outages
// do not overlap. Returns the events in file order.
Result<std::vector<ScenarioEvent>> ParseEvents(const nlohmann::json& events,
                                               const std::vector<TenantSpec>& tenants,
                                               int priority_classes, double run_length_cap_s);

// One timed action of a run: an event's start (phase 0) or a state outage's
// restore (phase 1), at real microseconds since the run start.
struct ScheduledAction {
  int64_t at_us = 0;
  int event_index = 0;  // index into the events vector
  int phase = 0;        // 0 = the event; 1 = the restore of a state_outage
};

// The actions of `events` at `scale`: at_us = round(at_s * 1e6 / speedup)
// (restore: (at_s + duration_s) * 1e6 / speedup), sorted by time;
// equal times keep the events' file order, with restores after starts.
std::vector<ScheduledAction> ScheduleEvents(const std::vector<ScenarioEvent>& events,
                                            const TimeScale& scale);

// "join p1-late", "upstream limits: 30 req/s", "weight a = 3", ... (the label
// when one was given).
std::string EventText(const ScenarioEvent& event);

}  // namespace bp::loadgen
