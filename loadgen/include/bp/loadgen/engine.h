// The engine model: a workflow engine's worker in real time on Asio
// (SPEC section 5, paper sections II and V).
//
// Tenants start workflows up to their concurrency until their work is done;
// each workflow runs its activities in sequence; an activity is put on the task
// queue (after the dispatch latency, the schedule-to-start time) whose order the
// configuration chooses, and runs when one of the S worker slots is free. The
// configuration decides how the execution makes its LLM call and how it ends:
//   kOk         the call succeeded: slot freed, the workflow moves on;
//   kRetryLater the call failed for good in this execution (e.g. the SDK gave
//               up): slot freed, the engine's activity retry policy
//               (retry_policy.h) re-schedules it after its backoff;
//   kDefer      slot freed, a durable timer of `defer_us` (holds no slot), then
//               the activity is re-scheduled (bp's DEFER, or a 429 it saw);
//   kFail       terminal failure (bp REJECT): the workflow moves on.
// Every slot acquire/release, HTTP attempt and response is recorded
// (records.h), times on the run clock (real microseconds since start).
//
// Durations in the workload are paper time; the engine divides them by the
// speedup (AfterPaperMs). Thread-safety: an Engine and everything it calls run
// on one io thread (Run's caller); Configuration::Execute may hand work to
// other threads but must come back with asio::post(engine.io(), ...).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bp/clock.h"
#include "bp/loadgen/http_client.h"
#include "bp/loadgen/records.h"
#include "bp/loadgen/retry_policy.h"
#include "bp/loadgen/task_queue.h"
#include "bp/loadgen/time_scale.h"
#include "bp/loadgen/workload.h"

