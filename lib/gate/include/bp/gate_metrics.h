// bp::GateCountersExposition - a worker's client-side gate counters
// (GateCounters, gate.h: what only the worker knows, such as fail-opens by
// cause, breaker opens and release failures) as Prometheus text exposition
// 0.0.4, for the worker to serve on its own /metrics or to write to a
// node_exporter textfile (docs/gate.md "Client-side counters").
//
// Series, each labelled target="<T>" (and cause= for fail-opens):
//   bp_gate_client_admits_total, _defers_total, _rejects_total,
//   bp_gate_client_fail_opens_total{cause="unreachable|timed_out|unconfigured|server_error"},
//   bp_gate_client_releases_total, _release_errors_total, _timeouts_total,
//   _connection_errors_total, _breaker_opens_total, _breaker_skips_total, _reseeds_total.
// Counters are monotonic per Gate object (since its construction); sum the
// Gates of one target before rendering (loadgen's GatePool does). Pure:
// thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bp/gate.h"

namespace bp {

// One HELP/TYPE block per family, then a sample per (target, counters) pair,
// in the given order. Target names are label-escaped.
std::string GateCountersExposition(
    const std::vector<std::pair<std::string, GateCounters>>& by_target);

}  // namespace bp
