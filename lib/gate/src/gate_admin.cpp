// bp::GateAdmin operations for tools (bpctl), not for the admission path: read and
// replace a target's whole configuration, reset its buckets while keeping the
// configuration, and a dry-run admission on a scratch copy of its keys.
// Key schema: docs/gate.md.
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

GateAdmin::GateAdmin(GateOptions options)
    : owned_(std::make_unique<Gate>(std::move(options))),
      gate_(owned_.get()),
      impl_(gate_->impl_.get()) {}
GateAdmin::GateAdmin(Gate& gate) : gate_(&gate), impl_(gate.impl_.get()) {}
GateAdmin::~GateAdmin() = default;

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

Result<std::string> GateAdmin::Server() {
  auto r = impl_->Run({"INFO", "server"});
  if (!r.ok()) return r.status();
  if (r->is_error()) return Status::Internal("INFO server: " + r->str);
  std::string server = ServerFromInfo(r->str);
  if (server.empty()) return Status::Internal("INFO server names no valkey_version or redis_version");
  return server;
}

Result<GateConfig> GateAdmin::Config() {
  auto f = impl_->ReadState({"config"});
  if (!f.ok()) return f.status();
  GateConfig c;
  c.configured = CapsOfFields(*f, &c.caps);
  // Every tuning field is in the reply (state.lua applies prelude.lua's
  // defaults to fields never set).
  c.tuning.slack_ms = FieldNumber(*f, "slack_ms");
  c.tuning.lend_fraction = FieldNumber(*f, "lend_fraction");
  c.tuning.grace_ms = FieldNumber(*f, "grace_ms");
  c.tuning.ticket_ttl_ms = static_cast<int64_t>(FieldNumber(*f, "ticket_ttl_ms"));
  c.tuning.adapt = FieldNumber(*f, "adapt") == 1;
  c.tuning.adapt_beta = FieldNumber(*f, "adapt_beta");
  c.tuning.adapt_recover_ms = FieldNumber(*f, "adapt_recover_ms");
  c.tuning.adapt_window_ms = FieldNumber(*f, "adapt_window_ms");
  c.tuning.adapt_min_429 = static_cast<int64_t>(FieldNumber(*f, "adapt_min_429"));
  auto text = [&](const char* name) {
    auto it = f->find(name);
    return it == f->end() ? std::string() : it->second.AsString();
  };
  if (text("share_rule") == "flat") c.tuning.share_rule = GateTuning::ShareRule::kFlat;
  if (text("class_policy") == "strict") c.tuning.class_policy = GateTuning::ClassPolicy::kStrict;
  if (auto it = f->find("omega"); it != f->end()) {
    for (const ValkeyReply& v : it->second.elements) c.omega.push_back(ReplyToDouble(v, 1.0));
  }
  if (auto it = f->find("tenant_weights"); it != f->end()) {
    const auto& kv = it->second.elements;
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      c.tenant_weights[kv[i].AsString()] = ReplyToDouble(kv[i + 1], 1.0);
    }
  }
  return c;
}

std::vector<std::string> ConfigPairs(const GateConfig& config) {
  std::vector<std::string> pairs = CapsPairs(config.caps);
  const auto omega = OmegaPairs(config.omega);
  const auto tuning = TuningPairs(config.tuning);
  pairs.insert(pairs.end(), omega.begin(), omega.end());
  pairs.insert(pairs.end(), tuning.begin(), tuning.end());
  for (const auto& [tenant, weight] : config.tenant_weights) {
    pairs.push_back("tw:" + tenant);
    pairs.push_back(FormatDouble(weight));
  }
  return pairs;
}

Status GateAdmin::ReplaceConfig(const GateConfig& config) {
  if (Status s = ValidateGateConfig(config); !s.ok()) return s;
  // One configure.lua call in mode "replace": it also deletes the tenant
  // weights absent from `config` and the classes above its omega.
  return impl_->Configure("replace", ConfigPairs(config));
}

Status GateAdmin::ResetBuckets() {
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

Status GateAdmin::ResetLearned() {
  return CheckReply(impl_->Run({"HDEL", impl_->state_key, "ad", "ah"}), "reset learned");
}

Decision GateAdmin::DryRunAdmit(const AdmitRequest& request) {
  if (auto invalid = InvalidAdmitRequest(request)) return *invalid;
  const std::string& p = impl_->prefix;
  const std::string scratch = p + ":dry:" + RandomSuffix();  // same hash tag, same slot
  const char* kKeys[] = {":state", ":bl", ":bx", ":seen", ":rsv"};
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
    failure = s.ok() ? ParseAdmitReply(conn.EvalScript(lua::kAdmitLua, {scratch + ":state"},
                                                       AdmitArgs(impl_->options, request),
                                                       ValkeyConnection::ScriptText::kStatic),
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
