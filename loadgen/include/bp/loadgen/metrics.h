// Metrics of one loadgen run, computed from its RunRecords (SPEC section 6,
// paper section VI). Everything here is a pure function of its arguments: no
// I/O, no globals, safe to call from any thread on distinct or const inputs.
//
// Units: rates are in paper units (requests or tokens per paper second, i.e.
// real rate / speedup); durations are in paper milliseconds or seconds
// (real duration * speedup), as the field name says.
//
// Definitions and their sources: Jain's index, percentiles and confidence
// intervals in statistics.h; the WFQ and weighted DRF ideal shares in
// fairness.h; achievement ratio r_q = observed_q / ideal_q, achievement-Jain
// = J(r) (paper section VI-A); DRF Jain = J(r) with dominant-share service.
// The queues of the shares and of both indices are the tenants with demand:
// work that was not cancelled (a scenario tenant that left before any of its
// calls got a slot, e.g. at 0 s, is none), except unservable tenants
// (TenantInfo::unservable, never served: reported apart). The shares split
// the capacity left to the tenants: per dimension the cap minus what the
// outside client's OK answers used (RunMetrics::capacity_left_*).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bp/loadgen/fairness.h"
#include "bp/loadgen/records.h"
#include "bp/loadgen/statistics.h"
#include "bp/loadgen/vtc.h"

namespace bp::loadgen {

// ---------------------------------------------------------------- run metrics

// Latencies of one group of calls, in paper milliseconds.
struct LatencySummary {
  int64_t count = 0;
  double mean_ms = 0, p50_ms = 0, p95_ms = 0, p99_ms = 0;
};

// Streamed calls of one group (AttemptRecord::stream, ttft_us, itl_us), paper
// ms, over streamed 200 answers: ttft is what the workflow sees, from the
// activity's first schedule (ActivityRecord::scheduled_us: queue, gate
// waits and retries included) to the first token; http_ttft from the
// answer's request send to its first token; itl each answer's mean gap
// between token events (answers with two or more). cut: streams the caller
// cut short.
struct StreamMetrics {
  int64_t streamed = 0, cut = 0;
  LatencySummary ttft, http_ttft, itl;
};

struct TenantMetrics {
  std::string id;
  int priority = 1;
  double weight = 1;            // w_t * omega_k used for the ideal share
  int64_t ok_calls = 0;         // whole run
  int64_t ok_calls_window = 0;  // OK answers inside the contention window
  double ok_rps = 0;            // OK req/s over the contention window
  double tokens_per_call = 0;   // mean prompt + completion tokens of OK calls
  double ideal_rps = 0;         // WFQ (one cap) or weighted DRF (two caps) share
  double achievement = 0;       // ok_rps / ideal_rps
  double dominant_share = 0;    // observed: sum over OK calls in the window of
                                // max_d cost_d / C_d, per paper second
  double ideal_dominant_share = 0;
  double drf_achievement = 0;  // dominant_share / ideal_dominant_share
  double finish_s = -1;        // last activity completed (paper s; -1 never)
  // Failed activities (completed, not OK) by ActivityRecord::fail_cause;
  // unfinished: scheduled (recorded) but never completed, cancelled ones
  // aside; not_started: never scheduled by the run end (total_activities -
  // recorded; a scenario tenant with more work than its run length, or a run
  // stopped at its length cap).
  int64_t failed_calls = 0;
  std::map<std::string, int64_t> failed_by_cause;
  int64_t unfinished = 0;
  int64_t not_started = 0;
  // First OK answer after the tenant's start, paper s (-1: never served).
  double first_ok_wait_s = -1;
  // No call of it can ever be served (TenantInfo::unservable) and none was:
  // no ideal share, not in Jain's indexes, not counted as never served.
  bool unservable = false;
  StreamMetrics stream;
};

// Waits of one cause in a class: how many, and their total in paper ms.
struct WaitTotal {
  int64_t count = 0;
  double total_ms = 0;
};

struct ClassMetrics {
  int priority = 1;
  double ok_rps = 0;  // contention window, summed over its tenants
  double ideal_rps = 0;
  LatencySummary http;             // first send -> final answer, OK activities
  LatencySummary end_to_end;       // scheduled -> completed, OK activities
  double slot_ms_per_ok_call = 0;  // slot-held time / OK calls (all executions)
  double in_activity_ms = 0;       // mean slot time of the succeeding execution
  LatencySummary workflow;         // workflow start -> end, completed workflows
                                   // (values in ms; divide by 1000 for seconds)
  // Mean completion time of the completed workflows counted from the run's
  // start (paper s; -1 when none completed): the paper's "mean workflow
  // completion" (Section VI-C a, 57.0 s for P1 and 104.7 s for P3 under bp),
  // which grows with a class's wait for its turn, where `workflow` does not.
  double workflow_end_mean_s = -1;
  // Where the time goes, all activities of the class:
  // durable timers by DeferralRecord::cause ("fair", "l1:requests",
  // "l1:tokens", "429", ...), timer lengths summed ...
  std::map<std::string, WaitTotal> deferrals_by_cause;
  // ... and upstream 429 answers followed by another attempt of the same
  // activity, summed from the 429 answer to that attempt's send (in place for
  // the SDK; for bp this spans the "429" timer, the queue and the gate).
  WaitTotal retries_429;
  // Activities whose end-to-end time is at or above the class p95 (the tail):
  // how many, and their deferral timers by cause (paper ms).
  int64_t tail_activities = 0;
  std::map<std::string, WaitTotal> tail_deferrals_by_cause;
  StreamMetrics stream;
};

// OK requests per second per tenant per time bucket (Fig. 4).
struct ServiceHeatmap {
  double bucket_s = 1;                      // paper seconds per bucket
  std::vector<std::string> tenants;         // row labels "id P<k>", P1 first
  std::vector<int> tenant_index;            // row -> RunRecords::tenants index
  std::vector<std::vector<double>> ok_rps;  // [row][bucket]
  std::vector<std::vector<bool>> starved;   // [row][bucket]: demand > 0
                                            // (tenant started, not finished)
                                            // and no OK answer in the bucket
};

struct RunMetrics {
  std::string workload, configuration;
  int repeat = 0;
  double speedup = 1;
  double cap_requests_per_s = 0, cap_tokens_per_s = 0;
  // The capacity left to the tenants over the contention window, per
  // dimension: the cap minus the outside client's use of it (scenario
  // outside_traffic; its OK answers in the window, 1 request and their
  // usage tokens each, per second). Equal to the caps without outside
  // traffic. The ideal shares and the dominant shares use these.
  double outside_requests_per_s = 0, outside_tokens_per_s = 0;
  double capacity_left_requests_per_s = 0, capacity_left_tokens_per_s = 0;

