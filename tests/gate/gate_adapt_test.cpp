// Adaptive caps (docs/gate.md, "Adaptive caps"): the AIMD arithmetic of release.lua
// and its effect on admit.lua's L1, with an explicit clock so every fraction,
// hold and delta is exact. The learned state 'ad' is read raw from the server:
// "fr tr_us ft tt_us tau_us ws_us nr nt hr_us ht_us".
#include <cmath>
#include <cstdlib>

#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

constexpr int64_t kUs = kT0 * 1000;  // the script clock at kT0, microseconds

class GateAdapt : public GateSuite {
 protected:
  std::unique_ptr<Gate> MakeAdaptive(const GateCaps& caps, double beta, double recover_ms,
                                     double window_ms, int64_t min_429) {
    auto gate = MakeGate(caps, {});
    GateTuning t;
    t.adapt = true;
    t.adapt_beta = beta;
    t.adapt_recover_ms = recover_ms;
    t.adapt_window_ms = window_ms;
    t.adapt_min_429 = min_429;
    EXPECT_TRUE(GateAdmin(*gate).SetTuning(t).ok());
    return gate;
  }

  // The raw learned state of the gate's target; empty when absent.
  std::vector<double> Ad(Gate& gate) {
    ValkeyConnection conn(ValkeyOptions{server_->url(), 1000, 2000});
    EXPECT_TRUE(conn.Connect(1000).ok());
    auto r = conn.Command({"HGET", "bp:{" + gate.options().target + "}:state", "ad"});
    EXPECT_TRUE(r.ok());
    std::vector<double> out;
    if (!r.ok() || r->type != ValkeyReply::Type::kString) return out;
    const char* p = r->str.c_str();
    char* end = nullptr;
    for (double v = std::strtod(p, &end); end != p; v = std::strtod(p, &end)) {
      out.push_back(v);
      p = end;
    }
    return out;
  }
};

AdmitRequest At(const std::string& tenant, int64_t t_ms, Cost cost = {1, 0}) {
  return AdmitRequest{tenant, 1, cost, 0, kT0 + t_ms};
}

UpstreamReport Throttled(UpstreamReport::Bound bound, double retry_after_ms) {
  UpstreamReport r;
  r.outcome = UpstreamReport::Outcome::kThrottled;
  r.bound = bound;
  r.retry_after_ms = retry_after_ms;
  return r;
}

constexpr auto kReq = UpstreamReport::Bound::kRequests;
constexpr auto kTok = UpstreamReport::Bound::kTokens;

