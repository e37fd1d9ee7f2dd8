#include "gate/gate_model_store.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

namespace bp::lua {
extern const std::string_view kStateLua;
}  // namespace bp::lua

namespace bp::test {
namespace {

using gate_model::SortedSet;
using gate_model::State;

// The doubles of a packed record (format byte 1, then little-endian
// doubles), or empty when the value is foreign.
std::vector<double> Unpack(const std::string& s, size_t n) {
  std::vector<double> out;
  if (s.size() < 1 + 8 * n || s[0] != 1) return out;
  out.resize(n);
  for (size_t i = 0; i < n; ++i) std::memcpy(&out[i], s.data() + 1 + 8 * i, 8);
  return out;
}

Result<SortedSet> ReadSet(ValkeyConnection& conn, const std::string& key) {
  auto r = conn.Command({"ZRANGE", key, "0", "-1", "WITHSCORES"});
  if (!r.ok()) return r.status();
  SortedSet set;
  for (size_t i = 0; i + 1 < r->elements.size(); i += 2) {
    set.Add(r->elements[i].AsString(), std::stod(r->elements[i + 1].AsString()));
  }
  return set;
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

bool Same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// The target's key names as prelude.lua makes them (state.lua "keys").
std::map<std::string, std::string> KeyNames(ValkeyConnection& conn, const std::string& target) {
  std::map<std::string, std::string> out;
  auto r = conn.EvalScript(lua::kStateLua, {"bp:{" + target + "}:state"}, {"keys"},
                           ValkeyConnection::ScriptText::kStatic);
  if (!r.ok() || r->type != ValkeyReply::Type::kArray) return out;
  for (size_t i = 0; i + 1 < r->elements.size(); i += 2) {
    out[r->elements[i].AsString()] = r->elements[i + 1].AsString();
  }
  return out;
}

}  // namespace

Result<State> ReadStoreState(ValkeyConnection& conn, const std::string& target) {
  std::map<std::string, std::string> key = KeyNames(conn, target);
  if (key.size() != 6) return Status::Internal("state.lua keys: unexpected reply");
  auto h = conn.Command({"HGETALL", key["state"]});
  if (!h.ok()) return h.status();
  State st;
  for (size_t i = 0; i + 1 < h->elements.size(); i += 2) {
    const std::string f = h->elements[i].AsString();
    const std::string v = h->elements[i + 1].AsString();
    if (f == "g") {
      auto d = Unpack(v, 8);
      if (!d.empty()) st.g = gate_model::Bucket{d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]};
    } else if (f.rfind("q:", 0) == 0) {
      auto d = Unpack(v, 10);
      if (!d.empty()) {
        st.queues[f.substr(2)] =
            gate_model::Queue{d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9]};
      }
    } else if (f.rfind("c:", 0) == 0) {
      auto d = Unpack(v, 9);
      if (!d.empty()) {
        st.classes[f.substr(2)] =
            gate_model::ClassSums{d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8]};
      }
    } else if (f == "l1hold") {
      auto d = Unpack(v, 4);
      if (!d.empty()) st.hold = gate_model::Hold{d[0], d[1], d[2], d[3], v.substr(33)};
    } else if (f == "l1line") {
      auto d = Unpack(v, 2);
      if (!d.empty()) st.line = gate_model::L1Line{d[0], d[1]};
    } else if (f == "rsv") {
      st.reserved = std::stoll(v);
    } else if (f == "ah") {
      auto d = Unpack(v, 12);
      if (!d.empty()) {
        std::array<gate_model::HeaderWindow, 2> ah;
        for (size_t j = 0; j < 2; ++j) {
          ah[j] = gate_model::HeaderWindow{d[6 * j],     d[6 * j + 1], d[6 * j + 2],
                                           d[6 * j + 3], d[6 * j + 4], d[6 * j + 5]};
        }
        st.header = ah;
      }
    } else if (f == "ad") {
      gate_model::Learned a;
      if (std::sscanf(v.c_str(), "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &a.fr, &a.tr_us, &a.ft,
                      &a.tt_us, &a.tau_us, &a.ws_us, &a.nr, &a.nt, &a.hr_us, &a.ht_us) == 10) {
        st.learned = a;
      }
    }
  }
  const std::pair<SortedSet*, const char*> sets[] = {{&st.backlog, "backlog"},
                                                     {&st.expiry, "expiry"},
                                                     {&st.seen, "seen"},
                                                     {&st.reservations, "reservations"}};
  for (auto [set, name] : sets) {
    auto s = ReadSet(conn, key[name]);
    if (!s.ok()) return s.status();
    *set = std::move(*s);
  }
  return st;
}

std::string ReadTicket(ValkeyConnection& conn, const std::string& target,
                       const std::string& ticket) {
  auto r = conn.Command({"GET", KeyNames(conn, target)["ticket_prefix"] + ticket});
  if (!r.ok() || r->type != ValkeyReply::Type::kString) return "";
  return r->str;
}

