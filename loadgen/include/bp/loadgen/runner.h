// Runs one (workload, configuration, repeat) against a running mockapi and
// Valkey and returns its records (SPEC section 5). Steps:
//   1. PUT the workload's upstream section with "speedup" (mockapi divides
//      its durations, RealTimePatch) to mockapi's /admin/config: limits are replaced, so
//      the limiter state starts fresh for every run;
//   2. for bp configurations: a fresh gate target
//      "<workload>-<configuration>-r<repeat>-<unix ms>", caps (rates * speedup,
//      burst_s / speedup), priority weights and tenant weights (MakeBpConfiguration);
//   3. the engine runs until all work is done or the run length cap passed,
//      with a live progress line on stderr if asked.
// Blocking; runs on the calling thread (plus the gate pool for bp). Errors:
// InvalidArgument (bad configuration name, bad URL), Unavailable (mockapi or
// Valkey not answering). Not for concurrent use against the same mockapi.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bp/gate_admin.h"
#include "bp/loadgen/litellm_limiter.h"
#include "bp/loadgen/records.h"
#include "bp/loadgen/retry_policy.h"
#include "bp/loadgen/workload.h"
#include "bp/status.h"

namespace bp::loadgen {

// --gate-breaker-ms's upper bound, real ms: a cool-off this long already
// ungates a minute of the run after one gate timeout; INT_MAX would let
// one pause ungate the rest of the run. 0 = no breaker.
inline constexpr int kMaxGateBreakerMs = 60000;
// --gate-timeout-ms's upper bound, real ms: a gate call is one Valkey round
// trip, so a minute is already far past any answer worth waiting for.
inline constexpr int kMaxGateTimeoutMs = 60000;
// --admit-ahead-ms's upper bound, paper ms: the gate admits at most four
// refills of a call's own cost ahead whatever is asked, and its longest
// DEFER is a minute.
inline constexpr int kMaxAdmitAheadMs = 60000;
// --valkey-pid's upper bound: Linux's PID_MAX_LIMIT (2^22).
inline constexpr int kMaxValkeyPid = 4194304;

struct RunOptions {
  std::string configuration = "naive";  // naive|tn|litellm|bp|bp-no-drf|bp-no-priority
  int repeat = 0;
  double speedup = 1.0;  // > 0 (SPEC section 5)
  uint64_t seed = 1;     // jitter; the run uses seed + repeat
  std::string upstream_url = "http://127.0.0.1:8080";
  std::string valkey_url = "redis://127.0.0.1:6379";
  bool configure_upstream = true;       // false: leave mockapi's config alone (tests)
  bool progress = false;                // live line on stderr once a second
  int gate_threads = 4;                 // bp: threads (and Valkey connections) for gate calls
  int gate_command_timeout_ms = 100;    // bp: real ms before Admit fails open, in
                                        // [1, kMaxGateTimeoutMs] (--gate-timeout-ms)
  int gate_breaker_cool_off_ms = 1000;  // bp: real ms in [0, kMaxGateBreakerMs]
                                        // (BpOptions::breaker_cool_off_ms)
  // bp: paper ms in [0, kMaxAdmitAheadMs], the longest wait before the
  // upstream call a worker keeps when the gate admits it ahead of the
  // bucket's refill (bp::AdmitRequest::ahead_ms, sent as real ms rounded
  // up); 0 = never admitted ahead. 200: a worker that keeps a wait of two
  // of the paper's 0.1 s buckets. Deeper waits cut Admit calls further but
  // fill the cap more, and fixed provider windows answer with 429s
  // (reservation: 1.0 % at 200, 2.2 % at 400, 0.8 % at 0; docs/results.md,
  // "Admit ahead").
  int admit_ahead_ms = 200;
  SdkRetryAfterBound sdk_retry_after_bound = SdkRetryAfterBound::kInclusive60s;
  // The Valkey server that scenario state_outage events pause or stop: its
  // pid, or a pid file read at each outage (scenario.h). 0 / empty: none.
  int valkey_pid = 0;
  std::string valkey_pidfile;
  LitellmOptions litellm;   // litellm: limiter v3 (default) or v1, TPM counts output or total
  double tn_rps_limit = 0;  // tn: queue-rps-limit, paper req/s; 0 = the request cap
  // Cooperating processes (shard.h). gate_target: use this target instead of
  // a fresh one; configure_gate false: it was configured by another process
  // (only a Ping here); start_at_unix_ms > 0: the engine starts at this wall
  // clock time (system_clock), after the setup (warning if it is late; with
  // `progress`, one line saying how long it waits when it is ahead).
  std::string gate_target;
  bool configure_gate = true;
  // bp: the target's declared configuration (--gate-config FILE, the JSON of
  // `bpctl export`, read by bp::ReadGateConfigFile): written at the start and
  // re-seeded by the gate threads when the store lost its state
  // (docs/store-restart.md). nullptr: derived from the workload
  // (GateConfigOf; for a run over processes, from the whole workload).
  std::shared_ptr<const GateConfig> gate_config;
  int64_t start_at_unix_ms = 0;
  // "part I/N" when this process runs part of a run (RunShard sets it):
  // added to the label of the progress and log lines, whose counts are the
  // part's only.
  std::string part;
};

Result<RunRecords> RunOnce(const Workload& workload, const RunOptions& options);

// Step 1 alone: PUTs the workload's upstream section, scaled by
// options.speedup, to options.upstream_url's /admin/config (for the process
// that sets up a run shared by several loadgen processes, shard.h). Same errors.
Status ConfigureUpstream(const Workload& workload, const RunOptions& options);

// Checks what can be checked before any run starts: speedup in (0, 1000],
// upstream_url (ParseHttpUrl) and valkey_url (bp::ParseValkeyUrl) well formed,
// gate_threads in [1, 256], gate_command_timeout_ms in [1, kMaxGateTimeoutMs],
// gate_breaker_cool_off_ms in [0, kMaxGateBreakerMs]. InvalidArgument
// naming the flag ("--upstream: ...") otherwise. Does not connect.
Status ValidateRunOptions(const RunOptions& options);

// Checks before any run that `speedup` fits `workload`: the upstream section
// and every upstream_limits event's limits, scaled to real time as mockapi
// scales them (durations / speedup: limits[].window_s and quantum_s,
// latency.*_ms, overload.retry_after_ms), are read by mockapi's own config
// reader (bp::mockapi::RealTimePatch, ConfigFromJson over the defaults), so
// what the PUT would refuse is refused here. A section mockapi refuses at
// speedup 1 too is left for the PUT to report (it may depend on the running
// mockapi's config). InvalidArgument naming the flag, the value, the file
// and mockapi's reason, e.g. "--speedup 1e-07: configs/workloads/x.json:
// upstream.latency.min_ms must be a number in [0, 3.6e+06] once divided by
// the speedup 1e-07, i.e. in [0, 0.36] as sent, got 50".
Status ValidateSpeedupFor(const Workload& workload, double speedup);

// "naive,tn,bp" -> its names, each one of ConfigurationNames(). InvalidArgument
// for an empty list, an empty item ("naive,,bp"), an unknown or a repeated name.
Result<std::vector<std::string>> ParseConfigurationList(const std::string& text);

}  // namespace bp::loadgen
