// The admission decision of the reference model (gate_model.h): the rule of
// docs/gate.md step by step, in the order and float arithmetic of admit.lua.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "bp/decimal.h"  // FormatShort: printf's "%g", as Lua's string.format writes the reason
#include "bp/gate_model.h"

namespace bp::gate_model {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// How far ahead the L1 line is seen, in bucket refills (burst_s each): 16,
// 8 in reservation mode; why: admit_decision.lua, where the rule is explained.
double LineBursts(Mode mode) { return mode == Mode::kReservation ? 8 : 16; }

// E_d of a class (its part of eq. (1)'s D_d): omega_k A_d / W_k, or
// omega_k A_d under the flat rule; 0 without backlogged tenants.
double ClassPart(bool flat, double o, double n, double W, double A) {
  if (n <= 0) return 0;
  if (flat) return o * A;
  return o * A / W;
}

// The REJECT of a cost above the largest one (admit.lua's reason text).
AdmitOutput TooLarge(double cost, const char* unit, const char* dim, double max) {
  std::string reason = "request too large: " + FormatShort(cost) + unit + " exceed max_cost_";
  reason += std::string(dim) + " " + FormatShort(max) + " (the provider's limit per window) by ";
  return {Verdict::kReject, "", 0, "", reason + FormatShort(cost - max)};
}

}  // namespace

