// bp::GateAdmin configuration and inspection: hot updates of caps and weights
// (I2: the admit script reads them on every call) through configure.lua, the
// state snapshot used by bpctl and the tests (state.lua's named fields, read
// in one atomic call), and Reset. The key schema and its records belong to
// lib/gate/lua/prelude.lua; nothing here decodes them.
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

Status CheckReply(const Result<ValkeyReply>& r, const char* what) {
  if (!r.ok()) return r.status();
  if (r->is_error()) return Status::Internal(std::string(what) + ": " + r->str);
  return Status::Ok();
}

double FieldNumber(const std::map<std::string, ValkeyReply>& fields, const std::string& name,
                   double fallback) {
  auto it = fields.find(name);
  return it == fields.end() ? fallback : ReplyToDouble(it->second, fallback);
}

bool CapsOfFields(const std::map<std::string, ValkeyReply>& fields, GateCaps* caps) {
  if (FieldNumber(fields, "configured") != 1) return false;
  caps->requests_per_s = FieldNumber(fields, "requests_per_s");
  caps->tokens_per_s = FieldNumber(fields, "tokens_per_s");
  caps->burst_s = FieldNumber(fields, "burst_s");
  caps->max_cost_requests = FieldNumber(fields, "max_cost_requests");
  caps->max_cost_tokens = FieldNumber(fields, "max_cost_tokens");
  return true;
}

void TuningOfFields(const std::map<std::string, ValkeyReply>& f, GateTuning* t,
                    std::map<std::string, double>* tenant_weights) {
  // Every tuning field is in the reply (state.lua applies prelude.lua's
  // defaults to fields never set).
  t->slack_ms = FieldNumber(f, "slack_ms");
  t->lend_fraction = FieldNumber(f, "lend_fraction");
  t->grace_ms = FieldNumber(f, "grace_ms");
  t->ticket_ttl_ms = static_cast<int64_t>(FieldNumber(f, "ticket_ttl_ms"));
  t->adapt = FieldNumber(f, "adapt") == 1;
  t->adapt_beta = FieldNumber(f, "adapt_beta");
  t->adapt_recover_ms = FieldNumber(f, "adapt_recover_ms");
  t->adapt_window_ms = FieldNumber(f, "adapt_window_ms");
  t->adapt_min_429 = static_cast<int64_t>(FieldNumber(f, "adapt_min_429"));
  auto text = [&](const char* name) {
    auto it = f.find(name);
    return it == f.end() ? std::string() : it->second.AsString();
  };
  t->share_rule =
      text("share_rule") == "flat" ? GateTuning::ShareRule::kFlat : GateTuning::ShareRule::kHier;
  t->class_policy = text("class_policy") == "strict" ? GateTuning::ClassPolicy::kStrict
                                                     : GateTuning::ClassPolicy::kFair;
  if (auto it = f.find("tenant_weights"); it != f.end()) {
    const auto& kv = it->second.elements;
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      (*tenant_weights)[kv[i].AsString()] = ReplyToDouble(kv[i + 1], 1.0);
    }
  }
}

Result<std::map<std::string, ValkeyReply>> Gate::Impl::ReadState(
    const std::vector<std::string>& args) {
  auto r = Eval(lua::kStateLua, args);
  if (Status s = CheckReply(r, "state script"); !s.ok()) return s;
  if (r->type != ValkeyReply::Type::kArray || r->elements.size() % 2 != 0) {
    return Status::Internal("state script: unexpected reply shape");
  }
  std::map<std::string, ValkeyReply> out;
  for (size_t i = 0; i + 1 < r->elements.size(); i += 2) {
    out[r->elements[i].AsString()] = std::move(r->elements[i + 1]);
  }
  return out;
}

Status ValidateCaps(const GateCaps& caps) {
  if (!PositiveFinite(caps.requests_per_s)) {
    return Status::InvalidArgument("requests_per_s must be a positive finite number, got " +
                                   FormatNumber(caps.requests_per_s));
  }
  if (!std::isfinite(caps.tokens_per_s) || caps.tokens_per_s < 0) {
    return Status::InvalidArgument("tokens_per_s must be a finite number >= 0, got " +
                                   FormatNumber(caps.tokens_per_s));
  }
  if (!PositiveFinite(caps.burst_s)) {
    return Status::InvalidArgument("burst_s must be a positive finite number, got " +
                                   FormatNumber(caps.burst_s));
  }
  if (!std::isfinite(caps.max_cost_requests) ||
      (caps.max_cost_requests != 0 && caps.max_cost_requests < 1)) {
    return Status::InvalidArgument(
        "max_cost_requests must be 0 (default) or a finite number >= 1, got " +
        FormatNumber(caps.max_cost_requests));
  }
  // As for requests: a fraction would REJECT every call of one token or more.
  if (!std::isfinite(caps.max_cost_tokens) ||
      (caps.max_cost_tokens != 0 && caps.max_cost_tokens < 1)) {
    return Status::InvalidArgument(
        "max_cost_tokens must be 0 (default) or a finite number >= 1, got " +
        FormatNumber(caps.max_cost_tokens));
  }
  return Status::Ok();
}

