// Prometheus exposition of gate targets (`bpctl metrics`, docs/bpctl.md
// "metrics"): the scripts' running totals and the gauges an operator
// alerts on, one series set per target, in the text format 0.0.4.
//
// Names follow Prometheus' conventions: counters end in _total, every
// series has a `target` label, per-class series a `class` label ("1" is the
// highest priority). Per-tenant series are opt-in (MetricsOptions): 10 000
// tenants would otherwise be 10 000 x N series per target.
//
// Sources: the per-class counters and the target's REJECT and learned-cap
// drop counters are kept by admit.lua and release.lua (prelude.lua, NTAIL)
// and reset with the buckets (bpctl reset; Prometheus' rate() handles a
// reset). Per-tenant counters are the active queue's admits/defers/lent:
// a queue evicted after queue_ttl_ms idle starts again at 0.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bp/gate_admin.h"

namespace bp::bpctl {

struct MetricsOptions {
  // Per-tenant series for the `tenants_top` queues with the most admits of
  // each target (0 = none), and for every queue of the tenants listed.
  size_t tenants_top = 0;
  std::vector<std::string> tenants;
};

// One target as a scrape found it: `up` when its state was read (per-class
// series need GateAdmin::StateSummary's fields; per-tenant ones the queues
// of GateAdmin::State).
struct TargetMetrics {
  std::string target;
  bool up = false;
  GateState state;
};

// The exposition of `targets` (any order; printed in the given order),
// with `scrape_s` the seconds the scrape took (bp_gate_scrape_duration_seconds).
std::string RenderMetrics(const std::vector<TargetMetrics>& targets,
                          const MetricsOptions& options, double scrape_s);

// The queue indices of state.queues that get per-tenant series: the
// options.tenants_top with the most admits (ties by priority, then tenant),
// then those of the listed tenants, each once, in state order.
std::vector<size_t> TenantSeriesQueues(const GateState& state, const MetricsOptions& options);

}  // namespace bp::bpctl