namespace bp::loadgen {

struct EngineOptions {
  TimeScale scale;        // every duration / speedup, every rate * speedup
  uint64_t seed = 1;      // jitter and nothing else
  HttpEndpoint upstream;  // mockapi
  std::string upstream_path = "/v1/chat/completions";
  std::string model = "gpt-4o-mini";
  int http_timeout_ms = 30000;  // real
  bool progress = false;        // live line on stderr, once per second
  std::string label;            // shown in the progress line
  // Which retry-after values the simulated SDK honours (retry_policy.h).
  SdkRetryAfterBound sdk_retry_after_bound = SdkRetryAfterBound::kInclusive60s;
  // Scenario events (scenario.h, run by engine_events.cpp). The gate of a bp
  // run, for tenant_weight / class_omega events and to export/import the
  // configuration around a stopped Valkey; empty: not a bp run (those events
  // are recorded as not applicable).
  std::string gate_target;
  std::string valkey_url;  // the run's Valkey (state_outage waits for it back)
  // The Valkey server state_outage events act on: its pid, or a pid file read
  // at each outage (a server started with --pidfile rewrites it when the
  // outage restarts it). Neither: state_outage events are not applied.
  int valkey_pid = 0;
  std::string valkey_pidfile;
  // The clock of NowUs (run time: real microseconds since Run started);
  // nullptr = SteadyClock::Instance(). Must outlive the Engine. Timers
  // still run on the io context's real time.
  const Clock* clock = nullptr;
};

// One execution of an activity on a worker slot.
struct Execution {
  int64_t activity_id = 0;
  int tenant_index = 0;
  int64_t acquire_us = 0;
  int64_t first_send_us = -1;  // first HTTP attempt of this execution
  bool finished = false;
};

// The answer of one call as the caller sees it (after any gateway).
struct CallResult {
  int status = 0;                              // 0 = connection error / timeout
  std::optional<double> retry_after_paper_ms;  // server hint, paper ms
  // The wait stated in the error message (a 429 without retry headers,
  // upstream_wait.h ParseMessageWaitMs), paper ms; non-200 answers only.
  std::optional<double> message_wait_paper_ms;
  std::string bound;                 // 429: error.dimension (mockapi) else error.type
  int64_t prompt_tokens = 0;         // usage on 200
  int64_t completion_tokens = 0;     // usage on 200
  bool proxy_local = false;          // answered by the litellm gateway
  std::optional<bool> should_retry;  // x-should-retry (overrides the SDK's rule)
  RateLimitHeaders ratelimit;        // rate-limit headers (http_client.h), real ms
  // A streamed answer: tokens are its final usage chunk's; a stream cut
  // short (or one without usage) has the request's prompt estimate and the
  // tokens received (StreamStats::tokens_received).
  bool streamed = false;
  bool cancelled = false;
};

struct Outcome {
  enum Kind { kOk, kRetryLater, kDefer, kFail } kind = kOk;
  int64_t defer_us = 0;    // kDefer: real microseconds on a durable timer
  bool after_429 = false;  // kDefer: an upstream 429, not a gate DEFER
  std::string cause;       // kFail: ActivityRecord::fail_cause ("gate_reject", ...);
                           // kDefer: DeferralRecord::cause
  static Outcome Ok() { return {kOk, 0, false, {}}; }
  static Outcome RetryLater() { return {kRetryLater, 0, false, {}}; }
  // A gate DEFER; `binding` is its Decision::reason ("fair", "l1:requests", ...).
  static Outcome Defer(int64_t us, std::string binding = {}) {
    return {kDefer, us, false, binding.empty() ? std::string("unknown") : std::move(binding)};
  }
  static Outcome DeferAfter429(int64_t us) { return {kDefer, us, true, "429"}; }
  // A call the gate admitted ahead of its bucket's refill: the workflow
  // sleeps until its start on a durable timer and its next execution calls
  // without asking the gate (bp configuration). Recorded as a wait with
  // cause kAdmittedAhead, not counted as a DEFER.
  static Outcome StartLater(int64_t us) { return {kDefer, us, false, kAdmittedAhead}; }
  static constexpr const char* kAdmittedAhead = "admitted ahead";
  static Outcome Fail(std::string cause = "failed") { return {kFail, 0, false, std::move(cause)}; }
};

class Engine;
using CallDone = std::function<void(const CallResult&)>;
// How one call leaves the worker: straight to the upstream, or via a gateway.
using Transport = std::function<void(Execution&, CallDone)>;

// A configuration under test (naive, tn, litellm, bp, ...).
class Configuration {
 public:
  virtual ~Configuration() = default;
  virtual std::unique_ptr<TaskQueue> MakeQueue(const Engine& engine) = 0;
  // On the io thread, when `exec` got a slot. Must end, exactly once, with
  // engine.Finish(exec, outcome) (possibly later, from an io-thread handler).
  virtual void Execute(Engine& engine, Execution& exec) = 0;
  // After the io loop ended: join helper threads, add counters to records.
  virtual void OnStop(RunRecords& records) {}
};

class Engine {
 public:
  Engine(const Workload& workload, EngineOptions options, Configuration& configuration);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs until all work is done or the run length cap (paper s / speedup)
  // passed, on the calling thread. Call once. The records carry workload,
  // tenants, slots, caps and speedup; the caller fills configuration/repeat.
  RunRecords Run();

  // ---- services for configurations (io thread only)
  boost::asio::io_context& io() { return io_; }
  int64_t NowUs() const;
  double speedup() const { return options_.scale.speedup(); }
  const TimeScale& scale() const { return options_.scale; }
  SdkRetryAfterBound sdk_retry_after_bound() const { return options_.sdk_retry_after_bound; }
  const Workload& workload() const { return workload_; }
  const TenantSpec& tenant(int index) const { return workload_.tenants[index]; }
  double Uniform();  // [0, 1)
  void AfterPaperMs(double paper_ms, std::function<void()> fn);
  void AfterRealUs(int64_t real_us, std::function<void()> fn);
  // One HTTP attempt to the upstream, recorded as an AttemptRecord.
  void SendUpstream(Execution& exec, CallDone done);
  // Records a proxy-local 429 (litellm gateway) as an attempt.
  void RecordLocalReject(Execution& exec, const std::string& bound);
  // The OpenAI SDK's call: up to kSdkMaxRetries retries in place (slot held),
  // delays from SdkRetryDelayMs in paper time; `done` gets the last answer.
  void SdkCall(Execution& exec, Transport transport, CallDone done);
  // Ends the execution: frees the slot and applies the outcome.
  void Finish(Execution& exec, Outcome outcome);
  ActivityRecord& activity(int64_t id) { return records_.activities[id]; }
  bool stopped() const { return stopped_; }
  // Records a gate answer for the report's time series (bp configurations);
  // latency_us: how long the Admit call took (-1: unknown).
  void RecordGateDecision(const Execution& exec, GateVerdict verdict, int64_t latency_us = -1);

