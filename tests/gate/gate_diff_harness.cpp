// The differential test's harness: one step applied to the real scripts
// (through bp::Gate and the store) and to the model, and the two compared
// decision by decision and field by field (gate_diff_steps.h).
#include <sstream>

#include "gate/gate_diff_steps.h"
#include "gate/gate_model_store.h"
#include "gate_fixture.h"

namespace bp::test {
namespace {

using gate_model::Verdict;

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kAdmit:
      return "ADMIT";
    case Verdict::kDefer:
      return "DEFER";
    case Verdict::kReject:
      return "REJECT";
    default:
      return "ERROR";
  }
}

Verdict FromGate(bp::Verdict v) {
  switch (v) {
    case bp::Verdict::kAdmit:
      return Verdict::kAdmit;
    case bp::Verdict::kDefer:
      return Verdict::kDefer;
    case bp::Verdict::kReject:
      return Verdict::kReject;
    default:
      return Verdict::kError;
  }
}

}  // namespace

DiffHarness::DiffHarness(Gate& gate, const std::string& url)
    : gate_(gate), admin_(gate), raw_(ValkeyOptions{url, 1000, 5000}) {}

std::string DiffHarness::Apply(const DiffStep& step) {
  std::string why = ApplyToBoth(step);
  if (!why.empty()) return why;
  auto store = ReadStoreState(raw_, gate_.options().target);
  if (!store.ok()) return "reading the store: " + store.status().ToString();
  return CompareStates(model_.state, *store);
}

