// The engine model (engine.h): workflows, task queue, worker slots, durable
// timers, and the records of everything that happens. One io thread.
#include "bp/loadgen/engine.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bp/loadgen/progress.h"
#include "bp/loadgen/retry_policy.h"
#include "bp/token_estimate.h"

namespace bp::loadgen {

namespace asio = boost::asio;

Engine::Engine(const Workload& workload, EngineOptions options, Configuration& configuration)
    : workload_(workload),
      options_(std::move(options)),
      configuration_(configuration),
      rng_(options_.seed),
      dispatch_timer_(io_),
      cap_timer_(io_),
      progress_timer_(io_) {
  clock_ = options_.clock != nullptr ? options_.clock : &SteadyClock::Instance();
  HttpClientOptions http;
  http.endpoint = options_.upstream;
  http.timeout_ms = options_.http_timeout_ms;
  http.now_us = [this] { return NowUs(); };  // stream event times on the run clock
  http_ = std::make_unique<HttpClient>(io_, http);
  records_.workload = workload_.name;
  records_.speedup = options_.scale.speedup();
  records_.cap_requests_per_s = workload_.caps.requests_per_s;
  records_.cap_tokens_per_s = workload_.caps.tokens_per_s;
  records_.flat_share = workload_.gate_flat_share;
  records_.slots = workload_.slots;
  free_slots_ = workload_.slots;
  tenants_.resize(workload_.tenants.size());
  int classes = workload_.priority_classes();
  ok_by_class_.assign(classes + 1, 0);
  throttled_by_class_.assign(classes + 1, 0);
  local_by_class_.assign(classes + 1, 0);
  for (const TenantSpec& t : workload_.tenants) {
    TenantInfo info;
    info.id = t.id;
    info.priority = t.priority;
    info.weight = t.weight;
    info.priority_weight = workload_.priority_weights[t.priority - 1];
    info.total_activities = int64_t{t.workflows} * t.activities_per_workflow;
    info.start_us = -1;
    info.unservable = workload_.Unservable(static_cast<int>(records_.tenants.size()));
    records_.tenants.push_back(info);
    nlohmann::json body = {
        {"model", options_.model},
        {"messages", {{{"role", "user"}, {"content", TextOfTokens(t.prompt_tokens)}}}},
        {"max_tokens", t.max_tokens},
        {"user", t.id}};
    bodies_.push_back(std::make_shared<const std::string>(body.dump()));
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    stream_bodies_.push_back(std::make_shared<const std::string>(body.dump()));
  }
  activities_total_ = workload_.total_activities();
  decided_.assign(workload_.tenants.size(), 0);
  streamed_.assign(workload_.tenants.size(), 0);
}

Engine::~Engine() = default;

int64_t Engine::NowUs() const { return clock_->NowUs() - start_us_; }

double Engine::Uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }

void Engine::AfterRealUs(int64_t real_us, std::function<void()> fn) {
  if (stopped_) return;
  auto timer = std::make_shared<asio::steady_timer>(io_);
  timer->expires_after(std::chrono::microseconds(std::max<int64_t>(real_us, 0)));
  timer->async_wait([this, timer, fn = std::move(fn)](boost::system::error_code ec) {
    if (ec || stopped_) return;
    fn();
  });
}

void Engine::AfterPaperMs(double paper_ms, std::function<void()> fn) {
  AfterRealUs(options_.scale.PaperMsToRealUs(paper_ms), std::move(fn));
}

RunRecords Engine::Run() {
  start_us_ = clock_->NowUs();
  records_.start_unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  queue_ = configuration_.MakeQueue(*this);
  int64_t cap_us = options_.scale.PaperMsToRealUs(workload_.run_length_cap_s * 1000.0);
  cap_timer_.expires_after(std::chrono::microseconds(cap_us));
  cap_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) Stop();
  });
  asio::post(io_, [this] {
    for (size_t t = 0; t < workload_.tenants.size(); ++t) {
      // A tenant with a join event starts when the event runs.
      if (!workload_.JoinsLater(static_cast<int>(t))) StartTenant(static_cast<int>(t));
    }
  });
  StartScenario();
  if (options_.progress) ArmProgress();
  io_.run();
  FinishScenario();
  int64_t end = NowUs();
  records_.end_us = end;
  // Executions cut off by the cap: close their slot intervals at the end.
  for (auto& e : executions_) {
    if (!e || e->finished) continue;
    records_.slots_held.push_back({e->activity_id, e->tenant_index, e->acquire_us, end});
    records_.activities[e->activity_id].slot_held_us += end - e->acquire_us;
  }
  configuration_.OnStop(records_);
  if (options_.progress) Progress(true);
  return std::move(records_);
}

