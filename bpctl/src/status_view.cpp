// bpctl status model (status_view.h): one GateState, as state.lua answered it
// in one call, shaped as JSON. Every level, rate, max cost and share is the
// script's (it applies the gate's rules); this file only renames fields and
// turns shares into rates (share x cap) and rates into rpm / tpm.
#include "bp/bpctl/status_view.h"

#include <algorithm>

#include "bp/gate_config_json.h"

namespace bp::bpctl {
namespace {

using json = nlohmann::ordered_json;

json Bucket(double level, double capacity, double rate) {
  return {{"level", level}, {"capacity", capacity}, {"refill_per_s", rate}};
}

double At(const std::vector<double>& v, size_t i) { return i < v.size() ? v[i] : 0.0; }

json Classes(const GateState& st) {
  const size_t k_max = std::max({st.omega.size(), st.class_requests.size(), size_t{1}});
  json out = json::array();
  for (size_t k = 0; k < k_max; ++k) {
    const double share = At(st.class_nominal_share, k);
    json c = {{"priority", k + 1},
              {"omega", k < st.omega.size() ? st.omega[k] : 1.0},
              {"nominal_share", share},
              {"current_share", At(st.class_current_share, k)},
              {"admitted_requests", At(st.class_requests, k)},
              {"admitted_tokens", At(st.class_tokens, k)}};
    if (st.configured) {
      c["nominal_requests_per_s"] = share * st.caps.requests_per_s;
      if (st.caps.tokens_per_s > 0) c["nominal_tokens_per_s"] = share * st.caps.tokens_per_s;
    }
    out.push_back(std::move(c));
  }
  return out;
}

json Queues(const GateState& st) {
  json out = json::array();
  for (const GateQueueState& q : st.queues) {
    json j = {{"tenant", q.tenant}, {"priority", q.priority}, {"weight", q.weight},
              {"tag", q.tag},       {"lag", q.lag},           {"backlogged", q.backlogged},
              {"admits", q.admits}, {"defers", q.defers},     {"lent", q.lent}};
    if (q.backlogged && q.fair_share > 0) {
      j["fair_share"] = q.fair_share;
      if (st.configured) {
        j["fair_requests_per_s"] = q.fair_share * st.caps.requests_per_s;
        if (st.caps.tokens_per_s > 0) {
          j["fair_tokens_per_s"] = q.fair_share * st.caps.tokens_per_s;
        }
      }
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

nlohmann::ordered_json StatusJson(const std::string& target, const GateState& st) {
  json j;
  j["target"] = target;
  if (!st.server.empty()) j["server"] = st.server;
  j["configured"] = st.configured;
  j["server_time_ms"] = st.server_time_ms;
  const GateCaps& c = st.caps;
  if (st.configured) {
    j["caps"] = {{"requests_per_s", c.requests_per_s},
                 {"tokens_per_s", c.tokens_per_s},
                 {"burst_s", c.burst_s},
                 {"rpm", c.requests_per_s * 60},
                 {"tpm", c.tokens_per_s * 60}};
    // The largest admissible call as admit.lua resolves it.
    j["caps"]["max_cost_requests"] = st.effective_max_cost_requests;
    if (c.tokens_per_s > 0) j["caps"]["max_cost_tokens"] = st.effective_max_cost_tokens;
    // Adaptive caps: L1 refills at the learned cap; the capacity stays at
    // the configured cap.
    json learned = {{"adapt", st.adapt},
                    {"requests_per_s", st.learned_requests_per_s},
                    {"requests_fraction", st.learned_requests_fraction},
                    {"requests_decreased_ms", st.learned_requests_decreased_ms}};
    if (c.tokens_per_s > 0) {
      learned["tokens_per_s"] = st.learned_tokens_per_s;
      learned["tokens_fraction"] = st.learned_tokens_fraction;
      learned["tokens_decreased_ms"] = st.learned_tokens_decreased_ms;
    }
    j["learned_caps"] = std::move(learned);
    json l1 = {{"last_call_ms", st.l1_at_ms},
               {"requests",
                Bucket(st.l1_requests_now, st.l1_requests_capacity, st.learned_requests_per_s)}};
    if (c.tokens_per_s > 0) {
      l1["tokens"] = Bucket(st.l1_tokens_now, st.l1_tokens_capacity, st.learned_tokens_per_s);
      // Reservation mode: O, the max_tokens reserved by admitted, unreleased
      // calls beyond their prompts; the token level refills up to capacity +
      // O (docs/gate.md, reservation mode). 0 in the other modes.
      l1["tokens"]["reserved"] = st.reserved_tokens;
    }
    j["l1"] = std::move(l1);
  } else {
    j["caps"] = nullptr;
  }
  GateConfig config;  // the same fields as `bpctl export`
  config.configured = st.configured;
  config.caps = st.caps;
  config.omega = st.omega;
  config.tenant_weights = st.tenant_weights;
  config.tuning = st.tuning;
  const json exported = GateConfigToJson(config);
  for (const char* key : {"priority_weights", "tenant_weights", "tuning"}) {
    j[key] = exported.at(key);
  }
  j["virtual_time"] = st.virtual_time;
  j["classes"] = Classes(st);
  j["queues"] = Queues(st);
  return j;
}

void AddRates(nlohmann::ordered_json& status, const nlohmann::ordered_json& previous) {
  const double dt_s =
      (status.value("server_time_ms", 0.0) - previous.value("server_time_ms", 0.0)) / 1000;
  if (!(dt_s > 0)) return;
  const json none = json::array();
  const json& prev_classes = previous.contains("classes") ? previous.at("classes") : none;
  const json& prev_queues = previous.contains("queues") ? previous.at("queues") : none;
  for (auto& c : status["classes"]) {
    for (const auto& p : prev_classes) {
      if (p.at("priority") != c.at("priority")) continue;
      for (const char* dim : {"requests", "tokens"}) {
        const std::string total = std::string("admitted_") + dim;
        c[total + "_per_s"] = (c.at(total).get<double>() - p.at(total).get<double>()) / dt_s;
      }
    }
  }
  for (auto& q : status["queues"]) {
    for (const auto& p : prev_queues) {
      if (p.at("priority") != q.at("priority") || p.at("tenant") != q.at("tenant")) continue;
      const int64_t admitted = q.at("admits").get<int64_t>() - p.at("admits").get<int64_t>();
      q["admits_per_s"] = static_cast<double>(admitted) / dt_s;
    }
  }
}

}  // namespace bp::bpctl
