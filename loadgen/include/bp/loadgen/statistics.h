// Statistics used by the loadgen metrics (metrics.h) and the repeat
// summaries: Jain's index, type-7 percentiles and the 95 % Student-t
// interval. Pure functions, safe from any thread.
//
// Definitions and their sources:
//  - Jain's index J(x) = (sum x)^2 / (n * sum x^2)  (Jain, Chiu, Hawe 1984).
//  - Percentiles: linear interpolation between closest ranks
//    (Hyndman-Fan type 7, the numpy default): h = (n-1) p, value =
//    x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
//  - 95 % confidence interval: mean +- t_{0.975, n-1} * s / sqrt(n), with s the
//    sample standard deviation (n-1 denominator) and Student-t quantiles.
#pragma once

#include <span>
#include <vector>

namespace bp::loadgen {

// Jain's fairness index of x (values >= 0): (sum x)^2 / (n * sum x^2).
// 1 when all values are equal, 1/n when one value holds everything.
// Empty input or all zeros -> 1.0 (nothing to be unfair about).
double JainIndex(std::span<const double> x);

// p-th percentile (p in [0, 1]) by linear interpolation between closest ranks
// (type 7). Sorts a copy. Empty input -> 0.0. p outside [0, 1] is clamped.
double Percentile(std::vector<double> values, double p);

// Two-sided 95 % Student-t quantile t_{0.975, df}. Exact table for df 1..30,
// then 40, 60, 120 (linear in 1/df between them), 1.95996 beyond. df < 1 -> 0.
double StudentT975(int df);

// Mean and 95 % Student-t confidence interval over repeats.
struct MeanCi {
  double mean = 0;
  double half_width = 0;  // the interval is [mean - half_width, mean + half_width]
  double stdev = 0;       // sample standard deviation (n - 1)
  int n = 0;              // samples; n < 2 gives half_width = 0
};
MeanCi MeanCi95(std::span<const double> samples);

}  // namespace bp::loadgen