void Engine::Stop() {
  if (stopped_) return;
  stopped_ = true;
  http_->Shutdown();
  io_.stop();
}

void Engine::StartTenant(int tenant_index) {
  const TenantSpec& t = workload_.tenants[tenant_index];
  int n = std::min(t.concurrency, t.workflows);
  for (int i = 0; i < n; ++i) StartWorkflow(tenant_index);
}

void Engine::StartWorkflow(int tenant_index) {
  TenantState& ts = tenants_[tenant_index];
  ++ts.started;
  ++ts.running;
  WorkflowRecord wr;
  wr.id = static_cast<int64_t>(workflows_.size());
  wr.tenant_index = tenant_index;
  wr.start_us = NowUs();
  records_.workflows.push_back(wr);
  workflows_.push_back({tenant_index, 0});
  ScheduleActivity(wr.id);
}

void Engine::ScheduleActivity(int64_t workflow_id) {
  WorkflowState& wf = workflows_[workflow_id];
  ++wf.next_activity;
  ActivityRecord a;
  a.id = static_cast<int64_t>(records_.activities.size());
  a.workflow_id = workflow_id;
  a.tenant_index = wf.tenant_index;
  a.scheduled_us = NowUs();
  a.prompt_tokens = workload_.tenants[wf.tenant_index].prompt_tokens;
  TenantInfo& info = records_.tenants[wf.tenant_index];
  if (info.start_us < 0) info.start_us = a.scheduled_us;
  ++tenants_[wf.tenant_index].scheduled_activities;
  records_.activities.push_back(a);
  failures_.push_back(0);
  executions_.emplace_back();
  Enqueue(a.id);
}

void Engine::Enqueue(int64_t activity_id) {
  auto push = [this, activity_id] {
    const ActivityRecord& a = records_.activities[activity_id];
    if (tenants_[a.tenant_index].left) return CancelActivity(activity_id);
    const TenantSpec& t = workload_.tenants[a.tenant_index];
    queue_->Push({activity_id, a.tenant_index, t.priority, t.weight}, NowUs());
    TryDispatch();
  };
  if (workload_.dispatch_latency_ms > 0) {
    AfterPaperMs(workload_.dispatch_latency_ms, std::move(push));
  } else {
    push();
  }
}

void Engine::TryDispatch() {
  // At most one pass over the free slots.
  for (int guard = workload_.slots; guard > 0 && free_slots_ > 0 && !stopped_; --guard) {
    int64_t now = NowUs();
    std::optional<Task> task = queue_->Pop(now);
    if (!task) {
      int64_t ready = queue_->NextReadyUs(now);
      if (ready >= 0 && (dispatch_timer_at_us_ < 0 || ready < dispatch_timer_at_us_)) {
        dispatch_timer_at_us_ = ready;
        dispatch_timer_.expires_after(std::chrono::microseconds(ready - now));
        dispatch_timer_.async_wait([this](boost::system::error_code ec) {
          if (ec) return;
          dispatch_timer_at_us_ = -1;
          TryDispatch();
        });
      }
      return;
    }
    if (tenants_[task->tenant_index].left) {  // queued before its tenant left
      CancelActivity(task->activity_id);
      if (stopped_) return;
      continue;
    }
    --free_slots_;
    ++busy_slots_;
    auto exec = std::make_unique<Execution>();
    exec->activity_id = task->activity_id;
    exec->tenant_index = task->tenant_index;
    exec->acquire_us = now;
    ++records_.activities[task->activity_id].executions;
    Execution& ref = *exec;
    executions_[task->activity_id] = std::move(exec);
    configuration_.Execute(*this, ref);
  }
}

