// bpctl status model (status_view.h): GateState + GateConfig -> JSON, with the
// L1 levels refilled to the server's time as admit.lua would refill them, the
// L2 nominal shares omega_k / sum(omega) and each backlogged queue's fair
// share w_q / sum of backlogged w (WFQ when one dimension binds).
#include "bp/bpctl/status_view.h"

#include <algorithm>
#include <map>

#include "bp/gate_config_json.h"

namespace bp::bpctl {
namespace {

using json = nlohmann::ordered_json;

// A bucket's level at `now_ms`: refilled at `rate` per second since `at_ms`
// up to `top` (admit.lua's L1 refill: the capacity, plus the outstanding
// reservations O for tokens in reservation mode); a level already above the
// top (a refund kept as credit) is not lowered.
double Refilled(double level, double top, double rate, double at_ms, double now_ms) {
  if (level >= top) return level;
  const double elapsed_s = std::max(0.0, now_ms - at_ms) / 1000;
  return std::min(top, level + rate * elapsed_s);
}

json Bucket(double level, double capacity, double rate) {
  return {{"level", level}, {"capacity", capacity}, {"refill_per_s", rate}};
}

// omega_k of class k (1-based); 1 beyond the configured classes.
double OmegaOf(const GateConfig& cfg, int64_t k) {
  return k >= 1 && static_cast<size_t>(k) <= cfg.omega.size() ? cfg.omega[static_cast<size_t>(k - 1)]
                                                               : 1.0;
}

// The fluid shares of the gate's rule over the backlogged queues (docs/gate.md
// "The rule"): per class omega_k / sum(omega of backlogged classes), per
// queue that times w_t / W_k (hierarchical) or w_q / sum(w_q) (flat, w_q =
// w_t omega_k as state reports it).
struct CurrentShares {
  std::map<int64_t, double> class_share;  // backlogged classes only
  std::vector<double> queue_share;        // per st.queues entry; 0 unless backlogged
};

CurrentShares Current(const GateState& st, const GateConfig& cfg) {
  CurrentShares out;
  out.queue_share.assign(st.queues.size(), 0.0);
  std::map<int64_t, double> class_w;  // W_k: summed w_t of backlogged queues
  double all_w = 0;                   // flat: summed w_q
  for (const auto& q : st.queues) {
    if (!q.backlogged) continue;
    class_w[q.priority] += q.weight / OmegaOf(cfg, q.priority);
    all_w += q.weight;
  }
  double omega_sum = 0;
  for (const auto& [k, w] : class_w) omega_sum += OmegaOf(cfg, k);
  const bool flat = cfg.tuning.share_rule == GateTuning::ShareRule::kFlat;
  for (size_t i = 0; i < st.queues.size(); ++i) {
    const auto& q = st.queues[i];
    if (!q.backlogged) continue;
    if (flat) {
      out.queue_share[i] = q.weight / all_w;
      out.class_share[q.priority] += q.weight / all_w;
    } else {
      const double cls = OmegaOf(cfg, q.priority) / omega_sum;
      out.queue_share[i] = cls * (q.weight / OmegaOf(cfg, q.priority)) / class_w[q.priority];
      out.class_share[q.priority] = cls;
    }
  }
  return out;
}

json Classes(const GateState& st, const GateConfig& cfg) {
  const size_t k_max = std::max({cfg.omega.size(), st.class_requests.size(), size_t{1}});
  double omega_sum = 0;
  for (size_t k = 0; k < k_max; ++k) omega_sum += k < cfg.omega.size() ? cfg.omega[k] : 1.0;
  const CurrentShares cur = Current(st, cfg);
  json out = json::array();
  for (size_t k = 0; k < k_max; ++k) {
    const double omega = k < cfg.omega.size() ? cfg.omega[k] : 1.0;
    const double share = omega / omega_sum;
    const auto it = cur.class_share.find(static_cast<int64_t>(k + 1));
    json c = {{"priority", k + 1},
              {"omega", omega},
              {"nominal_share", share},
              {"current_share", it == cur.class_share.end() ? 0.0 : it->second},
              {"admitted_requests", k < st.class_requests.size() ? st.class_requests[k] : 0.0},
              {"admitted_tokens", k < st.class_tokens.size() ? st.class_tokens[k] : 0.0}};
    if (st.configured) {
      c["nominal_requests_per_s"] = share * st.caps.requests_per_s;
      if (st.caps.tokens_per_s > 0) c["nominal_tokens_per_s"] = share * st.caps.tokens_per_s;
    }
    out.push_back(std::move(c));
  }
  return out;
}

json Queues(const GateState& st, const GateConfig& cfg) {
  const CurrentShares cur = Current(st, cfg);
  json out = json::array();
  for (size_t i = 0; i < st.queues.size(); ++i) {
    const auto& q = st.queues[i];
    json j = {{"tenant", q.tenant},
              {"priority", q.priority},
              {"weight", q.weight},
              {"tag", q.tag},
              {"lag", q.tag - st.virtual_time},
              {"backlogged", q.backlogged},
              {"admits", q.admits},
              {"defers", q.defers},
              {"lent", q.lent}};
    if (q.backlogged && cur.queue_share[i] > 0) {
      const double share = cur.queue_share[i];
      j["fair_share"] = share;
      if (st.configured) {
        j["fair_requests_per_s"] = share * st.caps.requests_per_s;
        if (st.caps.tokens_per_s > 0) j["fair_tokens_per_s"] = share * st.caps.tokens_per_s;
      }
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

nlohmann::ordered_json StatusJson(const std::string& target, const GateState& st,
                                  const GateConfig& cfg, const std::string& server) {
  json j;
  j["target"] = target;
  if (!server.empty()) j["server"] = server;
  j["configured"] = st.configured;
  j["server_time_ms"] = st.server_time_ms;
  const GateCaps& c = st.caps;
  if (st.configured) {
    j["caps"] = {{"requests_per_s", c.requests_per_s},
                 {"tokens_per_s", c.tokens_per_s},
                 {"burst_s", c.burst_s},
                 {"rpm", c.requests_per_s * 60},
                 {"tpm", c.tokens_per_s * 60}};
    const double cap_r = c.requests_per_s * c.burst_s, cap_t = c.tokens_per_s * c.burst_s;
    // The largest admissible call as admit.lua resolves it: the configured
    // max cost, else one minute of cap, never below the bucket.
    j["caps"]["max_cost_requests"] =
        c.max_cost_requests > 0 ? c.max_cost_requests : std::max(c.requests_per_s * 60, cap_r);
    if (c.tokens_per_s > 0) {
      j["caps"]["max_cost_tokens"] =
          c.max_cost_tokens > 0 ? c.max_cost_tokens : std::max(c.tokens_per_s * 60, cap_t);
    }
    // Adaptive caps: L1 refills at the learned cap (admit.lua); the
    // capacity stays at the configured cap.
    const double rate_r = c.requests_per_s * st.learned_requests_fraction;
    const double rate_t = c.tokens_per_s * st.learned_tokens_fraction;
    json learned = {{"adapt", st.adapt},
                    {"requests_per_s", rate_r},
                    {"requests_fraction", st.learned_requests_fraction},
                    {"requests_decreased_ms", st.learned_requests_decreased_ms}};
    if (c.tokens_per_s > 0) {
      learned["tokens_per_s"] = rate_t;
      learned["tokens_fraction"] = st.learned_tokens_fraction;
      learned["tokens_decreased_ms"] = st.learned_tokens_decreased_ms;
    }
    j["learned_caps"] = std::move(learned);
    json l1 = {
        {"last_call_ms", st.l1_at_ms},
        {"requests", Bucket(Refilled(st.l1_requests, cap_r, rate_r, st.l1_at_ms, st.server_time_ms),
                            cap_r, rate_r)}};
    if (c.tokens_per_s > 0) {
      l1["tokens"] = Bucket(
          Refilled(st.l1_tokens, cap_t + st.reserved_tokens, rate_t, st.l1_at_ms, st.server_time_ms),
          cap_t, rate_t);
      // Reservation mode: O, the max_tokens reserved by admitted, unreleased
      // calls beyond their prompts; the token level refills up to capacity +
      // O (docs/gate.md, reservation mode). 0 in the other modes.
      l1["tokens"]["reserved"] = st.reserved_tokens;
    }
    j["l1"] = std::move(l1);
  } else {
    j["caps"] = nullptr;
  }
  const json exported = GateConfigToJson(cfg);  // the same fields as `bpctl export`
  for (const char* key : {"priority_weights", "tenant_weights", "tuning"}) {
    j[key] = exported.at(key);
  }
  j["virtual_time"] = st.virtual_time;
  j["classes"] = Classes(st, cfg);
  j["queues"] = Queues(st, cfg);
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