std::string DiffHarness::ApplyToBoth(const DiffStep& step) {
  gate_model::Config c = model_.config;
  Status st = Status::Ok();
  switch (step.kind) {
    case DiffStep::Kind::kTuning: {
      const GateTuning& t = step.tuning;
      st = admin_.SetTuning(t);
      c.slack_ms = t.slack_ms, c.lend_fraction = t.lend_fraction, c.grace_ms = t.grace_ms;
      c.ticket_ttl_ms = static_cast<double>(t.ticket_ttl_ms), c.adapt = t.adapt;
      c.adapt_beta = t.adapt_beta, c.adapt_recover_ms = t.adapt_recover_ms;
      c.adapt_window_ms = t.adapt_window_ms;
      c.adapt_min_429 = static_cast<double>(t.adapt_min_429);
      c.share_rule = t.share_rule == GateTuning::ShareRule::kFlat
                         ? gate_model::Config::ShareRule::kFlat
                         : gate_model::Config::ShareRule::kHier;
      c.class_policy = t.class_policy == GateTuning::ClassPolicy::kStrict
                           ? gate_model::Config::ClassPolicy::kStrict
                           : gate_model::Config::ClassPolicy::kFair;
      break;
    }
    case DiffStep::Kind::kCaps:
      st = admin_.SetCaps(step.caps);
      c.requests_per_s = step.caps.requests_per_s, c.tokens_per_s = step.caps.tokens_per_s;
      c.burst_s = step.caps.burst_s;
      c.max_cost_requests = step.caps.max_cost_requests;
      c.max_cost_tokens = step.caps.max_cost_tokens;
      break;
    case DiffStep::Kind::kOmega:
      st = admin_.SetPriorityWeights(step.omega);
      c.omega = step.omega;
      break;
    case DiffStep::Kind::kTenantWeight:
      if (step.weight > 0) {
        st = admin_.SetTenantWeight(step.tenant, step.weight);
        c.tenant_weights[step.tenant] = step.weight;
      } else {
        st = admin_.UnsetTenantWeight(step.tenant);
        c.tenant_weights.erase(step.tenant);
      }
      break;
    case DiffStep::Kind::kAdmit: {
      const auto& a = step.admit;
      Decision d =
          gate_.Admit(AdmitRequest{a.tenant, static_cast<int>(a.priority),
                                   Cost{a.requests, a.tokens}, a.max_tokens, a.now_ms, a.ahead_ms});
      gate_model::AdmitOutput m = model_.Admit(a);
      std::ostringstream o;
      const std::string reason = d.verdict == bp::Verdict::kDefer ? "" : d.reason;
      const std::string mreason = m.verdict == Verdict::kDefer ? "" : m.reason;
      if (FromGate(d.verdict) != m.verdict || d.ticket != m.ticket ||
          d.start_in_ms != m.start_in_ms ||
          (m.verdict == Verdict::kDefer && (d.delta_ms != m.delta_ms || d.reason != m.binding)) ||
          (m.verdict == Verdict::kError ? reason.find(mreason) == std::string::npos
                                        : reason != mreason)) {
        o << "decision: scripts " << VerdictName(FromGate(d.verdict)) << " ticket '" << d.ticket
          << "' start_in " << d.start_in_ms << " delta " << d.delta_ms << " '" << d.reason
          << "'; model " << VerdictName(m.verdict) << " ticket '" << m.ticket << "' start_in "
          << m.start_in_ms << " delta " << m.delta_ms << " '"
          << (m.verdict == Verdict::kDefer ? m.binding : m.reason) << "'";
        return o.str();
      }
      const double lent_before = lent_total_;
      lent_total_ = 0;
      for (const auto& [id, q] : model_.state.queues) lent_total_ += q.lent;
      ++coverage_[std::string(VerdictName(m.verdict)) +
                  (m.verdict == Verdict::kDefer ? " " + m.binding : "") +
                  (m.start_in_ms > 0 ? " ahead" : "") + (lent_total_ > lent_before ? " lent" : "") +
                  (model_.state.g && model_.state.g->r < 0 ? " (debt)" : "") +
                  (model_.state.hold ? " (hold)" : "")];
      if (m.verdict == Verdict::kAdmit && m.ticket != "0") {
        const std::string text = ReadTicket(raw_, gate_.options().target, m.ticket);
        if (text != model_.state.tickets.at(m.ticket).Text()) {
          return "ticket " + m.ticket + ": scripts '" + text + "', model '" +
                 model_.state.tickets.at(m.ticket).Text() + "'";
        }
      }
      return "";
    }
    case DiffStep::Kind::kRelease: {
      const auto& r = step.release;
      if (r.outcome == "refused") {
        st = gate_.ReleaseRefused(r.ticket, r.now_ms);
      } else {
        UpstreamReport rep;
        if (r.outcome == "429") {
          rep.outcome = UpstreamReport::Outcome::kThrottled;
          rep.bound = r.bound == "requests" ? UpstreamReport::Bound::kRequests
                      : r.bound == "tokens" ? UpstreamReport::Bound::kTokens
                                            : UpstreamReport::Bound::kUnknown;
          rep.retry_after_ms = r.retry_after_ms;
        }
        rep.remaining_requests = static_cast<int64_t>(r.remaining_requests);
        rep.remaining_tokens = static_cast<int64_t>(r.remaining_tokens);
        rep.reset_requests_ms = r.reset_requests_ms;
        rep.reset_tokens_ms = r.reset_tokens_ms;
        st = gate_.Release(r.ticket, Cost{r.requests, r.tokens}, rep, r.now_ms);
      }
      const auto before = model_.state.header;
      ++coverage_["release " + r.outcome +
                  (r.outcome == "ok" && (r.reset_requests_ms > 0 || r.reset_tokens_ms > 0)
                       ? " headers"
                       : "") +
                  (model_.Release(r) == 1 ? "" : " (unknown ticket)")];
      // The header rule measured outside use (a pair of one window).
      const auto& after = model_.state.header;
      if (after && (*after)[0].xo > 0 && (!before || (*before)[0].xo != (*after)[0].xo)) {
        ++coverage_["release ok headers (outside measured)"];
      }
      if (after && (*after)[0].k > 1 && (!before || (*before)[0].k != (*after)[0].k)) {
        ++coverage_["release ok headers (margin measured)"];
      }
      if (before && after && (*after)[0].k < (*before)[0].k && r.outcome == "429") {
        ++coverage_["release 429 (margin halved)"];
      }
      return st.ok() ? "" : "release: " + st.ToString();
    }
  }
  model_.Configure(c);
  return st.ok() ? "" : "configure: " + st.ToString();
}

}  // namespace bp::test
