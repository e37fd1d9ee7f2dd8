// Injected clocks. The limiters (limiter.h: LimiterSet), mockapi's Service,
// the gate's reconnect and fail-open warning intervals (GateOptions::clock)
// and loadgen's Engine::NowUs (EngineOptions::clock) take a Clock, so tests
// advance time exactly instead of sleeping (STYLE habit 3). The gate's
// scripts read Valkey's TIME instead (Admit/Release take an explicit now_ms
// for tests).
//
// Time is in microseconds. SystemClock and FakeClock count from the Unix
// epoch (wall clock), because the fixed-window limiter aligns windows to the
// clock as providers do; SteadyClock counts from an unspecified fixed point
// and never goes back, for intervals only.
#pragma once

#include <atomic>
#include <cstdint>

namespace bp {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since the clock's epoch (above). Thread-safe in every
  // implementation.
  virtual int64_t NowUs() const = 0;
};

// std::chrono::system_clock. Thread-safe.
class SystemClock final : public Clock {
 public:
  int64_t NowUs() const override;
  // A process-wide instance, never destroyed.
  static const SystemClock& Instance();
};

// std::chrono::steady_clock: monotonic, for intervals. Thread-safe.
class SteadyClock final : public Clock {
 public:
  int64_t NowUs() const override;
  // A process-wide instance, never destroyed.
  static const SteadyClock& Instance();
};

// A clock that moves only when told. Thread-safe (atomic).
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_us = 0) : now_us_(start_us) {}
  int64_t NowUs() const override { return now_us_.load(std::memory_order_relaxed); }
  void SetUs(int64_t us) { now_us_.store(us, std::memory_order_relaxed); }
  void AdvanceUs(int64_t us) { now_us_.fetch_add(us, std::memory_order_relaxed); }
  void AdvanceMs(int64_t ms) { AdvanceUs(ms * 1000); }

 private:
  std::atomic<int64_t> now_us_;
};

}  // namespace bp
