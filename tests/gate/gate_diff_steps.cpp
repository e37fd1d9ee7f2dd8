#include "gate/gate_diff_steps.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "gate/gate_model_store.h"
#include "gate_fixture.h"

namespace bp::test {
namespace {

using gate_model::Ablation;
using gate_model::Mode;
using gate_model::Verdict;

const char* ModeName(GateMode m) {
  return m == GateMode::kEstimate    ? "estimate"
         : m == GateMode::kReconcile ? "reconcile"
                                     : "reservation";
}

// "t<i>" (appended: GCC 12 warns falsely on "t" + std::to_string(i)).
std::string TenantName(int64_t i) {
  std::string s = "t";
  s += std::to_string(i);
  return s;
}

}  // namespace

std::string DiffRun::Describe() const {
  std::ostringstream o;
  o << "mode " << ModeName(options.mode) << ", ablation "
    << (options.ablation == GateAblation::kNone    ? "none"
        : options.ablation == GateAblation::kNoDrf ? "nodrf"
                                                   : "nopriority")
    << ", queue_ttl_ms " << options.queue_ttl_ms << ", " << tenants << " tenants, " << classes
    << " classes, class_policy " << (strict ? "strict" : "fair");
  return o.str();
}

DiffRun MakeDiffRun(uint32_t seed) {
  DiffRun run;
  const GateMode modes[] = {GateMode::kReconcile, GateMode::kReservation, GateMode::kEstimate};
  run.options.mode = modes[seed % 3];
  run.options.ablation = seed % 5 == 4   ? GateAblation::kNoDrf
                         : seed % 7 == 6 ? GateAblation::kNoPriority
                                         : GateAblation::kNone;
  run.options.queue_ttl_ms = 1000 + 1000 * (seed % 5);
  run.tenants = 3 + static_cast<int>(seed % 4) * 4;
  run.classes = 1 + static_cast<int>(seed % 4);
  // Strict on the seeds with 3 and 4 classes (2, 3, 6, 7, ...), so the CI
  // seeds 1-4 cover both policies with several classes.
  run.strict = seed % 4 >= 2;
  return run;
}

std::string DiffStep::Describe() const {
  std::ostringstream o;
  o << "t=" << now_ms << " ";
  switch (kind) {
    case Kind::kAdmit:
      o << "admit " << admit.tenant << " p" << admit.priority << " cost " << admit.requests << "/"
        << admit.tokens << " max_tokens " << admit.max_tokens;
      if (admit.ahead_ms > 0) o << " ahead " << admit.ahead_ms;
      break;
    case Kind::kRelease:
      o << "release #" << release.ticket << " actual " << release.requests << "/" << release.tokens
        << " " << release.outcome;
      if (release.outcome == "429") {
        o << " bound '" << release.bound << "' retry_after " << release.retry_after_ms;
      }
      if (release.outcome != "refused") {
        o << " remaining " << release.remaining_requests << "/" << release.remaining_tokens
          << " reset " << release.reset_requests_ms << "/" << release.reset_tokens_ms;
      }
      break;
    case Kind::kCaps:
      o << "caps " << caps.requests_per_s << " rps " << caps.tokens_per_s << " tps burst "
        << caps.burst_s << " max cost " << caps.max_cost_requests << "/" << caps.max_cost_tokens;
      break;
    case Kind::kOmega:
      o << "omega";
      for (double w : omega) o << " " << w;
      break;
    case Kind::kTenantWeight:
      o << "tenant weight " << tenant << " " << weight;
      break;
    case Kind::kTuning:
      o << "tuning slack " << tuning.slack_ms << " lend " << tuning.lend_fraction << " grace "
        << tuning.grace_ms << " ticket_ttl " << tuning.ticket_ttl_ms << " adapt " << tuning.adapt
        << " beta " << tuning.adapt_beta << " recover " << tuning.adapt_recover_ms << " window "
        << tuning.adapt_window_ms << " min_429 " << tuning.adapt_min_429 << " share_rule "
        << (tuning.share_rule == GateTuning::ShareRule::kFlat ? "flat" : "hier") << " class_policy "
        << (tuning.class_policy == GateTuning::ClassPolicy::kStrict ? "strict" : "fair");
      break;
  }
  return o.str();
}

DiffGenerator::DiffGenerator(uint32_t seed, const DiffRun& run)
    : rng_(seed), run_(run), now_ms_(kT0) {}

int64_t DiffGenerator::Uniform(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
}

bool DiffGenerator::Chance(double p) { return std::uniform_real_distribution<>(0, 1)(rng_) < p; }

DiffStep DiffGenerator::Next(const gate_model::Model& model) {
  DiffStep s{};
  const int64_t n = step_++;
  if (n == 0) {  // tuning first, then caps (a target is configured by its caps)
    s.kind = DiffStep::Kind::kTuning;
    s.tuning.slack_ms = static_cast<double>(Uniform(0, 100));
    s.tuning.lend_fraction = static_cast<double>(Uniform(0, 4)) / 4;
    s.tuning.grace_ms = static_cast<double>(Uniform(0, 300));
    s.tuning.ticket_ttl_ms = 60000 * Uniform(2, 10);  // real time on the server: > the run
    s.tuning.adapt = Chance(0.6);
    s.tuning.adapt_beta = 0.5 + 0.1 * static_cast<double>(Uniform(0, 4));
    s.tuning.adapt_recover_ms = static_cast<double>(1000 * Uniform(2, 60));
    s.tuning.adapt_window_ms = static_cast<double>(100 * Uniform(0, 30));
    s.tuning.adapt_min_429 = Uniform(1, 3);
    if (Chance(0.25)) s.tuning.share_rule = GateTuning::ShareRule::kFlat;
    if (run_.strict) s.tuning.class_policy = GateTuning::ClassPolicy::kStrict;
    s.now_ms = now_ms_;
    return s;
  }
  // The clock: mostly small steps, sometimes jumps, rarely backwards.
  const double r = std::uniform_real_distribution<>(0, 1)(rng_);
  if (r < 0.55) {
    now_ms_ += Uniform(0, 20);
  } else if (r < 0.85) {
    now_ms_ += Uniform(20, 400);
  } else if (r < 0.96) {
    now_ms_ += Uniform(400, 5000);
  } else if (r < 0.98) {
    now_ms_ += Uniform(5000, 70000);
  } else {
    now_ms_ -= Uniform(1, 3000);
  }
  s.now_ms = now_ms_;
  const double k = std::uniform_real_distribution<>(0, 1)(rng_);
  if (n == 1 || k < 0.01) {
    s.kind = DiffStep::Kind::kCaps;
    const double rps[] = {1, 2, 5, 10, 40};
    const double tps[] = {0, 500, 2000, 10000};
    const double burst[] = {0.1, 0.5, 1, 2, 5};
    s.caps.requests_per_s = rps[Uniform(0, 4)];
    s.caps.tokens_per_s = tps[Uniform(0, 3)];
    s.caps.burst_s = burst[Uniform(0, 4)];
    s.caps.max_cost_requests = Chance(0.8) ? 0 : static_cast<double>(Uniform(1, 100));
    s.caps.max_cost_tokens =
        Chance(0.8)
            ? 0
            : static_cast<double>(Uniform(1, 60 * static_cast<int64_t>(s.caps.tokens_per_s) + 1));
    bucket_tokens_ = s.caps.tokens_per_s * s.caps.burst_s;
  } else if (n == 2 || k < 0.02) {
    s.kind = DiffStep::Kind::kOmega;
    classes_ = static_cast<int>(Uniform(1, run_.classes));
    for (int c = 0; c < classes_; ++c)
      s.omega.push_back(0.25 * static_cast<double>(Uniform(1, 16)));
  } else if (k < 0.04) {
    s.kind = DiffStep::Kind::kTenantWeight;
    s.tenant = TenantName(Uniform(0, run_.tenants - 1));
    s.weight = Chance(0.2) ? 0 : 0.25 * static_cast<double>(Uniform(1, 16));
  } else if (k < 0.30 && !model.state.tickets.empty()) {
    return Release(model);
  } else {
    return Admit();
  }
  return s;
}

DiffStep DiffGenerator::Admit() {
  DiffStep s{};
  s.kind = DiffStep::Kind::kAdmit;
  s.now_ms = now_ms_;
  auto& a = s.admit;
  // A few heavy tenants: tenant i is drawn about twice as often as i + 1.
  int t = 0;
  while (t + 1 < run_.tenants && Chance(0.5)) ++t;
  a.tenant = TenantName(t);
  // Mostly the tenant's home class, so classes hold unequal numbers of
  // tenants (tenant 0, the most frequent, alone in its class with odd
  // counts); sometimes any class, or one above K.
  const int home = 1 + (t == 0 ? 0 : 1 + t) % std::max(1, classes_);
  a.priority = Chance(0.8) ? home : Uniform(1, std::max(1, classes_) + (Chance(0.03) ? 1 : 0));
  a.requests = Chance(0.9) ? 1 : Uniform(0, 5);
  const double r = std::uniform_real_distribution<>(0, 1)(rng_);
  const auto bucket = static_cast<int64_t>(bucket_tokens_);
  if (r < 0.9) {
    a.tokens = Uniform(0, 2000);
  } else if (r < 0.97) {
    a.tokens = Uniform(0, 3 * bucket + 10);  // above the bucket: a debt
  } else {
    a.tokens = Uniform(0, 70 * bucket + 10);  // above the max cost: REJECT
  }
  a.max_tokens = Chance(0.5) ? Uniform(0, 1000) : 0;
  a.mode = run_.options.mode == GateMode::kEstimate    ? Mode::kEstimate
           : run_.options.mode == GateMode::kReconcile ? Mode::kReconcile
                                                       : Mode::kReservation;
  a.ablation = run_.options.ablation == GateAblation::kNone    ? Ablation::kNone
               : run_.options.ablation == GateAblation::kNoDrf ? Ablation::kNoDrf
                                                               : Ablation::kNoPriority;
  a.queue_ttl_ms = run_.options.queue_ttl_ms;
  a.now_ms = now_ms_;
  // Admit ahead on half the calls, by up to 2 s (the gate caps it at four
  // bucket refills).
  a.ahead_ms = Chance(0.5) ? Uniform(1, 2000) : 0;
  return s;
}

DiffStep DiffGenerator::Release(const gate_model::Model& model) {
  DiffStep s{};
  s.kind = DiffStep::Kind::kRelease;
  s.now_ms = now_ms_;
  auto it = model.state.tickets.begin();
  std::advance(it, Uniform(0, static_cast<int64_t>(model.state.tickets.size()) - 1));
  auto& r = s.release;
  r.ticket = it->first;
  r.now_ms = now_ms_;
  r.requests = Chance(0.9) ? it->second.requests : Uniform(0, 3);
  r.tokens = Uniform(0, 2 * it->second.tag_tokens + 500);
  const double o = std::uniform_real_distribution<>(0, 1)(rng_);
  if (o < 0.1) {
    r.outcome = "429";
    const char* bounds[] = {"", "requests", "tokens"};
    r.bound = bounds[Uniform(0, 2)];
    r.retry_after_ms = Chance(0.5) ? -1 : static_cast<double>(Uniform(0, 5000));
    r.remaining_requests = static_cast<double>(Uniform(-1, 2));
    r.remaining_tokens = static_cast<double>(Uniform(-1, 2));
    r.reset_requests_ms = Chance(0.5) ? -1 : static_cast<double>(Uniform(0, 9000));
    r.reset_tokens_ms = Chance(0.5) ? -1 : static_cast<double>(Uniform(0, 9000));
  } else if (o < 0.17) {
    r.outcome = "refused";
    r.requests = 0, r.tokens = 0;
  } else if (o < 0.5) {
    // A served call with rate-limit headers (the header rule): remaining
    // from none to above a second of most caps, resets around the window.
    r.remaining_requests = Chance(0.1) ? -1 : static_cast<double>(Uniform(0, 80));
    r.remaining_tokens = Chance(0.1) ? -1 : static_cast<double>(Uniform(0, 20000));
    r.reset_requests_ms = Chance(0.2) ? -1 : static_cast<double>(Uniform(0, 4000));
    r.reset_tokens_ms = Chance(0.2) ? -1 : static_cast<double>(Uniform(0, 4000));
    if (Chance(0.5)) {
      // As a provider's fixed window of 2 s would answer (with the jitter
      // of answers released out of order): the reset falls and the
      // remaining budget with it, so answers of one window form pairs and
      // the outside rate is measured.
      const double left = static_cast<double>(2000 - ((now_ms_ % 2000) + 2000) % 2000);
      r.reset_requests_ms = std::max(1.0, left + static_cast<double>(Uniform(-60, 60)));
      r.remaining_requests =
          std::max(0.0, std::floor(left / 50) + static_cast<double>(Uniform(-3, 3)));
      r.reset_tokens_ms = Chance(0.3) ? -1 : r.reset_requests_ms;
      r.remaining_tokens = std::floor(left * 5);
    }
  }
  return s;
}

}  // namespace bp::test
