// Differential test: seeded random sequences of admissions, releases (with
// actual usage, refusals and 429 reports), weight and cap changes and clock
// steps (forward, jumps, backwards) run through the reference model
// (bp::gate_model) and through the real scripts on a real server, with the
// scripts' explicit clock (now_ms). After every step the decision (verdict,
// ticket and its text, delta, binding, reason) and every state field must
// agree exactly. On a disagreement the test shrinks the failing sequence
// (dropping chunks of steps while it still fails, within a time budget) and
// prints it. Longer runs: docs/gate-model.md (BP_GATE_DIFF_STEPS,
// BP_GATE_DIFF_SEEDS).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "bp/gate_admin.h"
#include "gate/gate_diff_steps.h"
#include "gate/gate_model_cases.h"
#include "gate/gate_model_store.h"
#include "gate_fixture.h"

namespace bp::test {
namespace {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoll(v) : fallback;
}

class GateModelDiff : public GateSuite {
 protected:
  // Runs `steps` on a fresh target and a fresh model; the index of the
  // first step on which they disagree and why, or -1.
  std::pair<int64_t, std::string> Replay(const DiffRun& run, const std::vector<DiffStep>& steps) {
    GateOptions options = run.options;
    auto gate = MakeGate(options);
    DiffHarness h(*gate, server_->url());
    for (size_t i = 0; i < steps.size(); ++i) {
      std::string why = h.Apply(steps[i]);
      if (!why.empty()) return {static_cast<int64_t>(i), why};
    }
    return {-1, ""};
  }

  // Generates and runs `n` steps of seed `seed`; on a disagreement shrinks
  // the failing prefix and fails with it.
  void RunSeed(uint32_t seed, int64_t n) {
    DiffRun run = MakeDiffRun(seed);
    auto gate = MakeGate(run.options);
    DiffHarness h(*gate, server_->url());
    DiffGenerator gen(seed, run);
    std::vector<DiffStep> steps;
    std::string why;
    for (int64_t i = 0; i < n && why.empty(); ++i) {
      steps.push_back(gen.Next(h.model()));
      why = h.Apply(steps.back());
    }
    if (why.empty()) {
      std::printf("seed %u (%s): %lld steps agree;", seed, run.Describe().c_str(),
                  static_cast<long long>(n));
      for (const auto& [path, count] : h.coverage()) {
        std::printf(" %s %lld,", path.c_str(), static_cast<long long>(count));
      }
      std::printf("\n");
      RecordProperty("steps_seed_" + std::to_string(seed), std::to_string(n));
      return;
    }
    std::vector<DiffStep> failing = Shrink(run, steps);
    auto [at, reason] = Replay(run, failing);
    std::ostringstream o;
    o << "seed " << seed << " (" << run.Describe() << "): model and scripts disagree at step "
      << steps.size() - 1 << ": " << why << "\nshortest failing sequence found (" << failing.size()
      << " steps, disagreeing at its last: " << reason << "):\n";
    for (const DiffStep& s : failing) o << "  " << s.Describe() << "\n";
    ADD_FAILURE() << o.str();
  }

  // Drops chunks of steps (halves, quarters, ... single steps) while the
  // sequence still fails, and cuts it after its first disagreement; stops
  // after a time budget (BP_GATE_DIFF_SHRINK_S, default 30 s).
  std::vector<DiffStep> Shrink(const DiffRun& run, std::vector<DiffStep> steps) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::seconds(EnvInt("BP_GATE_DIFF_SHRINK_S", 30));
    for (size_t chunk = std::max<size_t>(1, steps.size() / 2);; chunk /= 2) {
      for (size_t start = 0; start < steps.size();) {
        if (std::chrono::steady_clock::now() > deadline) return steps;
        std::vector<DiffStep> candidate(steps.begin(), steps.begin() + start);
        candidate.insert(candidate.end(), steps.begin() + std::min(steps.size(), start + chunk),
                         steps.end());
        auto [at, why] = Replay(run, candidate);
        if (at >= 0) {
          candidate.resize(static_cast<size_t>(at) + 1);
          steps = std::move(candidate);
        } else {
          start += chunk;
        }
      }
      if (chunk == 1) return steps;
    }
  }
};

