// The exposition text of bpctl metrics (metrics.h): families declared once
// in the order printed, each with HELP and TYPE, then its samples for
// every target.
#include "bp/bpctl/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>

#include "bp/decimal.h"

namespace bp::bpctl {
namespace {

// A sample value, exact: integers as plain digits, others as the shortest
// text that reads back as the value (bp::FormatNumber).
std::string Value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return FormatNumber(v, 17, Notation::kPlain);
  return FormatNumber(v);
}

// A label value escaped as the format asks (backslash, quote, newline).
std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

// The families in print order; samples are added by name.
class Exposition {
 public:
  void Family(const std::string& name, const char* type, const char* help) {
    index_[name] = families_.size();
    families_.push_back({name, std::string("# HELP ") + name + " " + help + "\n# TYPE " + name +
                                   " " + type + "\n"});
  }
  void Sample(const std::string& name, const Labels& labels, double v) {
    std::string& text = families_[index_.at(name)].second;
    text += name;
    if (!labels.empty()) {
      text += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        text += (i ? "," : "") + labels[i].first + "=\"" + Escape(labels[i].second) + '"';
      }
      text += '}';
    }
    text += ' ' + Value(v) + '\n';
  }
  std::string Text() const {
    std::string out;
    for (const auto& f : families_) out += f.second;
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> families_;
  std::map<std::string, size_t> index_;
};

void DeclareFamilies(Exposition& e) {
  e.Family("bp_gate_targets", "gauge", "Gate targets found by the scrape.");
  e.Family("bp_gate_scrape_duration_seconds", "gauge", "Time this scrape took.");
  e.Family("bp_gate_up", "gauge", "1 when the target's state was read, else 0.");
  e.Family("bp_gate_configured", "gauge", "1 when the target has caps (else workers fail open).");
  e.Family("bp_gate_cap_requests_per_second", "gauge", "Configured request cap C_r.");
  e.Family("bp_gate_cap_tokens_per_second", "gauge", "Configured token cap C_t (0: none).");
  e.Family("bp_gate_learned_cap_requests_per_second", "gauge",
           "Request cap in force: the learned fraction times C_r (adaptive caps).");
  e.Family("bp_gate_learned_cap_tokens_per_second", "gauge",
           "Token cap in force: the learned fraction times C_t (adaptive caps).");
  e.Family("bp_gate_l1_requests", "gauge", "L1 bucket level in requests at its last refill.");
  e.Family("bp_gate_l1_tokens", "gauge", "L1 bucket level in tokens at its last refill.");
  e.Family("bp_gate_reserved_tokens", "gauge",
           "Tokens reserved beyond prompts by admitted calls not yet released.");
  e.Family("bp_gate_queues", "gauge", "Active (tenant, class) queues.");
  e.Family("bp_gate_backlogged_queues", "gauge", "Backlogged queues of the class.");
  e.Family("bp_gate_class_share_configured", "gauge",
           "The class's configured share omega_k / sum(omega).");
  e.Family("bp_gate_class_share_now", "gauge",
           "The class's share under the rule now: omega_k / sum(omega of backlogged classes), "
           "0 when not backlogged.");
  e.Family("bp_gate_admitted_calls_total", "counter", "Calls admitted (ADMIT).");
  e.Family("bp_gate_admitted_requests_total", "counter", "Requests of the admitted calls.");
  e.Family("bp_gate_admitted_tokens_total", "counter", "Tokens debited on L1 at admission.");
  e.Family("bp_gate_lent_calls_total", "counter", "Admissions lent idle capacity.");
  e.Family("bp_gate_deferred_calls_total", "counter", "Calls deferred (DEFER), by binding rule.");
  e.Family("bp_gate_released_calls_total", "counter", "Tickets released.");
  e.Family("bp_gate_released_tokens_total", "counter", "Actual tokens reported by releases.");
  e.Family("bp_gate_refunded_tokens_total", "counter",
           "Tokens refunded by releases (debited minus actual, where positive).");
  e.Family("bp_gate_surcharged_tokens_total", "counter",
           "Tokens debited by releases (actual minus debited, where positive).");
  e.Family("bp_gate_refused_calls_total", "counter",
           "Releases of admitted calls the provider refused (429, 503, 529).");
  e.Family("bp_gate_rejected_calls_total", "counter", "Calls rejected (REJECT), by reason.");
  e.Family("bp_gate_learned_cap_drops_total", "counter",
           "Multiplicative decreases of a learned cap on 429s (adaptive caps), by "
           "dimension; the header rule's moves show in the learned_cap gauges.");
  e.Family("bp_gate_tenant_admitted_calls_total", "counter",
           "Calls admitted for the queue (opt-in per tenant).");
  e.Family("bp_gate_tenant_deferred_calls_total", "counter",
           "Calls deferred for the queue (opt-in per tenant).");
  e.Family("bp_gate_tenant_lent_calls_total", "counter",
           "Lent admissions of the queue (opt-in per tenant).");
  e.Family("bp_gate_tenant_backlogged", "gauge", "1 when the queue is backlogged (opt-in).");
}

void RenderTarget(Exposition& e, const TargetMetrics& t, const MetricsOptions& options) {
  const Labels tl = {{"target", t.target}};
  e.Sample("bp_gate_up", tl, t.up ? 1 : 0);
  if (!t.up) return;
  const GateState& s = t.state;
  e.Sample("bp_gate_configured", tl, s.configured ? 1 : 0);
  if (s.configured) {
    e.Sample("bp_gate_cap_requests_per_second", tl, s.caps.requests_per_s);
    e.Sample("bp_gate_cap_tokens_per_second", tl, s.caps.tokens_per_s);
    e.Sample("bp_gate_learned_cap_requests_per_second", tl, s.learned_requests_per_s);
    e.Sample("bp_gate_learned_cap_tokens_per_second", tl, s.learned_tokens_per_s);
  }
  e.Sample("bp_gate_l1_requests", tl, s.l1_requests);
  e.Sample("bp_gate_l1_tokens", tl, s.l1_tokens);
  e.Sample("bp_gate_reserved_tokens", tl, s.reserved_tokens);
  e.Sample("bp_gate_queues", tl, s.active_queues);
  e.Sample("bp_gate_rejected_calls_total", {{"target", t.target}, {"reason", "priority"}},
           s.rejects_priority);
  e.Sample("bp_gate_rejected_calls_total", {{"target", t.target}, {"reason", "too_large"}},
           s.rejects_too_large);
  e.Sample("bp_gate_learned_cap_drops_total", {{"target", t.target}, {"dimension", "requests"}},
           s.learned_requests_drops);
  e.Sample("bp_gate_learned_cap_drops_total", {{"target", t.target}, {"dimension", "tokens"}},
           s.learned_tokens_drops);

  // Classes 1..max(K, 1): backlog, shares (state.lua's), counters.
  const size_t classes = std::max<size_t>({s.omega.size(), s.class_counters.size(), 1});
  auto at = [](const std::vector<double>& v, size_t k) { return k < v.size() ? v[k] : 0.0; };
  for (size_t k = 0; k < classes; ++k) {
    const std::string cls = std::to_string(k + 1);
    const Labels cl = {{"target", t.target}, {"class", cls}};
    e.Sample("bp_gate_backlogged_queues", cl, at(s.class_backlogged, k));
    e.Sample("bp_gate_class_share_configured", cl, at(s.class_nominal_share, k));
    e.Sample("bp_gate_class_share_now", cl, at(s.class_current_share, k));
    const GateClassCounters c =
        k < s.class_counters.size() ? s.class_counters[k] : GateClassCounters{};
    e.Sample("bp_gate_admitted_calls_total", cl, c.admits);
    e.Sample("bp_gate_admitted_requests_total", cl, c.admitted_requests);
    e.Sample("bp_gate_admitted_tokens_total", cl, c.admitted_tokens);
    e.Sample("bp_gate_lent_calls_total", cl, c.lent);
    const std::pair<const char*, double> bindings[] = {{"fair", c.defers_fair},
                                                       {"l1_requests", c.defers_l1_requests},
                                                       {"l1_tokens", c.defers_l1_tokens},
                                                       {"strict", c.defers_strict}};
    for (auto [binding, n] : bindings) {
      e.Sample("bp_gate_deferred_calls_total",
               {{"target", t.target}, {"class", cls}, {"binding", binding}}, n);
    }
    e.Sample("bp_gate_released_calls_total", cl, c.releases);
    e.Sample("bp_gate_released_tokens_total", cl, c.released_tokens);
    e.Sample("bp_gate_refunded_tokens_total", cl, c.refunded_tokens);
    e.Sample("bp_gate_surcharged_tokens_total", cl, c.surcharged_tokens);
    e.Sample("bp_gate_refused_calls_total", cl, c.refused);
  }
  for (size_t i : TenantSeriesQueues(s, options)) {
    const GateQueueState& q = s.queues[i];
    const Labels ql = {
        {"target", t.target}, {"class", std::to_string(q.priority)}, {"tenant", q.tenant}};
    e.Sample("bp_gate_tenant_admitted_calls_total", ql, static_cast<double>(q.admits));
    e.Sample("bp_gate_tenant_deferred_calls_total", ql, static_cast<double>(q.defers));
    e.Sample("bp_gate_tenant_lent_calls_total", ql, static_cast<double>(q.lent));
    e.Sample("bp_gate_tenant_backlogged", ql, q.backlogged ? 1 : 0);
  }
}

}  // namespace

std::vector<size_t> TenantSeriesQueues(const GateState& state, const MetricsOptions& options) {
  std::vector<size_t> order(state.queues.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return state.queues[a].admits > state.queues[b].admits;
  });
  std::set<size_t> chosen(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                             options.tenants_top, order.size())));
  const std::set<std::string> listed(options.tenants.begin(), options.tenants.end());
  for (size_t i = 0; i < state.queues.size(); ++i) {
    if (listed.count(state.queues[i].tenant)) chosen.insert(i);
  }
  return std::vector<size_t>(chosen.begin(), chosen.end());
}

std::string RenderMetrics(const std::vector<TargetMetrics>& targets, const MetricsOptions& options,
                          double scrape_s) {
  Exposition e;
  DeclareFamilies(e);
  e.Sample("bp_gate_targets", {}, static_cast<double>(targets.size()));
  e.Sample("bp_gate_scrape_duration_seconds", {}, scrape_s);
  for (const TargetMetrics& t : targets) RenderTarget(e, t, options);
  return e.Text();
}

}  // namespace bp::bpctl
