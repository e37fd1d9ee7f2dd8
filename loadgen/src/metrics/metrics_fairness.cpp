// Ideal shares: weighted DRF by progressive filling (Ghodsi et al. 2011) and
// WFQ as its one-dimension case. See fairness.h for the definitions and
// paper equation 1 for the level X* of the first filling step.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "bp/loadgen/fairness.h"

namespace bp::loadgen {
namespace {

constexpr double kRelEps = 1e-12;

// sigma_q = max_d cost_qd / C_d; 0 if the queue is unusable.
double DominantCostShare(std::span<const double> caps, const FairShareQueue& q) {
  if (q.cost.size() != caps.size() || !(q.weight > 0)) return 0.0;
  double sigma = 0;
  for (size_t d = 0; d < caps.size(); ++d) {
    if (!(caps[d] > 0) || q.cost[d] < 0) return 0.0;
    sigma = std::max(sigma, q.cost[d] / caps[d]);
  }
  return sigma;
}

}  // namespace

FairShares WeightedDrfShares(std::span<const double> capacities,
                             std::span<const FairShareQueue> queues) {
  const size_t n = queues.size(), dims = capacities.size();
  FairShares out;
  out.rate.assign(n, 0.0);
  out.dominant_share.assign(n, 0.0);
  out.binding.assign(n, -1);

  std::vector<double> sigma(n);
  std::vector<bool> active(n, false);
  size_t remaining = 0;
  for (size_t q = 0; q < n; ++q) {
    sigma[q] = DominantCostShare(capacities, queues[q]);
    if (sigma[q] > 0 && queues[q].demand_cap > 0 &&
        (queues[q].group < 0 || queues[q].group_weight > 0)) {
      active[q] = true;
      ++remaining;
    }
  }
  std::vector<double> used(dims, 0.0);  // usage of every queue's rate so far
  std::vector<double> w(n, 0.0);        // this step's weight per active queue

  while (remaining > 0) {
    // Weights of this step: flat, or omega_k w_t / W_k over the unfrozen.
    std::map<int, double> group_sum;
    for (size_t q = 0; q < n; ++q) {
      if (active[q] && queues[q].group >= 0) group_sum[queues[q].group] += queues[q].weight;
    }
    for (size_t q = 0; q < n; ++q) {
      if (!active[q]) continue;
      w[q] = queues[q].weight;
      if (queues[q].group >= 0) w[q] = queues[q].group_weight * w[q] / group_sum[queues[q].group];
    }
    // Level increment at which each dimension saturates with every active
    // queue growing at w_q / sigma_q: (C_d - used_d) / sum_q w_q cost_qd /
    // sigma_q (eq. 1 at the first step).
    double step = std::numeric_limits<double>::infinity();
    int bind_dim = -1;
    for (size_t d = 0; d < dims; ++d) {
      double demand = 0;
      for (size_t q = 0; q < n; ++q) {
        if (active[q]) demand += w[q] * queues[q].cost[d] / sigma[q];
      }
      if (demand <= 0) continue;
      const double x_d = std::max(0.0, capacities[d] - used[d]) / demand;
      if (x_d < step) {
        step = x_d;
        bind_dim = static_cast<int>(d);
      }
    }
    // Increment at which the first active queue reaches its demand cap.
    double cap_step = std::numeric_limits<double>::infinity();
    for (size_t q = 0; q < n; ++q) {
      if (!active[q]) continue;
      cap_step = std::min(cap_step, (queues[q].demand_cap - out.rate[q]) * sigma[q] / w[q]);
    }
    if (std::isinf(step) && std::isinf(cap_step)) break;  // no cost anywhere
    const bool caps_first = cap_step <= step;
    const double x = caps_first ? cap_step : step;
    for (size_t q = 0; q < n; ++q) {
      if (!active[q]) continue;
      const double add = w[q] * x / sigma[q];
      out.rate[q] += add;
      for (size_t d = 0; d < dims; ++d) used[d] += add * queues[q].cost[d];
    }
    auto freeze = [&](size_t q, int why) {
      out.binding[q] = why;
      active[q] = false;
      --remaining;
    };
    if (caps_first) {
      // Demand caps first: those queues take only what they can use.
      // (what is left to its cap, in level units, is 0 up to rounding)
      for (size_t q = 0; q < n; ++q) {
        if (active[q] &&
            (queues[q].demand_cap - out.rate[q]) * sigma[q] / w[q] <= 1e-9 * cap_step + 1e-15) {
          out.rate[q] = queues[q].demand_cap;
          freeze(q, -1);
        }
      }
      continue;
    }
    // Dimension bind_dim saturates: every active queue using it freezes.
    for (size_t q = 0; q < n; ++q) {
      if (active[q] && queues[q].cost[static_cast<size_t>(bind_dim)] >
                           kRelEps * sigma[q] * capacities[static_cast<size_t>(bind_dim)]) {
        freeze(q, bind_dim);
      }
    }
  }
  for (size_t q = 0; q < n; ++q) out.dominant_share[q] = out.rate[q] * sigma[q];
  return out;
}

std::vector<double> WfqShares(double capacity, std::span<const double> weights,
                              std::span<const double> demand_caps) {
  std::vector<FairShareQueue> queues(weights.size());
  for (size_t q = 0; q < weights.size(); ++q) {
    queues[q].weight = weights[q];
    queues[q].cost = {1.0};
    if (q < demand_caps.size()) queues[q].demand_cap = demand_caps[q];
  }
  const double caps[1] = {capacity};
  return WeightedDrfShares(caps, queues).rate;
}

}  // namespace bp::loadgen