Status ValidateOmega(const std::vector<double>& omega) {
  if (omega.empty()) return Status::InvalidArgument("priority weights: need at least one class");
  for (size_t i = 0; i < omega.size(); ++i) {
    if (!PositiveFinite(omega[i])) {
      return Status::InvalidArgument("priority weight omega_" + std::to_string(i + 1) +
                                     " must be a positive finite number, got " +
                                     FormatNumber(omega[i]));
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
                                   FormatNumber(weight));
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

std::string DeclaredText(const nlohmann::ordered_json& declared) {
  return declared.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Status Gate::Impl::Configure(const char* mode, const nlohmann::ordered_json& declared) {
  auto r = Eval(lua::kConfigureLua, {mode, DeclaredText(declared)});
  if (!r.ok()) return r.status();
  if (r->is_error()) return Status::Internal("configure script: " + r->str);
  return Status::Ok();
}

// Hot updates: configure.lua "update" with the part of a declared
// configuration that changes (gate_config_json.h's JSON), one call each.

Status GateAdmin::SetCaps(const GateCaps& caps) {
  if (Status s = ValidateCaps(caps); !s.ok()) return s;
  GateConfig c;
  c.configured = true;
  c.caps = caps;
  return impl_->Configure("update", {{"caps", GateConfigToJson(c).at("caps")}});
}

Status GateAdmin::SetPriorityWeights(const std::vector<double>& omega) {
  if (Status s = ValidateOmega(omega); !s.ok()) return s;
  return impl_->Configure("update", {{"priority_weights", omega}});
}

Status GateAdmin::SetTenantWeight(const std::string& tenant, double weight) {
  if (Status s = ValidateTenantWeight(tenant, weight); !s.ok()) return s;
  return impl_->Configure("update", {{"tenant_weights", {{tenant, weight}}}});
}

Status GateAdmin::UnsetTenantWeight(const std::string& tenant) {
  if (tenant.empty()) return Status::InvalidArgument("tenant weight: empty tenant");
  return impl_->Configure("update", {{"tenant_weights", {{tenant, nullptr}}}});
}

Status GateAdmin::SetTuning(const GateTuning& t) {
  if (Status s = ValidateTuning(t); !s.ok()) return s;
  GateConfig c;
  c.tuning = t;
  return impl_->Configure("update", {{"tuning", GateConfigToJson(c).at("tuning")}});
}

namespace {

// The numbers of a list field of state.lua's reply.
std::vector<double> ListNumbers(const std::map<std::string, ValkeyReply>& fields,
                                const std::string& name, double fallback) {
  std::vector<double> out;
  auto it = fields.find(name);
  if (it == fields.end()) return out;
  for (const ValkeyReply& v : it->second.elements) out.push_back(ReplyToDouble(v, fallback));
  return out;
}

}  // namespace

Result<GateState> GateAdmin::ReadGateState(bool summary) {
  Gate::Impl& impl = *impl_;
  const bool no_priority = impl.options.ablation == GateAblation::kNoPriority;
  std::vector<std::string> args = {"state", no_priority ? "nopriority" : "none"};
  if (summary) args.push_back("summary");
  auto f = impl.ReadState(args);
  if (!f.ok()) return f.status();
  GateState st;
  st.configured = CapsOfFields(*f, &st.caps);
  st.omega = ListNumbers(*f, "omega", 1);
  if (!summary) {
    TuningOfFields(*f, &st.tuning, &st.tenant_weights);
    if (auto it = f->find("server"); it != f->end()) st.server = it->second.AsString();
  }
  const std::pair<const char*, double*> resolved[] = {
      {"learned_requests_per_s", &st.learned_requests_per_s},
      {"learned_tokens_per_s", &st.learned_tokens_per_s},
      {"l1_requests_capacity", &st.l1_requests_capacity},
      {"l1_tokens_capacity", &st.l1_tokens_capacity},
      {"l1_requests_now", &st.l1_requests_now},
      {"l1_tokens_now", &st.l1_tokens_now},
      {"effective_max_cost_requests", &st.effective_max_cost_requests},
      {"effective_max_cost_tokens", &st.effective_max_cost_tokens}};
  for (auto [name, value] : resolved) *value = FieldNumber(*f, name);
  st.class_nominal_share = ListNumbers(*f, "class_nominal_share", 0);
  st.class_current_share = ListNumbers(*f, "class_current_share", 0);
  st.class_requests = ListNumbers(*f, "class_requests", 0);
  st.class_tokens = ListNumbers(*f, "class_tokens", 0);
  if (auto it = f->find("class_counters"); it != f->end()) {
    for (const ValkeyReply& list : it->second.elements) {
      std::map<std::string, ValkeyReply> cf;
      for (size_t i = 0; i + 1 < list.elements.size(); i += 2) {
        cf[list.elements[i].AsString()] = list.elements[i + 1];
      }
      GateClassCounters c;
      const std::pair<const char*, double*> named[] = {
          {"admits", &c.admits},
          {"admitted_requests", &c.admitted_requests},
          {"admitted_tokens", &c.admitted_tokens},
          {"lent", &c.lent},
          {"defers_fair", &c.defers_fair},
          {"defers_l1_requests", &c.defers_l1_requests},
          {"defers_l1_tokens", &c.defers_l1_tokens},
          {"defers_strict", &c.defers_strict},
          {"releases", &c.releases},
          {"released_tokens", &c.released_tokens},
          {"refunded_tokens", &c.refunded_tokens},
          {"surcharged_tokens", &c.surcharged_tokens},
          {"refused", &c.refused}};
      for (auto [name, value] : named) *value = FieldNumber(cf, name);
      st.class_counters.push_back(c);
    }
  }
  st.class_backlogged = ListNumbers(*f, "class_backlogged", 0);
  st.active_queues = FieldNumber(*f, "active_queues");
  st.rejects_priority = FieldNumber(*f, "rejects_priority");
  st.rejects_too_large = FieldNumber(*f, "rejects_too_large");
  st.learned_requests_drops = FieldNumber(*f, "learned_requests_drops");
  st.learned_tokens_drops = FieldNumber(*f, "learned_tokens_drops");
  st.has_bucket_state = f->count("l1_at_ms") == 1;
  st.l1_requests = FieldNumber(*f, "l1_requests");
  st.l1_tokens = FieldNumber(*f, "l1_tokens");
  st.l1_at_ms = FieldNumber(*f, "l1_at_ms");
  st.server_time_ms = FieldNumber(*f, "server_time_ms");
  st.virtual_time = FieldNumber(*f, "virtual_time");
  st.reserved_tokens = FieldNumber(*f, "reserved_tokens");
  st.adapt = FieldNumber(*f, "adapt") == 1;
  st.learned_requests_fraction = FieldNumber(*f, "learned_requests_fraction", 1);
  st.learned_tokens_fraction = FieldNumber(*f, "learned_tokens_fraction", 1);
  st.learned_requests_decreased_ms = FieldNumber(*f, "learned_requests_decreased_ms");
  st.learned_tokens_decreased_ms = FieldNumber(*f, "learned_tokens_decreased_ms");
  if (auto it = f->find("queues"); it != f->end()) {
    for (const ValkeyReply& list : it->second.elements) {
      std::map<std::string, ValkeyReply> qf;
      for (size_t i = 0; i + 1 < list.elements.size(); i += 2) {
        qf[list.elements[i].AsString()] = list.elements[i + 1];
      }
      GateQueueState q;
      q.tenant = qf["tenant"].AsString();
      q.priority = static_cast<int>(FieldNumber(qf, "priority"));
      q.weight = FieldNumber(qf, "weight");
      q.tag = FieldNumber(qf, "tag");
      q.lag = FieldNumber(qf, "lag");
      q.backlogged = FieldNumber(qf, "backlogged") == 1;
      q.fair_share = FieldNumber(qf, "fair_share");
      q.admits = static_cast<int64_t>(FieldNumber(qf, "admits"));
      q.defers = static_cast<int64_t>(FieldNumber(qf, "defers"));
      q.lent = static_cast<int64_t>(FieldNumber(qf, "lent"));
      st.queues.push_back(std::move(q));
    }
  }
  std::sort(st.queues.begin(), st.queues.end(), [](const auto& a, const auto& b) {
    return a.priority != b.priority ? a.priority < b.priority : a.tenant < b.tenant;
  });
  return st;
}

Result<GateState> GateAdmin::State() { return ReadGateState(false); }

Result<GateState> GateAdmin::StateSummary() { return ReadGateState(true); }

Status GateAdmin::Reset() {
  return CheckReply(impl_->Eval(lua::kResetBucketsLua, {"all"}), "reset");
}

}  // namespace bp
