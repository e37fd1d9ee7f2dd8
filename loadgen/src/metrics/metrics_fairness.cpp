// Ideal shares: weighted DRF by progressive filling (Ghodsi et al. 2011) and
// WFQ as its one-dimension case. See metrics.h for the definitions and
// paper equation 1 for the level X* of the first filling step.
#include <algorithm>
#include <cmath>

#include "bp/loadgen/metrics.h"

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
    if (sigma[q] > 0 && queues[q].demand_cap > 0) {
      active[q] = true;
      ++remaining;
    }
  }
  std::vector<double> used(dims, 0.0);  // usage of frozen queues per dimension

  while (remaining > 0) {
    // Level at which each dimension saturates with all active queues at X:
    // X_d = (C_d - used_d) / sum_{q active} w_q cost_qd / sigma_q  (eq. 1).
    double level = std::numeric_limits<double>::infinity();
    int bind_dim = -1;
    for (size_t d = 0; d < dims; ++d) {
      double demand = 0;
      for (size_t q = 0; q < n; ++q) {
        if (active[q]) demand += queues[q].weight * queues[q].cost[d] / sigma[q];
      }
      if (demand <= 0) continue;
      const double x_d = std::max(0.0, capacities[d] - used[d]) / demand;
      if (x_d < level) {
        level = x_d;
        bind_dim = static_cast<int>(d);
      }
    }
    // Level at which the first active queue hits its demand cap.
    double cap_level = std::numeric_limits<double>::infinity();
    for (size_t q = 0; q < n; ++q) {
      if (!active[q]) continue;
      cap_level = std::min(cap_level, queues[q].demand_cap * sigma[q] / queues[q].weight);
    }
    if (std::isinf(level) && std::isinf(cap_level)) break;  // no cost anywhere

    auto freeze = [&](size_t q, double rate, int why) {
      out.rate[q] = rate;
      out.binding[q] = why;
      for (size_t d = 0; d < dims; ++d) used[d] += rate * queues[q].cost[d];
      active[q] = false;
      --remaining;
    };
    if (cap_level <= level) {
      // Demand caps first: those queues take only what they can use.
      const double tol = cap_level * (1 + 1e-9);
      for (size_t q = 0; q < n; ++q) {
        if (active[q] && queues[q].demand_cap * sigma[q] / queues[q].weight <= tol) {
          freeze(q, queues[q].demand_cap, -1);
        }
      }
      continue;
    }
    // Dimension bind_dim saturates: every active queue using it freezes.
    std::vector<size_t> to_freeze;
    for (size_t q = 0; q < n; ++q) {
      if (active[q] && queues[q].cost[static_cast<size_t>(bind_dim)] >
                           kRelEps * sigma[q] * capacities[static_cast<size_t>(bind_dim)]) {
        to_freeze.push_back(q);
      }
    }
    for (size_t q : to_freeze) freeze(q, queues[q].weight * level / sigma[q], bind_dim);
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
