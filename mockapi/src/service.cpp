// Service: routing, cost of a call, the limiter sets per scope, admin updates.
// The limiter state belongs to one `limits` configuration (struct Limits); a
// config snapshot points at it, so a PUT without `limits` keeps the state.
#include "bp/mockapi/service.h"

#include <algorithm>
#include <unordered_map>

#include "bp/json_fields.h"
#include "bp/token_estimate.h"
#include "internal.h"
#include "stats.h"

namespace bp::mockapi {
namespace {

using internal::ErrorKind;

constexpr size_t kMaxApiKeys = 100'000;  // beyond this, new keys share the anonymous scope

// Limiter sets of one `limits` configuration: global, and one per API key.
struct Limits {
  std::vector<LimiterOptions> options;
  std::unique_ptr<LimiterSet> global;
  std::mutex keys_mu;
  std::unordered_map<std::string, std::unique_ptr<LimiterSet>> by_key;

  LimiterSet* For(Scope scope, std::string_view key, const Clock& clock) {
    if (scope == Scope::kGlobal) return global.get();
    std::lock_guard<std::mutex> lock(keys_mu);
    auto it = by_key.find(std::string(key));
    if (it != by_key.end()) return it->second.get();
    if (by_key.size() >= kMaxApiKeys) key = {};
    auto set = LimiterSet::Create(options, clock);  // validated with the config
    return by_key.emplace(std::string(key), std::move(*set)).first->second.get();
  }
};

struct Snapshot {
  MockConfig config;
  std::shared_ptr<Limits> limits;
  // Valid chat calls since `overload` was last set (OverloadOptions' n).
  std::shared_ptr<std::atomic<uint64_t>> overload_calls;
};

std::shared_ptr<Limits> MakeLimits(const std::vector<LimiterOptions>& options, const Clock& clock) {
  auto limits = std::make_shared<Limits>();
  limits->options = options;
  limits->global = LimiterSet::Create(options, clock).value();
  return limits;
}

// splitmix64: a stateless, well-mixed draw per (seed, call number).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double Unit(uint64_t x) { return static_cast<double>(x >> 11) * 0x1.0p-53; }

// Chat answers of the OpenAI and Azure dialects carry x-request-id (Anthropic
// errors carry request-id, added with their body).
void AddRequestId(Dialect dialect, uint64_t id, HttpResponse* r) {
  if (dialect != Dialect::kAnthropic)
    r->headers.emplace_back("x-request-id", internal::RequestId(id));
}

std::string_view PathOf(std::string_view target) { return target.substr(0, target.find('?')); }

std::string_view KeyOf(const HttpRequest& req) {
  std::string_view a = req.authorization;
  if (a.size() > 7 && (a.substr(0, 7) == "Bearer " || a.substr(0, 7) == "bearer "))
    return a.substr(7);
  return req.api_key;
}

}  // namespace

struct Service::Impl {
  explicit Impl(const Clock& c) : clock(c), start_us(c.NowUs()) {}

  void Route(const HttpRequest& req, uint64_t id, HttpResponse* r);
  void Chat(const Snapshot& snap, const HttpRequest& req, bool anthropic, uint64_t id,
            HttpResponse* r);
  void Admin(const HttpRequest& req, uint64_t id, HttpResponse* r);
  Status Update(const nlohmann::json& patch);
  void Install(std::shared_ptr<const Snapshot> s) {
    body_limit_bytes.store(s->config.body_limit_bytes);
    read_timeout_ms.store(static_cast<int64_t>(s->config.read_timeout_ms));
    idle_timeout_ms.store(static_cast<int64_t>(s->config.idle_timeout_ms));
    stream_tick_us.store(static_cast<int64_t>(s->config.stream_tick_ms * 1000.0));
    snap.store(std::move(s));
  }

