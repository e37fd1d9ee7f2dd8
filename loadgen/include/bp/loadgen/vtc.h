// VTC's fairness measure for one run: the largest weighted service
// difference between two queues of one class over an interval in which
// both were continuously backlogged. Sheng et al., "Fairness in Serving
// Large Language Models", OSDI 2024, Section 4: their Virtual Token Counter
// keeps |W_f(t1, t2) - W_g(t1, t2)| <= 2U for any two clients f, g
// backlogged throughout [t1, t2] (Theorem 4.3; U = the largest service of
// one request), and divides service by the weight in the weighted form
// (Section 4.3). Here (docs/metrics.md, "VTC's service difference"):
//   queue         a tenant (each has one class); pairs are of one class k
//   backlogged    tenant f has a call waiting at t (VTC's queued request):
//                 some activity of f with scheduled_us <= t <= its end, the
//                 end being first_send_us for an OK activity (the send that
//                 served it), else completed_us (end_us while unfinished);
//                 cancelled activities aside. Calls in flight do not count:
//                 a tenant whose workers are all busy upstream asks for
//                 nothing the scheduler could give
//   service       each OK activity at its first_send_us (the admission of
//                 the execution that succeeded), costing its dominant share
//                 sigma = max(1 / C_r, (prompt + completion tokens) / C_t)
//                 (the token term only when C_t > 0), in paper seconds of
//                 the binding cap, divided by the tenant's weight w_t
//   difference    for each maximal interval I = [a, b], a < b, in which both
//                 f and g are backlogged, D(t) = S_f(t) / w_f - S_g(t) / w_g
//                 over the sends in I (D = 0 at a; sends at one instant
//                 applied together); max over [t1, t2] in I of
//                 |D(t2) - D(t1)| is max D - min D over I
//   max_diff      the largest difference over every class, pair and I
//   max_diff_u    the same in units of U_k, the largest sigma / w_t of one
//                 OK call of the class (VTC's U, weighted): VTC's bound reads 2
// Classes with more than kVtcMaxTenants tenants with demand are not
// computed (the pairs grow as n^2): counted in classes_skipped.
// Pure function; thread-safe on const input.
#pragma once

#include <cstdint>
#include <string>

#include "bp/loadgen/records.h"

namespace bp::loadgen {

inline constexpr int kVtcMaxTenants = 256;

struct VtcMeasure {
  double max_diff = -1;    // paper seconds of cap per unit weight; -1: no pair
  double max_diff_u = -1;  // max over classes of (class's max difference) / U_k
  int priority = 0;        // the class and pair of max_diff_u (0 / "" when none)
  std::string tenant_a, tenant_b;
  int64_t pairs = 0;            // pairs that were backlogged together at some time
  int64_t classes_skipped = 0;  // classes above kVtcMaxTenants tenants
};

VtcMeasure ComputeVtcMeasure(const RunRecords& records);

}  // namespace bp::loadgen
