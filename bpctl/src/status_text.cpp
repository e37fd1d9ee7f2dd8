// bpctl status as text (status_view.h): a few summary lines, then the L2
// classes and the active queues as aligned tables. Rendered from the JSON
// model so text and --json never disagree.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "bp/bpctl/status_view.h"
#include "bp/bpctl/values.h"
#include "bp/decimal.h"

namespace bp::bpctl {
namespace {

using json = nlohmann::ordered_json;

// Rounding noise of the scripts' double arithmetic (a lag of 7.1e-15 for
// tag - V of equal sums, a level of -2.8e-14 after refills) shown as the
// integer it stands for: within 1e-9 of an integer, relative to the value
// when above 1. No -0. --json keeps the exact values.
double Snap(double v) {
  const double r = std::round(v);
  if (std::fabs(v - r) <= 1e-9 * std::max(1.0, std::fabs(v))) return r == 0 ? 0 : r;
  return v;
}

// A number for people: up to 6 significant digits, "-" when absent.
std::string Num(const json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_number()) return "-";
  return FormatShort(Snap(j.at(key).get<double>()));
}

std::string Percent(const json& j, const char* key) {
  if (!j.contains(key)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", Snap(j.at(key).get<double>() * 100));
  return buf;
}

std::string IsoTime(double ms) {
  const auto secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms - secs * 1000.0));
  return out;
}

// Left-aligned columns separated by two spaces, indented by two.
void Table(std::ostream& o, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line = " ";
    for (size_t i = 0; i < r.size(); ++i) {
      line += " " + r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 1, ' ');
    }
    o << line << "\n";
  }
}

void Summary(std::ostream& o, const json& s) {
  o << "target " << s.at("target").get<std::string>();
  if (s.contains("server")) o << "   on " << s.at("server").get<std::string>();
  o << "   server time " << IsoTime(s.at("server_time_ms").get<double>()) << "\n";
  const json& caps = s.at("caps");
  if (caps.is_null()) {
    o << "caps     none: the target is not configured (workers fail open); "
         "bpctl set cap --rpm N\n";
  } else {
    o << "caps     " << Num(caps, "requests_per_s") << " req/s (" << Num(caps, "rpm") << " rpm), ";
    if (caps.at("tokens_per_s").get<double>() > 0) {
      o << Num(caps, "tokens_per_s") << " tok/s (" << Num(caps, "tpm") << " tpm), ";
    } else {
      o << "no token cap, ";
    }
    o << "burst " << Num(caps, "burst_s") << " s; largest call " << Num(caps, "max_cost_requests")
      << " requests";
    if (caps.contains("max_cost_tokens")) o << ", " << Num(caps, "max_cost_tokens") << " tokens";
    o << "\n";
    const json& a = s.at("learned_caps");
    o << "learned  adaptive caps " << (a.at("adapt").get<bool>() ? "on" : "off") << ": requests "
      << Num(a, "requests_per_s") << " of " << Num(caps, "requests_per_s") << " req/s ("
      << Percent(a, "requests_fraction") << ")";
    if (a.contains("tokens_per_s")) {
      o << ", tokens " << Num(a, "tokens_per_s") << " of " << Num(caps, "tokens_per_s")
        << " tok/s (" << Percent(a, "tokens_fraction") << ")";
    }
    o << "\n";
    for (const char* dim : {"requests", "tokens"}) {
      const json& l1 = s.at("l1");
      if (!l1.contains(dim)) continue;
      const json& b = l1.at(dim);
      o << "L1 " << dim << (dim[0] == 'r' ? "  " : "    ") << Num(b, "level") << " / "
        << Num(b, "capacity") << ", refill " << Num(b, "refill_per_s") << "/s";
      if (b.contains("reserved") && b.at("reserved").get<double>() > 0) {
        o << ", reserved " << Num(b, "reserved") << " (refills up to capacity + reserved)";
      }
      o << "\n";
    }
  }
  const json& t = s.at("tuning");
  o << "tuning   slack " << Num(t, "slack_ms") << " ms, grace " << Num(t, "grace_ms")
    << " ms, lend fraction " << Num(t, "lend_fraction") << ", ticket ttl "
    << Num(t, "ticket_ttl_ms") << " ms";
  // Strict priority changes what the class shares below mean: say so.
  if (t.value("class_policy", "fair") == "strict") {
    o << ", class policy strict (a class waits while a higher one is backlogged)";
  }
  o << "\n";
  o << "tenants  ";
  if (s.at("tenant_weights").empty()) o << "no explicit weights (all 1)";
  std::string sep;
  for (const auto& [tenant, w] : s.at("tenant_weights").items()) {
    o << sep << tenant << "=" << FormatNumber(w.get<double>());
    sep = ", ";
  }
  if (!s.at("tenant_weights").empty()) o << " (others 1)";
  o << "\nV        " << Num(s, "virtual_time")
    << " (virtual time: the admitted work per weight, at least the least backlogged tag)\n";
}

}  // namespace

std::string StatusText(const nlohmann::ordered_json& s) {
  std::ostringstream o;
  Summary(o, s);
  o << "\nL2 classes (share = omega_k / sum(omega); current = among the backlogged classes;\n"
    << "admitted totals since the last reset)\n";
  std::vector<std::vector<std::string>> rows = {{"prio", "omega", "share", "current",
                                                 "nominal req/s", "nominal tok/s", "admitted req",
                                                 "admitted tok", "req/s", "tok/s"}};
  for (const auto& c : s.at("classes")) {
    rows.push_back({Num(c, "priority"), Num(c, "omega"), Percent(c, "nominal_share"),
                    Percent(c, "current_share"),
                    Num(c, "nominal_requests_per_s"), Num(c, "nominal_tokens_per_s"),
                    Num(c, "admitted_requests"), Num(c, "admitted_tokens"),
                    Num(c, "admitted_requests_per_s"), Num(c, "admitted_tokens_per_s")});
  }
  Table(o, rows);
  const json& queues = s.at("queues");
  size_t backlogged = 0;
  for (const auto& q : queues) backlogged += q.at("backlogged").get<bool>() ? 1 : 0;
  o << "\nqueues (" << queues.size() << " active, " << backlogged
    << " backlogged; lag = tag - V; fair = its share of the cap by the gate's rule)\n";
  if (queues.empty()) {
    o << "  none\n";
    return o.str();
  }
  rows = {{"prio", "tenant", "weight", "tag", "lag", "backlogged", "fair share", "fair req/s",
           "fair tok/s", "admits", "defers", "lent", "admits/s"}};
  for (const auto& q : queues) {
    rows.push_back({Num(q, "priority"), q.at("tenant").get<std::string>(), Num(q, "weight"),
                    Num(q, "tag"), Num(q, "lag"), q.at("backlogged").get<bool>() ? "yes" : "no",
                    Percent(q, "fair_share"), Num(q, "fair_requests_per_s"),
                    Num(q, "fair_tokens_per_s"), Num(q, "admits"), Num(q, "defers"), Num(q, "lent"),
                    Num(q, "admits_per_s")});
  }
  Table(o, rows);
  return o.str();
}

}  // namespace bp::bpctl