void Engine::Finish(Execution& exec, Outcome outcome) {
  if (exec.finished || stopped_) return;
  exec.finished = true;
  int64_t now = NowUs();
  int64_t id = exec.activity_id;
  ActivityRecord& a = records_.activities[id];
  records_.slots_held.push_back({id, exec.tenant_index, exec.acquire_us, now});
  a.slot_held_us += now - exec.acquire_us;
  ++free_slots_;
  --busy_slots_;
  switch (outcome.kind) {
    case Outcome::kOk:
      a.ok = true;
      a.first_send_us = exec.first_send_us;
      a.final_answer_us = now;
      a.in_activity_us = now - exec.acquire_us;
      OnActivityDone(id, true);
      break;
    case Outcome::kFail:
      a.fail_cause = outcome.cause.empty() ? "failed" : outcome.cause;
      a.first_send_us = exec.first_send_us;
      a.final_answer_us = exec.first_send_us >= 0 ? now : -1;
      OnActivityDone(id, false);
      break;
    case Outcome::kRetryLater: {
      int attempt = ++failures_[id];
      AfterPaperMs(ActivityRetryDelayMs(attempt), [this, id] { Enqueue(id); });
      break;
    }
    case Outcome::kDefer:
      if (outcome.after_429) {
        ++a.throttle_defers;
      } else if (outcome.cause != Outcome::kAdmittedAhead) {
        ++a.deferrals;
      }
      records_.deferrals.push_back(
          {id, exec.tenant_index, now, outcome.defer_us, std::move(outcome.cause)});
      AfterRealUs(outcome.defer_us, [this, id] { Enqueue(id); });
      break;
  }
  // The execution object dies here; handlers must not touch it after Finish.
  executions_[id].reset();
  TryDispatch();
}

void Engine::OnActivityDone(int64_t activity_id, bool ok) {
  int64_t now = NowUs();
  ActivityRecord& a = records_.activities[activity_id];
  a.completed_us = now;
  ++activities_done_;
  int t = a.tenant_index;
  TenantState& ts = tenants_[t];
  ++ts.done_activities;
  WorkflowState& wf = workflows_[a.workflow_id];
  const TenantSpec& spec = workload_.tenants[t];
  if (ts.left) {  // the tenant left: its workflow ends here, nothing new starts
    if (wf.next_activity >= spec.activities_per_workflow && ok) {
      records_.workflows[a.workflow_id].end_us = now;
    }
    --ts.running;
  } else if (wf.next_activity < spec.activities_per_workflow) {
    ScheduleActivity(a.workflow_id);
  } else {
    records_.workflows[a.workflow_id].end_us = now;
    --ts.running;
    if (ts.started < spec.workflows) StartWorkflow(t);
  }
  if (ts.done_activities == records_.tenants[t].total_activities)
    records_.tenants[t].finish_us = now;
  if (activities_done_ >= activities_total_) Stop();
}

void Engine::ArmProgress() {
  // A live line on a terminal; a plain line every 10 s into a log file.
  progress_timer_.expires_after(std::chrono::seconds(::isatty(2) ? 1 : 10));
  progress_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopped_) return;
    Progress(false);
    ArmProgress();
  });
}

void Engine::Progress(bool final_line) {
  ProgressSnapshot p;
  p.label = options_.label;
  p.elapsed_s = static_cast<double>(NowUs()) / 1e6;
  p.cap_s =
      static_cast<double>(options_.scale.PaperMsToRealUs(workload_.run_length_cap_s * 1000.0)) /
      1e6;
  p.speedup = options_.scale.speedup();
  p.done = activities_done_;
  p.total = activities_total_;
  p.busy_slots = busy_slots_;
  p.slots = workload_.slots;
  p.ok = ok_by_class_;
  p.throttled = throttled_by_class_;
  p.local = local_by_class_;
  const std::string line = ProgressLine(p);
  if (::isatty(2)) {
    std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), final_line ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace bp::loadgen
