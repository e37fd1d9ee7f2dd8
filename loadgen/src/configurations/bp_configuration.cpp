// The bp configuration (bp_configuration.h): gate calls on a thread pool,
// decisions applied on the engine's io thread.
#include "bp/loadgen/bp_configuration.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>
#include <unordered_map>
#include <vector>

#include "bp/gate_admin.h"
#include "bp/loadgen/gate_pool.h"
#include "bp/loadgen/retry_policy.h"
#include "bp/loadgen/upstream_wait.h"
#include "bp/valkey.h"

namespace bp::loadgen {

UpstreamReport ReportOf(const CallResult& r, const TimeScale& scale) {
  UpstreamReport out;
  if (r.status == 429 && !r.proxy_local) {
    out.outcome = UpstreamReport::Outcome::kThrottled;
    // The limit the upstream named (error type, as the metrics classify it).
    if (r.bound.find("token") != std::string::npos) {
      out.bound = UpstreamReport::Bound::kTokens;
    } else if (r.bound.find("request") != std::string::npos) {
      out.bound = UpstreamReport::Bound::kRequests;
    }
    if (r.retry_after_paper_ms) {
      out.retry_after_ms = scale.ToReal(*r.retry_after_paper_ms);
    } else if (r.message_wait_paper_ms) {  // the wait stated in the message
      out.retry_after_ms = scale.ToReal(*r.message_wait_paper_ms);
    }
  }
  const RateLimitHeaders& h = r.ratelimit;
  out.remaining_requests = h.remaining_requests.value_or(-1);
  out.remaining_tokens = h.remaining_tokens.value_or(-1);
  out.reset_requests_ms = h.reset_requests_ms.value_or(-1);
  out.reset_tokens_ms = h.reset_tokens_ms.value_or(-1);
  return out;
}

namespace {

GateVerdict VerdictOf(Verdict v) {
  switch (v) {
    case Verdict::kAdmit:
      return GateVerdict::kAdmit;
    case Verdict::kDefer:
      return GateVerdict::kDefer;
    case Verdict::kReject:
      return GateVerdict::kReject;
    case Verdict::kFailOpen:
      break;
  }
  return GateVerdict::kFailOpen;
}

class BpConfiguration : public Configuration {
 public:
  BpConfiguration(const AdmissionFactory& make, int threads, int release_drain_ms,
                  bool feed_headers, int64_t admit_ahead_ms)
      : pool_(threads, make),
        release_drain_ms_(release_drain_ms),
        feed_headers_(feed_headers),
        admit_ahead_ms_(admit_ahead_ms) {}

  std::unique_ptr<TaskQueue> MakeQueue(const Engine&) override {
    return std::make_unique<FifoTaskQueue>();
  }

  void Execute(Engine& engine, Execution& exec) override {
    if (auto it = ahead_tickets_.find(exec.activity_id); it != ahead_tickets_.end()) {
      const std::string ticket = std::move(it->second);
      ahead_tickets_.erase(it);
      Send(engine, exec, ticket);
      return;
    }
    const TenantSpec& t = engine.tenant(exec.tenant_index);
    AdmitRequest req;
    req.tenant = t.id;
    req.priority = t.priority;
    req.cost = Cost{1, t.prompt_tokens};
    req.max_tokens = t.max_tokens;
    req.ahead_ms = admit_ahead_ms_;
    Engine* e = &engine;
    Execution* x = &exec;
    pool_.Submit([this, e, x, req](Admission& gate) {
      const auto t0 = std::chrono::steady_clock::now();
      Decision d = gate.Admit(req);
      const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
      boost::asio::post(e->io(), [this, e, x, us, d = std::move(d)] { OnDecision(*e, *x, d, us); });
    });
  }

