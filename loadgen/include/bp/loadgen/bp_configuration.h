// The bp configuration: the Backpressure admission gate in the worker, in
// front of each call (paper sections IV-V, SPEC section 4):
//   Admit(tenant, priority, cost {1, prompt tokens}, max_tokens)
//   DEFER(delta)  -> the slot is freed, a durable timer of delta, re-enqueue;
//   ADMIT(ticket) -> one call; then Release(ticket, actual usage);
//   a 429 that still happens, or a 503 / 529 overload -> Release reporting
//                    the outcome (429: bound, retry-after, rate-limit
//                    headers: the gate's adaptive caps), then deferred on a
//                    durable timer (slot freed) by its retry header, else the
//                    wait stated in its message, else a backoff
//                    (upstream_wait.h BpActionForAnswer), never retried in
//                    place; x-should-retry: false -> the activity fails;
//   FAIL_OPEN     -> the call proceeds ungated (invariant I3);
//   REJECT        -> the activity fails (its cost can never fit).
// Gate calls block (hiredis, ~0.2-2 ms), so they run on a small pool of
// threads (gate_pool.h), each with its own bp::Admission (in a run a
// bp::Gate with its own connection, as each worker of a fleet has one);
// answers come back to the engine's io thread with asio::post. Release is
// fire-and-forget on the same pool; the releases still queued when the run
// ends are drained for at most BpOptions::release_drain_ms, and those left
// (failed or past the deadline) are counted in RunRecords::gate_unreleased.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/loadgen/engine.h"
#include "bp/loadgen/gate_pool.h"
#include "bp/loadgen/time_scale.h"

namespace bp::loadgen {

struct BpOptions {
  std::string valkey_url = "redis://127.0.0.1:6379";
  std::string target;  // fresh per run (stale state of earlier runs is ignored)
  GateAblation ablation = GateAblation::kNone;
  int gate_threads = 4;
  int command_timeout_ms = 100;  // real ms; past this, Admit fails open
  // Real ms: after a timeout or connection error a gate thread's calls fail
  // open at once for this long, then one probes (GateOptions::
  // breaker_cool_off_ms; 0 = no breaker).
  int breaker_cool_off_ms = 1000;
  // Real ms the end of a run waits for queued releases (GatePool::Stop).
  int release_drain_ms = 2000;
  // false: the target was configured by a cooperating process (shard.h);
  // MakeBpConfiguration only checks that Valkey answers and writes nothing.
  bool configure = true;
  // The target's declared configuration (loadgen --gate-config FILE): what
  // is written at the start and what every gate thread re-seeds the target
  // from when the store lost its state (GateOptions::declared_config).
  // nullptr: GateConfigOf(workload, scale).
  std::shared_ptr<const GateConfig> declared_config;
  // Real ms: bp::AdmitRequest::ahead_ms of every Admit (0 = never admitted
  // ahead). A call admitted ahead waits its start_in_ms with its slot held,
  // then calls the upstream, as a worker honouring the field would.
  int64_t admit_ahead_ms = 0;
};

// The declared configuration a workload implies: caps scaled (rates *
// gate_cap_factor * speedup, burst_s / speedup), with gate_adapt the
// tuning's adaptive-caps fields (times / speedup), priority weights omega
// and each tenant's w_t; every other field at the gate's defaults.
GateConfig GateConfigOf(const Workload& workload, const TimeScale& scale);

// What Release reports for an upstream answer: kThrottled for an upstream
// 429 (bound from the error type; retry-after paper ms -> real ms), else kOk;
// the rate-limit headers as received (OpenAI's x-ratelimit-* or
// Anthropic's anthropic-ratelimit-*, http_client.h; real ms), -1 where absent.
UpstreamReport ReportOf(const CallResult& result, const TimeScale& scale);

// The closing warning of a bp run whose gate calls failed open or whose
// target was re-seeded, naming the causes from the records' counts, e.g.
//   "<label>: 7743 gate calls failed open, ungated (target not configured
//   7743); the circuit breakers opened 0 times"
// with "; the target was re-seeded N times from the declared configuration
// (the store lost its state)" when it was. "" when neither happened.
std::string GateFailOpenSummary(const RunRecords& records, const std::string& label);

// "bp" | "bp-no-drf" | "bp-no-priority" -> ablation; InvalidArgument otherwise.
Result<GateAblation> BpAblationOf(const std::string& configuration);

// Connects, then writes the run's declared configuration in one
// ReplaceConfig (options.declared_config, else GateConfigOf), and gives it to
// every gate thread.
// Unavailable if Valkey does not answer (a run is not started fail-open).
// With options.configure false only the Ping is done.
Result<std::unique_ptr<Configuration>> MakeBpConfiguration(const Workload& workload,
                                                           const TimeScale& scale,
                                                           BpOptions options);

// The gate-state part of MakeBpConfiguration alone (connects, pings, and with
// options.configure writes the declared configuration), with no worker threads: for the process
// that configures a target shared by several loadgen processes. Same errors.
Status ConfigureGateTarget(const Workload& workload, const TimeScale& scale,
                           const BpOptions& options);

// The bp configuration on `threads` (at least 1) admissions from `make`
// (AdmissionFactory, gate_pool.h), writing no gate state:
// MakeBpConfiguration uses it with one bp::Gate per thread; tests pass a fake
// Admission. Each Admission is called from its own thread only. At the end
// of a run queued releases are drained for at most release_drain_ms.
// feed_headers: a served call's release carries its rate-limit headers
// (UpstreamReport's remaining and reset, the header rule); false sends them
// with 429s only (Workload::gate_adapt_headers). admit_ahead_ms: as
// BpOptions::admit_ahead_ms.
std::unique_ptr<Configuration> MakeBpConfigurationOn(const AdmissionFactory& make, int threads,
                                                     int release_drain_ms = 2000,
                                                     bool feed_headers = true,
                                                     int64_t admit_ahead_ms = 0);

}  // namespace bp::loadgen
