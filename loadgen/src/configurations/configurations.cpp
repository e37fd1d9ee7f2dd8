// The baseline configurations naive, tn and litellm (configurations.h).
#include "bp/loadgen/configurations.h"

#include <algorithm>
#include <boost/asio/post.hpp>

#include "bp/loadgen/litellm_limiter.h"
#include "bp/loadgen/retry_policy.h"

namespace bp::loadgen {
namespace {

// Finishes an SDK-driven execution: success, or the SDK gave up and the
// engine's activity retry policy takes over (slot freed).
void FinishFromSdk(Engine& engine, Execution& exec, const CallResult& r) {
  engine.Finish(exec, r.status == 200 ? Outcome::Ok() : Outcome::RetryLater());
}

class Naive : public Configuration {
 public:
  std::unique_ptr<TaskQueue> MakeQueue(const Engine&) override {
    return std::make_unique<FifoTaskQueue>();
  }
  void Execute(Engine& engine, Execution& exec) override {
    Engine* e = &engine;
    engine.SdkCall(
        exec, [e](Execution& x, CallDone done) { e->SendUpstream(x, std::move(done)); },
        [e, &exec](const CallResult& r) { FinishFromSdk(*e, exec, r); });
  }
};

// Temporal-native: same worker as naive, different task queue.
class TemporalNative : public Naive {
 public:
  // rps_limit: queue-rps-limit in paper req/s; <= 0 = the workload's request cap.
  TemporalNative(const TimeScale& scale, double rps_limit) : scale_(scale), rps_limit_(rps_limit) {}
  std::unique_ptr<TaskQueue> MakeQueue(const Engine& engine) override {
    double rps = rps_limit_ > 0 ? rps_limit_ : engine.workload().caps.requests_per_s;
    TemporalQueueOptions o;
    o.rate_per_s = scale_.RateToReal(rps);  // queue-rps-limit
    o.burst = std::max(1.0, rps * 1.0);     // ~1 s of rate
    return std::make_unique<TemporalTaskQueue>(o);
  }

 private:
  TimeScale scale_;
  double rps_limit_;
};

// The LiteLLM proxy between worker and upstream, in process.
class Litellm : public Configuration {
 public:
  Litellm(const Workload& workload, const TimeScale& scale, LitellmOptions options)
      : limiter_(Slices(workload), static_cast<int64_t>(scale.ToReal(60e6)), options.limiter),
        options_(options),
        scale_(scale) {}

  std::unique_ptr<TaskQueue> MakeQueue(const Engine&) override {
    return std::make_unique<FifoTaskQueue>();
  }

  void Execute(Engine& engine, Execution& exec) override {
    Engine* e = &engine;
    engine.SdkCall(
        exec, [this, e](Execution& x, CallDone done) { Proxy(*e, x, std::move(done)); },
        [e, &exec](const CallResult& r) { FinishFromSdk(*e, exec, r); });
  }

 private:
  static std::vector<LitellmKeyLimits> Slices(const Workload& w) {
    std::vector<double> weights, omegas;
    for (const TenantSpec& t : w.tenants) {
      weights.push_back(t.weight);
      omegas.push_back(w.priority_weights[t.priority - 1]);
    }
    return LitellmSlices(weights, omegas, w.caps.requests_per_s, w.caps.tokens_per_s);
  }

  // One request through the proxy: the limiter's pre-call check, then the
  // router with its own retries of upstream 429s.
  void Proxy(Engine& engine, Execution& exec, CallDone done) {
    const TenantSpec& t = engine.tenant(exec.tenant_index);
    // v3 reserves what its token counter counts: max_tokens (output, the
    // default) or characters/4 + max_tokens (total); v1 reserves nothing.
    int64_t reserve = t.max_tokens;
    if (options_.tokens == LitellmTokenCount::kTotal) reserve += t.prompt_tokens;
    int64_t now = engine.NowUs();
    auto verdict = limiter_.Check(exec.tenant_index, reserve, now);
    if (verdict != LitellmLimiter::Verdict::kPass) {
      std::string bound = verdict == LitellmLimiter::Verdict::kOverRpm ? "requests" : "tokens";
      engine.RecordLocalReject(exec, bound);
      CallResult r;
      r.status = 429;
      // v3: `retry-after: 60` (the window); v1: seconds to the next clock minute.
      r.retry_after_paper_ms = scale_.RealUsToPaperMs(
          static_cast<double>(limiter_.RetryAfterUs(exec.tenant_index, now)));
      r.bound = bound;
      r.proxy_local = true;
      // Answer asynchronously, as a socket would (no recursion into the SDK).
      boost::asio::post(engine.io(), [done = std::move(done), r] { done(r); });
      return;
    }
    int64_t window = limiter_.window_start_us(exec.tenant_index);
    Route(engine, exec, 0, reserve, window, std::move(done));
  }

  void Route(Engine& engine, Execution& exec, int retries, int64_t reserved, int64_t window,
             CallDone done) {
    Engine* e = &engine;
    Execution* x = &exec;
    engine.SendUpstream(exec, [this, e, x, retries, reserved, window,
                               done = std::move(done)](const CallResult& r) mutable {
      if (r.status == 429 && retries < kLitellmRouterRetries) {
        double delay =
            LitellmRouterDelayMs(RetryHint{r.retry_after_paper_ms}, retries, e->Uniform());
        e->AfterPaperMs(delay,
                        [this, e, x, retries, reserved, window, done = std::move(done)]() mutable {
                          Route(*e, *x, retries + 1, reserved, window, std::move(done));
                        });
        return;
      }
      int64_t actual = 0;
      if (r.status == 200 && (!r.streamed || options_.count_streamed)) {
        actual = r.completion_tokens;
        if (options_.tokens == LitellmTokenCount::kTotal ||
            options_.limiter == LitellmLimiterVersion::kV1) {
          actual += r.prompt_tokens;
        }
      }
      limiter_.Correct(x->tenant_index, reserved, actual, window, e->NowUs());
      done(r);
    });
  }

  LitellmLimiter limiter_;
  LitellmOptions options_;
  TimeScale scale_;
};

}  // namespace

const std::vector<std::string>& ConfigurationNames() {
  static const std::vector<std::string> names = {"naive", "tn",        "litellm",
                                                 "bp",    "bp-no-drf", "bp-no-priority"};
  return names;
}

bool IsBaseline(const std::string& name) {
  return name == "naive" || name == "tn" || name == "litellm";
}

Result<std::unique_ptr<Configuration>> MakeBaselineConfiguration(const std::string& name,
                                                                 const Workload& workload,
                                                                 const TimeScale& scale,
                                                                 const LitellmOptions& litellm,
                                                                 double tn_rps_limit) {
  std::unique_ptr<Configuration> c;
  if (name == "naive") c = std::make_unique<Naive>();
  if (name == "tn") c = std::make_unique<TemporalNative>(scale, tn_rps_limit);
  if (name == "litellm") c = std::make_unique<Litellm>(workload, scale, litellm);
  if (!c) return Status::InvalidArgument("unknown baseline configuration: " + name);
  return c;
}

}  // namespace bp::loadgen