  const Clock& clock;
  const int64_t start_us;
  std::atomic<std::shared_ptr<const Snapshot>> snap;
  std::mutex update_mu;  // serializes PUT /admin/config
  std::atomic<uint64_t> next_id{0};
  std::atomic<int64_t> body_limit_bytes{0}, read_timeout_ms{0}, idle_timeout_ms{0},
      stream_tick_us{0};
  internal::Stats stats;
};

Result<std::unique_ptr<Service>> Service::Create(const MockConfig& config, const Clock& clock) {
  if (Status s = ValidateConfig(config); !s.ok()) return s;
  auto impl = std::make_unique<Impl>(clock);
  impl->Install(std::make_shared<const Snapshot>(Snapshot{
      config, MakeLimits(config.limits, clock), std::make_shared<std::atomic<uint64_t>>(0)}));
  return std::unique_ptr<Service>(new Service(std::move(impl)));
}

Service::Service(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Service::~Service() = default;

MockConfig Service::config() const { return impl_->snap.load()->config; }

ConnectionLimits Service::connection_limits() const {
  return {impl_->body_limit_bytes.load(std::memory_order_relaxed),
          impl_->read_timeout_ms.load(std::memory_order_relaxed),
          impl_->idle_timeout_ms.load(std::memory_order_relaxed),
          impl_->stream_tick_us.load(std::memory_order_relaxed)};
}

Status Service::UpdateConfig(const nlohmann::json& patch) { return impl_->Update(patch); }

Status Service::Impl::Update(const nlohmann::json& paper_patch) {
  auto real = RealTimePatch(paper_patch);  // "speedup": durations in paper units
  if (!real.ok()) return real.status();
  const nlohmann::json& patch = *real;
  std::lock_guard<std::mutex> lock(update_mu);
  auto current = snap.load();
  auto next = ConfigFromJson(patch, current->config);
  if (!next.ok()) {
    // RealTimePatch checked each duration's own range; a combination (e.g.
    // limits[0]: quantum_s <= window_s) is reported with divided values, so
    // say so and name the speedup.
    const std::string& m = next.status().message();
    const bool durations = m.find("window_s") != std::string::npos ||
                           m.find("quantum_s") != std::string::npos ||
                           m.find("_ms") != std::string::npos;
    const bool scaled = paper_patch.is_object() && paper_patch.contains("speedup");
    if (!durations || !scaled) return next.status();
    return Status::InvalidArgument(m + " (durations after the division by the speedup " +
                                   paper_patch.at("speedup").dump() + ")");
  }
  if (next->host != current->config.host || next->port != current->config.port ||
      next->threads != current->config.threads) {
    return Status::InvalidArgument("listen and threads cannot change while running");
  }
  const bool reset = patch.contains("limits");
  auto limits = reset ? MakeLimits(next->limits, clock) : current->limits;
  auto overload_calls = patch.contains("overload") ? std::make_shared<std::atomic<uint64_t>>(0)
                                                   : current->overload_calls;
  Install(std::make_shared<const Snapshot>(
      Snapshot{std::move(*next), std::move(limits), std::move(overload_calls)}));
  return Status::Ok();
}

HttpResponse Service::Handle(const HttpRequest& req) {
  HttpResponse r;
  Handle(req, &r);
  return r;
}

void Service::Handle(const HttpRequest& req, HttpResponse* r) {
  const uint64_t id = impl_->next_id.fetch_add(1, std::memory_order_relaxed);
  try {
    impl_->Route(req, id, r);
  } catch (const std::exception& e) {  // a bug must not cross into the server
    *r = HttpResponse{};
    internal::SetError(impl_->snap.load()->config.dialect, 500, ErrorKind::kInternal,
                       std::string("internal error: ") + e.what(), "", id, r);
  }
  impl_->stats.CountResponse(r->status);
}

HttpResponse Service::TransportError(int status, std::string_view target) {
  HttpResponse r;
  const Dialect dialect =
      PathOf(target) == "/v1/messages" ? Dialect::kAnthropic : impl_->snap.load()->config.dialect;
  const uint64_t id = impl_->next_id.fetch_add(1, std::memory_order_relaxed);
  if (status == 413) {
    internal::SetError(dialect, 413, ErrorKind::kTooLarge,
                       "Request body too large: the limit is " +
                           std::to_string(impl_->body_limit_bytes.load()) + " bytes.",
                       "", id, &r);
  } else {
    internal::SetError(dialect, status, ErrorKind::kInvalidRequest, "Malformed HTTP request.", "",
                       id, &r);
  }
  r.close = true;
  impl_->stats.CountResponse(r.status);
  return r;
}

void Service::Impl::Route(const HttpRequest& req, uint64_t id, HttpResponse* out) {
  HttpResponse& r = *out;
  r.status = 200;
  r.content_type = "application/json";
  r.headers.clear();
  r.headers.reserve(12);
  r.body.clear();
  r.delay_us = 0;
  r.stream_interval_us = 0;
  r.on_stream_cut = nullptr;
  r.close = false;
  const auto s = snap.load();
  const MockConfig& config = s->config;
  const std::string_view path = PathOf(req.target);
  const bool messages = path == "/v1/messages";
  const Dialect dialect = messages ? Dialect::kAnthropic : config.dialect;
  auto method_not_allowed = [&](const char* allow) {
    r.headers.emplace_back("allow", allow);
    internal::SetError(dialect, 405, ErrorKind::kMethodNotAllowed,
                       "Method " + std::string(req.method) + " not allowed for " +
                           std::string(path) + " (allowed: " + allow + ").",
                       "", id, &r);
  };
  if (messages || path == "/v1/chat/completions") {
    if (req.method == "POST") {
      Chat(*s, req, messages, id, &r);
      return;
    }
    method_not_allowed("POST");
  } else if (path == "/v1/models") {
    if (req.method != "GET") {
      method_not_allowed("GET");
    } else {
      r.body = "{\"object\":\"list\",\"data\":[{\"id\":";
      internal::AppendJsonString(&r.body, config.model);
      r.body += ",\"object\":\"model\",\"created\":1700000000,\"owned_by\":\"mockapi\"}]}";
    }
  } else if (path == "/healthz" || path == "/metrics" || path == "/stats") {
    if (req.method != "GET") {
      method_not_allowed("GET");
    } else if (path == "/healthz") {
      r.content_type = "text/plain";
      r.body = "ok\n";
    } else {
      const auto states = s->limits->global->Peek();
      if (path == "/metrics") {
        r.content_type = "text/plain; version=0.0.4";
        r.body = stats.ToPrometheus(s->limits->options, states);
      } else {
        r.body = stats.ToJson(s->limits->options, states, (clock.NowUs() - start_us) / 1e6).dump();
      }
    }
    return;
  } else if (path == "/admin/config") {
    Admin(req, id, &r);
    return;
  } else {
    internal::SetError(dialect, 404, ErrorKind::kNotFound,
                       "Invalid URL (" + std::string(req.method) + " " + std::string(path) + ")",
                       "", id, &r);
    if (path.substr(0, 4) != "/v1/") return;
  }
  // Every /v1/ answer carries the rate-limit headers of the caller's scope.
  const auto states = s->limits->For(config.scope, KeyOf(req), clock)->Peek();
  internal::AddRateLimitHeaders(dialect, config.profile, states, clock.NowUs(), &r);
}

// The refund of a paced stream cut short: the output it charged minus the
// tokens of the content events written, on the token and output-token
// limits, where the charge still counts (LimiterSet::Refund). Content events
// carry ceil(completion / 64) tokens each and follow `lead_events` others, as
// chat.cpp writes them: OpenAI's role chunk (1); Anthropic's message_start
// and content_block_start (2).
static std::function<void(int64_t)> StreamCutRefund(std::shared_ptr<Limits> limits, LimiterSet* set,
                                             const internal::Usage& u, int64_t output,
                                             int64_t lead_events, int64_t charged_at_us,
                                             internal::Stats& stats) {
  const int64_t per_event = std::max<int64_t>(1, (u.completion_tokens + 63) / 64);
  const int64_t completion = u.completion_tokens;
  return [limits = std::move(limits), set, per_event, completion, output, lead_events,
          charged_at_us, &stats](int64_t events_written) {
    const int64_t generated =
        std::clamp<int64_t>((events_written - lead_events) * per_event, 0, completion);
    const int64_t back = std::max<int64_t>(0, output - generated);
    stats.CountStreamCut(back);
    if (back > 0) set->Refund({0, back, 0, back}, charged_at_us);
  };
}

void Service::Impl::Chat(const Snapshot& s, const HttpRequest& req, bool anthropic, uint64_t id,
                         HttpResponse* r) {
  const MockConfig& c = s.config;
  const Dialect dialect = anthropic ? Dialect::kAnthropic : c.dialect;
  LimiterSet* set = s.limits->For(c.scope, KeyOf(req), clock);
  internal::ChatCall call;
  Status parsed = Status::Ok();
  if (!internal::FastReadChat(req.body, anthropic, &call)) {  // the full parser's errors
    parsed = anthropic ? internal::ParseMessages(req.body, &call)
                       : internal::ParseChatCompletion(req.body, &call);
  }
  if (!parsed.ok()) {
    internal::SetError(dialect, 400, ErrorKind::kInvalidRequest, parsed.message(), call.error_param,
                       id, r);
    internal::AddRateLimitHeaders(dialect, c.profile, set->Peek(), clock.NowUs(), r);
    return;
  }
  // Overload answers come before the limits and consume nothing.
  if (c.overload.share > 0 &&
      internal::Overloaded(c.overload, c.seed, s.overload_calls->fetch_add(1))) {
    internal::SetOverloaded(dialect, c.profile, c.overload, id, r);
    internal::AddRateLimitHeaders(dialect, c.profile, set->Peek(), clock.NowUs(), r);
    AddRequestId(dialect, id, r);
    return;
  }
  // Cost (SPEC section 3): prompt from the shared estimator, completion drawn.
  internal::Usage u;
  // bp::EstimateTokens of the prompt text: ceil(bytes / kBytesPerToken).
  u.prompt_tokens = (call.prompt_bytes + kBytesPerToken - 1) / kBytesPerToken;
  const uint64_t draw = Mix(c.seed ^ Mix(id));
  const CompletionTokensOptions& ct = c.completion_tokens;
  u.completion_tokens =
      ct.uniform ? ct.min + static_cast<int64_t>(draw % uint64_t(ct.max - ct.min + 1)) : ct.value;
  if (ct.clamp_to_max_tokens && call.max_tokens > 0 && u.completion_tokens > call.max_tokens) {
    u.completion_tokens = call.max_tokens;
    u.truncated = true;
  }
  const bool reserve = c.token_accounting == TokenAccounting::kMaxTokens && call.max_tokens > 0;
  const int64_t output = reserve ? call.max_tokens : u.completion_tokens;
  const DimensionCosts cost = {1, u.prompt_tokens + output, u.prompt_tokens, output};
  static constexpr DimensionCosts kRejectedCharge = {1, 0, 0, 0};
  const LimiterDecision d = set->Acquire(cost, c.count_rejected ? &kRejectedCharge : nullptr);
  const int64_t now_us = clock.NowUs();
  if (d.admitted) {
    stats.CountAdmitted(u.prompt_tokens, u.completion_tokens);
    internal::SetCompletionBody(call, u, id, now_us, r);
    // Service time: a base drawn from [min_ms, max_ms] plus per_output_token_ms
    // per completion token; a stream spends the token part between its events.
    const double base_ms =
        c.latency.min_ms + (c.latency.max_ms - c.latency.min_ms) * Unit(Mix(draw));
    const double tokens_ms =
        c.latency.per_output_token_ms * static_cast<double>(u.completion_tokens);
    r->delay_us = static_cast<int64_t>((base_ms + tokens_ms) * 1000.0);
    if (call.stream && tokens_ms > 0) {
      int64_t events = 0;
      for (size_t at = 0; (at = r->body.find("\n\n", at)) != std::string::npos; at += 2) ++events;
      r->delay_us = static_cast<int64_t>(base_ms * 1000.0);
      r->stream_interval_us =
          static_cast<int64_t>(tokens_ms * 1000.0) / std::max<int64_t>(1, events);
      if (c.stream_disconnect == StreamDisconnect::kGenerated) {
        const int64_t lead_events = call.anthropic ? 2 : 1;
        r->on_stream_cut = StreamCutRefund(s.limits, set, u, output, lead_events, now_us, stats);
      }
    }
  } else {
    const LimiterOptions& bound = s.limits->options[d.binding];
    stats.CountRejected(bound.dimension, d.never_fits);
    internal::Rejection x{&d,         &bound,         cost[static_cast<int>(bound.dimension)],
                          call.model, c.organization, id};
    internal::SetRateLimited(dialect, c.profile, x, r);
  }
  internal::AddRateLimitHeaders(dialect, c.profile, d.states, now_us, r);
  AddRequestId(dialect, id, r);
}

void Service::Impl::Admin(const HttpRequest& req, uint64_t id, HttpResponse* r) {
  const Dialect dialect = snap.load()->config.dialect;
  if (req.method == "PUT") {
    auto patch = ParseJsonText(req.body);
    Status st = patch.ok() ? Update(*patch) : WithPrefix(patch.status(), "body");
    if (!st.ok()) {
      internal::SetError(dialect, 400, ErrorKind::kInvalidRequest, st.message(), "", id, r);
      return;
    }
  } else if (req.method != "GET") {
    r->headers.emplace_back("allow", "GET, PUT");
    internal::SetError(dialect, 405, ErrorKind::kMethodNotAllowed,
                       "Method " + std::string(req.method) + " not allowed for /admin/config.", "",
                       id, r);
    return;
  }
  r->body = ConfigToJson(snap.load()->config).dump();
}

}  // namespace bp::mockapi
