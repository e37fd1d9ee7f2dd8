// What the engine model records while a run goes, and what the metrics read.
// This header is the contract between the engine (engine.h, configurations)
// and the metrics/report code (metrics.h, report.h).
//
// Times are microseconds on one monotonic run clock whose zero is the run's
// start (t = 0 when the first workflow is started). Durations are reported in
// paper units by dividing by nothing here: the engine records real time and
// RunRecords::speedup says how to convert (paper_time = real_time * speedup,
// paper_rate = real_rate / speedup).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bp::loadgen {

// One HTTP attempt from the worker (or the litellm gateway) to the upstream.
struct AttemptRecord {
  int64_t activity_id = 0;
  int tenant_index = 0;     // index into RunRecords::tenants
  int64_t send_us = 0;      // request written
  int64_t done_us = 0;      // response read (or error)
  int status = 0;           // HTTP status; 0 = connection error / timeout
  bool proxy_local = false; // a 429 answered by the litellm gateway itself,
                            // not by the upstream (reported separately)
  std::string bound;        // on 429: "requests" or "tokens" (which limit bound)
  int64_t tokens = 0;       // outside client's OK answers: prompt + completion
                            // tokens of their usage (tenants' calls keep theirs
                            // on ActivityRecord); 0 otherwise
  // Streaming (sse_reader.h): 0 a plain call, 1 a streamed answer read to its
  // end, 2 a stream the caller cut short. Time to first token (send ->
  // first token event) and inter-token latency (the mean gap between its
  // token events: (last - first) / (events - 1)), real us; -1 when not
  // streamed or too few token events. token_events: the events carrying
  // content that were read (StreamStats::token_events; 0 for a plain call).
  int stream = 0;
  int64_t ttft_us = -1;
  int64_t itl_us = -1;
  int64_t token_events = 0;
};

// One activity (one LLM call) from first schedule to final outcome.
struct ActivityRecord {
  int64_t id = 0;
  int64_t workflow_id = 0;
  int tenant_index = 0;
  int64_t scheduled_us = 0;    // first put on the task queue
  int64_t first_send_us = -1;  // first HTTP attempt of the execution that
                               // produced the final answer (-1: never sent)
  int64_t final_answer_us = -1;// that execution's last HTTP response
  int64_t completed_us = -1;   // activity completed (ok or given up)
  bool ok = false;
  int64_t slot_held_us = 0;    // total time this activity held a worker slot,
                               // over all executions
  int64_t in_activity_us = 0;  // slot time of the execution that succeeded
  int executions = 0;          // times it was dispatched to a slot
  int http_attempts = 0;       // upstream attempts, all executions
  int deferrals = 0;           // bp DEFERs (durable timers)
  int throttle_defers = 0;     // bp: upstream 429s (and 503/529 overloads)
                               // deferred on a durable timer (not DEFERs)
  int64_t prompt_tokens = 0;   // estimate sent
  int64_t completion_tokens = 0;  // as reported by usage on the OK answer
  // Why a completed activity failed (ok == false, completed_us >= 0):
  // "gate_reject" (bp REJECT: the provider would refuse the call),
  // "upstream_refused" (bp: the upstream said x-should-retry: false), or
  // "failed"; empty for OK and unfinished activities.
  std::string fail_cause;
  bool cancelled = false;      // its tenant left (scenario) before it got a
                               // slot: completed, neither OK nor a failure
};

// One durable-timer wait of an activity (bp): its slot was freed at at_us and
// the activity re-enters the task queue after delay_us.
struct DeferralRecord {
  int64_t activity_id = 0;
  int tenant_index = 0;
  int64_t at_us = 0;     // timer started (the execution ended)
  int64_t delay_us = 0;  // timer length, real us
  std::string cause;     // a gate DEFER: its binding rule ("fair",
                         // "l1:requests", "l1:tokens"; "unknown" if the gate
                         // named none); "admitted ahead": an ADMIT's start_in_ms
                         // (Outcome::StartLater); "429": an upstream 429/503/529 deferred
};

// One slot acquire/release pair.
struct SlotInterval {
  int64_t activity_id = 0;
  int tenant_index = 0;
  int64_t acquire_us = 0;
  int64_t release_us = 0;
};

