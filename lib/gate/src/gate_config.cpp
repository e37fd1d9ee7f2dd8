// bp::Gate configuration and inspection: hot updates of caps and weights
// (I2: the admit script reads them on every call), the state snapshot used by
// bpctl and the tests, and Reset. Key schema: README "The gate".
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "gate_internal.h"

namespace bp {
namespace {

bool PositiveFinite(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

double ReplyToDouble(const ValkeyReply& r, double fallback) {
  if (r.type == ValkeyReply::Type::kInteger) return static_cast<double>(r.integer);
  if (r.type != ValkeyReply::Type::kString) return fallback;
  char* end = nullptr;
  const double v = std::strtod(r.str.c_str(), &end);
  return end == r.str.c_str() ? fallback : v;
}

std::vector<double> SplitNumbers(const std::string& text) {
  std::vector<double> out;
  const char* p = text.c_str();
  char* end = nullptr;
  for (double v = std::strtod(p, &end); end != p; v = std::strtod(p, &end)) {
    out.push_back(v);
    p = end;
  }
  return out;
}

Status CheckReply(const Result<ValkeyReply>& r, const char* what) {
  if (!r.ok()) return r.status();
  if (r->is_error()) return Status::Internal(std::string(what) + ": " + r->str);
  return Status::Ok();
}

Status ValidateCaps(const GateCaps& caps) {
  if (!PositiveFinite(caps.requests_per_s)) {
    return Status::InvalidArgument("requests_per_s must be a positive finite number, got " +
                                   FormatDouble(caps.requests_per_s));
  }
  if (!std::isfinite(caps.tokens_per_s) || caps.tokens_per_s < 0) {
    return Status::InvalidArgument("tokens_per_s must be a finite number >= 0, got " +
                                   FormatDouble(caps.tokens_per_s));
  }
  if (!PositiveFinite(caps.burst_s)) {
    return Status::InvalidArgument("burst_s must be a positive finite number, got " +
                                   FormatDouble(caps.burst_s));
  }
  if (!std::isfinite(caps.max_cost_requests) ||
      (caps.max_cost_requests != 0 && caps.max_cost_requests < 1)) {
    return Status::InvalidArgument(
        "max_cost_requests must be 0 (default) or a finite number >= 1, got " +
        FormatDouble(caps.max_cost_requests));
  }
  if (!std::isfinite(caps.max_cost_tokens) || caps.max_cost_tokens < 0) {
    return Status::InvalidArgument(
        "max_cost_tokens must be a finite number >= 0 (0 = default), got " +
        FormatDouble(caps.max_cost_tokens));
  }
  return Status::Ok();
}

Status ValidateOmega(const std::vector<double>& omega) {
  if (omega.empty()) return Status::InvalidArgument("priority weights: need at least one class");
  for (size_t i = 0; i < omega.size(); ++i) {
    if (!PositiveFinite(omega[i])) {
      return Status::InvalidArgument("priority weight omega_" + std::to_string(i + 1) +
                                     " must be a positive finite number, got " +
                                     FormatDouble(omega[i]));
    }
  }
  return Status::Ok();
}

Status ValidateTenantWeight(const std::string& tenant, double weight) {
  if (!ValidTenantName(tenant)) {
    return Status::InvalidArgument("tenant weight: tenant '" + tenant +
                                   "' must match [A-Za-z0-9_.-]{1,128}");
  }
  if (!PositiveFinite(weight)) {
    return Status::InvalidArgument("tenant weight must be a positive finite number, got " +
                                   FormatDouble(weight));
  }
  return Status::Ok();
}

Status ValidateTuning(const GateTuning& t) {
  if (!std::isfinite(t.slack_ms) || t.slack_ms < 0) {
    return Status::InvalidArgument("slack_ms must be a finite number >= 0");
  }
  if (!std::isfinite(t.lend_fraction) || t.lend_fraction < 0 || t.lend_fraction > 1) {
    return Status::InvalidArgument("lend_fraction must be in [0, 1]");
  }
  if (!std::isfinite(t.grace_ms) || t.grace_ms < 0) {
    return Status::InvalidArgument("grace_ms must be a finite number >= 0");
  }
  if (t.ticket_ttl_ms < 1) return Status::InvalidArgument("ticket_ttl_ms must be >= 1");
  if (!std::isfinite(t.adapt_beta) || t.adapt_beta <= 0 || t.adapt_beta >= 1) {
    return Status::InvalidArgument("adapt_beta must be in (0, 1)");
  }
  if (!PositiveFinite(t.adapt_recover_ms)) {
    return Status::InvalidArgument("adapt_recover_ms must be a positive finite number");
  }
  if (!std::isfinite(t.adapt_window_ms) || t.adapt_window_ms < 0) {
    return Status::InvalidArgument("adapt_window_ms must be a finite number >= 0");
  }
  if (t.adapt_min_429 < 1) return Status::InvalidArgument("adapt_min_429 must be >= 1");
  return Status::Ok();
}

std::vector<std::string> CapsPairs(const GateCaps& caps) {
  // A max cost of 0 deletes the field: the script's default applies.
  auto max_cost = [](double v) { return v > 0 ? FormatDouble(v) : std::string(); };
  return {"requests_per_s",    FormatDouble(caps.requests_per_s),
          "tokens_per_s",      FormatDouble(caps.tokens_per_s),
          "burst_s",           FormatDouble(caps.burst_s),
          "max_cost_requests", max_cost(caps.max_cost_requests),
          "max_cost_tokens",   max_cost(caps.max_cost_tokens)};
}

std::vector<std::string> OmegaPairs(const std::vector<double>& omega, size_t old_classes) {
  std::vector<std::string> out;
  double sum = 0;
  for (size_t i = 0; i < omega.size(); ++i) {
    sum += omega[i];
    out.push_back("omega:" + std::to_string(i + 1));
    out.push_back(FormatDouble(omega[i]));
  }
  const bool none = omega.empty();
  out.insert(out.end(), {"omega_sum", none ? "" : FormatDouble(sum), "classes",
                         none ? "" : std::to_string(omega.size())});
  for (size_t k = omega.size() + 1; k <= old_classes; ++k) {  // "" deletes
    out.push_back("omega:" + std::to_string(k));
    out.push_back("");
  }
  return out;
}

std::vector<std::string> TuningPairs(const GateTuning& t) {
  return {"slack_ms",
          FormatDouble(t.slack_ms),
          "lend_fraction",
          FormatDouble(t.lend_fraction),
          "grace_ms",
          FormatDouble(t.grace_ms),
          "ticket_ttl_ms",
          std::to_string(t.ticket_ttl_ms),
          "adapt",
          t.adapt ? "1" : "0",
          "adapt_beta",
          FormatDouble(t.adapt_beta),
          "adapt_recover_ms",
          FormatDouble(t.adapt_recover_ms),
          "adapt_window_ms",
          FormatDouble(t.adapt_window_ms),
          "adapt_min_429",
          std::to_string(t.adapt_min_429)};
}

Status Gate::SetCaps(const GateCaps& caps) {
  if (Status s = ValidateCaps(caps); !s.ok()) return s;
  return impl_->Configure(CapsPairs(caps));
}

Status Gate::SetPriorityWeights(const std::vector<double>& omega) {
  if (Status s = ValidateOmega(omega); !s.ok()) return s;
  auto old = impl_->Run({"HGET", impl_->prefix + ":state", "classes"});
  if (Status s = CheckReply(old, "set priority weights"); !s.ok()) return s;
  return impl_->Configure(OmegaPairs(omega, static_cast<size_t>(ReplyToDouble(*old, 0))));
}

Status Gate::SetTenantWeight(const std::string& tenant, double weight) {
  if (Status s = ValidateTenantWeight(tenant, weight); !s.ok()) return s;
  return impl_->Configure({"tw:" + tenant, FormatDouble(weight)});
}

Status Gate::UnsetTenantWeight(const std::string& tenant) {
  if (tenant.empty()) return Status::InvalidArgument("tenant weight: empty tenant");
  return impl_->Configure({"tw:" + tenant, ""});
}

Status Gate::SetTuning(const GateTuning& t) {
  if (Status s = ValidateTuning(t); !s.ok()) return s;
  return impl_->Configure(TuningPairs(t));
}

Result<GateState> Gate::State() {
  const std::string& p = impl_->prefix;
  GateState st;
  auto cfg = impl_->Run({"HMGET", p + ":state", "requests_per_s", "tokens_per_s", "burst_s",
                         "classes", "max_cost_requests", "max_cost_tokens"});
  if (Status s = CheckReply(cfg, "state"); !s.ok()) return s;
  st.configured = cfg->elements.size() == 6 && cfg->elements[0].type == ValkeyReply::Type::kString;
  if (st.configured) {
    st.caps.requests_per_s = ReplyToDouble(cfg->elements[0]);
    st.caps.tokens_per_s = ReplyToDouble(cfg->elements[1]);
    st.caps.burst_s = ReplyToDouble(cfg->elements[2], 1.0);
    st.caps.max_cost_requests = ReplyToDouble(cfg->elements[4], 0);
    st.caps.max_cost_tokens = ReplyToDouble(cfg->elements[5], 0);
  }
  const int classes = static_cast<int>(ReplyToDouble(cfg->elements[3], 0));
  for (int k = 1; k <= std::max(classes, 1); ++k) {
    auto w =
        impl_->Run({"HMGET", p + ":state", "omega:" + std::to_string(k), "c:" + std::to_string(k)});
    if (Status s = CheckReply(w, "state"); !s.ok()) return s;
    if (k <= classes) st.omega.push_back(ReplyToDouble(w->elements[0], 1.0));
    const std::vector<double> cv = SplitNumbers(w->elements[1].AsString());
    st.class_requests.push_back(cv.size() == 2 ? cv[0] : 0);
    st.class_tokens.push_back(cv.size() == 2 ? cv[1] : 0);
  }
  // g = "r t ts_us V Dr Dt seq evt_us" (README "Key schema")
  auto g = impl_->Run({"HGET", p + ":state", "g"});
  if (Status s = CheckReply(g, "state"); !s.ok()) return s;
  const std::vector<double> gv = SplitNumbers(g->AsString());
  st.l1_requests = gv.size() > 0 ? gv[0] : st.caps.requests_per_s * st.caps.burst_s;
  st.l1_tokens = gv.size() > 1 ? gv[1] : st.caps.tokens_per_s * st.caps.burst_s;
  st.l1_at_ms = gv.size() > 2 ? gv[2] / 1000 : 0;
  st.virtual_time = gv.size() > 3 ? gv[3] : 0;
  auto tm = impl_->Run({"TIME"});
  if (Status s = CheckReply(tm, "state"); !s.ok()) return s;
  if (tm->elements.size() == 2) {
    st.server_time_ms =
        ReplyToDouble(tm->elements[0]) * 1000 + ReplyToDouble(tm->elements[1]) / 1000;
  }
  // Adaptive caps: 'ad' = "fr tr_us ft tt_us tau_us ..." (release.lua).
  auto ad = impl_->Run({"HMGET", p + ":state", "adapt", "ad"});
  if (Status s = CheckReply(ad, "state"); !s.ok()) return s;
  if (ad->elements.size() == 2) {
    st.adapt = ad->elements[0].AsString() == "1";
    const std::vector<double> av = SplitNumbers(ad->elements[1].AsString());
    if (av.size() >= 5 && av[4] > 0) {
      const double now_us = st.server_time_ms * 1000;
      st.learned_requests_fraction = std::min(1.0, av[0] + std::max(0.0, now_us - av[1]) / av[4]);
      st.learned_tokens_fraction = std::min(1.0, av[2] + std::max(0.0, now_us - av[3]) / av[4]);
      st.learned_requests_decreased_ms = av[0] < 1 ? av[1] / 1000 : 0;
      st.learned_tokens_decreased_ms = av[2] < 1 ? av[3] / 1000 : 0;
    }
  }
  auto seen = impl_->Run({"ZRANGE", p + ":seen", "0", "-1"});
  if (Status s = CheckReply(seen, "state"); !s.ok()) return s;
  for (const auto& m : seen->elements) {
    const std::string id = m.AsString();  // "<k>:<tenant>"
    const auto colon = id.find(':');
    if (colon == std::string::npos) continue;
    GateQueueState q;
    q.priority = std::atoi(id.substr(0, colon).c_str());
    q.tenant = id.substr(colon + 1);
    // q:<id> = "F T_us dr dt bl zs_us admits defers lent"; the weight is
    // computed from the configuration as the script does.
    auto h = impl_->Run({"HMGET", p + ":state", "q:" + id, "tw:" + q.tenant,
                         "omega:" + std::to_string(q.priority)});
    if (Status s = CheckReply(h, "state"); !s.ok()) return s;
    const std::vector<double> qv = SplitNumbers(h->elements[0].AsString());
    if (qv.size() < 9) continue;
    q.tag = qv[0];
    q.backlogged = qv[4] == 1;
    q.admits = static_cast<int64_t>(qv[6]);
    q.defers = static_cast<int64_t>(qv[7]);
    q.lent = static_cast<int64_t>(qv[8]);
    const bool no_priority = impl_->options.ablation == GateAblation::kNoPriority;
    q.weight = ReplyToDouble(h->elements[1], 1.0) *
               (no_priority ? 1.0 : ReplyToDouble(h->elements[2], 1.0));
    st.queues.push_back(std::move(q));
  }
  std::sort(st.queues.begin(), st.queues.end(), [](const auto& a, const auto& b) {
    return a.priority != b.priority ? a.priority < b.priority : a.tenant < b.tenant;
  });
  return st;
}

Status Gate::Impl::DeleteMatching(const std::string& suffix_glob,
                                  const std::function<bool(const std::string&)>& drop) {
  // Glob-escape the prefix: a target may contain * ? [ ] or backslash.
  std::string pattern;
  for (char c : prefix + ":") {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern.push_back('\\');
    pattern.push_back(c);
  }
  pattern += suffix_glob;
  std::string cursor = "0";
  do {
    auto r = Run({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    if (Status s = CheckReply(r, "delete keys"); !s.ok()) return s;
    if (r->elements.size() != 2) return Status::Internal("delete keys: unexpected SCAN reply");
    cursor = r->elements[0].AsString();
    std::vector<std::string> del = {"DEL"};
    for (const auto& k : r->elements[1].elements) {
      if (drop(k.str)) del.push_back(k.str);
    }
    if (del.size() > 1) {
      if (Status s = CheckReply(Run(del), "delete keys"); !s.ok()) return s;
    }
  } while (cursor != "0");
  return Status::Ok();
}

Status Gate::Reset() {
  return impl_->DeleteMatching("*", [](const std::string&) { return true; });
}

}  // namespace bp
