// Named cases of the adaptive caps' header rule (docs/gate.md "Adaptive
// caps"): a served call of cost c with the remaining budget R_d and reset T_d
// moves the learned fraction f_d towards g_d = clamp(k_d ((R_d + c / 2) *
// 1000 / T_d - x_o) / C_d, 0.05, 1) by the weight min(1, T_d /
// adapt_window_ms), x_o the outside rate and k_d the margin in [1, 2]
// measured between two answers of one provider window ('ah'). Run on the
// model and through the scripts with the other named cases
// (gate_model_cases.h).
#include <gtest/gtest.h>

#include "gate/gate_model_cases.h"

namespace bp::gate_model {
namespace {

constexpr double kT0us = static_cast<double>(kCaseT0) * 1000;

Call Admit(int64_t at, int64_t requests, std::string ticket, int64_t tokens = 0,
           std::string tenant = "a") {
  Call c;
  c.at_ms = at, c.tenant = std::move(tenant), c.requests = requests, c.tokens = tokens;
  c.want = Verdict::kAdmit, c.text = std::move(ticket);
  return c;
}
Call DeferL1(int64_t at, int64_t delta_ms, std::string tenant = "a",
             std::string binding = "l1:requests") {
  Call c;
  c.at_ms = at, c.tenant = std::move(tenant), c.want = Verdict::kDefer, c.text = std::move(binding);
  c.delta_ms = delta_ms;
  return c;
}
// A served call (outcome ok) of one request and `tokens`, with its headers.
Call Served(int64_t at, std::string ticket, double rem_r, double rst_r, double rem_t = -1,
            double rst_t = -1, int64_t tokens = 0) {
  Call c;
  c.at_ms = at, c.text = std::move(ticket), c.requests = 1, c.tokens = tokens;
  c.release = true;
  c.remaining_requests = rem_r, c.reset_requests_ms = rst_r;
  c.remaining_tokens = rem_t, c.reset_tokens_ms = rst_t;
  return c;
}
Config Adaptive(double rps, double tps, double window_ms) {
  Config c;
  c.requests_per_s = rps, c.tokens_per_s = tps, c.burst_s = 1;
  c.slack_ms = 0, c.lend_fraction = 1;
  c.adapt = true, c.adapt_window_ms = window_ms;
  return c;
}

}  // namespace

std::vector<Case> HeaderCases() {
  std::vector<Case> out;
  {
    // C_r = 10, adapt window 0.5 s; the provider has 2 requests left for
    // the 0.5 s until its reset (outside traffic took the rest), and this
    // call counts at the middle of its share: g_r = (2 + 0.5) / 0.5 / 10 =
    // 0.5, weight min(1, 500 / 500) = 1, so f_r = 0.5 at once, before any
    // 429. The bucket (10 - 1 - 9 = 0) then refills at 5 req/s: 200 ms per
    // request. A release without a reset (-1) changes nothing.
    Case c{"header rule: a smaller remaining budget lowers the cap at once",
           Adaptive(10, 0, 500),
           Mode::kReconcile,
           {Admit(0, 1, "1"), Admit(0, 1, "2"), Served(0, "1", 0, -1), Served(0, "2", 2, 500),
            Admit(0, 8, "3"), DeferL1(0, 200)}};
    c.check = [](const Model& m) {
      const Learned& a = *m.state.learned;
      EXPECT_EQ(a.fr, 0.5);  // 1 -> 0.5
      EXPECT_EQ(a.tr_us, kT0us);
      EXPECT_EQ(a.ft, 1);              // no token cap: untouched
      EXPECT_EQ(a.tau_us, 120000000);  // adapt_recover_ms, for the additive recovery
      EXPECT_EQ(a.nr, 0);              // no 429 counted, no hold
      EXPECT_EQ(a.hr_us, 0);
      EXPECT_EQ(LearnedFraction(a.fr, a.tr_us, a.tau_us, kT0us + 60000000), 1);  // 0.5 + 60/120
    };
    out.push_back(c);
  }
  {
    // C_r = 8, window 2 s. R = 4 with 1 s to the reset: g = 4.5 / 8 =
    // 0.5625, weight 0.5: f_r = 1 + (0.5625 - 1) * 0.5 = 0.78125. Then R =
    // 1 with 0.5 s left: g = 1.5 / 0.5 / 8 = 0.375, weight 0.25: f_r =
    // 0.78125 + (0.375 - 0.78125) * 0.25 = 0.6796875 (an answer close to
    // its reset moves the cap less).
    Case c{"header rule: an answer moves the cap by its reset's weight",
           Adaptive(8, 0, 2000),
           Mode::kReconcile,
           {Admit(0, 1, "1"), Admit(0, 1, "2"), Served(0, "1", 4, 1000), Served(0, "2", 1, 500)}};
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.learned->fr, 0.6796875);  // 1 -> 0.78125 -> 0.6796875
      EXPECT_EQ(m.state.learned->tr_us, kT0us);
    };
    out.push_back(c);
  }
  {
    // A 429 (min_429 1, beta 0.5) halves f_r and holds AIMD for the 2 s
    // window: headers that show headroom (R = 8 with 0.5 s left on C_r = 8
    // is g = 2.125, clamped to 1) do not raise it while held; headers that
    // show less lower it (R = 2 with 1 s left: g = 2.5 / 8 = 0.3125, weight
    // 0.5: f_r = 0.5 + (0.3125 - 0.5) * 0.5 = 0.40625).
    Case c{"header rule: no raise while AIMD holds, lowering still",
           Adaptive(8, 0, 2000),
           Mode::kReconcile,
           {Admit(0, 1, "1"), Admit(0, 1, "2"), Admit(0, 1, "3"), Served(0, "1", -1, -1),
            Served(0, "2", 8, 500), Served(0, "3", 2, 1000)}};
    c.calls[3].outcome = "429";
    c.config.adapt_min_429 = 1, c.config.adapt_beta = 0.5;
    c.check = [](const Model& m) {
      const Learned& a = *m.state.learned;
      EXPECT_EQ(a.fr, 0.40625);             // 1 -> 0.5 (429) -> 0.5 (held) -> 0.40625
      EXPECT_EQ(a.hr_us, kT0us + 2000000);  // the 429's hold, kept
      EXPECT_EQ(a.ws_us, kT0us);
    };
    out.push_back(c);
  }
  {
    // min_429 2. R = 2 with 1 s left on C_r = 8: g = 2.5 / 8 = 0.3125,
    // weight 0.5: f_r = 1 + (0.3125 - 1) * 0.5 = 0.65625. Then one 429 is
    // counted (window
    // 2 s from 0) without a decrease; while that window holds a 429 of d,
    // headroom (R = 16 with 2 s left: g = 1, weight 1) does not raise f_d.
    Case c{"header rule: no raise while a 429 of the dimension is counted",
           Adaptive(8, 0, 2000),
           Mode::kReconcile,
           {Admit(0, 1, "1"), Admit(0, 1, "2"), Admit(0, 1, "3"), Served(0, "1", 2, 1000),
            Served(0, "2", -1, -1), Served(0, "3", 16, 2000)}};
    c.calls[4].outcome = "429";
    c.config.adapt_min_429 = 2;
    c.check = [](const Model& m) {
      const Learned& a = *m.state.learned;
      EXPECT_EQ(a.nr, 1);        // one 429 counted, no decrease
      EXPECT_EQ(a.fr, 0.65625);  // 1 -> 0.65625, then not raised
      EXPECT_EQ(a.ws_us, kT0us);
    };
    out.push_back(c);
  }
  {
    // After the hold, headroom raises the cap without waiting for the
    // additive recovery: at +2 s (f_r = 0.5 + 2 / 120 by then), R = 8 with
    // 0.5 s left is g = 1 (clamped from 2), weight 0.25; then R = 16 with
    // 2 s left, g = 1, weight 1: f_r = 1, never above the configured cap.
    Case c{"header rule: headroom raises the cap after the hold, at most to the configured one",
           Adaptive(8, 0, 2000),
           Mode::kReconcile,
           {Admit(0, 1, "1"), Admit(0, 1, "2"), Admit(0, 1, "3"), Served(0, "1", -1, -1),
            Served(2000, "2", 8, 500), Served(2000, "3", 16, 2000)}};
    c.calls[3].outcome = "429";
    c.config.adapt_min_429 = 1, c.config.adapt_beta = 0.5;
    c.check = [](const Model& m) {
      const Learned& a = *m.state.learned;
      EXPECT_EQ(a.fr, 1);  // 0.5 (429) -> 0.5 + 2/120 -> ... -> 1
      EXPECT_EQ(a.tr_us, kT0us + 2000000);
      EXPECT_EQ(a.hr_us, kT0us + 2000000);
    };
    out.push_back(c);
  }
  {
    // Tokens: C_t = 1000 tokens/s, R_t = 200 with 1 s left after a call of
    // 100 tokens: g_t = (200 + 50) / 1 / 1000, f_t = 0.25; the request
    // headers show headroom (g_r = 10.5 / 1 / 10, clamped to 1) and f_r
    // stays 1.
    Case c{"header rule: each dimension learns from its own headers",
           Adaptive(10, 1000, 1000),
           Mode::kReconcile,
           {Admit(0, 1, "1", 100), Served(0, "1", 10, 1000, 200, 1000, 100)}};
    c.check = [](const Model& m) {
      const Learned& a = *m.state.learned;
      EXPECT_EQ(a.fr, 1);
      EXPECT_EQ(a.ft, 0.25);  // 1 -> 0.25
      EXPECT_EQ(a.tt_us, kT0us);
    };
    out.push_back(c);
  }
  {
    // Outside use, measured between two answers of one provider window
    // (C_r = 8, adapt window 2 s). At 0: R = 8, T = 1 s, the window's first
    // answer (anchor; g = 8.5 / 1 / 8, clamped to 1, nothing moves). At 0.5
    // s: R = 4, T = 0.5 s, the same reset instant; the budget fell by 4 in
    // 0.5 s of the provider's time, 1 of it this served call: x_o = (8 - 4
    // - 1) / 0.5 = 6 req/s. The budget fell at 8 req/s, the pace that
    // empties it at the reset (8 / 1): the margin stays k = 1. g = (4.5 /
    // 0.5 - 6) / 8 = 0.375 (R / T alone says 1), weight 0.25: f_r = 1 +
    // (0.375 - 1) * 0.25 = 0.84375. At 1.2 s the next window's first answer
    // (R = 8, T = 0.8 s) re-anchors and keeps x_o: g = (8.5 / 0.8 - 6) / 8 =
    // 0.578125, weight 0.4, from f_r recovered by 0.7 s / 120 s.
    Case c{"header rule: outside use between two answers of one window lowers the cap",
           Adaptive(8, 0, 2000),
           Mode::kReconcile,
           {Admit(0, 1, "1"), Admit(0, 1, "2"), Admit(0, 1, "3"), Served(0, "1", 8, 1000),
            Served(500, "2", 4, 500), Served(1200, "3", 8, 800)}};
    c.check = [](const Model& m) {
      const HeaderWindow& h = (*m.state.header)[0];
      EXPECT_EQ(h.xo, 6);  // measured in the first window, kept
      EXPECT_EQ(h.k, 1);
      EXPECT_EQ(h.ra, 8);  // the second window's anchor
      EXPECT_EQ(h.ea_us, kT0us + 2000000);
      EXPECT_EQ(h.rsta_ms, 800);
      EXPECT_EQ(h.u, 0);
      const double f1 = 0.84375 + 700000.0 / 120000000;  // 1 -> 0.84375, recovering 0.7 s
      EXPECT_EQ(m.state.learned->fr, f1 + (0.578125 - f1) * 0.4);
      EXPECT_EQ(m.state.learned->tr_us, kT0us + 1200000);
      EXPECT_EQ((*m.state.header)[1].rsta_ms, 0);  // tokens: no cap, never anchored
    };
    out.push_back(c);
  }
  {
    // The margin (C_r = 16, adapt window 2 s). At 0 the anchor: R = 8 with
    // 1 s left, g = 8.5 / 16 = 0.53125, weight 0.5: f_r = 0.765625. At 0.5
    // s: R = 6, T = 0.5 s: x_o = (8 - 6 - 1) / 0.5 = 2 req/s, and the
    // budget fell at (8 - 6) / 0.5 = 4 req/s where 8 / 1 = 8 req/s would
    // empty it at the reset: the window ends unused. k moves towards 1 * 8
    // / 4 = 2 by this call's share of the anchor's budget, 1 / 8: k = 1 +
    // (2 - 1) / 8 = 1.125, and the cap aims at 1.125 times the rate left,
    // g = 1.125 * (6.5 / 0.5 - 2) / 16 = 0.7734375, weight 0.25. A 429 of
    // requests then halves the margin above 1: k = 1.0625 (one 429 counted,
    // no decrease).
    Case c{"header rule: a window ending unused raises the margin, a 429 halves it",
           Adaptive(16, 0, 2000),
           Mode::kReconcile,
           {Admit(0, 1, "1"), Admit(0, 1, "2"), Admit(0, 1, "3"), Served(0, "1", 8, 1000),
            Served(500, "2", 6, 500), Served(500, "3", -1, -1)}};
    c.calls[5].outcome = "429";
    c.check = [](const Model& m) {
      const HeaderWindow& h = (*m.state.header)[0];
      EXPECT_EQ(h.xo, 2);
      EXPECT_EQ(h.k, 1.0625);  // 1 -> 1.125 -> 1.0625 (the 429)
      EXPECT_EQ(h.u, 1);
      const double f1 = 0.765625 + 500000.0 / 120000000;  // 1 -> 0.765625, recovering 0.5 s
      EXPECT_EQ(m.state.learned->fr, f1 + (0.7734375 - f1) * 0.25);
      EXPECT_EQ(m.state.learned->nr, 1);
      EXPECT_EQ((*m.state.header)[1].k, 0);  // tokens: no cap, never anchored
    };
    out.push_back(c);
  }
  {
    // The fixed point, with R and T as of the provider's count (C_r = 30,
    // the provider allows 10 calls a 1 s window; adapt window 50 ms, so
    // every answer here has weight 1). The tenants fill the window evenly:
    // call i (1..10) is counted at 100 i - 50 ms and leaves R = 10 - i with
    // T = 1050 - 100 i ms, so (R + 1 / 2) * 1000 / T = 10 req/s exactly at
    // every answer, g = 10 / 30. The pairs with the anchor (R_a = 9, T_a =
    // 950) see the budget fall by exactly the gate's own calls (x_o = 0) at
    // 10 req/s, faster than the 9 / 0.95 that would empty it at the reset
    // (the margin stays 1). A T read later than the count (an RFC 3339
    // instant against the answer's arrival, a 100 ms call) would read the
    // first answer as 9.5 / 0.85 = 11.2 req/s and the ninth as 1.5 / 0.05
    // = 30.
    Case c{
        "header rule: a window filled evenly at the provider's limit reads the limit at every "
        "answer",
        Adaptive(30, 0, 50),
        Mode::kReconcile,
        {}};
    for (int i = 1; i <= 10; ++i) c.calls.push_back(Admit(0, 1, std::to_string(i)));
    for (int i = 1; i <= 10; ++i) {
      c.calls.push_back(Served(100 * i - 50, std::to_string(i), 10 - i, 1050 - 100 * i));
    }
    c.check = [](const Model& m) {
      const HeaderWindow& h = (*m.state.header)[0];
      EXPECT_EQ(h.ra, 9);  // the window's first answer
      EXPECT_EQ(h.rsta_ms, 950);
      EXPECT_EQ(h.u, 9);  // calls 2..10
      EXPECT_EQ(h.xo, 0);
      EXPECT_EQ(h.k, 1);
      EXPECT_EQ(m.state.learned->fr, 10.0 / 30);  // 1 -> 1/3 at the first answer, kept
      EXPECT_EQ(m.state.learned->tr_us, kT0us + 950000);
    };
    out.push_back(c);
  }
  {
    // The margin's floor (C_r = 8): at 0.5 s R = 2, T = 0.5 s after the
    // anchor's R = 8 with 1 s left: the budget fell at 12 req/s, faster
    // than the 8 req/s that empty it at the reset: k towards 8 / 12, never
    // below 1. x_o = (8 - 2 - 1) / 0.5 = 10 req/s, more than the 5 left:
    // g = 0.05, weight 0.25.
    Case c{"header rule: the margin is never below 1",
           Adaptive(8, 0, 2000),
           Mode::kReconcile,
           {Admit(0, 1, "1"), Admit(0, 1, "2"), Served(0, "1", 8, 1000), Served(500, "2", 2, 500)}};
    c.check = [](const Model& m) {
      const HeaderWindow& h = (*m.state.header)[0];
      EXPECT_EQ(h.xo, 10);
      EXPECT_EQ(h.k, 1);
      EXPECT_EQ(m.state.learned->fr, 1 + (0.05 - 1) * 0.25);  // 1 -> 0.7625
    };
    out.push_back(c);
  }
  {
    // x_o = 6 req/s as above; at 4.5 s the anchored window (reset at 1 s)
    // ended more than the 2 s adapt window ago: the measure is dropped
    // (x_o = 0) and the answer anchors anew (R = 8, reset at 5 s).
    Case c{"header rule: the outside rate is forgotten a window after its window",
           Adaptive(8, 0, 2000),
           Mode::kReconcile,
           {Admit(0, 1, "1"), Admit(0, 1, "2"), Admit(0, 1, "3"), Served(0, "1", 8, 1000),
            Served(500, "2", 4, 500), Served(4500, "3", 8, 500)}};
    c.check = [](const Model& m) {
      const HeaderWindow& h = (*m.state.header)[0];
      EXPECT_EQ(h.xo, 0);  // 6 -> 0
      EXPECT_EQ(h.k, 1);
      EXPECT_EQ(h.ra, 8);
      EXPECT_EQ(h.ea_us, kT0us + 5000000);
      EXPECT_EQ(h.rsta_ms, 500);
    };
    out.push_back(c);
  }
  {
    // Anchor at 1 s: R = 8, reset at 2 s. An answer released at 1.05 s with
    // T = 20 ms was counted in the window before (reset at 1.07 s, more
    // than T_a / 2 = 0.5 s before the anchor's): kept out of the measure
    // (u stays 0, no re-anchoring).
    Case c{
        "header rule: an earlier window's answer released late is kept out",
        Adaptive(8, 0, 2000),
        Mode::kReconcile,
        {Admit(0, 1, "1"), Admit(0, 1, "2"), Served(1000, "1", 8, 1000), Served(1050, "2", 0, 20)}};
    c.check = [](const Model& m) {
      const HeaderWindow& h = (*m.state.header)[0];
      EXPECT_EQ(h.ra, 8);
      EXPECT_EQ(h.ea_us, kT0us + 2000000);
      EXPECT_EQ(h.rsta_ms, 1000);
      EXPECT_EQ(h.u, 0);
      EXPECT_EQ(h.xo, 0);
    };
    out.push_back(c);
  }
  {
    // adapt off: the same headers teach nothing ('ad' stays absent).
    Case c{"header rule: off with adapt off",
           Adaptive(10, 0, 1000),
           Mode::kReconcile,
           {Admit(0, 1, "1"), Served(0, "1", 0, 1000)}};
    c.config.adapt = false;
    c.check = [](const Model& m) { EXPECT_FALSE(m.state.learned.has_value()); };
    out.push_back(c);
  }
  return out;
}

}  // namespace bp::gate_model
