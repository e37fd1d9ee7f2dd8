// bp::loadgen::TimeScale - paper time vs real time (SPEC section 5): a run
// at speedup s divides every paper duration by s and multiplies every paper
// rate by s; results are reported back in paper units (real duration * s,
// real rate / s). The one place that validates a speedup and the one place
// of each conversion; the engine, the configurations, the metrics and the
// reports take a TimeScale instead of a bare double.
//
// Units: as each name says (paper_ms, real_us, ...); a duration converted
// with ToReal / ToPaper keeps its unit. Thread-safety: an immutable value.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "bp/decimal.h"
#include "bp/status.h"

namespace bp::loadgen {

class TimeScale {
 public:
  // Largest accepted speedup: beyond it timer granularity (~1 ms real)
  // dominates the paper's 10 ms dispatch latency by two orders.
  static constexpr double kMaxSpeedup = 1000;

  // The one validation of a speedup (--speedup, RunOptions::speedup):
  // finite, in (0, kMaxSpeedup]. InvalidArgument otherwise.
  static Result<TimeScale> Of(double speedup) {
    if (!std::isfinite(speedup) || !(speedup > 0) || speedup > kMaxSpeedup) {
      return Status::InvalidArgument("speedup must be in " + RangeText({0, kMaxSpeedup, true}) +
                                     ", got " + FormatShort(speedup));
    }
    return TimeScale(speedup);
  }
  // A speedup read back from records (RunRecords::speedup, which the Engine
  // writes from a validated TimeScale). Hand-made records with a value Of
  // would refuse count as speedup 1, as the metrics always did.
  static TimeScale Recorded(double speedup) {
    auto s = Of(speedup);
    return s.ok() ? *s : TimeScale();
  }

  TimeScale() = default;  // speedup 1: paper time is real time

  double speedup() const { return speedup_; }

  // A paper duration in real time, same unit (duration / speedup).
  double ToReal(double paper) const { return paper / speedup_; }
  // A real duration in paper time, same unit (duration * speedup).
  double ToPaper(double real) const { return real * speedup_; }
  // A paper rate (per second) in real time (rate * speedup).
  double RateToReal(double paper_per_s) const { return paper_per_s * speedup_; }

  // Paper ms -> real us for a timer: clamped to [0, 1e15] (a negative or
  // NaN delay fires at once; a huge one never overflows).
  int64_t PaperMsToRealUs(double paper_ms) const {
    const double us = paper_ms * 1000.0 / speedup_;
    if (!(us > 0)) return 0;
    return static_cast<int64_t>(std::min(us, 1e15));
  }
  // Real us on the run clock -> paper ms / paper s.
  double RealUsToPaperMs(double real_us) const { return real_us * speedup_ / 1e3; }
  double RealUsToPaperS(double real_us) const { return real_us * speedup_ / 1e6; }

 private:
  explicit TimeScale(double speedup) : speedup_(speedup) {}
  double speedup_ = 1;
};

}  // namespace bp::loadgen
