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

// Numbers are read as any number here; their ranges are ValidateGateConfig's
// and CheckGateConfigRanges', with messages that name the rule.
void ReadCaps(const json& j, GateConfig* c, std::string* error) {
  if (j.is_null()) return;  // not configured
  Fields r(j, "caps", error);
  r.OnlyKeys({"requests_per_s", "tokens_per_s", "burst_s", "max_cost_requests", "max_cost_tokens"});
  c->configured = true;
  c->caps.tokens_per_s = 0;
  c->caps.burst_s = kDefaultGateBurstS;
  r.Number("requests_per_s", &c->caps.requests_per_s, Need::kRequired);
  for (auto [key, out] :
       {std::pair{"tokens_per_s", &c->caps.tokens_per_s}, std::pair{"burst_s", &c->caps.burst_s},
        std::pair{"max_cost_requests", &c->caps.max_cost_requests},
        std::pair{"max_cost_tokens", &c->caps.max_cost_tokens}}) {
    r.Number(key, out);
  }
}

void ReadTuning(const json& j, GateTuning* t, std::string* error) {
  Fields r(j, "tuning", error);
  r.OnlyKeys({"slack_ms", "lend_fraction", "grace_ms", "ticket_ttl_ms", "adapt", "adapt_beta",
              "adapt_recover_ms", "adapt_window_ms", "adapt_min_429", "share_rule",
              "class_policy"});
  for (auto [key, out] :
       {std::pair{"slack_ms", &t->slack_ms}, std::pair{"lend_fraction", &t->lend_fraction},
        std::pair{"grace_ms", &t->grace_ms}, std::pair{"adapt_beta", &t->adapt_beta},
        std::pair{"adapt_recover_ms", &t->adapt_recover_ms},
        std::pair{"adapt_window_ms", &t->adapt_window_ms}}) {
    r.Number(key, out);
  }
  r.Int("ticket_ttl_ms", &t->ticket_ttl_ms);
  r.Int("adapt_min_429", &t->adapt_min_429);
  r.Bool("adapt", &t->adapt);
  // The enums' order is the format's names' order.
  int share = t->share_rule == GateTuning::ShareRule::kFlat ? 1 : 0;
  r.Enum("share_rule", &share, {"hier", "flat"});
  t->share_rule = share == 1 ? GateTuning::ShareRule::kFlat : GateTuning::ShareRule::kHier;
  int policy = t->class_policy == GateTuning::ClassPolicy::kStrict ? 1 : 0;
  r.Enum("class_policy", &policy, {"fair", "strict"});
  t->class_policy = policy == 1 ? GateTuning::ClassPolicy::kStrict : GateTuning::ClassPolicy::kFair;
}

}  // namespace

Status CheckGateConfigRanges(const GateConfig& c) {
  auto check = [](const std::string& field, double v, double min, double max,
                  const std::string& note = "") {
    if (v >= min && v <= max) return Status::Ok();
    return Status::InvalidArgument(field + ": must be in " + RangeText(NumberRange{min, max}) +
                                   note + ", got " + FormatNumber(v));
  };
  if (c.configured) {
    for (Status s :
         {check("caps.requests_per_s", c.caps.requests_per_s, kMinGateRpm / 60, kMaxGateRpm / 60,
                " (" + FormatNumber(kMinGateRpm) + " to " + FormatNumber(kMaxGateRpm) + " rpm)"),
          check("caps.tokens_per_s", c.caps.tokens_per_s, 0, kMaxGateTpm / 60,
                " (0 to " + FormatNumber(kMaxGateTpm) + " tpm)"),
          check("caps.burst_s", c.caps.burst_s, kMinGateBurstS, kMaxGateBurstS),
          // The ranges of `set cap --max-cost-requests / --max-cost-tokens`.
          check("caps.max_cost_requests", c.caps.max_cost_requests, 0, kMaxGateCostRequests),
          check("caps.max_cost_tokens", c.caps.max_cost_tokens, 0, kMaxGateCostTokens)}) {
      if (!s.ok()) return s;
    }
  }
  if (c.omega.size() > kMaxGateClasses) {
    return Status::InvalidArgument("priority_weights: at most " + std::to_string(kMaxGateClasses) +
                                   " classes, got " + std::to_string(c.omega.size()));
  }
  for (size_t k = 0; k < c.omega.size(); ++k) {
    Status s = check("priority_weights[" + std::to_string(k) + "]", c.omega[k], kMinGateWeight,
                     kMaxGateWeight);
    if (!s.ok()) return s;
  }
  for (const auto& [tenant, w] : c.tenant_weights) {
    if (Status s = check("tenant_weights." + tenant, w, kMinGateWeight, kMaxGateWeight); !s.ok())
      return s;
  }
  const GateTuning& t = c.tuning;
  for (auto [field, v, range] :
       {std::tuple{"tuning.adapt_beta", t.adapt_beta, kGateAdaptBetaRange},
        std::tuple{"tuning.adapt_recover_ms", t.adapt_recover_ms, kGateAdaptRecoverMsRange},
        std::tuple{"tuning.adapt_window_ms", t.adapt_window_ms, kGateAdaptWindowMsRange}}) {
    if (!InRange(v, range)) {
      return Status::InvalidArgument(std::string(field) + ": must be in " + RangeText(range) +
                                     ", got " + FormatNumber(v));
    }
  }
  if (t.adapt_min_429 < 1 || t.adapt_min_429 > kMaxGateAdaptMin429) {
    return Status::InvalidArgument("tuning.adapt_min_429: " + IntRangeText(1, kMaxGateAdaptMin429) +
                                   ", got " + std::to_string(t.adapt_min_429));
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
      if (!w[i].is_number()) {
        r.Fail("priority_weights[" + std::to_string(i) + "]",
               "must be a number, got " + w[i].dump());
      } else {
        c.omega.push_back(w[i].get<double>());
      }
    }
  }
  if (r.ok() && r.Has("tenant_weights")) {
    const json& w = j.at("tenant_weights");
    if (!w.is_object()) r.Fail("tenant_weights", "must be an object of numbers, got " + w.dump());
    for (auto it = w.begin(); r.ok() && w.is_object() && it != w.end(); ++it) {
      if (!it.value().is_number()) {
        r.Fail("tenant_weights." + it.key(), "must be a number, got " + it.value().dump());
      } else {
        c.tenant_weights[it.key()] = it.value().get<double>();
      }
    }
  }
  if (r.ok() && r.Has("tuning")) ReadTuning(j.at("tuning"), &c.tuning, &error);
  if (!r.ok()) return r.status();
  if (Status s = ValidateGateConfig(c); !s.ok()) return s;
  if (Status s = CheckGateConfigRanges(c); !s.ok()) return s;
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