TEST_F(GateAdapt, ThresholdOneDecreasePerEpisodeAdditiveRecovery) {
  // 10 req/s, beta 0.5, back to the cap over 10 s, 3 429s within 1 s.
  auto gate = MakeAdaptive(GateCaps{10, 0, 1.0}, 0.5, 10000, 1000, 3);
  std::vector<std::string> tk;
  for (int i = 0; i < 10; ++i) tk.push_back(gate->Admit(At("a", 0)).ticket);  // L1 10 -> 0
  const Cost one{1, 0};
  // Two 429s: counted, no decrease (below the threshold).
  ASSERT_TRUE(gate->Release(tk[0], one, Throttled(kReq, 300), kT0).ok());
  ASSERT_TRUE(gate->Release(tk[1], one, Throttled(kReq, 300), kT0).ok());
  std::vector<double> ad = Ad(*gate);
  ASSERT_EQ(ad.size(), 10u);
  EXPECT_EQ(ad[0], 1);
  EXPECT_EQ(ad[6], 2);                               // nr
  EXPECT_EQ(ad[4], 10'000'000);                      // tau, us
  EXPECT_EQ(gate->Admit(At("b", 0)).delta_ms, 100);  // 1 request at 10/s
  // A second release of the same ticket counts nothing (idempotent).
  ASSERT_TRUE(gate->Release(tk[1], one, Throttled(kReq, 300), kT0).ok());
  EXPECT_EQ(Ad(*gate)[6], 2);
  // The third: f_r = 0.5 at kT0, held until max(window 1000, retry-after 300).
  ASSERT_TRUE(gate->Release(tk[2], one, Throttled(kReq, 300), kT0).ok());
  ad = Ad(*gate);
  EXPECT_EQ(ad[0], 0.5);
  EXPECT_EQ(ad[1], kUs);
  EXPECT_EQ(ad[2], 1);  // tokens untouched
  EXPECT_EQ(ad[6], 0);
  EXPECT_EQ(ad[8], kUs + 1'000'000);
  // 1 request at 5/s for b, who holds L1 with the earlier finish tag, and one
  // for c: 400 ms (at the configured 10/s: 200).
  EXPECT_EQ(gate->Admit(At("c", 0)).delta_ms, 400);
  // The same episode's late 429s (before the hold ends) count nothing.
  for (int i = 3; i < 6; ++i) {
    ASSERT_TRUE(gate->Release(tk[i], one, Throttled(kReq, 300), kT0 + 500).ok());
  }
  EXPECT_EQ(Ad(*gate), ad);
  // Recovery at 500 ms: f = 0.5 + 500/10000 = 0.55, L1 0 + 5.5 * 0.5 - 1.
  EXPECT_EQ(gate->Admit(At("d", 500)).verdict, Verdict::kAdmit);
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_requests, 1.75, 1e-9);
  // After the hold, two 429s in one window and one in the next: no decrease.
  ASSERT_TRUE(gate->Release(tk[6], one, Throttled(kReq, 300), kT0 + 1000).ok());
  ASSERT_TRUE(gate->Release(tk[7], one, Throttled(kReq, 300), kT0 + 1000).ok());
  ASSERT_TRUE(gate->Release(tk[8], one, Throttled(kReq, 300), kT0 + 2100).ok());
  ad = Ad(*gate);
  EXPECT_EQ(ad[0], 0.5);              // stored base, recovering since kT0
  EXPECT_EQ(ad[5], kUs + 2'100'000);  // a new window
  EXPECT_EQ(ad[6], 1);
  // An OK report changes nothing of the learned state.
  ASSERT_TRUE(gate->Release(tk[9], one, UpstreamReport{}, kT0 + 2100).ok());
  EXPECT_EQ(Ad(*gate), ad);
  // Two more 429s in the window: f = 0.5 * (0.5 + 2100/10000) = 0.355.
  std::string u1 = gate->Admit(At("a", 2100)).ticket, u2 = gate->Admit(At("a", 2100)).ticket;
  ASSERT_FALSE(u1.empty());
  ASSERT_FALSE(u2.empty());
  ASSERT_TRUE(gate->Release(u1, one, Throttled(kReq, 300), kT0 + 2100).ok());
  ASSERT_TRUE(gate->Release(u2, one, Throttled(kReq, 300), kT0 + 2100).ok());
  ad = Ad(*gate);
  EXPECT_NEAR(ad[0], 0.355, 1e-15);
  EXPECT_EQ(ad[1], kUs + 2'100'000);
  // Long after (server time is years past kT0): recovered to the cap, never above.
  auto st = GateAdmin(*gate).State();
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->adapt);
  EXPECT_EQ(st->learned_requests_fraction, 1);
  EXPECT_EQ(st->learned_tokens_fraction, 1);
  EXPECT_EQ(st->learned_requests_decreased_ms, kT0 + 2100);
  EXPECT_EQ(st->learned_tokens_decreased_ms, 0);
}

