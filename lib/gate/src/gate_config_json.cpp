// The declared-configuration format (gate_config_json.h): GateConfig <-> JSON,
// strict on input so a file is validated as a whole before anything is
// written, and the ranges tools accept.
#include "bp/gate_config_json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "bp/json_text.h"

namespace bp {
namespace {

using json = nlohmann::ordered_json;

Status Bad(const std::string& field, const std::string& message) {
  return Status::InvalidArgument(field + ": " + message);
}

// Unknown fields are errors (a typo must not be ignored silently).
Status OnlyFields(const json& j, const std::string& where,
                  std::initializer_list<const char*> allowed) {
  if (!j.is_object()) return Bad(where.empty() ? "document" : where, "must be an object");
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* a : allowed) known = known || key == a;
    if (!known) return Bad(where.empty() ? key : where + "." + key, "unknown field");
  }
  return Status::Ok();
}

// j[key] as a double if present, else `fallback`.
Status ReadNumber(const json& j, const std::string& where, const char* key, double* out) {
  if (!j.contains(key)) return Status::Ok();
  const json& v = j.at(key);
  if (!v.is_number()) return Bad(where + "." + key, "must be a number");
  *out = v.get<double>();
  return Status::Ok();
}

Status ReadCaps(const json& j, GateConfig* c) {
  if (j.is_null()) return Status::Ok();  // not configured
  if (Status s = OnlyFields(
          j, "caps",
          {"requests_per_s", "tokens_per_s", "burst_s", "max_cost_requests", "max_cost_tokens"});
      !s.ok()) {
    return s;
  }
  if (!j.contains("requests_per_s")) return Bad("caps.requests_per_s", "required");
  c->configured = true;
  c->caps.tokens_per_s = 0;
  c->caps.burst_s = kDefaultGateBurstS;
  for (auto [key, out] :
       {std::pair{"requests_per_s", &c->caps.requests_per_s},
        std::pair{"tokens_per_s", &c->caps.tokens_per_s}, std::pair{"burst_s", &c->caps.burst_s},
        std::pair{"max_cost_requests", &c->caps.max_cost_requests},
        std::pair{"max_cost_tokens", &c->caps.max_cost_tokens}}) {
    if (Status s = ReadNumber(j, "caps", key, out); !s.ok()) return s;
  }
  return Status::Ok();
}

Status ReadTuning(const json& j, GateTuning* t) {
  if (Status s = OnlyFields(
          j, "tuning",
          {"slack_ms", "lend_fraction", "grace_ms", "ticket_ttl_ms", "adapt", "adapt_beta",
           "adapt_recover_ms", "adapt_window_ms", "adapt_min_429", "share_rule", "class_policy"});
      !s.ok()) {
    return s;
  }
  for (auto [key, out] :
       {std::pair{"slack_ms", &t->slack_ms}, std::pair{"lend_fraction", &t->lend_fraction},
        std::pair{"grace_ms", &t->grace_ms}, std::pair{"adapt_beta", &t->adapt_beta},
        std::pair{"adapt_recover_ms", &t->adapt_recover_ms},
        std::pair{"adapt_window_ms", &t->adapt_window_ms}}) {
    if (Status s = ReadNumber(j, "tuning", key, out); !s.ok()) return s;
  }
  for (auto [key, out] : {std::pair{"ticket_ttl_ms", &t->ticket_ttl_ms},
                          std::pair{"adapt_min_429", &t->adapt_min_429}}) {
    if (!j.contains(key)) continue;
    const json& v = j.at(key);
    if (!v.is_number_integer()) return Bad(std::string("tuning.") + key, "must be an integer");
    *out = v.get<int64_t>();
  }
  if (j.contains("adapt")) {
    if (!j.at("adapt").is_boolean()) return Bad("tuning.adapt", "must be true or false");
    t->adapt = j.at("adapt").get<bool>();
  }
  if (j.contains("share_rule")) {
    const json& v = j.at("share_rule");
    if (!v.is_string() || (v != "hier" && v != "flat")) {
      return Bad("tuning.share_rule", "must be \"hier\" or \"flat\"");
    }
    t->share_rule = v == "flat" ? GateTuning::ShareRule::kFlat : GateTuning::ShareRule::kHier;
  }
  if (j.contains("class_policy")) {
    const json& v = j.at("class_policy");
    if (!v.is_string() || (v != "fair" && v != "strict")) {
      return Bad("tuning.class_policy", "must be \"fair\" or \"strict\"");
    }
    t->class_policy =
        v == "strict" ? GateTuning::ClassPolicy::kStrict : GateTuning::ClassPolicy::kFair;
  }
  return Status::Ok();
}

}  // namespace

