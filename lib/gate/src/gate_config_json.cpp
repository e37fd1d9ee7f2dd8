// The declared-configuration format (gate_config_json.h): GateConfig <-> JSON,
// strict on input so a file is validated as a whole before anything is
// written, and the ranges tools accept.
#include "bp/gate_config_json.h"

#include <cmath>
#include <initializer_list>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "bp/json_fields.h"

namespace bp {
namespace {

using json = nlohmann::ordered_json;
using Fields = OrderedJsonFields;

// The range of one number field (bp/gate_ranges.h), stated once for the
// reader (the JSON value in the message) and CheckGateConfigRanges (the
// struct's value), in json_fields.h's shape: "must be a number in [1e-06,
// 1e+06]", "must be 0 (the default) or a number in [1, 1e+09]".
struct NumberRule {
  const char* key;
  NumberRange range;
  std::string note;      // after the range: " (0.001 to 1e+09 rpm)"
  bool zero_is_default;  // 0 is accepted too: the gate's default
};

std::string RuleText(const NumberRule& rule) {
  if (rule.zero_is_default) {
    return "must be 0 (the default) or a number in " + RangeText(rule.range) + rule.note;
  }
  return NumberRangeText(rule.range) + rule.note;
}

bool Accepts(const NumberRule& rule, double v) {
  return (rule.zero_is_default && v == 0) || InRange(v, rule.range);
}

template <typename Struct>
struct FieldRule {
  NumberRule rule;
  double Struct::*field;
};

// GateCaps: per second, the per-minute ranges bpctl's --rpm / --tpm take; a
// max cost below 1 would REJECT every call of one request or one token.
const std::vector<FieldRule<GateCaps>>& CapsRules() {
  static const std::vector<FieldRule<GateCaps>> rules = {
      {{"requests_per_s", {kMinGateRpm / 60, kMaxGateRpm / 60},
        " (" + FormatNumber(kMinGateRpm) + " to " + FormatNumber(kMaxGateRpm) + " rpm)", false},
       &GateCaps::requests_per_s},
      {{"tokens_per_s", {0, kMaxGateTpm / 60}, " (0 to " + FormatNumber(kMaxGateTpm) + " tpm)",
        false},
       &GateCaps::tokens_per_s},
      {{"burst_s", {kMinGateBurstS, kMaxGateBurstS}, "", false}, &GateCaps::burst_s},
      {{"max_cost_requests", {1, kMaxGateCostRequests}, "", true}, &GateCaps::max_cost_requests},
      {{"max_cost_tokens", {1, kMaxGateCostTokens}, "", true}, &GateCaps::max_cost_tokens}};
  return rules;
}

const std::vector<FieldRule<GateTuning>>& TuningRules() {
  static const std::vector<FieldRule<GateTuning>> rules = {
      {{"slack_ms", AtLeast(0), "", false}, &GateTuning::slack_ms},
      {{"lend_fraction", {0, 1}, "", false}, &GateTuning::lend_fraction},
      {{"grace_ms", AtLeast(0), "", false}, &GateTuning::grace_ms},
      {{"adapt_beta", kGateAdaptBetaRange, "", false}, &GateTuning::adapt_beta},
      {{"adapt_recover_ms", kGateAdaptRecoverMsRange, "", false}, &GateTuning::adapt_recover_ms},
      {{"adapt_window_ms", kGateAdaptWindowMsRange, "", false}, &GateTuning::adapt_window_ms}};
  return rules;
}

// The integer fields of GateTuning: [1, max].
struct IntRule {
  const char* key;
  int64_t max;
  int64_t GateTuning::*field;
};
constexpr IntRule kTuningInts[] = {
    {"ticket_ttl_ms", kMaxGateTicketTtlMs, &GateTuning::ticket_ttl_ms},
    {"adapt_min_429", kMaxGateAdaptMin429, &GateTuning::adapt_min_429}};

const NumberRule kWeightRule{"", {kMinGateWeight, kMaxGateWeight}, "", false};

// *out = `v` when it is a number `rule` accepts; else `r` keeps the error
// "PATH.KEY: RULE, got V" (V the JSON value as written) and *out is unchanged.
bool ReadNumber(Fields& r, const std::string& key, const json& v, const NumberRule& rule,
                double* out) {
  if (!v.is_number() || !Accepts(rule, v.get<double>())) {
    r.Fail(key, RuleText(rule) + ", got " + v.dump());
    return false;
  }
  *out = v.get<double>();
  return true;
}

void ReadCaps(const json& j, GateConfig* c, std::string* error) {
  if (j.is_null()) return;  // not configured
  Fields r(j, "caps", error);
  r.OnlyKeys({"requests_per_s", "tokens_per_s", "burst_s", "max_cost_requests", "max_cost_tokens"});
  c->configured = true;
  c->caps.tokens_per_s = 0;
  c->caps.burst_s = kDefaultGateBurstS;
  if (r.ok() && !r.Has("requests_per_s")) r.Fail("requests_per_s", "missing (required)");
  for (const auto& [rule, field] : CapsRules()) {
    if (r.ok() && r.Has(rule.key)) ReadNumber(r, rule.key, r.at(rule.key), rule, &(c->caps.*field));
  }
}

void ReadTuning(const json& j, GateTuning* t, std::string* error) {
  Fields r(j, "tuning", error);
  r.OnlyKeys({"slack_ms", "lend_fraction", "grace_ms", "ticket_ttl_ms", "adapt", "adapt_beta",
              "adapt_recover_ms", "adapt_window_ms", "adapt_min_429", "share_rule",
              "class_policy"});
  for (const auto& [rule, field] : TuningRules()) {
    if (r.ok() && r.Has(rule.key)) ReadNumber(r, rule.key, r.at(rule.key), rule, &(t->*field));
  }
  for (const IntRule& rule : kTuningInts) r.Int(rule.key, 1, rule.max, &(t->*rule.field));
  r.Bool("adapt", &t->adapt);
  // The enums' order is the format's names' order.
  int share = t->share_rule == GateTuning::ShareRule::kFlat ? 1 : 0;
  r.Enum("share_rule", &share, {"hier", "flat"});
  t->share_rule = share == 1 ? GateTuning::ShareRule::kFlat : GateTuning::ShareRule::kHier;
  int policy = t->class_policy == GateTuning::ClassPolicy::kStrict ? 1 : 0;
  r.Enum("class_policy", &policy, {"fair", "strict"});
  t->class_policy = policy == 1 ? GateTuning::ClassPolicy::kStrict : GateTuning::ClassPolicy::kFair;
}

const char kTenantRule[] = "must be a tenant name: 1-128 bytes of [A-Za-z0-9_.-]";

}  // namespace

Status CheckGateConfigRanges(const GateConfig& c) {
  auto refuse = [](const std::string& field, const NumberRule& rule, double v) {
    return Status::InvalidArgument(field + ": " + RuleText(rule) + ", got " + FormatNumber(v));
  };
  if (c.configured) {
    for (const auto& [rule, field] : CapsRules()) {
      if (!Accepts(rule, c.caps.*field)) {
        return refuse(std::string("caps.") + rule.key, rule, c.caps.*field);
      }
    }
  }
  if (c.omega.size() > kMaxGateClasses) {
    return Status::InvalidArgument("priority_weights: at most " + std::to_string(kMaxGateClasses) +
                                   " classes, got " + std::to_string(c.omega.size()));
  }
  for (size_t k = 0; k < c.omega.size(); ++k) {
    if (!Accepts(kWeightRule, c.omega[k])) {
      return refuse("priority_weights[" + std::to_string(k) + "]", kWeightRule, c.omega[k]);
    }
  }
  for (const auto& [tenant, w] : c.tenant_weights) {
    if (!ValidTenantName(tenant)) {
      return Status::InvalidArgument("tenant_weights." + tenant + ": " + kTenantRule);
    }
    if (!Accepts(kWeightRule, w)) return refuse("tenant_weights." + tenant, kWeightRule, w);
  }
  for (const auto& [rule, field] : TuningRules()) {
    if (!Accepts(rule, c.tuning.*field)) {
      return refuse(std::string("tuning.") + rule.key, rule, c.tuning.*field);
    }
  }
  for (const IntRule& rule : kTuningInts) {
    const int64_t v = c.tuning.*rule.field;
    if (v < 1 || v > rule.max) {
      return Status::InvalidArgument(std::string("tuning.") + rule.key + ": " +
                                     IntRangeText(1, rule.max) + ", got " + std::to_string(v));
    }
  }
  return Status::Ok();
}

nlohmann::ordered_json GateConfigToJson(const GateConfig& c) {
  json j;
  j["version"] = 1;
  if (c.configured) {
    j["caps"] = {{"requests_per_s", c.caps.requests_per_s},
                 {"tokens_per_s", c.caps.tokens_per_s},
                 {"burst_s", c.caps.burst_s}};
    // Optional: written only when set (0 = the gate's default).
    if (c.caps.max_cost_requests > 0) j["caps"]["max_cost_requests"] = c.caps.max_cost_requests;
    if (c.caps.max_cost_tokens > 0) j["caps"]["max_cost_tokens"] = c.caps.max_cost_tokens;
  } else {
    j["caps"] = nullptr;
  }
  j["priority_weights"] = c.omega;
  j["tenant_weights"] = json::object();
  for (const auto& [tenant, weight] : c.tenant_weights) j["tenant_weights"][tenant] = weight;
  j["tuning"] = {
      {"slack_ms", c.tuning.slack_ms},
      {"lend_fraction", c.tuning.lend_fraction},
      {"grace_ms", c.tuning.grace_ms},
      {"ticket_ttl_ms", c.tuning.ticket_ttl_ms},
      {"adapt", c.tuning.adapt},
      {"adapt_beta", c.tuning.adapt_beta},
      {"adapt_recover_ms", c.tuning.adapt_recover_ms},
      {"adapt_window_ms", c.tuning.adapt_window_ms},
      {"adapt_min_429", c.tuning.adapt_min_429},
      {"share_rule", c.tuning.share_rule == GateTuning::ShareRule::kFlat ? "flat" : "hier"},
      {"class_policy",
       c.tuning.class_policy == GateTuning::ClassPolicy::kStrict ? "strict" : "fair"}};
  return j;
}

Result<GateConfig> GateConfigFromJson(const nlohmann::ordered_json& j) {
  std::string error;
  Fields r(j, "", &error);
  r.OnlyKeys({"version", "caps", "priority_weights", "tenant_weights", "tuning"});
  if (r.ok() && !(r.Has("version") && j.at("version") == 1)) {
    r.Fail("version", "must be 1, got " + (r.Has("version") ? j.at("version").dump() : "nothing"));
  }
  if (r.ok() && !r.Has("caps")) r.Fail("caps", "missing (required; null when not configured)");
  if (!r.ok()) return r.status();
  GateConfig c;
  ReadCaps(j.at("caps"), &c, &error);
  if (r.ok() && r.Has("priority_weights")) {
    const json& w = j.at("priority_weights");
    if (!w.is_array()) r.Fail("priority_weights", "must be an array of numbers, got " + w.dump());
    for (size_t i = 0; r.ok() && w.is_array() && i < w.size(); ++i) {
      double v = 0;
      if (ReadNumber(r, "priority_weights[" + std::to_string(i) + "]", w[i], kWeightRule, &v)) {
        c.omega.push_back(v);
      }
    }
  }
  if (r.ok() && r.Has("tenant_weights")) {
    const json& w = j.at("tenant_weights");
    if (!w.is_object()) r.Fail("tenant_weights", "must be an object of numbers, got " + w.dump());
    for (auto it = w.begin(); r.ok() && w.is_object() && it != w.end(); ++it) {
      const std::string field = "tenant_weights." + it.key();
      if (!ValidTenantName(it.key())) {
        r.Fail(field, kTenantRule);
      } else if (double v = 0; ReadNumber(r, field, it.value(), kWeightRule, &v)) {
        c.tenant_weights[it.key()] = v;
      }
    }
  }
  if (r.ok() && r.Has("tuning")) ReadTuning(j.at("tuning"), &c.tuning, &error);
  if (!r.ok()) return r.status();
  // Beyond the fields read above: the number of classes, and caps present.
  if (Status s = CheckGateConfigRanges(c); !s.ok()) return s;
  if (Status s = ValidateGateConfig(c); !s.ok()) return s;
  return c;
}

Result<nlohmann::ordered_json> ParseGateConfigText(std::string_view text) {
  auto j = ParseJsonText<json>(text, JsonDuplicates::kRefuse);
  if (!j.ok() && text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument("empty file (expected the JSON of `bpctl export`)");
  }
  return j;
}

Result<GateConfig> ReadGateConfigFile(const std::string& path) {
  auto j = ReadJsonFile<json>(path, "gate configuration", JsonDuplicates::kRefuse);
  if (!j.ok()) return j.status();
  auto c = GateConfigFromJson(*j);
  if (!c.ok()) return WithPrefix(c.status(), path);
  return c;
}

}  // namespace bp