TEST_F(GateAdapt, BoundDimensionHeadersAndHold) {
  auto gate = MakeAdaptive(GateCaps{10, 1000, 1.0}, 0.7, 10000, 100, 1);
  auto admit = [&](int64_t t) { return gate->Admit(At("a", t, {1, 100})).ticket; };
  // Tokens bound, reset header 400 ms > retry-after 250 > window 100: held 400 ms.
  UpstreamReport r = Throttled(kTok, 250);
  r.reset_tokens_ms = 400;
  ASSERT_TRUE(gate->Release(admit(0), {1, 100}, r, kT0).ok());
  std::vector<double> ad = Ad(*gate);
  EXPECT_EQ(ad[0], 1);
  EXPECT_EQ(ad[2], 0.7);
  EXPECT_EQ(ad[9], kUs + 400'000);
  // Held at 399 ms, counted (min_429 = 1) at 400: 0.7 * (0.7 + 400/10000).
  ASSERT_TRUE(gate->Release(admit(399), {1, 100}, r, kT0 + 399).ok());
  EXPECT_EQ(Ad(*gate)[2], 0.7);
  ASSERT_TRUE(gate->Release(admit(400), {1, 100}, r, kT0 + 400).ok());
  EXPECT_NEAR(Ad(*gate)[2], 0.7 * 0.74, 1e-15);
  // No bound named: the dimension whose remaining header is 0 (requests).
  UpstreamReport u = Throttled(UpstreamReport::Bound::kUnknown, -1);
  u.remaining_requests = 0;
  u.remaining_tokens = 5000;
  ASSERT_TRUE(gate->Release(admit(500), {1, 100}, u, kT0 + 500).ok());
  ad = Ad(*gate);
  EXPECT_EQ(ad[0], 0.7);
  EXPECT_EQ(ad[8], kUs + 600'000);  // hold = the 100 ms window
  EXPECT_NEAR(ad[2], 0.7 * 0.74, 1e-15);
  // Neither bound nor headers: every capped dimension that is not held.
  ASSERT_TRUE(
      gate->Release(admit(600), {1, 100}, Throttled(UpstreamReport::Bound::kUnknown, -1), kT0 + 600)
          .ok());
  ad = Ad(*gate);
  EXPECT_NEAR(ad[0], 0.7 * 0.71, 1e-15);  // 0.7 + 100/10000
  EXPECT_NEAR(ad[2], 0.7 * 0.74, 1e-15);  // tokens still held (until 800 ms)
}

TEST_F(GateAdapt, FloorAndConfiguredCapacityStillAdmitsLargeCalls) {
  auto gate = MakeAdaptive(GateCaps{10, 1000, 1.0}, 0.5, 10000, 0, 1);
  // Window 0 and no retry-after: every 429 is its own episode.
  for (int i = 0; i < 8; ++i) {
    std::string t = gate->Admit(At("a", 0, {1, 1})).ticket;
    ASSERT_TRUE(gate->Release(t, {1, 1}, Throttled(kTok, -1), kT0).ok());
  }
  EXPECT_EQ(Ad(*gate)[2], 0.05);  // 0.5^8 < 0.05: the floor
  // The burst capacity stays at the configured cap: a 900-token call waits
  // for L1 at 50 tok/s but is not rejected.
  Decision d = gate->Admit(At("b", 0, {1, 900}));
  EXPECT_EQ(d.verdict, Verdict::kAdmit);  // L1 still full: 1000 - 8
  d = gate->Admit(At("c", 0, {1, 900}));
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.reason, "l1:tokens");
  EXPECT_EQ(d.delta_ms, 16160);  // (900 - 92) / 50 tok/s
}

TEST_F(GateAdapt, OffByDefaultSwitchAndReset) {
  auto gate = MakeGate(GateCaps{10, 0, 1.0}, {});
  std::string t = gate->Admit(At("a", 0)).ticket;
  ASSERT_TRUE(gate->Release(t, {1, 0}, Throttled(kReq, 100), kT0).ok());
  EXPECT_TRUE(Ad(*gate).empty());  // the paper's gate learns nothing
  auto cfg = GateAdmin(*gate).Config();
  ASSERT_TRUE(cfg.ok());
  EXPECT_FALSE(cfg->tuning.adapt);
  EXPECT_FALSE(GateAdmin(*gate).State()->adapt);
  GateTuning on;
  on.adapt = true;
  on.adapt_min_429 = 1;
  ASSERT_TRUE(GateAdmin(*gate).SetTuning(on).ok());
  EXPECT_TRUE(GateAdmin(*gate).Config()->tuning.adapt);
  t = gate->Admit(At("a", 0)).ticket;
  ASSERT_TRUE(gate->Release(t, {1, 0}, Throttled(kReq, 100), kT0).ok());
  EXPECT_EQ(Ad(*gate)[0], 0.7);
  ASSERT_TRUE(GateAdmin(*gate).ResetLearned().ok());
  EXPECT_TRUE(Ad(*gate).empty());
  t = gate->Admit(At("a", 0)).ticket;
  ASSERT_TRUE(gate->Release(t, {1, 0}, Throttled(kReq, 100), kT0).ok());
  EXPECT_EQ(Ad(*gate)[0], 0.7);
  ASSERT_TRUE(GateAdmin(*gate).SetTuning(GateTuning{}).ok());  // off: the learned state goes
  EXPECT_TRUE(Ad(*gate).empty());
  // Bad tuning and reports are refused.
  GateTuning bad;
  bad.adapt_beta = 1;
  EXPECT_FALSE(GateAdmin(*gate).SetTuning(bad).ok());
  bad = GateTuning{};
  bad.adapt_min_429 = 0;
  EXPECT_FALSE(GateAdmin(*gate).SetTuning(bad).ok());
  UpstreamReport nan = Throttled(kReq, std::nan(""));
  EXPECT_EQ(gate->Release("1", {1, 0}, nan, kT0).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bp::test