std::string GateRangeText(const GateRange& r) {
  std::string text(1, r.min_open ? '(' : '[');
  text.append(FormatGateNumber(r.min)).append(", ").append(FormatGateNumber(r.max));
  text.push_back(r.max_open ? ')' : ']');
  return text;
}

bool InGateRange(double v, const GateRange& r) {
  return std::isfinite(v) && (r.min_open ? v > r.min : v >= r.min) &&
         (r.max_open ? v < r.max : v <= r.max);
}

std::string FormatGateNumber(double v) {
  char buf[32];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

Status CheckGateConfigRanges(const GateConfig& c) {
  auto check = [](const std::string& field, double v, double min, double max,
                  const std::string& note = "") {
    if (v >= min && v <= max) return Status::Ok();
    return Status::InvalidArgument(field + ": must be in [" + FormatGateNumber(min) + ", " +
                                   FormatGateNumber(max) + "]" + note + ", got " +
                                   FormatGateNumber(v));
  };
  if (c.configured) {
    for (Status s :
         {check("caps.requests_per_s", c.caps.requests_per_s, kMinGateRpm / 60, kMaxGateRpm / 60,
                " (0.001 to 1e9 rpm)"),
          check("caps.tokens_per_s", c.caps.tokens_per_s, 0, kMaxGateTpm / 60, " (0 to 1e12 tpm)"),
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
    if (!InGateRange(v, range)) {
      return Status::InvalidArgument(std::string(field) + ": must be in " + GateRangeText(range) +
                                     ", got " + FormatGateNumber(v));
    }
  }
  if (t.adapt_min_429 < 1 || t.adapt_min_429 > kMaxGateAdaptMin429) {
    return Status::InvalidArgument("tuning.adapt_min_429: must be an integer in [1, " +
                                   std::to_string(kMaxGateAdaptMin429) + "], got " +
                                   std::to_string(t.adapt_min_429));
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
  if (Status s =
          OnlyFields(j, "", {"version", "caps", "priority_weights", "tenant_weights", "tuning"});
      !s.ok()) {
    return s;
  }
  if (!j.contains("version") || j.at("version") != 1) return Bad("version", "must be 1");
  GateConfig c;
  if (!j.contains("caps")) return Bad("caps", "required");
  if (Status s = ReadCaps(j.at("caps"), &c); !s.ok()) return s;
  if (j.contains("priority_weights")) {
    const json& w = j.at("priority_weights");
    if (!w.is_array()) return Bad("priority_weights", "must be an array of numbers");
    for (size_t i = 0; i < w.size(); ++i) {
      if (!w[i].is_number()) {
        return Bad("priority_weights[" + std::to_string(i) + "]", "must be a number");
      }
      c.omega.push_back(w[i].get<double>());
    }
  }
  if (j.contains("tenant_weights")) {
    const json& w = j.at("tenant_weights");
    if (!w.is_object()) return Bad("tenant_weights", "must be an object of numbers");
    for (const auto& [tenant, weight] : w.items()) {
      if (!weight.is_number()) return Bad("tenant_weights." + tenant, "must be a number");
      c.tenant_weights[tenant] = weight.get<double>();
    }
  }
  if (j.contains("tuning")) {
    if (Status s = ReadTuning(j.at("tuning"), &c.tuning); !s.ok()) return s;
  }
  if (Status s = ValidateGateConfig(c); !s.ok()) return s;
  if (Status s = CheckGateConfigRanges(c); !s.ok()) return s;
  return c;
}

Result<nlohmann::ordered_json> ParseGateConfigText(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument("empty file (expected the JSON of `bpctl export`)");
  }
  // One set of keys per open object: a repeated key is an error, where the
  // parser alone would keep the last value silently.
  std::vector<std::set<std::string>> open;
  std::string duplicate;
  auto callback = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open.emplace_back();
    if (event == json::parse_event_t::object_end && !open.empty()) open.pop_back();
    if (event == json::parse_event_t::key && !open.empty() && duplicate.empty() &&
        !open.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json j = json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::InvalidArgument(JsonSyntaxError(text));
  }
  if (!duplicate.empty()) {
    return Status::InvalidArgument("duplicate key \"" + duplicate +
                                   "\" (each field may appear once)");
  }
  return j;
}

Result<GateConfig> ReadGateConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot read the gate configuration file");
  std::ostringstream text;
  text << in.rdbuf();
  auto j = ParseGateConfigText(text.str());
  if (!j.ok()) return Status(j.status().code(), path + ": " + j.status().message());
  auto c = GateConfigFromJson(*j);
  if (!c.ok()) return Status(c.status().code(), path + ": " + c.status().message());
  return c;
}

}  // namespace bp
