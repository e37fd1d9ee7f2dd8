#include "gate/gate_model_cases.h"

#include <gtest/gtest.h>

namespace bp::gate_model {
namespace {

constexpr double kCaseT0us = 1'700'000'000'000'000.0;

Call Make(int64_t at, std::string tenant, int64_t requests, int64_t tokens, int64_t k, Verdict want,
          std::string text) {
  Call c;
  c.at_ms = at, c.tenant = std::move(tenant), c.k = k, c.requests = requests, c.tokens = tokens;
  c.want = want, c.text = std::move(text);
  return c;
}
Call Admit(int64_t at, std::string tenant, int64_t requests, std::string ticket, int64_t tokens = 0,
           int64_t k = 1) {
  return Make(at, std::move(tenant), requests, tokens, k, Verdict::kAdmit, std::move(ticket));
}
Call Defer(int64_t at, std::string tenant, int64_t requests, int64_t delta, std::string binding,
           int64_t tokens = 0, int64_t k = 1) {
  Call c = Make(at, std::move(tenant), requests, tokens, k, Verdict::kDefer, std::move(binding));
  c.delta_ms = delta;
  return c;
}
Call Reject(int64_t at, int64_t requests, int64_t tokens, std::string reason, int64_t k = 1) {
  return Make(at, "t", requests, tokens, k, Verdict::kReject, std::move(reason));
}
Call Release(int64_t at, std::string ticket, int64_t requests, int64_t tokens,
             std::string outcome = "ok") {
  Call c = Make(at, "", requests, tokens, 1, Verdict::kAdmit, std::move(ticket));
  c.release = true, c.outcome = std::move(outcome);
  return c;
}

Config Caps(double rps, double tps, double burst, double slack_ms = 0, double lend = 1,
            double grace_ms = 200) {
  Config c;
  c.requests_per_s = rps, c.tokens_per_s = tps, c.burst_s = burst;
  c.slack_ms = slack_ms, c.lend_fraction = lend, c.grace_ms = grace_ms;
  return c;
}

// z empties a 10-request bucket at t0 (V = 1, F_z = 1); a then defers for
// L1 and takes the hold; b defers behind the holder's need (2 x 100 ms).
std::vector<Call> TwoBacklogged() {
  return {Admit(0, "z", 10, "1"), Defer(0, "a", 1, 100, "l1:requests"),
          Defer(0, "b", 1, 200, "l1:requests")};
}

}  // namespace

std::vector<Case> Cases() {
  std::vector<Case> out;
  out.push_back(
      {"fits", Caps(10, 0, 1), Mode::kReconcile, {Admit(0, "a", 1, "1")}, [](const Model& m) {
         // r = 10 - 1; sigma = 1/10, alone: V and F_a advance by 0.1.
         EXPECT_EQ(m.state.g->r, 9);
         EXPECT_EQ(m.state.g->V, 0.1);
         EXPECT_EQ(m.state.queues.at("1:a").F, 0.1);
         EXPECT_EQ(m.state.tickets.at("1").Text(), "1 1 0 0 1:a 0");
       }});
  {
    // a is admitted at t0+100 (its hold); a and b share class 1 (W = 2,
    // w_a = 1/2): F_a = 1 + 0.1 / 0.5 = 1.2; D_r = omega (10 + 10) / W = 10,
    // V = 1 + 1/10 = 1.1. Its next call is 0.1 ahead of V at X* = 10/10:
    // 100 ms, as long as L1's refill of its request; but the refill at
    // t0+200 is promised to b (the L1 line), so it waits for the next one,
    // 200 ms, which names the binding.
    Case c{"defers for fair share", Caps(10, 0, 1), Mode::kReconcile, TwoBacklogged()};
    c.calls.push_back(Admit(100, "a", 1, "2"));
    c.calls.push_back(Defer(100, "a", 1, 200, "l1:requests"));
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.g->V, 1.1);
      EXPECT_EQ(m.state.queues.at("1:a").F, 1.2);
      EXPECT_EQ(m.state.queues.at("1:a").T_us, kCaseT0us + 300000);
      EXPECT_FALSE(m.state.hold.has_value());  // the holder got its turn
    };
    out.push_back(c);
  }
  {
    // As above with lend_fraction 0.5 and b in class 2 backlogged but idle
    // (a alone in class 1: F_a = 1.1, V = 1.05 after t0+100; its next call
    // waits for the refill after b's promised one, 200 ms): at t0+700 L1
    // holds 6 = 1 + 0.5 x 10, so a (ahead of V) borrows it: F_a = 1.2, and V
    // advances by the lent work too, 1/20 -> 1.1; then 5 - 1 < 5: a waits
    // for its turn, (1.2 - 1.1) / 0.5 s.
    Case c{"lends to a backlogged class",
           Caps(10, 0, 1, 0, 0.5, 2000),
           Mode::kReconcile,
           {Admit(0, "z", 10, "1"), Defer(0, "a", 1, 100, "l1:requests"),
            Defer(0, "b", 1, 200, "l1:requests", 0, 2), Admit(100, "a", 1, "2"),
            Defer(100, "a", 1, 200, "l1:requests"), Admit(700, "a", 1, "3"),
            Defer(700, "a", 1, 200, "fair")}};
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.queues.at("1:a").lent, 1);
      EXPECT_EQ(m.state.g->V, 1.1);  // a lent admission advances V as well
      EXPECT_EQ(m.state.g->r, 5);
      EXPECT_EQ(m.state.queues.at("2:b").bl, 1);
    };
    out.push_back(c);
  }
  {
    // a (cost 2, finish tag 1.2) takes the hold; b (cost 1, class 2 alone,
    // finish tag 1.1 < 1.2) takes it over; after b's admission a takes it
    // back.
    Case c{"the L1 hold taken",
           Caps(10, 0, 1),
           Mode::kReconcile,
           {Admit(0, "z", 10, "1"), Defer(0, "a", 2, 200, "l1:requests")}};
    c.check = [](const Model& m) {
      ASSERT_TRUE(m.state.hold.has_value());
      EXPECT_EQ(m.state.hold->queue, "1:a");
      EXPECT_EQ(m.state.hold->F, 1.2);
      EXPECT_EQ(m.state.hold->need_r, 2);
      EXPECT_EQ(m.state.hold->until_us, kCaseT0us + 200000 + 200000);  // delta + grace
    };
    out.push_back(c);
    c.name = "the L1 hold handed over to the smaller finish tag";
    c.calls.push_back(Defer(0, "b", 1, 100, "l1:requests", 0, 2));
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.hold->queue, "2:b");
      EXPECT_EQ(m.state.hold->F, 1.1);
      EXPECT_EQ(m.state.hold->until_us, kCaseT0us + 100000 + 200000);
    };
    out.push_back(c);
    c.name = "the L1 hold handed back after the holder's admission";
    c.calls.push_back(Admit(100, "b", 1, "2", 0, 2));
    c.calls.push_back(Defer(100, "a", 2, 200, "l1:requests"));
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.hold->queue, "1:a");
      EXPECT_EQ(m.state.hold->until_us, kCaseT0us + 100000 + 200000 + 200000);
      EXPECT_EQ(m.state.g->V, 1.05);
    };
    out.push_back(c);
  }
  {
    // Class 1 holds tenant a, class 2 tenants b, c, d (omega 1 each). Each
    // class's part of D_r is omega_k A_r / W_k = 1 x (10 per tenant x n) / n
    // = 10: half of eq. (1)'s D_r = 20 each, whatever the tenant count;
    // inside class 2 each tenant's weight is 1/3 (a quantum of 0.3 s for a
    // 0.1 s call). Flat: class 2's part is 30, three quarters of D_r. b, c
    // and d, kept out by a's need, take successive places in the L1 line
    // (200, 300, 400); at t0+100 nobody holds L1, so b's early second call
    // takes the hold and the next refill, ahead of the line (100 ms).
    Case c{"two classes with unequal tenant counts get omega shares",
           Caps(10, 0, 1),
           Mode::kReconcile,
           {Admit(0, "z", 10, "1"), Defer(0, "a", 1, 100, "l1:requests"),
            Defer(0, "b", 1, 200, "l1:requests", 0, 2), Defer(0, "c", 1, 300, "l1:requests", 0, 2),
            Defer(0, "d", 1, 400, "l1:requests", 0, 2), Admit(100, "a", 1, "2"),
            Defer(100, "b", 1, 100, "l1:requests", 0, 2), Admit(200, "b", 1, "3", 0, 2)}};
    c.config.omega = {1, 1};
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.classes.at("1").Er, 10);
      EXPECT_EQ(m.state.classes.at("2").Er, 10);
      EXPECT_EQ(m.state.classes.at("2").W, 3);
      EXPECT_EQ(m.state.g->Dr, 20);
      EXPECT_EQ(m.state.queues.at("1:a").F, 1.1);  // start tag 1, + 0.1 / 1
      EXPECT_EQ(m.state.queues.at("2:b").F, 1.3);  // start tag 1, + 0.1 / (1/3)
    };
    out.push_back(c);
    c.name = "flat share rule: class shares grow with tenant counts";
    c.config.share_rule = Config::ShareRule::kFlat;
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.classes.at("2").Er, 30);
      EXPECT_EQ(m.state.g->Dr, 40);
      EXPECT_EQ(m.state.queues.at("2:b").F, 1.1);  // start tag 1, + 0.1 / 1
    };
    out.push_back(c);
  }
  {
    // class_policy strict, omega 1/1. z empties the bucket; a (class 1)
    // defers 100 ms for L1, so class 1 is backlogged until its promise plus
    // grace: U_1 = 0 + 100 + 200 = 300 ms. b (class 2) is blocked until
    // then (binding "strict", delta 300 - now) and stays out of the
    // backlog, so D_r is class 1's part alone (1 x 10 / 1).
    Case c{"strict: a lower class defers until the higher class's promise ends",
           Caps(10, 0, 1),
           Mode::kReconcile,
           {Admit(0, "z", 10, "1"), Defer(0, "a", 1, 100, "l1:requests"),
            Defer(0, "b", 1, 300, "strict", 0, 2), Admit(100, "a", 1, "2"),
            Defer(250, "b", 1, 50, "strict", 0, 2)}};
    c.config.omega = {1, 1};
    c.config.class_policy = Config::ClassPolicy::kStrict;
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.classes.at("1").until_us, kCaseT0us + 300000);
      EXPECT_EQ(m.state.classes.at("1").n, 1);
      EXPECT_EQ(m.state.classes.at("2").n, 0);
      EXPECT_EQ(m.state.g->Dr, 10);
      const Queue& b = m.state.queues.at("2:b");
      EXPECT_EQ(b.bl, 0);
      EXPECT_EQ(b.defers, 2);
      EXPECT_EQ(b.admits, 0);
      EXPECT_FALSE(m.state.backlog.Contains("2:b"));
    };
    out.push_back(c);
    // At 300 ms a's expiry (0 + 100 + 200) has passed: the eviction takes
    // class 1 out of the backlog (n_1 = 0) and b, alone in its class, is
    // admitted from the refilled bucket (0 at 100 ms + 2).
    c.name = "strict: a lower class is served once the higher class's backlog empties";
    c.calls.push_back(Admit(300, "b", 1, "3", 0, 2));
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.classes.at("1").n, 0);
      EXPECT_EQ(m.state.g->r, 1);  // 2 - 1
      EXPECT_EQ(m.state.queues.at("2:b").admits, 1);
      EXPECT_EQ(m.state.classes.at("2").requests, 1);
    };
    out.push_back(c);
    // a keeps a backlog: each of its calls defers for L1 and renews U_1
    // (100 ms promise + 200 ms grace). b is blocked at every call, even with
    // L1 holding its cost (1 of 10 at 300 ms: too low to lend), and gets
    // nothing: strict's starvation.
    c.name = "strict: a lower class starves while a higher one keeps a backlog";
    c.calls = {Admit(0, "z", 10, "1"),
               Defer(0, "a", 1, 100, "l1:requests"),
               Defer(0, "b", 1, 300, "strict", 0, 2),
               Admit(100, "a", 1, "2"),
               Defer(100, "a", 1, 100, "l1:requests"),
               Admit(200, "a", 1, "3"),
               Defer(200, "a", 1, 100, "l1:requests"),
               Defer(300, "b", 1, 200, "strict", 0, 2),
               Admit(300, "a", 1, "4"),
               Defer(300, "a", 1, 100, "l1:requests"),
               Defer(500, "b", 1, 100, "strict", 0, 2)};
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.classes.at("1").until_us, kCaseT0us + 600000);
      EXPECT_EQ(m.state.classes.at("1").requests, 13);  // z's 10, a's 3
      EXPECT_EQ(m.state.queues.at("2:b").admits, 0);
      EXPECT_EQ(m.state.queues.at("2:b").defers, 3);
    };
    out.push_back(c);
  }
  out.push_back({"debt for a call above the burst",
                 Caps(10, 1000, 1),
                 Mode::kReconcile,
                 // needs the whole bucket (1000), debits 2500: level -1500;
                 // the next 100 tokens wait (1500 + 100) / 1000 s.
                 {Admit(0, "a", 1, "1", 2500), Defer(0, "a", 1, 1600, "l1:tokens", 100)},
                 [](const Model& m) {
                   EXPECT_EQ(m.state.g->t, -1500);
                   EXPECT_EQ(m.state.g->V, 2.5);  // binding tokens: 2500 / 1000
                 }});
  {
    Case c{"reject above max cost",
           Caps(10, 1000, 1),
           Mode::kReconcile,
           {Reject(0, 601, 0,
                   "request too large: 601 requests exceed max_cost_requests 600 (the "
                   "provider's limit per window) by 1"),
            Reject(0, 1, 60001,
                   "request too large: 60001 tokens exceed max_cost_tokens 60000 (the "
                   "provider's limit per window) by 1"),
            Reject(0, 1, 0, "priority 3 above the configured classes 1..2", 3),
            Admit(0, "a", 1, "1", 60000, 2)}};
    c.config.omega = {1, 2};
    out.push_back(c);
  }
  {
    // Debits 100 + 400 (O = 400); the release of 150 refunds 350 and O goes.
    Case c{"reservation debit and refund",
           Caps(10, 1000, 1),
           Mode::kReservation,
           {Admit(0, "a", 1, "1", 100), Release(0, "1", 1, 150)}};
    c.calls[0].max_tokens = 400;
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.g->t, 850);
      EXPECT_EQ(m.state.reserved, 0);
      EXPECT_EQ(m.state.reservations.size(), 0U);
      EXPECT_EQ(m.state.classes.at("1").tokens, 150);
      EXPECT_EQ(m.state.queues.at("1:a").F, 0.1 + (0.15 - 0.1));  // sigma 0.1 -> 0.15
    };
    out.push_back(c);
    c.name = "reservation debit";
    c.calls.pop_back();
    c.check = [](const Model& m) {
      EXPECT_EQ(m.state.g->t, 500);
      EXPECT_EQ(m.state.reserved, 400);
      EXPECT_EQ(m.state.reservations.Score("1 400"), kCaseT0us + 600000000);
      EXPECT_EQ(m.state.tickets.at("1").Text(), "1 1 500 0 1:a 100");
    };
    out.push_back(c);
  }
  {
    // One 429 (min_429 1, beta 0.5) halves C_r: draining L1, the next
    // request waits 1 / 5 s, not 1 / 10 s; recovery is linear over 10 s.
    Case c{"adaptive cap drop and recovery",
           Caps(10, 0, 1),
           Mode::kReconcile,
           {Admit(0, "a", 1, "1"), Release(0, "1", 1, 0, "429"), Admit(0, "a", 9, "2"),
            Defer(0, "a", 1, 200, "l1:requests")}};
    c.config.adapt = true, c.config.adapt_min_429 = 1, c.config.adapt_beta = 0.5;
    c.config.adapt_recover_ms = 10000;
    c.check = [](const Model& m) {
      const Learned& a = *m.state.learned;
      EXPECT_EQ(a.fr, 0.5);
      EXPECT_EQ(a.hr_us, kCaseT0us + 2000000);  // held for the 2 s window
      EXPECT_EQ(LearnedFraction(a.fr, a.tr_us, a.tau_us, kCaseT0us + 2500000), 0.75);
      EXPECT_EQ(LearnedFraction(a.fr, a.tr_us, a.tau_us, kCaseT0us + 5000000), 1);
      EXPECT_EQ(LearnedFraction(a.ft, a.tt_us, a.tau_us, kCaseT0us), 1);
    };
    out.push_back(c);
  }
  out.push_back({"clock going back",
                 Caps(10, 0, 1),
                 Mode::kReconcile,
                 // Back 0.5 s: no refill, the refill time stays; back 2 s
                 // (more than 1 s): the refill restarts from the new now.
                 {Admit(0, "a", 1, "1"), Admit(-500, "a", 1, "2"), Admit(-2000, "a", 1, "3"),
                  Admit(-1000, "a", 1, "4")},
                 [](const Model& m) {
                   EXPECT_EQ(m.state.g->r, 9);  // 7 + 1 s of refill, capped, - 1
                   EXPECT_EQ(m.state.g->ts_us, kCaseT0us - 1000000);
                 }});
  for (Case& c : HeaderCases()) out.push_back(std::move(c));
  for (Case& c : LineCases()) out.push_back(std::move(c));
  return out;
}

AdmitInput AdmitOf(const Call& call, Mode mode) {
  return {call.tenant, call.k,          call.requests, call.tokens,         call.max_tokens,
          mode,        Ablation::kNone, 10000,         kCaseT0 + call.at_ms};
}

ReleaseInput ReleaseOf(const Call& call) {
  ReleaseInput r;
  r.ticket = call.text, r.requests = call.requests, r.tokens = call.tokens;
  r.now_ms = kCaseT0 + call.at_ms, r.outcome = call.outcome;
  if (call.outcome == "429") r.bound = "requests";
  r.remaining_requests = call.remaining_requests, r.reset_requests_ms = call.reset_requests_ms;
  r.remaining_tokens = call.remaining_tokens, r.reset_tokens_ms = call.reset_tokens_ms;
  return r;
}

}  // namespace bp::gate_model