  void OnStop(RunRecords& records) override {
    // Queued releases are drained (bounded), so corrections reach Valkey.
    const GatePool::StopReport stop = pool_.Stop(release_drain_ms_);
    const GateCounters c = pool_.counters();
    records.gate_fail_opens = c.fail_opens;
    records.gate_breaker_opens = c.breaker_opens;
    records.gate_fail_opens_unreachable = c.fail_opens_unreachable;
    records.gate_fail_opens_timed_out = c.fail_opens_timed_out;
    records.gate_fail_opens_unconfigured = c.fail_opens_unconfigured;
    records.gate_fail_opens_server_error = c.fail_opens_server_error;
    records.gate_reseeds = c.reseeds;
    records.gate_admits_ahead = admits_ahead_;
    records.gate_start_in_us = start_in_us_;
    records.gate_release_errors = c.release_errors;
    records.gate_unreleased = stop.unreleased();
    if (stop.unreleased() > 0) {
      spdlog::warn(
          "bp: {} queued gate releases not applied at the end of the run ({} failed, {} past "
          "the {} ms drain; {} applied): their tickets expire uncorrected",
          stop.unreleased(), stop.failed, stop.skipped, release_drain_ms_, stop.released);
    }
  }

 private:
  // The first REJECT's reason is logged (io thread); the report counts them
  // all per tenant (ActivityRecord::fail_cause).
  void RecordReject(const std::string& reason) {
    if (reject_logged_) return;
    reject_logged_ = true;
    spdlog::warn("bp: gate REJECT (the activity fails): {}", reason);
  }

  void OnDecision(Engine& engine, Execution& exec, const Decision& d, int64_t admit_us) {
    engine.RecordGateDecision(exec, VerdictOf(d.verdict), admit_us);
    switch (d.verdict) {
      case Verdict::kDefer:
        engine.Finish(exec, Outcome::Defer(std::max<int64_t>(d.delta_ms, 1) * 1000, d.reason));
        return;
      case Verdict::kReject:
        RecordReject(d.reason);
        engine.Finish(exec, Outcome::Fail("gate_reject"));
        return;
      case Verdict::kAdmit:
      case Verdict::kFailOpen:
        break;
    }
    std::string ticket = d.verdict == Verdict::kAdmit ? d.ticket : std::string();
    if (d.verdict == Verdict::kAdmit && d.start_in_ms > 0) {
      // Admitted ahead of the bucket's refill. A wait no longer than the
      // engine's dispatch latency is kept in the slot (a durable timer would
      // fire no sooner). A longer one frees the slot: the workflow sleeps on
      // a durable timer of start_in_ms less the dispatch latency, so that
      // its next execution, which calls the upstream with the ticket without
      // asking the gate again (Execute), starts when the gate said. (Holding
      // the slot for every wait gave the same Admit calls on reservation at
      // twice the slot time per OK call, 244 against 107 paper ms; a timer of
      // the whole wait started every such call one dispatch latency late,
      // which took a fifth of the rate of tenants with few workflows.)
      const int64_t start_us = d.start_in_ms * 1000;
      const int64_t dispatch_us =
          engine.scale().PaperMsToRealUs(engine.workload().dispatch_latency_ms);
      ++admits_ahead_;
      start_in_us_ += start_us;
      if (start_us <= dispatch_us) {
        Engine* e = &engine;
        Execution* x = &exec;
        engine.AfterRealUs(start_us, [this, e, x, ticket] { Send(*e, *x, ticket); });
        return;
      }
      ahead_tickets_[exec.activity_id] = ticket;
      engine.Finish(exec, Outcome::StartLater(start_us - dispatch_us));
      return;
    }
    Send(engine, exec, ticket);
  }

