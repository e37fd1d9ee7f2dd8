// The calls of the engine model (engine.h): one recorded HTTP attempt to the
// upstream, a proxy-local answer, and the OpenAI SDK's retry loop.
#include <cmath>
#include <nlohmann/json.hpp>

#include "bp/loadgen/engine.h"
#include "bp/loadgen/retry_policy.h"
#include "bp/loadgen/upstream_wait.h"

namespace bp::loadgen {
namespace {

// Parses the parts of an upstream answer the engine needs; prompt_estimate:
// the request's prompt tokens (a stream without usage is charged with it).
void ParseAnswer(const HttpResponse& r, const TimeScale& scale, int64_t prompt_estimate,
                 CallResult* out) {
  out->status = r.status;
  out->streamed = r.streamed;
  out->cancelled = r.cancelled;
  if (r.streamed) {
    const StreamStats& s = r.stream;
    const bool usage = !r.cancelled && s.completion_tokens.has_value();
    out->prompt_tokens = usage ? s.prompt_tokens.value_or(prompt_estimate) : prompt_estimate;
    out->completion_tokens = usage ? *s.completion_tokens : s.tokens_received();
  }
  out->should_retry = r.should_retry;
  out->ratelimit = r.ratelimit;
  if (r.retry_after_ms) {
    out->retry_after_paper_ms = scale.ToPaper(*r.retry_after_ms);
  } else if (r.retry_after_s) {
    out->retry_after_paper_ms = scale.ToPaper(*r.retry_after_s * 1000.0);
  }
  if (r.body.empty()) return;
  auto doc = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return;
  if (r.status == 200 && doc.contains("usage") && doc["usage"].is_object()) {
    // OpenAI names prompt/completion tokens, Anthropic input/output tokens.
    const auto& u = doc["usage"];
    out->prompt_tokens = u.value("prompt_tokens", u.value("input_tokens", int64_t{0}));
    out->completion_tokens = u.value("completion_tokens", u.value("output_tokens", int64_t{0}));
  }
  if (r.status != 200 && doc.contains("error") && doc["error"].is_object()) {
    const auto& e = doc["error"];
    if (e.contains("message") && e["message"].is_string()) {
      auto ms = ParseMessageWaitMs(e["message"].get_ref<const std::string&>());
      if (ms) out->message_wait_paper_ms = scale.ToPaper(*ms);
    }
    // The bound limit: mockapi's error.dimension in every profile's body
    // (Anthropic's and Azure's error.type does not name it), else error.type.
    if (r.status == 429) {
      if (e.contains("dimension") && e["dimension"].is_string()) {
        out->bound = e["dimension"].get<std::string>();
      } else if (e.contains("type") && e["type"].is_string()) {
        out->bound = e["type"].get<std::string>();
      }
    }
  }
}

}  // namespace

void Engine::SendUpstream(Execution& exec, CallDone done) {
  int64_t send = NowUs();
  if (exec.first_send_us < 0) exec.first_send_us = send;
  ++records_.activities[exec.activity_id].http_attempts;
  int64_t activity_id = exec.activity_id;
  int tenant_index = exec.tenant_index;
  const CallMode mode = ModeOf(activity_id, tenant_index);
  RequestStream stream;
  stream.stream = mode != CallMode::kPlain;
  if (mode == CallMode::kStreamCut)
    stream.cancel_after_events = workload_.tenants[tenant_index].cancel_after_events;
  const auto& body = stream.stream ? stream_bodies_[tenant_index] : bodies_[tenant_index];
  http_->Request("POST", options_.upstream_path, body,
                 [this, activity_id, tenant_index, send, done = std::move(done)](HttpResponse r) {
                   if (stopped_) return;
                   CallResult result;
                   ParseAnswer(r, options_.scale, workload_.tenants[tenant_index].prompt_tokens,
                               &result);
                   AttemptRecord rec;
                   rec.activity_id = activity_id;
                   rec.tenant_index = tenant_index;
                   rec.send_us = send;
                   rec.done_us = NowUs();
                   rec.status = result.status;
                   rec.bound = result.bound;
                   if (r.streamed) {
                     rec.stream = r.cancelled ? 2 : 1;
                     const StreamStats& st = r.stream;
                     rec.token_events = st.token_events;
                     if (st.first_token_us >= 0) rec.ttft_us = st.first_token_us - send;
                     if (st.token_events >= 2) {
                       rec.itl_us =
                           (st.last_token_us - st.first_token_us) / (st.token_events - 1);
                     }
                   }
                   records_.attempts.push_back(rec);
                   int k = workload_.tenants[tenant_index].priority;
                   if (result.status == 200) ++ok_by_class_[k];
                   if (result.status == 429) ++throttled_by_class_[k];
                   if (result.status == 200) {
                     records_.activities[activity_id].completion_tokens = result.completion_tokens;
                   }
                   done(result);
                 },
                 stream);
}

// floor((n + 1) s) > floor(n s): exactly s of every run of calls, spread
// evenly (s = 0.5 streams every other call), the same in every run.
static bool TakesShare(int64_t n, double share) {
  return std::floor(static_cast<double>(n + 1) * share) > std::floor(static_cast<double>(n) * share);
}

Engine::CallMode Engine::ModeOf(int64_t activity_id, int tenant_index) {
  if (call_modes_.size() <= static_cast<size_t>(activity_id))
    call_modes_.resize(static_cast<size_t>(activity_id) + 1, CallMode::kUndecided);
  CallMode& mode = call_modes_[static_cast<size_t>(activity_id)];
  if (mode != CallMode::kUndecided) return mode;
  const TenantSpec& t = workload_.tenants[tenant_index];
  mode = CallMode::kPlain;
  if (TakesShare(decided_[tenant_index]++, t.stream_share)) {
    mode = TakesShare(streamed_[tenant_index]++, t.cancel_share) ? CallMode::kStreamCut
                                                                 : CallMode::kStream;
  }
  return mode;
}

void Engine::RecordLocalReject(Execution& exec, const std::string& bound) {
  int64_t now = NowUs();
  if (exec.first_send_us < 0) exec.first_send_us = now;
  AttemptRecord rec;
  rec.activity_id = exec.activity_id;
  rec.tenant_index = exec.tenant_index;
  rec.send_us = now;
  rec.done_us = now;
  rec.status = 429;
  rec.proxy_local = true;
  rec.bound = bound;
  records_.attempts.push_back(rec);
  ++local_by_class_[workload_.tenants[exec.tenant_index].priority];
}

namespace {

// The SDK's retry loop of one call (max_retries 2, delays in paper time).
struct SdkLoop : std::enable_shared_from_this<SdkLoop> {
  Engine* engine;
  Execution* exec;
  Transport transport;
  CallDone done;
  int retries = 0;

  void Attempt() {
    transport(*exec, [self = shared_from_this()](const CallResult& r) { self->OnAnswer(r); });
  }
  void OnAnswer(const CallResult& r) {
    bool retryable = r.should_retry.value_or(SdkRetryable(r.status));  // x-should-retry wins
    if (r.status == 200 || !retryable || retries >= kSdkMaxRetries) {
      done(r);
      return;
    }
    RetryHint hint{r.retry_after_paper_ms};
    double delay =
        SdkRetryDelayMs(hint, retries, engine->Uniform(), engine->sdk_retry_after_bound());
    ++retries;
    engine->AfterPaperMs(delay, [self = shared_from_this()] { self->Attempt(); });
  }
};

}  // namespace

void Engine::SdkCall(Execution& exec, Transport transport, CallDone done) {
  auto loop = std::make_shared<SdkLoop>();
  loop->engine = this;
  loop->exec = &exec;
  loop->transport = std::move(transport);
  loop->done = std::move(done);
  loop->Attempt();
}

void Engine::RecordGateDecision(const Execution& exec, GateVerdict verdict, int64_t latency_us) {
  records_.gate_decisions.push_back({NowUs(), exec.tenant_index, verdict, latency_us});
}

}  // namespace bp::loadgen