 private:
  // The scenario of a run (engine_events.cpp): its driver, the world it
  // changes, and this engine's side of the driver's interface.
  struct ScenarioRun;
  struct ScenarioRunDelete {  // defined where ScenarioRun is complete
    void operator()(ScenarioRun* run) const;
  };
  struct TenantState {
    int started = 0;  // workflows started
    int running = 0;
    int64_t scheduled_activities = 0;
    int64_t done_activities = 0;
    bool left = false;  // scenario: a leave event ran
  };
  struct WorkflowState {
    int tenant_index = 0;
    int next_activity = 0;
  };

  void StartWorkflow(int tenant_index);
  void ScheduleActivity(int64_t workflow_id);
  void Enqueue(int64_t activity_id);
  void TryDispatch();
  void OnActivityDone(int64_t activity_id, bool ok);
  // Scenario (engine_events.cpp): a tenant starts, or stops for good.
  void JoinTenant(int tenant_index);
  void LeaveTenant(int tenant_index);
  void CancelActivity(int64_t activity_id);  // its tenant left
  void StartTenant(int tenant_index);        // its first workflows
  void StartScenario();                      // arms the event timers (before io_.run)
  void FinishScenario();                     // after io_.run: restores an outage, joins helpers
  void Stop();
  void Progress(bool final_line);
  void ArmProgress();

  const Workload& workload_;
  EngineOptions options_;
  Configuration& configuration_;
  boost::asio::io_context io_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<TaskQueue> queue_;
  std::vector<std::shared_ptr<const std::string>> bodies_;  // per tenant request body
  std::vector<std::shared_ptr<const std::string>> stream_bodies_;  // the same, stream: true
  // Per activity: how it calls (decided at its first send, kept for retries).
  enum class CallMode : uint8_t { kUndecided, kPlain, kStream, kStreamCut };
  CallMode ModeOf(int64_t activity_id, int tenant_index);
  std::vector<CallMode> call_modes_;
  std::vector<int64_t> decided_, streamed_;  // per tenant: modes decided, streams among them
  const Clock* clock_ = nullptr;  // options_.clock or SteadyClock::Instance()
  int64_t start_us_ = 0;          // clock_ time when Run started
  std::mt19937_64 rng_;
  RunRecords records_;
  std::vector<TenantState> tenants_;
  std::vector<WorkflowState> workflows_;
  std::vector<int> failures_;  // per activity: executions that ended kRetryLater
  std::vector<std::unique_ptr<Execution>> executions_;  // by activity id, live ones
  int free_slots_ = 0;
  int busy_slots_ = 0;
  int64_t activities_done_ = 0;
  int64_t activities_total_ = 0;
  bool stopped_ = false;
  boost::asio::steady_timer dispatch_timer_;
  int64_t dispatch_timer_at_us_ = -1;
  boost::asio::steady_timer cap_timer_;
  boost::asio::steady_timer progress_timer_;
  std::vector<int64_t> ok_by_class_, throttled_by_class_, local_by_class_;
  std::unique_ptr<ScenarioRun, ScenarioRunDelete> scenario_;  // null without events
};

}  // namespace bp::loadgen
