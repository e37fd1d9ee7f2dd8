// Named cases of the L1 line (docs/gate.md "The rule", L1 line): callers
// deferred for L1 are promised successive refills, each after the needs
// already promised, the line seen at most 16 bucket refills ahead (8 in
// reservation mode); the L1
// holder takes the next refill and its need extends the line; a promise
// reserves nothing, so a due caller that L1 holds is admitted. Run on the
// model and through the scripts with the other named cases
// (gate_model_cases.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gate/gate_model_cases.h"

namespace bp::gate_model {
namespace {

constexpr double kT0us = static_cast<double>(kCaseT0) * 1000;

// "q<i>": a tenant per caller (built with +=: GCC 12 flags "q" + to_string
// under -Werror=restrict).
std::string Q(int64_t i) {
  std::string name = "q";
  name += std::to_string(i);
  return name;
}

Call Admit(int64_t at, std::string tenant, int64_t requests, std::string ticket, int64_t k = 1) {
  Call c;
  c.at_ms = at, c.tenant = std::move(tenant), c.requests = requests, c.k = k;
  c.want = Verdict::kAdmit, c.text = std::move(ticket);
  return c;
}
Call DeferL1(int64_t at, std::string tenant, int64_t requests, int64_t delta_ms, int64_t k = 1) {
  Call c;
  c.at_ms = at, c.tenant = std::move(tenant), c.requests = requests, c.k = k;
  c.want = Verdict::kDefer, c.text = "l1:requests", c.delta_ms = delta_ms;
  return c;
}

// 10 req/s, slack 0, lend_fraction 1 (no lending), grace 200 ms.
Config Caps(double burst_s) {
  Config c;
  c.requests_per_s = 10, c.burst_s = burst_s, c.slack_ms = 0, c.lend_fraction = 1;
  return c;
}

}  // namespace

std::vector<Case> LineCases() {
  std::vector<Case> out;
  {
    // z empties the 10-request bucket at t0. a, due, takes the hold and the
    // next refill (100 ms); b, c and d, due at once and kept out by the
    // holder's need, are each promised the refill after the needs already
    // promised: 200, 300, 400 ms, one request (100 ms) apart, instead of
    // all 200.
    Case c{"the L1 line spreads callers due at once over successive refills",
           Caps(1),
           Mode::kReconcile,
           {Admit(0, "z", 10, "1"), DeferL1(0, "a", 1, 100), DeferL1(0, "b", 1, 200),
            DeferL1(0, "c", 1, 300), DeferL1(0, "d", 1, 400)}};
    c.check = [](const Model& m) {
      ASSERT_TRUE(m.state.line.has_value());
      EXPECT_EQ(m.state.line->r_us, kT0us + 400000);
      EXPECT_EQ(m.state.line->t_us, 0);  // no token dimension: no token line
      EXPECT_EQ(m.state.hold->queue, "1:a");
    };
    out.push_back(c);
    // Each wakes at its promise and finds its request: one deferral each.
    c.name = "the L1 line: each promised caller is admitted at its wake-up";
    c.calls.push_back(Admit(100, "a", 1, "2"));
    c.calls.push_back(Admit(200, "b", 1, "3"));
    c.calls.push_back(Admit(300, "c", 1, "4"));
    c.calls.push_back(Admit(400, "d", 1, "5"));
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.g->r, 0);  // each 100 ms refill taken at once
      EXPECT_FALSE(m.state.hold.has_value());
    };
    out.push_back(c);
  }
  {
    // A promise reserves nothing: b's worker does not come back at 200, and
    // e, due at 290 with L1 at 1.9, is admitted although the line ends at
    // 400; c then finds its request at 300 as promised.
    Case c{"the L1 line promises but does not reserve: a due caller L1 holds is admitted",
           Caps(1),
           Mode::kReconcile,
           {Admit(0, "z", 10, "1"), DeferL1(0, "a", 1, 100), DeferL1(0, "b", 1, 200),
            DeferL1(0, "c", 1, 300), DeferL1(0, "d", 1, 400), Admit(100, "a", 1, "2"),
            Admit(290, "e", 1, "3"), Admit(300, "c", 1, "4")}};
    c.check = [](const Model& m) { EXPECT_EQ(m.state.line->r_us, kT0us + 400000); };
    out.push_back(c);
  }
  {
    // A 0.1 s bucket (one request): the line is seen at most 16 x 0.1 s
    // ahead, so q17 and q18, beyond it, share the place after it (1700 ms)
    // and the line's end stays at 1700.
    Case c{"the L1 line is seen at most 16 bucket refills ahead",
           Caps(0.1),
           Mode::kReconcile,
           {Admit(0, "z", 1, "1")}};
    for (int64_t i = 1; i <= 16; ++i) c.calls.push_back(DeferL1(0, Q(i), 1, 100 * i));
    c.calls.push_back(DeferL1(0, "q17", 1, 1700));
    c.calls.push_back(DeferL1(0, "q18", 1, 1700));
    c.check = [](const Model& m) { EXPECT_EQ(m.state.line->r_us, kT0us + 1700000); };
    out.push_back(c);
  }
  {
    // Reservation mode: 1 000 tok/s and a 0.1 s bucket of 100 tokens, each
    // call reserving 10 + 90 = the whole bucket. The line is seen at most
    // 8 x 0.1 s ahead: q1..q8 are promised 100..800 ms, q9 and q10 share
    // 900 ms.
    Config cfg = Caps(0.1);
    cfg.requests_per_s = 1000, cfg.tokens_per_s = 1000;
    Case c{"the L1 line is seen at most 8 bucket refills ahead in reservation mode",
           cfg,
           Mode::kReservation,
           {}};
    Call z = Admit(0, "z", 1, "1");
    z.tokens = 10, z.max_tokens = 90;
    c.calls.push_back(z);  // 100 -> 0 tokens
    for (int64_t i = 1; i <= 10; ++i) {
      Call d = DeferL1(0, Q(i), 1, 100 * std::min<int64_t>(i, 9));
      d.tokens = 10, d.max_tokens = 90, d.text = "l1:tokens";
      c.calls.push_back(d);
    }
    c.check = [](const Model& m) { EXPECT_EQ(m.state.line->t_us, kT0us + 900000); };
    out.push_back(c);
  }
  {
    // a (cost 2, finish tag 1.2) holds L1 and is promised 200 ms. b (class
    // 2, alone: finish tag 1.1) takes the hold and the next refill, 100 ms,
    // ahead of the line, and its request extends the line to 300. c (class
    // 2 beside b, finish tag 1.2), kept out by b's need, goes after the
    // line: 400.
    Case c{"the L1 holder takes the next refill ahead of the line and extends it",
           Caps(1),
           Mode::kReconcile,
           {Admit(0, "z", 10, "1"), DeferL1(0, "a", 2, 200), DeferL1(0, "b", 1, 100, 2),
            DeferL1(0, "c", 1, 400, 2)}};
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.hold->queue, "2:b");
      EXPECT_EQ(m.state.hold->until_us, kT0us + 100000 + 200000);  // delta + grace
      EXPECT_EQ(m.state.line->r_us, kT0us + 400000);
    };
    out.push_back(c);
  }
  return out;
}

}  // namespace bp::gate_model