AdmitOutput Model::Admit(const AdmitInput& in) {
  AdmitOutput out;
  State& st = state;
  const Config& cf = config;
  // ---- arguments
  const bool no_priority = in.ablation == Ablation::kNoPriority;
  const bool no_drf = in.ablation == Ablation::kNoDrf;
  const double ttl = static_cast<double>(in.queue_ttl_ms) * 1000;
  const double now = static_cast<double>(in.now_ms) * 1000;
  if (in.priority < 1) return {Verdict::kError, "", 0, "", "priority must be an integer >= 1"};
  if (in.requests < 0 || in.tokens < 0 || in.max_tokens < 0) {
    return {Verdict::kError, "", 0, "", "costs must be integers >= 0"};
  }
  if (in.ahead_ms < 0) return {Verdict::kError, "", 0, "", "ahead_ms must be an integer >= 0"};
  const int64_t k = no_priority ? 1 : in.priority;
  const std::string kstr = std::to_string(k);
  const double creq = static_cast<double>(in.requests), ctok = static_cast<double>(in.tokens);
  const double ttag = ctok;  // the fair rule charges the estimate in every mode
  double tdebit = ctok;      // L1 debits the worst case in reservation mode
  if (in.mode == Mode::kReservation) tdebit = ctok + static_cast<double>(in.max_tokens);
  const std::string qid = kstr + ":" + in.tenant;

  // ---- configuration
  double Cr = cf.requests_per_s, Ct = cf.tokens_per_s;
  if (!(Cr > 0)) return {Verdict::kError, "", 0, "", "target not configured (set caps)"};
  const double burst = cf.burst_s, lend = cf.lend_fraction;
  const double slack_us = cf.slack_ms * 1000, grace_us = cf.grace_ms * 1000;
  double omega_sum = 0;
  for (double o : cf.omega) omega_sum += o;
  std::optional<double> omega;
  if (k <= static_cast<int64_t>(cf.omega.size())) omega = cf.omega[static_cast<size_t>(k - 1)];
  if (!omega && omega_sum > 0) {
    out.verdict = Verdict::kReject;
    out.reason = "priority " + std::to_string(k) + " above the configured classes 1.." +
                 std::to_string(cf.omega.size());
    return out;
  }
  const bool flat = cf.share_rule == Config::ShareRule::kFlat;
  double tw = 1;  // w_t
  if (auto it = cf.tenant_weights.find(in.tenant); it != cf.tenant_weights.end()) tw = it->second;
  if (tw <= 0) tw = 1e-9;
  const double om = ClassWeight(omega, no_priority);  // omega_k
  const double capr = Cr * burst, capt = Ct * burst;
  double maxr = cf.max_cost_requests, maxt = cf.max_cost_tokens;
  if (maxr <= 0) maxr = std::max(Cr * 60, capr);
  if (maxt <= 0) maxt = std::max(Ct * 60, capt);
  if (creq > maxr) return TooLarge(creq, " requests", "requests", maxr);
  if (Ct > 0 && tdebit > maxt) {
    const bool rsv_mode = in.mode == Mode::kReservation;
    return TooLarge(tdebit, rsv_mode ? " tokens (prompt + max_tokens)" : " tokens", "tokens", maxt);
  }
  // Adaptive caps: refill and eq. (1) at the learned caps; capacity stays.
  if (cf.adapt && st.learned) {
    const Learned& a = *st.learned;
    Cr = Cr * LearnedFraction(a.fr, a.tr_us, a.tau_us, now);
    Ct = Ct * LearnedFraction(a.ft, a.tt_us, a.tau_us, now);
  }

  // ---- L1 refill (the token level tops out at capt + O in reservation mode)
  Bucket g;
  const bool had_evt = st.g.has_value();
  if (st.g) {
    g = *st.g;
  } else {
    g.r = capr, g.t = capt, g.ts_us = now;
  }
  const double el = std::max(0.0, now - g.ts_us);
  const double rsv = static_cast<double>(st.reserved.value_or(0));
  g.r = std::min(capr, g.r + Cr * el / 1e6);
  if (g.t < capt + rsv) g.t = std::min(capt + rsv, g.t + Ct * el / 1e6);
  if (g.ts_us < now || g.ts_us > now + 1000000) g.ts_us = now;

  // ---- this class's sums
  ClassSums c;
  if (auto it = st.classes.find(kstr); it != st.classes.end()) c = it->second;

  // ---- eviction (bounded, at most once per 10 ms)
  std::optional<Queue> q;
  if (auto it = st.queues.find(qid); it != st.queues.end()) q = it->second;
  // A queue leaves the backlog: its class's sums and part of D_d follow.
  auto leave_backlog = [&](const std::string& id) {
    std::optional<Queue> rec;
    if (id == qid) {
      rec = q;
      if (q) q->dr = 0, q->dt = 0, q->bl = 0, q->w = 0;
    } else if (auto it = st.queues.find(id); it != st.queues.end()) {
      rec = it->second;
    }
    if (rec) {
      // The queue leaves its class's sums; the class's part of D_d follows.
      const std::string kk = id.substr(0, id.find(':'));
      ClassSums ck = c;
      if (kk != kstr) ck = st.classes.count(kk) ? st.classes[kk] : ClassSums{};
      ck.n = ck.n - 1, ck.W = ck.W - rec->w, ck.Ar = ck.Ar - rec->dr, ck.At = ck.At - rec->dt;
      if (ck.n <= 0) ck.n = 0, ck.W = 0, ck.Ar = 0, ck.At = 0;
      double o = 1;
      const int64_t kn = std::stoll(kk);
      if (kn >= 1 && kn <= static_cast<int64_t>(cf.omega.size())) {
        o = ClassWeight(cf.omega[static_cast<size_t>(kn - 1)], false);
      }
      const double er = ClassPart(flat, o, ck.n, ck.W, ck.Ar);
      const double et = ClassPart(flat, o, ck.n, ck.W, ck.At);
      g.Dr = g.Dr - ck.Er + er, g.Dt = g.Dt - ck.Et + et;
      ck.Er = er, ck.Et = et;
      if (kk == kstr) {
        c = ck;
      } else {
        st.classes[kk] = ck;
      }
      Queue left = *rec;
      left.dr = 0, left.dt = 0, left.bl = 0, left.w = 0;
      st.queues[id] = left;
    }
    st.backlog.Remove(id);
    st.expiry.Remove(id);
  };
  if (!had_evt || now >= g.evt_us + 10000 || now < g.evt_us) {
    g.evt_us = now;
    for (const std::string& id : st.expiry.UpTo(now, 8)) leave_backlog(id);
    for (const std::string& id : st.seen.UpTo(now - ttl, 4)) {
      if (st.backlog.Contains(id)) leave_backlog(id);
      st.queues.erase(id);
      st.seen.Remove(id);
      if (id == qid) q.reset();
    }
  }

  // ---- strict class policy: blocked while a higher class is eligible
  // Class j < k is eligible when it has backlogged queues (n_j > 0 after the
  // eviction above) and the latest wake-up plus grace promised to them is
  // still ahead (until_us > now). A blocked call leaves the backlog (its
  // class is not competing) and waits until the latest such promise; only
  // lending (idle L1) can still admit it.
  double block_us = 0;  // > 0: blocked until then
  if (cf.class_policy == Config::ClassPolicy::kStrict && !no_priority && k > 1) {
    const int64_t top = std::min<int64_t>(k - 1, static_cast<int64_t>(cf.omega.size()));
    for (int64_t j = 1; j <= top; ++j) {
      auto it = st.classes.find(std::to_string(j));
      if (it != st.classes.end() && it->second.n > 0 && it->second.until_us > now) {
        block_us = std::max(block_us, it->second.until_us);
      }
    }
    if (block_us > 0 && q && q->bl == 1) leave_backlog(qid);
  }
  const bool blocked = block_us > 0;

  // ---- queue state: dominant share, tags, eq. (1)
  double sigma = creq / Cr;
  if (!no_drf && Ct > 0) sigma = std::max(sigma, ttag / Ct);
  const bool in_bl = q && q->bl == 1;
  const auto first = st.backlog.First(2);
  if (first.empty()) {
    g.Dr = 0, g.Dt = 0;
    c.n = 0, c.W = 0, c.Ar = 0, c.At = 0, c.Er = 0, c.Et = 0;
  }
  // W: the class's backlogged weight with this queue in it.
  double W = c.W;
  if (!in_bl) {
    W = c.W + tw;
  } else if (q->w != tw) {
    W = c.W - q->w + tw;
  }
  double w = om * tw;
  if (!flat) w = w / W;
  const double quantum = sigma / w;
  // Others backlogged besides this queue; under strict, only its own class's
  // (a lower class's queues are blocked, a higher class's would block it).
  bool others = !first.empty() && !(first[0].first == qid && first.size() == 1);
  if (cf.class_policy == Config::ClassPolicy::kStrict) others = c.n - (in_bl ? 1 : 0) > 0;
  if (!first.empty()) g.V = std::max(g.V, first[0].second);
  double F = q ? q->F : g.V;
  double S = F;
  if (!in_bl) S = std::max(F, g.V);
  double zs = q ? q->zs_us : 0;
  if (!q || now - zs >= ttl / 8 || now < zs) {
    st.seen.Add(qid, now);
    zs = now;
  }
  double my_dr = 0, my_dt = 0;
  if (sigma > 0) {
    my_dr = tw * creq / sigma;
    if (!no_drf) my_dt = tw * ttag / sigma;
  }
  double Dr_all = g.Dr, Dt_all = g.Dt;
  if (!in_bl) {
    Dr_all = g.Dr - c.Er + ClassPart(flat, om, c.n + 1, W, c.Ar + my_dr);
    Dt_all = g.Dt - c.Et + ClassPart(flat, om, c.n + 1, W, c.At + my_dt);
  }
  double X = kInf, Db = 0, cb = 0;
  if (Dr_all > 0) X = Cr / Dr_all, Db = Dr_all, cb = creq;
  if (Ct > 0 && Dt_all > 0 && Ct / Dt_all < X) X = Ct / Dt_all, Db = Dt_all, cb = ttag;
  double slack = slack_us / 1e6 * X;
  if (slack == kInf) slack = quantum;

  // ---- decision
  const bool fair = !blocked && (!others || sigma == 0 || (S - g.V) <= slack + 1e-12);
  const double Fnext = S + quantum;
  const double needr = std::min(creq, capr), needt = std::min(tdebit, capt);
  double hold_us = 0, hold_f = 0, hold_r = 0, hold_t = 0;
  std::string hold_q;  // "" = nobody holds L1
  if (st.hold) {
    hold_us = st.hold->until_us, hold_f = st.hold->F;
    hold_r = st.hold->need_r, hold_t = st.hold->need_t, hold_q = st.hold->queue;
    if (hold_us > now + 61000000 + grace_us) hold_us = 0;
  }
  // The L1 line's end per dimension (none beyond 61 s + grace: a clock that went back).
  double line_r = st.line ? st.line->r_us : 0, line_t = st.line ? st.line->t_us : 0;
  if (line_r > now + 61000000 + grace_us) line_r = 0;
  if (line_t > now + 61000000 + grace_us) line_t = 0;
  const bool before_holder =
      !hold_q.empty() && hold_q != qid && now < hold_us && hold_f <= Fnext + 1e-12;
  double keepr = 0, keept = 0;
  if (before_holder && fair) keepr = hold_r, keept = hold_t;
  const bool own_ok = g.r >= needr - 1e-9 && (Ct == 0 || g.t >= needt - 1e-9);
  bool l1_ok = own_ok;
  if (keepr > 0 || keept > 0) {
    l1_ok = g.r - keepr >= needr - 1e-9 && (Ct == 0 || g.t - keept >= needt - 1e-9);
  }
  bool lent = false;
  if (l1_ok && !fair && (now >= hold_us || hold_q == qid)) {
    lent =
        ((g.r - creq) >= lend * capr || (g.r >= capr - 1e-9 && creq <= capr)) &&
        (Ct == 0 || (g.t - tdebit) >= lend * capt || (g.t >= capt + rsv - 1e-9 && tdebit <= capt));
  }

  // ---- admit (start_in_ms > 0: ahead of the refill, into a bounded debt)
  auto admit = [&](int64_t start_in_ms) {
    g.r = g.r - creq;
    if (Ct > 0) g.t = g.t - tdebit;
    F = Fnext;
    if (Db > 0) g.V = g.V + cb / Db;
    if (in_bl) {
      st.backlog.Add(qid, F);
      double m = F;  // the least backlogged tag (the backlog holds this queue)
      if (!first.empty() && first[0].first != qid) {
        m = first[0].second;
      } else if (first.size() == 2) {
        m = std::min(F, first[1].second);
      }
      g.V = std::max(g.V, m);
    } else if (!others) {
      g.V = std::max(g.V, S);
    }
    std::string ticket = "0";
    if (in.mode != Mode::kEstimate) {
      g.seq = g.seq + 1;
      ticket = std::to_string(static_cast<int64_t>(g.seq));
      Ticket tk{kstr, in.requests, static_cast<int64_t>(tdebit), no_drf ? 1 : (no_priority ? 2 : 0),
                qid,  in.tokens};
      st.tickets[ticket] = tk;
      if (tdebit > ttag) {
        st.reservations.Add(ticket + " " + std::to_string(static_cast<int64_t>(tdebit - ttag)),
                            now + cf.ticket_ttl_ms * 1000);
        st.reserved = static_cast<int64_t>(rsv + tdebit - ttag);
      }
    }
    c.requests = c.requests + creq, c.tokens = c.tokens + tdebit;
    st.classes[kstr] = c;
    if (!hold_q.empty() && hold_q == qid) st.hold.reset();
    st.g = g;
    Queue nq = q.value_or(Queue{});
    nq.F = F, nq.zs_us = zs, nq.admits += 1;
    if (lent) nq.lent += 1;
    st.queues[qid] = nq;
    out.verdict = Verdict::kAdmit;
    out.ticket = ticket;
    out.start_in_ms = start_in_ms;
    return out;
  };
  if (l1_ok && (fair || lent)) return admit(0);

  if (blocked) {
    // ---- defer, blocked by a higher class: until its latest promise ends;
    // the queue stays out of the backlog (no tag, no line, no hold).
    const double bdelta_ms =
        std::max(1.0, std::min(60000.0, std::ceil((block_us - now) / 1000 - 1e-6)));
    st.classes[kstr] = c;
    st.g = g;
    Queue nq = q.value_or(Queue{});
    nq.F = F, nq.zs_us = zs, nq.defers += 1;
    st.queues[qid] = nq;
    out.verdict = Verdict::kDefer;
    out.delta_ms = static_cast<int64_t>(bdelta_ms);
    out.binding = "strict";
    return out;
  }

  // ---- defer: the later of the fair turn and the L1 refill
  const bool holds = fair && !l1_ok &&
                     (now >= hold_us || (hold_q == qid && now + grace_us >= hold_us) ||
                      (hold_q != qid && hold_f > Fnext + 1e-12));
  double delta = 0;
  std::string binding = "fair";
  if (S - g.V > slack && X < kInf) delta = (S - g.V - slack) / X * 1e6;
  // The L1 line: this call's need after those promised up to line_d (seen at most
  // LineBursts refills ahead); the holder takes the next refill, and extends the line.
  double lr_us = 0, lt_us = 0;    // this call's place in the line, from now
  double dr_own = 0, dt_own = 0;  // and its own refill
  bool joins_line = false;
  if (!l1_ok) {
    const double dr_us = std::max(0.0, (needr + keepr - g.r) / Cr * 1e6);
    double dt_us = 0;
    if (Ct > 0) dt_us = std::max(0.0, (needt + keept - g.t) / Ct * 1e6);
    dr_own = dr_us, dt_own = dt_us;
    const double ahead_us = LineBursts(in.mode) * burst * 1e6;
    lr_us = dr_us, lt_us = dt_us;
    if (needr > 0 && line_r > now)
      lr_us = std::max(dr_us, std::min(line_r - now, ahead_us) + needr / Cr * 1e6);
    if (Ct > 0 && needt > 0 && line_t > now)
      lt_us = std::max(dt_us, std::min(line_t - now, ahead_us) + needt / Ct * 1e6);
    double wr = lr_us, wt = lt_us;
    if (holds) wr = dr_us, wt = dt_us;
    if (std::max(wr, wt) >= delta) {
      delta = std::max(wr, wt);
      binding = wt > wr ? "l1:tokens" : "l1:requests";
      joins_line = true;
    }
  }
  std::optional<double> line = q ? std::optional(q->T_us) : std::nullopt;  // the queue's line
  const bool oversized = creq > capr || (Ct > 0 && tdebit > capt);
  const bool kept_out = own_ok && !l1_ok;
  if (fair && !l1_ok && (oversized || holds || kept_out)) line.reset();
  const double behind = line && *line > now && X < kInf ? *line - now + quantum / X * 1e6 : 0;
  if (behind > delta) delta = behind, joins_line = false;  // sent behind its queue's line
  const double delta_ms = std::max(1.0, std::min(60000.0, std::ceil(delta / 1000 - 1e-6)));
  // Admit ahead: due, only L1 short, at the head of the line (not behind the holder) and its
  // refill within a: the debit leaves a debt of at most C_d * a, which no later caller can take.
  const bool at_head = holds || (!kept_out && lr_us <= dr_own + 1e-6 && lt_us <= dt_own + 1e-6);
  const double own_us = std::max(needr / Cr, Ct > 0 ? needt / Ct : 0.0) * 1e6;  // own need's refill
  const double ahead_us = AdmitAheadUs(in.ahead_ms, own_us);
  if (ahead_us > 0 && fair && !l1_ok && !oversized && at_head && delta <= ahead_us) {
    return admit(static_cast<int64_t>(delta_ms));
  }
  if (holds) st.hold = Hold{now + delta_ms * 1000 + grace_us, Fnext, needr, needt, qid};
  if (joins_line) {
    // Each dimension's line ends at this call's place in it (at most 60 s ahead).
    L1Line nl{line_r, line_t};
    if (needr > 0) nl.r_us = std::max(line_r, now + std::min(lr_us, 60000000.0));
    if (Ct > 0 && needt > 0) nl.t_us = std::max(line_t, now + std::min(lt_us, 60000000.0));
    st.line = nl;
  }
  if (in_bl) {
    c.Ar = c.Ar - q->dr + my_dr, c.At = c.At - q->dt + my_dt, c.W = W;
  } else {
    c.n = c.n + 1, c.W = W, c.Ar = c.Ar + my_dr, c.At = c.At + my_dt;
  }
  const double er = ClassPart(flat, om, c.n, c.W, c.Ar), et = ClassPart(flat, om, c.n, c.W, c.At);
  g.Dr = g.Dr - c.Er + er, g.Dt = g.Dt - c.Et + et, c.Er = er, c.Et = et;
  c.until_us = std::max(c.until_us, now + (delta_ms * 1000) + grace_us);
  st.classes[kstr] = c;
  st.backlog.Add(qid, S);
  st.expiry.AddGT(qid, now + (delta_ms * 1000) + grace_us);
  st.g = g;
  Queue nq = q.value_or(Queue{});
  nq.F = S, nq.T_us = std::max(q ? q->T_us : 0.0, now + delta_ms * 1000);
  nq.dr = my_dr, nq.dt = my_dt, nq.bl = 1, nq.zs_us = zs, nq.defers += 1, nq.w = tw;
  st.queues[qid] = nq;
  out.verdict = Verdict::kDefer;
  out.delta_ms = static_cast<int64_t>(delta_ms);
  out.binding = binding;
  return out;
}

}  // namespace bp::gate_model
