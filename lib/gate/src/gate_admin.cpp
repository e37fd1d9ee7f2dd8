// bp::Gate operations for tools (bpctl), not for the admission path: read and
// replace a target's whole configuration, reset its buckets while keeping the
// configuration, and a dry-run admission on a scratch copy of its keys.
// Key schema: README "The gate".
#include <cstdlib>
#include <random>

#include "gate_internal.h"

namespace bp {
namespace {

// A 16-hex-digit name for a dry run's scratch keys.
std::string RandomSuffix() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint64_t v = rng(); out.size() < 16; v >>= 4) out.push_back(kHex[v & 15]);
  return out;
}

}  // namespace

Status ValidateGateConfig(const GateConfig& c) {
  if (!c.configured) return Status::InvalidArgument("caps: required (the gate needs caps)");
  if (Status s = ValidateCaps(c.caps); !s.ok()) return {s.code(), "caps: " + s.message()};
  if (!c.omega.empty()) {
    if (Status s = ValidateOmega(c.omega); !s.ok()) return s;
  }
  for (const auto& [tenant, weight] : c.tenant_weights) {
    if (Status s = ValidateTenantWeight(tenant, weight); !s.ok()) {
      return {s.code(), "tenant_weights." + tenant + ": " + s.message()};
    }
  }
  if (Status s = ValidateTuning(c.tuning); !s.ok()) return {s.code(), "tuning: " + s.message()};
  return Status::Ok();
}

Result<GateConfig> Gate::Config() {
  const std::string h = impl_->prefix + ":state";
  auto f = impl_->Run({"HMGET", h, "requests_per_s", "tokens_per_s", "burst_s", "classes",
                       "slack_ms", "lend_fraction", "grace_ms", "ticket_ttl_ms", "adapt",
                       "adapt_beta", "adapt_recover_ms", "adapt_window_ms", "adapt_min_429",
                       "max_cost_requests", "max_cost_tokens"});
  if (Status s = CheckReply(f, "config"); !s.ok()) return s;
  if (f->elements.size() != 15) return Status::Internal("config: unexpected HMGET reply");
  const auto& e = f->elements;
  GateConfig c;
  c.configured = e[0].type == ValkeyReply::Type::kString;
  if (c.configured) {
    c.caps.requests_per_s = ReplyToDouble(e[0]);
    c.caps.tokens_per_s = ReplyToDouble(e[1], 0);
    c.caps.burst_s = ReplyToDouble(e[2], 1.0);
    c.caps.max_cost_requests = ReplyToDouble(e[13], 0);
    c.caps.max_cost_tokens = ReplyToDouble(e[14], 0);
  }
  const GateTuning defaults;
  c.tuning.slack_ms = ReplyToDouble(e[4], defaults.slack_ms);
  c.tuning.lend_fraction = ReplyToDouble(e[5], defaults.lend_fraction);
  c.tuning.grace_ms = ReplyToDouble(e[6], defaults.grace_ms);
  c.tuning.ticket_ttl_ms =
      static_cast<int64_t>(ReplyToDouble(e[7], static_cast<double>(defaults.ticket_ttl_ms)));
  c.tuning.adapt = e[8].AsString() == "1";
  c.tuning.adapt_beta = ReplyToDouble(e[9], defaults.adapt_beta);
  c.tuning.adapt_recover_ms = ReplyToDouble(e[10], defaults.adapt_recover_ms);
  c.tuning.adapt_window_ms = ReplyToDouble(e[11], defaults.adapt_window_ms);
  c.tuning.adapt_min_429 =
      static_cast<int64_t>(ReplyToDouble(e[12], static_cast<double>(defaults.adapt_min_429)));
  const int classes = static_cast<int>(ReplyToDouble(e[3], 0));
  if (classes > 0) {
    std::vector<std::string> cmd = {"HMGET", h};
    for (int k = 1; k <= classes; ++k) cmd.push_back("omega:" + std::to_string(k));
    auto w = impl_->Run(cmd);
    if (Status s = CheckReply(w, "config"); !s.ok()) return s;
    for (const auto& v : w->elements) c.omega.push_back(ReplyToDouble(v, 1.0));
  }
  std::string cursor = "0";
  do {
    auto r = impl_->Run({"HSCAN", h, cursor, "MATCH", "tw:*", "COUNT", "1000"});
    if (Status s = CheckReply(r, "config"); !s.ok()) return s;
    if (r->elements.size() != 2) return Status::Internal("config: unexpected HSCAN reply");
    cursor = r->elements[0].AsString();
    const auto& kv = r->elements[1].elements;
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      c.tenant_weights[kv[i].str.substr(3)] = ReplyToDouble(kv[i + 1], 1.0);
    }
  } while (cursor != "0");
  return c;
}