// Several seeds in CI, each at least 10 000 steps; every seed draws its own
// caps, burst, mode, ablation, tenants, classes and adaptive tuning.
TEST_F(GateModelDiff, ScriptsAgreeWithTheModelOnRandomSequences) {
  const int64_t steps = EnvInt("BP_GATE_DIFF_STEPS", 10000);
  const int64_t seeds = EnvInt("BP_GATE_DIFF_SEEDS", 4);
  const int64_t first = EnvInt("BP_GATE_DIFF_FIRST_SEED", 1);
  for (int64_t seed = first; seed < first + seeds; ++seed) {
    RunSeed(static_cast<uint32_t>(seed), steps);
  }
}

// The named cases of the rule (gate_model_cases.cpp), through the scripts
// beside the model: their boundaries (a lend at exactly lend_fraction of the
// bucket, tied finish tags, the hold's hand-over) are rarely hit exactly by
// random sequences.
TEST_F(GateModelDiff, ScriptsDecideTheNamedCasesAsTheModel) {
  using gate_model::Mode;
  for (const gate_model::Case& c : gate_model::Cases()) {
    SCOPED_TRACE(c.name);
    GateOptions options;
    options.mode = c.mode == Mode::kEstimate    ? GateMode::kEstimate
                   : c.mode == Mode::kReconcile ? GateMode::kReconcile
                                                : GateMode::kReservation;
    auto gate = MakeGate(options);
    DiffHarness h(*gate, server_->url());
    const gate_model::Config& cf = c.config;
    std::vector<DiffStep> steps(2);
    steps[0].kind = DiffStep::Kind::kTuning;
    GateTuning& t = steps[0].tuning;
    t.slack_ms = cf.slack_ms, t.lend_fraction = cf.lend_fraction, t.grace_ms = cf.grace_ms;
    t.ticket_ttl_ms = static_cast<int64_t>(cf.ticket_ttl_ms), t.adapt = cf.adapt;
    t.adapt_beta = cf.adapt_beta, t.adapt_recover_ms = cf.adapt_recover_ms;
    t.adapt_window_ms = cf.adapt_window_ms;
    t.adapt_min_429 = static_cast<int64_t>(cf.adapt_min_429);
    if (cf.share_rule == gate_model::Config::ShareRule::kFlat) {
      t.share_rule = GateTuning::ShareRule::kFlat;
    }
    if (cf.class_policy == gate_model::Config::ClassPolicy::kStrict) {
      t.class_policy = GateTuning::ClassPolicy::kStrict;
    }
    steps[1].kind = DiffStep::Kind::kCaps;
    steps[1].caps = {cf.requests_per_s, cf.tokens_per_s, cf.burst_s, cf.max_cost_requests,
                     cf.max_cost_tokens};
    if (!cf.omega.empty()) {
      steps.emplace_back().kind = DiffStep::Kind::kOmega;
      steps.back().omega = cf.omega;
    }
    for (const auto& [tenant, weight] : cf.tenant_weights) {
      steps.emplace_back().kind = DiffStep::Kind::kTenantWeight;
      steps.back().tenant = tenant, steps.back().weight = weight;
    }
    for (const gate_model::Call& call : c.calls) {
      DiffStep& s = steps.emplace_back();
      s.now_ms = gate_model::kCaseT0 + call.at_ms;
      if (call.release) {
        s.kind = DiffStep::Kind::kRelease, s.release = gate_model::ReleaseOf(call);
      } else {
        s.kind = DiffStep::Kind::kAdmit, s.admit = gate_model::AdmitOf(call, c.mode);
      }
    }
    for (const DiffStep& s : steps) ASSERT_EQ(h.Apply(s), "") << s.Describe();
    c.check(h.model());
  }
}

}  // namespace
}  // namespace bp::test
