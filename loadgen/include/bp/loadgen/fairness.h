// Ideal fair shares the loadgen metrics compare against (metrics.h): weighted
// DRF by progressive filling and WFQ as its one-dimension case. Pure
// functions, safe from any thread. Rates in requests per second of whatever
// clock the capacities use (the metrics pass paper units).
//
// Definitions and their sources:
//  - Hierarchical ideal share (the gate's default rule, SPEC section 4 P2,
//    docs/gate.md "The rule"): among the classes with demand, class k gets
//    omega_k / sum(omega); inside it tenant t gets w_t / W_k of the class's
//    part (H-GPS, Bennett and Zhang 1997), work-conserving at both levels.
//  - Flat share (share_rule flat): the cap split in proportion to the
//    weights w_t * omega_k among the backlogged queues (paper III-B, P2).
//  - Weighted DRF ideal share: progressive filling that keeps the weighted
//    dominant shares s_q / w_q equal until a cap binds (Ghodsi et al. 2011,
//    "Dominant Resource Fairness"; paper equation 1 gives the level X*).
#pragma once

#include <limits>
#include <span>
#include <vector>

namespace bp::loadgen {

// One queue (tenant, priority class) competing for the capacities C_d.
struct FairShareQueue {
  // Flat (group < 0): w_t * omega_k. Hierarchical (group >= 0): w_t, and
  // group_weight = omega_k of its class `group`. <= 0: the queue gets nothing.
  double weight = 1.0;
  std::vector<double> cost;  // cost per request in each dimension d (same order
                             // as the capacities); e.g. {1, prompt + completion}
  // Max req/s the queue can use; its unused share goes to the others.
  double demand_cap = std::numeric_limits<double>::infinity();
  int group = -1;  // hierarchical: the queue's class; < 0: flat
  double group_weight = 1.0;
};

struct FairShares {
  std::vector<double> rate;            // ideal requests/s per queue
  std::vector<double> dominant_share;  // ideal dominant share per queue:
                                       // rate_q * max_d cost_qd / C_d
  std::vector<int> binding;            // per queue: the dimension d that froze
                                       // it, or -1 if its demand cap did
};

// Weighted DRF by progressive filling (water-filling) (Ghodsi et al. 2011,
// section 5.1, with weights). All unfrozen queues share one level X; queue q
// runs at rate w_q X / sigma_q with sigma_q = max_d cost_qd / C_d, so its
// weighted dominant share is equal to every other unfrozen queue's. X rises
// until either a queue reaches its demand cap (that queue freezes at its cap)
// or a dimension d reaches C_d (every queue with cost in d freezes). Without
// demand caps and with every queue using every dimension the first step is the
// paper's equation 1: X* = min_d C_d / sum_q w_q cost_qd / sigma_q.
// Hierarchical (queues with group >= 0): at every step an unfrozen queue's
// weight is group_weight * weight / (sum of weight over its group's
// unfrozen queues), so each group with an unfrozen queue grows by its
// group_weight and a frozen queue's part stays in its group: the H-GPS
// water-filling. The one function behind every ideal loadgen reports
// (achievement ratios, Jain indexes, scenario windows).
// capacities: C_d > 0 per second. Queues whose cost vector size differs from
// capacities.size(), or is all zero, get rate 0. O(Q^2 D).
FairShares WeightedDrfShares(std::span<const double> capacities,
                             std::span<const FairShareQueue> queues);

// Weighted fair queueing over one dimension: the cap split in proportion to
// weights among the queues, with optional demand caps (water-filling; an
// empty demand_caps means none). Equal to WeightedDrfShares with cost {1}.
// E.g. cap 60, weights 0.5 0.5 0.3 0.3 0.2 0.2 -> 15 15 9 9 6 6 req/s.
std::vector<double> WfqShares(double capacity, std::span<const double> weights,
                              std::span<const double> demand_caps = {});

}  // namespace bp::loadgen
