// VTC's service difference (vtc.h): per class, per pair of tenants, the
// range of the weighted service difference over each interval in which both
// were backlogged.
#include <algorithm>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "bp/loadgen/vtc.h"

namespace bp::loadgen {
namespace {

using Interval = std::pair<int64_t, int64_t>;  // [begin, end] us
using Service = std::pair<int64_t, double>;    // (send us, sigma / w_t)

struct TenantTrace {
  std::vector<Interval> backlog;  // disjoint, ascending
  std::vector<Service> service;   // ascending by time
};

// The union of [begin, end] intervals, ascending and disjoint (touching
// intervals merge).
std::vector<Interval> Union(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// max D - min D over [a, b], D = f's service - g's from a (0 at a). A
// backlog ends with the send that serves it, so sends at b count.
double Range(const TenantTrace& f, const TenantTrace& g, int64_t a, int64_t b) {
  auto from = [a](const std::vector<Service>& s) {
    return std::lower_bound(s.begin(), s.end(), Service{a, -1e300});
  };
  auto i = from(f.service), j = from(g.service);
  double d = 0, lo = 0, hi = 0;
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  while (true) {
    const int64_t tf = i != f.service.end() ? i->first : kNever;
    const int64_t tg = j != g.service.end() ? j->first : kNever;
    const int64_t t = std::min(tf, tg);
    if (t > b) break;
    for (; i != f.service.end() && i->first == t; ++i) d += i->second;
    for (; j != g.service.end() && j->first == t; ++j) d -= j->second;
    lo = std::min(lo, d), hi = std::max(hi, d);
  }
  return hi - lo;
}

}  // namespace

VtcMeasure ComputeVtcMeasure(const RunRecords& r) {
  VtcMeasure out;
  const auto n = static_cast<int>(r.tenants.size());
  std::vector<TenantTrace> traces(r.tenants.size());
  std::vector<std::vector<Interval>> spans(r.tenants.size());
  const double cr = r.cap_requests_per_s, ct = r.cap_tokens_per_s;
  std::map<int, double> u;  // U_k: the largest sigma / w_t of one OK call
  for (const ActivityRecord& a : r.activities) {
    if (a.tenant_index < 0 || a.tenant_index >= n || a.cancelled) continue;
    const TenantInfo& t = r.tenants[static_cast<size_t>(a.tenant_index)];
    // Waiting for service: until the send that served it (OK), else until
    // it completed (failed) or the run ended (unfinished).
    int64_t end = a.completed_us >= 0 ? a.completed_us : r.end_us;
    if (a.ok && a.first_send_us >= 0) end = a.first_send_us;
    spans[static_cast<size_t>(a.tenant_index)].emplace_back(a.scheduled_us, end);
    if (!a.ok || a.first_send_us < 0 || cr <= 0) continue;
    double sigma = 1 / cr;
    if (ct > 0) {
      sigma = std::max(sigma, static_cast<double>(a.prompt_tokens + a.completion_tokens) / ct);
    }
    const double s = sigma / (t.weight > 0 ? t.weight : 1e-9);
    traces[static_cast<size_t>(a.tenant_index)].service.emplace_back(a.first_send_us, s);
    u[t.priority] = std::max(u[t.priority], s);
  }
  std::map<int, std::vector<int>> classes;  // tenants with demand, by class
  for (int i = 0; i < n; ++i) {
    TenantTrace& tr = traces[static_cast<size_t>(i)];
    tr.backlog = Union(std::move(spans[static_cast<size_t>(i)]));
    std::sort(tr.service.begin(), tr.service.end());
    if (r.tenants[static_cast<size_t>(i)].total_activities > 0) {
      classes[r.tenants[static_cast<size_t>(i)].priority].push_back(i);
    }
  }
  for (const auto& [k, members] : classes) {
    if (static_cast<int>(members.size()) > kVtcMaxTenants) {
      ++out.classes_skipped;
      continue;
    }
    for (size_t x = 0; x < members.size(); ++x) {
      for (size_t y = x + 1; y < members.size(); ++y) {
        const TenantTrace& f = traces[static_cast<size_t>(members[x])];
        const TenantTrace& g = traces[static_cast<size_t>(members[y])];
        double worst = -1;
        // Walk the two backlog lists: each overlap is one interval I.
        for (size_t i = 0, j = 0; i < f.backlog.size() && j < g.backlog.size();) {
          const int64_t a = std::max(f.backlog[i].first, g.backlog[j].first);
          const int64_t b = std::min(f.backlog[i].second, g.backlog[j].second);
          if (a < b) worst = std::max(worst, Range(f, g, a, b));
          if (f.backlog[i].second < g.backlog[j].second) {
            ++i;
          } else {
            ++j;
          }
        }
        if (worst < 0) continue;
        ++out.pairs;
        out.max_diff = std::max(out.max_diff, worst);
        const double in_u = u[k] > 0 ? worst / u[k] : 0;
        if (in_u > out.max_diff_u) {
          out.max_diff_u = in_u, out.priority = k;
          out.tenant_a = r.tenants[static_cast<size_t>(members[x])].id;
          out.tenant_b = r.tenants[static_cast<size_t>(members[y])].id;
        }
      }
    }
  }
  return out;
}

}  // namespace bp::loadgen