std::string CompareStates(const State& m, const State& s) {
  std::ostringstream o;
  auto cmp = [&](const std::string& what, double a, double b) {
    if (!Same(a, b) && o.tellp() == 0) o << what << ": model " << Num(a) << ", store " << Num(b);
  };
  if (m.g.has_value() != s.g.has_value()) return "bucket 'g': present in only one";
  if (m.g) {
    const auto &a = *m.g, &b = *s.g;
    cmp("g.r", a.r, b.r), cmp("g.t", a.t, b.t), cmp("g.ts_us", a.ts_us, b.ts_us);
    cmp("g.V", a.V, b.V), cmp("g.Dr", a.Dr, b.Dr), cmp("g.Dt", a.Dt, b.Dt);
    cmp("g.seq", a.seq, b.seq), cmp("g.evt_us", a.evt_us, b.evt_us);
  }
  if (m.queues.size() != s.queues.size()) {
    o << "queues: model " << m.queues.size() << ", store " << s.queues.size();
  }
  for (const auto& [id, a] : m.queues) {
    auto it = s.queues.find(id);
    if (it == s.queues.end()) {
      if (o.tellp() == 0) o << "queue " << id << ": absent in the store";
      continue;
    }
    const auto& b = it->second;
    const std::string q = "queue " + id + " ";
    cmp(q + "F", a.F, b.F), cmp(q + "T_us", a.T_us, b.T_us), cmp(q + "dr", a.dr, b.dr);
    cmp(q + "dt", a.dt, b.dt), cmp(q + "bl", a.bl, b.bl), cmp(q + "zs_us", a.zs_us, b.zs_us);
    cmp(q + "admits", a.admits, b.admits), cmp(q + "defers", a.defers, b.defers);
    cmp(q + "lent", a.lent, b.lent), cmp(q + "w", a.w, b.w);
  }
  if (m.classes.size() != s.classes.size() && o.tellp() == 0) o << "class totals: count differs";
  for (const auto& [k, a] : m.classes) {
    auto it = s.classes.find(k);
    if (it == s.classes.end()) {
      if (o.tellp() == 0) o << "class " << k << ": absent in the store";
      continue;
    }
    const auto& b = it->second;
    const std::string c = "class " + k + " ";
    cmp(c + "requests", a.requests, b.requests), cmp(c + "tokens", a.tokens, b.tokens);
    cmp(c + "n", a.n, b.n), cmp(c + "W", a.W, b.W), cmp(c + "Ar", a.Ar, b.Ar);
    cmp(c + "At", a.At, b.At), cmp(c + "Er", a.Er, b.Er), cmp(c + "Et", a.Et, b.Et);
    cmp(c + "until_us", a.until_us, b.until_us);
  }
  if (m.hold.has_value() != s.hold.has_value() && o.tellp() == 0) {
    o << "l1hold: present in only one (model " << m.hold.has_value() << ")";
  }
  if (m.hold && s.hold) {
    cmp("l1hold until_us", m.hold->until_us, s.hold->until_us);
    cmp("l1hold F", m.hold->F, s.hold->F);
    cmp("l1hold need_r", m.hold->need_r, s.hold->need_r);
    cmp("l1hold need_t", m.hold->need_t, s.hold->need_t);
    if (m.hold->queue != s.hold->queue && o.tellp() == 0) {
      o << "l1hold queue: model " << m.hold->queue << ", store " << s.hold->queue;
    }
  }
  if (m.line.has_value() != s.line.has_value() && o.tellp() == 0) {
    o << "l1line: present in only one (model " << m.line.has_value() << ")";
  }
  if (m.line && s.line) {
    cmp("l1line r_us", m.line->r_us, s.line->r_us), cmp("l1line t_us", m.line->t_us, s.line->t_us);
  }
  if (m.reserved != s.reserved && o.tellp() == 0) {
    o << "rsv: model " << m.reserved.value_or(-1) << ", store " << s.reserved.value_or(-1);
  }
  if (m.learned.has_value() != s.learned.has_value() && o.tellp() == 0) {
    o << "ad: present in only one";
  }
  if (m.learned && s.learned) {
    const auto &a = *m.learned, &b = *s.learned;
    cmp("ad fr", a.fr, b.fr), cmp("ad tr", a.tr_us, b.tr_us), cmp("ad ft", a.ft, b.ft);
    cmp("ad tt", a.tt_us, b.tt_us), cmp("ad tau", a.tau_us, b.tau_us);
    cmp("ad ws", a.ws_us, b.ws_us), cmp("ad nr", a.nr, b.nr), cmp("ad nt", a.nt, b.nt);
    cmp("ad hr", a.hr_us, b.hr_us), cmp("ad ht", a.ht_us, b.ht_us);
  }
  if (m.header.has_value() != s.header.has_value() && o.tellp() == 0) {
    o << "ah: present in only one";
  }
  if (m.header && s.header) {
    for (size_t i = 0; i < 2; ++i) {
      const auto &a = (*m.header)[i], &b = (*s.header)[i];
      const std::string d = i == 0 ? "ah requests " : "ah tokens ";
      cmp(d + "ra", a.ra, b.ra), cmp(d + "ea", a.ea_us, b.ea_us);
      cmp(d + "rsta", a.rsta_ms, b.rsta_ms), cmp(d + "u", a.u, b.u), cmp(d + "xo", a.xo, b.xo);
      cmp(d + "k", a.k, b.k);
    }
  }
  const std::pair<const char*, std::pair<const SortedSet*, const SortedSet*>> sets[] = {
      {"backlog", {&m.backlog, &s.backlog}},
      {"expiry", {&m.expiry, &s.expiry}},
      {"seen", {&m.seen, &s.seen}},
      {"reservations", {&m.reservations, &s.reservations}}};
  for (const auto& [name, pair] : sets) {
    if (pair.first->ordered() != pair.second->ordered() && o.tellp() == 0) {
      o << "sorted set " << name << ":";
      for (const auto* set : {pair.first, pair.second}) {
        o << (set == pair.first ? " model {" : "} store {");
        for (const auto& [score, member] : set->ordered()) o << " " << member << "=" << Num(score);
      }
      o << " }";
    }
  }
  return o.str();
}

}  // namespace bp::test