  // The upstream call of an admitted (or failed-open: no ticket) execution,
  // its release and its outcome.
  void Send(Engine& engine, Execution& exec, const std::string& ticket) {
    Engine* e = &engine;
    Execution* x = &exec;
    int64_t prompt = engine.tenant(exec.tenant_index).prompt_tokens;
    engine.SendUpstream(exec, [this, e, x, ticket, prompt](const CallResult& r) {
      // 429 / 503 / 529: deferred on a durable timer by the retry header, the
      // wait in the message, else a backoff (upstream_wait.h), never retried in
      // place; x-should-retry false: fail; other errors: the activity retry policy.
      const BpAnswerAction act =
          r.status == 200 ? BpAnswerAction{}
                          : BpActionForAnswer(r, e->activity(x->activity_id).throttle_defers);
      const bool refused = r.status != 200 && act.kind != BpAnswerAction::kRetryLater;
      if (!ticket.empty() && refused && (r.status != 429 || act.kind == BpAnswerAction::kFail)) {
        // Refused by the provider (overloaded, or never servable: not a sign
        // of a lower cap, so not reported to the adaptive caps): the gate
        // keeps the debit (the window was full) and gives the queue its turn
        // back (Gate::ReleaseRefused); a deferred activity asks again.
        pool_.SubmitRelease([ticket](Admission& gate) { return gate.ReleaseRefused(ticket); });
      } else if (!ticket.empty()) {
        // Actual usage: prompt + completion on success; on another error the
        // provider charged nothing beyond what the estimate said (keep it).
        // A 429 is reported (UpstreamReport): the gate treats it as refused,
        // as above, and it feeds the adaptive caps.
        Cost actual{1, r.status == 200 ? r.prompt_tokens + r.completion_tokens : prompt};
        UpstreamReport report = ReportOf(r, e->scale());
        if (!feed_headers_ && r.status == 200) report = UpstreamReport{};  // AIMD alone
        pool_.SubmitRelease([ticket, actual, report](Admission& gate) {
          return gate.Release(ticket, actual, report);
        });
      }
      if (r.status == 200) {
        e->Finish(*x, Outcome::Ok());
      } else if (act.kind == BpAnswerAction::kDefer) {
        e->Finish(*x, Outcome::DeferAfter429(
                          static_cast<int64_t>(e->scale().ToReal(act.wait_paper_ms * 1000.0)) + 1));
      } else if (act.kind == BpAnswerAction::kFail) {
        e->Finish(*x, Outcome::Fail("upstream_refused"));  // x-should-retry: false
      } else {
        e->Finish(*x, Outcome::RetryLater());
      }
    });
  }

