// Injected clocks. The limiters (limiter.h: LimiterSet) and mockapi's Service
// take a Clock, so tests advance time exactly instead of sleeping (STYLE
// habit 3). Not yet everything does: the gate's scripts read Valkey's TIME
// (Admit/Release take an explicit now_ms for tests instead), and the gate's
// reconnect/warning intervals and loadgen's Engine::NowUs read
// std::chrono::steady_clock directly.
//
// Time is in microseconds since the Unix epoch (wall clock), because the
// fixed-window limiter aligns windows to the clock as providers do.
#pragma once

#include <atomic>
#include <cstdint>

namespace bp {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since the Unix epoch. Thread-safe in every implementation.
  virtual int64_t NowUs() const = 0;
};

// std::chrono::system_clock. Thread-safe.
class SystemClock final : public Clock {
 public:
  int64_t NowUs() const override;
  // A process-wide instance, never destroyed.
  static const SystemClock& Instance();
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
