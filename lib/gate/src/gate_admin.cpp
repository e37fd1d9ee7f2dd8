// bp::GateAdmin operations for tools (bpctl), not for the admission path: read and
// replace a target's whole configuration, reset its buckets while keeping the
// configuration, and a dry-run admission on a scratch copy of its keys.
// Key schema: docs/gate.md.
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
  if (server.empty())
    return Status::Internal("INFO server names no valkey_version or redis_version");
  return server;
}

Result<GateConfig> GateAdmin::Config() {
  auto f = impl_->ReadState({"config"});
  if (!f.ok()) return f.status();
  GateConfig c;
  c.configured = CapsOfFields(*f, &c.caps);
  TuningOfFields(*f, &c.tuning, &c.tenant_weights);
  if (auto it = f->find("omega"); it != f->end()) {
    for (const ValkeyReply& v : it->second.elements) c.omega.push_back(ReplyToDouble(v, 1.0));
  }
  return c;
}

Status GateAdmin::ReplaceConfig(const GateConfig& config) {
  if (Status s = ValidateGateConfig(config); !s.ok()) return s;
  // One configure.lua call in mode "declare": it also deletes the tenant
  // weights absent from `config` and the classes above its omega.
  return impl_->Configure("declare", GateConfigToJson(config));
}

Status GateAdmin::ResetBuckets() {
  return CheckReply(impl_->Eval(lua::kResetBucketsLua, {"buckets"}), "reset buckets");
}

Status GateAdmin::ResetLearned() {
  return CheckReply(impl_->Eval(lua::kResetBucketsLua, {"learned"}), "reset learned");
}

Decision GateAdmin::DryRunAdmit(const AdmitRequest& request) {
  if (auto invalid = InvalidAdmitRequest(request)) return *invalid;
  Decision d;
  std::string failure;
  {
    std::lock_guard lock(impl_->mu);
    ValkeyConnection& conn = impl_->conn;
    constexpr auto kStatic = ValkeyConnection::ScriptText::kStatic;
    Status s = impl_->ConnectForTool();
    // dry_run.lua names the scratch keys (the target's, under a random
    // suffix in the same slot) and copies them; admit.lua runs on them.
    Result<ValkeyReply> copy = s.ok() ? conn.EvalScript(lua::kDryRunLua, {impl_->state_key},
                                                        {"copy", RandomSuffix()}, kStatic)
                                      : Result<ValkeyReply>(s);
    s = CheckReply(copy, "dry run copy");
    const std::string scratch = s.ok() ? copy->AsString() : "";
    failure = s.ok() ? ParseAdmitReply(conn.EvalScript(lua::kAdmitLua, {scratch},
                                                       AdmitArgs(impl_->options, request), kStatic),
                                       &d)
                     : s.ToString();
    if (!scratch.empty() && conn.connected()) {  // best effort: the copies expire anyway
      const std::string ticket = failure.empty() && d.verdict == Verdict::kAdmit ? d.ticket : "";
      conn.EvalScript(lua::kDryRunLua, {scratch}, {"drop", ticket}, kStatic);
    }
  }
  d.ticket.clear();
  if (failure.empty()) return d;
  d = Decision{};
  d.verdict = Verdict::kFailOpen;
  d.reason = failure;
  return d;
}

}  // namespace bp
