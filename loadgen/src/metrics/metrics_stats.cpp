// Small statistics used by the metrics: Jain's index, type-7 percentiles and
// the 95 % Student-t interval over repeats (definitions in metrics.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "bp/loadgen/metrics.h"

namespace bp::loadgen {

double JainIndex(std::span<const double> x) {
  if (x.empty()) return 1.0;
  double sum = 0, sum_sq = 0;
  for (double v : x) {
    sum += v;
    sum_sq += v * v;
  }
  if (sum_sq <= 0) return 1.0;  // all zero: all equal
  return sum * sum / (static_cast<double>(x.size()) * sum_sq);
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  p = std::clamp(p, 0.0, 1.0);
  std::sort(values.begin(), values.end());
  const double h = static_cast<double>(values.size() - 1) * p;
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (h - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

double StudentT975(int df) {
  // t_{0.975, df}, df = 1..30 (standard tables, 4 decimals).
  static constexpr std::array<double, 30> kTable = {
      12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
      2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
      2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (df < 1) return 0.0;
  if (df <= 30) return kTable[static_cast<size_t>(df - 1)];
  // Beyond 30: anchors at 30, 40, 60, 120, infinity, interpolated in 1/df.
  struct Anchor {
    double df, t;
  };
  static constexpr std::array<Anchor, 4> kAnchors = {Anchor{30, 2.0423}, Anchor{40, 2.0211},
                                                     Anchor{60, 2.0003}, Anchor{120, 1.9799}};
  constexpr double kInf = 1.95996;
  const double inv = 1.0 / df;
  for (size_t i = 0; i + 1 < kAnchors.size(); ++i) {
    const Anchor a = kAnchors[i], b = kAnchors[i + 1];
    if (df <= b.df) {
      const double f = (1.0 / a.df - inv) / (1.0 / a.df - 1.0 / b.df);
      return a.t + f * (b.t - a.t);
    }
  }
  const Anchor last = kAnchors.back();
  const double f = (1.0 / last.df - inv) / (1.0 / last.df);
  return last.t + f * (kInf - last.t);
}

MeanCi MeanCi95(std::span<const double> samples) {
  MeanCi r;
  r.n = static_cast<int>(samples.size());
  if (r.n == 0) return r;
  r.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / r.n;
  if (r.n < 2) return r;
  double ss = 0;
  for (double v : samples) ss += (v - r.mean) * (v - r.mean);
  r.stdev = std::sqrt(ss / (r.n - 1));
  r.half_width = StudentT975(r.n - 1) * r.stdev / std::sqrt(static_cast<double>(r.n));
  return r;
}

}  // namespace bp::loadgen