  GatePool pool_;
  const int release_drain_ms_;
  const bool feed_headers_;       // served calls' rate-limit headers go to the gate
  const int64_t admit_ahead_ms_;  // AdmitRequest::ahead_ms, real ms (0 = off)
  bool reject_logged_ = false;    // io thread only
  uint64_t admits_ahead_ = 0;     // io thread only: ADMITs with start_in_ms > 0
  int64_t start_in_us_ = 0;       // and their start_in_ms summed, real us
  // io thread only: by activity, the ticket of a call admitted ahead whose
  // workflow sleeps until its start.
  std::unordered_map<int64_t, std::string> ahead_tickets_;
};

}  // namespace

std::string GateFailOpenSummary(const RunRecords& r, const std::string& label) {
  if (r.gate_fail_opens == 0 && r.gate_reseeds == 0 && r.gate_release_errors == 0) return "";
  std::string text = label + ": ";
  if (r.gate_fail_opens > 0) {
    std::string causes;
    for (auto [name, n] :
         {std::pair{FailOpenCause::kUnreachable, r.gate_fail_opens_unreachable},
          std::pair{FailOpenCause::kTimedOut, r.gate_fail_opens_timed_out},
          std::pair{FailOpenCause::kNotConfigured, r.gate_fail_opens_unconfigured},
          std::pair{FailOpenCause::kServerError, r.gate_fail_opens_server_error}}) {
      if (n == 0) continue;
      if (!causes.empty()) causes += ", ";
      causes += std::string(FailOpenCauseName(name)) + " " + std::to_string(n);
    }
    if (causes.empty()) causes = "causes not recorded";
    text += std::to_string(r.gate_fail_opens) + " gate calls failed open, ungated (" + causes +
            "); the circuit breakers opened " + std::to_string(r.gate_breaker_opens) + " times";
  }
  if (r.gate_reseeds > 0) {
    if (r.gate_fail_opens > 0) text += "; ";
    text += "the target was re-seeded " + std::to_string(r.gate_reseeds) +
            " times from the declared configuration (the store lost its state)";
  }
  if (r.gate_release_errors > 0) {
    if (r.gate_fail_opens > 0 || r.gate_reseeds > 0) text += "; ";
    text += std::to_string(r.gate_release_errors) +
            " releases failed (their debits stand until the tickets expire)";
  }
  return text;
}

Result<GateAblation> BpAblationOf(const std::string& configuration) {
  if (configuration == "bp") return GateAblation::kNone;
  if (configuration == "bp-no-drf") return GateAblation::kNoDrf;
  if (configuration == "bp-no-priority") return GateAblation::kNoPriority;
  return Status::InvalidArgument("not a bp configuration: " + configuration);
}

namespace {

GateOptions GateOptionsOf(const Workload& workload, const TimeScale& scale,
                          const BpOptions& options) {
  GateOptions g;
  g.url = options.valkey_url;
  g.target = options.target;
  g.mode = workload.gate_mode;
  g.ablation = options.ablation;
  g.command_timeout_ms = options.command_timeout_ms;
  g.breaker_cool_off_ms = options.breaker_cool_off_ms;
  g.queue_ttl_ms =
      std::max<int64_t>(static_cast<int64_t>(scale.ToReal(workload.gate_queue_ttl_s * 1000)), 100);
  return g;
}

}  // namespace

GateConfig GateConfigOf(const Workload& workload, const TimeScale& scale) {
  GateConfig c;
  c.configured = true;
  c.caps = GateCapsOf(workload, scale.speedup());
  if (workload.gate_adapt) {  // else the default tuning: the paper's gate
    c.tuning.adapt = true;
    c.tuning.adapt_beta = workload.gate_adapt_beta;
    c.tuning.adapt_recover_ms = scale.ToReal(workload.gate_adapt_recover_s * 1000);
    c.tuning.adapt_window_ms = scale.ToReal(workload.gate_adapt_window_s * 1000);
    c.tuning.adapt_min_429 = workload.gate_adapt_min_429;
  }
  if (workload.gate_flat_share) c.tuning.share_rule = GateTuning::ShareRule::kFlat;
  if (workload.gate_strict_classes) c.tuning.class_policy = GateTuning::ClassPolicy::kStrict;
  c.omega = workload.priority_weights;
  for (const TenantSpec& t : workload.tenants) c.tenant_weights[t.id] = t.weight;
  return c;
}

Status ConfigureGateTarget(const Workload& workload, const TimeScale& scale,
                           const BpOptions& options) {
  GateAdmin setup(GateOptionsOf(workload, scale, options));
  if (Status s = setup.Ping(); !s.ok()) {
    return Status::Unavailable("valkey " + RedactValkeyUrl(options.valkey_url) + ": " +
                               s.message());
  }
  if (!options.configure) return Status::Ok();
  if (options.declared_config) return setup.ReplaceConfig(*options.declared_config);
  // The ranges were checked with the plan, before any run (CheckGateRanges);
  // ReplaceConfig validates what the scripts need.
  return setup.ReplaceConfig(GateConfigOf(workload, scale));
}

Result<std::unique_ptr<Configuration>> MakeBpConfiguration(const Workload& workload,
                                                           const TimeScale& scale,
                                                           BpOptions options) {
  if (Status s = ConfigureGateTarget(workload, scale, options); !s.ok()) return s;
  GateOptions g = GateOptionsOf(workload, scale, options);
  g.declared_config = options.declared_config
                          ? options.declared_config
                          : std::make_shared<const GateConfig>(GateConfigOf(workload, scale));
  std::unique_ptr<Configuration> c = MakeBpConfigurationOn(
      [g]() -> std::unique_ptr<Admission> { return std::make_unique<Gate>(g); },
      options.gate_threads, options.release_drain_ms, workload.gate_adapt_headers,
      options.admit_ahead_ms);
  return c;
}

std::unique_ptr<Configuration> MakeBpConfigurationOn(const AdmissionFactory& make, int threads,
                                                     int release_drain_ms, bool feed_headers,
                                                     int64_t admit_ahead_ms) {
  return std::make_unique<BpConfiguration>(make, std::max(1, threads), release_drain_ms,
                                           feed_headers, admit_ahead_ms);
}

}  // namespace bp::loadgen