  double contention_window_s = 0;  // run start -> first tenant finished
  double drain_span_s = 0;         // run start -> last activity completed

  int64_t activities = 0, ok_calls = 0;
  int64_t failed_calls = 0;  // activities completed without success (not unfinished ones)
  std::map<std::string, int64_t> failed_by_cause;  // failed_calls split by fail_cause
  int64_t unfinished_activities = 0;               // sum of TenantMetrics::unfinished
  int64_t not_started_activities = 0;              // sum of TenantMetrics::not_started
  // Starvation: the longest first_ok_wait_s over tenants with demand, and how
  // many tenants with demand never got an OK answer (then the max is over the rest).
  double max_first_ok_wait_s = 0;
  int64_t tenants_never_served = 0;
  int64_t tenants_unservable = 0;  // TenantMetrics::unservable, apart from the above
  int64_t cancelled_calls = 0;     // scenario: cancelled when their tenant left
  uint64_t gate_fail_opens = 0;    // bp: Admit calls that failed open (I3)
  // bp: gate_fail_opens by cause, named as bp::FailOpenCauseName ("unreachable",
  // "timed out", "target not configured", "server error"); only causes that
  // occurred. Empty with fail-opens: records that did not count causes.
  std::map<std::string, uint64_t> gate_fail_opens_by_cause;
  uint64_t gate_reseeds = 0;       // bp: re-seeds of the target (RunRecords)
  uint64_t gate_breaker_opens = 0; // bp: circuit breaker opens (RunRecords)
  uint64_t gate_release_errors = 0; // bp: releases that failed (RunRecords)
  uint64_t gate_unreleased = 0;    // bp: releases left at the end (RunRecords)
  std::string gate_server;         // bp: "valkey 9.1.2" (RunRecords; "" otherwise)
  // bp: duration of each Gate::Admit call on its gate thread (records'
  // GateDecisionRecord::latency_us), in REAL ms, not paper ms: a machine cost.
  LatencySummary gate_admit_real;
  int64_t upstream_responses = 0;  // non-proxy-local attempts with status != 0
  int64_t upstream_429 = 0;
  int64_t proxy_local_429 = 0;       // answered by the litellm gateway itself
  int64_t connection_errors = 0;     // attempts with status 0
  double share_429 = 0;              // upstream_429 / upstream_responses
  double proxy_local_429_share = 0;  // proxy_local_429 / (upstream_responses +
                                     //   proxy_local_429)
  // Upstream 429s by AttemptRecord::bound: containing "token" (tokens,
  // input_tokens, ...), else containing "request", else other.
  int64_t upstream_429_requests_bound = 0, upstream_429_tokens_bound = 0,
          upstream_429_other_bound = 0;
  int64_t deferrals = 0;  // bp DEFERs, all activities

