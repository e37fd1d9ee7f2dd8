// The release of the reference model (gate_model.h): the signed correction
// of an admission's debit (P4), the adaptive caps' AIMD rule on a 429 and
// header rule on a served call, and
// the sorted-set arithmetic shared with the admission, in the order and
// float arithmetic of release.lua.
#include <algorithm>
#include <cmath>

#include "bp/gate_model.h"

namespace bp::gate_model {

std::optional<double> SortedSet::Score(const std::string& m) const {
  auto it = score_.find(m);
  if (it == score_.end()) return std::nullopt;
  return it->second;
}

void SortedSet::Add(const std::string& m, double score) {
  if (auto it = score_.find(m); it != score_.end()) {
    order_.erase({it->second, m});
    it->second = score;
  } else {
    score_[m] = score;
  }
  order_.insert({score, m});
}

void SortedSet::AddGT(const std::string& m, double score) {
  auto it = score_.find(m);
  if (it == score_.end() || score > it->second) Add(m, score);
}

void SortedSet::AddXX(const std::string& m, double score) {
  if (Contains(m)) Add(m, score);
}

bool SortedSet::Remove(const std::string& m) {
  auto it = score_.find(m);
  if (it == score_.end()) return false;
  order_.erase({it->second, m});
  score_.erase(it);
  return true;
}

std::vector<std::string> SortedSet::UpTo(double max, size_t limit) const {
  std::vector<std::string> out;
  for (const auto& [score, m] : order_) {
    if (score > max || out.size() >= limit) break;
    out.push_back(m);
  }
  return out;
}

std::vector<std::pair<std::string, double>> SortedSet::First(size_t n) const {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [score, m] : order_) {
    if (out.size() >= n) break;
    out.emplace_back(m, score);
  }
  return out;
}

namespace {

// The stored form of 'ad' truncates every field but the fractions to an
// integer (string.format '%d').
double Trunc(double v) { return std::trunc(v); }

}  // namespace