Status Gate::ReplaceConfig(const GateConfig& config) {
  if (Status s = ValidateGateConfig(config); !s.ok()) return s;
  auto old = Config();
  if (!old.ok()) return old.status();
  std::vector<std::string> pairs = CapsPairs(config.caps);
  const auto omega = OmegaPairs(config.omega, old->omega.size());
  const auto tuning = TuningPairs(config.tuning);
  pairs.insert(pairs.end(), omega.begin(), omega.end());
  pairs.insert(pairs.end(), tuning.begin(), tuning.end());
  for (const auto& [tenant, weight] : config.tenant_weights) {
    pairs.push_back("tw:" + tenant);
    pairs.push_back(FormatDouble(weight));
  }
  for (const auto& [tenant, weight] : old->tenant_weights) {
    if (config.tenant_weights.count(tenant) == 0) {
      pairs.push_back("tw:" + tenant);
      pairs.push_back("");  // deletes
    }
  }
  return impl_->Configure(pairs);
}

Status Gate::ResetBuckets() {
  auto r = impl_->Eval(lua::kResetBucketsLua, {});
  if (Status s = CheckReply(r, "reset buckets"); !s.ok()) return s;
  const int64_t seq = r->integer;
  if (seq <= 0) return Status::Ok();
  const std::string tk = impl_->prefix + ":tk:";
  return impl_->DeleteMatching("tk:*", [&](const std::string& key) {
    if (key.compare(0, tk.size(), tk) != 0) return false;
    char* end = nullptr;
    const long long n = std::strtoll(key.c_str() + tk.size(), &end, 10);
    return *end == '\0' && n >= 1 && n <= seq;  // issued before the reset
  });
}

Status Gate::ResetLearned() {
  return CheckReply(impl_->Run({"HDEL", impl_->prefix + ":state", "ad"}), "reset learned");
}

Decision Gate::DryRunAdmit(const AdmitRequest& request) {
  if (auto invalid = InvalidAdmitRequest(request)) return *invalid;
  const std::string& p = impl_->prefix;
  const std::string scratch = p + ":dry:" + RandomSuffix();  // same hash tag, same slot
  const char* kKeys[] = {":state", ":bl", ":bx", ":seen"};
  std::vector<std::vector<std::string>> copy = {{"MULTI"}};
  std::vector<std::string> del = {"DEL"};
  for (const char* k : kKeys) {
    copy.push_back({"COPY", p + k, scratch + k, "REPLACE"});
    copy.push_back({"PEXPIRE", scratch + k, "60000"});  // if we die before the DEL
    del.push_back(scratch + k);
  }
  copy.push_back({"EXEC"});
  Decision d;
  std::string failure;
  {
    std::lock_guard lock(impl_->mu);
    ValkeyConnection& conn = impl_->conn;
    Status s = impl_->ConnectForTool();
    bool in_multi = false;
    for (size_t i = 0; s.ok() && i < copy.size(); ++i) {
      auto r = conn.Command(copy[i]);
      const bool exec = i + 1 == copy.size();
      in_multi = !exec;
      s = CheckReply(r, "dry run copy");
      if (s.ok() && exec && r->type != ValkeyReply::Type::kArray) {
        s = Status::Internal("dry run copy: transaction aborted");
      }
    }
    if (!s.ok() && in_multi && conn.connected()) conn.Command({"DISCARD"});
    failure = s.ok() ? ParseAdmitReply(conn.EvalScript(lua::kAdmitLua, {scratch},
                                                       AdmitArgs(impl_->options, request)),
                                       &d)
                     : s.ToString();
    if (failure.empty() && d.verdict == Verdict::kAdmit) del.push_back(scratch + ":tk:" + d.ticket);
    if (conn.connected()) conn.Command(del);  // best effort: the copies expire anyway
  }
  d.ticket.clear();
  if (failure.empty()) return d;
  d = Decision{};
  d.verdict = Verdict::kFailOpen;
  d.reason = failure;
  return d;
}

}  // namespace bp