  double ok_rps_window = 0;     // all OK answers in the window / window length
  double mean_ok_rps = 0;       // all OK calls / drain span
  double achievement_jain = 0;  // J over tenants' achievement (request rate)
  double drf_jain = 0;          // J over tenants' drf_achievement
  VtcMeasure vtc;               // VTC's service difference within a class (vtc.h)
  // bp: Gate::Admit answers (every gate decision, fail-opens included) per
  // OK call, whole run; -1 without gate decisions (other configurations).
  double admit_calls_per_ok_call = -1;
  // bp: the share of the gate's ADMITs made ahead of the refill (the worker
  // waited start_in_ms before calling; bp::AdmitRequest::ahead_ms), and their
  // mean start_in_ms in paper ms; -1 without gate ADMITs / admits ahead.
  double admitted_ahead_share = -1;
  double mean_start_in_ms = -1;

  LatencySummary http, end_to_end;  // all classes together
  StreamMetrics stream;             // all classes together
  double slot_ms_per_ok_call = 0;
  double in_activity_ms = 0;

  std::vector<TenantMetrics> tenants;  // same order as RunRecords::tenants
  std::vector<ClassMetrics> classes;   // ascending priority (P1 first)
  ServiceHeatmap heatmap;
};

struct MetricsOptions {
  double heatmap_bucket_s = 0;  // paper seconds; 0 = drain span / 60, rounded
                                // to 1, 2 or 5 times a power of ten
  // Optional demand cap per tenant (index as RunRecords::tenants), paper
  // req/s: the most the tenant could use (e.g. concurrency / service time).
  // Missing or <= 0 = unbounded. A capped tenant's unused share goes to the
  // others (water-filling), so its achievement ratio is not penalised.
  std::vector<double> tenant_demand_cap_rps;
};

// All metrics of SPEC section 6 for one run. Queues are tenants (each has one
// priority class) with total_activities > 0 that are not unservable; the
// ideal share, over the capacity left to the tenants, uses weights
// w_t * omega_k and per-tenant costs {1 request, mean tokens per OK call}
// over the dimensions with a positive cap (requests only when
// cap_tokens_per_s == 0, so WFQ; else weighted DRF). An OK call is an
// activity with ok = true, counted at its final_answer_us (completed_us if
// that is -1). The contention window is [0, min over tenants of finish_us),
// an unfinished tenant counting as end_us, and so does a tenant whose last
// completed activity failed (ok false: its work ended in failures, e.g.
// every call REJECTed, which must not end the measurement); a tenant that
// left (scenario leave event) does not count. Cancelled activities are
// neither OK nor failed. Records with bad
// indices are skipped. Never fails; an empty run gives zeros.
RunMetrics ComputeRunMetrics(const RunRecords& records, const MetricsOptions& options = {});

// The run's headline numbers as flat (name, value) pairs, for aggregation
// over repeats and for the comparison table. Names are dotted snake_case:
// "share_429", "achievement_jain", "drf_jain", "ok_rps_window",
// "mean_ok_rps", "slot_ms_per_ok_call", "in_activity_ms",
// "contention_window_s", "drain_span_s", "proxy_local_429_share",
// "http.p50_ms", "http.p95_ms", "http.p99_ms", "end_to_end.p95_ms",
// "class.P<k>.ok_rps", "class.P<k>.http_p50_ms" / "_p95_ms" / "_p99_ms",
// "class.P<k>.end_to_end_p95_ms", "class.P<k>.workflow_mean_s",
// "class.P<k>.slot_ms_per_ok_call", "tenant.<id>.ok_rps",
// "tenant.<id>.achievement", "tenant.<id>.drf_achievement" (not for an
// unservable tenant), "tenants_unservable" (only when > 0),
// "failed_calls", "unfinished_activities", "tenants_never_served",
// "max_first_ok_wait_s", "failed.<cause>" and "tenant.<id>.failed.<cause>"
// (only causes that occurred), "tenant.<id>.first_ok_wait_s" (if served),
// "share_429_requests_bound", "share_429_tokens_bound" (of all upstream 429s,
// only when there were any), "vtc_max_diff_u" (when a pair of one class was
// backlogged together), "admit_calls_per_ok_call" (bp runs),
// "stream.ttft_p50_ms" / "_p95_ms" / "_p99_ms", "stream.http_ttft_p95_ms",
// "stream.itl_p50_ms" / ... and
// the same per class ("class.P<k>.ttft_p95_ms", ...) and tenant
// ("tenant.<id>.ttft_p95_ms", ...), "stream.cut" (runs with streamed
// calls; latencies only where there were samples). Class latency
// and workflow names appear only when the class had samples.
std::vector<std::pair<std::string, double>> ScalarMetrics(const RunMetrics& m);

}  // namespace bp::loadgen