struct TenantInfo {
  std::string id;
  int priority = 1;
  double weight = 1.0;        // w_t
  double priority_weight = 1; // omega_k of its class
  int64_t total_activities = 0;
  int64_t start_us = 0;       // first activity scheduled
  int64_t finish_us = -1;     // last activity completed (-1: not finished)
  int64_t join_us = -1;       // scenario: when its join event ran (-1: at start)
  int64_t leave_us = -1;      // scenario: when its leave event ran (-1: never)
  // No call of the tenant can ever be served: its largest charge (1 request;
  // prompt + max_tokens tokens, what the gate's REJECT and a provider's
  // "Request too large" judge) exceeds the largest call the upstream serves
  // (UpstreamCaps::max_*_per_call) under the workload's limits and under
  // every upstream_limits event's. The metrics report such a tenant apart.
  bool unservable = false;
};

// A gate decision as the worker saw it (bp configurations), for the time
// series of the report.
enum class GateVerdict { kAdmit, kDefer, kReject, kFailOpen };
struct GateDecisionRecord {
  int64_t at_us = 0;  // decision back on the io thread
  int tenant_index = 0;
  GateVerdict verdict = GateVerdict::kAdmit;
  int64_t latency_us = -1;  // the Gate::Admit call on its gate thread (real
                            // us, queueing before it excluded); -1: unknown
};

// A scenario action as it ran (scenario.h): event `event_index` of the
// workload's events, phase 0 (the event) or 1 (a state outage's restore).
struct EventRecord {
  int event_index = 0;
  int phase = 0;
  int64_t scheduled_us = 0;  // when it was due
  int64_t at_us = 0;         // when it took effect (after any blocking step)
  bool applied = true;       // false: failed or not applicable (see detail)
  std::string detail;        // what was done, or why not
};

struct WorkflowRecord {
  int64_t id = 0;
  int tenant_index = 0;
  int64_t start_us = 0;
  int64_t end_us = -1;
};

struct RunRecords {
  std::string workload;
  std::string configuration;  // naive | tn | litellm | bp | bp-no-drf | bp-no-priority
  int repeat = 0;
  double speedup = 1.0;
  double cap_requests_per_s = 0;  // paper units
  double cap_tokens_per_s = 0;    // paper units; 0 = single resource
  bool flat_share = false;        // the ideal's rule: flat, else hierarchical
  int slots = 0;
  int64_t end_us = 0;             // run end
  int64_t start_unix_us = 0;      // wall clock (system_clock, us since the
                                  // Unix epoch) at t = 0: aligns the records
                                  // of cooperating processes (shard.h)
  uint64_t gate_fail_opens = 0;   // bp: Admit calls that failed open (I3)
  uint64_t gate_breaker_opens = 0;  // bp: times a gate thread's circuit breaker opened
  // bp: gate_fail_opens by cause (bp::FailOpenCause; they sum to it), and
  // the re-seeds of the target the gate threads wrote (bp::GateCounters).
  uint64_t gate_fail_opens_unreachable = 0, gate_fail_opens_timed_out = 0;
  uint64_t gate_fail_opens_unconfigured = 0, gate_fail_opens_server_error = 0;
  uint64_t gate_reseeds = 0;
  // bp: ADMITs made ahead of the bucket's refill (bp::Decision::start_in_ms
  // > 0) and their start_in_ms summed, in real us: the worker waited that
  // long, its slot held, before calling the upstream.
  uint64_t gate_admits_ahead = 0;
  int64_t gate_start_in_us = 0;
  // bp: releases that did not reach the gate (bp::GateCounters::release_errors:
  // transport failures, server errors, and releases the open breaker skipped);
  // each leaves its call's debit uncorrected until the ticket expires.
  uint64_t gate_release_errors = 0;
  uint64_t gate_unreleased = 0;   // bp: releases queued at the end that the drain
                                  // could not apply (GatePool::StopReport)
  std::string gate_target;        // bp: the run's gate target ("" otherwise)
  std::string gate_server;        // bp: the server holding it, "valkey 9.1.2"
                                  // (GateAdmin::Server; "" otherwise)
  std::vector<TenantInfo> tenants;
  std::vector<ActivityRecord> activities;
  std::vector<AttemptRecord> attempts;
  std::vector<SlotInterval> slots_held;
  std::vector<WorkflowRecord> workflows;
  // Scenario runs (all empty otherwise).
  std::vector<EventRecord> events;                // in the order they ran
  std::vector<AttemptRecord> outside_attempts;    // the ungated outside client
                                                  // (tenant_index -1, activity -1);
                                                  // not in `attempts`
  std::vector<GateDecisionRecord> gate_decisions; // bp: every Admit answer
  std::vector<DeferralRecord> deferrals;  // bp: every durable-timer wait
};

}  // namespace bp::loadgen