int Model::Release(const ReleaseInput& in) {
  State& st = state;
  const Config& cf = config;
  auto found = st.tickets.find(in.ticket);
  if (found == st.tickets.end()) return 0;
  const Ticket tk = found->second;
  st.tickets.erase(found);
  const bool refused = in.outcome == "refused" || in.outcome == "429";
  const double now = static_cast<double>(in.now_ms) * 1000;
  const double areq = static_cast<double>(in.requests), atok = static_cast<double>(in.tokens);
  const double dreq = static_cast<double>(tk.requests), dtok = static_cast<double>(tk.debited);
  const double ttok = static_cast<double>(tk.tag_tokens);
  double Cr = cf.requests_per_s, Ct = cf.tokens_per_s;
  if (!(Cr > 0)) return 1;
  const double capr = Cr * cf.burst_s, capt = Ct * cf.burst_s;

  // ---- adaptive caps: the learned fractions now, then a 429's decrease
  std::optional<Learned> a = st.learned;
  std::optional<double> tau;
  if (a) tau = a->tau_us;
  double fr =
      LearnedFraction(a ? std::optional<double>(a->fr) : std::nullopt, a ? a->tr_us : 0, tau, now);
  double ft =
      LearnedFraction(a ? std::optional<double>(a->ft) : std::nullopt, a ? a->tt_us : 0, tau, now);
  if (cf.adapt && in.outcome == "429") {
    const double tau_us = tau ? *tau : cf.adapt_recover_ms * 1000;
    const double win = cf.adapt_window_ms * 1000, beta = cf.adapt_beta, m = cf.adapt_min_429;
    double ws = a ? a->ws_us : 0;
    double n[2] = {a ? a->nr : 0, a ? a->nt : 0};
    double h[2] = {a ? a->hr_us : 0, a ? a->ht_us : 0};
    double f[2] = {fr, ft};
    double t[2] = {a ? a->tr_us : now, a ? a->tt_us : now};
    std::optional<double> base[2] = {a ? a->fr : 1.0, a ? a->ft : 1.0};
    if (!a || now >= ws + win || now < ws) ws = now, n[0] = 0, n[1] = 0;
    std::vector<int> dims;
    if (in.bound == "requests" || (in.bound == "tokens" && Ct <= 0)) {
      dims = {0};
    } else if (in.bound == "tokens") {
      dims = {1};
    } else if (in.remaining_requests == 0 || (in.remaining_tokens == 0 && Ct > 0)) {
      if (in.remaining_requests == 0) dims.push_back(0);
      if (in.remaining_tokens == 0 && Ct > 0) dims.push_back(1);
    } else {
      dims = {0};
      if (Ct > 0) dims.push_back(1);
    }
    // A 429 of d halves the header rule's margin on d above 1.
    for (int d : dims) {
      if (st.header && (*st.header)[d].k > 1) (*st.header)[d].k = 1 + ((*st.header)[d].k - 1) / 2;
    }
    for (int d : dims) {
      if (now >= h[d]) {
        n[d] = n[d] + 1;
        if (n[d] >= m) {
          f[d] = std::max(0.05, beta * f[d]);
          base[d].reset();
          t[d] = now, n[d] = 0;
          const double rst = d == 0 ? in.reset_requests_ms : in.reset_tokens_ms;
          h[d] = now + std::max(std::max(win, in.retry_after_ms * 1000), rst * 1000);
        }
      }
    }
    st.learned = Learned{base[0].value_or(f[0]),
                         Trunc(t[0]),
                         base[1].value_or(f[1]),
                         Trunc(t[1]),
                         Trunc(tau_us),
                         Trunc(ws),
                         Trunc(n[0]),
                         Trunc(n[1]),
                         Trunc(h[0]),
                         Trunc(h[1])};
    fr = f[0], ft = f[1];
  } else if (cf.adapt && in.outcome == "ok" &&
             (in.reset_requests_ms > 0 || in.reset_tokens_ms > 0)) {
    // The header rule: f_d moves towards g_d = clamp(k_d (R_d / T_d - x_o) /
    // C_d, 0.05, 1) by the weight min(1, T_d / adapt_window_ms); no raise
    // while AIMD holds d or counts a 429 of d in its current window. x_o and
    // the margin k_d are measured between two answers of one provider
    // window ('ah').
    const double win = cf.adapt_window_ms * 1000;
    const double rem[2] = {in.remaining_requests, in.remaining_tokens};
    const double rst[2] = {in.reset_requests_ms, in.reset_tokens_ms};
    const double cap[2] = {Cr, Ct};
    const double own[2] = {areq, atok};
    double f[2] = {fr, ft};
    double base[2] = {a ? a->fr : 1.0, a ? a->ft : 1.0};
    double t[2] = {a ? a->tr_us : now, a ? a->tt_us : now};
    const double ws = a ? a->ws_us : 0;
    const bool recent = now >= ws && now < ws + win;
    const bool held[2] = {now < (a ? a->hr_us : 0) || (recent && (a ? a->nr : 0) > 0),
                          now < (a ? a->ht_us : 0) || (recent && (a ? a->nt : 0) > 0)};
    const bool had = st.header.has_value();
    std::array<HeaderWindow, 2> h = st.header.value_or(std::array<HeaderWindow, 2>{});
    bool moved = false;
    for (int d = 0; d < 2; ++d) {
      if (!(cap[d] > 0 && rem[d] >= 0 && rst[d] > 0)) continue;
      HeaderWindow& w = h[d];
      const double e = now + rst[d] * 1000;  // this answer's reset instant
      const bool anchored = had && w.rsta_ms > 0 && !(now > w.ea_us + win);
      if (!anchored) w.xo = 0, w.k = 1;
      if (anchored && std::abs(e - w.ea_us) < w.rsta_ms * 500 && rem[d] <= w.ra) {
        if (rst[d] < w.rsta_ms) {  // counted after the anchor
          w.u = w.u + own[d];
          if (rst[d] * 2 <= w.rsta_ms) {
            const double span = w.rsta_ms - rst[d];  // ms of the provider's time
            w.xo = std::max(0.0, (w.ra - rem[d] - w.u) * 1000 / span);
            if (w.ra > 0) {  // the margin: k times (R_a / T_a) / ((R_a - R) / span)
              double kn = kHeaderMarginMax;
              if (w.ra > rem[d]) kn = w.k * w.ra * span / ((w.ra - rem[d]) * w.rsta_ms);
              kn = std::min(kHeaderMarginMax,
                            std::max(1.0, w.k + (kn - w.k) * std::min(1.0, own[d] / w.ra)));
              if (kn < w.k || !held[d]) w.k = kn;
            }
          }
        }
      } else if (!anchored || e >= w.ea_us - w.rsta_ms * 500) {
        w.ra = rem[d], w.ea_us = e, w.rsta_ms = rst[d], w.u = 0;  // a new window's first answer
      }
      const double left = (rem[d] + own[d] / 2) * 1000 / rst[d];  // the call mid-share
      const double g = std::min(1.0, std::max(0.05, w.k * (left - w.xo) / cap[d]));
      const double fn = f[d] + (g - f[d]) * std::min(1.0, rst[d] * 1000 / win);
      if (fn < f[d] || (fn > f[d] && !held[d])) f[d] = fn, base[d] = fn, t[d] = now, moved = true;
    }
    st.header = h;
    if (moved) {
      const double tau_us = tau ? *tau : cf.adapt_recover_ms * 1000;
      st.learned = Learned{base[0],          Trunc(t[0]),      base[1],       Trunc(t[1]),
                           Trunc(tau_us),    a ? a->ws_us : 0, a ? a->nr : 0, a ? a->nt : 0,
                           a ? a->hr_us : 0, a ? a->ht_us : 0};
      fr = f[0], ft = f[1];
    }
  }
  Cr = Cr * fr, Ct = Ct * ft;
  double dr = areq - dreq, dt = atok - dtok;
  if (Ct == 0 || refused) dt = 0;
  if (refused) dr = 0;

  // ---- reservation: this ticket's part, and expired ones, leave O
  double extra = std::max(0.0, dtok - ttok);
  const double O0 = static_cast<double>(st.reserved.value_or(0));
  double O = O0;
  if (extra > 0 || O > 0) {
    if (extra > 0 &&
        !st.reservations.Remove(in.ticket + " " + std::to_string(static_cast<int64_t>(extra)))) {
      extra = 0;
    }
    for (const std::string& m : st.reservations.UpTo(now, 8)) {
      O = O - std::stod(m.substr(m.rfind(' ') + 1));
      st.reservations.Remove(m);
    }
    O = std::max(0.0, O);
  }

  // ---- L1: refill to now, then the signed difference (a debt may remain)
  Bucket g;
  if (st.g) {
    g = *st.g;
  } else {
    g.r = capr, g.t = capt, g.ts_us = now;
  }
  const double el = std::max(0.0, now - g.ts_us);
  g.r = std::min(capr, g.r + Cr * el / 1e6 - dr);
  g.t = std::min(capt + O, g.t + Ct * el / 1e6 - dt);
  g.ts_us = std::max(g.ts_us, now);
  st.g = g;
  ClassSums& cls = st.classes[tk.k];
  cls.requests = cls.requests + dr, cls.tokens = cls.tokens + dt;

  // ---- L3: the queue's tag moves by the change in its dominant share
  if (auto it = st.queues.find(tk.queue); it != st.queues.end()) {
    auto sig = [&](double req, double tok) {
      double x = req / Cr;
      if (tk.ablation != 1 && Ct > 0) x = std::max(x, tok / Ct);
      return x;
    };
    const std::string tenant = tk.queue.substr(tk.queue.find(':') + 1);
    std::optional<double> tw, omega;
    if (auto t = cf.tenant_weights.find(tenant); t != cf.tenant_weights.end()) tw = t->second;
    const int64_t k = std::stoll(tk.k);
    if (k >= 1 && k <= static_cast<int64_t>(cf.omega.size())) {
      omega = cf.omega[static_cast<size_t>(k - 1)];
    }
    double wt = tw.value_or(1);
    if (wt <= 0) wt = 1e-9;
    double w = wt * ClassWeight(omega, tk.ablation == 2);
    if (cf.share_rule != Config::ShareRule::kFlat) {
      const Queue& qr = it->second;
      double W = cls.W;
      if (qr.bl != 1) {
        W = cls.W + wt;
      } else if (qr.w != wt) {
        W = cls.W - qr.w + wt;
      }
      w = w / W;
    }
    double dF = (sig(areq, atok) - sig(dreq, ttok)) / w;
    if (refused) dF = -sig(dreq, ttok) / w;
    if (dF != 0) {
      it->second.F = it->second.F + dF;
      st.backlog.AddXX(tk.queue, it->second.F);
    }
  }
  if (extra > 0 || O != O0) st.reserved = static_cast<int64_t>(std::max(0.0, O - extra));
  return 1;
}

}  // namespace bp::gate_model
